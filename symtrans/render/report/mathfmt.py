"""Formulas and numbers for reports: SymPy-printed LaTeX and MathML, substitution, exact values.

A derivation line is ``formula = substitution = value``:

* the formula is ``sympy.latex`` of the expression with ``symbols.LATEX_NAMES``;
* the substitution is the *same expression tree* printed with every symbol replaced by
  its number, i.e. an unevaluated substitution: nothing is multiplied, collected or
  reordered (``d_model**2`` prints as ``768 \\cdot 768``).  Substituting with
  ``xreplace``/``UnevaluatedExpr`` instead would merge equal numbers
  (``L_src*L_tgt`` at 512 becomes ``512^2``), which hides the structure;
* the value is the exact integer from ``evaluate.exact`` (never a float).

Long expressions are broken at the terms of a sum (also inside ``N (...)``) into
lines of about ``WIDTH`` characters, for ``align*`` in LaTeX, ``aligned`` in Markdown and
``mtable`` rows in HTML.  Every piece of math is a ``Formula``: the same SymPy expression
printed twice, by ``sympy.printing.latex`` (LaTeX, Markdown) and by
``sympy.printing.mathml``'s presentation printer (HTML), with the same line breaks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction
from typing import Mapping, Sequence

import sympy as sp
from sympy.printing.latex import LatexPrinter
from sympy.printing.mathml import MathMLPresentationPrinter
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


class _MathMLFormulaPrinter(MathMLPresentationPrinter):
    """Presentation MathML; ``d_model`` prints as d with the upright subscript "model",
    as ``symbols.LATEX_NAMES`` has it in LaTeX (SymPy splits the name at ``_``)."""

    def __init__(self) -> None:
        super().__init__({})


class _MathMLSubstitutionPrinter(MathMLPresentationPrinter):
    """MathML of an expression with each symbol replaced by its value, unevaluated; the
    factors of a product are separated by a centred dot (numbers side by side would read
    as one number)."""

    def __init__(self, values: Mapping[sp.Symbol, int]) -> None:
        super().__init__({"mul_symbol": "dot"})
        self._values = values

    def _number(self, n: int):
        x = self.dom.createElement("mn")
        x.appendChild(self.dom.createTextNode(str(n)))
        return x

    def _print_Symbol(self, sym, style="plain"):  # noqa: N802
        if sym in self._values:
            return self._number(self._values[sym])
        return super()._print_Symbol(sym, style)

    def _print_Pow(self, expr):  # noqa: N802
        base, exp = expr.as_base_exp()
        if base in self._values and exp.is_Integer and 2 <= int(exp) <= _MAX_EXPANDED_POWER:
            row = self.dom.createElement("mrow")
            for i in range(int(exp)):
                if i:
                    dot = self.dom.createElement("mo")
                    dot.appendChild(self.dom.createTextNode("\u00b7"))
                    row.appendChild(dot)
                row.appendChild(self._number(self._values[base]))
            return row
        return super()._print_Pow(expr)


def latex(expr: sp.Expr) -> Math:
    """``sympy.latex`` of ``expr`` with the legend's LaTeX names, marked as trusted math."""
    return Math(_formula_printer().doprint(as_expr(expr)))


def mathml(expr: sp.Expr) -> Math:
    """Presentation MathML of ``expr`` (no ``<math>`` wrapper), marked as trusted markup."""
    return Math(_MathMLFormulaPrinter().doprint(as_expr(expr)))


@dataclass(frozen=True)
class Formula:
    """A piece of math printed for every format: ``tex`` (LaTeX math mode, for LaTeX and
    Markdown) and ``mathml`` (presentation MathML content without the ``<math>`` element,
    for HTML).  Both are trusted markup from SymPy's printers or from ``number``.  A
    Formula is also an inline run of the report model (``doc``), of kind ``"math"``.

    The MathML may be given as a function of no arguments that prints it: it is printed
    the first time ``mathml`` is read, so a Markdown or LaTeX report, which never reads
    it, does not pay for SymPy's MathML printer (a third of a report's time).  Two
    Formulas are equal when their LaTeX is: both printings come from one expression.
    """

    tex: Math
    _mathml: object = field(repr=False, compare=False)  # Math, or a function giving it
    kind: str = field(default="math", init=False, repr=False, compare=False)

    @property
    def mathml(self) -> Math:
        m = self._mathml
        if callable(m):
            m = Math(m())
            object.__setattr__(self, "_mathml", m)  # printed once (a frozen dataclass's cache)
        return m


def formula(expr: sp.Expr) -> Formula:
    """``expr`` printed by SymPy as LaTeX and (when read) as presentation MathML."""
    return Formula(latex(expr), lambda: mathml(expr))


def symbol_formula(name: str) -> Formula:
    """The symbol ``name`` of ``symbols.SYMBOLS`` (``"d_model"``) as a Formula."""
    return formula(SYMBOLS[name])


def identifier(name: str) -> Formula:
    """An identifier with a subscript, such as ``W_1``, ``W_Q`` or ``d_model``, as math.

    A legend symbol prints with its legend name; any other name is printed by SymPy's
    printers as the symbol of that name (``W_1`` -> ``W_{1}``).
    """
    if name in SYMBOLS:
        return symbol_formula(name)
    sym = sp.Symbol(name)
    tex = LatexPrinter().doprint(sym)
    base, _, sub = name.partition("_")
    if len(sub) > 1 and "_" not in sub and "^" not in sub:  # a word as subscript is set upright, as in the legend
        tex = LatexPrinter(
            {"symbol_names": {sym: f"{LatexPrinter().doprint(sp.Symbol(base))}_{{\\mathrm{{{sub}}}}}"}}
        ).doprint(sym)
    return Formula(Math(tex), lambda: MathMLPresentationPrinter({}).doprint(sym))


def number(n: int) -> Formula:
    """An exact integer in math: ``124{,}439{,}808`` (LaTeX) and ``<mn>124,439,808</mn>``."""
    return Formula(math_number(n), Math(f"<mn>{thousands(n)}</mn>"))


_OPERATORS = {"=": ("=", "="), "x": (r"\times", "\u00d7"), "->": (r"\to", "\u2192"), ";": (";", ";")}


def join(parts: Sequence[Formula], op: str = "=") -> Formula:
    """Formulas joined by an operator: ``=``, ``x`` (times), ``->`` (maps to) or ``;``."""
    tex_op, mml_op = _OPERATORS[op]
    sep = " \\; " if op == ";" else f" {tex_op} "
    return Formula(
        Math(sep.join(p.tex for p in parts)),
        lambda: "<mrow>" + f"<mo>{mml_op}</mo>".join(p.mathml for p in parts) + "</mrow>",  # printed when read
    )


# -- numbers -----------------------------------------------------------------


def setting(sym: sp.Symbol, value: int) -> Formula:
    """``symbol = value`` as math."""
    return join([formula(sym), number(value)])


def thousands(n: int) -> str:
    """``124439808`` -> ``"124,439,808"`` (exact)."""
    return f"{int(n):,}"


def math_number(n: int) -> Math:
    """An exact integer for math mode: ``124{,}439{,}808`` (no space after the commas)."""
    return Math(thousands(n).replace(",", "{,}"))


def si(n: int, digits: int = 4) -> str:
    """An SI-prefixed approximation with ``digits`` significant digits: ``"124.4M"``.

    Prefixes are SI (k, M, G, T, P, E); below 1000 the number itself.  Only for
    display beside the exact value.  The digits come from ``base.numbers.si_prefixed``,
    the one formatter the CLI uses too (999,960,000 is 1G here and 1.0B there).
    """
    from symtrans.base.numbers import si_prefixed

    return si_prefixed(int(n), digits)


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


# A printed line is a list of segments: a SymPy expression (printed by the format's
# printer) or a literal in both formats.  One layout serves LaTeX and MathML, so the
# lines break at the same places in every format.
_Lit = tuple  # ("lit", tex, mathml)


def _lit(tex: str, mml: str) -> tuple:
    return ("lit", tex, mml)


_OPEN = _lit(r"\bigl(", "<mo>(</mo>")
_CLOSE = _lit(r"\bigr)", "<mo>)</mo>")
_LEAD = _lit("{}", "")  # keeps a line's leading sign binary in TeX


def _sign(sign: str) -> tuple:
    return _lit(f" {sign} ", f"<mo>{sign}</mo>")


class _Printers:
    """The LaTeX printer that decides the layout (its widths) and the MathML printer."""

    def __init__(self, tex: LatexPrinter, mml: MathMLPresentationPrinter) -> None:
        self.tex, self.mml = tex, mml
        self._tex: dict = {}  # segment -> its LaTeX: a line being filled is measured once per added term

    def tex_of(self, segments: list) -> str:
        return "".join(self._tex_segment(s) if not isinstance(s, tuple) else s[1] for s in segments)

    def _tex_segment(self, s) -> str:
        out = self._tex.get(s)
        if out is None:
            out = self._tex[s] = self.tex.doprint(s)
        return out

    def mml_of(self, segments: list) -> str:
        return "".join(self.mml.doprint(s) if not isinstance(s, tuple) else s[2] for s in segments)


def _pieces(expr: sp.Expr, pr: _Printers) -> list[tuple[str, list]]:
    """(sign, segments) for each term of a sum; a long term ``c (a + b + ...)`` is opened up."""
    terms = pr.tex._as_ordered_terms(expr, order=None) if expr.is_Add else [expr]
    out: list[tuple[str, list]] = []
    for term in terms:
        sign = "+"
        if expr.is_Add and term.could_extract_minus_sign():
            sign, term = "-", -term
        opened = _open_up(term, pr)
        if opened is None:
            out.append((sign, [term]))
        else:
            (inner_sign, first), rest = opened[0], opened[1:]
            if inner_sign == "-":  # "(- a + b)": the sign goes inside the bracket
                i = first.index(_OPEN) + 1
                first = first[:i] + [_lit("- ", "<mo>-</mo>")] + first[i:]
            out.append((sign, first))
            out.extend(rest)
    return out


def _open_up(term: sp.Expr, pr: _Printers) -> list[tuple[str, list]] | None:
    """Pieces of ``c*(sum)`` when it prints longer than a line, else ``None``."""
    if not term.is_Mul or width(pr.tex.doprint(term)) <= WIDTH:
        return None
    adds = [f for f in term.args if f.is_Add]
    if len(adds) != 1:
        return None
    inner = adds[0]
    rest = sp.Mul(*[f for f in term.args if f is not inner])
    prefix: list = []
    if rest != 1:
        rest_tex = pr.tex.doprint(rest)
        dot = re.search(r"[0-9]$", rest_tex) is not None
        prefix = [rest, _lit(r" \cdot " if dot else " ", "<mo>\u00b7</mo>" if dot else "<mo>&#x2062;</mo>")]
    parts = _pieces(inner, pr)
    parts[0] = (parts[0][0], prefix + [_OPEN] + parts[0][1])
    parts[-1] = (parts[-1][0], parts[-1][1] + [_CLOSE])
    return parts


def _layout(expr: sp.Expr, pr: _Printers, limit: int) -> list[list]:
    """``expr`` as lines of segments, each about ``limit`` characters wide (LaTeX widths).

    The first line is the start of the expression; each further line starts with
    ``{} + `` or ``{} - ``.
    """
    if width(pr.tex.doprint(expr)) <= limit:
        return [[expr]]
    lines: list[list] = []
    cur: list = []
    for i, (sign, segs) in enumerate(_pieces(expr, pr)):
        if i == 0:
            cur = ([_lit("- ", "<mo>-</mo>")] if sign == "-" else []) + segs
            continue
        tok = [_sign(sign)] + segs
        if width(pr.tex_of(cur + tok)) > limit:
            lines.append(cur)
            cur = [_LEAD] + tok
        else:
            cur += tok
    lines.append(cur)
    return lines


def _lines(expr: sp.Expr, pr: _Printers, limit: int) -> list[Formula]:
    return [
        Formula(Math(pr.tex_of(segs)), lambda segs=segs: f"<mrow>{pr.mml_of(segs)}</mrow>")
        for segs in _layout(expr, pr, limit)
    ]


def break_lines(expr: sp.Expr, printer=None, limit: int = WIDTH) -> list[Math]:
    """The LaTeX of ``expr`` as lines of about ``limit`` characters (see ``equation``)."""
    pr = _Printers(printer or _FormulaPrinter(), _MathMLFormulaPrinter())
    return [f.tex for f in _lines(as_expr(expr), pr, limit)]


# -- equations -----------------------------------------------------------------


@dataclass(frozen=True)
class Equation:
    """A derivation line ``formula = substitution = value`` as plain data.

    Attributes:
        formula: the formula's lines (``Formula``; one line when it fits).
        substitution: the lines of the same tree with every symbol replaced by its value,
            or ``None`` without values, for a number, or when it would only repeat the value.
        value: the exact ``int``, or ``None`` without values.
        oneline: the three parts fit one line.
        constant: the formula has no symbols.
        check: the substitution as Python arithmetic (for tests), or ``None``.
    """

    formula: tuple[Formula, ...]
    substitution: tuple[Formula, ...] | None
    value: int | None
    oneline: bool
    constant: bool
    check: str | None


def equation(expr: sp.Expr, values: Mapping[str, int] | None, limit: int = WIDTH) -> Equation:
    """A derivation line ``formula = substitution = value`` (see ``Equation``).

    Raises:
        ValueError: from ``evaluate.exact`` when a size is missing or the value is not
            an integer.
    """
    expr = as_expr(expr)
    formula_lines = tuple(_lines(expr, _Printers(_formula_printer(), _MathMLFormulaPrinter()), limit))
    constant = not expr.free_symbols
    if values is None:
        return Equation(formula_lines, None, int(expr) if constant else None, len(formula_lines) == 1, constant, None)
    value = evaluate.exact(expr, values)
    if constant:
        return Equation(formula_lines, None, value, True, True, None)
    subs = {SYMBOLS[n]: int(v) for n, v in values.items() if n in SYMBOLS}
    pr = _Printers(_SubstitutionPrinter(subs), _MathMLSubstitutionPrinter(subs))
    substitution: tuple[Formula, ...] | None = tuple(_lines(expr, pr, limit))
    if [f.tex for f in substitution] == [str(value)]:  # a bare symbol: "d_model = 768", not "= 768 = 768"
        substitution = None
    oneline = len(formula_lines) == 1 and (
        substitution is None
        or (
            len(substitution) == 1
            and width(formula_lines[0].tex) + width(substitution[0].tex) + len(thousands(value)) + 6 <= limit + 12
        )
    )
    return Equation(formula_lines, substitution, value, oneline, False, _PlainSubstitutionPrinter(subs).doprint(expr))
