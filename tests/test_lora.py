"""LoRA and bottleneck adapters: trainable against frozen parameters (tracker issue 7).

Sources: Hu et al. 2021 (LoRA) §4.1, r*(d_in + d_out) per adapted matrix; Houlsby et al.
2019 §2.1 (adapters); PEFT's ``get_peft_model`` on the meta device (when installed);
ZeRO (Rajbhandari et al. 2020) §3.1 for 16 bytes per trained parameter; arithmetic
written out in each test.
"""

import json

import pytest
import sympy as sp
from conftest import require

from symtrans.accounting.lora import (
    VALID_NAMES,
    adapter_params,
    lora_params,
    parse_peft,
    peft_result,
    training_state_bytes,
)
from symtrans.catalog.presets import PRESETS
from symtrans.cli.main import main
from symtrans.engine import symbols as S
from symtrans.engine.simplify import identical

LLAMA2_7B = PRESETS["llama-2-7b"].spec
LLAMA2_7B_PARAMS = 6_738_415_616  # transformers LlamaForCausalLM(Llama-2-7b config), meta device


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_lora_r8_on_q_and_v_of_llama_2_7b():
    # 32 layers x 2 matrices (W_Q, W_V, each 4096 x 4096) x 8*(4096 + 4096).
    expected = 32 * 2 * 8 * (4096 + 4096)
    assert expected == 4_194_304
    r = peft_result(LLAMA2_7B, parse_peft("r=8,targets=q,v", None))
    assert r["trainable"] == expected
    assert r["frozen"] == LLAMA2_7B_PARAMS
    assert r["total"] == LLAMA2_7B_PARAMS + expected
    assert identical(lora_params(LLAMA2_7B, ["q", "v"]), 4 * S.N * S.d_model * S.r)


def test_lora_matches_peft_on_the_meta_device(read_fixture):
    torch, transformers, peft = require("torch"), require("transformers"), require("peft")
    with torch.device("meta"):
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**read_fixture("llama-2-7b")))
    pm = peft.get_peft_model(model, peft.LoraConfig(r=8, target_modules=["q_proj", "v_proj"]))
    trainable = sum(p.numel() for p in pm.parameters() if p.requires_grad)
    frozen = sum(p.numel() for p in pm.parameters() if not p.requires_grad)
    r = peft_result(LLAMA2_7B, parse_peft("r=8,targets=q,v", None))
    assert (trainable, frozen) == (r["trainable"], r["frozen"]) == (4_194_304, LLAMA2_7B_PARAMS)


def test_lora_on_t5_counts_cross_attention_too(read_fixture):
    # PEFT targets every module named q / v: encoder self-attention (6), decoder self- and
    # cross-attention (6 + 6): 18 x 2 matrices x 8*(512 + 512) = 294,912 for t5-small.
    spec = PRESETS["t5-small"].spec
    r = peft_result(spec, parse_peft("r=8,targets=q,v", None))
    assert r["trainable"] == 18 * 2 * 8 * (512 + 512) == 294_912
    torch, transformers, peft = require("torch"), require("transformers"), require("peft")
    with torch.device("meta"):
        model = transformers.T5ForConditionalGeneration(transformers.T5Config(**read_fixture("t5-small")))
    pm = peft.get_peft_model(model, peft.LoraConfig(r=8, target_modules=["q", "v"]))
    assert sum(p.numel() for p in pm.parameters() if p.requires_grad) == 294_912


def test_lora_under_gqa_uses_the_narrow_key_projection():
    # Llama-3-8B: W_K is 4096 x (8 heads * 128) = 4096 x 1024: 32 * 16*(4096 + 1024).
    r = peft_result(PRESETS["llama-3-8b"].spec, parse_peft("r=16,targets=k", None))
    assert r["trainable"] == 32 * 16 * (4096 + 1024) == 2_621_440


def test_lora_ffn_alias_on_a_two_map_ffn():
    # GPT-2: "ffn" is W_1 (768 x 3072) and W_2 (3072 x 768): 12 * 2 * 4*(768 + 3072).
    r = peft_result(PRESETS["gpt2"].spec, parse_peft("r=4,targets=ffn", None))
    assert r["trainable"] == 12 * 2 * 4 * (768 + 3072) == 368_640
    with pytest.raises(ValueError, match="gate"):
        peft_result(PRESETS["gpt2"].spec, parse_peft("r=4,targets=gate", None))


def test_lora_all_projections_of_llama():
    # q, k, v, o: 4 * (4096 + 4096); gate, up: 2 * (4096 + 11008); down: 11008 + 4096; times r*N.
    per_layer = 4 * 8192 + 2 * 15104 + 15104
    r = peft_result(LLAMA2_7B, parse_peft("r=8,targets=all", None))
    assert r["trainable"] == 32 * 8 * per_layer


def test_houlsby_adapters_on_bert_base():
    # Two adapters per layer (after attention and after the FFN), each 768x64 + 64 and 64x768 + 768.
    r = peft_result(PRESETS["bert-base"].spec, parse_peft(None, "r=64"))
    assert r["trainable"] == 12 * 2 * (2 * 64 * 768 + 64 + 768) == 2_379_264
    assert identical(
        adapter_params(PRESETS["bert-base"].spec, "pfeiffer"), S.N * (2 * S.r * S.d_model + S.r + S.d_model)
    )


def test_training_memory_keeps_optimizer_state_only_for_trainable_parameters():
    # Mixed-precision Adam: 16 bytes per trainable parameter (2 weight + 2 gradient + 12 state),
    # 2 bytes per frozen one.
    assert training_state_bytes(LLAMA2_7B_PARAMS, 4_194_304) == 2 * LLAMA2_7B_PARAMS + 16 * 4_194_304
    r = peft_result(LLAMA2_7B, parse_peft("r=8,targets=q,v", None))
    assert r["training_state_bytes"]["full_fine_tune"] == 16 * LLAMA2_7B_PARAMS == 107_814_649_856
    assert r["training_state_bytes"]["peft"] == 2 * 6_738_415_616 + 16 * 4_194_304 == 13_543_940_096


def test_cli_params_lora_prints_trainable_against_frozen(capsys):
    code, out, err = run(capsys, "params", "llama-2-7b", "--lora", "r=8,targets=q,v")
    assert code == 0 and err == ""
    assert "trainable 4,194,304" in out and "frozen 6,738,415,616" in out
    code, out, err = run(capsys, "params", "llama-2-7b", "--lora", "r=8,targets=q,v", "--format", "json")
    p = json.loads(out)["peft"]
    assert p["trainable"] == 4_194_304 and p["trainable_closed_form"] == "4*N*d_model*r"


# -- bad input ---------------------------------------------------------------------------------


def test_unknown_projection_lists_the_valid_names(capsys):
    code, out, err = run(capsys, "params", "llama-2-7b", "--lora", "r=8,targets=q,qq")
    assert code == 2 and out == ""
    line = err.strip()
    assert len(line.splitlines()) == 1
    assert "unknown LoRA target 'qq'" in line
    for name in VALID_NAMES:
        assert name in line


@pytest.mark.parametrize("text", ["r=0,targets=q", "r=-2,targets=q"])
def test_non_positive_lora_rank_is_an_error(capsys, text):
    code, out, err = run(capsys, "params", "llama-2-7b", "--lora", text)
    assert code == 2 and out == "" and "must be a positive integer" in err


@pytest.mark.parametrize(
    "text, message",
    [("targets=q,v", "needs a rank"), ("r=8", "needs targets"), ("r=8,targets=q,alpha=16", "unknown --lora option")],
)
def test_incomplete_lora_options(text, message):
    with pytest.raises(ValueError, match=message):
        parse_peft(text, None)


def test_rank_above_min_dimension_warns(capsys):
    # W_K of Llama-2-7B is 4096 x 4096: r = 5000 > 4096 saves nothing over training W_K itself.
    code, out, err = run(capsys, "params", "llama-2-7b", "--lora", "r=5000,targets=k")
    assert code == 0
    assert "saves nothing" in err and "LoRA on k" in err
    assert "trainable 1,310,720,000" in out  # 32 * 5000 * 8192


def test_lora_rank_is_a_symbol_of_the_closed_form():
    expr = lora_params(LLAMA2_7B, ["q", "v"])
    assert S.r in expr.free_symbols
    assert sp.Poly(expr, S.r).degree() == 1
