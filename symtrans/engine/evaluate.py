"""Exact substitution of sizes into closed forms.

Counts are evaluated with SymPy Integers and ``xreplace`` (no floats, no rounding):
the result of a count is a Python ``int``.  A result that is not an integer means the
sizes break a divisibility the formula assumes (e.g. h not dividing d_model); that
raises ``ValueError`` rather than rounding.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Mapping

import sympy as sp

from symtrans.engine.symbols import SYMBOLS


def as_expr(x) -> sp.Expr:
    """An engine value (SymPy expression, int or Fraction) as a SymPy expression.

    Never parses text: a ``str`` raises ``TypeError``, so user text cannot reach SymPy
    through here (user expressions go through ``safe_parse``).
    """
    if isinstance(x, sp.Basic):
        return x
    if isinstance(x, bool) or not isinstance(x, (int, Fraction)):
        raise TypeError(f"expected a SymPy expression or a number, not {type(x).__name__}")
    return sp.Rational(x.numerator, x.denominator) if isinstance(x, Fraction) else sp.Integer(x)


def substitution(values: Mapping[str, int]) -> dict[sp.Symbol, sp.Integer]:
    """{symbol: Integer} for the named sizes (unknown names raise ``KeyError``)."""
    return {SYMBOLS[name]: sp.Integer(v) for name, v in values.items()}


def exact(expr: sp.Expr, values: Mapping[str, int]) -> int:
    """``expr`` at ``values`` as an exact Python int.

    Raises:
        ValueError: if a symbol of ``expr`` has no value, or the result is not an integer.
    """
    e = (sp.Integer(expr) if isinstance(expr, int) else expr).xreplace(substitution(values))
    if e.free_symbols:
        missing = ", ".join(sorted(str(s) for s in e.free_symbols))
        raise ValueError(f"no value for {missing}; give it with --set NAME=VALUE")
    if not e.is_Integer:
        raise ValueError(f"the sizes give a non-integer count {e}; check that the divisibility assumptions hold")
    return int(e)


def exact_rational(expr: sp.Expr, values: Mapping[str, int]) -> sp.Rational:
    """``expr`` at ``values`` as an exact SymPy Rational (for ratios and per-token means)."""
    e = (sp.Integer(expr) if isinstance(expr, int) else expr).xreplace(substitution(values))
    if e.free_symbols:
        missing = ", ".join(sorted(str(s) for s in e.free_symbols))
        raise ValueError(f"no value for {missing}; give it with --set NAME=VALUE")
    return sp.Rational(e)
