"""Cross-checks against real PyTorch modules on the meta device (no weights allocated).

Reference: ``sum(p.numel() for p in module.parameters())`` of ``torch.nn.Transformer``
(torch 2.13.0) and of transformers' ``BertModel`` / ``GPT2LMHeadModel`` (transformers 5.x),
built from random small sizes by hypothesis (200 examples per property under the "ci" profile
of conftest.py).  The engine side is built from Spec options directly (not through
hf_config), so these check the components themselves.
"""

from __future__ import annotations

import pytest
from conftest import require
from hypothesis import given
from hypothesis import strategies as st

from symtrans.catalog import presets
from symtrans.engine.spec import Spec

require("torch")  # the reference; a missing one fails under SYMTRANS_REQUIRE_ORACLES=1 (conftest.py)

pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True:UserWarning")


def _vanilla(d_model, nhead, n_enc, n_dec, d_ff, bias=True) -> Spec:
    """nn.Transformer: post-norm LayerNorm layers (β only with bias), a final LayerNorm per stack."""
    sizes = dict(d_model=d_model, h=nhead, d_ff=d_ff, V=1)
    sizes.update({"N": n_enc} if n_enc == n_dec else {"N_enc": n_enc, "N_dec": n_dec})
    return Spec(
        family="encoder-decoder",
        sizes=sizes,
        positional="sinusoidal",
        norm="layernorm",
        bias=bias,
        norm_bias=bias,
        final_norm=True,
    )


def _stacks(engine, spec) -> int:
    """Encoder + decoder stacks only: nn.Transformer has no embeddings and no output layer."""
    return engine.child(spec, "encoder", "decoder")


def test_nn_transformer_base_must_show(engine, torch_meta):
    # Tracker / torch.nn.Transformer(512, 8, 6, 6, 2048) on the meta device, torch 2.13.0: 44,140,544.
    m = torch_meta.build(torch_meta.torch.nn.Transformer, 512, 8, 6, 6, 2048)
    assert torch_meta.count(m) == 44_140_544
    assert _stacks(engine, _vanilla(512, 8, 6, 6, 2048)) == 44_140_544
    # Written out: encoder layer 4*(512^2+512) + 2*512*2048 + 2048 + 512 + 2*(2*512) = 3,152,384;
    # decoder layer adds cross-attention and a third norm: 3,152,384 + 4*(512^2+512) + 2*512 = 4,204,032;
    # two final LayerNorms 2*(2*512).
    enc = 4 * (512**2 + 512) + 2 * 512 * 2048 + 2048 + 512 + 2 * 1024
    dec = enc + 4 * (512**2 + 512) + 1024
    assert (enc, dec) == (3_152_384, 4_204_032)
    assert 6 * enc + 6 * dec + 2 * 1024 == 44_140_544


@pytest.mark.parametrize(
    "preset, args, total",
    [
        # torch.nn.Transformer on the meta device, torch 2.13.0 (/tmp/refcounts.json)
        ("transformer-base", (512, 8, 6, 6, 2048), 44_140_544),
        ("transformer-big", (1024, 16, 6, 6, 4096), 176_361_472),
    ],
)
def test_presets_against_nn_transformer(engine, torch_meta, preset, args, total):
    spec = presets.get(preset).spec
    m = torch_meta.build(torch_meta.torch.nn.Transformer, *args)
    assert torch_meta.count(m) == total
    assert _stacks(engine, spec) == total
    # The preset adds one shared V x d_model embedding (tied to the output), V = 37000.
    assert engine.params(spec) == total + 37000 * args[0]


@given(
    h=st.integers(1, 4),
    head=st.integers(1, 6),
    n_enc=st.integers(1, 3),
    n_dec=st.integers(1, 3),
    d_ff=st.integers(1, 24),
    bias=st.booleans(),
    norm_first=st.booleans(),
)
def test_nn_transformer_random(engine, torch_meta, h, head, n_enc, n_dec, d_ff, bias, norm_first):
    d = h * head
    m = torch_meta.build(
        torch_meta.torch.nn.Transformer,
        d_model=d,
        nhead=h,
        num_encoder_layers=n_enc,
        num_decoder_layers=n_dec,
        dim_feedforward=d_ff,
        bias=bias,
        norm_first=norm_first,
    )
    spec = _vanilla(d, h, n_enc, n_dec, d_ff, bias).replace(norm_position="pre" if norm_first else "post")
    assert _stacks(engine, spec) == torch_meta.count(m)


# --------------------------------------------------------------------------- transformers models


@given(
    h=st.integers(1, 4),
    head=st.integers(1, 6),
    n=st.integers(1, 3),
    d_ff=st.integers(1, 24),
    V=st.integers(2, 50),
    L=st.integers(1, 40),
    types=st.integers(0, 3),
    pool=st.booleans(),
)
def test_bert_model_random(engine, hf, h, head, n, d_ff, V, L, types, pool):
    d = h * head
    cfg = dict(
        hidden_size=d,
        num_attention_heads=h,
        num_hidden_layers=n,
        intermediate_size=d_ff,
        vocab_size=V,
        max_position_embeddings=L,
        type_vocab_size=types,
        pad_token_id=0,
    )
    m = hf.build("bert", cfg, add_pooling_layer=pool)
    spec = Spec(
        family="encoder-only",
        sizes=dict(d_model=d, h=h, N=n, d_ff=d_ff, V=V, L_max=L),
        positional="learned",
        token_types=types,
        embedding_norm=True,
        pooler=pool,
    )
    assert engine.params(spec) == hf.count(m)


@given(
    h=st.integers(1, 4),
    head=st.integers(1, 6),
    n=st.integers(1, 3),
    inner=st.one_of(st.none(), st.integers(1, 24)),
    V=st.integers(2, 50),
    L=st.integers(1, 40),
    tie=st.booleans(),
)
def test_gpt2_lm_head_model_random(engine, hf, h, head, n, inner, V, L, tie):
    d = h * head
    cfg = dict(
        n_embd=d,
        n_head=h,
        n_layer=n,
        n_inner=inner,
        vocab_size=V,
        n_positions=L,
        tie_word_embeddings=tie,
        bos_token_id=0,
        eos_token_id=0,
    )
    m = hf.build("gpt2", cfg)
    spec = Spec(
        family="decoder-only",
        sizes=dict(d_model=d, h=h, N=n, d_ff=4 * d if inner is None else inner, V=V, L_max=L),
        positional="learned",
        norm_position="pre",
        final_norm=True,
        tie_output=tie,
    )
    assert engine.params(spec) == hf.count(m)
