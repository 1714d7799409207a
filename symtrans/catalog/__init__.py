"""symtrans.catalog: see the layer contract in pyproject.toml."""
