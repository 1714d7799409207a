"""Gemma 3 (multimodal) counted whole (issue 21): its SigLIP vision tower and projector beside
the gemma3_text language model, against transformers 5.x's Gemma3ForConditionalGeneration on
the meta device.

Oracles: ``sum(p.numel() for p in model.parameters())`` of the class built on the meta device
(whole; ``model.model.language_model`` + untied ``lm_head`` for the text-only figure) from
google/gemma-3-12b-it's published config.json (tests/fixtures/configs, source in SOURCES.md) and
from hypothesis draws of SiglipVisionConfig's keys; the SigLIP So400m/14 tower at 896 px is
written out by hand below.  The key audit of the tower changes every field of
SiglipVisionConfig in turn: transformers' count and symtrans's move alike, or neither does.
"""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, require

require("hypothesis")
require("transformers")
from hf_reference import SIGLIP_VISION, decoder_types, language_model_count  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from symtrans.catalog.hf_config import ConfigError, spec_from_config  # noqa: E402
from symtrans.catalog.models.vision import SIGLIP_VISION_KEYS, SIGLIP_VISION_NO_EFFECT  # noqa: E402
from symtrans.engine.architectures import build  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402
from symtrans.engine.vision import vision_params  # noqa: E402

PATH = FIXTURES / "configs" / "gemma-3-12b-it.json"
TEXT = dict(
    model_type="gemma3_text",
    hidden_size=16,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=4,
    num_hidden_layers=1,
    intermediate_size=10,
    vocab_size=23,
)


def _ours(cfg: dict) -> tuple[int, int]:
    """(total, text-only) of symtrans."""
    spec, _ = spec_from_config(cfg, "gemma3")
    cost = build(spec)
    total = exact(cost.params, spec.values)
    return total, total - exact(vision_params(cost), spec.values)


def _theirs(hf, cfg: dict) -> tuple[int, int]:
    model = hf.build(cfg["model_type"], {k: v for k, v in cfg.items() if k != "model_type"})
    return hf.count(model), language_model_count(hf, model)


def test_siglip_so400m_896_written_out():
    """SigLIP So400m/14 at 896 px (Gemma 3's tower: d 1152, d_ff 4304, 27 layers, 64^2 patches), by
    hand: biased patch conv 3*14*14*1152 + 1152, 4096 positions, post-LayerNorm 2*1152, per layer
    4*(1152^2 + 1152) + (1152*4304 + 4304) + (4304*1152 + 1152) + 2*2*1152; no pooling head.
    Projector: RMSNorm 1152 + a bias-free 1152 x 3840 map (gemma-3-12b's d_model)."""
    layer = 4 * (1152**2 + 1152) + (1152 * 4304 + 4304) + (4304 * 1152 + 1152) + 2 * 2304
    tower = 3 * 14 * 14 * 1152 + 1152 + 4096 * 1152 + 2304 + 27 * layer
    projector = 1152 + 1152 * 3840
    assert (layer, tower, projector) == (15_239_504, 416_866_032, 4_424_832)
    total, text = _ours(json.loads(PATH.read_text(encoding="utf-8")))
    assert total - text == tower + projector


def test_gemma_3_12b_it_whole_and_text_only(hf):
    cfg = json.loads(PATH.read_text(encoding="utf-8"))
    assert _ours(cfg) == _theirs(hf, cfg) == (12_187_325_040, 11_766_034_176)


@st.composite
def _siglip(draw) -> dict:
    h = draw(st.integers(1, 3))
    patch = draw(st.integers(1, 4))
    vision = dict(
        hidden_size=h * draw(st.integers(1, 5)),
        num_attention_heads=h,
        intermediate_size=draw(st.integers(1, 12)),
        num_hidden_layers=draw(st.integers(1, 2)),
        patch_size=patch,
        image_size=patch * draw(st.integers(1, 4)) + draw(st.integers(0, patch - 1)),
    )
    for key, values in (("num_channels", st.integers(1, 4)), ("vision_use_head", st.booleans())):
        if draw(st.booleans()):
            vision[key] = draw(values)
    if draw(st.booleans()):
        vision["model_type"] = "siglip_vision_model"
    text = draw(decoder_types("gemma3_text"))
    cfg = dict(model_type="gemma3", vision_config=vision, text_config=text, mm_tokens_per_image=1)
    if draw(st.booleans()):
        cfg["tie_word_embeddings"] = draw(st.booleans())
    return cfg


# 50 examples under the CI profile (its 200 would cost ~60 s), 20 in dev.
@settings(max_examples=min(50, settings.default.max_examples))
@given(cfg=_siglip())
def test_random_gemma3_towers_match_transformers(hf, cfg):
    assert _ours(cfg) == _theirs(hf, cfg), cfg


def _count(hf, cfg: dict):
    try:
        theirs = _theirs(hf, cfg)
    except Exception as e:  # any refusal of transformers (config validation, torch's asserts)
        theirs = e
    try:
        ours = _ours(cfg)
    except ConfigError as e:
        ours = e
    return theirs, ours


# A second value of every SiglipVisionConfig field (the base is hf_reference.SIGLIP_VISION).
_MUTATIONS = {
    "hidden_size": [12, 7],  # 7: not a multiple of the 2 heads, which SiglipAttention refuses
    "intermediate_size": [9],
    "num_hidden_layers": [2],
    "num_attention_heads": [4, 3],
    "num_channels": [1],
    "image_size": [12, 9],  # 9 px: still 2 x 2 patches of 4
    "patch_size": [2, 8],
    "vision_use_head": [True],
    "hidden_act": ["gelu"],
    "layer_norm_eps": [1e-5],
    "attention_dropout": [0.1],
}


@pytest.mark.parametrize("key", sorted(SIGLIP_VISION_KEYS))
def test_siglip_vision_key_audit(hf, key):
    """Each key of SiglipVisionConfig changed in turn: both refuse, or both move by the same
    amount, or neither moves and the key is declared without parameter effect."""
    base = dict(model_type="gemma3", text_config=TEXT, vision_config=SIGLIP_VISION, mm_tokens_per_image=1)
    theirs0, ours0 = _count(hf, base)
    assert theirs0 == ours0
    moved_any = False
    for value in _MUTATIONS[key]:
        cfg = dict(base, vision_config=dict(SIGLIP_VISION, **{key: value}))
        theirs, ours = _count(hf, cfg)
        if isinstance(theirs, Exception):
            assert isinstance(ours, ConfigError), (key, value, theirs)
            moved_any = True
            continue
        assert not isinstance(ours, Exception), (key, value, ours)
        assert ours == theirs, (key, value)
        moved_any = moved_any or theirs != theirs0
    assert moved_any == (key not in SIGLIP_VISION_NO_EFFECT), key


def test_siglip_vision_keys_are_the_class_fields(hf):
    import dataclasses

    cls = hf.transformers.SiglipVisionConfig
    base = {f.name for f in dataclasses.fields(hf.transformers.PreTrainedConfig)}
    assert {f.name for f in dataclasses.fields(cls)} - base == SIGLIP_VISION_KEYS


@pytest.mark.parametrize(
    ("vision", "words"),
    [
        ({"model_type": "clip_vision_model"}, ("clip_vision_model", "SigLIP vision tower")),
        (dict(SIGLIP_VISION, image_size=[8, 16]), ("image_size is a list",)),
    ],
)
def test_other_towers_are_refused_naming_the_part(vision, words):
    cfg = dict(model_type="gemma3", text_config=TEXT, vision_config=vision)
    with pytest.raises(ConfigError) as e:
        spec_from_config(cfg, "x")
    assert "\n" not in str(e.value) and all(w in str(e.value) for w in words)


def test_cli_part_text_vision_all(capsys):
    from symtrans.cli.main import main

    assert main(["params", str(PATH), "--format", "json"]) == 0
    parts = json.loads(capsys.readouterr().out)["parts"]
    assert parts == {"all": 12_187_325_040, "text": 11_766_034_176, "vision": 421_290_864}
    assert main(["params", str(PATH), "--part", "text"]) == 0
    assert "11,766,034,176 parameters of the language model" in capsys.readouterr().out
