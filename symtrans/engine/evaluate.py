"""Exact substitution of sizes into closed forms: the one place values meet formulas.

Counts are evaluated with SymPy Integers and ``xreplace`` (no floats, no rounding):
the result of a count is a Python ``int``.  A result that is not an integer means the
sizes break a divisibility the formula assumes (e.g. h not dividing d_model); that
raises ``ValueError`` rather than rounding.

The invariants hold here for every caller (CLI, sweep, solve, the Python API):

* every substituted size is a positive integer (``int`` or another integral type; a
  ``bool``, a ``float`` such as 768.0 or 0.5, zero and negatives raise ``ValueError``);
* every count (parameters, FLOPs, bytes) that ``exact`` returns is a non-negative
  integer; a negative one raises ``ValueError`` instead of being printed.
"""

from __future__ import annotations

import numbers
from fractions import Fraction
from typing import Mapping

import sympy as sp

from symtrans.base.errors import InputError
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


def check_size(name: str, value) -> int:
    """``value`` as a Python int if it is a positive integer; else ``ValueError`` naming ``name``.

    Integral types (``int``, NumPy and SymPy integers) are accepted; ``bool`` is refused
    although Python counts it as an int (``True`` is not a size), and so is every
    ``float`` (768.0 included: sizes are counted, not measured).
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"{name} must be a positive integer, not {value!r} ({type(value).__name__})")
    v = int(value)
    if v <= 0:
        raise InputError(f"{name} must be a positive integer, not {v}")
    return v


def substitution(values: Mapping[str, int]) -> dict[sp.Symbol, sp.Integer]:
    """{symbol: Integer} for the named sizes.

    Raises:
        KeyError: an unknown name.
        ValueError: a value that is not a positive integer (``check_size``).
    """
    return {SYMBOLS[name]: sp.Integer(check_size(name, v)) for name, v in values.items()}


def check_count(value: sp.Expr, what: str = "count") -> sp.Expr:
    """``value`` (a SymPy number) if it is not negative; else ``ValueError``.

    A negative count means the sizes and options contradict each other in a way the
    Spec's validation did not catch; it is refused rather than printed.
    """
    if value.is_negative:
        raise InputError(
            f"these sizes give a negative {what} ({value}); the options do not fit the sizes, "
            "so symtrans refuses to print it"
        )
    return value


def exact(expr: sp.Expr, values: Mapping[str, int]) -> int:
    """``expr`` at ``values`` as an exact Python int.

    Raises:
        ValueError: if a symbol of ``expr`` has no value, or the result is not an integer.
    """
    e = (sp.Integer(expr) if isinstance(expr, int) else expr).xreplace(substitution(values))
    if e.free_symbols:
        missing = ", ".join(sorted(str(s) for s in e.free_symbols))
        raise InputError(f"no value for {missing}; give it with --set NAME=VALUE")
    if not e.is_Integer:
        raise InputError(f"the sizes give a non-integer count {e}; check that the divisibility assumptions hold")
    return int(check_count(e))


def exact_rational(expr: sp.Expr, values: Mapping[str, int]) -> sp.Rational:
    """``expr`` at ``values`` as an exact SymPy Rational (for ratios, per-token means and
    differences, so its sign is not checked; the values are, as in ``exact``)."""
    e = (sp.Integer(expr) if isinstance(expr, int) else expr).xreplace(substitution(values))
    if e.free_symbols:
        missing = ", ".join(sorted(str(s) for s in e.free_symbols))
        raise InputError(f"no value for {missing}; give it with --set NAME=VALUE")
    return sp.Rational(e)
