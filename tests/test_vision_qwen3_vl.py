"""Qwen3-VL counted whole (issue 21): its vision model (tower, patch merger, DeepStack mergers)
beside the Qwen3-shaped language model, against transformers 5.x's Qwen3VLForConditionalGeneration
on the meta device.

Oracles: ``sum(p.numel() for p in model.parameters())`` of the class built on the meta device
(whole; ``model.model.language_model`` + ``lm_head`` unless tied, for the text-only figure) from
Qwen3-VL-4B-Instruct's published config.json (tests/fixtures/configs, source in SOURCES.md) and from
hypothesis draws of Qwen3VLVisionConfig's keys and the text keys; the published file's vision model
and language model are written out by hand below.
"""

from __future__ import annotations

import copy
import json

import pytest
from conftest import FIXTURES, require

require("hypothesis")
require("transformers")
from hf_reference import qwen3_vl_text  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_vision_mistral3 import _ours, _theirs  # noqa: E402  (total and text-only figures, ours and theirs)

from symtrans.catalog.hf_config import ConfigError, spec_from_config  # noqa: E402

PATH = FIXTURES / "configs" / "qwen3-vl-4b.json"


def _published() -> dict:
    return json.loads(PATH.read_text(encoding="utf-8"))


def test_qwen3_vl_4b_visual_written_out():
    """Qwen3-VL-4B's model.visual (d 1024, d_ff 4096, 24 blocks, patch 16, 2 frames, merge 2, out 2560):
    biased Conv3d 3*2*16*16*1024 + 1024, pos_embed 2304*1024, per block two LayerNorms 2*2048, fused
    qkv 1024 x 3072 + 3072, proj 1024^2 + 1024, fc1 1024 x 4096 + 4096, fc2 4096 x 1024 + 1024;
    merger LayerNorm 2*1024, fc1 4096 x 4096 + 4096, fc2 4096 x 2560 + 2560; three DeepStack mergers
    (layers 5, 11, 17), each the same maps after a LayerNorm of 4096 (2*4096)."""
    block = 2 * 2048 + (1024 * 3072 + 3072) + (1024**2 + 1024) + (1024 * 4096 + 4096) + (4096 * 1024 + 1024)
    maps = (4096 * 4096 + 4096) + (4096 * 2560 + 2560)
    visual = (3 * 2 * 16 * 16 * 1024 + 1024) + 2304 * 1024 + 24 * block + (2 * 1024 + maps) + 3 * (2 * 4096 + maps)
    assert visual == 415_347_712
    total, text = _ours(_published())
    assert total - text == visual


def test_qwen3_vl_4b_language_model_written_out():
    """The language model of Qwen3-VL-4B: 151,936 x 2560 tokens (lm_head tied), 36 layers of q 2560 x 4096,
    k and v 2560 x 1024, o 4096 x 2560, per-head q/k RMSNorms 2*128, SwiGLU 3*2560*9728, two RMSNorms
    2*2560; the final RMSNorm 2560."""
    layer = 2560 * 4096 + 2 * 2560 * 1024 + 4096 * 2560 + 2 * 128 + 3 * 2560 * 9728 + 2 * 2560
    assert _ours(_published())[1] == 151_936 * 2560 + 36 * layer + 2560 == 4_022_468_096


def test_qwen3_vl_4b_matches_transformers(hf):
    cfg = _published()
    assert _ours(cfg) == _theirs(hf, cfg) == (4_437_815_808, 4_022_468_096)


def tie_cases(base: dict):
    """(own, inner, cfg): ``base`` with the wrapper's and the text config's tie_word_embeddings each
    absent, false or true."""
    for own in (None, False, True):
        for inner in (None, False, True):
            cfg = copy.deepcopy(base)
            cfg.pop("tie_word_embeddings", None)
            cfg["text_config"].pop("tie_word_embeddings", None)
            if own is not None:
                cfg["tie_word_embeddings"] = own
            if inner is not None:
                cfg["text_config"]["tie_word_embeddings"] = inner
            yield own, inner, cfg


def check_cli_parts(capsys, path, total: int, text: int) -> None:
    """``params --part all|text|vision`` print the whole class, the language model and the rest; the
    JSON output's ``parts`` holds the three figures."""
    from symtrans.cli.main import main

    figures = {}
    for part in ("all", "text", "vision"):
        assert main(["params", str(path), "--part", part]) == 0
        figures[part] = capsys.readouterr().out.splitlines()[0]
    assert f"{total:,} parameters" in figures["all"]
    assert f"{text:,} parameters of the language model" in figures["text"]
    assert f"{total - text:,} parameters of the vision tower and projector" in figures["vision"]
    assert main(["params", str(path), "--format", "json"]) == 0
    parts = json.loads(capsys.readouterr().out)["parts"]
    assert parts == {"all": total, "text": text, "vision": total - text}


def test_tie_is_the_wrappers_flag_alone(hf):
    """Qwen3VLTextConfig has no tie_word_embeddings: the published text_config's true is ignored and
    the wrapper's own flag (default false) alone ties lm_head."""
    for own, inner, cfg in tie_cases(_published()):
        spec, _ = spec_from_config(cfg, "qwen3_vl")
        assert spec.tie_output is bool(own), (own, inner)
        assert _ours(cfg) == _theirs(hf, cfg), (own, inner)


def test_cli_part_text_vision_all(capsys):
    check_cli_parts(capsys, PATH, 4_437_815_808, 4_022_468_096)


@st.composite
def _qwen3_vl(draw) -> dict:
    heads = draw(st.integers(1, 3))
    vision = dict(
        depth=draw(st.integers(1, 2)),
        hidden_size=heads * 2 * draw(st.integers(1, 4)),
        num_heads=heads,
        intermediate_size=draw(st.integers(1, 12)),
        patch_size=draw(st.integers(1, 3)),
        temporal_patch_size=draw(st.integers(1, 2)),
        spatial_merge_size=draw(st.integers(1, 3)),
        in_channels=draw(st.integers(1, 3)),
        num_position_embeddings=draw(st.integers(1, 20)),
        deepstack_visual_indexes=draw(st.lists(st.integers(0, 3), max_size=3)),
    )
    if draw(st.booleans()):
        vision["out_hidden_size"] = draw(st.integers(1, 20))
    if draw(st.booleans()):
        vision["model_type"] = draw(st.sampled_from(["qwen3_vl_vision", "qwen3_vl"]))
    cfg = dict(model_type="qwen3_vl", vision_config=vision, text_config=qwen3_vl_text(draw))
    if draw(st.booleans()):
        cfg["tie_word_embeddings"] = draw(st.booleans())
    return cfg


# 50 examples under the CI profile (each builds a vision model: its 200 would cost ~60 s), 20 in dev.
@settings(max_examples=min(50, settings.default.max_examples))
@given(cfg=_qwen3_vl())
def test_random_qwen3_vl_match_transformers(hf, cfg):
    assert _ours(cfg) == _theirs(hf, cfg), cfg


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"model_type": "siglip_vision_model"}, "is not Qwen3-VL's vision model"),
        ({"patch_size": [16, 16]}, "vision_config.patch_size is a list"),
        ({"deepstack_visual_indexes": 3}, "deepstack_visual_indexes must be a list of integers"),
        ({"depth": 0}, "depth"),
    ],
)
def test_refusals_are_one_line(change, message):
    cfg = copy.deepcopy(_published())
    cfg["vision_config"].update(change)
    with pytest.raises(ConfigError) as e:
        spec_from_config(cfg, "qwen3_vl")
    assert message in str(e.value) and "\n" not in str(e.value)
