"""``deploy --shared-prefix S`` (issue 23, build 2: ``--enable-prefix-caching`` with a shared-prefix
length): the whole requests that fit when every request shares S prompt tokens.

Independent source: vLLM's automatic prefix caching hashes each KV cache block by its tokens and
the prefix before it, and a hit reuses whole blocks (docs.vllm.ai/en/latest/design/prefix_caching/,
"we hash each kv-cache block by the tokens in the block and the tokens in the prefix before the
block"; ``vllm/v1/core/kv_cache_utils.py``, ``hash_block_tokens``), so of a request's
cdiv(L, 16) blocks, floor(S / 16) are held once for all requests. Written out below on the plan's
own block count (the budget / 16, checked by tests/test_vllm_logs.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from symtrans.cli.main import main

OPTS = ("llama-3-8b", "--accelerator", "a100-80gb", "--max-model-len", "8192", "--format", "json")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def plan(capsys, *extra) -> dict:
    code, out, err = run(capsys, "deploy", *OPTS, *extra)
    assert code == 0, err
    return json.loads(out)


def test_a_shared_system_prompt_is_held_once(capsys):
    base = plan(capsys)
    r = plan(capsys, "--enable-prefix-caching", "--shared-prefix", "4000")
    assert r["token_budget"] == base["token_budget"]  # the pool vLLM logs does not change
    blocks = r["token_budget"] // 16
    # 4,000 tokens: 250 whole blocks shared; a request of 8,192 tokens needs 512 blocks, 262 of its own
    assert r["max_concurrency"] == (blocks - 250) // (512 - 250)
    assert base["max_concurrency"] == blocks * 16 // 8192


def test_a_prefix_shorter_than_a_block_shares_nothing(capsys):
    assert plan(capsys, "--shared-prefix", "15")["max_concurrency"] == plan(capsys)["max_concurrency"]


def test_a_prefix_longer_than_the_prompt_and_a_hybrid_model_are_refused(capsys):
    code, out, err = run(capsys, "deploy", *OPTS, "--shared-prefix", "9000")
    assert code == 2 and not out and len(err.strip().splitlines()) == 1
    config = Path(__file__).parent / "fixtures" / "configs" / "lfm2.5-350m.json"
    code, out, err = run(capsys, "deploy", str(config), "--accelerator", "h100-sxm", "--shared-prefix", "100")
    assert code == 2 and not out and len(err.strip().splitlines()) == 1


def test_the_prompts_last_token_is_never_a_cache_hit(capsys):
    # vLLM v1 caps a prefix-cache hit at prompt − 1 tokens: the last prompt token is recomputed for
    # its logits (vllm/v1/core/kv_cache_manager.py, get_computed_blocks: "max_cache_hit_length =
    # request.num_tokens - 1"). Prompt 4,000 all shared, 1 generated token: L = 4,001, cdiv(4,001, 16)
    # = 251 blocks; hits floor(min(4,000, 3,999) / 16) = 249 blocks, so 251 − 249 = 2 blocks a request.
    # On the A100-80GB the pool is 475,744 tokens = 29,734 blocks (written out in tests/test_deploy_max_num_seqs.py's
    # docstring, 256 sequences): (29,734 − 249) // 2 = 29,485 // 2 = 14,742 (not 250 shared and 1 block a request).
    r = json.loads(
        _cli(
            capsys,
            "deploy",
            "llama-3-8b",
            "--accelerator",
            "a100-80gb",
            "--enable-prefix-caching",
            "--shared-prefix",
            "4000",
            "--prompt",
            "4000",
            "--format",
            "json",
        )
    )
    assert r["token_budget"] == 29_734 * 16
    assert r["max_concurrency"] == (29_734 - 249) // (251 - 249) == 14_742


def _cli(capsys, *argv) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    return out
