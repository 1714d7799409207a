"""LongT5's transient-global encoder attention (Guo et al. 2022 §3.1.2, "TGlobal"): beside T5's
weights, each encoder self-attention layer summarises every global_block_size tokens into one
global token (a sum, no weights), normalises those with an RMSNorm of its own
(``LongT5TransientGlobalAttention.global_input_layer_norm``, d_model weights) and biases the
scores to them with a second bucketed table, stored once per encoder like T5's relative bias
(``global_relative_attention_bias``, relative_buckets x h, in the first layer, which has
``has_relative_attention_bias``).  Local attention (§3.1.1, ``LongT5LocalAttention``) has exactly
T5's weights.  Source: HF ``models/longt5/modeling_longt5.py`` (transformers 5.24).

LED's Longformer encoder attention (Beltagy et al. 2020 §3.1: "we use two sets of projections,
Q_s, K_s, V_s for sliding window attention, and Q_g, K_g, V_g for global attention") adds three
biased d_model x d_model maps to every encoder self-attention layer (HF ``LEDEncoderSelfAttention``
``query_global``, ``key_global``, ``value_global``): ``longformer_global_maps``.

FLOPs of LongT5's encoder attention (``block_local_pairs``, ``transient_global_steps``) count what
the eager forward executes: ``_split_into_blocks`` pads the L_src positions to ceil(L_src / b_loc)
blocks of b_loc = local_radius + 1 and each block's queries meet the keys of 3 blocks (its own and
its neighbours', zero blocks at the ends): the padded-block convention, every computed score counted,
masked or padded; transient-global adds floor(L_src / b_glob) global keys to every block.  Checked
against FlopCounterMode in tests/test_long_flops.py.  LED (``longformer_padded``, ``longformer_pairs``):
every encoder layer runs on the input padded to a multiple of attention_window (of the largest, when
the layers' windows differ), and each layer's sliding window is computed in overlapping chunks of its
own window; the count is what those einsums execute, with no global tokens (no global_attention_mask).

Units: parameters; FLOPs (2 per multiply-accumulate).
"""

from __future__ import annotations

import sympy as sp

from symtrans.engine import symbols as S
from symtrans.engine.cost import ATTENTION, DENSE, ONE, Cost, Matrix, Step
from symtrans.engine.primitives import linear, norm
from symtrans.engine.roles import Block, Role
from symtrans.engine.spec import Spec

_SOURCE = "Guo et al. 2022 §3.1.2 (LongT5 TGlobal); LongT5TransientGlobalAttention"
_LOCAL_SOURCE = "Guo et al. 2022 §3.1.1; LongT5LocalAttention (_split_into_blocks, _concatenate_3_blocks)"


def global_tokens_of(q: sp.Expr) -> sp.Expr:
    """The transient global tokens of q positions: floor(q / b_glob) (``_make_global_fixed_block_ids``:
    ``num_globals = seq_len // global_block_size``; the tail of an incomplete block joins the last one)."""
    return sp.floor(q / S.b_glob)


def block_local_pairs(spec: Spec, q: sp.Expr) -> sp.Expr:
    """Query-key pairs LongT5's encoder self-attention computes over q positions, per head and sequence:
    ceil(q / b_loc) blocks of b_loc queries (the last one padded), each against 3 b_loc local keys
    (the blocks before and after it, zero-padded at the ends) plus, for transient-global, the
    floor(q / b_glob) global keys: ceil(q / b_loc) b_loc (3 b_loc + floor(q / b_glob)).

    Units: pairs (Q K^T costs 2 d_k FLOPs a pair per head, scores x V 2 d_v).  Source:
    HF ``LongT5LocalAttention.forward`` / ``LongT5TransientGlobalAttention.forward`` (transformers 5.24),
    the einsums ``...qhd,...khd->...hqk`` and ``...hqk,...khd->...qhd`` on the padded blocks.
    """
    keys = 3 * S.b_loc
    if spec.encoder_attention == "transient-global":
        keys += global_tokens_of(q)
    return sp.ceiling(q / S.b_loc) * S.b_loc * keys


def transient_global_steps(batch: sp.Expr, q: sp.Expr) -> list[Step]:
    """The FLOPs of one transient-global layer beyond its local attention, over B sequences of q tokens,
    G = floor(q / b_glob) global tokens:

    * the global aggregates, ``einsum("...nd,...ng->...gd", x, one_hot)``: 2 B q d_model G (a matmul
      by a constant one-hot matrix: its backward is the gradient of x alone, 1 x forward);
    * the global tokens' keys and values, ``self.k(global_inputs)``, ``self.v(global_inputs)``:
      2 B G d_model h d_k each, with the layer's own W_K and W_V (no parameters of their own).
    """
    G = global_tokens_of(q)
    steps = [
        Step(
            label="global aggregates (x^T one_hot)",
            role=Role.GENERIC,
            flops=2 * batch * q * S.d_model * G,
            kind=ATTENTION,
            shape=f"(d_model x {q}) . ({q} x floor({q}/b_glob))",
            input_grad=False,
            note="each global token sums its b_glob tokens (the one-hot matmul of _create_global_aggregates)",
            source=_SOURCE + " _create_global_aggregates",
        )
    ]
    for label in ("W_K (global tokens)", "W_V (global tokens)"):
        steps.append(
            Step(
                label=label,
                role=Role.GENERIC,
                flops=2 * batch * G * S.d_model * S.h * S.d_k,
                kind=DENSE,
                shape=f"(floor({q}/b_glob) x d_model) . (d_model x h*d_k)",
                note="the layer's key/value map applied again to the global tokens (its weights, counted once)",
                source=_SOURCE + " side_key_states / side_value_states",
            )
        )
    return steps


def transient_global(spec: Spec, layers: sp.Expr) -> Cost:
    """The encoder's transient-global weights: one relative_buckets x h global bias table and
    ``layers`` RMSNorms of d_model (one per encoder layer).

    Parameters relative_buckets x h + layers x d_model.
    """
    table = Step(
        label="global relative attention bias",
        role=Role.RELATIVE_BIAS,
        params=spec.relative_buckets * S.h,
        matrices=(Matrix(ONE, sp.Integer(spec.relative_buckets), S.h, lookup=True),),
        note=f"{spec.relative_buckets} buckets x h heads for the scores of the tokens to the global summaries, "
        "stored once per encoder (its first layer)",
        source=_SOURCE + ".global_relative_attention_bias",
    )
    norms = Cost(
        name="global-input norm (per encoder layer)",
        block=Block.NORM,
        steps=tuple(norm(spec, "global_input_layer_norm", S.d_model, sp.Integer(0))),
        multiplicity=layers,
        source=_SOURCE + ".global_input_layer_norm",
    )
    return Cost(
        name="transient-global attention",
        block=Block.RELATIVE_POSITION_BIAS,
        steps=(table,),
        children=(norms,),
    )


def longformer_padded(q: sp.Expr) -> sp.Expr:
    """The encoder positions LED computes for q tokens: ``LEDEncoder._pad_to_window_size`` pads the
    input to a multiple of attention_window (``max(attention_window)`` for a list: w_att is the
    largest), ceil(q / w_att) w_att (every encoder layer runs on them;
    the encoder output is cut back to q before cross-attention)."""
    return sp.ceiling(q / S.w_att) * S.w_att


def longformer_pairs(q_pad: sp.Expr, window: sp.Expr = S.w_att) -> tuple[sp.Expr, sp.Expr]:
    """(Q K^T pairs, scores x V pairs) of LED's chunked sliding window over q_pad padded positions, per
    head and sequence, for a layer of window w (w_att, or the layer's own from ``Spec.encoder_windows``),
    one-sided a = w / 2 (``LEDEncoderSelfAttention``, no global tokens):

    * ``_sliding_chunks_query_key_matmul``: q_pad / a - 1 overlapping chunks of 2a queries x 2a keys,
      (q_pad / a - 1) (2a)^2 = 2 q_pad w - w^2 pairs;
    * ``_sliding_chunks_matmul_attn_probs_value``: q_pad / a chunks of a queries x 3a values,
      (q_pad / a) a (3a) = 3 q_pad w / 2 pairs.

    q_pad is a multiple of the largest window, which every layer's window divides, so the chunks are
    whole.  The overlapping chunks compute more than the band |i - j| <= a: every product the einsums
    execute is counted (the chunked-window convention)."""
    return 2 * q_pad * window - window**2, sp.Rational(3, 2) * q_pad * window


def longformer_global_maps() -> list[Step]:
    """The global-attention projections of one Longformer encoder layer: W_Q, W_K, W_V for the
    global tokens, d_model -> d_model with bias each (3 d_model^2 + 3 d_model parameters); 0 FLOPs:
    without a global_attention_mask (LEDForConditionalGeneration's default) no token is global
    and the forward never applies them."""
    source = "Beltagy et al. 2020 §3.1 (Longformer: Q_g, K_g, V_g); LEDEncoderSelfAttention"
    steps: list[Step] = []
    for label, role in (("query_global", Role.Q_PROJ), ("key_global", Role.K_PROJ), ("value_global", Role.V_PROJ)):
        steps += linear(label, S.d_model, S.d_model, sp.Integer(0), True, source, role=role)
    return steps
