"""``symtrans flops --part vision`` of Gemma 4 (gemma4, issue 21, Build item 2): the processor's
resize of one image to its soft-token budget, the vision tower on the padded budget of
max_soft_tokens x pooling_kernel_size^2 patches, the pooler's averaging matmul and
``embed_vision`` on the image's soft tokens.

Oracles (never symtrans's own output):

* ``torch.utils.flop_counter.FlopCounterMode`` around transformers 5.24's eager
  ``Gemma4ForConditionalGeneration.get_image_features`` (``attn_implementation="eager"``, real
  weights on the CPU) of one image as transformers' own ``Gemma4ImageProcessorPil`` gives it
  (resized, patchified, padded: ``pixel_values`` and ``image_position_ids``), tiny configs at
  several image sizes and hypothesis draws of the vision keys; the tokens per image are the
  rows ``get_image_features`` returns for it, and the processor's ``num_soft_tokens_per_image``.
* The published gemma-4-31b-it config (tests/fixtures/gemma4): the same call with the language
  model on the meta device (``get_image_features`` never runs it) and the vision tower, cut to
  one layer of its published width, and ``embed_vision`` on the CPU (both sides count that cut
  config); and the full 27-layer figure at 480 x 640 px written out by hand.
"""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, require

require("hypothesis")
require("PIL")
np = require("numpy")
torch = require("torch")
transformers = require("transformers")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402
from transformers.models.gemma4.image_processing_pil_gemma4 import Gemma4ImageProcessorPil  # noqa: E402

from symtrans.catalog.hf_config import spec_from_config  # noqa: E402
from symtrans.catalog.models.vision_image import image_input  # noqa: E402
from symtrans.cli.main import main  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402
from symtrans.engine.vision_flops import vlm_image_flops  # noqa: E402

EXAMPLES = settings(
    max_examples=min(50, settings.default.max_examples), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# A tiny Gemma 4 text model (its width d_model is embed_vision's output; get_image_features never runs it)
TEXT = dict(model_type="gemma4_text", num_attention_heads=2, num_key_value_heads=1, head_dim=4, global_head_dim=4)
TEXT.update(num_hidden_layers=1, intermediate_size=8, vocab_size=40, hidden_size_per_layer_input=0)
PUBLISHED = FIXTURES / "gemma4" / "gemma-4-31b-it.json"


def _cfg(d=8, f=6, n=1, heads=2, kv=1, dk=4, p=2, k=3, pos=200, d_model=16, soft=70, **vision) -> dict:
    vision.update(model_type="gemma4_vision", hidden_size=d, intermediate_size=f, num_hidden_layers=n)
    vision.update(num_attention_heads=heads, num_key_value_heads=kv, head_dim=dk, patch_size=p)
    vision.update(pooling_kernel_size=k, position_embedding_size=pos)
    cfg = dict(model_type="gemma4", text_config=dict(TEXT, hidden_size=d_model), vision_config=vision)
    cfg["vision_soft_tokens_per_image"] = soft
    return cfg


def _ours(cfg: dict, size: tuple[int, int]) -> tuple[int, int]:
    """symtrans's (FLOPs per image, tokens per image for the language model): the code under test."""
    spec, _ = spec_from_config(cfg, cfg["model_type"])
    r = vlm_image_flops(spec, image_input(cfg, spec, size))
    return exact(r.flops, spec.values), r.lm_tokens


def _model(cfg: dict):
    transformers.logging.set_verbosity_error()
    keys = {k: v for k, v in cfg.items() if k not in ("model_type", "vision_soft_tokens_per_image")}
    config = transformers.Gemma4Config(**keys, attn_implementation="eager")
    torch.manual_seed(0)
    return transformers.Gemma4ForConditionalGeneration(config).eval()


def _theirs(cfg: dict, size: tuple[int, int], model=None) -> tuple[int, int]:
    """FlopCounterMode on the eager get_image_features of one image of ``size`` px as
    Gemma4ImageProcessorPil gives it, and the rows it returns (the processor's count too)."""
    model = model or _model(cfg)
    vis = model.config.vision_config
    proc = Gemma4ImageProcessorPil(
        patch_size=vis.patch_size,
        pooling_kernel_size=vis.pooling_kernel_size,
        max_soft_tokens=cfg.get("vision_soft_tokens_per_image", 280),
    )
    image = np.zeros((*size, 3), dtype=np.uint8)
    batch = proc(images=[image], return_tensors="pt", input_data_format="channels_last")
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        out = model.get_image_features(batch["pixel_values"], batch["image_position_ids"])
    rows = out.pooler_output[0].shape[0]
    assert rows == int(batch["num_soft_tokens_per_image"][0])
    return counter.get_total_flops(), rows


# --------------------------------------------------------------------------- tiny configs

TINY = [
    (dict(), (40, 60)),
    (dict(), (60, 40)),
    (dict(), (7, 7)),  # upscaled to the budget
    (dict(k=2, soft=140, n=2, heads=4, kv=2, dk=8), (300, 10)),  # a long thin image: one pooled row
    (dict(p=3, d=12, f=5, heads=3, kv=3, d_model=10), (100, 100)),
    (dict(p=1, k=3, pos=123), (500, 20)),  # 123 x 3 patches: the position table's last row used
]


@pytest.mark.parametrize(("kw", "size"), TINY, ids=[f"{i}-{h}x{w}" for i, (_, (h, w)) in enumerate(TINY)])
def test_tiny_matches_flop_counter(kw, size):
    cfg = _cfg(**kw)
    assert _ours(cfg, size) == _theirs(cfg, size)


def test_tower_flops_do_not_depend_on_the_image_but_its_tokens_do():
    """The processor pads every image to the budget: only embed_vision's 2 t d_vis d_model
    changes with the image's t soft tokens (d_vis 8, d_model 16: 256 FLOPs a token)."""
    cfg = _cfg()
    (a, ta), (b, tb) = _theirs(cfg, (40, 60)), _theirs(cfg, (7, 7))
    assert ta != tb and a - b == 2 * (ta - tb) * 8 * 16
    assert _ours(cfg, (40, 60))[0] - _ours(cfg, (7, 7))[0] == a - b


@st.composite
def _drawn(draw) -> tuple[dict, tuple[int, int]]:
    kv = draw(st.integers(1, 3))
    cfg = _cfg(
        d=draw(st.integers(1, 12)),
        f=draw(st.integers(1, 9)),
        n=draw(st.integers(1, 2)),
        heads=kv * draw(st.integers(1, 2)),
        kv=kv,
        dk=4 * draw(st.integers(1, 3)),  # the 2-D rotary splits the head width in 4
        p=draw(st.integers(1, 3)),
        k=draw(st.integers(2, 3)),  # kernel 1 fails in transformers (test_kernel_one_is_refused)
        pos=draw(st.integers(1, 160)),
        d_model=2 * draw(st.integers(1, 8)),
        soft=draw(st.sampled_from([70, 140])),
        standardize=draw(st.booleans()),
        use_clipped_linears=draw(st.booleans()),
    )
    return cfg, (draw(st.integers(1, 400)), draw(st.integers(1, 400)))


@EXAMPLES
@given(_drawn())
def test_drawn_match_flop_counter(case):
    """Draws of the vision keys; a patch grid side past position_embedding_size fails in
    transformers (the table's lookup) and is refused by symtrans."""
    from symtrans.base.errors import InputError

    cfg, size = case
    try:
        ours = _ours(cfg, size)
    except InputError as e:
        assert "position_embedding_size" in str(e)
        with pytest.raises(IndexError):
            _theirs(cfg, size)
        return
    assert ours == _theirs(cfg, size)


def test_kernel_one_is_refused(capsys, tmp_path):
    """pooling_kernel_size 1: Gemma4VisionPooler returns its padding mask (True = padding) as the
    valid-token mask, and get_image_features's split fails; symtrans refuses in one line."""
    cfg = _cfg(k=1)
    with pytest.raises(RuntimeError, match="split_with_sizes"):
        _theirs(cfg, (40, 60))
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    assert main(["flops", str(path), "--part", "vision", "--image-size", "40x60"]) == 2
    err = capsys.readouterr().err
    assert "pooling_kernel_size 1" in err and err.count("\n") == 1


def test_position_table_overflow_is_refused(capsys, tmp_path):
    cfg = _cfg(p=1, k=3, pos=122)  # 500 x 20 px: 123 x 3 patches, one row past the table
    with pytest.raises(IndexError):
        _theirs(cfg, (500, 20))
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    assert main(["flops", str(path), "--part", "vision", "--image-size", "500x20"]) == 2
    err = capsys.readouterr().err
    assert "over position_embedding_size 122" in err and err.count("\n") == 1


# --------------------------------------------------------------------------- the published config


def _published() -> dict:
    return json.loads(PUBLISHED.read_text(encoding="utf-8"))


def test_published_one_layer_matches_flop_counter():
    """gemma-4-31b-it with its tower cut to one layer of its published width (d 1152, 16 heads of
    72, d_ff 4304, patch 16, kernel 3, budget 280: 2520 patches); 480 x 640 px resizes to
    672 x 912 px: 42 x 57 patches, 14 x 19 = 266 soft tokens."""
    cfg = _published()
    cut = dict(cfg, vision_config=dict(cfg["vision_config"], num_hidden_layers=1))
    cut["text_config"] = dict(cfg["text_config"], num_hidden_layers=1, layer_types=["full_attention"])
    cut["audio_config"] = None
    transformers.logging.set_verbosity_error()
    keys = {k: v for k, v in cut.items() if k not in ("model_type", "vision_soft_tokens_per_image")}
    config = transformers.Gemma4Config(**keys, attn_implementation="eager")
    with torch.device("meta"):
        model = transformers.Gemma4ForConditionalGeneration(config).eval()
    vision_cls, embed_cls = type(model.model.vision_tower), type(model.model.embed_vision)
    model.model.vision_tower = vision_cls._from_config(config.vision_config, attn_implementation="eager").float().eval()
    model.model.embed_vision = embed_cls(config.vision_config, config.text_config).float().eval()
    flops, tokens = _ours(cut, (480, 640))
    assert (flops, tokens) == _theirs(cut, (480, 640), model)
    assert tokens == (672 // 48) * (912 // 48) == 266


def test_published_written_out():
    """The full tower at 480 x 640 px (d 1152, d_ff 4304, 27 layers, 16 heads of 72 for q, k and
    v, patch 16, kernel 3, budget 280): T = 280 x 3^2 = 2520 patches (2394 real, padded);
    input_proj 2*2520*(3*16^2)*1152; per layer q, k, v, o 8*2520*1152^2 (16 x 72 = 1152),
    scores and values 4*2520^2*1152, GeGLU 6*2520*1152*4304; the pooler 2*280*2520*1152;
    embed_vision on 266 soft tokens 2*266*1152*5376 (d_model 5376)."""
    T, d = 2520, 1152
    layer = 8 * T * d**2 + 4 * T**2 * d + 6 * T * d * 4304
    by_hand = 2 * T * 768 * d + 27 * layer + 2 * 280 * T * d + 2 * 266 * d * 5376
    assert _ours(_published(), (480, 640)) == (by_hand, 266) == (3_545_978_978_304, 266)


# --------------------------------------------------------------------------- the command


def test_cli(capsys, tmp_path):
    assert main(["flops", str(PUBLISHED), "--part", "vision", "--image-size", "480x640", "--format", "json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert (r["image_size"], r["tokens_per_image"], r["tower_tokens_per_image"]) == ([480, 640], 266, 2520)
    assert (r["patches_per_image"], r["per_image"]) == (42 * 57, 3_545_978_978_304)
    assert main(["flops", str(PUBLISHED), "--part", "vision"]) == 2
    err = capsys.readouterr().err
    assert "give --image-size" in err and err.count("\n") == 1
    path = tmp_path / "config.json"
    path.write_text(json.dumps(dict(_published(), vision_soft_tokens_per_image=300)), encoding="utf-8")
    assert main(["flops", str(path), "--part", "vision", "--image-size", "480"]) == 2
    err = capsys.readouterr().err
    assert "vision_soft_tokens_per_image must be one of 70, 140, 280, 560, 1120" in err and err.count("\n") == 1


def test_help_names_gemma4(capsys):
    assert main(["flops", "--help"]) == 0
    assert "(Gemma 4)" in " ".join(capsys.readouterr().out.split())
