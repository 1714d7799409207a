"""``symtrans train``: memory, communication and time per device under TP/PP/DP/ZeRO/EP/CP/SP.

Every expected value is written out from an independent source named beside it:
DeepSpeed's estimate_zero3_model_states_mem_needs (deepspeed 0.19.8,
deepspeed/runtime/zero/stage3.py, read from its sdist), Korthikanti et al. 2022 Table 2
and §4.2.3, Megatron-LM's megatron/training/theoretical_memory_usage.py
(compute_weight_and_optimizer_memory, compute_activation_memory), the published model
configs (Llama 3 config.json, Mixtral-8x7B config.json, GPT-3 Table 2.1) and ring
all-reduce arithmetic.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction

import pytest

from symtrans.cli.main import main

# --- Llama-3-8B's parameters, from its config.json (hidden 4096, intermediate 14336,
# 32 layers, 32 heads, 8 KV heads, vocab 128256, untied, RMSNorm without bias)
D, FF, N, V, H, HKV = 4096, 14336, 32, 128256, 32, 8
LAYER = 2 * D * D + 2 * D * (D * HKV // H) + 3 * D * FF + 2 * D  # q, o; k, v; gate, up, down; 2 norms
LLAMA_P = N * LAYER + 2 * V * D + D
assert LLAMA_P == 8_030_261_248  # the parameter count Hugging Face reports for Meta-Llama-3-8B


def run_json(capsys, *argv) -> dict:
    assert main(["train", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def terms(stage: dict) -> dict:
    return {t["name"]: t["value"] for t in stage["terms"]}


def deepspeed_zero3_gpu_bytes(total_params: int, largest_layer_params: int, gpus: int) -> int:
    """deepspeed 0.19.8 deepspeed/runtime/zero/stage3.py, estimate_zero3_model_states_mem_needs
    with cpu_offload=False: gpu_mem = 4 * largest_layer_params + int(18 * total_params / total_gpus)."""
    return 4 * largest_layer_params + int(18 * total_params / gpus)


def test_llama3_8b_zero3_beside_deepspeed(capsys):
    r = run_json(capsys, "llama-3-8b", "--dp", "8", "--zero", "3", "--seq-len", "4096", "--global-batch", "8")
    (only,) = r["memory"]
    t = terms(only)
    # ZeRO §5: every model state divided by N_d = 8; 2 + 2 + 4 (fp32 master) + 8 (Adam m, v) bytes per parameter
    assert t["weights"] == 2 * LLAMA_P // 8
    assert t["gradients"] == 2 * LLAMA_P // 8
    assert t["optimizer master weights"] == 4 * LLAMA_P // 8
    assert t["optimizer states"] == 8 * LLAMA_P // 8
    states = sum(t[k] for k in ("weights", "gradients", "optimizer master weights", "optimizer states"))
    assert states == 16 * LLAMA_P // 8 == 16_060_522_496  # 14.96 GiB, the symtrans figure
    # DeepSpeed's largest layer: embed_tokens and lm_head, each V x d (the largest module's own parameters)
    ds = deepspeed_zero3_gpu_bytes(LLAMA_P, V * D, 8)
    assert ds == 20_169_434_112  # 18.78 GiB, the DeepSpeed figure
    ours = states + t["ZeRO-3 gathered working set"]
    assert t["ZeRO-3 gathered working set"] == 4 * V * D  # both count the gathered layer at 4 bytes per parameter
    # the difference, named: DeepSpeed counts 18 bytes per parameter, 2 more than bf16 gradients give
    assert ds - ours == 2 * LLAMA_P // 8
    r32 = run_json(
        capsys,
        "llama-3-8b",
        "--dp",
        "8",
        "--zero",
        "3",
        "--seq-len",
        "4096",
        "--global-batch",
        "8",
        "--grad-dtype",
        "fp32",
    )
    t32 = terms(r32["memory"][0])
    ours32 = sum(
        t32[k]
        for k in ("weights", "gradients", "optimizer master weights", "optimizer states", "ZeRO-3 gathered working set")
    )
    assert ours32 == ds  # with fp32 gradients the two agree to the byte


def test_llama3_8b_megatron_weight_and_optimizer(capsys):
    """Megatron-LM theoretical_memory_usage.py, compute_weight_and_optimizer_memory: the most
    loaded shard ((block / pp + embedding) / tp, + the untied head when pp = 1) x 18 bytes
    (6 + 12/dp with the distributed optimizer): 2 bf16 weights + 4 fp32 gradients + 12 Adam."""
    block = N * LAYER + D  # layers and the final norm (norm_size 1 for RMSNorm)
    r = run_json(capsys, "llama-3-8b", "--grad-dtype", "fp32", "--seq-len", "4096")
    t = terms(r["memory"][0])
    megatron = (block + V * D + V * D) * 18
    assert t["weights"] + t["gradients"] + t["optimizer master weights"] + t["optimizer states"] == megatron
    r = run_json(
        capsys, "llama-3-8b", "--grad-dtype", "fp32", "--tp", "2", "--pp", "2", "--dp", "2",
        "--distributed-optimizer", "--global-batch", "4", "--seq-len", "4096",
    )  # fmt: skip
    first = terms(r["memory"][0])
    ours = first["weights"] + first["gradients"] + first["optimizer master weights"] + first["optimizer states"]
    megatron = Fraction(block, 2) + V * D  # before / tp
    megatron = megatron / 2 * (6 + Fraction(12, 2))
    # named difference: Megatron divides every parameter by tp and places the final norm on every
    # shard (block / pp); the 16 layers' 2 RMSNorm weights are replicated on both TP ranks, and the
    # final norm lives on the last stage only
    norms_replicated = 16 * 2 * D * Fraction(1, 2)  # params each rank holds beyond Megatron's / tp
    final_norm_here = Fraction(D, 2 * 2)  # Megatron's share of the final norm on this shard
    assert ours == megatron + (norms_replicated - final_norm_here) * (6 + Fraction(12, 2))


# --- GPT-3 175B (Brown et al. 2020 Table 2.1): 96 layers, d 12288, 96 heads; s = 2048, b = 1
S_, B_, H_, A_, L_ = 2048, 1, 12288, 96, 96
SBH = S_ * B_ * H_
GPT3 = ["gpt3-175b", "--seq-len", "2048", "--micro-batch", "1"]


def test_gpt3_175b_korthikanti_activations(capsys):
    r = run_json(
        capsys, *GPT3, "--tp", "8", "--pp", "8", "--vpp", "2", "--dp", "16", "--sequence-parallel",
        "--recompute", "selective", "--global-batch", "1536", "--distributed-optimizer", "--devices", "1024",
    )  # fmt: skip
    first = terms(r["memory"][0])
    t, p, v = 8, 8, 2
    # Korthikanti et al. 2022 Table 2, TP + SP + selective: sbh(34/t) bytes per layer; §4.2.3: the
    # interleaved schedule's first stage holds L(1 + (p-1)/(p m)) layers' worth (m = v chunks)
    korthikanti = Fraction(SBH * 34, t) * L_ * (1 + Fraction(p - 1, p * v))
    assert first["activations: layers"] == korthikanti == 14_759_755_776  # 13.75 GiB
    # Megatron-LM compute_activation_memory adds the embedding: (8 s b p + s b h p) x penalty / t
    penalty = 1 + Fraction(p - 1, p * v)
    megatron = (SBH * (18 + 4 * 4) * L_ + 8 * S_ * B_ * p + SBH * p) * penalty / t
    assert first["activations: layers"] + first["activations: embedding"] == megatron
    assert r["layout"]["micro_batches_per_step"] == 1536 // 16  # m = 96 >= p: p micro-batches in flight


@pytest.mark.parametrize(
    "flags, per_layer",
    [  # Korthikanti et al. 2022 Table 2 with t = 8, in bytes per layer
        ([], SBH * (10 + Fraction(24, 8) + Fraction(5 * A_ * S_, H_ * 8))),
        (["--sequence-parallel"], SBH * (Fraction(34, 8) + Fraction(5 * A_ * S_, H_ * 8))),
        (["--recompute", "selective"], SBH * (10 + Fraction(24, 8))),
        (["--recompute", "selective", "--sequence-parallel"], SBH * Fraction(34, 8)),
        (["--recompute", "full"], SBH * 2),
    ],
)
def test_korthikanti_table2_rows(capsys, flags, per_layer):
    r = run_json(capsys, *GPT3, "--tp", "8", *flags)
    assert terms(r["memory"][0])["activations: layers"] == L_ * per_layer


def test_1f1b_in_flight_micro_batches(capsys):
    """Narayanan et al. 2021 §2.2.1 (1F1B): the first stage holds min(m, p) micro-batches of its
    L/p layers, the last one; Table 2 TP + SP + selective per layer."""
    per = Fraction(SBH * 34, 8)
    r = run_json(capsys, *GPT3, "--tp", "8", "--pp", "8", "--sequence-parallel", "--recompute", "selective",
                 "--dp", "2", "--global-batch", "8")  # fmt: skip
    first, last = (terms(m) for m in r["memory"])
    assert first["activations: layers"] == per * 12 * 4  # m = 8 / 2 = 4 < p = 8
    assert last["activations: layers"] == per * 12


# --- Mixtral-8x7B (config.json): 32 layers, 8 experts of w1, w3: 4096 -> 14336, w2 back; k = 2
def test_mixtral_ep8_experts_and_all_to_all(capsys):
    r = run_json(capsys, "mixtral-8x7b", "--ep", "8", "--dp", "8", "--seq-len", "4096", "--global-batch", "8")
    (only,) = r["memory"]
    experts = 32 * (8 // 8) * 3 * 4096 * 14336  # one expert per device per layer
    assert only["parameters"]["experts"] == experts == 5_637_144_576
    (a2a,) = [c for c in r["communication"] if c["axis"] == "ep"]
    # per MoE layer and micro-batch: dispatch and combine, forward and backward, each b*s*k*d 16-bit
    # values of which (ep-1)/ep leave the device under balanced routing
    per_layer = 4 * (1 * 4096 * 2 * 4096 * 2) * Fraction(7, 8)
    assert per_layer == 234_881_024
    assert a2a["bytes_per_step"] == per_layer * 32 * 1  # 32 MoE layers, m = 1 micro-batch
    assert a2a["ring_factor"] == "7/8"


def test_dp_ring_all_reduce_and_bubble(capsys):
    r = run_json(capsys, "llama-3-8b", "--dp", "4", "--pp", "2", "--global-batch", "16", "--seq-len", "4096")
    (dp,) = [c for c in r["communication"] if c["axis"].startswith("dp")]
    first_params = r["memory"][0]["parameters"]["total"]
    assert first_params == 16 * LAYER + V * D  # half the layers and the embedding
    assert dp["bytes_per_step"] == 2 * first_params * Fraction(2 * 3, 4)  # bf16 grads x 2(n-1)/n
    assert r["time"]["bubble_fraction_exact"] == "1/5"  # (p-1)/(m+p-1), m = 16/4 = 4


def _ints(obj):
    if isinstance(obj, dict):
        for v in obj.values():
            yield from _ints(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _ints(v)
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield obj


def test_every_text_figure_is_in_the_json(capsys):
    argv = ["mixtral-8x7b", "--ep", "4", "--dp", "4", "--tp", "2", "--sequence-parallel", "--pp", "2",
            "--seq-len", "4096", "--global-batch", "16", "--recompute", "selective", "--zero", "1",
            "--tokens", "1e12"]  # fmt: skip
    assert main(["train", *argv]) == 0
    text = capsys.readouterr().out
    r = run_json(capsys, *argv)
    numbers = set(_ints(r))
    exact = {int(x.replace(",", "")) for x in re.findall(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d.])", text)}
    shown = {int(n) for n in numbers if float(n).is_integer()} | {round(n) for n in numbers}  # rounded floats
    assert exact and exact <= shown
    assert r["time"]["time_to_train_days"] > 0 and r["time"]["tokens_per_second"] > 0


@pytest.mark.parametrize(
    "argv, says",
    [
        (["llama-3-8b", "--tp", "3"], "must divide the 32 attention heads"),
        (["llama-3-8b", "--tp", "16"], "key/value heads"),
        (["llama-3-8b", "--pp", "5"], "must divide the 32 layers"),
        (["mixtral-8x7b", "--ep", "3", "--dp", "3"], "must divide the 8 routed experts"),
        (["llama-3-8b", "--ep", "2", "--dp", "2"], "has none"),
        (["llama-3-8b", "--dp", "2", "--tp", "2", "--devices", "8"], "not the 8 given"),
        (["llama-3-8b", "--dp", "2", "--global-batch", "3"], "multiple of"),
        (["llama-3-8b", "--vpp", "2"], "needs --pp"),
        (["llama-3-8b", "--zero", "4"], "--zero"),
        (["llama-3-8b", "--zero", "1", "--distributed-optimizer"], "not both"),
        (["llama-3-8b", "--cluster", "bogus"], "--cluster"),
        (["llama-3-8b", "--zero", "2", "--pp", "2"], "pipeline engine"),
        (["llama-3-8b", "--optimizer", "adafactor", "--tp", "2"], "Adafactor"),
        (["llama-3-8b", "--recompute-layers", "2"], "applies to --recompute full"),
        (["llama-3-8b", "--cp", "3", "--seq-len", "4096"], "divisible by 2 x --cp"),
        (["llama-3-8b", "--accelerator", "v100-sxm2", "--fp8"], "fp8 tensor units"),
        (["mixtral-8x7b", "--tp", "2"], "--sequence-parallel"),
        (["mixtral-8x7b", "--ep", "4", "--dp", "2"], "must divide dp x cp"),
    ],
)
def test_bad_layouts_one_line(capsys, argv, says):
    assert main(["train", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err


# --- sweep and solve: GPT-2 small (Radford et al. 2019; Hugging Face's gpt2: 124,439,808 parameters,
# 12 layers, d 768, 12 heads, V 50257, tied head), s = 1024, b = 1, full recomputation, no ZeRO
GPT2_P = 124_439_808
ONE_DEVICE = (
    16 * GPT2_P  # 2 bf16 weights + 2 bf16 gradients + 4 fp32 master + 8 Adam m, v (ZeRO §3.1)
    + 2 * 1024 * 768 * 12  # full recomputation: each layer's 16-bit input (Korthikanti Table 2)
    + (8 * 1024 + 1024 * 768)  # input ids (int64) and the embedding's dropout mask (Megatron-LM)
    + (2 * 1024 * 768 + 4 * 1024 * 50257)  # the head's input and fp32 logits
)
SOLVE = ["gpt2", "--seq-len", "1024", "--recompute", "full", "--solve", "--format", "json", "--max-devices", "16"]


def test_solve_boundary_is_one_device(capsys):
    assert ONE_DEVICE == 2_218_131_456
    r = run_json_argv(capsys, *SOLVE, "--accelerator", f"peak=1e15,memory={ONE_DEVICE}")
    assert r["devices"] == 1 and r["layouts"][0]["busiest_bytes"] == ONE_DEVICE
    r = run_json_argv(capsys, *SOLVE, "--accelerator", f"peak=1e15,memory={ONE_DEVICE - 1}")
    assert r["devices"] == 2 and all(row["busiest_bytes"] <= ONE_DEVICE - 1 for row in r["layouts"])


def test_sweep_rows_and_refusals(capsys):
    r = run_json_argv(capsys, "gpt2", "--sweep", "tp=1,2,5 pp=1,5", "--format", "json", "--seq-len", "1024")
    rows = {(row["tp"], row["pp"]): row for row in r["rows"]}
    assert len(rows) == 6
    assert "must divide the 12 attention heads" in rows[(5, 1)]["refused"]
    assert "must divide the 12 layers" in rows[(1, 5)]["refused"]
    assert rows[(1, 1)]["devices"] == 1 and "refused" not in rows[(2, 1)]


def run_json_argv(capsys, *argv) -> dict:
    assert main(["train", *argv]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def deepspeed_zero2_gpu_bytes(total_params: int, gpus: int) -> int:
    """deepspeed 0.19.8 deepspeed/runtime/zero/stage_1_and_2.py, estimate_zero2_model_states_mem_needs
    with cpu_offload=False: gpu_mem = 2 * total_params + int(18 * total_params / total_gpus), its comment:
    18 = 2 (16-bit grads) + 4 (32-bit grads) + 4 (32-bit params) + 8 (optimizer states)."""
    return 2 * total_params + int(18 * total_params / gpus)


def test_llama3_8b_zero2_beside_deepspeed(capsys):
    base = ["llama-3-8b", "--dp", "8", "--zero", "2", "--seq-len", "4096", "--global-batch", "8"]
    ds = deepspeed_zero2_gpu_bytes(LLAMA_P, 8)
    for grad, missing in (("bf16", 4 * LLAMA_P // 8), ("fp32", 2 * LLAMA_P // 8)):
        t = terms(run_json(capsys, *base, "--grad-dtype", grad)["memory"][0])
        ours = t["weights"] + t["gradients"] + t["optimizer master weights"] + t["optimizer states"]
        assert t["weights"] == 2 * LLAMA_P  # ZeRO-2 keeps every 16-bit weight
        # named: DeepSpeed counts a 16-bit and a 32-bit gradient partition; symtrans one, of --grad-dtype
        assert ds - ours == missing


# the layers' matrices of Llama-3-8B, per layer: q, o (d x d); k, v (1024 x d); gate, up, down (d x ff)
LAYER_MATRICES = 2 * D * D + 2 * 1024 * D + 3 * D * FF
NORMS = N * 2 * D + D


def test_optimizer_states_adafactor_muon(capsys):
    base = ["llama-3-8b", "--seq-len", "4096"]
    t = terms(run_json(capsys, *base, "--optimizer", "adafactor")["memory"][0])
    # Shazeer & Stern 2018: per matrix an fp32 row and column vector (rows + cols); vectors keep a full fp32 v
    per_layer = 2 * (D + D) + 2 * (1024 + D) + 3 * (FF + D)
    assert t["optimizer states"] == 4 * (N * per_layer + 2 * (V + D)) + 4 * NORMS
    assert t["optimizer master weights"] == 4 * LLAMA_P
    t = terms(run_json(capsys, *base, "--optimizer", "muon")["memory"][0])
    # Muon: one fp32 momentum for the hidden matrices; AdamW's m and v for embeddings, head and norms
    assert t["optimizer states"] == 4 * N * LAYER_MATRICES + 8 * (2 * V * D + NORMS)


def test_fp8_copies(capsys):
    t = terms(run_json(capsys, "llama-3-8b", "--seq-len", "4096", "--fp8")["memory"][0])
    # TransformerEngine: 1 byte per element of each layer's weight matrix, and 3 amax histories of
    # 1,024 fp32 values for each of the 7 linear maps of a layer (recipe.DelayedScaling defaults)
    assert t["fp8 weight copies and amax history"] == N * LAYER_MATRICES + N * 7 * 3 * 1024 * 4


def test_tp_and_cp_bytes(capsys):
    r = run_json(capsys, "llama-3-8b", "--tp", "4", "--cp", "2", "--seq-len", "8192", "--global-batch", "1")
    by_axis = {c["axis"]: c for c in r["communication"]}
    tokens = 8192 // 2  # s / cp per rank
    # TP (Shoeybi et al. 2019 Figure 4): 2 blocks per layer x (forward + backward) all-reduces of 2·b·s·d bytes
    assert by_axis["tp"]["bytes_per_step"] == 32 * 2 * 2 * (2 * tokens * D) * Fraction(2 * 3, 4)
    # CP ring: 3(cp - 1) passes of the rank's K and V chunk (2 x 1024 wide, / tp) per layer
    assert by_axis["cp"]["bytes_per_step"] == 32 * 3 * 1 * (2 * tokens * (2 * 1024) // 4)


def test_compare_names_the_references(capsys):
    r = run_json(
        capsys, "llama-3-8b", "--dp", "8", "--zero", "3", "--seq-len", "4096", "--global-batch", "8", "--compare"
    )
    (ds,) = r["references"]  # Megatron-LM has no ZeRO-3: only DeepSpeed's estimate applies
    assert ds["value"] == deepspeed_zero3_gpu_bytes(LLAMA_P, V * D, 8)
    assert ds["difference"] == 2 * LLAMA_P // 8 and "18 bytes per sharded parameter" in ds["named"]
    r = run_json(
        capsys, *GPT3, "--tp", "8", "--pp", "8", "--vpp", "2", "--dp", "16", "--sequence-parallel",
        "--recompute", "selective", "--global-batch", "1536", "--distributed-optimizer", "--compare",
    )  # fmt: skip
    (mg,) = r["references"]
    penalty = 1 + Fraction(7, 16)
    megatron_acts = (SBH * (18 + 4 * 4) * L_ + 8 * S_ * B_ * 8 + SBH * 8) * penalty / 8  # compute_activation_memory
    assert mg["activations"] == megatron_acts and mg["difference_activations"] == 0


def test_interleaved_in_flight(capsys):
    """Megatron-LM's interleaved schedule (schedules.py, forward_backward_pipelining_with_interleaving):
    the first rank warms up (p - 1)·2 + (v - 1)·p chunks and then holds one more, at most the m·v
    chunks of the step; a chunk is L/(pv) layers.  p = 4, v = 2: 6 + 4 + 1 = 11 chunks = 11/2 stages."""
    base = [*GPT3, "--tp", "8", "--pp", "4", "--vpp", "2", "--sequence-parallel", "--recompute", "selective"]
    r = run_json(capsys, *base, "--dp", "1", "--global-batch", "8")  # m = 8: 11 <= 16 chunks
    assert r["memory"][0]["in_flight_micro_batches"] == "11/2"
    assert r["memory"][1]["in_flight_micro_batches"] == "5/2"  # the last rank: (v - 1)p + 1 = 5 chunks
    first = terms(r["memory"][0])
    assert first["activations: layers"] == Fraction(SBH * 34, 8) * (L_ // 8) * 11  # 11 chunks of L/(pv) = 12 layers
    r = run_json(capsys, *base, "--dp", "1", "--global-batch", "4")  # m = p = 4: only 8 chunks exist
    assert r["memory"][0]["in_flight_micro_batches"] == "4"


def test_mla_moe_tensor_parallel_shard(capsys, tmp_path):
    """A tiny DeepSeek-V3 (config below) at tp 2: Megatron-Core's MLA builds the q and kv
    down-projections as duplicated TELinear (replicated), the up-projections column-parallel,
    the output row-parallel; the router is replicated, experts and the shared expert split."""
    cfg = {
        "model_type": "deepseek_v3", "vocab_size": 128, "hidden_size": 64, "intermediate_size": 96,
        "moe_intermediate_size": 32, "num_hidden_layers": 2, "first_k_dense_replace": 1,
        "num_attention_heads": 4, "num_key_value_heads": 4, "n_routed_experts": 4, "n_shared_experts": 1,
        "num_experts_per_tok": 2, "n_group": 1, "topk_group": 1, "q_lora_rank": 48, "kv_lora_rank": 32,
        "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16, "max_position_embeddings": 256,
        "tie_word_embeddings": False,
    }  # fmt: skip
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    r = run_json(capsys, str(path), "--tp", "2", "--sequence-parallel", "--seq-len", "64")
    attention = (
        64 * 48  # q_a_proj, replicated
        + 48  # q_a_layernorm
        + 48 * 4 * (16 + 8) // 2  # q_b_proj, column-parallel
        + 64 * (32 + 8)  # kv_a_proj_with_mqa, replicated
        + 32  # kv_a_layernorm
        + 32 * 4 * (16 + 16) // 2  # kv_b_proj, column-parallel
        + 4 * 16 * 64 // 2  # o_proj, row-parallel
    )
    expected = (
        128 * 64 // 2 * 2  # vocabulary-parallel embedding and untied head
        + 64  # final norm
        + 2 * (attention + 2 * 64)  # two layers: attention and their two norms
        + 3 * 64 * 96 // 2  # the dense first layer's MLP
        + 4 * 64  # router, replicated
        + 4 * 3 * 64 * 32 // 2  # routed experts, split over tp
        + 3 * 64 * 32 // 2  # the shared expert
    )
    assert r["memory"][0]["parameters"]["total"] == expected == 57_568
