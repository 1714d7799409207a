"""LoRA and bottleneck adapters: trainable against frozen parameters (tracker issue 7).

Sources: Hu et al. 2021 (LoRA) §4.1, r*(d_in + d_out) per adapted matrix; Houlsby et al.
2019 §2.1 (adapters); PEFT's ``get_peft_model`` on the meta device (when installed);
ZeRO (Rajbhandari et al. 2020) §3.1 for 16 bytes per trained parameter; arithmetic
written out in each test.
"""

import json
from pathlib import Path

import pytest
import sympy as sp
from conftest import require
from hypothesis import given, settings
from hypothesis import strategies as st

from symtrans.accounting.lora import (
    VALID_NAMES,
    adapter_params,
    lora_params,
    parse_peft,
    peft_result,
    training_state_bytes,
)
from symtrans.base.errors import InputError
from symtrans.catalog.presets import PRESETS
from symtrans.catalog.resolve import resolve
from symtrans.cli.main import main
from symtrans.engine import symbols as S
from symtrans.engine.simplify import identical

FIXTURES = Path(__file__).parent / "fixtures" / "configs"
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


# -- targets read off the Cost tree by role (issue 20): hybrids, MoE, state-space, vision ----------

# The PEFT module name of each symtrans target, per model type (transformers 5.x modeling code):
# LFM2's FFN is w1 (gate), w3 (up), w2 (down); its attention output is out_proj, a name its
# convolution layers share, so "o" is left out there.  For qwen2_moe and qwen3_next, PEFT 0.21
# rewrites gate_proj/up_proj/down_proj into target_parameters on the fused routed experts
# (peft.utils.transformers_weight_conversion), even in a model without experts, so only their
# attention names are drawn; FFN targets beside routed experts are refused (tested below).
ATTENTION = dict(q="q_proj", k="k_proj", v="v_proj", o="o_proj")
LLAMA_NAMES = dict(ATTENTION, gate="gate_proj", up="up_proj", down="down_proj")
PEFT_NAMES = {
    "mixtral": LLAMA_NAMES,
    "jamba": LLAMA_NAMES,
    "qwen2_moe": ATTENTION,
    "qwen3_next": ATTENTION,
    "lfm2": dict(q="q_proj", k="k_proj", v="v_proj", gate="w1", up="w3", down="w2"),
}


def _peft_trainable(hf, peft, cfg: dict, modules: list[str]) -> int | None:
    """PEFT's trainable count for LoRA r=4 on ``modules``, or None when PEFT finds none of them."""
    model = hf.build(cfg["model_type"], cfg)
    try:
        pm = peft.get_peft_model(model, peft.LoraConfig(r=4, target_modules=modules))
    except ValueError as e:
        assert "not found in the base model" in str(e), e
        return None
    return sum(p.numel() for p in pm.parameters() if p.requires_grad)


# Each example builds one or two transformers models and a PEFT wrapper (0.1 to 0.3 s on the shared
# 2-core machine): 40 per model type keep the five types under 40 s in the CI profile (18 s measured).
@pytest.mark.parametrize("model_type", sorted(PEFT_NAMES))
@settings(max_examples=min(settings.default.max_examples, 40))
@given(data=st.data())
def test_lora_by_role_matches_peft_on_hybrid_and_moe_stacks(hf, model_type, data):
    # Oracle: PEFT's get_peft_model on transformers' own class on the meta device.  Hybrid
    # stacks adapt their attention layers only (symtrans before issue 20 adapted every layer).
    from hf_reference import STRATEGIES, experts_of

    from symtrans.catalog.hf_config import spec_from_config

    peft = require("peft")
    cfg = data.draw(STRATEGIES[model_type], label="config")
    names = PEFT_NAMES[model_type]
    targets = data.draw(st.lists(st.sampled_from(sorted(names)), min_size=1, max_size=3, unique=True), label="targets")
    spec, _ = spec_from_config(cfg, "hypothesis")
    try:
        got = peft_result(spec, parse_peft(f"r=4,targets={','.join(targets)}", None))["trainable"]
    except InputError as e:
        if "mixture-of-experts" in str(e):  # refused beside routed experts: transformers has them
            assert experts_of(hf.build(model_type, cfg)) is not None
            return
        # a target without a matrix of its role: PEFT finds no module of that name either
        missing = [t for t in targets if f"target {t!r}" in str(e)]
        assert len(missing) == 1, str(e)
        assert _peft_trainable(hf, peft, cfg, [names[missing[0]]]) is None
        return
    assert got == _peft_trainable(hf, peft, cfg, [names[t] for t in targets])


def test_lora_on_jamba_adapts_its_four_attention_layers_only():
    # ai21-jamba-1.5-mini: 32 layers, attention every 8th from offset 4 (layers 4, 12, 20, 28): 4
    # attention layers.  W_Q 4096 -> 4096, W_V 4096 -> 8 KV heads x 128 = 1024; r = 8:
    # 4 x 8 x ((4096 + 4096) + (4096 + 1024)) = 425,984.  (Before issue 20 every one of the 32
    # layers was counted: 3,407,872.)
    spec = resolve(str(FIXTURES / "ai21-jamba-1.5-mini.json")).spec
    assert peft_result(spec, parse_peft("r=8,targets=q,v", None))["trainable"] == 4 * 8 * (8192 + 5120) == 425_984
    with pytest.raises(InputError, match="mixture-of-experts"):
        peft_result(spec, parse_peft("r=8,targets=ffn", None))
    with pytest.raises(InputError, match="state-space"):
        adapter_params(spec, "houlsby")


def test_mixtral_ffn_is_refused_because_peft_fuses_the_experts(hf):
    # PEFT 0.21 on transformers 5.x adapts Mixtral's routed experts through their fused
    # parameters: its own names w1 + w3 become one LoRA on gate_up_proj at rank 2r, w2 one on
    # down_proj; per expert (E = 3, d = 8, f = 12, r = 4, 2 layers): 2r(d + 2f) + r(f + d), not
    # the r(d + f) x 3 of three separate adapters.  symtrans refuses rather than pick one.
    peft = require("peft")
    cfg = dict(
        model_type="mixtral",
        hidden_size=8,
        intermediate_size=12,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        num_local_experts=3,
        num_experts_per_tok=2,
        vocab_size=16,
    )
    fused = _peft_trainable(hf, peft, cfg, ["w1", "w2", "w3"])
    assert fused == 2 * 3 * (2 * 4 * (8 + 2 * 12) + 4 * (12 + 8)) == 2016
    assert fused != 2 * 3 * 3 * 4 * (8 + 12)
    for targets in ("ffn", "all", "gate,up,down"):
        with pytest.raises(InputError, match="mixture-of-experts"):
            peft_result(PRESETS["mixtral-8x7b"].spec, parse_peft(f"r=8,targets={targets}", None))
    # attention targets are counted: 32 layers x 8 x (W_Q 4096 + 4096, W_V 4096 + 1024)
    r = peft_result(PRESETS["mixtral-8x7b"].spec, parse_peft("r=8,targets=q,v", None))
    assert r["trainable"] == 32 * 8 * (8192 + 5120) == 3_407_872


def test_lora_on_a_state_space_model_has_no_attention_to_adapt(hf):
    # Mamba has in_proj, x_proj, dt_proj, out_proj and no q_proj: PEFT finds no target.
    peft = require("peft")
    spec = resolve(str(FIXTURES / "mamba-130m-hf.json")).spec
    with pytest.raises(InputError, match="target 'q' matches no matrix"):
        peft_result(spec, parse_peft("r=8,targets=q", None))
    cfg = dict(model_type="mamba", hidden_size=8, num_hidden_layers=2, vocab_size=16, state_size=4)
    assert _peft_trainable(hf, peft, cfg, ["q_proj"]) is None


def test_lora_on_a_vision_language_model_is_refused(hf):
    # PEFT's q_proj also matches the CLIP vision tower's q_proj (and symtrans counts the vision
    # tower as one part, not by projection): counting the language model alone was too low.
    peft = require("peft")
    from hf_reference import LLAVA_VISION

    text = dict(
        model_type="llama",
        hidden_size=8,
        intermediate_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        vocab_size=16,
    )
    model = hf.build("llava", dict(model_type="llava", vision_config=LLAVA_VISION, text_config=text))
    pm = peft.get_peft_model(model, peft.LoraConfig(r=4, target_modules=["q_proj"]))
    adapted = {n for n, _ in pm.named_modules() if n.endswith("q_proj.lora_A")}
    assert any("vision_tower" in n for n in adapted) and any("language_model" in n for n in adapted)
    spec = resolve(str(FIXTURES / "llava-1.5-7b.json")).spec
    with pytest.raises(InputError, match="vision-language"):
        peft_result(spec, parse_peft("r=8,targets=q", None))
