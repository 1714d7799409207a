"""``symtrans inspect`` on checkpoints transformers itself saved, for the types whose
explanation was wrong (issue 27.4, 25.6).  The expected figures are the saved model's
``sum(p.numel() for p in model.parameters())`` and its registered buffers, never symtrans's.

* vit ended in a traceback (``KeyError: 'V'``: no vocabulary to pad);
* deepseek_v3's router bias ``e_score_correction_bias`` is a registered buffer
  (DeepseekV3TopkRouter), saved with the weights: it was counted as E parameters per MoE layer;
* GPT-2's fused ``c_attn`` holds Q, K and V: it was listed as ``q_proj``.
"""

from __future__ import annotations

import pytest
from conftest import require  # noqa: E402

torch = require("torch")
transformers = require("transformers")

from symtrans.analysis.checkpoint import inspect  # noqa: E402


def _saved(tmp_path, config_cls, model_cls, **cfg):
    torch.manual_seed(0)
    model = getattr(transformers, model_cls)(getattr(transformers, config_cls)(**cfg))
    model.save_pretrained(tmp_path)
    return model, inspect(str(tmp_path))


def test_vit_is_explained_without_a_vocabulary(tmp_path):
    cfg = dict(hidden_size=12, num_attention_heads=2, num_hidden_layers=2, intermediate_size=10)
    model, ins = _saved(tmp_path, "ViTConfig", "ViTModel", image_size=6, patch_size=2, num_channels=3, **cfg)
    assert ins.formula == sum(p.numel() for p in model.parameters())
    assert not [t for t in ins.terms if t.key == "padded_vocab"]


def test_deepseek_v3_router_bias_is_a_buffer(tmp_path):
    cfg = dict(hidden_size=16, num_attention_heads=4, num_key_value_heads=4, num_hidden_layers=3)
    cfg.update(intermediate_size=10, moe_intermediate_size=6, n_routed_experts=3, n_shared_experts=2)
    cfg.update(num_experts_per_tok=2, first_k_dense_replace=1, n_group=1, topk_group=1, q_lora_rank=7)
    cfg.update(kv_lora_rank=5, qk_rope_head_dim=4, qk_nope_head_dim=3, v_head_dim=5, vocab_size=23)
    model, ins = _saved(tmp_path, "DeepseekV3Config", "DeepseekV3ForCausalLM", **cfg)
    n = sum(p.numel() for p in model.parameters())
    assert ins.logical_parameters == n  # was n + 6: 2 MoE layers x 3 experts of router bias
    bias = sum(b.numel() for name, b in model.named_buffers() if name.endswith("e_score_correction_bias"))
    assert bias == 6
    assert {t.key: t.elements for t in ins.terms}.get("buffers") == bias


def test_gpt2_fused_c_attn_is_listed_as_q_k_v(tmp_path):
    _, ins = _saved(tmp_path, "GPT2Config", "GPT2LMHeadModel", vocab_size=96, n_embd=32, n_layer=2, n_head=4)
    roles = {r["role"] for r in ins.by_component()}
    assert "q_proj+k_proj+v_proj" in roles and "q_proj" not in roles
    fused = next(r for r in ins.by_component() if r["role"] == "q_proj+k_proj+v_proj")
    assert fused["parameters"] == 2 * (32 * 96 + 96)  # 2 layers of c_attn: (32, 3*32) weight + bias


def test_one_shard_says_it_is_one_shard_and_names_the_index(tmp_path):
    # issue 25.5: one shard's missing embedding was explained as "shapes that differ"
    cfg = dict(vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(num_key_value_heads=2, **cfg))
    model.save_pretrained(tmp_path, max_shard_size="20KB")
    shards = sorted(p.name for p in tmp_path.glob("*.safetensors"))
    assert len(shards) > 1
    ins = inspect(str(tmp_path / shards[-1]))
    note = next(n for n in ins.to_json()["notes"] if "one shard" in n)
    assert f"one shard of {len(shards)}" in note and "model.safetensors.index.json" in note
    whole = inspect(str(tmp_path / "model.safetensors.index.json"))
    assert not [n for n in whole.to_json()["notes"] if "one shard" in n]


def _weights_only(tmp_path):
    (tmp_path / "config.json").unlink()
    return inspect(str(tmp_path / "model.safetensors"))


def test_gemma2_weights_without_a_config_count_its_four_norms_per_layer(tmp_path):
    # issue 25.6: Gemma2DecoderLayer stores input, post_attention, pre_feedforward and
    # post_feedforward layernorms (4 x d_model per layer); read as llama's 2, +2 x N x d_model
    # was left unexplained.  Expected: Gemma2ForCausalLM's own parameter count.
    cfg = dict(vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4)
    model, _ = _saved(tmp_path, "Gemma2Config", "Gemma2ForCausalLM", num_key_value_heads=2, head_dim=8, **cfg)
    ins = _weights_only(tmp_path)
    n = sum(p.numel() for p in model.parameters())
    # 64x32 embedding (tied head) + 3 x (32x32 + 2 x 16x32 + 32x32 + 3 x 48x32 + 4 x 32) + final 32
    assert n == 64 * 32 + 3 * (1024 + 1024 + 1024 + 3 * 1536 + 128) + 32
    assert ins.formula == n and ins.terms == []
    assert ins.spec.layer_norms == "sandwich"


def test_gemma3_text_weights_without_a_config_count_sandwich_and_qk_norms(tmp_path):
    cfg = dict(vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4)
    model, _ = _saved(tmp_path, "Gemma3TextConfig", "Gemma3ForCausalLM", num_key_value_heads=2, head_dim=8, **cfg)
    ins = _weights_only(tmp_path)
    assert ins.formula == sum(p.numel() for p in model.parameters()) and ins.terms == []


def test_llama_weights_without_a_config_keep_one_norm_per_sublayer(tmp_path):
    cfg = dict(vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4)
    model, _ = _saved(tmp_path, "LlamaConfig", "LlamaForCausalLM", num_key_value_heads=2, **cfg)
    ins = _weights_only(tmp_path)
    assert ins.formula == sum(p.numel() for p in model.parameters()) and ins.spec.layer_norms == "sublayer"


_ENC = dict(vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4)
MASKED_LM = [
    ("BertConfig", "BertForMaskedLM", _ENC),
    ("RobertaConfig", "RobertaForMaskedLM", _ENC),
    ("XLMRobertaConfig", "XLMRobertaForMaskedLM", _ENC),
    ("AlbertConfig", "AlbertForMaskedLM", {**_ENC, "embedding_size": 16}),
    ("ElectraConfig", "ElectraForMaskedLM", {**_ENC, "embedding_size": 16}),
    ("DistilBertConfig", "DistilBertForMaskedLM", dict(vocab_size=64, dim=32, hidden_dim=48, n_layers=2, n_heads=4)),
]


@pytest.mark.parametrize("config_cls, model_cls, cfg", MASKED_LM, ids=[m[1] for m in MASKED_LM])
def test_the_counted_class_follows_architectures(tmp_path, config_cls, model_cls, cfg):
    # issue 25.6: a config.json whose architectures says BertForMaskedLM was counted as
    # BertModel (pooler, no MLM head).  Expected: the saved class's own parameter count.
    model, ins = _saved(tmp_path, config_cls, model_cls, **cfg)
    assert model.config.architectures == [model_cls]
    assert ins.spec_source == "config.json"
    assert ins.formula == sum(p.numel() for p in model.parameters())
    if model_cls.startswith(("Bert", "Roberta", "XLMRoberta")):  # names the BERT naming table knows
        assert ins.terms == []
    notes = " ".join(ins.spec_notes)
    assert f"counted as transformers {model_cls}" in notes and "includes its pooler" not in notes


def test_bert_masked_lm_untied_is_not_guessed(tmp_path):
    # untied, transformers 5 keeps cls.predictions.decoder.bias apart from cls.predictions.bias
    # (two V vectors): a head symtrans does not model, so it counts BertModel and says so
    model, ins = _saved(tmp_path, "BertConfig", "BertForMaskedLM", tie_word_embeddings=False, **_ENC)
    names = {n for n, _ in model.named_parameters()}
    assert {"cls.predictions.bias", "cls.predictions.decoder.bias"} <= names
    base = transformers.BertModel(transformers.BertConfig(**_ENC))
    assert ins.formula == sum(p.numel() for p in base.parameters())
    assert any("architectures names BertForMaskedLM, which symtrans does not model" in n for n in ins.spec_notes)


def test_a_class_symtrans_does_not_model_is_counted_as_the_base_and_said(tmp_path):
    # BertForPreTraining adds the NSP head (cls.seq_relationship): not modelled; counted as BertModel
    model, ins = _saved(tmp_path, "BertConfig", "BertForPreTraining", **_ENC)
    base = transformers.BertModel(transformers.BertConfig(**_ENC))
    assert ins.formula == sum(p.numel() for p in base.parameters())
    assert any("architectures names BertForPreTraining" in n for n in ins.spec_notes)
