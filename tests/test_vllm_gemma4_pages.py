"""``deploy --engine vllm`` on Gemma 4 (gemma4_text): windowed and full-attention layers of different
cache sizes per token, and a KV-shared tail that caches nothing.

Independent source: vLLM's own rules, written out below as arithmetic on the published configs
(tests/fixtures/gemma4), from vllm-project/vllm main:

* ``vllm/model_executor/models/gemma4.py`` (``Gemma4DecoderLayer``, ``Gemma4Attention``): a windowed
  layer caches K and V of num_key_value_heads x head_dim; a full-attention layer of num_global_key_value_heads
  (with attention_k_eq_v) x global_head_dim, V kept beside K; heads per device max(1, heads // tp); the
  last num_kv_shared_layers layers read an earlier layer's cache (kv_sharing_target_layer_name) and
  own no page;
* ``vllm/v1/core/kv_cache_utils.py``: ``unify_kv_cache_spec_page_size`` (a kind of fewer bytes per
  token gets block 16 x (largest / its bytes)), ``_get_kv_cache_groups_uniform_page_size`` (group
  size g = the smaller layer count unless the larger is under 1.5 times it), ``get_num_blocks``
  (available // page // g), ``_report_kv_cache_config`` ('GPU KV cache size' = blocks // groups x the
  smallest block), ``get_max_concurrency_for_kv_cache_config``;
* ``vllm/v1/kv_cache_interface.py``, ``max_memory_usage_bytes``: cdiv(L, b) blocks per full-attention
  group, cdiv(min(w − 1 + max_num_batched_tokens, L), b) + 1 per windowed group.

The memory given to the cache (usable − weights − reserve) is the plan's (tests/test_vllm_logs.py
checks those terms); here only the page layout is under test.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from symtrans.cli.main import main

GEMMA4 = Path(__file__).parent / "fixtures" / "gemma4"
L, T = 8192, 8192  # --max-model-len, --max-num-batched-tokens


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def plan(capsys, config: str, *options) -> dict:
    code = main(
        ["deploy", str(GEMMA4 / config), "--format", "json", "--accelerator", "h100-sxm", "--max-model-len", str(L),
         "--max-num-batched-tokens", str(T), *options]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def free(r: dict) -> int:
    m = r["memory_per_device"]
    return int(Fraction(m["usable"])) - m["weights"] - m["activation_reserve"]


def test_gemma4_31b_tp1(capsys):
    # gemma-4-31B-it: 60 layers, 50 windowed (w 1,024; 16 KV heads x 256) and 10 full (4 global KV heads x 512,
    # k_eq_v, V kept); bf16. Bytes per token per layer: windowed 2 x 16 x 256 x 2 = 16,384, full 2 x 4 x 512 x 2
    # = 8,192. unify: page 16 x 16,384 = 262,144; the full layers' block 16 x 16,384 / 8,192 = 32.
    # groups: 10 full, 50 windowed; 50 >= 1.5 x 10, so g = 10: 1 full group + 5 windowed = 6 groups
    r = plan(capsys, "gemma-4-31b-it.json")
    m = r["memory_per_device"]
    assert m["kv_cache_per_token"] == 50 * 16_384 + 10 * 8_192
    blocks = free(r) // 262_144 // 10
    assert m["kv_blocks"] == blocks
    assert r["token_budget"] == blocks // 6 * 16  # the smallest block, 16
    per_request = cdiv(L, 32) + 5 * (cdiv(min(1024 - 1 + T, L), 16) + 1)
    assert per_request == 256 + 5 * 513
    assert Fraction(r["vllm_concurrency"]) == Fraction(blocks, per_request)


def test_gemma4_31b_tp4(capsys):
    # TP 4: windowed 16 // 4 = 4 heads: 2 x 4 x 256 x 2 = 4,096 B; full 4 // 4 = 1 head: 2 x 1 x 512 x 2 = 2,048 B.
    # page 16 x 4,096 = 65,536; the full layers' block 32 (TP 8, which replicates the 4 global heads, is refused
    # before the layout: deploy's per-device K/V share)
    r = plan(capsys, "gemma-4-31b-it.json", "--devices", "4", "--tensor-parallel-size", "4")
    assert r["memory_per_device"]["kv_cache_per_token"] == 50 * 4_096 + 10 * 2_048
    blocks = free(r) // 65_536 // 10
    assert r["memory_per_device"]["kv_blocks"] == blocks
    assert r["token_budget"] == blocks // 6 * 16
    assert Fraction(r["vllm_concurrency"]) == Fraction(blocks, cdiv(L, 32) + 5 * (cdiv(min(1023 + T, L), 16) + 1))


def test_gemma4_e2b_kv_shared_tail_owns_no_page(capsys):
    # gemma-4-E2B: 35 layers, the last 20 KV-shared (no page); the first 15: 12 windowed (w 512, 1 KV head x 256)
    # and 3 full (1 KV head x 512). Windowed 2 x 1 x 256 x 2 = 1,024 B, full 2 x 1 x 512 x 2 = 2,048 B:
    # page 16 x 2,048 = 32,768; the windowed block 16 x 2 = 32. g = 3: 1 full + 4 windowed groups
    r = plan(capsys, "gemma-4-e2b-partial.json")
    m = r["memory_per_device"]
    assert m["kv_cache_per_token"] == 12 * 1_024 + 3 * 2_048
    blocks = free(r) // 32_768 // 3
    assert m["kv_blocks"] == blocks
    assert r["token_budget"] == blocks // 5 * 16
    per_request = cdiv(L, 16) + 4 * (cdiv(min(512 - 1 + T, L), 32) + 1)
    assert per_request == 512 + 4 * 257
    assert Fraction(r["vllm_concurrency"]) == Fraction(blocks, per_request)
