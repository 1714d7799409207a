"""Training and inference FLOPs: modes, recomputation, per token/sequence/step/run,
prefill and decode with a KV cache, the CLI and its units.  Expected values are
arithmetic written out here from the cited model shapes."""

from __future__ import annotations

import json

import pytest
import sympy as sp

from symtrans.accounting.flops import (
    count,
    decode_expr,
    decode_step_expr,
    evaluate,
    flops_expr,
    per_sequence,
    per_token,
    prefill_expr,
    run_flops,
)
from symtrans.base.numbers import si
from symtrans.catalog import presets
from symtrans.cli.main import main
from symtrans.engine import symbols as S
from symtrans.engine.architectures import build

# nanoGPT's GPT-2 small with bias=False: no linear biases and no LayerNorm shifts (nanoGPT model.py).
GPT2_NB = presets.get("gpt2").spec.replace(bias=False, norm_bias=False)
LLAMA2_70B = presets.get("llama-2-70b").spec  # config.json of meta-llama/Llama-2-70b-hf


def test_gpt2_small_no_bias_parameters_and_matmul_flops_per_1024_token_sequence():
    d, N, V, L = 768, 12, 50257, 1024
    # Parameters (nanoGPT, bias=False): wte V*d + wpe 1024*d + 12 * (12 d^2 + 2 LayerNorm gains d) + ln_f d.
    params = V * d + 1024 * d + N * (12 * d * d + 2 * d) + d
    assert params == 124_337_664
    assert evaluate(build(GPT2_NB).params, GPT2_NB.values) == params
    # Forward matmul FLOPs: 2 * L * (12 d^2 per layer + d V for the tied head) + 4 * N * L^2 * d for the scores.
    forward = 2 * L * (N * 12 * d * d + d * V) + 4 * N * L * L * d
    assert forward == 291_648_307_200
    v = {**GPT2_NB.values, "B": 1, "L": L}
    assert evaluate(flops_expr(GPT2_NB, "forward"), v) == forward
    # Forward + backward (2 x forward per matmul): 3 x forward.
    assert evaluate(flops_expr(GPT2_NB, "training"), v) == 3 * forward == 874_944_921_600
    assert evaluate(per_sequence(GPT2_NB, "training"), {**GPT2_NB.values, "L": L}) == 874_944_921_600


def test_llama2_70b_training_flops_per_token_at_4096():
    # Llama-2-70B: d 8192, d_ff 28672 (SwiGLU: 3 maps), 64 query heads and 8 KV heads of 128, 80 layers,
    # V 32000, untied head.  Weights per token per layer: Q 8192^2, K and V 2 * 8192 * 1024, O 8192^2,
    # FFN 3 * 8192 * 28672; head 8192 * 32000.  Training = 6 * weights + 12 * N * h * d_k * L (full square).
    layer = 8192 * 8192 + 2 * 8192 * 1024 + 8192 * 8192 + 3 * 8192 * 28672
    weights = 80 * layer + 8192 * 32000
    expected = 6 * weights + 12 * 80 * 64 * 128 * 4096
    assert expected == 444_491_366_400
    assert evaluate(per_token(LLAMA2_70B, "training"), {**LLAMA2_70B.values, "L": 4096}) == expected


# Backward = 2 x forward and training = 3 x forward are measured, not restated from the code's constant:
# torch.utils.flop_counter on GPT-2, BERT, Llama (GQA), T5 and Mixtral (tests/test_flop_crosscheck.py).


def test_full_recomputation_adds_one_forward_of_the_layers_but_not_the_logits():
    spec = GPT2_NB
    model = build(spec)
    head = count(model.child("LM head"), "flops")  # 2 B L d_model V
    extra = flops_expr(spec, "training", recompute="full") - flops_expr(spec, "training")
    assert sp.expand(extra - (flops_expr(spec, "forward") - head)) == 0
    # Korthikanti et al. 2022 §6: the ratio of FLOPs becomes 4 x (layers) + 3 x (logits).
    v = {**spec.values, "B": 1, "L": 1024}
    layers = 2 * 1024 * 12 * 12 * 768**2 + 4 * 12 * 1024**2 * 768
    logits = 2 * 1024 * 768 * 50257
    assert evaluate(flops_expr(spec, "training", recompute="full"), v) == 4 * layers + 3 * logits


def test_selective_recomputation_adds_one_forward_of_the_attention_scores():
    # Korthikanti et al. 2022 §4.2: Q K^T and scores V are recomputed: + 4 * N * B * L^2 * d_model.
    extra = flops_expr(GPT2_NB, "training", recompute="selective") - flops_expr(GPT2_NB, "training")
    assert sp.expand(extra - 4 * S.N * S.B * S.L**2 * S.d_model) == 0


def test_per_token_sequence_step_and_run_are_consistent():
    step = flops_expr(GPT2_NB, "training")
    assert sp.expand(per_token(GPT2_NB) * S.B * S.L - step) == 0
    assert sp.expand(per_sequence(GPT2_NB) - step.subs(S.B, 1)) == 0
    assert sp.expand(run_flops(GPT2_NB, S.D) - per_token(GPT2_NB) * S.D) == 0
    # 2 sequences of 1024 tokens = D = 2048 tokens: twice the 874,944,921,600 of one sequence.
    assert evaluate(run_flops(GPT2_NB, 2048), {**GPT2_NB.values, "L": 1024}) == 2 * 874_944_921_600


def test_prefill_is_the_forward_of_the_prompt_with_logits_for_its_last_token():
    d, N, V, Lp = 768, 12, 50257, 100
    expected = 2 * Lp * N * 12 * d * d + 4 * N * Lp * Lp * d + 2 * d * V  # B = 1
    assert evaluate(prefill_expr(GPT2_NB), {**GPT2_NB.values, "B": 1, "L_pre": Lp}) == expected


def test_decode_closed_form_equals_the_sum_over_generated_positions():
    # Decode step t: one token through the layers (2 x 12 d^2 per layer) and the head (2 d V); its query
    # attends to L_pre + t cached keys: Q K^T and scores V cost 2 * 2 * d * (L_pre + t) per layer.
    d, N, V = 768, 12, 50257
    Lp, T = 37, 11
    by_hand = sum(2 * N * 12 * d * d + 2 * d * V + 4 * N * d * (Lp + t) for t in range(1, T + 1))
    vals = {**GPT2_NB.values, "B": 1, "L_pre": Lp, "T_gen": T}
    assert evaluate(decode_expr(GPT2_NB), vals) == by_hand
    # The closed form has no Sum left and is a polynomial in T_gen.
    closed = decode_expr(GPT2_NB)
    assert not closed.has(sp.Sum) and sp.Poly(sp.expand(closed), S.T_gen).degree() == 2


def test_prefill_plus_decode_is_the_causal_forward_pass_minus_unneeded_logits():
    # A KV cache changes no matmul of the layers (Pope et al. 2022 §2): with the exact causal triangle, a
    # forward pass over L_pre + T_gen tokens equals prefill + decode, except that it computes logits at
    # L_pre - 1 more positions (prefill keeps only the last prompt token's).
    for spec in (GPT2_NB, LLAMA2_70B):
        total = prefill_expr(spec, mask="causal") + decode_expr(spec, mask="causal")
        fwd = flops_expr(spec, "forward", mask="causal").subs(S.L, S.L_pre + S.T_gen)
        extra_logits = 2 * S.B * (S.L_pre - 1) * S.d_model * S.V
        assert sp.expand(fwd - total - extra_logits) == 0


def test_decode_step_uses_kv_heads_for_nothing_and_query_heads_for_scores():
    # Llama-2-70B decode step at context c: scores use all 64 query heads: 2 * 2 * 64 * 128 * c per layer.
    step = decode_step_expr(LLAMA2_70B)
    d_scores = sp.diff(step, S.t)  # d/dt of the step cost = score FLOPs per extra cached key
    assert evaluate(d_scores, {**LLAMA2_70B.values, "B": 1}) == 80 * 2 * 2 * 64 * 128


def test_encoder_decoder_prefill_runs_the_encoder_and_cross_kv_once():
    # T5-small (Raffel et al. 2020): 6 + 6 layers, d 512, d_ff 2048, 8 heads of 64, no biases.
    t5 = presets.get("t5-small").spec
    d, dff, hd, N, Lp = 512, 2048, 512, 6, 20
    encoder = N * (2 * Lp * (4 * d * hd + 2 * d * dff) + 4 * Lp * Lp * hd)
    cross_kv = N * 2 * Lp * 2 * d * hd
    assert evaluate(prefill_expr(t5), {**t5.values, "B": 1, "L_pre": Lp}) == encoder + cross_kv


def test_generation_needs_a_decoder():
    with pytest.raises(ValueError, match="encoder-only model does not generate"):
        decode_expr(presets.get("bert-base").spec)


def test_bad_modes_and_token_counts():
    with pytest.raises(ValueError, match="valid modes: forward, backward, training"):
        flops_expr(GPT2_NB, "inference")
    with pytest.raises(ValueError, match="valid recompute options: none, selective, full"):
        flops_expr(GPT2_NB, "training", recompute="partial")
    with pytest.raises(ValueError, match="positive integer"):
        run_flops(GPT2_NB, 0)


def test_units_79_5_gflop_not_tflop():
    # The rule 2 * P * L for P = 77.6M parameters and L = 512 tokens: 2 * 77.6e6 * 512 = 7.946e10 FLOPs.
    flops = 2 * 77_600_000 * 512
    assert flops == 79_462_400_000
    assert si(flops) == "79.5 GFLOP"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_training_json_keys_and_values(capsys):
    code, out, _ = run(
        capsys,
        "flops",
        "gpt2",
        "--set",
        "bias=false",
        "--set",
        "norm_bias=false",
        "--mode",
        "training",
        "--format",
        "json",
    )
    assert code == 0
    data = json.loads(out)
    for key in ("total", "mode", "convention", "per_token", "closed_form"):
        assert key in data
    assert (data["mode"], data["convention"]) == ("training", "flops")
    assert data["total"] == 874_944_921_600 and data["per_token"] == 874_944_921_600 // 1024
    # The closed form, read back with the safe parser: 3 x forward, forward = 2 B L (weights per token)
    # + 4 N B L^2 d with weights per token N (4 d^2 + 2 d d_ff) + d V (d_ff kept symbolic).
    from symtrans.base.safe_parse import parse_constraint

    got = parse_constraint(data["closed_form"], S.SYMBOLS)
    B, L, N, d, dff, V = S.B, S.L, S.N, S.d_model, S.d_ff, S.V
    assert sp.expand(got - 3 * (2 * B * L * (N * (4 * d**2 + 2 * d * dff) + d * V) + 4 * N * B * L**2 * d)) == 0


def test_cli_text_prints_si_prefixes(capsys):
    code, out, _ = run(capsys, "flops", "gpt2", "--set", "bias=false", "--set", "norm_bias=false")
    assert code == 0
    assert "291,648,307,200 (291.6 GFLOP)" in out  # 2.9e11: giga, not tera
    code, out, _ = run(capsys, "flops", "gpt3-175b", "--mode", "training", "--tokens", "300e9")
    assert "PF-days" in out and "ZFLOP" in out  # 3.2e23 FLOPs = 322.9 zetta-FLOP


def test_cli_decode_and_prefill(capsys):
    code, out, _ = run(
        capsys,
        "flops",
        "gpt2",
        "--set",
        "bias=false",
        "--set",
        "norm_bias=false",
        "--mode",
        "decode",
        "--prefill",
        "37",
        "--generate",
        "11",
        "--format",
        "json",
    )
    assert code == 0
    data = json.loads(out)
    d, N, V = 768, 12, 50257
    assert data["total"] == sum(2 * N * 12 * d * d + 2 * d * V + 4 * N * d * (37 + t) for t in range(1, 12))
    assert "T_gen" in data["closed_form"] and "Sum" not in data["closed_form"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["flops", "gpt2", "--mode", "sideways"], "valid modes: forward, backward, training, prefill, decode"),
        (["flops", "gpt2", "--batch", "0"], "--batch must be a positive integer"),
        (["flops", "gpt2", "--seq-len", "-5"], "--seq-len must be a positive integer"),
        (["flops", "gpt2", "--mode", "training", "--tokens", "0"], "--tokens must be a positive integer"),
        (["flops", "gpt2", "--mode", "decode", "--generate", "0"], "--generate must be a positive integer"),
        (["flops", "gpt2", "--mode", "decode", "--prefill", "-1"], "--prefill must be a positive integer"),
        (["flops", "gpt2", "--mode", "forward", "--recompute", "full"], "--recompute applies to --mode training"),
        (["flops", "bert-base", "--mode", "decode"], "encoder-only model does not generate"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_sliding_window_decode_is_a_closed_form_of_min_context_w():
    # Mistral 7B layout with a window w = 8 (Jiang et al. 2023 §2): step t attends min(L_pre + t, w) keys,
    # 2 * 2 * h * d_k = 4 * 4096 FLOPs per key and layer; the rest of a step is 2 x (weights per token).
    spec = presets.get("mistral-7b").spec.replace(sizes={"w": 8})
    d, dkv, dff, N, V = 4096, 8 * 128, 14336, 32, 32000
    weights = N * (2 * d * d + 2 * d * dkv + 3 * d * dff) + d * V
    for Lp, T in ((3, 2), (3, 10), (20, 5)):
        by_hand = sum(2 * weights + N * 4 * d * min(Lp + t, 8) for t in range(1, T + 1))
        assert evaluate(decode_expr(spec), {**spec.values, "B": 1, "L_pre": Lp, "T_gen": T}) == by_hand


def test_reports_gain_flops_memory_and_time_sections_in_every_format():
    from symtrans.catalog.resolve import resolve
    from symtrans.render.report import render

    res = resolve("gpt2", ["bias=false", "norm_bias=false"])
    md = render(res, "markdown", batch=1, seq_len=1024)
    tex = render(res, "latex", batch=1, seq_len=1024)
    page = render(res, "html", batch=1, seq_len=1024)
    for title in ("Training and inference FLOPs", "Memory", "Time on accelerators"):
        assert f"## {title}" in md and f"\\section{{\\texorpdfstring{{{title}}}" in tex and f"<h2>{title}</h2>" in page
    # The training row: 3 x 291,648,307,200 (arithmetic in the first test of this file).
    assert "| training (forward + backward) | 874,944,921,600 FLOP |" in md
    # KV cache per token 2 x 12 layers x 768 x 2 bytes = 36,864, and binary vs decimal units are labelled.
    assert "36{,}864" in md and "GiB = $2^{30}$ bytes (binary), GB = $10^{9}$ bytes (decimal)" in md


def test_windowed_decode_closed_form_matches_the_sum_for_any_prompt_length_and_window():
    from hypothesis import given
    from hypothesis import strategies as st

    spec = presets.get("mistral-7b").spec.replace(sizes={"w": 2})
    # --mask window and causal: min(L_pre + t, w) keys per step; full: every cached key, L_pre + t
    for mask in ("window", "causal", "full"):
        closed = decode_expr(spec, mask=mask)
        step = decode_step_expr(spec, mask=mask)  # per-step cost: summed by hand below

        @given(st.integers(1, 40), st.integers(1, 40), st.integers(1, 60))
        def check(lp, tg, w):
            v = {**spec.values, "w": w, "B": 1, "L_pre": lp, "T_gen": tg}
            assert evaluate(closed, v) == sum(evaluate(step, {**v, "t": t}) for t in range(1, tg + 1))

        check()


# ---------------------------------------------------------------------------------
# components: they add up to the total under every mode, convention, mask and recomputation


def test_gpt2_causal_full_recomputation_components_add_up_to_the_total(capsys):
    # GPT-2 small (biases do not change matmul FLOPs), B = 1, L = 1024, mask causal: per layer the dense
    # matmuls are 2 L (4 d^2 + 2 d d_ff) = 2 * 1024 * (4 * 768^2 + 2 * 768 * 3072) = 14,495,514,624 and the
    # scores Q K^T and scores V are 2 x 2 x d x L(L+1)/2 = 2 * 768 * 1024 * 1025 = 1,612,185,600.
    d, dff, N, V, L = 768, 3072, 12, 50257, 1024
    layer = 2 * L * (4 * d * d + 2 * d * dff) + 2 * d * L * (L + 1)
    assert layer == 16_107_700_224
    head = 2 * L * d * V  # the tied LM head, 79,047,426,048
    # Full recomputation (Korthikanti et al. 2022 §4.1): the layers run forward twice, the head once:
    # layers 4 x forward, head 3 x forward.
    decoder, lm_head = 4 * N * layer, 3 * head
    assert decoder + lm_head == 1_010_311_888_896
    code, out, _ = run(
        capsys, "flops", "gpt2", "--mode", "training", "--mask", "causal", "--recompute", "full", "--format", "json"
    )
    data = json.loads(out)
    assert code == 0 and data["total"] == 1_010_311_888_896
    rows = {c["name"]: c for c in data["components"]}
    assert rows["decoder"]["total"] == decoder and rows["LM head"]["total"] == lm_head
    assert rows["decoder layer"]["each"] == 4 * layer and rows["decoder layer"]["count"] == N
    assert rows["decoder"]["share"] == pytest.approx(decoder / (decoder + lm_head))
    code, out, _ = run(capsys, "flops", "gpt2", "--mode", "training", "--mask", "causal", "--recompute", "full")
    assert "773,169,610,752" in out and "237,142,278,144" in out and "include their full recomputation" in out


# One model per structure: decoder-only with a tied head, encoder-only with ALBERT's factorized embedding
# and a pooler, an encoder-decoder with a shared table (T5), and MoE; every preset is sampled below.
_COMPONENT_MODELS = ("gpt2", "albert-base-v2", "t5-small", "mixtral-8x7b")
_MODES = [
    ("forward", "none"),
    ("backward", "none"),
    ("training", "none"),
    ("training", "selective"),
    ("training", "full"),
]
_CONVENTIONS = ["flops", "macs", "all-ops", "chinchilla", "chinchilla-nonembedding"]


def _components_add_up(name, mode, recompute, convention, mask):
    # The property the table promises: the top-level rows are a partition of the total, so their exact sum is
    # the printed total and their shares sum to 1 (checked on the JSON the CLI prints, exact integers/fractions).
    import argparse
    from fractions import Fraction

    from symtrans.catalog.resolve import resolve
    from symtrans.cli.usage import flops_command_result

    args = argparse.Namespace(
        mode=mode,
        convention=convention,
        mask=mask,
        recompute=recompute,
        batch=2,
        seq_len=None,
        tokens=None,
        prefill=None,
        generate=None,
        compare=False,
    )
    data = flops_command_result(resolve(name), args)
    top = [c for c in data["components"] if c["depth"] == 0]
    assert sum(Fraction(c["total"]) for c in top) == Fraction(data["total"]), (name, data["total"])
    assert sum(c["share"] for c in top) == pytest.approx(1.0)


@pytest.mark.parametrize("mode, recompute", _MODES)
@pytest.mark.parametrize("convention", _CONVENTIONS)
@pytest.mark.parametrize("mask", ["full", "causal", "half"])
def test_components_add_up_to_the_total_for_every_option(mode, recompute, convention, mask):
    for name in _COMPONENT_MODELS:
        _components_add_up(name, mode, recompute, convention, mask)


def test_components_add_up_to_the_total_for_any_preset_and_option():
    from hypothesis import given
    from hypothesis import strategies as st

    @given(
        st.sampled_from(list(presets.PRESETS)),
        st.sampled_from(_MODES),
        st.sampled_from(_CONVENTIONS),
        st.sampled_from(["full", "causal", "half"]),
    )
    def check(name, mode_recompute, convention, mask):
        _components_add_up(name, *mode_recompute, convention, mask)

    check()


def test_report_prefill_and_decode_use_the_clis_default_lengths(capsys):
    # 'symtrans flops --help': L_pre defaults to the sequence length, T_gen to 1.  Llama-2-7B at L_pre = 4096
    # (d 4096, d_ff 11008 SwiGLU, 32 layers, V 32000, untied head; logits for the last token only):
    # 2 x L_pre x 32 x (4 d^2 + 3 d d_ff) + 4 x 32 x L_pre^2 x d + 2 x d x V.
    d, dff, N, V, Lp = 4096, 11008, 32, 32000, 4096
    prefill = 2 * Lp * N * (4 * d * d + 3 * d * dff) + 4 * N * Lp * Lp * d + 2 * d * V
    assert prefill == 61_847_791_206_400
    code, out, _ = run(capsys, "flops", "llama-2-7b", "--mode", "prefill", "--format", "json")
    assert code == 0 and json.loads(out)["total"] == prefill and json.loads(out)["L_pre"] == Lp
    from symtrans.catalog.resolve import resolve
    from symtrans.render.report import render

    md = render(resolve("llama-2-7b"), "markdown")
    assert "$L_{\\mathrm{pre}} = 4{,}096$, $T_{\\mathrm{gen}} = 1$" in md and "61{,}847{,}791{,}206{,}400" in md
    # an encoder-decoder's prompt is its source: L_pre = L_src = 512 for T5-small, as 'symtrans flops' says
    code, out, _ = run(capsys, "flops", "t5-small", "--mode", "prefill", "--format", "json")
    assert json.loads(out)["L_pre"] == 512
    assert "$L_{\\mathrm{pre}} = 512$, $T_{\\mathrm{gen}} = 1$" in render(resolve("t5-small"), "markdown")
