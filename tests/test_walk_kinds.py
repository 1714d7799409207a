"""The shape walk of the layer kinds added after the first hybrids (issue 21, Build 3): Zamba2's
hybrid layer (a shared transformer block read at 2 d_model, its LoRA adapters, a d_model map,
then Mamba 2) and Gemma 4's (full attention at d_kg with K = V or not, the KV-sharing tail, the
double-wide MLP, per-layer inputs, the experts beside the MLP) and DeepSeek Sparse Attention
(MLA reading the top k_idx keys, and its lightning indexer).

Oracle, independent of symtrans: ``torch.utils.flop_counter.FlopCounterMode`` on transformers
5.x's eager CPU forward (``attn_implementation="eager"``: the full L x L score square, so the
walk is taken at ``mask="full"``) of tiny models: AUDIT_BASE's config of the type and
hypothesis draws of ``hf_reference``'s strategy for it.  The walk's FLOPs come from its own
shapes (analysis/walk_hybrid.py, written from ``modeling_zamba2.py``, ``modeling_gemma4.py``,
``modeling_deepseek_v32.py``), not from the engine's
steps; that they also equal the engine's forward, and that its cache and state steps equal the
real cache, is tests/test_kv_cache_real.py's check (``HYBRIDS``).
"""

from __future__ import annotations

import pytest
from conftest import require

require("transformers")
from hf_reference import gemma4_text, zamba2  # noqa: E402
from hypothesis import assume, given, settings  # noqa: E402
from test_model_types import _cfg, _counted, _flop_model  # noqa: E402

from symtrans.analysis.walk import walk  # noqa: E402
from symtrans.catalog.hf_config import spec_from_config  # noqa: E402
from symtrans.engine.architectures import Workload  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402

FULL = Workload(mask="full")  # eager attention computes every query-key pair


def _walk_against_counter(hf, model_type: str, cfg: dict, batch: int, seq: int, **call) -> int:
    spec, _ = spec_from_config(cfg, "walk")
    model = _flop_model(hf, model_type, cfg)
    ids = hf.torch.ones(batch, seq, dtype=hf.torch.long)
    with hf.torch.no_grad():
        counted = _counted(hf, lambda: model(input_ids=ids, use_cache=False, **call))
    walked = exact(walk(spec, FULL).flops, {**spec.values, "B": batch, "L": seq})
    assert walked == counted, (cfg, walked, counted)
    return counted


def test_zamba2_walk_equals_the_counter_on_audit_base(hf):
    # AUDIT_BASE's zamba2: 4 layers (Mamba 2, hybrid, Mamba 2, hybrid), 2 shared blocks with rank-2
    # adapters on the MLP and on q, k, v; at L = 3, 6 and 11 (chunks of 5: one, two, three, the last padded)
    for seq in (3, 6, 11):
        assert _walk_against_counter(hf, "zamba2", _cfg("zamba2"), 2, seq) > 0


@settings(max_examples=8, deadline=None)
@given(cfg=zamba2())
def test_zamba2_walk_equals_the_counter_on_draws(hf, cfg):
    # torch.einsum computes a contraction over a dimension of size 1 as an element-wise product, which
    # FlopCounterMode does not count (tests/test_layer_kinds.py, Mamba 2): d_state, the chunk and the
    # Mamba 2 head width (expand x hidden_size / n_mamba_heads) of at least 2
    cfg = {**cfg, "mamba_d_state": max(2, cfg["mamba_d_state"]), "chunk_size": max(2, cfg["chunk_size"])}
    assume(cfg.get("mamba_expand", 2) * cfg["hidden_size"] // cfg["n_mamba_heads"] >= 2)
    _walk_against_counter(hf, "zamba2", cfg, 1, 4)


# --- Gemma 4 (gemma4_text): sliding and full layers, K = V, the KV-sharing tail with the double-wide
# MLP, per-layer inputs and the experts beside the MLP


# Gemma4TextModel._maybe_slice_kv_shared_inputs (transformers 5.24) slices the KV-sharing layers' inputs to
# logits_to_keep (0 here: every position, so no FLOPs change) and indexes per_layer_inputs, None without
# per-layer inputs (a TypeError); asking for the hidden states turns that path off, the matmuls unchanged.
GEMMA4_CALL = {"output_hidden_states": True}


@pytest.mark.parametrize(
    "changes",
    [
        {},  # AUDIT_BASE: 6 layers (3 sliding, 3 full; the last 2 share K/V), K = V, double-wide MLP, PLE 3, 3 experts
        {"attention_k_eq_v": False, "num_global_key_value_heads": None},  # own values, h_kv heads at d_kg
        {"num_kv_shared_layers": 0, "use_double_wide_mlp": False},  # no sharing tail
        {"enable_moe_block": False, "hidden_size_per_layer_input": 0},  # the MLP alone
    ],
)
def test_gemma4_walk_equals_the_counter(hf, changes):
    # at L = 5, 8 (the window) and 11 (past it: eager attention computes the full square all the same)
    for seq in (5, 8, 11):
        _walk_against_counter(hf, "gemma4_text", _cfg("gemma4_text", **changes), 2, seq, **GEMMA4_CALL)


@settings(max_examples=8, deadline=None)
@given(cfg=gemma4_text())
def test_gemma4_walk_equals_the_counter_on_draws(hf, cfg):
    # the strategy draws for meta-device counts; a KV-sharing layer whose type has no earlier layer of its
    # own builds but cannot run (Gemma4TextAttention looks the shared keys up by type: KeyError), so such
    # a draw is left out of the forwards
    types = cfg.get("layer_types")
    shared = cfg.get("num_kv_shared_layers", 0)
    if shared and types is not None:
        first = len(types) - shared
        assume(all(t in types[:first] for t in types[first:]))
    assume(not shared or types is not None)  # the class's default pattern: left to test_model_types
    _walk_against_counter(hf, "gemma4_text", cfg, 1, 6, **GEMMA4_CALL)


# --- DeepSeek Sparse Attention (deepseek_v32; glm_moe_dsa, whose dense layers are MLA): eager attention
# applies the indexer's top k_idx as a mask over the dense square, so under mask "full" the walk counts
# the dense pairs; the indexer scores every causal key.  L past k_idx (AUDIT_BASE's k_idx) included.


@pytest.mark.parametrize("model_type", ["deepseek_v32", "glm_moe_dsa"])
def test_dsa_walk_equals_the_counter(hf, model_type):
    for seq in (3, 7, 12):
        _walk_against_counter(hf, model_type, _cfg(model_type), 2, seq)
