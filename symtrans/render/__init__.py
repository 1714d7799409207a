"""symtrans.render: see the layer contract in pyproject.toml."""
