"""``deploy`` under vLLM runs at most ``max_num_seqs`` sequences at once.

Independent source: vLLM's scheduler stops admitting waiting requests when
``len(self.running) == self.max_num_running_reqs`` (vllm/v1/core/sched/scheduler.py, ``schedule``),
and ``max_num_running_reqs`` is ``scheduler_config.max_num_seqs``; V1's default on an A100 is 256
(vllm/engine/arg_utils.py, ``get_batch_defaults``: 1,024 only on a device of 70 GiB or more that is
not an A100). So the running batch is min(requests that fit, max_num_seqs).

Llama-3-8B on an A100-80GB, 100 + 100 tokens: 131,072 bytes per token (32 layers x 2 x 8 heads x 128 x 2 B).
The pool, written out (vllm_profile's rules for the latest release, each with its vLLM source):
  usable      floor(0.92 x 85,899,345,920)                     = 79,027,398,246  (80 GiB, datasheet; 0.92 default)
  weights     8,030,261,248 parameters (Meta-Llama-3-8B) x 2 B = 16,060,522,496
  activation  2,048 tokens (max_num_batched_tokens on an A100) x 2 B x (2 x 4,096 + 3 x 14,336) = 209,715,200,
              + max_num_seqs x 128,256 x 4 B of fp32 logits: 32,833,536 at 64, 131,334,144 at 256
  non-torch   floor(0.25 x 2^30)                                = 268,435,456  (0.19.0's TP-1 figure)
  blocks      floor(free / (16 x 131,072)):
              64 sequences:  62,455,891,558 / 2,097,152 -> 29,781 blocks = 476,496 tokens
              256 sequences: 62,357,390,950 / 2,097,152 -> 29,734 blocks = 475,744 tokens
476,496 // 200 = 2,382 requests fit, but --max-num-seqs 64 runs 64.
"""

from __future__ import annotations

import json
from fractions import Fraction

from symtrans.cli.main import main

OPTS = ("llama-3-8b", "--accelerator", "a100-80gb", "--prompt", "100", "--generate", "100", "--format", "json")


def plan(capsys, *extra) -> dict:
    code = main(["deploy", *OPTS, *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_max_num_seqs_bounds_the_running_batch(capsys):
    r = plan(capsys, "--max-num-seqs", "64")
    assert r["token_budget"] == 29_781 * 16 == 476_496  # the pool written out in the module docstring
    assert r["max_concurrency_per_replica"] == 476_496 // 200 == 2_382  # what fits: vLLM's concurrency line
    assert r["batch_per_replica"] == 64 and r["batch_bound"] == "max_num_seqs"
    # TPOT and throughput are the existing formula's at batch 64: the same as asking for 64 requests
    at64 = plan(capsys, "--concurrency", "64")
    assert at64["batch_per_replica"] == 64
    for key in ("tpot_seconds", "output_tokens_per_second", "requests_per_second", "decode_tokens_per_second"):
        assert Fraction(r[key]) == Fraction(at64[key]), key


def test_the_default_max_num_seqs_is_256_on_an_a100(capsys):
    r = plan(capsys)
    # 256 sequences' fp32 logits in the profiling run leave a slightly smaller pool: still over 2,000 fit
    assert r["token_budget"] == 29_734 * 16 == 475_744  # the docstring's arithmetic at 256 sequences
    assert r["max_concurrency_per_replica"] == 475_744 // 200 == 2_378
    assert r["batch_per_replica"] == 256 and r["batch_bound"] == "max_num_seqs"


def test_the_kv_cache_bounds_it_when_fewer_fit(capsys):
    # 8,192 tokens a request: 475,744 tokens // 8,192 = 58 fit at most, under 256
    r = plan(capsys, "--prompt", "8092", "--generate", "100")
    assert r["token_budget"] // 8_192 == 58
    assert r["max_concurrency_per_replica"] == r["batch_per_replica"] == 58 and r["batch_bound"] == "KV cache"
