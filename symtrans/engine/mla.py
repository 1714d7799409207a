"""Multi-head latent attention (MLA): DeepSeek-V2 §2.1 (DeepSeek-AI 2024), also DeepSeek-V3.

Keys and values are compressed into one latent of width ``r_kv`` per token, which is all a
KV cache needs to keep, together with one rotary key of width ``d_rope`` that every head
shares; queries may be compressed too (rank ``r_q``).  Per layer, as transformers 5.x
builds it (``DeepseekV3Attention``; DeepSeek-V2 is the same):

* queries: ``q_a_proj`` d_model x r_q (+ bias with attention_bias), ``q_a_layernorm``
  RMS(r_q), ``q_b_proj`` r_q x h*(d_nope + d_rope), no bias; without r_q one ``q_proj``
  d_model x h*(d_nope + d_rope), no bias;
* keys and values: ``kv_a_proj_with_mqa`` d_model x (r_kv + d_rope) (+ bias), giving the
  latent and the shared rotary key; ``kv_a_layernorm`` RMS(r_kv); ``kv_b_proj``
  r_kv x h*(d_nope + d_v), no bias, expanding the latent into every head's key part and value;
* ``o_proj`` h*d_v x d_model (+ bias).

FLOPs: 2 per multiply-accumulate of each map; scores 2*B*h*pairs*(d_nope + d_rope) and the
weighted sum 2*B*h*pairs*d_v.  transformers caches the *compressed* latent and rotary key
(cache layer keys (B, 1, T, r_kv), values (B, 1, T, d_rope)) and expands them with
``kv_b_proj`` over every cached position at each step: ``kv_b_proj`` runs on the kv
positions, not only the new ones (2*B*kv*r_kv*h*(d_nope + d_v)).  The paper's absorbed form
(folding kv_b_proj into the query and output maps, DeepSeek-V2 §2.1.3) would avoid that
re-expansion; symtrans counts what transformers runs.

KV cache per token and layer: r_kv + d_rope elements (``memory.kv_cache_per_token``).
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.engine import symbols as S
from symtrans.engine.components import attention_pairs, dims, expr_text, linear, norm, windowed_pairs
from symtrans.engine.conventions import per_element
from symtrans.engine.cost import ATTENTION, Cost, Step
from symtrans.engine.roles import Block, Role
from symtrans.engine.spec import Spec

SOURCE = "DeepSeek-AI 2024 (DeepSeek-V2) §2.1; DeepseekV3Attention (transformers 5.x)"


def mla_attention(
    spec: Spec, kind: str, batch: sp.Expr, q: sp.Expr, kv: sp.Expr, mask: str = "full", keys: sp.Expr | None = None
) -> Cost:
    """Causal multi-head latent attention of B sequences, q new positions against kv positions.

    Args:
        kind: ``causal`` (MLA is the self-attention of a decoder-only model).
        batch, q, kv: B sequences, q query positions, kv key positions (q = kv in a forward
            pass; 1 and the context in a decode step).
        mask: how the causal mask counts (``components.attention_pairs``).
        keys: at most this many keys per query (DeepSeek Sparse Attention's top-k,
            ``engine/dsa.py``): under ``causal`` and ``half`` the pairs are counted as a
            window of ``keys`` keys (``components.windowed_pairs``); under ``full`` and
            ``window`` as the dense square (the top-k is a mask: every key stays cached);
            None reads every causal key.

    Returns:
        The Cost of one layer's attention: parameters (module docstring) and forward FLOPs.

    Raises:
        ValueError: a kind other than ``causal``.
    """
    if kind != "causal":
        raise InputError(f"multi-head latent attention is causal self-attention, not {kind!r}")
    D = dims(spec)  # h_kv = h; d_k = d_nope + d_rope; d_v
    tq = batch * q
    tkv = batch * kv
    bias = spec.qkv_bias_on  # attention_bias: q_a_proj and kv_a_proj_with_mqa (and o_proj)
    steps: list[Step] = []
    if spec.has("r_q"):
        steps += linear(
            "W_DQ", S.d_model, S.r_q, tq, bias, SOURCE, "query down-projection to rank r_q", role=Role.Q_DOWN
        )
        steps += norm(spec, "query latent norm", S.r_q, tq, Role.LATENT_NORM)
        steps += linear(
            "W_UQ",
            S.r_q,
            S.h * D.d_k,
            tq,
            False,
            SOURCE,
            "query up-projection, h heads of d_nope + d_rope",
            role=Role.Q_UP,
        )
    else:
        steps += linear(
            "W_Q",
            S.d_model,
            S.h * D.d_k,
            tq,
            False,
            SOURCE,
            "query projection, h heads of d_nope + d_rope",
            role=Role.Q_PROJ,
        )
    dkv = linear(
        "W_DKV",
        S.d_model,
        S.r_kv + S.d_rope,
        tq,
        bias,
        SOURCE,
        "down-projection of the new positions to the latent (r_kv) and the shared rotary key (d_rope): what is cached",
        role=Role.KV_DOWN,
    )
    if kind == "causal":  # the decode cache: one latent and one shared rotary key per token (DeepSeek-V2 §2.1.2)
        # one latent "head" that every tensor-parallel rank keeps whole (cache_heads 1)
        dkv[0] = replace(dkv[0], cache=S.r_kv + S.d_rope, cache_window=S.w if spec.has("w") else None)
    steps += dkv
    steps += norm(spec, "key-value latent norm", S.r_kv, tq, Role.LATENT_NORM)
    steps += linear(
        "W_UKV",
        S.r_kv,
        S.h * (S.d_nope + S.d_v),
        tkv,
        False,
        SOURCE,
        "up-projection of every cached latent to h heads' keys (d_nope) and values (d_v); "
        "transformers re-expands the whole cache at each step",
        role=Role.KV_UP,
    )
    if keys is not None and mask in ("causal", "half"):  # position p reads min(p, keys) of its p keys
        pairs = windowed_pairs(q, kv, mask, w=keys)
    elif keys is not None:  # full, window: the dense square with the top-k as a mask (every key cached)
        pairs = attention_pairs(q, kv, mask)
    elif spec.has("w"):
        pairs = windowed_pairs(q, kv, mask)
    else:
        pairs = attention_pairs(q, kv, mask)
    steps.append(
        Step(
            label="Q K^T",
            role=Role.ATTENTION_SCORES,
            flops=2 * batch * D.h * pairs * D.d_k,
            kind=ATTENTION,
            shape=f"h x ({expr_text(q)} x {expr_text(D.d_k)}) . ({expr_text(D.d_k)} x {expr_text(kv)})",
            elementwise=per_element("scale") * batch * D.h * pairs,
            note="scores over d_nope + d_rope per head (the rotary key is shared by the heads)",
            source=SOURCE,
        )
    )
    steps.append(
        Step(
            label="softmax",
            role=Role.SOFTMAX,
            elementwise=per_element("softmax") * batch * D.h * pairs,
            note="exp, sum and divide per score (counted only under all-ops)",
            source="Hoffmann et al. 2022 (Chinchilla) App. F",
        )
    )
    steps.append(
        Step(
            label="scores V",
            role=Role.ATTENTION_VALUES,
            flops=2 * batch * D.h * pairs * D.d_v,
            kind=ATTENTION,
            shape=f"h x ({expr_text(q)} x {expr_text(kv)}) . ({expr_text(kv)} x {expr_text(D.d_v)})",
            note="weighted sum of values, per head",
            source=SOURCE,
        )
    )
    steps += linear(
        "W_O", S.h * D.d_v, S.d_model, tq, spec.out_bias_on, SOURCE, "output projection of the heads", role=Role.O_PROJ
    )
    return Cost(
        name="multi-head latent attention",
        block=Block.CAUSAL_SELF_ATTENTION,
        steps=tuple(steps),
        source=SOURCE,
    )
