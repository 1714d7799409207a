"""Shared by the vision-language wrapper tests (tests/test_vision_paligemma.py,
tests/test_vision_idefics3.py): symtrans's (total, text-only) figures beside transformers'
on the meta device, and a strategy of small square-image ViT towers.

The transformers side is the oracle (``hf_reference.language_model_count`` for the text-only
figure); the symtrans side is the code under test.
"""

from __future__ import annotations

from hf_reference import language_model_count
from hypothesis import strategies as st

from symtrans.catalog.hf_config import ConfigError, spec_from_config
from symtrans.engine.architectures import build
from symtrans.engine.evaluate import exact
from symtrans.engine.vision import vision_params


def ours(cfg: dict) -> tuple[int, int]:
    """(total, text-only) of symtrans."""
    spec, _ = spec_from_config(cfg, cfg["model_type"])
    cost = build(spec)
    total = exact(cost.params, spec.values)
    return total, total - exact(vision_params(cost), spec.values)


def theirs(hf, cfg: dict) -> tuple[int, int]:
    """(total, text-only) of the transformers class built on the meta device."""
    model = hf.build(cfg["model_type"], {k: v for k, v in cfg.items() if k != "model_type"})
    return hf.count(model), language_model_count(hf, model)


def both(hf, cfg: dict):
    """(transformers', symtrans's) figures, each side's refusal in place of its figure."""
    try:
        reference = theirs(hf, cfg)
    except Exception as e:  # any refusal of transformers (config validation, torch's asserts)
        reference = e
    try:
        counted = ours(cfg)
    except ConfigError as e:
        counted = e
    return reference, counted


@st.composite
def square_vit(draw) -> dict:
    """A small ViT config of square images and patches (SigLIP's keys and Idefics3's copy):
    hidden_size a multiple of the heads; an image side that may leave pixels over."""
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
    if draw(st.booleans()):
        vision["num_channels"] = draw(st.integers(1, 4))
    return vision
