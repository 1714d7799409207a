"""What a careful user still trips on (issue 25, items 2, 7, 8, 12, 13, 15, 16, 17).

Expected values: GPT-2's config.json (n_positions 1024; Radford et al. 2019), Llama-2-7B's
config.json (max_position_embeddings 4096), gemma-2-9b's config.json (torch_dtype float32,
the tensors as published), and arithmetic written out in each test.
"""

from __future__ import annotations

import json

import pytest

from symtrans.cli.main import main


def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


# -- 25.2: solve --for L respects the model's context ------------------------------------------


def test_solve_for_L_warns_past_gpt2s_1024_learned_positions_and_gives_the_answer_within(capsys):
    code, out, err = _run(
        capsys, "solve", "gpt2", "--for", "L", "--memory", "80GiB", "--memory-mode", "inference", "--batch", "8"
    )
    assert code == 0
    # GPT-2 has 1,024 learned positions (config.json n_positions): no row past 1,024.
    assert "exceeds 1,024" in err and "learned position table" in err and "cannot run" in err
    assert "within the context: L = 1,024:" in out


def test_solve_for_L_warns_past_llama2s_4096_maximum_positions(capsys):
    code, out, err = _run(
        capsys, "solve", "llama-2-7b", "--for", "L", "--memory", "80GiB", "--memory-mode", "inference", "--batch", "8"
    )
    assert code == 0
    assert "exceeds 4,096" in err and "max_position_embeddings" in err  # config.json: 4096
    assert "within the context: L = 4,096:" in out
    code, out, err = _run(
        capsys, "solve", "gpt2", "--for", "L", "--memory", "80GiB", "--memory-mode", "inference", "--format", "json"
    )
    assert json.loads(out)["context"]["limit"] == 1024 and "exceeds 1,024" in err


def test_solve_for_L_within_the_context_says_nothing(capsys):
    # 1 GiB holds GPT-2's fp16 weights (about 249 MB) and far less than 1,024 positions of
    # batch 512's activations: the answer is inside the table, so no warning.
    code, out, err = _run(
        capsys, "solve", "gpt2", "--for", "L", "--memory", "1GiB", "--memory-mode", "inference", "--batch", "512"
    )
    assert code == 0 and "exceeds" not in err and "within the context" not in out


# -- 25.7: ZeRO and data parallelism are never silently ignored --------------------------------


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--zero", "3"], "give --dp"),  # ZeRO-3 over 1 rank shards nothing
        (["--zero", "1"], "give --dp"),
        (["--inference", "--zero", "3"], "--zero applies to training memory"),
        (["--inference", "--dp", "8"], "--dp applies to training memory"),
        (["--inference", "--zero", "2", "--dp", "8"], "--zero and --dp apply to training memory"),
    ],
)
def test_memory_refuses_zero_and_dp_where_they_would_be_ignored(capsys, argv, words):
    code, out, err = _run(capsys, "memory", "gpt2", *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and words in err


def test_memory_zero3_over_8_ranks_divides_the_model_states_by_8(capsys):
    code, out, _ = _run(capsys, "memory", "gpt2", "--zero", "3", "--dp", "8", "--format", "json")
    assert code == 0
    r = json.loads(out)
    # GPT-2 124,439,808 parameters (transformers GPT2LMHeadModel); bf16 weights and
    # gradients 2 bytes each, adam-mixed 12 bytes (Rajbhandari et al. 2020 §3: 2 + 2 + 12),
    # ZeRO-3 shards all three over N_d = 8.
    p = 124_439_808
    assert (r["weights_bytes"], r["gradients_bytes"], r["optimizer_bytes"]) == (2 * p // 8, 2 * p // 8, 12 * p // 8)
    assert r["dp"] == 8 and r["zero_stage"] == 3
