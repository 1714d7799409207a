"""Plans of the ``params``, ``flops`` and ``memory`` commands, built with SymPy, and the
generator of the data that answers them without SymPy (``numbers``).

A plan holds what a command prints from the closed forms: ``layout`` (the components
it lists: name, depth), ``texts`` (closed forms as ``sympy.sstr`` prints them) and
``exprs`` (the quantities it evaluates at the sizes).  ``Plan.numbers(values)``
evaluates them with SymPy; ``Plan.data()`` turns them into evaluation trees
(``kernel``: exact integer Horner forms) for ``numbers.TreeNumbers``.

Regenerate the shipped data after changing a closed form, a preset or a plan::

    python -m symtrans.cli.plans            # writes symtrans/cli/_numbers_data.py
    python -m symtrans.cli.plans --check    # exit 1 naming the presets whose data is stale
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.cli import numbers as NB

DATA_PATH = Path(__file__).resolve().parent / "_numbers_data.py"


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
        return params_plan(spec)
    if kind == "flops":
        return flops_plan(spec, *query[1:])
    if kind == "memory":
        return memory_plan(spec, *query[1:])
    raise InputError(f"unknown plan {kind!r}")


def params_plan(spec) -> Plan:
    """``symtrans params``: the total (and active) parameters with their closed forms, and
    the components down to the layers (``summary.rows``)."""
    from symtrans.engine.architectures import build as build_model
    from symtrans.engine.simplify import closed_form

    model = build_model(spec)
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


# ---------------------------------------------------------------------------------
# the shipped data


def preset_queries(preset) -> list[tuple]:
    """The queries shipped for a preset: ``params``, and ``flops`` and ``memory`` with
    their default options at the preset's own workload (B = 1, L of the preset)."""
    from symtrans.accounting.quantization import weight_format
    from symtrans.catalog.resolve import resolve
    from symtrans.cli.main import build_parser, flops_values

    res = resolve(preset.name)
    out = [NB.params_query()]
    if preset.spec.family == "encoder-decoder" and "L" not in res.spec.values:
        return out  # no default sequence length: flops and memory need --seq-len
    if "L" not in res.spec.values:
        return out
    out.append(NB.flops_query("forward", "flops", "full", "none"))
    args = build_parser().parse_args(["memory", preset.name])
    v = flops_values(res, args.batch, args.seq_len)
    seq = v["L_tgt"] if res.spec.family == "encoder-decoder" else v["L"]
    src = v["L_src"] if res.spec.family == "encoder-decoder" else None
    fmt, _ = weight_format(res.checkpoint, args.dtype, "none")  # memory's default: training, unquantized
    out.append(NB.memory_query(args, fmt, args.batch, seq, src))
    return out


def preset_entries(preset) -> dict[str, dict]:
    """{key id: entry} of one preset's shipped plans."""
    out = {}
    for q in preset_queries(preset):
        key = NB.plan_key(preset.spec, q)
        try:
            data = build(preset.spec, q).data()
        except ValueError:
            continue  # not expressible as trees: answered with SymPy
        out[NB.key_id(key)] = {"key": key, **data}
    return out


def generate() -> tuple[str, dict[str, list[str]]]:
    """The source of ``_numbers_data.py`` for every preset, and {preset: its key ids}."""
    from symtrans.catalog.presets import PRESETS

    plans: dict[str, dict] = {}
    owners: dict[str, list[str]] = {}
    for name, p in PRESETS.items():
        entries = preset_entries(p)
        owners[name] = sorted(entries)
        plans.update(entries)
    lines = [
        '"""Generated by `python -m symtrans.cli.plans` from the closed forms: the plans of',
        "`symtrans params`, `flops` and `memory` for every preset (see symtrans/cli/numbers.py).",
        "Do not edit; regenerate after changing a closed form, a preset or a plan.",
        '"""',
        "",
        "# fmt: off",
        f"FINGERPRINT = {NB.fingerprint()!r}",
        "",
        f"PRESETS = {owners!r}",
        "",
        "PLANS = {",
    ]
    for kid in sorted(plans):  # each plan as JSON text: loading the module unmarshals strings only
        lines.append(f"    {kid!r}: {json.dumps(plans[kid], separators=(',', ':'))!r},")
    lines += ["}", ""]
    return "\n".join(lines), owners


def stale_presets() -> list[str]:
    """The presets whose shipped data differs from the data their closed forms give now."""
    from symtrans.catalog.presets import PRESETS

    try:
        from symtrans.cli import _numbers_data as data

        shipped = data.PLANS
    except ImportError:
        return list(PRESETS)
    out = []
    for name, p in PRESETS.items():
        entries = preset_entries(p)
        if any(shipped.get(k) != json.dumps(v, separators=(",", ":")) for k, v in entries.items()):
            out.append(name)
    return out


def main(argv: list[str] | None = None) -> int:
    """Regenerate (or --check) the shipped data; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m symtrans.cli.plans", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 naming the presets whose data is stale")
    args = parser.parse_args(argv)
    if args.check:
        bad = stale_presets()
        try:
            from symtrans.cli import _numbers_data as data

            current = data.FINGERPRINT == NB.fingerprint()
        except ImportError:
            current = False
        if bad or not current:
            print(
                "stale generated numbers"
                + (f" for {', '.join(bad)}" if bad else " (the closed forms' sources changed)")
                + "; regenerate with 'python -m symtrans.cli.plans'",
                file=sys.stderr,
            )
            return 1
        print("the generated numbers are current")
        return 0
    from symtrans.base.atomic import write_atomic

    text, owners = generate()
    write_atomic(DATA_PATH, text)
    print(f"wrote {DATA_PATH} ({sum(len(v) for v in owners.values())} plans for {len(owners)} presets)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
