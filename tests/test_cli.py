"""The command line contract (DESIGN §6; tracker issue 2 "Bad input")."""

import json
import os
import subprocess
import sys

import pytest

from symtrans.cli.main import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_params_json_has_exact_total_closed_form_and_components(capsys):
    code, out, err = run(capsys, "params", "bert-base", "--format", "json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["total"] == 109_482_240  # transformers BertModel, meta device
    assert isinstance(data["total"], int)
    assert "N*(" in data["closed_form"]
    names = [c["name"] for c in data["components"] if c["depth"] == 0]
    assert names == ["embeddings", "encoder", "pooler"]
    # The top-level components add up to the total (JSON parses back to the same integers).
    assert sum(c["total"] for c in data["components"] if c["depth"] == 0) == 109_482_240


def test_params_text_names_published_figure(capsys):
    code, out, _ = run(capsys, "params", "transformer-base")
    assert code == 0
    assert "63,084,544" in out and "65M" in out  # Vaswani et al. 2017 Table 3 prints 65M


def test_mixtral_json_reports_active(capsys):
    code, out, _ = run(capsys, "params", "mixtral-8x7b", "--format", "json")
    data = json.loads(out)
    # transformers MixtralForCausalLM on the meta device; active = total - 6/8 of expert weights.
    assert (data["total"], data["active"]) == (46_702_792_704, 12_879_925_248)


def test_flops_json_names_the_convention(capsys):
    code, out, _ = run(capsys, "flops", "gpt2", "--batch", "1", "--seq-len", "1024", "--format", "json")
    data = json.loads(out)
    assert data["total"] == 291_648_307_200  # arithmetic in test_core.test_gpt2_forward_flops...
    assert data["per_token"] == 291_648_307_200 // 1024
    assert "multiply-accumulate" in data["convention_note"]


def test_flops_encoder_decoder_takes_src_and_tgt(capsys):
    code, out, _ = run(capsys, "flops", "transformer-base", "--set", "L_src=10", "--set", "L_tgt=7", "--format", "json")
    data = json.loads(out)
    assert (data["L_src"], data["L_tgt"]) == (10, 7)


def test_set_changes_the_model(capsys):
    code, out, _ = run(capsys, "params", "gpt2", "--set", "bias=false", "--format", "json")
    # Linear biases per layer: qkv 3*768, attention out 768, fc 3072, proj 768 (GPT2Block).
    linear_biases = 12 * (3 * 768 + 768 + 3072 + 768)
    assert json.loads(out)["total"] == 124_439_808 - linear_biases
    # nanoGPT's bias=False also drops the LayerNorm betas (2 per layer + ln_f): 124,337,664 (nanoGPT model.py).
    code, out, _ = run(capsys, "params", "gpt2", "--set", "bias=false", "--set", "norm_bias=false", "--format", "json")
    assert json.loads(out)["total"] == 124_439_808 - linear_biases - (2 * 12 + 1) * 768 == 124_337_664


def test_presets_lists_every_family(capsys):
    code, out, _ = run(capsys, "presets")
    assert code == 0
    for name in ("transformer-base", "bert-base", "gpt2", "llama-2-7b", "t5-small", "mixtral-8x7b"):
        assert name in out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["params", "gpt2", "--set", "d_model=0"], "d_model must be a positive integer"),
        (["params", "gpt2", "--set", "d_model=-5"], "d_model must be a positive integer"),
        (["params", "gpt2", "--set", "d_model=76.8"], "d_model must be an integer"),
        (["params", "gpt2", "--set", "h=5"], "does not divide d_model"),
        (["params", "gtp2"], "did you mean gpt2"),
        (["params", "gpt2", "--set", "colour=red"], "unknown --set name"),
        (["params", "gpt2", "--set", "bias=maybe"], "bias must be true or false"),
        (["params", "gpt2", "--set", "d_model"], "NAME=VALUE"),
        (["params", "gpt2", "--set", "__import__('os').system('true')=1"], "unknown --set name"),
        (["params", "gpt2", "--set", "d_model=__import__('os')"], "must be an integer"),
        (["flops", "gpt2", "--batch", "0"], "--batch must be a positive integer"),
        (["flops", "gpt2", "--seq-len", "-3"], "--seq-len must be a positive integer"),
        (["params"], "required"),
        (["frobnicate"], "invalid choice"),
        (["params", "gpt2", "--format", "yaml"], "invalid choice"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and needle in err
    assert "Traceback" not in err


def test_an_unknown_set_name_with_no_near_miss_lists_the_names(capsys):
    # Nothing resembles "colour": the line names the first sizes and options --set takes, as
    # argparse names choices, and how many more of each; it leaves out the workload (B has
    # --batch).  The ~130 sizes and ~70 options no longer fit in one error line (capped at
    # 1,000 characters), which once cut the options off entirely.
    from symtrans.engine.legend import LEGEND
    from symtrans.engine.spec import OPTION_NAMES, WORKLOAD_OPTIONS

    code, _, err = run(capsys, "params", "gpt2", "--set", "colour=red")
    assert code == 2 and err.count("\n") == 1 and "characters in all" not in err
    sizes, options = err.rstrip(")\n").split("choose a size (")[1].split(") or an option (")
    shown_sizes, more_sizes = sizes.split(" and ")
    shown_options, more_options = options.split(" and ")
    assert {"d_model", "d_ff", "h", "h_kv", "N", "V", "L_max", "E", "k"} <= set(shown_sizes.split(", "))
    assert "B" not in shown_sizes.split(", ") and "T_gen" not in shown_sizes.split(", ")
    assert {"norm", "ffn", "positional", "tie_output", "moe_first_dense"} <= set(shown_options.split(", "))
    # "and N more": every name is accounted for, shown or counted
    all_sizes = [n for n in LEGEND if n not in WORKLOAD_OPTIONS]
    assert int(more_sizes.split()[0]) == len(all_sizes) - len(shown_sizes.split(", "))
    assert int(more_options.split()[0]) == len(OPTION_NAMES) - len(shown_options.split(", "))


def test_a_hub_id_is_not_downloaded_and_the_message_says_how_to_get_the_config(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no such directory here
    code, out, err = run(capsys, "params", "meta-llama/Llama-2-7b-hf")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "hf download meta-llama/Llama-2-7b-hf config.json" in err and "llama-2-7b" in err
    # The same text as a local directory holding a config.json is read as one.
    (tmp_path / "meta-llama" / "Llama-2-7b-hf").mkdir(parents=True)
    gpt2 = {"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 2, "vocab_size": 100, "n_positions": 32}
    (tmp_path / "meta-llama" / "Llama-2-7b-hf" / "config.json").write_text(json.dumps(gpt2))
    code, out, _ = run(capsys, "params", "meta-llama/Llama-2-7b-hf", "--format", "json")
    # GPT-2 written out: wte 100*64 + wpe 32*64 + 2 layers of (4*64^2 + 4*64 attention, 2*64*256 + 256 + 64
    # FFN, 2 LayerNorms of 2*64) + final LayerNorm 2*64; the LM head is tied.
    layer = 4 * 64**2 + 4 * 64 + 2 * 64 * 256 + 256 + 64 + 4 * 64
    assert code == 0 and json.loads(out)["total"] == 100 * 64 + 32 * 64 + 2 * layer + 2 * 64


def test_unwritable_output_keeps_nothing_half_written(capsys, tmp_path):
    target = tmp_path / "no-such-dir" / "out.json"
    code, _, err = run(capsys, "params", "gpt2", "--format", "json", "-o", str(target))
    assert code == 2 and err.count("\n") == 1
    assert not target.exists()


def test_output_to_a_directory_fails_cleanly(capsys, tmp_path):
    code, _, err = run(capsys, "params", "gpt2", "--format", "json", "-o", str(tmp_path))
    assert code == 2 and err.count("\n") == 1
    assert os.listdir(tmp_path) == []


def test_failed_run_keeps_the_earlier_output(capsys, tmp_path):
    target = tmp_path / "out.json"
    target.write_text("earlier\n")
    code, _, _ = run(capsys, "params", "gpt2", "--set", "h=5", "--format", "json", "-o", str(target))
    assert code == 2
    assert target.read_text() == "earlier\n"
    assert os.listdir(tmp_path) == ["out.json"]


def test_output_file_is_written(capsys, tmp_path):
    target = tmp_path / "out.json"
    code, out, _ = run(capsys, "params", "gpt2", "--format", "json", "-o", str(target))
    assert code == 0 and out == ""
    assert json.loads(target.read_text())["total"] == 124_439_808


def test_python_dash_m_and_entry_point():
    for cmd in ([sys.executable, "-m", "symtrans", "params", "gpt2", "--format", "json"],):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["total"] == 124_439_808
    p = subprocess.run(
        [sys.executable, "-m", "symtrans", "params", "nope"], capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
