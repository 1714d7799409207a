"""PaliGemma counted whole (issue 21): its SigLIP vision tower and one-map projector beside the
Gemma (PaliGemma 1), Gemma 2 (PaliGemma 2) or Gemma 3 language model, against transformers
5.x's PaliGemmaForConditionalGeneration on the meta device.

Oracles: ``sum(p.numel() for p in model.parameters())`` of the class built on the meta device
(whole; ``model.model.language_model`` + ``lm_head`` unless tied, for the text-only figure) from
a published PaliGemma 448 px config.json (vidore/colpali-v1.2-merged, quoted by transformers'
own ColPali conversion script; tests/fixtures/configs, source in SOURCES.md) and from hypothesis
draws of SiglipVisionConfig's keys and projection_dim; the tower, projector and text model of
the published file are written out by hand below, and keras-hub's own count of the same
architecture (its preset metadata, another implementation) is reconciled with it.
"""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, require

require("hypothesis")
require("transformers")
from hf_reference import SIGLIP_VISION, decoder_types, llama_like  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from vision_common import ours, square_vit, theirs  # noqa: E402

from symtrans.catalog.hf_config import ConfigError, spec_from_config  # noqa: E402

PATH = FIXTURES / "configs" / "colpali-v1.2-merged-paligemma-448.json"
TEXT = dict(model_type="gemma", hidden_size=16, num_attention_heads=4, num_key_value_heads=2, head_dim=4)
TEXT.update(num_hidden_layers=1, intermediate_size=10, vocab_size=23)


def test_paligemma_448_written_out():
    """SigLIP So400m/14 at 448 px (d 1152, d_ff 4304, 27 layers, 32^2 patches), by hand: biased
    patch conv 3*14*14*1152 + 1152, 1024 positions, post-LayerNorm 2*1152, per layer
    4*(1152^2 + 1152) + (1152*4304 + 4304) + (4304*1152 + 1152) + 2*2*1152; no pooling head.
    Projector: one biased 1152 x 2048 map.  Text: Gemma 2B (2,506,172,416 at 256,000 rows, the
    gemma-2b fixture of tests/test_hf_config.py) with 257,216 rows, tied: + 1,216 x 2048."""
    layer = 4 * (1152**2 + 1152) + (1152 * 4304 + 4304) + (4304 * 1152 + 1152) + 2 * 2304
    tower = 3 * 14 * 14 * 1152 + 1152 + 1024 * 1152 + 2304 + 27 * layer
    projector = 1152 * 2048 + 2048
    text = 2_506_172_416 + (257_216 - 256_000) * 2048
    assert (tower, projector, text) == (413_327_088, 2_361_344, 2_508_662_784)
    assert ours(json.loads(PATH.read_text(encoding="utf-8"))) == (tower + projector + text, text)


def test_keras_hub_count_of_the_same_architecture():
    """keras-hub's preset metadata gives pali_gemma_3b_448 2,924,220,144 parameters
    (keras_hub/src/models/pali_gemma/pali_gemma_presets.py); its vocabulary is 257,152 rows, the
    Hub config's text model 257,216: the difference is 64 tied rows of 2048."""
    total, _ = ours(json.loads(PATH.read_text(encoding="utf-8")))
    assert total == 2_924_220_144 + 64 * 2048


def test_published_whole_and_text_only(hf):
    cfg = json.loads(PATH.read_text(encoding="utf-8"))
    assert ours(cfg) == theirs(hf, cfg) == (2_924_351_216, 2_508_662_784)


@st.composite
def _towers(draw) -> dict:
    vision = draw(square_vit())
    if draw(st.booleans()):
        vision["vision_use_head"] = draw(st.booleans())
    if draw(st.booleans()):
        vision["model_type"] = "siglip_vision_model"
    mt = draw(st.sampled_from(["gemma", "gemma2", "gemma3_text"]))
    text = draw(llama_like("gemma")) if mt == "gemma" else draw(decoder_types(mt))
    cfg = dict(model_type="paligemma", vision_config=vision, text_config=text)
    cfg["projection_dim"] = text["hidden_size"] if draw(st.booleans()) else draw(st.integers(1, 24))
    if draw(st.booleans()):
        cfg["tie_word_embeddings"] = draw(st.booleans())
    return cfg


# 50 examples under the CI profile (each builds a tower), 20 in dev.
@settings(max_examples=min(50, settings.default.max_examples))
@given(cfg=_towers())
def test_random_paligemma_towers_match_transformers(hf, cfg):
    assert ours(cfg) == theirs(hf, cfg), cfg


def test_ties_by_its_own_flag_alone(hf):
    """PaliGemmaForConditionalGeneration ties lm_head iff the wrapper's tie_word_embeddings is true
    (default true), whatever the text config says (checked on the meta device)."""
    for own in (None, False, True):
        for inner in (None, False, True):
            text = {**TEXT, **({} if inner is None else {"tie_word_embeddings": inner})}
            cfg = dict(model_type="paligemma", text_config=text, vision_config=SIGLIP_VISION, projection_dim=16)
            if own is not None:
                cfg["tie_word_embeddings"] = own
            spec, _ = spec_from_config(cfg, "x")
            model = hf.build("paligemma", {k: v for k, v in cfg.items() if k != "model_type"})
            tied = model.lm_head.weight is model.model.language_model.embed_tokens.weight
            assert spec.tie_output == tied == (own is not False), (own, inner)


def test_projection_dim_other_than_the_text_width_is_counted_and_noted(hf):
    cfg = dict(model_type="paligemma", text_config=TEXT, vision_config=SIGLIP_VISION, projection_dim=24)
    assert ours(cfg) == theirs(hf, cfg)
    _, notes = spec_from_config(cfg, "x")
    assert any("projection_dim 24 differs from the text model's hidden_size 16" in n for n in notes)


@pytest.mark.parametrize(
    ("cfg", "words"),
    [
        (dict(text_config=dict(TEXT, model_type="llama")), ("llama", "inside paligemma", "gemma, gemma2")),
        (dict(vision_config={"model_type": "clip_vision_model"}), ("clip_vision_model", "SigLIP vision tower")),
        (dict(vision_config=dict(SIGLIP_VISION, image_size=[8, 16])), ("image_size is a list",)),
    ],
)
def test_other_parts_are_refused_naming_the_part(hf, cfg, words):
    """One line naming the part symtrans does not read; transformers refuses a llama text model
    too (PaliGemmaConfig sets use_bidirectional_attention, a field of the Gemma configs only)."""
    full = {**dict(model_type="paligemma", text_config=TEXT, vision_config=SIGLIP_VISION, projection_dim=16), **cfg}
    with pytest.raises(ConfigError) as e:
        spec_from_config(full, "x")
    assert "\n" not in str(e.value) and all(w in str(e.value) for w in words), str(e.value)
    if full["text_config"]["model_type"] == "llama":
        with pytest.raises(AttributeError, match="use_bidirectional_attention"):
            hf.build("paligemma", {k: v for k, v in full.items() if k != "model_type"})


def test_cli_part_text_vision_all(capsys):
    from symtrans.cli.main import main

    assert main(["params", str(PATH), "--format", "json"]) == 0
    parts = json.loads(capsys.readouterr().out)["parts"]
    assert parts == {"all": 2_924_351_216, "text": 2_508_662_784, "vision": 413_327_088 + 2_361_344}
    assert main(["params", str(PATH), "--part", "vision"]) == 0
    assert "415,688,432" in capsys.readouterr().out
