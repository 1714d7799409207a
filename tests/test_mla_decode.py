"""Multi-head latent attention at decode, both ways (issue 23, item 7): ``expanded`` against
FlopCounterMode on transformers' eager DeepseekV3 (a tiny config), ``absorbed`` against
arithmetic written out here from DeepSeek-V2 §2.1.3 for DeepSeek-V3's published sizes.
"""

from __future__ import annotations

import json

from conftest import require

from symtrans.accounting.mla_decode import decode_flops_per_token, saving
from symtrans.catalog.hf_config import spec_from_config
from symtrans.cli.main import main

TINY = {
    "model_type": "deepseek_v3",
    "vocab_size": 128,
    "hidden_size": 64,
    "intermediate_size": 96,
    "moe_intermediate_size": 32,
    "num_hidden_layers": 2,
    "first_k_dense_replace": 1,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "n_routed_experts": 4,
    "n_shared_experts": 1,
    "num_experts_per_tok": 2,
    "n_group": 1,
    "topk_group": 1,
    "q_lora_rank": 48,
    "kv_lora_rank": 32,
    "qk_nope_head_dim": 16,
    "qk_rope_head_dim": 8,
    "v_head_dim": 16,
    "max_position_embeddings": 256,
    "tie_word_embeddings": False,
}


def test_expanded_decode_equals_flopcountermode_on_eager_deepseek_v3():
    torch = require("torch")
    transformers = require("transformers")
    counter_mode = require("torch.utils.flop_counter").FlopCounterMode
    spec, _ = spec_from_config(dict(TINY), "tiny")
    kwargs = {k: v for k, v in TINY.items() if k != "model_type"}
    config = transformers.DeepseekV3Config(**kwargs, attn_implementation="eager", experts_implementation="eager")
    torch.manual_seed(0)
    model = transformers.DeepseekV3ForCausalLM(config).eval()
    for prompt in (10, 37):
        with torch.no_grad():
            out = model(input_ids=torch.randint(0, 128, (1, prompt)), use_cache=True)
            counter = counter_mode(display=False)
            with counter:  # one decode step: the new token attends prompt + 1 positions
                model(input_ids=torch.randint(0, 128, (1, 1)), cache=out.past_key_values, use_cache=True)
        assert counter.get_total_flops() == decode_flops_per_token(spec, spec.values, prompt + 1, "expanded")


def test_absorbed_decode_of_deepseek_v3_by_hand():
    # DeepSeek-V3 (config defaults = the published model): d_model 7168, 128 heads, q rank 1536,
    # kv rank 512, nope 128, rope 64, v 128; 61 layers, the first 3 dense (d_ff 18432), 58 MoE layers
    # of 256 experts (8 routed + 1 shared, 2048 wide); vocabulary 129,280.  One token at context 2,048:
    spec, _ = spec_from_config({"model_type": "deepseek_v3"}, "deepseek-v3")
    ctx = 2048
    d, h, rq, rkv, nope, rope, dv = 7168, 128, 1536, 512, 128, 64, 128
    attention = (
        2 * d * rq  # W_DQ
        + 2 * rq * h * (nope + rope)  # W_UQ
        + 2 * d * (rkv + rope)  # W_DKV of the new token
        + 2 * h * nope * rkv  # W_UK absorbed into the query
        + 2 * h * ctx * (rkv + rope)  # scores against the cached latent and rotary key
        + 2 * h * ctx * rkv  # weighted sum in the latent
        + 2 * h * rkv * dv  # W_UV, once
        + 2 * h * dv * d  # W_O
    )
    dense_ffn = 3 * 2 * d * 18432
    moe_ffn = 2 * d * 256 + 8 * 3 * 2 * d * 2048 + 3 * 2 * d * 2048  # router, 8 routed, 1 shared
    head = 2 * d * 129280
    expected = 61 * attention + 3 * dense_ffn + 58 * moe_ffn + head
    assert expected == 108_045_139_968  # about 0.11 TFLOP per token
    assert decode_flops_per_token(spec, spec.values, ctx, "absorbed") == expected
    # expanded re-expands the 2,048 cached latents in all 61 layers: 40 times more
    expanded = decode_flops_per_token(spec, spec.values, ctx, "expanded")
    assert expanded - expected == saving(spec.values, 1, ctx - 1, 1) and expanded > 39 * expected


def test_deploy_decodes_absorbed_under_vllm_and_expanded_when_asked(capsys, tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(TINY))
    results = {}
    for form in ("absorbed", "expanded"):
        argv = ["deploy", str(cfg), "--accelerator", "h100-sxm", "--max-model-len", "64", "--generate", "8"]
        assert main([*argv, "--mla", form, "--format", "json"]) == 0
        results[form] = json.loads(capsys.readouterr().out)
    assert results["absorbed"]["mla"]["form"] == "absorbed" and results["expanded"]["mla"]["form"] == "expanded"
    a, e = (int(results[f]["decode"]["flops"]) for f in ("absorbed", "expanded"))
    batch = results["absorbed"]["batch_per_replica"]
    spec, _ = spec_from_config(dict(TINY), "tiny")
    assert e - a == saving(spec.values, batch, 56, 8)  # 56 prompt + 8 generated tokens, every sequence of the batch
    assert main(["deploy", str(cfg), "--accelerator", "h100-sxm", "--max-model-len", "64"]) == 0
    assert "decoded absorbed" in capsys.readouterr().out
