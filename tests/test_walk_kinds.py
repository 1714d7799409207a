"""The shape walk of the layer kinds added after the first hybrids (issue 21, Build 3): Zamba2's
hybrid layer (a shared transformer block read at 2 d_model, its LoRA adapters, a d_model map,
then Mamba 2).

Oracle, independent of symtrans: ``torch.utils.flop_counter.FlopCounterMode`` on transformers
5.x's eager CPU forward (``attn_implementation="eager"``: the full L x L score square, so the
walk is taken at ``mask="full"``) of tiny models: AUDIT_BASE's config of the type and
hypothesis draws of ``hf_reference``'s strategy for it.  The walk's FLOPs come from its own
shapes (analysis/walk_hybrid.py, written from ``modeling_zamba2.py``), not from the engine's
steps; that they also equal the engine's forward, and that its cache and state steps equal the
real cache, is tests/test_kv_cache_real.py's check (``HYBRIDS``).
"""

from __future__ import annotations

from conftest import require

require("transformers")
from hf_reference import zamba2  # noqa: E402
from hypothesis import assume, given, settings  # noqa: E402
from test_model_types import _cfg, _counted, _flop_model  # noqa: E402

from symtrans.analysis.walk import walk  # noqa: E402
from symtrans.catalog.hf_config import spec_from_config  # noqa: E402
from symtrans.engine.architectures import Workload  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402

FULL = Workload(mask="full")  # eager attention computes every query-key pair


def _walk_against_counter(hf, model_type: str, cfg: dict, batch: int, seq: int) -> int:
    spec, _ = spec_from_config(cfg, "walk")
    model = _flop_model(hf, model_type, cfg)
    ids = hf.torch.ones(batch, seq, dtype=hf.torch.long)
    with hf.torch.no_grad():
        counted = _counted(hf, lambda: model(input_ids=ids, use_cache=False))
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
