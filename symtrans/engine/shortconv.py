"""The gated short convolution of LFM2 (Liquid AI 2025; transformers' ``Lfm2ShortConv``)
as a layer kind.

A layer maps x to B, C and x' (in_proj, d_model → 3·d_model), convolves B ⊙ x' with a
causal depthwise Conv1d of width d_conv (conv_L_cache) per channel, gates the result by C
and projects back (out_proj, d_model → d_model); ``ssm_conv_bias`` (LFM2's ``conv_bias``)
gives all three maps a bias.  FLOPs: the two maps and the convolution over L + d_conv − 1
positions (``ssm.conv_steps``); the gates are element-wise.  Its cache is the last d_conv
inputs per channel, d_model·d_conv elements per sequence.
"""

from __future__ import annotations

from symtrans.engine import symbols as S
from symtrans.engine.components import linear
from symtrans.engine.cost import Cost
from symtrans.engine.kinds import LayerKind
from symtrans.engine.roles import Block, Role
from symtrans.engine.spec import Spec
from symtrans.engine.ssm import conv_steps

SOURCE = "LFM2 (Liquid AI 2025); Lfm2ShortConv"


class ShortConv(LayerKind):
    """LFM2's gated short convolution: in_proj, depthwise conv1d, out_proj."""

    name = "short_conv"
    title = "short convolution"
    block = Block.SHORT_CONV

    @classmethod
    def mixer(cls, spec: Spec, batch, q, context, mask, decode):
        t, d, bias = batch * q, S.d_model, spec.ssm_conv_bias
        steps = linear(
            "in_proj", d, 3 * d, t, bias, SOURCE, "the gates B and C and the input x, d_model each",
            role=Role.MIXER_IN_PROJ,
        )  # fmt: skip
        steps += conv_steps(d, batch, q, bias, SOURCE, decode)
        steps += linear("out_proj", d, d, t, bias, SOURCE, role=Role.MIXER_OUT_PROJ)
        return Cost(name="short convolution", block=cls.block, steps=tuple(steps), source=SOURCE)
