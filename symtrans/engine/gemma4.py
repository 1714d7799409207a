"""Gemma 4's decoder stack as layer kinds (Google DeepMind 2026; transformers 5.x
``models/gemma4/modeling_gemma4.py``, ``Gemma4TextModel``), in closed form.

A Gemma 4 stack has up to four kinds of layer, each counted by its own symbol, so any
``layer_types`` pattern closes without a loop over the layers:

* ``attention`` (the first kind: N − N_g − N_xs − N_xg layers): sliding-window attention
  (window w) with its own keys and values, h query heads and h_kv key/value heads of width
  d_k (``Gemma4TextAttention`` of a ``sliding_attention`` layer);
* ``global_attention`` (N_g): full attention with its own keys and values, heads of width d_kg
  (``global_head_dim``) and h_kvg key/value heads (``num_global_key_value_heads`` where
  ``attention_k_eq_v``, else num_key_value_heads); with ``k_eq_v`` no value map, the keys
  serve as values (``v_proj`` is None);
* ``shared_attention`` (N_xs) and ``shared_global_attention`` (N_xg): the last
  ``num_kv_shared_layers`` layers, which reuse the keys and values of the last earlier layer of
  their type: a query map, its norm and the output map only, and nothing cached.

Every layer: RMSNorms of q and k per head (d_k or d_kg weights each; the value norm has no
weights), four d_model RMSNorms (input, post-attention, pre- and post-feed-forward), a GeGLU
MLP of d_ff (2 d_ff in the KV-sharing layers with ``shared_ffn_double``), with E a mixture of
experts beside the MLP (``Gemma4TextRouter``: a weightless norm, a d_model scale, d_model x E and
an E-vector per-expert scale; E GeGLU experts of d_ff_e, k per token; three more d_model norms),
and with per-layer inputs (d_ple, V_ple) a gate d_model -> d_ple, a projection d_ple -> d_model
and a d_model norm.  Before the stack: the per-layer table V_ple x N d_ple, the map
d_model -> N d_ple and a d_ple norm (``embed_tokens_per_layer``, ``per_layer_model_projection``,
``per_layer_projection_norm``).

FLOPs follow the matmul convention; the shared layers' queries read the whole context of
the layer whose keys they reuse (eager attention: the full square under ``--mask full``).
Cache per token: K and V of the layers with their own keys (both kept when K = V: the cache
holds the key tensor twice), the sliding ones the last w positions; none in the shared layers
(transformers gives them no cache layer of their own).
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from symtrans.engine import symbols as S
from symtrans.engine.components import attention, feed_forward, linear, moe_feed_forward, norm
from symtrans.engine.conventions import per_element
from symtrans.engine.cost import ONE, Cost, Matrix, Step, substitute
from symtrans.engine.kinds import LayerKind
from symtrans.engine.roles import Block, Role
from symtrans.engine.spec import Spec

SOURCE = "Gemma 4 (Google DeepMind 2026); transformers Gemma4TextAttention, Gemma4TextDecoderLayer"
_GLOBAL = {S.d_k: S.d_kg, S.h_kv: S.h_kvg}
_KV_ROLES = (Role.K_PROJ, Role.V_PROJ, Role.K_NORM)


def _global(spec: Spec, cost: Cost) -> Cost:
    """A full-attention layer's attention: the sliding one's maps at d_kg and h_kvg, without
    W_V under ``k_eq_v`` (its keys cached twice: the cache holds keys and values)."""
    cost = substitute(cost, _GLOBAL)
    if not spec.k_eq_v:
        return cost
    steps = []
    for st in cost.steps:
        if st.role == Role.V_PROJ:
            continue
        if st.role == Role.K_PROJ and not st.bias:
            st = replace(st, cache=2 * st.cache, note=st.note + "; also the values (attention_k_eq_v: no v_proj)")
        steps.append(st)
    return replace(cost, steps=tuple(steps))


def _shared(cost: Cost) -> Cost:
    """A KV-sharing layer's attention: queries, their norm and the output map; the keys and
    values of an earlier layer (no W_K, W_V, key norm, nothing cached)."""
    steps = tuple(st for st in cost.steps if st.role not in _KV_ROLES)
    return replace(cost, name=cost.name + " (reusing an earlier layer's keys and values)", steps=steps)


class GlobalAttention(LayerKind):
    """Gemma 4's full-attention layer with its own keys and values (d_kg, h_kvg)."""

    name = "global_attention"
    title = "full attention"
    block = Block.CAUSAL_SELF_ATTENTION

    @classmethod
    def mixer(cls, spec, batch, q, context, mask, decode):
        return _global(spec, attention(spec, "causal", batch, q, context, mask, window=False))


class SharedAttention(LayerKind):
    """Gemma 4's sliding-window layer reusing an earlier sliding layer's keys and values."""

    name = "shared_attention"
    title = "KV-sharing sliding attention"
    block = Block.CAUSAL_SELF_ATTENTION

    @classmethod
    def mixer(cls, spec, batch, q, context, mask, decode):
        return _shared(attention(spec, "causal", batch, q, context, mask, window=True))


class SharedGlobalAttention(LayerKind):
    """Gemma 4's full-attention layer reusing an earlier full layer's keys and values."""

    name = "shared_global_attention"
    title = "KV-sharing full attention"
    block = Block.CAUSAL_SELF_ATTENTION

    @classmethod
    def mixer(cls, spec, batch, q, context, mask, decode):
        return _shared(substitute(attention(spec, "causal", batch, q, context, mask, window=False), _GLOBAL))


def _residual(tokens: sp.Expr) -> Step:
    return Step(
        label="residual add",
        role=Role.RESIDUAL,
        elementwise=per_element("residual") * tokens * S.d_model,
        note="x + post_norm(Sublayer(pre_norm(x))) (all-ops only)",
        source=SOURCE,
    )


def _norms(spec: Spec, labels: tuple[str, ...], tokens: sp.Expr) -> Cost:
    steps = [st for label in labels for st in norm(spec, label, S.d_model, tokens)]
    return Cost(name=" and ".join(labels), block=Block.NORM, steps=tuple(steps))


def _moe(spec: Spec, tokens: sp.Expr) -> Cost:
    """The mixture of experts beside the MLP (Gemma4TextRouter, Gemma4TextExperts) and its
    three norms (pre_feedforward_layernorm_2, post_feedforward_layernorm_1 and _2)."""
    moe = moe_feed_forward(spec, tokens)
    extra = (
        Step(
            label="router scale",
            role=Role.ROUTER,
            params=S.d_model,
            elementwise=per_element("scale") * tokens * S.d_model,
            note="Gemma4TextRouter.scale: a d_model vector on the router's (weightless) RMSNorm output",
            source=SOURCE,
        ),
        Step(
            label="per-expert scale",
            role=Role.ROUTER,
            params=S.E,
            note="Gemma4TextRouter.per_expert_scale: one weight per expert on its top-k routing weights",
            source=SOURCE,
        ),
    )
    moe = replace(moe, steps=moe.steps + extra)
    nrm = _norms(spec, ("pre-expert norm", "post-MLP norm", "post-expert norm"), tokens)
    return Cost(name="mixture of experts beside the MLP", block=Block.MOE, children=(nrm, moe), source=SOURCE)


def _per_layer_input(spec: Spec, tokens: sp.Expr) -> Cost:
    steps = linear(
        "per-layer input gate", S.d_model, S.d_ple, tokens, False, SOURCE,
        "per_layer_input_gate: d_model -> d_ple, its GELU times the layer's per-layer input",
        role=Role.PLE_GATE,
    )  # fmt: skip
    steps += linear(
        "per-layer projection", S.d_ple, S.d_model, tokens, False, SOURCE,
        "per_layer_projection: d_ple -> d_model, added to the residual stream after its norm",
        role=Role.PLE_PROJECTION,
    )  # fmt: skip
    steps += norm(spec, "post per-layer input norm", S.d_model, tokens)
    steps.append(_residual(tokens))
    return Cost(name="per-layer input", block=Block.OTHER, steps=tuple(steps), source=SOURCE)


def per_layer_inputs(spec: Spec, tokens: sp.Expr) -> Cost:
    """The per-layer inputs before the stack (Gemma4TextModel): the V_ple x N d_ple table
    (a lookup, 0 FLOPs), the map d_model -> N d_ple of the token embeddings and the d_ple RMSNorm."""
    table = Step(
        label="per-layer embedding table",
        role=Role.PLE_EMBEDDING,
        params=S.V_ple * S.N * S.d_ple,
        note="embed_tokens_per_layer: V_ple rows of N d_ple (every layer's d_ple slice packed in one row)",
        source=SOURCE,
        matrices=(Matrix(ONE, S.V_ple, S.N * S.d_ple, lookup=True),),
    )
    steps = [table]
    steps += linear(
        "per-layer model projection", S.d_model, S.N * S.d_ple, tokens, False, SOURCE,
        "per_layer_model_projection: d_model -> N d_ple from the token embeddings",
        role=Role.PLE_PROJECTION,
    )  # fmt: skip
    steps += norm(spec, "per-layer projection norm", S.d_ple, tokens * S.N)
    return Cost(name="per-layer inputs", block=Block.EMBEDDINGS, steps=tuple(steps), source=SOURCE)


def gemma4_layers(spec: Spec, batch, q, context, mask, decode, counts) -> list[Cost]:
    """The layers of a Gemma 4 stack (module docstring): one ``Block.LAYER`` Cost per mixer kind
    of ``counts`` ((kind, layers)), one ``Block.FFN_SUBLAYER`` per FFN width (d_ff on the layers
    with their own keys and values, 2 d_ff on the others with ``shared_ffn_double``) holding the
    MLP, the experts beside it and the per-layer input, and the per-layer inputs' table first."""
    t = batch * q
    out: list[Cost] = []
    if spec.has("d_ple"):
        out.append(per_layer_inputs(spec, t))
    for k, count in counts:
        mixer = k.mixer(spec, batch, q, context, mask, decode)
        out.append(
            Cost(
                name=f"{k.title} layer",
                block=Block.LAYER,
                steps=(_residual(t),),
                children=(_norms(spec, ("input norm", "post-attention norm"), t), mixer),
                multiplicity=count,
                note=f"norms, {k.title}, residual; the stack has {sp.sstr(count)} of them",
                source=SOURCE,
                kind=k.name,
            )
        )
    shared = sp.Add(*[c for k, c in counts if k.name in ("shared_attention", "shared_global_attention")])
    halves = [(S.N - shared, False), (shared, True)] if spec.shared_ffn_double and shared != 0 else [(S.N, False)]
    for count, wide in halves:
        ffn = feed_forward(spec, t)
        if wide:
            ffn = substitute(ffn, {S.d_ff: 2 * S.d_ff})
            ffn = replace(ffn, name=ffn.name + ", 2 d_ff wide (use_double_wide_mlp)")
        children = [_norms(spec, ("pre-feed-forward norm", "post-feed-forward norm"), t), ffn]
        if spec.is_moe:
            children.append(_moe(spec, t))
        if spec.has("d_ple"):
            children.append(_per_layer_input(spec, t))
        out.append(
            Cost(
                name="feed-forward half (KV-sharing layers)" if wide else "feed-forward half",
                block=Block.FFN_SUBLAYER,
                steps=(_residual(t),),
                children=tuple(children),
                multiplicity=count,
                note="the feed-forward half of the layers, by FFN width (the sums are additive)",
                source=SOURCE,
            )
        )
    return out
