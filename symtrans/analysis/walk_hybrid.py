"""The shape walk of a stack of layer kinds (``Spec.mixers``: Jamba, Qwen3-Next, Falcon-H1, Zamba2,
Nemotron-H, Granite 4.0-H, Bamba, LFM2, Mamba, Mamba 2), with what each layer keeps.

Written from the reference PyTorch forwards of transformers 5.24 (``MambaMixer.slow_forward``,
``Mamba2Mixer.torch_forward``, ``torch_chunk_gated_delta_rule``, ``Lfm2ShortConv.slow_forward``),
independently of ``engine/ssm.py``, ``engine/deltanet.py`` and ``engine/shortconv.py``: every
matrix product of those forwards is a step whose FLOPs follow from its shapes (``walk.matmul_flops``),
and every tensor a layer leaves in transformers' cache is a step of kind ``cache`` (elements per
token: an attention layer's K and V) or ``state`` (elements per sequence, whatever its length: a
convolution window, an SSM or delta-rule state), its shape without the batch.

* Causal depthwise Conv1d of width d_conv over c channels: the input zero-padded by d_conv - 1,
  q + d_conv - 1 output positions (the extra ones dropped), each a d_conv-tap dot product per
  channel; its state is the last d_conv inputs, (c, d_conv).
* Mamba 1 (Gu & Dao 2023, Algorithm 2): in_proj, conv1d, x_proj, dt_proj, the sequential scan
  whose read-out y_t = h_t C_t is one (d_inner x d_state) . (d_state x 1) product per token,
  out_proj; state (d_inner, d_state).
* Mamba 2 (Dao & Gu 2024 §6, the chunked SSD of ``torch_forward``) over n_c = ceiling(q / L_chunk)
  chunks (zero-padded): per chunk and head C B^T (L_chunk x d_state x L_chunk), its product with
  x, the chunk state B^T x, the recurrence over the n_c + 1 chunk states ((n_c + 1) x (n_c + 1)
  decays times the states), the read-out C h; state (h_ssm, d_inner / h_ssm, d_state).
* Gated DeltaNet (Yang et al. 2024 §3.2; ``torch_chunk_gated_delta_rule``) over ceiling(q / C)
  chunks of C = L_chunk (64 by default), keys and queries repeated to the h_lv value heads: per
  head and chunk K_beta K^T, Q K^T, the old state read by the decayed keys and by the queries,
  the intra-chunk attention times the new values, the state update K^T V_new; the two triangular
  solves are not matrix products (torch.linalg.solve_triangular); state (h_lv, d_lk, d_lv).
* LFM2's short convolution: in_proj (d_model -> 3 d_model), conv1d over d_model channels,
  out_proj; state (d_model, d_conv).
* Zamba2's hybrid layer (``Zamba2HybridLayer``, ``Zamba2AttentionDecoderLayer``, ``Zamba2MLP``):
  the layer input concatenated with the token embeddings (2 d_model wide), its norm, attention
  with q/k/v_proj 2 d_model -> h d_k, h_kv d_k, h_kv d_k (plus, with the shared attention adapter,
  a rank-r_adp map 2 d_model -> r_adp -> 2 d_model added to each), scores and values over d_k,
  o_proj h d_k -> d_model, the feed-forward norm, gate_up_proj d_model -> 2 d_ff plus its adapter
  d_model -> r_adp -> 2 d_ff, down_proj d_ff -> d_model, the layer's ``linear`` d_model ->
  d_model, added to the input of its Mamba 2 mixer; it keeps K and V (h_kv, d_k) per token and
  the Mamba 2 states.
* Gemma 4 (``Gemma4TextAttention``, ``Gemma4TextDecoderLayer``, ``Gemma4TextModel``): a
  full-attention layer (``global_attention``) maps d_model -> h d_kg queries and h_kvg d_kg keys
  (and values, unless ``attention_k_eq_v``: the keys serve as values and the cache holds them
  twice); the KV-sharing tail (``shared_attention``, ``shared_global_attention``) maps only its
  queries and its output, reading an earlier layer's keys and values (nothing kept); sliding
  layers are the walk's attention within w.  Each feed-forward half runs the GeGLU MLP (2 d_ff
  wide in the KV-sharing layers with ``use_double_wide_mlp``), the experts beside it (router
  d_model -> E, k experts of d_ff_e per token) and the per-layer input (gate d_model -> d_ple,
  projection d_ple -> d_model); before the stack, the per-layer table (a lookup) and
  per_layer_model_projection d_model -> N d_ple.
* DeepSeek Sparse Attention (DeepSeek-V3.2 §2.1; ``DeepseekV32Attention``, ``DeepseekV32Indexer``):
  the walk's MLA, each query reading min(p, k_idx) keys under ``causal`` (a window of k_idx) and
  the dense square under ``full`` (eager attention masks the top-k), then the lightning indexer:
  wq_b r_q -> h_idx d_idx from the query latent, wk d_model -> d_idx, weights_proj d_model ->
  h_idx, the scores (h_idx x d_idx per causal pair) and their head-weighted sum (h_idx per pair);
  it keeps r_kv + d_rope (the latent, the rotary key) and d_idx (the indexer key) per token.

Bytes are elements x the dtype's bytes; tests/test_kv_cache_real.py compares them with the
tensors transformers' cache holds after a real forward of each hybrid type's tiny model.
"""

from __future__ import annotations

from typing import Any, Callable

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.engine import symbols as S
from symtrans.engine.components import dims
from symtrans.engine.cost import Cost
from symtrans.engine.roles import Block, Role
from symtrans.engine.spec import Spec

WALKED = (
    "attention",
    "mamba",
    "mamba2",
    "gated_deltanet",
    "short_conv",
    "mlp",
    "moe",
    "attention_mamba2",
    "zamba2_hybrid",
    "global_attention",
    "shared_attention",
    "shared_global_attention",
    "dsa",
)
GEMMA4_KINDS = ("global_attention", "shared_attention", "shared_global_attention")
DELTA_CHUNK = 64  # transformers' torch_chunk_gated_delta_rule and fla chunk by 64 unless told


def tree_kinds(stack: Cost) -> list[tuple[str, sp.Expr]]:
    """(kind, layers) of a stack of layer kinds, as its Cost tree states them: the ``Cost.kind`` and
    multiplicity of each ``Block.LAYER`` node, in the stack's order (the first kind has the N
    layers the others leave)."""
    return [(c.kind, c.multiplicity) for c in stack.children if c.block == Block.LAYER]


def ffn_halves(stack: Cost) -> list[tuple[sp.Expr, bool, bool, bool]]:
    """(layers, MoE, MLP, per-layer input) of the feed-forward halves of a stack of layer kinds, as
    its Cost tree states them: each ``Block.FFN_SUBLAYER`` node's multiplicity, whether it holds a
    ``Block.MOE`` block, whether it runs a dense MLP (a ``Block.FFN`` child, or no MoE: Gemma 4 runs
    both) and Gemma 4's per-layer input (a step of role PLE_GATE); none for a stack of mixers only."""
    out = []
    for c in stack.children:
        if c.block != Block.FFN_SUBLAYER:
            continue
        is_moe = any(True for _ in c.blocks_of(Block.MOE))
        mlp = not is_moe or any(ch.block == Block.FFN for ch in c.children)
        ple = any(node.step.role == Role.PLE_GATE for node in c.nodes())
        out.append((c.multiplicity, is_moe, mlp, ple))
    return out


def _wide_ffn(b: Any, spec: Spec, st: str, x: tuple, n: sp.Expr, ffn: Callable) -> None:
    """The MLP at 2 d_ff (Gemma 4's use_double_wide_mlp in its KV-sharing layers)."""
    g = b.linear(st, "G = X W_gate (2 d_ff)", x, S.d_model, 2 * S.d_ff, n, "use_double_wide_mlp")
    b.linear(st, "U = X W_up (2 d_ff)", x, S.d_model, 2 * S.d_ff, n)
    b.op(st, "act(G) * U", [g, g], g, n)
    b.linear(st, "Y = (act(G) * U) W_down", g, 2 * S.d_ff, S.d_model, n)


def _conv(b: Any, st: str, B: sp.Expr, q: sp.Expr, channels: sp.Expr, n: sp.Expr) -> None:
    windows = (B, channels, q + S.d_conv - 1, S.d_conv)
    b.op(st, "pad by d_conv - 1, windows of d_conv taps per channel", [], windows, n, kind="reshape")
    b.mm(st, "conv1d: windows . taps (depthwise)", windows, (B, channels, S.d_conv, 1), n, "causal Conv1d")
    b.op(st, "conv state: the last d_conv inputs per channel", [], (channels, S.d_conv), n, kind="state")


def _mamba(b: Any, spec: Spec, st: str, x: tuple, n: sp.Expr) -> None:
    B, q, _ = x
    di, ds, r = S.d_inner, S.d_state, S.dt_rank
    b.linear(st, "[x, z] = X W_in", x, S.d_model, 2 * di, n)
    _conv(b, st, B, q, di, n)
    xs = (B, q, di)
    b.linear(st, "[dt, B, C] = x W_x", xs, di, r + 2 * ds, n)
    b.linear(st, "dt = dt W_dt", (B, q, r), r, di, n)
    b.op(st, "discretise, update h_t = exp(dt A) h_(t-1) + dt B_t x_t", [], (B, q, di, ds), n)
    b.mm(st, "y_t = h_t C_t (each token)", (B, q, di, ds), (B, q, ds, 1), n, "Gu & Dao 2023, Algorithm 2")
    b.op(st, "SSM state h", [], (di, ds), n, kind="state")
    b.op(st, "y + D x, times act(z)", [xs], xs, n)
    b.linear(st, "X' = y W_out", xs, di, S.d_model, n)


def _mamba2(b: Any, spec: Spec, st: str, x: tuple, n: sp.Expr) -> None:
    B, q, _ = x
    di, ds, h, g, c = S.d_inner, S.d_state, S.h_ssm, S.g_ssm, S.L_chunk
    p = di / h  # head width
    b.linear(st, "[z, x, B, C, dt] = X W_in", x, S.d_model, 2 * di + 2 * g * ds + h, n)
    _conv(b, st, B, q, di + 2 * g * ds, n)
    nc = sp.ceiling(q / c)
    b.op(st, "pad to n_c = ceiling(L / L_chunk) chunks; B, C repeated to h_ssm heads", [], (B, nc, c, h, p), n)
    cb = b.mm(st, "C B^T (within chunks)", (B, nc, h, c, ds), (B, nc, h, ds, c), n, "Dao & Gu 2024 §6")
    b.mm(st, "(L o C B^T) x", cb, (B, nc, h, c, p), n, "the diagonal blocks")
    b.mm(st, "chunk states B^T x", (B, nc, h, p, c), (B, nc, h, c, ds), n)
    b.mm(st, "chunk recurrence: decays . states", (B, h, nc + 1, nc + 1), (B, h, nc + 1, p * ds), n)
    b.mm(st, "y_off = C h (state read-out)", (B, nc, h, c, ds), (B, nc, h, ds, p), n)
    b.op(st, "SSM state h", [], (h, p, ds), n, kind="state")
    xs = (B, q, di)
    b.op(st, "y + D x, gated norm with z", [xs], xs, n)
    b.linear(st, "X' = y W_out", xs, di, S.d_model, n)


def _deltanet(b: Any, spec: Spec, st: str, x: tuple, n: sp.Expr) -> None:
    B, q, _ = x
    hk, hv, dk, dv = S.h_lk, S.h_lv, S.d_lk, S.d_lv
    c = S.L_chunk if spec.has("L_chunk") else sp.Integer(DELTA_CHUNK)
    b.linear(st, "[q, k, v, z] = X W_qkvz", x, S.d_model, 2 * hk * dk + 2 * hv * dv, n)
    b.linear(st, "[beta, a] = X W_ba", x, S.d_model, 2 * hv, n)
    _conv(b, st, B, q, 2 * hk * dk + hv * dv, n)
    nc = sp.ceiling(q / c)
    K = (B, hv, nc, c, dk)
    Kt = (B, hv, nc, dk, c)
    state = (B, hv, nc, dk, dv)  # the running state, one read per chunk
    b.op(st, "l2-norm q, k; repeat them to h_lv heads; pad to chunks of C", [], K, n)
    b.mm(st, "K_beta K^T (UT system)", K, Kt, n, "Yang et al. 2024 §3.2")
    b.mm(st, "Q K^T (intra-chunk attention)", K, Kt, n)
    b.op(st, "solve the two triangular systems (not matmuls)", [], (B, hv, nc, c, dv), n)
    b.mm(st, "k_cumdecay S (the old state read)", K, state, n)
    b.mm(st, "Q S (inter-chunk read)", K, state, n)
    b.mm(st, "A V_new (intra-chunk)", (B, hv, nc, c, c), (B, hv, nc, c, dv), n)
    b.mm(st, "S update K^T V_new", Kt, (B, hv, nc, c, dv), n)
    b.op(st, "delta-rule state S", [], (hv, dk, dv), n, kind="state")
    ys = (B, q, hv * dv)
    b.op(st, "gated RMSNorm with z", [ys], ys, n)
    b.linear(st, "X' = y W_out", ys, hv * dv, S.d_model, n)


def _short_conv(b: Any, spec: Spec, st: str, x: tuple, n: sp.Expr) -> None:
    B, q, d = x
    b.linear(st, "[B, C, x] = X W_in", x, S.d_model, 3 * S.d_model, n)
    b.op(st, "B * x", [x], x, n)
    _conv(b, st, B, q, S.d_model, n)
    b.op(st, "C * conv", [x], x, n)
    b.linear(st, "X' = y W_out", x, S.d_model, S.d_model, n)


def _zamba2_hybrid(b: Any, spec: Spec, st: str, x: tuple, mask: str, n: sp.Expr, kept_pairs: Callable) -> None:
    B, q, _ = x
    d2, dk, r = 2 * S.d_model, S.d_k, S.r_adp
    h = S.h
    h_kv = S.h_kv if spec.has("h_kv") else S.h
    x2 = b.op(st, "[X, E] (layer input beside the token embeddings)", [x, x], (B, q, d2), n, kind="reshape")
    b.op(st, "shared block input norm (2 d_model)", [x2], x2, n)
    projections = (("Q", h), ("K", h_kv), ("V", h_kv))
    for name, heads in projections:
        b.linear(st, f"{name} = [X, E] W_{name}", x2, d2, heads * dk, n, "Zamba2Attention, 2 d_model wide")
        if spec.shared_attention_adapter:
            a = b.linear(st, f"{name} adapter: [X, E] A_{name}", x2, d2, r, n, "LoRA adapter of this use (down)")
            b.linear(st, f"{name} adapter: . B_{name}, added to {name}", a, r, d2, n, "(up)")
    Q = b.op(st, "split heads; rotate Q and K (RoPE)", [], (B, h, q, dk), n, kind="reshape")
    K = b.op(st, "repeat K and V heads to h", [], (B, h, q, dk), n, kind="reshape")
    b.op(st, "K kept in the cache (per token)", [], (h_kv, dk), n, kind="cache")
    b.op(st, "V kept in the cache (per token)", [], (h_kv, dk), n, kind="cache")
    pairs = kept_pairs(q, q, mask, True)
    scores = b.mm(st, "S = Q K^T / sqrt(d_k)", Q, (B, h, dk, q), n, f"{mask} mask", pairs=pairs, masked="out")
    b.op(st, "A = softmax(mask(S))", [scores], scores, n)
    out = b.mm(st, "O = A V", scores, K, n, f"{mask} mask", pairs=pairs, masked="left")
    cat = b.op(st, "concatenate heads", [out], (B, q, h * dk), n, kind="reshape")
    y = b.linear(st, "O W_O (back to d_model)", cat, h * dk, S.d_model, n)
    b.op(st, "shared block feed-forward norm", [y], y, n)
    gu = b.linear(st, "[G, U] = Y W_gate_up", y, S.d_model, 2 * S.d_ff, n, "Zamba2MLP.gate_up_proj")
    a = b.linear(st, "MLP adapter: Y A", y, S.d_model, r, n, "LoRA adapter of this use (down)")
    b.linear(st, "MLP adapter: . B, added to [G, U]", a, r, 2 * S.d_ff, n, "(up)")
    hid = b.op(st, "act(G) * U", [gu], (B, q, S.d_ff), n)
    y = b.linear(st, "(act(G) * U) W_down", hid, S.d_ff, S.d_model, n)
    y = b.linear(st, "Y W_linear", y, S.d_model, S.d_model, n, "Zamba2HybridLayer.linear")
    b.op(st, "X + Y (the Mamba 2 mixer's input)", [x, y], x, n)
    _mamba2(b, spec, st, x, n)


def _gemma4_attention(b: Any, spec: Spec, st: str, x: tuple, mask: str, n: sp.Expr, kind: str, kept_pairs) -> None:
    """A Gemma 4 attention layer of ``kind`` (global_attention, shared_attention, shared_global_attention)."""
    B, q, _ = x
    D = dims(spec)
    wide = kind in ("global_attention", "shared_global_attention")
    own = kind == "global_attention"  # the shared tail reads an earlier layer's keys and values
    g = {S.d_k: S.d_kg, S.h_kv: S.h_kvg} if wide else {}
    # D.d_k and D.h_kv are engine values (engine.primitives.dims: the Symbols d_k, h_kv or the
    # expression d_model/h), never user text: sympify only makes a SymPy object of them for xreplace
    dk, h_kv = sp.sympify(D.d_k).xreplace(g), sp.sympify(D.h_kv).xreplace(g)
    h = D.h
    q_ = b.linear(st, "Q = X W_Q", x, S.d_model, h * dk, n)
    Q = b.op(st, "split heads, query norm, rotate Q (RoPE)", [q_], (B, h, q, dk), n, kind="reshape")
    K = (B, h_kv, q, dk)
    if own:
        b.linear(st, "K = X W_K", x, S.d_model, h_kv * dk, n)
        if spec.k_eq_v:
            b.op(st, "V = K (attention_k_eq_v: no v_proj)", [K], K, n, kind="reshape")
        else:
            b.linear(st, "V = X W_V", x, S.d_model, h_kv * dk, n)
        b.op(st, "key norm, value norm (no weights), rotate K", [K], K, n)
        b.op(st, "K kept in the cache (per token)", [], (h_kv, dk), n, kind="cache")
        b.op(st, "V kept in the cache (per token; the keys again under k_eq_v)", [], (h_kv, dk), n, kind="cache")
    else:
        b.op(st, "K, V of the last earlier layer of this type (nothing kept)", [], K, n, kind="reshape")
    K = b.op(st, "repeat K and V heads to h", [K], (B, h, q, dk), n, kind="reshape")
    pairs = kept_pairs(q, q, mask, True, S.w) if not wide else kept_pairs(q, q, mask, True)
    why = f"{mask} mask" + ("" if wide else ", window w")
    scores = b.mm(st, "S = Q K^T", Q, (B, h, dk, q), n, why, pairs=pairs, masked="out")
    b.op(st, "A = softmax(mask(S))", [scores], scores, n)
    out = b.mm(st, "O = A V", scores, K, n, why, pairs=pairs, masked="left")
    cat = b.op(st, "concatenate heads", [out], (B, q, h * dk), n, kind="reshape")
    b.linear(st, "X' = O W_O", cat, h * dk, S.d_model, n)
    b.op(st, "post-attention norm", [x], x, n)


def _per_layer_inputs(b: Any, x: tuple) -> None:
    B, q, _ = x
    st = "per-layer inputs"
    b.op(st, "per-layer table rows (embed_tokens_per_layer)", [], (B, q, S.N * S.d_ple), kind="lookup")
    p = b.linear(st, "X W_ple (per_layer_model_projection)", x, S.d_model, S.N * S.d_ple, note="Gemma4TextModel")
    b.op(st, "norm of each d_ple slice, add the table rows", [p], p)


def _per_layer_input(b: Any, st: str, x: tuple, n: sp.Expr) -> None:
    B, q, _ = x
    g = b.linear(st, "per-layer input gate: X W_gate", x, S.d_model, S.d_ple, n, "d_model -> d_ple")
    b.op(st, "act(gate) * this layer's per-layer input", [g], g, n)
    y = b.linear(st, "per-layer projection", g, S.d_ple, S.d_model, n, "d_ple -> d_model")
    b.op(st, "norm, residual add", [y, x], x, n)


def _indexer(b: Any, spec: Spec, st: str, x: tuple, mask: str, n: sp.Expr, kept_pairs: Callable) -> None:
    """DeepSeek-V3.2's lightning indexer (§2.1, eq. 1; ``DeepseekV32Indexer``) on the new tokens."""
    B, q, _ = x
    cq = (B, q, S.r_q)
    b.linear(st, "indexer queries C_Q W_IQ (from the MLA query latent)", cq, S.r_q, S.h_idx * S.d_idx, n)
    b.linear(st, "indexer key k = X W_IK (one per token, shared by the heads)", x, S.d_model, S.d_idx, n)
    b.op(st, "indexer key LayerNorm, rotate", [(B, q, S.d_idx)], (B, q, S.d_idx), n)
    w = b.linear(st, "indexer head weights X W_IW", x, S.d_model, S.h_idx, n)
    pairs = kept_pairs(q, q, mask, True)
    Qi = (B, S.h_idx, q, S.d_idx)
    s_ = b.mm(st, "indexer scores ReLU(q k^T)", Qi, (B, S.h_idx, S.d_idx, q), n, "every causal key", pairs, "out")
    b.mm(st, "head-weighted sum w . scores", w, (B, S.h_idx, q), n, "per (query, key) pair", pairs, "out")
    b.op(st, "top k_idx keys per query (a comparison)", [s_], (B, q, S.k_idx), n, kind="reshape")
    b.op(st, "indexer key kept in the cache (per token)", [], (S.d_idx,), n, kind="cache")


def hybrid_stack(
    b: Any,
    spec: Spec,
    stack: Cost,
    x: tuple,
    mask: str,
    attention: Callable[..., None],
    ffn: Callable[..., None],
    moe: Callable[..., None],
    kept_pairs: Callable[..., sp.Expr],
) -> None:
    """The layers of ``stack`` (the decoder's Cost, whose ``Block.LAYER`` nodes name their kinds
    and counts) on ``x`` = (B, L, d_model), a full forward (every position new): per kind, the
    input norm, its mixer, the residual add, repeated over its layers; then the feed-forward halves
    the tree has (N - N_moe dense and N_moe MoE, or all N of one kind, or none for Mamba); then the
    final norm.  ``attention(b, spec, st, x, kind, mask, n)``,
    ``ffn(b, spec, st, x, n)`` and ``moe(b, spec, st, x, n)`` are the walk's own steps,
    ``kept_pairs(q, kv, mask, causal)`` its row-by-row count of kept query-key pairs.

    Raises:
        InputError: a kind the walk does not trace (DeepSeek-V4's compressed and sliding attention).
    """
    kinds = tree_kinds(stack)
    for name, _ in kinds:
        if name not in WALKED:
            raise InputError(
                f"walk traces the layer kinds {', '.join(WALKED)}; this stack has {name} "
                "(params, flops and memory count it from its Cost tree)"
            )
    B, q, _ = x
    norms = spec.norm != "none"
    if any(c.block == Block.EMBEDDINGS for c in stack.children):  # Gemma 4's per-layer inputs
        _per_layer_inputs(b, x)
    for name, n in kinds:
        st = f"{name.replace('_', ' ')} layer x {sp.sstr(n)}"
        if norms:
            b.op(st, "input norm", [x], x, n)
        if name in ("attention", "attention_mamba2"):
            attention(b, spec, st, x, mask, n)
            D = dims(spec)
            per = "per token, the last w - 1 only" if spec.has("w") else "per token"  # Gemma 4's sliding layers
            if spec.mla:  # GLM-5's dense layers beside its DSA ones: MLA's latent and shared rotary key
                b.op(
                    st,
                    "latent C_KV and k_rope kept in the cache (per token)",
                    [],
                    (S.r_kv + S.d_rope,),
                    n,
                    kind="cache",
                )
            else:
                b.op(st, f"K kept in the cache ({per})", [], (D.h_kv, D.d_k), n, kind="cache")
                b.op(st, f"V kept in the cache ({per})", [], (D.h_kv, D.d_v), n, kind="cache")
        if name == "dsa":
            attention(b, spec, st, x, mask, n, keys=S.k_idx)
            b.op(st, "latent C_KV and k_rope kept in the cache (per token)", [], (S.r_kv + S.d_rope,), n, kind="cache")
            _indexer(b, spec, st, x, mask, n, kept_pairs)
        if name in GEMMA4_KINDS:
            _gemma4_attention(b, spec, st, x, mask, n, name, kept_pairs)
        if name == "zamba2_hybrid":
            _zamba2_hybrid(b, spec, st, x, mask, n, kept_pairs)
        if name == "attention_mamba2":
            _mamba2(b, spec, st, x, n)
            b.op(st, "attention output + Mamba 2 output", [x, x], x, n)
        step = {
            "mamba": _mamba,
            "mamba2": _mamba2,
            "gated_deltanet": _deltanet,
            "short_conv": _short_conv,
            "mlp": lambda b, spec, st, x, n: ffn(b, spec, st, x, n),
            "moe": lambda b, spec, st, x, n: moe(b, spec, st, x, n),
        }.get(name)
        if step is not None:
            step(b, spec, st, x, n)
        b.op(st, "residual add", [x, x], x, n)
    for i, (n, is_moe, mlp, ple) in enumerate(ffn_halves(stack)):
        wide = mlp and spec.shared_ffn_double and i == 1  # Gemma 4's KV-sharing half
        st = f"{'MoE ' if is_moe else ''}feed-forward half x {sp.sstr(n)}"
        if norms:
            b.op(st, "feed-forward norm", [x], x, n)
        if mlp:
            if wide:
                _wide_ffn(b, spec, st, x, n, ffn)
            else:
                ffn(b, spec, st, x, n)
        if is_moe:
            moe(b, spec, st, x, n)
        b.op(st, "residual add", [x, x], x, n)
        if ple:
            _per_layer_input(b, st, x, n)
    if spec.final_norm and norms:
        b.op("decoder", "final norm", [x], x)
