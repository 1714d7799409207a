"""Exact counts and identities of the core engine (tracker issue 2, "Must show").

Every expected value names its source: a real implementation's count, a paper's
table, or arithmetic written out here.  None comes from the code under test.
"""

import pytest
import sympy as sp
from conftest import require

from symtrans.catalog.presets import PRESETS
from symtrans.engine import symbols as S
from symtrans.engine.architectures import Workload, build
from symtrans.engine.components import attention
from symtrans.engine.evaluate import exact
from symtrans.engine.simplify import closed_form, identical
from symtrans.engine.spec import Spec


def count(spec: Spec) -> int:
    return exact(build(spec).params, spec.values)


def test_bert_base_matches_hf_bertmodel():
    # transformers BertModel(bert-base-uncased config), with pooler, counted on the meta device.
    assert count(PRESETS["bert-base"].spec) == 109_482_240


def test_gpt2_matches_hf_and_the_tied_head_counted_twice_is_the_classic_mistake():
    # transformers GPT2LMHeadModel(gpt2 config): 124,439,808 (lm_head shares wte).
    spec = PRESETS["gpt2"].spec
    assert count(spec) == 124_439_808
    # Counting the tied head again adds V*d_model = 50257*768 = 38,597,376.
    assert count(spec.replace(tie_output=False)) == 124_439_808 + 50257 * 768 == 163_037_184


def test_nn_transformer_without_embeddings():
    # sum(p.numel() for p in torch.nn.Transformer(512, 8, 6, 6, 2048).parameters()) = 44,140,544
    # (measured on the meta device; also asserted live in test_crosscheck_torch.py).
    spec = PRESETS["transformer-base"].spec
    model = build(spec)
    stacks = model.child("encoder").params + model.child("decoder").params
    assert exact(stacks, spec.values) == 44_140_544
    # ... and the preset adds exactly one shared, tied 37000 x 512 embedding (Vaswani 2017 §3.4).
    assert count(spec) == 44_140_544 + 37000 * 512 == 63_084_544


@pytest.mark.parametrize("h", [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 768])
def test_mha_parameters_do_not_depend_on_h(h):
    # With h*d_k = d_model: W_Q, W_K, W_V, W_O are each d_model x d_model plus a bias of d_model:
    # 4*(768**2 + 768) = 2,362,368 for every h -- not twelve times that, and not a twelfth.
    spec = Spec(family="encoder-only", sizes=dict(d_model=768, d_ff=3072, h=h, N=1, V=1))
    att = attention(spec, "self", S.B, S.L, S.L)
    assert exact(att.params, spec.values) == 4 * (768**2 + 768) == 2_362_368


def test_mha_closed_form_has_no_h():
    spec = Spec(family="encoder-only", sizes=dict(d_model=768, d_ff=3072, h=12, N=1, V=1))
    assert S.h not in attention(spec, "self", S.B, S.L, S.L).params.free_symbols


HAND_2017 = Spec(
    family="encoder-decoder",
    sizes=dict(d_model=512, d_ff=2048, h=8, N=6, V=32768),
    bias=False,
    final_norm=False,
    share_embeddings=False,
    tie_output=True,
    positional="sinusoidal",
)


def test_hand_count_of_the_2017_model():
    # Written out: encoder layer 4*512**2 + 2*512*2048 + 2*(2*512) = 1,048,576 + 2,097,152 + 2,048;
    # decoder layer 8*512**2 + 2*512*2048 + 3*(2*512); two separate 32768 x 512 input matrices,
    # the decoder's tied to the output projection.
    enc = 4 * 512**2 + 2 * 512 * 2048 + 2 * 2 * 512
    dec = 8 * 512**2 + 2 * 512 * 2048 + 3 * 2 * 512
    assert (enc, dec) == (3_147_776, 4_197_376)
    model = build(HAND_2017)
    v = HAND_2017.values
    assert exact(model.find("encoder layer").params_each, v) == 3_147_776
    assert exact(model.find("decoder layer").params_each, v) == 4_197_376
    assert exact(model.params, v) == 6 * enc + 6 * dec + 2 * 32768 * 512 == 77_625_344


GPT2_TINY = Spec(
    family="decoder-only",
    sizes=dict(d_model=256, d_ff=1024, h=4, N=2, V=1000, L_max=128, L=128),
    positional="learned",
    norm_position="pre",
    final_norm=True,
    tie_output=True,
)


def test_forward_flops_tiny_gpt2_matches_flop_counter():
    # torch.utils.flop_counter.FlopCounterMode on GPT2LMHeadModel (eager attention), batch 2, L 128,
    # LM head included: 1,003,487,232 FLOPs (tracker issue 2; re-measured live in test_flop_crosscheck.py).
    v = {**GPT2_TINY.values, "B": 2, "L": 128}
    assert exact(build(GPT2_TINY).flops, v) == 1_003_487_232


def test_gpt2_forward_flops_and_attention_terms():
    spec = PRESETS["gpt2"].spec
    v = {**spec.values, "B": 1, "L": 1024}
    model = build(spec)
    # Written out: 2 * 1024 tokens * (12 layers * 12*768**2 weights + 768*50257 head)
    #            + 12 layers * 2 matmuls * 2*1024**2*768 (QK^T and scores.V, full square).
    weights = 2 * 1024 * (12 * 12 * 768**2 + 768 * 50257)
    attn = 12 * 2 * 2 * 1024**2 * 768
    assert attn == 38_654_705_664
    assert exact(model.flops, v) == weights + attn == 291_648_307_200
    attention_only = sp.Add(*[m * s.flops for _, m, s in model.walk() if s.kind == "attention"])
    assert exact(attention_only, v) == 38_654_705_664


def test_decoder_layer_minus_encoder_layer_is_cross_attention_and_its_norm():
    # Vaswani et al. 2017 §3.1: the decoder layer adds multi-head attention over the encoder output and
    # its LayerNorm.  torch.nn.MultiheadAttention(512, 8): in_proj 3 d^2 + 3 d, out_proj d^2 + d; a
    # LayerNorm gamma and beta 2 d: 4 * 512^2 + 4 * 512 + 2 * 512 = 1,051,648.
    spec = PRESETS["transformer-base"].spec
    model = build(spec)
    v = spec.values
    enc = exact(model.find("encoder layer").params_each, v)
    dec = exact(model.find("decoder layer").params_each, v)
    assert dec - enc == 4 * 512**2 + 4 * 512 + 2 * 512 == 1_051_648
    # ... and both layers as torch builds them (TransformerEncoderLayer / TransformerDecoderLayer(512, 8, 2048)).
    torch = require("torch")
    with torch.device("meta"):
        t_enc = torch.nn.TransformerEncoderLayer(512, 8, 2048)
        t_dec = torch.nn.TransformerDecoderLayer(512, 8, 2048)
    assert (enc, dec) == tuple(sum(p.numel() for p in m.parameters()) for m in (t_enc, t_dec))


@pytest.mark.parametrize(
    "name",
    [
        n
        for n, p in PRESETS.items()
        if p.spec.family == "decoder-only"
        and not p.spec.is_moe
        and not p.spec.has("w")
        and p.spec.positional != "transformer-xl"
    ],
)
def test_forward_flops_per_token_is_2_weights_plus_4NLd(name):
    # Kaplan et al. 2020 §2.1: C_forward per token = 2 * (matmul weights, head included) + 2*N*n_ctx*d_attn
    # per matmul pair, i.e. 4*N*L*h*d_k with the full square; with d_k = d_model/h that is 4*N*L*d_model.
    # The matmul weights are written out from the layer's maps (not read from the Cost tree): W_Q and W_O
    # d_model x h*d_k, W_K and W_V d_model x h_kv*d_k, two FFN maps (three when gated), the head d_model x V
    # (a tied head still multiplies).
    spec = PRESETS[name].spec
    d_k = S.d_k if spec.has("d_k") else S.d_model / S.h
    h_kv = S.h_kv if spec.has("h_kv") else S.h
    ffn_maps = 3 if spec.ffn in ("swiglu", "geglu") else 2
    layer = 2 * S.d_model * S.h * d_k + 2 * S.d_model * h_kv * d_k + ffn_maps * S.d_model * S.d_ff
    weights = S.N * layer + S.d_model * S.V
    per_token = build(spec).flops / (S.B * S.L)
    assert identical(per_token, 2 * weights + 4 * S.N * S.L * S.h * d_k)
    if not spec.has("d_k"):
        assert identical(per_token, 2 * weights + 4 * S.N * S.L * S.d_model)


def test_mistral_sliding_window_changes_flops_not_parameters():
    # Jiang et al. 2023 §2: a window of w = 4096 tokens; parameters equal MistralForCausalLM's 7,241,732,096.
    spec = PRESETS["mistral-7b"].spec
    assert spec.values["w"] == 4096
    full = spec.replace(sizes={"w": spec.values["L"]})
    assert count(spec) == count(full) == 7_241_732_096
    v = {**spec.values, "B": 1, "L": 8192}
    # Under the default full mask the window changes nothing: eager attention computes the
    # whole L x L score matrix and masks it (FlopCounterMode on MistralForCausalLM's eager
    # forward counts the same with and without sliding_window, tests/test_masks.py).  The
    # band a windowed kernel reads (--mask window) and the causal band are smaller.
    assert exact(build(spec).flops, v) == exact(build(full).flops, {**v, "w": 8192})
    for mask in ("window", "causal"):
        wl = Workload(mask=mask)
        assert exact(build(spec, wl).flops, v) < exact(build(full, wl).flops, {**v, "w": 8192})


def test_closed_form_is_grouped_by_N():
    cf = closed_form(build(PRESETS["gpt2"].spec).params)
    # N*(per-layer polynomial) + the rest: N appears exactly once, as a factor.
    n_terms = [t for t in sp.Add.make_args(cf) if S.N in t.free_symbols]
    assert len(n_terms) == 1
    assert sp.expand(n_terms[0] / S.N).free_symbols.isdisjoint({S.N})


def test_thousand_layers_build_like_one():
    spec = PRESETS["gpt2"].spec
    one = build(spec.replace(sizes={"N": 1})).params
    thousand = build(spec.replace(sizes={"N": 1000})).params
    assert one == thousand  # N stays symbolic: the same closed form, cached
    assert exact(thousand, {**spec.values, "N": 1000}) - exact(one, {**spec.values, "N": 1}) == 999 * (
        12 * 768**2 + 13 * 768
    )  # per GPT-2 layer: 12 d^2 weights + 13 d biases/norms


def test_encoder_decoder_lengths_are_separate():
    spec = PRESETS["transformer-base"].spec
    model = build(spec)
    v = {**spec.values, "B": 1, "L_src": 10, "L_tgt": 7}
    # Cross-attention: 7 queries over 10 keys: QK^T and scores.V are 2*2*7*10*512 per layer
    # (h*d_k = 512); its K and V projections run on the 10 encoder positions: 2*2*10*512*512.
    cross = model.find("cross-attention").flops_each
    q_o = 2 * 2 * 7 * 512 * 512
    k_v = 2 * 2 * 10 * 512 * 512
    assert exact(cross, v) == q_o + k_v + 2 * 2 * 7 * 10 * 512


def test_causal_mask_modes():
    spec = PRESETS["gpt2"].spec
    full = build(spec, Workload(mask="full"))
    causal = build(spec, Workload(mask="causal"))
    half = build(spec, Workload(mask="half"))
    v = {**spec.values, "B": 1, "L": 1024}
    attn = lambda m: exact(sp.Add(*[k * s.flops for _, k, s in m.walk() if s.kind == "attention"]), v)
    # per layer and head-width sum: 2 matmuls * 2 FLOPs * pairs * 768; pairs = L^2, L(L+1)/2, L^2/2
    assert attn(full) == 12 * 2 * 2 * 768 * 1024**2
    assert attn(causal) == 12 * 2 * 2 * 768 * (1024 * 1025 // 2)
    assert attn(half) == 12 * 2 * 2 * 768 * 1024**2 // 2


@pytest.mark.parametrize(
    "bad, message",
    [
        (dict(d_model=0), "d_model must be a positive integer"),
        (dict(d_model=-768), "d_model must be a positive integer"),
        (dict(d_model=768.0), "d_model must be a positive integer"),
        (dict(h=7), "does not divide d_model"),
        (dict(h=True), "h must be a positive integer"),
    ],
)
def test_invalid_sizes_are_rejected(bad, message):
    with pytest.raises(ValueError, match=message):
        PRESETS["gpt2"].spec.replace(sizes=bad)


def test_invalid_options_are_rejected():
    with pytest.raises(ValueError, match="norm must be one of"):
        PRESETS["gpt2"].spec.replace(norm="batchnorm")
    with pytest.raises(ValueError, match="k=3 experts per token exceeds E=2"):
        PRESETS["mixtral-8x7b"].spec.replace(sizes={"E": 2, "k": 3})
    with pytest.raises(ValueError, match="not divisible by h_kv"):
        PRESETS["llama-2-70b"].spec.replace(sizes={"h_kv": 7})
