"""DeepSeek-V4 (deepseek_v4): the published DeepSeek-V4-Flash config (tests/fixtures/configs,
source in SOURCES.md) against transformers 5.24's DeepseekV4ForCausalLM built on the meta device,
the same figure by hand from the tensor shapes of modeling_deepseek_v4.py, and the one-line
refusals of FLOPs, KV cache and memory.

The random draws (hypothesis), the key audit and the FLOPs refusal of the audit base are in
tests/test_model_types.py; the re-save in tests/test_resave.py.
"""

from __future__ import annotations

import pytest

from symtrans.accounting.flops import flops_expr
from symtrans.accounting.memory import kv_cache_per_token
from symtrans.base.errors import InputError
from symtrans.catalog.hf_config import spec_from_config
from symtrans.cli import main as cli
from symtrans.engine.architectures import build
from symtrans.engine.evaluate import exact

FLASH = "deepseek-v4-flash-shaped"
FLASH_TOTAL = 284_332_230_231


def test_flash_matches_transformers(hf, read_fixture):
    """DeepseekV4ForCausalLM from the published file on the meta device: 284,332,230,231."""
    cfg = read_fixture(FLASH)
    model = hf.build(cfg["model_type"], cfg)
    assert type(model).__name__ == "DeepseekV4ForCausalLM"
    assert hf.count(model) == FLASH_TOTAL
    spec, _ = spec_from_config(cfg, FLASH)
    assert exact(build(spec).params, spec.values) == FLASH_TOTAL


def test_flash_by_hand(read_fixture):
    """The tensors of modeling_deepseek_v4.py (transformers 5.24) at DeepSeek-V4-Flash's sizes: d 4096,
    h 64 heads of 512, q_lora_rank 1024, o_groups 8 of o_lora_rank 1024, hc_mult 4, 256 experts of
    2048, indexer 64 heads of 128; compress_ratios [0, 0, 4, 128, ...] cut to 43 layers: 2 sliding,
    21 CSA (rate 4), 20 HCA (rate 128)."""
    d, h, hd, rq, g, ro, n, E, f, V = 4096, 64, 512, 1024, 8, 1024, 4, 256, 2048, 129280
    attention = (
        d * rq + rq  # q_a_proj, q_a_norm
        + rq * h * hd  # q_b_proj
        + d * hd + hd  # kv_proj, kv_norm
        + (g * ro) * (h * hd // g)  # o_a_proj (DeepseekV4GroupedLinear weight)
        + g * ro * d  # o_b_proj
        + h  # sinks
    )  # fmt: skip
    csa = 2 * d * 2 * hd + 4 * 2 * hd + hd  # kv_proj, gate_proj, position_bias, kv_norm (two series)
    indexer = 2 * d * 2 * 128 + 4 * 2 * 128 + 128 + rq * 64 * 128 + d * 64  # + q_b_proj, weights_proj
    hca = 2 * d * hd + 128 * hd + hd
    moe = E * d + E * 2 * f * d + E * d * f + 3 * d * f  # router, gate_up_proj, down_proj, shared MLP
    hc = (2 + n) * n * n * d + (2 + n) * n + 3  # fn, base, scale
    layer = attention + moe + 2 * hc + 2 * d  # attn_hc, ffn_hc, input and post-attention norms
    head = n * n * d + n + 1  # hc_head
    total = 43 * layer + 21 * (csa + indexer) + 20 * hca + 2 * V * d + d + head  # embeddings, lm_head, norm
    assert total == FLASH_TOTAL
    # per token: 6 of 256 experts (gate_up_proj and down_proj 3 x 4096 x 2048 each)
    active = total - 43 * (E - 6) * 3 * d * f
    spec, _ = spec_from_config(read_fixture(FLASH), FLASH)
    assert exact(build(spec).active_params, spec.values) == active == 13_799_622_231


@pytest.mark.parametrize("what", ["forward", "kv"])
def test_workload_is_refused_in_one_line(read_fixture, what):
    """FLOPs and the KV cache of the compressed attention are not modelled: one line, not a guess."""
    spec, _ = spec_from_config(read_fixture(FLASH), FLASH)
    with pytest.raises(InputError, match="not modelled; parameters are exact") as refused:
        flops_expr(spec, "forward") if what == "forward" else kv_cache_per_token(spec)
    assert "\n" not in str(refused.value)


def test_cli_refuses_flops_with_exit_2(config_dir, capsys):
    assert cli.main(["flops", str(config_dir / f"{FLASH}.json")]) == 2
    out, err = capsys.readouterr()
    assert not out and err.count("\n") == 1 and "not modelled" in err
