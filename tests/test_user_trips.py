"""What a careful user still trips on (issue 25, items 2, 7, 8, 12, 13, 15, 16, 17).

Expected values: GPT-2's config.json (n_positions 1024; Radford et al. 2019), Llama-2-7B's
config.json (max_position_embeddings 4096), gemma-2-9b's config.json (torch_dtype float32,
the tensors as published), and arithmetic written out in each test.
"""

from __future__ import annotations

import json

import pytest

from symtrans.cli.main import main


def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


# -- 25.2: solve --for L respects the model's context ------------------------------------------


def test_solve_for_L_warns_past_gpt2s_1024_learned_positions_and_gives_the_answer_within(capsys):
    code, out, err = _run(
        capsys, "solve", "gpt2", "--for", "L", "--memory", "80GiB", "--memory-mode", "inference", "--batch", "8"
    )
    assert code == 0
    # GPT-2 has 1,024 learned positions (config.json n_positions): no row past 1,024.
    assert "exceeds 1,024" in err and "learned position table" in err and "cannot run" in err
    assert "within the context: L = 1,024:" in out


def test_solve_for_L_warns_past_llama2s_4096_maximum_positions(capsys):
    code, out, err = _run(
        capsys, "solve", "llama-2-7b", "--for", "L", "--memory", "80GiB", "--memory-mode", "inference", "--batch", "8"
    )
    assert code == 0
    assert "exceeds 4,096" in err and "max_position_embeddings" in err  # config.json: 4096
    assert "within the context: L = 4,096:" in out
    code, out, err = _run(
        capsys, "solve", "gpt2", "--for", "L", "--memory", "80GiB", "--memory-mode", "inference", "--format", "json"
    )
    assert json.loads(out)["context"]["limit"] == 1024 and "exceeds 1,024" in err


def test_solve_for_L_within_the_context_says_nothing(capsys):
    # 1 GiB holds GPT-2's fp16 weights (about 249 MB) and far less than 1,024 positions of
    # batch 512's activations: the answer is inside the table, so no warning.
    code, out, err = _run(
        capsys, "solve", "gpt2", "--for", "L", "--memory", "1GiB", "--memory-mode", "inference", "--batch", "512"
    )
    assert code == 0 and "exceeds" not in err and "within the context" not in out


# -- 25.7: ZeRO and data parallelism are never silently ignored --------------------------------


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--zero", "3"], "give --dp"),  # ZeRO-3 over 1 rank shards nothing
        (["--zero", "1"], "give --dp"),
        (["--inference", "--zero", "3"], "--zero applies to training memory"),
        (["--inference", "--dp", "8"], "--dp applies to training memory"),
        (["--inference", "--zero", "2", "--dp", "8"], "--zero and --dp apply to training memory"),
    ],
)
def test_memory_refuses_zero_and_dp_where_they_would_be_ignored(capsys, argv, words):
    code, out, err = _run(capsys, "memory", "gpt2", *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and words in err


def test_memory_zero3_over_8_ranks_divides_the_model_states_by_8(capsys):
    code, out, _ = _run(capsys, "memory", "gpt2", "--zero", "3", "--dp", "8", "--format", "json")
    assert code == 0
    r = json.loads(out)
    # GPT-2 124,439,808 parameters (transformers GPT2LMHeadModel); bf16 weights and
    # gradients 2 bytes each, adam-mixed 12 bytes (Rajbhandari et al. 2020 §3: 2 + 2 + 12),
    # ZeRO-3 shards all three over N_d = 8.
    p = 124_439_808
    assert (r["weights_bytes"], r["gradients_bytes"], r["optimizer_bytes"]) == (2 * p // 8, 2 * p // 8, 12 * p // 8)
    assert r["dp"] == 8 and r["zero_stage"] == 3


# -- 25.15, 25.16, 25.17: Hugging Face names in --set, did-you-mean, a flat scaling line ---------


def test_set_takes_hugging_face_key_names(capsys):
    code, out, _ = _run(capsys, "params", "llama-2-7b", "--set", "num_hidden_layers=16", "--format", "json")
    assert code == 0
    # Llama-2-7B (Touvron et al. 2023; config.json: hidden_size 4096, intermediate_size 11008,
    # vocab 32000, untied head) at 16 layers: per layer 3*4096*11008 (SwiGLU) + 4*4096^2
    # (attention) + 2*4096 (two RMSNorms); embeddings and head 2*32000*4096; final norm 4096.
    per_layer = 3 * 4096 * 11_008 + 4 * 4096 * 4096 + 2 * 4096
    assert json.loads(out)["total"] == 16 * per_layer + 2 * 32_000 * 4096 + 4096 == 3_500_281_856


@pytest.mark.parametrize(
    "setting, same",
    [
        ("n_layer=6", "N=6"),  # GPT2Config.attribute_map: num_hidden_layers -> n_layer
        ("n_embd=1536", "d_model=1536"),
        ("hidden_size=1536", "d_model=1536"),
        ("n_head=24", "h=24"),
        ("intermediate_size=6144", "d_ff=6144"),
        ("vocab_size=50304", "V=50304"),
        ("n_positions=2048", "L_max=2048"),
    ],
)
def test_set_hugging_face_name_counts_as_the_symtrans_size(capsys, setting, same):
    got = []
    for s in (setting, same):
        assert main(["params", "gpt2", "--set", s, "--format", "json"]) == 0
        r = json.loads(capsys.readouterr().out)
        got.append((r["total"], r["sizes"]))
    assert got[0] == got[1]
    name, value = same.split("=")
    assert got[0][1][name] == int(value)  # GPT-2's own value is another (config.json of gpt2)


def test_set_near_miss_of_a_hugging_face_name_suggests_it_not_share_layers(capsys):
    code, _, err = _run(capsys, "params", "gpt2", "--set", "num_hiden_layers=6")
    assert code == 2 and "did you mean num_hidden_layers (N)" in err


@pytest.mark.parametrize(
    "argv, suggestion",
    [
        (["flops", "gpt2", "--seqlen", "10"], "did you mean --seq-len?"),
        (["flops", "gpt2", "--seqlen=10"], "did you mean --seq-len?"),
        (["memory", "gpt2", "--inferenc"], None),  # an abbreviation argparse accepts: no error
        (["report", "gpt2", "--langg", "zh"], "did you mean --lang?"),
    ],
)
def test_mistyped_option_gets_a_did_you_mean(capsys, argv, suggestion):
    code, _, err = _run(capsys, *argv)
    if suggestion is None:
        assert code == 0
    else:
        assert code == 2 and suggestion in err and err.count("\n") == 1


def test_plot_scaling_over_L_of_a_rotary_model_suggests_flops(capsys, tmp_path):
    from conftest import require

    require("matplotlib")
    code, _, err = _run(capsys, "plot", "llama-2-7b", "--kind", "scaling", "--over", "L", "-o", str(tmp_path / "a.png"))
    # Llama-2 uses rotary positions (Touvron et al. 2023 §2.2): no parameter depends on L.
    assert code == 0 and "do not depend on L" in err and "--quantity flops" in err
    code, _, err = _run(
        capsys,
        "plot",
        "llama-2-7b",
        "--kind",
        "scaling",
        "--over",
        "L",
        "--quantity",
        "flops",
        "-o",
        str(tmp_path / "b.png"),
    )
    assert code == 0 and "do not depend" not in err
    code, _, err = _run(capsys, "plot", "llama-2-7b", "--kind", "scaling", "--over", "N", "-o", str(tmp_path / "c.png"))
    assert code == 0 and "do not depend" not in err


# -- 25.12: the quick start's report ends with its last section, not an install hint -------------


def test_report_without_matplotlib_leaves_the_charts_out_unless_asked(capsys, tmp_path, monkeypatch):
    import symtrans.render.plots as plots

    def no_matplotlib(*args, **kwargs):  # what _figure raises when matplotlib cannot be imported
        raise plots.PlotsUnavailable("charts need matplotlib")

    monkeypatch.setattr(plots, "_figure", no_matplotlib)
    for name in ("r.html", "r.md"):  # the quick start writes HTML
        out = tmp_path / name
        code, _, err = _run(capsys, "report", "gpt2", "-o", str(out))
        assert code == 0
        text = out.read_text(encoding="utf-8")
        assert "Charts need matplotlib" not in text and "## Charts" not in text and ">Charts</h2>" not in text
        assert "no charts" in err and "symtrans[plots]" in err and err.count("\n") == 1
    code, _, err = _run(capsys, "report", "gpt2", "--no-charts", "-o", str(tmp_path / "q.md"))
    assert code == 0 and err == ""


# -- 25.13: a report from a config.json says where its L came from -------------------------------


def test_report_from_a_config_says_where_L_came_from(capsys, tmp_path):
    # qwen3-4b-shaped.json sets max_position_embeddings 40960 and no workload: L is
    # symtrans's default of 2,048 tokens, which the CLI already names.
    out = tmp_path / "q.md"
    code, _, _ = _run(capsys, "report", "tests/fixtures/configs/qwen3-4b-shaped.json", "--no-charts", "-o", str(out))
    assert code == 0
    head = out.read_text(encoding="utf-8").split("\n## ", 1)[0]
    assert "$L = 2{,}048$" in head
    assert "| sequence length from | symtrans's default of 2048 tokens (set --seq-len)" in head
    assert "L_max = 40,960" in head
    code, _, _ = _run(capsys, "report", "gpt2", "--seq-len", "512", "--no-charts", "-o", str(out))
    assert "| sequence length from | --seq-len |" in out.read_text(encoding="utf-8")


# -- 25.8: the dtype of every memory figure, and where it came from ---------------------------------

GEMMA2_9B = "tests/fixtures/configs/gemma-2-9b.json"  # torch_dtype "float32", as published
GEMMA2_9B_PARAMS = 9_241_705_984  # transformers Gemma2ForCausalLM on the meta device (tests/test_hf_config.py)


def test_memory_of_an_fp32_checkpoint_names_its_dtype_and_offers_the_serving_dtype_apart(capsys):
    code, out, _ = _run(capsys, "memory", GEMMA2_9B, "--inference")
    assert code == 0
    lines = out.splitlines()
    assert lines[2] == "  weights fp32: the checkpoint's dtype (the config's torch_dtype), as stored"
    assert lines[3].startswith("  served in bf16") and f"weights {2 * GEMMA2_9B_PARAMS:,} bytes" in lines[3]
    code, out, _ = _run(capsys, "memory", GEMMA2_9B, "--inference", "--format", "json")
    r = json.loads(out)
    assert (r["dtype"], r["dtype_source"], r["checkpoint_dtype"]) == ("fp32", "checkpoint", "fp32")
    assert r["weights_bytes"] == 4 * GEMMA2_9B_PARAMS  # 4 bytes per fp32 parameter
    assert r["serving"]["dtype"] == "bf16" and r["serving"]["weights_bytes"] == 2 * GEMMA2_9B_PARAMS


def test_memory_says_when_the_dtype_is_given_or_symtrans_s_default(capsys):
    code, out, _ = _run(capsys, "memory", GEMMA2_9B, "--inference", "--dtype", "bf16")
    assert code == 0 and "  weights bf16: --dtype" in out and "served in" not in out
    code, out, _ = _run(capsys, "memory", "gpt2", "--format", "json")
    r = json.loads(out)
    assert (r["dtype"], r["dtype_source"], r["checkpoint_dtype"]) == ("bf16", "default", None)


# -- 25.20, 25.22: the articles' slips and labels --------------------------------------------------


def test_article_000_gpt3_embedding_slip_is_named():
    from symtrans.catalog.presets import PRESETS

    notes = " ".join(PRESETS["handcount-000-transformer-base"].notes)
    # Article 000: 「一些大型语言模型（例如GPT-3）使用词嵌入长度为1024或更高」; Brown et al. 2020
    # Table 2.1: GPT-3 Small has d_model = 768.
    assert "GPT-3" in notes and "1024" in notes and "768" in notes and "Slip" in notes


def test_article_003_110M_is_rounded_up_and_001_runtime_memory_is_symtrans_reading(capsys):
    from symtrans.catalog.handcounts import verdict

    # 23,040,000 + 393,216 + 85,017,600 + 589,824 = 109,040,640 -> whole millions, rounded up: 110M.
    assert 23_040_000 + 393_216 + 85_017_600 + 589_824 == 109_040_640
    assert verdict(110_000_000, 109_040_640, 500_000, up_to=1_000_000) == "rounded up"
    assert verdict(110_000_000, 108_040_640, 500_000, up_to=1_000_000) == "slip"  # two millions off
    code, out, _ = _run(capsys, "report", "handcount-003-bert-base", "--no-charts", "-o", "-")
    assert code == 0 and "rounded up to the printed figure" in out
    from symtrans.catalog import deploy_handcount

    # 運行時顯存 = 6 x 512 x 512 x 2 bytes: the article never says what it holds; that it is a
    # KV cache is symtrans's reading, and the figure says so.
    figures = json.dumps(deploy_handcount.as_json(), ensure_ascii=False)
    assert "symtrans's reading of 運行時顯存" in figures


def test_article_001_worked_example_slips_from_its_printed_inputs():
    from fractions import Fraction as F

    from symtrans.catalog.presets import PRESETS

    # Article 001, step 3's output (position-encoded X), row 0, its '?' read as a minus sign:
    x0 = [F("0.12"), F("1.34"), F("-0.05"), F("1.27"), F("-0.18"), F("1.41"), F("-0.23"), F("1.09")]
    # its W_Q, column 0 (row i starts at 0.1*(i+1)): 0.1, 0.2, ..., 0.8
    w_col0 = [F(k, 10) for k in range(1, 9)]
    # 0.012 + 0.268 - 0.015 + 0.508 - 0.090 + 0.846 - 0.161 + 0.872 = 2.24, printed 3.02
    q00 = sum(a * b for a, b in zip(x0, w_col0))
    assert q00 == F("2.24") != F("3.02")
    # e^2.0146 = e^2 * e^0.0146 = 7.389056 * 1.014707 = 7.4977..., printed 7.598
    import math

    assert round(math.exp(2) * math.exp(0.0146), 3) == 7.498
    notes = " ".join(PRESETS["handcount-001-transformer"].notes)
    assert "[2.24," in notes and "3.02" in notes and "e^2.0146 is 7.498, printed 7.598" in notes


# -- new-user findings: train past the context, --mask window without a window, decode's header --


def test_train_past_gpt2s_1024_positions_warns_in_flops_words(capsys):
    # GPT-2's config.json: n_positions 1024 (a learned table of 1,024 rows).
    code, _, err = _run(capsys, "train", "gpt2", "--seq-len", "4096")
    assert code == 0
    line = "L = 4,096 exceeds the learned position table's L_max = 1,024 rows"
    assert line in err and err.count("\n") == 1
    code, _, flops_err = _run(capsys, "flops", "gpt2", "--seq-len", "4096")
    assert code == 0 and err == flops_err  # the same line, word for word
    code, _, err = _run(capsys, "train", "gpt2", "--seq-len", "1024")
    assert code == 0 and err == ""


def test_flops_mask_window_on_a_model_without_a_window_says_so(capsys):
    # GPT-2 small at B = 1, L = 1,024 (no sliding window): forward FLOPs, 2 per MAC, full square:
    # 2*L*V*d + N*(4*L^2*d + 4*L*d_ff*d + 8*L*d^2) with d 768, d_ff 3,072, V 50,257, N 12
    L, V, d, d_ff, N = 1024, 50257, 768, 3072, 12
    full = 2 * L * V * d + N * (4 * L * L * d + 4 * L * d_ff * d + 8 * L * d * d)
    assert full == 291_648_307_200
    code, out, err = _run(capsys, "flops", "gpt2", "--mask", "window")
    assert code == 0 and f"{full:,}" in out.splitlines()[0]
    assert err.count("\n") == 1 and "no sliding window" in err and "--mask full" in err
    # Mistral 7B has one (sliding_window 4,096): no such line
    code, _, err = _run(capsys, "flops", "mistral-7b", "--mask", "window")
    assert code == 0 and "no sliding window" not in err


def test_flops_decode_names_the_prompt_length_and_not_a_square_mask(capsys):
    # Llama-2-7B's config.json: max_position_embeddings 4,096, the default prompt length L_pre
    code, out, _ = _run(capsys, "flops", "llama-2-7b", "--mode", "decode")
    assert code == 0
    lines = out.splitlines()
    assert lines[1].startswith("  L_pre = 4,096: ") and "--prefill" in lines[1]
    assert not [x for x in lines if x.startswith(("  L = ", "  mask: "))]
    assert any("KV cache" in x for x in lines if x.startswith("  attention: "))
    code, out, _ = _run(capsys, "flops", "llama-2-7b", "--mode", "decode", "--prefill", "100")
    assert code == 0 and out.splitlines()[1] == "  L_pre = 100: --prefill"
    # the half-square approximation does change a decode step: its mask line stays
    code, out, _ = _run(capsys, "flops", "llama-2-7b", "--mode", "decode", "--mask", "half")
    assert code == 0 and "  mask: half: " in out
