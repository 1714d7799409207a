"""DeBERTa's relative positions: the relative table, disentangled attention and the ConvLayer.

He et al. 2021 (DeBERTa §3.1, eq. 2-4): attention scores are the sum of content-to-content
(Q K^T), content-to-position (c2p: Q (R W_K,r)^T) and position-to-content (p2c:
K (R W_Q,r)^T) terms, R being a table of relative-position embeddings.  He et al. 2023
(DeBERTa-v3) and the v2 code add log buckets (``position_buckets``) and share W_K, W_Q with
the content projections (``share_att_key``).  Counted exactly as transformers 5.x
``DebertaV2Model`` builds and runs it (``modeling_deberta_v2.py``):

* ``DebertaV2Encoder.rel_embeddings``: an ``nn.Embedding(2*L_rel, d_model)``, L_rel =
  position_buckets if > 0, else max_relative_positions if >= 1, else
  max_position_embeddings; optional LayerNorm over it (``norm_rel_ebd``).  One table for
  all layers; the whole table is read by every layer (``rel_embeddings[0 : 2*att_span]``).
* per layer (``DisentangledSelfAttention``): unless share_att_key, ``pos_key_proj``
  (c2p) and ``pos_query_proj`` (p2c), Linear(d_model, h*d_k) with bias.  Forward: the
  projection runs on the 2*L_rel table rows once per layer (not per sequence: the result
  is repeated over the batch), 2*(2 L_rel)*d_model*h*d_k FLOPs each; with share_att_key
  both query_proj and key_proj run on the table whatever pos_att_type says (one that no term
  reads is ``Role.UNUSED_OUTPUT``: no gradient flows back through it).  c2p is
  ``bmm(Q, pos_key^T)``: 2*B*h*L*(2 L_rel)*d_k FLOPs; p2c ``bmm(K, pos_query^T)``: the
  same.  The gathers that pick each pair's bucket cost no FLOPs.
* ``ConvLayer`` (``conv_kernel_size`` > 0, DeBERTa-v2 xlarge/xxlarge): Conv1d(d_model,
  d_model, k, groups) with bias and a LayerNorm, applied once, after the first layer:
  d_model*(d_model/groups)*k + d_model + 2*d_model parameters and
  2*B*L*d_model*(d_model/groups)*k FLOPs (odd k keeps L positions).
"""

from __future__ import annotations

import sympy as sp

from symtrans.engine import symbols as S
from symtrans.engine.conventions import per_element
from symtrans.engine.cost import ATTENTION, DENSE, ONE, Cost, Matrix, Step
from symtrans.engine.primitives import Dims, linear, norm
from symtrans.engine.roles import Block, Role
from symtrans.engine.spec import Spec

SOURCE = "He et al. 2021 (DeBERTa) §3.1; transformers DisentangledSelfAttention"


def relative_rows() -> sp.Expr:
    """Rows of the relative position table: 2*L_rel."""
    return 2 * S.L_rel


def relative_table(spec: Spec) -> Cost:
    """``DebertaV2Encoder.rel_embeddings`` (2*L_rel x d_model) and, with ``rel_norm``, its
    LayerNorm (run once per forward over the 2*L_rel rows; created but unused without the table)."""
    rows = relative_rows()
    steps = []
    if spec.has("L_rel"):
        steps.append(
            Step(
                label="relative position table",
                role=Role.RELATIVE_EMBEDDING,
                params=rows * S.d_model,
                note="2 L_rel relative distances (log buckets) x d_model, shared by every layer",
                source="He et al. 2021 §3.1; DebertaV2Encoder.rel_embeddings",
                matrices=(Matrix(ONE, rows, S.d_model, lookup=True),),
            )
        )
    if spec.rel_norm:
        # Without the table, DebertaV2Encoder still creates the LayerNorm (norm_rel_ebd) but never runs it.
        steps += norm(spec, "relative table norm", S.d_model, rows if spec.has("L_rel") else sp.Integer(0))
    return Cost(name="relative position table", block=Block.RELATIVE_EMBEDDINGS, steps=tuple(steps), source=SOURCE)


def _shared_projection(label: str, role: Role, D: Dims) -> Step:
    """The layer's own W_Q or W_K applied to the table (share_att_key): FLOPs, no parameters."""
    rows = relative_rows()
    w = D.d_model * D.h * D.d_k
    return Step(
        label=label,
        role=role,
        flops=2 * rows * w,
        kind=DENSE,
        weights=w,
        shape=f"(2*L_rel x d_model) . (d_model x {sp.sstr(D.h * D.d_k)})",
        note="share_att_key: the content projection reused on the 2 L_rel table rows (once per layer, not per sequence)",
        source=SOURCE,
    )


def disentangled_steps(spec: Spec, batch: sp.Expr, q: sp.Expr, D: Dims) -> list[Step]:
    """The per-layer steps of disentangled attention: the table's projections and the c2p /
    p2c score products (q queries and q keys per sequence, full attention)."""
    rows = relative_rows()
    terms = spec.disentangled.split("|") if spec.disentangled != "none" else []
    steps: list[Step] = []
    if spec.share_att_key:  # both run whatever pos_att_type says; one a term does not read has no backward
        unused = Role.UNUSED_OUTPUT
        steps.append(
            _shared_projection("W_Q on the relative table", Role.POS_QUERY_PROJ if "p2c" in terms else unused, D)
        )
        steps.append(
            _shared_projection("W_K on the relative table", Role.POS_KEY_PROJ if "c2p" in terms else unused, D)
        )
    else:
        if "c2p" in terms:
            steps += linear(
                "W_pos_K",
                D.d_model,
                D.h * D.d_k,
                rows,
                True,
                SOURCE + ".pos_key_proj",
                "c2p: the relative table projected to keys (2 L_rel rows, once per layer)",
                role=Role.POS_KEY_PROJ,
            )
        if "p2c" in terms:
            steps += linear(
                "W_pos_Q",
                D.d_model,
                D.h * D.d_k,
                rows,
                True,
                SOURCE + ".pos_query_proj",
                "p2c: the relative table projected to queries (2 L_rel rows, once per layer)",
                role=Role.POS_QUERY_PROJ,
            )
    for term, what in (("c2p", "Q (R W_K,r)^T"), ("p2c", "K (R W_Q,r)^T")):
        if term in terms:
            steps.append(
                Step(
                    label=f"{term} scores",
                    role=Role.DISENTANGLED_SCORES,
                    flops=2 * batch * D.h * q * rows * D.d_k,
                    kind=ATTENTION,
                    shape=f"h x ({sp.sstr(q)} x {sp.sstr(D.d_k)}) . ({sp.sstr(D.d_k)} x 2*L_rel)",
                    elementwise=per_element("scale") * batch * D.h * q * q,  # the gathered term, scaled and added
                    note=f"{what}: every token against all 2 L_rel relative distances, then a gather per pair",
                    source=SOURCE + ".disentangled_attention_bias",
                )
            )
    return steps


def conv_layer(spec: Spec, tokens: sp.Expr) -> Cost:
    """DeBERTa-v2's ConvLayer (Conv1d d_model -> d_model, kernel ``conv_kernel``, groups
    ``conv_groups``, with bias, then a LayerNorm), run once after the first layer on
    ``tokens`` rows."""
    k, g = spec.conv_kernel, spec.conv_groups
    w = S.d_model * S.d_model * k / g
    src = "transformers ConvLayer (DebertaV2Encoder.conv)"
    steps = [
        Step(
            label="Conv1d kernel",
            role=Role.CONV,
            params=w,
            flops=2 * tokens * w,
            kind=DENSE,
            weights=w,
            shape=f"({sp.sstr(tokens)} x {k}*d_model/{g}) . ({k}*d_model/{g} x d_model)",
            note=f"kernel {k}, {g} group(s): each output feature reads {k} positions of d_model/{g} inputs",
            source=src,
            matrices=(Matrix(ONE, S.d_model, S.d_model * k / g),),
        ),
        Step(
            label="bias of Conv1d kernel",
            role=Role.CONV,
            bias=True,
            params=S.d_model,
            elementwise=per_element("bias") * tokens * S.d_model,
            note="one bias per output feature",
            source=src,
        ),
    ]
    steps += norm(spec, "conv norm", S.d_model, tokens)
    return Cost(name="ConvLayer", block=Block.CONV_LAYER, steps=tuple(steps), source=src)
