"""The published estimates of training memory, beside ``parallel.memory`` (``train --compare``).

Each reference is its formula written out from its source (read, not copied), evaluated
on the model's config values, with the difference from symtrans's figure and the terms
that make it:

* DeepSpeed 0.19.8, deepspeed/runtime/zero/stage3.py, ``estimate_zero3_model_states_mem_needs``
  (no offload): 4 x largest_layer_params + int(18 x params / gpus); and
  deepspeed/runtime/zero/stage_1_and_2.py, ``estimate_zero2_model_states_mem_needs``:
  2 x params + int(18 x params / gpus), its 18 bytes being 16-bit and 32-bit gradients, the
  32-bit master weights and Adam's two states.  DeepSpeed's largest layer is the module
  with the most parameters of its own (its ``model_to_params`` helpers); here the largest
  step of the Cost tree (an nn.Linear or nn.Embedding's weight).
* Megatron-LM, megatron/training/theoretical_memory_usage.py:
  ``compute_weight_and_optimizer_memory``: the most loaded shard, (block / pp + V·h) / tp
  (+ V·h / tp for an untied head when pp = 1), block = the layers' attention (2h²(1 +
  groups/heads)·(d_k·heads/h)) and MLP (2h·ffn·(3/2 if gated)) and norm weights plus the
  final norm, x 18 bytes (6 + 12/dp with the distributed optimizer); linear biases and a
  learned position table are not in it, and every weight is divided by tp;
  ``compute_activation_memory`` (SP and selective recomputation): sbh(18 + 4 ffn/h) per
  layer x L, + 8sbp + sbhp for the embedding, x the interleaving penalty 1 + (p - 1)/(pv)
  (or min(1, m/p) without interleaving), + 4sbh(1 + V/h) when pp = 1, all / tp; otherwise
  ``compute_activation_memory_without_sp``: sbh(10 + 24/t) per layer and the same
  embedding and pipeline factors, + 2(sbV/t + sbh) when pp = 1, x 1.05.

Units: bytes (parameters where named).
"""

from __future__ import annotations

import math
from fractions import Fraction

import sympy as sp

from symtrans.accounting import parallel as P
from symtrans.engine.architectures import build
from symtrans.engine.roles import Role


def _v(values: dict, name: str, default=None):
    v = values.get(name, default)
    return int(v) if v is not None else None


def deepspeed(spec, values: dict, lay: P.Layout, ours_model_states: sp.Rational) -> dict | None:
    """DeepSpeed's estimate for ZeRO-2 or ZeRO-3 (tp = pp = 1), or None when it does not apply."""
    if lay.zero not in (2, 3) or lay.tp > 1 or lay.pp > 1:
        return None
    params = int(P.evaluate(build(spec).params, values))
    gpus = lay.dp * lay.cp
    if lay.zero == 3:
        largest = max(int(P.evaluate(n.step.params, values)) for n in build(spec).nodes())
        value = 4 * largest + int(18 * params / gpus)
        formula = f"4 x {largest:,} (largest layer) + int(18 x {params:,} / {gpus})"
        fn = "deepspeed/runtime/zero/stage3.py, estimate_zero3_model_states_mem_needs (cpu_offload=False)"
    else:
        value = 2 * params + int(18 * params / gpus)
        formula = f"2 x {params:,} + int(18 x {params:,} / {gpus})"
        fn = "deepspeed/runtime/zero/stage_1_and_2.py, estimate_zero2_model_states_mem_needs (cpu_offload=False)"
    g = P.GRAD_DTYPES[lay.grad_dtype]
    if lay.zero == 3:  # per sharded parameter: DeepSpeed 18, symtrans 2 (weights) + g + 12
        extra = 4 - g
        why = f"DeepSpeed counts 18 bytes per sharded parameter, symtrans 2 + {g} ({lay.grad_dtype} gradients) + 12"
    else:  # beside the whole 16-bit weights (2 x params, equal): DeepSpeed 18, symtrans g + 12
        extra = 6 - g
        why = (
            f"DeepSpeed counts 18 bytes per sharded parameter (16-bit and 32-bit gradients, fp32 master, Adam m and v), "
            f"symtrans {g} ({lay.grad_dtype} gradients) + 12"
        )
    why += (
        f": {extra} x {params:,} / {gpus} bytes; the gathered largest layer (4 bytes each) is in both"
        if lay.zero == 3
        else f": {extra} x {params:,} / {gpus} bytes"
    )
    return {
        "reference": "DeepSpeed 0.19.8",
        "source": fn,
        "formula": formula,
        "value": value,
        "symtrans": int(sp.ceiling(ours_model_states)),
        "difference": value - int(sp.ceiling(ours_model_states)),
        "named": why,
    }


def megatron(spec, values: dict, lay: P.Layout, ours_states: sp.Rational, ours_acts: sp.Rational) -> dict | None:
    """Megatron-LM's theoretical_memory_usage for the first stage, or None for a model it does not describe."""
    if (
        spec.mla or spec.family != "decoder-only" or lay.zero
    ):  # Megatron shards with its distributed optimizer, not ZeRO
        return None
    h, heads, n, vocab = _v(values, "d_model"), _v(values, "h"), _v(values, "N"), _v(values, "V")
    groups = _v(values, "h_kv", heads)
    ffn = _v(values, "d_ff")
    kv_channels = _v(values, "d_k", h // heads)
    gated = Fraction(3, 2) if spec.ffn not in ("mlp",) else Fraction(1)
    norm_size = 1 if spec.norm == "rmsnorm" else 2
    attn = 2 * h * h * ((1 + Fraction(groups, heads)) * Fraction(kv_channels * heads, h))
    if spec.is_moe:
        e = _v(values, "E")
        moe_ffn = _v(values, "d_ff_e", ffn)
        moe_layers = sum(
            int(P.evaluate(nd.multiplicity, values)) for nd in build(spec).nodes() if nd.step.role == Role.EXPERTS
        )
        layer_moe = 2 * h * (moe_ffn * e * gated + norm_size) + attn
    else:
        moe_layers, layer_moe = 0, 0
    layer_dense = 2 * h * (ffn * gated + norm_size) + attn
    block = layer_dense * (n - moe_layers) + layer_moe * moe_layers + norm_size * h
    emb = h * vocab
    untied = not any(nd.step.tied_to is not None for nd in build(spec).nodes())
    shard = (Fraction(block, lay.pp) + emb) / lay.tp
    if untied and lay.pp == 1:
        shard += Fraction(emb, lay.tp)
    per_param = 18 if not lay.distributed_optimizer else 6 + Fraction(12, lay.dp)
    weights = shard * per_param
    s, b, p, v, t = lay.seq_len, lay.micro_batch, lay.pp, lay.vpp, lay.tp
    sbh = s * b * h
    m = lay.micro_batches
    if lay.sequence_parallel and lay.recompute == "selective":
        act = Fraction(sbh) * (18 + Fraction(4 * ffn, h)) * n
        fn = "compute_activation_memory"
    else:
        act = Fraction(sbh) * (10 + Fraction(24, t)) * n
        fn = "compute_activation_memory_without_sp"
    act += 8 * s * b * p + sbh * p
    if v > 1:
        act *= 1 + Fraction(p - 1, p * v)
    elif p > 1:
        act *= min(Fraction(1), Fraction(m, p))
    if fn == "compute_activation_memory":
        if p == 1:
            act += sbh * 4 * (1 + Fraction(vocab, h))
        act /= t
    else:
        if p == 1:
            act += (Fraction(s * b * vocab, t) + s * b * h) * 2
        act *= Fraction(105, 100)
    ws = sp.Rational(weights.numerator, weights.denominator)
    ac = sp.Rational(act.numerator, act.denominator)
    return {
        "reference": "Megatron-LM",
        "source": f"megatron/training/theoretical_memory_usage.py, compute_weight_and_optimizer_memory and {fn}",
        "weights_and_optimizer": float(ws),
        "activations": float(ac),
        "symtrans_weights_and_optimizer": float(ours_states),
        "symtrans_activations": float(ours_acts),
        "difference_weights_and_optimizer": float(ws - ours_states),
        "difference_activations": float(ac - ours_acts),
        "named": (
            "weights: Megatron assumes 2 + 4 (fp32 gradients) + 12 bytes per parameter, divides every weight "
            "(norms too) by tp, puts the final norm on every stage's share and leaves out linear biases and a "
            "learned position table; activations: Megatron's per-layer constant assumes GPT's shapes "
            f"(q width = h, no GQA, {'a gated MLP' if gated != 1 else 'an MLP'} counted as 4·ffn/h, dropout masks), "
            "symtrans lists each tensor of this model"
            + ("; Megatron's formula without SP adds 5% for temporaries" if fn.endswith("without_sp") else "")
        ),
        "interleaved_in_flight_micro_batches": math.ceil((1 + Fraction(p - 1, p * v)) * p) if v > 1 else min(m, p),
    }
