"""Report sections for training/inference FLOPs, memory and time.

``add_sections(context, spec, values)`` appends three sections to a report context
(``report.context.add_section``, after the shape walk): ``usage_flops`` (modes,
conventions, recomputation, prefill/decode closed forms and the published formulas),
``usage_memory`` (training and inference bytes) and ``usage_time`` (ideal step time and
roofline verdicts on every accelerator of ``hardware.ACCELERATORS``).  The data are plain
lists, dicts, strings, exact ints and ``Math``; the templates are
``templates/usage_*.{md,tex}.j2``.
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from symtrans.engine.simplify import closed_form
from symtrans.engine.spec import Spec


def _fmt_bytes(n) -> str:
    from symtrans.base.numbers import binary_bytes, si

    r = sp.Rational(n)
    if r < 1024:
        return f"{r} bytes"
    return f"{binary_bytes(r)} = {si(r, 'B', 2)}"


def _fmt_seconds(x) -> str:
    """Seconds as 's', 'ms' or 'µs' (the units ``symtrans time`` prints)."""
    f = float(x)
    if f >= 1:
        return f"{f:.4g} s"
    if f >= 1e-3:
        return f"{f * 1e3:.4g} ms"
    return f"{f * 1e6:.4g} µs"


def _exact(x) -> str:
    """An exact number as text: '124,439,808', or 'p/q' for a fraction (never a float)."""
    r = sp.Rational(x)
    return f"{int(r):,}" if r.q == 1 else f"{r.p}/{r.q}"


def _flops_section(spec: Spec, values: dict[str, int] | None) -> dict[str, Any]:
    from symtrans.accounting import flops as F

    from .report.mathfmt import equation, latex

    out: dict[str, Any] = {
        "available": values is not None,
        "rows": [],
        "inference": [],
        "published": [],
        "convention": None,
        "training": None,
    }
    from symtrans.engine.conventions import CONVENTIONS

    out["convention"] = CONVENTIONS["flops"].description
    rows = [
        ("forward", "forward", "flops", "full", "none"),
        ("backward (2 x forward)", "backward", "flops", "full", "none"),
        ("training (forward + backward)", "training", "flops", "full", "none"),
        ("training, selective recomputation", "training", "flops", "full", "selective"),
        ("training, full recomputation", "training", "flops", "full", "full"),
        ("forward, exact causal triangle", "forward", "flops", "causal", "none"),
        ("forward, in MACs (fvcore, ptflops)", "forward", "macs", "full", "none"),
        ("forward, all-ops", "forward", "all-ops", "full", "none"),
    ]
    training = F.flops_expr(spec, "training")
    out["training"] = equation(training, values)
    if values is not None:
        tokens = values["B"] * (values["L_tgt"] if spec.family == "encoder-decoder" else values["L"])
        for label, mode, conv, mask, rc in rows:
            total = F.evaluate(F.flops_expr(spec, mode, conv, mask, rc), values)
            out["rows"].append(
                {
                    "label": label,
                    "total": _exact(total),
                    "per_token": _exact(total / tokens),
                    "unit": CONVENTIONS[conv].unit,
                }
            )
    generative = spec.family == "encoder-decoder" or (spec.family == "decoder-only" and spec.lm_head)
    if generative:
        inf_values = None
        if values is not None:  # the defaults of 'symtrans flops --mode prefill/decode' and 'symtrans time'
            from symtrans.accounting.roofline import inference_lengths

            pre, gen = inference_lengths(spec, values)
            inf_values = {**values, "L_pre": pre, "T_gen": gen}
        out["inference"] = [
            {
                "label": "prefill of L_pre prompt tokens (logits for the last one)",
                "equation": equation(F.prefill_expr(spec), inf_values),
            },
            {
                "label": "decode of T_gen tokens with a KV cache (summed over positions)",
                "equation": equation(F.decode_expr(spec), inf_values),
            },
        ]
        out["inference_values"] = {"L_pre": inf_values["L_pre"], "T_gen": inf_values["T_gen"]} if inf_values else None
    else:
        out["inference_values"] = None
    if spec.family != "encoder-decoder" and spec.has("V") and values is not None:  # no vocabulary: no formulas
        from symtrans.accounting.published import compare

        for r in compare(spec, {"B": values["B"], "L": values["L"]}):
            out["published"].append(
                {
                    "name": r.name,
                    "quantity": r.quantity,
                    "source": r.source,
                    "value": _exact(r.value),
                    "exact": _exact(r.exact),
                    "ratio": f"{float(r.ratio):.4f}",
                    "residual": equation(r.residual, None),
                    "reproduced": r.assumed_residual == 0,
                    "assumptions": "; ".join(r.assumptions),
                    "assumed_residual": latex(r.assumed_residual),
                }
            )
    return out


def _memory_section(spec: Spec, values: dict[str, int] | None) -> dict[str, Any]:
    from symtrans.accounting.flops import evaluate
    from symtrans.accounting.memory import OPTIMIZERS, memory_terms

    from .report.mathfmt import equation

    out: dict[str, Any] = {
        "available": values is not None,
        "training": [],
        "inference": [],
        "optimizer": OPTIMIZERS["adam-mixed"].description,
    }
    if values is None:
        out["kv_per_token"] = equation(sp.Integer(0), None)
        out["activations_per_layer"] = equation(sp.Integer(0), None)
        return out
    seq = values["L_tgt"] if spec.family == "encoder-decoder" else values["L"]
    src = values.get("L_src") if spec.family == "encoder-decoder" else None
    train = memory_terms(spec, batch=values["B"], seq_len=seq, src_len=src)
    infer = memory_terms(spec, mode="inference", batch=values["B"], seq_len=seq, src_len=src)
    labels = [
        ("weights (bf16)", "weights_bytes"),
        ("gradients (bf16)", "gradients_bytes"),
        ("optimizer states (Adam, mixed precision)", "optimizer_bytes"),
        ("activations (Korthikanti et al. 2022, no recomputation)", "activations_bytes"),
        ("total", "total_bytes"),
    ]
    for label, key in labels:
        n = evaluate(train[key], values)
        out["training"].append({"label": label, "bytes": _exact(n), "human": _fmt_bytes(n)})
    for label, key in [
        ("weights (bf16)", "weights_bytes"),
        ("KV cache (bf16)", "kv_cache_bytes"),
        ("activations (one layer, the last logits)", "activations_bytes"),
        ("margin (10%)", "margin_bytes"),
        ("total", "total_bytes"),
    ]:
        n = evaluate(infer[key], values)
        out["inference"].append({"label": label, "bytes": _exact(n), "human": _fmt_bytes(n)})
    out["kv_per_token"] = equation(closed_form(train["kv_cache_bytes_per_token"]), values)
    out["activations_per_layer"] = equation(closed_form(train["activations_bytes_per_layer"]), values)
    return out


def _time_section(spec: Spec, values: dict[str, int] | None) -> dict[str, Any]:
    """Ideal training step on one device, and prefill/decode of one request on the roofline
    with the CLI's workload (``roofline.inference_lengths``, ``roofline.inference_roofline``):
    the same figures as ``symtrans time MODEL --accelerator NAME``."""
    from symtrans.accounting import flops as F
    from symtrans.accounting.flops import evaluate
    from symtrans.accounting.hardware import ACCELERATORS, step_time
    from symtrans.accounting.roofline import inference_lengths, inference_roofline, roofline_assumptions
    from symtrans.base.numbers import si

    out: dict[str, Any] = {"available": values is not None, "rows": [], "generative": False}
    if values is None:
        return out
    train = evaluate(F.flops_expr(spec, "training"), values)
    generative = spec.family == "encoder-decoder" or (spec.family == "decoder-only" and spec.lm_head)
    out["generative"] = generative
    if generative:
        pre, gen = inference_lengths(spec, values)
        v = {**values, "L_pre": pre, "T_gen": gen}
        out["L_pre"], out["T_gen"] = pre, gen
        out["assumptions"] = roofline_assumptions(spec, 1)
    for acc in ACCELERATORS.values():
        row = {
            "name": acc.name,
            "peak": f"{si(acc.peak(), 'FLOP/s')} {acc.default_precision}",
            "bandwidth": si(acc.bandwidth, "B/s", 2),
            "step": _fmt_seconds(step_time(train, acc)),
            "prefill": "",
            "decode": "",
        }
        if generative:
            ph = inference_roofline(spec, v, acc)
            row["prefill"] = f"{ph['prefill'].bound.split('-')[0]}, {_fmt_seconds(ph['prefill'].time)}"
            row["decode"] = f"{ph['decode'].bound.split('-')[0]}, {_fmt_seconds(ph['decode'].time)}/token"
        out["rows"].append(row)
    out["sources"] = [f"{a.name}: {a.source}" for a in ACCELERATORS.values()]
    return out


def add_sections(context: dict, spec: Spec, values: dict[str, int] | None, after: str = "walk") -> None:
    """Append the FLOPs (training/inference), memory and time sections to ``context``.

    ``values`` are the sizes with the report's workload (B, L or L_src/L_tgt), or None
    when the model has no sequence length (then only closed forms are shown).

    Raises:
        ValueError: sizes that give a non-integer count.
    """
    from symtrans.render.report import add_section

    add_section(
        context, "usage_flops", "Training and inference FLOPs", "usage_flops", _flops_section(spec, values), after=after
    )
    add_section(context, "usage_memory", "Memory", "usage_memory", _memory_section(spec, values), after="usage_flops")
    add_section(
        context, "usage_time", "Time on accelerators", "usage_time", _time_section(spec, values), after="usage_memory"
    )
