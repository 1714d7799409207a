"""Cache bytes against the cache tensors transformers really creates (issues 11 and 20).

For every supported type that generates, a tiny CPU model (AUDIT_BASE's config, eager
attention, fp32) runs a prefill with ``use_cache=True`` at two prompt lengths; the bytes of
every tensor in the returned cache (``t.numel() * t.element_size()``: the keys and values of
attention layers, self- and cross-attention for an encoder-decoder, and the conv and
recurrent states of Mamba, Mamba 2, Gated DeltaNet and short-convolution layers) must equal
symtrans's ``memory.kv_cache_bytes`` at fp32 at each length, and the Cost tree's own figures
(issue 20): the growth between the two lengths is the tree's cache elements per token
(``Cost.cache``, the ``Step.cache`` of its caching steps) and the rest is its constant state
per sequence (``Cost.state``) plus an encoder-decoder's cross-attention K/V of the source
(``Cost.source_cache``).  Sliding windows (``Step.cache_window``) are checked against
transformers' sliding-window cache layer below.
"""

from __future__ import annotations

import pytest
from conftest import require  # noqa: E402

require("transformers")
from test_model_types import _cfg, _flop_model  # noqa: E402

from symtrans.accounting.memory import kv_cache_bytes  # noqa: E402
from symtrans.catalog.hf_config import CLASSES, SUPPORTED, spec_from_config  # noqa: E402
from symtrans.engine.architectures import build  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402

BATCH = 2
# two prompt lengths within every AUDIT_BASE window (7 at least: transformers' sliding-window
# layer keeps min(L, w - 1) positions, see below) and position table (13 at least), so every
# attention layer caches every position; the source of an encoder-decoder stays SOURCE
LENGTHS = (4, 6)
SOURCE = 5
FP32 = 4  # bytes

GENERATIVE = [
    mt for mt in SUPPORTED if CLASSES[mt][1].endswith(("ForCausalLM", "LMHeadModel", "ForConditionalGeneration"))
]


def _tensors(cache, state: bool = False):
    """Every key/value tensor a transformers 5.x cache holds (``state``: every constant-size
    state tensor instead: the conv and recurrent states of Mamba, Gated DeltaNet and
    short-convolution layers, which a LinearAttentionLayer holds in place of keys and values)."""
    if hasattr(cache, "cross_attention_cache"):  # EncoderDecoderCache: self- and cross-attention
        yield from _tensors(cache.self_attention_cache, state)
        yield from _tensors(cache.cross_attention_cache, state)
        return
    for layer in cache.layers:
        if state:
            for states in (getattr(layer, "conv_states", {}), getattr(layer, "recurrent_states", {})):
                yield from (t for t in states.values() if t is not None and t.numel())
            continue
        # DeepSeek Sparse Attention's DynamicIndexedLayer (cache_utils.py) also keeps the lightning
        # indexer's keys, one d_idx-wide row per token beside the MLA latent
        for t in (getattr(layer, "keys", None), getattr(layer, "values", None), getattr(layer, "indexer_keys", None)):
            if t is not None and t.numel():
                yield t


def cache_bytes(cache, state: bool = False) -> int:
    return sum(t.numel() * t.element_size() for t in _tensors(cache, state))


def _prefill(hf, model, spec, length: int) -> tuple[int, int, int]:
    """(K/V bytes, state bytes, source positions) of the cache after a prefill of ``length``
    tokens (the decoder's, for an encoder-decoder, beside a source of SOURCE tokens)."""
    torch = hf.torch
    ids = torch.ones(BATCH, length, dtype=torch.long)
    inputs = {"input_ids": ids}
    src = SOURCE
    if spec.family == "encoder-decoder":
        inputs = {"input_ids": torch.ones(BATCH, SOURCE, dtype=torch.long), "decoder_input_ids": ids}
        if spec.frontend == "conv1d":  # Whisper: mel frames, exactly 2 x max_source_positions of them
            src = spec.size("L_src_max")
            inputs = {"input_features": torch.zeros(BATCH, spec.size("C_in"), 2 * src), "decoder_input_ids": ids}
    with torch.no_grad():
        out = model(**inputs, use_cache=True)
    return cache_bytes(out.past_key_values), cache_bytes(out.past_key_values, state=True), src


# AUDIT_BASE's LED has a different window per encoder layer ([4, 6]): its FLOPs and cache are refused in
# one line (LED with one window and LongT5: tests/test_long_flops.py compares the real cache).
CACHE_REFUSED = {"led": "Longformer"}
# DeepSeek-V4's cache (DynamicSlidingWindowLayer keys and values, then, in its CSA and HCA layers, one
# shared K=V window, compressed entries every m tokens, the compressors' partial-window buffers and CSA's
# overlap state) is not linear in the length: no Cost.cache per token; its bytes per sequence are
# compared here with every tensor of the cache, each storage once (test_deepseek_v4._real_cache_bytes,
# where more lengths, dtypes and drawn configs are)
NOT_PER_TOKEN = {"deepseek_v4"}


@pytest.mark.parametrize("model_type", GENERATIVE)
def test_cache_bytes_equal_the_real_cache(hf, model_type):
    cfg = _cfg(model_type)
    spec, _ = spec_from_config(cfg, "kv")
    if model_type in CACHE_REFUSED:
        from symtrans.base.errors import InputError

        with pytest.raises(InputError, match=CACHE_REFUSED[model_type]):
            kv_cache_bytes(spec, BATCH, LENGTHS[0], "fp32", src=SOURCE)
        return
    model = _flop_model(hf, model_type, cfg)
    if model_type in NOT_PER_TOKEN:
        from test_deepseek_v4 import _real_cache_bytes

        for n in LENGTHS:
            with hf.torch.no_grad():
                out = model(input_ids=hf.torch.ones(BATCH, n, dtype=hf.torch.long), use_cache=True)
            assert _real_cache_bytes(out.past_key_values) == exact(kv_cache_bytes(spec, BATCH, n, "fp32"), spec.values)
        return
    (kv1, state1, src), (kv2, state2, _) = (_prefill(hf, model, spec, n) for n in LENGTHS)
    assert kv1 + state1 > 0
    enc_dec = spec.family == "encoder-decoder"
    assert not spec.has("w") or spec.size("w") - 1 >= LENGTHS[1], "a window below the lengths: see LENGTHS"
    # memory's cache bytes: K/V of B x L tokens (and B x L_src of cross-attention) plus B constant states
    for n, real in zip(LENGTHS, (kv1 + state1, kv2 + state2)):
        expected = kv_cache_bytes(spec, BATCH, n, "fp32", src=src if enc_dec else None)
        assert real == exact(expected, spec.values), (model_type, n, real)
    # the Cost tree's own figures: per token, the growth between the two lengths ...
    tree, v = build(spec), spec.values
    grown = kv2 + state2 - kv1 - state1
    assert grown == BATCH * (LENGTHS[1] - LENGTHS[0]) * exact(tree.cache, v) * FP32, (model_type, grown)
    # ... and per sequence, whatever its length, the rest: the constant state and cross-attention's K/V
    rest = kv1 + state1 - BATCH * LENGTHS[0] * exact(tree.cache, v) * FP32
    assert rest == BATCH * (exact(tree.state, v) + src * exact(tree.source_cache, v)) * FP32, (model_type, rest)
    assert state1 == state2 == BATCH * exact(tree.state, v) * FP32, (model_type, state1, state2)


def test_sliding_window_cache_keeps_the_window(hf):
    """Mistral with window 8 after a prefill of 20.  symtrans counts min(L, w) positions per
    layer: the w keys a decode step attends to (Jiang et al. 2023 §2, rolling buffer of size
    w).  transformers' DynamicSlidingWindowLayer stores w - 1 between steps and appends the
    new token's K/V during the step (its peak is w); this test measures the w - 1 it stores."""
    from test_model_types import MISTRAL_WINDOW

    torch = hf.torch
    spec, _ = spec_from_config(MISTRAL_WINDOW, "mistral")
    model = _flop_model(hf, "mistral", MISTRAL_WINDOW)
    with torch.no_grad():
        out = model(input_ids=torch.ones(1, 20, dtype=torch.long), use_cache=True)
    real = cache_bytes(out.past_key_values)
    # 2 layers x 2 (K and V) x h_kv 2 x d_k 8 x 4 bytes = 256 bytes per cached position
    assert exact(kv_cache_bytes(spec, 1, 20, "fp32"), spec.values) == 256 * 8
    assert real == 256 * (8 - 1), real  # stored between steps
    with torch.no_grad():  # and again after one decode step: the window rolls, its size stays
        step = model(input_ids=torch.ones(1, 1, dtype=torch.long), past_key_values=out.past_key_values, use_cache=True)
    assert cache_bytes(step.past_key_values) == 256 * (8 - 1)


def test_a_stack_of_windowed_and_full_layers_caps_only_the_windowed_ones(hf):
    """Gemma 2 alternates a sliding-window layer and a full-attention layer (its layer_types);
    with window 4 after a prefill of 10, transformers' DynamicSlidingWindowLayer stores the last
    w - 1 = 3 positions and DynamicLayer all 10.  The Cost tree caps only the windowed layer's
    K/V steps (``Step.cache_window``), at the w a decode step attends to (see above)."""
    cfg = _cfg("gemma2", sliding_window=4)
    spec, _ = spec_from_config(cfg, "gemma2")
    model = _flop_model(hf, "gemma2", cfg)
    with hf.torch.no_grad():
        out = model(input_ids=hf.torch.ones(1, 10, dtype=hf.torch.long), use_cache=True)
    # per layer and position: K and V x h_kv 2 x head_dim 6 x 4 bytes = 96 bytes
    assert cache_bytes(out.past_key_values) == 96 * (10 + 3)
    tree = build(spec)
    windowed = [n for n in tree.nodes() if n.step.cache != 0 and n.step.cache_window is not None]
    assert sum(exact(n.multiplicity * n.step.cache, spec.values) for n in windowed) * 4 == 96
    assert exact(tree.cache_at(10), spec.values) * 4 == 96 * (10 + 4)
    assert exact(kv_cache_bytes(spec, 1, 10, "fp32"), spec.values) == 96 * (10 + 4)


# Issue 21 Build 3, the shape walk: for a stack of layer kinds (hybrid and state-space types) the
# walk's ``cache`` steps (an attention layer's K and V per token) and ``state`` steps (a conv window,
# an SSM or delta-rule state per sequence), shapes written from transformers' forwards in
# analysis/walk_hybrid.py, against the same real caches: K/V bytes per token are the growth between
# the two prompt lengths, state bytes the constant-size tensors, at fp32.
def _kinds(mt: str) -> set[str]:
    return set(spec_from_config(_cfg(mt), "kv")[0].mixers.split("|"))


def _walked() -> set[str]:
    from symtrans.analysis.walk_hybrid import WALKED

    return set(WALKED)


HYBRIDS = [mt for mt in GENERATIVE if _kinds(mt) != {"attention"} and _kinds(mt) <= _walked()]
# stacks with a kind the walk does not trace (DeepSeek-V4's): refused
UNWALKED = [mt for mt in GENERATIVE if not _kinds(mt) <= _walked()]


@pytest.mark.parametrize("model_type", UNWALKED)
def test_walk_refuses_a_kind_it_does_not_trace_in_one_line(model_type):
    from symtrans.analysis.walk import walk
    from symtrans.base.errors import InputError

    with pytest.raises(InputError, match="walk traces the layer kinds") as refused:
        walk(spec_from_config(_cfg(model_type), "kv")[0])
    assert "\n" not in str(refused.value)


def test_the_hybrid_list_covers_issue_21():
    wanted = "jamba qwen3_next falcon_h1 nemotron_h granitemoehybrid bamba lfm2 mamba mamba2".split()
    assert set(wanted) <= set(HYBRIDS), sorted(set(wanted) - set(HYBRIDS))


@pytest.mark.parametrize("model_type", HYBRIDS)
def test_walk_of_a_hybrid_keeps_what_the_real_cache_keeps(hf, model_type):
    from symtrans.analysis.walk import walk

    cfg = _cfg(model_type)
    spec, _ = spec_from_config(cfg, "kv")
    model = _flop_model(hf, model_type, cfg)
    (kv1, state1, _), (kv2, state2, _) = (_prefill(hf, model, spec, n) for n in LENGTHS)
    w, v = walk(spec), spec.values
    per_token = (kv2 - kv1) // (BATCH * (LENGTHS[1] - LENGTHS[0]))
    assert kv2 - kv1 == BATCH * (LENGTHS[1] - LENGTHS[0]) * per_token
    assert exact(w.kept("cache"), v) * FP32 == per_token, (model_type, per_token)
    assert kv1 == BATCH * LENGTHS[0] * per_token  # nothing but K/V grows or sits among the keys and values
    assert state1 == state2 == BATCH * exact(w.kept("state"), v) * FP32, (model_type, state1)
    # and its FLOPs sum to the engine's forward (which tests/test_model_types.py matches with FlopCounterMode)
    for n in LENGTHS:
        assert exact(w.flops, {**v, "B": BATCH, "L": n}) == exact(build(spec).flops, {**v, "B": BATCH, "L": n})
