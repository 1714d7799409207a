"""DeepSeek-V4's attention layers as three layer kinds, and its hyper-connections (mHC).

Source: DeepSeek-AI 2026, "DeepSeek-V4" §2.2 (manifold-constrained hyper-connections), §2.3.1
(compressed sparse attention, CSA: compression rate m, lightning indexer, grouped output
projection), §2.3.2 (heavily compressed attention, HCA: rate m'); transformers 5.24
``models/deepseek_v4/modeling_deepseek_v4.py``, whose shapes are counted here.

Every layer's attention (``DeepseekV4Attention``), whatever its kind, holds (no biases):

* ``q_a_proj`` d_model x r_q, ``q_a_norm`` RMS(r_q), ``q_b_proj`` r_q x h*d_k (queries; the
  per-head norm after it has no weights);
* ``kv_proj`` d_model x d_k and ``kv_norm`` RMS(d_k): one key that is also the value (shared-KV
  multi-query attention);
* the grouped low-rank output projection: ``o_a_proj`` maps each of g_o groups of h*d_k/g_o
  features to r_o (g_o*r_o x h*d_k/g_o weights, so h*d_k*r_o in all), then ``o_b_proj``
  g_o*r_o x d_model;
* ``sinks``: one learned logit per head (h).

Kinds (``layer_types``; one count symbol each, ``kinds``):

* ``v4_swa`` (sliding_attention): the attention alone;
* ``v4_csa`` (compressed_sparse_attention, count N_csa): plus ``DeepseekV4CSACompressor``, two
  overlapping series per token: ``kv_proj`` and ``gate_proj`` d_model x 2*d_k, ``position_bias``
  m_csa x 2*d_k, ``kv_norm`` RMS(d_k); and its ``DeepseekV4Indexer`` at width d_idx: ``kv_proj``
  and ``gate_proj`` d_model x 2*d_idx, ``position_bias`` m_csa x 2*d_idx, ``kv_norm`` RMS(d_idx),
  ``q_b_proj`` r_q x h_idx*d_idx (from the query latent) and ``weights_proj`` d_model x h_idx;
* ``v4_hca`` (heavily_compressed_attention, count N_hca): plus ``DeepseekV4HCACompressor``, one
  series: ``kv_proj`` and ``gate_proj`` d_model x d_k, ``position_bias`` m_hca x d_k,
  ``kv_norm`` RMS(d_k).

Hyper-connections (``DeepseekV4HyperConnection``, with n_hc = ``hc_mult`` residual streams):
each layer has two (``attn_hc``, ``ffn_hc``), each ``fn`` (2 + n_hc)*n_hc x n_hc*d_model, ``base``
(2 + n_hc)*n_hc and ``scale`` 3; the model has one ``hc_head`` (``DeepseekV4HyperHead``) before
its final norm: ``hc_fn`` n_hc x n_hc*d_model, ``hc_base`` n_hc, ``hc_scale`` 1.  The stack adds
them where the spec has n_hc (``stack.hybrid_layers``, ``architectures``).

Cache (``cache_steps``, ``Step.held``; ``memory.kv_cache_bytes`` sums them): what transformers
5.24's cache holds for one sequence after T tokens (``DynamicCache`` of a ``DeepseekV4Config``:
``DynamicSlidingWindowLayer``, ``DeepseekV4CSACache``, ``DeepseekV4HCACache``), at b bytes per
element of the model's dtype, w the ``sliding_window``:

* every layer keeps the last min(T, w - 1) keys of its window (d_k each); a ``v4_swa`` layer's
  ``DynamicSlidingWindowLayer`` stores its values as a second tensor, a CSA or HCA layer's cache
  makes the values the keys' own tensor (one copy): 2*d_k or d_k per kept position;
* a ``v4_hca`` layer: floor(T/m_hca) compressed entries of d_k (``compressed_kv``), and the
  T mod m_hca tokens of the window still open, kv and gate of d_k each (``buffer_kv``,
  ``buffer_gate``);
* a ``v4_csa`` layer: floor(T/m_csa) compressed entries of d_k (compressor) and of d_idx (indexer);
  the T mod m_csa open tokens, kv and gate of 2*d_k and 2*d_idx (both series); and, once a window
  has closed (T >= m_csa), the last window's first series (``overlap_kv``, m_csa x (d_k + d_idx) at b
  bytes) and its gate logits plus the position bias (``overlap_gate``, the same count at 4 bytes: the
  fp32 ``position_bias`` makes the sum fp32 whatever the model's dtype).

Forward FLOPs (``flops``/``macs`` convention, ``--mask full``; ``mixer_rules.V4_FLOPS``), as the
eager implementation computes them over B sequences of T tokens, with T_c = floor(T/m) compressed
entries of the layer's compressor (0 for ``v4_swa``): the maps above, 2 x tokens x weights each
(the grouped ``o_a_proj`` 2 x tokens x h*d_k*r_o); every query's scores and weighted values
against all T keys and the T_c entries, 4*B*h*T*(T + T_c)*d_k (``eager_attention_forward``: the
sliding window, the causal mask and the indexer's top-k only mask this full square); the
indexer's scores 2*B*T*h_idx*d_idx*T_c (``DeepseekV4IndexerScorer``; its head-weighted sum and
top-k are elementwise); each hyper-connection's ``fn`` 2*tokens*(2 + n_hc)*n_hc*n_hc*d_model and
its comb mix 2*tokens*n_hc^2*d_model (``comb^T @ streams`` in ``DeepseekV4DecoderLayer``).
Prefill (``flops.prefill_expr``) is this forward over the L_pre prompt tokens, the cache
returning all of them to eager attention, with the LM head on the last token only (``logits_to_keep=1``).

Training (``flops --mode backward/training``; ``Step.grad``): a training step's backward runs the
gradients of every product the loss reaches, 2 x its forward, except:

* the lightning indexer (``DeepseekV4Indexer``: its compressor's kv_proj and gate_proj, q_b_proj,
  ``DeepseekV4IndexerScorer``'s weights_proj and scores) returns ``topk(...).indices``, integers that
  ``DeepseekV4CSACompressor.forward`` only scatters into the additive ``block_bias``: no gradient
  reaches any of it, so its backward is 0 (forward FLOPs only);
* a CSA or HCA compressor's kv_proj and gate_proj before its first window closes (L < m): with no
  window, ``DeepseekV4HCACompressor.forward`` and ``DeepseekV4CSACompressor.forward`` return
  ``chunk_kv.new_zeros(...)``, cut from the maps, so their backward is 0; from L >= m on their
  compressed entries join the keys, 2 x forward.  ``Step.grad`` = Min(1, floor(L/m)).

Activation recomputation is refused (``mixer_rules.v4_flops``): transformers' checkpointing of
``DeepseekV4DecoderLayer`` does not recompute all of its forward.

Decode (``flops --mode decode``; ``flops.decode_expr``): the step of one new token at context c (the
c - 1 cached tokens and itself) runs the maps above on one token per sequence; its query scores the
Min(c, w) window keys ``DynamicSlidingWindowLayer.update`` / ``DeepseekV4HCACache.update`` return
(the w - 1 kept and its own) plus the floor(c/m) compressed entries (``update_compressor_states``;
closing a window is element-wise), the indexer's query floor(c/m_csa) entries.  The sum over
c = L_pre + 1 .. L_pre + T_gen is closed term by term (``decode_sum``).

Checked against FlopCounterMode on transformers 5.24's eager model (tests/test_deepseek_v4.py):
forwards, training steps (``loss.backward()``), prefills and decode steps with the cache.  Other
masks and conventions, time and a KV cache per token (which this cache has not) are refused in one
line (``mixer_rules.v4_flops``, ``mixer_rules.V4_WORKLOAD_REFUSAL``).
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from symtrans.engine import symbols as S
from symtrans.engine.cost import ATTENTION, DENSE, SEQ, Cost, Matrix, Step
from symtrans.engine.kinds import LayerKind
from symtrans.engine.primitives import expr_text, linear, norm
from symtrans.engine.roles import Block, Role
from symtrans.engine.spec import Spec

SOURCE = "DeepSeek-AI 2026 (DeepSeek-V4) §2.3; DeepseekV4Attention (transformers 5.24)"
HC_SOURCE = "DeepSeek-AI 2026 (DeepSeek-V4) §2.2; DeepseekV4HyperConnection (transformers 5.24)"


def _vector(label: str, role: Role, params: sp.Expr, note: str, source: str) -> Step:
    return Step(label=label, role=role, params=params, note=note, source=source)


def _attention_core(spec: Spec, tokens: sp.Expr) -> list[Step]:
    """The maps every DeepSeek-V4 attention layer holds (module docstring)."""
    steps = linear(
        "W_DQ", S.d_model, S.r_q, tokens, False, SOURCE, "query down-projection (q_a_proj)", role=Role.Q_DOWN
    )
    steps += norm(spec, "query latent norm", S.r_q, tokens, Role.LATENT_NORM)
    steps += linear(
        "W_UQ", S.r_q, S.h * S.d_k, tokens, False, SOURCE, "query up-projection, h heads of d_k (q_b_proj)",
        role=Role.Q_UP,
    )  # fmt: skip
    steps += linear(
        "W_KV", S.d_model, S.d_k, tokens, False, SOURCE,
        "one key per token, also the value (kv_proj: shared-KV multi-query attention)", role=Role.K_PROJ,
    )  # fmt: skip
    steps += norm(spec, "key-value norm", S.d_k, tokens, Role.LATENT_NORM)
    o_a = linear(
        "W_OA", S.h * S.d_k / S.g_o, S.g_o * S.r_o, tokens, False, SOURCE,
        "grouped output projection: each of g_o groups of h*d_k/g_o features to r_o (o_a_proj)",
        role=Role.O_PROJ, factor=1,
    )  # fmt: skip
    # a block-diagonal map: the stored (g_o*r_o, h*d_k/g_o) weight, applied group by group
    o_a[0] = replace(
        o_a[0],
        flops=2 * tokens * S.h * S.d_k * S.r_o,
        weights=S.h * S.d_k * S.r_o,
        shape="g_o x (tokens x h*d_k/g_o) . (h*d_k/g_o x r_o)",
    )
    steps += o_a
    steps += linear(
        "W_OB", S.g_o * S.r_o, S.d_model, tokens, False, SOURCE, "mixes the g_o*r_o group outputs (o_b_proj)",
        role=Role.O_PROJ, factor=2,
    )  # fmt: skip
    steps.append(_vector("attention sinks", Role.ATTENTION_SINKS, S.h, "one learned logit per head (sinks)", SOURCE))
    return steps


def _compressor(
    spec: Spec, tokens: sp.Expr, width: sp.Expr, series: int, rate: sp.Expr, what: str, grad: sp.Expr
) -> list[Step]:
    """A KV compressor of ``series`` series of ``width`` (kv_proj, gate_proj, position_bias, kv_norm),
    its products differentiated ``grad`` times (``Step.grad``; module docstring, Training)."""
    out = series * width
    steps = linear(
        f"{what} W_KV", S.d_model, out, tokens, False, SOURCE, f"{what}: the entries to compress (kv_proj)",
        role=Role.COMPRESSOR,
    )  # fmt: skip
    steps += linear(
        f"{what} W_gate", S.d_model, out, tokens, False, SOURCE, f"{what}: their softmax gate logits (gate_proj)",
        role=Role.COMPRESSOR,
    )  # fmt: skip
    steps.append(
        Step(
            label=f"{what} position bias",
            role=Role.COMPRESSOR,
            params=rate * out,
            note=f"{what}: a learned gate bias per position in the window of {sp.sstr(rate)} tokens (position_bias)",
            source=SOURCE,
            matrices=(Matrix(sp.Integer(1), rate, out),),
        )
    )
    steps += norm(spec, f"{what} norm", width, tokens, Role.COMPRESSOR)
    return [replace(st, grad=grad) for st in steps]


def _indexer(spec: Spec, tokens: sp.Expr) -> list[Step]:
    """DeepseekV4Indexer: its compressor, queries and head weights; no gradient reaches any of
    them (it returns integer top-k indices: module docstring, Training)."""
    steps = _compressor(spec, tokens, S.d_idx, 2, S.m_csa, "indexer compressor", sp.Integer(0))
    steps += linear(
        "W_IQ", S.r_q, S.h_idx * S.d_idx, tokens, False, SOURCE, "indexer queries from the query latent (q_b_proj)",
        role=Role.INDEXER_Q,
    )  # fmt: skip
    steps += linear(
        "W_IW", S.d_model, S.h_idx, tokens, False, SOURCE, "a weight per indexer head and token (weights_proj)",
        role=Role.INDEXER_WEIGHTS,
    )  # fmt: skip
    return [replace(st, grad=sp.Integer(0)) for st in steps]


def hyper_connection(tokens: sp.Expr, label: str) -> Cost:
    """One DeepseekV4HyperConnection over n_hc streams of d_model (module docstring)."""
    rows = (2 + S.n_hc) * S.n_hc
    steps = [
        Step(
            label=f"{label} W_fn",
            role=Role.HYPER_CONNECTION,
            params=rows * S.n_hc * S.d_model,
            flops=2 * tokens * rows * S.n_hc * S.d_model,
            weights=rows * S.n_hc * S.d_model,
            kind=DENSE,
            shape="(tokens x n_hc*d_model) . (n_hc*d_model x (2 + n_hc)*n_hc)",
            note="the pre, post and comb mixing weights from the flattened streams (fn)",
            source=HC_SOURCE,
            matrices=(Matrix(sp.Integer(1), rows, S.n_hc * S.d_model),),
        ),
        _vector(f"{label} base", Role.HYPER_CONNECTION, rows, "their biases (base)", HC_SOURCE),
        _vector(f"{label} scale", Role.HYPER_CONNECTION, sp.Integer(3), "pre, post, comb scales (scale)", HC_SOURCE),
        Step(
            label=f"{label} comb mix",
            role=Role.HYPER_CONNECTION,
            flops=2 * tokens * S.n_hc * S.n_hc * S.d_model,
            kind=ATTENTION,
            shape="tokens x (n_hc x n_hc) . (n_hc x d_model)",
            note="comb^T times the n_hc residual streams (DeepseekV4DecoderLayer's torch.matmul)",
            source=HC_SOURCE,
        ),
    ]
    return Cost(name=label, block=Block.OTHER, steps=tuple(steps), source=HC_SOURCE)


def hyper_head(tokens: sp.Expr) -> Cost:
    """DeepseekV4HyperHead: collapses the n_hc streams before the final norm."""
    steps = [
        Step(
            label="hc_head W_fn",
            role=Role.HYPER_CONNECTION,
            params=S.n_hc * S.n_hc * S.d_model,
            flops=2 * tokens * S.n_hc * S.n_hc * S.d_model,
            weights=S.n_hc * S.n_hc * S.d_model,
            kind=DENSE,
            shape="(tokens x n_hc*d_model) . (n_hc*d_model x n_hc)",
            note="the weights that collapse the n_hc streams into one (hc_fn)",
            source=HC_SOURCE,
            matrices=(Matrix(sp.Integer(1), S.n_hc, S.n_hc * S.d_model),),
        ),
        _vector("hc_head base", Role.HYPER_CONNECTION, S.n_hc, "their biases (hc_base)", HC_SOURCE),
        _vector("hc_head scale", Role.HYPER_CONNECTION, sp.Integer(1), "their scale (hc_scale)", HC_SOURCE),
    ]
    return Cost(name="hyper-connection head", block=Block.OTHER, steps=tuple(steps), source=HC_SOURCE)


def _scores(batch: sp.Expr, q: sp.Expr, keys: sp.Expr) -> list[Step]:
    """eager_attention_forward over the window's keys and the compressed entries: every query
    against all ``keys`` (the full square eager computes; the sliding window, the causal mask and the
    indexer's top-k only mask it), h heads of d_k, one key tensor that is also the value."""
    pairs = q * keys
    return [
        Step(
            label="Q K^T",
            role=Role.ATTENTION_SCORES,
            flops=2 * batch * S.h * pairs * S.d_k,
            kind=ATTENTION,
            shape=f"h x ({expr_text(q)} x d_k) . (d_k x {expr_text(keys)})",
            note="scores of every query against the L keys and the compressed entries (masked, not skipped)",
            source=SOURCE,
        ),
        Step(
            label="scores V",
            role=Role.ATTENTION_VALUES,
            flops=2 * batch * S.h * pairs * S.d_k,
            kind=ATTENTION,
            shape=f"h x ({expr_text(q)} x {expr_text(keys)}) . ({expr_text(keys)} x d_k)",
            note="weighted sum of the values (the keys' own tensor), per head",
            source=SOURCE,
        ),
    ]


def _index_scores(batch: sp.Expr, q: sp.Expr, entries: sp.Expr) -> Step:
    """DeepseekV4IndexerScorer: every query's h_idx heads against all floor(L/m_csa) indexer entries."""
    return Step(
        label="index scores",
        role=Role.INDEXER_SCORES,
        flops=2 * batch * S.h_idx * q * entries * S.d_idx,
        kind=ATTENTION,
        shape=f"h_idx x ({expr_text(q)} x d_idx) . (d_idx x {expr_text(entries)})",
        note="ReLU(q k^T) of every indexer head against every compressed entry; the head-weighted sum and the "
        "top-k are elementwise (0 FLOPs)",
        source=SOURCE,
    )


class _V4Attention(LayerKind):
    block = Block.CAUSAL_SELF_ATTENTION
    compressor = ""

    @classmethod
    def mixer(cls, spec, batch, q, context, mask, decode):
        """``q`` new tokens of each of ``batch`` sequences, ``context`` tokens so far (the new ones
        included).  A whole sequence (q = context = L) scores all L keys; a decode step (q = 1,
        ``decode``) scores the Min(context, w) keys its window cache returns.  Both also score the
        floor(context/m) compressed entries (module docstring, Forward and Decode)."""
        t = batch * q
        steps = _attention_core(spec, t)
        entries = sp.Integer(0)  # compressed entries the layer's queries also score
        if cls.compressor == "csa":
            entries = sp.floor(context / S.m_csa)
            steps += _compressor(spec, t, S.d_k, 2, S.m_csa, "CSA compressor", sp.Min(1, entries))
            steps += _indexer(spec, t)
            steps.append(_index_scores(batch, q, entries))
        elif cls.compressor == "hca":
            entries = sp.floor(context / S.m_hca)
            steps += _compressor(spec, t, S.d_k, 1, S.m_hca, "HCA compressor", sp.Min(1, entries))
        keys = sp.Min(context, S.w) if decode else context  # mixer_rules.v4_flops: decode needs w
        steps += _scores(batch, q, keys + entries)
        if spec.has("w"):  # the cache needs the window (memory refuses without it)
            steps += cache_steps(cls.name)
        return Cost(name=cls.title, block=cls.block, steps=tuple(steps), source=SOURCE)


class V4SlidingAttention(_V4Attention):
    """DeepSeek-V4 sliding_attention: the shared-KV attention over a window, no compressor."""

    name = "v4_swa"
    title = "DeepSeek-V4 sliding-window attention"


class V4CompressedSparseAttention(_V4Attention):
    """DeepSeek-V4 compressed_sparse_attention: plus the CSA compressor and its lightning indexer."""

    name = "v4_csa"
    title = "DeepSeek-V4 compressed sparse attention"
    compressor = "csa"


class V4HeavilyCompressedAttention(_V4Attention):
    """DeepSeek-V4 heavily_compressed_attention: plus the HCA compressor."""

    name = "v4_hca"
    title = "DeepSeek-V4 heavily compressed attention"
    compressor = "hca"


def _held(label: str, held: sp.Expr, fp32: sp.Expr = sp.Integer(0)) -> Step:
    return Step(
        label=label, role=Role.CACHE_STATE, held=held, held_fp32=fp32, note=f"{label} (cache)", source=CACHE_SOURCE
    )


CACHE_SOURCE = "DeepseekV4CSACache / DeepseekV4HCACache / DynamicSlidingWindowLayer (transformers 5.24)"


def cache_steps(name: str) -> list[Step]:
    """What one layer of kind ``name`` keeps in transformers' cache for one sequence after
    ``cost.SEQ`` = T tokens (module docstring, Cache): ``Step.held`` elements at the model's
    dtype and ``Step.held_fp32`` elements at fp32.

    Shapes: the window's keys (1, 1, min(T, w - 1), d_k); ``compressed_kv`` (1, floor(T/m), d);
    ``buffer_kv``/``buffer_gate`` (1, T mod m, series*d); ``overlap_kv``/``overlap_gate`` (1, m, d).
    Units: elements (floor and Mod in SymPy; exact at integer T).  Source: ``CACHE_SOURCE``.
    """
    t = SEQ
    window = sp.Min(t, S.w - 1)
    if name == "v4_swa":  # DynamicSlidingWindowLayer: keys and values, two tensors
        return [_held("window keys and values", 2 * S.d_k * window)]
    steps = [_held("window keys, also the values", S.d_k * window)]  # values is keys' tensor
    if name == "v4_hca":
        entries = S.d_k * sp.floor(t / S.m_hca)
        return steps + [_held("HCA compressed entries and open window", entries + 2 * S.d_k * sp.Mod(t, S.m_hca))]
    width = S.d_k + S.d_idx  # the compressor's and the indexer's
    closed = sp.Min(1, sp.floor(t / S.m_csa))  # the overlap state exists once a window has closed
    held = width * sp.floor(t / S.m_csa) + 2 * 2 * width * sp.Mod(t, S.m_csa) + closed * S.m_csa * width
    return steps + [_held("CSA compressed entries, open window and overlap", held, closed * S.m_csa * width)]


def _running_sums(c: sp.Symbol, x: sp.Expr) -> dict[sp.Expr, sp.Expr]:
    """What a decode step at context ``c`` reads, each with its sum over c = 1..x (integer x >= 0):
    the window's keys Min(c, w), sum M(M + 1)/2 + (x - M)*w with M = Min(x, w); the compressed
    entries floor(c/m), sum m*q*(q - 1)/2 + q*(x - m*q + 1) with q = floor(x/m) (blocks 0..q - 1
    of m values each, then the x - m*q + 1 values c = m*q..x of floor q)."""
    M = sp.Min(x, S.w)
    out = {sp.Min(c, S.w): M * (M + 1) / 2 + (x - M) * S.w}
    for m in (S.m_csa, S.m_hca):
        q = sp.floor(x / m)
        out[sp.floor(c / m)] = m * q * (q - 1) / 2 + q * (x - m * q + 1)
    return out


def decode_sum(step: sp.Expr, c: sp.Symbol, first: sp.Expr, n: sp.Expr) -> sp.Expr:
    """The sum of ``step``, the FLOPs of one decode step at context ``c`` (the tokens so far, the
    new one included), over the n steps at c = first + 1 .. first + n, in closed form.

    The step is A + K_w*Min(c, w) + K_csa*floor(c/m_csa) + K_hca*floor(c/m_hca) with A and the K
    free of c (module docstring, Decode); each term sums as the difference of its running sums
    (``_running_sums``) at first + n and at first.

    Raises:
        InputError: a step not of that form (one line).
    """
    from symtrans.base.errors import InputError

    reads = _running_sums(c, c)
    dummies = {atom: sp.Dummy(f"x{i}") for i, atom in enumerate(reads)}
    e = sp.expand(step.xreplace(dummies))
    coeffs = {atom: sp.expand(sp.diff(e, x)) for atom, x in dummies.items()}
    rest = sp.expand(e - sp.Add(*[coeffs[a] * x for a, x in dummies.items()]))
    if any(k.has(c, *dummies.values()) for k in coeffs.values()) or rest.has(c, *dummies.values()):
        raise InputError("a DeepSeek-V4 decode step is not linear in its window keys and compressed entries")
    upper, lower = _running_sums(c, first + n), _running_sums(c, first)
    return n * rest + sp.Add(*[k * (upper[a] - lower[a]) for a, k in coeffs.items()])
