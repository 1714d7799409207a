"""The key tables of the model types read by hand in ``catalog/hf_config.py``: each config
class's keys (``CONFIG_KEYS``), the keys that change no parameter with their reason
(``NO_PARAM_EFFECT``), the keys the modeling files read with ``getattr`` and the legacy keys of
older releases, and the tables of the language models that exist only inside a multimodal
wrapper (``TEXT_ONLY*``).  ``hf_config`` adds the records' entries at import.  Source:
transformers 5.24's configuration and modeling classes (``tests/test_hf_config.py`` and the
key audit of ``tests/test_model_types.py`` check them against the installed transformers).
"""

from __future__ import annotations

from typing import Any

from symtrans.catalog.models.record import DECODER_NO_EFFECT, WHY, no_effect
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


# The keys of each config class (transformers 5.24: the ``__init__`` parameters, the
# ``to_dict()`` keys of a default instance and the ``attribute_map`` aliases, minus the
# PretrainedConfig ones in COMMON_KEYS).  A key of a config.json outside these, COMMON_KEYS
# and the keys symtrans reads is unknown: an error when it is a near miss of a known key
# (a typo such as num_key_value_head, which would silently fall back to a default), else
# a note.  ``tests/test_hf_config.py`` checks the table against the installed transformers.
# --- decoder types (types-dec): Gemma2Config and Gemma3TextConfig have the same keys
_GEMMA2_KEYS = (
    "attention_bias attention_dropout attn_logit_softcapping bos_token_id eos_token_id final_logit_softcapping "
    "head_dim hidden_activation hidden_size initializer_range intermediate_size layer_types max_position_embeddings "
    "num_attention_heads num_hidden_layers num_key_value_heads pad_token_id query_pre_attn_scalar rms_norm_eps "
    "rope_parameters sliding_window tie_word_embeddings use_bidirectional_attention use_cache vocab_size"
)
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
        # --- decoder types (types-dec)
        "granite": "attention_bias attention_dropout attention_multiplier bos_token_id embedding_multiplier eos_token_id "
        "hidden_act hidden_size initializer_range intermediate_size logits_scaling max_position_embeddings mlp_bias "
        "num_attention_heads num_hidden_layers num_key_value_heads pad_token_id residual_multiplier rms_norm_eps "
        "rope_parameters tie_word_embeddings use_cache vocab_size",
        "phi3": "attention_dropout bos_token_id embd_pdrop eos_token_id hidden_act hidden_size initializer_range "
        "intermediate_size max_position_embeddings num_attention_heads num_hidden_layers num_key_value_heads "
        "original_max_position_embeddings pad_token_id resid_pdrop rms_norm_eps rope_parameters sliding_window "
        "tie_word_embeddings use_cache vocab_size",
        "starcoder2": "attention_dropout bos_token_id embedding_dropout eos_token_id hidden_act hidden_size "
        "initializer_range intermediate_size max_position_embeddings norm_epsilon num_attention_heads "
        "num_hidden_layers num_key_value_heads pad_token_id residual_dropout rope_parameters sliding_window "
        "tie_word_embeddings use_bias use_cache vocab_size",
        "gemma2": _GEMMA2_KEYS,
        "gemma3_text": _GEMMA2_KEYS,
        "olmo": "attention_bias attention_dropout bos_token_id clip_qkv eos_token_id hidden_act hidden_size "
        "initializer_range intermediate_size max_position_embeddings num_attention_heads num_hidden_layers "
        "num_key_value_heads pad_token_id rope_parameters tie_word_embeddings use_cache vocab_size",
        "olmo2": "attention_bias attention_dropout bos_token_id eos_token_id hidden_act hidden_size initializer_range "
        "intermediate_size max_position_embeddings num_attention_heads num_hidden_layers num_key_value_heads "
        "pad_token_id rms_norm_eps rope_parameters tie_word_embeddings use_cache vocab_size",
        "cohere": "attention_bias attention_dropout bos_token_id eos_token_id hidden_act hidden_size initializer_range "
        "intermediate_size layer_norm_eps logit_scale max_position_embeddings num_attention_heads "
        "num_hidden_layers num_key_value_heads pad_token_id rope_parameters tie_word_embeddings use_cache "
        "use_qk_norm vocab_size",
        "stablelm": "attention_dropout bos_token_id eos_token_id hidden_act hidden_dropout hidden_size "
        "initializer_range intermediate_size layer_norm_eps max_position_embeddings num_attention_heads "
        "num_hidden_layers num_key_value_heads pad_token_id qk_layernorm rope_parameters tie_word_embeddings "
        "use_cache use_parallel_residual use_qkv_bias vocab_size",
        "phi": "attention_dropout bos_token_id embd_pdrop eos_token_id hidden_act hidden_size initializer_range "
        "intermediate_size layer_norm_eps max_position_embeddings num_attention_heads num_hidden_layers "
        "num_key_value_heads pad_token_id qk_layernorm resid_pdrop rope_parameters tie_word_embeddings use_cache "
        "vocab_size",
        "gpt_neox": "attention_bias attention_dropout bos_token_id classifier_dropout eos_token_id hidden_act "
        "hidden_dropout hidden_size initializer_range intermediate_size is_decoder layer_norm_eps "
        "max_position_embeddings num_attention_heads num_hidden_layers pad_token_id rope_parameters "
        "tie_word_embeddings use_cache use_parallel_residual vocab_size",
        "gptj": "activation_function attn_pdrop bos_token_id embd_pdrop eos_token_id hidden_size initializer_range "
        "layer_norm_epsilon max_position_embeddings n_embd n_head n_inner n_layer n_positions num_attention_heads "
        "num_hidden_layers pad_token_id resid_pdrop rotary_dim tie_word_embeddings use_cache vocab_size",
        "falcon": "activation alibi attention_dropout bias bos_token_id eos_token_id ffn_hidden_size hidden_dropout "
        "hidden_size initializer_range layer_norm_epsilon max_position_embeddings multi_query "
        "new_decoder_architecture num_attention_heads num_hidden_layers num_kv_heads num_ln_in_parallel_attn "
        "pad_token_id parallel_attn rope_parameters tie_word_embeddings use_cache vocab_size",
        # --- types-moe
        "qwen2_moe": "attention_dropout bos_token_id decoder_sparse_step eos_token_id hidden_act hidden_size "
        "initializer_range intermediate_size layer_types max_position_embeddings max_window_layers mlp_only_layers "
        "moe_intermediate_size norm_topk_prob num_attention_heads num_experts num_experts_per_tok num_hidden_layers "
        "num_key_value_heads output_router_logits pad_token_id qkv_bias rms_norm_eps rope_parameters "
        "router_aux_loss_coef shared_expert_intermediate_size sliding_window tie_word_embeddings use_cache "
        "use_sliding_window vocab_size",
        "qwen3_moe": "attention_bias attention_dropout bos_token_id decoder_sparse_step eos_token_id hidden_act "
        "hidden_size initializer_range intermediate_size max_position_embeddings mlp_only_layers "
        "moe_intermediate_size norm_topk_prob num_attention_heads num_experts num_experts_per_tok num_hidden_layers "
        "num_key_value_heads num_local_experts output_router_logits pad_token_id rms_norm_eps rope_parameters "
        "router_aux_loss_coef sliding_window tie_word_embeddings use_cache use_sliding_window vocab_size",
        "deepseek_v2": "attention_bias attention_dropout bos_token_id eos_token_id first_k_dense_replace head_dim "
        "hidden_act hidden_size initializer_range intermediate_size kv_lora_rank max_position_embeddings mlp_bias "
        "moe_intermediate_size n_group n_routed_experts n_shared_experts norm_topk_prob num_attention_heads "
        "num_experts num_experts_per_tok num_hidden_layers num_key_value_heads output_router_logits pad_token_id "
        "pretraining_tp q_lora_rank qk_head_dim qk_nope_head_dim qk_rope_head_dim rms_norm_eps rope_parameters "
        "routed_scaling_factor tie_word_embeddings topk_group topk_method use_cache v_head_dim vocab_size",
        "deepseek_v3": "attention_bias attention_dropout bos_token_id eos_token_id first_k_dense_replace head_dim "
        "hidden_act hidden_size initializer_range intermediate_size kv_lora_rank max_position_embeddings "
        "moe_intermediate_size n_group n_routed_experts n_shared_experts norm_topk_prob num_attention_heads "
        "num_experts_per_tok num_hidden_layers num_key_value_heads num_local_experts num_mtp_layers "
        "num_nextn_predict_layers output_router_logits pad_token_id pretraining_tp q_lora_rank qk_head_dim "
        "qk_nope_head_dim qk_rope_head_dim rms_norm_eps rope_interleave rope_parameters routed_scaling_factor "
        "tie_word_embeddings topk_group use_cache v_head_dim vocab_size",
        "gpt_oss": "attention_bias attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size "
        "initializer_range intermediate_size layer_types max_position_embeddings num_attention_heads num_experts "
        "num_experts_per_tok num_hidden_layers num_key_value_heads num_local_experts output_router_logits "
        "pad_token_id rms_norm_eps rope_parameters router_aux_loss_coef sliding_window swiglu_alpha swiglu_limit "
        "tie_word_embeddings use_cache vocab_size",
        "llama4_text": "attention_bias attention_chunk_size attention_dropout attn_scale attn_temperature_tuning "
        "bos_token_id eos_token_id floor_scale head_dim hidden_act hidden_size initializer_range "
        "interleave_moe_layer_step intermediate_size intermediate_size_mlp layer_types max_position_embeddings "
        "moe_layers no_rope_layer_interval no_rope_layers num_attention_heads num_experts_per_tok "
        "num_hidden_layers num_key_value_heads num_local_experts output_router_logits pad_token_id rms_norm_eps "
        "rope_parameters router_aux_loss_coef router_jitter_noise tie_word_embeddings use_cache use_qk_norm "
        "vocab_size",
        # --- encoders (types-enc)
        "distilbert": "activation attention_dropout bos_token_id dim dropout eos_token_id hidden_dim hidden_size "
        "initializer_range max_position_embeddings n_heads n_layers num_attention_heads num_hidden_layers "
        "pad_token_id qa_dropout seq_classif_dropout sinusoidal_pos_embds tie_word_embeddings vocab_size",
        "xlm-roberta": "add_cross_attention attention_probs_dropout_prob bos_token_id classifier_dropout "
        "eos_token_id hidden_act hidden_dropout_prob hidden_size initializer_range intermediate_size is_decoder "
        "layer_norm_eps max_position_embeddings num_attention_heads num_hidden_layers pad_token_id "
        "tie_word_embeddings type_vocab_size use_cache vocab_size",
        "electra": "add_cross_attention attention_probs_dropout_prob bos_token_id classifier_dropout "
        "embedding_size eos_token_id hidden_act hidden_dropout_prob hidden_size initializer_range "
        "intermediate_size is_decoder layer_norm_eps max_position_embeddings num_attention_heads "
        "num_hidden_layers pad_token_id summary_activation summary_last_dropout summary_type summary_use_proj "
        "tie_word_embeddings type_vocab_size use_cache vocab_size",
        "deberta-v2": "attention_probs_dropout_prob bos_token_id eos_token_id hidden_act hidden_dropout_prob "
        "hidden_size initializer_range intermediate_size layer_norm_eps legacy max_position_embeddings "
        "max_relative_positions num_attention_heads num_hidden_layers pad_token_id pooler_dropout "
        "pooler_hidden_act pos_att_type position_biased_input relative_attention tie_word_embeddings "
        "type_vocab_size vocab_size",
        # --- gpt2-like (learned positions / ALiBi) and multimodal wrappers
        # (GPTNeoConfig writes attention_layers, expanded from attention_types; a file's list wins)
        # (GPTBigCodeConfig writes num_key_value_heads, derived from multi_query; the model reads multi_query)
        "llava": "image_seq_length image_token_id image_token_index multimodal_projector_bias projector_hidden_act "
        "text_config tie_word_embeddings vision_config vision_feature_layer vision_feature_select_strategy",
        "qwen2_vl": "image_token_id text_config tie_word_embeddings video_token_id vision_config "
        "vision_end_token_id vision_start_token_id",
        "gemma3": "boi_token_id boi_token_index eoi_token_id eoi_token_index image_token_id image_token_index "
        "initializer_range mm_tokens_per_image text_config tie_word_embeddings vision_config",
        "llama4": "boi_token_id boi_token_index eoi_token_id eoi_token_index image_token_id image_token_index "
        "text_config tie_word_embeddings vision_config",
        "qwen3_vl": "image_token_id text_config tie_word_embeddings video_token_id vision_config "
        "vision_end_token_id vision_start_token_id",
        "qwen3_vl_moe": "image_token_id text_config tie_word_embeddings video_token_id vision_config "
        "vision_end_token_id vision_start_token_id",
        "gemma4": "audio_config audio_token_id boa_token_id boi_token_id eoa_token_index eoi_token_id "
        "image_token_id initializer_range text_config tie_word_embeddings video_token_id vision_config",
        "kimi_k25": "image_token_id projection_hidden_size projection_layer_norm_eps text_config "
        "tie_word_embeddings video_token_id vision_config vision_end_token_id vision_start_token_id",
        "qwen2_5_vl": "image_token_id text_config tie_word_embeddings video_token_id vision_config "
        "vision_end_token_id vision_start_token_id",
        "paligemma": "hidden_size image_token_id image_token_index projection_dim text_config tie_word_embeddings "
        "vision_config vocab_size",
        "idefics3": "image_token_id scale_factor text_config tie_word_embeddings use_cache vision_config",
        "smolvlm": "image_token_id scale_factor text_config tie_word_embeddings use_cache vision_config",
        "qwen3_5": "image_token_id text_config tie_word_embeddings video_token_id vision_config "
        "vision_end_token_id vision_start_token_id",
        "qwen3_5_moe": "image_token_id text_config tie_word_embeddings video_token_id vision_config "
        "vision_end_token_id vision_start_token_id",
        "mistral3": "image_token_id image_token_index multimodal_projector_bias projector_hidden_act "
        "spatial_merge_size text_config tie_word_embeddings vision_config vision_feature_layer",
        "llava_next": "image_grid_pinpoints image_seq_length image_token_id image_token_index multimodal_projector_bias "
        "projector_hidden_act text_config tie_word_embeddings vision_config vision_feature_layer "
        "vision_feature_select_strategy",
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
# GPT-2's n_ctx, T5's n_positions and output_past, BART's and ALBERT's legacy switches, DistilBERT's tie_weights_).
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
    tie_weights_
    n_embed
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
_WHY = WHY  # the reasons live with the records (catalog/models/record.py)


def _no_effect(**groups: str) -> dict[str, str]:
    return no_effect(**groups)


_DECODER_NO_EFFECT = DECODER_NO_EFFECT
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

# --- decoder types (types-dec)
_GEMMA2_NO_EFFECT = dict(
    positions="max_position_embeddings",
    dropout="attention_dropout",
    token="bos_token_id eos_token_id pad_token_id",
    act="hidden_activation",
    init="initializer_range",
    eps="rms_norm_eps",
    rope="rope_parameters",
    cache="use_cache",
    scale="attn_logit_softcapping final_logit_softcapping query_pre_attn_scalar",
    window="sliding_window layer_types",
    mask="use_bidirectional_attention",
)

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
    # --- decoder types (types-dec)
    "granite": _no_effect(
        **_DECODER_NO_EFFECT,
        scale="attention_multiplier embedding_multiplier logits_scaling residual_multiplier",
    ),
    "phi3": _no_effect(
        **{
            **_DECODER_NO_EFFECT,
            "dropout": "attention_dropout embd_pdrop resid_pdrop",
            "rope": "rope_parameters original_max_position_embeddings",
        },
        window="sliding_window",
    ),
    "starcoder2": _no_effect(
        **{
            **_DECODER_NO_EFFECT,
            "eps": "norm_epsilon",
            "dropout": "attention_dropout embedding_dropout residual_dropout",
        },
        window="sliding_window",
    ),
    "gemma2": _no_effect(**_GEMMA2_NO_EFFECT),
    "gemma3_text": _no_effect(**_GEMMA2_NO_EFFECT),
    "olmo": _no_effect(**{k: v for k, v in _DECODER_NO_EFFECT.items() if k != "eps"}, clip="clip_qkv"),
    "olmo2": _no_effect(**_DECODER_NO_EFFECT),
    "cohere": _no_effect(**{**_DECODER_NO_EFFECT, "eps": "layer_norm_eps"}, scale="logit_scale"),
    "stablelm": _no_effect(
        **{**_DECODER_NO_EFFECT, "eps": "layer_norm_eps", "dropout": "attention_dropout hidden_dropout"}
    ),
    "phi": _no_effect(
        **{**_DECODER_NO_EFFECT, "eps": "layer_norm_eps", "dropout": "attention_dropout embd_pdrop resid_pdrop"}
    ),
    "gpt_neox": _no_effect(
        **{
            **_DECODER_NO_EFFECT,
            "eps": "layer_norm_eps",
            "dropout": "attention_dropout classifier_dropout hidden_dropout",
        },
        mask="is_decoder",
        parallel="use_parallel_residual",
    ),
    "gptj": _no_effect(
        positions="max_position_embeddings n_positions",
        dropout="attn_pdrop embd_pdrop resid_pdrop",
        token="bos_token_id eos_token_id pad_token_id",
        act="activation_function",
        init="initializer_range",
        eps="layer_norm_epsilon",
        rope="rotary_dim",
        cache="use_cache",
    ),
    "falcon": _no_effect(
        positions="max_position_embeddings",
        dropout="attention_dropout hidden_dropout",
        token="bos_token_id eos_token_id pad_token_id",
        act="activation",
        init="initializer_range",
        eps="layer_norm_epsilon",
        rope="rope_parameters",
        alibi="alibi",
        cache="use_cache",
    ),
    # --- types-moe
    "qwen2_moe": _no_effect(
        **{**_DECODER_NO_EFFECT, "cache": "use_cache output_router_logits"},
        window=_QWEN_WINDOW,
        loss="router_aux_loss_coef",
        routing="norm_topk_prob",
    ),
    "qwen3_moe": _no_effect(
        **{**_DECODER_NO_EFFECT, "cache": "use_cache output_router_logits"},
        window="sliding_window use_sliding_window",
        loss="router_aux_loss_coef",
        routing="norm_topk_prob",
    ),
    "deepseek_v2": _no_effect(
        **{**_DECODER_NO_EFFECT, "cache": "use_cache output_router_logits"},
        tp="pretraining_tp",
        routing="n_group topk_group topk_method routed_scaling_factor norm_topk_prob",
        **{"mla dims": "head_dim qk_head_dim", "kv heads": "num_key_value_heads"},
    ),
    "deepseek_v3": _no_effect(
        **{
            **_DECODER_NO_EFFECT,
            "cache": "use_cache output_router_logits",
            "rope": "rope_parameters rope_interleave",
        },
        tp="pretraining_tp",
        routing="n_group topk_group routed_scaling_factor norm_topk_prob",
        mtp="num_mtp_layers num_nextn_predict_layers",
        **{"mla dims": "head_dim qk_head_dim", "kv heads": "num_key_value_heads"},
    ),
    "gpt_oss": _no_effect(
        **{
            **_DECODER_NO_EFFECT,
            "cache": "use_cache output_router_logits",
            "act": "hidden_act swiglu_alpha swiglu_limit",
        },
        window="sliding_window layer_types",
        loss="router_aux_loss_coef",
    ),
    "llama4_text": _no_effect(
        **{**_DECODER_NO_EFFECT, "cache": "use_cache output_router_logits"},
        window="attention_chunk_size layer_types",
        loss="router_aux_loss_coef router_jitter_noise",
        scale="attn_temperature_tuning floor_scale attn_scale",
        **{"l2 norm": "use_qk_norm", "rope layers": "no_rope_layers no_rope_layer_interval"},
    ),
    # --- encoders (types-enc)
    "distilbert": _no_effect(
        dropout="attention_dropout dropout qa_dropout seq_classif_dropout",
        act="activation",
        init="initializer_range",
        token="bos_token_id eos_token_id pad_token_id",
        frozen="sinusoidal_pos_embds",
        **{"no head": "tie_word_embeddings"},
    ),
    "xlm-roberta": _no_effect(**_BERT_NO_EFFECT, **{"no head": "tie_word_embeddings"}),
    "electra": _no_effect(
        **{**_BERT_NO_EFFECT, "dropout": _BERT_NO_EFFECT["dropout"] + " summary_last_dropout"},
        **{"no head": "tie_word_embeddings summary_activation summary_type summary_use_proj"},
    ),
    "deberta-v2": _no_effect(
        dropout="attention_probs_dropout_prob hidden_dropout_prob",
        act="hidden_act",
        init="initializer_range",
        eps="layer_norm_eps",
        token="bos_token_id eos_token_id pad_token_id",
        **{"no head": "tie_word_embeddings legacy", "pooler head": "pooler_dropout pooler_hidden_act"},
    ),
    # --- gpt2-like (learned positions / ALiBi) and multimodal wrappers
    "llava": _no_effect(
        **{"image tokens": "image_seq_length image_token_id image_token_index vision_feature_select_strategy"},
        act="projector_hidden_act",
    ),
    "qwen2_vl": _no_effect(
        **{"image tokens": "image_token_id video_token_id vision_end_token_id vision_start_token_id"},
    ),
    "gemma3": _no_effect(
        **{
            "image tokens": "boi_token_id boi_token_index eoi_token_id eoi_token_index image_token_id "
            "image_token_index mm_tokens_per_image"
        },
        init="initializer_range",
    ),
    "mistral3": _no_effect(**{"image tokens": "image_token_id image_token_index"}, act="projector_hidden_act"),
    "llama4": _no_effect(
        **{
            "image tokens": "boi_token_id boi_token_index eoi_token_id eoi_token_index image_token_id "
            "image_token_index",
            "text ties": "tie_word_embeddings",
        },
    ),
    # PaliGemmaModel reads text_config's hidden_size and vocab_size; the top-level copies are unread
    "paligemma": _no_effect(
        **{
            "image tokens": "image_token_id image_token_index",
            "unread copy": "hidden_size vocab_size",
        },
    ),
    "idefics3": _no_effect(**{"image tokens": "image_token_id"}, cache="use_cache"),
    "smolvlm": _no_effect(**{"image tokens": "image_token_id"}, cache="use_cache"),
    "qwen3_vl": _no_effect(
        **{"image tokens": "image_token_id video_token_id vision_end_token_id vision_start_token_id"},
    ),
    "qwen3_vl_moe": _no_effect(
        **{"image tokens": "image_token_id video_token_id vision_end_token_id vision_start_token_id"},
    ),
    "gemma4": _no_effect(
        **{
            "image tokens": "audio_token_id boa_token_id boi_token_id eoa_token_index eoi_token_id image_token_id "
            "video_token_id"
        },
        init="initializer_range",
    ),
    "kimi_k25": _no_effect(
        **{"image tokens": "image_token_id video_token_id vision_end_token_id vision_start_token_id"},
        eps="projection_layer_norm_eps",
    ),
    "qwen2_5_vl": _no_effect(
        **{"image tokens": "image_token_id video_token_id vision_end_token_id vision_start_token_id"},
    ),
    "qwen3_5": _no_effect(
        **{"image tokens": "image_token_id video_token_id vision_end_token_id vision_start_token_id"},
    ),
    "qwen3_5_moe": _no_effect(
        **{"image tokens": "image_token_id video_token_id vision_end_token_id vision_start_token_id"},
    ),
    "llava_next": _no_effect(
        **{
            "image tokens": "image_grid_pinpoints image_seq_length image_token_id image_token_index "
            "vision_feature_select_strategy"
        },
        act="projector_hidden_act",
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

# Keys that are not fields of the config class but that the modeling file reads with
# getattr, changing the parameter count when a config.json gives them (Qwen2Attention:
# ``getattr(config, "head_dim", hidden_size // num_attention_heads)``).  The key audit of
# tests/test_model_types.py changes these too.
GETATTR_KEYS: dict[str, tuple[str, ...]] = {"qwen2": ("head_dim",)}
# --- types-moe (Qwen2MoeAttention, Qwen3MoeAttention: getattr(config, "head_dim", d // h))
GETATTR_KEYS.update({"qwen2_moe": ("head_dim",), "qwen3_moe": ("head_dim",)})
# --- decoder types (types-dec): the attention reads getattr(config, "head_dim", d // h)
GETATTR_KEYS.update({mt: ("head_dim",) for mt in ("granite", "phi3", "starcoder2", "olmo", "olmo2", "cohere", "phi")})
GETATTR_KEYS["falcon"] = ("n_embed",)  # FalconConfig.__post_init__ pops the legacy n_embed over hidden_size
# Keys read with getattr that change no parameter but the workload (gemma3_text: the kwarg
# sliding_window_pattern builds layer_types; to_dict() writes it back as _sliding_window_pattern,
# which __post_init__ does not read); known, so never reported as unknown.
WORKLOAD_GETATTR_KEYS: dict[str, tuple[str, ...]] = {
    "gemma3_text": ("sliding_window_pattern", "_sliding_window_pattern")
}
GETATTR_KEYS.update(
    {
        # --- encoders (types-enc): DebertaV2Embeddings / DisentangledSelfAttention / DebertaV2Encoder
        "deberta-v2": (
            "embedding_size",
            "position_buckets",
            "norm_rel_ebd",
            "share_att_key",
            "conv_kernel_size",
            "conv_groups",
            "attention_head_size",
        ),
    }
)
# Keys a modeling file reads with getattr that change no parameter (known, so never typos).
GETATTR_QUIET: dict[str, tuple[str, ...]] = {
    # --- encoders (types-enc): ConvLayer's activation; the classification heads' pooler width
    "deberta-v2": ("conv_act", "pooler_hidden_size"),
}

# Keys that published checkpoints' config.json files carry and that the transformers 5.x
# config class neither declares nor passes to any modeling code (checked by grepping
# transformers 5.24's models/<type>/ for ``config.<key>``): they change nothing, and are
# known so that they are neither noted as unknown nor taken for a misspelling.  Records
# (catalog/models) carry theirs as ``ModelType.legacy_keys``.
LEGACY_KEYS: dict[str, frozenset[str]] = {
    # google/gemma-2-9b: 4.x's hidden_act (5.x reads hidden_activation), sliding_window_size
    # (5.x reads sliding_window) and generation's cache_implementation
    "gemma2": frozenset({"cache_implementation", "hidden_act", "sliding_window_size"}),
    # llava-hf/llava-1.5-7b-hf: the loss's ignore_index and a top-level vocab_size (the head
    # reads text_config.vocab_size)
    "llava": frozenset({"ignore_index", "vocab_size"}),
    # llava-hf/llava-v1.6-mistral-7b-hf: as llava's, and 4.x's use_image_newline_parameter (5.x always
    # builds image_newline; no modeling code reads the key)
    "llava_next": frozenset({"ignore_index", "vocab_size", "use_image_newline_parameter"}),
    # moonshotai/Kimi-K2.5: the loss's ignore_index and its remote code's media settings, none read by
    # transformers 5.24's models/kimi_k25 (grepped)
    "kimi_k25": frozenset(
        {"ignore_index", "media_placeholder_token_id", "use_unified_vision_chunk", "video_placeholder"}
    ),
    # google/gemma-4-31B-it as transformers 5.7 printed it: eoa_token_id (5.24 reads eoa_token_index) and
    # vision_soft_tokens_per_image (the processor's), read by no 5.24 config or modeling code (grepped): no
    # parameter; ``flops --part vision`` reads it as the processor's max_soft_tokens (catalog/models/vision_image.py)
    "gemma4": frozenset({"eoa_token_id", "vision_soft_tokens_per_image"}),
    # vidore/colpali-v1.2-merged (a PaliGemma 448 px checkpoint): 4.x's loss ignore_index
    "paligemma": frozenset({"ignore_index"}),
    # SmolVLM-256M-Instruct and SmolVLM2-500M: a top-level vocab_size (the head reads text_config's),
    # the training switch use_reentrant_checkpointing and transformers.js's export settings; 5.x's
    # save_pretrained writes the pad_token_id that Idefics3Config pops as _pad_token_id
    **dict.fromkeys(
        ("idefics3", "smolvlm"),
        frozenset({"vocab_size", "use_reentrant_checkpointing", "transformers.js_config", "_pad_token_id"}),
    ),
    # Qwen/Qwen2-VL-7B-Instruct's text_config repeats the wrapper's vision_token_id
    "qwen2_vl_text": frozenset({"vision_token_id"}),
    # Qwen2.5-VL-7B-Instruct as 4.53 re-saves it: its text_config repeats the wrapper's token ids
    "qwen2_5_vl_text": frozenset(
        {"vision_token_id", "image_token_id", "video_token_id", "vision_start_token_id", "vision_end_token_id"}
    ),
}


# --- gpt2-like (learned positions / ALiBi) and multimodal wrappers
# Language models that exist only inside a multimodal wrapper (no ForCausalLM of their own in
# transformers 5.x): read from the wrapper's text_config, never as a top-level model_type.
# The same tables as the supported types, kept apart so that SUPPORTED lists only real
# top-level types.  Qwen2VLTextModel is Qwen2-shaped (q, k, v biased; o not) but requires
# num_attention_heads to divide hidden_size, reads no head_dim, and its multimodal rotary
# positions (mrope) have no parameters.
TEXT_ONLY: dict[str, tuple[str, str]] = {
    "qwen2_vl_text": ("Qwen2VLTextConfig", "Qwen2VLTextModel"),
    # Qwen2.5-VL's language model: Qwen2-VL's text model (the same fields, defaults and layers)
    "qwen2_5_vl_text": ("Qwen2_5_VLTextConfig", "Qwen2_5_VLTextModel"),
}
TEXT_ONLY_DEFAULTS: dict[str, dict[str, Any]] = {
    "qwen2_vl_text": {
        "vocab_size": 152064,
        "hidden_size": 8192,
        "intermediate_size": 29568,
        "num_hidden_layers": 80,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "max_position_embeddings": 32768,
        "max_window_layers": 80,
        "tie_word_embeddings": False,  # no such field: the wrapper decides (and passes it down)
    },
}
TEXT_ONLY_CONFIG_KEYS: dict[str, frozenset[str]] = {
    "qwen2_vl_text": frozenset(
        "attention_dropout bos_token_id eos_token_id hidden_act hidden_size initializer_range intermediate_size "
        "layer_types max_position_embeddings max_window_layers num_attention_heads num_hidden_layers "
        "num_key_value_heads pad_token_id rms_norm_eps rope_parameters sliding_window use_cache "
        "use_sliding_window vocab_size".split()
    ),
}
TEXT_ONLY_NO_PARAM_EFFECT: dict[str, dict[str, str]] = {
    "qwen2_vl_text": _no_effect(**_DECODER_NO_EFFECT, window=_QWEN_WINDOW),
}
TEXT_ONLY_DEFAULTS["qwen2_5_vl_text"] = dict(TEXT_ONLY_DEFAULTS["qwen2_vl_text"])
TEXT_ONLY_CONFIG_KEYS["qwen2_5_vl_text"] = TEXT_ONLY_CONFIG_KEYS["qwen2_vl_text"]
TEXT_ONLY_NO_PARAM_EFFECT["qwen2_5_vl_text"] = dict(TEXT_ONLY_NO_PARAM_EFFECT["qwen2_vl_text"])

# The records (catalog/models) add their types to these tables on first use (record_table.py).
(
    CONFIG_KEYS,
    NO_PARAM_EFFECT,
    GETATTR_KEYS,
    WORKLOAD_GETATTR_KEYS,
    GETATTR_QUIET,
    LEGACY_KEYS,
    TEXT_ONLY,
    TEXT_ONLY_DEFAULTS,
    TEXT_ONLY_CONFIG_KEYS,
    TEXT_ONLY_NO_PARAM_EFFECT,
) = (
    RecordTable(t)
    for t in (
        CONFIG_KEYS,
        NO_PARAM_EFFECT,
        GETATTR_KEYS,
        WORKLOAD_GETATTR_KEYS,
        GETATTR_QUIET,
        LEGACY_KEYS,
        TEXT_ONLY,
        TEXT_ONLY_DEFAULTS,
        TEXT_ONLY_CONFIG_KEYS,
        TEXT_ONLY_NO_PARAM_EFFECT,
    )
)


# Unknown keys at least this similar to a known one (difflib ratio, 0..1) are taken as
# typos: num_key_value_head / num_key_value_heads is 0.97, intermediate_sise 0.94, while
# distinct real keys such as rope_theta / rope_parameters (0.56) stay well below.
TYPO_CUTOFF = 0.85

# Every key some supported config class (or PretrainedConfig, 4.x or a published checkpoint)
# has: such a key is never taken for a typo, whichever model_type it appears in (``REAL_KEYS``,
# built on first use, once hf_config has registered the records: it reads every record).
_REAL_KEYS: list[frozenset[str]] = []


def real_keys() -> frozenset[str]:
    if not _REAL_KEYS:
        _REAL_KEYS.append(
            frozenset().union(
                *CONFIG_KEYS.values(),
                COMMON_KEYS,
                *NO_PARAM_EFFECT.values(),
                *GETATTR_KEYS.values(),
                *GETATTR_QUIET.values(),
            )
        )
    return _REAL_KEYS[0]
