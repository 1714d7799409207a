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
    if not syms:
        return e
    grouped = _group_linear(e, syms)
    return grouped if grouped is not None else sp.collect(e, syms)


def _group_linear(e: sp.Expr, syms: list[sp.Symbol]) -> sp.Expr | None:
    """``sympy.collect(e, syms)`` for the common case, built directly: every term of the
    expanded ``e`` holds at most one layer symbol, to the first power, as a plain factor.
    Then collecting is grouping: sum of s * (its terms' cofactors) plus the rest.  The
    result is the same expression ``collect`` builds (tests/test_speed.py compares them
    on every preset), without its general pattern matching; None for any other shape."""
    groups: dict[sp.Symbol, list[sp.Expr]] = {s: [] for s in syms}
    rest: list[sp.Expr] = []
    for term in sp.Add.make_args(e):
        found = None
        for f in sp.Mul.make_args(term):
            hit = f.free_symbols & groups.keys()
            if not hit:
                continue
            if found is not None or f not in groups:  # two layer symbols, a power, or one inside a function
                return None
            found = f
        if found is None:
            rest.append(term)
        else:
            groups[found].append(term / found)
    return sp.Add(*[s * sp.Add(*groups[s]) for s in syms if groups[s]], *rest)


def identical(a: sp.Expr, b: sp.Expr) -> bool:
    """True when ``a - b`` expands to 0 (the identity test of DESIGN §3)."""
    return sp.expand(a - b) == 0
