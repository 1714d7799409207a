"""The components: each a function that writes its own derivation Steps.

Every function returns a ``Cost`` whose Steps carry the parameter count (parameters)
and forward FLOPs (2 per multiply-accumulate over matrix products; the lookup of an
embedding costs 0, bias adds / softmax / norms are 0 under this convention and are
recorded in ``Step.elementwise`` for the all-ops convention).

Shapes: a stack processes ``T = B*q`` tokens (``B`` sequences of ``q`` tokens); a
linear map d_in -> d_out on them is the matmul (T x d_in)(d_in x d_out), costing
2*T*d_in*d_out FLOPs.  Attention compares ``q`` queries with ``kv`` keys per
sequence and head; ``pairs`` is the number of query-key pairs the mask keeps.

Sources: Vaswani et al. 2017 §3 (attention, FFN, embeddings, sinusoids);
PyTorch ``nn.TransformerEncoderLayer``/``DecoderLayer``; Hugging Face ``transformers``
model files (BERT, GPT-2, Llama, Mistral, Mixtral, Qwen2/3, Gemma, T5, BART, OPT).
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.engine import symbols as S
from symtrans.engine.conventions import per_element
from symtrans.engine.cost import ATTENTION, DENSE, ONE, ZERO, Cost, Matrix, Step
from symtrans.engine.primitives import Dims, dims, expr_text, linear, norm  # noqa: F401 (re-exported)
from symtrans.engine.roles import Block, Role
from symtrans.engine.spec import Spec
from symtrans.engine.transient_global import block_local_pairs, longformer_pairs

MASKS = ("full", "causal", "half", "window")


def attention_pairs(q: sp.Expr, kv: sp.Expr, mask: str) -> sp.Expr:
    """Query-key pairs per sequence and head that a causal mask keeps.

    ``full``: q*kv (the full square: PaLM App. B, Megatron, nanoGPT); ``window`` is
    the same on a layer without a window (it changes windowed layers only);
    ``causal``: the exact lower triangle of the last q rows of a kv-wide square,
    sum_{i=1..q} (kv - q + i) = q*kv - q*(q-1)/2, which is L*(L+1)/2 at q = kv = L;
    ``half``: q*kv/2.
    """
    if mask in ("full", "window"):
        return q * kv
    if mask == "causal":
        return q * kv - q * (q - 1) / 2
    if mask == "half":
        return q * kv / 2
    raise InputError(f"mask must be one of {', '.join(MASKS)}, not {mask!r}")


def _window_prefix(x: sp.Expr, w: sp.Expr, exact: bool = True) -> sp.Expr:
    """sum_{p=1..x} min(p, w) = m*(m+1)/2 + (x - m)*w with m = Min(x, w) (``exact``);
    its continuous twin m**2/2 + (x - m)*w otherwise (the band's area)."""
    m = sp.Min(x, w)
    return (m * (m + 1) if exact else m**2) / 2 + (x - m) * w


def windowed_pairs(
    q: sp.Expr, kv: sp.Expr, mask: str, w: sp.Expr = S.w, causal: bool = True, global_tokens: int = 0
) -> sp.Expr:
    """Query-key pairs per sequence and head of local (sliding-window) attention.

    Causal (Mistral, Jiang et al. 2023 §2; HF sliding-window mask ``q_idx - kv_idx < w``):
    the query at position p sees min(p, w) keys.  For the last q rows of a kv-wide
    square, with F(x) = sum_{p<=x} min(p, w) = m(m+1)/2 + (x - m)*w, m = Min(x, w):

    * ``causal`` (exact): F(kv) - F(kv - q); at q = kv = L this is L*w - w*(w-1)/2
      for L >= w and L*(L+1)/2 (the full causal form) for L <= w;
    * ``full``: q*kv, the whole square, as eager and SDPA attention compute it (the
      window is applied as a mask on the full score matrix; FlopCounterMode counts the
      same with and without ``sliding_window``);
    * ``window``: q*Min(kv, w), the band each query reads when a kernel skips the keys
      outside the window (FlashAttention's ``window_size``, a rolling K/V buffer of w);
    * ``half``: the band's area, (q/kv)*(m**2/2 + (kv - m)*w), = q*kv/2 for kv <= w.

    Bidirectional (Longformer, Beltagy et al. 2020 §3.1: a = w/2 keys on each side plus
    the query itself; HF LongformerConfig requires w even, an odd w is taken as
    a = floor(w/2)): P(q) = q + 2*(m(m+1)/2 + (q - 1 - m)*a) with m = Min(q - 1, a),
    = q**2 for q <= a + 1.  ``global_tokens`` g (the first g positions, as [CLS] and
    the question in Longformer's tasks; 0 <= g <= q, ``Spec`` checks it) attend to every
    key and are attended by every query: the kept pairs are the union of the band, the
    g global rows and the g global columns (``_global_union``), so g = q gives the full
    square q**2 and never more.

    Raises:
        ValueError: for an unknown ``mask``.
    """
    if mask not in MASKS:
        raise InputError(f"mask must be one of {', '.join(MASKS)}, not {mask!r}")
    if causal:
        if mask == "causal":
            pairs = _window_prefix(kv, w) - _window_prefix(kv - q, w)
        elif mask == "full":
            pairs = q * kv
        elif mask == "window":
            pairs = q * sp.Min(kv, w)
        else:
            pairs = q / kv * _window_prefix(kv, w, exact=False)
    else:
        a = sp.floor(w / 2)
        pairs = _band_pairs(q, a)
        if global_tokens:
            pairs = _global_union(q, a, sp.Integer(global_tokens))
    return pairs


def _band_pairs(n: sp.Expr, a: sp.Expr) -> sp.Expr:
    """Pairs (i, j) of n positions with |i - j| <= a: n + 2*(m(m+1)/2 + (n-1-m)*a), m = Min(n-1, a)."""
    m = sp.Min(n - 1, a)
    return n + 2 * (m * (m + 1) / 2 + (n - 1 - m) * a)


def _triangle(x: sp.Expr) -> sp.Expr:
    """1 + 2 + ... + x for x > 0, else 0: Max(x, 0)(Max(x, 0) + 1)/2."""
    m = sp.Max(x, 0)
    return m * (m + 1) / 2


def _global_union(n: sp.Expr, a: sp.Expr, g: sp.Expr) -> sp.Expr:
    """Pairs of n positions kept by a band |i - j| <= a OR a global row or column (the
    first g positions, 1 <= g <= n), by inclusion-exclusion over the pairs outside the band:

        union = P(n) + 2*(g*n - R) - (g**2 - P(g))

    where P(x) is the band on x positions (``_band_pairs``), g*n - R are the pairs of the
    g global rows outside the band (R: the band's pairs in those rows, written out below),
    the same again for the g global columns, and g**2 - P(g) those counted twice (global
    row and global column).  Row i of the band holds min(i + a, n) - max(i - a, 1) + 1
    keys; summed over i = 1..g with T(x) = ``_triangle``:
    R = g(g+1)/2 + a*g - T(g + a - n) + T(a - n) - T(g - a - 1).
    """
    r = g * (g + 1) / 2 + a * g - _triangle(g + a - n) + _triangle(a - n) - _triangle(g - a - 1)
    return _band_pairs(n, a) + 2 * (g * n - r) - (g**2 - _band_pairs(g, a))


def qk_norms(spec: Spec, tq: sp.Expr, tkv: sp.Expr) -> list[Step]:
    """The query and key norms of ``spec.qk_norm`` on tq query and tkv key tokens.

    ``head``: one norm of width d_k for all query heads and one for all key heads
    (Qwen3RMSNorm(head_dim), Gemma-3; PhiAttention's LayerNorm(head_dim) with β):
    2 norms of width d_k.  ``per_head``: a norm of width d_k per head, h for the queries and
    h_kv for the keys (StableLmLayerNormPerHead; CohereLayerNorm((h, d_k)) holds the same
    h*d_k weights): (h + h_kv) norms of width d_k.  ``full``: one norm over all h*d_k query
    features and one over the h_kv*d_k key features (Olmo2RMSNorm(h*d_k)).  ``l2``: a
    weightless L2 normalisation (Llama4TextL2Norm).  The norm is ``spec.norm``'s kind
    (RMSNorm when the model has none), with β as ``qk_norm_bias`` (else ``norm_bias``).
    Elementwise work is the same for every kind: every query and key feature once.
    """
    D = dims(spec)
    kind = spec.qk_norm
    if kind == "none":
        return []
    nk = "rmsnorm" if spec.norm == "none" or kind == "l2" else spec.norm
    steps: list[Step] = []
    for label, role, tokens, heads in (
        ("query norm", Role.Q_NORM, tq, D.h),
        ("key norm", Role.K_NORM, tkv, D.h_kv),
    ):
        if kind in ("head", "per_head", "l2"):
            step = norm(spec, label, D.d_k, tokens * heads, role, nk, spec.qk_norm_bias)[0]
        else:
            step = norm(spec, label, heads * D.d_k, tokens, role, nk, spec.qk_norm_bias)[0]
        if kind == "per_head":
            step = dataclasses.replace(
                step,
                params=heads * step.params,
                note=step.note + f", one per head ({expr_text(heads)} norms of width d_k)",
            )
        elif kind == "l2":
            step = dataclasses.replace(step, params=ZERO, note="L2 normalisation per head: no weights")
        elif kind == "full":
            step = dataclasses.replace(step, note=step.note + f" over all {expr_text(heads)} heads at once")
        if kind != "head":  # head: the norm's own source, as before the other kinds existed
            step = dataclasses.replace(step, source=_QK_NORM_SOURCES[kind])
        steps.append(step)
    return steps


_QK_NORM_SOURCES = {
    "per_head": "StableLmLayerNormPerHead; CohereLayerNorm((num_heads, head_dim))",
    "full": "OLMo 2 (2024); Olmo2Attention q_norm RMSNorm(h*head_dim), k_norm RMSNorm(h_kv*head_dim)",
    "l2": "Llama4TextL2Norm (use_qk_norm): x / ||x|| per head, no weights",
}


def attention(
    spec: Spec,
    kind: str,
    batch: sp.Expr,
    q: sp.Expr,
    kv: sp.Expr,
    mask: str = "full",
    window: bool | None = None,
    longformer_window: sp.Expr = S.w_att,
) -> Cost:
    """Multi-head attention: W_Q, W_K, W_V, W_O, QK^T and the weighted sum of V.

    Args:
        kind: ``self``, ``causal`` (masked self) or ``cross`` (queries from the
            decoder, keys and values from ``kv`` encoder positions).
        batch, q, kv: B sequences, q query positions, kv key positions each.
        mask: how a causal mask counts (see ``attention_pairs``); only ``causal``
            attention is masked.
        window: whether this layer attends within the window ``w``; None means
            whenever the spec has ``w`` (with ``N_w`` the architecture builds the
            windowed and the full layers separately, see ``Spec``).
        longformer_window: an LED encoder layer's window (``Spec.encoder_windows``; default w_att).

    Parameters: W_Q d_model x h*d_k, W_K and W_V d_model x h_kv*d_k (d_v for V),
    W_O h*d_v x d_model, plus the biases the spec asks for (Vaswani 2017 §3.2.2;
    GQA: Ainslie et al. 2023).  FLOPs: the four projections, 2*B*h*pairs*d_k for
    QK^T and 2*B*h*pairs*d_v for the weighted sum of V.
    """
    D = dims(spec)
    src = "Vaswani et al. 2017 §3.2.2; GQA: Ainslie et al. 2023"
    tq = batch * q
    tkv = batch * kv if kind == "cross" else tq
    qkv_b = spec.qkv_bias_on
    steps: list[Step] = []
    gate = spec.attention_gate and kind != "cross"  # Qwen3-Next: q_proj also emits an output gate per feature
    steps += linear(
        "W_Q",
        D.d_model,
        (2 if gate else 1) * D.h * D.d_k,
        tq,
        qkv_b,
        "Qwen3NextAttention.q_proj (queries and output gate, h*d_k each)" if gate else src,
        "query projection and the output gate, h heads of width d_k each"
        if gate
        else "query projection, h heads of width d_k",
        role=Role.Q_PROJ,
    )
    first_kv = len(steps)
    steps += linear(
        "W_K",
        D.d_model,
        D.h_kv * D.d_k,
        tkv,
        spec.k_bias_on,
        src,
        "key projection, h_kv heads of width d_k" if spec.has("h_kv") else "key projection, h heads of width d_k",
        role=Role.K_PROJ,
    )
    steps += linear(
        "W_V",
        D.d_model,
        D.h_kv * D.d_v,
        tkv,
        qkv_b,
        src,
        "value projection, h_kv heads of width d_v" if spec.has("h_kv") else "value projection, h heads of width d_v",
        role=Role.V_PROJ,
    )
    windowed = spec.has("w") if window is None else window
    k_at, v_at = first_kv, next(i for i, st in enumerate(steps) if st.role == Role.V_PROJ and not st.bias)
    for at, width in ((k_at, D.d_k), (v_at, D.d_v)):
        # the decode cache keeps each token's keys and values (K/V cache), the last w when windowed
        if kind == "causal":
            steps[at] = replace(
                steps[at], cache=D.h_kv * width, cache_window=S.w if windowed else None, cache_heads=D.h_kv
            )
        elif kind == "cross":  # the encoder output's keys and values, computed once at prefill, per source token
            steps[at] = replace(steps[at], source_cache=D.h_kv * width, cache_heads=D.h_kv)
    steps += qk_norms(spec, tq, tkv)
    value_pairs = None
    if kind == "self" and spec.encoder_attention in ("local", "transient-global"):
        pairs = block_local_pairs(spec, q)  # LongT5: the padded blocks and their 3-block keys, as computed
    elif kind == "self" and spec.encoder_attention == "longformer":
        pairs, value_pairs = longformer_pairs(
            q, longformer_window
        )  # LED: q is already the padded length; overlapping chunks
    elif windowed and kind == "self" and spec.window_mask and mask != "window":
        pairs = q * kv  # the window masks the full square the eager forward computes (Spec.window_mask)
    elif windowed and kind != "cross":  # local / sliding-window self-attention
        pairs = windowed_pairs(q, kv, mask, causal=kind == "causal", global_tokens=spec.global_tokens)
    else:
        pairs = attention_pairs(q, kv, mask if kind == "causal" else "full")
    steps.append(
        Step(
            label="Q K^T",
            role=Role.ATTENTION_SCORES,
            flops=2 * batch * D.h * pairs * D.d_k,
            kind=ATTENTION,
            shape=f"h x ({expr_text(q)} x {expr_text(D.d_k)}) . ({expr_text(D.d_k)} x {expr_text(kv)})",
            elementwise=per_element("scale") * batch * D.h * pairs,  # the 1/sqrt(d_k) scaling
            note="attention scores: every kept query-key pair, a d_k-wide dot product per head",
            source="Vaswani et al. 2017 eq. 1",
            chunk_window=longformer_window if value_pairs is not None else None,
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
    if spec.sinks:
        steps.append(sinks_step(batch, q, D.h))
    steps.append(
        Step(
            label="scores V",
            role=Role.ATTENTION_VALUES,
            flops=2 * batch * D.h * (pairs if value_pairs is None else value_pairs) * D.d_v,
            kind=ATTENTION,
            shape=f"h x ({expr_text(q)} x {expr_text(kv)}) . ({expr_text(kv)} x {expr_text(D.d_v)})",
            note="weighted sum of values, per head",
            source="Vaswani et al. 2017 eq. 1",
        )
    )
    if spec.positional == "transformer-xl" and kind != "cross":
        steps += _transformer_xl_steps(batch, q, kv, pairs, D)
    if spec.has("L_rel"):  # DeBERTa (types-enc); Spec allows it in encoder-only models only
        from symtrans.engine.disentangled import disentangled_steps

        steps += disentangled_steps(spec, batch, q, D)
    if gate:
        steps.append(
            Step(
                label="output gate",
                role=Role.ACTIVATION,
                elementwise=(per_element("activation") + per_element("gate")) * tq * D.h * D.d_v,
                note="sigmoid of the gate, times the attention output, per feature (all-ops only)",
                source="Qwen3-Next (Qwen Team 2025); Qwen3NextAttention",
            )
        )
    steps += linear(
        "W_O",
        D.h * D.d_v,
        D.d_model,
        tq,
        spec.out_bias_on,
        src,
        "output projection of the concatenated heads",
        role=Role.O_PROJ,
    )
    name, block = {
        "self": ("self-attention", Block.SELF_ATTENTION),
        "causal": ("causal self-attention", Block.CAUSAL_SELF_ATTENTION),
        "cross": ("cross-attention", Block.CROSS_ATTENTION),
    }[kind]
    return Cost(name=name, block=block, steps=tuple(steps), source=src)


def sinks_step(batch: sp.Expr, q: sp.Expr, h: sp.Expr) -> Step:
    """Attention sinks (gpt-oss; Xiao et al. 2024 for the idea): one learned logit per head,
    h parameters per layer, joins every query's softmax and is dropped after it; no matrix
    product (0 FLOPs), one more softmax entry per query and head under all-ops.
    Implementation: ``GptOssAttention.sinks`` (h,) and ``eager_attention_forward``."""
    return Step(
        label="attention sinks",
        role=Role.ATTENTION_SINKS,
        params=h,
        elementwise=per_element("softmax") * batch * h * q,
        note="one learned logit per head in every query's softmax (h parameters)",
        source="OpenAI 2025 (gpt-oss model card); GptOssAttention.sinks",
    )


def _transformer_xl_steps(batch: sp.Expr, q: sp.Expr, kv: sp.Expr, pairs: sp.Expr, D: "Dims") -> list[Step]:
    """Transformer-XL relative attention (Dai et al. 2019 §3.3), per layer.

    W_R (d_model x h*d_k, no bias) projects the kv fixed sinusoidal relative encodings
    R (2*kv*d_model*h*d_k FLOPs, once per sequence batch: R does not depend on the
    batch); u and v (h*d_k each) are the content and position biases added to the
    queries; Q R^T scores every kept query-key pair against R (term (b)+(d)).
    Implementation: HF ``TransfoXLRelPartialLearnableMultiHeadAttn`` (r_net, r_w_bias,
    r_r_bias with untie_r=True).
    """
    src = "Dai et al. 2019 (Transformer-XL) §3.3; TransfoXLRelPartialLearnableMultiHeadAttn"
    steps = linear(
        "W_R",
        D.d_model,
        D.h * D.d_k,
        kv,
        False,
        src,
        "projection of the relative position encodings R",
        role=Role.RELATIVE_PROJECTION,
    )
    steps.append(
        Step(
            label="u, v",
            role=Role.RELATIVE_BIAS_VECTORS,
            params=2 * D.h * D.d_k,
            elementwise=per_element("bias") * 2 * batch * q * D.h * D.d_k,
            note="content bias u and position bias v, h*d_k each, added to the queries",
            source=src,
        )
    )
    steps.append(
        Step(
            label="Q R^T",
            role=Role.RELATIVE_SCORES,
            flops=2 * batch * D.h * pairs * D.d_k,
            kind=ATTENTION,
            shape=f"h x ({expr_text(q)} x {expr_text(D.d_k)}) . ({expr_text(D.d_k)} x {expr_text(kv)})",
            note="position scores (q + v) R^T for every kept query-key pair, then the relative shift",
            source=src,
        )
    )
    return steps


def low_rank_linear(
    label: str,
    d_in: sp.Expr,
    d_out: sp.Expr,
    tokens: sp.Expr,
    bias: bool,
    source: str,
    note: str = "",
    *,
    role: Role,
) -> list[Step]:
    """A d_in -> d_out map factorised through rank ``r``: (d_in x r) then (r x d_out).

    Parameters r*(d_in + d_out) (+ d_out bias) instead of d_in*d_out; FLOPs
    2*tokens*r*(d_in + d_out).  It saves parameters only below the break-even rank
    d_in*d_out/(d_in + d_out) (see ``variants.low_rank_saving``).  Source: low-rank
    factorisation of weight matrices, Sainath et al. 2013; Lan et al. 2020 §3.1 for
    the same idea applied to embeddings.
    """
    src = source + "; low-rank factorisation W = U V (Sainath et al. 2013)"
    steps = linear(
        f"{label} (down to r)",
        d_in,
        S.r,
        tokens,
        False,
        src,
        (note + ": " if note else "") + f"first factor, {expr_text(d_in)} x r",
        role=role,
        factor=1,
    )
    steps += linear(
        f"{label} (up from r)",
        S.r,
        d_out,
        tokens,
        bias,
        src,
        f"second factor, r x {expr_text(d_out)}",
        role=role,
        factor=2,
    )
    return steps


def ffn_steps(
    spec: Spec, tokens: sp.Expr, prefix: str = "", width: sp.Expr | None = None, bias: bool | None = None
) -> list[Step]:
    """``width`` (default d_ff) is the inner width, ``bias`` (default ``ffn_bias``) the maps' biases:
    a routed or shared expert's own (d_ff_e, d_ff_s; gpt-oss's expert biases)."""
    D = dims(spec)
    if width is not None:
        D = Dims(**{**D.__dict__, "d_ff": width})
    b = spec.ffn_bias_on if bias is None else bias
    linear_ = low_rank_linear if spec.has("r") else linear  # low-rank FFN: every map factorised
    if spec.ffn == "mlp":
        src = "Vaswani et al. 2017 §3.3, FFN(x) = max(0, xW_1 + b_1)W_2 + b_2"
        steps = linear_(prefix + "W_1", D.d_model, D.d_ff, tokens, b, src, "expansion to d_ff", role=Role.FFN_UP)
        steps.append(
            Step(
                label=prefix + "activation",
                role=Role.ACTIVATION,
                elementwise=per_element("activation") * tokens * D.d_ff,
                note="ReLU/GELU per element (all-ops only)",
                source=src,
            )
        )
        if spec.ffn_act_params:  # xIELU's alpha_p and alpha_n: learned, one element each
            steps.append(
                Step(
                    label=prefix + "activation parameters",
                    role=Role.ACTIVATION,
                    params=sp.Integer(spec.ffn_act_params),
                    note="learned scalars of the activation (xIELU: alpha_p, alpha_n)",
                    source="Huang et al. 2025 (xIELU); transformers activations.XIELUActivation",
                )
            )
        steps += linear_(
            prefix + "W_2", D.d_ff, D.d_model, tokens, b, src, "contraction back to d_model", role=Role.FFN_DOWN
        )
        return steps
    src = "Shazeer 2020 (GLU variants), FFN = (act(xW_gate) * xW_up) W_down; LlamaMLP"
    steps = linear_(prefix + "W_gate", D.d_model, D.d_ff, tokens, b, src, "gate projection", role=Role.FFN_GATE)
    steps += linear_(prefix + "W_up", D.d_model, D.d_ff, tokens, b, src, "up projection", role=Role.FFN_UP)
    steps.append(
        Step(
            label=prefix + "activation and gate",
            role=Role.ACTIVATION,
            elementwise=(per_element("activation") + per_element("gate")) * tokens * D.d_ff,
            note="SiLU/GELU and the elementwise product (all-ops only)",
            source=src,
        )
    )
    steps += linear_(prefix + "W_down", D.d_ff, D.d_model, tokens, b, src, "down projection", role=Role.FFN_DOWN)
    return steps


def feed_forward(spec: Spec, tokens: sp.Expr) -> Cost:
    """Position-wise feed-forward network on ``tokens`` rows.

    ``mlp``: W_1 (d_model x d_ff) and W_2 (d_ff x d_model), with biases d_ff and d_model
    (Vaswani 2017 §3.3).  ``swiglu``/``geglu``: gate, up (d_model x d_ff) and down
    (d_ff x d_model) (Shazeer 2020; Llama).  FLOPs 2*tokens*(weights).
    """
    name = "feed-forward" if spec.ffn == "mlp" else f"feed-forward ({spec.ffn})"
    return Cost(name=name, block=Block.FFN, steps=tuple(ffn_steps(spec, tokens)))


def moe_feed_forward(spec: Spec, tokens: sp.Expr) -> Cost:
    """Mixture-of-experts FFN: a router d_model x E and E expert FFNs, k used per token.

    Parameters: E experts (all stored); active per token: k experts plus the router
    and any shared experts.  FLOPs: router 2*tokens*d_model*E plus k experts'
    FLOPs (Fedus et al. 2022; Jiang et al. 2024, Mixtral; MixtralSparseMoeBlock).
    """
    D = dims(spec)
    src = "Shazeer et al. 2017; Mixtral (Jiang et al. 2024); MixtralSparseMoeBlock"
    router = linear(
        "router", D.d_model, S.E, tokens, spec.router_bias, src, "gating logits over E experts", role=Role.ROUTER
    )
    # A routed expert's width d_ff_e (moe_intermediate_size) when it differs from the dense
    # layers' d_ff; the shared expert's d_ff_s, else the routed width (DeepSeekMoE, Llama 4).
    width_e = S.d_ff_e if spec.has("d_ff_e") else D.d_ff
    width_s = S.d_ff_s if spec.has("d_ff_s") else width_e
    expert = Cost(
        name="expert",
        block=Block.FFN,
        steps=tuple(ffn_steps(spec, tokens, width=width_e, bias=spec.expert_bias)),
    )
    steps = list(router)
    steps.append(
        Step(
            label="experts",
            role=Role.EXPERTS,
            params=S.E * expert.params_each,
            active=S.k * expert.params_each,
            flops=S.k * expert.flops_each,
            kind=DENSE,
            weights=S.k * expert.weights_each,
            elementwise=S.k * expert.elementwise_each,
            shape=f"k x [{'; '.join(s.shape for s in expert.steps if s.shape)}]",
            note="E experts stored; each token runs k of them",
            source=src,
            matrices=tuple(m._replace(count=S.E * m.count) for s in expert.steps for m in s.matrices),
        )
    )
    if spec.shared_expert_gate:
        qsrc = "Qwen2-MoE (Qwen Team 2024); Qwen2MoeSparseMoeBlock.shared_expert_gate"
        steps += linear(
            "shared expert gate",
            D.d_model,
            ONE,
            tokens,
            False,
            qsrc,
            "a d_model x 1 map; its sigmoid scales the shared expert's output",
            role=Role.SHARED_EXPERT_GATE,
        )
        steps.append(
            Step(
                label="sigmoid gate on the shared expert",
                role=Role.ACTIVATION,
                elementwise=per_element("activation") * tokens + per_element("gate") * tokens * D.d_model,
                note="sigmoid of the gate logit, times the shared expert's output (all-ops only)",
                source=qsrc,
            )
        )
    children = []
    if spec.n_shared_experts:
        children.append(
            Cost(
                name="shared expert",
                block=Block.SHARED_EXPERT,
                steps=tuple(ffn_steps(spec, tokens, width=width_s)),
                multiplicity=sp.Integer(spec.n_shared_experts),
                note="always active",
                source="Dai et al. 2024 (DeepSeekMoE)",
            )
        )
    return Cost(name="mixture of experts", block=Block.MOE, steps=tuple(steps), children=tuple(children), source=src)


def token_embedding(label: str = "token embedding", tied_note: str = "", width: sp.Expr = S.d_model) -> Step:
    """V x d_model lookup table: V*d_model parameters, 0 FLOPs (a lookup, not a matmul).

    ``width`` is E_emb for ALBERT's factorized embedding (Lan et al. 2020 §3.1).
    """
    return Step(
        label=label,
        role=Role.TOKEN_EMBEDDING,
        params=S.V * width,
        note=tied_note or "one d_model vector per vocabulary entry; the lookup costs no FLOPs",
        source="Vaswani et al. 2017 §3.4",
        matrices=(Matrix(ONE, S.V, width, lookup=True),),
    )


def positions(spec: Spec, width: sp.Expr = S.d_model, kind: str | None = None, table: sp.Expr = S.L_max) -> list[Step]:
    """Positional encoding parameters: learned (L_max + offset) x d_model (``width``: E_emb
    with a factorized embedding, as HF AlbertEmbeddings); others 0.

    Sinusoidal: PE(pos, 2i) = sin(pos / 10000^(2i/d_model)) and
    PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)) (Vaswani 2017 §3.5), fixed, 0 parameters;
    ``sinusoidal-table``: the same values stored as a frozen L_max x d_model parameter
    (HF Pegasus/Marian ``SinusoidalPositionalEmbedding``, Whisper's encoder), counted.
    Rotary (Su et al. 2021) and ALiBi (Press et al. 2022): 0 parameters.
    ``kind`` overrides ``spec.positional`` (a decoder's own kind) and ``table`` is the
    table's row count (a stack's own L_src_max or L_tgt_max).
    """
    p = spec.positional if kind is None else kind
    if p == "sinusoidal-table":
        return [
            Step(
                label="sinusoidal position table",
                role=Role.POSITION_EMBEDDING,
                params=table * width,
                note="the fixed sinusoids PE(pos, i) stored as a frozen parameter, one row per position: "
                "counted (it is in model.parameters()), never trained",
                matrices=(Matrix(ONE, table, width, lookup=True),),
                source="Vaswani et al. 2017 §3.5; PegasusSinusoidalPositionalEmbedding / "
                "MarianSinusoidalPositionalEmbedding / WhisperEncoder.embed_positions",
            )
        ]
    if p == "learned":
        rows = table + spec.position_offset
        note = "one learned vector per position" + (
            f" (L_max + {spec.position_offset} rows: the implementation offsets positions by {spec.position_offset})"
            if spec.position_offset
            else ""
        )
        return [
            Step(
                label="learned positions",
                role=Role.POSITION_EMBEDDING,
                params=rows * width,
                note=note,
                matrices=(Matrix(ONE, rows, width, lookup=True),),
                source="Gehring et al. 2017; BERT/GPT-2"
                + ("; BartLearnedPositionalEmbedding / OPTLearnedPositionalEmbedding" if spec.position_offset else ""),
            )
        ]
    if p == "sinusoidal":
        return [
            Step(
                label="sinusoidal positions",
                role=Role.POSITION_ENCODING,
                note="PE(pos,2i) = sin(pos/10000^(2i/d_model)), PE(pos,2i+1) = cos(pos/10000^(2i/d_model)): fixed, no parameters",
                elementwise=ZERO,
                source="Vaswani et al. 2017 §3.5",
            )
        ]
    if p == "rotary":
        return [
            Step(
                label="rotary positions",
                role=Role.POSITION_ENCODING,
                note="rotations of query and key pairs: no parameters",
                source="Su et al. 2021 (RoFormer)",
            )
        ]
    if p == "alibi":
        return [
            Step(
                label="ALiBi",
                role=Role.POSITION_ENCODING,
                note="fixed linear biases on the scores: no parameters",
                source="Press et al. 2022",
            )
        ]
    return []


def relative_bias(spec: Spec, multiplicity: sp.Expr | None = None) -> Cost:
    """T5's relative position bias: relative_buckets x h, once per stack (first layer), or,
    with ``multiplicity`` (the stack's layers), one table per self-attention layer (UMT5)."""
    per_layer = multiplicity is not None
    return Cost(
        name="relative position bias" + (" (per layer)" if per_layer else ""),
        block=Block.RELATIVE_POSITION_BIAS,
        steps=(
            Step(
                label="relative attention bias",
                role=Role.RELATIVE_BIAS,
                params=spec.relative_buckets * S.h,
                matrices=(Matrix(ONE, sp.Integer(spec.relative_buckets), S.h, lookup=True),),
                note=f"{spec.relative_buckets} buckets x h heads, "
                + ("one table in every self-attention layer" if per_layer else "shared by every layer of the stack"),
                source="Chung et al. 2023 (UniMax); UMT5Attention.relative_attention_bias"
                if per_layer
                else "Raffel et al. 2020 §2.1; T5Attention.relative_attention_bias",
            ),
        ),
        **({"multiplicity": multiplicity} if per_layer else {}),
    )
