"""``python -m symtrans``: the same as the ``symtrans`` command."""

from symtrans.cli.main import run

run()
