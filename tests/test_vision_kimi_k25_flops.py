"""``symtrans flops --part vision`` of Kimi K2.5 (kimi_k25, issue 21, Build item 2): the MoonViT
tower on an image of rows x cols patches (one attention span per image), its m x m patch
merge and the projector (in_proj, out_proj).

Oracles (never symtrans's own output):

* ``torch.utils.flop_counter.FlopCounterMode`` around transformers 5.x's eager
  ``Kimi_K25ForConditionalGeneration.get_image_features`` of one image (real weights on the
  CPU), tiny configs at several image sizes and hypothesis draws; the tokens per image are the
  rows of the features it returns.
* The published kimi-k2.5 config (tests/fixtures/configs): the same call with the language
  model on the meta device (``get_image_features`` never runs it) and the tower, cut to one
  layer of its published width, and the projector on the CPU (both sides count that cut
  config); and the 448 x 448 px figure of the full tower written out by hand.
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
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from symtrans.catalog.hf_config import spec_from_config  # noqa: E402
from symtrans.catalog.models.vision_image import image_input  # noqa: E402
from symtrans.cli.main import main  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402
from symtrans.engine.vision_flops import vlm_image_flops  # noqa: E402

EXAMPLES = settings(
    max_examples=min(50, settings.default.max_examples), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# A tiny DeepSeek-V3 text model (its width d_model is the projector's output)
TEXT = dict(model_type="deepseek_v3", hidden_size=16, num_attention_heads=2, num_key_value_heads=2)
TEXT.update(num_hidden_layers=1, intermediate_size=8, moe_intermediate_size=4, n_routed_experts=2)
TEXT.update(n_shared_experts=1, num_experts_per_tok=1, first_k_dense_replace=1, n_group=1, topk_group=1)
TEXT.update(q_lora_rank=4, kv_lora_rank=4, qk_rope_head_dim=2, qk_nope_head_dim=2, v_head_dim=2, vocab_size=20)


def _cfg(d=8, f=6, n=2, heads=2, p=2, m=2, pos=(3, 3), d_model=16) -> dict:
    vision = dict(hidden_size=d, intermediate_size=f, num_hidden_layers=n, num_attention_heads=heads, patch_size=p)
    vision.update(pos_emb_height=pos[0], pos_emb_width=pos[1], merge_kernel_size=[m, m])
    text = dict(TEXT, hidden_size=d_model)
    return dict(model_type="kimi_k25", vision_config=vision, text_config=text, projection_hidden_size=d)


def _ours(cfg: dict, size: tuple[int, int]) -> tuple[int, int]:
    """symtrans's (FLOPs per image, tokens per image for the language model): the code under test."""
    spec, _ = spec_from_config(cfg, cfg["model_type"])
    r = vlm_image_flops(spec, image_input(cfg, spec, size))
    return exact(r.flops, spec.values), r.lm_tokens


def _config(cfg: dict):
    cls = transformers.Kimi_K25ForConditionalGeneration
    return cls, cls.config_class(**{k: v for k, v in cfg.items() if k != "model_type"}, attn_implementation="eager")


def _theirs(cfg: dict, size: tuple[int, int], model=None) -> tuple[int, int]:
    """FlopCounterMode on the eager get_image_features of one image (its patches as the processor
    flattens them: (rows cols, 3, p, p), grid_thw (1, rows, cols)), and the rows it returns."""
    if model is None:
        cls, config = _config(cfg)
        torch.manual_seed(0)
        model = cls(config).eval()
    p = model.config.vision_config.patch_size
    rows, cols = size[0] // p, size[1] // p
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        out = model.get_image_features(
            pixel_values=torch.ones(rows * cols, 3, p, p), image_grid_thw=torch.tensor([[1, rows, cols]])
        )
    return counter.get_total_flops(), out.pooler_output[0].shape[0]


# --------------------------------------------------------------------------- tiny configs

TINY = [
    (dict(), (8, 12)),
    (dict(), (4, 4)),  # one merged token
    (dict(), (16, 8)),
    (dict(m=1, heads=1, pos=(2, 5)), (6, 10)),  # no merging; a non-square position table
    (dict(m=3, p=1, d=16, f=5, n=1), (9, 6)),
]


@pytest.mark.parametrize(("kw", "size"), TINY, ids=[f"{i}-{h}x{w}" for i, (_, (h, w)) in enumerate(TINY)])
def test_tiny_matches_flop_counter(kw, size):
    cfg = _cfg(**kw)
    assert _ours(cfg, size) == _theirs(cfg, size)


@st.composite
def _drawn(draw) -> tuple[dict, tuple[int, int]]:
    heads, p, m = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    cfg = _cfg(
        d=heads * 4 * draw(st.integers(1, 2)),  # a head width divisible by 4: the 2-D rotary halves it twice
        f=draw(st.integers(1, 12)),
        n=draw(st.integers(1, 2)),
        heads=heads,
        p=p,
        m=m,
        pos=(draw(st.integers(1, 3)), draw(st.integers(3, 4))),  # height <= width (test_tall_position_table)
        d_model=2 * draw(st.integers(2, 8)),
    )
    unit = p * m
    return cfg, (unit * draw(st.integers(1, 4)), unit * draw(st.integers(1, 4)))


@EXAMPLES
@given(_drawn())
def test_drawn_match_flop_counter(case):
    cfg, size = case
    assert _ours(cfg, size) == _theirs(cfg, size)


def test_tall_position_table_fails_in_transformers_and_is_refused(capsys, tmp_path):
    """transformers resamples a pos_emb_height-sided square of the table (num_grid_per_side):
    a table taller than wide is indexed past its rows; symtrans refuses in one line."""
    cfg = _cfg(pos=(3, 2))
    with pytest.raises(RuntimeError):
        _theirs(cfg, (4, 4))
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    assert main(["flops", str(path), "--part", "vision", "--image-size", "4"]) == 2
    err = capsys.readouterr().err
    assert "pos_emb_height 3 exceeds pos_emb_width 2" in err and err.count("\n") == 1


# --------------------------------------------------------------------------- the published config


def _published() -> dict:
    return json.loads((FIXTURES / "configs" / "kimi-k2.5.json").read_text(encoding="utf-8"))


def test_published_one_layer_matches_flop_counter():
    """kimi-k2.5 with its tower cut to one layer (transformers 5.x builds the tower from
    Kimi_K25VisionConfig's fields: the published vt_num_hidden_layers 27 is its default, so the
    cut is num_hidden_layers 1 on both sides); 448 x 672 px: 32 x 48 patches of 14."""
    cfg = _published()
    cut = dict(cfg, vision_config=dict(cfg["vision_config"], num_hidden_layers=1, vt_num_hidden_layers=1))
    cut["text_config"] = dict(cfg["text_config"], num_hidden_layers=1)  # on the meta device: never run
    cut.pop("quantization_config")
    cls, config = _config(cut)
    with torch.device("meta"):
        model = cls(config).eval()
    vision_cls = type(model.model.vision_tower)
    model.model.vision_tower = vision_cls._from_config(config.vision_config, attn_implementation="eager").eval()
    model.model.mm_projector = type(model.model.mm_projector)(config).eval()
    flops, tokens = _ours(cut, (448, 672))
    assert (flops, tokens) == _theirs(cut, (448, 672), model)
    assert tokens == (448 // 28) * (672 // 28) == 384


def test_published_448_written_out():
    """MoonViT at 448 x 448 px (d 1152, d_ff 4304, 27 layers, patch 14): 32 x 32 = 1024 patches;
    patch conv 2*1024*3*14^2*1152; per layer q, k, v, proj 8*1024*1152^2, scores and values
    4*1024^2*1152, MLP 4*1024*1152*4304; merge 2 x 2: 256 tokens, in_proj 2*256*4608^2, out_proj
    2*256*4608*7168."""
    P, d = 1024, 1152
    layer = 8 * P * d**2 + 4 * P**2 * d + 4 * P * d * 4304
    by_hand = 2 * P * 3 * 14**2 * d + 27 * layer + 2 * 256 * 4608**2 + 2 * 256 * 4608 * 7168
    assert _ours(_published(), (448, 448)) == (by_hand, 256)


# --------------------------------------------------------------------------- the command


def test_cli(capsys):
    path = FIXTURES / "configs" / "kimi-k2.5.json"
    assert main(["flops", str(path), "--part", "vision", "--image-size", "448", "--format", "json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert (r["image_size"], r["tokens_per_image"], r["tower_tokens_per_image"]) == ([448, 448], 256, 1024)
    for argv, message in (([], "give --image-size"), (["--image-size", "450"], "multiples of")):
        assert main(["flops", str(path), "--part", "vision", *argv]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1
