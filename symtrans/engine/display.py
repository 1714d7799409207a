"""How a ``Cost`` tree shows itself in Jupyter: its closed forms rendered as LaTeX and
a Markdown table of its components (``Cost._repr_latex_`` / ``_repr_markdown_``).
Units: parameters; forward FLOPs (2 per multiply-accumulate, matrix products only)."""

from __future__ import annotations

import sympy as sp

from symtrans.base.escape import latex_escape, markdown_escape
from symtrans.engine import symbols as S
from symtrans.engine.evaluate import exact
from symtrans.engine.simplify import closed_form


def _latex(e: sp.Expr) -> str:
    return sp.latex(e, symbol_names=S.LATEX_NAMES)


def cost_latex(cost, values: dict[str, int] | None = None) -> str:
    """A LaTeX display of a Cost's parameters: closed form (= value when ``values`` is given)."""
    e = closed_form(cost.params)
    out = rf"P_{{\text{{{_tex_text(cost.name)}}}}} = {_latex(e)}"
    if values is not None:
        out += rf" = {exact(e, values):,}".replace(",", "{,}")
    return f"$$ {out} $$"


def _tex_text(s: str) -> str:
    """``s`` escaped for LaTeX text mode (the report package's escaping)."""
    return latex_escape(s)


def cost_markdown(cost) -> str:
    """A Markdown view of a Cost: its parameter and FLOP closed forms and its components."""
    lines = [
        f"**{markdown_escape(cost.name)}**" + (f" × ${_latex(cost.multiplicity)}$" if cost.multiplicity != 1 else ""),
        "",
        f"- parameters: ${_latex(closed_form(cost.params))}$",
    ]
    if cost.flops != 0:
        lines.append(f"- forward FLOPs: ${_latex(closed_form(cost.flops))}$")
    if cost.children or cost.steps:
        lines += ["", "| component | parameters | forward FLOPs |", "|---|---|---|"]
        for c in cost.children:
            mult = f" × ${_latex(c.multiplicity)}$" if c.multiplicity != 1 else ""
            lines.append(
                f"| {markdown_escape(c.name)}{mult} | ${_latex(closed_form(c.params))}$ | ${_latex(closed_form(c.flops))}$ |"
            )
        for s in cost.steps:
            lines.append(f"| {markdown_escape(s.label)} | ${_latex(s.params)}$ | ${_latex(s.flops)}$ |")
    return "\n".join(lines)
