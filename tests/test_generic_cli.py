"""The generic path through the CLI: refusals in one line with nothing imported from the
config's folder, ``counted_class`` in every ``params`` JSON, and the disk cache.

Oracles: transformers' own meta count (built here) and the class named in
hf_config.CLASSES / the rule of issue 22 written out in tests/test_generic.py.
"""

from __future__ import annotations

import json

import pytest
from conftest import require


def run(capsys, *argv):
    from symtrans.cli.main import main

    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _marker_folder(tmp_path, cfg: dict):
    """A config folder with a Python file that writes a marker when imported."""
    marker = tmp_path / "IMPORTED"
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    code = f"open({str(marker)!r}, 'w').write('imported')\n"
    for name in ("configuration_x.py", "modeling_x.py", "__init__.py"):
        (tmp_path / name).write_text(code)
    return marker


def test_auto_map_with_an_unknown_type_is_refused_and_nothing_is_imported(tmp_path, capsys, monkeypatch):
    require("transformers")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    marker = _marker_folder(
        tmp_path, {"model_type": "my_secret_arch", "auto_map": {"AutoConfig": "configuration_x.XConfig"}}
    )
    code, out, err = run(capsys, "params", str(tmp_path))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "auto_map" in err and "never runs remote code" in err
    assert not marker.exists()


def test_a_type_transformers_lacks_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    require("transformers")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    marker = _marker_folder(tmp_path, {"model_type": "not_a_transformers_type"})
    code, out, err = run(capsys, "params", str(tmp_path))
    assert code == 2 and err.count("\n") == 1 and "is not supported" in err
    assert not marker.exists()


def test_without_transformers_the_refusal_names_the_extra(tmp_path, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "transformers" else real(n, *a))
    # a type transformers has and symtrans has no record of (qwen3_next, then olmo3, used here first, gained one)
    from symtrans.catalog.hf_config import SUPPORTED

    assert "bitnet" not in SUPPORTED, "bitnet has a record now: pick another type without one"
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bitnet"}))
    code, _, err = run(capsys, "params", str(tmp_path))
    assert code == 2 and err.count("\n") == 1 and "pip install 'symtrans[transformers]'" in err


def test_generic_params_json_text_and_cache(tmp_path, capsys, monkeypatch):
    torch = require("torch")
    transformers = require("transformers")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("SYMTRANS_NO_GENERATED", raising=False)
    cfg = {
        "model_type": "bitnet",
        "num_hidden_layers": 2,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 1000,
    }
    folder = tmp_path / "tiny-bitnet"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(cfg))
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    with torch.device("meta"):
        model = transformers.BitNetForCausalLM._from_config(
            CONFIG_MAPPING["bitnet"](**{k: v for k, v in cfg.items() if k != "model_type"})
        )
    expected = sum(p.numel() for p in model.parameters())
    code, out, _ = run(capsys, "params", str(folder), "--format", "json")
    assert code == 0
    r = json.loads(out)
    assert r["total"] == expected and r["counted_class"] == "BitNetForCausalLM"
    assert any("counted from transformers" in n and "probes" in n for n in r["notes"])
    assert list((tmp_path / "cache").rglob("*.json"))  # stored for next time
    code, out2, _ = run(capsys, "params", str(folder), "--format", "json")
    assert json.loads(out2) == r
    code, text, _ = run(capsys, "params", str(folder))
    assert f"{expected:,} parameters" in text and "counted class: BitNetForCausalLM" in text
    code, _, err = run(capsys, "flops", str(folder))
    assert code == 2 and err.count("\n") == 1 and "params only" in err


@pytest.mark.parametrize("preset,cls", [("llama-2-7b", "LlamaForCausalLM"), ("gpt2", "GPT2LMHeadModel")])
def test_counted_class_for_curated_counts(capsys, preset, cls):
    code, out, _ = run(capsys, "params", preset, "--format", "json")
    assert code == 0 and json.loads(out)["counted_class"] == cls


def test_counted_class_of_a_curated_config(capsys, config_dir):
    from symtrans.catalog.hf_config import CLASSES

    code, out, _ = run(capsys, "params", str(config_dir / "mistral-7b-v0.1.json"), "--format", "json")
    assert code == 0 and json.loads(out)["counted_class"] == CLASSES["mistral"][1]


def test_python_api_counts_a_generic_config(tmp_path):
    require("transformers")
    import symtrans

    (tmp_path / "config.json").write_text(
        json.dumps(
            {
                "model_type": "bitnet",
                "num_hidden_layers": 2,
                "hidden_size": 64,
                "intermediate_size": 128,
                "num_attention_heads": 4,
                "num_key_value_heads": 2,
                "vocab_size": 1000,
            }
        )
    )
    m = symtrans.model(str(tmp_path))
    # BitNet: embeddings and untied head V*d (2 * 1000 * 64), per layer q/k/v/o (4 * 64 * 64 with
    # h_kv*d_k = 32 for k and v: 64*64*2 + 64*32*2), GLU 3 * 64 * 128, attn_sub_norm 64 and
    # ffn_sub_norm 128, two norms 2 * 64; final norm 64 (arithmetic written out; transformers' own
    # count in the test above agrees).
    per_layer = 64 * 64 * 2 + 64 * 32 * 2 + 3 * 64 * 128 + 64 + 128 + 2 * 64
    assert m.params == 2 * 1000 * 64 + 2 * per_layer + 64
    assert m.subs(m.closed_form) == m.params


@pytest.mark.parametrize("part", ["text", "vision"])
def test_a_part_of_a_generic_model_is_refused_not_printed_as_the_whole(tmp_path, capsys, monkeypatch, part):
    # A new user's finding: `params CONFIG --part vision` of a type counted from transformers'
    # modeling code printed the whole class's total (Gemma 4 31B: 31,273,086,512, of which the
    # vision tower is 575,741,232) under the part's name.  The generic count is one whole class.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    from symtrans.catalog.hf_config import SUPPORTED

    assert "xlstm" not in SUPPORTED, "xlstm has a record now: pick another type without one"
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "xlstm"}))
    code, out, err = run(capsys, "params", str(tmp_path), "--part", part)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"--part {part}" in err and "use --part all" in err


def test_auto_map_on_a_curated_type_is_noted(tmp_path, capsys):
    # A new user's finding: llama-2-7b's config with an auto_map (remote code on the Hub) was
    # counted as the stock LlamaForCausalLM without a word.  The count stays transformers' own
    # class (6,738,415,616 on meta, tests/test_crosscheck_hf.py); a note says remote code was not run.
    from pathlib import Path

    cfg = json.loads((Path(__file__).parent / "fixtures" / "configs" / "llama-2-7b.json").read_text())
    cfg["auto_map"] = {"AutoConfig": "configuration_x.XConfig", "AutoModelForCausalLM": "modeling_x.X"}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    code, out, _ = run(capsys, "params", str(tmp_path), "--format", "json")
    r = json.loads(out)
    assert code == 0 and r["total"] == 6_738_415_616
    assert any("auto_map names remote code" in n and "LlamaForCausalLM" in n for n in r["notes"])


def test_a_typo_of_a_counted_key_is_refused_and_an_unknown_key_noted(tmp_path, capsys, monkeypatch):
    # A new user's finding: the generic path passed "num_hiden_layers": 2 to BitNetConfig, which
    # keeps it as an extra attribute and builds its default 30 layers; the count was silently
    # the default's.  As on the curated path (hf_config.unknown_keys), a near miss of a key the
    # count depends on is refused in one line naming both keys; any other unknown key is noted.
    require("transformers")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cfg = {
        "model_type": "bitnet",
        "num_hiden_layers": 2,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 1000,
    }
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    code, out, err = run(capsys, "params", str(tmp_path))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "num_hiden_layers (did you mean num_hidden_layers?)" in err and "BitNetConfig" in err
    cfg["num_hidden_layers"] = cfg.pop("num_hiden_layers")
    cfg["my_training_note"] = 7  # no key of BitNetConfig resembles it
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    code, out, _ = run(capsys, "params", str(tmp_path), "--format", "json")
    assert code == 0
    r = json.loads(out)
    # the same arithmetic as test_python_api_counts_a_generic_config: 2 layers of BitNet at d 64
    per_layer = 64 * 64 * 2 + 64 * 32 * 2 + 3 * 64 * 128 + 64 + 128 + 2 * 64
    assert r["total"] == 2 * 1000 * 64 + 2 * per_layer + 64
    assert any("my_training_note not known to BitNetConfig" in n and "ignored" in n for n in r["notes"])
