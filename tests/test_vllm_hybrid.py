"""``deploy --engine vllm`` on hybrid models (issue 23, build 1): vLLM v1's page layout for
attention layers beside state layers (Mamba, gated DeltaNet, short convolutions).

Independent source: vLLM's own formulas, written out below as arithmetic on the published
configs (tests/fixtures/configs), from vllm-project/vllm main:

* ``vllm/model_executor/layers/mamba/mamba_utils.py``: the state shapes, conv state
  (d_conv − 1, channels / tp), recurrent state (heads / tp, ...), in the model dtype;
* ``vllm/model_executor/models/config.py``, ``HybridAttentionMambaModelConfig``: attention block
  b = 16 · cdiv(state page, 16 · one token of one attention layer), state padded to b · a;
* ``vllm/v1/core/kv_cache_utils.py``: group size g = the smaller layer count (the larger when
  under 1.5 times the smaller), cdiv(n, g) groups per kind, blocks = available // page // g,
  'GPU KV cache size' = blocks // groups · b, 'Maximum concurrency' = blocks / (attention groups ·
  cdiv(max_model_len, b) + state groups).

The memory the KV cache is given (usable − weights − reserve) is taken from the plan: those
terms are checked by tests/test_vllm_logs.py; here only the layout is under test.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from symtrans.cli.main import main

CONFIGS = Path(__file__).parent / "fixtures" / "configs"


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def plan(capsys, config: str, *options) -> dict:
    code = main(["deploy", str(CONFIGS / config), "--format", "json", *options])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def free(r: dict) -> int:
    m = r["memory_per_device"]
    return int(Fraction(m["usable"])) - m["weights"] - m["activation_reserve"]


# Qwen3-Coder-Next (qwen3_next): 48 layers, full attention every 4th: 12 attention, 36 gated DeltaNet;
# attention 2 KV heads x 256; DeltaNet 16 key heads x 128, 32 value heads x 128, conv kernel 4; bf16.
# mamba_utils.gated_delta_net_state_shape: conv (4 − 1, (128·16·2 + 128·32) / tp), temporal (32 / tp, 128, 128).
@pytest.mark.parametrize(
    "tp, state, a, block",
    [
        # TP 1: (3 x 8,192 + 32 x 128 x 128) x 2 B = 1,097,728; a = 2 x 2 x 256 x 2 = 2,048;
        # b = 16 x cdiv(1,097,728, 16 x 2,048) = 16 x 34 = 544
        (1, (3 * 8192 + 32 * 128 * 128) * 2, 2 * 2 * 256 * 2, 544),
        # TP 4: (3 x 2,048 + 8 x 128 x 128) x 2 = 274,432; KV heads max(1, 2/4) = 1: a = 2 x 1 x 256 x 2 = 1,024;
        # b = 16 x cdiv(274,432, 16,384) = 16 x 17 = 272, page 278,528: the state padded by 1.49%
        (4, (3 * 2048 + 8 * 128 * 128) * 2, 2 * 1 * 256 * 2, 272),
    ],
)
def test_qwen3_next_block_page_groups_budget_and_concurrency(capsys, tp, state, a, block):
    assert block == 16 * cdiv(state, 16 * a)
    r = plan(
        capsys,
        "qwen3-coder-next.json",
        "--accelerator",
        "mi300x" if tp == 1 else "h200",
        "--devices",
        str(tp),
        "--tensor-parallel-size",
        str(tp),
        "--max-model-len",
        "32768",
    )
    h = r["hybrid"]
    assert (h["state_bytes_per_layer"], h["attention_bytes_per_token_per_layer"]) == (state, a)
    assert (h["block_size"], h["page_bytes"]) == (block, block * a)
    # 12 attention, 36 state: 36 >= 1.5 x 12, so g = 12; 1 attention group and 3 state groups
    assert (h["group_size"], h["attention_groups"], h["state_groups"]) == (12, 1, 3)
    blocks = free(r) // (block * a) // 12
    assert r["token_budget"] == blocks // 4 * block
    assert Fraction(r["vllm_concurrency"]) == Fraction(blocks, cdiv(32768, block) + 3)
    assert r["workload"]["block_size"] == block
    if tp == 4:
        assert round((block * a - state) / state * 100, 2) == 1.49


def test_blackwell_head_256_aligns_the_block_to_32(capsys):
    # config.py: compute capability 10.x, head size 256, FlashInfer: kernel_block_alignment_size = 32.
    # Qwen3-Next at TP 4: b = 32 x cdiv(274,432, 32 x 1,024) = 32 x 9 = 288 (not 272)
    r = plan(
        capsys, "qwen3-coder-next.json", "--accelerator", "b200", "--devices", "4", "--tensor-parallel-size", "4",
        "--max-model-len", "32768",
    )  # fmt: skip
    assert r["hybrid"]["block_size"] == 32 * cdiv(274_432, 32 * 1024) == 288


def test_jamba_mamba1_layout(capsys):
    # Jamba-1.5-Mini: 32 layers, attention every 8th from 4: 4 attention, 28 Mamba; 8 KV heads x 128;
    # Mamba d_inner 8,192, d_state 16, d_conv 4; bf16. mamba1_state_shape at TP 2:
    # conv (3, 4,096), temporal (4,096, 16): (12,288 + 65,536) x 2 = 155,648 bytes;
    # a = 2 x 4 x 128 x 2 = 2,048; b = 16 x cdiv(155,648, 32,768) = 16 x 5 = 80
    state, a = (3 * 4096 + 4096 * 16) * 2, 2 * 4 * 128 * 2
    block = 16 * cdiv(state, 16 * a)
    assert (state, block) == (155_648, 80)
    r = plan(
        capsys, "ai21-jamba-1.5-mini.json", "--accelerator", "h100-sxm", "--devices", "2", "--tensor-parallel-size", "2"
    )
    h = r["hybrid"]
    assert (h["state_bytes_per_layer"], h["block_size"], h["page_bytes"]) == (state, 80, 80 * a)
    # 4 attention, 28 Mamba: g = 4; 1 + 7 groups
    assert (h["group_size"], h["attention_groups"], h["state_groups"]) == (4, 1, 7)
    blocks = free(r) // (80 * a) // 4
    assert r["token_budget"] == blocks // 8 * 80
    mml = r["workload"]["prompt"] + r["workload"]["generate"]
    assert Fraction(r["vllm_concurrency"]) == Fraction(blocks, cdiv(mml, 80) + 7)


def test_lfm2_short_conv_layout_and_padding_layers(capsys):
    # LFM2.5-350M: 16 layers, 6 attention (8 KV heads x 64) and 10 short convolutions of 1,024 channels,
    # L_cache 3; bf16. short_conv_state_shape: (3 − 1, 1,024) x 2 B = 4,096; a = 2 x 8 x 64 x 2 = 2,048;
    # b = 16 x cdiv(4,096, 32,768) = 16: page 32,768 (the state padded 8 times).
    # 10 >= 1.5 x 6, so g = 6: 1 attention group, cdiv(10, 6) = 2 conv groups (two padding layers)
    r = plan(capsys, "lfm2.5-350m.json", "--accelerator", "h100-sxm", "--max-model-len", "32768")
    h = r["hybrid"]
    assert (h["state_bytes_per_layer"], h["attention_bytes_per_token_per_layer"]) == (2 * 1024 * 2, 2 * 8 * 64 * 2)
    assert (h["block_size"], h["page_bytes"]) == (16, 32_768)
    assert (h["group_size"], h["attention_groups"], h["state_groups"]) == (6, 1, 2)
    blocks = free(r) // 32_768 // 6
    assert r["token_budget"] == blocks // 3 * 16
    assert Fraction(r["vllm_concurrency"]) == Fraction(blocks, 32768 // 16 + 2)
    # the line vLLM prints, from that ratio, two decimals
    code = main(["deploy", str(CONFIGS / "lfm2.5-350m.json"), "--accelerator", "h100-sxm", "--max-model-len", "32768"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert f"Maximum concurrency for 32,768 tokens per request: {blocks / (32768 // 16 + 2):.2f}x" in out


def test_engine_none_keeps_the_transformers_state(capsys):
    # without vLLM's profile there is no hybrid page layout: one page per token of every attention layer
    r = plan(capsys, "lfm2.5-350m.json", "--accelerator", "h100-sxm", "--engine", "none", "--max-model-len", "32768")
    assert r["hybrid"] is None


def test_zamba2_mamba2_layers_and_hybrid_layers_share_one_layout(capsys):
    # Zamba2-1.2B-shaped (tests/fixtures/configs): 38 layers, every 6th from index 5 a hybrid layer: 6 hybrid.
    # vllm/model_executor/models/zamba2.py: every layer of layers_block_type has a MambaMixer2 (a hybrid
    # layer's Zamba2HybridLayer.mamba_decoder too): 38 state layers; each hybrid layer has its own Attention
    # ("KV cache is unique for every attention layer"): 6 attention layers of num_attention_heads = 32 heads x
    # attention_head_dim 128 (vllm/transformers_utils/model_arch_config_convertor.py, Zamba2...Convertor).
    # mamba_utils.mamba2_state_shape, d_inner = mamba_expand x d_model = 4,096, 1 group, d_state 128,
    # 64 heads of 4,096 / 64 = 64: conv (4 − 1) x (4,096 + 2 x 1 x 128) = 13,056, temporal 64 x 64 x 128
    # = 524,288; bf16: (13,056 + 524,288) x 2 = 1,074,688 bytes per layer.
    # a = 2 x 32 x 128 x 2 = 16,384; config.py: b = 16 x cdiv(1,074,688, 16 x 16,384) = 16 x 5 = 80, page 1,310,720
    state, a = (3 * (4096 + 2 * 128) + 64 * 64 * 128) * 2, 2 * 32 * 128 * 2
    assert (state, a) == (1_074_688, 16_384)
    block = 16 * cdiv(state, 16 * a)
    assert block == 80
    r = plan(capsys, "zamba2-1.2b-shaped.json", "--accelerator", "h100-sxm", "--max-model-len", "4096")
    h = r["hybrid"]
    assert (h["state_bytes_per_layer"], h["attention_bytes_per_token_per_layer"]) == (state, a)
    assert (h["block_size"], h["page_bytes"]) == (80, 1_310_720)
    # kv_cache_utils._get_kv_cache_groups_uniform_page_size: 6 attention, 38 state; 38 >= 1.5 x 6, so g = 6:
    # 1 attention group, cdiv(38, 6) = 7 state groups (4 padding layers)
    assert (h["group_size"], h["attention_groups"], h["state_groups"]) == (6, 1, 7)
    blocks = free(r) // 1_310_720 // 6
    assert r["token_budget"] == blocks // 8 * 80
    assert Fraction(r["vllm_concurrency"]) == Fraction(blocks, cdiv(4096, 80) + 7)


def test_zamba2_kv_heads_unlike_query_heads_are_refused(capsys, tmp_path):
    # zamba2.py caches num_attention_heads heads per hybrid layer while config.py sizes the page from
    # num_key_value_heads: with the two different, vLLM's page is not what its layers keep
    cfg = json.loads((CONFIGS / "zamba2-1.2b-shaped.json").read_text())
    cfg["num_key_value_heads"] = 8
    cfg["use_shared_attention_adapter"] = False  # transformers' adapters need h_kv = h
    p = tmp_path / "zamba2-gqa.json"
    p.write_text(json.dumps(cfg))
    code = main(["deploy", str(p), "--accelerator", "h100-sxm", "--max-model-len", "4096"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "num_key_value_heads 8" in err and len(err.strip().splitlines()) == 1
