"""DeepSeek Sparse Attention (DSA) as a layer kind: multi-head latent attention (``engine.mla``)
whose queries each read only the top ``k_idx`` keys a lightning indexer picks.

Source: DeepSeek-AI 2025, "DeepSeek-V3.2: Pushing the Frontier of Open Large Language Models"
§2.1 (DeepSeek Sparse Attention: the lightning indexer, eq. 1, and fine-grained token
selection, eq. 2); transformers 5.x ``models/deepseek_v32/modeling_deepseek_v32.py``
(``DeepseekV32Indexer``, ``DeepseekV32Attention``), which GLM-5 (``glm_moe_dsa``) reuses.

The indexer of one layer, as transformers builds it (``DeepseekV32Indexer``):

* ``wq_b`` r_q x h_idx*d_idx, no bias: the indexer's queries, read from the MLA query latent
  (``q_a_layernorm(q_a_proj(x))``, so a DSA layer needs r_q);
* ``wk`` d_model x d_idx, no bias: one key per token that every indexer head shares;
* ``k_norm``: a LayerNorm over that key, γ and β (2*d_idx parameters);
* ``weights_proj`` d_model x h_idx, no bias: a weight per indexer head and token.

Index score of query t and key s: sum_j w_{t,j} ReLU(q_{t,j} . k_s) (paper eq. 1).  FLOPs per
sequence: the three maps on the new tokens, the scores 2*h_idx*d_idx per (query, key) pair and
the head-weighted sum 2*h_idx per pair (transformers: ``matmul(q, k^T)`` then
``matmul(weights, scores)``); the indexer scores every causal key (``components.attention_pairs``
under the mask convention).  Top-k selection is a comparison, 0 FLOPs.

Sparse attention (paper eq. 2), the convention named "sparse top-k": the query at position p
attends to min(p, k_idx) keys, which is how a causal window of k_idx keys counts
(``components.windowed_pairs`` with w = k_idx).  Under ``--mask causal`` that exact sum (what a
sparse kernel such as FlashMLA's computes; O(L k_idx) for L >> k_idx, paper §2.2); under
``half`` the band's area; under ``full`` (and ``window``, a decode step's full) the dense q*kv,
which is what transformers' eager and SDPA paths compute: they fold the top-k into a mask over
the dense score matrix, so ``--mask full`` equals FlopCounterMode on an eager forward.  The
indexer itself always scores every causal key (``attention_pairs``).

Decode cache per token and layer: MLA's r_kv + d_rope, plus the indexer's key, d_idx elements
(transformers' ``DynamicIndexedLayer`` keeps it beside the latent; the paper's FP8 key and its
scale are a storage format, not modelled).  The indexer is not split by tensor parallelism
(transformers' ``base_model_tp_plan`` names none of its maps).
"""

from __future__ import annotations

from dataclasses import replace

from symtrans.engine import symbols as S
from symtrans.engine.components import attention_pairs, expr_text, linear
from symtrans.engine.conventions import per_element
from symtrans.engine.cost import ATTENTION, Cost, Step
from symtrans.engine.kinds import LayerKind
from symtrans.engine.mla import mla_attention
from symtrans.engine.roles import Block, Role
from symtrans.engine.spec import Spec

SOURCE = "DeepSeek-AI 2025 (DeepSeek-V3.2) §2.1; DeepseekV32Indexer (transformers 5.x)"


def lightning_indexer(spec: Spec, batch, q, kv, mask: str) -> list[Step]:
    """The steps of one layer's lightning indexer on ``batch`` sequences of ``q`` new tokens
    scoring ``kv`` keys (module docstring).

    Units: parameters; forward FLOPs at that shape; ``cache`` elements per token (the key)."""
    tq = batch * q
    steps = linear(
        "W_IQ", S.r_q, S.h_idx * S.d_idx, tq, False, SOURCE, "indexer queries from the query latent (wq_b)",
        role=Role.INDEXER_Q,
    )  # fmt: skip
    key = linear(
        "W_IK", S.d_model, S.d_idx, tq, False, SOURCE, "the indexer key, one per token, shared by its heads (wk)",
        role=Role.INDEXER_K,
    )  # fmt: skip
    key[0] = replace(key[0], cache=S.d_idx)  # DynamicIndexedLayer keeps it for decode
    steps += key
    steps.append(
        Step(
            label="indexer key norm",
            role=Role.INDEXER_NORM,
            params=2 * S.d_idx,
            elementwise=per_element("layernorm") * tq * S.d_idx,
            note="k_norm: nn.LayerNorm(d_idx), scale γ and shift β",
            source=SOURCE,
        )
    )
    steps += linear(
        "W_IW", S.d_model, S.h_idx, tq, False, SOURCE, "a weight per indexer head and token (weights_proj)",
        role=Role.INDEXER_WEIGHTS,
    )  # fmt: skip
    pairs = attention_pairs(q, kv, mask)
    steps.append(
        Step(
            label="index scores",
            role=Role.INDEXER_SCORES,
            flops=2 * batch * S.h_idx * pairs * S.d_idx,
            kind=ATTENTION,
            shape=f"h_idx x ({expr_text(q)} x d_idx) . (d_idx x {expr_text(kv)})",
            elementwise=per_element("activation") * batch * S.h_idx * pairs,
            note="ReLU(q k^T) of every indexer head against every causal key (paper eq. 1)",
            source=SOURCE,
        )
    )
    steps.append(
        Step(
            label="head-weighted sum",
            role=Role.INDEXER_SCORES,
            flops=2 * batch * S.h_idx * pairs,
            kind=ATTENTION,
            shape=f"({expr_text(q)} x h_idx) . (h_idx x {expr_text(kv)})",
            note="sum over the indexer heads of w_t,j x score; top-k of the result picks the keys (0 FLOPs)",
            source=SOURCE,
        )
    )
    return steps


class SparseAttention(LayerKind):
    """DeepSeek Sparse Attention: MLA reading the top k_idx keys, and its lightning indexer."""

    name = "dsa"
    title = "DeepSeek sparse attention"
    block = Block.CAUSAL_SELF_ATTENTION

    @classmethod
    def mixer(cls, spec: Spec, batch, q, context, mask, decode):
        mla = mla_attention(spec, "causal", batch, q, context, mask, keys=S.k_idx)
        steps = mla.steps + tuple(lightning_indexer(spec, batch, q, context, mask))
        return Cost(name="DeepSeek sparse attention", block=cls.block, steps=steps, source=f"{SOURCE}; {mla.source}")
