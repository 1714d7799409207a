"""The report's "Shape walk" section: the walk of ``analysis.walk`` as plain template data
(templates ``walk.md.j2``/``walk.tex.j2``)."""

from __future__ import annotations

from typing import Mapping

from symtrans.analysis.walk import Shape, walk
from symtrans.base.escape import Math
from symtrans.engine.evaluate import exact
from symtrans.engine.spec import Spec
from symtrans.render.report.mathfmt import latex


def report_section(spec: Spec, values: Mapping[str, int] | None) -> dict:
    """Plain data for the report's "Shape walk" section (templates ``walk.md.j2``/``walk.tex.j2``).

    Every step with its operation, shapes (trusted LaTeX from SymPy), FLOPs per instance,
    repeat, and, when ``values`` (the FLOPs workload) are given, the exact total FLOPs
    of the step and the sum over the walk (which equals the cost engine's forward FLOPs).
    """

    def shp(shape: Shape) -> Math:
        return Math(r" \times ".join(latex(d) for d in shape)) if shape else Math(r"()")

    w = walk(spec)
    rows = []
    stage = None
    for i, s in enumerate(w.steps, 1):
        rows.append(
            {
                "index": i,
                "op": s.op,
                "kind": s.kind,
                "stage": s.stage if s.stage != stage else None,
                "inputs": [shp(x) for x in s.inputs],
                "output": shp(s.output),
                "flops": latex(s.flops) if s.flops != 0 else None,
                "repeat": latex(s.repeat) if s.repeat != 1 else None,
                "total": exact(s.total_flops, values) if values is not None else None,
            }
        )
        stage = s.stage
    return {
        "rows": rows,
        "total": exact(w.flops, values) if values is not None else None,
        "rule": "a product (... m x k) . (k x n) costs 2 (batch dims) m k n FLOPs; a mask keeps only the "
        "query-key pairs it allows; lookups, reshapes, norms, softmax and adds cost 0 (matmul convention)",
    }
