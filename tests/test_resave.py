"""Configs as transformers 5.x writes them (issue 21, item 4): every fixture config and the
audit base config of every supported model type, loaded by the installed transformers
(``AutoConfig.for_model``) and written back by its ``save_pretrained`` (config only), count
the same as before.  5.x writes ``rope_parameters``, ``dtype``, ``layer_types`` and, for a
window that is off, ``sliding_window: 0`` (Qwen2MoeConfig), none of which changes a parameter.

Oracles: the original fixture counts are the published / meta-device counts of
tests/test_crosscheck_hf.py and tests/test_reference_counts.py; for the small audit configs
the re-saved file is also built by transformers on the meta device and must match exactly.
"""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, require

require("transformers")
from hf_reference import T5_UNTIED_HEAD, UNLOADABLE, reference_total  # noqa: E402
from test_model_types import _cfg  # noqa: E402

from symtrans.catalog.hf_config import SUPPORTED, spec_from_config  # noqa: E402
from symtrans.engine.architectures import build  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402

CONFIGS = sorted((FIXTURES / "configs").glob("*.json"))


def _count(cfg: dict) -> int:
    spec, _ = spec_from_config(cfg, "resaved")
    return exact(build(spec).params, spec.values)


def _resaved(hf, cfg: dict, tmp_path) -> dict:
    """``cfg`` as the installed transformers writes it: AutoConfig, then save_pretrained."""
    config = hf.transformers.AutoConfig.for_model(**cfg)
    config.save_pretrained(tmp_path)
    return json.loads((tmp_path / "config.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_fixture_resaved_counts_the_same(hf, path, tmp_path):
    cfg = json.loads(path.read_text(encoding="utf-8"))
    if path.stem in UNLOADABLE:
        sub, key, value = UNLOADABLE[path.stem]
        with pytest.raises(Exception, match=key):
            _resaved(hf, cfg, tmp_path)
        fixed = json.loads(json.dumps(cfg))
        fixed[sub][key] = value
        assert _count(fixed) == _count(cfg)
        cfg = fixed
    saved = _resaved(hf, cfg, tmp_path)
    assert saved.get("transformers_version") == hf.version  # really written by the installed 5.x
    if cfg["model_type"] in T5_UNTIED_HEAD and cfg.get("tie_word_embeddings") is False:
        # MT5Config / T5Config / UMT5Config.__post_init__ force tie_word_embeddings to true, so the re-saved
        # file no longer says the head is untied (MT5Config keeps no trace; T5's scale_decoder_outputs is
        # about output scaling): it reads as the tied model, less the d_model x V head; symtrans notes it
        assert saved["tie_word_embeddings"] is True
        assert _count(saved) == _count(cfg) - cfg["d_model"] * cfg["vocab_size"]
        _, notes = spec_from_config(saved, "resaved")
        assert any("from_pretrained keeps it: add d_model x V" in n for n in notes)
        return
    assert _count(saved) == _count(cfg)


@pytest.mark.parametrize("model_type", SUPPORTED)
def test_every_type_resaved_counts_as_transformers_builds_it(hf, model_type, tmp_path):
    cfg = _cfg(model_type)
    saved = _resaved(hf, cfg, tmp_path)
    ours = _count(saved)
    assert ours == _count(cfg)
    model = hf.build(model_type, {k: v for k, v in saved.items() if k not in ("model_type", "architectures")})
    assert ours == reference_total(hf, model_type, saved, model)


def test_qwen2_moe_window_off_is_written_as_zero_and_read_as_no_window(hf, tmp_path):
    """The miss of issue 21: 5.x writes sliding_window 0 when use_sliding_window is false
    (Qwen2MoeConfig.__post_init__); it was refused as "must be a positive integer, not 0"."""
    saved = _resaved(hf, _cfg("qwen2_moe"), tmp_path)
    assert saved["sliding_window"] == 0 and saved["use_sliding_window"] is False
    spec, notes = spec_from_config(saved, "resaved")
    assert "w" not in dict(spec.sizes)
    assert any("sliding_window 0 read as no window" in n for n in notes)


def test_no_refusal_names_a_supported_type_as_unsupported():
    """Issue 21's stale message: gemma3 was refused as if gemma3_text were unsupported; it is now
    counted whole (tests/test_vision_siglip.py), and no refusal left names a supported type."""
    from symtrans.catalog.hf_config import _NOT_YET, ConfigError

    for mt in _NOT_YET:
        with pytest.raises(ConfigError) as e:
            spec_from_config({"model_type": mt}, "x")
        head = str(e.value).split("; supported model types:")[0]
        for supported in SUPPORTED:
            assert f"{supported} is not supported" not in head and f'"{supported}", is not' not in head, head
    spec, notes = spec_from_config({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text"}}, "x")
    assert spec.vision == "gemma3" and notes[0].startswith("counted: transformers Gemma3ForConditionalGeneration")
