"""Mistral 3 counted whole (issue 21): its Pixtral vision tower and projector beside the
language model, against transformers 5.x's Mistral3ForConditionalGeneration on the meta device.

Oracles: ``sum(p.numel() for p in model.parameters())`` of the class built on the meta device
(whole; ``model.model.language_model`` + ``lm_head`` unless tied, for the text-only figure) from
Mistral-Small-3.1-24B's published config.json (tests/fixtures/configs, source in SOURCES.md)
and from hypothesis draws of PixtralVisionConfig's keys and the projector's; the tower and
projector of the published file are written out by hand below.  The key audit of the tower
changes every field of PixtralVisionConfig in turn: both counts move alike, or neither does.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from conftest import FIXTURES, require

require("hypothesis")
require("transformers")
from hf_reference import PIXTRAL_VISION, language_model_count, llama_like  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from symtrans.catalog.hf_config import ConfigError, spec_from_config  # noqa: E402
from symtrans.engine.architectures import build  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402
from symtrans.engine.vision import vision_params  # noqa: E402

PATH = FIXTURES / "configs" / "mistral-small-3.1-24b.json"
TEXT = dict(model_type="mistral", hidden_size=16, num_attention_heads=4, num_key_value_heads=2, vocab_size=23)
TEXT.update(num_hidden_layers=1, intermediate_size=10)


def _ours(cfg: dict) -> tuple[int, int]:
    spec, _ = spec_from_config(cfg, "mistral3")
    cost = build(spec)
    total = exact(cost.params, spec.values)
    return total, total - exact(vision_params(cost), spec.values)


def _theirs(hf, cfg: dict) -> tuple[int, int]:
    model = hf.build(cfg["model_type"], {k: v for k, v in cfg.items() if k != "model_type"})
    return hf.count(model), language_model_count(hf, model)


def test_pixtral_tower_and_projector_written_out():
    """Mistral-Small-3.1's Pixtral tower (d 1024, d_ff 4096, 24 layers, patch 14): bias-free conv
    3*14*14*1024, ln_pre 1024, per layer two RMSNorms 2*1024 + q, k, v, o 4*1024^2 + gated MLP
    3*1024*4096.  Projector: RMSNorm 1024, patch merger (2*2*1024) x 1024, linear_1 1024 x 5120,
    linear_2 5120 x 5120 (multimodal_projector_bias false)."""
    layer = 2 * 1024 + 4 * 1024**2 + 3 * 1024 * 4096
    tower = 3 * 14 * 14 * 1024 + 1024 + 24 * layer
    projector = 1024 + 4 * 1024 * 1024 + 1024 * 5120 + 5120 * 5120
    assert (tower, projector) == (403_305_472, 35_652_608)
    total, text = _ours(json.loads(PATH.read_text(encoding="utf-8")))
    assert total - text == tower + projector


def test_mistral_small_3_1_whole_and_text_only(hf):
    """transformers 5.24 ties lm_head for this file (Mistral3Config's tie_word_embeddings defaults
    to true and the file gives none): 23,340,272,640, the checkpoint's 24,011,361,280 less its
    separate 131072 x 5120 lm_head."""
    cfg = json.loads(PATH.read_text(encoding="utf-8"))
    assert _ours(cfg) == _theirs(hf, cfg) == (23_340_272_640, 22_901_314_560)
    assert 23_340_272_640 + 131072 * 5120 == 24_011_361_280


@st.composite
def _pixtral(draw) -> dict:
    heads = draw(st.integers(1, 3))
    vision = dict(
        # head widths transformers builds (an odd width above 4 is refused: tested below), with a remainder
        hidden_size=heads * draw(st.sampled_from([1, 2, 3, 4, 6])) + draw(st.integers(0, heads - 1)),
        num_attention_heads=heads,
        intermediate_size=draw(st.integers(1, 12)),
        num_hidden_layers=draw(st.integers(1, 2)),
        patch_size=draw(st.integers(1, 4)),
    )
    for key, values in (("num_channels", st.integers(1, 4)), ("model_type", st.just("pixtral"))):
        if draw(st.booleans()):
            vision[key] = draw(values)
    text = draw(llama_like(draw(st.sampled_from(["mistral", "llama", "qwen2"]))))
    cfg = dict(model_type="mistral3", vision_config=vision, text_config=text)
    for key, values in (
        ("tie_word_embeddings", st.booleans()),
        ("spatial_merge_size", st.integers(1, 3)),
        ("multimodal_projector_bias", st.booleans()),
        ("vision_feature_layer", st.sampled_from([-1, -2, [-2, -1], [-3, -2, -1]])),
    ):
        if draw(st.booleans()):
            cfg[key] = draw(values)
    return cfg


# 50 examples under the CI profile (its 200 would cost ~60 s), 20 in dev.
@settings(max_examples=min(50, settings.default.max_examples))
@given(cfg=_pixtral())
def test_random_mistral3_towers_match_transformers(hf, cfg):
    assert _ours(cfg) == _theirs(hf, cfg), cfg


def _count(hf, cfg: dict):
    try:
        theirs = _theirs(hf, cfg)
    except Exception as e:  # any refusal of transformers
        theirs = e
    try:
        ours = _ours(cfg)
    except ConfigError as e:
        ours = e
    return theirs, ours


# A second value of every PixtralVisionConfig field, and whether it moves the count.
_MUTATIONS = {
    "hidden_size": ([12], True),
    "intermediate_size": ([9], True),
    "num_hidden_layers": ([2], True),
    "num_channels": ([1], True),
    "patch_size": ([2], True),
    "num_attention_heads": ([4], False),  # q, k, v, o are d x d whatever the heads
    "image_size": ([32], False),  # 2-D rotary positions: no table
    "hidden_act": (["silu"], False),
    "attention_dropout": ([0.1], False),
    "rope_parameters": ([{"rope_type": "default", "rope_theta": 20000.0}], False),
    "initializer_range": ([0.5], False),
    "head_dim": ([2], False),  # PixtralVisionConfig recomputes it as hidden_size // heads
}


def test_pixtral_keys_are_the_class_fields(hf):
    cls = hf.transformers.PixtralVisionConfig
    base = {f.name for f in dataclasses.fields(hf.transformers.PreTrainedConfig)}
    assert {f.name for f in dataclasses.fields(cls)} - base <= set(_MUTATIONS)


@pytest.mark.parametrize("key", sorted(_MUTATIONS))
def test_pixtral_vision_key_audit(hf, key):
    base = dict(model_type="mistral3", text_config=TEXT, vision_config=PIXTRAL_VISION)
    theirs0, ours0 = _count(hf, base)
    assert theirs0 == ours0
    values, moves = _MUTATIONS[key]
    for value in values:
        theirs, ours = _count(hf, dict(base, vision_config=dict(PIXTRAL_VISION, **{key: value})))
        assert not isinstance(theirs, Exception) and ours == theirs, (key, value, theirs, ours)
        assert (theirs != theirs0) == moves, key


@pytest.mark.parametrize(("hidden", "heads"), [(5, 1), (2, 4), (14, 2), (6, 4)])
def test_pixtral_head_width_refused_as_transformers_refuses(hf, hidden, heads):
    """PixtralVisionConfig: head_dim = hidden // heads; transformers refuses 0 (a division by
    zero in the rotary table) and an odd width above 4 (RoPE validation); 1 and 3 build."""
    cfg = dict(model_type="mistral3", text_config=TEXT, vision_config=dict(PIXTRAL_VISION, hidden_size=hidden))
    cfg["vision_config"]["num_attention_heads"] = heads
    theirs, ours = _count(hf, cfg)
    assert isinstance(theirs, Exception) == isinstance(ours, ConfigError), (theirs, ours)
    if not isinstance(theirs, Exception):
        assert ours == theirs


def test_other_towers_are_refused_naming_the_part():
    cfg = dict(model_type="mistral3", text_config=TEXT, vision_config={"model_type": "siglip_vision_model"})
    with pytest.raises(ConfigError) as e:
        spec_from_config(cfg, "x")
    assert "siglip_vision_model" in str(e.value) and "Pixtral" in str(e.value) and "\n" not in str(e.value)
