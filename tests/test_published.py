"""Published FLOP formulas reproduced exactly under their stated assumptions, with the
residual as a closed form.  Expected values come from the papers' tables or from
arithmetic written out here."""

from __future__ import annotations

import json

import pytest
import sympy as sp

from symtrans.accounting import formulas as P
from symtrans.accounting.flops import evaluate, flops_expr, per_sequence
from symtrans.accounting.hardware import pf_days
from symtrans.catalog import presets
from symtrans.cli.main import main
from symtrans.engine import symbols as S
from symtrans.engine.architectures import build
from symtrans.engine.spec import Spec

# Hoffmann et al. 2022 Table A4, 73M row (App. F: V 32000, L 2048): 10 layers, d_model 640, d_ff 2560,
# 10 heads of 64, Transformer-XL relative positions (Dai et al. 2019), one V x d_model matrix.
CHIN = Spec(
    family="decoder-only",
    sizes=dict(d_model=640, d_ff=2560, h=10, N=10, V=32000, L_max=2048, L=2048),
    positional="transformer-xl",
    final_norm=True,
    tie_output=True,
    norm_position="pre",
)
# The same model from the command line: GPT-2's layout (LayerNorm with shifts, biases, final norm, tied
# head) with the Chinchilla sizes and relative positions.
CHIN_CLI = [
    "gpt2",
    "--set",
    "d_model=640",
    "--set",
    "d_ff=2560",
    "--set",
    "h=10",
    "--set",
    "N=10",
    "--set",
    "V=32000",
    "--set",
    "L=2048",
    "--set",
    "positional=transformer-xl",
]
GPT2 = presets.get("gpt2").spec
GPT3 = presets.get("gpt3-175b").spec
# A model meeting 6ND's and PaLM's assumption that every parameter takes part in one matmul per
# token: no biases, no norm parameters, no learned positions, one tied V x d_model matrix.
PURE = Spec(
    family="decoder-only",
    sizes=dict(d_model=512, d_ff=2048, h=8, N=4, V=1000, L_max=256, L=256),
    bias=False,
    norm="none",
    positional="rotary",
    tie_output=True,
)


def test_chinchilla_73m_parameters_match_table_a4():
    # Hoffmann et al. 2022 Table A4, 73M row: 73,825,280 parameters.  The breakdown that reproduces it
    # (layers, one V x d matrix, Transformer-XL W_R, u/v, linear biases, LayerNorms incl. a final one):
    d, dff, N, V = 640, 2560, 10, 32000
    parts = (
        N * (4 * d * d + 2 * d * dff) + V * d + N * d * d + N * 2 * d + N * (4 * d + dff + d) + N * 2 * 2 * d + 2 * d
    )
    assert parts == 73_825_280
    assert evaluate(build(CHIN).params, CHIN.values) == 73_825_280


def test_chinchilla_73m_flops_per_sequence_and_ratio_to_6nd():
    # App. F per layer at L = 2048, d_attn = 640, h = 10, d_ff = 2560:
    L, d, da, h, dff = 2048, 640, 640, 10, 2560
    layer = (
        2 * 3 * L * d * da + 2 * L * L * da + 3 * h * L * L + 2 * L * L * da + 2 * L * da * d + 2 * L * (2 * d * dff)
    )
    assert layer == 30_995_906_560
    no_embed = 3 * 10 * layer  # forward + backward (2 x forward), 10 layers
    assert no_embed == 929_877_196_800
    v = {**CHIN.values, "B": 1}
    assert evaluate(per_sequence(CHIN, "training", "chinchilla-nonembedding"), v) == no_embed
    ratio = sp.Rational(no_embed, 6 * 73_825_280 * L)  # Table A4: FLOPs / 6ND, with D = L tokens
    assert round(float(ratio), 3) == 1.025
    # With App. F's embeddings (2 L V d) and logits (2 L d V) the ratio no longer matches the table.
    with_embed = no_embed + 3 * (2 * L * 32000 * d + 2 * L * d * 32000)
    assert with_embed == 1_433_193_676_800
    assert evaluate(per_sequence(CHIN, "training", "chinchilla"), v) == with_embed
    assert round(with_embed / (6 * 73_825_280 * L), 3) == 1.580


@pytest.mark.parametrize("embeddings", [True, False])
def test_chinchilla_app_f_is_the_chinchilla_convention_exactly(embeddings):
    for spec in (CHIN, GPT2):
        pub = P.chinchilla(spec, embeddings)
        assert pub.assumed_residual == 0


def test_kaplan_forward_is_the_half_square_without_logits_and_its_residual():
    for spec in (GPT2, GPT3):
        assert P.kaplan_forward(spec).assumed_residual == 0
        assert P.kaplan_params(spec).assumed_residual == 0
    # Transformer-XL's relative attention is outside Kaplan's formula: per token and layer, W_R projects
    # the L relative encodings once per batch (2 L d^2 / (B L)) and Q R^T scores L/2 pairs per head
    # under the half-square count (2 h (L/2) d_k = L d)  (Dai et al. 2019 §3.3).
    extra = P.kaplan_forward(CHIN).assumed_residual
    assert sp.expand(extra - S.N * (2 * S.d_model**2 / S.B + S.L * S.d_model)) == 0
    # Kaplan Table 1 counts the attention "mask" as 2 n_layer n_ctx d_attn per token and leaves the
    # de-embedding 2 d_model n_vocab out of C_forward; a full-square forward with the head adds
    # 2 n_layer n_ctx d_attn more and 2 d_model V:
    res = P.kaplan_forward(GPT2).residual
    assert sp.expand(res - (2 * S.N * S.L * S.d_model + 2 * S.d_model * S.V)) == 0


def test_6nd_and_palm_are_exact_when_every_parameter_is_a_matmul_weight():
    assert P.six_nd(PURE).assumed_residual == 0
    assert P.palm(PURE).assumed_residual == 0
    # 6ND leaves out the attention scores: the residual is 12 N L d_model per token (PaLM App. B's
    # 12 n_layer H Q T with H Q = d_model), times D tokens.
    assert sp.expand(P.six_nd(PURE).residual - 12 * S.N * S.L * S.d_model * S.D) == 0
    assert P.palm(PURE).residual == 0


def test_gpt3_175b_by_6nd_is_3_14e23_flops_or_3_64e3_pf_days():
    # Parameters of the GPT-2 architecture at Brown et al. 2020 Table 2.1 sizes: per layer 12 d^2 + 13 d
    # (Q, K, V, O, two FFN maps; 9 d of biases, two LayerNorms 4 d); wte V d, wpe 2048 d, ln_f 2 d.
    d, V = 12288, 50257
    params = 96 * (12 * d * d + 13 * d) + V * d + 2048 * d + 2 * d
    assert params == 174_604_259_328 and round(params / 1e9, 1) == 174.6
    pub = P.six_nd(GPT3, 300 * 10**9)
    value = evaluate(pub.formula, GPT3.values)
    assert value == 6 * params * 300 * 10**9
    # Brown et al. 2020 Table D.1: 3.14E+23 FLOPs, 3.64E+03 PF-days for GPT-3 175B.
    assert f"{float(value):.2e}" == "3.14e+23"
    assert f"{float(pf_days(value)):.2e}" == "3.64e+03"


def test_megatron_formulas_are_exact_for_gpt3():
    # Narayanan et al. 2021 §5.1 eq. (3): 72 B s l h^2 (1 + s/(6h) + V/(12 l h)), here at B = 1, s = 2048,
    # l = 96, h = 12288, V = 50257; expanded: 72 B s l h^2 + 12 B s^2 l h + 6 B s h V.
    B, s, l, h, V = 1, 2048, 96, 12288, 50257
    expected = 72 * B * s * l * h * h + 12 * B * s * s * l * h + 6 * B * s * h * V
    v = {**GPT3.values, "B": B, "L": s}
    assert evaluate(P.megatron(GPT3).formula, v) == expected == evaluate(flops_expr(GPT3, "training"), v)
    # Korthikanti et al. 2022 §6 with full recomputation: 96 B s l h^2 (1 + s/(6h) + V/(16 l h)).
    expected_rc = 96 * B * s * l * h * h + 16 * B * s * s * l * h + 6 * B * s * h * V
    assert (
        evaluate(P.megatron(GPT3, True).formula, v)
        == expected_rc
        == evaluate(flops_expr(GPT3, "training", recompute="full"), v)
    )
    assert P.megatron(GPT3).assumed_residual == 0 and P.megatron(GPT3, True).assumed_residual == 0


def test_megatron_residual_for_a_gated_ffn_is_a_closed_form_in_d_ff():
    # Llama-2-7B: SwiGLU has three d_model x d_ff maps where Megatron assumes two of 4 d_model:
    # exact - formula = 3 x 2 B L N (3 d d_ff - 8 d^2) = 18 B L N d d_ff - 48 B L N d^2.
    res = P.megatron(presets.get("llama-2-7b").spec).residual
    assert sp.expand(res - (18 * S.B * S.L * S.N * S.d_model * S.d_ff - 48 * S.B * S.L * S.N * S.d_model**2)) == 0


def test_compare_rows_value_exact_ratio_residual():
    rows = P.compare(GPT2, {"B": 1, "L": 1024})
    assert [r.key for r in rows] == list(P.FORMULAS)
    for r in rows:
        assert r.ratio == sp.Rational(r.value, r.exact)
        assert isinstance(r.residual, sp.Expr)
    meg = {r.key: r for r in rows}["megatron"]
    # GPT-2 small meets Megatron's assumptions (d_ff = 4 d_model): ratio exactly 1 at B = 1, L = 1024.
    assert meg.ratio == 1 and meg.exact == 3 * (2 * 1024 * (12 * 12 * 768**2 + 768 * 50257) + 4 * 12 * 1024**2 * 768)


def test_compare_refuses_encoder_decoders():
    with pytest.raises(ValueError, match="single-stack"):
        P.compare(presets.get("t5-small").spec)


def test_cli_compare(capsys):
    assert main(["params", *CHIN_CLI, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 73_825_280
    assert main(["flops", *CHIN_CLI, "--mode", "training", "--compare", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = {r["key"]: r for r in data["compare"]}
    assert rows["chinchilla-nonembedding"]["value"] == 929_877_196_800
    assert rows["chinchilla-nonembedding"]["residual_under_assumptions"] == "0"
    for r in data["compare"]:
        assert set(r) >= {"formula", "value", "exact", "ratio", "residual"}
    assert main(["flops", "gpt2", "--compare"]) == 0
    out = capsys.readouterr().out
    assert "Kaplan 2020" in out and "6ND" in out and "PaLM" in out and "Megatron" in out and "Chinchilla" in out


@pytest.mark.parametrize(
    "options, differs",
    [
        (["--mode", "training", "--mask", "causal"], []),
        (["--mode", "training", "--convention", "macs"], ["--convention macs"]),
        (["--mode", "training", "--recompute", "selective"], ["--recompute selective"]),
        (["--mode", "decode"], ["--mode decode"]),
        (["--mode", "training"], []),
    ],
)
def test_cli_compare_states_its_basis_when_the_header_counts_something_else(capsys, options, differs):
    # GPT-2 small at B = 1, L = 1024 under the formulas' own basis (flops, no recomputation) and the
    # command's --mask (8e9f66a: the exact counts follow --mask): with the full square, training =
    # 3 x forward = 3 x (2 L (12 N d^2 + d V) + 4 N L^2 d) = 874,944,921,600 FLOPs (Megatron's
    # 72 B s l h^2 (1 + s/6h + V/12lh) gives the same, d_ff = 4 d); with the causal lower triangle,
    # L(L+1)/2 pairs: 3 x (2 L (12 N d^2 + d V) + 2 N L (L + 1) d) = 817,019,486,208.  A header that
    # counts something else (MACs, recomputation, a decode step) must be named.
    d, N, V, L = 768, 12, 50257, 1024
    training_full = 3 * (2 * L * (12 * N * d * d + d * V) + 4 * N * L * L * d)
    assert training_full == 874_944_921_600
    training_causal = 3 * (2 * L * (12 * N * d * d + d * V) + 2 * N * L * (L + 1) * d)
    assert training_causal == 817_019_486_208
    mask = "causal" if "causal" in options else "full"
    assert main(["flops", "gpt2", *options, "--compare", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    basis = data["compare_basis"]
    assert (basis["convention"], basis["mask"], basis["recompute"]) == ("flops", mask, "none")
    assert basis["differs_from_header"] == differs
    expected = training_causal if mask == "causal" else training_full
    assert {r["key"]: r for r in data["compare"]}["megatron"]["exact"] == expected
    assert main(["flops", "gpt2", *options, "--compare"]) == 0
    out = capsys.readouterr().out
    assert "under the flops convention" in out and "the attention mask of --mask and no recomputation" in out
    assert ("note: so these exact counts are not the count above" in out) == bool(differs)
    for option in differs:
        assert option in out
