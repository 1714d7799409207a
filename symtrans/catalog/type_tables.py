"""The tables of the model types read by hand in ``catalog/hf_config.py`` (the first-round
families; the later types are records in ``catalog/models``): the config and model classes of
each type (``CLASSES``), the config classes' defaults of the keys read (``DEFAULTS``), their
``attribute_map`` aliases (``ALIASES``) and the symtrans size of each common key
(``SIZE_OF_KEY``).  ``hf_config`` adds the records' entries to these tables at import, so every
caller reads one table per fact.  Source: transformers 5.24's configuration classes
(``tests/test_hf_config.py`` checks the defaults against the installed transformers).
"""

from __future__ import annotations

from typing import Any

from symtrans.catalog.reader import (
    MISSING,
    Huge,
    check_divides,
    check_rotary_head,
    show,
)
from symtrans.catalog.record_table import RecordTable

# Short names of catalog/reader.py's helpers, as the readers were written with them.
_MISSING, _Huge, _show = MISSING, Huge, show
_check_divides, _check_rotary_head = check_divides, check_rotary_head


# The table of supported model types: (config class, model class counted) per model_type,
# transformers 5.x.  Everything else keyed by model_type (DEFAULTS, CONFIG_KEYS, the readers
# in _FAMILIES) must have exactly these keys; SUPPORTED, the refusal message and the
# ``symtrans model-types`` listing read this table.
CLASSES: dict[str, tuple[str, str]] = {
    "bert": ("BertConfig", "BertModel"),
    "roberta": ("RobertaConfig", "RobertaModel"),
    "albert": ("AlbertConfig", "AlbertModel"),
    "gpt2": ("GPT2Config", "GPT2LMHeadModel"),
    "t5": ("T5Config", "T5ForConditionalGeneration"),
    "bart": ("BartConfig", "BartForConditionalGeneration"),
    "opt": ("OPTConfig", "OPTForCausalLM"),
    # --- decoder types (types-dec: norms, parallel blocks, QK norms, per-layer windows)
    "granite": ("GraniteConfig", "GraniteForCausalLM"),
    "phi3": ("Phi3Config", "Phi3ForCausalLM"),
    "starcoder2": ("Starcoder2Config", "Starcoder2ForCausalLM"),
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM"),
    "gemma3_text": ("Gemma3TextConfig", "Gemma3ForCausalLM"),
    "olmo": ("OlmoConfig", "OlmoForCausalLM"),
    "olmo2": ("Olmo2Config", "Olmo2ForCausalLM"),
    "cohere": ("CohereConfig", "CohereForCausalLM"),
    "stablelm": ("StableLmConfig", "StableLmForCausalLM"),
    "phi": ("PhiConfig", "PhiForCausalLM"),
    "gpt_neox": ("GPTNeoXConfig", "GPTNeoXForCausalLM"),
    "gptj": ("GPTJConfig", "GPTJForCausalLM"),
    "falcon": ("FalconConfig", "FalconForCausalLM"),
    # --- types-moe (issue 11 §2.C): mixture of experts, multi-head latent attention
    "qwen2_moe": ("Qwen2MoeConfig", "Qwen2MoeForCausalLM"),
    "qwen3_moe": ("Qwen3MoeConfig", "Qwen3MoeForCausalLM"),
    "deepseek_v2": ("DeepseekV2Config", "DeepseekV2ForCausalLM"),
    "deepseek_v3": ("DeepseekV3Config", "DeepseekV3ForCausalLM"),
    "gpt_oss": ("GptOssConfig", "GptOssForCausalLM"),
    "llama4_text": ("Llama4TextConfig", "Llama4ForCausalLM"),
    # --- encoders (types-enc)
    "distilbert": ("DistilBertConfig", "DistilBertModel"),
    "xlm-roberta": ("XLMRobertaConfig", "XLMRobertaModel"),
    "electra": ("ElectraConfig", "ElectraModel"),
    "deberta-v2": ("DebertaV2Config", "DebertaV2Model"),
    # --- gpt2-like (learned positions / ALiBi) and multimodal wrappers
    "llava": ("LlavaConfig", "LlavaForConditionalGeneration"),
    "qwen2_vl": ("Qwen2VLConfig", "Qwen2VLForConditionalGeneration"),
    "gemma3": ("Gemma3Config", "Gemma3ForConditionalGeneration"),
    "llava_next": ("LlavaNextConfig", "LlavaNextForConditionalGeneration"),
    "mistral3": ("Mistral3Config", "Mistral3ForConditionalGeneration"),
    "qwen2_5_vl": ("Qwen2_5_VLConfig", "Qwen2_5_VLForConditionalGeneration"),
    "paligemma": ("PaliGemmaConfig", "PaliGemmaForConditionalGeneration"),
    "idefics3": ("Idefics3Config", "Idefics3ForConditionalGeneration"),
    "smolvlm": ("SmolVLMConfig", "SmolVLMForConditionalGeneration"),
    "qwen3_vl": ("Qwen3VLConfig", "Qwen3VLForConditionalGeneration"),
    "qwen3_vl_moe": ("Qwen3VLMoeConfig", "Qwen3VLMoeForConditionalGeneration"),
    "kimi_k25": ("Kimi_K25Config", "Kimi_K25ForConditionalGeneration"),
    "gemma4": ("Gemma4Config", "Gemma4ForConditionalGeneration"),
    "llama4": ("Llama4Config", "Llama4ForConditionalGeneration"),
    "qwen3_5": ("Qwen3_5Config", "Qwen3_5ForConditionalGeneration"),
    "qwen3_5_moe": ("Qwen3_5MoeConfig", "Qwen3_5MoeForConditionalGeneration"),
    # --- seq2seq
    "mbart": ("MBartConfig", "MBartForConditionalGeneration"),
    "pegasus": ("PegasusConfig", "PegasusForConditionalGeneration"),
    "marian": ("MarianConfig", "MarianMTModel"),
    "whisper": ("WhisperConfig", "WhisperForConditionalGeneration"),
    "vit": ("ViTConfig", "ViTModel"),
}

_BERT = {
    "vocab_size": 30522,
    "hidden_size": 768,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
    "add_cross_attention": False,
    "pad_token_id": 0,
}
_DECODER = {
    "vocab_size": 32000,
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "tie_word_embeddings": False,
}

# MBartConfig, PegasusConfig and MarianConfig share BartConfig's sizes.
_BART_DEFAULTS = {
    "vocab_size": 50265,
    "max_position_embeddings": 1024,
    "encoder_layers": 12,
    "encoder_ffn_dim": 4096,
    "encoder_attention_heads": 16,
    "decoder_layers": 12,
    "decoder_ffn_dim": 4096,
    "decoder_attention_heads": 16,
    "d_model": 1024,
    "tie_word_embeddings": True,
}

# The transformers 5.x class defaults symtrans reads (None: derived, see the module docstring).
DEFAULTS: dict[str, dict[str, Any]] = {
    "bert": dict(_BERT),
    "roberta": {**_BERT, "vocab_size": 50265, "pad_token_id": 1},
    "albert": {
        "vocab_size": 30000,
        "embedding_size": 128,
        "hidden_size": 4096,
        "num_hidden_layers": 12,
        "num_hidden_groups": 1,
        "num_attention_heads": 64,
        "intermediate_size": 16384,
        "inner_group_num": 1,
        "max_position_embeddings": 512,
        "type_vocab_size": 2,
    },
    "gpt2": {
        "vocab_size": 50257,
        "n_positions": 1024,
        "n_embd": 768,
        "n_layer": 12,
        "n_head": 12,
        "n_inner": None,
        "tie_word_embeddings": True,
        "add_cross_attention": False,
    },
    "t5": {
        "vocab_size": 32128,
        "d_model": 512,
        "d_kv": 64,
        "d_ff": 2048,
        "num_layers": 6,
        "num_decoder_layers": None,
        "num_heads": 8,
        "relative_attention_num_buckets": 32,
        "feed_forward_proj": "relu",
        "tie_word_embeddings": True,
    },
    "bart": {
        "vocab_size": 50265,
        "max_position_embeddings": 1024,
        "encoder_layers": 12,
        "encoder_ffn_dim": 4096,
        "encoder_attention_heads": 16,
        "decoder_layers": 12,
        "decoder_ffn_dim": 4096,
        "decoder_attention_heads": 16,
        "d_model": 1024,
        "tie_word_embeddings": True,
    },
    "opt": {
        "vocab_size": 50272,
        "hidden_size": 768,
        "num_hidden_layers": 12,
        "ffn_dim": 3072,
        "max_position_embeddings": 2048,
        "do_layer_norm_before": True,
        "_remove_final_layer_norm": False,
        "word_embed_proj_dim": None,
        "num_attention_heads": 12,
        "enable_bias": True,
        "layer_norm_elementwise_affine": True,
        "tie_word_embeddings": True,
    },
    # --- decoder types (types-dec)
    "granite": {
        **_DECODER,
        "intermediate_size": 11008,
        "num_key_value_heads": None,
        "max_position_embeddings": 2048,
        "attention_bias": False,
        "mlp_bias": False,
    },
    "phi3": {
        **_DECODER,
        "vocab_size": 32064,
        "hidden_size": 3072,
        "intermediate_size": 8192,
        "num_key_value_heads": None,
        "max_position_embeddings": 4096,
        "sliding_window": None,
    },
    "starcoder2": {
        **_DECODER,
        "vocab_size": 49152,
        "hidden_size": 3072,
        "intermediate_size": 12288,
        "num_hidden_layers": 30,
        "num_attention_heads": 24,
        "num_key_value_heads": 2,
        "max_position_embeddings": 4096,
        "use_bias": True,
        "sliding_window": None,
        "tie_word_embeddings": True,
    },
    "gemma2": {
        **_DECODER,
        "vocab_size": 256000,
        "hidden_size": 2304,
        "intermediate_size": 9216,
        "num_hidden_layers": 26,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "max_position_embeddings": 8192,
        "attention_bias": False,
        "sliding_window": 4096,
        "tie_word_embeddings": True,
    },
    "gemma3_text": {
        **_DECODER,
        "vocab_size": 262208,
        "hidden_size": 2304,
        "intermediate_size": 9216,
        "num_hidden_layers": 26,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "max_position_embeddings": 131072,
        "attention_bias": False,
        "sliding_window": 4096,
        "tie_word_embeddings": True,
    },
    "olmo": {
        **_DECODER,
        "vocab_size": 50304,
        "intermediate_size": 11008,
        "num_key_value_heads": None,
        "max_position_embeddings": 2048,
        "attention_bias": False,
    },
    "olmo2": {
        **_DECODER,
        "vocab_size": 50304,
        "intermediate_size": 11008,
        "num_key_value_heads": None,
        "max_position_embeddings": 2048,
        "attention_bias": False,
    },
    "cohere": {
        **_DECODER,
        "vocab_size": 256000,
        "hidden_size": 8192,
        "intermediate_size": 22528,
        "num_hidden_layers": 40,
        "num_attention_heads": 64,
        "num_key_value_heads": None,
        "max_position_embeddings": 8192,
        "attention_bias": False,
        "use_qk_norm": False,
        "tie_word_embeddings": True,
    },
    "stablelm": {
        **_DECODER,
        "vocab_size": 50304,
        "hidden_size": 2560,
        "intermediate_size": 6912,
        "num_key_value_heads": 32,
        "max_position_embeddings": 4096,
        "use_qkv_bias": False,
        "qk_layernorm": False,
        "use_parallel_residual": False,
    },
    "phi": {
        **_DECODER,
        "vocab_size": 51200,
        "hidden_size": 2048,
        "intermediate_size": 8192,
        "num_hidden_layers": 24,
        "num_key_value_heads": None,
        "max_position_embeddings": 2048,
        "qk_layernorm": False,
    },
    "gpt_neox": {
        **_DECODER,
        "vocab_size": 50432,
        "hidden_size": 6144,
        "num_hidden_layers": 44,
        "num_attention_heads": 64,
        "intermediate_size": 24576,
        "max_position_embeddings": 2048,
        "attention_bias": True,
        "use_parallel_residual": True,
    },
    "gptj": {
        "vocab_size": 50400,
        "n_positions": 2048,
        "n_embd": 4096,
        "n_layer": 28,
        "n_head": 16,
        "n_inner": None,
        "tie_word_embeddings": False,
    },
    "falcon": {
        "vocab_size": 65024,
        "hidden_size": 4544,
        "num_hidden_layers": 32,
        "num_attention_heads": 71,
        "num_ln_in_parallel_attn": None,
        "num_kv_heads": None,
        "alibi": False,
        "new_decoder_architecture": False,
        "multi_query": True,
        "parallel_attn": True,
        "bias": False,
        "max_position_embeddings": 2048,
        "ffn_hidden_size": None,
        "tie_word_embeddings": True,
    },
    # --- types-moe
    "qwen2_moe": {
        **_DECODER,
        "vocab_size": 151936,
        "hidden_size": 2048,
        "intermediate_size": 5632,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "num_key_value_heads": 16,
        "max_position_embeddings": 32768,
        "qkv_bias": True,
        "num_experts": 60,
        "num_experts_per_tok": 4,
        "moe_intermediate_size": 1408,
        "shared_expert_intermediate_size": 5632,
        "decoder_sparse_step": 1,
        "mlp_only_layers": None,
        "use_sliding_window": False,
        "max_window_layers": 28,
    },
    "qwen3_moe": {
        **_DECODER,
        "vocab_size": 151936,
        "hidden_size": 2048,
        "intermediate_size": 6144,
        "num_hidden_layers": 24,
        "num_attention_heads": 32,
        "num_key_value_heads": 4,
        "max_position_embeddings": 32768,
        "attention_bias": False,
        "num_experts": 128,
        "num_experts_per_tok": 8,
        "moe_intermediate_size": 768,
        "decoder_sparse_step": 1,
        "mlp_only_layers": None,
        "use_sliding_window": False,
    },
    "deepseek_v2": {
        **_DECODER,
        "vocab_size": 102400,
        "intermediate_size": 11008,
        "num_key_value_heads": None,
        "max_position_embeddings": 2048,
        "attention_bias": False,
        "mlp_bias": False,
        "first_k_dense_replace": 0,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "n_routed_experts": 64,
        "n_shared_experts": 2,
        "num_experts_per_tok": None,
        "moe_intermediate_size": 1407,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
    },
    "deepseek_v3": {
        **_DECODER,
        "vocab_size": 129280,
        "hidden_size": 7168,
        "intermediate_size": 18432,
        "num_hidden_layers": 61,
        "num_attention_heads": 128,
        "num_key_value_heads": 128,
        "max_position_embeddings": 4096,
        "attention_bias": False,
        "first_k_dense_replace": 3,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "n_routed_experts": 256,
        "n_shared_experts": 1,
        "num_experts_per_tok": 8,
        "moe_intermediate_size": 2048,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
    },
    "gpt_oss": {
        **_DECODER,
        "vocab_size": 201088,
        "hidden_size": 2880,
        "intermediate_size": 2880,
        "num_hidden_layers": 36,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "head_dim": 64,
        "max_position_embeddings": 131072,
        "attention_bias": True,
        "num_local_experts": 128,
        "num_experts_per_tok": 4,
        "sliding_window": 128,
    },
    "llama4_text": {
        **_DECODER,
        "vocab_size": 202048,
        "hidden_size": 5120,
        "intermediate_size": 8192,
        "intermediate_size_mlp": 16384,
        "num_hidden_layers": 48,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "max_position_embeddings": 131072,
        "attention_bias": False,
        "num_local_experts": 16,
        "num_experts_per_tok": 1,
        "moe_layers": None,
        "interleave_moe_layer_step": 1,
        "attention_chunk_size": 8192,
    },
    # --- encoders (types-enc)
    "distilbert": {
        "vocab_size": 30522,
        "max_position_embeddings": 512,
        "sinusoidal_pos_embds": False,
        "n_layers": 6,
        "n_heads": 12,
        "dim": 768,
        "hidden_dim": 3072,  # 4 * 768 written out: not derived from dim
        "pad_token_id": 0,
    },
    "xlm-roberta": {**_BERT, "pad_token_id": 1},  # vocab_size 30522 like BERT, not XLM-R's 250002
    "electra": {
        **_BERT,
        "embedding_size": 128,
        "hidden_size": 256,
        "num_attention_heads": 4,
        "intermediate_size": 1024,
    },
    "deberta-v2": {
        "vocab_size": 128100,
        "hidden_size": 1536,
        "num_hidden_layers": 24,
        "num_attention_heads": 24,
        "intermediate_size": 6144,
        "max_position_embeddings": 512,
        "type_vocab_size": 0,
        "relative_attention": False,
        "max_relative_positions": -1,
        "position_biased_input": True,
        "pos_att_type": None,
        "pad_token_id": 0,
    },
    # --- gpt2-like (learned positions / ALiBi) and multimodal wrappers
    "llava": {"text_config": None, "tie_word_embeddings": False},
    "qwen2_vl": {"text_config": None, "tie_word_embeddings": False},
    "gemma3": {"text_config": None, "tie_word_embeddings": True, "mm_tokens_per_image": 256},
    "llava_next": {"text_config": None, "tie_word_embeddings": False},
    "mistral3": {"text_config": None, "tie_word_embeddings": True, "spatial_merge_size": 2},
    "qwen2_5_vl": {"text_config": None, "tie_word_embeddings": False},
    "paligemma": {"text_config": None, "tie_word_embeddings": True, "projection_dim": 2048},
    "idefics3": {"text_config": None, "tie_word_embeddings": False, "scale_factor": 2},
    "smolvlm": {"text_config": None, "tie_word_embeddings": False, "scale_factor": 2},
    "qwen3_vl": {"text_config": None, "tie_word_embeddings": False},
    "qwen3_vl_moe": {"text_config": None, "tie_word_embeddings": False},
    "kimi_k25": {"text_config": None, "tie_word_embeddings": True},
    "gemma4": {"text_config": None, "vision_config": None, "audio_config": None, "tie_word_embeddings": True},
    "llama4": {"text_config": None, "tie_word_embeddings": False},
    "qwen3_5": {"text_config": None, "tie_word_embeddings": False},
    "qwen3_5_moe": {"text_config": None, "tie_word_embeddings": False},
    # --- seq2seq
    "mbart": {**_BART_DEFAULTS, "pad_token_id": 1},
    "pegasus": {**_BART_DEFAULTS, "pad_token_id": 0},
    "marian": {
        **_BART_DEFAULTS,
        "vocab_size": 58101,
        "decoder_vocab_size": None,
        "share_encoder_decoder_embeddings": True,
        "pad_token_id": 58100,
    },
    "whisper": {
        "vocab_size": 51865,
        "num_mel_bins": 80,
        "encoder_layers": 4,
        "encoder_attention_heads": 6,
        "decoder_layers": 4,
        "decoder_attention_heads": 6,
        "decoder_ffn_dim": 1536,
        "encoder_ffn_dim": 1536,
        "d_model": 384,
        "max_source_positions": 1500,
        "max_target_positions": 448,
        "pad_token_id": 50256,
        "tie_word_embeddings": True,
    },
    "vit": {
        "hidden_size": 768,
        "num_hidden_layers": 12,
        "num_attention_heads": 12,
        "intermediate_size": 3072,
        "image_size": 224,
        "patch_size": 16,
        "num_channels": 3,
        "qkv_bias": True,
        "pooler_output_size": None,
    },
}

# attribute_map aliases (alias -> canonical key), transformers 5.x.
ALIASES: dict[str, dict[str, str]] = {
    # Gemma3Config.attribute_map
    "gemma3": {
        "image_token_id": "image_token_index",
        "boi_token_id": "boi_token_index",
        "eoi_token_id": "eoi_token_index",
    },
    # Llama4Config.attribute_map
    "llama4": {
        "image_token_id": "image_token_index",
        "boi_token_id": "boi_token_index",
        "eoi_token_id": "eoi_token_index",
    },
    "gpt2": {
        "hidden_size": "n_embd",
        "max_position_embeddings": "n_positions",
        "num_attention_heads": "n_head",
        "num_hidden_layers": "n_layer",
    },
    "t5": {
        "hidden_size": "d_model",
        "num_attention_heads": "num_heads",
        "num_hidden_layers": "num_layers",
        "head_dim": "d_kv",
    },
    "bart": {
        "num_attention_heads": "encoder_attention_heads",
        "hidden_size": "d_model",
        "num_hidden_layers": "encoder_layers",
    },
    # --- decoder types (types-dec)
    "gptj": {
        "hidden_size": "n_embd",
        "max_position_embeddings": "n_positions",
        "num_attention_heads": "n_head",
        "num_hidden_layers": "n_layer",
    },
    # --- types-moe
    "qwen3_moe": {"num_local_experts": "num_experts"},  # Qwen3MoeConfig maps num_experts to num_local_experts
    "deepseek_v2": {"num_experts": "n_routed_experts"},
    "deepseek_v3": {"num_local_experts": "n_routed_experts", "num_mtp_layers": "num_nextn_predict_layers"},
    "gpt_oss": {"num_experts": "num_local_experts"},
    # --- encoders (types-enc)
    "distilbert": {"hidden_size": "dim", "num_attention_heads": "n_heads", "num_hidden_layers": "n_layers"},
    # --- gpt2-like (learned positions / ALiBi) and multimodal wrappers
    # --- seq2seq
    "mbart": {
        "num_attention_heads": "encoder_attention_heads",
        "hidden_size": "d_model",
        "num_hidden_layers": "encoder_layers",
    },
    "pegasus": {
        "num_attention_heads": "encoder_attention_heads",
        "hidden_size": "d_model",
        "num_hidden_layers": "encoder_layers",
    },
    "marian": {
        "num_attention_heads": "encoder_attention_heads",
        "hidden_size": "d_model",
        "num_hidden_layers": "encoder_layers",
    },
    "whisper": {
        "num_key_value_heads": "encoder_attention_heads",
        "num_attention_heads": "encoder_attention_heads",
        "hidden_size": "d_model",
        "num_hidden_layers": "encoder_layers",
    },
}

# The symtrans size of each PretrainedConfig key (the names every config class answers to,
# through its attribute_map: ALIASES), so that ``--set num_hidden_layers=16`` is N = 16
# (issue 25.15).  Only keys whose meaning is the same in every reader are listed.
SIZE_OF_KEY: dict[str, str] = {
    "hidden_size": "d_model",
    "intermediate_size": "d_ff",
    "num_attention_heads": "h",
    "num_key_value_heads": "h_kv",
    "head_dim": "d_k",
    "num_hidden_layers": "N",
    "vocab_size": "V",
    "max_position_embeddings": "L_max",
    "num_local_experts": "E",
    "num_experts": "E",
    "num_experts_per_tok": "k",
    "sliding_window": "w",
}


def size_of_key(key: str) -> tuple[str, str] | None:
    """(symtrans size, PretrainedConfig key) of a Hugging Face config key, or None.

    ``key`` is a PretrainedConfig name (``hidden_size``) or a model type's own name for
    it, found through the attribute_map tables ``ALIASES`` (``n_embd``, ``n_layer``,
    ``d_kv``, ``encoder_layers``, ...).
    """
    if key in SIZE_OF_KEY:
        return SIZE_OF_KEY[key], key
    for table in ALIASES.values():
        for canonical, own in table.items():
            if own == key and canonical in SIZE_OF_KEY:
                return SIZE_OF_KEY[canonical], canonical
    return None


# pad_token_id class defaults of the types whose token embedding is an nn.Embedding with
# padding_idx = pad_token_id (every supported type but GPT-2 and T5, whose embeddings have
# no padding_idx).  torch requires -vocab_size <= padding_idx < vocab_size.
PAD_DEFAULTS: dict[str, int | None] = {
    "bert": 0,
    "roberta": 1,
    "albert": 0,
    "bart": 1,
    "opt": 1,
    # --- decoder types (types-dec)
    "granite": None,
    "phi3": 32000,
    "starcoder2": None,
    "gemma2": 0,
    "gemma3_text": 0,
    "olmo": 1,
    "olmo2": 1,
    "cohere": 0,
    "stablelm": None,
    "phi": None,
    # --- types-moe
    "qwen2_moe": None,
    "qwen3_moe": None,
    "deepseek_v2": None,
    "deepseek_v3": None,
    "gpt_oss": None,
    "llama4_text": None,
    # --- encoders (types-enc)
    "distilbert": 0,
    "xlm-roberta": 1,
    "electra": 0,
    "deberta-v2": 0,
    "qwen2_vl_text": None,
    "qwen2_5_vl_text": None,
    # --- seq2seq
    "mbart": 1,
    "pegasus": 0,
    "marian": 58100,
    "whisper": 50256,
}

# The records (catalog/models) add their types to these tables on first use (record_table.py).
CLASSES, DEFAULTS, ALIASES, PAD_DEFAULTS = (RecordTable(t) for t in (CLASSES, DEFAULTS, ALIASES, PAD_DEFAULTS))
