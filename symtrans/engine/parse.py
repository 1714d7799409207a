"""Read a printed closed form back into an expression in symtrans's own symbols.

The JSON output prints closed forms with ``sympy.sstr`` (``"N*(3*E*d_ff*d_model + ...)"``).
``sympy.sympify`` must never read them: it evaluates its input as Python, and it reads
``N`` as SymPy's numeric-evaluation function and ``E`` as Euler's number, so a Mixtral
closed form fails and an expression in ``E`` without ``N`` silently uses e = 2.718.
``parse_closed_form`` parses with the AST whitelist of ``base.safe_parse``: numbers, the
legend's symbol names (``symbols.SYMBOLS``: positive integers), ``+ - * / **`` with a
numeric exponent of at most 64, parentheses, and the four functions symtrans itself
prints in closed forms (``Min``, ``Max``, ``floor``, ``ceiling``: sliding-window
attention, quantized blocks, rounded bytes).  Nothing is evaluated.
"""

from __future__ import annotations

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.base.safe_parse import Limits, parse_constraint
from symtrans.engine.symbols import SYMBOLS

# The functions of printed closed forms (components.py, flops.py, memory.py, quantization.py).
FUNCTIONS = {"Min": sp.Min, "Max": sp.Max, "floor": sp.floor, "ceiling": sp.ceiling}

# Larger than a constraint's (500 characters, degree 16, 250 terms): the longest closed
# form the presets print is 426 characters, with expansion bounds of degree 15 and 15 terms
# (every params, flops and memory form of every preset, tests/test_api.py).
CLOSED_FORM = Limits(length=20_000, degree=64, terms=10_000)


def parse_closed_form(text: str) -> sp.Expr:
    """The expression a printed closed form (the JSON ``closed_form``) stands for.

    Args:
        text: e.g. ``"N*(12*d_model**2 + 13*d_model) + V*d_model + ..."`` (at most 20,000
            characters).

    Returns:
        A SymPy expression in ``symtrans.engine.symbols.SYMBOLS`` (positive integers):
        ``.subs`` with the JSON ``sizes`` (``{SYMBOLS[k]: v}``, or by name with
        ``symtrans.model(...).subs``) gives the exact count, an ``sp.Integer``.
        Units are those of the JSON field the text came from (parameters, FLOPs, bytes).

    Raises:
        ValueError: one line: text that is not a string, empty or longer than 20,000
            characters, a syntax error, a name that is not a symtrans symbol, a call of
            anything but Min, Max, floor and ceiling, an attribute, subscript, string or
            comparison, an exponent that is not a number or exceeds 64, a number past
            2**4096, or an expansion past degree 64 / 10,000 terms.
    """
    if not isinstance(text, str):
        raise InputError(f"a closed form is text, not {type(text).__name__}")
    return parse_constraint(text, SYMBOLS, CLOSED_FORM, FUNCTIONS)
