"""``symtrans flops --part vision`` of LLaVA-NeXT (llava_next): anyres tiling (issue 21, Build
item 2). An image of H x W px is fitted to one of ``image_grid_pinpoints`` (transformers'
``select_best_resolution``), cut into tiles of the tower's image_size plus a base tile, each
through the CLIP tower and the projector; the language model receives the base tile's tokens
and the tiles' grid unpadded, each row closed by image_newline.

Oracles (never symtrans's own output):

* ``torch.utils.flop_counter.FlopCounterMode`` around transformers 5.x's eager
  ``LlavaNextForConditionalGeneration.get_image_features`` of one image (real weights on the
  CPU; ``pixel_values`` holds more tiles than any pinpoint needs and the model slices the ones
  its image size selects); the tokens per image are the rows of the features it returns.
* The whole model: FlopCounterMode on the eager forward with the image minus the forward of
  the same token sequence without it (the language model's FLOPs cancel).
* The tokens per image again from transformers' ``LlavaNextProcessor._get_number_of_features``
  (the processor's own count of the placeholder tokens, a separate implementation).
* llava-v1.6-mistral-7b (tests/fixtures/configs): FlopCounterMode on the meta device, the
  language model cut to one layer (``get_image_features`` never runs it), and the 672 x 672 px
  figure written out by hand.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from conftest import FIXTURES, require

require("hypothesis")
torch = require("torch")
transformers = require("transformers")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402
from transformers.image_processing_utils import select_best_resolution  # noqa: E402

from symtrans.base.errors import InputError  # noqa: E402
from symtrans.catalog.hf_config import spec_from_config  # noqa: E402
from symtrans.catalog.models.vision_image import image_input  # noqa: E402
from symtrans.cli.main import main  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402
from symtrans.engine.vision_flops import vlm_image_flops  # noqa: E402

EXAMPLES = settings(
    max_examples=min(50, settings.default.max_examples), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TEXT = dict(model_type="llama", num_hidden_layers=1, intermediate_size=8, num_attention_heads=2)
TEXT.update(num_key_value_heads=1, vocab_size=40, hidden_size=16, head_dim=8)
IMAGE_TOKEN = 39


def _vit(d=12, f=20, n=2, c=3, p=2, side=8, heads=3) -> dict:
    return dict(
        model_type="clip_vision_model",
        hidden_size=d,
        intermediate_size=f,
        num_hidden_layers=n,
        num_attention_heads=heads,
        num_channels=c,
        patch_size=p,
        image_size=side,
    )


def _cfg(vision: dict, pinpoints: list, **kw) -> dict:
    cfg = dict(model_type="llava_next", vision_config=vision, text_config=dict(TEXT), image_token_index=IMAGE_TOKEN)
    return dict(cfg, image_grid_pinpoints=pinpoints, **kw)


def _ours(cfg: dict, size: tuple[int, int]) -> tuple[int, int]:
    """symtrans's (FLOPs per image, tokens per image for the language model): the code under test."""
    spec, _ = spec_from_config(cfg, cfg["model_type"])
    r = vlm_image_flops(spec, image_input(cfg, spec, size))
    return exact(r.flops, spec.values), r.lm_tokens


def _model(cfg: dict, device: str = "cpu"):
    cls = transformers.LlavaNextForConditionalGeneration
    config = cls.config_class(**{k: v for k, v in cfg.items() if k != "model_type"}, attn_implementation="eager")
    torch.manual_seed(0)
    with torch.device(device):
        return cls(config).eval()


def _tiles_tensor(cfg: dict, device: str = "cpu"):
    """(1, tiles, C, S, S) with more tiles than any pinpoint gives: get_image_features keeps the
    first ``image_size_to_num_patches`` of them, the count its own code derives."""
    vis = cfg["vision_config"]
    s, c = vis["image_size"], vis.get("num_channels", 3)
    most = max(-(-h // s) * -(-w // s) for h, w in cfg["image_grid_pinpoints"]) + 1
    return torch.ones(1, most, c, s, s, device=device)


def _theirs(cfg: dict, size: tuple[int, int], device: str = "cpu", model=None) -> tuple[int, int]:
    """FlopCounterMode on the eager get_image_features of one image, and the rows it returns."""
    model = model or _model(cfg, device)
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        out = model.get_image_features(pixel_values=_tiles_tensor(cfg, device), image_sizes=torch.tensor([size]))
    return counter.get_total_flops(), out.pooler_output[0].shape[0]


def _processor_tokens(cfg: dict, size: tuple[int, int]) -> int:
    """LlavaNextProcessor's placeholder count for an image of ``size`` (its own code, called on
    a namespace holding the attributes it reads; "default" drops the class token)."""
    vis = cfg["vision_config"]
    proc = transformers.LlavaNextProcessor
    ns = SimpleNamespace(
        image_processor=SimpleNamespace(image_grid_pinpoints=cfg["image_grid_pinpoints"]),
        patch_size=vis["patch_size"],
        num_additional_image_tokens=1,
    )
    ns._get_unpadded_features = lambda *a: proc._get_unpadded_features(ns, *a)
    return proc._get_number_of_features(ns, *size, vis["image_size"], vis["image_size"]) - 1


# --------------------------------------------------------------------------- tiny model, several grids

PINS = [[8, 16], [16, 8], [16, 16], [24, 8], [8, 24]]  # LlavaNextConfig's default, scaled from 336 px to 8 px
TINY = _cfg(_vit(), PINS)
# (image size, the pinpoint select_best_resolution picks, worked out by hand from its rule:
# s = min(w / W, h / H), effective = min(int(W s) int(H s), W H), waste = h w - effective)
SIZES = [
    ((8, 8), (8, 16), "all keep the 64 px; 8x16 and 16x8 waste the least (64), the first wins"),
    ((10, 30), (8, 24), "8x24 keeps 24 x 8 = 192 px, the most"),
    ((30, 10), (24, 8), "24x8 keeps 192 px"),
    ((16, 16), (16, 16), "16x16 keeps all 256 px"),
    ((13, 17), (16, 16), "16x16 keeps 16 x 12 = 192 px; the others at most 10 x 8 = 80"),
    ((5, 40), (8, 24), "8x24 keeps 24 x 3 = 72 px; the unpad keeps 2 of the 4 rows (5 x 12 / 40 = 1.5 -> 1)"),
    ((20, 9), (24, 8), "24x8 keeps 8 x 17 = 136 px"),
]


@pytest.fixture(scope="module")
def tiny_model():
    return _model(TINY)


@pytest.mark.parametrize(("size", "pinpoint", "why"), SIZES, ids=[f"{h}x{w}" for (h, w), _, _ in SIZES])
def test_tiny_matches_flop_counter_and_processor(tiny_model, size, pinpoint, why):
    assert select_best_resolution(size, PINS) == pinpoint  # the table's hand work, by transformers' rule
    flops, tokens = _ours(TINY, size)
    assert (flops, tokens) == _theirs(TINY, size, model=tiny_model)
    assert tokens == _processor_tokens(TINY, size)


def test_tiny_grids_differ():
    """The sizes above select different grids: 3, 4 and 5 tiles (with the base tile) give three
    different FLOP counts, one tile's each apart (arithmetic: (8 / 2)^2 = 16 patches a tile)."""
    one_tile = _ours(TINY, (16, 16))[0] - _ours(TINY, (10, 30))[0]
    assert {_ours(TINY, s)[0] for s, _, _ in SIZES} == {_ours(TINY, (8, 8))[0] + k * one_tile for k in range(3)}


def test_whole_model_forward_difference(tiny_model):
    """FlopCounterMode on the eager forward of the whole model: with one 13 x 17 px image (its
    tokens as placeholders) minus the same token sequence with no image."""
    size = (13, 17)
    flops, tokens = _ours(TINY, size)
    ids = torch.full((1, tokens + 3), 1)
    ids[0, 1 : 1 + tokens] = IMAGE_TOKEN
    with_image, without = FlopCounterMode(display=False), FlopCounterMode(display=False)
    with with_image, torch.no_grad():
        tiny_model(input_ids=ids, pixel_values=_tiles_tensor(TINY), image_sizes=torch.tensor([size]))
    with without, torch.no_grad():
        tiny_model(input_ids=torch.full((1, tokens + 3), 1))
    assert with_image.get_total_flops() - without.get_total_flops() == flops


def test_full_strategy_fails_in_transformers_and_is_refused(capsys, tmp_path):
    """The "full" strategy keeps the class token, which pack_image_features cannot reshape: transformers
    raises, symtrans refuses in one line."""
    cfg = _cfg(_vit(), PINS, vision_feature_select_strategy="full")
    with pytest.raises(RuntimeError):
        _theirs(cfg, (16, 16))
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    assert main(["flops", str(path), "--part", "vision", "--image-size", "16"]) == 2
    err = capsys.readouterr().err
    assert "vision_feature_select_strategy full" in err and err.count("\n") == 1


# --------------------------------------------------------------------------- hypothesis draws


@st.composite
def _drawn(draw) -> tuple[dict, tuple[int, int]]:
    heads, p = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    n = draw(st.integers(1, 2))
    side = p * draw(st.integers(1, 3)) + draw(st.integers(0, p - 1))  # pixels may be left over
    vision = _vit(
        d=heads * draw(st.integers(1, 4)),
        f=draw(st.integers(1, 12)),
        n=n,
        c=draw(st.integers(1, 3)),
        p=p,
        side=side,
        heads=heads,
    )
    grid = st.tuples(st.integers(1, 3), st.integers(1, 3))
    pins = [[a * side, b * side] for a, b in draw(st.lists(grid, min_size=1, max_size=4))]
    layers = [-1, -2, 1, [-2, -1]] + ([[1, 2]] if n > 1 else [])
    cfg = _cfg(
        vision,
        pins,
        vision_feature_layer=draw(st.sampled_from(layers)),
        multimodal_projector_bias=draw(st.booleans()),
    )
    cfg["text_config"]["hidden_size"] = 2 * draw(st.integers(1, 6))
    cfg["text_config"]["head_dim"] = 2
    size = (draw(st.integers(1, 4 * side)), draw(st.integers(1, 4 * side)))
    return cfg, size


@EXAMPLES
@given(_drawn())
def test_drawn_match_flop_counter_and_processor(case):
    """A refusal (no pinpoint keeps a pixel: select_best_resolution finds no fit) only where
    transformers fails too."""
    cfg, size = case
    try:
        flops, tokens = _ours(cfg, size)
    except InputError:
        with pytest.raises(Exception):  # noqa: B017 - transformers' own failure, whatever its type
            _theirs(cfg, size)
        return
    assert (flops, tokens) == _theirs(cfg, size)
    assert tokens == _processor_tokens(cfg, size)


# --------------------------------------------------------------------------- the published config


def _published() -> dict:
    return json.loads((FIXTURES / "configs" / "llava-v1.6-mistral-7b.json").read_text(encoding="utf-8"))


def _one_layer(cfg: dict) -> dict:
    text = dict(cfg["text_config"], num_hidden_layers=1, vocab_size=64, intermediate_size=8)
    return dict(cfg, text_config=text, image_token_index=63)


@pytest.mark.parametrize("size", [(672, 672), (480, 640), (300, 1200)])
def test_published_matches_flop_counter_on_meta(size):
    cfg = _published()
    flops, tokens = _ours(cfg, size)
    assert (flops, tokens) == _theirs(_one_layer(cfg), size, "meta")
    assert tokens == _processor_tokens(cfg, size)


def test_published_672_written_out():
    """672 x 672 px: the 672 x 672 pinpoint, 2 x 2 tiles of 336 px plus the base tile = 5 CLIP
    ViT-L/14 passes, each as LLaVA-1.5-7b's one image (d_model 4096 too; tests/
    test_vision_image_flops.py writes it out: 406,077,407,232). Tokens: the base tile's 24^2 =
    576, the 48 x 48 grid (no padding, square) with a newline per row: 576 + 48 x 49 = 2,928."""
    assert _ours(_published(), (672, 672)) == (5 * 406_077_407_232, 2_928)


# --------------------------------------------------------------------------- the command


def test_cli(capsys):
    path = FIXTURES / "configs" / "llava-v1.6-mistral-7b.json"
    argv = ["flops", str(path), "--part", "vision", "--image-size", "672", "--format", "json"]
    assert main(argv) == 0
    r = json.loads(capsys.readouterr().out)
    assert (r["image_size"], r["tokens_per_image"], r["per_image"]) == ([672, 672], 2_928, 5 * 406_077_407_232)
    assert main(["flops", str(path), "--part", "vision", "--image-size", "480x640"]) == 0
    assert "resized to fit 672 x 672 px" in capsys.readouterr().out
    assert main(["flops", str(path), "--part", "vision"]) == 2
    err = capsys.readouterr().err
    assert "give --image-size" in err and err.count("\n") == 1


def test_pinpoint_not_whole_tiles_is_refused(capsys, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(dict(_published(), image_grid_pinpoints=[[336, 500]])), encoding="utf-8")
    assert main(["flops", str(path), "--part", "vision", "--image-size", "336"]) == 2
    err = capsys.readouterr().err
    assert "not a whole number of 336 px tiles" in err and err.count("\n") == 1
