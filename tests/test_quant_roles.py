"""Which matrices a quantizer replaces is decided by the step's role, never by its shape
(issue 20).

The old rule took the output head to be "the linear map with V outputs".  A Marian model
with its own target vocabulary (``share_encoder_decoder_embeddings: false``,
``decoder_vocab_size`` != ``vocab_size``, untied) has an LM head of ``decoder_vocab_size``
rows, so the old rule quantized it under bitsandbytes, GPTQ and AWQ, which keep the head.

Oracle: transformers 5.x itself.  ``MarianMTModel`` is built on the meta device, the
modules bitsandbytes keeps are transformers' own list (``HfQuantizer.get_modules_to_not_convert``
with no skip modules, as ``load_in_8bit``/``load_in_4bit`` call it), and the modules it
replaces are the ``nn.Linear`` modules ``should_convert_module`` lets through, as
``replace_with_bnb_linear`` does.  Their bytes are the layouts the module docstring of
``accounting.quantization`` cites, written out below: LLM.int8() keeps int8 weights (K·N
bytes) and one fp32 scale per output row (``SCB``, 4·N; Dettmers et al. 2022 §3); 4-bit
(``quantize_4bit``, blocksize 64) keeps ceil(n/2) packed bytes, one fp32 absmax per 64
values and the 16-entry fp32 code (64 bytes).  Everything else stays fp16 (2 bytes).
"""

from __future__ import annotations

import json

import pytest
from conftest import require
from hypothesis import given, settings
from hypothesis import strategies as st

from symtrans.accounting.quantization import WeightFormat, parse_quantization, weight_terms
from symtrans.catalog.resolve import resolve
from symtrans.engine.evaluate import exact

# A tiny Marian translation model with separate source and target vocabularies (MarianConfig
# keys; sizes small so the meta build is quick).  96 source tokens, 80 target tokens.
MARIAN = {
    "model_type": "marian",
    "architectures": ["MarianMTModel"],
    "vocab_size": 96,
    "decoder_vocab_size": 80,
    "share_encoder_decoder_embeddings": False,
    "tie_word_embeddings": False,
    "d_model": 64,
    "encoder_layers": 2,
    "decoder_layers": 2,
    "encoder_attention_heads": 4,
    "decoder_attention_heads": 4,
    "encoder_ffn_dim": 128,
    "decoder_ffn_dim": 128,
    "max_position_embeddings": 32,
    "pad_token_id": 0,
    "decoder_start_token_id": 0,
    "eos_token_id": 1,
    "scale_embedding": True,
    "activation_function": "swish",
}


def _bnb_bytes(model, packed) -> int:
    """Bytes of ``model`` with bitsandbytes replacing the modules transformers replaces:
    ``packed(out_features, in_features)`` for each replaced weight, fp16 for the rest."""
    from transformers.pytorch_utils import Conv1D
    from transformers.quantizers.base import HfQuantizer
    from transformers.quantizers.quantizers_utils import should_convert_module

    torch = require("torch")
    assert not getattr(model, "_keep_in_fp32_modules", None)  # (T5's wo would stay fp32: not modelled here)
    skip = HfQuantizer.get_modules_to_not_convert(model, None, None)
    replaced = set()
    total = 0
    for name, module in model.named_modules():
        if (type(module) is torch.nn.Linear or isinstance(module, Conv1D)) and should_convert_module(name, skip):
            replaced.add(f"{name}.weight")
            # nn.Linear stores (out, in); GPT-2's Conv1D (in, out)
            n_out, k_in = module.weight.shape if type(module) is torch.nn.Linear else module.weight.shape[::-1]
            total += packed(n_out, k_in)
    return total + sum(2 * p.numel() for n, p in model.named_parameters() if n not in replaced)


def _int8(n_out: int, k_in: int) -> int:
    return n_out * k_in + 4 * n_out  # int8 weights + fp32 SCB per output row


def _nf4(n_out: int, k_in: int) -> int:
    n = n_out * k_in
    return -(-n // 2) + 4 * -(-n // 64) + 64  # packed nibbles + fp32 absmax per 64 + the fp32 code


@pytest.mark.parametrize("method, packed", [("bnb-int8", _int8), ("nf4", _nf4)])
def test_a_marian_head_of_its_own_vocabulary_stays_unquantized(tmp_path, method, packed):
    torch, transformers = require("torch"), require("transformers")
    with torch.device("meta"):
        model = transformers.MarianMTModel(transformers.MarianConfig(**MARIAN))
    assert tuple(model.lm_head.weight.shape) == (80, 64)  # decoder_vocab_size rows, not vocab_size
    from transformers.quantizers.base import HfQuantizer

    assert "lm_head" in HfQuantizer.get_modules_to_not_convert(model, None, None)  # transformers keeps the head
    expected = _bnb_bytes(model, packed)
    path = tmp_path / "marian.json"
    path.write_text(json.dumps(MARIAN))
    spec = resolve(str(path)).spec
    terms = weight_terms(spec, WeightFormat("fp16", parse_quantization(method)))
    got = {k: exact(v, spec.values) for k, v in terms.items()}
    # the head: 80 x 64 fp16, with the two 96 x 64 and 80 x 64 tables and the position tables
    assert got["unquantized"] >= 2 * 80 * 64
    assert sum(got.values()) == expected


def test_gptq_keeps_the_marian_head_unless_lm_head_is_set(tmp_path):
    # AutoGPTQ quantizes the layers' linear maps; the head only with lm_head: true.  The head is
    # 80 x 64: kept, it is 80*64*2 fp16 bytes; quantized (4-bit, group 32), qweight 64*80*4/8 +
    # qzeros ceil(64/32)*80*4/8 + fp16 scales 2*2*80 + int32 g_idx 4*64 bytes.
    path = tmp_path / "marian.json"
    cfg = dict(MARIAN, decoder_vocab_size=96 + 32)  # GPTQ packs 32 outputs per int32 column group
    path.write_text(json.dumps(cfg))
    spec = resolve(str(path)).spec
    kept = weight_terms(spec, WeightFormat("fp16", parse_quantization("gptq:group_size=32")))
    both = weight_terms(spec, WeightFormat("fp16", parse_quantization("gptq:group_size=32,lm_head=true")))
    N, K = 128, 64
    head_fp16 = N * K * 2
    head_gptq = K * N * 4 // 8 + 2 * N * 4 // 8 + 2 * 2 * N + 4 * K
    kept, both = ({k: exact(v, spec.values) for k, v in t.items()} for t in (kept, both))
    assert kept["unquantized"] - both["unquantized"] == head_fp16
    assert sum(both.values()) - sum(kept.values()) == head_gptq - head_fp16


# A tiny Qwen2-MoE (Qwen2MoeConfig keys): one layer, 4 routed experts, a shared expert and its
# d_model x 1 sigmoid gate, widths multiples of 32 so every quantized layout holds them.
QWEN2_MOE = {
    "model_type": "qwen2_moe",
    "vocab_size": 64,
    "hidden_size": 64,
    "intermediate_size": 64,
    "moe_intermediate_size": 64,
    "shared_expert_intermediate_size": 64,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "num_key_value_heads": 2,
    "num_experts": 4,
    "num_experts_per_tok": 2,
    "tie_word_embeddings": False,
}


def _terms(tmp_path, cfg: dict, quantization: str) -> dict[str, int]:
    path = tmp_path / f"{cfg['model_type']}.json"
    path.write_text(json.dumps(cfg))
    spec = resolve(str(path)).spec
    terms = weight_terms(spec, WeightFormat("fp16", parse_quantization(quantization)))
    return {k: exact(v, spec.values) for k, v in terms.items()}


def test_gptq_keeps_the_router_and_the_shared_expert_gate_as_vllm_builds_them(tmp_path):
    # vLLM qwen2_moe.py: gate = ReplicatedLinear(hidden, E, quant_config=None), shared_expert_gate =
    # ReplicatedLinear(hidden, 1, quant_config=None): a GPTQ checkpoint stores both in fp16.  The old
    # rule quantized the 1 x 64 gate, and the layout check then refused the model (1 output is not a
    # multiple of 32).  fp16 kept: embedding and head 2 x 64 x 64, router 4 x 64, shared gate 1 x 64.
    got = _terms(tmp_path, QWEN2_MOE, "gptq:group_size=32")
    assert got["unquantized"] == 2 * (2 * 64 * 64 + 4 * 64 + 64)
    spec = resolve(str(tmp_path / "qwen2_moe.json")).spec
    WeightFormat("fp16", parse_quantization("gptq:group_size=32")).check(spec, spec.values)  # no refusal


def test_gguf_writes_routers_gates_and_position_tables_in_f32(tmp_path):
    # llama.cpp convert_hf_to_gguf.py: "Some tensor types are always in float32": FFN_GATE_INP (the
    # router), FFN_GATE_INP_SHEXP (the shared-expert gate), POS_EMBD, TOKEN_TYPES; llama-quantize
    # leaves them.  Qwen2-MoE under Q8_0: the router 4 x 64 and the gate 1 x 64 at 4 bytes.
    got = _terms(tmp_path, QWEN2_MOE, "q8_0")
    assert got["unquantized"] == 4 * (4 * 64 + 64)
    # GPT-2 under Q8_0, every byte by arithmetic (d = 768, 12 layers, V = 50257, 1024 positions,
    # head tied): Q8_0 is 34 bytes per 32 weights along each row of K inputs.
    spec = resolve("gpt2").spec
    terms = weight_terms(spec, WeightFormat("fp16", parse_quantization("q8_0")))
    got = {k: exact(v, spec.values) for k, v in terms.items()}
    d, f = 768, 3072
    per_layer = (4 * d * d + 2 * d * f) * 34 // 32  # W_Q, W_K, W_V, W_O; W_1, W_2
    assert got["packed"] == 12 * per_layer + 50257 * d * 34 // 32  # and the token table
    assert got["unquantized"] == 4 * 1024 * d  # the learned position table, F32
    vectors = 12 * (2 * d + 3 * d + d + 2 * d + f + d) + 2 * d  # norms and biases per layer, final norm
    assert got["vectors"] == 4 * vectors


# Each example builds one transformers model on meta and a symtrans tree (about 0.1 s): 30 per
# model type and method keep the ten cases under 40 s in the CI profile.  Types with a fused
# q/k/v tensor (GPT-2's c_attn: one 4-bit code and absmax sequence where symtrans counts three
# matrices) or transformers quirks (T5's wo kept in fp32) are not drawn here.
@pytest.mark.parametrize("method, packed", [("bnb-int8", _int8), ("nf4", _nf4)])
@pytest.mark.parametrize("model_type", ["llama", "mixtral", "qwen2_moe", "jamba", "qwen3_next"])
@settings(max_examples=min(settings.default.max_examples, 30))
@given(data=st.data())
def test_bitsandbytes_replaces_what_transformers_replaces(hf, model_type, method, packed, data):
    # Oracle: transformers 5.x's own walk (see _bnb_bytes).  MoE routers are bare weights, the
    # shared-expert gate an nn.Linear, and the routed experts fused 3-D parameters that
    # replace_with_bnb_linear leaves in the base dtype (symtrans before issue 20 quantized them).
    from hf_reference import STRATEGIES

    from symtrans.catalog.hf_config import spec_from_config

    cfg = data.draw(STRATEGIES[model_type], label="config")
    spec, _ = spec_from_config(cfg, "hypothesis")
    terms = weight_terms(spec, WeightFormat("fp16", parse_quantization(method)))
    assert sum(exact(v, spec.values) for v in terms.values()) == _bnb_bytes(hf.build(model_type, cfg), packed)
