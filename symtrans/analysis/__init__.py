"""symtrans.analysis: see the layer contract in pyproject.toml."""
