"""FLOP conventions as data: flops vs MACs, all-ops element-wise costs, mask modes,
embeddings, tied heads and MoE.  Every expected value is arithmetic written out here
from the cited shapes, never a call of the code under test."""

from __future__ import annotations

import pytest
import sympy as sp

from symtrans.accounting.flops import count, evaluate, flops_expr, per_token
from symtrans.catalog import presets
from symtrans.cli.main import main
from symtrans.engine import symbols as S
from symtrans.engine.architectures import Workload, build
from symtrans.engine.conventions import CONVENTIONS, MASK_MODES, PER_ELEMENT, RECOMPUTE, convention, per_element
from symtrans.engine.cost import ATTENTION

GPT2 = presets.get("gpt2").spec  # Radford et al. 2019; config.json of gpt2
BERT = presets.get("bert-base").spec  # Devlin et al. 2019 §3; config.json of bert-base-uncased


def test_every_convention_is_named_data_with_a_source():
    assert set(CONVENTIONS) == {"flops", "macs", "all-ops", "chinchilla", "chinchilla-nonembedding"}
    assert (convention("flops").flops_per_mac, convention("macs").flops_per_mac) == (2, 1)
    for c in CONVENTIONS.values():
        assert c.description and c.source
    for op in PER_ELEMENT.values():
        assert op.cost >= 1 and op.what and op.source
    assert set(MASK_MODES) == {"full", "causal", "half", "window"} and set(RECOMPUTE) == {"none", "selective", "full"}


def test_unknown_convention_lists_the_valid_ones():
    with pytest.raises(ValueError, match="valid conventions: flops, macs, all-ops"):
        convention("flop")
    with pytest.raises(ValueError, match="known: softmax"):
        per_element("gelu")


def test_bert_base_layer_forward_at_512_is_8053063680_flops_and_half_in_macs():
    # One BERT-base layer (Devlin et al. 2019: d_model 768, d_ff 3072, 12 heads), L = 512, B = 1:
    # projections Q, K, V, O: 4 * 768^2 = 2,359,296 weights; FFN 2 * 768 * 3072 = 4,718,592 weights;
    # dense: 2 * 512 * 7,077,888 = 7,247,757,312; scores Q K^T and scores V: 2 * 2 * 512^2 * 768 = 805,306,368.
    dense = 2 * 512 * (4 * 768**2 + 2 * 768 * 3072)
    scores = 2 * 2 * 512**2 * 768
    assert dense + scores == 8_053_063_680
    layer = build(BERT).find("encoder layer")
    one = type(layer)(name=layer.name, block=layer.block, steps=layer.steps, children=layer.children)  # 1 copy
    v = {**BERT.values, "B": 1, "L": 512}
    assert evaluate(count(one, "flops"), v) == 8_053_063_680
    assert evaluate(count(one, "macs"), v) == 4_026_531_840 == 8_053_063_680 // 2


def _attention_per_token_training(spec, mask, L):
    model = build(spec, Workload(mask=mask))
    attn = count(model, "flops", lambda n: n.step.kind == ATTENTION)
    return evaluate(3 * attn / (S.B * S.L), {**spec.values, "B": 1, "L": L})


def test_gpt2_attention_score_terms_per_token_full_half_and_causal():
    # PaLM App. B: 12 * n_layer * H * Q * T per token (training) = 12 * 12 * 12 * 64 * 1024.
    assert 12 * 12 * 12 * 64 * 1024 == 113_246_208
    assert _attention_per_token_training(GPT2, "full", 1024) == 113_246_208
    # Half the square (Kaplan's causal discount): 56,623,104.
    assert _attention_per_token_training(GPT2, "half", 1024) == 56_623_104 == 113_246_208 // 2
    # The exact lower triangle keeps L(L+1)/2 pairs: 12 * 12 * 768 * (1024 * 1025 / 2) / 1024 per token.
    assert _attention_per_token_training(GPT2, "causal", 1024) == 12 * 12 * 768 * 1025 // 2 == 56_678_400


def test_causal_mask_keeps_L_times_L_plus_1_over_2_pairs():
    fwd = flops_expr(GPT2, "forward", mask="causal")
    full = flops_expr(GPT2, "forward", mask="full")
    # In each of N layers both score matmuls (2 FLOPs per pair and per d_k, h heads: 2 * 2 * d_model
    # per pair) lose the L(L-1)/2 masked pairs of the L x L square.
    assert sp.expand(full - fwd - S.N * 4 * S.B * S.d_model * S.L * (S.L - 1) / 2) == 0


def test_all_ops_counts_every_elementwise_term_at_its_stated_cost():
    # GPT-2 at B = 1, L = 1024 (Radford et al. 2019; GPT2Block): per layer
    #   scale 1/sqrt(d_k): 1 * h * L^2; softmax: 3 * h * L^2 (Chinchilla App. F);
    #   two LayerNorms: 2 * 5 * L * d (ELECTRA LAYER_NORM_FLOPS = 5);
    #   bias adds: Q, K, V, O (4 * L * d), c_fc (L * d_ff), c_proj (L * d);
    #   GELU: 1 * L * d_ff; residual adds: 2 * L * d;  plus the final LayerNorm 5 * L * d.
    L, d, dff, h, N = 1024, 768, 3072, 12, 12
    per_layer = 1 * h * L * L + 3 * h * L * L + 2 * 5 * L * d + 4 * L * d + L * dff + L * d + L * dff + 2 * L * d
    extra = N * per_layer + 5 * L * d
    v = {**GPT2.values, "B": 1, "L": L}
    all_ops = evaluate(flops_expr(GPT2, "forward", "all-ops"), v)
    matmul = evaluate(flops_expr(GPT2, "forward", "flops"), v)
    assert all_ops - matmul == extra == 843_841_536
    # The costs come from the table, not from constants hidden in the components.
    assert (per_element("softmax"), per_element("layernorm"), per_element("residual")) == (3, 5, 1)


def test_embedding_lookup_costs_nothing_and_the_head_counts_tied_or_not():
    v = {**GPT2.values, "B": 1, "L": 1024}
    tied = evaluate(flops_expr(GPT2, "forward"), v)
    untied = evaluate(flops_expr(GPT2.replace(tie_output=False), "forward"), v)
    assert tied == untied  # the tied head still multiplies: 2 * L * d_model * V
    model = build(GPT2)
    assert evaluate(count(model.child("embeddings"), "flops"), v) == 0
    assert evaluate(count(model.child("LM head"), "flops"), v) == 2 * 1024 * 768 * 50257 == 79_047_426_048


def test_moe_ffn_counts_k_active_experts_plus_the_router():
    # Mixtral 8x7B (Jiang et al. 2024): per token and layer, router 4096 x 8 and k = 2 experts of
    # three 4096 x 14336 maps: 2 * (4096 * 8 + 2 * 3 * 4096 * 14336) forward FLOPs.
    spec = presets.get("mixtral-8x7b").spec
    model = build(spec)
    moe = model.find("mixture of experts")
    one = type(moe)(name=moe.name, block=moe.block, steps=moe.steps, children=moe.children)
    assert evaluate(count(one, "flops"), {**spec.values, "B": 1, "L": 1}) == 2 * (4096 * 8 + 2 * 3 * 4096 * 14336)


def test_macs_in_every_mode_counted_from_the_shapes():
    # GPT-2 at B = 1, L = 1024, in multiply-accumulates (one per product of a weight and an input, or of
    # two activations): per layer Q, K, V, O and the two FFN maps L * 12 d^2; QK^T and scores V L^2 d each;
    # the tied head L d V.  Backward runs two products of each forward one's size (gradients with respect
    # to the input and to the weight; Kaplan et al. 2020 §2.1), training both passes.
    L, d, V, N = 1024, 768, 50257, 12
    forward = L * N * 12 * d * d + N * 2 * L * L * d + L * d * V
    assert forward == 145_824_153_600
    v = {**GPT2.values, "B": 1, "L": L}
    for mode, factor in (("forward", 1), ("backward", 2), ("training", 3)):
        assert evaluate(flops_expr(GPT2, mode, "macs"), v) == factor * forward, mode


def test_cli_convention_and_mask_flags(capsys):
    assert main(["flops", "bert-base", "--seq-len", "512", "--convention", "macs", "--format", "json"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    assert data["convention"] == "macs" and data["unit"] == "MAC"
    # 12 layers of 4,026,531,840 MACs + the pooler's 768 x 768 on one token (BertPooler).
    assert data["total"] == 12 * 4_026_531_840 + 768 * 768
    assert main(["flops", "gpt2", "--convention", "gigaflops"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "valid conventions: flops, macs, all-ops, chinchilla" in err
    assert main(["flops", "gpt2", "--mask", "diagonal"]) == 2
    assert "valid masks: full, causal, half" in capsys.readouterr().err


def test_per_token_is_exact_not_float():
    # Half-square attention at odd L: L^2/2 pairs per head is not an integer, the count stays exact.
    pt = per_token(GPT2.replace(sizes={"N": 1}), "forward", mask="half")
    value = evaluate(pt, {**GPT2.values, "N": 1, "L": 3})
    assert isinstance(value, sp.Rational) and not isinstance(value, float)
    # 2 * (12 d^2 + d V) dense per token + 2 * 2 * (L/2) * d score FLOPs per token, L = 3, d = 768.
    assert value == 2 * (12 * 768**2 + 768 * 50257) + 2 * 768 * 3
