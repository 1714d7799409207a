"""Every preset -> its reference parameter count -> the independent source of that count.

``REFERENCES`` is the one table the count tests (tests/test_reference_counts.py) assert for
every preset.  No figure here comes from symtrans: each is

* a real implementation counted on torch's meta device, ``sum(p.numel() for p in
  model.parameters())`` (tied tensors once), torch 2.13.0 and transformers 5.24: the
  transformers class built from the checkpoint's own config.json (tests/fixtures/configs,
  counted live again by the tests), or ``torch.nn.Transformer`` / GPT2LMHeadModel at the
  paper's sizes where no checkpoint exists; or
* for the teaching articles' hand counts (symtrans.catalog.handcounts), the article's
  items with the arithmetic written out here.

Units: parameters.

The adapter (``build_reference``) builds the implementation from a *preset's own sizes*
(``preset.spec.sizes``) on the meta device: the checkpoint's config.json with every size
field replaced by the preset's.  It reads sizes only, never the preset's options (bias,
norm, tying, ...): those come from the checkpoint, so a preset whose options drift from the
real model fails.  A size the implementation has no field for is an error, not ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CONFIG_DIR = Path(__file__).parent / "fixtures" / "configs"


@dataclass(frozen=True)
class Reference:
    """The independent count of one preset.

    Attributes:
        total: parameters of the reference.
        source: what was counted, named so a failure says where the figure comes from.
        implementation: the class the adapter builds from the preset's sizes
            (a key of ``SIZE_FIELDS``), or "" for a hand count (arithmetic only).
        checkpoint: tests/fixtures/configs/<checkpoint>.json, the real config.json whose
            model has ``total`` parameters, or "" (paper sizes, class defaults).
        active: parameters per token of a mixture of experts: total - (E - k)/E x the
            expert tensors, read from the expert tensors' shapes.
    """

    total: int
    source: str
    implementation: str = ""
    checkpoint: str = ""
    active: int | None = None
    model_kwargs: dict[str, Any] = field(default_factory=dict)


def _hf(cls: str, checkpoint: str, total: int, active: int | None = None, **model_kwargs) -> Reference:
    return Reference(
        total,
        f"transformers {cls} built from config.json of {checkpoint} "
        f"(tests/fixtures/configs/{checkpoint.split('/')[-1]}.json), counted on the meta device",
        cls,
        checkpoint.split("/")[-1],
        active,
        model_kwargs,
    )


def _gpt3(total: int, row: str) -> Reference:
    return Reference(
        total,
        f"transformers GPT2LMHeadModel at Brown et al. 2020 Table 2.1 ({row}: n_ctx 2048, V 50257, d_ff = 4 d_model), "
        "counted on the meta device; = V d + 2048 d + N (12 d^2 + 13 d) + 2 d",
        "GPT2LMHeadModel",
    )


def _nn_transformer(total: int, args: str) -> Reference:
    return Reference(
        total,
        f"torch.nn.Transformer({args}) + one nn.Embedding(37000, d_model) shared by both inputs and tied to "
        "the output (Vaswani et al. 2017 §3.4), counted on the meta device",
        "torch.nn.Transformer",
    )


def _article(total: int, text: str) -> Reference:
    return Reference(total, f"the article's hand count, written out: {text}")


# Transformer-base per layer (no biases): attention 4 d^2, FFN 2 d d_ff, d = 512, d_ff = 2048.
_ENC_000 = 4 * 512**2 + 2 * 512 * 2048
_DEC_000 = 8 * 512**2 + 2 * 512 * 2048

REFERENCES: dict[str, Reference] = {
    "transformer-base": _nn_transformer(44_140_544 + 37_000 * 512, "512, 8, 6, 6, 2048"),
    "transformer-big": _nn_transformer(176_361_472 + 37_000 * 1024, "1024, 16, 6, 6, 4096"),
    "bert-base": _hf("BertModel", "bert-base-uncased", 109_482_240),
    "bert-large": _hf("BertModel", "bert-large-uncased", 335_141_888),
    "roberta-base": _hf("RobertaModel", "roberta-base", 124_645_632),
    "albert-base-v2": _hf("AlbertModel", "albert-base-v2", 11_683_584),
    "gpt2": _hf("GPT2LMHeadModel", "gpt2", 124_439_808),
    "gpt2-medium": _hf("GPT2LMHeadModel", "gpt2-medium", 354_823_168),
    "gpt2-large": _hf("GPT2LMHeadModel", "gpt2-large", 774_030_080),
    "gpt2-xl": _hf("GPT2LMHeadModel", "gpt2-xl", 1_557_611_200),
    "gpt3-small": _gpt3(125_226_240, "Small: 12 layers, d_model 768"),
    "gpt3-medium": _gpt3(355_871_744, "Medium: 24 layers, d_model 1024"),
    "gpt3-large": _gpt3(760_300_032, "Large: 24 layers, d_model 1536"),
    "gpt3-xl": _gpt3(1_315_723_264, "XL: 24 layers, d_model 2048"),
    "gpt3-2.7b": _gpt3(2_651_553_280, "2.7B: 32 layers, d_model 2560"),
    "gpt3-6.7b": _gpt3(6_658_404_352, "6.7B: 32 layers, d_model 4096"),
    "gpt3-13b": _gpt3(12_853_386_240, "13B: 40 layers, d_model 5120"),
    "gpt3-175b": _gpt3(174_604_259_328, "175B: 96 layers, d_model 12288"),
    "llama-2-7b": _hf("LlamaForCausalLM", "meta-llama/llama-2-7b", 6_738_415_616),
    "llama-2-13b": _hf("LlamaForCausalLM", "meta-llama/llama-2-13b", 13_015_864_320),
    "llama-2-70b": _hf("LlamaForCausalLM", "meta-llama/llama-2-70b", 68_976_648_192),
    "llama-3-8b": _hf("LlamaForCausalLM", "meta-llama/llama-3-8b", 8_030_261_248),
    "llama-3-70b": _hf("LlamaForCausalLM", "meta-llama/llama-3-70b", 70_553_706_496),
    "mistral-7b": _hf("MistralForCausalLM", "mistralai/mistral-7b-v0.1", 7_241_732_096),
    "mixtral-8x7b": _hf("MixtralForCausalLM", "mistralai/mixtral-8x7b-v0.1", 46_702_792_704, 12_879_925_248),
    "qwen2-0.5b": _hf("Qwen2ForCausalLM", "Qwen/qwen2-0.5b", 494_032_768),
    "qwen3-0.6b": _hf("Qwen3ForCausalLM", "Qwen/qwen3-0.6b", 596_049_920),
    "gemma-2b": _hf("GemmaForCausalLM", "google/gemma-2b", 2_506_172_416),
    "stories15m": _hf("LlamaForCausalLM", "karpathy/stories15M", 15_191_712),
    "t5-small": _hf("T5ForConditionalGeneration", "t5-small", 60_506_624),
    "t5-base": _hf("T5ForConditionalGeneration", "t5-base", 222_903_552),
    "t5-large": _hf("T5ForConditionalGeneration", "t5-large", 737_668_096),
    "bart-base": _hf("BartForConditionalGeneration", "facebook/bart-base", 139_420_416),
    "opt-125m": _hf("OPTForCausalLM", "facebook/opt-125m", 125_239_296),
    # Article 000: one shared 32,000 x 512 embedding + 6 encoder layers + 6 decoder layers, no biases, no norms.
    "handcount-000-transformer-base": _article(
        32_000 * 512 + 6 * _ENC_000 + 6 * _DEC_000,
        "32,000 x 512 + 6 (4·512² + 2·512·2048) + 6 (8·512² + 2·512·2048) = 60,424,192",
    ),
    # Article 001: two 32,768 x 512 input embeddings (the decoder's tied to the output), LayerNorm gamma
    # and beta 2 per encoder layer and 3 per decoder layer, no biases, no final norm.
    "handcount-001-transformer": _article(
        2 * 32_768 * 512 + 6 * (_ENC_000 + 2 * 2 * 512) + 6 * (_DEC_000 + 3 * 2 * 512),
        "2·32,768·512 + 6·3,147,776 + 6·4,197,376 = 77,625,344",
    ),
    # The same with one 32,768 x 512 matrix shared three ways (the article's own sharing statement).
    "handcount-001-shared": _article(
        32_768 * 512 + 6 * (_ENC_000 + 2 * 2 * 512) + 6 * (_DEC_000 + 3 * 2 * 512),
        "32,768·512 + 6·3,147,776 + 6·4,197,376 = 60,848,128",
    ),
    # Article 003: BERT-base with V 30,000, 512 positions, FFN biases, 2 LayerNorms per layer, a pooler
    # weight without bias; no attention biases, token types or embedding norm.
    "handcount-003-bert-base": _article(
        30_000 * 768 + 512 * 768 + 12 * (4 * 768**2 + 2 * 768 * 3072 + 3072 + 768 + 2 * 2 * 768) + 768 * 768,
        "30,000·768 + 512·768 + 12 (4·768² + 2·768·3072 + 3,072 + 768 + 2·1,536) + 768² = 109,040,640",
    ),
    # Article 004's toy model: one shared 23 x 6 embedding, one encoder layer (W_Q, W_K, W_V 6 x 4, W_O 4 x 6,
    # two 6 x 6 FFN matrices), one decoder layer (8 attention matrices of 6 x 4 entries, two 6 x 6); no biases, no norms.
    "handcount-004-toy": _article(
        23 * 6 + (4 * 6 * 4 + 2 * 6 * 6) + (8 * 6 * 4 + 2 * 6 * 6),
        "23·6 + (4·24 + 2·36) + (8·24 + 2·36) = 138 + 168 + 264 = 570",
    ),
}

# -- the adapter: a preset's sizes -> the implementation's constructor arguments ---------------

# implementation -> {symtrans size: config field(s)}.  "L" is the learned-position table
# (max_position_embeddings); "L_max" is its name once the workload length L is split off.
_LLAMA = {
    "d_model": "hidden_size",
    "d_ff": "intermediate_size",
    "h": "num_attention_heads",
    "h_kv": "num_key_value_heads",
    "d_k": "head_dim",
    "N": "num_hidden_layers",
    "V": "vocab_size",
    "L": "max_position_embeddings",
}
_BERT = {
    "d_model": "hidden_size",
    "d_ff": "intermediate_size",
    "h": "num_attention_heads",
    "N": "num_hidden_layers",
    "V": "vocab_size",
    "L": "max_position_embeddings",
}
SIZE_FIELDS: dict[str, dict[str, str | tuple[str, ...]]] = {
    "BertModel": _BERT,
    "RobertaModel": _BERT,
    "AlbertModel": {**_BERT, "E_emb": "embedding_size"},
    "GPT2LMHeadModel": {
        "d_model": "n_embd",
        "d_ff": "n_inner",
        "h": "n_head",
        "N": "n_layer",
        "V": "vocab_size",
        "L": "n_positions",
    },
    "LlamaForCausalLM": _LLAMA,
    "MistralForCausalLM": {**_LLAMA, "w": "sliding_window"},
    "MixtralForCausalLM": {**_LLAMA, "E": "num_local_experts", "k": "num_experts_per_tok"},
    "Qwen2ForCausalLM": _LLAMA,
    "Qwen3ForCausalLM": _LLAMA,
    "GemmaForCausalLM": _LLAMA,
    # T5's positions are relative buckets (no table): L has no field and no parameters.
    "T5ForConditionalGeneration": {
        "d_model": "d_model",
        "d_ff": "d_ff",
        "h": "num_heads",
        "d_k": "d_kv",
        "N": "num_layers",
        "V": "vocab_size",
        "L": (),
    },
    "BartForConditionalGeneration": {
        "d_model": "d_model",
        "d_ff": ("encoder_ffn_dim", "decoder_ffn_dim"),
        "h": ("encoder_attention_heads", "decoder_attention_heads"),
        "N": ("encoder_layers", "decoder_layers"),
        "V": "vocab_size",
        "L": "max_position_embeddings",
    },
    "OPTForCausalLM": {
        "d_model": ("hidden_size", "word_embed_proj_dim"),
        "d_ff": "ffn_dim",
        "h": "num_attention_heads",
        "N": "num_hidden_layers",
        "V": "vocab_size",
        "L": "max_position_embeddings",
    },
    # torch.nn.Transformer(d_model, nhead, num_encoder_layers, num_decoder_layers, dim_feedforward):
    # sinusoidal positions (no table), so L has no field.
    "torch.nn.Transformer": {
        "d_model": "d_model",
        "h": "nhead",
        "N": ("num_encoder_layers", "num_decoder_layers"),
        "N_enc": "num_encoder_layers",
        "N_dec": "num_decoder_layers",
        "d_ff": "dim_feedforward",
        "V": "vocab_size",
        "L": (),
    },
}
# RoBERTa's config counts the padding offset in max_position_embeddings (roberta-base's
# config.json: 514 rows for 512 usable positions), while BART and OPT add their offset of 2
# inside the embedding module (BartLearnedPositionalEmbedding, OPTLearnedPositionalEmbedding).
# symtrans's L_max is the usable positions, so the table field is L_max + offset here only.
TABLE_INCLUDES_OFFSET = {"RobertaModel": 2}
# Workload sizes a Spec may carry as defaults: no parameters, no config field.
_WORKLOAD = ("B", "L_src", "L_tgt", "L_pre", "T_gen", "D")


def checkpoint_config(name: str) -> dict[str, Any]:
    """tests/fixtures/configs/<name>.json, parsed."""
    return json.loads((CONFIG_DIR / f"{name}.json").read_text())


def reference_kwargs(ref: Reference, sizes: dict[str, int]) -> dict[str, Any]:
    """The implementation's constructor arguments at ``sizes`` (a preset's sizes).

    Starts from the checkpoint's config.json (its options: biases, tying, activation, ...)
    and replaces every size field with the preset's value; a size field the preset does not
    set is dropped, so the class derives it as it would (head_dim = hidden_size / heads,
    num_key_value_heads = heads, ...).

    Raises:
        ValueError: for a size the implementation has no field for (the adapter never
            drops a size silently).
    """
    fields = SIZE_FIELDS[ref.implementation]
    sizes = dict(sizes)
    if "L_max" in sizes:  # the position table; L is then the workload length, not a parameter
        sizes["L"] = sizes.pop("L_max") + TABLE_INCLUDES_OFFSET.get(ref.implementation, 0)
    cfg = {k: v for k, v in checkpoint_config(ref.checkpoint).items() if k != "torch_dtype"} if ref.checkpoint else {}
    for size, names in fields.items():
        for name in (names,) if isinstance(names, str) else names:
            cfg.pop(name, None)
    if "h_kv" in fields:
        sizes.setdefault("h_kv", sizes["h"])  # no h_kv in the preset: one K/V head per query head
    for size, value in sizes.items():
        if size in _WORKLOAD:
            continue
        if size not in fields:
            raise ValueError(f"{ref.implementation} has no config field for the preset's size {size}={value}")
        names = fields[size]
        for name in (names,) if isinstance(names, str) else names:
            cfg[name] = value
    return cfg


def build_reference(ref: Reference, sizes: dict[str, int], kwargs: dict[str, Any] | None = None):
    """The implementation of ``ref`` on the meta device: at ``sizes`` (a preset's), or, with
    ``kwargs``, from those constructor arguments exactly (e.g. the checkpoint's config.json).

    torch and transformers are imported here (the caller has ``require``d them).
    """
    import torch

    cfg = reference_kwargs(ref, sizes) if kwargs is None else dict(kwargs)
    with torch.device("meta"):
        if ref.implementation == "torch.nn.Transformer":
            vocab = cfg.pop("vocab_size")
            model = torch.nn.ModuleDict(
                {"transformer": torch.nn.Transformer(**cfg), "shared": torch.nn.Embedding(vocab, cfg["d_model"])}
            )
            return model
        import transformers

        cls = getattr(transformers, ref.implementation)
        return cls(cls.config_class(**cfg), **ref.model_kwargs)


def count(model) -> int:
    """sum(p.numel() for p in model.parameters()): tied tensors once (parameters)."""
    return sum(p.numel() for p in model.parameters())


def active_count(model, experts: int, per_token: int) -> int:
    """total - (E - k)/E x the expert tensors (stacked, one slice per expert), from their shapes."""
    idle = 0
    for name, p in model.named_parameters():
        if ".experts." in name:
            assert p.shape[0] == experts, name
            idle += p.numel() // experts * (experts - per_token)
    assert idle > 0, "no expert tensors found"
    return count(model) - idle
