"""Memory of training and inference, in bytes, as exact closed forms.

* Weights: parameters x bytes per parameter of the dtype (``DTYPES``).  4-bit formats
  pack two parameters per byte, so a packed tensor's element count (``numel`` of its
  uint8 storage) is half the parameter count: an element count is not a parameter count.
* Gradients: one per parameter, in the dtype of the weights.
* Optimizer states (``OPTIMIZERS``): Adam/AdamW in mixed precision keeps an fp32 master
  copy, m and v: 12 bytes per parameter, 16 with the 16-bit weights and gradients
  (Rajbhandari et al. 2020, ZeRO §3.1, K = 12).
* ZeRO stages 1-3 over N_d data-parallel ranks partition optimizer states, then
  gradients, then weights (ZeRO §5, Figure 1).  Figures are per rank.
* Activations per layer after Korthikanti et al. 2022 §4.1 (s·b·h·(34 + 5·a·s/h) bytes
  at 16 bits for GPT), as the engine states them (``engine.saved``): every tensor autograd
  saves for the backward pass with its width (GQA's narrower K and V, d_ff, gated FFNs,
  norms or none, QK-norm, MoE's k experts); this module sums them and reads no Spec
  option to rebuild a layer.
  Selective recomputation and FlashAttention drop the terms in a·s² (the score
  matrices); full recomputation keeps only each layer's input, 2·s·b·d_model.
* KV cache and state: summed over the Cost tree's steps (``Step.cache`` per token,
  ``Step.cache_window``, ``Step.source_cache``, ``Step.state``): per token 2·N·h_kv·d_k x
  bytes for N attention layers (N·h_kv·(d_k + d_v) in general), honouring GQA/MQA, an
  explicit head_dim, MLA's latent, sliding windows and cross-attention, plus the constant
  state of state-space and linear-attention layers.
* Inference footprint: weights + KV cache + one layer's activations + logits, plus a
  stated margin.

Units: bytes.  Expressions are exact (SymPy Integers/Rationals, never floats).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from symtrans.accounting.dtypes import DTYPES, TRAINING_DTYPES, DType, get_dtype  # noqa: F401 (re-exported)
from symtrans.accounting.hardware import fraction
from symtrans.base.errors import InputError
from symtrans.engine import symbols as S
from symtrans.engine.architectures import build
from symtrans.engine.conventions import RECOMPUTE, choice
from symtrans.engine.roles import Block
from symtrans.engine.saved import inference_saved_bytes, layer_saved_bytes, training_saved_bytes
from symtrans.engine.simplify import closed_form
from symtrans.engine.spec import Spec

KEYS = (
    "weights_bytes",
    "gradients_bytes",
    "optimizer_bytes",
    "activations_bytes",
    "kv_cache_bytes",
    "kv_cache_bytes_per_token",
    "state_bytes_per_sequence",
    "total_bytes",
)


@dataclass(frozen=True)
class Optimizer:
    """Optimizer state per parameter.

    Attributes:
        state_bytes: bytes of optimizer state per parameter (m, v, momentum, ...).
        master: keeps an fp32 master copy (4 bytes) when the weights are not fp32.
    """

    name: str
    state_bytes: sp.Rational
    master: bool
    description: str
    source: str

    def bytes_per_parameter(self, dtype_name: str) -> sp.Rational:
        """Optimizer bytes per parameter with ``dtype_name`` weights: the state, plus the
        4-byte fp32 master copy only when the weights are not already fp32."""
        return self.state_bytes + (4 if self.master and dtype_name != "fp32" else 0)


OPTIMIZERS: dict[str, Optimizer] = {
    o.name: o
    for o in (
        Optimizer(
            "adam-mixed",
            sp.Integer(8),
            True,
            "Adam/AdamW in mixed precision: m + v, plus an fp32 master copy of 16-bit weights "
            "= 12 bytes per parameter (8 with fp32 weights, which are their own master copy)",
            "Rajbhandari et al. 2020 (ZeRO) §3.1, K = 12; Micikevicius et al. 2018",
        ),
        Optimizer(
            "adam",
            sp.Integer(8),
            True,
            "Adam/AdamW: m and v in fp32 (8 bytes), plus an fp32 master copy when the weights are 16-bit",
            "Kingma & Ba 2015; Loshchilov & Hutter 2019 (AdamW); torch.optim.AdamW",
        ),
        Optimizer(
            "adamw",
            sp.Integer(8),
            True,
            "the same state as adam (decoupled weight decay adds none)",
            "Loshchilov & Hutter 2019; torch.optim.AdamW",
        ),
        Optimizer(
            "adam-8bit",
            sp.Integer(2),
            True,
            "8-bit Adam: m and v block-wise quantised to 1 byte each, plus an fp32 master copy when the weights "
            "are 16-bit (the per-block fp32 scales, one per 2048 values, are not counted)",
            "Dettmers et al. 2022 (8-bit optimizers via block-wise quantization); bitsandbytes Adam8bit",
        ),
        Optimizer(
            "sgd-momentum",
            sp.Integer(4),
            True,
            "SGD with momentum: one fp32 momentum buffer, plus an fp32 master copy when the weights are 16-bit",
            "torch.optim.SGD(momentum>0)",
        ),
        Optimizer(
            "sgd",
            sp.Integer(0),
            True,
            "plain SGD: no state, only an fp32 master copy when the weights are 16-bit",
            "torch.optim.SGD",
        ),
    )
}

ZERO_STAGES = (0, 1, 2, 3)


def get_optimizer(name: str) -> Optimizer:
    """The optimizer called ``name``; ValueError listing the valid ones otherwise."""
    try:
        return OPTIMIZERS[name]
    except (KeyError, TypeError):
        raise InputError(f"unknown optimizer {name!r}; valid optimizers: {', '.join(OPTIMIZERS)}") from None


def _positive(value, what: str):
    if isinstance(value, sp.Basic):
        return value
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InputError(f"{what} must be a positive integer, not {value!r}")
    return sp.Integer(value)


def model_state_bytes(
    params: sp.Expr | int,
    dtype_name: str = "bf16",
    optimizer_name: str = "adam-mixed",
    zero_stage: int = 0,
    dp: sp.Expr | int = 1,
) -> dict[str, sp.Expr]:
    """Weights, gradients and optimizer states per data-parallel rank (bytes).

    Args:
        params: parameter count Ψ (an int or a closed form).
        dtype_name: weight and gradient dtype (``fp32``, ``bf16``, ``fp16``).
        optimizer_name: a key of ``OPTIMIZERS``.
        zero_stage: 0 (replicated), 1 (optimizer states partitioned over ``dp`` ranks),
            2 (+ gradients), 3 (+ weights) — Rajbhandari et al. 2020 §5, Figure 1.
        dp: data-parallel ranks N_d.

    Returns ``{"weights_bytes", "gradients_bytes", "optimizer_bytes"}``.

    Raises:
        ValueError: unknown dtype or optimizer, a dtype not used for training, a ZeRO
            stage outside 0-3, or a non-positive ``dp``.
    """
    dt = get_dtype(dtype_name)
    if dtype_name not in TRAINING_DTYPES:
        raise InputError(
            f"training keeps weights and gradients in {', '.join(TRAINING_DTYPES)}, not {dtype_name}; "
            "use --inference for quantised weights"
        )
    opt = get_optimizer(optimizer_name)
    if zero_stage not in ZERO_STAGES or isinstance(zero_stage, bool):
        raise InputError(f"ZeRO stage must be one of 0, 1, 2, 3, not {zero_stage!r}")
    dp = _positive(dp, "the number of data-parallel ranks")
    P = sp.Integer(params) if isinstance(params, int) else params
    weights = P * dt.bytes
    grads = P * dt.bytes
    states = P * opt.bytes_per_parameter(dtype_name)
    if zero_stage >= 1:
        states = states / dp
    if zero_stage >= 2:
        grads = grads / dp
    if zero_stage >= 3:
        weights = weights / dp
    return {"weights_bytes": weights, "gradients_bytes": grads, "optimizer_bytes": states}


def kv_cache_per_token(spec: Spec, kv_dtype: str = "bf16") -> sp.Expr:
    """KV cache bytes per token of one sequence: the Cost tree's cache elements per token
    (``Cost.cache``, the ``Step.cache`` of every caching step) x the dtype's bytes.

    The steps state what they cache: a self-attention layer's W_K and W_V keep h_kv·d_k and
    h_kv·d_v per token, 2·N·h_kv·d_k·bytes over N layers when d_v = d_k (GQA/MQA with h_kv,
    an explicit head_dim d_k: Ainslie et al. 2023; Pope et al. 2022 §3.3; an encoder-decoder's
    decoder with its own heads h_dec); multi-head latent attention one latent of r_kv and one
    shared rotary key of d_rope, N·(r_kv + d_rope)·bytes (DeepSeek-V2 §2.1.2; transformers
    5.x's cache layer holds keys (B, 1, T, r_kv) and values (B, 1, T, d_rope)): DeepSeek-V3
    at bf16, (512 + 64)·61·2 = 70,272 bytes.  An encoder keeps no cache (0).  Per token
    before any window: ``kv_cache_bytes`` caps the windowed layers at w positions.

    Raises:
        ValueError: unknown dtype; a ``per-layer`` attention pattern (``Spec.check_workload``).
    """
    b = get_dtype(kv_dtype).bytes
    spec.check_workload()
    if spec.family != "encoder-only":  # the workload's size checks (an encoder caches nothing to check)
        spec.check_sizes({}, workload=True)
    # expanded, then the common factors pulled out: N_w windowed and N - N_w full layers read N
    return sp.factor_terms(sp.expand(build(spec).cache * b))


def state_bytes_per_sequence(spec: Spec, dtype: str = "bf16") -> sp.Expr:
    """Constant cache bytes per sequence, whatever its length: the SSM state (d_inner·d_state)
    and convolution window (channels·d_conv) of every Mamba layer and the recurrent state
    (h_lv·d_lk·d_lv) and window of every Gated DeltaNet layer, summed over the Cost tree
    (``Step.state``; Gu & Dao 2023, Dao & Gu 2024, Yang et al. 2024), at ``dtype``'s bytes
    (transformers keeps them in the model's dtype; tests/test_kv_cache_real.py compares
    its cache tensors).  0 for a stack of attention layers only.

    Raises:
        ValueError: unknown dtype.
    """
    b = get_dtype(dtype).bytes
    return build(spec).state * b


def kv_cache_bytes(
    spec: Spec, batch: sp.Expr, seq: sp.Expr, kv_dtype: str = "bf16", src: sp.Expr | None = None
) -> sp.Expr:
    """Cache bytes of ``batch`` sequences of ``seq`` tokens, summed over the Cost tree
    (``Cost.cache_at``): every caching step keeps its elements per token for min(seq, w)
    positions on a sliding-window layer (the w keys a decode step attends to; transformers'
    sliding-window cache stores w - 1 between steps and appends the new token's during one,
    tests/test_kv_cache_real.py) and for all seq positions otherwise; an encoder-decoder's
    cross-attention keeps its K/V of the ``src`` source tokens (default ``seq``); a stack
    with state-space or linear-attention layers adds their constant state per sequence
    (``state_bytes_per_sequence``), kept in the same dtype.

    DeepSeek-V4 (``Step.held``, ``engine.deepseek_v4.cache_steps``): what its cache stores after
    ``seq`` tokens, not linear in ``seq``: the window's w - 1 keys as stored, floor(seq/m)
    compressed entries, seq mod m open tokens, CSA's overlap state (its gates at 4 bytes).  Per
    token the compressed entries grow by (N_csa*(d_k + d_idx)/m_csa + N_hca*d_k/m_hca)*b on
    average.  Checked against the tensors of transformers' cache in tests/test_deepseek_v4.py.

    Raises:
        ValueError: unknown dtype; a ``per-layer`` attention pattern; for DeepSeek-V4 a dtype other
            than a model's (fp32, bf16, fp16: its cache holds the model's dtype).
    """
    tree = build(spec)
    if tree.holds():  # a cache stated per sequence (Step.held): DeepSeek-V4's
        if kv_dtype not in TRAINING_DTYPES:
            raise InputError(
                "DeepSeek-V4's cache is held in the model's dtype (with fp32 overlap gates): give one of "
                f"{', '.join(TRAINING_DTYPES)}, not {kv_dtype}"
            )
        b = get_dtype(kv_dtype).bytes
        return batch * (b * (tree.cache_at(seq) + tree.state) + 4 * tree.held_fp32_at(seq))
    b = get_dtype(kv_dtype).bytes
    kv_cache_per_token(spec, kv_dtype)  # the same checks
    return batch * b * (tree.cache_at(seq, seq if src is None else src) + tree.state)


def weights_read(spec: Spec, tokens: sp.Expr | int, phase: str = "decode", measure=None) -> sp.Expr:
    """Parameters one inference step reads from memory when it runs ``tokens`` tokens
    (B for a decode step, B x L_pre for a prefill), for the memory-bound roofline.

    * Every stored parameter of the components the phase runs is read once per step:
      for a decoder-only model all of them; for an encoder-decoder, prefill runs the
      embeddings, the encoder and the decoder's cross-attention K/V projections, and
      decode runs everything else (``flops.prefill_expr`` / ``decode_step_expr``).
    * Routed experts (mixture of experts): a step reads only the experts its tokens are
      routed to, at most min(E, tokens x k) of the E experts of each MoE layer (each
      token picks k; the bound is reached when they pick different ones), so one token
      at B = 1 reads k experts: the active parameters (Fedus et al. 2022 §2; Jiang et
      al. 2024, Mixtral §2: 13B of 47B parameters active per token).
    * An embedding table is counted whole although a step gathers only ``tokens`` rows
      of it (an upper bound; the difference is under 2% of a 7B model).

    Units: parameters (multiply by bytes per parameter for bytes); with ``measure`` (a
    function of a Step, e.g. ``quantization.WeightFormat.step_bytes``) the sum of
    ``measure(step)`` instead of ``step.params``: bytes of quantized weights.

    Raises:
        ValueError: an unknown phase.
    """
    from symtrans.accounting.flops import _is_cross_kv

    if phase not in ("prefill", "decode"):
        raise InputError(f"unknown phase {phase!r}; valid phases: prefill, decode")
    tokens = sp.Integer(tokens) if isinstance(tokens, int) else tokens
    total = []
    for node in build(spec).nodes():
        mult, step = node.multiplicity, node.step
        if spec.family == "encoder-decoder":
            encoder_side = node.within(Block.ENCODER, Block.ENCODER_EMBEDDINGS)
            cross_kv = _is_cross_kv(node)
            # a table both stacks share (encoder-decoders' EMBEDDINGS block) runs in both phases
            shared = node.within(Block.EMBEDDINGS)
            runs = (encoder_side or cross_kv or shared) if phase == "prefill" else not (encoder_side or cross_kv)
            if not runs:
                continue
        n = step.params if measure is None else measure(step)
        if step.active is not None:  # routed experts (only they carry ``active``): the ones the tokens pick
            n = n * sp.Min(S.E, tokens * S.k) / S.E
        total.append(mult * n)
    return sp.Add(*total)


def kv_bytes_moved(spec: Spec, values: dict, l_pre: int, t_gen: int, kv_dtype: str = "bf16") -> sp.Rational:
    """Cache bytes that T_gen decode steps of one sequence read and write, summed over the
    Cost tree's caching steps.  A decoder's self-attention step t (1..T_gen) reads the
    p + t - 1 positions it caches and writes one, p + t in all, where p is the prompt it
    holds (L_pre for a decoder-only model; 0 for an encoder-decoder, whose prompt is the
    encoder's); a sliding-window layer touches at most w of them (Jiang et al. 2023 §2,
    rolling buffer cache): with m = clamp(w - p, 0, T_gen) steps still within the window,
    m·p + m(m+1)/2 + (T_gen - m)·w positions, and T_gen·p + T_gen(T_gen+1)/2 without one.
    Cross-attention reads its L_pre cached source positions at every step, T_gen·L_pre.

    Units: bytes (exact), at ``kv_dtype``; ``values`` give the sizes (w, N, h_kv, ...).
    """
    from symtrans.engine.evaluate import exact

    b = get_dtype(kv_dtype).bytes
    prompt = 0 if spec.family == "encoder-decoder" else l_pre  # the prompt goes to the encoder there
    total = sp.Integer(0)
    for node in build(spec).nodes():
        st = node.step
        if st.cache != 0:
            cap = None if st.cache_window is None else int(exact(st.cache_window, values))
            m = t_gen if cap is None else min(max(cap - prompt, 0), t_gen)
            positions = m * prompt + m * (m + 1) // 2 + (t_gen - m) * (cap or 0)
            total += exact(node.multiplicity * st.cache, values) * positions
        if st.source_cache != 0:
            total += exact(node.multiplicity * st.source_cache, values) * t_gen * l_pre
    return total * b


def activations_per_layer(
    spec: Spec,
    batch: sp.Expr = S.B,
    seq_len: sp.Expr = S.L,
    act_dtype: str = "bf16",
    recompute: str = "none",
    flash_attention: bool = False,
    dropout: bool = True,
) -> sp.Expr:
    """Activation bytes one (decoder, or encoder) layer keeps for the backward pass.

    With 16-bit activations, dropout, full-square attention scores, h*d_k = d_model,
    d_ff = 4 d_model, LayerNorm and an MLP this is Korthikanti et al. 2022 eq. (1):
    s·b·h·(34 + 5·a·s/h) [s = L, b = B, h = d_model, a = heads]; the a·s² terms are the
    full s x s score matrices, which eager attention stores even under a causal mask.
    ``recompute``: ``selective`` drops the a·s² terms (§4.2), ``full`` keeps only the
    layer input 2·s·b·d_model (§4.1, Table 2); ``flash_attention`` drops the a·s² terms
    (Dao et al. 2022; the per-row softmax statistics, 4·b·a·s bytes, are not counted).

    Raises:
        ValueError: unknown recompute option or dtype.
    """
    choice(RECOMPUTE, recompute, "recompute option")
    a = get_dtype(act_dtype).bytes
    if recompute == "full":
        return a * batch * seq_len * S.d_model
    keep_scores = not flash_attention and recompute != "selective"
    return layer_saved_bytes(spec, batch, seq_len, a, dropout, keep_scores)


def inference_weights_bytes(spec: Spec, dtype: str = "bf16", quantization=None, params: sp.Expr | None = None):
    """Bytes of the weights served for inference: ``quantization`` (a ``quantization.Quantization``)
    lays out its matrices with their scales, zeros and statistics, the rest in ``dtype``
    (``quantization.weight_terms``); else every parameter in ``dtype``, 4-bit weights two per
    byte with an odd count rounded up to a whole byte.  ``params``: the parameter count's
    closed form when the caller has it.

    Raises:
        ValueError: unknown dtype.
    """
    dt = get_dtype(dtype)
    if quantization is not None:
        from symtrans.accounting.quantization import WeightFormat, weight_terms

        return sp.Add(*weight_terms(spec, WeightFormat(dtype, quantization)).values())
    params = closed_form(build(spec).params) if params is None else params
    return params * dt.bytes if dt.bytes.q == 1 else sp.ceiling(params * dt.bytes)


def memory_terms(
    spec: Spec,
    dtype: str = "bf16",
    optimizer: str = "adam-mixed",
    zero_stage: int = 0,
    dp: sp.Expr | int = 1,
    batch: sp.Expr | int = S.B,
    seq_len: sp.Expr | int | None = None,
    recompute: str = "none",
    flash_attention: bool = False,
    eager_attention: bool = False,
    kv_dtype: str | None = None,
    mode: str = "training",
    dropout: bool = True,
    margin: sp.Rational | str = sp.Rational(1, 10),
    src_len: sp.Expr | int | None = None,
    quantization=None,
) -> dict[str, sp.Expr]:
    """Memory of ``spec`` in bytes, per data-parallel rank, as exact expressions.

    Args:
        dtype: weight dtype (``DTYPES``); training allows fp32, bf16, fp16.
        optimizer: ``OPTIMIZERS`` key (training only).
        zero_stage, dp: ZeRO stage 0-3 over ``dp`` data-parallel ranks (training).
        batch, seq_len: B sequences of L tokens (symbols when not given); an
            encoder-decoder uses ``seq_len`` for the target and ``src_len`` (default
            the same) for the source.
        recompute: ``none`` | ``selective`` | ``full`` activation recomputation.
        flash_attention: FlashAttention drops the a·s² activation terms (training).
        eager_attention: inference only: eager attention materialises the B x h x L x L
            score matrices of a layer; by default inference runs fused attention
            (PyTorch SDPA / FlashAttention, as transformers and vLLM do) and stores none.
        kv_dtype: dtype of the KV cache (default: ``dtype``, 16-bit for int formats).
        mode: ``training`` (weights + gradients + optimizer + activations; no KV cache)
            or ``inference`` (weights + KV cache of B x L tokens + one layer's
            activations and the last logits, plus ``margin``).
        dropout: whether dropout masks are saved (Korthikanti's formula assumes so).
        margin: inference headroom as a fraction of the rest (allocator, CUDA context);
            default 1/10, the 10% that vLLM's gpu_memory_utilization = 0.9 leaves free;
            ``margin_bytes`` is rounded up to a whole byte (a ``ceiling``), as are
            4-bit weights of an odd parameter count.
        quantization: a ``quantization.Quantization`` (inference only): its matrices in
            their quantized layout with scales, zeros and statistics, the rest in
            ``dtype`` (``quantization.weight_terms``).

    Returns a dict with keys ``KEYS`` (and ``activations_bytes_per_layer``,
    ``margin_bytes``); every value an exact expression in bytes.

    Raises:
        ValueError: unknown dtype/optimizer/recompute/mode, a bad ZeRO stage, a
            non-positive batch, length or rank count, or a negative margin.
    """
    if mode not in ("training", "inference"):
        raise InputError(f"unknown memory mode {mode!r}; valid modes: training, inference")
    if quantization is not None and mode != "inference":
        raise InputError("quantized weights are counted for inference (--inference), not training")
    choice(RECOMPUTE, recompute, "recompute option")
    get_dtype(dtype)  # an unknown dtype refused here
    b = _positive(batch, "the batch size")
    s = (
        _positive(seq_len, "the sequence length")
        if seq_len is not None
        else (S.L_tgt if spec.family == "encoder-decoder" else S.L)
    )
    src = None
    if spec.family == "encoder-decoder":
        src = (
            _positive(src_len, "the source length") if src_len is not None else (s if seq_len is not None else S.L_src)
        )
    spec.check_workload(memory=True)  # a per-layer attention pattern, an audio encoder's activations
    if kv_dtype is None:
        kv_dtype = dtype if dtype in TRAINING_DTYPES or dtype == "fp8" else "bf16"
    get_dtype(kv_dtype)
    params = closed_form(build(spec).params)
    act_dtype = dtype if dtype in TRAINING_DTYPES else "bf16"
    a = DTYPES[act_dtype].bytes
    per_token = kv_cache_per_token(spec, kv_dtype)
    out: dict[str, sp.Expr] = {}
    if mode == "training":
        out.update(model_state_bytes(params, dtype, optimizer, zero_stage, dp))
        per_layer, acts = training_saved_bytes(spec, b, s, a, recompute, flash_attention, dropout, src)
        out["activations_bytes"] = acts
        out["kv_cache_bytes"] = sp.Integer(0)
        out["kv_cache_bytes_per_token"] = per_token
        out["state_bytes_per_sequence"] = state_bytes_per_sequence(spec, kv_dtype)
        out["total_bytes"] = out["weights_bytes"] + out["gradients_bytes"] + out["optimizer_bytes"] + acts
        out["activations_bytes_per_layer"] = per_layer
        out["margin_bytes"] = sp.Integer(0)
    else:
        m = margin if isinstance(margin, sp.Basic) else fraction(margin, "the margin", upper=None, allow_zero=True)
        if not m.is_Rational or m < 0:
            raise InputError(f"the margin must be a non-negative fraction, not {margin}")
        out["weights_bytes"] = inference_weights_bytes(spec, dtype, quantization, params)
        out["gradients_bytes"] = sp.Integer(0)
        out["optimizer_bytes"] = sp.Integer(0)
        keep_scores = eager_attention and not flash_attention
        per_layer, logits = inference_saved_bytes(spec, b, s, a, keep_scores, src)
        out["activations_bytes"] = per_layer + logits
        out["kv_cache_bytes"] = kv_cache_bytes(spec, b, s, kv_dtype, src)
        out["kv_cache_bytes_per_token"] = per_token
        out["state_bytes_per_sequence"] = state_bytes_per_sequence(spec, kv_dtype)
        base = out["weights_bytes"] + out["kv_cache_bytes"] + out["activations_bytes"]
        out["margin_bytes"] = sp.ceiling(m * base)  # rounded up to a whole byte, and said so in the docstring
        out["total_bytes"] = base + out["margin_bytes"]
        out["activations_bytes_per_layer"] = per_layer
    return {k: v if v.has(sp.Min, sp.Max, sp.ceiling) else closed_form(sp.expand(v)) for k, v in out.items()}
