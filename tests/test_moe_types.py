"""The mixture-of-experts decoder types of catalog/models/moe.py (issue 21) on their published
configs: each fixture (sources in tests/fixtures/configs/SOURCES.md) is built by transformers
5.x on the meta device and must count exactly what symtrans counts, in total and in the
parameters one token uses (the routed experts' share read off the model's own stacked expert
tensors, hf_reference.reference_active).  The totals written here are those meta-device
counts; the model cards' rounded figures are beside them as a sanity check, never the oracle.

The random configs, the key audit, FlopCounterMode and the re-save of every type are in
tests/test_model_types.py and tests/test_resave.py (the types are in hf_config.SUPPORTED).
"""

from __future__ import annotations

import pytest
from conftest import require

require("transformers")
from hf_reference import reference_active  # noqa: E402

from symtrans.catalog.hf_config import spec_from_config  # noqa: E402
from symtrans.engine.architectures import build  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402

MOE_FIXTURES = [
    # allenai OLMoE-1B-7B-0125-Instruct: 16 layers of 64 experts (top 8), "7B total, 1B active"
    ("olmoe-1b-7b-0125-instruct", 6_919_161_856, 1_282_017_280),
    # zai-org GLM-4.5-Air: 1 dense + 45 MoE layers of 128 experts and one shared, "106B total, 12B active"
    ("glm-4.5-air", 106_852_245_504, 13_424_123_904),
    # rednote dots.llm1: 1 dense + 61 MoE layers of 128 experts and two shared, "142B total, 14B active"
    ("dots.llm1-shaped", 142_774_373_888, 14_016_581_120),
    # MiniMax-M2: 62 MoE layers of 256 experts (top 8), "230B total, 10B active"
    ("minimax-m2-shaped", 228_689_748_992, 11_030_537_216),
]


@pytest.mark.parametrize(("name", "total", "active"), MOE_FIXTURES, ids=[n for n, _, _ in MOE_FIXTURES])
def test_published_moe_configs(hf, read_fixture, name, total, active):
    cfg = read_fixture(name)
    model = hf.build(cfg["model_type"], cfg)
    spec, _ = spec_from_config(cfg, name)
    cost = build(spec)
    assert hf.count(model) == total
    assert reference_active(hf, model, spec.size("E"), spec.size("k")) == active
    assert exact(cost.params, spec.values) == total
    assert exact(cost.active_params, spec.values) == active
