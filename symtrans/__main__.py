"""``python -m symtrans``: the same as the ``symtrans`` command."""

try:
    from symtrans.cli.main import run
except KeyboardInterrupt:  # Ctrl-C while starting up: the same one line and status as later on
    import sys

    print("symtrans: interrupted (Ctrl-C); no output file was left half-written", file=sys.stderr)
    sys.exit(130)

run()
