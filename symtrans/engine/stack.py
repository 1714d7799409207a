"""A decoder stack of typed layer kinds (``Spec.mixers``), in closed form.

Every sum the tree holds (parameters, FLOPs, cache and state elements) is additive over a
layer's sublayers, so a stack whose layers mix kinds of mixer (attention, Mamba, Gated
DeltaNet) and kinds of feed-forward network (dense, MoE) closes with one count per mixer
kind and one per FFN kind, whatever the pattern (Jamba's attention every 8th layer and
MoE every other, Qwen3-Next's 3 Gated DeltaNet layers to 1 attention layer):

* one ``Block.LAYER`` Cost per mixer kind: the input norm, the mixer and the residual add,
  repeated by the kind's count (the first kind of ``Spec.mixers``: N minus the others'
  counts; so the LAYER multiplicities sum to N);
* with n_hc (DeepSeek-V4's manifold-constrained hyper-connections, ``engine/deepseek_v4.py``),
  each of the two has its hyper-connection (``attn_hc``, ``ffn_hc``);
* one ``Block.FFN_SUBLAYER`` Cost per FFN kind: the pre-FFN norm, the FFN (dense, or the
  MoE block with its shared expert and gate) and the residual add, repeated N − N_moe and
  N_moe times (N_moe: the config's MoE layers; all N for an all-MoE stack); none with
  ``mixer_only`` (Mamba: norm and mixer only).

Which layer is of which kind changes no count (tests/test_layer_kinds.py builds
transformers' JambaForCausalLM, Qwen3NextForCausalLM, MambaForCausalLM and
Mamba2ForCausalLM against it).
"""

from __future__ import annotations

import sympy as sp

from symtrans.engine import deltanet as _deltanet  # noqa: F401  (registers GatedDeltaNet)
from symtrans.engine import dsa as _dsa  # noqa: F401  (registers SparseAttention)
from symtrans.engine import ffn_layers as _ffn_layers  # noqa: F401  (registers MlpLayer, MoeLayer)
from symtrans.engine import gemma4 as _gemma4
from symtrans.engine import parallel as _parallel  # noqa: F401  (registers ParallelAttentionMamba2)
from symtrans.engine import shortconv as _shortconv  # noqa: F401  (registers ShortConv)
from symtrans.engine import ssm as _ssm  # noqa: F401  (registers Mamba, Mamba2)
from symtrans.engine import symbols as S
from symtrans.engine import zamba2 as _zamba2  # noqa: F401  (registers Zamba2Hybrid)
from symtrans.engine.components import feed_forward, moe_feed_forward, norm
from symtrans.engine.conventions import per_element
from symtrans.engine.cost import Cost, Step
from symtrans.engine.deepseek_v4 import hyper_connection  # (and registers the V4 attention kinds)
from symtrans.engine.kinds import LayerKind, kind
from symtrans.engine.mixer_rules import GEMMA4_KINDS
from symtrans.engine.roles import Block, Role
from symtrans.engine.spec import MIXER_COUNTS, Spec, mixer_kinds


def kind_counts(spec: Spec, n: sp.Expr = S.N) -> list[tuple[type[LayerKind], sp.Expr]]:
    """(kind, layers of that kind) for ``spec.mixers``: each kind after the first has its
    count symbol, the first has the rest of the n layers."""
    names = mixer_kinds(spec)
    rest = [(kind(name), S.symbol(MIXER_COUNTS[name])) for name in names[1:]]
    return [(kind(names[0]), n - sp.Add(*[c for _, c in rest]))] + rest


def _residual(tokens: sp.Expr, source: str) -> Step:
    return Step(
        label="residual add",
        role=Role.RESIDUAL,
        elementwise=per_element("residual") * tokens * S.d_model,
        note="x + Sublayer(norm(x)) (all-ops only)",
        source=source,
    )


def hybrid_layers(spec: Spec, batch: sp.Expr, q: sp.Expr, context: sp.Expr, mask: str, decode: bool) -> list[Cost]:
    """The layers of a decoder stack of ``spec.mixers`` kinds on ``batch`` sequences of
    ``q`` new tokens seeing ``context`` positions (see the module docstring).

    Units: as ``cost.Cost`` (parameters, forward FLOPs at this shape, cache elements per
    token, state elements per sequence)."""
    if set(mixer_kinds(spec)) & set(GEMMA4_KINDS):  # Gemma 4's kinds: its own layer (engine/gemma4.py)
        return _gemma4.gemma4_layers(spec, batch, q, context, mask, decode, kind_counts(spec))
    t = batch * q
    out: list[Cost] = []
    for k, count in kind_counts(spec):
        mixer = k.mixer(spec, batch, q, context, mask, decode)
        nrm = norm(spec, "input norm", S.d_model, t)
        hc = (hyper_connection(t, "attention hyper-connection"),) if spec.has("n_hc") else ()
        out.append(
            Cost(
                name=f"{k.title} layer",
                block=Block.LAYER,
                steps=(_residual(t, mixer.source),),
                children=hc
                + ((Cost(name="input norm", block=Block.NORM, steps=tuple(nrm)),) if nrm else ())
                + (mixer,),
                multiplicity=count,
                note=f"norm, {k.title} mixer, residual; the stack has {sp.sstr(count)} of them",
                source=mixer.source,
                kind=k.name,
            )
        )
        out += k.stored(spec, batch, q)  # shared weights stored apart from the layers (Zamba2)
    if spec.mixer_only:
        return out
    if not spec.is_moe:
        ffns = [(S.N, False)]
    elif spec.has("N_moe"):
        ffns = [(S.N - S.N_moe, False), (S.N_moe, True)]
    else:
        ffns = [(S.N, True)]
    for count, moe in ffns:
        ffn = moe_feed_forward(spec, t) if moe else feed_forward(spec, t)
        nrm = norm(spec, "feed-forward norm", S.d_model, t)
        hc = (hyper_connection(t, "feed-forward hyper-connection"),) if spec.has("n_hc") else ()
        out.append(
            Cost(
                name="MoE feed-forward sublayer" if moe else "feed-forward sublayer",
                block=Block.FFN_SUBLAYER,
                steps=(_residual(t, ffn.source or "Vaswani et al. 2017 §3.1"),),
                children=hc
                + ((Cost(name="feed-forward norm", block=Block.NORM, steps=tuple(nrm)),) if nrm else ())
                + (ffn,),
                multiplicity=count,
                note="the feed-forward half of the layers, counted by FFN kind (the sums are additive)",
            )
        )
    return out
