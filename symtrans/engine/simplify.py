"""The simplification policy and the identity test, in one place."""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from symtrans.engine.symbols import N, N_dec, N_enc

# The layer-count symbols closed forms are grouped by.
LAYER_SYMBOLS = (N, N_enc, N_dec)


@lru_cache(maxsize=4096)
def closed_form(expr: sp.Expr) -> sp.Expr:
    """The simplification policy, in one place: expand, then group by the layer counts.

    The result reads ``N*(per-layer polynomial) + (the rest)``.  Only ``expand`` and
    ``collect`` are used (never ``simplify``): they are fast and canonical for the
    polynomials and ``floor`` terms this package builds.  Results are cached per
    expression (SymPy expressions are immutable and hashable), so models of the same
    structure and repeated report sections simplify once.
    """
    e = sp.expand(expr)
    syms = [s for s in LAYER_SYMBOLS if s in e.free_symbols]
    return sp.collect(e, syms) if syms else e


def identical(a: sp.Expr, b: sp.Expr) -> bool:
    """True when ``a - b`` expands to 0 (the identity test of DESIGN §3)."""
    return sp.expand(a - b) == 0
