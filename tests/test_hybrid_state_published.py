"""K/V bytes per token and state bytes per sequence of the published hybrid configs of
Granite 4.0-H, Nemotron 3, Falcon-H1 and Zamba2 (issue 21, build item 3), written out by hand from
the configs' numbers and transformers 5.24's cache layout (a K and a V of h_kv x head_dim per
attention layer and token; per Mamba 2 layer and sequence a conv window of
(d_inner + 2 x n_groups x d_state) x d_conv and an SSM state of d_inner x d_state), at bf16
(2 bytes).  tests/test_kv_cache_real.py checks the same layout against the tensors a real
forward of each type's tiny model leaves in transformers' cache."""

from __future__ import annotations

import pytest
from conftest import CONFIG_DIR

from symtrans.accounting.memory import kv_cache_per_token, state_bytes_per_sequence
from symtrans.catalog.hf_config import load_config
from symtrans.engine.evaluate import exact

BF16 = 2

CASES = [
    # granite-4.0-h-350m: attention at 4 of 32 layers, 4 KV heads of 768 / 12 = 64; 28 Mamba 2 layers
    # of d_inner 48 x 32 = 1,536, 1 group of d_state 128, d_conv 4
    ("granite-4.0-h-350m", 4 * 2 * 4 * 64 * BF16, 28 * ((1536 + 2 * 1 * 128) * 4 + 1536 * 128) * BF16),
    # nemotron-3-nano-30b-a3b: 6 attention layers ('*'), 2 KV heads of 128; 23 Mamba 2 layers ('M') of
    # d_inner 64 x 64 = 4,096, 8 groups of d_state 128, d_conv 4 (the 23 MoE layers keep nothing):
    # 6,144 and 25,247,744 bytes
    ("nemotron-3-nano-30b-a3b", 6 * 2 * 2 * 128 * BF16, 23 * ((4096 + 2 * 8 * 128) * 4 + 4096 * 128) * BF16),
    # falcon-h1-tiny-90m-instruct: all 24 layers hold both, attention of 2 KV heads of 64 and Mamba 2 of
    # d_inner 768 (mamba_d_ssm), 1 group of d_state 64, d_conv 4: 12,288 and 2,531,328 bytes
    ("falcon-h1-tiny-90m-instruct", 24 * 2 * 2 * 64 * BF16, 24 * ((768 + 2 * 1 * 64) * 4 + 768 * 64) * BF16),
    # zamba2-1.2b-shaped: K/V only at the 6 hybrid layers (their shared block's attention), 32 KV heads of
    # 2 x 2,048 / 32 = 128; all 38 layers keep a Mamba 2 state of d_inner 2 x 2,048 = 4,096, 1 group of
    # d_state 128, d_conv 4 (the review packet the fixture is shaped from gives 96.0 KiB of K/V per token):
    # 98,304 and 41,168,896 bytes
    ("zamba2-1.2b-shaped", 6 * 2 * 32 * 128 * BF16, 38 * ((4096 + 2 * 1 * 128) * 4 + 4096 * 128) * BF16),
]


@pytest.mark.parametrize(("name", "kv", "state"), CASES, ids=[c[0] for c in CASES])
def test_published_hybrid_cache_and_state(name, kv, state):
    spec, _name, _notes = load_config(CONFIG_DIR / f"{name}.json")
    assert exact(kv_cache_per_token(spec, "bf16"), spec.values) == kv
    assert exact(state_bytes_per_sequence(spec, "bf16"), spec.values) == state


# every case walks (Zamba2's hybrid layers: its shared block's steps at each of the N_hyb uses)
WALK_CASES = CASES


@pytest.mark.parametrize(("name", "kv", "state"), WALK_CASES, ids=[c[0] for c in WALK_CASES])
def test_the_walk_keeps_the_same(name, kv, state, capsys):
    """``symtrans walk`` states the same figures from its own cache and state steps
    (analysis/walk_hybrid.py), and its FLOPs sum to the engine's forward."""
    import json

    from symtrans.cli.main import main

    assert main(["walk", str(CONFIG_DIR / f"{name}.json"), "--seq-len", "7", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kv_cache_elements_per_token"] * BF16 == kv
    assert out["state_elements_per_sequence"] * BF16 == state
    assert out["total_flops"] == out["engine_flops"]
    assert main(["walk", str(CONFIG_DIR / f"{name}.json"), "--seq-len", "7"]) == 0
    assert f"({kv:,} bytes at bf16); state" in capsys.readouterr().out


def test_the_memory_text_names_a_hybrids_cache_total_with_its_state(capsys):
    # A new user's finding: `memory --inference` printed "KV cache" for a total that also
    # holds the constant state (listed on its own line below).  Jamba-1.5-Mini's config: 32
    # layers, attention every 8th (4 layers) with 8 KV heads of 4096 / 32 = 128: K and V at bf16
    # are 4 x 2 x 8 x 128 x 2 = 16,384 bytes per token.  The other 28 are Mamba layers of
    # d_inner = mamba_expand x 4096 = 8,192 channels, each keeping a conv state of d_conv = 4
    # and an SSM state of d_state = 16 per channel (JambaMambaMixer's cache): 28 x 8,192 x
    # (4 + 16) x 2 bytes.  At L = 2,048 the cache line holds both.
    from symtrans.cli.main import main

    state = 28 * 8_192 * (4 + 16) * 2  # 9,175,040
    assert main(["memory", str(CONFIG_DIR / "ai21-jamba-1.5-mini.json"), "--inference"]) == 0
    out = capsys.readouterr().out
    assert "L=2048" in out.splitlines()[0]  # the workload the header states
    assert "  KV cache per token    16,384 bytes" in out
    assert f"  state per sequence    {state:,} bytes" in out
    assert f"  KV cache and state    {16_384 * 2_048 + state:,} bytes" in out
