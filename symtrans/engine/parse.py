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

A closed form inferred through the generic transformers path (``catalog/generic``) may also
use names outside the legend (config keys such as ``num_shared_experts``, repeat counts such
as ``N_layers_mlp_2``).  The JSON lists every such name in its own ``symbols`` map; passing
that map as ``symbols=`` admits exactly those names, and nothing else, as extra symbols.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable, Mapping

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

# A JSON ``symbols`` map names the symbols of one output: the generic path's largest has a
# few dozen.  The caps keep a hostile map from costing more than the text itself may.
_MAX_EXTRA = 1_000
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,99}")
# SymPy assumptions a map may state (the JSON states integer and positive for every size).
_ASSUMPTIONS = frozenset({"integer", "positive", "nonnegative", "nonzero", "real", "rational", "finite"})
_DEFAULT = {"integer": True, "positive": True}


def _extra_symbol(name: object, entry: object) -> sp.Symbol:
    """The Symbol a ``symbols`` map entry stands for (name checked, assumptions checked)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or keyword.iskeyword(name):
        raise InputError(f"symbol name {str(name)[:60]!r} is not a plain identifier of at most 100 characters")
    if name in FUNCTIONS:
        raise InputError(f"symbol name {name!r} is one of the functions closed forms call")
    if isinstance(entry, sp.Symbol):
        if entry.name != name:
            raise InputError(f"symbols[{name!r}] is the Symbol {entry.name[:60]!r}, not {name!r}")
        return entry
    assumptions = _DEFAULT
    if isinstance(entry, Mapping) and "assumptions" in entry:
        assumptions = entry["assumptions"]
        if (
            not isinstance(assumptions, Mapping)
            or not set(assumptions) <= _ASSUMPTIONS
            or not all(isinstance(v, bool) for v in assumptions.values())
        ):
            raise InputError(
                f"symbols[{name!r}]['assumptions'] must map some of {', '.join(sorted(_ASSUMPTIONS))} to true/false"
            )
    if name in SYMBOLS:
        # A legend name keeps the legend's Symbol, so the expression substitutes as the
        # legend's does; a map that claims other assumptions for it is a different symbol.
        legend = SYMBOLS[name]
        if any(legend.assumptions0.get(k) is not v for k, v in assumptions.items()):
            raise InputError(f"symbols[{name!r}] states assumptions other than the legend's")
        return legend
    try:
        return sp.Symbol(name, **dict(assumptions))
    except Exception:  # contradictory assumptions (integer and not rational, ...)
        raise InputError(f"symbols[{name!r}] states contradictory assumptions") from None


def _allowed(symbols: Mapping | Iterable[str] | None) -> Mapping[str, sp.Symbol]:
    if symbols is None:
        return SYMBOLS
    if isinstance(symbols, (str, bytes)):
        raise InputError("symbols= takes the JSON's symbols map (or a list of names), not a string")
    if not isinstance(symbols, Mapping):
        try:
            names = list(symbols)
        except TypeError:
            raise InputError(f"symbols= takes the JSON's symbols map, not {type(symbols).__name__}") from None
        symbols = dict.fromkeys(names, None)
    if len(symbols) > _MAX_EXTRA:
        raise InputError(f"a symbols map of {len(symbols):,} names, past the limit of {_MAX_EXTRA:,}")
    allowed = dict(SYMBOLS)
    for name, entry in symbols.items():
        allowed[name] = _extra_symbol(name, entry)
    return allowed


def parse_closed_form(text: str, symbols: Mapping | Iterable[str] | None = None) -> sp.Expr:
    """The expression a printed closed form (the JSON ``closed_form``) stands for.

    Args:
        text: e.g. ``"N*(12*d_model**2 + 13*d_model) + V*d_model + ..."`` (at most 20,000
            characters).
        symbols: the same JSON's ``symbols`` map (name -> ``{"assumptions": ..., ...}``),
            a list of names, or name -> ``sp.Symbol``.  Its names are admitted besides the
            legend's: needed for closed forms of the generic transformers path, which use
            config keys (``num_shared_experts``) and repeat counts (``N_layers_mlp_2``)
            the legend lacks.  Each extra name becomes ``sp.Symbol(name, **assumptions)``
            (positive integer when the entry states none); a legend name keeps the
            legend's Symbol.  Names must be plain identifiers (at most 100 characters,
            at most 1,000 names) other than the four function names.  Without it only
            the legend's names are read.

    Returns:
        A SymPy expression in ``symtrans.engine.symbols.SYMBOLS`` and the names of
        ``symbols`` (positive integers):
        ``.subs`` with the JSON ``sizes`` (``{SYMBOLS[k]: v}``, or by name with
        ``symtrans.model(...).subs``) gives the exact count, an ``sp.Integer``.
        Units are those of the JSON field the text came from (parameters, FLOPs, bytes).

    Raises:
        ValueError: one line: text that is not a string, empty or longer than 20,000
            characters, a syntax error, a name that is neither a symtrans symbol nor in
            ``symbols``, a ``symbols`` map that is malformed (see above), a call of
            anything but Min, Max, floor and ceiling, an attribute, subscript, string or
            comparison, an exponent that is not a number or exceeds 64, a number past
            2**4096, or an expansion past degree 64 / 10,000 terms.
    """
    if not isinstance(text, str):
        raise InputError(f"a closed form is text, not {type(text).__name__}")
    return parse_constraint(text, _allowed(symbols), CLOSED_FORM, FUNCTIONS)
