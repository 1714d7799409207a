"""The report's "Shape walk" section: the walk of ``analysis.walk`` as a ``doc.Section``."""

from __future__ import annotations

import re
from typing import Mapping

from symtrans.analysis.walk import Shape, walk
from symtrans.base.escape import Math
from symtrans.engine.evaluate import exact
from symtrans.engine.spec import Spec

from . import doc
from .doc import Column, Row, Section, data_msg, msg, runs, strong, table
from .mathfmt import Formula, formula, thousands

RULE = (
    "a product (... m x k) . (k x n) costs 2 (batch dims) m k n FLOPs; a mask keeps only the "
    "query-key pairs it allows; lookups, reshapes, norms, softmax and adds cost 0 (matmul convention)"
)


def _shape(shape: Shape) -> Formula:
    """``B x L x d_model`` as math (SymPy prints each dimension)."""
    if not shape:
        return Formula(Math("()"), Math("<mrow><mo>(</mo><mo>)</mo></mrow>"))
    dims = [formula(d) for d in shape]
    return Formula(
        Math(r" \times ".join(d.tex for d in dims)),
        lambda: "<mrow>" + "<mo>\u00d7</mo>".join(d.mathml for d in dims) + "</mrow>",  # printed when read
    )


def _times(a: Formula, b: Formula) -> Formula:
    return Formula(Math(f"{a.tex} \\times {b.tex}"), lambda: f"<mrow>{a.mathml}<mo>\u00d7</mo>{b.mathml}</mrow>")


def _stage(text: str) -> tuple:
    """``decoder layer x N (weights shared: all)`` with the component's name and the remark
    translated (``data_msg``); the count is a symbol."""
    m = re.fullmatch(r"(.+?) x (\S+)(?: \((.+)\))?", text)
    if m is None:
        return data_msg(text)
    name, count, remark = m.groups()
    return runs(data_msg(name), f" x {count}", (" (", data_msg(remark), ")") if remark else None)


def report_section(spec: Spec, values: Mapping[str, int] | None) -> Section:
    """The "Shape walk" section: every step with its operation, the shapes of its inputs
    and output (math printed by SymPy), FLOPs per instance and repeat, and, when ``values``
    (the FLOPs workload) are given, the exact total FLOPs of the step and the sum over the
    walk (which equals the cost engine's forward FLOPs)."""
    w = walk(spec)
    with_total = values is not None
    rows: list = []
    stage = None
    for i, s in enumerate(w.steps, 1):
        if s.stage != stage:
            rows.append(Row((_stage(s.stage),), "group"))
            stage = s.stage
        inputs: list = []
        for j, x in enumerate(s.inputs):
            if j:
                inputs.append("; ")
            inputs.append(_shape(x))
        if s.flops != 0:
            f = formula(s.flops)
            flops = _times(f, formula(s.repeat)) if s.repeat != 1 else f
        else:
            flops = "0"
        cells = [str(i), data_msg(s.op), runs(*inputs), _shape(s.output), flops]
        if with_total:
            cells.append(thousands(exact(s.total_flops, values)))
        rows.append(cells)
    columns = [
        Column(msg("#"), "r"),
        Column(msg("operation"), wrap=0.18),
        Column(msg("inputs"), wrap=0.24),
        Column(msg("output"), wrap=0.14),
        Column(msg("FLOPs per instance"), wrap=0.22),
    ]
    if with_total:
        columns.append(Column(msg("total FLOPs"), "r"))
    blocks: list = [
        doc.Para(
            msg(
                "Every step of the forward pass with the shapes of its inputs and output; the FLOPs follow "
                "from the shapes: {rule}.",
                rule=msg(RULE),
            )
        ),
        table(columns, rows, long=True, small=True),
    ]
    total = exact(w.flops, values) if with_total else None
    if total is not None:
        blocks.append(
            doc.Para(msg("Sum over the steps: {total} FLOPs, the forward FLOPs above.", total=strong(thousands(total))))
        )
    return Section("walk", msg("Shape walk"), blocks, data={"total": total, "steps": len(w.steps)})
