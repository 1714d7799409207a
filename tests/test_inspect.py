"""``symtrans inspect`` on real checkpoints written by the tests (issue 14).

Every checkpoint here is written by the format's own writer: transformers'
``save_pretrained`` (single file and sharded), ``safetensors.torch.save_file``,
``gguf.GGUFWriter`` with ``gguf.quants``.  The expected figures come from the models
the tests built (``sum(p.numel() for p in model.parameters())``, tied tensors once) or
from arithmetic written out here, never from symtrans.

For every checkpoint: the logical parameters equal the model's parameters, and every
stored element that is not a parameter is named by a term (``assert_all_named``).
"""

from __future__ import annotations

import json
import os
import resource
import struct
from pathlib import Path

import pytest
import sympy as sp
from conftest import require  # noqa: E402

import symtrans

torch = require("torch")
transformers = require("transformers")
gguf = require("gguf")
safetensors_torch = require("safetensors.torch")

from symtrans.analysis.checkpoint import inspect  # noqa: E402
from symtrans.catalog.checkpoint.names import Kind  # noqa: E402

transformers.logging.set_verbosity_error()
NON_PARAMETER_TERMS = ("tied_copy", "buffers", "quant_metadata", "packing")


def count(model) -> int:
    return sum(p.numel() for p in model.parameters())  # tied tensors once


def terms(ins) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in ins.terms:
        out[t.key] = out.get(t.key, 0) + t.elements
    return out


def assert_all_named(ins) -> None:
    """stored - logical is exactly the non-parameter terms, and each such tensor is named."""
    named = {n for t in ins.terms if t.key in NON_PARAMETER_TERMS for n in t.tensors}
    for e in ins.entries:
        if e.kind != Kind.PARAMETER or e.logical != e.tensor.elements:
            assert e.name in named, e.name
    t = terms(ins)
    assert ins.stored_elements - ins.logical_parameters == sum(t.get(k, 0) for k in NON_PARAMETER_TERMS)
    assert ins.stored_elements - ins.formula == sum(t.values())


def tiny(cls_name: str, **cfg):
    torch.manual_seed(0)
    cls = getattr(transformers, cls_name)
    return cls(cls.config_class(**cfg))


LLAMA = dict(
    vocab_size=96,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
)

# (id, class, config, save_pretrained kwargs, counted by symtrans = the class itself)
SAVED = [
    ("llama-tied", "LlamaForCausalLM", dict(LLAMA, tie_word_embeddings=True), {}, True),
    (
        "llama-untied-sharded",
        "LlamaForCausalLM",
        dict(LLAMA, tie_word_embeddings=False),
        {"max_shard_size": "20KB"},
        True,
    ),
    ("qwen2", "Qwen2ForCausalLM", dict(LLAMA, tie_word_embeddings=False), {}, True),
    (
        "mixtral",
        "MixtralForCausalLM",
        dict(LLAMA, num_local_experts=3, num_experts_per_tok=2),
        {"max_shard_size": "40KB"},
        True,
    ),
    (
        "gpt2-sharded",
        "GPT2LMHeadModel",
        dict(vocab_size=96, n_embd=32, n_layer=2, n_head=4, n_positions=16),
        {"max_shard_size": "10KB"},
        True,
    ),
    (
        "bert",
        "BertModel",
        dict(
            vocab_size=96,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            max_position_embeddings=16,
        ),
        {},
        True,
    ),
    (
        "t5",
        "T5ForConditionalGeneration",
        dict(vocab_size=96, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4),
        {},
        True,
    ),
    (
        "t5-gated-untied-6-3",
        "T5ForConditionalGeneration",
        dict(
            vocab_size=96,
            d_model=32,
            d_kv=8,
            d_ff=64,
            num_layers=2,
            num_decoder_layers=3,
            num_heads=4,
            feed_forward_proj="gated-gelu",
            tie_word_embeddings=False,
        ),
        {},
        True,
    ),
    ("qwen3", "Qwen3ForCausalLM", dict(LLAMA, head_dim=8, tie_word_embeddings=True), {}, True),
    ("gemma", "GemmaForCausalLM", dict(LLAMA, num_key_value_heads=1, head_dim=32), {}, True),
    (
        "opt",
        "OPTForCausalLM",
        dict(
            vocab_size=96,
            hidden_size=32,
            num_hidden_layers=2,
            ffn_dim=64,
            num_attention_heads=4,
            max_position_embeddings=16,
        ),
        {},
        True,
    ),
    (
        "bart",  # stores final_logits_bias, a registered buffer
        "BartForConditionalGeneration",
        dict(
            vocab_size=96,
            d_model=32,
            encoder_layers=2,
            decoder_layers=2,
            encoder_ffn_dim=64,
            decoder_ffn_dim=64,
            encoder_attention_heads=4,
            decoder_attention_heads=4,
            max_position_embeddings=16,
        ),
        {},
        True,
    ),
    (
        "roberta",
        "RobertaModel",
        dict(
            vocab_size=96,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            max_position_embeddings=18,
        ),
        {},
        True,
    ),
    (
        "bert-mlm",  # BertForMaskedLM: counted as the class config.json's architectures names (issue 25.6)
        "BertForMaskedLM",
        dict(
            vocab_size=96,
            hidden_size=32,
            num_hidden_layers=1,
            num_attention_heads=4,
            intermediate_size=64,
            max_position_embeddings=16,
        ),
        {},
        True,
    ),
]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """id -> (directory, model) for every SAVED case."""
    out = {}
    for case_id, cls, cfg, kwargs, _ in SAVED:
        model = tiny(cls, **cfg)
        d = tmp_path_factory.mktemp(case_id)
        model.save_pretrained(d, **kwargs)
        out[case_id] = (d, model)
    return out


@pytest.mark.parametrize("case", SAVED, ids=[c[0] for c in SAVED])
def test_save_pretrained_logical_equals_model(saved, case):
    case_id, _, _, kwargs, counted = case
    d, model = saved[case_id]
    if kwargs.get("max_shard_size"):
        assert (d / "model.safetensors.index.json").exists()
        assert len(list(d.glob("*.safetensors"))) > 1
    ins = inspect(str(d))
    assert ins.spec_source == "config.json"
    assert ins.logical_parameters == count(model)
    assert_all_named(ins)
    if counted:
        assert ins.formula == count(model)
        assert all(t.key in NON_PARAMETER_TERMS for t in ins.terms), ins.terms
        if case_id == "bart":
            assert terms(ins) == {"buffers": 96}  # final_logits_bias (1, V)
        else:
            assert ins.terms == []


@pytest.mark.parametrize("case", SAVED, ids=[c[0] for c in SAVED])
def test_without_config_sizes_come_from_shapes(saved, case, tmp_path):
    case_id = case[0]
    d, model = saved[case_id]
    for f in d.iterdir():  # the weights only: no config.json
        if f.name != "config.json":
            (tmp_path / f.name).write_bytes(f.read_bytes())
    ins = inspect(str(tmp_path))
    assert ins.spec_source == "tensor shapes"
    assert ins.logical_parameters == count(model)
    # BertForMaskedLM: the shapes show its MLM head and no pooler, so the inferred model is it
    assert ins.formula == count(model), ins.to_json()["sizes"]
    assert_all_named(ins)
    cfg = model.config
    sizes = ins.spec.values
    assert sizes["d_model"] == cfg.hidden_size
    assert sizes["V"] == cfg.vocab_size


def _as_bertmodel(d: Path, tmp_path: Path) -> Path:
    """A copy of the saved BertForMaskedLM whose config.json's architectures says BertModel."""
    for f in d.iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    cfg = json.loads((d / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**cfg, "architectures": ["BertModel"]}))
    return tmp_path


def test_bert_mlm_against_bertmodel_names_head_and_pooler(saved, tmp_path):
    d, model = saved["bert-mlm"]
    ins = inspect(str(_as_bertmodel(d, tmp_path)))
    j = ins.to_json()
    d_model, V = 32, 96
    mlm = d_model * d_model + d_model + 2 * d_model + V  # transform dense + LayerNorm + decoder bias
    pooler = d_model * d_model + d_model
    by = {t["detail"].split(":")[0]: t["elements"] for t in j["terms"]}
    assert by == {"MLM head": mlm, "pooler": -pooler}
    assert ins.formula == ins.logical_parameters - mlm + pooler


def test_inferred_heads_are_said_and_set_fixes_them(saved, tmp_path):
    d, model = saved["llama-tied"]
    (tmp_path / "model.safetensors").write_bytes((d / "model.safetensors").read_bytes())
    ins = inspect(str(tmp_path))
    assert any(n.startswith("h:") for n in ins.inference.not_inferred)
    ins = inspect(str(tmp_path), ["h=4"])
    assert ins.spec.values["h"] == 4 and ins.spec.values["h_kv"] == 2
    assert not any(n.startswith("h:") for n in ins.inference.not_inferred)
    assert ins.formula == count(model)


# ----------------------------------------------------------------------------- GGUF


def write_gguf(path: Path, model, qtype: str, store_tied_copy: bool = False, tokens: int | None = None) -> None:
    """Write ``model`` as llama.cpp does: GGUF names from gguf's own tensor map, matrices in
    ``qtype`` (F16, or a block type quantized with gguf.quants), vectors in F32."""
    from gguf.quants import quantize

    cfg = model.config
    tmap = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, cfg.num_hidden_layers)
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(cfg.num_hidden_layers)
    w.add_embedding_length(cfg.hidden_size)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_token_list([f"t{i}" for i in range(tokens or cfg.vocab_size)])
    tied = cfg.tie_word_embeddings
    for name, p in model.state_dict().items():
        if name == "lm_head.weight" and tied and not store_tied_copy:
            continue  # llama.cpp leaves out a tied output matrix
        a = p.detach().float().numpy()
        gname = tmap.get_name(name, try_suffixes=(".weight", ".bias"))
        if a.ndim == 2 and qtype != "F16":
            qt = getattr(gguf.GGMLQuantizationType, qtype)
            q = quantize(a, qt)
            w.add_tensor(gname, q, raw_shape=q.shape, raw_dtype=qt)
        elif a.ndim == 2:
            w.add_tensor(gname, a.astype("float16"))
        else:
            w.add_tensor(gname, a)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# ggml block sizes: Q8_0 = 32 int8 + one fp16 scale (34 bytes); Q4_0 = 32 4-bit + one fp16 (18 bytes).
BLOCK_OVERHEAD = {"F16": 0, "Q8_0": 2, "Q4_0": 2}  # bytes per 32 values beyond the values themselves


@pytest.mark.parametrize("qtype", ["F16", "Q8_0", "Q4_0"])
@pytest.mark.parametrize("tied", [False, True], ids=["untied", "tied"])
def test_gguf_logical_equals_model(tmp_path, qtype, tied):
    model = tiny("LlamaForCausalLM", **dict(LLAMA, tie_word_embeddings=tied))
    path = tmp_path / f"m-{qtype}.gguf"
    write_gguf(path, model, qtype)
    ins = inspect(str(path))
    assert ins.checkpoint.format == "gguf"
    assert ins.logical_parameters == count(model)
    assert ins.formula == count(model)
    assert ins.terms == []
    assert ins.spec.values["h"] == 4 and ins.spec.values["h_kv"] == 2  # from the metadata
    matrices = sum(p.numel() for n, p in model.named_parameters() if p.dim() == 2)
    q = ins.quantization()
    if qtype == "F16":
        assert q is None
    else:
        assert q["quantized_parameters"] == matrices
        assert q["overhead_bytes"] == matrices // 32 * BLOCK_OVERHEAD[qtype]
        assert q["quantized_bytes"] == matrices // 32 * (34 if qtype == "Q8_0" else 18)


def test_gguf_tied_copy_and_padded_vocabulary(tmp_path):
    model = tiny("LlamaForCausalLM", **dict(LLAMA, tie_word_embeddings=True))
    path = tmp_path / "copy.gguf"
    write_gguf(path, model, "Q8_0", store_tied_copy=True, tokens=90)  # 96 rows, 90 tokens
    ins = inspect(str(path), ["tie_output=true"])
    assert ins.logical_parameters == count(model)
    t = terms(ins)
    V, d = 96, 64
    assert t["tied_copy"] == V * d
    assert t["padded_vocab"] == (96 - 90) * d
    assert ins.formula == count(model) - (96 - 90) * d
    assert_all_named(ins)


# ----------------------------------------------------------------------------- llama2.c


def llama2c_state_dict(dim, n_layers, hidden, vocab, dtype=torch.bfloat16) -> dict:
    """llama2.c's model.py state dict (Meta's names), zeros; output.weight is tied to
    tok_embeddings.weight in the model but appears as its own key in the state dict."""
    sd = {"tok_embeddings.weight": torch.zeros(vocab, dim, dtype=dtype)}
    for i in range(n_layers):
        p = f"layers.{i}."
        for w in ("wq", "wk", "wv", "wo"):
            sd[p + f"attention.{w}.weight"] = torch.zeros(dim, dim, dtype=dtype)
        sd[p + "feed_forward.w1.weight"] = torch.zeros(hidden, dim, dtype=dtype)
        sd[p + "feed_forward.w2.weight"] = torch.zeros(dim, hidden, dtype=dtype)
        sd[p + "feed_forward.w3.weight"] = torch.zeros(hidden, dim, dtype=dtype)
        sd[p + "attention_norm.weight"] = torch.zeros(dim, dtype=dtype)
        sd[p + "ffn_norm.weight"] = torch.zeros(dim, dtype=dtype)
    sd["norm.weight"] = torch.zeros(dim, dtype=dtype)
    sd["output.weight"] = torch.zeros(vocab, dim, dtype=dtype)  # stored again: a real copy on disk
    return sd


def test_stories15m_tied_matrix_stored_twice(tmp_path, capsys):
    # stories15M (llama2.c): dim 288, 6 layers, 6 heads, hidden 768, vocab 32000, tied.
    sd = llama2c_state_dict(288, 6, 768, 32000)
    path = tmp_path / "stories15M.safetensors"
    safetensors_torch.save_file(sd, str(path))
    stored = sum(t.numel() for t in sd.values())
    assert stored == 24_407_712
    # the model's parameters, written out: embedding + 6 x (4 d^2 + 3 d d_ff + 2 d) + final norm
    params = 32000 * 288 + 6 * (4 * 288 * 288 + 3 * 288 * 768 + 2 * 288) + 288
    assert params == 15_191_712
    # ... and counted by a real Llama with the same sizes on the meta device
    with torch.device("meta"):
        ref = transformers.LlamaForCausalLM(
            transformers.LlamaConfig(
                vocab_size=32000,
                hidden_size=288,
                intermediate_size=768,
                num_hidden_layers=6,
                num_attention_heads=6,
                tie_word_embeddings=True,
            )
        )
    assert count(ref) == params

    ins = inspect(str(path), ["h=6", "tie_output=true"])
    assert ins.stored_elements == 24_407_712
    assert ins.logical_parameters == 15_191_712
    assert ins.formula == 15_191_712
    assert [(t.key, t.elements, t.tensors) for t in ins.terms] == [("tied_copy", 9_216_000, ("output.weight",))]
    assert ins.terms[0].label == "tied matrix stored twice"
    assert 9_216_000 == 32000 * 288
    v = ins.spec.values
    assert (v["d_model"], v["N"], v["h"], v["d_ff"], v["V"]) == (288, 6, 6, 768, 32000)

    from symtrans.cli.main import main

    assert main(["inspect", str(path), "--set", "h=6", "--set", "tie_output=true"]) == 0
    out = capsys.readouterr().out
    assert "24,407,712 elements" in out and "logical parameters: 15,191,712" in out
    assert "+9,216,000  tied matrix stored twice" in out and "V x d_model = 32,000 x 288" in out

    # Without the tie: both matrices counted, and the output says they may be one
    ins = inspect(str(path))
    assert ins.logical_parameters == ins.formula == 24_407_712
    assert any("tie_output=true" in n for n in ins.inference.not_inferred)


# ----------------------------------------------------------------------------- GPTQ / AWQ


def pack_int4(q, axis: int):
    """Pack 4-bit values (0..15) eight to an int32 along ``axis`` (GPTQ/AWQ order: the
    i-th value in bits 4i..4i+3)."""
    import numpy as np

    q = np.moveaxis(q.astype(np.uint32), axis, 0)
    q = q.reshape(q.shape[0] // 8, 8, *q.shape[1:])
    packed = np.zeros(q.shape[:1] + q.shape[2:], dtype=np.uint32)
    for i in range(8):
        packed |= q[:, i] << (4 * i)
    return np.ascontiguousarray(np.moveaxis(packed.view(np.int32), 0, axis))


def quantized_llama(tmp_path: Path, method: str, group: int = 32):
    """A tiny Llama with every linear map of its layers quantized to 4 bits (round to
    nearest, per group of ``group`` inputs) in the GPTQ or AWQ layout; embeddings, norms
    and the LM head stay fp16.  Returns (directory, model, metadata bytes)."""
    import numpy as np

    model = tiny("LlamaForCausalLM", **dict(LLAMA, tie_word_embeddings=False))
    sd, meta_bytes = {}, 0
    for name, p in model.state_dict().items():
        if ".layers." not in name or p.dim() != 2:
            sd[name] = p.half()
            continue
        w = p.detach().float().numpy().T  # (K inputs, N outputs)
        K, N = w.shape
        g = w.reshape(K // group, group, N)
        scale = (g.max(1) - g.min(1)) / 15 + 1e-8
        zero = np.round(-g.min(1) / scale).clip(0, 15)
        q = np.clip(np.round(g / scale[:, None]) + zero[:, None], 0, 15).reshape(K, N)
        base = name[: -len(".weight")]
        if method == "gptq":
            sd[base + ".qweight"] = torch.from_numpy(pack_int4(q, 0))  # (K/8, N)
            sd[base + ".g_idx"] = torch.arange(K, dtype=torch.int32) // group  # (K,)
        else:
            sd[base + ".qweight"] = torch.from_numpy(pack_int4(q, 1))  # (K, N/8)
        sd[base + ".qzeros"] = torch.from_numpy(pack_int4(zero, 1))  # (K/g, N/8)
        sd[base + ".scales"] = torch.from_numpy(np.ascontiguousarray(scale.astype(np.float16)))  # (K/g, N)
        meta_bytes += (K // group) * (N // 8) * 4 + (K // group) * N * 2 + (K * 4 if method == "gptq" else 0)
    d = tmp_path / method
    d.mkdir()
    safetensors_torch.save_file(sd, str(d / "model.safetensors"))
    cfg = model.config.to_dict()
    cfg["quantization_config"] = {"quant_method": method, "bits": 4, "group_size": group}
    (d / "config.json").write_text(json.dumps(cfg))
    return d, model, meta_bytes


@pytest.mark.parametrize("method", ["gptq", "awq"])
def test_packed_int4_unpacks_to_the_model(tmp_path, method):
    d, model, meta_bytes = quantized_llama(tmp_path, method)
    ins = inspect(str(d))
    assert ins.logical_parameters == count(model)
    assert ins.formula == count(model)
    q = ins.quantization()
    assert q["methods"] == [f"{method} 4-bit"]
    layer_matrices = sum(p.numel() for n, p in model.named_parameters() if ".layers." in n and p.dim() == 2)
    assert q["quantized_parameters"] == layer_matrices
    assert q["quantized_bytes"] == layer_matrices // 2  # 4 bits each
    assert q["overhead_bytes"] == meta_bytes
    t = terms(ins)
    assert t["packing"] == layer_matrices // 8 - layer_matrices
    assert_all_named(ins)
    # without the config's quantization_config, the layout is told from the shapes
    cfg = json.loads((d / "config.json").read_text())
    del cfg["quantization_config"]
    (d / "config.json").write_text(json.dumps(cfg))
    assert inspect(str(d)).logical_parameters == count(model)


# ----------------------------------------------------------------------------- buffers, missing, unexpected


def test_buffers_are_named_not_counted(tmp_path):
    # GPT-2 as on the Hub: each block stores its causal mask attn.bias (1, 1, n_pos, n_pos)
    # and attn.masked_bias (a scalar); old Llama conversions stored rotary inv_freq.
    gpt = tiny("GPT2LMHeadModel", vocab_size=96, n_embd=32, n_layer=2, n_head=4, n_positions=16)
    sd = {k: v.clone() for k, v in gpt.state_dict().items() if k != "lm_head.weight"}
    for i in range(2):
        sd[f"transformer.h.{i}.attn.bias"] = torch.ones(1, 1, 16, 16, dtype=torch.bool)
        sd[f"transformer.h.{i}.attn.masked_bias"] = torch.tensor(-1e4)
    d = tmp_path / "gpt2"
    d.mkdir()
    safetensors_torch.save_file(sd, str(d / "model.safetensors"))
    gpt.config.to_json_file(str(d / "config.json"))
    ins = inspect(str(d))
    assert ins.logical_parameters == count(gpt)
    assert terms(ins) == {"buffers": 2 * (16 * 16 + 1)}
    assert_all_named(ins)

    llama = tiny("LlamaForCausalLM", **dict(LLAMA, tie_word_embeddings=False))
    sd = dict(llama.state_dict())
    for i in range(2):
        sd[f"model.layers.{i}.self_attn.rotary_emb.inv_freq"] = torch.zeros(8)  # d_k / 2 = 16 / 2
    sd["lm_head.weight"] = sd["lm_head.weight"].clone()
    sd["extra.weight"] = torch.zeros(5, 3)  # a name no table knows
    del sd["model.layers.1.mlp.up_proj.weight"]
    d = tmp_path / "llama"
    d.mkdir()
    safetensors_torch.save_file(sd, str(d / "model.safetensors"))
    llama.config.to_json_file(str(d / "config.json"))
    ins = inspect(str(d))
    t = terms(ins)
    assert t["buffers"] == 2 * 8
    assert t["unexpected"] == 15
    assert t["missing"] == -(128 * 64)  # layer 1's up_proj, priced as layer 0's
    assert ins.formula == count(llama)
    assert ins.logical_parameters == count(llama) + 15 - 128 * 64
    assert_all_named(ins)


def test_missing_lm_head_is_priced_by_the_formula(saved, tmp_path):
    d, model = saved["llama-untied-sharded"]
    sd = {}
    from safetensors import safe_open

    for f in d.glob("*.safetensors"):
        with safe_open(str(f), "pt") as g:
            sd.update({k: g.get_tensor(k) for k in g.keys() if k != "lm_head.weight"})
    out = tmp_path / "nohead"
    out.mkdir()
    safetensors_torch.save_file(sd, str(out / "model.safetensors"))
    (out / "config.json").write_bytes((d / "config.json").read_bytes())
    ins = inspect(str(out))
    assert terms(ins) == {"missing": -96 * 64}
    assert "LM head" in ins.terms[0].detail


def test_padded_vocabulary_against_config(saved, tmp_path):
    d, model = saved["llama-tied"]
    cfg = json.loads((d / "config.json").read_text())
    cfg["vocab_size"] = 90  # the stored embedding keeps its 96 rows
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    (tmp_path / "model.safetensors").write_bytes((d / "model.safetensors").read_bytes())
    ins = inspect(str(tmp_path))
    assert terms(ins) == {"padded_vocab": 6 * 64}
    assert ins.logical_parameters == count(model)


# ----------------------------------------------------------------------------- header only


def _sparse_safetensors(path: Path, data_bytes: int) -> int:
    """A safetensors file whose header describes ``data_bytes`` of BF16 tensors and whose data
    area is a hole (sparse): only the header is real data.  Returns the elements."""
    n_tensors = 64
    per = data_bytes // n_tensors // 2 // 4096 * 4096
    header, off = {}, 0
    for i in range(n_tensors):
        header[f"model.layers.{i}.mlp.up_proj.weight"] = {
            "dtype": "BF16",
            "shape": [per // 4096, 4096],
            "data_offsets": [off, off + 2 * per],
        }
        off += 2 * per
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        f.truncate(8 + len(raw) + off)
    return n_tensors * per


def test_sparse_file_reads_nothing_past_the_header(tmp_path):
    """A 10 GB sparse file: inspected from its header (the data area is never paged in).
    Page faults and read() bytes are counted, not time (timing is in benchmarks/)."""
    path = tmp_path / "sparse.safetensors"
    elements = _sparse_safetensors(path, 10 * 2**30)
    assert os.path.getsize(path) > 10 * 10**9
    inspect(str(path))  # warm up imports
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt + resource.getrusage(resource.RUSAGE_SELF).ru_majflt
    rchar = _rchar()
    ins = inspect(str(path))
    faults = (
        resource.getrusage(resource.RUSAGE_SELF).ru_minflt + resource.getrusage(resource.RUSAGE_SELF).ru_majflt - faults
    )
    assert ins.stored_elements == elements
    assert ins.stored_bytes == 2 * elements
    assert faults < 20_000, faults  # reading the data would fault in 2.6 million 4 kB pages
    if rchar is not None:
        assert _rchar() - rchar < 10 * 2**20


def _rchar() -> int | None:
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


# ----------------------------------------------------------------------------- CLI


def test_cli_formats(saved, tmp_path, capsys):
    from symtrans.cli.main import main

    d, model = saved["gpt2-sharded"]
    assert main(["inspect", str(d), "--format", "json"]) == 0
    j = json.loads(capsys.readouterr().out)
    assert j["logical_parameters"] == count(model)
    assert j["formula"]["parameters"] == count(model)
    # The closed form reads back (symtrans.parse_closed_form) to the count, in the names of "symbols".
    expr = symtrans.parse_closed_form(j["formula"]["closed_form"])
    assert set(j["symbols"]) == {s.name for s in expr.free_symbols}
    assert expr.xreplace({sp.Symbol(k, integer=True, positive=True): v for k, v in j["sizes"].items()}) == count(model)
    assert len(j["files"]) > 1 and j["file_bytes"] == sum(os.path.getsize(f["path"]) for f in j["files"])
    assert {r["dtype"] for r in j["by_dtype"]} == {"F32"}
    assert sum(r["elements"] for r in j["by_dtype"]) == j["stored_elements"]
    roles = {t["name"]: (t["role"], t["block"]) for t in j["tensor_list"]}
    assert roles["transformer.h.1.attn.c_attn.weight"] == ("q_proj", "causal_self_attention")
    assert roles["transformer.wpe.weight"] == ("position_embedding", "embeddings")

    out = tmp_path / "inspect.md"
    assert main(["inspect", str(d), "--format", "markdown", "--tensors", "-o", str(out)]) == 0
    md = out.read_text()
    assert "## Checkpoint vs formula" in md and "| transformer.h.0.attn.c_attn.weight | F32 | (32, 96) |" in md

    assert main(["inspect", str(d), "--tensors"]) == 0
    text = capsys.readouterr().out
    assert f"logical parameters: {count(model):,}" in text and "transformer.h.0.mlp.c_fc.weight" in text


def test_gguf_reader_agrees_with_ggufreader(tmp_path):
    """symtrans walks GGUF headers itself (bounds first, see gguf_io); gguf's own
    GGUFReader is the reference for what it reads."""
    model = tiny("LlamaForCausalLM", **dict(LLAMA, tie_word_embeddings=False))
    path = tmp_path / "m.gguf"
    write_gguf(path, model, "Q4_0")
    from symtrans.catalog.checkpoint.gguf_io import read_checkpoint

    ck = read_checkpoint(str(path))
    r = gguf.GGUFReader(str(path))
    assert [(t.name, t.dtype, t.shape, t.elements, t.nbytes) for t in ck.tensors] == [
        (t.name, t.tensor_type.name, tuple(reversed(t.shape.tolist())), int(t.n_elements), int(t.n_bytes))
        for t in r.tensors
    ]
    assert ck.files[0].header_bytes == r.data_offset
    for key, field in r.fields.items():
        if key.startswith("GGUF."):
            continue
        if field.types[0] == gguf.GGUFValueType.ARRAY:
            assert ck.metadata[key + ".length"] == len(field.data)
        else:
            assert ck.metadata[key] == field.contents()


def test_report_of_a_checkpoint_directory_has_the_section(saved, tmp_path, capsys):
    from symtrans.cli.main import main

    d, model = saved["bert-mlm"]
    (tmp_path / "weights").mkdir()
    d = _as_bertmodel(d, tmp_path / "weights")
    assert main(["report", str(d), "--no-charts"]) == 0
    md = capsys.readouterr().out
    assert "## Checkpoint vs formula" in md
    section = md.split("## Checkpoint vs formula")[1].split("\n## ")[0]
    assert f"logical parameters: **{count(model):,}**" in section
    assert "| missing tensors (in the formula, not stored) | -1,056 | pooler: in the formula, not stored |" in section
    # a config.json without weights: no such section
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.json").write_bytes((d / "config.json").read_bytes())
    assert main(["report", str(tmp_path / "config"), "--no-charts"]) == 0
    assert "Checkpoint vs formula" not in capsys.readouterr().out


def test_hostile_tensor_names_are_escaped(tmp_path, capsys):
    """Tensor names are untrusted text: Markdown output escapes them (tables, emphasis, HTML)."""
    from symtrans.cli.main import main

    path = tmp_path / "odd.safetensors"
    safetensors_torch.save_file(
        {"a|b*<script>`x`": torch.zeros(2, 2), "model.embed_tokens.weight": torch.zeros(4, 2)}, str(path)
    )
    assert main(["inspect", str(path), "--format", "markdown", "--tensors"]) == 0
    md = capsys.readouterr().out
    assert r"a\|b\*\<script\>\`x\`" in md
    assert "<script>" not in md
    ins = inspect(str(path))
    assert ins.spec is None and "no layer" in ins.spec_error  # no model to compare with: said, not guessed
    assert ins.logical_parameters == 12


def test_config_that_disagrees_with_the_shapes(saved, tmp_path):
    """A config.json with another d_ff and one more layer than the weights: the missing layer
    is priced from layer 0, the rest is named by the sizes that differ."""
    d, model = saved["llama-tied"]
    cfg = json.loads((d / "config.json").read_text())
    cfg.update(intermediate_size=100, num_hidden_layers=3)
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    (tmp_path / "model.safetensors").write_bytes((d / "model.safetensors").read_bytes())
    ins = inspect(str(tmp_path))
    assert ins.logical_parameters == count(model)
    by = {t.key: t for t in ins.terms}
    d_model, kv = 64, 32
    layer0 = 2 * d_model * d_model + 2 * kv * d_model + 3 * 128 * d_model + 2 * d_model  # as stored (d_ff 128)
    assert by["missing"].elements == -layer0
    assert "d_ff: 100 in the config, 128 in the stored shapes" in by["other"].detail
    # the formula's layers are 3 x (d_ff 100) where 2 x (d_ff 128) are stored, and one is priced above
    assert by["other"].elements == ins.stored_elements - ins.formula + layer0


def test_qwen2_moe_saved_with_window_off(tmp_path):
    """A tiny Qwen2MoeForCausalLM written by transformers 5.x's save_pretrained (safetensors):
    its config.json has ``sliding_window: 0`` (the window is off) and its shared expert
    (mlp.shared_expert.{gate,up,down}_proj, mlp.shared_expert_gate) is stored per layer.
    inspect reads the config, names every tensor, and the formula equals the real model's
    parameter count (sum of numel), with nothing left to explain."""
    model = tiny(
        "Qwen2MoeForCausalLM",
        **LLAMA,
        moe_intermediate_size=32,
        shared_expert_intermediate_size=48,
        num_experts=4,
        num_experts_per_tok=2,
    )
    model.save_pretrained(tmp_path)
    assert (tmp_path / "model.safetensors").exists()
    assert json.loads((tmp_path / "config.json").read_text())["sliding_window"] == 0
    ins = inspect(str(tmp_path))
    assert ins.spec_source == "config.json"
    assert ins.logical_parameters == ins.formula == count(model)
    assert ins.terms == []
    assert_all_named(ins)
    assert all(e.role is not None for e in ins.entries if e.kind == Kind.PARAMETER)
    shared = sum(e.logical for e in ins.entries if e.name.split(".mlp.")[-1].startswith("shared_expert"))
    d, w, n = 64, 48, 2  # 3 maps of d_model x d_ff_s and the d_model -> 1 gate, per layer
    assert shared == n * (3 * d * w + d)


def test_json_rows_are_the_standard_encoders(tmp_path):
    """``inspect --format json`` writes its tensor rows straight as text (issue 26:
    ``cli/inspect._row_lines``, no dict per tensor); each line must be exactly what the
    standard library's ``json.dumps`` writes for that row of ``Inspection.to_json()``,
    also for names that need escaping and for rows with "represents", "quantization"
    and "why" (GPTQ-packed matrices, buffers, unknown leaves)."""
    from symtrans.cli.inspect import _json_text, _row_lines

    d, _, _ = quantized_llama(tmp_path, "gptq")
    odd = tmp_path / "odd.safetensors"
    names = [
        "model.embed_tokens.weight",
        'model.layers.0.self_attn.q_proj.weight "quoted" \\ back',
        "model.layers.0.mlp.up_proj.wëight",
        "model.layers.1.input_layernorm.weight\x7f",
        "ctl\x01.bias",
        "model.rotary_emb.inv_freq",
        "model.layers.0.mlp.up_proj.lora_A",
    ]
    header = {n: {"dtype": "F16", "shape": [2, 4], "data_offsets": [16 * i, 16 * i + 16]} for i, n in enumerate(names)}
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    odd.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(16 * len(names)))
    for path, extra in ((d, '"represents"'), (odd, '"why"')):
        ins = inspect(str(path))
        want = [json.dumps(row) for row in ins.to_json()["tensor_list"]]
        assert _row_lines(ins.entries) == want
        assert any(extra in w for w in want)
        assert _json_text(ins.to_json(tensor_list=False), ins.entries) == _json_text(ins.to_json())
