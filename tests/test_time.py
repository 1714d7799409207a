"""Time: accelerator peaks with sources, step time, MFU (PaLM App. B), roofline verdicts
and units.  Expected values come from the cited papers and datasheets, or from
arithmetic written out here."""

from __future__ import annotations

import json

import pytest
import sympy as sp

from symtrans.accounting.flops import evaluate, flops_expr, per_token
from symtrans.accounting.hardware import ACCELERATORS, accelerator, fraction, mfu, pf_days, roofline, step_time
from symtrans.base.numbers import si
from symtrans.catalog import presets
from symtrans.cli.main import main
from symtrans.engine.spec import Spec

GPT3 = presets.get("gpt3-175b").spec


def test_the_table_has_sources_and_dense_peaks():
    for acc in ACCELERATORS.values():
        assert acc.source and acc.peak() > 0 and acc.bandwidth > 0 and acc.memory > 0
    # NVIDIA A100 datasheet: 312 TFLOPS bf16 (dense); H100 SXM: 1,979 with sparsity = 989.5 dense.
    assert accelerator("a100-80gb").bf16 == 312 * 10**12
    assert accelerator("h100-sxm").bf16 == 1_979 * 10**12 // 2
    with pytest.raises(ValueError, match="has no fp8"):
        accelerator("a100-80gb").peak("fp8")
    with pytest.raises(ValueError, match="valid accelerators: v100-sxm2, a100-40gb"):
        accelerator("b300")


def test_gpt3_training_time_on_1024_a100_at_140_tflops():
    # Narayanan et al. 2021 §5.1: GPT-3 175B, T = 300B tokens, n = 1024 A100s at X = 140 TFLOP/s each,
    # with full recomputation: "about 34 days" from 8TP/(nX).  The exact hardware FLOPs per token are
    # Narayanan et al.'s 96 l h^2 (1 + s/(6h) + V/(16 l h)) / s per sequence token; l = 96, h = 12288, s = 2048.
    l, h, s, V = 96, 12288, 2048, 50257
    per_seq = 96 * s * l * h * h + 16 * s * s * l * h + 6 * s * h * V
    tokens = 300 * 10**9
    total = sp.Rational(per_seq, s) * tokens
    assert evaluate(per_token(GPT3, "training", recompute="full"), {**GPT3.values, "L": s}) == sp.Rational(per_seq, s)
    seconds = step_time(total, "a100-80gb", 1024, "140/312")  # utilisation = 140 / 312 of the peak
    assert seconds == total / (1024 * 140 * 10**12)
    days = float(seconds) / 86400
    assert abs(days / 34 - 1) < 0.03  # 34.8 days: the paper's 8TP/(nX) leaves out s/(6h) = 2.8%


def test_palm_540b_mfu_is_46_2_percent():
    # Chowdhery et al. 2022 (PaLM) Table 3 / App. B: 238.3K tokens/s on 6144 TPU v4 chips -> 46.2% MFU.
    # PaLM 540B (Table 1): 118 layers, d_model 18432, 48 heads of 256, multi-query (1 KV head),
    # SwiGLU d_ff 73728, V 256000, shared embedding, no biases, sequence length 2048.
    palm = Spec(
        family="decoder-only",
        sizes=dict(d_model=18432, d_ff=73728, h=48, h_kv=1, d_k=256, N=118, V=256000, L_max=2048, L=2048),
        positional="rotary",
        bias=False,
        norm="layernorm",
        norm_bias=False,
        ffn="swiglu",
        tie_output=True,
    )
    flops_per_token = evaluate(per_token(palm, "training"), palm.values)
    # 6 x (layer weights + the tied head's V d) + 12 n_layer H Q T:
    layer = 18432 * 48 * 256 + 2 * 18432 * 256 + 48 * 256 * 18432 + 3 * 18432 * 73728
    assert flops_per_token == 6 * (118 * layer + 256000 * 18432) + 12 * 118 * 48 * 256 * 2048
    u = mfu(238_300, flops_per_token, "tpu-v4", 6144)
    assert f"{float(u) * 100:.1f}" == "46.2"


def test_roofline_prefill_is_compute_bound_and_decode_memory_bound():
    from symtrans.accounting.flops import decode_expr, prefill_expr

    spec = presets.get("llama-2-7b").spec
    p = 6_738_415_616  # parameters (transformers LlamaForCausalLM)
    v = {**spec.values, "B": 1, "L_pre": 2048, "T_gen": 1}
    a100 = accelerator("a100-80gb")
    assert roofline("x", 1, 1, a100).ridge == sp.Rational(312 * 10**12, 2039 * 10**9)  # 153.0 FLOP/byte
    pre = roofline("prefill", evaluate(prefill_expr(spec), v), 2 * p + 2048 * 524_288, a100)
    dec = roofline("decode", evaluate(decode_expr(spec), v), 2 * p + 2049 * 524_288, a100)
    assert pre.bound == "compute-bound" and dec.bound == "memory-bound"
    # One decode token reads 2 bytes per parameter for about 2 FLOPs per parameter: about 1 FLOP per byte.
    assert 0.9 < float(dec.intensity) < 1.2
    assert dec.time == dec.memory_time and pre.time == pre.compute_time


def test_pf_days_and_si_units():
    assert pf_days(8_640 * 10**16) == 1  # 1 PF-day = 1e15 FLOP/s x 86,400 s
    assert si(989_500 * 10**9, "FLOP/s") == "989.5 TFLOP/s"
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
    code, out, _ = run(
        capsys,
        "time",
        "llama-2-7b",
        "--accelerator",
        "a100-80gb",
        "--mfu",
        "0.5",
        "--prefill",
        "2048",
        "--generate",
        "128",
        "--format",
        "json",
    )
    assert code == 0
    data = json.loads(out)
    model = 3 * evaluate(
        flops_expr(presets.get("llama-2-7b").spec, "forward"),
        {**presets.get("llama-2-7b").spec.values, "B": 1, "L": 4096},
    )
    assert data["training"]["model_flops_per_step"] == model
    assert data["training"]["step_seconds"] == pytest.approx(model / (312e12 * 0.5))
    assert [r["bound"] for r in data["roofline"]] == ["compute-bound", "memory-bound"]
    code, out, _ = run(capsys, "time", "gpt2", "--accelerator", "h100-sxm", "--tokens-per-second", "100000")
    assert code == 0 and "989.5 TFLOP/s" in out and "MFU at 100000 tokens/s" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["time", "gpt2"], "give --accelerator; valid accelerators"),
        (["time", "gpt2", "--accelerator", "a200"], "valid accelerators: v100-sxm2"),
        (["time", "gpt2", "--accelerator", "a100-80gb", "--precision", "fp8"], "has no fp8"),
        (["time", "gpt2", "--accelerator", "a100-80gb", "--mfu", "0"], "--mfu must be in (0, 1]"),
        (["time", "gpt2", "--accelerator", "a100-80gb", "--devices", "0"], "--devices must be a positive integer"),
        (["time", "gpt2", "--accelerator", "a100-80gb", "--tokens-per-second", "-3"], "throughput"),
    ],
)
def test_cli_time_bad_input(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


# ---------------------------------------------------------------------------------
# prefill/decode latency is per request on one device; MoE decode reads the routed experts only


def _time_json(capsys, *argv):
    code, out, err = run(capsys, "time", *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_devices_divide_the_training_step_but_not_a_requests_latency(capsys):
    # Llama-2-7B on H100 SXM, B = 1, L_pre = 4096, T_gen = 1 (the defaults).  One decode step reads the bf16
    # weights, 2 x 6,738,415,616 bytes, and 4097 cached positions of 524,288 bytes (2 x 32 layers x 4096 x 2 bytes):
    # 13,476,831,232 + 2,148,007,936 = 15,624,839,168 bytes at 3.35 TB/s = 4.664 ms, whatever the cluster size.
    decode_bytes = 2 * 6_738_415_616 + 4097 * 2 * 32 * 4096 * 2
    assert decode_bytes == 15_624_839_168
    one = _time_json(capsys, "llama-2-7b", "--accelerator", "h100-sxm", "--mfu", "0.4")
    many = _time_json(capsys, "llama-2-7b", "--accelerator", "h100-sxm", "--mfu", "0.4", "--devices", "256")
    dec = {r["phase"]: r for r in many["roofline"]}["decode"]
    assert dec["bytes"] == decode_bytes
    assert dec["seconds"] == pytest.approx(decode_bytes / 3.35e12)  # 4.664 ms, not 4.664 ms / 256
    assert [r["seconds"] for r in many["roofline"]] == [r["seconds"] for r in one["roofline"]]
    # throughput scales with the replicas; the training step divides by them
    assert dec["tokens_per_second_all_devices"] == pytest.approx(256 / dec["seconds"])
    assert many["training"]["step_seconds"] == pytest.approx(one["training"]["step_seconds"] / 256)
    assert many["roofline_devices"] == 1
    code, out, _ = run(capsys, "time", "llama-2-7b", "--accelerator", "h100-sxm", "--devices", "256")
    assert "one request on one device" in out and "not a request's latency" in out and "4.664 ms per token" in out


def test_mixtral_decode_reads_the_two_routed_experts_at_batch_1(capsys):
    # Mixtral 8x7B (Jiang et al. 2024; config.json): d 4096, 32 layers, 32 query and 8 KV heads of 128,
    # 8 SwiGLU experts of d_ff 14336 with k = 2, V 32000, untied head.  Parameters one token uses:
    attention = 2 * 4096 * 4096 + 2 * 4096 * 1024  # W_Q, W_O; W_K, W_V
    expert = 3 * 4096 * 14336
    layer_active = attention + 2 * expert + 4096 * 8 + 2 * 4096  # two experts, the router, two RMSNorms
    active = 32 * layer_active + 2 * 32000 * 4096 + 4096  # embedding, head, final norm
    assert active == 12_879_925_248  # "13B active parameters" (Mixtral §2)
    total = active + 32 * 6 * expert  # the six experts a token skips
    assert total == 46_702_792_704
    kv_per_token = 2 * 32 * 8 * 128 * 2  # 131,072 bytes
    data = _time_json(capsys, "mixtral-8x7b", "--accelerator", "h100-sxm")
    dec = {r["phase"]: r for r in data["roofline"]}["decode"]
    assert dec["weights_read_per_step"] == active
    assert dec["bytes"] == 2 * active + (32_768 + 1) * kv_per_token == 30_054_948_864
    assert dec["seconds"] == pytest.approx(30_054_948_864 / 3.35e12)  # 8.97 ms, not 29.16 ms
    # At B = 4 the 4 x 2 picks can cover all 8 experts: the step reads every expert (an upper bound).
    data = _time_json(capsys, "mixtral-8x7b", "--accelerator", "h100-sxm", "--batch", "4")
    assert {r["phase"]: r for r in data["roofline"]}["decode"]["weights_read_per_step"] == total
    assert any("routed experts" in a for a in data["roofline_assumptions"])


def test_sliding_window_decode_reads_at_most_w_cached_positions(capsys):
    # Mistral 7B (Jiang et al. 2023): w = 4096 cached positions per layer at most (rolling buffer), 32 layers x
    # 8 KV heads x 128 x 2 (K, V) x 2 bytes = 131,072 bytes per position; 7,241,732,096 parameters in bf16.
    data = _time_json(capsys, "mistral-7b", "--accelerator", "a100-80gb", "--prefill", "32768")
    dec = {r["phase"]: r for r in data["roofline"]}["decode"]
    assert dec["bytes"] == 2 * 7_241_732_096 + 4096 * 131_072


def test_v100_has_fp16_not_bf16_and_tpus_have_bf16_not_fp16(capsys):
    # NVIDIA V100 datasheet: 125 TFLOPS fp16 tensor, no bf16; Google TPU v4: bf16 matrix units only.
    v100 = accelerator("v100-sxm2")
    assert v100.bf16 is None and v100.fp16 == 125 * 10**12 and v100.default_precision == "fp16"
    code, out, _ = run(capsys, "time", "gpt2", "--accelerator", "v100-sxm2")
    assert code == 0 and "fp16 peak 125.0 TFLOP/s" in out and "bf16 peak" not in out
    assert _time_json(capsys, "gpt2", "--accelerator", "v100-sxm2")["precision"] == "fp16"
    for argv, message in (
        (["--accelerator", "v100-sxm2", "--precision", "bf16"], "v100-sxm2 has no bf16"),
        (["--accelerator", "tpu-v4", "--precision", "fp16"], "tpu-v4 has no fp16"),
    ):
        code, out, err = run(capsys, "time", "gpt2", *argv)
        assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_a_measured_throughput_above_the_peak_is_refused(capsys):
    # GPT-2 at L = 1024: 874,944,921,600 / 1024 = 854,438,400 training FLOPs per token (test_training_inference);
    # 1e12 tokens/s would need 8.5e20 FLOP/s, 863,505 x an H100's 989.5 TFLOP/s: impossible.
    assert 10**12 * 854_438_400 / (989_500 * 10**9) > 1
    code, out, err = run(capsys, "time", "gpt2", "--accelerator", "h100-sxm", "--tokens-per-second", "1e12")
    assert code == 2 and out == "" and "MFU" in err and "peak" in err and err.count("\n") == 1
    with pytest.raises(ValueError, match="more than the peak"):
        mfu(10**12, 854_438_400, "h100-sxm")
    # 100,000 tokens/s: 8.544e13 / 9.895e14 = 8.63% MFU, accepted
    assert float(mfu(100_000, 854_438_400, "h100-sxm")) == pytest.approx(100_000 * 854_438_400 / 989.5e12)


def test_range_errors_name_the_range_without_none(capsys):
    with pytest.raises(ValueError) as e:
        fraction("-3", "the throughput", upper=None)
    assert "None" not in str(e.value) and "positive" in str(e.value)
    assert fraction("0", "the margin", upper=None, allow_zero=True) == 0
    code, _, err = run(capsys, "time", "gpt2", "--accelerator", "a100-80gb", "--tokens-per-second", "-3")
    assert code == 2 and "None" not in err
    code, _, err = run(capsys, "memory", "gpt2", "--inference", "--margin", "-0.1")
    assert code == 2 and "None" not in err and "the margin must be zero or a positive number" in err


def test_reports_time_tables_match_the_cli_and_use_one_microsecond_symbol(capsys):
    from symtrans.catalog.resolve import resolve
    from symtrans.render.report import render

    for name in ("t5-small", "bert-base"):
        md = render(resolve(name), "markdown")
        section = md[md.index("## Time on accelerators") :]
        table = [line for line in section.splitlines() if line.startswith("|")]
        # every row ends its last cell with '|' (no trailing '| ' of a dropped column), has as many cells as the
        # header, and no cell is empty
        assert table and all(line.endswith("|") for line in table)
        assert len({line.count("|") for line in table}) == 1
        assert all(cell.strip() for line in table for cell in line[1:-1].split("|"))
    assert "| prefill | decode |" in render(resolve("t5-small"), "markdown")  # T5 generates, as in the CLI
    md_gpt2 = render(resolve("gpt2"), "markdown")
    import re

    assert re.search(r"\d µs", md_gpt2) and not re.search(r"\d us\b", md_gpt2)
    # the report's decode figure on the A100 80GB is the CLI's (same workload: L_pre = L = 1024, T_gen = 1)
    data = _time_json(capsys, "gpt2", "--accelerator", "a100-80gb")
    dec = {r["phase"]: r for r in data["roofline"]}["decode"]
    from symtrans.render.usage_report import _fmt_seconds

    assert (
        "| a100-80gb | 312.0 TFLOP/s bf16 |" in md_gpt2 and f"memory, {_fmt_seconds(dec['seconds'])}/token" in md_gpt2
    )
    assert "| v100-sxm2 | 125.0 TFLOP/s fp16 |" in md_gpt2
