"""DeepSeek-V3.2 (deepseek_v32), GLM-5 (glm_moe_dsa) and Mistral 4 (mistral4): the published
configs (tests/fixtures/configs, sources in SOURCES.md) against transformers 5.x built on the
meta device, the lightning indexer's parameters and the sparse attention's FLOPs by hand
(DeepSeek-V3.2 §2.1), and the decode cache against transformers' own cache tensors.

The random draws (hypothesis), the key audit and FlopCounterMode on eager forwards (``--mask
full``) are in tests/test_model_types.py; the re-save in tests/test_resave.py.
"""

from __future__ import annotations

import pytest

from symtrans.accounting.flops import flops_expr
from symtrans.accounting.memory import kv_cache_per_token
from symtrans.catalog.hf_config import spec_from_config
from symtrans.engine.architectures import build
from symtrans.engine.evaluate import exact

# (fixture, parameters of the class on the meta device, the class)
PUBLISHED = [
    ("deepseek-v3.2", 671_877_929_216, "DeepseekV32ForCausalLM"),
    ("glm-5-fp8-aiconfigurator", 743_911_199_232, "GlmMoeDsaForCausalLM"),
    ("glm-5.1", 743_911_199_232, "GlmMoeDsaForCausalLM"),
    ("glm-5.3-shaped", 743_377_000_704, "GlmMoeDsaForCausalLM"),
    ("mistral-small-4-shaped", 118_972_826_624, "Mistral4ForCausalLM"),
]


@pytest.mark.parametrize(("name", "total", "cls"), PUBLISHED, ids=[n for n, _, _ in PUBLISHED])
def test_published_configs_match_transformers(hf, read_fixture, name, total, cls):
    cfg = read_fixture(name)
    model = hf.build(cfg["model_type"], cfg)
    assert type(model).__name__ == cls
    assert hf.count(model) == total
    spec, _ = spec_from_config(cfg, name)
    assert exact(build(spec).params, spec.values) == total


def test_indexer_parameters_by_hand(read_fixture):
    """DeepseekV32Indexer per layer: wq_b 1536 x 64*128, wk 7168 x 128, k_norm γ and β (2 x 128),
    weights_proj 7168 x 64 = 12,582,912 + 917,504 + 256 + 458,752 = 13,959,424; 61 layers:
    851,524,864 above the same file read as DeepSeek-V3 (no indexer)."""
    cfg = read_fixture("deepseek-v3.2")
    v3 = {k: v for k, v in cfg.items() if not k.startswith("index_")}
    v3["model_type"] = "deepseek_v3"
    counts = []
    for c in (cfg, v3):
        spec, _ = spec_from_config(c, "x")
        counts.append(exact(build(spec).params, spec.values))
    per_layer = 1536 * 64 * 128 + 7168 * 128 + 2 * 128 + 7168 * 64  # 13,959,424
    assert counts[0] - counts[1] == 61 * per_layer  # 851,524,864


def test_glm_shared_layers_build_no_indexer(read_fixture):
    """GLM-5.3's schedule (index_topk_freq 4, offset 3): layers 0, 1, 2, 6, 10, ..., 74 are full,
    21 of 78 (GlmMoeDsaConfig.__post_init__); the 57 shared layers have no indexer, each
    2048 x 32*128 + 6144 x 128 + 2 x 128 + 6144 x 32 = 9,371,904 parameters less than GLM-5's."""
    full = [i for i in range(78) if max(i - 3 + 1, 0) % 4 == 0]  # 0, 1, 2, 6, ..., 74: 21 layers
    per_layer = 2048 * 32 * 128 + 6144 * 128 + 2 * 128 + 6144 * 32
    glm5, glm53 = (exact(build(s).params, s.values) for s, _ in (
        spec_from_config(read_fixture("glm-5-fp8-aiconfigurator"), "x"),
        spec_from_config(read_fixture("glm-5.3-shaped"), "x"),
    ))  # fmt: skip
    assert glm5 - glm53 == (78 - len(full)) * per_layer  # 57 x 9,371,904 = 534,198,528


def test_published_weight_tables(read_fixture):
    """The checkpoints' own tensors, as a public model report lists them beside each config.json
    (SOURCES.md): DeepSeek-V3.2 (FP8) 685,396,921,376 stored elements, GLM-5.1 (BF16)
    753,864,139,008.  Each is the model's parameters plus, written out here from the report's
    tensor shapes: the MTP layer transformers does not build (one more decoder layer of the same
    kind, eh_proj, enorm, hnorm, shared_head; DeepSeek's also its own embed_tokens and head), the
    routers' e_score_correction_bias (a buffer in transformers), and, for FP8, one float32
    weight_scale_inv per 128 x 128 block of every quantized matrix."""

    def blocks(rows, cols):  # 128 x 128 blocks of a rows x cols matrix
        return -(-rows // 128) * -(-cols // 128)

    def count(name):
        spec, _ = spec_from_config(read_fixture(name), name)
        return exact(build(spec).params, spec.values)

    # DeepSeek-V3.2: d_model 7168, V 129,280; MLA (q 1536, kv 512 + 64, 128 heads of 128 + 64, v 128),
    # indexer (64 heads of 128), 256 experts of 2048 + 1 shared; 3 dense layers of 18,432
    d, V = 7168, 129_280
    attention = 2 * d + 2 * 128 + 64 * d + 128 * d + 8192 * 1536  # norms, indexer k_norm, weights_proj, wk, wq_b
    attention += 512 + 576 * d + 32768 * 512 + 16384 * d + 1536 + 1536 * d + 24576 * 1536
    moe = 256 * 3 * 2048 * d + 256 * d + 3 * 2048 * d  # experts, router, shared expert
    mtp = attention + moe + 14336 * d + 2 * d + 2 * V * d + d  # eh_proj, enorm, hnorm, embed, head, norm
    scales = 62 * (blocks(128, d) + blocks(8192, 1536) + blocks(576, d) + blocks(32768, 512))
    scales += 62 * (blocks(d, 16384) + blocks(1536, d) + blocks(24576, 1536))
    scales += 59 * (256 + 1) * 3 * blocks(2048, d)  # routed and shared experts' gate, up, down
    scales += 3 * 3 * blocks(18432, d)  # the 3 dense layers' MLPs
    bias = 59 * 256  # mtp 13,477,385,472; scales 41,591,584; bias 15,104
    assert count("deepseek-v3.2") + mtp + scales + bias == 685_396_921_376

    # GLM-5.1 (BF16): d_model 6144; MLA (q 2048, kv 512 + 64, 64 heads of 192 + 64, v 256), indexer
    # (32 heads of 128), 256 experts of 2048 + 1 shared; MTP layer 78 without its own embed or head
    d = 6144
    attention = 2 * d + 2 * 128 + 32 * d + 128 * d + 4096 * 2048
    attention += 512 + 576 * d + 28672 * 512 + 16384 * d + 2048 + 2048 * d + 16384 * 2048
    moe = 256 * 3 * 2048 * d + 256 * d + 3 * 2048 * d
    mtp = attention + moe + 12288 * d + 3 * d
    bias = 76 * 256
    assert count("glm-5.1") + mtp + bias == 753_864_139_008


TINY = dict(
    model_type="deepseek_v32",
    vocab_size=32,
    hidden_size=16,
    intermediate_size=24,
    moe_intermediate_size=8,
    num_hidden_layers=2,
    first_k_dense_replace=1,
    num_attention_heads=2,
    num_key_value_heads=2,
    q_lora_rank=6,
    kv_lora_rank=5,
    qk_nope_head_dim=3,
    qk_rope_head_dim=2,
    v_head_dim=4,
    n_routed_experts=4,
    num_experts_per_tok=2,
    n_shared_experts=1,
    n_group=1,
    topk_group=1,
    index_n_heads=2,
    index_head_dim=4,
    index_topk=3,
    max_position_embeddings=64,
)


def test_sparse_attention_causal_flops_by_hand():
    """--mask causal: the query at position p reads min(p, index_topk) keys (paper eq. 2), so
    against index_topk >= L the scores and the weighted sum lose, per head and layer,
    sum_p (p - min(p, 3)) pairs of 2*(d_nope + d_rope) + 2*d_v FLOPs; the indexer still
    scores every causal key (unchanged)."""
    B, L = 2, 10
    sparse, _ = spec_from_config(TINY, "x")
    dense, _ = spec_from_config({**TINY, "index_topk": L}, "x")
    values = dict(B=B, L=L)
    got = [exact(flops_expr(s, "forward", mask="causal"), {**s.values, **values}) for s in (dense, sparse)]
    dropped = sum(p - min(p, 3) for p in range(1, L + 1))  # 0+0+0+1+2+...+7 = 28
    h, layers = 2, 2
    assert got[0] - got[1] == B * h * layers * dropped * (2 * (3 + 2) + 2 * 4)


def test_decode_cache_holds_the_latent_and_the_indexer_key(hf):
    """transformers' DynamicIndexedLayer after a real forward: keys (B, 1, T, r_kv), values
    (B, 1, T, d_rope) and indexer_keys (B, T, d_idx) per layer: (5 + 2 + 4) x 2 layers = 22
    elements per token, 88 bytes in fp32, as symtrans's KV cache per token."""
    torch = hf.torch
    torch.manual_seed(0)
    model = hf.model_class("deepseek_v32")(hf.config("deepseek_v32", {**TINY, "attn_implementation": "eager"})).eval()
    T = 7
    with torch.no_grad():
        cache = model(input_ids=torch.ones(1, T, dtype=torch.long), use_cache=True).past_key_values
    elements = sum(
        layer.keys.numel() + layer.values.numel() + layer.indexer_keys.numel() for layer in cache.layers
    )  # fmt: skip
    assert elements == T * 22
    spec, _ = spec_from_config(TINY, "x")
    assert exact(kv_cache_per_token(spec, "fp32"), spec.values) == 88 == 4 * elements // T


def test_null_query_rank_is_refused():
    """DeepseekV32Indexer.wq_b reads q_lora_rank: a null rank cannot build (nn.Linear(None, ...))."""
    from symtrans.catalog.reader import ConfigError

    with pytest.raises(ConfigError, match="q_lora_rank"):
        spec_from_config({**TINY, "q_lora_rank": None}, "x")
