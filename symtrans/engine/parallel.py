"""Attention and a Mamba 2 mixer side by side in one layer, as a layer kind: TII's Falcon-H1
(Falcon-LLM team 2025, arXiv:2507.22448 §2.1; transformers' ``FalconH1DecoderLayer``) feeds
the layer's normed input to a Mamba 2 mixer and to grouped-query attention at once and adds
their outputs (each scaled by a constant muP multiplier, no weights) before the residual.

Its parameters, FLOPs, K/V cache per token and state per sequence are those of the two mixers
(``components.attention`` and ``ssm.Mamba2``) summed, one child each; the sum of the two outputs
is element-wise (all-ops only, not counted).  Counted ``N_par`` layers.
"""

from __future__ import annotations

from symtrans.engine.cost import Cost
from symtrans.engine.kinds import Attention, LayerKind
from symtrans.engine.roles import Block
from symtrans.engine.ssm import Mamba2

SOURCE = "Falcon-H1 (TII 2025, arXiv:2507.22448 §2.1); FalconH1DecoderLayer: mamba + self_attn on one input"


class ParallelAttentionMamba2(LayerKind):
    """Attention and Mamba 2 in parallel on the same normed input, outputs summed (Falcon-H1)."""

    name = "attention_mamba2"
    title = "parallel attention + Mamba 2"
    block = Block.OTHER

    @classmethod
    def mixer(cls, spec, batch, q, context, mask, decode):
        children = (
            Attention.mixer(spec, batch, q, context, mask, decode),
            Mamba2.mixer(spec, batch, q, context, mask, decode),
        )
        return Cost(name="attention and Mamba 2 in parallel", block=cls.block, children=children, source=SOURCE)
