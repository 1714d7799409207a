"""Gemma 4's language model (``gemma4_text``, Gemma4ForCausalLM) on published configs.

The configs are tests/fixtures/gemma4/*.json (sources in tests/fixtures/configs/SOURCES.md):
Gemma 4 31B-it as transformers 5.7 printed it, a partial Gemma 4 E2B text config from a
public repository's test, and the E4B's published audio_config.  The first two are ``gemma4``
wrappers; their ``text_config`` is counted here, and the wrappers whole (vision and audio towers)
below.
Oracles, none of them symtrans's own output:

* transformers 5.24's Gemma4ForCausalLM built from the text config on the meta device;
* the 31B count written out as arithmetic from the printed module tree of the source
  (sliding and full layers' q/k/v/o shapes);
* the same configs re-saved by transformers (``to_dict``, which writes ``per_layer_config`` in
  place of ``global_head_dim`` / ``num_global_key_value_heads``) count the same;
* KV cache per token written out from the layer types and num_kv_shared_layers (the shared
  layers cache nothing); tests/test_kv_cache_real.py checks the same rule against a real
  forward's cache on the tiny audit model.

The random draws (hypothesis), the key audit and FlopCounterMode (forward, training, one decode
step) run in tests/test_model_types.py, as for every type.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import require

torch = require("torch")
transformers = require("transformers")

from symtrans.accounting.memory import kv_cache_bytes  # noqa: E402
from symtrans.catalog.hf_config import spec_from_config  # noqa: E402
from symtrans.engine.architectures import build  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "gemma4"

# Gemma4ForCausalLM on the meta device (transformers 5.24), sum(p.numel() for p in parameters())
PUBLISHED = {
    "gemma-4-31b-it": 30_697_345_280,
    "gemma-4-e2b-partial": 4_062_338_304,
}


def _text(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())["text_config"]


def _meta(cfg: dict) -> int:
    transformers.logging.set_verbosity_error()
    config = transformers.Gemma4TextConfig(**{k: v for k, v in cfg.items() if k != "model_type"})
    with torch.device("meta"):
        model = transformers.Gemma4ForCausalLM(config)
    return sum(p.numel() for p in model.parameters())


def _ours(cfg: dict) -> int:
    spec, _ = spec_from_config({**cfg, "model_type": "gemma4_text"}, "test")
    return exact(build(spec).params, spec.values)


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_text_configs_match_the_meta_device(name):
    cfg = _text(name)
    assert _meta(cfg) == PUBLISHED[name]
    assert _ours(cfg) == PUBLISHED[name]


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_resaved_text_configs_count_the_same(name):
    """transformers' to_dict writes per_layer_config (the full layers' head_dim 512 and, with
    attention_k_eq_v, num_key_value_heads) and drops global_head_dim: read the same way."""
    cfg = _text(name)
    saved = transformers.Gemma4TextConfig(**{k: v for k, v in cfg.items() if k != "model_type"}).to_dict()
    assert "per_layer_config" in saved and "global_head_dim" not in saved
    assert _ours(saved) == PUBLISHED[name]


def test_31b_text_by_hand():
    """Gemma 4 31B-it's language model from its printed module tree: d_model 5376, V 262144 (tied),
    50 sliding layers (q 5376 -> 32 x 256, k and v 5376 -> 16 x 256, o back) and 10 full layers
    (q 5376 -> 32 x 512, k 5376 -> 4 x 512 and no v_proj: K = V), QK norms of the head width,
    a GeGLU MLP of 21504 and four d_model norms a layer, the final norm; no per-layer inputs."""
    d, f = 5376, 21504
    mlp, norms = 3 * d * f, 4 * d
    sliding = d * 8192 + 2 * d * 4096 + 8192 * d + 2 * 256 + mlp + norms
    full = d * 16384 + d * 2048 + 16384 * d + 2 * 512 + mlp + norms
    total = 262144 * d + 50 * sliding + 10 * full + d
    assert total == 30_697_345_280 == _ours(_text("gemma-4-31b-it"))


def test_e2b_kv_cache_skips_the_shared_layers():
    """E2B (partial config): 35 layers, every 5th full; the last 20 (num_kv_shared_layers) reuse
    layers 13 and 14's keys and values.  Caching layers: 0-14, 12 sliding (K and V, 1 head of 256,
    the last 512 positions) and 3 full (1 head of 512).  bf16: 2 bytes."""
    spec, _ = spec_from_config({**_text("gemma-4-e2b-partial"), "model_type": "gemma4_text"}, "test")
    per_sliding, per_full = 2 * 1 * 256, 2 * 1 * 512
    for seq in (100, 4096):
        expected = 2 * (12 * per_sliding * min(seq, 512) + 3 * per_full * seq)
        assert exact(kv_cache_bytes(spec, 1, seq, "bf16"), spec.values) == expected


def test_31b_kv_cache_counts_keys_twice_where_k_is_v():
    """31B: 50 sliding layers cache K and V of 16 heads of 256 (window 1024); 10 full layers have
    no v_proj but the cache keeps the keys as both keys and values (4 heads of 512)."""
    spec, _ = spec_from_config({**_text("gemma-4-31b-it"), "model_type": "gemma4_text"}, "test")
    seq = 8192
    expected = 2 * (50 * 2 * 16 * 256 * 1024 + 10 * 2 * 4 * 512 * seq)
    assert exact(kv_cache_bytes(spec, 1, seq, "bf16"), spec.values) == expected


def test_bidirectional_all_is_refused_in_one_line():
    from symtrans.catalog.hf_config import ConfigError

    cfg = {**_text("gemma-4-31b-it"), "model_type": "gemma4_text", "use_bidirectional_attention": "all"}
    with pytest.raises(ConfigError, match='"all"') as refused:
        spec_from_config(cfg, "test")
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    "keys", [{"num_key_value_heads": 3}, {"attention_k_eq_v": True, "num_global_key_value_heads": 3}]
)
def test_heads_that_do_not_divide_are_refused_in_one_line(keys):
    """Key/value heads that do not divide the 4 query heads: transformers builds the model but its
    eager forward fails (repeat_kv repeats each K/V head 4 // 3 = 1 time: 3 heads against 4); symtrans
    refuses in one line instead of counting FLOPs of a forward that cannot run."""
    from symtrans.catalog.hf_config import ConfigError

    cfg = dict(
        model_type="gemma4_text", hidden_size=8, num_attention_heads=4, num_key_value_heads=1, head_dim=4,
        global_head_dim=4, num_hidden_layers=2, intermediate_size=6, vocab_size=16, hidden_size_per_layer_input=0,
        layer_types=["sliding_attention", "full_attention"], sliding_window=4,
    )  # fmt: skip
    cfg.update(keys)
    transformers.logging.set_verbosity_error()
    config = transformers.Gemma4TextConfig(**{k: v for k, v in cfg.items() if k != "model_type"})
    model = transformers.Gemma4ForCausalLM(config).eval()
    model.config._attn_implementation = "eager"
    with pytest.raises(RuntimeError), torch.no_grad():
        model(input_ids=torch.ones(1, 3, dtype=torch.long), use_cache=False, output_hidden_states=True)
    with pytest.raises(ConfigError, match=r"num_attention_heads \(4\) is not a multiple of .*\(3\)") as refused:
        spec_from_config(cfg, "test")
    assert "\n" not in str(refused.value)


def _wrapper(cfg: dict) -> dict[str, int]:
    """symtrans's figures of a gemma4 wrapper config: the whole class, the text-only and the vision figure."""
    from symtrans.engine.vision import select_part

    spec, _ = spec_from_config(cfg, "test")
    model = build(spec)
    parts = ("all", "text", "vision") + (("audio",) if "d_aud" in spec.values else ())
    return {part: exact(select_part(model, part).params, spec.values) for part in parts}


def test_the_wrapper_total_by_hand():
    """``gemma4`` (Gemma4ForConditionalGeneration: the class transformers' causal-LM and
    image-text-to-text mappings both name), the 31B-it total three ways: arithmetic from the
    printed module tree, transformers 5.24 on the meta device, and symtrans's record.
    The text model above, the vision tower (27 layers of 1152 = 16 heads x 72, MLP 4304; a
    bias-free 3 x 16 x 16 -> 1152 patch map and a 2 x 10240 x 1152 position table) and
    embed_vision (1152 -> 5376, bias-free; its norm has no scale).  The generic path's count
    before the record existed was the same 31,273,086,512."""
    cfg = json.loads((FIXTURES / "gemma-4-31b-it.json").read_text())
    d, f = 1152, 4304
    layer = 4 * d * d + 2 * 72 + 3 * d * f + 4 * d
    vision = 3 * 16 * 16 * d + 2 * 10240 * d + 27 * layer
    assert vision == 569_548_080
    total = PUBLISHED["gemma-4-31b-it"] + vision + d * 5376
    assert total == 31_273_086_512
    config = transformers.Gemma4Config(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
    with torch.device("meta"):
        model = transformers.Gemma4ForConditionalGeneration(config)
    assert sum(p.numel() for p in model.parameters()) == total
    assert sum(p.numel() for n, p in model.named_parameters() if "vision" in n) == vision + d * 5376
    assert _wrapper(cfg) == {"all": total, "text": PUBLISHED["gemma-4-31b-it"], "vision": vision + d * 5376}


def test_audio_without_vision_is_refused_in_one_line():
    """An audio tower beside no vision tower: transformers builds it, symtrans refuses (no
    published config has one)."""
    from symtrans.catalog.hf_config import ConfigError

    cfg = json.loads((FIXTURES / "gemma-4-31b-it.json").read_text())
    cfg.update(vision_config=None, audio_config={"model_type": "gemma4_audio"})
    with pytest.raises(ConfigError, match="audio") as refused:
        spec_from_config(cfg, "test")
    assert "\n" not in str(refused.value)


# The E2B / E4B vision tower as a public repository's Gemma 4 test builds the official sizes
# (find_string index id 65721018737, ``official_size_config``: below hidden_size 2816 the tower is
# 768 wide, 12 heads of 64, 12 key/value heads, clipped linears, no standardize; the other keys
# Gemma4VisionConfig's defaults, whose docstring names google/gemma-4-e2b-it).
E2B_VISION = {
    "model_type": "gemma4_vision",
    "hidden_size": 768,
    "head_dim": 64,
    "num_attention_heads": 12,
    "num_key_value_heads": 12,
    "standardize": False,
    "use_clipped_linears": True,
}


def test_e2b_text_and_vision_without_audio():
    """The E2B text model (partial config above) with the E2B vision tower, audio_config null: the
    tower by hand (16 layers of 768 = 12 x 64, MLP 3072, a 3 x 16 x 16 -> 768 patch map, 2 x 10240
    x 768 positions; clipped linears add buffers only) and embed_vision 768 -> 1536; transformers
    5.24 on the meta device and symtrans agree (4,230,882,560).  Not the published E2B total: the
    audio tower is refused, and the partial text config is not the published one."""
    d, f = 768, 3072
    vision = 3 * 16 * 16 * d + 2 * 10240 * d + 16 * (4 * d * d + 2 * 64 + 3 * d * f + 4 * d)
    total = PUBLISHED["gemma-4-e2b-partial"] + vision + d * 1536
    assert total == 4_230_882_560
    cfg = dict(model_type="gemma4", text_config=_text("gemma-4-e2b-partial"), vision_config=E2B_VISION)
    cfg["audio_config"] = None
    config = transformers.Gemma4Config(**{k: v for k, v in cfg.items() if k != "model_type"})
    with torch.device("meta"):
        model = transformers.Gemma4ForConditionalGeneration(config)
    assert sum(p.numel() for p in model.parameters()) == total
    assert _wrapper(cfg) == {"all": total, "text": PUBLISHED["gemma-4-e2b-partial"], "vision": vision + d * 1536}


def _audio_by_hand(d: int, n: int, h: int, kernel: int, out: int, c1: int, c2: int) -> int:
    """Gemma4AudioModel written out from transformers 5.24's modeling_gemma4.py, module by module
    (every linear bias-free but output_proj; the clipped linears' bounds and the relative
    positions are buffers)."""
    sub = (9 * c1 + c1) + (9 * c1 * c2 + c2) + (c1 // 4) * c2 * d  # conv 0 + LN, conv 1 + LN, input_proj_linear
    ffn = 2 * (d * 4 * d) + 2 * d  # ffw_layer_1, ffw_layer_2, pre/post_layer_norm
    attn = 3 * d * d + d * d + d * d + d // h  # q/k/v, post, relative_k_proj, per_dim_scale
    lconv = d * 2 * d + d * kernel + d * d + 2 * d  # linear_start, depthwise, linear_end, 2 norms
    layer = 2 * ffn + attn + lconv + 3 * d  # norm_pre_attn, norm_post_attn, norm_out
    return sub + n * layer + d * out + out  # output_proj with its bias


def test_e2b_with_the_published_audio_tower():
    """The E2B text model and vision tower above with the E4B's published audio_config
    (fixture gemma-4-e4b-audio-config.json; its sizes are Gemma4AudioConfig's defaults, which the
    E2B shares): the tower by hand is 304,824,608, and 24 d^2 + K d + d / h + 9 d a layer; with
    embed_audio (1536 -> 1536, bias-free) 307,183,904.  Three ways: arithmetic, transformers 5.24
    on the meta device (the parameters named audio), and symtrans's parts.  Not the published
    E2B total: the partial text config is not the published one."""
    audio_cfg = json.loads((FIXTURES / "gemma-4-e4b-audio-config.json").read_text())["audio_config"]
    tower = _audio_by_hand(1024, 12, 8, 5, 1536, 128, 32)
    d = 1024
    assert (
        tower
        == 10 * 128 + 9 * 128 * 32 + 32 + 32 * 32 * d + 12 * (24 * d * d + 5 * d + d // 8 + 9 * d) + d * 1536 + 1536
    )
    assert tower == 304_824_608
    audio = tower + 1536 * 1536
    assert audio == 307_183_904
    cfg = dict(model_type="gemma4", text_config=_text("gemma-4-e2b-partial"), vision_config=E2B_VISION)
    cfg["audio_config"] = audio_cfg
    config = transformers.Gemma4Config(**{k: v for k, v in cfg.items() if k != "model_type"})
    with torch.device("meta"):
        model = transformers.Gemma4ForConditionalGeneration(config)
    total = 4_230_882_560 + audio
    assert total == 4_538_066_464
    assert sum(p.numel() for p in model.parameters()) == total
    assert sum(p.numel() for n, p in model.named_parameters() if "audio" in n) == audio
    assert sum(p.numel() for p in model.model.audio_tower.parameters()) == tower
    vision = 4_230_882_560 - PUBLISHED["gemma-4-e2b-partial"]
    assert _wrapper(cfg) == {"all": total, "text": PUBLISHED["gemma-4-e2b-partial"], "vision": vision, "audio": audio}


@pytest.mark.parametrize(
    "sizes",
    [
        (12, 2, 3, 1, 7, 3, 5),  # c1 = 3: input_proj_linear takes 0 features
        (16, 1, 4, 4, 1, 9, 2),
        (6, 3, 6, 2, 4, 4, 1),
    ],
)
def test_audio_tower_by_hand_on_small_keys(sizes):
    """Keys the defaults hide (c1 // 4, a kernel of 1, one head per channel): the hand formula
    above = Gemma4AudioModel on the meta device = symtrans's audio part less embed_audio."""
    d, n, h, kernel, out, c1, c2 = sizes
    acfg = dict(
        model_type="gemma4_audio",
        hidden_size=d,
        num_hidden_layers=n,
        num_attention_heads=h,
        conv_kernel_size=kernel,
        output_proj_dims=out,
        subsampling_conv_channels=[c1, c2],
    )
    with torch.device("meta"):
        tower = transformers.Gemma4AudioModel(transformers.Gemma4AudioConfig(**acfg))
    by_hand = _audio_by_hand(*sizes)
    assert sum(p.numel() for p in tower.parameters()) == by_hand
    cfg = dict(model_type="gemma4", text_config=_text("gemma-4-e2b-partial"), vision_config=E2B_VISION)
    cfg["audio_config"] = acfg
    assert _wrapper(cfg)["audio"] == by_hand + out * 1536
