"""The report context: a ``Resolved`` model turned into plain data for the templates.

``build_context`` returns a dict of lists, dicts, strings, ints and ``Math`` (trusted,
SymPy-printed LaTeX).  The report is a list of *sections*, each
``{"id", "title", "template", "data"}``; the page template renders them in order by
including ``<template>.<md|tex>.j2`` with ``data`` in scope.  A later feature adds a
section by appending to ``context["sections"]`` (see ``add_section``); nothing else
in the page template changes.

All prose of a derivation comes from the components (``Step.note``/``Step.source``);
all formulas from SymPy.  Counts are exact integers; shares are exact fractions rounded
for display only.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator

import sympy as sp

from symtrans.base.escape import Math
from symtrans.engine import evaluate
from symtrans.engine.architectures import Workload, build
from symtrans.engine.cost import Cost, Step
from symtrans.engine.roles import Block
from symtrans.engine.simplify import closed_form
from symtrans.engine.spec import Spec
from symtrans.engine.symbols import LATEX_NAMES, L, L_src, L_tgt, legend_for

from .mathfmt import equation, latex, percent_shares, ratio_percent

FLOP_CONVENTION = "2 FLOPs per multiply-accumulate, matrix products only; bias adds, softmax and norms not counted"
# The layer Costs of architectures.build: their closed forms are shown per layer.


def add_section(context: dict, id: str, title: str, template: str, data: Any, after: str | None = None) -> None:
    """Append a section (or insert it after the section ``after``).

    ``template`` names ``templates/<template>.md.j2`` and ``<template>.tex.j2``; the
    template sees ``data`` and ``section``.
    """
    section = {"id": id, "title": title, "template": template, "data": data}
    ids = [s["id"] for s in context["sections"]]
    if after is not None and after in ids:
        context["sections"].insert(ids.index(after) + 1, section)
    else:
        context["sections"].append(section)


def _costs(
    cost: Cost, outer: sp.Expr = sp.Integer(1), path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], sp.Expr, Cost]]:
    """(path below the root, total multiplicity, cost) for every cost, depth first."""
    mult = outer * cost.multiplicity
    here = path + (cost.name,)
    yield here, mult, cost
    for c in cost.children:
        yield from _costs(c, mult, here)


def _shows_params(step: Step) -> bool:
    """Steps of the parameter derivation: those with parameters, tied matrices, and
    parameter-free components such as positions (FLOP-only steps are left out)."""
    return step.params != 0 or step.weights != 0 or (step.flops == 0 and step.elementwise == 0)


def _flop_values(
    spec: Spec, batch: int, seq_len: int | None
) -> tuple[dict[str, int] | None, list[tuple[sp.Symbol, int]], str]:
    """Sizes for the FLOPs section, the sequence lengths used, and why none (if so)."""
    v = dict(spec.values)
    v["B"] = batch
    if spec.family == "encoder-decoder":
        if seq_len is not None:
            src = tgt = seq_len
        else:
            src, tgt = v.get("L_src", v.get("L")), v.get("L_tgt", v.get("L"))
        if src is None or tgt is None:
            return None, [], "the model sets no sequence length L; give seq_len (--seq-len) for values"
        v["L_src"], v["L_tgt"] = src, tgt
        spec.check_sizes(v, workload=True)  # the option ranges at this workload (global_tokens)
        return v, [(L_src, src), (L_tgt, tgt)], ""
    seq = seq_len if seq_len is not None else v.get("L")
    if seq is None:
        return None, [], "the model sets no sequence length L; give seq_len (--seq-len) for values"
    v["L"] = seq
    spec.check_sizes(v, workload=True)
    return v, [(L, seq)], ""


def _option_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _architecture(spec: Spec) -> list[dict[str, str]]:
    """Every option (but ``family``) that differs from the Spec default, as text."""
    out = []
    for f in dataclasses.fields(Spec):
        if f.name in ("family", "sizes"):
            continue
        value = getattr(spec, f.name)
        default = f.default if f.default is not dataclasses.MISSING else None
        if value != default:
            out.append({"option": f.name, "value": _option_text(value)})
    return out


def _checked(n: int | None, what: str) -> int | None:
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise ValueError(f"{what} must be a positive integer, not {n!r}")
    return n


def build_context(resolved: Any, title: str | None = None, batch: int = 1, seq_len: int | None = None) -> dict:
    """Plain data for the report templates of ``resolved`` (a ``resolve.Resolved``).

    Args:
        title: the report title; default ``"<name>: parameters and forward FLOPs"``.
        batch: sequences per batch ``B`` for the FLOPs section.
        seq_len: tokens per sequence ``L`` for the FLOPs section (``L_src = L_tgt``
            for an encoder-decoder); default the spec's ``L``.

    Raises:
        ValueError: for a non-positive ``batch`` or ``seq_len``, or sizes that give a
            non-integer count.
    """
    batch = _checked(batch, "batch")
    seq_len = _checked(seq_len, "seq_len")
    spec: Spec = resolved.spec
    preset = resolved.preset
    model = build(spec, Workload())
    values = dict(spec.values)
    fvalues, lengths, flops_missing = _flop_values(spec, batch, seq_len)

    total = evaluate.exact(model.params, values)
    active = evaluate.exact(model.active_params, values) if spec.is_moe else None
    flops_total = evaluate.exact(model.flops, fvalues) if fvalues else None
    top = list(model.children)
    layers = [(path, mult, c) for path, mult, c in _costs(model) if c.block == Block.LAYER]

    context: dict[str, Any] = {
        "title": title if title is not None else f"{resolved.name}: parameters and forward FLOPs",
        "name": resolved.name,
        "sections": [],
    }

    # -- overview ------------------------------------------------------------
    add_section(
        context,
        "overview",
        "Overview",
        "overview",
        {
            "name": resolved.name,
            "family": spec.family,
            "params": total,
            "active": active,
            "flops": flops_total,
            "batch": batch,
            "lengths": [{"symbol": latex(s), "value": n} for s, n in lengths],
            "source": preset.source if preset else None,
            "reference": preset.reference if preset else None,
            "architecture": _architecture(spec),
        },
    )

    # -- legend ----------------------------------------------------------------
    flop_exprs = [model.flops]
    legend = []
    for info in legend_for(model.params, model.active_params, *flop_exprs):
        value = values.get(info.name)
        flop_value = fvalues.get(info.name) if fvalues else None
        legend.append(
            {
                "symbol": Math(info.latex),
                "name": info.name,
                "meaning": info.meaning,
                "unit": info.unit,
                "value": value if value is not None else flop_value,
                "flops_value": flop_value
                if (value is not None and flop_value is not None and flop_value != value)
                else None,
            }
        )
    add_section(context, "legend", "Symbols", "legend", {"symbols": legend})

    # -- published figure vs exact count -------------------------------------------
    if preset is not None and preset.published:
        pv = int(round(preset.published_value)) if preset.published_value is not None else None
        add_section(
            context,
            "published",
            "Published figure and exact count",
            "published",
            {
                "published": preset.published,
                "published_value": pv,
                "exact": total,
                "active": active,
                "difference": total - pv if pv is not None else None,
                "relative": ratio_percent(total - pv, pv) if pv else None,
                "source": preset.source,
                "reference": preset.reference,
                "notes": list(preset.notes),
            },
        )

    # -- breakdown -----------------------------------------------------------------
    counts = [evaluate.exact(c.params, values) for c in top]
    shares = percent_shares(counts)
    rows = []
    for c, n, share in zip(top, counts, shares):
        rows.append(
            {
                "name": c.name,
                "params": n,
                "share": share,
                "active": evaluate.exact(c.active_params, values) if spec.is_moe else None,
            }
        )
    add_section(
        context,
        "breakdown",
        "Parameter breakdown",
        "breakdown",
        {"rows": rows, "total": total, "active": active, "moe": spec.is_moe},
    )

    # -- closed forms ---------------------------------------------------------------
    layer_rows = []
    for path, mult, c in layers:
        each = evaluate.exact(c.params_each, values)
        n = evaluate.exact(mult, values)
        layer_rows.append(
            {
                "name": c.name,
                "stack": path[-2] if len(path) >= 2 else "",
                "multiplicity": latex(mult),
                "count": n,
                "params": equation(closed_form(c.params_each), values),
                "total": each * n,
                "active": equation(closed_form(c.active_each), values)
                if spec.is_moe and c.active_each != c.params_each
                else None,
            }
        )
    add_section(
        context,
        "closed_forms",
        "Closed forms",
        "closed_forms",
        {
            "layers": layer_rows,
            "model": equation(closed_form(model.params), values),
            "active": equation(closed_form(model.active_params), values) if spec.is_moe else None,
        },
    )

    # -- derivation -------------------------------------------------------------------
    components = []
    for comp in top:
        blocks = []
        for path, mult, c in _costs(comp):
            steps = [s for s in c.steps if _shows_params(s)]
            if not steps:
                continue
            each = evaluate.exact(sp.Add(*[s.params for s in c.steps]), values)
            n = evaluate.exact(mult, values)
            blocks.append(
                {
                    "path": list(path),
                    "multiplicity": latex(mult) if mult != 1 else None,
                    "count": n,
                    "steps": [
                        {
                            "label": s.label,
                            "note": s.note,
                            "source": s.source,
                            "params": equation(s.params, values),
                            "active": equation(s.active, values) if s.active is not None else None,
                        }
                        for s in steps
                    ],
                    "each": each,
                    "total": each * n,
                }
            )
        components.append(
            {
                "name": comp.name,
                "blocks": blocks,
                "params": evaluate.exact(comp.params, values),
                "equation": equation(closed_form(comp.params), values),
            }
        )
    add_section(context, "derivation", "Derivation", "derivation", {"components": components})

    # -- sinusoidal positions ------------------------------------------------------
    if spec.positional == "sinusoidal":
        add_section(context, "positions", "Sinusoidal positions", "positions", _sinusoids())

    # -- FLOPs -------------------------------------------------------------------------
    flop_counts = [evaluate.exact(c.flops, fvalues) for c in top] if fvalues else None
    flop_shares = percent_shares(flop_counts) if flop_counts else None
    add_section(
        context,
        "flops",
        "Forward FLOPs",
        "flops",
        {
            "convention": FLOP_CONVENTION,
            "available": fvalues is not None,
            "missing": flops_missing,
            "batch": batch,
            "lengths": [{"symbol": latex(s), "value": n} for s, n in lengths],
            "components": [
                {
                    "name": c.name,
                    "equation": equation(closed_form(c.flops), fvalues),
                    "flops": flop_counts[i] if flop_counts else None,
                    "share": flop_shares[i] if flop_shares else None,
                }
                for i, c in enumerate(top)
            ],
            "layers": [
                {
                    "name": c.name,
                    "multiplicity": latex(mult),
                    "count": evaluate.exact(mult, values),
                    "flops": equation(closed_form(c.flops_each), fvalues),
                }
                for path, mult, c in layers
            ],
            "model": equation(closed_form(model.flops), fvalues),
            "total": flops_total,
        },
    )

    # -- shape walk (walk.py: shapes of every step; their FLOPs sum to the total above) ------
    from symtrans.render.report.walk_section import report_section

    add_section(context, "walk", "Shape walk", "walk", report_section(spec, fvalues), after="flops")

    # -- training/inference FLOPs, memory and time (usage_report.py) ----------------------
    from symtrans.render.usage_report import add_sections as add_usage_sections

    add_usage_sections(context, spec, fvalues, after="walk")

    # -- sections the caller brings (Resolved.sections: e.g. cli/inspect.py's checkpoint vs formula)
    for extra in getattr(resolved, "sections", ()):
        add_section(context, **extra)

    # -- assumptions ---------------------------------------------------------------------
    add_section(context, "assumptions", "Assumptions", "assumptions", {"notes": list(resolved.notes)})
    return context


def _sinusoids() -> dict:
    """PE(pos, 2i) and PE(pos, 2i+1) of Vaswani et al. 2017 §3.5, printed by SymPy.

    Built unevaluated, so the angle prints as the paper writes it, pos / 10000^(2i/d_model).
    """
    from symtrans.engine.symbols import d_model

    pos, i = sp.Symbol("pos", integer=True, nonnegative=True), sp.Symbol("i", integer=True, nonnegative=True)
    pe = sp.Function("PE")
    with sp.evaluate(False):
        angle = pos / sp.Integer(10000) ** (2 * i / d_model)
        eqs = [sp.Eq(pe(pos, 2 * i), sp.sin(angle)), sp.Eq(pe(pos, 2 * i + 1), sp.cos(angle))]
    names = dict(LATEX_NAMES)
    names[pos] = r"\mathit{pos}"
    return {
        "formulas": [Math(sp.latex(e, symbol_names=names)) for e in eqs],
        "pos": Math(names[pos]),
        "i": Math("i"),
        "source": "Vaswani et al. 2017 §3.5",
    }
