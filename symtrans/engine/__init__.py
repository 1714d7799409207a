"""symtrans.engine: see the layer contract in pyproject.toml."""
