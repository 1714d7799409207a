"""``deploy`` under vLLM runs at most ``max_num_seqs`` sequences at once.

Independent source: vLLM's scheduler stops admitting waiting requests when
``len(self.running) == self.max_num_running_reqs`` (vllm/v1/core/sched/scheduler.py, ``schedule``),
and ``max_num_running_reqs`` is ``scheduler_config.max_num_seqs``; V1's default on an A100 is 256
(vllm/engine/arg_utils.py, ``get_batch_defaults``: 1,024 only on a device of 70 GiB or more that is
not an A100). So the running batch is min(requests that fit, max_num_seqs).

Llama-3-8B on an A100-80GB, 100 + 100 tokens: 131,072 bytes per token, a pool of 477,232 tokens
(test_vllm_logs checks the pool), 477,232 // 200 = 2,386 requests fit, but --max-num-seqs 64 runs 64.
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
    assert r["max_concurrency_per_replica"] == 477_232 // 200 == 2_386  # what fits: vLLM's concurrency line
    assert r["batch_per_replica"] == 64 and r["batch_bound"] == "max_num_seqs"
    # TPOT and throughput are the existing formula's at batch 64: the same as asking for 64 requests
    at64 = plan(capsys, "--concurrency", "64")
    assert at64["batch_per_replica"] == 64
    for key in ("tpot_seconds", "output_tokens_per_second", "requests_per_second", "decode_tokens_per_second"):
        assert Fraction(r[key]) == Fraction(at64[key]), key


def test_the_default_max_num_seqs_is_256_on_an_a100(capsys):
    r = plan(capsys)
    # 256 sequences' fp32 logits in the profiling run leave a slightly smaller pool: still over 2,000 fit
    assert r["max_concurrency_per_replica"] == r["token_budget"] // 200 > 2_000
    assert r["batch_per_replica"] == 256 and r["batch_bound"] == "max_num_seqs"


def test_the_kv_cache_bounds_it_when_fewer_fit(capsys):
    # 8,192 tokens a request: a pool under 477,232 tokens // 8,192 = 58 fit at most, under 256
    r = plan(capsys, "--prompt", "8092", "--generate", "100")
    assert r["token_budget"] // 8_192 == 58
    assert r["max_concurrency_per_replica"] == r["batch_per_replica"] == 58 and r["batch_bound"] == "KV cache"
