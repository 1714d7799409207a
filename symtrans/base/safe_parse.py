"""Parse user-written arithmetic on symtrans symbols, without ``eval``.

Users write constraints such as ``d_ff=4*d_model`` or ``h=d_model/64`` on the command
line.  That text is parsed with Python's ``ast`` module in ``eval`` mode, every node is
checked against a short allow-list, and the SymPy expression is built from the checked
tree by this module; nothing the user typed is ever evaluated, sympified or handed to
``parse_expr``.

Allowed: integer and decimal numbers (``4``, ``2.5``, ``7e9``, ``4_096``), the names
of ``allowed``, ``+ - * /``, ``**`` with a numeric exponent of at most 64 in absolute
value, unary ``+``/``-`` and parentheses, and calls of the caller's ``functions`` (none
for constraints) with positional arguments.  Everything else (other calls, attributes,
subscripts, strings, comparisons, ``//``, ``%``, names outside ``allowed``) raises
``ValueError`` with one sentence naming the problem.  Decimal numbers become exact
rationals (``1.3`` is 13/10).

The text's length does not bound the work an expression makes: ``(d_model+h+N+V+L)**64``
is 24 characters and expands to 814,385 terms, ``((d_model+1)**64+1)**64`` has degree
4096.  So the expression, written as one fraction and expanded, must have degree at most
``MAX_DEGREE`` in the symbols and at most ``MAX_TERMS`` terms in its numerator and in its
denominator (``expansion_bound`` computes upper bounds from the tree, expanding nothing).
Those are the limits of a constraint (``CONSTRAINT``); a caller that reads longer text it
printed itself (``engine.parse.parse_closed_form``) passes its own ``Limits``.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Callable, Mapping

import sympy as sp

from symtrans.base.errors import InputError

MAX_LENGTH = 500
MAX_EXPONENT = 64
MAX_DEPTH = 60
MAX_BITS = 4096
MAX_DEGREE = 16  # total degree in the symbols, after expansion (real rules are linear or quadratic)
MAX_TERMS = 250  # terms of the expanded numerator or denominator (the SymPy work grows with them)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Limits:
    """How much text, degree and terms (``expansion_bound``) an expression may have."""

    length: int = MAX_LENGTH
    degree: int = MAX_DEGREE
    terms: int = MAX_TERMS


CONSTRAINT = Limits()  # --keep and --set rules: linear or quadratic, short

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}


def _number(node: ast.Constant, text: str) -> sp.Rational:
    value = node.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"only numbers, names and + - * / ** are allowed, not {value!r}")
    if isinstance(value, int):
        return sp.Integer(value)
    # A decimal literal: take its exact decimal value from the source text, not the float.
    src = ast.get_source_segment(text, node) or repr(value)
    return sp.Rational(src.replace("_", ""))


Functions = Mapping[str, Callable[..., sp.Expr]]


def _build(
    node: ast.AST, text: str, allowed: Mapping[str, sp.Symbol], depth: int, limits: Limits, functions: Functions
) -> sp.Expr:
    if depth > MAX_DEPTH:
        raise InputError(f"expression is nested more than {MAX_DEPTH} levels deep")
    if isinstance(node, ast.Constant):
        return _number(node, text)
    if isinstance(node, ast.Name):
        if node.id not in allowed:
            known = ", ".join(sorted(allowed))
            raise InputError(f"unknown symbol {node.id!r} in the expression; known symbols: {known}")
        return allowed[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        inner = _build(node.operand, text, allowed, depth + 1, limits, functions)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left = _build(node.left, text, allowed, depth + 1, limits, functions)
        right = _build(node.right, text, allowed, depth + 1, limits, functions)
        # Every result is bounded before SymPy builds it: constructing a power already
        # asks SymPy for signs, which can mean root-finding on the expanded base.
        bl, br = expansion_bound(left), expansion_bound(right)
        if isinstance(node.op, (ast.Add, ast.Sub)):
            _check(_add_bound(bl, br), limits)
            return left + right if isinstance(node.op, ast.Add) else left - right
        if isinstance(node.op, ast.Mult):
            _check(_mul_bound(bl, br), limits)
            return left * right
        if isinstance(node.op, ast.Div):
            if right == 0:
                raise InputError("division by zero in the expression")
            _check(_mul_bound(bl, _pow_bound(br, sp.Integer(-1))), limits)
            return left / right
        # Pow: the exponent must be a plain number of modest size (no symbolic or huge powers).
        if not right.is_Number:
            raise InputError("an exponent must be a number, not an expression in symbols")
        if abs(right) > MAX_EXPONENT:
            raise InputError(f"exponent {right} is larger than {MAX_EXPONENT}")
        if left == 0 and right < 0:
            raise InputError("division by zero in the expression")
        if left.is_Number and abs(left) > 1 and sp.log(abs(left), 2).evalf(15) * abs(right) > MAX_BITS:
            raise InputError(f"a number in the expression exceeds 2**{MAX_BITS}")
        _check(_pow_bound(bl, right), limits)
        result = left**right
        for p in result.atoms(sp.Pow):
            if p.exp.is_Number and abs(p.exp) > MAX_EXPONENT:
                raise InputError(f"exponent {p.exp} is larger than {MAX_EXPONENT}")
        return result
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
        if node.keywords or not node.args or any(isinstance(a, ast.Starred) for a in node.args):
            raise InputError(f"{node.func.id} takes plain arguments: {node.func.id}(a, b, ...)")
        args = [_build(a, text, allowed, depth + 1, limits, functions) for a in node.args]
        _check(expansion_bound(sp.Add(*args)), limits)  # Min(a, b) compares a with b: bounded like a + b
        try:
            return functions[node.func.id](*args)
        except TypeError:  # a wrong number of arguments (floor(a, b))
            raise InputError(f"wrong number of arguments to {node.func.id}") from None
    if isinstance(node, ast.Call) and functions:
        name = node.func.id if isinstance(node.func, ast.Name) else type(node.func).__name__
        raise InputError(f"function calls other than {', '.join(functions)} are not allowed, not {name}(...)")
    op = type(getattr(node, "op", node)).__name__
    raise InputError(f"only numbers, symbol names, + - * / ** and parentheses are allowed, not {op}")


_SATURATE = 10**9  # bounds stop growing here: nested powers would otherwise build huge integers


def _cap(*bounds: int) -> tuple[int, ...]:
    return tuple(min(b, _SATURATE) for b in bounds)


def _monomials(terms: int, k: int) -> int:
    """At most how many terms a sum of ``terms`` terms has when raised to the power ``k``
    and expanded: the monomials of degree k in that many unknowns, C(terms + k - 1, k)."""
    if terms <= 1:
        return 1
    if terms >= _SATURATE:  # already past every limit: any power stays past it
        return terms
    return math.comb(terms + k - 1, k)


def expansion_bound(e: sp.Expr) -> tuple[int, int, int, int]:
    """Upper bounds (degree, terms) of the numerator, then of the denominator, of ``e``
    written as one fraction and expanded, from its tree alone (nothing is expanded).

    a/b + c/d is (a*d + c*b)/(b*d); a power k > 0 of a sum of t terms has at most
    C(t + k - 1, k) terms; a negative power moves to the other side; a fractional power
    (d_model**0.5, never expanded by SymPy) counts as one term of the rounded-up degree.
    Bounds saturate at 10**9 (far past every limit).
    """
    if e.is_Number:
        return 0, 1, 0, 1
    if e.is_Symbol:
        return 1, 1, 0, 1
    if e.is_Add or e.is_Mul:
        combine = _add_bound if e.is_Add else _mul_bound
        out = expansion_bound(e.args[0])
        for a in e.args[1:]:
            out = combine(out, expansion_bound(a))
        return out
    if e.is_Pow and e.exp.is_Number:
        return _pow_bound(expansion_bound(e.base), e.exp)
    # Anything else (SymPy functions the parser never builds) counts as one atom.
    return _cap(sum(d[0] + d[2] for d in map(expansion_bound, e.args)), 1, 0, 1)


def _add_bound(a: tuple, b: tuple) -> tuple[int, ...]:
    dn, tn, dd, td = a
    dn2, tn2, dd2, td2 = b
    return _cap(max(dn + dd2, dn2 + dd), tn * td2 + tn2 * td, dd + dd2, td * td2)


def _mul_bound(a: tuple, b: tuple) -> tuple[int, ...]:
    return _cap(a[0] + b[0], a[1] * b[1], a[2] + b[2], a[3] * b[3])


def _pow_bound(a: tuple, k: sp.Number) -> tuple[int, ...]:
    dn, tn, dd, td = a
    if k.is_Integer:
        n = abs(int(k))
        up = _cap(dn * n, _monomials(tn, n), dd * n, _monomials(td, n))
        return up if k >= 0 else (up[2], up[3], up[0], up[1])
    deg = min(math.ceil(max(dn, dd) * abs(k)), _SATURATE)
    return (deg, 1, 0, 1) if k > 0 else (0, 1, deg, 1)


def _check(bound: tuple, limits: Limits = CONSTRAINT) -> None:
    dn, tn, dd, td = bound
    if max(dn, dd) > limits.degree:
        raise InputError(
            f"the expression has degree {max(dn, dd):,} in the symbols once expanded; at most {limits.degree} is allowed"
        )
    if max(tn, td) > limits.terms:
        raise InputError(f"the expression expands to up to {max(tn, td):,} terms; at most {limits.terms:,} are allowed")


def check_size(e: sp.Expr, limits: Limits = CONSTRAINT) -> sp.Expr:
    """``e`` if its expansion stays within the degree and terms of ``limits`` (``expansion_bound``).

    Raises:
        ValueError: naming the bound exceeded and the limit.
    """
    _check(expansion_bound(e), limits)
    return e


def parse_constraint(
    text: str, allowed: Mapping[str, sp.Symbol], limits: Limits = CONSTRAINT, functions: Functions | None = None
) -> sp.Expr:
    """Parse an arithmetic expression on the ``allowed`` symbols into a SymPy Expr.

    Args:
        text: e.g. ``"4*d_model"`` or ``"(8/3)*d_model"`` (at most ``limits.length``
            characters, 500 for a constraint).
        allowed: name -> Symbol of the names the expression may use (normally
            ``symtrans.symbols.SYMBOLS``).
        limits: length, degree and terms allowed (``CONSTRAINT`` unless given).
        functions: name -> SymPy function the text may call with positional arguments
            (none unless given).

    Returns:
        The expression (exact: decimals become rationals).

    Raises:
        ValueError: empty or too long text, a syntax error, an unknown name, any
            construct other than numbers, names, ``+ - * / **`` (numeric exponent at
            most 64) and parentheses, or an expansion beyond MAX_DEGREE / MAX_TERMS.
            Nothing is evaluated before the check.
    """
    if not isinstance(text, str):
        raise InputError(f"a constraint must be text, not {type(text).__name__}")
    t = text.strip()
    if not t:
        raise InputError("empty expression")
    if len(t) > limits.length:
        raise InputError(f"expression is longer than {limits.length:,} characters")
    longest = max((len(m) for m in re.findall(r"\d+", t)), default=0)
    if longest > 1240:  # 2**4096 has 1,234 digits; ast.parse would meet Python's own digit limit
        raise InputError(f"a number of {longest:,} digits in the expression, past the limit of 2**{MAX_BITS}")
    try:
        tree = ast.parse(t, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise InputError(f"cannot parse {t!r} as arithmetic on symbols") from None
    return check_size(_build(tree.body, t, allowed, 0, limits, functions or {}), limits)


def parse_assignment(text: str, allowed: Mapping[str, sp.Symbol]) -> tuple[str, sp.Expr]:
    """Parse ``NAME=EXPR`` (e.g. ``d_ff=4*d_model``) into (NAME, expression).

    Raises:
        ValueError: no single ``=``, NAME not in ``allowed``, an expression that uses
            NAME itself, or anything ``parse_constraint`` rejects.
    """
    if not isinstance(text, str) or text.count("=") != 1:
        raise InputError(f"a constraint takes the form NAME=EXPRESSION, not {text!r}")
    name, _, rhs = text.partition("=")
    name = name.strip()
    if not _NAME.fullmatch(name) or name not in allowed:
        known = ", ".join(sorted(allowed))
        raise InputError(f"unknown symbol {name!r} on the left of a constraint; known symbols: {known}")
    expr = parse_constraint(rhs, allowed)
    if allowed[name] in expr.free_symbols:
        raise InputError(f"constraint for {name} refers to {name} itself")
    return name, expr
