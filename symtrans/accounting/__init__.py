"""symtrans.accounting: see the layer contract in pyproject.toml."""
