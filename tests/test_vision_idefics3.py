"""Idefics3 and SmolVLM counted whole (issue 21): a SigLIP-shaped vision tower without head and
the pixel-shuffle connector (scale_factor s: s x s patches stacked, one bias-free map into the
text width) beside the language model, against transformers 5.x's
Idefics3ForConditionalGeneration and SmolVLMForConditionalGeneration on the meta device.

Oracles: ``sum(p.numel() for p in model.parameters())`` of the class built on the meta device
(whole; ``model.model.text_model`` + ``lm_head`` unless tied, for the text-only figure) from two
published config.json files (HuggingFaceTB/SmolVLM-256M-Instruct, model_type idefics3, and
HuggingFaceTB/SmolVLM2-500M-Video-Instruct, model_type smolvlm; tests/fixtures/configs, sources in
SOURCES.md) and from hypothesis draws of Idefics3VisionConfig's keys and scale_factor; the
tower, connector and text model of SmolVLM-256M are written out by hand below.  The key audit
of the tower changes every field of Idefics3VisionConfig in turn.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from conftest import FIXTURES, require

require("hypothesis")
require("transformers")
from hf_reference import IDEFICS3_VISION, llama_like  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from vision_common import both, ours, square_vit, theirs  # noqa: E402

from symtrans.catalog.hf_config import ConfigError, spec_from_config  # noqa: E402
from symtrans.catalog.models.vision import IDEFICS3_VISION_KEYS, IDEFICS3_VISION_NO_EFFECT  # noqa: E402

SMOLVLM_256M = FIXTURES / "configs" / "smolvlm-256m-instruct.json"
SMOLVLM2_500M = FIXTURES / "configs" / "smolvlm2-500m-video-instruct.json"
TEXT = dict(model_type="llama", hidden_size=16, num_attention_heads=4, num_key_value_heads=2, vocab_size=23)
TEXT.update(num_hidden_layers=1, intermediate_size=10)


def _read(path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_smolvlm_256m_written_out():
    """SigLIP base/16 at 512 px (d 768, d_ff 3072, 12 layers, 32^2 patches), by hand: biased patch
    conv 3*16*16*768 + 768, 1024 positions, post-LayerNorm 2*768, per layer 4*(768^2 + 768) +
    (768*3072 + 3072) + (3072*768 + 768) + 2*2*768; no head.  Connector (scale_factor 4): one
    bias-free (4*4*768) x 576 map.  Text: SmolLM2-135M-shaped Llama (d 576, 30 layers, 9 heads of
    64, 3 KV heads, d_ff 1536, 49,280 rows, untied): per layer q, o 576^2 each, k, v 576 x 192
    each, MLP 3*576*1536, two RMSNorms; embedding, final norm, lm_head."""
    layer = 4 * (768**2 + 768) + (768 * 3072 + 3072) + (3072 * 768 + 768) + 4 * 768
    tower = 3 * 16 * 16 * 768 + 768 + 1024 * 768 + 2 * 768 + 12 * layer
    connector = 16 * 768 * 576
    text_layer = 2 * 576**2 + 2 * 576 * 192 + 3 * 576 * 1536 + 2 * 576
    text = 2 * 49_280 * 576 + 30 * text_layer + 576
    assert (tower, connector, text) == (86_433_024, 7_077_888, 162_974_016)
    assert ours(_read(SMOLVLM_256M)) == (tower + connector + text, text)


@pytest.mark.parametrize(
    ("path", "expected"),
    [(SMOLVLM_256M, (256_484_928, 162_974_016)), (SMOLVLM2_500M, (507_482_304, 409_252_800))],
    ids=["idefics3-smolvlm-256m", "smolvlm-smolvlm2-500m"],
)
def test_published_whole_and_text_only(hf, path, expected):
    cfg = _read(path)
    assert ours(cfg) == theirs(hf, cfg) == expected


@st.composite
def _towers(draw) -> dict:
    vision = draw(square_vit())
    mt = draw(st.sampled_from(["idefics3", "smolvlm"]))
    if draw(st.booleans()):
        vision["model_type"] = draw(st.sampled_from([f"{mt}_vision", mt]))
    text = draw(llama_like(draw(st.sampled_from(["llama", "mistral", "qwen2"]))))
    cfg = dict(model_type=mt, vision_config=vision, text_config=text)
    for key, values in (("scale_factor", st.integers(1, 4)), ("tie_word_embeddings", st.booleans())):
        if draw(st.booleans()):
            cfg[key] = draw(values)
    return cfg


# 50 examples under the CI profile (each builds a tower), 20 in dev.
@settings(max_examples=min(50, settings.default.max_examples))
@given(cfg=_towers())
def test_random_idefics3_towers_match_transformers(hf, cfg):
    assert ours(cfg) == theirs(hf, cfg), cfg


# A second value of every Idefics3VisionConfig field (the base is hf_reference.IDEFICS3_VISION).
_MUTATIONS = {
    "hidden_size": [12, 7],  # 7: not a multiple of the 2 heads, which Idefics3VisionAttention refuses
    "intermediate_size": [9],
    "num_hidden_layers": [2],
    "num_attention_heads": [4, 3],
    "num_channels": [1],
    "image_size": [12, 9],  # 9 px: still 2 x 2 patches of 4
    "patch_size": [2, 8],
    "hidden_act": ["gelu"],
    "layer_norm_eps": [1e-5],
    "attention_dropout": [0.1],
    "initializer_range": [0.5],
}


@pytest.mark.parametrize("key", sorted(IDEFICS3_VISION_KEYS))
def test_idefics3_vision_key_audit(hf, key):
    """Each key of Idefics3VisionConfig changed in turn: both refuse, or both move by the same
    amount, or neither moves and the key is declared without parameter effect."""
    base = dict(model_type="idefics3", text_config=TEXT, vision_config=IDEFICS3_VISION)
    theirs0, ours0 = both(hf, base)
    assert theirs0 == ours0
    moved_any = False
    for value in _MUTATIONS[key]:
        cfg = dict(base, vision_config=dict(IDEFICS3_VISION, **{key: value}))
        theirs, ours = both(hf, cfg)
        if isinstance(theirs, Exception):
            assert isinstance(ours, ConfigError), (key, value, theirs)
            moved_any = True
            continue
        assert not isinstance(ours, Exception), (key, value, ours)
        assert ours == theirs, (key, value)
        moved_any = moved_any or theirs != theirs0
    assert moved_any == (key not in IDEFICS3_VISION_NO_EFFECT), key


@pytest.mark.parametrize("cls", ["Idefics3VisionConfig", "SmolVLMVisionConfig"])
def test_vision_keys_are_the_class_fields(hf, cls):
    base = {f.name for f in dataclasses.fields(hf.transformers.PreTrainedConfig)}
    assert {f.name for f in dataclasses.fields(getattr(hf.transformers, cls))} - base == IDEFICS3_VISION_KEYS


@pytest.mark.parametrize(
    ("cfg", "words"),
    [
        (dict(text_config=dict(TEXT, model_type="gpt2")), ("gpt2", "inside idefics3")),
        (
            dict(vision_config=dict(IDEFICS3_VISION, model_type="siglip_vision_model")),
            ("siglip_vision_model", "inside idefics3", "SigLIP-shaped tower"),
        ),
        (dict(vision_config=dict(IDEFICS3_VISION, patch_size=[4, 4])), ("patch_size is a list",)),
        (dict(scale_factor=0), ("scale_factor",)),
    ],
)
def test_other_parts_are_refused_naming_the_part(cfg, words):
    full = {**dict(model_type="idefics3", text_config=TEXT, vision_config=IDEFICS3_VISION), **cfg}
    with pytest.raises(ConfigError) as e:
        spec_from_config(full, "x")
    assert "\n" not in str(e.value) and all(w in str(e.value) for w in words), str(e.value)


def test_cli_part_text_vision_all(capsys):
    from symtrans.cli.main import main

    assert main(["params", str(SMOLVLM2_500M), "--format", "json"]) == 0
    parts = json.loads(capsys.readouterr().out)["parts"]
    assert parts == {"all": 507_482_304, "text": 409_252_800, "vision": 86_433_024 + 16 * 768 * 960}
    assert main(["params", str(SMOLVLM2_500M), "--part", "text"]) == 0
    assert "409,252,800 parameters of the language model" in capsys.readouterr().out
