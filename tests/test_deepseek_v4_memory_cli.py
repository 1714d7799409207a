"""``symtrans memory --inference`` of DeepSeek-V4-Flash (tests/fixtures/configs, SOURCES.md): the
cache per sequence and for B sequences, and the weights, through the CLI; what is not modelled
(activations, a KV cache per token, margin, total, quantized weights) null with its reason, and
training memory refused in one line.

Oracles, none of them symtrans's output:

* the cache by hand from the shapes of transformers 5.24's DeepseekV4CSACache, DeepseekV4HCACache
  and DynamicSlidingWindowLayer (as in tests/test_deepseek_v4.py, test_flash_cache_by_hand): 2
  sliding layers, 21 CSA layers (m 4, d_k 512 + indexer 128), 20 HCA layers (m 128), window
  w - 1 = 127, bf16 (2 bytes), L = 1,048,576 (a multiple of 4 and 128: no open tokens);
* the weights: 2 bytes x DeepseekV4ForCausalLM's parameters on the meta device, 284,332,230,231
  (tests/test_deepseek_v4.py, test_flash_matches_transformers).
"""

from __future__ import annotations

import json

import pytest

from symtrans.cli.main import main

FLASH = "deepseek-v4-flash-shaped.json"
T = 1_048_576
SWA = 2 * (2 * 512 * 127 * 2)  # keys and values of the window
CSA = 21 * (512 * 127 * 2 + (512 + 128) * (T // 4) * 2 + 4 * (512 + 128) * (2 + 4))  # + overlap, gates at fp32
HCA = 20 * (512 * 127 * 2 + 512 * (T // 128) * 2)
PER_SEQUENCE = SWA + CSA + HCA


def _memory(capsys, config_dir, *argv: str) -> tuple[int, str, str]:
    status = main(["memory", str(config_dir / FLASH), "--seq-len", str(T), *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_figures_written_out():
    assert (SWA, CSA, HCA) == (520_192, 7_049_484_288, 170_373_120)
    assert PER_SEQUENCE == 7_220_377_600


@pytest.mark.parametrize("batch", [1, 3])
def test_cache_per_sequence_and_batch_json(capsys, config_dir, batch):
    status, out, _ = _memory(
        capsys, config_dir, "--inference", "--dtype", "bf16", "--quantization", "none", "--batch", str(batch),
        "--format", "json",
    )  # fmt: skip
    assert status == 0
    r = json.loads(out)
    assert (r["kv_dtype"], r["seq_len"], r["batch"]) == ("bf16", T, batch)
    assert r["kv_cache_bytes_per_sequence"] == PER_SEQUENCE
    assert r["kv_cache_bytes"] == batch * PER_SEQUENCE
    assert r["weights_bytes"] == 2 * 284_332_230_231
    for key in ("activations_bytes", "kv_cache_bytes_per_token", "margin_bytes", "total_bytes"):
        assert r[key] is None and r["not_modelled"][key]


def test_cache_text(capsys, config_dir):
    status, out, _ = _memory(capsys, config_dir, "--inference", "--dtype", "bf16")
    assert status == 0
    assert "  KV cache            7,220,377,600 bytes" in out
    assert "per sequence      7,220,377,600 bytes" in out
    # the checkpoint's fp8 quantization_config: V4's quantized layout is not checked, so no weights figure
    assert "weights             not modelled: fp8" in out
    assert "total               not modelled" in out and "KV cache per token  not modelled" in out


@pytest.mark.parametrize(
    "argv, words",
    [
        ((), "training memory of DeepSeek-V4 is not modelled"),
        (("--inference", "--kv-dtype", "fp8"), "DeepSeek-V4's cache is held in the model's dtype"),
        (("--inference", "--eager-attention"), "change activations, which are not modelled"),
        (("--inference", "--dp", "2"), "--zero and --dp apply to training memory"),
    ],
)
def test_what_is_not_modelled_is_refused_in_one_line(capsys, config_dir, argv, words):
    status, out, err = _memory(capsys, config_dir, *argv)
    assert status == 2 and not out
    assert err.count("\n") == 1 and words in err
