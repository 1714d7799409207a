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

Units: parameters.  FLOPs are refused for these kinds (``long_rules.check_workload``).
"""

from __future__ import annotations

import sympy as sp

from symtrans.engine import symbols as S
from symtrans.engine.cost import ONE, Cost, Matrix, Step
from symtrans.engine.primitives import linear, norm
from symtrans.engine.roles import Block, Role
from symtrans.engine.spec import Spec

_SOURCE = "Guo et al. 2022 §3.1.2 (LongT5 TGlobal); LongT5TransientGlobalAttention"


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


def longformer_global_maps() -> list[Step]:
    """The global-attention projections of one Longformer encoder layer: W_Q, W_K, W_V for the
    global tokens, d_model -> d_model with bias each (3 d_model^2 + 3 d_model parameters); their
    FLOPs depend on the global tokens and are refused (0 here)."""
    source = "Beltagy et al. 2020 §3.1 (Longformer: Q_g, K_g, V_g); LEDEncoderSelfAttention"
    steps: list[Step] = []
    for label, role in (("query_global", Role.Q_PROJ), ("key_global", Role.K_PROJ), ("value_global", Role.V_PROJ)):
        steps += linear(label, S.d_model, S.d_model, sp.Integer(0), True, source, role=role)
    return steps
