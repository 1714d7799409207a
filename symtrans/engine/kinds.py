"""Layer kinds: the token mixer a layer of a stack uses, one registered class per kind.

A stack is a sequence of layers, each of one kind (attention, Mamba 1, Mamba 2, Gated
DeltaNet, ...).  Which layer is of which kind changes no count, only how many layers
each kind has, so a ``layer_types`` pattern of any shape closes with one count symbol per
kind (``N_attn``, ``N_ssm``, ``N_lin``): ``Spec.mixers`` names the kinds, the first one
having the N layers the others leave.  ``stack.hybrid_layers`` builds the stack from them.

Adding a kind is one class: subclass ``LayerKind`` (its ``name`` registers it; dispatch
is on the class, as SymPy dispatches on expression types), write its ``mixer`` with its
steps, each carrying its role, parameters, FLOPs, decode-cache elements per token
(``Step.cache``) and constant state elements per sequence (``Step.state``), and add its
name, count symbol and sizes to ``mixer_rules.MIXER_KINDS`` / ``MIXER_COUNTS`` / ``MIXER_SIZES``
(Spec validates before any kind is imported).
"""

from __future__ import annotations

from typing import ClassVar

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.engine.components import attention
from symtrans.engine.cost import Cost
from symtrans.engine.mla import mla_attention
from symtrans.engine.roles import Block
from symtrans.engine.spec import Spec


class LayerKind:
    """One token mixer.  Subclasses set ``name`` (a ``Spec.mixers`` entry), ``title``
    (for people), ``block`` (the ``roles.Block`` of the mixer's Cost) and implement
    ``mixer``; defining the subclass registers it in ``REGISTRY``."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    block: ClassVar[Block] = Block.OTHER
    REGISTRY: ClassVar[dict[str, type["LayerKind"]]] = {}

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name:
            LayerKind.REGISTRY[cls.name] = cls

    @classmethod
    def mixer(cls, spec: Spec, batch: sp.Expr, q: sp.Expr, context: sp.Expr, mask: str, decode: bool) -> Cost:
        """The mixer of one layer on ``batch`` sequences of ``q`` new tokens that see
        ``context`` positions (``decode``: one token per step against a cache/state).

        Units: parameters; forward FLOPs (2 per multiply-accumulate) at that shape;
        ``Step.cache`` elements per token, ``Step.state`` elements per sequence."""
        raise NotImplementedError

    @classmethod
    def stored(cls, spec: Spec, batch: sp.Expr, q: sp.Expr) -> list[Cost]:
        """Weights the kind's layers share and the model stores apart from them (Zamba2's shared
        blocks), one Cost each with its own multiplicity; none for most kinds."""
        return []


def kind(name: str) -> type[LayerKind]:
    """The registered kind called ``name``.

    Raises:
        InputError: naming the registered kinds.
    """
    try:
        return LayerKind.REGISTRY[name]
    except KeyError:
        raise InputError(f"unknown layer kind {name!r}; known: {', '.join(LayerKind.REGISTRY)}") from None


class Attention(LayerKind):
    """Causal self-attention (multi-head, GQA, MLA, with Qwen3-Next's output gate where the
    spec asks): ``components.attention`` / ``mla.mla_attention``; caches K and V (or the
    MLA latent) per token, holds no state."""

    name = "attention"
    title = "attention"
    block = Block.CAUSAL_SELF_ATTENTION

    @classmethod
    def mixer(cls, spec, batch, q, context, mask, decode):
        if spec.mla:
            return mla_attention(spec, "causal", batch, q, context, mask)
        return attention(spec, "causal", batch, q, context, mask)
