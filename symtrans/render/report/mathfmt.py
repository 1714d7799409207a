"""Formulas and numbers for reports: SymPy-printed LaTeX, substitution, exact values.

A derivation line is ``formula = substitution = value``:

* the formula is ``sympy.latex`` of the expression with ``symbols.LATEX_NAMES``;
* the substitution is the *same expression tree* printed with every symbol replaced by
  its number, i.e. an unevaluated substitution: nothing is multiplied, collected or
  reordered (``d_model**2`` prints as ``768 \\cdot 768``).  Substituting with
  ``xreplace``/``UnevaluatedExpr`` instead would merge equal numbers
  (``L_src*L_tgt`` at 512 becomes ``512^2``), which hides the structure;
* the value is the exact integer from ``evaluate.exact`` (never a float).

Long expressions are broken at the terms of a sum (also inside ``N (...)``) into
lines of about ``WIDTH`` characters, for ``align*`` in LaTeX and ``aligned`` in Markdown.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction
from typing import Mapping

import sympy as sp
from sympy.printing.latex import LatexPrinter
from sympy.printing.str import StrPrinter

from symtrans.base.escape import Math
from symtrans.engine import evaluate
from symtrans.engine.evaluate import as_expr
from symtrans.engine.symbols import LATEX_NAMES, SYMBOLS

# Estimated characters per line of a displayed formula (A4, 2 cm margins, 10 pt).
WIDTH = 90
# Integer powers of a size up to this exponent print as repeated products when substituted.
_MAX_EXPANDED_POWER = 3


class _Memo:
    """Remembers what a printer printed for each (sub)expression: a derivation prints an
    expression whole, then its terms, then the terms inside ``N (...)`` (``break_lines``),
    so every subexpression is printed several times.  The output is unchanged: a
    printer's text of an expression depends only on the expression and its settings."""

    def _print(self, expr, **kwargs):
        if kwargs or not isinstance(expr, sp.Basic):
            return super()._print(expr, **kwargs)
        memo = self.__dict__.setdefault("_memo", {})
        out = memo.get(expr)
        if out is None:
            if len(memo) > 20_000:  # bounded: a long session prints many expressions
                memo.clear()
            out = memo[expr] = super()._print(expr)
        return out


class _FormulaPrinter(_Memo, LatexPrinter):
    def __init__(self) -> None:
        super().__init__({"symbol_names": LATEX_NAMES})


_FORMULA_PRINTER: _FormulaPrinter | None = None


def _formula_printer() -> _FormulaPrinter:
    """One formula printer for the process (its memo serves every report)."""
    global _FORMULA_PRINTER
    if _FORMULA_PRINTER is None:
        _FORMULA_PRINTER = _FormulaPrinter()
    return _FORMULA_PRINTER


class _SubstitutionPrinter(_Memo, LatexPrinter):
    """Prints an expression with each symbol replaced by its value, unevaluated."""

    def __init__(self, values: Mapping[sp.Symbol, int]) -> None:
        super().__init__({"symbol_names": LATEX_NAMES})
        self._values = values

    def _print_Symbol(self, expr, style="plain"):  # noqa: N802 (SymPy's naming)
        if expr in self._values:
            return str(self._values[expr])
        return super()._print_Symbol(expr, style)

    def _print_Pow(self, expr):  # noqa: N802
        base, exp = expr.as_base_exp()
        if base in self._values and exp.is_Integer and 2 <= int(exp) <= _MAX_EXPANDED_POWER:
            return r" \cdot ".join([str(self._values[base])] * int(exp))
        return super()._print_Pow(expr)


class _PlainSubstitutionPrinter(StrPrinter):
    """The substitution as Python arithmetic (``2*1*1024*768**2``), for checks."""

    def __init__(self, values: Mapping[sp.Symbol, int]) -> None:
        super().__init__()
        self._values = values

    def _print_Symbol(self, expr):  # noqa: N802
        if expr in self._values:
            return str(self._values[expr])
        return super()._print_Symbol(expr)


def latex(expr: sp.Expr) -> Math:
    """``sympy.latex`` of ``expr`` with the legend's LaTeX names, marked as trusted math."""
    return Math(_formula_printer().doprint(as_expr(expr)))


# -- numbers -----------------------------------------------------------------

_SI = ((10**18, "E"), (10**15, "P"), (10**12, "T"), (10**9, "G"), (10**6, "M"), (10**3, "k"))


def thousands(n: int) -> str:
    """``124439808`` -> ``"124,439,808"`` (exact)."""
    return f"{int(n):,}"


def math_number(n: int) -> Math:
    """An exact integer for math mode: ``124{,}439{,}808`` (no space after the commas)."""
    return Math(thousands(n).replace(",", "{,}"))


def si(n: int, digits: int = 4) -> str:
    """An SI-prefixed approximation with ``digits`` significant digits: ``"124.4M"``.

    Prefixes are SI (k, M, G, T, P, E); below 1000 the number itself.  Only for
    display beside the exact value.
    """
    n = int(n)
    if abs(n) < 1000:
        return str(n)
    sign = "-" if n < 0 else ""
    a = abs(n)
    with localcontext() as ctx:  # enough digits for any count (the default 28 overflow quantize)
        ctx.prec = max(28, len(str(a)) + digits + 2)
        for i, (scale, prefix) in enumerate(_SI):
            if a >= scale:
                m = Decimal(a) / Decimal(scale)
                int_digits = len(str(int(m)))
                q = Decimal(1).scaleb(-max(digits - int_digits, 0))
                m = m.quantize(q, rounding=ROUND_HALF_UP)
                if m >= 1000 and i > 0:  # 999.96M rounds to 1000M: use the next prefix
                    scale, prefix = _SI[i - 1]
                    m = (Decimal(a) / Decimal(scale)).quantize(Decimal(1).scaleb(-(digits - 1)), rounding=ROUND_HALF_UP)
                text = format(m, "f")
                if "." in text:
                    text = text.rstrip("0").rstrip(".")
                return f"{sign}{text}{prefix}"
    return str(n)  # pragma: no cover


def count(n: int, unit: str = "") -> str:
    """The exact count with its approximation beside it.

    Parameters read the field's way, ``"6,738,415,616 (6.738B)"`` (B for billion);
    with a ``unit`` the SI prefix goes on the unit: ``"62,921,270,886,400 (62.92 TFLOP)"``.
    """
    if abs(int(n)) < 1000:
        return thousands(n) + (f" {unit}" if unit else "")
    approx = si(n)
    number, prefix = approx[:-1], approx[-1]
    if unit:
        return f"{thousands(n)} ({number} {prefix}{unit})"
    return f"{thousands(n)} ({number}{'B' if prefix == 'G' else prefix})"


def percent_shares(values: list[int], places: int = 2) -> list[str]:
    """Shares of ``values`` in percent with ``places`` decimals that sum to exactly 100.

    Largest-remainder rounding of the exact fractions (ties to the earlier entry), so
    the table adds up; an all-zero list gives 0 everywhere.
    """
    total = sum(values)
    unit = 10**places  # hundredths of a percent for places=2
    if total == 0:
        return [f"{0:.{places}f}"] * len(values)
    exact = [Fraction(v * 100 * unit, total) for v in values]
    floors = [x.numerator // x.denominator for x in exact]
    short = 100 * unit - sum(floors)
    order = sorted(range(len(values)), key=lambda i: (-(exact[i] - floors[i]), i))
    for i in order[:short]:
        floors[i] += 1
    return [_fixed(f, places) for f in floors]


def ratio_percent(num: int, den: int, places: int = 2) -> str:
    """``num/den`` in percent, rounded half-up to ``places`` decimals, with its sign."""
    with localcontext() as ctx:  # enough digits for any exact count (the default 28 overflow quantize)
        ctx.prec = max(28, len(str(abs(num))) + len(str(abs(den))) + places + 5)
        d = (Decimal(num) * 100 / Decimal(den)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return f"{d:+.{places}f}"


def _fixed(hundredths: int, places: int) -> str:
    unit = 10**places
    return f"{hundredths // unit}.{hundredths % unit:0{places}d}"


# -- line breaking -------------------------------------------------------------

_SUB = re.compile(r"[_^]\{([^{}]*)\}")


def width(tex: str) -> int:
    """Rough printed width of a LaTeX math string, in characters."""
    s = re.sub(r"\\(?:mathrm|operatorname|text|mathit)\{([^{}]*)\}", r"\1", tex)
    s = _SUB.sub(lambda m: "x" * max(1, (len(m.group(1)) + 1) // 2), s)
    # a fraction is as wide as the wider of numerator and denominator
    frac = re.compile(r"\\frac\{([^{}]*)\}\{([^{}]*)\}")
    while frac.search(s):
        s = frac.sub(lambda m: "x" * max(width(m.group(1)), width(m.group(2))), s)
    s = _SUB.sub(lambda m: "x" * max(1, (len(m.group(1)) + 1) // 2), s)
    s = re.sub(r"\\(?:left|right|bigl|bigr)", "", s)
    s = s.replace(r"\cdot", "..")
    s = re.sub(r"\\[A-Za-z]+", "x", s)
    s = re.sub(r"[{}]", "", s)
    s = re.sub(r"\s+", " ", s)
    return len(s)


def _pieces(expr: sp.Expr, printer) -> list[tuple[str, str]]:
    """(sign, text) for each term of a sum; a long term ``c (a + b + ...)`` is opened up."""
    terms = printer._as_ordered_terms(expr, order=None) if expr.is_Add else [expr]
    out: list[tuple[str, str]] = []
    for term in terms:
        sign = "+"
        if expr.is_Add and term.could_extract_minus_sign():
            sign, term = "-", -term
        opened = _open_up(term, printer)
        if opened is None:
            out.append((sign, printer.doprint(term)))
        else:
            (inner_sign, first), rest = opened[0], opened[1:]
            out.append((sign, first if inner_sign == "+" else first.replace(r"\bigl(", r"\bigl(- ", 1)))
            out.extend(rest)
    return out


def _open_up(term: sp.Expr, printer) -> list[tuple[str, str]] | None:
    """Pieces of ``c*(sum)`` when it prints longer than a line, else ``None``."""
    if not term.is_Mul or width(printer.doprint(term)) <= WIDTH:
        return None
    adds = [f for f in term.args if f.is_Add]
    if len(adds) != 1:
        return None
    inner = adds[0]
    rest = sp.Mul(*[f for f in term.args if f is not inner])
    prefix = "" if rest == 1 else printer.doprint(rest) + " "
    if re.search(r"[0-9] $", prefix):
        prefix += r"\cdot "
    parts = _pieces(inner, printer)
    parts[0] = (parts[0][0], prefix + r"\bigl(" + parts[0][1])
    parts[-1] = (parts[-1][0], parts[-1][1] + r"\bigr)")
    return parts


def break_lines(expr: sp.Expr, printer, limit: int = WIDTH) -> list[Math]:
    """The printed ``expr`` as lines of about ``limit`` characters.

    The first line is the start of the expression; each further line starts with
    ``{} + `` or ``{} - `` (the empty group keeps the sign binary in TeX).
    """
    whole = printer.doprint(expr)
    if width(whole) <= limit:
        return [Math(whole)]
    pieces = _pieces(expr, printer)
    lines: list[str] = []
    cur = ""
    for i, (sign, text) in enumerate(pieces):
        if i == 0:
            cur = ("- " if sign == "-" else "") + text
            continue
        tok = f" {sign} {text}"
        if width(cur + tok) > limit:
            lines.append(cur)
            cur = "{}" + tok
        else:
            cur += tok
    lines.append(cur)
    return [Math(x) for x in lines]


# -- equations -----------------------------------------------------------------


def equation(expr: sp.Expr, values: Mapping[str, int] | None, limit: int = WIDTH) -> dict:
    """A derivation line ``formula = substitution = value`` as plain data.

    Returns a dict with ``formula`` and ``substitution`` (lists of ``Math`` lines; the
    substitution is ``None`` when ``values`` is ``None`` or the formula is a number),
    ``value`` (exact ``int``, or ``None`` without values), ``oneline`` (the three
    parts fit one line), ``constant`` (the formula has no symbols) and ``check`` (the
    substitution as Python arithmetic, for tests).

    Raises:
        ValueError: from ``evaluate.exact`` when a size is missing or the value is not
            an integer.
    """
    expr = as_expr(expr)
    formula = break_lines(expr, _formula_printer(), limit)
    constant = not expr.free_symbols
    if values is None:
        return {
            "formula": formula,
            "substitution": None,
            "value": int(expr) if constant else None,
            "oneline": len(formula) == 1,
            "constant": constant,
            "check": None,
        }
    value = evaluate.exact(expr, values)
    if constant:
        return {
            "formula": formula,
            "substitution": None,
            "value": value,
            "oneline": True,
            "constant": True,
            "check": None,
        }
    subs = {SYMBOLS[n]: int(v) for n, v in values.items() if n in SYMBOLS}
    substitution = break_lines(expr, _SubstitutionPrinter(subs), limit)
    if substitution == [Math(str(value))]:  # a bare symbol: "d_model = 768", not "= 768 = 768"
        substitution = None
    oneline = len(formula) == 1 and (
        substitution is None
        or (
            len(substitution) == 1
            and width(formula[0]) + width(substitution[0]) + len(thousands(value)) + 6 <= limit + 12
        )
    )
    return {
        "formula": formula,
        "substitution": substitution,
        "value": value,
        "oneline": oneline,
        "constant": False,
        "check": _PlainSubstitutionPrinter(subs).doprint(expr),
    }
