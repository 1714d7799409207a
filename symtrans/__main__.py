"""``python -m symtrans``: the same as the ``symtrans`` command."""
from .cli import run

run()
