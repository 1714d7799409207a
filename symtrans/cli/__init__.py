"""symtrans.cli: see the layer contract in pyproject.toml."""
