"""Memory: weights by dtype, gradients, optimizer states, ZeRO, activations after
Korthikanti et al. 2022, the KV cache and the inference footprint.  Expected values come
from the cited papers and configs, or from arithmetic written out here."""

from __future__ import annotations

import json

import pytest
import sympy as sp

from symtrans.accounting.flops import evaluate
from symtrans.accounting.memory import KEYS, activations_per_layer, kv_cache_per_token, memory_terms, model_state_bytes
from symtrans.catalog import presets
from symtrans.cli.main import main
from symtrans.engine import symbols as S

LLAMA2_7B = presets.get("llama-2-7b").spec
LLAMA2_70B = presets.get("llama-2-70b").spec
LLAMA3_8B = presets.get("llama-3-8b").spec
GPT3 = presets.get("gpt3-175b").spec


def test_kv_cache_per_token_at_16_bits_honours_gqa():
    # 2 (K and V) x layers x KV heads x head_dim x 2 bytes, from each config.json:
    assert 2 * 32 * 32 * 128 * 2 == 524_288  # Llama-2-7B: 32 layers, 32 KV heads
    assert 2 * 80 * 8 * 128 * 2 == 327_680  # Llama-2-70B: 80 layers, 8 KV heads (GQA)
    assert 2 * 80 * 64 * 128 * 2 == 2_621_440  # ... which query heads would wrongly give
    assert 2 * 32 * 8 * 128 * 2 == 131_072  # Llama-3-8B: 32 layers, 8 KV heads
    for spec, expected in ((LLAMA2_7B, 524_288), (LLAMA2_70B, 327_680), (LLAMA3_8B, 131_072)):
        assert evaluate(kv_cache_per_token(spec, "bf16"), spec.values) == expected
    assert evaluate(kv_cache_per_token(LLAMA2_70B, "bf16"), LLAMA2_70B.values) != 2_621_440


def test_kv_cache_uses_an_explicit_head_dim():
    # Qwen3-0.6B (config.json): 28 layers, 8 KV heads, head_dim 128 although d_model / h = 64.
    qwen3 = presets.get("qwen3-0.6b").spec
    assert evaluate(kv_cache_per_token(qwen3, "bf16"), qwen3.values) == 2 * 28 * 8 * 128 * 2 == 114_688


def test_sliding_window_caps_the_cache():
    # Mistral 7B's rolling buffer cache keeps the last w = 4096 positions (Jiang et al. 2023 §2).
    mistral = presets.get("mistral-7b").spec.replace(sizes={"w": 4096})
    t = memory_terms(mistral, mode="inference", batch=1, seq_len=32768)
    assert evaluate(t["kv_cache_bytes"], mistral.values) == 4096 * 2 * 32 * 8 * 128 * 2


def test_zero_stages_for_7_5b_parameters_on_64_ranks():
    # Rajbhandari et al. 2020 (ZeRO) Figure 1: Ψ = 7.5B, N_d = 64, K = 12 (mixed-precision Adam):
    # baseline (2 + 2 + K) Ψ = 120 GB; P_os 31.4 GB; P_os+g 16.6 GB; P_os+g+p 1.9 GB.
    expected_gb = {0: "120.0", 1: "31.4", 2: "16.6", 3: "1.9"}
    for stage, gb in expected_gb.items():
        st = model_state_bytes(7_500_000_000, "bf16", "adam-mixed", stage, 64)
        total = sum(st.values())
        assert f"{float(total) / 1e9:.1f}" == gb
    # Exactly: 4 Ψ + 12 Ψ / 64 bytes for stage 1.
    st = model_state_bytes(7_500_000_000, "bf16", "adam-mixed", 1, 64)
    assert sum(st.values()) == 4 * 7_500_000_000 + sp.Rational(12 * 7_500_000_000, 64)


def test_optimizer_bytes_per_parameter():
    one = lambda opt, dt="bf16": {k: int(v) for k, v in model_state_bytes(1, dt, opt).items()}
    # Mixed-precision Adam: 2 (bf16 weights) + 2 (bf16 gradients) + 12 (fp32 master, m, v) = 16.
    assert one("adam-mixed") == {"weights_bytes": 2, "gradients_bytes": 2, "optimizer_bytes": 12}
    # fp32 Adam: 4 + 4 + m, v (8), no master copy.
    assert one("adam", "fp32") == {"weights_bytes": 4, "gradients_bytes": 4, "optimizer_bytes": 8}
    # SGD with momentum in mixed precision: fp32 master (4) + momentum (4).
    assert one("sgd-momentum")["optimizer_bytes"] == 8
    # 8-bit Adam (Dettmers et al. 2022): m and v at 1 byte each, + fp32 master with 16-bit weights.
    assert one("adam-8bit")["optimizer_bytes"] == 6 and one("adam-8bit", "fp32")["optimizer_bytes"] == 2


def test_weights_by_dtype_and_int4_packs_two_per_byte():
    p = 6_738_415_616  # Llama-2-7B, transformers LlamaForCausalLM
    assert (
        evaluate(memory_terms(LLAMA2_7B, dtype="fp32", batch=1, seq_len=1)["weights_bytes"], LLAMA2_7B.values) == 4 * p
    )
    for dt, per in (("bf16", 2), ("fp16", 2), ("fp8", 1), ("int8", 1)):
        t = memory_terms(LLAMA2_7B, dtype=dt, mode="inference", batch=1, seq_len=1)
        assert evaluate(t["weights_bytes"], LLAMA2_7B.values) == per * p
    t = memory_terms(LLAMA2_7B, dtype="int4", mode="inference", batch=1, seq_len=1)
    assert evaluate(t["weights_bytes"], LLAMA2_7B.values) == p // 2 == 3_369_207_808
    with pytest.raises(ValueError, match="use --inference for quantised weights"):
        memory_terms(LLAMA2_7B, dtype="int4")


def test_korthikanti_activations_per_layer_for_gpt3():
    # Korthikanti et al. 2022 eq. (1): s b h (34 + 5 a s / h) bytes, GPT-3 175B: s = 2048, b = 1,
    # h = 12288, a = 96 heads: 2048 * 12288 * 34 + 5 * 96 * 2048^2.
    s, b, h, a = 2048, 1, 12288, 96
    full_scores = s * b * h * 34 + 5 * a * s * s * b
    assert full_scores == 2_868_903_936
    v = {**GPT3.values, "B": b, "L": s}
    assert evaluate(activations_per_layer(GPT3), v) == full_scores
    # Selective recomputation and FlashAttention drop the 5 a s^2 b term (§4.2): 34 s b h.
    assert evaluate(activations_per_layer(GPT3, recompute="selective"), v) == 34 * s * b * h
    assert evaluate(activations_per_layer(GPT3, flash_attention=True), v) == 34 * s * b * h
    # Full recomputation keeps the layer input only: 2 s b h (Table 2).
    assert evaluate(activations_per_layer(GPT3, recompute="full"), v) == 2 * s * b * h
    # And symbolically, with d_ff = 4 d_model, the general form is eq. (1).
    expr = activations_per_layer(GPT3).subs(S.d_ff, 4 * S.d_model)
    assert sp.expand(expr - S.L * S.B * S.d_model * (34 + 5 * S.h * S.L / S.d_model)) == 0


def test_activations_are_derived_from_the_model_not_hard_coded():
    # Llama-2-70B, no dropout, 16-bit, eager attention, one layer at s = 4096, b = 1 (per saved tensor):
    # attention: input 2sd, Q 2s(64*128), K and V 2s(8*128) each, scores 2 * 64 s^2, W_O input 2sd;
    # two RMSNorm inputs 2 * 2sd; SwiGLU: input 2sd and four s x d_ff tensors (gate, act(gate), up,
    # their product) of 2 bytes.
    s, d, dkv, dff, h = 4096, 8192, 8 * 128, 28672, 64
    attn = 2 * s * d + 2 * s * d + 2 * (2 * s * dkv) + 2 * h * s * s + 2 * s * d
    expected = attn + 2 * 2 * s * d + 2 * s * d + 4 * 2 * s * dff
    v = {**LLAMA2_70B.values, "B": 1, "L": s}
    assert evaluate(activations_per_layer(LLAMA2_70B, dropout=False), v) == expected


def test_gpt3_training_total_written_out():
    # GPT-3 175B (Brown et al. 2020 Table 2.1) at B = 1, s = 2048, bf16 weights and gradients, mixed-precision
    # Adam: 2 + 2 + 12 bytes per parameter (ZeRO §3.1), Ψ = 174,604,259,328 (GPT2LMHeadModel at these sizes,
    # tests/reference_counts.py); activations: 96 layers of Korthikanti et al. eq. (1), 34 s b h + 5 a s^2 b,
    # plus the LM head's saved input (2 s b h bytes) and its fp32 logits for the loss (4 s b V).
    psi, s, b, h, a, V, N = 174_604_259_328, 2048, 1, 12288, 96, 50257, 96
    layer = 34 * s * b * h + 5 * a * s * s * b
    head = 2 * s * b * h + 4 * s * b * V
    expected = {
        "weights_bytes": 2 * psi,
        "gradients_bytes": 2 * psi,
        "optimizer_bytes": 12 * psi,
        "activations_bytes": N * layer + head,
        "kv_cache_bytes": 0,
    }
    expected["total_bytes"] = 16 * psi + N * layer + head
    assert (16 * psi, N * layer, head) == (2_793_668_149_248, 275_414_777_856, 462_036_992)
    assert expected["total_bytes"] == 3_069_544_964_096
    t = memory_terms(GPT3, batch=1, seq_len=2048)
    assert {k: evaluate(t[k], GPT3.values) for k in expected} == expected
    assert set(KEYS) <= set(t)


def test_inference_footprint_is_weights_kv_activations_and_a_stated_margin():
    # Llama-2-7B, B = 8, L = 4096, bf16, FlashAttention (no s x s scores), t = 8 * 4096 tokens, d 4096, d_ff 11008:
    # weights 2 x 6,738,415,616; KV cache 8 x 4096 x 524,288 (2 x 32 layers x 4096 x 2 bytes per token);
    # one layer's activations 2 bytes each: attention input, Q, K, V and the W_O input (5 t d), two RMSNorm
    # inputs (2 t d), the FFN input (t d) and its four t x d_ff tensors (gate, act(gate), up, product);
    # the last token's fp32 logits 4 x 8 x 32000; a margin of 10 % of all that, rounded up to a byte.
    t, d, dff = 8 * 4096, 4096, 11008
    weights = 2 * 6_738_415_616
    kv = 8 * 4096 * 524_288
    acts = 2 * (5 * t * d + 2 * t * d + t * d + 4 * t * dff) + 4 * 8 * 32000
    assert (weights, kv, acts) == (13_476_831_232, 17_179_869_184, 5_034_188_800)
    margin = 3_569_088_922  # ceil(35,690,889,216 / 10)
    assert 10 * margin - (weights + kv + acts) in range(10)
    t_ = memory_terms(LLAMA2_7B, mode="inference", batch=8, seq_len=4096, flash_attention=True)
    v = LLAMA2_7B.values
    got = {k: evaluate(t_[k], v) for k in ("weights_bytes", "kv_cache_bytes", "activations_bytes", "margin_bytes")}
    assert got == {"weights_bytes": weights, "kv_cache_bytes": kv, "activations_bytes": acts, "margin_bytes": margin}
    assert evaluate(t_["total_bytes"], v) == 39_259_978_138 == weights + kv + acts + margin
    assert kv == 16 * 2**30  # exactly 16 GiB
    assert evaluate(t_["gradients_bytes"], v) == 0 and evaluate(t_["optimizer_bytes"], v) == 0


def test_bad_memory_input():
    with pytest.raises(ValueError, match="valid dtypes: fp32, bf16, fp16, fp8, int8, int4"):
        memory_terms(LLAMA2_7B, dtype="fp4")
    with pytest.raises(ValueError, match="valid optimizers: adam-mixed"):
        memory_terms(LLAMA2_7B, optimizer="lion")
    with pytest.raises(ValueError, match="ZeRO stage"):
        model_state_bytes(10, zero_stage=4)
    with pytest.raises(ValueError, match="positive integer"):
        model_state_bytes(10, zero_stage=1, dp=0)
    with pytest.raises(ValueError, match="positive integer"):
        memory_terms(LLAMA2_7B, batch=0)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_memory_json_keys(capsys):
    code, out, _ = run(
        capsys, "memory", "llama-2-70b", "--inference", "--batch", "1", "--seq-len", "4096", "--format", "json"
    )
    assert code == 0
    data = json.loads(out)
    for key in (
        "weights_bytes",
        "gradients_bytes",
        "optimizer_bytes",
        "activations_bytes",
        "kv_cache_bytes",
        "kv_cache_bytes_per_token",
        "total_bytes",
    ):
        assert type(data[key]) is int
    assert data["kv_cache_bytes_per_token"] == 327_680
    assert data["kv_cache_bytes"] == 4096 * 327_680


def test_cli_memory_text_labels_binary_and_decimal_units(capsys):
    code, out, _ = run(capsys, "memory", "llama-2-7b", "--inference", "--batch", "8", "--seq-len", "4096")
    assert code == 0
    assert "17,179,869,184 bytes = 16.00 GiB (binary) = 17.18 GB (decimal)" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["memory", "gpt2", "--dtype", "fp4"], "valid dtypes: fp32, bf16, fp16, fp8, int8, int4"),
        (["memory", "gpt2", "--optimizer", "lion"], "valid optimizers"),
        (["memory", "gpt2", "--zero", "5"], "ZeRO stage must be one of 0, 1, 2, 3"),
        (["memory", "gpt2", "--dp", "0"], "--dp must be a positive integer"),
        (["memory", "gpt2", "--batch", "-1"], "--batch must be a positive integer"),
        (["memory", "gpt2", "--recompute", "most"], "valid recompute options"),
        (["memory", "gpt2", "--inference", "--margin", "lots"], "the margin must be a number"),
    ],
)
def test_cli_memory_bad_input(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_cli_memory_inference_pure_ssm_mamba_130m(capsys):
    """A stack of Mamba layers has no d_ff: ``memory --inference`` follows the Cost tree's
    layer kinds.  Expected values: arithmetic from the published config of
    state-spaces/mamba-130m-hf (tests/fixtures/configs/mamba-130m-hf.json: hidden_size 768,
    24 layers, state_size 16, conv_kernel 4, intermediate_size 1536 = expand 2 x 768,
    time_step_rank 48, vocab 50280 (MambaConfig's default), float32) and transformers 5.x's
    Mamba cache shapes: conv_states (B, intermediate_size, conv_kernel) and ssm_states
    (B, intermediate_size, state_size) per layer (tests/test_layer_kinds.py checks them
    against a real prefill)."""
    code, out, _ = run(
        capsys,
        "memory",
        "tests/fixtures/configs/mamba-130m-hf.json",
        "--inference",
        "--batch",
        "2",
        "--seq-len",
        "1024",
        "--format",
        "json",
    )
    assert code == 0
    data = json.loads(out)
    d, n, di, ds, dc, r, v, fp32 = 768, 24, 1536, 16, 4, 48, 50280, 4
    state = n * (di * dc + di * ds) * fp32  # 24 x (6,144 + 24,576) elements x 4 bytes
    assert state == 2_949_120
    assert data["state_bytes_per_sequence"] == state
    assert data["kv_cache_bytes_per_token"] == 0  # no attention layer, no K/V
    assert data["kv_cache_bytes"] == 2 * state  # B sequences, whatever their length
    # one layer: its input (norm input, d_model) + the outputs of in_proj (2 d_inner),
    # x_proj (dt_rank + 2 d_state), dt_proj (d_inner), out_proj (d_model), per token
    t = 2 * 1024
    per_layer = fp32 * t * (d + 2 * di + (r + 2 * ds) + di + d)
    assert data["activations_bytes_per_layer"] == per_layer == 50_987_008
    assert data["activations_bytes"] == per_layer + 2 * fp32 * v  # + the last position's fp32 logits


def test_cli_memory_text_shows_state_per_sequence(capsys):
    """The text report prints the state per sequence beside the K/V bytes per token:
    falcon-mamba-7b (tiiuae, config: hidden_size 4096, 64 layers, state_size 16,
    conv_kernel 4, intermediate_size 8192, bfloat16): 64 x 8192 x (4 + 16) x 2 bytes."""
    code, out, _ = run(capsys, "memory", "tests/fixtures/configs/falcon-mamba-7b.json", "--inference")
    assert code == 0
    state = 64 * 8192 * (4 + 16) * 2
    assert state == 20_971_520
    assert f"state per sequence    {state:,} bytes" in out
    assert "KV cache per token    0 bytes" in out


def test_memory_inference_mamba2_state_and_activations():
    """Mamba 2 (``mixers=mamba2``, no FFN): d_model 64, d_inner 128 = 8 heads x 16, one
    group, d_state 16, d_conv 4, N 2, at bf16.  State per layer (transformers' Mamba2 cache):
    conv_states (B, d_inner + 2 g d_state, d_conv) and ssm_states (B, h, d_inner/h, d_state).
    Activations: the input (d_model) + in_proj's output (2 d_inner + 2 g d_state + h) +
    out_proj's (d_model) per token."""
    from symtrans.engine.spec import Spec

    sizes = {"d_model": 64, "V": 100, "N": 2, "d_inner": 128, "d_state": 16, "d_conv": 4}
    sizes |= {"h_ssm": 8, "g_ssm": 1, "L_chunk": 16}
    spec = Spec(sizes=sizes, mixers="mamba2", mixer_only=True, positional="none", norm="rmsnorm")
    terms = memory_terms(spec, dtype="bf16", batch=1, seq_len=10, mode="inference")
    at = spec.values
    assert evaluate(terms["state_bytes_per_sequence"], at) == 2 * ((128 + 2 * 16) * 4 + 128 * 16) * 2
    per_layer = 2 * 10 * (64 + (2 * 128 + 2 * 16 + 8) + 64)
    assert evaluate(terms["activations_bytes_per_layer"], at) == per_layer


@pytest.mark.parametrize("share", ["attention", "all"])
def test_shared_layer_weights_cache_as_many_keys_and_values(share):
    # ALBERT-style sharing stores one copy of the weights, but each of the N layers still computes
    # and caches its own keys and values of its own input: gpt2 at bf16 keeps
    # 12 layers x (K and V) x 768 x 2 bytes = 36,864 bytes per token, shared or not (the stored
    # copy of the weights, multiplicity 1 in the Cost tree, caches nothing)
    spec = presets.get("gpt2").spec.replace(share_layers=share)
    assert evaluate(kv_cache_per_token(spec, "bf16"), spec.values) == 12 * 2 * 768 * 2 == 36_864
