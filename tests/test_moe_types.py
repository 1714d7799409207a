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
    # rednote dots.llm1 (the base model's published config.json): 1 dense + 61 MoE layers of 128 experts
    # and two shared, "142B total, 14B active"
    ("dots.llm1-base", 142_774_373_888, 14_016_581_120),
    # MiniMax-M2.7 (the M2 architecture): 62 MoE layers of 256 experts (top 8), "230B total, 10B active"
    ("minimax-m2.7", 228_689_748_992, 11_030_537_216),
    # IBM granite-3.1-3b-a800m-instruct (its published config.json): 32 layers of 40 experts (top 8), tied
    # head, "3.3B total, 800M active"
    ("granite-3.1-3b-a800m-instruct", 3_298_793_472, 882_874_368),
    # Baidu ERNIE-4.5-21B-A3B: 1 dense + 27 MoE layers of 64 experts and two shared, "21B total, 3B active"
    ("ernie-4.5-21b-a3b-shaped", 21_825_437_888, 3_352_150_208),
    # Tencent Hunyuan-A13B: 32 layers of 64 experts (moe_topk [8] * 32) and one shared, "80B total, 13B active"
    ("hunyuan-a13b-shaped", 80_918_155_264, 13_272_420_352),
    # zai-org GLM-4.7-Flash (glm4_moe_lite): latent attention, 1 dense + 46 MoE layers of 64 experts
    # and one shared, "30B-A3B"
    ("glm-4.7-flash", 29_943_390_976, 3_896_763_136),
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


def test_minimax_m27_weight_table(read_fixture):
    """The checkpoint's own tensors, as a public model report of MiniMax-M2.7 lists them beside this
    config.json (SOURCES.md): 228,703,644,928 stored elements.  They are the model's parameters plus
    what the FP8 checkpoint stores besides: one float32 scale per 128 x 128 block of every quantized
    matrix (weight_scale_inv) and the router's e_score_correction_bias (a buffer in transformers)."""
    cfg = read_fixture("minimax-m2.7")
    spec, _ = spec_from_config(cfg, "minimax-m2.7")
    layers, experts = 62, 256
    expert_scales = 3 * (1536 // 128) * (3072 // 128)  # w1, w3: [12, 24]; w2: [24, 12]
    attention_scales = 2 * (6144 // 128) * (3072 // 128) + 2 * (1024 // 128) * (3072 // 128)  # q, o; k, v
    scales = layers * (experts * expert_scales + attention_scales)
    bias = layers * experts  # scales 13,880,064; bias 15,872
    assert exact(build(spec).params, spec.values) + scales + bias == 228_703_644_928


def test_glm47_flash_weight_table(read_fixture):
    """GLM-4.7-Flash's checkpoint (BF16) as the same report lists it beside this config.json:
    31,221,488,576 stored elements = the model's parameters + the MTP layer 47 that
    transformers does not build (one more MoE layer, eh_proj 2 x 2048 -> 2048, enorm, hnorm,
    its own embed_tokens and shared_head 154,880 x 2048, shared_head.norm) + the 47 routers'
    e_score_correction_bias (a buffer in transformers)."""
    cfg = read_fixture("glm-4.7-flash")
    spec, _ = spec_from_config(cfg, "glm-4.7-flash")
    d, V = 2048, 154_880
    # norms; kv_a_layernorm, kv_a_proj_with_mqa (512 + 64), kv_b_proj (20 x (192 + 256)), o_proj;
    # q_a_layernorm, q_a_proj (768), q_b_proj (20 x 256)
    attention = 2 * d + 512 + 576 * d + 8960 * 512 + 5120 * d + 768 + 768 * d + 5120 * 768
    moe = 64 * 3 * 1536 * d + 64 * d + 3 * 1536 * d  # 64 experts of 1536, router, one shared expert
    mtp = attention + moe + 4096 * d + 2 * d + 2 * V * d + d
    bias = 47 * 64
    assert exact(build(spec).params, spec.values) + mtp + bias == 31_221_488_576


def test_hunyuan_per_layer_top_k():
    """HunYuanMoEV1Gate reads moe_topk[layer_idx]: one k for every layer is counted (Hunyuan-A13B
    writes [8] * 32); different k by layer is refused in one line (the engine has one k)."""
    from symtrans.catalog.hf_config import ConfigError

    base = dict(model_type="hunyuan_v1_moe", num_hidden_layers=2, head_dim=4, num_experts=3)
    spec, _ = spec_from_config({**base, "moe_topk": [2, 2]}, "x")
    assert spec.size("k") == 2
    for bad, words in (([1, 2], "different numbers of experts"), ([2], "1 entries for num_hidden_layers 2")):
        with pytest.raises(ConfigError, match=words) as e:
            spec_from_config({**base, "moe_topk": bad}, "x")
        assert "\n" not in str(e.value)


# The types of catalog/models/moe.py, each on its audit base config (tests/test_model_types.py).
MOE21_TYPES = (
    "olmoe",
    "glm4_moe",
    "dots1",
    "minimax_m2",
    "phimoe",
    "granitemoe",
    "granitemoeshared",
    "ernie4_5_moe",
    "hunyuan_v1_moe",
    "glm4_moe_lite",
)


@pytest.mark.parametrize("model_type", MOE21_TYPES)
def test_kv_cache_per_token_is_the_real_cache(hf, model_type):
    """symtrans's KV cache bytes per token equal the tensors a real forward keeps in transformers'
    cache (h_kv x (d_k + d_v) per layer; the latent r_kv + d_rope for GLM-4.7-Flash's MLA)."""
    from test_model_types import _cache_bytes_per_token, _cfg, _flop_model

    from symtrans.accounting.memory import kv_cache_per_token

    cfg = _cfg(model_type)
    spec, _ = spec_from_config(cfg, "kv")
    assert _cache_bytes_per_token(hf, _flop_model(hf, model_type, cfg), 5) == exact(
        kv_cache_per_token(spec, "bf16"), spec.values
    )


@pytest.mark.parametrize("model_type", MOE21_TYPES)
def test_walk_equals_the_engine(model_type):
    """The shape walk (from the Spec alone: expert, shared and dense widths, MoE layer count, QK
    norms, MLA) sums to the engine's FLOPs, forward and one decode step, symbolically."""
    import sympy as sp
    from test_model_types import _cfg

    from symtrans.analysis.walk import walk
    from symtrans.engine import symbols as S
    from symtrans.engine.architectures import Workload

    spec, _ = spec_from_config(_cfg(model_type), "walk")
    for wl in (Workload(), Workload(mask="causal"), Workload(seq=1, context=S.L, mask="causal")):
        assert sp.expand(walk(spec, wl).flops - build(spec, wl).flops) == 0, wl
