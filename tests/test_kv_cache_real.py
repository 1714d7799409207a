"""KV cache bytes against the cache tensors transformers really creates (issue 11).

For every supported type that generates, a tiny CPU model (AUDIT_BASE's config, eager
attention, fp32) runs a prefill with ``use_cache=True``; the bytes of every key and value
tensor in the returned cache (``t.numel() * t.element_size()``, summed over layers and, for
an encoder-decoder, over the self- and cross-attention caches) must equal symtrans's
``memory.kv_cache_bytes`` at fp32 for that batch and length; for a decoder-only model, so
must the Cost tree's own cache elements per token (``Cost.cache``, issue 20).  The
state-space and linear-attention caches are checked in tests/test_layer_kinds.py.
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

BATCH, PREFILL = 2, 5  # below every AUDIT_BASE window, so every layer caches every position

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
        for t in (getattr(layer, "keys", None), getattr(layer, "values", None)):
            if t is not None and t.numel():
                yield t


def cache_bytes(cache, state: bool = False) -> int:
    return sum(t.numel() * t.element_size() for t in _tensors(cache, state))


@pytest.mark.parametrize("model_type", GENERATIVE)
def test_kv_cache_bytes_equal_the_real_cache(hf, model_type):
    torch = hf.torch
    cfg = _cfg(model_type)
    spec, _ = spec_from_config(cfg, "kv")
    model = _flop_model(hf, model_type, cfg)
    ids = torch.ones(BATCH, PREFILL, dtype=torch.long)
    inputs = {"input_ids": ids}
    src = PREFILL
    if spec.frontend == "conv1d":  # Whisper: mel frames, exactly 2 x max_source_positions of them
        src = spec.size("L_src_max")
        inputs = {"input_features": torch.zeros(BATCH, spec.size("C_in"), 2 * src)}
    if spec.family == "encoder-decoder":
        inputs["decoder_input_ids"] = ids
    with torch.no_grad():
        out = model(**inputs, use_cache=True)
    real = cache_bytes(out.past_key_values)
    state = cache_bytes(out.past_key_values, state=True)  # 0 but for state-space and hybrid types
    expected = kv_cache_bytes(spec, BATCH, PREFILL, "fp32", src=src if spec.family == "encoder-decoder" else None)
    assert real + state > 0
    # memory's cache bytes: K/V of B x L tokens plus B constant states
    assert real + state == exact(expected, spec.values), (model_type, real, state)
    if spec.family == "decoder-only":  # the Cost tree's own cache elements (Step.cache, Step.state) say the same
        tree = build(spec)
        per_token = exact(tree.cache, spec.values)
        assert BATCH * PREFILL * per_token * 4 == real, (model_type, per_token)
        assert BATCH * exact(tree.state, spec.values) * 4 == state, (model_type, state)


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
