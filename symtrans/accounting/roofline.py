"""The prefill/decode roofline of one request, and the workload defaults it uses.

Used by ``symtrans time``, ``symtrans flops --mode prefill|decode`` and the report's
time section, so that all three use the same lengths and the same bytes moved.
Units: FLOPs, bytes, seconds.
"""

from __future__ import annotations


def inference_lengths(spec, v: dict, prefill: int | None = None, generate: int | None = None) -> tuple[int, int]:
    """(L_pre, T_gen) of the prefill/decode workload: the prompt defaults to the sequence
    length (L; L_src, the source, for an encoder-decoder) and the answer to one token.
    ``symtrans flops``, ``symtrans time`` and the reports all use these defaults."""
    l_pre = prefill if prefill is not None else (v["L_src"] if spec.family == "encoder-decoder" else v["L"])
    return l_pre, (generate if generate is not None else 1)


def default_kv_dtype(dtype: str) -> str:
    """The KV cache dtype when none is given: the weight dtype, bf16 for int8/int4 weights."""
    return dtype if dtype in ("fp32", "bf16", "fp16", "fp8") else "bf16"


def inference_phases(spec, v: dict, dtype: str = "bf16", kv_dtype: str | None = None, quantization=None) -> dict:
    """What prefill and decode of one request cost, whatever the device: FLOPs and bytes
    moved per phase (B sequences, ``v["L_pre"]`` prompt tokens, ``v["T_gen"]`` generated
    ones), as ``inference_roofline`` explains.  Computed once per model, workload and
    weight format, and set against every accelerator by ``inference_roofline(...,
    phases=...)``.  ``quantization`` (``quantization.Quantization``): the weights are read
    in their quantized layout (``quantization.WeightFormat.step_bytes``) instead of
    ``dtype`` bytes per parameter.

    Returns {"prefill_flops", "prefill_bytes", "decode_flops", "decode_bytes",
    "weights_prefill", "weights_decode" (parameters per step), "kv_bytes_per_token",
    "resident_bytes"}; exact numbers (FLOPs, bytes, parameters).

    Raises:
        ValueError: unknown dtype; a model that does not generate.
    """
    from symtrans.accounting import flops as F
    from symtrans.accounting.flops import evaluate
    from symtrans.accounting.memory import get_dtype, kv_bytes_moved, kv_cache_per_token, weights_read
    from symtrans.engine.architectures import build

    kv_dt = kv_dtype or default_kv_dtype(dtype)
    kv_tok = evaluate(kv_cache_per_token(spec, kv_dt), spec.values)
    B, Lp, Tg = v["B"], v["L_pre"], v["T_gen"]
    w_pre = evaluate(weights_read(spec, B * Lp, "prefill"), v)
    w_dec = evaluate(weights_read(spec, B, "decode"), v)
    if quantization is None:
        w_bytes = get_dtype(dtype).bytes
        wb_pre, wb_dec = w_pre * w_bytes, w_dec * w_bytes
        weights_total = evaluate(build(spec).params, v) * w_bytes
    else:
        import sympy as sp

        from symtrans.accounting.quantization import WeightFormat, weight_terms

        fmt = WeightFormat(dtype, quantization)
        wb_pre = evaluate(weights_read(spec, B * Lp, "prefill", fmt.step_bytes), v)
        wb_dec = evaluate(weights_read(spec, B, "decode", fmt.step_bytes), v)
        weights_total = evaluate(sp.Add(*weight_terms(spec, fmt).values()), v)
    kv_moved = B * kv_bytes_moved(spec, v, Lp, Tg, kv_dt)
    # the cache at the end, summed over the Cost tree's caching steps (a sliding-window layer keeps
    # w; an encoder-decoder's cross-attention the L_pre source positions, its self-attention the
    # T_gen generated ones); the constant state of state-space layers is not counted here
    tree = build(spec)
    at_end = tree.cache_at(Tg, Lp) if spec.family == "encoder-decoder" else tree.cache_at(Lp + Tg)
    cached_bytes = evaluate(at_end * get_dtype(kv_dt).bytes, v)
    written = tree.source_cache if spec.family == "encoder-decoder" else tree.cache
    return {
        "prefill_flops": evaluate(F.prefill_expr(spec), v),
        # prefill writes every prompt position's K/V (an encoder-decoder's: the cross-attention's)
        "prefill_bytes": wb_pre + B * Lp * evaluate(written * get_dtype(kv_dt).bytes, v),
        "decode_flops": evaluate(F.decode_expr(spec), v),
        "decode_bytes": Tg * wb_dec + kv_moved,
        "weights_prefill": w_pre,
        "weights_decode": w_dec,
        "kv_bytes_per_token": kv_tok,
        "resident_bytes": weights_total + B * cached_bytes,
    }


def inference_roofline(
    spec,
    v: dict,
    acc,
    precision: str | None = None,
    dtype: str = "bf16",
    kv_dtype: str | None = None,
    quantization=None,
    devices: int = 1,
    compute_efficiency=1,
    bandwidth_efficiency=1,
    phases: dict | None = None,
) -> dict:
    """Prefill and decode of one request (B sequences, ``v["L_pre"]`` prompt tokens,
    ``v["T_gen"]`` generated ones) on ONE device, on the roofline (``hardware.roofline``).

    ``quantization`` (``quantization.Quantization``) reads the weights in their quantized
    layout (``quantization.WeightFormat.step_bytes``) instead of ``dtype`` bytes per
    parameter; ``devices`` > 1 splits each step ideally over that many devices (tensor
    parallelism without communication); the efficiencies scale peak and bandwidth.

    Bytes moved: prefill reads the weights it runs once and writes B x L_pre cached
    positions; decode step t reads the weights it runs (routed experts: only those its
    B tokens pick, ``memory.weights_read``) and the cached positions (``memory.kv_bytes_moved``,
    summed over the Cost tree's caching steps).  One device is a data-parallel replica: more
    replicas raise the throughput, not a request's speed.  Units: FLOPs, bytes, seconds.
    ``phases``: ``inference_phases(spec, v, dtype, kv_dtype, quantization)`` when already
    computed with the same arguments (a report sets one model against every accelerator).

    Returns {"prefill": Roofline, "decode": Roofline, "weights_prefill", "weights_decode"
    (parameters per step), "kv_bytes_per_token", "resident_bytes" (weights + cache at the
    end, for the fit check)}.

    Raises:
        ValueError: unknown dtype or precision; a model that does not generate.
    """
    from symtrans.accounting.hardware import roofline

    ph = phases if phases is not None else inference_phases(spec, v, dtype, kv_dtype, quantization)
    eff = (compute_efficiency, bandwidth_efficiency)
    return {
        "prefill": roofline("prefill", ph["prefill_flops"], ph["prefill_bytes"], acc, devices, precision, *eff),
        "decode": roofline("decode", ph["decode_flops"], ph["decode_bytes"], acc, devices, precision, *eff),
        "weights_prefill": ph["weights_prefill"],
        "weights_decode": ph["weights_decode"],
        "kv_bytes_per_token": ph["kv_bytes_per_token"],
        "resident_bytes": ph["resident_bytes"],
    }


def roofline_assumptions(spec, devices: int) -> list[str]:
    """The assumptions of the prefill/decode roofline, one sentence each (text and JSON); which
    layers route experts or keep a window, the Cost tree says (``Step.active``, ``Step.cache_window``)."""
    from symtrans.engine.architectures import build

    tree = build(spec)
    out = [
        "one request on one device (a data-parallel replica holding the whole model)"
        + (
            f"; the {devices} devices divide the training step and run time and multiply the inference "
            "throughput, not a request's latency"
            if devices != 1
            else ""
        )
    ]
    if any(n.step.active is not None for n in tree.nodes()):  # routed experts (Step.active)
        out.append(
            "each decode step reads only the routed experts its B tokens pick, "
            "at most min(E, B*k) of the E experts of each MoE layer (k of E at B = 1)"
        )
    if spec.family == "encoder-decoder":
        out.append("prefill reads the encoder and the cross-attention K/V weights; decode reads the rest")
    # which layers keep a window: the Cost tree's caching steps say (Step.cache_window)
    caching = [n.step for n in tree.nodes() if n.step.cache != 0]
    windowed = sum(st.cache_window is not None for st in caching)
    if windowed:
        out.append(
            "decode reads at most w cached positions per layer (sliding window)"
            if windowed == len(caching)
            else "decode reads at most w cached positions in each of the N_w sliding-window layers, "
            "and every cached position in the others"
        )
    return out
