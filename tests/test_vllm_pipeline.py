"""``deploy --pipeline-parallel-size P`` (issue 23, build 2): layers split over stages as vLLM
splits them, the KV budget of the most loaded stage.

Independent sources, written out below:
* ``vllm/distributed/utils.py``, ``get_pp_indices``: N // P layers a stage, the remainder one
  each to the stages before the last, from the last but one backwards (its docstring: "the
  remaining layers are evenly distributed across all but the last partition");
* ``vllm/v1/core/kv_cache_utils.py``, ``get_kv_cache_configs``: every worker's blocks from its
  own memory, then "the num_blocks of each worker [changed] to the smallest among all workers";
* the first stage holds the embedding, the last the final norm and the head
  (``vllm/model_executor/models/llama.py``); the sampler's profiling run is on the last stage;
* Llama-3-8B's published config: d_model 4096, 32 heads, 8 KV heads of 128, d_ff 14336,
  32 layers, V 128256, untied head; bf16.
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from symtrans.accounting.vllm_pipeline import partition
from symtrans.base.errors import InputError
from symtrans.cli.main import main


@pytest.mark.parametrize(
    "layers, stages, expected",
    [
        (32, 2, [16, 16]),
        (32, 3, [11, 11, 10]),  # 32 // 3 = 10, remainder 2: partitions[-2] and [-3] gain one
        (80, 3, [27, 27, 26]),
        (61, 4, [15, 15, 16, 15]),  # remainder 1: the last but one
        (5, 2, [3, 2]),
        (7, 7, [1] * 7),
    ],
)
def test_layers_over_stages_as_get_pp_indices(layers, stages, expected):
    assert partition(layers, stages) == expected and sum(expected) == layers


def test_more_stages_than_layers_is_refused():
    with pytest.raises(InputError):
        partition(4, 5)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def plan(capsys, *options) -> dict:
    code, out, err = run(capsys, "deploy", "llama-3-8b", "--format", "json", *options)
    assert code == 0, err
    return json.loads(out)


# Llama-3-8B bf16: a layer is W_Q, W_O 4096 x 4096, W_K, W_V 4096 x 1024, three 4096 x 14336 MLP
# matrices and two norms of 4096: 218,112,000 parameters, 436,224,000 bytes
LAYER = (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096) * 2
EMBED = HEAD = 128256 * 4096 * 2  # 1,050,673,152 bytes each (untied)
NORM = 4096 * 2
KV_LAYER = 2 * 8 * 128 * 2  # K and V of 8 heads of 128, bf16: 4,096 bytes a token and layer


def test_stage_weights_kv_and_the_budget_of_the_most_loaded_stage(capsys):
    assert LAYER == 436_224_000
    opts = ("--accelerator", "a100-80gb", "--devices", "2", "--pipeline-parallel-size", "2", "--max-model-len", "8192")
    r = plan(capsys, *opts, "--activation-reserve", "1000000000", "--non-torch", "0")
    stages = r["pipeline_stages"]
    assert [s["layers"] for s in stages] == [16, 16]
    assert [s["weights"] for s in stages] == [16 * LAYER + EMBED, 16 * LAYER + HEAD + NORM]
    assert [s["kv_cache_per_token"] for s in stages] == [16 * KV_LAYER] * 2
    usable = int(Fraction(r["memory_per_device"]["usable"]))
    blocks = [(usable - s["weights"] - 1_000_000_000) // (16 * 16 * KV_LAYER) for s in stages]
    assert r["token_budget"] == min(blocks) * 16
    # the plan shows a stage with the fewest blocks (here both: 8,192 bytes of norm make no block)
    assert r["memory_per_device"]["weights"] in [s["weights"] for s, n in zip(stages, blocks) if n == min(blocks)]
    assert r["replicas"] == 1


def test_the_samplers_logits_stay_on_the_last_stage(capsys):
    # 4 stages of 8 layers: the last holds the head and the logits of 256 sequences, 256 x 128,256 x 4 bytes,
    # which the first three stages do not reserve
    opts = (
        "--accelerator", "a100-80gb", "--devices", "4", "--pipeline-parallel-size", "4", "--max-model-len", "8192",
        "--max-num-seqs", "256", "--max-num-batched-tokens", "8192", "--non-torch", "0",
    )  # fmt: skip
    r = plan(capsys, *opts)
    one = plan(capsys, "--accelerator", "a100-80gb", "--max-model-len", "8192", "--max-num-seqs", "256",
               "--max-num-batched-tokens", "8192", "--non-torch", "0")  # fmt: skip
    peak = one["memory_per_device"]["activation_reserve"]  # the same profiling run, with the logits
    logits = 256 * 128256 * 4
    stages = r["pipeline_stages"]
    assert [s["logits"] for s in stages] == [False, False, False, True]
    usable = int(Fraction(r["memory_per_device"]["usable"]))
    blocks = [(usable - s["weights"] - (peak if s["logits"] else peak - logits)) // (16 * 8 * KV_LAYER) for s in stages]
    assert r["token_budget"] == min(blocks) * 16


@pytest.mark.parametrize(
    "argv",
    [
        ("llama-3-8b", "--devices", "3", "--pipeline-parallel-size", "2"),  # 2 does not divide 3
        ("llama-3-8b", "--devices", "2", "--pipeline-parallel-size", "2", "--quantization", "int8"),
    ],
)
def test_what_is_not_modelled_is_refused_in_one_line(capsys, argv):
    code, out, err = run(capsys, "deploy", *argv, "--accelerator", "a100-80gb")
    assert code == 2 and not out and len(err.strip().splitlines()) == 1
