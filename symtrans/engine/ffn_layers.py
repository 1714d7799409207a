"""Layers whose only sublayer is a feed-forward network, as layer kinds: NVIDIA's Nemotron-H
(Nemotron-H team 2025, arXiv:2504.03624 §2.1; transformers' ``NemotronHBlock``) builds every
layer as one norm and one "mixer", which is Mamba 2, attention, an MLP (``"-"`` in
``hybrid_override_pattern``, ``NemotronHMLP``) or a mixture of experts (``"E"``,
``NemotronHMoE``).  The last two mix no tokens: a layer of these kinds is the pre-norm, the
FFN and the residual add, so a stack of them needs ``Spec.mixer_only`` (no FFN half after).

* ``mlp``: ``components.feed_forward`` of width d_ff (``Spec.ffn``, ``ffn_bias``), counted
  ``N_mlp`` layers;
* ``moe``: ``components.moe_feed_forward`` (router E x d_model, E experts of width d_ff_e or
  d_ff, top-k, shared experts of d_ff_s), counted ``N_moe`` layers (the MoE layers among the N,
  as in a stack with an FFN half).

Neither keeps a cache or a state: ``Step.cache`` and ``Step.state`` stay 0.
"""

from __future__ import annotations

from symtrans.engine.components import feed_forward, moe_feed_forward
from symtrans.engine.kinds import LayerKind
from symtrans.engine.roles import Block

SOURCE = "Nemotron-H (NVIDIA 2025, arXiv:2504.03624 §2.1); NemotronHBlock with an MLP or MoE mixer"


class MlpLayer(LayerKind):
    """A layer of one feed-forward network and no token mixer (Nemotron-H's ``"-"``)."""

    name = "mlp"
    title = "MLP-only"
    block = Block.FFN

    @classmethod
    def mixer(cls, spec, batch, q, context, mask, decode):
        return feed_forward(spec, batch * q)


class MoeLayer(LayerKind):
    """A layer of one mixture of experts and no token mixer (Nemotron-H's ``"E"``)."""

    name = "moe"
    title = "MoE-only"
    block = Block.MOE

    @classmethod
    def mixer(cls, spec, batch, q, context, mask, decode):
        return moe_feed_forward(spec, batch * q)
