"""Exact per-component tables of a built model, shared by the CLI's text and JSON output.

A row is one component of the Cost tree down to the layers: its multiplicity (how
many times the whole model holds it), its count per instance and in total, and its
closed form.  Values are exact Python ints; shares are exact fractions of the total.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping

import sympy as sp

from symtrans.engine.cost import Cost
from symtrans.engine.evaluate import exact
from symtrans.engine.simplify import closed_form


@dataclass(frozen=True)
class Row:
    """One component: ``total = multiplicity * each`` (parameters or FLOPs)."""

    name: str
    depth: int
    multiplicity: int
    each: int
    total: int
    share: Fraction
    formula: sp.Expr


def rows(model: Cost, values: Mapping[str, int], attr: str = "params", depth: int = 2) -> list[Row]:
    """Rows for the top-level components and, down to ``depth``, their children.

    ``attr`` is ``params``, ``active_params`` or ``flops``.
    """
    each_attr = {"params": "params_each", "active_params": "active_each", "flops": "flops_each"}[attr]
    grand = exact(getattr(model, attr), values)
    out: list[Row] = []

    def visit(c: Cost, level: int, outer: sp.Expr) -> None:
        mult = exact(outer * c.multiplicity, values)
        each = exact(getattr(c, each_attr), values)
        total = mult * each
        out.append(
            Row(
                c.name,
                level,
                mult,
                each,
                total,
                Fraction(total, grand) if grand else Fraction(0),
                closed_form(getattr(c, each_attr)),
            )
        )
        if level + 1 < depth:
            for ch in c.children:
                visit(ch, level + 1, outer * c.multiplicity)

    for c in model.children:
        visit(c, 0, sp.Integer(1))
    return out


def rows_json(rs: list[Row]) -> list[dict]:
    """Rows as JSON-ready dicts (exact integers, closed forms as SymPy strings)."""
    return [
        {
            "name": r.name,
            "depth": r.depth,
            "count": r.multiplicity,
            "each": r.each,
            "total": r.total,
            "share": float(r.share),
            "closed_form": sp.sstr(r.formula),
        }
        for r in rs
    ]
