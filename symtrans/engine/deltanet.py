"""Gated DeltaNet (Yang et al. 2024, "Gated Delta Networks"), the linear-attention mixer of
Qwen3-Next, as a layer kind.

Parameters as transformers' ``Qwen3NextGatedDeltaNet`` builds them: in_proj_qkvz
(d_model → 2·h_lk·d_lk + 2·h_lv·d_lv: queries, keys, values and the output gate z),
in_proj_ba (d_model → 2·h_lv: β and the decay input a, per value head), a causal
depthwise conv1d over q, k, v (2·h_lk·d_lk + h_lv·d_lv channels, no bias), dt_bias and
A_log (h_lv each), the gated RMSNorm (d_lv, shared by the heads) and out_proj
(h_lv·d_lv → d_model).

FLOPs (matmul convention): the dense maps, the convolution (L + d_conv − 1 positions, see
``ssm.conv_steps``) and the matrix products of the chunkwise delta rule (Yang et al. 2024
§3.2; transformers' ``torch_chunk_gated_delta_rule``) with keys and queries repeated to the
h_lv value heads, over n_c = ⌈L/L_chunk⌉ chunks of C = L_chunk (64 unless given, as in
transformers and fla): per head and chunk, K_β Kᵀ and Q Kᵀ (2·C²·d_lk each), the state
read by the decayed keys and by the queries and the state update Kᵀ V (2·C·d_lk·d_lv
each), and the intra-chunk attention times the new values (2·C²·d_lv).  The two
triangular solves of the UT transform (``torch.linalg.solve_triangular``, C²·(d_lk + d_lv)
multiply-adds per head and chunk) are not matrix products that ``torch.utils.flop_counter``
counts, and are not counted here either; nor are the element-wise decays and the
L2 norms of q and k.

State per sequence (``Step.state``): the recurrent state, h_lv·d_lk·d_lv elements, and
the convolution window, channels·d_conv (tests/test_layer_kinds.py checks both against
transformers' cache).
"""

from __future__ import annotations

import sympy as sp

from symtrans.engine import symbols as S
from symtrans.engine.components import linear, norm
from symtrans.engine.cost import ATTENTION, Cost, Step
from symtrans.engine.kinds import LayerKind
from symtrans.engine.roles import Block, Role
from symtrans.engine.spec import Spec
from symtrans.engine.ssm import chunk_count, conv_steps

SOURCE = "Yang et al. 2024 (Gated Delta Networks); Qwen3NextGatedDeltaNet"
# transformers' torch_chunk_gated_delta_rule and fla's chunk kernels work in chunks of 64
DEFAULT_CHUNK = 64


class GatedDeltaNet(LayerKind):
    """Gated DeltaNet: linear attention with a gated delta-rule state (Yang et al. 2024)."""

    name = "gated_deltanet"
    title = "Gated DeltaNet"
    block = Block.LINEAR_ATTENTION

    @classmethod
    def mixer(cls, spec: Spec, batch, q, context, mask, decode):
        t = batch * q
        hk, hv, dk, dv = S.h_lk, S.h_lv, S.d_lk, S.d_lv
        steps = linear(
            "in_proj_qkvz",
            S.d_model,
            2 * hk * dk + 2 * hv * dv,
            t,
            False,
            SOURCE,
            "queries and keys (h_lk heads of d_lk), values and the output gate z (h_lv heads of d_lv)",
            role=Role.MIXER_IN_PROJ,
        )
        steps += linear(
            "in_proj_ba",
            S.d_model,
            2 * hv,
            t,
            False,
            SOURCE,
            "β and the decay input a, one each per value head",
            role=Role.MIXER_GATE_PROJ,
        )
        steps += conv_steps(2 * hk * dk + hv * dv, batch, q, False, SOURCE, decode)
        steps.append(Step(label="dt_bias", role=Role.SSM_DT_BIAS, params=hv, note="one per value head", source=SOURCE))
        steps.append(
            Step(label="A_log", role=Role.SSM_A, params=hv, note="the decay rate, one per value head", source=SOURCE)
        )
        if decode:  # the recurrent form: per head, read S with k and q, write k v^T (element-wise in eager)
            flops = 2 * t * hv * 3 * dk * dv
            shape = "recurrent delta rule: S^T k, S^T q, k (v - S^T k)^T per head"
        else:
            c = S.L_chunk if spec.has("L_chunk") else sp.Integer(DEFAULT_CHUNK)
            flops = 2 * batch * hv * chunk_count_with(q, c) * c * (2 * c * dk + c * dv + 3 * dk * dv)
            shape = "chunked delta rule: K_b K^T, Q K^T, K S, Q S, A V, K^T V per chunk and head"
        steps.append(
            Step(
                label="chunked delta rule" if not decode else "delta-rule update",
                role=Role.SCAN,
                flops=flops,
                kind=ATTENTION,
                shape=shape,
                state=hv * dk * dv,
                note="the matrix products of the chunkwise gated delta rule; the triangular solves are not "
                "matmuls and not counted; the state (h_lv heads x d_lk x d_lv) is kept per sequence",
                source=SOURCE + " (§3.2 chunkwise form; torch_chunk_gated_delta_rule)",
            )
        )
        steps += norm(spec, "gated RMSNorm", dv, t * hv, Role.MIXER_NORM, kind="rmsnorm")  # d_lv weights, per head
        steps += linear("out_proj", hv * dv, S.d_model, t, False, SOURCE, role=Role.MIXER_OUT_PROJ)
        return Cost(name="Gated DeltaNet mixer", block=cls.block, steps=tuple(steps), source=SOURCE)


def chunk_count_with(q: sp.Expr, c: sp.Expr) -> sp.Expr:
    """⌈q / c⌉ chunks of c tokens (``ssm.chunk_count`` with L_chunk = c)."""
    return chunk_count(q).xreplace({S.L_chunk: c})
