"""``symtrans flops --part vision`` of the vision-language wrappers (issue 21, Build item 2): the
FLOPs to encode one image through the vision tower, any merging and the projector, with the
tokens per image the language model receives.

Oracles:

* ``torch.utils.flop_counter.FlopCounterMode`` around transformers 5.x's eager
  ``get_image_features`` (``attn_implementation="eager"``) of the ``*ForConditionalGeneration``
  class (Llama 4: and its ``multi_modal_projector`` on the result, which its forward applies), on tiny configs and on hypothesis draws of their keys (real weights on the CPU, one
  image); the tokens per image are the rows of the features it returns for that image.
* The published configs (tests/fixtures/configs): the same FlopCounterMode run on the meta
  device, the language model cut to one layer and a small vocabulary (``get_image_features``
  never runs it; its width d_model stays, the projector's output) (Idefics3 / SmolVLM, which
  read their pixels: on the CPU, the tower cut to one layer of its published width); the tokens per image of the
  model cards (LLaVA-1.5 at 336 px: 576; Gemma 3: 256; SmolVLM at 512 px: 64 per tile), and
  LLaVA-1.5-7b's FLOPs written out by hand.
"""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, require

require("hypothesis")
torch = require("torch")
transformers = require("transformers")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from torch.fx.experimental import _config as fx_config  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from symtrans.catalog.hf_config import spec_from_config  # noqa: E402
from symtrans.catalog.models.vision_image import image_input  # noqa: E402
from symtrans.cli.main import main  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402
from symtrans.engine.vision_flops import vlm_image_flops  # noqa: E402

CLASSES = {
    "llava": "LlavaForConditionalGeneration",
    "qwen2_vl": "Qwen2VLForConditionalGeneration",
    "qwen2_5_vl": "Qwen2_5_VLForConditionalGeneration",
    "gemma3": "Gemma3ForConditionalGeneration",
    "paligemma": "PaliGemmaForConditionalGeneration",
    "idefics3": "Idefics3ForConditionalGeneration",
    "smolvlm": "SmolVLMForConditionalGeneration",
    "mistral3": "Mistral3ForConditionalGeneration",
    "qwen3_vl": "Qwen3VLForConditionalGeneration",
    "qwen3_vl_moe": "Qwen3VLMoeForConditionalGeneration",
    "llama4": "Llama4ForConditionalGeneration",
}
QWEN_TYPES = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe")
TEXT = dict(num_hidden_layers=1, intermediate_size=8, num_attention_heads=2, num_key_value_heads=1, vocab_size=40)
EXAMPLES = settings(
    max_examples=min(50, settings.default.max_examples), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _ours(cfg: dict, size: tuple[int, int] | None = None) -> tuple[int, int]:
    """symtrans's (FLOPs per image, tokens per image for the language model): the code under test."""
    spec, _ = spec_from_config(cfg, cfg["model_type"])
    r = vlm_image_flops(spec, image_input(cfg, spec, size))
    return exact(r.flops, spec.values), r.lm_tokens


def _pixels(cfg: dict, size: tuple[int, int], device: str = "cpu") -> dict:
    """One image of ``size`` px as the wrapper's processor gives it."""
    mt, vis = cfg["model_type"], cfg.get("vision_config", {})
    h, w = size
    if mt in QWEN_TYPES:
        p, t = vis.get("patch_size", 16 if mt.startswith("qwen3") else 14), vis.get("temporal_patch_size", 2)
        c = vis.get("in_channels", 3)
        rows, cols = h // p, w // p
        extra = {}
        if device == "meta":  # the rotary table's positions on the meta device (no values needed)
            extra["position_ids"] = torch.zeros(rows * cols, 2, dtype=torch.long, device=device)
            if mt.startswith("qwen3"):  # and Qwen3-VL's bilinear taps into its position table (4 a patch)
                extra["interp_indices"] = torch.zeros(rows * cols, 4, dtype=torch.long, device=device)
                extra["interp_weights"] = torch.zeros(rows * cols, 4, device=device)
        return dict(
            pixel_values=torch.ones(rows * cols, c * t * p * p, device=device),
            image_grid_thw=torch.tensor([[1, rows, cols]]),
            **extra,
        )
    c = vis.get("num_channels", 3)
    if mt == "mistral3":  # the image's own size beside its pixels
        return {"pixel_values": torch.ones(1, c, h, w, device=device), "image_sizes": torch.tensor([[h, w]])}
    if mt in ("idefics3", "smolvlm"):  # (batch, images, C, H, W)
        return {"pixel_values": torch.ones(1, 1, c, h, w, device=device)}
    return {"pixel_values": torch.ones(1, c, h, w, device=device)}


def _theirs(cfg: dict, size: tuple[int, int], device: str = "cpu") -> tuple[int, int]:
    """FlopCounterMode on the eager get_image_features of one image, and the rows of its features."""
    cls = getattr(transformers, CLASSES[cfg["model_type"]])
    config = cls.config_class(**{k: v for k, v in cfg.items() if k != "model_type"}, attn_implementation="eager")
    torch.manual_seed(0)
    with torch.device(device):
        model = cls(config).eval()
    counter = FlopCounterMode(display=False)
    # Idefics3 finds its real (non-padding) images with nonzero(): on the meta device, every one
    # (the image here is one real image)
    with counter, torch.no_grad(), fx_config.patch(meta_nonzero_assume_all_nonzero=True):
        got = model.get_image_features(**_pixels(cfg, size, device))
    out, flops = got.pooler_output, counter.get_total_flops()
    if cfg["model_type"] == "llama4":  # its forward applies the projector to what get_image_features returns
        with counter, torch.no_grad():  # (entering the counter again starts it from 0)
            out = model.multi_modal_projector(got.last_hidden_state)
        flops += counter.get_total_flops()
    rows = out[0].shape[0] if isinstance(out, (list, tuple)) else out.shape[-2]
    return flops, rows


def _side(cfg: dict) -> tuple[int, int]:
    s = cfg["vision_config"]["image_size"]
    return s, s


# --------------------------------------------------------------------------- tiny configs


def _vit(d=12, f=20, n=2, c=3, p=2, side=12, heads=3, **kw) -> dict:
    return dict(
        hidden_size=d,
        intermediate_size=f,
        num_hidden_layers=n,
        num_attention_heads=heads,
        num_channels=c,
        patch_size=p,
        image_size=side,
        **kw,
    )


TINY = [
    ("llava-default", dict(model_type="llava", vision_config=_vit(model_type="clip_vision_model"))),
    (
        "llava-full-two-layers",
        dict(
            model_type="llava",
            vision_config=_vit(model_type="clip_vision_model", side=13),
            vision_feature_select_strategy="full",
            vision_feature_layer=[-2, -1],
        ),
    ),
    ("gemma3", dict(model_type="gemma3", vision_config=_vit(model_type="siglip_vision_model"), mm_tokens_per_image=4)),
    (
        "gemma3-head-uneven-pool",
        dict(
            model_type="gemma3",
            vision_config=_vit(model_type="siglip_vision_model", side=14, vision_use_head=True),
            mm_tokens_per_image=4,
        ),
    ),
    ("paligemma", dict(model_type="paligemma", vision_config=_vit(model_type="siglip_vision_model"))),
    (
        "paligemma-head-projection",
        dict(
            model_type="paligemma",
            vision_config=_vit(model_type="siglip_vision_model", side=10, vision_use_head=True),
            projection_dim=7,
        ),
    ),
    ("idefics3", dict(model_type="idefics3", vision_config=_vit(side=16), scale_factor=2)),
    ("smolvlm", dict(model_type="smolvlm", vision_config=_vit(side=13), scale_factor=3)),
]
_TEXT_TYPE = {"llava": "llama", "gemma3": "gemma3_text", "paligemma": "gemma", "idefics3": "llama", "smolvlm": "llama"}
for _, _cfg in TINY:
    _cfg["text_config"] = dict(TEXT, model_type=_TEXT_TYPE[_cfg["model_type"]], hidden_size=16, head_dim=8)

QWEN3 = dict(depth=3, hidden_size=8, intermediate_size=12, num_heads=2, num_position_embeddings=16)
QWEN = [
    ("qwen2_vl", dict(depth=3, embed_dim=8, hidden_size=16, num_heads=2, mlp_ratio=2), (8, 12)),
    ("qwen2_vl", dict(depth=2, embed_dim=12, hidden_size=10, num_heads=3, mlp_ratio=3, in_channels=1), (12, 20)),
    ("qwen2_5_vl", dict(depth=3, hidden_size=8, intermediate_size=6, num_heads=2, window_size=8), (8, 12)),
    ("qwen2_5_vl", dict(depth=4, hidden_size=8, intermediate_size=6, num_heads=2, window_size=8), (16, 16)),
    (
        "qwen2_5_vl",
        dict(depth=3, hidden_size=8, intermediate_size=5, num_heads=2, window_size=12, fullatt_block_indexes=[0, 9]),
        (12, 20),
    ),
    ("qwen3_vl", dict(QWEN3, deepstack_visual_indexes=[0, 2]), (8, 12)),
    ("qwen3_vl", dict(QWEN3, deepstack_visual_indexes=[1, 1, 5]), (16, 16)),  # one merger runs
    ("qwen3_vl", dict(QWEN3, deepstack_visual_indexes=[]), (12, 20)),
]


def _qwen(mt: str, vision: dict, d_model: int = 16) -> dict:
    vision = dict(vision, patch_size=2, temporal_patch_size=2, spatial_merge_size=2)
    if mt != "qwen2_vl":
        vision.setdefault("out_hidden_size", d_model)
    text = dict(TEXT, hidden_size=d_model)
    return dict(model_type=mt, vision_config=vision, text_config=text)


PIXTRAL = dict(model_type="pixtral", hidden_size=16, intermediate_size=20, num_hidden_layers=2, num_attention_heads=2)
PIXTRAL.update(patch_size=2, image_size=16, num_channels=3, head_dim=8)
MISTRAL3 = dict(
    model_type="mistral3",
    vision_config=PIXTRAL,
    spatial_merge_size=2,
    vision_feature_layer=-1,
    text_config=dict(TEXT, model_type="mistral", hidden_size=16, head_dim=8),
)


@pytest.mark.parametrize("size", [(16, 16), (8, 12), (9, 13), (12, 4)])
def test_tiny_mistral3_matches_flop_counter(size):
    """Pixtral takes any size: the conv floors each side (9 x 13 px: 4 x 6 patches of 2), the
    merger joins 2 x 2 patches; 16 x 16 is the config's image_size, the default."""
    assert _ours(MISTRAL3, size) == _theirs(MISTRAL3, size)
    if size == (16, 16):
        assert _ours(MISTRAL3) == _ours(MISTRAL3, size)


def _llama4(d=8, heads=2, p=2, side=8, k=2, n=2, c=3, adapter=10, d_model=16) -> dict:
    vision = dict(hidden_size=d, num_attention_heads=heads, intermediate_size=d * k * k, num_hidden_layers=n)
    vision.update(num_channels=c, patch_size=p, image_size=side, pixel_shuffle_ratio=1 / k)
    vision.update(projector_input_dim=adapter, projector_output_dim=adapter, vision_output_dim=adapter)
    text = dict(TEXT, model_type="llama4_text", hidden_size=d_model, head_dim=8, intermediate_size_mlp=8)
    return dict(model_type="llama4", vision_config=vision, text_config=dict(text, num_local_experts=1))


@pytest.mark.parametrize(
    "kw", [{}, dict(heads=1, side=12, n=1, c=1), dict(side=13, adapter=6)], ids=["base", "12px", "13px"]
)
def test_tiny_llama4_matches_flop_counter(kw):
    """A tile of image_size px (13 px: 6 x 6 patches of 2, a pixel over); shuffle ratio 1/2."""
    cfg = _llama4(**kw)
    assert _ours(cfg) == _theirs(cfg, _side(cfg))


@st.composite
def _drawn_llama4(draw) -> dict:
    heads, k, p = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 3))
    rows = k * draw(st.integers(1, 3))
    return _llama4(
        d=heads * 4 * draw(st.integers(1, 2)),  # a head width divisible by 4: the 2-D rotary halves it twice
        heads=heads,
        p=p,
        side=rows * p + draw(st.integers(0, p - 1)),
        k=k,
        n=draw(st.integers(1, 2)),
        c=draw(st.integers(1, 3)),
        adapter=draw(st.integers(1, 12)),
        d_model=2 * draw(st.integers(1, 6)),
    )


@EXAMPLES
@given(_drawn_llama4())
def test_drawn_llama4_matches_flop_counter(cfg):
    assert _ours(cfg) == _theirs(cfg, _side(cfg))


@pytest.mark.parametrize(("name", "cfg"), TINY, ids=[n for n, _ in TINY])
def test_tiny_fixed_size_towers_match_flop_counter(name, cfg):
    assert _ours(cfg) == _theirs(cfg, _side(cfg))


@pytest.mark.parametrize(("mt", "vision", "size"), QWEN, ids=[f"{m}-{s[0]}x{s[1]}" for m, _, s in QWEN])
def test_tiny_qwen_towers_match_flop_counter(mt, vision, size):
    """Images of several shapes (sides multiples of patch 2 x merge 2 = 4 px); Qwen2.5-VL's
    windows (window_size 8 px: 2 x 2 merged tokens; 12 px: 3 x 3) cut the grid unevenly;
    Qwen3-VL's DeepStack mergers run once per distinct index within the layers."""
    cfg = _qwen(mt, vision)
    assert _ours(cfg, size) == _theirs(cfg, size)


# --------------------------------------------------------------------------- hypothesis draws


@st.composite
def _fixed(draw) -> dict:
    mt = draw(st.sampled_from(["llava", "gemma3", "paligemma", "idefics3", "smolvlm"]))
    heads = draw(st.integers(1, 3))
    p = draw(st.integers(1, 3))
    s = draw(st.integers(1, 3)) if mt in ("idefics3", "smolvlm") else 1
    rows = s * draw(st.integers(1, 4))
    vision = _vit(
        d=heads * draw(st.integers(1, 4)),
        f=draw(st.integers(1, 12)),
        n=draw(st.integers(1, 2)),
        c=draw(st.integers(1, 3)),
        p=p,
        side=rows * p + draw(st.integers(0, p - 1)),
        heads=heads,
    )
    d_model = 2 * draw(st.integers(1, 6))
    text = dict(TEXT, hidden_size=d_model, head_dim=2)
    cfg = dict(model_type=mt, vision_config=vision)
    if mt == "llava":
        vision["model_type"] = "clip_vision_model"
        text["model_type"] = "llama"
        cfg["vision_feature_select_strategy"] = draw(st.sampled_from(["default", "full"]))
        # indexes into the N_vis + 1 hidden states (0 is refused by transformers: no hidden states kept)
        layers = [-1, -2, 1, [-2, -1]] + ([[-3, -2, -1], [1, 2]] if vision["num_hidden_layers"] > 1 else [])
        cfg["vision_feature_layer"] = draw(st.sampled_from(layers))
        cfg["multimodal_projector_bias"] = draw(st.booleans())
    elif mt in ("gemma3", "paligemma"):
        vision["model_type"] = "siglip_vision_model"
        vision["vision_use_head"] = draw(st.booleans())
        text["model_type"] = "gemma3_text" if mt == "gemma3" else "gemma"
        if mt == "gemma3":
            cfg["mm_tokens_per_image"] = draw(st.integers(1, rows)) ** 2
        else:
            cfg["projection_dim"] = draw(st.sampled_from([d_model, draw(st.integers(1, 12))]))
    else:
        text["model_type"] = "llama"
        cfg["scale_factor"] = s
    cfg["text_config"] = text
    return cfg


@EXAMPLES
@given(_fixed())
def test_drawn_fixed_size_towers_match_flop_counter(cfg):
    assert _ours(cfg) == _theirs(cfg, _side(cfg))


@st.composite
def _drawn_qwen(draw) -> tuple[dict, tuple[int, int]]:
    mt = draw(st.sampled_from(["qwen2_vl", "qwen2_5_vl", "qwen3_vl"]))
    heads = draw(st.integers(1, 3))
    p, m = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    depth = draw(st.integers(1, 3))
    vision = dict(
        depth=depth,
        num_heads=heads,
        patch_size=p,
        temporal_patch_size=draw(st.integers(1, 2)),
        spatial_merge_size=m,
        in_channels=draw(st.integers(1, 3)),
    )
    d = heads * 4 * draw(st.integers(1, 2))  # a head width divisible by 4: the 2-D rotary halves it twice
    d_model = 2 * draw(st.integers(1, 6))
    if mt == "qwen2_vl":
        vision.update(embed_dim=d, mlp_ratio=draw(st.integers(1, 3)), hidden_size=d_model)
    elif mt == "qwen3_vl":
        vision.update(
            hidden_size=d,
            intermediate_size=draw(st.integers(1, 12)),
            out_hidden_size=d_model,
            num_position_embeddings=draw(st.integers(1, 5)) ** 2,
            deepstack_visual_indexes=draw(st.lists(st.integers(-1, 4), max_size=3)),
        )
    else:
        vision.update(
            hidden_size=d,
            intermediate_size=draw(st.integers(1, 12)),
            out_hidden_size=d_model,
            window_size=m * p * draw(st.integers(1, 3)) + draw(st.integers(0, m * p - 1)),
            fullatt_block_indexes=draw(st.lists(st.integers(-1, 4), max_size=3)),
        )
    size = (m * p * draw(st.integers(1, 4)), m * p * draw(st.integers(1, 4)))
    cfg = dict(model_type=mt, vision_config=vision, text_config=dict(TEXT, hidden_size=d_model))
    return cfg, size


@st.composite
def _drawn_mistral3(draw) -> tuple[dict, tuple[int, int]]:
    heads = draw(st.integers(1, 2))
    p, m = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    vision = dict(
        model_type="pixtral",
        hidden_size=heads * 8 * draw(st.integers(1, 2)),  # head_dim a multiple of 8: the 2-D rotary splits it
        intermediate_size=draw(st.integers(1, 12)),
        num_hidden_layers=draw(st.integers(1, 2)),
        num_attention_heads=heads,
        num_channels=draw(st.integers(1, 3)),
        patch_size=p,
        image_size=16,
    )
    vision["head_dim"] = vision["hidden_size"] // heads
    d_model = 2 * draw(st.integers(1, 6))
    cfg = dict(
        model_type="mistral3",
        vision_config=vision,
        spatial_merge_size=m,
        vision_feature_layer=draw(st.sampled_from([-1, -2])) if vision["num_hidden_layers"] > 1 else -1,
        multimodal_projector_bias=draw(st.booleans()),
        text_config=dict(TEXT, model_type="mistral", hidden_size=d_model, head_dim=2),
    )
    unit = p * m
    # at least two tokens for the language model: with one, get_image_features's final squeeze(0)
    # drops the token axis and its split fails (a transformers limit of one-token images)
    size = (draw(st.integers(unit, 4 * unit)), draw(st.integers(2 * unit, 4 * unit)))
    return cfg, size


@EXAMPLES
@given(_drawn_mistral3())
def test_drawn_mistral3_matches_flop_counter(case):
    cfg, size = case
    assert _ours(cfg, size) == _theirs(cfg, size)


@EXAMPLES
@given(_drawn_qwen())
def test_drawn_qwen_towers_match_flop_counter(case):
    cfg, size = case
    assert _ours(cfg, size) == _theirs(cfg, size)


# --------------------------------------------------------------------------- published configs


def _fixture(name: str) -> dict:
    return json.loads((FIXTURES / "configs" / f"{name}.json").read_text(encoding="utf-8"))


def _one_layer(cfg: dict) -> dict:
    """The published config with its language model cut to one layer, d_ff 8 and 64 rows: what
    get_image_features runs is unchanged (the projector's output width d_model stays)."""
    text = dict(cfg.get("text_config") or {})
    text.update(num_hidden_layers=1, vocab_size=64, intermediate_size=8)
    if "pad_token_id" in text:  # a row of the cut vocabulary
        text["pad_token_id"] = 0
    for key in ("layer_types", "max_window_layers", "no_rope_layers", "moe_layers"):
        text.pop(key, None)
    if "attn_temperature_tuning" in text:  # Meta wrote 4; 5.24's strict Llama4TextConfig takes a bool (hf_reference)
        text["attn_temperature_tuning"] = True
    return dict(cfg, text_config=text)


PUBLISHED = [
    # (fixture, image size, tokens per image for the language model: the model cards' figures)
    ("llava-1.5-7b", None, 576),  # LLaVA-1.5: 336 px, 24 x 24 patches of 14, class token dropped
    ("gemma-3-12b-it", None, 256),  # Gemma 3 tech report §2.1: 896 px -> 256 soft tokens
    ("colpali-v1.2-merged-paligemma-448", None, 1024),  # PaliGemma-448: 32 x 32 = 1024 image tokens
    ("smolvlm-256m-instruct", None, 64),  # SmolVLM: 512 px tiles, 1024 patches shuffled by 4 -> 64
    ("smolvlm2-500m-video-instruct", None, 64),
    ("qwen2-vl-7b", (448, 672), 384),  # (448 / 28) x (672 / 28) = 16 x 24 merged tokens
    ("qwen2.5-vl-7b", (448, 672), 384),
    ("qwen3-vl-4b", (448, 672), 294),  # (448 / 32) x (672 / 32) = 14 x 21 merged tokens of 2 x 2 patches of 16
    ("qwen3-vl-30b-a3b", (512, 512), 256),
    ("mistral-small-3.1-24b", None, 3025),  # 1540 px: 110 x 110 patches of 14, merged 2 x 2: 55 x 55
    ("llama-4-scout-17b-16e", None, 144),  # a 336 px tile: 24 x 24 patches of 14, pixel shuffle 0.5: 12 x 12
]


@pytest.mark.parametrize(("name", "size", "tokens"), PUBLISHED, ids=[n for n, _, _ in PUBLISHED])
def test_published_configs_match_flop_counter_on_meta(name, size, tokens):
    cfg = _fixture(name)
    flops, lm = _ours(cfg, size)
    assert lm == tokens
    if size is None:
        vis = cfg.get("vision_config") or {}
        size = (vis.get("image_size", 224),) * 2
    if cfg["model_type"] not in ("idefics3", "smolvlm", "mistral3"):
        assert (flops, lm) == _theirs(_one_layer(cfg), size, "meta")
        return
    # Idefics3's get_image_features reads its pixels (which images are padding) and Mistral 3's
    # its image sizes as a tensor on the features' device, so they run on real tensors on the
    # CPU: with one vision layer of the published width (every layer is the same; the draws above
    # vary the depth), both sides counting that config (Mistral 3 at 224 px, which it takes)
    cut = dict(cfg, vision_config=dict(cfg["vision_config"], num_hidden_layers=1))
    if cfg["model_type"] == "mistral3":
        size = (224, 224)
    assert _ours(cut, size) == _theirs(_one_layer(cut), size)


def test_llava_1_5_7b_written_out():
    """CLIP ViT-L/14 at 336 px (d 1024, d_ff 4096, 24 layers): 576 patches + the class token =
    577 tokens; patch conv 2*576*3*14^2*1024; per layer q, k, v, out 8*577*1024^2, scores and
    values 4*577^2*1024, MLP 4*577*1024*4096; projector on the 576 patch tokens (the class token
    dropped, vision_feature_layer -2: n_feat 1) 2*576*1024*4096 + 2*576*4096^2."""
    T = 577
    layer = 8 * T * 1024**2 + 4 * T**2 * 1024 + 4 * T * 1024 * 4096
    by_hand = 2 * 576 * 3 * 14**2 * 1024 + 24 * layer + 2 * 576 * 1024 * 4096 + 2 * 576 * 4096**2
    assert _ours(_fixture("llava-1.5-7b")) == (by_hand, 576) == (406_077_407_232, 576)


# --------------------------------------------------------------------------- the command


def test_cli_json_and_text(capsys):
    path = FIXTURES / "configs" / "llava-1.5-7b.json"
    assert main(["flops", str(path), "--part", "vision", "--batch", "2", "--format", "json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert (r["image_size"], r["tokens_per_image"], r["tower_tokens_per_image"]) == ([336, 336], 576, 577)
    assert (r["per_image"], r["total"]) == (406_077_407_232, 2 * 406_077_407_232)
    assert main(["flops", str(path), "--part", "vision"]) == 0
    out = capsys.readouterr().out
    assert "406,077,407,232 for 1 image(s) of 336 x 336 px" in out
    assert "576 tokens per image for the language model; 577 tokens in the tower's layers" in out
    qwen = FIXTURES / "configs" / "qwen2-vl-7b.json"
    assert main(["flops", str(qwen), "--part", "vision", "--image-size", "448x672", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["tokens_per_image"] == 384


@pytest.mark.parametrize(
    ("name", "argv", "message"),
    [
        ("qwen2-vl-7b", [], "give --image-size"),
        ("qwen2.5-vl-7b", ["--image-size", "450"], "multiples of patch_size x spatial_merge_size = 28 px"),
        ("llava-1.5-7b", ["--image-size", "448"], "takes 336 x 336 px images only"),
        ("llava-1.5-7b", ["--image-size", "3e2"], "--image-size takes pixels as S or HxW"),
        # a well-formed size that is too large is named so, not "takes pixels as S or HxW"
        ("qwen2-vl-7b", ["--image-size", "28x99999999"], "each side must be at most 999,999 pixels"),
        ("llava-v1.6-mistral-7b", [], "llava_next tiles each image by its own size"),
        ("qwen3-vl-4b", [], "give --image-size"),
        ("llama-4-scout-17b-16e", ["--image-size", "448"], "Llama 4's vision tower (one tile) takes 336 x 336"),
    ],
)
def test_refusals_are_one_line(capsys, name, argv, message):
    path = FIXTURES / "configs" / f"{name}.json"
    assert main(["flops", str(path), "--part", "vision", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_image_size_needs_part_vision(capsys):
    path = FIXTURES / "configs" / "llava-1.5-7b.json"
    assert main(["flops", str(path), "--image-size", "336"]) == 2
    assert "--image-size applies to --part vision" in capsys.readouterr().err


def test_feature_layer_outside_the_tower_is_refused(capsys, tmp_path):
    """LLaVA-1.5-7b's 24 CLIP layers give 25 hidden states (indexes -25 .. 24): transformers'
    get_image_features fails on index 25 (IndexError), so symtrans refuses it."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(dict(_fixture("llava-1.5-7b"), vision_feature_layer=25)), encoding="utf-8")
    assert main(["flops", str(path), "--part", "vision"]) == 2
    assert "vision_feature_layer 25 is outside the 25 hidden states of the 24-layer tower" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("vision", "wrapper", "tower"),
    [
        ("clip", "LlavaConfig", "CLIPVisionConfig"),
        ("gemma3", "Gemma3Config", "SiglipVisionConfig"),
        ("paligemma", "PaliGemmaConfig", "SiglipVisionConfig"),
        ("idefics3", "Idefics3Config", "Idefics3VisionConfig"),
        ("llama4", "Llama4Config", "Llama4VisionConfig"),
        ("mistral3", "Mistral3Config", "PixtralVisionConfig"),
    ],
)
def test_default_image_side_is_transformers_default(vision, wrapper, tower):
    """One table of default sides: without vision_config, the wrapper's default tower's
    image_size (LlavaConfig: 336); with a vision_config lacking image_size, the tower config
    class's (CLIPVisionConfig: 224).  Oracle: transformers' own config classes."""
    from types import SimpleNamespace

    from symtrans.catalog.models.vision_image import config_side

    spec = SimpleNamespace(vision=vision)
    assert config_side({}, spec) == getattr(transformers, wrapper)().vision_config.image_size
    assert config_side({"vision_config": {}}, spec) == getattr(transformers, tower)().image_size


@pytest.mark.parametrize("bad", ["clip", [336], 336])
def test_a_vision_config_that_is_not_an_object_is_refused(capsys, tmp_path, bad):
    # was read as if absent (LLaVA's default 336 px tower): refused in one line instead
    path = tmp_path / "config.json"
    cfg = dict(_fixture("llava-1.5-7b"))
    from symtrans.catalog.models.vision_image import ConfigError, image_input

    spec, _ = spec_from_config(cfg, "llava-1.5-7b.json")
    with pytest.raises(ConfigError, match="vision_config must be an object"):
        image_input(dict(cfg, vision_config=bad), spec, None)
    path.write_text(json.dumps(dict(cfg, vision_config=bad)), encoding="utf-8")
    assert main(["flops", str(path), "--part", "vision"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
