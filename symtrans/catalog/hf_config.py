"""Read a Hugging Face ``config.json`` into a validated :class:`~symtrans.spec.Spec`.

``load_config(path)`` reads and parses the file; ``spec_from_config(cfg, name)`` maps a
parsed dict.  Supported ``model_type`` values and the model each is counted as (the
class transformers 5.x builds for that config; ``AutoModel`` for the encoders):

==========  ==================================  =============================
model_type  counted as (transformers 5.x)       config class (defaults from)
==========  ==================================  =============================
bert        BertModel (with its pooler)         BertConfig
albert      AlbertModel (with its pooler)       AlbertConfig
roberta     RobertaModel (with its pooler)      RobertaConfig
gpt2        GPT2LMHeadModel                     GPT2Config
llama       LlamaForCausalLM                    LlamaConfig
mistral     MistralForCausalLM                  MistralConfig
mixtral     MixtralForCausalLM                  MixtralConfig
qwen2       Qwen2ForCausalLM                    Qwen2Config
qwen3       Qwen3ForCausalLM                    Qwen3Config
gemma       GemmaForCausalLM                    GemmaConfig
t5          T5ForConditionalGeneration          T5Config
bart        BartForConditionalGeneration        BartConfig
opt         OPTForCausalLM                      OPTConfig
mbart       MBartForConditionalGeneration       MBartConfig
pegasus     PegasusForConditionalGeneration     PegasusConfig
marian      MarianMTModel                       MarianConfig
whisper     WhisperForConditionalGeneration     WhisperConfig
vit         ViTModel (with its pooler)          ViTConfig
==========  ==================================  =============================

Defaults.  A key the file does not give takes the default of the transformers 5.x
config class named above (the table ``DEFAULTS`` below, checked against the installed
library by ``tests/test_crosscheck_hf.py``), and a note says so
("key X missing: used the transformers default Y (Class)").  The defaults that are
derived rather than constant:

* ``num_key_value_heads`` missing: None -> ``num_attention_heads`` (LlamaConfig), 32
  (Qwen2Config, Qwen3Config), 8 (MistralConfig, MixtralConfig); null -> ``num_attention_heads``
  for Llama and Qwen2/Qwen3, whose field may be null (the others' strict int field refuses it).
* ``head_dim`` None -> ``hidden_size // num_attention_heads`` (LlamaConfig,
  MistralConfig, MixtralConfig; Qwen2Config has no such field but Qwen2Attention reads
  one when the file gives it); Qwen3Config defaults to 128, GemmaConfig to 256.
* GPT2Config ``n_inner`` None -> ``4 * n_embd``; T5Config ``num_decoder_layers`` None
  -> ``num_layers`` as given under that name (the alias ``num_hidden_layers`` is applied
  after T5Config derives it, so a file giving only ``num_hidden_layers`` gets the class
  default of 6 decoder layers); OPTConfig ``word_embed_proj_dim`` None -> ``hidden_size``.
* T5Config ``is_gated_act`` in the file wins over the one derived from ``feed_forward_proj``.
* ``tie_word_embeddings``: False for Llama, Mistral, Mixtral, Qwen2 and Qwen3; True for
  GPT-2, Gemma, T5, BART and OPT (BERT/RoBERTa base models have no head to tie).
* T5Config ``feed_forward_proj`` "relu" (two maps); "gated-ACT" is a gated FFN
  (three maps: ``geglu``, or ``swiglu`` for gated-silu).

Positions.  ``L_max`` is ``max_position_embeddings`` (GPT-2: ``n_positions``); the workload's
sequence length ``L`` is not a config fact (``resolve`` gives its default).  BART and
OPT allocate ``L + 2`` rows (``position_offset = 2``); RoBERTa's ``max_position_embeddings``
already includes its ``pad_token_id + 1`` offset rows (514 = 512 + 2), so ``L`` is the
rest and ``position_offset`` the offset.  T5's relative bias has
``relative_attention_num_buckets`` x h parameters per stack.

Aliases of ``attribute_map`` (GPT-2 ``hidden_size`` = ``n_embd``, T5 ``head_dim`` =
``d_kv``, BART ``num_hidden_layers`` = ``encoder_layers``, Mixtral ``num_experts`` =
``num_local_experts``, ...) are accepted; a key and its alias that disagree are an error.

Strictness.  The JSON must be strict (no NaN/Infinity, no duplicate keys, an object at
the top level).  Sizes are JSON integers in 1..2**53 (booleans, floats such as 4096.0,
strings and null are rejected, as transformers 5.x's strict config classes do); flags
are JSON booleans.  Every failure is a ``ValueError`` with one sentence that names the
field; the command line prints it and exits with status 2.

Parts of a config that change no parameter are listed per type, with the reason, in
``NO_PARAM_EFFECT`` (``tests/test_model_types.py`` changes every key of every config class
and checks that table).  Sliding windows change no parameter but the workload: Mistral's and
Mixtral's ``sliding_window``, and Qwen2/Qwen3's when ``use_sliding_window`` puts it on every
layer (``layer_types`` / ``max_window_layers``), become the Spec's window ``w``, as in the
``mistral-7b`` preset (a stack with some windowed and some full layers is refused).
``pad_token_id`` must be a row of the token embedding where the model uses it as
``padding_idx`` (torch refuses otherwise).  A key unknown to the config class is an error
only when it is a near miss of a key that changes the count and is no real key of any
supported class (``REAL_KEYS``); otherwise a note says it was ignored.  Parts the engine cannot count
(ALBERT layer groups other than one shared layer or none shared, OPT's
``word_embed_proj_dim`` projections, cross-attention added to BERT/GPT-2, Marian's shared
untied embeddings with a decoder_vocab_size of its own, ViT's non-square patches) raise a
``ValueError`` saying so rather than giving a wrong count.

Encoder-decoders (BART, mBART, Pegasus, Marian, Whisper).  A decoder whose heads, FFN
width or vocabulary differ from the encoder's gets its own sizes (``h_dec``, ``d_ff_dec``,
``V_dec``).  Untied (``tie_word_embeddings`` false), the BART family keeps ``model.shared``
beside the encoder's and decoder's tables and the head, and no forward pass reads it;
symtrans counts it, as ``model.parameters()`` does (one convention for the family, noted).
Pegasus, Marian and Whisper's encoder store their sinusoidal positions as frozen
parameters, counted.  Whisper: a Conv1d front end over ``num_mel_bins`` (``C_in``), its
two position tables ``max_source_positions`` (``L_src_max``) and ``max_target_positions``
(``L_tgt_max``).  ViT: a patch front end (``C_in`` channels, patch side ``p``) and no
vocabulary; ``L_max`` is the patches + 1 (the CLS token).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from symtrans.engine.spec import Spec

# Largest size accepted: beyond 2**53 a value is not a real model (and not exact in a float).
MAX_SIZE = 2**53
# A config.json is a few kB; refuse to read anything absurdly large.
MAX_BYTES = 10 * 2**20

# The table of supported model types: (config class, model class counted) per model_type,
# transformers 5.x.  Everything else keyed by model_type (DEFAULTS, CONFIG_KEYS, the readers
# in _FAMILIES) must have exactly these keys; SUPPORTED, the refusal message and the
# ``symtrans model-types`` listing read this table.
CLASSES: dict[str, tuple[str, str]] = {
    "bert": ("BertConfig", "BertModel"),
    "roberta": ("RobertaConfig", "RobertaModel"),
    "albert": ("AlbertConfig", "AlbertModel"),
    "gpt2": ("GPT2Config", "GPT2LMHeadModel"),
    "llama": ("LlamaConfig", "LlamaForCausalLM"),
    "mistral": ("MistralConfig", "MistralForCausalLM"),
    "mixtral": ("MixtralConfig", "MixtralForCausalLM"),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM"),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM"),
    "gemma": ("GemmaConfig", "GemmaForCausalLM"),
    "t5": ("T5Config", "T5ForConditionalGeneration"),
    "bart": ("BartConfig", "BartForConditionalGeneration"),
    "opt": ("OPTConfig", "OPTForCausalLM"),
    # --- seq2seq
    "mbart": ("MBartConfig", "MBartForConditionalGeneration"),
    "pegasus": ("PegasusConfig", "PegasusForConditionalGeneration"),
    "marian": ("MarianConfig", "MarianMTModel"),
    "whisper": ("WhisperConfig", "WhisperForConditionalGeneration"),
    "vit": ("ViTConfig", "ViTModel"),
}
SUPPORTED = tuple(CLASSES)

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
    "llama": {
        **_DECODER,
        "intermediate_size": 11008,
        "num_key_value_heads": None,
        "head_dim": None,
        "max_position_embeddings": 2048,
        "attention_bias": False,
        "mlp_bias": False,
    },
    "mistral": {
        **_DECODER,
        "intermediate_size": 14336,
        "num_key_value_heads": 8,
        "head_dim": None,
        "max_position_embeddings": 4096 * 32,
        "sliding_window": 4096,
    },
    "mixtral": {
        **_DECODER,
        "intermediate_size": 14336,
        "num_key_value_heads": 8,
        "head_dim": None,
        "max_position_embeddings": 4096 * 32,
        "num_local_experts": 8,
        "num_experts_per_tok": 2,
        "sliding_window": None,
    },
    "qwen2": {
        **_DECODER,
        "vocab_size": 151936,
        "intermediate_size": 22016,
        "num_key_value_heads": 32,
        "max_position_embeddings": 32768,
    },
    "qwen3": {
        **_DECODER,
        "vocab_size": 151936,
        "intermediate_size": 22016,
        "num_key_value_heads": 32,
        "head_dim": 128,
        "max_position_embeddings": 32768,
        "attention_bias": False,
    },
    "gemma": {
        **_DECODER,
        "vocab_size": 256000,
        "hidden_size": 3072,
        "intermediate_size": 24576,
        "num_hidden_layers": 28,
        "num_attention_heads": 16,
        "num_key_value_heads": 16,
        "head_dim": 256,
        "max_position_embeddings": 8192,
        "tie_word_embeddings": True,
        "attention_bias": False,
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
    "mixtral": {"num_experts": "num_local_experts"},
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

# The keys of each config class (transformers 5.24: the ``__init__`` parameters, the
# ``to_dict()`` keys of a default instance and the ``attribute_map`` aliases, minus the
# PretrainedConfig ones in COMMON_KEYS).  A key of a config.json outside these, COMMON_KEYS
# and the keys symtrans reads is unknown: an error when it is a near miss of a known key
# (a typo such as num_key_value_head, which would silently fall back to a default), else
# a note.  ``tests/test_hf_config.py`` checks the table against the installed transformers.
CONFIG_KEYS: dict[str, frozenset[str]] = {
    mt: frozenset(keys.split())
    for mt, keys in {
        "bert": "add_cross_attention attention_probs_dropout_prob bos_token_id classifier_dropout eos_token_id hidden_act "
        "hidden_dropout_prob hidden_size initializer_range intermediate_size is_decoder layer_norm_eps "
        "max_position_embeddings num_attention_heads num_hidden_layers pad_token_id tie_word_embeddings "
        "type_vocab_size use_cache vocab_size",
        "roberta": "add_cross_attention attention_probs_dropout_prob bos_token_id classifier_dropout eos_token_id "
        "hidden_act hidden_dropout_prob hidden_size initializer_range intermediate_size is_decoder "
        "layer_norm_eps max_position_embeddings num_attention_heads num_hidden_layers pad_token_id "
        "tie_word_embeddings type_vocab_size use_cache vocab_size",
        "albert": "attention_probs_dropout_prob bos_token_id classifier_dropout_prob embedding_size eos_token_id hidden_act "
        "hidden_dropout_prob hidden_size initializer_range inner_group_num intermediate_size layer_norm_eps "
        "max_position_embeddings num_attention_heads num_hidden_groups num_hidden_layers pad_token_id "
        "tie_word_embeddings type_vocab_size vocab_size",
        "gpt2": "activation_function add_cross_attention attn_pdrop bos_token_id embd_pdrop eos_token_id hidden_size "
        "initializer_range layer_norm_epsilon max_position_embeddings n_embd n_head n_inner n_layer n_positions "
        "num_attention_heads num_hidden_layers pad_token_id reorder_and_upcast_attn resid_pdrop "
        "scale_attn_by_inverse_layer_idx scale_attn_weights summary_activation summary_first_dropout "
        "summary_proj_to_labels summary_type summary_use_proj tie_word_embeddings use_cache vocab_size",
        "llama": "attention_bias attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size "
        "initializer_range intermediate_size max_position_embeddings mlp_bias num_attention_heads "
        "num_hidden_layers num_key_value_heads pad_token_id pretraining_tp rms_norm_eps rope_parameters "
        "tie_word_embeddings use_cache vocab_size",
        "mistral": "attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size initializer_range "
        "intermediate_size max_position_embeddings num_attention_heads num_hidden_layers num_key_value_heads "
        "pad_token_id rms_norm_eps rope_parameters sliding_window tie_word_embeddings use_cache vocab_size",
        "mixtral": "attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size initializer_range "
        "intermediate_size max_position_embeddings num_attention_heads num_experts num_experts_per_tok "
        "num_hidden_layers num_key_value_heads num_local_experts output_router_logits pad_token_id "
        "rms_norm_eps rope_parameters router_aux_loss_coef router_jitter_noise sliding_window "
        "tie_word_embeddings use_cache vocab_size",
        "qwen2": "attention_dropout bos_token_id eos_token_id hidden_act hidden_size initializer_range intermediate_size "
        "layer_types max_position_embeddings max_window_layers num_attention_heads num_hidden_layers "
        "num_key_value_heads pad_token_id rms_norm_eps rope_parameters sliding_window tie_word_embeddings "
        "use_cache use_sliding_window vocab_size",
        "qwen3": "attention_bias attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size "
        "initializer_range intermediate_size layer_types max_position_embeddings max_window_layers "
        "num_attention_heads num_hidden_layers num_key_value_heads pad_token_id rms_norm_eps rope_parameters "
        "sliding_window tie_word_embeddings use_cache use_sliding_window vocab_size",
        "gemma": "attention_bias attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size "
        "initializer_range intermediate_size max_position_embeddings num_attention_heads num_hidden_layers "
        "num_key_value_heads pad_token_id rms_norm_eps rope_parameters tie_word_embeddings "
        "use_bidirectional_attention use_cache vocab_size",
        "t5": "classifier_dropout d_ff d_kv d_model dense_act_fn dropout_rate eos_token_id feed_forward_proj head_dim "
        "hidden_size initializer_factor is_decoder is_gated_act layer_norm_epsilon num_attention_heads "
        "num_decoder_layers num_heads num_hidden_layers num_layers pad_token_id relative_attention_max_distance "
        "relative_attention_num_buckets scale_decoder_outputs tie_word_embeddings use_cache vocab_size",
        "bart": "activation_dropout activation_function attention_dropout bos_token_id classifier_dropout d_model "
        "decoder_attention_heads decoder_ffn_dim decoder_layerdrop decoder_layers decoder_start_token_id dropout "
        "encoder_attention_heads encoder_ffn_dim encoder_layerdrop encoder_layers eos_token_id "
        "forced_eos_token_id hidden_size init_std is_decoder max_position_embeddings num_attention_heads "
        "num_hidden_layers pad_token_id scale_embedding tie_word_embeddings use_cache vocab_size",
        "opt": "_remove_final_layer_norm activation_function attention_dropout bos_token_id do_layer_norm_before dropout "
        "enable_bias eos_token_id ffn_dim hidden_size init_std layer_norm_elementwise_affine layerdrop "
        "max_position_embeddings num_attention_heads num_hidden_layers pad_token_id tie_word_embeddings use_cache "
        "vocab_size word_embed_proj_dim",
        # --- seq2seq
        "mbart": "activation_dropout activation_function attention_dropout bos_token_id classifier_dropout d_model "
        "decoder_attention_heads decoder_ffn_dim decoder_layerdrop decoder_layers decoder_start_token_id dropout "
        "encoder_attention_heads encoder_ffn_dim encoder_layerdrop encoder_layers eos_token_id forced_eos_token_id "
        "hidden_size init_std is_decoder max_position_embeddings num_attention_heads num_hidden_layers pad_token_id "
        "scale_embedding tie_word_embeddings use_cache vocab_size",
        "pegasus": "activation_dropout activation_function attention_dropout d_model decoder_attention_heads "
        "decoder_ffn_dim decoder_layerdrop decoder_layers decoder_start_token_id dropout encoder_attention_heads "
        "encoder_ffn_dim encoder_layerdrop encoder_layers eos_token_id forced_eos_token_id hidden_size init_std "
        "is_decoder max_position_embeddings num_attention_heads num_hidden_layers pad_token_id scale_embedding "
        "tie_word_embeddings use_cache vocab_size",
        "marian": "activation_dropout activation_function attention_dropout bos_token_id d_model "
        "decoder_attention_heads decoder_ffn_dim decoder_layerdrop decoder_layers decoder_start_token_id "
        "decoder_vocab_size dropout encoder_attention_heads encoder_ffn_dim encoder_layerdrop encoder_layers "
        "eos_token_id forced_eos_token_id hidden_size init_std is_decoder max_position_embeddings "
        "num_attention_heads num_hidden_layers pad_token_id scale_embedding share_encoder_decoder_embeddings "
        "tie_word_embeddings use_cache vocab_size",
        "whisper": "activation_dropout activation_function apply_spec_augment attention_dropout begin_suppress_tokens "
        "bos_token_id classifier_proj_size d_model decoder_attention_heads decoder_ffn_dim decoder_layerdrop "
        "decoder_layers decoder_start_token_id dropout encoder_attention_heads encoder_ffn_dim encoder_layerdrop "
        "encoder_layers eos_token_id hidden_size init_std mask_feature_length mask_feature_min_masks "
        "mask_feature_prob mask_time_length mask_time_min_masks mask_time_prob max_source_positions "
        "max_target_positions median_filter_width num_attention_heads num_hidden_layers num_key_value_heads "
        "num_mel_bins pad_token_id scale_embedding suppress_tokens tie_word_embeddings use_cache "
        "use_weighted_layer_sum vocab_size",
        "vit": "attention_probs_dropout_prob encoder_stride hidden_act hidden_dropout_prob hidden_size image_size "
        "initializer_range intermediate_size layer_norm_eps num_attention_heads num_channels num_hidden_layers "
        "patch_size pooler_act pooler_output_size qkv_bias",
    }.items()
}

# Keys every config may carry: PretrainedConfig's in transformers 5.x, those of 4.x
# (generation settings, torch_dtype, ...), and keys published checkpoints still hold that
# the 5.x classes fold into others or drop (rope_theta and rope_scaling -> rope_parameters,
# GPT-2's n_ctx, T5's n_positions and output_past, BART's and ALBERT's legacy switches).
COMMON_KEYS = frozenset(
    """
    _name_or_path architectures chunk_size_feed_forward dtype id2label is_encoder_decoder label2id model_type
    output_attentions output_hidden_states problem_type return_dict transformers_version
    torchscript torch_dtype use_bfloat16 tf_legacy_loss pruned_heads tie_word_embeddings is_decoder
    cross_attention_hidden_size add_cross_attention tie_encoder_decoder max_length min_length do_sample
    early_stopping num_beams num_beam_groups diversity_penalty temperature top_k top_p typical_p
    repetition_penalty length_penalty no_repeat_ngram_size encoder_no_repeat_ngram_size bad_words_ids
    num_return_sequences output_scores return_dict_in_generate forced_bos_token_id forced_eos_token_id
    remove_invalid_values exponential_decay_length_penalty suppress_tokens begin_suppress_tokens
    finetuning_task num_labels tokenizer_class prefix bos_token_id pad_token_id eos_token_id sep_token_id
    decoder_start_token_id task_specific_params _commit_hash _attn_implementation _attn_implementation_autoset
    attn_implementation quantization_config auto_map gradient_checkpointing use_cache initializer_range
    rope_theta rope_scaling rope_parameters partial_rotary_factor pretraining_tp hidden_activation
    position_embedding_type n_ctx n_positions output_past
    add_bias_logits add_final_layer_norm classif_dropout extra_pos_embeddings force_bos_token_to_be_generated
    normalize_before normalize_embedding static_position_embeddings
    down_scale_factor gap_size net_structure_type num_memory_blocks activation_dropout
    forced_decoder_ids classifier_dropout
""".split()
)

# Keys of the config classes that change no parameter of the model counted, each with its
# reason.  tests/test_model_types.py changes every key of every config class in turn and
# requires that symtrans's count and transformers' move identically, or that neither moves
# and the key is listed here.  "*" holds PretrainedConfig's own fields (every type has them).
# Keys that shape the workload rather than the weights (sliding windows, layer types) are
# listed too: they change FLOPs and the KV cache, and the readers below carry them into the
# Spec as the window size ``w``.
_WHY = {
    "meta": "bookkeeping of the config (architectures, labels, dtype, version, output switches)",
    "dropout": "a dropout or layer-drop probability: training noise, no weights",
    "init": "the initialisation scale: weight values, not shapes",
    "eps": "a norm's epsilon: a constant, not a weight",
    "act": "an activation function: no weights",
    "token": "a special token id: which row, not how many rows (a padding_idx must lie inside the vocabulary)",
    "cache": "a generation or KV-cache switch, or an extra output of the forward pass",
    "rope": "rotary settings: fixed frequencies held in buffers, no weights",
    "scale": "a constant scale factor in the forward pass (scores, embeddings or outputs), no weights",
    "mask": "the attention mask (causal or bidirectional): no weights",
    "window": "the attention pattern (sliding window, layer types): FLOPs and KV cache, not weights; read as w",
    "no head": "the model counted has no task head and no LM head to tie or summarise",
    "loss": "a training-loss setting (router auxiliary loss, router noise)",
    "tp": "tensor-parallel slicing of the same matrices at training time",
    "buckets": "the largest bucketed distance: bucket boundaries, not the number of buckets",
    "positions": "the longest sequence: rotary positions have no table, so no weights (read as L)",
    # --- seq2seq
    "augment": "SpecAugment masking of the input features in training: no weights in this model",
    "generation": "a generation setting (suppressed tokens, timestamp filtering): no weights",
}


def _no_effect(**groups: str) -> dict[str, str]:
    return {key: _WHY[why] for why, keys in groups.items() for key in keys.split()}


_DECODER_NO_EFFECT = dict(
    positions="max_position_embeddings",
    dropout="attention_dropout",
    token="bos_token_id eos_token_id pad_token_id",
    act="hidden_act",
    init="initializer_range",
    eps="rms_norm_eps",
    rope="rope_parameters",
    cache="use_cache",
)
_BERT_NO_EFFECT = dict(
    dropout="attention_probs_dropout_prob hidden_dropout_prob classifier_dropout",
    act="hidden_act",
    init="initializer_range",
    eps="layer_norm_eps",
    token="bos_token_id eos_token_id pad_token_id",
    cache="use_cache",
    mask="is_decoder",
)
_QWEN_WINDOW = "sliding_window use_sliding_window max_window_layers layer_types"

NO_PARAM_EFFECT: dict[str, dict[str, str]] = {
    "*": _no_effect(
        meta="architectures chunk_size_feed_forward dtype id2label is_encoder_decoder label2id "
        "output_hidden_states problem_type return_dict transformers_version"
    ),
    "bert": _no_effect(**_BERT_NO_EFFECT, **{"no head": "tie_word_embeddings"}),
    "roberta": _no_effect(**_BERT_NO_EFFECT, **{"no head": "tie_word_embeddings"}),
    "albert": _no_effect(
        dropout="attention_probs_dropout_prob hidden_dropout_prob classifier_dropout_prob",
        act="hidden_act",
        init="initializer_range",
        eps="layer_norm_eps",
        token="bos_token_id eos_token_id pad_token_id",
        **{"no head": "tie_word_embeddings"},
    ),
    "gpt2": _no_effect(
        act="activation_function",
        dropout="attn_pdrop embd_pdrop resid_pdrop summary_first_dropout",
        token="bos_token_id eos_token_id pad_token_id",
        init="initializer_range",
        eps="layer_norm_epsilon",
        scale="reorder_and_upcast_attn scale_attn_by_inverse_layer_idx scale_attn_weights",
        cache="use_cache",
        **{"no head": "summary_activation summary_proj_to_labels summary_type summary_use_proj"},
    ),
    "llama": _no_effect(**_DECODER_NO_EFFECT, tp="pretraining_tp"),
    "mistral": _no_effect(**_DECODER_NO_EFFECT, window="sliding_window"),
    "mixtral": _no_effect(
        **{**_DECODER_NO_EFFECT, "cache": "use_cache output_router_logits"},
        window="sliding_window",
        loss="router_aux_loss_coef router_jitter_noise",
    ),
    "qwen2": _no_effect(**_DECODER_NO_EFFECT, window=_QWEN_WINDOW),
    "qwen3": _no_effect(**_DECODER_NO_EFFECT, window=_QWEN_WINDOW),
    "gemma": _no_effect(**_DECODER_NO_EFFECT, mask="use_bidirectional_attention"),
    "t5": _no_effect(
        dropout="classifier_dropout dropout_rate",
        token="eos_token_id pad_token_id",
        init="initializer_factor",
        eps="layer_norm_epsilon",
        act="dense_act_fn",
        buckets="relative_attention_max_distance",
        scale="scale_decoder_outputs",
        cache="use_cache",
        mask="is_decoder",
    ),
    "bart": _no_effect(
        dropout="activation_dropout attention_dropout classifier_dropout decoder_layerdrop dropout encoder_layerdrop",
        act="activation_function",
        token="bos_token_id decoder_start_token_id eos_token_id forced_eos_token_id pad_token_id",
        init="init_std",
        scale="scale_embedding",
        cache="use_cache",
        mask="is_decoder",
    ),
    "opt": _no_effect(
        act="activation_function",
        dropout="attention_dropout dropout layerdrop",
        token="bos_token_id eos_token_id pad_token_id",
        init="init_std",
        cache="use_cache",
    ),
    # --- seq2seq
    "mbart": _no_effect(
        dropout="activation_dropout attention_dropout classifier_dropout decoder_layerdrop dropout encoder_layerdrop",
        act="activation_function",
        token="bos_token_id decoder_start_token_id eos_token_id forced_eos_token_id pad_token_id",
        init="init_std",
        scale="scale_embedding",
        cache="use_cache",
        mask="is_decoder",
    ),
    "pegasus": _no_effect(
        dropout="activation_dropout attention_dropout decoder_layerdrop dropout encoder_layerdrop",
        act="activation_function",
        token="decoder_start_token_id eos_token_id forced_eos_token_id pad_token_id",
        init="init_std",
        scale="scale_embedding",
        cache="use_cache",
        mask="is_decoder",
    ),
    "marian": _no_effect(
        dropout="activation_dropout attention_dropout decoder_layerdrop dropout encoder_layerdrop",
        act="activation_function",
        token="bos_token_id decoder_start_token_id eos_token_id forced_eos_token_id pad_token_id",
        init="init_std",
        scale="scale_embedding",
        cache="use_cache",
        mask="is_decoder",
    ),
    "whisper": _no_effect(
        dropout="activation_dropout attention_dropout decoder_layerdrop dropout encoder_layerdrop",
        act="activation_function",
        token="bos_token_id decoder_start_token_id eos_token_id pad_token_id",
        init="init_std",
        scale="scale_embedding",
        cache="use_cache",
        augment="apply_spec_augment mask_feature_length mask_feature_min_masks mask_feature_prob mask_time_length "
        "mask_time_min_masks mask_time_prob",
        generation="begin_suppress_tokens suppress_tokens median_filter_width",
        **{"no head": "classifier_proj_size use_weighted_layer_sum"},
    ),
    "vit": _no_effect(
        dropout="attention_probs_dropout_prob hidden_dropout_prob",
        act="hidden_act pooler_act",
        init="initializer_range",
        eps="layer_norm_eps",
        **{"no head": "encoder_stride"},
    ),
}

# Every key some supported config class (or PretrainedConfig, 4.x or a published checkpoint)
# has: such a key is never taken for a typo, whichever model_type it appears in.
REAL_KEYS = frozenset().union(*CONFIG_KEYS.values(), COMMON_KEYS, *NO_PARAM_EFFECT.values())


def param_keys(model_type: str) -> frozenset[str]:
    """The keys of ``model_type``'s config class (and their aliases) that change its
    parameter count: CONFIG_KEYS and the keys symtrans reads, less NO_PARAM_EFFECT."""
    quiet = set(NO_PARAM_EFFECT["*"]) | set(NO_PARAM_EFFECT[model_type])
    keys = CONFIG_KEYS[model_type] | frozenset(DEFAULTS[model_type]) | frozenset(ALIASES.get(model_type, {}))
    return frozenset(k for k in keys if k not in quiet)


# Unknown keys at least this similar to a known one (difflib ratio, 0..1) are taken as
# typos: num_key_value_head / num_key_value_heads is 0.97, intermediate_sise 0.94, while
# distinct real keys such as rope_theta / rope_parameters (0.56) stay well below.
TYPO_CUTOFF = 0.85
# At most this many unknown top-level keys.  Real config.json files have a few dozen keys
# and a handful of unknown ones (keys of newer transformers versions); each unknown key is
# compared with every known one for typos, so a file of 686,000 unknown keys took 440 s.
# More than this is not a model config: it is refused before any comparison.
MAX_UNKNOWN_KEYS = 1000

_MISSING = object()


class ConfigError(ValueError):
    """A config that cannot be counted; the message is one sentence naming the field."""


class _Huge:
    """A JSON integer too long to be a size, kept unparsed so the error can name its key."""

    def __init__(self, digits: str) -> None:
        self.digits = digits

    def __repr__(self) -> str:
        return f"a {len(self.digits.lstrip('-'))}-digit integer"


def _show(v: Any) -> str:
    """A JSON-flavoured rendering of a value for messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v if len(v) <= 40 else v[:37] + "...")
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "a list"
    return repr(v)


# --------------------------------------------------------------------------- parsing

_NONFINITE_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*(-?Infinity|NaN)\b')


def parse_json(text: str) -> dict[str, Any]:
    """Parse strict JSON text into the config dict.

    Rejects NaN/Infinity (which Python's json accepts by default), duplicate keys in any
    object, and a top level that is not an object.  Integers longer than 20 digits are
    kept as a marker so that using one as a size names its key.

    Raises:
        ConfigError: one sentence saying what is wrong.
    """

    def constant(name: str) -> Any:
        m = _NONFINITE_KEY.search(text)
        where = f"key {m.group(1)} is {m.group(2)}, which" if m else f"{name}"
        raise ConfigError(f"{where} is not valid JSON: only finite numbers are allowed")

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in items:
            if k in out:
                raise ConfigError(f"key {k} appears twice in the same JSON object")
            out[k] = v
        return out

    def integer(s: str) -> Any:
        return int(s) if len(s) <= 20 else _Huge(s)

    try:
        cfg = json.loads(text, parse_constant=constant, object_pairs_hook=pairs, parse_int=integer)
    except ConfigError:
        raise
    except json.JSONDecodeError as e:
        raise ConfigError(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise ConfigError("not valid JSON: objects are nested too deeply") from None
    except ValueError as e:  # e.g. a number the decoder cannot convert
        raise ConfigError(f"not valid JSON: {str(e).split('.')[0]}") from None
    if not isinstance(cfg, dict):
        raise ConfigError(f"the top level must be a JSON object, not {_show(cfg)}")
    return cfg


_SURROGATE = re.compile("[\ud800-\udfff]")


def _refuse_lone_surrogates(cfg: Any) -> None:
    """JSON's ``\\ud800`` escapes can spell half a UTF-16 pair, which is no character:
    refuse it, naming the key (shown escaped), before it reaches a message or an output.

    Raises:
        ConfigError: naming the key whose name or string value holds a lone surrogate.
    """
    stack: list[tuple[str, Any]] = [("", cfg)]
    while stack:
        where, v = stack.pop()
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        for k, x in items:
            name = f"{where}.{k}" if where else str(k)
            if isinstance(k, str) and _SURROGATE.search(k):
                raise ConfigError(f"key {ascii(name)} holds a lone surrogate, which is not a character")
            if isinstance(x, str) and _SURROGATE.search(x):
                raise ConfigError(f"the value of key {ascii(name)} holds a lone surrogate, which is not a character")
            stack.append((name, x))


def load_config(path: str | Path) -> tuple[Spec, str, tuple[str, ...]]:
    """Read a Hugging Face ``config.json`` (or a directory holding one).

    Returns:
        ``(spec, name, notes)``: the Spec, a display name (the file's stem, or its
        directory's name for a file called ``config.json``) and the notes on defaults
        and assumptions used.

    Raises:
        ValueError: one sentence starting with the path: unreadable file, invalid JSON,
            unsupported model_type, a bad or contradictory value (naming the key).
    """
    spec, name, notes, _ = load_config_checkpoint(path)
    return spec, name, notes


def load_config_checkpoint(path: str | Path):
    """``load_config`` plus how the checkpoint stores its weights: its ``torch_dtype``/
    ``dtype`` and ``quantization_config`` as a ``quantization.Checkpoint`` (read from the
    same parsed file; a problem there is recorded, not raised, so that parameter counts
    still work).

    Returns:
        ``(spec, name, notes, checkpoint)``.

    Raises:
        ValueError: as ``load_config``.
    """
    from symtrans.accounting.quantization import checkpoint_from_config

    p = Path(path)
    if p.is_dir():
        p = p / "config.json"
    cfg = read_config(p, str(path))
    name = p.stem
    if name == "config":
        name = p.resolve().parent.name or name
    spec, notes = spec_from_config(cfg, str(path))
    return spec, name, notes, checkpoint_from_config(cfg)


def read_config(p: Path, shown: str | None = None) -> dict[str, Any]:
    """The parsed JSON object of the config file ``p``: a regular file of at most
    MAX_BYTES, UTF-8 (with or without BOM) or UTF-16 with a BOM (``base/inputs.py``),
    strict JSON, no lone surrogates.  ``shown`` is how messages name the file.

    Raises:
        ConfigError: one sentence starting with the path.
    """
    from symtrans.base.inputs import InputError, read_text

    path = str(p) if shown is None else shown
    try:
        text = read_text(p, "a config.json", MAX_BYTES)
    except InputError as e:
        raise ConfigError(str(e)) from None
    try:
        cfg = parse_json(text)
        _refuse_lone_surrogates(cfg)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
    return cfg


# --------------------------------------------------------------------------- reading


class _Reader:
    """Typed access to one config dict, collecting notes on the defaults used."""

    def __init__(self, cfg: dict[str, Any], model_type: str) -> None:
        self.cfg = cfg
        self.mt = model_type
        self.cls, self.model = CLASSES[model_type]
        self.defaults = DEFAULTS[model_type]
        self.aliases = ALIASES.get(model_type, {})
        self.notes: list[str] = []

    def given(self, key: str) -> bool:
        """Whether the file gives ``key`` (or an alias of it) with a non-null value."""
        k, v = self._lookup(key)
        return k is not None and v is not None

    def _lookup(self, key: str) -> tuple[str | None, Any]:
        names = [key] + [a for a, c in self.aliases.items() if c == key]
        present = [(n, self.cfg[n]) for n in names if n in self.cfg]
        if not present:
            return None, _MISSING
        k0, v0 = present[0]
        for k, v in present[1:]:
            if v != v0 or type(v) is not type(v0):
                raise ConfigError(f"{k0} ({_show(v0)}) and its alias {k} ({_show(v)}) disagree")
        if k0 != key:
            self.notes.append(f"key {k0} read as {key} (its alias in {self.cls}.attribute_map)")
        return k0, v0

    def _default(self, key: str, what: str, default: Any, shown: str | None) -> Any:
        if default is _MISSING:
            default = self.defaults[key]
        text = shown if shown is not None else _show(default)
        self.notes.append(f"key {key} {what}: used the transformers default {text} ({self.cls})")
        return default

    def size(
        self,
        key: str,
        default: Any = _MISSING,
        shown: str | None = None,
        *,
        nullable: bool = False,
        zero_ok: bool = False,
    ) -> int:
        """A positive (or, with ``zero_ok``, non-negative) integer size."""
        k, v = self._lookup(key)
        if k is None:
            return self._default(key, "missing", default, shown)
        if v is None and nullable:
            return self._default(key, "is null", default, shown)
        return check_size(k, v, zero_ok=zero_ok)

    def flag(self, key: str, default: Any = _MISSING, note: bool = True) -> bool:
        """A JSON boolean; ``note=False`` for switches whose default is unremarkable."""
        k, v = self._lookup(key)
        if k is None:
            if not note:
                return self.defaults[key] if default is _MISSING else default
            return self._default(key, "missing", default, None)
        if not isinstance(v, bool):
            raise ConfigError(f"{k} must be true or false, not {_show(v)}")
        return v

    def text(self, key: str, default: Any = _MISSING) -> str:
        k, v = self._lookup(key)
        if k is None:
            return self._default(key, "missing", default, None)
        if not isinstance(v, str):
            raise ConfigError(f"{k} must be a string, not {_show(v)}")
        return v

    def ignored_flag(self, key: str, implemented: bool, what: str) -> None:
        """A legacy key the 5.x model ignores: validate it, and note when it disagrees."""
        if key in self.cfg:
            v = self.cfg[key]
            if not isinstance(v, bool):
                raise ConfigError(f"{key} must be true or false, not {_show(v)}")
            if v != implemented:
                self.notes.append(
                    f"key {key} is {_show(v)}, but {self.model} (transformers 5.x) ignores it: "
                    f"counted as implemented, {what}"
                )

    def head_dim_must_match(self, hidden_key: str, hidden: int, heads_key: str, heads: int) -> None:
        """For models without a head_dim setting: a head_dim in the file must agree."""
        if "head_dim" in self.cfg and self.cfg["head_dim"] is not None:
            hd = check_size("head_dim", self.cfg["head_dim"])
            if hd * heads != hidden:
                raise ConfigError(
                    f"head_dim ({hd}) contradicts {hidden_key} / {heads_key} = {hidden} / {heads}: "
                    f"{self.model} has no head_dim setting and always uses {hidden_key} / {heads_key}"
                )


def check_size(key: str, v: Any, zero_ok: bool = False) -> int:
    """``v`` as a size named ``key``: a JSON integer, positive (or >= 0), at most 2**53."""
    kind = "a non-negative integer" if zero_ok else "a positive integer"
    if isinstance(v, _Huge):
        if v.digits.startswith("-"):
            raise ConfigError(f"{key} must be {kind}, not a negative {len(v.digits) - 1}-digit integer")
        raise ConfigError(f"{key} is {v!r}, implausibly large for a size (the limit is 2**53)")
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, float) and math.isfinite(v):
            raise ConfigError(f"{key} must be {kind}, not the number {v!r} (write it without a fraction or exponent)")
        if isinstance(v, str):
            raise ConfigError(f"{key} must be {kind}, not the string {_show(v)}")
        raise ConfigError(f"{key} must be {kind}, not {_show(v)}")
    if v < 0 or (v == 0 and not zero_ok):
        raise ConfigError(f"{key} must be {kind}, not {v}")
    if v > MAX_SIZE:
        raise ConfigError(f"{key} is {v}, implausibly large for a size (the limit is 2**53)")
    return v


# Config classes whose num_key_value_heads may be null (``int | None``): null means
# num_attention_heads (their __post_init__).  The others' strict int field refuses null.
_KV_HEADS_NULLABLE = ("llama", "qwen2", "qwen3")


def _heads(r: _Reader, h: int, h_key: str = "num_attention_heads") -> int:
    """num_key_value_heads, checked against h (null -> h where the config class says so)."""
    d = r.defaults["num_key_value_heads"]
    if r.mt in _KV_HEADS_NULLABLE:
        if d is None or ("num_key_value_heads" in r.cfg and r.cfg["num_key_value_heads"] is None):
            h_kv = r.size("num_key_value_heads", h, f"{h_key} = {h}", nullable=True)
        else:
            h_kv = r.size("num_key_value_heads")
    else:
        h_kv = r.size("num_key_value_heads")
    if h_kv > h:
        raise ConfigError(f"num_key_value_heads ({h_kv}) exceeds {h_key} ({h})")
    if h % h_kv:
        raise ConfigError(f"{h_key} ({h}) is not a multiple of num_key_value_heads ({h_kv})")
    return h_kv


# pad_token_id class defaults of the types whose token embedding is an nn.Embedding with
# padding_idx = pad_token_id (every supported type but GPT-2 and T5, whose embeddings have
# no padding_idx).  torch requires -vocab_size <= padding_idx < vocab_size.
_PAD_DEFAULTS: dict[str, int | None] = {
    "bert": 0,
    "roberta": 1,
    "albert": 0,
    "llama": None,
    "mistral": None,
    "mixtral": None,
    "qwen2": None,
    "qwen3": None,
    "gemma": 0,
    "bart": 1,
    "opt": 1,
    # --- seq2seq
    "mbart": 1,
    "pegasus": 0,
    "marian": 58100,
    "whisper": 50256,
}


def _check_padding_idx(r: _Reader) -> None:
    """pad_token_id must index a row of the token embedding, as nn.Embedding requires."""
    if r.mt not in _PAD_DEFAULTS:
        return
    pad = r.cfg["pad_token_id"] if "pad_token_id" in r.cfg else _PAD_DEFAULTS[r.mt]
    if pad is None:
        return
    if isinstance(pad, bool) or not isinstance(pad, int):
        raise ConfigError(f"pad_token_id must be an integer or null, not {_show(pad)}")
    key = r._lookup("vocab_size")[0] or "vocab_size"
    vocab = r.size("vocab_size")
    if not -vocab <= pad < vocab:
        given = "" if "pad_token_id" in r.cfg else f", the {r.cls} default"
        raise ConfigError(
            f"pad_token_id ({pad}{given}) is not a row of the {vocab}-row token embedding ({key}): "
            f"{r.model} uses it as the embedding's padding_idx, which must be below {key}"
        )


def _check_divides(hidden_key: str, hidden: int, heads_key: str, heads: int, model: str) -> None:
    if hidden % heads:
        raise ConfigError(f"{heads_key} ({heads}) does not divide {hidden_key} ({hidden}), which {model} requires")


# --------------------------------------------------------------------------- families


def _bert(r: _Reader) -> Spec:
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    _check_divides("hidden_size", d, "num_attention_heads", h, r.model)
    r.head_dim_must_match("hidden_size", d, "num_attention_heads", h)
    if r.flag("add_cross_attention", note=False):
        raise ConfigError(
            f"add_cross_attention is true: cross-attention layers in {r.model} are not modelled by symtrans"
        )
    pet = r.cfg.get("position_embedding_type", "absolute")
    if pet != "absolute":
        if not isinstance(pet, str):
            raise ConfigError(f"position_embedding_type must be a string, not {_show(pet)}")
        r.notes.append(
            f"key position_embedding_type is {_show(pet)}, but {r.model} (transformers 5.x) ignores it: "
            "counted with absolute positions (transformers 4.x added a (2L-1) x d_k distance "
            "embedding per layer)"
        )
    rows = r.size("max_position_embeddings")
    offset = 0
    if r.mt == "roberta":
        pad = r.cfg["pad_token_id"] if "pad_token_id" in r.cfg else r.defaults["pad_token_id"]
        if isinstance(pad, int) and not isinstance(pad, bool) and 0 <= pad and pad + 1 < rows:
            offset = pad + 1
            r.notes.append(
                f"RobertaEmbeddings numbers positions from padding_idx + 1 = {offset}: "
                f"the {rows} position rows are L_max = {rows - offset} positions + {offset} offset rows"
            )
    r.notes.append(f"{r.model} includes its pooler (add_pooling_layer=True, the default); no task head is counted")
    return Spec(
        family="encoder-only",
        sizes=dict(
            d_model=d,
            d_ff=r.size("intermediate_size"),
            h=h,
            N=r.size("num_hidden_layers"),
            V=r.size("vocab_size"),
            L_max=rows - offset,
        ),
        positional="learned",
        position_offset=offset,
        token_types=r.size("type_vocab_size", zero_ok=True),
        embedding_norm=True,
        pooler=True,
        norm="layernorm",
        bias=True,
        norm_position="post",
        final_norm=False,
    )


def _albert(r: _Reader) -> Spec:
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    _check_divides("hidden_size", d, "num_attention_heads", h, "AlbertAttention's output map")
    r.head_dim_must_match("hidden_size", d, "num_attention_heads", h)
    n = r.size("num_hidden_layers")
    groups, inner = r.size("num_hidden_groups"), r.size("inner_group_num")
    if (groups, inner) == (1, 1):
        share = "all"
        r.notes.append(f"num_hidden_groups = inner_group_num = 1: one layer's weights serve all {n} layers")
    elif (groups, inner) == (n, 1):
        share = "none"
    else:
        raise ConfigError(
            f"num_hidden_groups ({groups}) with inner_group_num ({inner}) makes layer groups; symtrans "
            f"models ALBERT with one layer shared by all (1, 1) or none shared ({n}, 1)"
        )
    r.notes.append(f"{r.model} includes its pooler (add_pooling_layer=True, the default); no task head is counted")
    return Spec(
        family="encoder-only",
        sizes=dict(
            d_model=d,
            d_ff=r.size("intermediate_size"),
            h=h,
            N=n,
            V=r.size("vocab_size"),
            L_max=r.size("max_position_embeddings"),
            E_emb=r.size("embedding_size"),
        ),
        positional="learned",
        token_types=r.size("type_vocab_size", zero_ok=True),
        embedding_norm=True,
        pooler=True,
        norm="layernorm",
        bias=True,
        norm_position="post",
        final_norm=False,
        share_layers=share,
    )


def _gpt2(r: _Reader) -> Spec:
    d = r.size("n_embd")
    h = r.size("n_head")
    _check_divides("n_embd", d, "n_head", h, r.model)
    r.head_dim_must_match("n_embd", d, "n_head", h)
    if r.flag("add_cross_attention", note=False):
        raise ConfigError(
            f"add_cross_attention is true: cross-attention layers in {r.model} are not modelled by symtrans"
        )
    d_ff = r.size("n_inner", 4 * d, f"4 * n_embd = {4 * d}", nullable=True)
    return Spec(
        family="decoder-only",
        sizes=dict(d_model=d, d_ff=d_ff, h=h, N=r.size("n_layer"), V=r.size("vocab_size"), L_max=r.size("n_positions")),
        positional="learned",
        norm="layernorm",
        bias=True,
        norm_position="pre",
        final_norm=True,
        tie_output=r.flag("tie_word_embeddings"),
    )


def _llama_like(r: _Reader) -> Spec:
    mt = r.mt
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    h_kv = _heads(r, h)
    sizes = dict(
        d_model=d,
        d_ff=r.size("intermediate_size"),
        h=h,
        N=r.size("num_hidden_layers"),
        V=r.size("vocab_size"),
        L_max=r.size("max_position_embeddings"),
    )
    if h_kv != h:
        sizes["h_kv"] = h_kv
    if mt == "llama" and d % h:  # LlamaConfig.validate_architecture, head_dim given or not
        raise ConfigError(f"num_attention_heads ({h}) does not divide hidden_size ({d}), which LlamaConfig requires")
    if mt in ("qwen3", "gemma"):
        sizes["d_k"] = r.size("head_dim")  # an explicit class default (128 / 256)
    elif r.given("head_dim"):
        sizes["d_k"] = r.size("head_dim")
    elif mt == "qwen2" and "head_dim" in r.cfg:
        raise ConfigError("head_dim must be a positive integer, not null (Qwen2Attention reads it when present)")
    else:
        if d % h:
            if mt == "llama":
                raise ConfigError(
                    f"num_attention_heads ({h}) does not divide hidden_size ({d}), which LlamaConfig requires"
                )
            sizes["d_k"] = d // h
            r.notes.append(
                f"head_dim not given: {r.cls} uses hidden_size // num_attention_heads = {d // h} "
                f"(rounded down: q_proj is {d} x {h * (d // h)})"
            )
        elif mt != "qwen2":
            r.size("head_dim", d // h, f"hidden_size // num_attention_heads = {d // h}", nullable=True)
    opts: dict[str, Any] = {}
    if mt == "llama":
        if r.flag("attention_bias"):
            opts["attention_bias"] = True
        if r.flag("mlp_bias"):
            opts["ffn_bias"] = True
    elif mt in ("qwen3", "gemma"):
        if r.flag("attention_bias"):
            opts["attention_bias"] = True
    elif mt == "qwen2":
        opts["qkv_bias"] = True
        r.notes.append("Qwen2Attention: q_proj, k_proj and v_proj have biases, o_proj has none")
    for key in ("attention_bias", "mlp_bias"):
        if key in r.cfg and key not in r.defaults:
            v = r.cfg[key]
            if not isinstance(v, bool):
                raise ConfigError(f"{key} must be true or false, not {_show(v)}")
            if v:
                r.notes.append(f"key {key} is true, but {r.model} (transformers 5.x) has no such setting: ignored")
    if mt == "mixtral":
        E = r.size("num_local_experts")
        k = r.size("num_experts_per_tok")
        if k > E:
            raise ConfigError(f"num_experts_per_tok ({k}) exceeds num_local_experts ({E})")
        sizes.update(E=E, k=k)
    if mt == "qwen3":
        opts["qk_norm"] = True
    w = _window(r, sizes["N"])
    if w is not None:
        sizes["w"] = w
    return Spec(
        family="decoder-only",
        sizes=sizes,
        positional="rotary",
        norm="rmsnorm",
        bias=False,
        ffn="geglu" if mt == "gemma" else "swiglu",
        final_norm=True,
        norm_position="pre",
        tie_output=r.flag("tie_word_embeddings"),
        **opts,
    )


# Qwen2Config / Qwen3Config defaults of sliding_window and max_window_layers (fields whose
# instance value differs: __post_init__ nulls sliding_window unless use_sliding_window).
_QWEN_WINDOW_DEFAULT = 4096
_QWEN_MAX_WINDOW_LAYERS = 28


def _window(r: _Reader, n_layers: int) -> int | None:
    """The sliding window every layer uses (the Spec's workload size ``w``), or None.

    MistralConfig and MixtralConfig: ``sliding_window`` (null: none) on every layer.
    Qwen2Config and Qwen3Config: ``sliding_window`` only with ``use_sliding_window``, on the
    layers that ``layer_types`` marks "sliding_attention" (by default the layers from
    ``max_window_layers`` on).  The window changes FLOPs and the KV cache, never parameters.

    Raises:
        ConfigError: a malformed window key, or some layers windowed and others not
            (symtrans has one window for the whole stack).
    """
    if r.mt not in ("mistral", "mixtral", "qwen2", "qwen3"):
        return None
    k, w = r._lookup("sliding_window")
    if k is None:  # MistralConfig 4096, MixtralConfig None; Qwen2/3Config 4096 (used only when switched on)
        w = r.defaults["sliding_window"] if r.mt in ("mistral", "mixtral") else _QWEN_WINDOW_DEFAULT
        if r.mt in ("mistral", "mixtral") and w is not None:
            r._default("sliding_window", "missing", w, None)
    if w is not None:
        w = check_size("sliding_window", w)
    if r.mt in ("mistral", "mixtral"):
        if w is not None:
            r.notes.append(f"sliding_window {w}: every layer attends to the last {w} positions (FLOPs and KV cache)")
        return w
    use = r.cfg.get("use_sliding_window", False)
    if not isinstance(use, bool):
        raise ConfigError(f"use_sliding_window must be true or false, not {_show(use)}")
    if not use:
        w = None
    types = r.cfg.get("layer_types")
    if types is None:
        first = r.cfg.get("max_window_layers", _QWEN_MAX_WINDOW_LAYERS)
        if isinstance(first, bool) or not isinstance(first, int):
            raise ConfigError(f"max_window_layers must be an integer, not {_show(first)}")
        types = ["sliding_attention" if w is not None and i >= first else "full_attention" for i in range(n_layers)]
    elif not isinstance(types, list) or any(t not in ("full_attention", "sliding_attention") for t in types):
        raise ConfigError('layer_types must be a list of "full_attention" and "sliding_attention"')
    elif len(types) != n_layers:
        raise ConfigError(f"layer_types has {len(types)} entries for num_hidden_layers {n_layers}")
    sliding = sum(t == "sliding_attention" for t in types) if w is not None else 0
    if sliding == 0:
        return None
    if sliding != n_layers:
        raise ConfigError(
            f"layer_types makes {sliding} of {n_layers} layers sliding-window ({w}) and the rest full: "
            "symtrans has one attention window for the whole stack"
        )
    r.notes.append(f"sliding_window {w} on every layer (use_sliding_window, layer_types): FLOPs and KV cache")
    return w


def _t5(r: _Reader) -> Spec:
    d = r.size("d_model")
    h = r.size("num_heads")
    n_enc = r.size("num_layers")
    # T5Config.__post_init__ sets num_decoder_layers from num_layers *before* the alias
    # num_hidden_layers is applied: a file giving only num_hidden_layers gets the class
    # default of 6 decoder layers.
    if "num_layers" in r.cfg:
        n_layers = check_size("num_layers", r.cfg["num_layers"])
        shown = f"num_layers = {n_layers}"
    else:
        n_layers = r.defaults["num_layers"]
        shown = f"num_layers' class default {n_layers} (num_hidden_layers, an alias, is applied after it)"
    n_dec = r.size("num_decoder_layers", n_layers, shown, nullable=True)
    proj = r.text("feed_forward_proj")
    parts = proj.split("-")
    if len(parts) > 2 or (len(parts) == 2 and parts[0] != "gated") or not parts[-1]:
        raise ConfigError(
            f'feed_forward_proj must be "ACT" or "gated-ACT" (e.g. "relu", "gated-gelu"), not {_show(proj)}'
        )
    gated = len(parts) == 2
    if "is_gated_act" in r.cfg:  # applied after __post_init__ derives it: the file's value wins
        given = r.cfg["is_gated_act"]
        if not isinstance(given, bool):
            raise ConfigError(f"is_gated_act must be true or false, not {_show(given)}")
        if given != gated:
            r.notes.append(
                f"is_gated_act is {_show(given)}, which T5 follows over feed_forward_proj {_show(proj)}: "
                f"{'three' if given else 'two'} maps per feed-forward network"
            )
        gated = given
    ffn = ("swiglu" if parts[-1] in ("silu", "swish") else "geglu") if gated else "mlp"
    tie = r.flag("tie_word_embeddings")
    if not tie:
        r.notes.append(
            "tie_word_embeddings is false: the LM head is its own d_model x V matrix, as in the "
            "T5 v1.1 checkpoints (transformers 5.x's T5Config forces tying on a fresh model, but "
            "from_pretrained keeps the checkpoint's separate lm_head)"
        )
    sizes = dict(d_model=d, d_ff=r.size("d_ff"), h=h, d_k=r.size("d_kv"), V=r.size("vocab_size"))
    if n_enc == n_dec:
        sizes["N"] = n_enc
    else:
        sizes.update(N_enc=n_enc, N_dec=n_dec)
    if "n_positions" in r.cfg and r.cfg["n_positions"] is not None:
        sizes["L_max"] = check_size("n_positions", r.cfg["n_positions"])
    return Spec(
        family="encoder-decoder",
        sizes=sizes,
        positional="relative",
        relative_buckets=r.size("relative_attention_num_buckets"),
        norm="rmsnorm",
        bias=False,
        ffn=ffn,
        final_norm=True,
        norm_position="pre",
        share_embeddings=True,
        tie_output=tie,
    )


# The BART family's layouts (transformers 5.x): positions, offset rows, embedding LayerNorm,
# final LayerNorm per stack, and where the layers put their norms.
_BART_FAMILY = {
    "bart": dict(positional="learned", position_offset=2, embedding_norm=True, final_norm=False, norm_position="post"),
    "mbart": dict(positional="learned", position_offset=2, embedding_norm=True, final_norm=True, norm_position="pre"),
    "pegasus": dict(positional="sinusoidal-table", embedding_norm=False, final_norm=True, norm_position="pre"),
    "marian": dict(positional="sinusoidal-table", embedding_norm=False, final_norm=False, norm_position="post"),
}


def _stack_sizes(r: _Reader, d: int, attention: str) -> dict[str, int]:
    """The encoder's and the decoder's heads, FFN widths and layers, the decoder's as its own
    sizes (h_dec, d_ff_dec; N_enc and N_dec) where they differ from the encoder's.  Each
    stack's heads must divide d_model (``attention`` names the class that requires it)."""
    h_enc, h_dec = r.size("encoder_attention_heads"), r.size("decoder_attention_heads")
    _check_divides("d_model", d, "encoder_attention_heads", h_enc, attention)
    _check_divides("d_model", d, "decoder_attention_heads", h_dec, attention)
    r.head_dim_must_match("d_model", d, "encoder_attention_heads", h_enc)
    ff_enc, ff_dec = r.size("encoder_ffn_dim"), r.size("decoder_ffn_dim")
    n_enc, n_dec = r.size("encoder_layers"), r.size("decoder_layers")
    sizes = dict(d_model=d, d_ff=ff_enc, h=h_enc)
    if h_dec != h_enc:
        sizes["h_dec"] = h_dec
    if ff_dec != ff_enc:
        sizes["d_ff_dec"] = ff_dec
    if n_enc == n_dec:
        sizes["N"] = n_enc
    else:
        sizes.update(N_enc=n_enc, N_dec=n_dec)
    if "scale_embedding" in r.cfg and not isinstance(r.cfg["scale_embedding"], bool):
        raise ConfigError(f"scale_embedding must be true or false, not {_show(r.cfg['scale_embedding'])}")
    return sizes


def _bart(r: _Reader) -> Spec:
    """BART, mBART, Pegasus and Marian (``_BART_FAMILY``).

    Untied (``tie_word_embeddings`` false), transformers 5.x unties every entry of the
    class's tie map and keeps ``model.shared``: four V x d_model matrices (shared, encoder
    and decoder inputs, LM head), the shared one read by no forward pass; symtrans counts
    all four, as ``model.parameters()`` does (``Spec.idle_shared_embedding``).  Marian
    with ``share_encoder_decoder_embeddings`` false has no shared table: the encoder reads
    V rows, the decoder and its head ``decoder_vocab_size`` rows (``V_dec``)."""
    layout = _BART_FAMILY[r.mt]
    d = r.size("d_model")
    sizes = _stack_sizes(r, d, f"{r.cls.removesuffix('Config')}Attention")
    if r.mt == "bart":
        r.ignored_flag("add_final_layer_norm", False, "without a final LayerNorm")
        r.ignored_flag("normalize_embedding", True, "with a LayerNorm after the embeddings")
        r.ignored_flag("normalize_before", False, "with post-norm layers (no parameter depends on it)")
    V = r.size("vocab_size")
    sizes.update(V=V, L_max=r.size("max_position_embeddings"))
    tie = r.flag("tie_word_embeddings")
    share = r.flag("share_encoder_decoder_embeddings", note=False) if r.mt == "marian" else True
    opts: dict[str, Any] = dict(share_embeddings=share and tie, tie_output=tie, idle_shared_embedding=share and not tie)
    if r.mt == "marian":
        v_dec = r.size("decoder_vocab_size", V, f"vocab_size = {V}", nullable=True)
        _check_pad_rows(r, v_dec, "decoder_vocab_size", "the decoder's embed_tokens")
        if share and v_dec != V:
            if tie:
                r.notes.append(
                    f"decoder_vocab_size ({v_dec}) differs from vocab_size ({V}), but with "
                    "share_encoder_decoder_embeddings the decoder reads the shared V-row table: ignored"
                )
            else:
                raise ConfigError(
                    f"decoder_vocab_size ({v_dec}) differs from vocab_size ({V}) with shared, untied embeddings: "
                    f"MarianMTModel then gives the decoder's table {v_dec} rows and its LM head {V}, "
                    "which symtrans does not model"
                )
        elif not share and v_dec != V:
            sizes["V_dec"] = v_dec
    if not tie:
        r.notes.append(
            "tie_word_embeddings is false: "
            + (
                "encoder input, decoder input and LM head are their own matrices, and transformers 5.x also "
                "keeps model.shared (V x d_model), which no forward pass reads: counted, as model.parameters() does"
                if share
                else "the LM head is its own matrix beside the decoder's table"
            )
        )
    if layout["positional"] == "sinusoidal-table":
        r.notes.append(
            f"{r.model} stores its sinusoidal positions as frozen max_position_embeddings x d_model parameters, "
            "one table per stack: counted (they are in model.parameters())"
        )
    return Spec(family="encoder-decoder", sizes=sizes, norm="layernorm", bias=True, **layout, **opts)


def _check_pad_rows(r: _Reader, rows: int, key: str, table: str) -> None:
    """pad_token_id must also index ``table`` (``rows`` rows), another padding_idx table."""
    pad = r.cfg["pad_token_id"] if "pad_token_id" in r.cfg else _PAD_DEFAULTS[r.mt]
    if isinstance(pad, int) and not isinstance(pad, bool) and not -rows <= pad < rows:
        given = "" if "pad_token_id" in r.cfg else f", the {r.cls} default"
        raise ConfigError(
            f"pad_token_id ({pad}{given}) is not a row of {table} ({key} = {rows}): "
            f"{r.model} uses it as that table's padding_idx, which must be below {key}"
        )


def _whisper(r: _Reader) -> Spec:
    """WhisperForConditionalGeneration: a Conv1d front end over num_mel_bins (C_in) mel
    channels, a frozen sinusoidal table of max_source_positions (L_src_max) rows in the
    encoder, a learned one of max_target_positions (L_tgt_max) rows and a V-row token table
    in the decoder, tied to ``proj_out`` by default; k_proj alone has no bias; pre-norm
    layers and a final LayerNorm per stack."""
    d = r.size("d_model")
    sizes = _stack_sizes(r, d, "WhisperAttention")
    src, tgt = r.size("max_source_positions"), r.size("max_target_positions")
    # The encoder always reads the whole window: L_src is fixed (the decoder's L_tgt is the workload's).
    sizes.update(V=r.size("vocab_size"), C_in=r.size("num_mel_bins"), L_src_max=src, L_tgt_max=tgt, L_src=src)
    r.notes.append(
        f"WhisperEncoder reads exactly 2 x max_source_positions = {2 * src} mel frames: the source length L_src "
        f"is {src} after the stride-2 convolution; its sinusoidal position table is a frozen parameter (counted)"
    )
    return Spec(
        family="encoder-decoder",
        sizes=sizes,
        frontend="conv1d",
        positional="sinusoidal-table",
        decoder_positional="learned",
        share_embeddings=False,
        tie_output=r.flag("tie_word_embeddings"),
        k_bias=False,
        bias=True,
        norm="layernorm",
        norm_position="pre",
        final_norm=True,
    )


def _pair(r: _Reader, key: str) -> tuple[int, int]:
    """ViTConfig's image_size or patch_size: one integer, or [height, width]."""
    k, v = r._lookup(key)
    if k is None:
        v = r._default(key, "missing", _MISSING, None)
    if isinstance(v, list) and len(v) == 2:
        return check_size(key, v[0]), check_size(key, v[1])
    if isinstance(v, list):
        raise ConfigError(f"{key} must be an integer or a list [height, width], not a list of {len(v)}")
    n = check_size(key, v)
    return n, n


def _vit(r: _Reader) -> Spec:
    """ViTModel with its pooler: a Conv2d patch embedding (num_channels -> hidden_size,
    kernel and stride patch_size), a CLS token, (patches + 1) learned positions, pre-norm
    BERT-shaped layers (Q, K, V biased by qkv_bias; the output map always), a final
    LayerNorm and the pooler (hidden_size -> pooler_output_size, tanh)."""
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    (ih, iw), (ph, pw) = _pair(r, "image_size"), _pair(r, "patch_size")
    if ph != pw:
        raise ConfigError(f"patch_size [{ph}, {pw}] is not square: symtrans models p x p patches")
    patches = (ih // ph) * (iw // pw)
    sizes = dict(
        d_model=d,
        d_ff=r.size("intermediate_size"),
        h=h,
        N=r.size("num_hidden_layers"),
        L_max=patches + 1,
        C_in=r.size("num_channels"),
        p=ph,
    )
    r.notes.append(
        f"image {ih} x {iw} in {ph} x {pw} patches: {patches} patches + the CLS token = {patches + 1} tokens "
        "per image (L_max, the rows of the position table)"
    )
    if r.given("head_dim"):  # ViTSelfAttention reads it with getattr
        sizes["d_k"] = r.size("head_dim")
    elif "head_dim" in r.cfg:
        raise ConfigError("head_dim must be a positive integer, not null (ViTSelfAttention reads it when present)")
    elif d % h:
        if d < h:
            raise ConfigError(f"num_attention_heads ({h}) exceeds hidden_size ({d}): the heads would be 0 wide")
        sizes["d_k"] = d // h
        r.notes.append(f"head_dim not given: ViTSelfAttention uses hidden_size // num_attention_heads = {d // h}")
    pool = r.size("pooler_output_size", d, f"hidden_size = {d}", nullable=True)
    if pool != d:
        sizes["d_pool"] = pool
    r.notes.append(f"{r.model} includes its pooler (add_pooling_layer=True, the default); no task head is counted")
    return Spec(
        family="encoder-only",
        sizes=sizes,
        frontend="patch",
        positional="learned",
        pooler=True,
        qkv_bias=r.flag("qkv_bias", note=False),
        bias=True,
        norm="layernorm",
        norm_position="pre",
        final_norm=True,
    )


def _opt(r: _Reader) -> Spec:
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    _check_divides("hidden_size", d, "num_attention_heads", h, "OPTAttention")
    r.head_dim_must_match("hidden_size", d, "num_attention_heads", h)
    proj = r.size("word_embed_proj_dim", d, f"hidden_size = {d}", nullable=True)
    if proj != d:
        raise ConfigError(
            f"word_embed_proj_dim ({proj}) differs from hidden_size ({d}): OPT's project_in and "
            "project_out maps are not modelled by symtrans"
        )
    before = r.flag("do_layer_norm_before")
    final = before and not r.flag("_remove_final_layer_norm", note=False)
    affine = r.flag("layer_norm_elementwise_affine")
    return Spec(
        family="decoder-only",
        sizes=dict(
            d_model=d,
            d_ff=r.size("ffn_dim"),
            h=h,
            N=r.size("num_hidden_layers"),
            V=r.size("vocab_size"),
            L_max=r.size("max_position_embeddings"),
        ),
        positional="learned",
        position_offset=2,
        norm="layernorm" if affine else "none",
        bias=r.flag("enable_bias"),
        norm_position="pre" if before else "post",
        final_norm=final,
        tie_output=r.flag("tie_word_embeddings"),
    )


_FAMILIES = {
    "bert": _bert,
    "roberta": _bert,
    "albert": _albert,
    "gpt2": _gpt2,
    "llama": _llama_like,
    "mistral": _llama_like,
    "mixtral": _llama_like,
    "qwen2": _llama_like,
    "qwen3": _llama_like,
    "gemma": _llama_like,
    "t5": _t5,
    "bart": _bart,
    "opt": _opt,
    # --- seq2seq (mbart, pegasus, marian, whisper, vit)
    "mbart": _bart,
    "pegasus": _bart,
    "marian": _bart,
    "whisper": _whisper,
    "vit": _vit,
}

_NOT_YET: dict[str, str] = {}  # model_type -> why it cannot be counted yet


def spec_from_config(cfg: dict[str, Any], name: str = "config") -> tuple[Spec, tuple[str, ...]]:
    """Map a parsed Hugging Face config dict to a Spec.

    Args:
        cfg: the parsed ``config.json``.
        name: what to call the config in error messages (a path or a model name).

    Returns:
        ``(spec, notes)``: notes list every transformers default used (with its config
        class) and every assumption made.

    Raises:
        ValueError: one sentence, starting with ``name``, naming the offending key.
    """
    try:
        return _spec_from_config(cfg)
    except ValueError as e:
        raise ConfigError(f"{name}: {e}") from None


def _spec_from_config(cfg: Any) -> tuple[Spec, tuple[str, ...]]:
    if not isinstance(cfg, dict):
        raise ConfigError(f"the top level must be a JSON object, not {_show(cfg)}")
    bad_key = next((k for k in cfg if not isinstance(k, str)), None)
    if bad_key is not None:  # a dict from Python code; JSON keys are always strings
        raise ConfigError(f"config keys must be strings, as in JSON, not {bad_key!r} ({type(bad_key).__name__})")
    supported = ", ".join(SUPPORTED)
    if "model_type" not in cfg:
        raise ConfigError(f"model_type is missing; supported model types: {supported}")
    mt = cfg["model_type"]
    if not isinstance(mt, str):
        raise ConfigError(f"model_type must be a string, not {_show(mt)}; supported model types: {supported}")
    if mt in _NOT_YET:
        raise ConfigError(
            f"model_type {_show(mt)} is not supported yet ({_NOT_YET[mt]}); supported model types: {supported}"
        )
    if mt not in _FAMILIES:
        raise ConfigError(f"model_type {_show(mt)} is not supported; supported model types: {supported}")
    r = _Reader(cfg, mt)
    unknown = unknown_keys(cfg, mt)  # typos are errors before any default hides them
    _check_padding_idx(r)
    spec = _FAMILIES[mt](r)
    notes = [f"counted as transformers {r.model} (defaults from {r.cls}, transformers 5.x)"]
    if unknown:
        notes.append(
            f"key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} not known to {r.cls} "
            f"(transformers 5.x): ignored"
        )
    seen: set[str] = set()
    for n in r.notes:  # aliases may be noted more than once
        if n not in seen:
            seen.add(n)
            notes.append(n)
    return spec, tuple(notes)


def known_keys(model_type: str) -> frozenset[str]:
    """The keys a config.json of ``model_type`` may hold: its config class's, COMMON_KEYS,
    and those symtrans reads (DEFAULTS and ALIASES)."""
    return (
        CONFIG_KEYS[model_type]
        | COMMON_KEYS
        | frozenset(DEFAULTS[model_type])
        | frozenset(ALIASES.get(model_type, {}))
        | {"head_dim", "attention_bias", "mlp_bias", "scale_embedding"}
    )


def unknown_keys(cfg: dict[str, Any], model_type: str) -> list[str]:
    """The keys of ``cfg`` unknown to ``model_type``'s config class, in file order.

    Raises:
        ConfigError: naming every unknown key that is a near miss (difflib ratio >=
            TYPO_CUTOFF, or equal ignoring case) of a key that changes the count
            (``param_keys``), with the key it resembles: such a typo would be ignored and
            the real key's default used, silently changing the count.  A key that is real
            elsewhere (REAL_KEYS: classifier_dropout, layer_norm_eps, use_sliding_window, ...)
            is never a typo, only unknown to this class.
            More than MAX_UNKNOWN_KEYS unknown keys are refused outright, so the work
            stays linear in the number of keys.
    """
    import difflib

    known = known_keys(model_type)
    targets = param_keys(model_type)
    unknown = [key for key in cfg if key not in known]  # one set lookup per key: linear
    if len(unknown) > MAX_UNKNOWN_KEYS:
        raise ConfigError(
            f"{len(unknown):,} keys are unknown to {CLASSES[model_type][0]} (at most {MAX_UNKNOWN_KEYS:,} "
            f"are accepted); this is not a config.json of a {model_type} model"
        )
    by_lower = {k.lower(): k for k in targets}
    typos, others = [], []
    for key in unknown:
        if key in known:
            continue
        match = None
        if key not in REAL_KEYS:
            match = by_lower.get(key.lower()) or next(
                iter(difflib.get_close_matches(key, targets, 1, TYPO_CUTOFF)), None
            )
        if match:
            typos.append(f"{key} (did you mean {match}?)")
        else:
            others.append(key)
    if typos:
        cls = CLASSES[model_type][0]
        raise ConfigError(
            f"unknown key{'s' if len(typos) > 1 else ''} {', '.join(typos)}: {cls} has no such key, "
            "so it would be ignored and a default used instead; fix the spelling"
        )
    return others
