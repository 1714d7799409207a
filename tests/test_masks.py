"""Sliding windows and masks (issue 20 Build 8 and its third Must-show; issue 25 item 3).

``--mask full`` counts the full L x L score square on every layer, windowed or not: what
eager attention computes (the window is a mask applied to the full score matrix), and what
``torch.utils.flop_counter.FlopCounterMode`` counts on transformers' eager forward.  The
independent source of every full-mask figure here is that counter on MistralForCausalLM
(meta device, tiny widths, L = 4096, ``sliding_window`` 1024 and none).  ``--mask window``
(the band a kernel that skips keys outside the window reads: FlashAttention-2's
``window_size``, Mistral's rolling buffer) and ``--mask causal`` (the lower triangle
intersected with the band) are written out below from the definitions.
"""

from __future__ import annotations

import json

from conftest import require

from symtrans.cli.main import main

L, W = 4096, 1024
SIZES = dict(d=64, ff=96, h=4, h_kv=2, d_k=16, n=2, vocab=100)


def _config(tmp_path, window):
    """A Mistral config.json as transformers 5.x writes it (no file of symtrans's)."""
    s = SIZES
    cfg = {
        "model_type": "mistral",
        "architectures": ["MistralForCausalLM"],
        "hidden_size": s["d"],
        "intermediate_size": s["ff"],
        "num_hidden_layers": s["n"],
        "num_attention_heads": s["h"],
        "num_key_value_heads": s["h_kv"],
        "head_dim": s["d_k"],
        "vocab_size": s["vocab"],
        "max_position_embeddings": 8192,
        "sliding_window": window,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-6,
        "tie_word_embeddings": False,
        "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"},
    }
    d = tmp_path / f"mistral-w{window}"
    d.mkdir()
    (d / "config.json").write_text(json.dumps(cfg))
    return d / "config.json", cfg


def _symtrans(capsys, path, *extra):
    assert main(["flops", str(path), "--seq-len", str(L), "--format", "json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _eager_forward(cfg) -> int:
    torch = require("torch")
    transformers = require("transformers")
    FlopCounterMode = require("torch.utils.flop_counter").FlopCounterMode

    conf = transformers.MistralConfig(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
    conf._attn_implementation = "eager"
    with torch.device("meta"):
        model = transformers.MistralForCausalLM(conf)
    counter = FlopCounterMode(display=False)
    with counter:
        model(input_ids=torch.zeros(1, L, dtype=torch.long, device="meta"))
    return counter.get_total_flops()


def _scores(pairs: int) -> int:
    """Q K^T and the weighted sum of V over ``pairs`` query-key pairs, every layer and head."""
    s = SIZES
    return s["n"] * 2 * 2 * s["h"] * s["d_k"] * pairs


def test_full_mask_counts_the_square_with_and_without_a_window(capsys, tmp_path):
    windowed, cfg = _config(tmp_path, W)
    dense, _ = _config(tmp_path, None)
    eager = _eager_forward(cfg)
    full = _symtrans(capsys, windowed)
    assert full["mask"] == "full"
    assert full["total"] == _symtrans(capsys, dense)["total"] == eager
    # the counter's figure written out: projections, scores, gated MLP per layer, LM head
    s = SIZES
    layer = 2 * L * s["d"] * (2 * s["h"] * s["d_k"] + 2 * s["h_kv"] * s["d_k"]) + 3 * 2 * L * s["d"] * s["ff"]
    assert eager == s["n"] * layer + _scores(L * L) + 2 * L * s["d"] * s["vocab"] == 9_145_679_872


def test_window_and_causal_masks_count_the_band_under_their_own_names(capsys, tmp_path):
    windowed, _ = _config(tmp_path, W)
    full = _symtrans(capsys, windowed)["total"]
    band = _symtrans(capsys, windowed, "--mask", "window")
    assert band["mask"] == "window"
    assert band["total"] == full - _scores(L * L) + _scores(L * min(L, W))  # every query reads min(L, w) keys
    causal = _symtrans(capsys, windowed, "--mask", "causal")["total"]
    # query p keeps min(p, w) keys: sum = w(w+1)/2 + (L - w) w = L w - w(w - 1)/2
    assert causal == full - _scores(L * L) + _scores(L * W - W * (W - 1) // 2)
    # without a window, --mask window is the full square
    dense, _ = _config(tmp_path, None)
    assert _symtrans(capsys, dense, "--mask", "window")["total"] == full


def test_compare_honours_the_mask(capsys):
    # GPT-2 (124,439,808 parameters, transformers GPT2LMHeadModel), L = 1024, one sequence.
    # 6ND per token is 6 P = 746,638,848.  The exact training count per token is 3 x forward,
    # forward = 2 x (matmul weights) + attention scores: the full square costs
    # 12 layers x 4 x L x d_model per token = 37,748,736; the causal triangle (L + 1) / 2 of L keys.
    assert main(["flops", "gpt2", "--mode", "training", "--mask", "causal", "--compare", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["compare_basis"]["mask"] == "causal"
    assert not any("--mask" in d for d in out["compare_basis"]["differs_from_header"])
    row = next(r for r in out["compare"] if r["key"] == "6nd")
    forward_full = 291_648_307_200 // 1024  # GPT-2 forward per token at L = 1024 (tests/test_cli.py)
    forward_causal = forward_full - 12 * 4 * 1024 * 768 + 12 * 4 * 768 * 1025 // 2
    assert row["exact"] == 3 * forward_causal * 1024
    assert abs(row["ratio"] - 746_638_848 / (3 * forward_causal)) < 1e-12
    assert main(["flops", "gpt2", "--mode", "training", "--mask", "causal", "--compare"]) == 0
    assert "exact counts under --mask causal" in capsys.readouterr().out
