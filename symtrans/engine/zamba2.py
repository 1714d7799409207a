"""Zyphra's Zamba2 hybrid layer as a layer kind (Glorioso et al. 2024, arXiv:2411.15242 §2, Fig. 2;
transformers' ``Zamba2HybridLayer``): a Mamba 2 layer that first adds the output of a *shared*
transformer block.  The block reads the concatenation of the layer's input and the token
embeddings (2·d_model wide), so its attention works at width 2·d_model:

* the shared block: an RMSNorm of 2·d_model, attention with W_Q 2·d_model → h·d_k,
  W_K and W_V 2·d_model → h_kv·d_k, W_O h·d_k → d_model (no biases; d_k = 2·d_model / h, read
  as a size), an RMSNorm of d_model and a gated MLP (gate and up d_model → d_ff, down
  d_ff → d_model, ``ffn_bias``); its K/V cache per token is h_kv·d_k keys and as many values
  at each hybrid layer (``Zamba2Attention``: ``head_dim = 2·hidden_size // heads``);
* LoRA adapters per use (rank r_adp, no biases): on the MLP's gate and up maps d_model → r_adp →
  2·d_ff always, and on W_Q, W_K, W_V 2·d_model → r_adp → 2·d_model each with
  ``shared_attention_adapter`` (``use_shared_attention_adapter``);
* a map d_model → d_model (no bias) of the block's output, added to the input of the layer's
  Mamba 2 mixer (``Zamba2HybridLayer.linear``), then the Mamba 2 mixer itself (``ssm.Mamba2``).

Weights: the N_hyb hybrid layers run the block, each with its own adapters, but the model
stores the block N_mem times (``num_mem_blocks`` blocks used round-robin, min(num_mem_blocks,
N_hyb) of them) and N_adp adapter sets; the config reader gives both (an untied model stores a
copy per hybrid layer).  So each use carries FLOPs and cache with 0 parameters (as a tied
matrix), and ``stored`` adds one Cost of the block's weights repeated N_mem times and one of
the adapters' repeated N_adp times (parameters only: no FLOPs, cache or state).
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from symtrans.engine import symbols as S
from symtrans.engine.components import attention_pairs, expr_text, ffn_steps, linear, norm
from symtrans.engine.cost import ATTENTION, NONE, ZERO, Cost, Step
from symtrans.engine.kinds import LayerKind
from symtrans.engine.roles import Block, Role
from symtrans.engine.ssm import Mamba2

SOURCE = "Zamba2 (Glorioso et al. 2024, arXiv:2411.15242 §2); Zamba2HybridLayer, Zamba2AttentionDecoderLayer"


def _shared_block(spec, batch: sp.Expr, q: sp.Expr, context: sp.Expr, mask: str) -> list[Step]:
    """The shared transformer block's steps at one use (with their parameters)."""
    t, d2 = batch * q, 2 * S.d_model
    h, h_kv, d_k = S.h, (S.h_kv if spec.has("h_kv") else S.h), S.d_k
    steps = norm(spec, "shared block input norm (2 d_model)", d2, t)
    steps += linear("W_Q", d2, h * d_k, t, False, SOURCE, "queries from the 2 d_model-wide input", role=Role.Q_PROJ)
    steps += linear("W_K", d2, h_kv * d_k, t, False, SOURCE, "keys from the 2 d_model-wide input", role=Role.K_PROJ)
    steps += linear("W_V", d2, h_kv * d_k, t, False, SOURCE, "values from the 2 d_model-wide input", role=Role.V_PROJ)
    for i, st in enumerate(steps):
        if st.role in (Role.K_PROJ, Role.V_PROJ):  # the K/V cache of every hybrid layer
            steps[i] = replace(st, cache=h_kv * d_k, cache_heads=h_kv)
    pairs = attention_pairs(q, context, mask)
    steps.append(
        Step(
            label="Q K^T",
            role=Role.ATTENTION_SCORES,
            flops=2 * batch * h * pairs * d_k,
            kind=ATTENTION,
            shape=f"h x ({expr_text(q)} x {expr_text(d_k)}) . ({expr_text(d_k)} x {expr_text(context)})",
            note="attention scores of the shared block, d_k = 2 d_model / h wide",
            source=SOURCE,
        )
    )
    steps.append(
        Step(
            label="scores V",
            role=Role.ATTENTION_VALUES,
            flops=2 * batch * h * pairs * d_k,
            kind=ATTENTION,
            shape=f"h x ({expr_text(q)} x {expr_text(context)}) . ({expr_text(context)} x {expr_text(d_k)})",
            note="weighted sum of values, per head",
            source=SOURCE,
        )
    )
    steps += linear("W_O", h * d_k, S.d_model, t, False, SOURCE, "back to d_model", role=Role.O_PROJ)
    steps += norm(spec, "shared block feed-forward norm", S.d_model, t)
    steps += ffn_steps(spec, t, prefix="shared ")
    return steps


def _adapters(spec, t: sp.Expr) -> list[Step]:
    """One use's LoRA adapters (with their parameters): rank r_adp, no biases."""
    r, d2 = S.r_adp, 2 * S.d_model
    pairs = [("MLP adapter", S.d_model, 2 * S.d_ff)]
    if spec.shared_attention_adapter:
        pairs += [(f"{x} adapter", d2, d2) for x in ("Q", "K", "V")]
    steps: list[Step] = []
    for label, d_in, d_out in pairs:
        steps += linear(f"{label} (down)", d_in, r, t, False, SOURCE, f"{expr_text(d_in)} -> r_adp", role=Role.ADAPTER)
        steps += linear(f"{label} (up)", r, d_out, t, False, SOURCE, f"r_adp -> {expr_text(d_out)}", role=Role.ADAPTER)
    return steps


def _use(steps: list[Step]) -> tuple[Step, ...]:
    """Shared weights at one use: FLOPs, weights and cache, 0 parameters (as a tied matrix)."""
    return tuple(replace(s, params=ZERO, active=None if s.active is None else ZERO, matrices=()) for s in steps)


def _stored(steps: list[Step]) -> tuple[Step, ...]:
    """One stored copy: parameters only (no FLOPs, cache or state of its own)."""
    return tuple(
        replace(s, flops=ZERO, kind=NONE, weights=ZERO, elementwise=ZERO, shape="", cache=ZERO, state=ZERO)
        for s in steps
        if s.params != 0
    )


class Zamba2Hybrid(LayerKind):
    """A Zamba2 hybrid layer: a use of the shared block (and its adapters), a d_model map, Mamba 2."""

    name = "zamba2_hybrid"
    title = "Zamba2 hybrid (shared block + Mamba 2)"
    block = Block.OTHER

    @classmethod
    def mixer(cls, spec, batch, q, context, mask, decode):
        t = batch * q
        children = (
            Cost(
                name="shared transformer block (use)",
                block=Block.CAUSAL_SELF_ATTENTION,
                steps=_use(_shared_block(spec, batch, q, context, mask)),
                note="the weights are stored N_mem times (see the shared weights); this use costs FLOPs and caches K/V",
                source=SOURCE,
            ),
            Cost(
                name="LoRA adapters of this use",
                block=Block.OTHER,
                steps=_use(_adapters(spec, t)),
                note="stored N_adp times (see the shared weights)",
                source=SOURCE,
            ),
            Cost(
                name="block output map",
                block=Block.OTHER,
                steps=tuple(
                    linear(
                        "linear", S.d_model, S.d_model, t, False, SOURCE, "Zamba2HybridLayer.linear", role=Role.ADAPTER
                    )
                ),
                source=SOURCE,
            ),
            Mamba2.mixer(spec, batch, q, context, mask, decode),
        )
        return Cost(name="Zamba2 hybrid mixer", block=cls.block, children=children, source=SOURCE)

    @classmethod
    def stored(cls, spec, batch, q) -> list[Cost]:
        """The stored shared weights: the block N_mem times, the adapter sets N_adp times."""
        return [
            Cost(
                name="shared transformer blocks (stored)",
                block=Block.SHARED_LAYER_WEIGHTS,
                steps=_stored(_shared_block(spec, batch, q, q, "causal")),
                multiplicity=S.N_mem,
                note="num_mem_blocks blocks used round-robin by the N_hyb hybrid layers",
                source=SOURCE,
            ),
            Cost(
                name="LoRA adapter sets (stored)",
                block=Block.SHARED_LAYER_WEIGHTS,
                steps=_stored(_adapters(spec, batch * q)),
                multiplicity=S.N_adp,
                note="one set per hybrid layer in each stored block",
                source=SOURCE,
            ),
        ]
