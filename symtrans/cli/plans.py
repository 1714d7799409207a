"""Plans of the ``params``, ``flops`` and ``memory`` commands, built with SymPy, and the
data that answers them without SymPy (``numbers``).

A plan holds what a command prints from the closed forms: ``layout`` (the components
it lists: name, depth), ``texts`` (closed forms as ``sympy.sstr`` prints them) and
``exprs`` (the quantities it evaluates at the sizes).  ``Plan.numbers(values)``
evaluates them with SymPy; ``Plan.data()`` turns them into evaluation trees
(``kernel``: exact integer Horner forms) for ``numbers.TreeNumbers``.

Nothing needs regenerating: the data is written to the per-user disk cache by the first
run that needs it (``numbers``).  To fill the cache for every preset ahead of time (after
installing, say): ``python -m symtrans.cli.warm``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.cli import numbers as NB


@dataclass
class Plan:
    """What a command prints from the closed forms (see the module docstring)."""

    layout: list[tuple[str, int]] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)
    exprs: dict[str, sp.Expr] = field(default_factory=dict)

    def numbers(self, values: Mapping[str, int]) -> NB.Numbers:
        return SympyNumbers(self, values)

    def data(self) -> dict:
        """The plan as JSON-ready data: layout, texts and an evaluation tree per quantity.

        Raises:
            ValueError: a quantity the trees cannot express (e.g. an unevaluated sum).
        """
        from symtrans.analysis import kernel as K

        trees = {}
        for key, e in self.exprs.items():
            try:
                trees[key] = _tree(K.tree(e))
            except K.NotExact as err:
                raise InputError(str(err)) from None
        return {"layout": [[n, d] for n, d in self.layout], "texts": dict(self.texts), "trees": trees}


class SympyNumbers(NB.Numbers):
    """A plan evaluated with SymPy: ``evaluate.exact`` for counts, ``flops.evaluate`` for
    exact rationals (the functions the commands always used)."""

    def __init__(self, plan: Plan, values: Mapping[str, int]) -> None:
        super().__init__(plan.layout, plan.texts)
        self.plan = plan
        self.values = dict(values)

    def value(self, key: str):
        from fractions import Fraction

        from symtrans.accounting.flops import evaluate

        r = evaluate(self.plan.exprs[key], self.values)
        return int(r.p) if r.q == 1 else Fraction(int(r.p), int(r.q))

    def integer(self, key: str) -> int:
        from symtrans.engine.evaluate import exact

        return exact(self.plan.exprs[key], self.values)


_OPS = {"add": "+", "mul": "*", "floordiv": "//", "min": "min", "max": "max", "exactdiv": "/"}


def _tree(node: tuple) -> list:
    """A ``kernel`` tree as the nested lists of ``numbers.evaluate_tree``."""
    kind = node[0]
    if kind == "var":
        return ["v", node[1]]
    if kind == "const":
        return ["c", node[1]]
    return [_OPS[kind], _tree(node[1]), _tree(node[2])]


# ---------------------------------------------------------------------------------
# the plans


def build(spec, query: tuple) -> Plan:
    """The plan of ``query`` (``numbers.params_query`` and friends) for ``spec``.

    Raises:
        ValueError: the options are invalid (unknown mode, dtype, ...), as the command says.
    """
    kind = query[0]
    if kind == "params":
        return params_plan(spec, *query[1:])
    if kind == "flops":
        return flops_plan(spec, *query[1:])
    if kind == "memory":
        return memory_plan(spec, *query[1:])
    raise InputError(f"unknown plan {kind!r}")


def params_plan(spec, part: str = "all") -> Plan:
    """``symtrans params``: the total (and active) parameters with their closed forms, and
    the components down to the layers (``summary.rows``), of the whole model or of one
    ``part`` of a vision-language model (``--part text|vision|audio``, ``vision.select_part``)."""
    from symtrans.engine.architectures import build as build_model
    from symtrans.engine.simplify import closed_form
    from symtrans.engine.vision import select_part

    model = select_part(build_model(spec), part)
    plan = Plan()
    plan.exprs["total"] = model.params
    plan.texts["closed_form"] = sp.sstr(closed_form(model.params))
    if spec.is_moe:
        plan.exprs["active"] = model.active_params
        plan.texts["active_closed_form"] = sp.sstr(closed_form(model.active_params))
    _component_rows(plan, model, "params", "params_each")
    return plan


def _component_rows(plan: Plan, model, attr: str, each_attr: str, depth: int = 2) -> None:
    """The rows of ``summary.rows``: each component's multiplicity and count per instance."""
    from symtrans.engine.simplify import closed_form

    def visit(c, level: int, outer: sp.Expr) -> None:
        i = len(plan.layout)
        plan.layout.append((c.name, level))
        plan.exprs[f"r{i}.count"] = outer * c.multiplicity
        plan.exprs[f"r{i}.each"] = getattr(c, each_attr)
        plan.texts[f"r{i}.formula"] = sp.sstr(closed_form(getattr(c, each_attr)))
        if level + 1 < depth:
            for ch in c.children:
                visit(ch, level + 1, outer * c.multiplicity)

    for c in model.children:
        visit(c, 0, sp.Integer(1))


def flops_plan(spec, mode: str, convention: str, mask: str, recompute: str) -> Plan:
    """``symtrans flops``: the total under the mode and convention, its closed form and,
    for forward/backward/training, the components (``flops.component_flops``)."""
    from symtrans.accounting import flops as F

    plan = Plan()
    if mode in F.TRAINING_MODES:
        expr = F.flops_expr(spec, mode, convention, mask, recompute)
        for i, c in enumerate(F.component_flops(spec, mode, convention, mask, recompute)):
            plan.layout.append((c.name, c.depth))
            plan.exprs[f"c{i}.count"] = c.count
            plan.exprs[f"c{i}.each"] = c.each
            plan.exprs[f"c{i}.total"] = c.total
            plan.texts[f"c{i}.closed_form"] = sp.sstr(c.each)
    elif mode == "prefill":
        expr = F.prefill_expr(spec, convention, mask)
    else:
        expr = F.decode_expr(spec, convention, mask)
    plan.exprs["total"] = expr
    plan.texts["closed_form"] = sp.sstr(expr)
    return plan


def memory_plan(
    spec,
    dtype: str,
    quantization: tuple | None,
    kv_dtype: str | None,
    optimizer: str,
    zero: int,
    dp: int,
    recompute: str,
    flash: bool,
    eager: bool,
    dropout: bool,
    mode: str,
    margin: str,
    batch: int,
    seq: int,
    src: int | None,
) -> Plan:
    """``symtrans memory``: the byte counts of ``memory.memory_terms`` and their closed
    forms (printed with the workload substituted); with a quantization, the weights by
    term (``quantization.weight_terms``, layout depth 1); in training, the optimizer's
    bytes per parameter and its description."""
    from symtrans.accounting.memory import KEYS, get_optimizer, memory_terms
    from symtrans.accounting.quantization import Quantization, WeightFormat, weight_terms

    quant = None if quantization is None else Quantization(*quantization)
    terms = memory_terms(
        spec,
        dtype=dtype,
        quantization=quant,
        optimizer=optimizer,
        zero_stage=zero,
        dp=dp,
        batch=batch,
        seq_len=seq,
        recompute=recompute,
        flash_attention=flash,
        eager_attention=eager,
        kv_dtype=kv_dtype,
        mode=mode,
        dropout=dropout,
        margin=margin,
        src_len=src,
    )
    plan = Plan(layout=[(k, 0) for k in KEYS])
    for k in KEYS + ("activations_bytes_per_layer", "margin_bytes"):
        plan.exprs[k] = terms[k]
    for k in KEYS:
        plan.texts[k] = sp.sstr(terms[k])
    if quant is not None:
        for k, e in weight_terms(spec, WeightFormat(dtype, quant)).items():
            plan.layout.append((k, 1))
            plan.exprs[f"weights.{k}"] = e
    if mode == "training":
        opt = get_optimizer(optimizer)
        plan.exprs["optimizer_bytes_per_parameter"] = sp.Rational(opt.bytes_per_parameter(dtype))
        plan.texts["optimizer_note"] = opt.description
    return plan


if __name__ == "__main__":  # the cache filler moved to ``cli.warm`` (issue 20, Build 7: no import cycle)
    import sys

    print("nothing to regenerate here: python -m symtrans.cli.warm fills the plan cache ahead of time", file=sys.stderr)
