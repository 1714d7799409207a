"""Llama 4 counted whole (issue 21): its vision model (a CLIP-like ViT with a pixel-shuffle adapter) and
multi-modal projector beside its language model, a whole Llama4ForCausalLM, against transformers 5.x's
Llama4ForConditionalGeneration on the meta device.

Oracles: ``sum(p.numel() for p in model.parameters())`` of the class built on the meta device (whole;
``model.language_model`` for the text-only figure) from Llama-4-Scout-17B-16E's published configuration
(tests/fixtures/configs, source in SOURCES.md) and from hypothesis draws of Llama4VisionConfig's keys
and the text keys; the published file's vision model and projector are written out by hand below.
"""

from __future__ import annotations

import copy
import json

import pytest
from conftest import FIXTURES, require

require("hypothesis")
require("transformers")
from hf_reference import llama4_text  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_vision_mistral3 import _ours, _theirs  # noqa: E402  (total and text-only figures, ours and theirs)
from test_vision_qwen3_vl import check_cli_parts, tie_cases  # noqa: E402

from symtrans.catalog.hf_config import ConfigError, spec_from_config  # noqa: E402

PATH = FIXTURES / "configs" / "llama-4-scout-17b-16e.json"


def _published() -> dict:
    return json.loads(PATH.read_text(encoding="utf-8"))


def _buildable(cfg: dict) -> dict:
    """The published file as transformers 5.24 takes it: Meta wrote attn_temperature_tuning 4, which
    4.x read as true and 5.24's strict Llama4TextConfig refuses (it wants a bool); it sets a scale of
    the attention scores, no weight (symtrans counts the file as it is)."""
    cfg = copy.deepcopy(cfg)
    cfg["text_config"]["attn_temperature_tuning"] = True
    return cfg


def test_llama4_scout_vision_model_and_projector_written_out():
    """Scout's vision_model (d 1408, d_ff 5632, 34 layers, 336 px tiles of 14 px patches): bias-free
    unfold map 3*14*14 x 1408, class token 1408, positions (24^2 + 1) x 1408, layernorm_pre and
    layernorm_post 2*2*1408; per layer q, k, v, o 4*(1408^2 + 1408), fc1 1408 x 5632 + 5632, fc2
    5632 x 1408 + 1408, two LayerNorms 2*2*1408; the adapter's bias-free fc1 5632 x 4096 and fc2
    4096 x 4096.  The projector: bias-free 4096 x 5120."""
    layer = 4 * (1408**2 + 1408) + (1408 * 5632 + 5632) + (5632 * 1408 + 1408) + 4 * 1408
    vision = 3 * 14 * 14 * 1408 + 1408 + 577 * 1408 + 4 * 1408 + 34 * layer + 5632 * 4096 + 4096 * 4096
    projector = 4096 * 5120
    assert (vision, projector) == (850_960_896, 20_971_520)
    total, text = _ours(_published())
    assert total - text == vision + projector


def test_llama4_scout_matches_transformers(hf):
    cfg = _published()
    with pytest.raises(Exception, match="attn_temperature_tuning"):  # the file as Meta wrote it
        hf.build("llama4", {k: v for k, v in cfg.items() if k != "model_type"})
    assert _ours(cfg) == _ours(_buildable(cfg)) == _theirs(hf, _buildable(cfg))
    assert _ours(cfg) == (108_641_793_536, 107_769_861_120)


def test_tie_is_the_text_configs_flag_alone(hf):
    """Llama4ForConditionalGeneration's language_model is a Llama4ForCausalLM built from text_config,
    which ties its lm_head by text_config.tie_word_embeddings; the wrapper's own flag is never read."""
    for own, inner, cfg in tie_cases(_buildable(_published())):
        spec, _ = spec_from_config(cfg, "llama4")
        assert spec.tie_output is bool(inner), (own, inner)
        assert _ours(cfg) == _theirs(hf, cfg), (own, inner)


def test_cli_part_text_vision_all(capsys):
    check_cli_parts(capsys, PATH, 108_641_793_536, 107_769_861_120)


@st.composite
def _llama4(draw) -> dict:
    heads = draw(st.integers(1, 3))
    patch = draw(st.integers(1, 4))
    vision = dict(
        model_type="llama4_vision_model",
        hidden_size=heads * 2 * draw(st.integers(1, 3)),
        num_attention_heads=heads,
        intermediate_size=draw(st.integers(1, 12)),
        num_hidden_layers=draw(st.integers(1, 2)),
        patch_size=patch,
        image_size=patch * draw(st.integers(1, 3)) + draw(st.integers(0, patch - 1)),
        projector_input_dim=draw(st.integers(1, 12)),
        projector_output_dim=draw(st.integers(1, 12)),
        vision_output_dim=draw(st.integers(1, 12)),
    )
    if draw(st.booleans()):
        vision["num_channels"] = draw(st.integers(1, 4))
    cfg = dict(model_type="llama4", vision_config=vision, text_config=draw(llama4_text()))
    if draw(st.booleans()):
        cfg["tie_word_embeddings"] = draw(st.booleans())
    return cfg


# 50 examples under the CI profile (each builds a vision model: its 200 would cost ~60 s), 20 in dev.
@settings(max_examples=min(50, settings.default.max_examples))
@given(cfg=_llama4())
def test_random_llama4_match_transformers(hf, cfg):
    assert _ours(cfg) == _theirs(hf, cfg), cfg


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"model_type": "clip_vision_model"}, "is not supported inside llama4"),
        ({"image_size": [336, 336]}, "vision_config.image_size is a list"),
        ({"num_attention_heads": 3}, "does not divide hidden_size"),
        ({"image_size": 10}, "smaller than patch_size"),
    ],
)
def test_refusals_are_one_line(change, message):
    cfg = _published()
    cfg["vision_config"].update(change)
    with pytest.raises(ConfigError) as e:
        spec_from_config(cfg, "llama4")
    assert message in str(e.value) and "\n" not in str(e.value)
