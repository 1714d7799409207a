"""What each layer saves for its backward pass, in bytes: the activation terms of memory.

Korthikanti et al. 2022 §4.1, per tensor autograd keeps (s·b·h·(34 + 5·a·s/h) bytes at 16
bits for GPT): each tensor's per-token width is stated from the layer's own options (GQA's
narrower K and V, d_ff or a routed expert's d_ff_e, gated FFNs, norms or none, QK-norm,
MLA's latents, MoE's k experts and router logits), and the a·s² score terms are kept only
under ``scores`` (eager attention without selective recomputation), so FlashAttention and
recomputation drop them.  A stack of layer kinds follows its Cost tree's layers
(``stack.kind_counts``, ``Step.matrices``); the layer counts of each stack are the tree's
multiplicities (``Block.LAYER`` / ``Block.FFN_SUBLAYER`` children).

This knowledge lives in the engine beside the layers' Cost builders so that accounting
(``accounting.memory``, ``accounting.parallel``) sums it instead of reading Spec options
(issue 20).  Units: bytes, exact SymPy expressions.
"""

from __future__ import annotations

import sympy as sp

from symtrans.engine import symbols as S
from symtrans.engine.architectures import build, decoder_symbols
from symtrans.engine.components import attention_pairs, dims
from symtrans.engine.roles import Block
from symtrans.engine.spec import Spec
from symtrans.engine.stack import kind_counts


def layer_saved_bytes(
    spec: Spec,
    b: sp.Expr,
    s: sp.Expr,
    a_bytes: sp.Expr,
    dropout: bool,
    scores: bool,
    cross_src: sp.Expr | None = None,
    moe: bool = False,
    tp: sp.Expr | int = 1,
    sp_on: bool = False,
    mixer: bool = True,
    ffn: bool = True,
) -> sp.Expr:
    """Bytes one layer saves for its backward pass (Korthikanti et al. 2022 §4.1, per tensor).

    On one of ``tp`` tensor-parallel ranks (Korthikanti et al. 2022 §4.2.1-4.2.2, Table 2):
    the tensors inside the attention and FFN blocks (Q, K, V, scores, the FFN's inner
    width, W_O's input) are split over tp; the d_model-wide ones outside them (norm inputs,
    the blocks' inputs, dropout masks, router logits) are replicated, or split too under
    sequence parallelism (``sp_on``).  tp = 1: the whole layer.

    ``a_bytes`` per activation element (2 at 16 bits), 1 byte per dropout-mask element;
    ``scores`` keeps the a·s² terms (off under FlashAttention or selective recomputation).
    Eager attention stores the full s x s score matrices even under a causal mask
    (masked entries are zeros, not absent), so the pairs are the full square.
    ``mixer`` / ``ffn`` False leave out the attention half (with its norm) / the FFN half
    (with its norm and dropout mask), for a stack of layer kinds (``stack_layer_saved_bytes``).
    """
    D = dims(spec)
    d = D.d_model
    t = b * s
    mask_b = sp.Integer(1) if dropout else sp.Integer(0)
    norms = 0 if spec.norm == "none" else 1
    inner = sp.Integer(1) / tp  # share of a tensor-parallel split tensor on one rank
    rep = inner if sp_on else sp.Integer(1)  # share of a d_model-wide tensor outside the blocks

    def attn(q_tokens, kv_tokens, q_len, kv_len):
        pairs = attention_pairs(q_len, kv_len, "full")
        x = a_bytes * q_tokens * D.h * D.d_k  # Q, saved for Q K^T
        x += a_bytes * kv_tokens * D.h_kv * D.d_k  # K, saved for Q K^T
        x += a_bytes * kv_tokens * D.h_kv * D.d_v  # V, saved for scores V
        if spec.qk_norm != "none":
            x += a_bytes * (q_tokens * D.h + kv_tokens * D.h_kv) * D.d_k  # inputs of the QK norms
        if spec.mla:  # --- types-moe: the latents, inputs of W_UQ and W_UKV (MLA, DeepSeek-V2 §2.1)
            x += a_bytes * kv_tokens * S.r_kv + (a_bytes * q_tokens * S.r_q if spec.has("r_q") else 0)
        if scores:
            x += a_bytes * b * D.h * pairs  # softmax output
            if dropout:
                x += mask_b * b * D.h * pairs + a_bytes * b * D.h * pairs  # dropout mask and output
        x += a_bytes * q_tokens * D.h * D.d_v  # input of W_O
        # input of W_Q (and of W_K, W_V for self-attention); dropout mask after W_O
        return inner * x + rep * (a_bytes * q_tokens * d + mask_b * q_tokens * d)

    total = attn(t, t, s, s) + rep * norms * a_bytes * t * d if mixer else sp.Integer(0)
    if not ffn:
        return total
    if cross_src is not None:  # K and V come from the encoder output, stored once for all layers (not counted)
        total += attn(t, b * cross_src, s, cross_src) + rep * norms * a_bytes * t * d
    width = S.d_ff_e if moe and spec.has("d_ff_e") else D.d_ff  # a routed expert's own width (types-moe)
    if spec.ffn == "mlp":
        wide = 2 * a_bytes * t * width  # activation input, and input of W_2
    else:
        wide = 4 * a_bytes * t * width  # gate out, act(gate), up out, and input of W_down
    ffn = rep * a_bytes * t * d + inner * wide
    if moe:  # k experts' copies of the input and their inner terms; router logits
        ffn = S.k * ffn + rep * a_bytes * t * S.E
    total += ffn + rep * (mask_b * t * d + norms * a_bytes * t * d)
    return total


def stack_layer_saved_bytes(spec: Spec, b: sp.Expr, s: sp.Expr, a_bytes: sp.Expr, scores: bool) -> sp.Expr:
    """Inference activation bytes of one layer of a stack of layer kinds (``Spec.mixers``:
    Mamba, Mamba 2, Gated DeltaNet, short convolution, attention), following the Cost
    tree's layers (``engine.stack.hybrid_layers``) instead of assuming attention + FFN.

    Per layer kind, for b·s tokens at ``a_bytes`` per element:

    * attention: the attention half of ``layer_saved_bytes`` (Q, K, V, W_O's input, its
      norm input; the scores only with eager attention);
    * any other kind: the layer's input (its norm's input, d_model) plus the output of
      every linear map of the kind's mixer, read from the tree (``Step.matrices``: an
      nn.Linear d_in -> d_out is ``Matrix(count, d_out, d_in)``, so Σ count·d_out).  Mamba:
      in_proj 2·d_inner, x_proj dt_rank + 2·d_state, dt_proj d_inner, out_proj d_model.
      Assumption: the depthwise convolution, the scan and the gating are element-wise on
      those tensors and fused (the mamba_ssm kernels causal_conv1d and selective_scan,
      Gu & Dao 2023 §3.3.2: the expanded state is never materialised in HBM), so they add
      no tensor wider than the ones counted; the state itself is the cache's
      (``state_bytes_per_sequence``), not an activation.

    The layer's activation is the largest kind's (Max over the kinds of the stack), plus
    the FFN half of ``layer_saved_bytes`` (routed-expert width for an MoE stack) unless
    the stack has no FFN (``mixer_only``: Mamba, Mamba 2).  An estimate of the transient
    working set, like the attention-only one; counted in bytes.
    """
    t = b * s
    norms = 0 if spec.norm == "none" else 1
    per_kind = []
    for k, _count in kind_counts(spec):
        if k.name == "attention":
            per_kind.append(layer_saved_bytes(spec, b, s, a_bytes, False, scores, ffn=False))
            continue
        if k.name in ("mlp", "moe"):  # a layer of one FFN (Nemotron-H): the FFN half alone, its k experts
            per_kind.append(layer_saved_bytes(spec, b, s, a_bytes, False, scores, moe=k.name == "moe", mixer=False))
            continue
        cost = k.mixer(spec, b, s, s, "causal", False)
        outs = sp.Add(*[m.count * m.rows for _p, _n, st in cost.walk() for m in st.matrices if not m.lookup])
        per_kind.append(a_bytes * t * (norms * S.d_model + outs))
    total = per_kind[0] if len(per_kind) == 1 else sp.Max(*per_kind)
    if spec.mixer_only:
        return total
    return total + layer_saved_bytes(spec, b, s, a_bytes, False, scores, moe=spec.is_moe, mixer=False)


def training_saved_bytes(spec: Spec, batch, seq, a, recompute, flash, dropout, src=None) -> tuple[sp.Expr, sp.Expr]:
    """(per decoder-or-encoder layer, whole model) activation bytes for training."""
    keep = not flash and recompute != "selective"
    if recompute == "full":
        if spec.family == "encoder-decoder":
            n_enc, n_dec = sum(_stack_layers(spec, Block.ENCODER)), sum(_stack_layers(spec, Block.DECODER))
            per = a * batch * seq * S.d_model
            return per, n_enc * a * batch * src * S.d_model + n_dec * per
        per = a * batch * seq * S.d_model
        return per, S.N * per + head_saved_bytes(spec, batch, seq, a)
    if spec.family == "encoder-decoder":
        n_enc, n_dec = sum(_stack_layers(spec, Block.ENCODER)), sum(_stack_layers(spec, Block.DECODER))
        enc = layer_saved_bytes(spec, batch, src, a, dropout, keep)
        dec = layer_saved_bytes(spec, batch, seq, a, dropout, keep, cross_src=src).xreplace(decoder_symbols(spec))
        return dec, n_enc * enc + n_dec * dec + head_saved_bytes(spec, batch, seq, a)
    per = layer_saved_bytes(spec, batch, seq, a, dropout, keep)
    dense_n, moe_n = _stack_layers(spec, Block.DECODER)
    if moe_n != 0:
        moe_per = layer_saved_bytes(spec, batch, seq, a, dropout, keep, moe=True)
        return moe_per, dense_n * per + moe_n * moe_per + head_saved_bytes(spec, batch, seq, a)
    return per, S.N * per + head_saved_bytes(spec, batch, seq, a)


def _stack_layers(spec: Spec, stack: Block) -> tuple[sp.Expr, sp.Expr]:
    """(layers with a dense FFN or none, layers with a mixture of experts) of the tree's
    ``stack``, as the tree states them: the multiplicities of its ``Block.LAYER`` children
    (N, N_enc, N_dec; N - N_moe and N_moe), or in a stack of layer kinds, whose FFN halves
    are children of their own, of its ``Block.FFN_SUBLAYER`` children."""
    dense, moe = [], []
    for top in build(spec).blocks_of(stack):
        halves = [c for c in top.children if c.block == Block.FFN_SUBLAYER]
        for layer in halves or [c for c in top.children if c.block == Block.LAYER]:
            (moe if any(layer.blocks_of(Block.MOE)) else dense).append(top.multiplicity * layer.multiplicity)
    return sp.Add(*dense), sp.Add(*moe)


def head_saved_bytes(spec: Spec, batch, seq, a) -> sp.Expr:
    """The LM head's saved input (a·s·b·d_model) and fp32 logits for the loss (4·s·b·V)."""
    if not spec.lm_head or spec.family == "encoder-only":
        return sp.Integer(0)
    return (a * batch * seq * S.d_model + 4 * batch * seq * S.V).xreplace(decoder_symbols(spec))


def inference_saved_bytes(spec: Spec, b: sp.Expr, s: sp.Expr, a: sp.Expr, scores: bool, src=None):
    """(one layer's transient activation bytes, the last position's fp32 logits) at inference:
    a stack of layer kinds follows its tree's layers (``stack_layer_saved_bytes``), an
    attention stack is one layer without dropout masks (an MoE layer with its k experts,
    an encoder-decoder's decoder layer with its cross-attention over ``src``); the logits are
    4·b·V bytes when the model has an LM head and generates, else 0."""
    if spec.mixers != "attention":  # a stack of layer kinds: follow its Cost tree's layers
        per_layer = stack_layer_saved_bytes(spec, b, s, a, scores)
    else:
        per_layer = layer_saved_bytes(spec, b, s, a, False, scores, moe=spec.is_moe, cross_src=src)
    generates = spec.family != "encoder-only" and spec.lm_head
    logits = 4 * b * S.V.xreplace(decoder_symbols(spec)) if generates else sp.Integer(0)
    return per_layer, logits
