"""Time: accelerator peaks with sources, step time, MFU (PaLM App. B), roofline verdicts
and units.  Expected values come from the cited papers and datasheets, or from
arithmetic written out here."""
from __future__ import annotations

import json

import pytest
import sympy as sp

from symtrans import presets
from symtrans.cli import main
from symtrans.flops import evaluate, flops_expr, per_token
from symtrans.hardware import ACCELERATORS, accelerator, fraction, mfu, pf_days, roofline, step_time
from symtrans.spec import Spec
from symtrans.units import si

GPT3 = presets.get("gpt3-175b").spec


def test_the_table_has_sources_and_dense_peaks():
    for acc in ACCELERATORS.values():
        assert acc.source and acc.bf16 > 0 and acc.bandwidth > 0 and acc.memory > 0
    # NVIDIA A100 datasheet: 312 TFLOPS bf16 (dense); H100 SXM: 1,979 with sparsity = 989.5 dense.
    assert accelerator("a100-80gb").bf16 == 312 * 10 ** 12
    assert accelerator("h100-sxm").bf16 == 1_979 * 10 ** 12 // 2
    with pytest.raises(ValueError, match="has no fp8"):
        accelerator("a100-80gb").peak("fp8")
    with pytest.raises(ValueError, match="valid accelerators: v100-sxm2, a100-40gb"):
        accelerator("b300")


def test_gpt3_training_time_on_1024_a100_at_140_tflops():
    # Narayanan et al. 2021 §5.1: GPT-3 175B, T = 300B tokens, n = 1024 A100s at X = 140 TFLOP/s each,
    # with full recomputation: "about 34 days" from 8TP/(nX).  The exact hardware FLOPs per token are
    # Korthikanti's 96 l h^2 (1 + s/(6h) + V/(16 l h)) / s per sequence token; l = 96, h = 12288, s = 2048.
    l, h, s, V = 96, 12288, 2048, 50257
    per_seq = 96 * s * l * h * h + 16 * s * s * l * h + 6 * s * h * V
    tokens = 300 * 10 ** 9
    total = sp.Rational(per_seq, s) * tokens
    assert evaluate(per_token(GPT3, "training", recompute="full"), {**GPT3.values, "L": s}) == sp.Rational(per_seq, s)
    seconds = step_time(total, "a100-80gb", 1024, "140/312")        # utilisation = 140 / 312 of the peak
    assert seconds == total / (1024 * 140 * 10 ** 12)
    days = float(seconds) / 86400
    assert abs(days / 34 - 1) < 0.03    # 34.8 days: the paper's 8TP/(nX) leaves out s/(6h) = 2.8%


def test_palm_540b_mfu_is_46_2_percent():
    # Chowdhery et al. 2022 (PaLM) Table 3 / App. B: 238.3K tokens/s on 6144 TPU v4 chips -> 46.2% MFU.
    # PaLM 540B (Table 1): 118 layers, d_model 18432, 48 heads of 256, multi-query (1 KV head),
    # SwiGLU d_ff 73728, V 256000, shared embedding, no biases, sequence length 2048.
    palm = Spec(family="decoder-only", sizes=dict(d_model=18432, d_ff=73728, h=48, h_kv=1, d_k=256, N=118,
                                                  V=256000, L=2048),
                positional="rotary", bias=False, norm="layernorm", norm_bias=False, ffn="swiglu", tie_output=True)
    flops_per_token = evaluate(per_token(palm, "training"), palm.values)
    # 6 x (layer weights + the tied head's V d) + 12 n_layer H Q T:
    layer = 18432 * 48 * 256 + 2 * 18432 * 256 + 48 * 256 * 18432 + 3 * 18432 * 73728
    assert flops_per_token == 6 * (118 * layer + 256000 * 18432) + 12 * 118 * 48 * 256 * 2048
    u = mfu(238_300, flops_per_token, "tpu-v4", 6144)
    assert f"{float(u) * 100:.1f}" == "46.2"


def test_roofline_prefill_is_compute_bound_and_decode_memory_bound():
    from symtrans.flops import decode_expr, prefill_expr
    spec = presets.get("llama-2-7b").spec
    p = 6_738_415_616                       # parameters (transformers LlamaForCausalLM)
    v = {**spec.values, "B": 1, "L_pre": 2048, "T_gen": 1}
    a100 = accelerator("a100-80gb")
    assert roofline("x", 1, 1, a100).ridge == sp.Rational(312 * 10 ** 12, 2039 * 10 ** 9)   # 153.0 FLOP/byte
    pre = roofline("prefill", evaluate(prefill_expr(spec), v), 2 * p + 2048 * 524_288, a100)
    dec = roofline("decode", evaluate(decode_expr(spec), v), 2 * p + 2049 * 524_288, a100)
    assert pre.bound == "compute-bound" and dec.bound == "memory-bound"
    # One decode token reads 2 bytes per parameter for about 2 FLOPs per parameter: about 1 FLOP per byte.
    assert 0.9 < float(dec.intensity) < 1.2
    assert dec.time == dec.memory_time and pre.time == pre.compute_time


def test_pf_days_and_si_units():
    assert pf_days(8_640 * 10 ** 16) == 1          # 1 PF-day = 1e15 FLOP/s x 86,400 s
    assert si(989_500 * 10 ** 9, "FLOP/s") == "989.5 TFLOP/s"
    assert si(79_462_400_000) == "79.5 GFLOP"


def test_fractions_are_parsed_exactly_and_never_evaluated():
    assert fraction("0.4", "u") == fraction("40%", "u") == fraction("2/5", "u") == sp.Rational(2, 5)
    for bad in ("abc", "nan", "inf", "__import__('os')", "1+1"):
        with pytest.raises(ValueError, match="must be a number"):
            fraction(bad, "u")
    for out_of_range in ("0", "1.5", "-0.1"):
        with pytest.raises(ValueError):
            fraction(out_of_range, "u")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_time_json_and_text(capsys):
    code, out, _ = run(capsys, "time", "llama-2-7b", "--accelerator", "a100-80gb", "--mfu", "0.5",
                       "--prefill", "2048", "--generate", "128", "--format", "json")
    assert code == 0
    data = json.loads(out)
    model = 3 * evaluate(flops_expr(presets.get("llama-2-7b").spec, "forward"),
                         {**presets.get("llama-2-7b").spec.values, "B": 1, "L": 4096})
    assert data["training"]["model_flops_per_step"] == model
    assert data["training"]["step_seconds"] == pytest.approx(model / (312e12 * 0.5))
    assert [r["bound"] for r in data["roofline"]] == ["compute-bound", "memory-bound"]
    code, out, _ = run(capsys, "time", "gpt2", "--accelerator", "h100-sxm", "--tokens-per-second", "100000")
    assert code == 0 and "989.5 TFLOP/s" in out and "MFU at 100000 tokens/s" in out


@pytest.mark.parametrize("argv, message", [
    (["time", "gpt2"], "give --accelerator; valid accelerators"),
    (["time", "gpt2", "--accelerator", "a200"], "valid accelerators: v100-sxm2"),
    (["time", "gpt2", "--accelerator", "a100-80gb", "--precision", "fp8"], "has no fp8"),
    (["time", "gpt2", "--accelerator", "a100-80gb", "--mfu", "0"], "--mfu must be in (0, 1]"),
    (["time", "gpt2", "--accelerator", "a100-80gb", "--devices", "0"], "--devices must be a positive integer"),
    (["time", "gpt2", "--accelerator", "a100-80gb", "--tokens-per-second", "-3"], "throughput"),
])
def test_cli_time_bad_input(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1
