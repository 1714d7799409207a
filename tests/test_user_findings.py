"""Regressions for the first-time user's findings (fresh clone): M4 (walk --step and
--format), M5 (LoRA + adapter closed form), M6 (options that did nothing), M8 (-o over
the input; report format from the extension), M9 (typos in config.json keys), and the
LOW items --version and the MoE active count in ``presets``.

Every expected number is written out as arithmetic from the model's sizes or taken from
the real implementation named beside it; none is read back from symtrans.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
import tomllib
from conftest import require

from symtrans.cli.main import UsageError, main, report_format
from symtrans.engine.spec import Spec

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "tests" / "fixtures" / "configs"

# GPT-2 small (config.json of gpt2): d_model 768, 12 layers, 12 heads, L 1024.
D, N, H = 768, 12, 12


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_usage_error(code, out, err, *needles):
    """DESIGN §6: status 2, one line on stderr naming the problem, nothing on stdout."""
    assert code == 2, err
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in err, (n, err)


# ----------------------------------------------------------------------------- M4

Q_PROJ_FLOPS = 2 * 1 * 1024 * D * D  # Q = X W_Q at B=1, L=1024: 2 * B * L * d_model * d_model


def test_walk_step_honours_json(capsys):
    code, out, err = run(capsys, "walk", "gpt2", "--step", "5", "--format", "json")
    assert code == 0, err
    data = json.loads(out)  # was plain text
    step = data["step"]
    assert step["op"] == "Q = X W_Q"
    assert step["at"]["flops"] == Q_PROJ_FLOPS == 1_207_959_552
    assert step["at"]["total_flops"] == N * Q_PROJ_FLOPS  # one per layer
    assert step["at"]["output"] == [1, 1024, D]


def test_walk_step_json_to_a_file(tmp_path, capsys):
    out = tmp_path / "st.json"
    code, _, err = run(capsys, "walk", "gpt2", "--step", "5", "-o", str(out), "--format", "json")
    assert code == 0, err
    assert json.loads(out.read_text())["step"]["index"] == 5


def test_walk_step_honours_markdown(capsys):
    code, out, err = run(capsys, "walk", "gpt2", "--step", "5", "--format", "markdown")
    assert code == 0, err
    assert out.startswith("### Step 5: `Q = X W_Q`")
    assert "= 1,207,959,552" in out and "- x `N` = 12 layers: 14,495,514,624" in out  # 12 x 1,207,959,552


# ----------------------------------------------------------------------------- M5


def test_lora_and_adapter_with_different_ranks_give_a_true_closed_form(capsys):
    code, out, err = run(capsys, "params", "gpt2", "--lora", "r=4,targets=q", "--adapter", "r=16", "--format", "json")
    assert code == 0, err
    p = json.loads(out)["peft"]
    # LoRA on q (Hu et al. 2021): N copies of r*(d + d) = 2*r*d, at r = 4: 8*N*d.
    # Houlsby adapters (Houlsby et al. 2019): 2 per layer of 2*r*d + r + d, at r = 16:
    # 2*N*(33*d + 16) = 66*N*d + 32*N.  Sum: 74*N*d + 32*N.
    lora, adapter = N * 2 * 4 * D, 2 * N * (2 * 16 * D + 16 + D)
    assert p["trainable"] == lora + adapter == 682_368
    assert p["trainable_closed_form"] == "74*N*d_model + 32*N"  # was 6*N*d_model*r + ...: true at no r
    assert 74 * N * D + 32 * N == 682_368
    assert "LoRA r = 4" in p["trainable_closed_form_note"] and "adapters r = 16" in p["trainable_closed_form_note"]


def test_lora_and_adapter_text_says_which_rank(capsys):
    code, out, _ = run(capsys, "params", "gpt2", "--lora", "r=4,targets=q", "--adapter", "r=16")
    assert code == 0
    assert "closed form 2*N*d_model*r (r = 4)" in out
    assert "(r = 16)" in out
    assert "trainable closed form (ranks substituted: LoRA r = 4, adapters r = 16): 74*N*d_model + 32*N" in out


def test_lora_and_adapter_with_equal_ranks_keep_r(capsys):
    code, out, _ = run(capsys, "params", "gpt2", "--lora", "r=16,targets=q", "--adapter", "r=16", "--format", "json")
    p = json.loads(out)["peft"]
    # One r for both: 2*r*d*N + 2*N*(2*r*d + r + d) = 6*N*d*r + 2*N*d + 2*N*r.
    assert p["trainable_closed_form"] == "6*N*d_model*r + 2*N*d_model + 2*N*r"
    assert p["trainable"] == 6 * N * D * 16 + 2 * N * D + 2 * N * 16
    assert "trainable_closed_form_note" not in p


# ----------------------------------------------------------------------------- M6


@pytest.mark.parametrize("setting", ["n_shared_experts=2", "moe_every=2", "moe_first_dense=1"])
def test_moe_layout_without_experts_is_an_error(capsys, setting):
    assert_usage_error(*run(capsys, "params", "gpt2", "--set", setting), setting.split("=")[0], "E")


def test_moe_layout_with_experts_still_counts(capsys):
    code, out, err = run(capsys, "params", "mixtral-8x7b", "--set", "n_shared_experts=1", "--format", "json")
    assert code == 0, err
    # One shared SwiGLU expert per layer: 3 * d_model * d_ff = 3 * 4096 * 14336, 32 layers.
    assert json.loads(out)["total"] == 46_702_792_704 + 32 * 3 * 4096 * 14336


@pytest.mark.parametrize(
    "model, setting",
    [("gpt2", "pooler=true"), ("gpt2", "mlm_head=true"), ("t5-small", "pooler=true"), ("t5-small", "mlm_head=true")],
)
def test_bert_heads_on_other_families_are_errors(capsys, model, setting):
    assert_usage_error(*run(capsys, "params", model, "--set", setting), setting.split("=")[0], "encoder-only")


def test_spec_refuses_a_pooler_on_a_decoder():
    with pytest.raises(ValueError, match="pooler"):
        Spec(family="decoder-only", sizes=dict(d_model=8, d_ff=8, h=2, N=1, V=10), pooler=True)


def test_bert_mlm_head_still_counts(capsys):
    code, out, _ = run(capsys, "params", "bert-base", "--set", "mlm_head=true", "--format", "json")
    assert code == 0
    # BertLMPredictionHead: dense 768 x 768 + 768, LayerNorm 2 x 768, decoder tied, bias V = 30522.
    assert json.loads(out)["total"] == 109_482_240 + 768 * 768 + 768 + 2 * 768 + 30522


@pytest.mark.parametrize("mask", ["causal", "half"])
def test_causal_mask_on_an_encoder_only_model_is_an_error(capsys, mask):
    assert_usage_error(*run(capsys, "flops", "bert-base", "--mask", mask), "encoder-only", "bidirectional")


def test_full_mask_on_an_encoder_only_model_still_counts(capsys):
    code, _, err = run(capsys, "flops", "bert-base", "--mask", "full")
    assert code == 0, err


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--prefill", "5"], "--prefill"),
        (["--generate", "5"], "--generate"),
        (["--mode", "training", "--prefill", "5"], "--prefill"),
        (["--mode", "prefill", "--generate", "5"], "--generate"),
    ],
)
def test_inference_lengths_outside_their_modes_are_errors(capsys, argv, needle):
    assert_usage_error(*run(capsys, "flops", "gpt2", *argv), needle)


def test_inference_lengths_in_their_modes_still_work(capsys):
    code, out, err = run(
        capsys, "flops", "gpt2", "--mode", "decode", "--prefill", "3", "--generate", "5", "--format", "json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert (data["L_pre"], data["T_gen"]) == (3, 5)


def test_diff_mask_without_quantity_flops_is_an_error(capsys):
    assert_usage_error(*run(capsys, "diff", "gpt2", "--mask-b", "causal"), "--mask-b", "--quantity flops")


def test_diff_mask_with_quantity_flops_counts_the_triangle(capsys):
    code, out, err = run(capsys, "diff", "gpt2", "--mask-b", "causal", "--quantity", "flops", "--format", "json")
    assert code == 0, err
    # The two attention products (Q K^T and A V), 2 FLOPs per MAC, d_k = 64 wide, over the
    # L^2 - L(L+1)/2 pairs the causal mask drops, for 12 heads in 12 layers at L = 1024.
    L = 1024
    dropped = N * H * 2 * 2 * 64 * (L * L - L * (L + 1) // 2)
    assert dropped == 19_308_478_464
    assert str(-dropped) in out


def test_pe_table_honours_set_d_model_and_positions(capsys):
    code, out, err = run(capsys, "walk", "--pe-table", "--set", "d_model=7", "--positions", "3", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["d_model"], data["positions"]) == (7, 3)  # was the d_model = 6 table
    table = data["table"]
    assert len(table) == 3 and all(len(row) == 7 for row in table)
    # Vaswani et al. 2017 §3.5: PE(1, 2i) = sin(1 / 10000^(2i/7)); column 2 is i = 1, column 6 is i = 3.
    assert table[1][2]["value"] == pytest.approx(math.sin(1 / 10000 ** (2 / 7)), rel=1e-12)
    assert table[1][6]["value"] == pytest.approx(math.sin(1 / 10000 ** (6 / 7)), rel=1e-12)
    assert table[2][3]["value"] == pytest.approx(math.cos(2 / 10000 ** (2 / 7)), rel=1e-12)


def test_pe_table_without_model_takes_only_d_model(capsys):
    assert_usage_error(*run(capsys, "walk", "--pe-table", "--set", "h=7"), "d_model")


def test_pe_table_positions_and_seq_len_must_agree(capsys):
    assert_usage_error(*run(capsys, "walk", "--pe-table", "--positions", "3", "--seq-len", "4"), "--positions")


# ----------------------------------------------------------------------------- M8


def test_output_onto_the_input_config_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(CONFIGS / "gpt2.json", "victim.json")
    before = Path("victim.json").read_bytes()
    assert_usage_error(*run(capsys, "params", "victim.json", "-o", "victim.json"), "victim.json", "overwrite")
    assert_usage_error(*run(capsys, "params", "./victim.json", "-o", str(tmp_path / "victim.json")), "overwrite")
    Path("link.json").symlink_to("victim.json")
    assert_usage_error(*run(capsys, "params", "victim.json", "-o", "link.json"), "overwrite")
    Path("d").mkdir()
    shutil.copy("victim.json", "d/config.json")
    assert_usage_error(*run(capsys, "params", "d", "-o", "d/config.json"), "overwrite")
    assert_usage_error(*run(capsys, "report", "victim.json", "--format", "pdf", "-o", "victim.json"), "overwrite")
    assert_usage_error(*run(capsys, "diff", "victim.json:V=100", "-o", "victim.json"), "overwrite")
    assert Path("victim.json").read_bytes() == before


def test_output_onto_the_sweep_csv_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("c.csv").write_text("d_model\n768\n")
    assert_usage_error(*run(capsys, "sweep", "gpt2", "--csv", "c.csv", "-o", "c.csv"), "overwrite")
    assert Path("c.csv").read_text() == "d_model\n768\n"


def test_output_elsewhere_still_works(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(CONFIGS / "gpt2.json", "cfg.json")
    code, _, err = run(capsys, "params", "cfg.json", "-o", "out.txt")
    assert code == 0, err
    assert "124,439,808" in Path("out.txt").read_text()  # transformers GPT2LMHeadModel


@pytest.mark.parametrize(
    "fmt, output, expected",
    [
        (None, "x.pdf", "pdf"),
        (None, "x.tex", "latex"),
        (None, "x.md", "markdown"),
        (None, "X.MD", "markdown"),
        (None, "x.txt", "markdown"),
        (None, None, "markdown"),
        ("latex", "x.txt", "latex"),
        ("pdf", "x.pdf", "pdf"),
    ],
)
def test_report_format_from_the_extension(fmt, output, expected):
    assert report_format(fmt, output) == expected


def test_report_format_contradicting_the_extension_is_refused(tmp_path, capsys):
    out = tmp_path / "mistake.pdf"
    assert_usage_error(
        *run(capsys, "report", "gpt2", "--format", "markdown", "-o", str(out)), "--format markdown", ".pdf"
    )
    assert not out.exists()
    with pytest.raises(UsageError):
        report_format("latex", "x.md")


@pytest.mark.parametrize("alias", ["md", "MD", "Markdown"])
def test_report_format_md_is_markdown(tmp_path, capsys, alias):
    # A new user's finding: `report --format md` was refused (invalid choice), though -o x.md
    # means Markdown.  Every --format takes md (and tex, htm) and any case.
    out = tmp_path / "r.md"
    code, _, err = run(capsys, "report", "gpt2", "--format", alias, "--no-charts", "-o", str(out))
    assert code == 0, err
    assert out.read_text().startswith("#")  # Markdown's title, not LaTeX's \documentclass
    code, text, err = run(capsys, "params", "gpt2", "--format", alias)
    assert code == 0 and "|" in text, err  # the params table in Markdown


def test_report_to_tex_writes_latex(tmp_path, capsys):
    out = tmp_path / "r.tex"
    code, _, err = run(capsys, "report", "gpt2", "--no-charts", "-o", str(out))
    assert code == 0, err
    assert out.read_text().startswith("\\documentclass")  # was Markdown


def test_report_to_pdf_writes_a_pdf(tmp_path, capsys):
    if not (shutil.which("lualatex") or shutil.which("pdflatex")):
        pytest.skip("no TeX engine")
    out = tmp_path / "r.pdf"
    code, _, err = run(capsys, "report", "gpt2", "--no-charts", "-o", str(out))
    assert code == 0, err
    assert out.read_bytes()[:5] == b"%PDF-"  # the PDF magic number; was Markdown text


# ----------------------------------------------------------------------------- M9


def _llama3_8b(**changes):
    """Llama-3-8B's config.json (meta-llama/Meta-Llama-3-8B), with ``changes``."""
    cfg = json.loads((CONFIGS / "llama-3-8b.json").read_text())
    cfg.update(changes)
    return cfg


@pytest.mark.parametrize(
    "good, typo",
    [
        ("num_key_value_heads", "num_key_value_head"),
        ("intermediate_size", "intermediate_sise"),
        ("vocab_size", "Vocab_Size"),
    ],
)
def test_typo_in_a_config_key_is_an_error(tmp_path, capsys, good, typo):
    cfg = _llama3_8b()
    cfg[typo] = cfg.pop(good)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    assert_usage_error(*run(capsys, "params", str(path)), f"unknown key {typo} (did you mean {good}?)")


def test_correct_llama3_config_counts_8b(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_llama3_8b()))
    code, out, _ = run(capsys, "params", str(path), "--format", "json")
    # transformers LlamaForCausalLM(Meta-Llama-3-8B config) on the meta device: 8,030,261,248.
    assert json.loads(out)["total"] == 8_030_261_248


def test_unknown_key_far_from_any_known_one_is_a_note(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_llama3_8b(my_training_run="v7")))
    code, out, err = run(capsys, "params", str(path), "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["total"] == 8_030_261_248
    assert any("my_training_run" in n and "ignored" in n for n in data["notes"])


@pytest.mark.parametrize("fixture", sorted(p.name for p in CONFIGS.glob("*.json")))
def test_published_configs_have_no_unknown_keys(fixture):
    """Real checkpoints' config.json files (legacy keys included) raise no typo and no note."""
    from symtrans.catalog.hf_config import load_config

    _, _, notes = load_config(CONFIGS / fixture)
    assert not [n for n in notes if "not known to" in n], notes


def test_key_table_covers_the_installed_transformers_classes():
    transformers = require("transformers")
    import inspect

    from symtrans.catalog.hf_config import CLASSES, known_keys

    for mt, (cls, _) in CLASSES.items():
        C = getattr(transformers, cls)
        keys = (set(inspect.signature(C.__init__).parameters) - {"self", "kwargs"}) | set(C().to_dict())
        keys |= set(C.attribute_map)
        assert keys <= known_keys(mt), (mt, sorted(keys - known_keys(mt)))


# ----------------------------------------------------------------------------- LOW


def test_version(capsys):
    code, out, err = run(capsys, "--version")
    assert code == 0 and err == ""
    with open(ROOT / "pyproject.toml", "rb") as f:
        assert out == f"symtrans {tomllib.load(f)['project']['version']}\n"


def test_presets_show_the_active_count(capsys):
    code, out, _ = run(capsys, "presets")
    # transformers MixtralForCausalLM (meta device): 46,702,792,704 total, 12,879,925,248 active.
    line = next(x for x in out.splitlines() if x.startswith("mixtral-8x7b"))
    assert "46.7B (12.9B active)" in line
    code, out, _ = run(capsys, "presets", "--format", "json")
    mixtral = next(p for p in json.loads(out) if p["name"] == "mixtral-8x7b")
    assert (mixtral["total"], mixtral["active"]) == (46_702_792_704, 12_879_925_248)
    assert "active" not in next(p for p in json.loads(out) if p["name"] == "gpt2")


def test_walk_options_of_the_other_mode_are_errors(capsys):
    assert_usage_error(*run(capsys, "walk", "--pe-table", "--step", "2"), "--step")
    assert_usage_error(*run(capsys, "walk", "gpt2", "--positions", "3"), "--positions")


def test_a_flat_key_beside_text_config_is_noted_only_when_it_differs(tmp_path):
    # Qwen2.5-VL-7B as transformers 4.53 re-saves it repeats the text keys at the top level;
    # 5.x reads text_config alone.  The oracle: Qwen2_5_VLConfig itself ignores a top-level
    # hidden_size beside text_config, so a differing copy is noted as ignored, an equal one not.
    transformers = require("transformers")
    from symtrans.catalog.hf_config import load_config

    cfg = json.loads((CONFIGS / "qwen2.5-vl-7b.json").read_text())
    cfg["hidden_size"] = 1234
    hf = transformers.Qwen2_5_VLConfig(**{k: v for k, v in cfg.items() if k != "model_type"})
    assert hf.text_config.hidden_size == cfg["text_config"]["hidden_size"] == 3584
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    notes = [n for n in load_config(path)[2] if "not known to" in n]
    assert notes == ["key hidden_size not known to Qwen2_5_VLConfig (transformers 5.x): ignored"], notes


@pytest.mark.parametrize("alias", ["H100-SXM", "h100_sxm", "H100 SXM", "h100sxm"])
def test_accelerator_names_in_any_case_and_spelling(capsys, alias):
    # A new user's finding: --accelerator H100-SXM (as NVIDIA writes it) was refused; the
    # table's name is h100-sxm.  Any case, and ' ', '-' or '_' between the parts, name it.
    code, canonical, err = run(capsys, "time", "gpt2", "--accelerator", "h100-sxm")
    assert code == 0, err
    code, out, err = run(capsys, "time", "gpt2", "--accelerator", alias)
    assert code == 0, err
    assert out == canonical


def test_an_ambiguous_accelerator_is_refused_listing_the_choices(capsys):
    # h100 is two rows of the datasheet (SXM: 3.35 TB/s, 989.5 TFLOPS bf16 dense; PCIe: 2 TB/s,
    # 756.5): no default between them, so the refusal names both, in one line.
    code, out, err = run(capsys, "time", "gpt2", "--accelerator", "h100")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "ambiguous" in err and "h100-sxm" in err and "h100-pcie" in err
    code, _, err = run(capsys, "time", "gpt2", "--accelerator", "v100")  # one row: v100-sxm2
    assert code == 0, err


def test_reconcile_warns_when_the_log_serves_another_model(capsys, tmp_path):
    # A new user's finding: reconcile compared a log of one model with the config of another
    # without a word.  The log's own line naming its model (vLLM's "non-default args") is now
    # set against MODEL's name: a mismatch is one warning line; the figures are unchanged.
    logs = Path(__file__).parent / "vllm_logs"
    body = (logs / "vllm-10517-rtx3090-llama31-8b-20k.log").read_text(encoding="utf-8")  # names no model
    cfg = str(logs / "configs" / "llama-3.1-8b-instruct.json")
    outs = {}
    for served in ("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct"):
        log = tmp_path / f"{served.split('/')[0]}.log"
        log.write_text(f"INFO 11-21 10:00:00 arg_utils.py:1] non-default args: {{'model': '{served}'}}\n" + body)
        code, outs[served], err = run(capsys, "reconcile", str(log), cfg, "--accelerator", "rtx-3090")
        assert code == 0
        if served.startswith("Qwen"):
            assert err.count("\n") == 1 and "warning" in err and "'Qwen/Qwen3-8B' (its line 1)" in err
        else:
            assert err == ""
    a, b = outs.values()
    assert a.replace(f"{Path(tmp_path, 'Qwen.log')}", "") == b.replace(f"{Path(tmp_path, 'meta-llama.log')}", "")


def test_reconcile_takes_a_config_json_by_its_folder_and_a_bare_one_as_unnamed(capsys, tmp_path, monkeypatch):
    # A new user's finding: 'reconcile vllm.log config.json' (the README's form) warned on every log,
    # comparing the log's model with the name 'config'.  A config.json is named by its folder; one
    # in the working folder names no model, so nothing is compared.
    logs = Path(__file__).parent / "vllm_logs"
    body = (logs / "vllm-10517-rtx3090-llama31-8b-20k.log").read_text(encoding="utf-8")
    log = tmp_path / "served.log"
    log.write_text("INFO 11-21 10:00:00 arg_utils.py:1] non-default args: {'model': 'Qwen/Qwen3-8B'}\n" + body)
    config = (logs / "configs" / "llama-3.1-8b-instruct.json").read_text(encoding="utf-8")
    for folder in (".", "llama-3.1-8b", "Qwen3-8B"):
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / "config.json").write_text(config, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for model, warns in (("config.json", False), ("llama-3.1-8b/config.json", True), ("Qwen3-8B/config.json", False)):
        code, _, err = run(capsys, "reconcile", str(log), model, "--accelerator", "rtx-3090")
        assert code == 0
        assert ("the log serves 'Qwen/Qwen3-8B'" in err) is warns, (model, err)


@pytest.mark.parametrize(
    "argv",
    [
        ["params", "gpt2", "--set", "N=9007199254740993"],
        ["sweep", "gpt2", "--grid", "N=9007199254740993", "--quantity", "params"],
        ["sweep", "gpt2", "--grid", "N=12,9007199254740993", "--quantity", "params"],
        ["sweep", "gpt2", "--grid", "N=1e20", "--quantity", "params"],
        # a new user's finding: the workload's sizes took up to 10**40 (--set L=... was refused)
        ["flops", "gpt2", "--seq-len", "9007199254740993"],
        ["flops", "gpt2", "--batch", "100000000000000000000"],
        ["flops", "gpt2", "--mode", "decode", "--prefill", "9007199254740993", "--generate", "1"],
        ["deploy", "gpt2", "--accelerator", "h100-sxm", "--max-model-len", "9007199254740993"],
    ],
)
def test_one_size_limit_for_every_command(capsys, argv):
    # A reviewer's finding: --set (and config.json, and the Python API) refuse a size above
    # 2**53 (hf_config.MAX_SIZE), while sweep's --grid and --csv took any up to 10**40.  Now
    # all of them: 2**53 + 1 = 9,007,199,254,740,993 is refused in one line naming the limit.
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "implausibly large for a size (the limit is 2**53)" in err


def test_the_python_api_takes_the_same_limit_on_the_workload():
    import symtrans

    gpt2 = symtrans.model("gpt2")
    with pytest.raises(
        ValueError, match=r"B = 1152921504606846976 is implausibly large for a size \(the limit is 2\*\*53\)"
    ):
        gpt2.flops(batch=2**60, seq_len=8)
    with pytest.raises(ValueError, match=r"L = 9007199254740993 is implausibly large"):
        gpt2.flops(batch=1, seq_len=2**53 + 1)
    # 2**53 itself is a size (the limit is inclusive, as --set's)
    assert gpt2.flops(batch=1, seq_len=2**53) > 0


def test_sweep_csv_takes_the_same_size_limit(capsys, tmp_path):
    path = tmp_path / "sizes.csv"
    path.write_text("N\n12\n9007199254740993\n", encoding="utf-8")  # 2**53 + 1 on CSV line 3
    code, _, err = run(capsys, "sweep", "gpt2", "--csv", str(path), "--quantity", "params")
    assert code == 2 and "N on CSV line 3" in err and "the limit is 2**53" in err
    path.write_text("N\n12\n24\n", encoding="utf-8")
    code, out, err = run(capsys, "sweep", "gpt2", "--csv", str(path), "--quantity", "params")
    assert code == 0, err


# --- a new user's trial: per-token averages, misspelt duplicates, sweep of LED/LongT5, depth limits


def _decimal_digits(total: int, tokens: int) -> str:
    """total / tokens written out with the decimal module (exact: 40 digits of precision)."""
    from decimal import Decimal, getcontext

    getcontext().prec = 40
    text = str(Decimal(total) / Decimal(tokens))
    whole, _, frac = text.partition(".")
    return f"{int(whole):,}.{frac}"


@pytest.mark.parametrize("kind", ["led", "longt5"])
def test_a_per_token_average_prints_as_its_exact_decimal(capsys, tmp_path, kind):
    # A new user's finding: LED's per-token FLOPs printed as "12488927232/5" although the README
    # said every count printed is an integer.  The total over B x L_tgt tokens of a chunked
    # (LED) or blocked (LongT5) encoder need not divide: the line now says it is an average and
    # prints the decimal digits.  Total: FlopCounterMode on transformers' eager forward
    # (test_long_flops' tiny configs and models); B = 1, L_src = 13 (LED) or 11 (LongT5: 13 divides),
    # L_tgt = 5: 5 tokens.
    require("transformers")
    import torch
    from test_long_flops import LED_TINY, TINY, _counted, _led_model, _model

    cfg, model = (LED_TINY, _led_model(LED_TINY)) if kind == "led" else (TINY, _model(TINY))
    src = 13 if kind == "led" else 11
    ids, dec = torch.full((1, src), 5, dtype=torch.long), torch.ones(1, 5, dtype=torch.long)
    total = _counted(lambda: model(input_ids=ids, decoder_input_ids=dec))
    assert total % 5 != 0  # the case reported: not a whole number of FLOPs per token
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    code, out, err = run(capsys, "flops", str(path), "--set", f"L_src={src}", "--set", "L_tgt=5")
    assert code == 0, err
    assert f"per token (an average: the total over B x L_tgt = 5 tokens): {_decimal_digits(total, 5)} (" in out
    assert "exactly" not in out  # no p/q: x/5 ends after one decimal
    code, out, _ = run(capsys, "flops", str(path), "--set", f"L_src={src}", "--set", "L_tgt=5", "--format", "json")
    from fractions import Fraction

    assert Fraction(json.loads(out)["per_token"]) == Fraction(total, 5)  # JSON: the exact "p/q"


def test_a_per_token_average_that_does_not_end_prints_rounded_with_its_fraction(capsys):
    # allenai/led-base-16384 converted at B = 1, L_src = 1000, L_tgt = 7: 149,347,031,040 FLOPs, written
    # out as arithmetic in test_long_flops.test_led_published_config_by_hand.  Per token: / 7 =
    # 21,335,290,148 remainder 4 (7 x 21,335,290,148 = 149,347,031,036), and 4/7 = 0.5714...: .57.
    led = str(CONFIGS / "led-16384-converted.json")
    code, out, err = run(capsys, "flops", led, "--set", "L_src=1000", "--set", "L_tgt=7")
    assert code == 0, err
    assert "149,347,031,040 (149.3 GFLOP)" in out.splitlines()[0]
    assert (
        "  per token (an average: the total over B x L_tgt = 7 tokens): "
        "about 21,335,290,148.57 (exactly 149347031040/7; 21.3 GFLOP)"
    ) in out.splitlines()
    # --tokens: the run's FLOPs are D x that average, labelled so: 10 x 149,347,031,040 / 7
    code, out, err = run(
        capsys, "flops", led, "--mode", "training", "--set", "L_src=1000", "--set", "L_tgt=7", "--tokens", "10"
    )
    assert code == 0, err
    assert "per run of D=10 tokens (D x the average per token): about " in out
    # a whole number per token keeps the plain label: GPT-2 at L 1024 (test_cli: 291,648,307,200 / 1024)
    code, out, _ = run(capsys, "flops", "gpt2")
    assert f"  per token: {291_648_307_200 // 1024:,} (" in out


@pytest.mark.parametrize("extra", [{}, {"intermediate_sise": 14336}])
def test_a_misspelt_duplicate_of_a_present_key_says_so(tmp_path, capsys, extra):
    # A new user's finding: a config with both num_hidden_layers and num_hiden_layers was refused
    # with "did you mean num_hidden_layers? ... a default used instead", false: LlamaConfig reads
    # num_hidden_layers (32) and ignores the misspelling.  The refusal now says what is true.
    cfg = {**_llama3_8b(), "num_hiden_layers": 16, **extra}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    code, out, err = run(capsys, "params", str(path))
    assert_usage_error(
        code,
        out,
        err,
        "num_hiden_layers (a misspelt duplicate of num_hidden_layers, which the config also sets)",
        "ignored and the correctly spelt key read",
    )
    assert "default" not in err and "did you mean" not in err
    # only the misspelling present: it is ignored and the default used, as before
    cfg = _llama3_8b()
    cfg["num_hiden_layers"] = cfg.pop("num_hidden_layers")
    path.write_text(json.dumps(cfg))
    assert_usage_error(
        *run(capsys, "params", str(path)), "num_hiden_layers (did you mean num_hidden_layers?)", "a default used"
    )


def test_a_misspelt_duplicate_in_a_sub_config_says_so(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "clip", "text_config": {"num_hidden_layers": 3, "num_hidden_layer": 3}}))
    assert_usage_error(
        *run(capsys, "params", str(path)),
        "text_config.num_hidden_layer is not a key of its config class (a misspelt duplicate of num_hidden_layers",
        "read num_hidden_layers",
    )


def test_a_misspelt_duplicate_through_the_generic_reader_says_so(tmp_path, capsys):
    # the generic path (a model type without a curated record: bitnet, as test_generic_cli)
    require("transformers")
    cfg = {
        "model_type": "bitnet",
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_hiden_layers": 3,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "vocab_size": 100,
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    assert_usage_error(
        *run(capsys, "params", str(path)),
        "num_hiden_layers (a misspelt duplicate of num_hidden_layers, which the config also sets)",
        "BitNetConfig",
    )


@pytest.mark.parametrize(
    "fixture, params, reason",
    [
        ("led-16384-converted", 214_195_200, "memory of LED's Longformer encoder attention"),
        ("long-t5-tglobal-base-16384-book-summary", 222_913_152, "memory of LongT5's transient-global encoder"),
    ],
)
def test_sweep_of_a_model_without_memory_sweeps_the_other_columns(capsys, fixture, params, reason):
    # A new user's finding: sweep refused LED and LongT5 outright, memory being a default column.
    # Now the other columns are swept and one note says why memory is left out; asking for memory
    # is still refused.  Parameters: transformers on the meta device (test_hf_config's REFERENCE
    # figures for these fixtures, counted there against the real classes).
    path = str(CONFIGS / f"{fixture}.json")
    code, out, err = run(capsys, "sweep", path, "--grid", "L=7,8")
    assert code == 0, err
    header, *rows = out.splitlines()
    assert header == "L,params,flops_forward,flops_training" and len(rows) == 2
    assert [r.split(",")[:2] for r in rows] == [["7", str(params)], ["8", str(params)]]
    notes = [line for line in err.splitlines() if "memory_bytes column left out" in line]
    assert len(notes) == 1 and reason in notes[0]
    code, out, err = run(capsys, "sweep", path, "--grid", "L=7", "--quantity", "params,memory")
    assert code == 2 and out == "" and err.count("\n") == 1 and reason in err


def test_a_config_json_reads_100000_layers_and_set_n_any_depth_to_2_53(capsys, tmp_path):
    # A new user's finding: config.json's layer limit (100,000) differs from --set N's (2**53).
    # They are two limits for two reasons: reading a config builds each layer's entry (layer_types
    # and the like, linear in the depth), while --set N resizes the closed form and builds none.
    # GPT-2 small per layer (config.json of gpt2, d 768, d_ff 3072): 4 d^2 + 4 d (attention, c_attn and
    # c_proj with biases) + 2 d d_ff + d_ff + d (mlp) + 4 d (two LayerNorms) = 7,087,872; the rest
    # (wte 50,257 x 768, wpe 1,024 x 768, ln_f 2 x 768) 39,385,344.
    d, ff = 768, 3072
    layer = 4 * d * d + 4 * d + 2 * d * ff + ff + d + 4 * d
    rest = 50257 * d + 1024 * d + 2 * d
    assert (layer, rest) == (7_087_872, 39_385_344) and rest + 12 * layer == 124_439_808  # the published 124M
    cfg = json.loads((CONFIGS / "gpt2.json").read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**cfg, "n_layer": 100_001}))
    assert_usage_error(
        *run(capsys, "params", str(path)), "n_layer is 100,001", "at most 100,000", "--set N=", "up to 2**53 layers"
    )
    path.write_text(json.dumps({**cfg, "n_layer": 100_000}))
    code, out, err = run(capsys, "params", str(path), "--format", "json")
    assert code == 0 and json.loads(out)["total"] == rest + 100_000 * layer, err
    for n in (100_001, 2**53):  # --set N on the 12-layer config: the closed form at any depth
        code, out, err = run(capsys, "params", str(CONFIGS / "gpt2.json"), "--set", f"N={n}", "--format", "json")
        assert code == 0 and json.loads(out)["total"] == rest + n * layer, err
    code, out, err = run(capsys, "params", "gpt2", "--set", f"N={2**53 + 1}")
    assert_usage_error(code, out, err, "the limit is 2**53")
    # a type whose reader builds a per-layer list (gemma2's layer_types) also takes --set N up to 2**53
    code, out, err = run(capsys, "params", str(CONFIGS / "gemma-2-9b.json"), "--set", f"N={2**53}")
    assert code == 0, err


# The activation class transformers builds into a gated FFN, and the kind that names it
# (Shazeer 2020: SwiGLU, GEGLU, ReGLU).
_GATED_KIND = {
    "SiLUActivation": "swiglu",
    "GELUActivation": "geglu",
    "NewGELUActivation": "geglu",
    "GELUTanh": "geglu",
    "ReLU": "reglu",
}


@pytest.mark.parametrize("act", ["silu", "gelu", "gelu_pytorch_tanh", "gelu_new", "relu"])
def test_a_gated_ffn_is_named_by_the_activation_transformers_builds(act):
    # A new user's finding: Zamba2's and T5's gated FFN said "geglu" for any activation but silu
    # (hidden_act relu builds ReLU: a ReGLU).  The kind now follows the activation module in the
    # model transformers builds (on the meta device): Zamba2MLP's act_fn, T5DenseGatedActDense's act.
    require("transformers")
    import torch
    import transformers

    from symtrans.catalog.hf_config import spec_from_config

    transformers.logging.set_verbosity_error()
    zamba2 = dict(
        hidden_size=16,
        num_attention_heads=2,
        num_key_value_heads=2,
        vocab_size=20,
        n_mamba_heads=2,
        mamba_d_state=4,
        num_hidden_layers=2,
        layers_block_type=["mamba", "hybrid"],
        intermediate_size=8,
        hidden_act=act,
    )
    with torch.device("meta"):
        model = transformers.Zamba2ForCausalLM(transformers.Zamba2Config(**zamba2))
    mlp = model.model.layers[1].shared_transformer.feed_forward
    assert mlp.gate_up_proj.out_features == 2 * 8  # gated: gate and up, d_ff each
    assert (
        spec_from_config({"model_type": "zamba2", **zamba2}, "zamba2")[0].ffn == _GATED_KIND[type(mlp.act_fn).__name__]
    )
    t5 = dict(d_model=8, d_kv=2, num_heads=2, d_ff=6, num_layers=1, vocab_size=10, feed_forward_proj=f"gated-{act}")
    with torch.device("meta"):
        model = transformers.T5ForConditionalGeneration(transformers.T5Config(**t5))
    dense = model.encoder.block[0].layer[1].DenseReluDense
    assert type(dense).__name__ == "T5DenseGatedActDense"
    assert spec_from_config({"model_type": "t5", **t5}, "t5")[0].ffn == _GATED_KIND[type(dense.act).__name__]


def test_a_gated_ffn_with_an_activation_no_kind_names_is_refused(tmp_path, capsys):
    path = tmp_path / "config.json"
    t5 = json.loads((CONFIGS / "t5-base.json").read_text())
    path.write_text(json.dumps({**t5, "feed_forward_proj": "gated-tanh"}))
    assert_usage_error(*run(capsys, "params", str(path)), 'feed_forward_proj "gated-tanh"\'s activation "tanh"')


def test_a_misspelt_duplicate_in_a_wrappers_vision_config_says_so(tmp_path, capsys):
    # catalog/sub_keys: llava's vision_config (CLIPVisionConfig) with both spellings
    cfg = json.loads((CONFIGS / "llava-1.5-7b.json").read_text())
    cfg["vision_config"] = {**cfg["vision_config"], "num_hidden_layers": 24, "num_hiden_layers": 24}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    code, out, err = run(capsys, "params", str(path))
    assert_usage_error(
        code, out, err, "vision_config.num_hiden_layers: unknown key, a misspelt duplicate of num_hidden_layers"
    )
    assert "default" not in err
