"""Parse user-written arithmetic on symtrans symbols, without ``eval``.

Users write constraints such as ``d_ff=4*d_model`` or ``h=d_model/64`` on the command
line.  That text is parsed with Python's ``ast`` module in ``eval`` mode, every node is
checked against a short allow-list, and the SymPy expression is built from the checked
tree by this module; nothing the user typed is ever evaluated, sympified or handed to
``parse_expr``.

Allowed: integer and decimal numbers (``4``, ``2.5``, ``7e9``, ``4_096``), the names
of ``allowed``, ``+ - * /``, ``**`` with a numeric exponent of at most 64 in absolute
value, unary ``+``/``-`` and parentheses.  Everything else (calls, attributes,
subscripts, strings, comparisons, ``//``, ``%``, names outside ``allowed``) raises
``ValueError`` with one sentence naming the problem.  Decimal numbers become exact
rationals (``1.3`` is 13/10).
"""

from __future__ import annotations

import ast
import re
from typing import Mapping

import sympy as sp

MAX_LENGTH = 500
MAX_EXPONENT = 64
MAX_DEPTH = 60
MAX_BITS = 4096
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}


def _number(node: ast.Constant, text: str) -> sp.Rational:
    value = node.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"only numbers, names and + - * / ** are allowed, not {value!r}")
    if isinstance(value, int):
        return sp.Integer(value)
    # A decimal literal: take its exact decimal value from the source text, not the float.
    src = ast.get_source_segment(text, node) or repr(value)
    return sp.Rational(src.replace("_", ""))


def _build(node: ast.AST, text: str, allowed: Mapping[str, sp.Symbol], depth: int) -> sp.Expr:
    if depth > MAX_DEPTH:
        raise ValueError(f"expression is nested more than {MAX_DEPTH} levels deep")
    if isinstance(node, ast.Constant):
        return _number(node, text)
    if isinstance(node, ast.Name):
        if node.id not in allowed:
            known = ", ".join(sorted(allowed))
            raise ValueError(f"unknown symbol {node.id!r} in constraint; known symbols: {known}")
        return allowed[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        inner = _build(node.operand, text, allowed, depth + 1)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left = _build(node.left, text, allowed, depth + 1)
        right = _build(node.right, text, allowed, depth + 1)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.Div):
            if right == 0:
                raise ValueError("division by zero in constraint")
            return left / right
        # Pow: the exponent must be a plain number of modest size (no symbolic or huge powers).
        if not right.is_Number:
            raise ValueError("an exponent must be a number, not an expression in symbols")
        if abs(right) > MAX_EXPONENT:
            raise ValueError(f"exponent {right} is larger than {MAX_EXPONENT}")
        if left == 0 and right < 0:
            raise ValueError("division by zero in constraint")
        if left.is_Number and abs(left) > 1 and sp.log(abs(left), 2).evalf(15) * abs(right) > MAX_BITS:
            raise ValueError(f"a number in the expression exceeds 2**{MAX_BITS}")
        result = left**right
        for p in result.atoms(sp.Pow):
            if p.exp.is_Number and abs(p.exp) > MAX_EXPONENT:
                raise ValueError(f"exponent {p.exp} is larger than {MAX_EXPONENT}")
        return result
    op = type(getattr(node, "op", node)).__name__
    raise ValueError(f"only numbers, symbol names, + - * / ** and parentheses are allowed, not {op}")


def parse_constraint(text: str, allowed: Mapping[str, sp.Symbol]) -> sp.Expr:
    """Parse an arithmetic expression on the ``allowed`` symbols into a SymPy Expr.

    Args:
        text: e.g. ``"4*d_model"`` or ``"(8/3)*d_model"`` (at most 500 characters).
        allowed: name -> Symbol of the names the expression may use (normally
            ``symtrans.symbols.SYMBOLS``).

    Returns:
        The expression (exact: decimals become rationals).

    Raises:
        ValueError: empty or too long text, a syntax error, an unknown name, or any
            construct other than numbers, names, ``+ - * / **`` (numeric exponent at
            most 64) and parentheses.  Nothing is evaluated before the check.
    """
    if not isinstance(text, str):
        raise ValueError(f"a constraint must be text, not {type(text).__name__}")
    t = text.strip()
    if not t:
        raise ValueError("empty expression")
    if len(t) > MAX_LENGTH:
        raise ValueError(f"expression is longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(t, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ValueError(f"cannot parse {t!r} as arithmetic on symbols") from None
    return _build(tree.body, t, allowed, 0)


def parse_assignment(text: str, allowed: Mapping[str, sp.Symbol]) -> tuple[str, sp.Expr]:
    """Parse ``NAME=EXPR`` (e.g. ``d_ff=4*d_model``) into (NAME, expression).

    Raises:
        ValueError: no single ``=``, NAME not in ``allowed``, an expression that uses
            NAME itself, or anything ``parse_constraint`` rejects.
    """
    if not isinstance(text, str) or text.count("=") != 1:
        raise ValueError(f"a constraint takes the form NAME=EXPRESSION, not {text!r}")
    name, _, rhs = text.partition("=")
    name = name.strip()
    if not _NAME.fullmatch(name) or name not in allowed:
        known = ", ".join(sorted(allowed))
        raise ValueError(f"unknown symbol {name!r} on the left of a constraint; known symbols: {known}")
    expr = parse_constraint(rhs, allowed)
    if allowed[name] in expr.free_symbols:
        raise ValueError(f"constraint for {name} refers to {name} itself")
    return name, expr
