"""Dual encoders (issue 21): ``clip`` (CLIPModel) and ``siglip`` (SiglipModel) counted whole, with
the text figure (text tower and its projection) and the vision figure (image tower and its
projection) beside it, and the image tower's forward FLOPs per image (Build item 2).

Oracles:

* parameters: transformers 5.24's ``CLIPModel`` / ``SiglipModel`` built on the meta device,
  ``sum(p.numel())`` of the whole model, of ``text_model`` + ``text_projection`` and of
  ``vision_model`` + ``visual_projection`` (named submodules of the real class); the published
  openai/clip-vit-base-patch32 (151,277,313: the figure the model's own torchinfo listing prints,
  tests/fixtures/configs/SOURCES.md) and google/siglip-base-patch16-224 configs, and hypothesis
  draws of every key of the sub-configs;
* the key audit of ``text_config`` / ``vision_config``: each field of CLIPTextConfig,
  CLIPVisionConfig and SiglipTextConfig changed in turn, transformers and symtrans move alike;
* FLOPs: ``torch.utils.flop_counter.FlopCounterMode`` on an eager forward of the real model's
  ``get_text_features`` (the text tower and its projection) and ``get_image_features`` (the
  image tower and its projection, or SigLIP's pooling head).
"""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, require

require("hypothesis")
require("transformers")
from hf_reference import (  # noqa: E402
    CLIP_TEXT,
    CLIP_VISION,
    SIGLIP2_TEXT,
    SIGLIP2_VISION,
    SIGLIP_DUAL_VISION,
    SIGLIP_TEXT,
    STRATEGIES,
)
from hypothesis import given, settings  # noqa: E402

from symtrans.catalog.hf_config import ConfigError, spec_from_config  # noqa: E402
from symtrans.catalog.models.dual import (  # noqa: E402
    CLIP_TEXT_KEYS,
    CLIP_TEXT_NO_EFFECT,
    CLIP_VISION_KEYS,
    CLIP_VISION_NO_EFFECT,
    SIGLIP2_VISION_KEYS,
    SIGLIP2_VISION_NO_EFFECT,
    SIGLIP_TEXT_KEYS,
    SIGLIP_TEXT_NO_EFFECT,
)
from symtrans.engine.architectures import build  # noqa: E402
from symtrans.engine.dual import image_flops, image_tokens  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402
from symtrans.engine.vision import select_part  # noqa: E402

CLIP_PATH = FIXTURES / "configs" / "clip-vit-base-patch32.json"
SIGLIP_PATH = FIXTURES / "configs" / "siglip-base-patch16-224.json"
SIGLIP2_PATH = FIXTURES / "configs" / "siglip2-base-patch16-naflex-shaped.json"
_TEXT = ("text_model.", "text_projection.")
_VISION = ("vision_model.", "visual_projection.")


def _ours(cfg: dict) -> tuple[int, int, int]:
    """symtrans's (all, text, vision)."""
    spec, _ = spec_from_config(cfg, "dual")
    cost = build(spec)
    return tuple(exact(select_part(cost, p).params, spec.values) for p in ("all", "text", "vision"))


def _theirs(hf, cfg: dict) -> tuple[int, int, int]:
    """transformers' (whole, text_model + text_projection, vision_model + visual_projection)."""
    model = hf.build(cfg["model_type"], {k: v for k, v in cfg.items() if k != "model_type"})
    named = dict(model.named_parameters())
    text = sum(p.numel() for k, p in named.items() if k.startswith(_TEXT))
    vision = sum(p.numel() for k, p in named.items() if k.startswith(_VISION))
    return hf.count(model), text, vision


def test_clip_vit_b32_written_out(hf):
    """CLIP ViT-B/32 by hand: text 49408 x 512 tokens + 77 x 512 positions + 12 layers of
    4 (512^2 + 512) + (512 x 2048 + 2048) + (2048 x 512 + 512) + 4 x 512 + final LN 1024, and
    text_projection 512 x 512; vision: class token 768 + conv 3 x 32^2 x 768 + 50 x 768
    positions + pre/post LN 2 x 1536 + 12 layers of 7,087,872, and visual_projection 768 x 512;
    logit_scale 1.  Total 151,277,313 (the figure of the model's torchinfo listing)."""
    text_layer = 4 * (512**2 + 512) + (512 * 2048 + 2048) + (2048 * 512 + 512) + 4 * 512
    vision_layer = 4 * (768**2 + 768) + (768 * 3072 + 3072) + (3072 * 768 + 768) + 4 * 768
    text = 49408 * 512 + 77 * 512 + 12 * text_layer + 1024 + 512 * 512
    vision = 768 + 3 * 32 * 32 * 768 + 50 * 768 + 2 * 1536 + 12 * vision_layer + 768 * 512
    assert (text, vision, text + vision + 1) == (63_428_096, 87_849_216, 151_277_313)
    cfg = json.loads(CLIP_PATH.read_text(encoding="utf-8"))
    assert _ours(cfg) == _theirs(hf, cfg) == (151_277_313, text, vision)


def test_siglip_base_224_whole_and_parts(hf):
    """SigLIP base/16 at 224 px (the card's "203M"): whole 203,155,970 = text tower with its head
    110,271,744 + vision tower with its pooling head 92,884,224 + logit_scale and logit_bias."""
    cfg = json.loads(SIGLIP_PATH.read_text(encoding="utf-8"))
    assert _ours(cfg) == _theirs(hf, cfg) == (203_155_970, 110_271_744, 92_884_224)


def test_siglip2_base_naflex_whole_and_parts(hf):
    """SigLIP 2 base/16 NaFlex (the card's "375M"): the text tower of a 256,000-token vocabulary
    with its head, 282,303,744; the vision tower 92,930,304: SigLIP's at 224 px (92,884,224 with
    its 196 positions) + 60 more rows of the 256-row table (60 x 768 = 46,080)."""
    cfg = json.loads(SIGLIP2_PATH.read_text(encoding="utf-8"))
    assert 92_884_224 + 60 * 768 == 92_930_304
    assert _ours(cfg) == _theirs(hf, cfg) == (375_234_050, 282_303_744, 92_930_304)


# 50 draws a type under the CI profile (tests/test_model_types.py draws 200 more of the whole count)
@pytest.mark.parametrize("model_type", ["clip", "siglip", "siglip2"])
@settings(max_examples=min(50, settings.default.max_examples))
@given(data=__import__("hypothesis").strategies.data())
def test_random_dual_encoders_parts_match_transformers(hf, model_type, data):
    cfg = data.draw(STRATEGIES[model_type], label="config")
    assert _ours(cfg) == _theirs(hf, cfg), cfg


def test_vision_use_head_edge_case(hf):
    """SiglipModel's tower keeps its attention-pooling head by default (SiglipVisionConfig's
    vision_use_head true; Gemma 3 sets it false): the head is probe d + in_proj 3d^2 + 3d +
    out_proj d^2 + d + LayerNorm 2d + MLP (d f + f) + (f d + d), here d 10, f 9."""
    d, f = 10, 9
    head = d + 3 * d * d + 3 * d + d * d + d + 2 * d + (d * f + f) + (f * d + d)
    on = dict(model_type="siglip", text_config=SIGLIP_TEXT, vision_config=SIGLIP_DUAL_VISION)
    off = dict(on, vision_config=dict(SIGLIP_DUAL_VISION, vision_use_head=False))
    assert _ours(on) == _theirs(hf, on) and _ours(off) == _theirs(hf, off)
    assert _ours(on)[2] - _ours(off)[2] == head == 669


def _count(hf, cfg: dict):
    try:
        theirs = _theirs(hf, cfg)
    except Exception as e:  # any refusal of transformers (strict config validation)
        theirs = e
    try:
        ours = _ours(cfg)
    except ConfigError as e:
        ours = e
    return theirs, ours


# A second value of every sub-config field (the bases are hf_reference's CLIP_* and SIGLIP_*).
_MUTATIONS = {
    "hidden_size": [12, 7],  # 7: not a multiple of the 2 heads, which validate_architecture refuses
    "intermediate_size": [5],
    "num_hidden_layers": [3],
    "num_attention_heads": [1, 3],
    "vocab_size": [29],
    "max_position_embeddings": [13],
    "num_channels": [1],
    "image_size": [12, 9],
    "patch_size": [2],
    "projection_dim": [5],
    "projection_size": [5, None],
    "hidden_act": ["gelu"],
    "layer_norm_eps": [1e-3],
    "attention_dropout": [0.1],
    "initializer_range": [0.5],
    "initializer_factor": [0.5],
    "pad_token_id": [3],
    "bos_token_id": [4],
    "eos_token_id": [5],
    "num_patches": [9, 5],  # 5: no square grid; transformers still builds it
    "vision_use_head": [False],
}
_SUBS = [("clip", "text_config", CLIP_TEXT, key, key in CLIP_TEXT_NO_EFFECT) for key in sorted(CLIP_TEXT_KEYS)] + [
    ("clip", "vision_config", CLIP_VISION, key, key in CLIP_VISION_NO_EFFECT) for key in sorted(CLIP_VISION_KEYS)
]
_SUBS += [("siglip", "text_config", SIGLIP_TEXT, key, key in SIGLIP_TEXT_NO_EFFECT) for key in sorted(SIGLIP_TEXT_KEYS)]
_SUBS += [
    ("siglip2", "text_config", SIGLIP2_TEXT, key, key in SIGLIP_TEXT_NO_EFFECT) for key in sorted(SIGLIP_TEXT_KEYS)
]
_SUBS += [
    ("siglip2", "vision_config", SIGLIP2_VISION, key, key in SIGLIP2_VISION_NO_EFFECT)
    for key in sorted(SIGLIP2_VISION_KEYS)
]
_BASES = {
    "clip": (CLIP_TEXT, CLIP_VISION),
    "siglip": (SIGLIP_TEXT, SIGLIP_DUAL_VISION),
    "siglip2": (SIGLIP2_TEXT, SIGLIP2_VISION),
}


@pytest.mark.parametrize(("mt", "where", "base", "key", "quiet"), _SUBS, ids=[f"{s[0]}-{s[1]}-{s[3]}" for s in _SUBS])
def test_sub_config_key_audit(hf, mt, where, base, key, quiet):
    """Each field of the sub-config changed in turn: both refuse, or both count alike; the keys
    declared without effect move nothing, the others move something."""
    cfg0 = dict(model_type=mt, text_config=_BASES[mt][0], vision_config=_BASES[mt][1])
    theirs0, ours0 = _count(hf, cfg0)
    assert theirs0 == ours0
    moved = False
    for value in _MUTATIONS[key]:
        cfg = dict(cfg0, **{where: dict(base, **{key: value})})
        theirs, ours = _count(hf, cfg)
        if isinstance(theirs, Exception):
            assert isinstance(ours, ConfigError) and "\n" not in str(ours), (key, value, theirs, ours)
            moved = True
            continue
        assert ours == theirs, (key, value)
        moved = moved or theirs != theirs0
    assert moved == (not quiet), key


def test_sub_config_keys_are_the_class_fields(hf):
    import dataclasses

    base = {f.name for f in dataclasses.fields(hf.transformers.PreTrainedConfig)}
    for cls, known in (
        (hf.transformers.CLIPTextConfig, CLIP_TEXT_KEYS),
        (hf.transformers.CLIPVisionConfig, CLIP_VISION_KEYS),
        (hf.transformers.SiglipTextConfig, SIGLIP_TEXT_KEYS),
        (hf.transformers.Siglip2TextConfig, SIGLIP_TEXT_KEYS),
        (hf.transformers.Siglip2VisionConfig, SIGLIP2_VISION_KEYS),
    ):
        assert {f.name for f in dataclasses.fields(cls)} - base == known, cls.__name__


@pytest.mark.parametrize(
    ("cfg", "words"),
    [
        (dict(model_type="clip", text_config={"model_type": "bert"}), ("text_config model_type", "clip_text_model")),
        (dict(model_type="siglip", vision_config={"model_type": "clip_vision_model"}), ("siglip_vision_model",)),
        (dict(model_type="clip", vision_config=dict(CLIP_VISION, image_size=[8, 16])), ("image_size is a list",)),
        (dict(model_type="clip", text_config=dict(CLIP_TEXT, hidden_size=7)), ("hidden_size",)),
        # a misspelt size: transformers ignores it and builds the default, which would be a guess
        (dict(model_type="clip", text_config={"num_hidden_layer": 3}), ("did you mean num_hidden_layers?",)),
        (dict(model_type="siglip", vision_config={"patch_sise": 4}), ("did you mean patch_size?",)),
        (dict(model_type="siglip2", vision_config={"num_patch": 4}), ("did you mean num_patches?",)),
        (dict(model_type="siglip2", text_config={"projection_sizes": 4}), ("did you mean projection_size?",)),
    ],
)
def test_refusals_are_one_line(cfg, words):
    with pytest.raises(ConfigError) as e:
        spec_from_config(cfg, "x")
    assert "\n" not in str(e.value) and all(w in str(e.value) for w in words), str(e.value)


def test_text_config_dict_replaces_text_config(hf):
    """CLIPConfig.__post_init__ builds the text tower from a given text_config_dict (a 4.x key)."""
    cfg = dict(model_type="clip", text_config=CLIP_TEXT, vision_config=CLIP_VISION)
    cfg["text_config_dict"] = dict(CLIP_TEXT, hidden_size=12)
    assert _ours(cfg) == _theirs(hf, cfg)


# --------------------------------------------------------------------------- FLOPs

B, L = 2, 8


def _eager(hf, cfg: dict):
    torch = hf.torch
    torch.manual_seed(0)
    cls = hf.model_class(cfg["model_type"])
    config = cls.config_class(**{k: v for k, v in cfg.items() if k != "model_type"}, attn_implementation="eager")
    return cls(config).eval()


def _counted(run) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with counter:
        run()
    return counter.get_total_flops()


FLOP_CASES = [
    dict(model_type="clip", text_config=CLIP_TEXT, vision_config=CLIP_VISION, projection_dim=7),
    dict(model_type="siglip", text_config=SIGLIP_TEXT, vision_config=SIGLIP_DUAL_VISION),
    dict(model_type="siglip", text_config=SIGLIP_TEXT, vision_config=dict(SIGLIP_DUAL_VISION, vision_use_head=False)),
]


FLOP_CASES += [
    dict(model_type="siglip2", text_config=SIGLIP2_TEXT, vision_config=SIGLIP2_VISION),
    dict(model_type="siglip2", text_config=SIGLIP2_TEXT, vision_config=dict(SIGLIP2_VISION, vision_use_head=False)),
]


def _pixels(torch, spec, mt: str) -> dict:
    """B images of 8 x 8 px: CLIP and SigLIP a (B, C, 8, 8) tensor; SigLIP 2 its 2 x 2 grid of
    flattened 4 x 4 px patches (B, 4, C 16), all valid, and their spatial shape."""
    c = spec.size("C_vis")
    if mt != "siglip2":
        return {"pixel_values": torch.ones(B, c, 8, 8)}
    return {
        "pixel_values": torch.ones(B, 4, c * 16),
        "pixel_attention_mask": torch.ones(B, 4, dtype=torch.long),
        "spatial_shapes": torch.tensor([[2, 2]] * B),
    }


@pytest.mark.parametrize(
    "cfg", FLOP_CASES, ids=["clip", "siglip-head", "siglip-no-head", "siglip2-head", "siglip2-no-head"]
)
def test_text_and_image_flops_match_flop_counter(hf, cfg):
    """The text forward (``flops``: B sequences of L tokens, the projection on one pooled token
    each) equals FlopCounterMode on ``get_text_features``; ``image_flops`` x B images equals it on
    ``get_image_features`` of B 8 x 8 px images (CLIP: 2^2 patches + the class token = 5 tokens,
    SigLIP: 4; SigLIP 2: its num_patches 4, the table resized by a 4 x 4 matmul)."""
    from symtrans.accounting.flops import evaluate, flops_expr

    spec, _ = spec_from_config(cfg, "flops")
    model = _eager(hf, cfg)
    torch = hf.torch
    ids = torch.ones(B, L, dtype=torch.long)
    pixels = _pixels(torch, spec, cfg["model_type"])
    text = _counted(lambda: model.get_text_features(input_ids=ids))
    image = _counted(lambda: model.get_image_features(**pixels))
    assert text == int(evaluate(flops_expr(spec, "forward"), {**spec.values, "B": B, "L": L}))
    assert exact(image_tokens(spec), spec.values) == (5 if cfg["model_type"] == "clip" else 4)
    assert image == B * exact(image_flops(spec), spec.values)


def test_clip_vit_b32_image_flops_by_hand():
    """ViT-B/32 at 224 px: 50 tokens; conv 2 x 49 x 3 x 32^2 x 768, 12 layers of 8 x 50 x 768^2 +
    4 x 50^2 x 768 + 4 x 50 x 768 x 3072, projection 2 x 768 x 512: 8,817,623,040 FLOPs per image
    (4.41 G multiply-accumulates, the figure usually quoted for CLIP ViT-B/32)."""
    layer = 8 * 50 * 768**2 + 4 * 50**2 * 768 + 4 * 50 * 768 * 3072
    by_hand = 2 * 49 * 3 * 32**2 * 768 + 12 * layer + 2 * 768 * 512
    spec, _ = spec_from_config(json.loads(CLIP_PATH.read_text(encoding="utf-8")), "clip")
    assert exact(image_flops(spec), spec.values) == by_hand == 8_817_623_040


def test_cli_parts_and_image_flops(capsys):
    from symtrans.cli.main import main

    assert main(["params", str(CLIP_PATH), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["parts"] == {"all": 151_277_313, "text": 63_428_096, "vision": 87_849_216}
    assert out["counted_class"].startswith("CLIPModel") or "CLIPModel" in out["counted_class"]
    assert main(["params", str(SIGLIP_PATH), "--part", "vision"]) == 0
    assert "92,884,224 parameters of the image tower and its projection" in capsys.readouterr().out
    assert main(["flops", str(CLIP_PATH), "--part", "vision", "--batch", "3", "--format", "json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert (r["tokens_per_image"], r["per_image"], r["total"]) == (50, 8_817_623_040, 3 * 8_817_623_040)
    assert main(["flops", "gpt2", "--part", "vision"]) == 2


@pytest.mark.parametrize("path", [CLIP_PATH, SIGLIP_PATH, SIGLIP2_PATH], ids=lambda p: p.stem)
def test_shape_walk_sums_to_the_text_forward(path):
    """The shape walk (its own matmul shapes, analysis/walk.py) of the text forward, with the
    pooled token's projection, sums to the engine's forward FLOPs at B = 2, L = 8."""
    from symtrans.accounting.flops import evaluate, flops_expr
    from symtrans.analysis.walk import walk

    spec, _ = spec_from_config(json.loads(path.read_text(encoding="utf-8")), "walk")
    values = {**spec.values, "B": 2, "L": 8}
    assert evaluate(walk(spec).flops, values) == evaluate(flops_expr(spec, "forward"), values)
