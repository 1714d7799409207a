"""symtrans.base: dependency-free utilities (numbers, escaping, parsing, atomic output, errors)."""
