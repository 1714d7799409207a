"""FLOPs and KV cache of LongT5's and LED's encoder attention (engine/transient_global.py), and the
shape walk of both (analysis/walk.py, FLOPs from its own shapes), against the implementation:
``torch.utils.flop_counter.FlopCounterMode`` (torch 2.13) on transformers 5.24's eager
``LongT5ForConditionalGeneration`` / ``LEDForConditionalGeneration`` forward (and forward + backward),
and the tensors of its cache after a real forward.  LED's windows may differ per encoder layer
(``attention_window`` a list: ``LEDEncoderLayer`` reads ``attention_window[layer_id]``).

The convention counted is the implementation's padded blocks: ``_split_into_blocks`` pads the
L_src positions to ceil(L_src / b_loc) blocks of b_loc = local_radius + 1, and each block's b_loc
queries meet 3 b_loc local keys (zero blocks beyond the ends) plus floor(L_src / b_glob) transient
global keys; every computed score counts, padded or masked.  The lengths below are chosen not to be
multiples of b_loc or b_glob (and some shorter than one block) so that the padding is exercised.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import require  # noqa: E402

require("transformers")
require("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from symtrans.accounting.flops import evaluate, flops_expr  # noqa: E402
from symtrans.accounting.memory import kv_cache_bytes, kv_cache_per_token, memory_terms  # noqa: E402
from symtrans.base.errors import InputError  # noqa: E402
from symtrans.catalog.hf_config import spec_from_config  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402
from symtrans.engine.spec import Spec  # noqa: E402
from symtrans.engine.transient_global import block_local_pairs  # noqa: E402

TINY = dict(
    model_type="longt5",
    d_model=12,
    d_kv=3,
    num_heads=2,
    num_layers=2,
    d_ff=10,
    vocab_size=23,
    relative_attention_num_buckets=5,
)
FIXTURE = Path(__file__).parent / "fixtures" / "configs" / "long-t5-tglobal-base-16384-book-summary.json"


def _model(cfg: dict, meta: bool = False):
    import torch
    import transformers

    conf = transformers.LongT5Config(**{k: v for k, v in cfg.items() if k != "model_type"}, attn_implementation="eager")
    torch.manual_seed(0)
    if meta:
        with torch.device("meta"):
            return transformers.LongT5ForConditionalGeneration(conf)
    return transformers.LongT5ForConditionalGeneration(conf)


def _counted(run) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with counter:
        run()
    return counter.get_total_flops()


def _check(cfg: dict, batch: int, src: int, tgt: int) -> None:
    """FlopCounterMode's forward and forward + backward totals equal symtrans's at B, L_src, L_tgt; the
    forward also equals the shape walk's."""
    import torch

    spec, _ = spec_from_config(cfg, "longt5")
    model = _model(cfg)
    ids, dec = torch.ones(batch, src, dtype=torch.long), torch.ones(batch, tgt, dtype=torch.long)
    forward = _counted(lambda: model(input_ids=ids, decoder_input_ids=dec))
    training = _counted(lambda: model(input_ids=ids, decoder_input_ids=dec).logits.sum().backward())
    values = {**spec.values, "B": batch, "L_src": src, "L_tgt": tgt, "L": tgt}
    assert int(evaluate(flops_expr(spec, "forward"), values)) == forward, (cfg, batch, src, tgt)
    assert _walked(spec, batch, src, tgt) == forward, (cfg, batch, src, tgt)  # the walk, from its shapes
    # the global aggregates multiply by a constant one-hot matrix: backward 1 x forward there, 2 x elsewhere
    assert int(evaluate(flops_expr(spec, "training"), values)) == training, (cfg, batch, src, tgt)


@pytest.mark.parametrize("attention", ["local", "transient-global"])
@pytest.mark.parametrize("src", [1, 7, 12, 13])  # b_loc 3, b_glob 4: one short block, padded tails, exact fits
def test_forward_and_training_match_the_counter(attention, src):
    _check(dict(TINY, encoder_attention_type=attention, local_radius=2, global_block_size=4), 2, src, 5)


@given(
    attention=st.sampled_from(["local", "transient-global"]),
    heads=st.integers(1, 3),
    # d_kv >= 2 and L_src >= 2: torch runs an einsum whose contraction has size 1 as an elementwise
    # multiply, which FlopCounterMode counts as 0 (checked: einsum("...qhd,...khd->...hqk") at d = 1)
    d_kv=st.integers(2, 4),
    layers=st.integers(1, 2),
    radius=st.integers(0, 4),
    block=st.integers(1, 6),
    batch=st.integers(1, 2),
    src=st.integers(2, 23),
    tgt=st.integers(1, 4),
)
def test_drawn_sizes_match_the_counter(attention, heads, d_kv, layers, radius, block, batch, src, tgt):
    cfg = dict(
        TINY,
        num_heads=heads,
        d_kv=d_kv,
        num_layers=layers,
        encoder_attention_type=attention,
        local_radius=radius,
        global_block_size=block,
    )
    _check(cfg, batch, src, tgt)


def test_published_config_on_the_meta_device():
    """long-t5-tglobal-base (book-summary fine-tune) at B = 1, L_src = 1000 (not a multiple of the
    128-token blocks or the 16-token global blocks), L_tgt = 7: FlopCounterMode on the meta device
    counts 219,907,461,120 forward FLOPs (torch 2.13.0 / transformers 5.24)."""
    import torch

    cfg = json.loads(FIXTURE.read_text())
    model = _model(cfg, meta=True)
    ids = torch.ones(1, 1000, dtype=torch.long, device="meta")
    dec = torch.ones(1, 7, dtype=torch.long, device="meta")
    with torch.no_grad():
        counted = _counted(lambda: model(input_ids=ids, decoder_input_ids=dec))
    assert counted == 219_907_461_120
    spec, _ = spec_from_config(cfg, "long-t5")
    assert (spec.size("b_loc"), spec.size("b_glob")) == (128, 16)
    values = {**spec.values, "B": 1, "L_src": 1000, "L_tgt": 7, "L": 7}
    assert int(evaluate(flops_expr(spec, "forward"), values)) == counted
    assert _walked(spec, 1, 1000, 7) == counted  # the shape walk's blocks, from its own shapes


def test_pairs_written_out():
    """L_src = 13, b_loc = 3 (local_radius 2), b_glob = 4: ceil(13/3) = 5 blocks padded to 15
    queries, each against 3 x 3 = 9 local keys and floor(13/4) = 3 global keys: 15 x 12 = 180
    pairs (the band |i - j| <= 2 of the paper would be 13 + 2 x (12 + 11) = 59)."""
    spec, _ = spec_from_config(dict(TINY, encoder_attention_type="transient-global", local_radius=2), "x")
    assert spec.size("b_glob") == 16  # LongT5Config's default global_block_size
    spec = spec.replace(sizes={"b_glob": 4})
    assert exact(block_local_pairs(spec, 13), spec.values) == 180
    local, _ = spec_from_config(dict(TINY, encoder_attention_type="local", local_radius=2), "x")
    assert exact(block_local_pairs(local, 13), local.values) == 15 * 9


def test_cache_is_the_decoders_and_equals_the_real_cache():
    """The encoder caches nothing: K/V per target token are the decoder's self-attention, 2 N h d_k,
    and per source token cross-attention's, 2 N h d_k (fp32: 2 x 2 x 2 x 3 x 4 = 96 bytes each).
    transformers' EncoderDecoderCache after a forward of B = 2, L_src = 7, L_tgt = 5 holds
    2 x (5 + 7) x 96 = 2,304 bytes."""
    import torch

    cfg = dict(TINY, encoder_attention_type="transient-global", local_radius=2, global_block_size=4)
    spec, _ = spec_from_config(cfg, "x")
    assert exact(kv_cache_per_token(spec, "fp32"), spec.values) == 2 * 2 * 2 * 3 * 4
    model = _model(cfg).eval()
    with torch.no_grad():
        out = model(input_ids=torch.ones(2, 7, dtype=torch.long), decoder_input_ids=torch.ones(2, 5, dtype=torch.long))
    cache = out.past_key_values
    real = 0
    for part in (cache.self_attention_cache, cache.cross_attention_cache):
        for layer in part.layers:
            real += sum(t.numel() * t.element_size() for t in (layer.keys, layer.values))
    assert real == 2_304
    assert exact(kv_cache_bytes(spec, 2, 5, "fp32", src=7), spec.values) == real


def test_memory_and_missing_block_sizes_are_refused_in_one_line():
    spec, _ = spec_from_config(dict(TINY, encoder_attention_type="local"), "x")
    with pytest.raises(InputError, match="activations of blocked scores") as refused:
        memory_terms(spec, batch=1, seq_len=8)
    assert "\n" not in str(refused.value)
    bare = Spec(
        family="encoder-decoder",
        sizes=dict(d_model=8, d_ff=8, h=2, d_k=4, V=10, N=1),
        positional="relative",
        encoder_attention="local",
        relative_buckets=4,
        norm="rmsnorm",
        bias=False,
    )
    with pytest.raises(InputError, match="need b_loc"):
        flops_expr(bare, "forward")
    with pytest.raises(InputError, match="b_glob .* needs encoder_attention transient-global"):
        bare.replace(sizes={"b_loc": 3, "b_glob": 4})


def _walked(spec, batch: int, src: int, tgt: int) -> int:
    """The shape walk's forward FLOPs (analysis/walk.py: from its own shapes) at B, L_src, L_tgt."""
    from symtrans.analysis.walk import walk
    from symtrans.engine.architectures import Workload

    return exact(walk(spec, Workload()).flops, {**spec.values, "B": batch, "L_src": src, "L_tgt": tgt, "L": tgt})


# --- LED (LEDForConditionalGeneration, Longformer self-attention in the encoder) ------------------
# Convention: what the eager forward executes with no global_attention_mask (no global tokens, the
# class's default): LEDEncoder pads the source to a multiple of attention_window w_att (the largest, when
# the layers' windows differ) and every encoder layer runs on the padded positions; each layer's window
# (attention_window[layer_id]) runs as overlapping chunks, Q K^T on 2 L_pad / w_att - 1
# chunks of w_att x w_att, scores x V on 2 L_pad / w_att chunks of w_att / 2 x 3 w_att / 2.  The
# decoder's cross-attention reads the L_src unpadded positions.

LED_TINY = dict(
    model_type="led",
    vocab_size=20,
    d_model=8,
    encoder_layers=1,
    decoder_layers=2,
    encoder_attention_heads=2,
    decoder_attention_heads=2,
    encoder_ffn_dim=6,
    decoder_ffn_dim=5,
    attention_window=4,
    max_encoder_position_embeddings=64,
    max_decoder_position_embeddings=16,
)
LED_FIXTURE = Path(__file__).parent / "fixtures" / "configs" / "led-16384-converted.json"


def _led_model(cfg: dict, meta: bool = False):
    import torch
    import transformers

    transformers.logging.set_verbosity_error()  # "Input ids are automatically padded ..."
    conf = transformers.LEDConfig(**{k: v for k, v in cfg.items() if k != "model_type"}, attn_implementation="eager")
    torch.manual_seed(0)
    if meta:
        with torch.device("meta"):
            return transformers.LEDForConditionalGeneration(conf)
    return transformers.LEDForConditionalGeneration(conf)


def _check_led(cfg: dict, batch: int, src: int, tgt: int) -> None:
    import torch

    spec, _ = spec_from_config(cfg, "led")
    model = _led_model(cfg)
    ids, dec = torch.full((batch, src), 5, dtype=torch.long), torch.ones(batch, tgt, dtype=torch.long)
    forward = _counted(lambda: model(input_ids=ids, decoder_input_ids=dec))
    training = _counted(lambda: model(input_ids=ids, decoder_input_ids=dec).logits.sum().backward())
    values = {**spec.values, "B": batch, "L_src": src, "L_tgt": tgt, "L": tgt}
    assert int(evaluate(flops_expr(spec, "forward"), values)) == forward, (cfg, batch, src, tgt)
    assert _walked(spec, batch, src, tgt) == forward, (cfg, batch, src, tgt)  # the walk, from its shapes
    assert int(evaluate(flops_expr(spec, "training"), values)) == training, (cfg, batch, src, tgt)


@pytest.mark.parametrize("window", [4, 6])
@pytest.mark.parametrize("src", [3, 8, 13])  # shorter than a window, a multiple of 4, padded tails
def test_led_forward_and_training_match_the_counter(window, src):
    _check_led(dict(LED_TINY, attention_window=window), 2, src, 3)


# Windows per layer that divide the largest (the padding unit), >= 4: transformers' chunking fails at 2
_DIVIDING = {4: [4], 6: [6], 8: [4, 8], 12: [4, 6, 12]}


@given(
    heads=st.sampled_from([1, 2, 4]),
    layers=st.integers(1, 3),
    biggest=st.sampled_from(sorted(_DIVIDING)),
    form=st.sampled_from(["one", "list of one", "per layer"]),
    picks=st.lists(st.integers(0, 2), min_size=3, max_size=3),
    batch=st.integers(1, 2),
    src=st.integers(1, 26),
    tgt=st.integers(1, 4),
)
def test_led_drawn_sizes_match_the_counter(heads, layers, biggest, form, picks, batch, src, tgt):
    """One window, the same window listed per layer, or each layer its own (LEDEncoderLayer reads
    attention_window[layer_id]; the encoder pads to a multiple of the largest)."""
    options = _DIVIDING[biggest]
    if form == "one":
        window = biggest
    elif form == "list of one":
        window = [biggest] * layers
    else:
        window = [options[p % len(options)] for p in picks[: layers - 1]] + [biggest]  # the largest is drawn
        turn = picks[-1] % layers
        window = window[turn:] + window[:turn]  # anywhere in the stack
    cfg = dict(
        LED_TINY,
        encoder_attention_heads=heads,
        encoder_layers=layers,
        decoder_attention_heads=heads,
        attention_window=window,
    )
    _check_led(cfg, batch, src, tgt)


@pytest.mark.parametrize("window", [[8, 4, 8], [4, 12, 6], [6, 6, 12]])
@pytest.mark.parametrize("src", [1, 5, 12, 13, 25])  # one token, inside a window, exact fits, padded tails
def test_led_windows_per_layer_match_the_counter(window, src):
    """Different windows per encoder layer (parameters unchanged): each layer's chunks are its own
    window's, on the input padded to a multiple of the largest."""
    _check_led(dict(LED_TINY, encoder_layers=len(window), attention_window=window), 2, src, 3)


def test_led_windows_per_layer_written_out():
    """attention_window [8, 4, 8] at L_src = 13: padded to 16 (a multiple of 8) in every layer; per head
    and sequence, the 8-window layers compute (16/4 - 1) 8^2 = 192 Q K^T pairs and 16/4 x 4 x 12 = 192
    score-value pairs each, the 4-window layer (16/2 - 1) 4^2 = 112 and 16/2 x 2 x 6 = 96."""
    spec, notes = spec_from_config(dict(LED_TINY, encoder_layers=3, attention_window=[8, 4, 8]), "led")
    assert (spec.size("w_att"), spec.encoder_windows) == (8, "8|4|8")
    assert any("encoder_windows 8|4|8" in n for n in notes)
    d, h, dk, ff, pad, src, tgt, n_dec, v = 8, 2, 4, 6, 16, 13, 3, 2, 20
    encoder = 3 * (8 * pad * d * d + 4 * pad * d * ff) + 2 * h * dk * (2 * (192 + 192) + (112 + 96))
    decoder = (
        n_dec * (8 * tgt * d * d + 4 * h * tgt * tgt * dk + 4 * tgt * d * d + 4 * src * d * d + 4 * h * tgt * src * dk)
        + n_dec * 4 * tgt * d * 5
    )  # fc1, fc2 of decoder_ffn_dim 5
    by_hand = encoder + decoder + 2 * tgt * d * v  # + the tied LM head
    values = {**spec.values, "B": 1, "L_src": src, "L_tgt": tgt, "L": tgt}
    assert int(evaluate(flops_expr(spec, "forward"), values)) == by_hand
    assert _walked(spec, 1, src, tgt) == by_hand


def test_led_published_config_by_hand():
    """allenai/led-base-16384's converted config (d_model 1024, 8 heads of 64, d_ff 2048, 6 + 6 layers,
    V 50,265, attention_window 512 on every layer) at B = 1, L_src = 1000, L_tgt = 7, written out as
    arithmetic (LEDEncoder runs on 1000 padded to 1024; FlopCounterMode cannot check it on the meta
    device: LEDEncoderSelfAttention calls .item() on is_index_global_attn).  149,347,031,040."""
    d, h, dk, ff, n, v, pad, w, src, tgt = 1024, 8, 128, 2048, 6, 50265, 1024, 512, 1000, 7
    encoder = n * (
        8 * pad * d * d  # query, key, value, output on the padded positions
        + 4 * pad * d * ff  # fc1, fc2
        + 2 * h * (pad // (w // 2) - 1) * w * w * dk  # Q K^T: 7 overlapping chunks of 512 x 512
        + 2 * h * (pad // (w // 2)) * (w // 2) * (3 * w // 2) * dk  # scores x V: 8 chunks of 256 x 768
    )
    decoder = n * (
        8 * tgt * d * d  # self-attention maps
        + 4 * h * tgt * tgt * dk  # its scores and values
        + 4 * tgt * d * d  # cross-attention query and output maps
        + 4 * src * d * d  # cross-attention key and value maps on the 1000 unpadded positions
        + 4 * h * tgt * src * dk  # cross-attention scores and values
        + 4 * tgt * d * ff  # fc1, fc2
    )
    by_hand = encoder + decoder + 2 * tgt * d * v  # + the tied LM head: 149,347,031,040
    spec, _ = spec_from_config(json.loads(LED_FIXTURE.read_text()), "led")
    assert spec.size("w_att") == 512
    values = {**spec.values, "B": 1, "L_src": src, "L_tgt": tgt, "L": tgt}
    assert int(evaluate(flops_expr(spec, "forward"), values)) == by_hand
    assert _walked(spec, 1, src, tgt) == by_hand  # the shape walk's padding and chunks, from its own shapes


def test_led_cache_equals_the_real_cache():
    """LED's decoder is BART's: per target token 2 N_dec h d_k K/V, per source token the same for
    cross-attention (fp32: 2 x 2 x 8 x 4 = 128 bytes each).  After a forward of B = 2, L_src = 7
    (padded to 8 inside the encoder only), L_tgt = 5: 2 x (5 + 7) x 128 = 3,072 bytes."""
    import torch

    spec, _ = spec_from_config(LED_TINY, "led")
    assert exact(kv_cache_per_token(spec, "fp32"), spec.values) == 2 * 2 * 8 * 4
    model = _led_model(LED_TINY).eval()
    with torch.no_grad():
        out = model(
            input_ids=torch.full((2, 7), 5, dtype=torch.long),
            decoder_input_ids=torch.ones(2, 5, dtype=torch.long),
            use_cache=True,
        )
    cache = out.past_key_values
    real = 0
    for part in (cache.self_attention_cache, cache.cross_attention_cache):
        for layer in part.layers:
            real += sum(t.numel() * t.element_size() for t in (layer.keys, layer.values))
    assert real == 3_072
    assert exact(kv_cache_bytes(spec, 2, 5, "fp32", src=7), spec.values) == real


def test_led_refusals_in_one_line():
    """Windows that do not divide the largest (LEDEncoder pads to a multiple of the largest, and a
    layer's chunks need a multiple of its own: transformers 5.24 fails on most lengths), and memory
    (activations of the chunked window), stay refused; so do per-layer windows that contradict w_att or
    the layer count."""
    mixed, notes = spec_from_config(dict(LED_TINY, encoder_layers=2, attention_window=[4, 6]), "led")
    assert not mixed.has("w_att") and any("do not divide the largest" in n for n in notes)
    listed, _ = spec_from_config(dict(LED_TINY, encoder_layers=2, attention_window=[4, 8]), "led")
    for run, match in (
        (lambda: flops_expr(mixed, "forward"), "encoder_windows when the layers' windows differ"),
        (lambda: memory_terms(spec_from_config(LED_TINY, "led")[0], batch=1, seq_len=8), "chunked window"),
        (lambda: memory_terms(listed, batch=1, seq_len=8), "chunked window"),
        (lambda: listed.replace(sizes={"w_att": 16}), "w_att must be the largest of encoder_windows"),
        (lambda: listed.replace(sizes={"N": 3}), "lists 2 windows for 3 encoder layers"),
        (lambda: listed.replace(encoder_windows="4|6"), "encoder_windows 4 do not divide the largest, 6"),
        (lambda: listed.replace(encoder_windows="4|x"), "even positive integers joined by"),
    ):
        with pytest.raises(InputError, match=match) as refused:
            run()
        assert "\n" not in str(refused.value)
