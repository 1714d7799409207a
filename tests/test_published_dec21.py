"""Published configs of the dense decoders and hybrids added for issue 21 (dec21 part):
each file (sources in tests/fixtures/configs/SOURCES.md) counts exactly what transformers 5.x
builds from it on the meta device, and each total is also written out here from an independent
reading (the figure the source itself states, or the model card's size), so a change in the
installed transformers cannot move both sides at once.
"""

from __future__ import annotations

import pytest
from conftest import require

require("transformers")

from symtrans.catalog.hf_config import spec_from_config  # noqa: E402
from symtrans.engine.architectures import build  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402

PUBLISHED = [
    # HuggingFaceTB/SmolLM3-3B-Base: the source's own arithmetic, 262,668,288 tied embedding +
    # 36 x 78,123,008 layers + 2,048 final norm = 3,075,098,624
    ("smollm3-3b-base", 3_075_098_624),
    # allenai Olmo-3-1025-7B (reconstructed, SOURCES.md): 2 x 100,278 x 4,096 untied +
    # 32 x (4 x 4,096^2 + 3 x 4,096 x 11,008 + 4 x 4,096 norms) + 4,096 = 7,298,011,136
    ("olmo-3-7b", 7_298_011_136),
    # CohereLabs/c4ai-command-r7b-12-2024 (reconstructed, SOURCES.md): 256,000 x 4,096 tied +
    # 32 x (2 x 4,096^2 + 2 x 4,096 x 1,024 + 3 x 4,096 x 14,336 + 4,096 norm) + 4,096 = 8,028,033,024
    # The module printout of Svngoku/c4ai-command-r7b-12-2024-4bit's model card agrees on every size:
    # Embedding(256000, 4096), 32 layers, q/o 4096x4096, k/v 4096->1024, gate/up 4096->14336.
    ("command-r7b-12-2024", 8_028_033_024),
    # swiss-ai Apertus-8B (SOURCES.md): 2 x 131,072 x 4,096 untied + 32 x (2 x 4,096^2 + 2 x 4,096 x 1,024
    # + 2 x 4,096 x 21,504 + 2 x 4,096 + 2 x 128 norms + 2 xIELU scalars) + 4,096 = 8,053,338,176 ("8B")
    ("apertus-8b", 8_053_338_176),
]


@pytest.mark.parametrize(("name", "total"), PUBLISHED, ids=[n for n, _ in PUBLISHED])
def test_published_configs(hf, read_fixture, name, total):
    cfg = read_fixture(name)
    model = hf.build(cfg["model_type"], cfg)
    assert hf.count(model) == total
    spec, notes = spec_from_config(cfg, name)
    assert exact(build(spec).params, spec.values) == total
    assert not [n for n in notes if "unknown" in n], notes  # every key of the published file is known


def test_bamba_state_and_kv_bytes_equal_the_real_cache(hf):
    """Issue 21 Build item 3 for a Bamba-like tiny model (AUDIT_BASE: 3 Mamba 2 layers, 1 attention
    layer): after a real fp32 forward of 2 sequences of 5 tokens, transformers' cache holds
    K/V of 2 x 5 tokens x 1 layer x 2 (K, V) x h_kv 2 x d_k 6 x 4 bytes = 960 bytes, and per Mamba 2
    layer a conv state of (d_inner 24 + 2 x g 2 x d_state 3) x d_conv 2 = 72 and an SSM state of
    heads 4 x head width 6 x d_state 3 = 72 elements: 2 x 3 x 144 x 4 bytes = 3,456 bytes."""
    from test_kv_cache_real import cache_bytes
    from test_model_types import _cfg, _flop_model

    from symtrans.accounting.memory import kv_cache_bytes

    torch = hf.torch
    cfg = _cfg("bamba")
    model = _flop_model(hf, "bamba", cfg)
    with torch.no_grad():
        out = model(input_ids=torch.ones(2, 5, dtype=torch.long), use_cache=True)
    assert cache_bytes(out.past_key_values) == 960
    assert cache_bytes(out.past_key_values, state=True) == 3_456
    spec, _ = spec_from_config(cfg, "bamba")
    tree = build(spec)
    assert exact(tree.cache, spec.values) * 4 == 24 * 4  # K/V bytes per token, fp32
    assert exact(tree.state, spec.values) * 4 == 432 * 4  # state bytes per sequence, fp32
    assert exact(kv_cache_bytes(spec, 2, 5, "fp32"), spec.values) == 960 + 3_456


def test_smollm3_longer_no_rope_layers_adds_no_layer():
    # CI's hypothesis draw: one layer, no_rope_layers [0, 0], use_sliding_window with window 1.
    # SmolLM3Config builds layer_types over range(num_hidden_layers): one sliding layer, and
    # the model has one layer; symtrans refused it ("N_w=2 windowed layers exceed the N=1").
    # Oracle: transformers' own count on the meta device.
    transformers = require("transformers")
    torch = require("torch")
    cfg = dict(num_hidden_layers=1, intermediate_size=1, vocab_size=4, max_position_embeddings=1)
    cfg.update(num_attention_heads=1, num_key_value_heads=1, hidden_size=2, pad_token_id=None)
    cfg.update(no_rope_layers=[0, 0], use_sliding_window=True, sliding_window=1)
    hf = transformers.SmolLM3Config(**cfg)
    assert hf.layer_types == ["sliding_attention"]
    with torch.device("meta"):
        n = sum(p.numel() for p in transformers.SmolLM3ForCausalLM(hf).parameters())
    spec, _ = spec_from_config(dict(cfg, model_type="smollm3"), "x")
    assert exact(build(spec).params, spec.values) == n
