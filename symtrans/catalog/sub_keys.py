"""The keys of the vision and audio sub-config classes the curated wrappers read
(``vision_config`` / ``audio_config`` of LLaVA, Qwen-VL, Gemma 3/4, Llama 4, ...), and the
audit that refuses a misspelt one in one line.

``SUB_CONFIG_KEYS`` is transformers 5.24's own: for each class, the ``__init__`` arguments,
the ``attribute_map`` aliases and the ``to_dict()`` keys of a default instance
(``catalog.generic.build.config_class_keys``), less the keys every config takes
(``COMMON_KEYS``).  ``tests/test_sub_config_keys.py`` checks it against the installed
transformers, so the curated path needs neither torch nor transformers to read it.
"""

from __future__ import annotations

from typing import Any

SUB_CONFIG_KEYS: dict[str, frozenset[str]] = {
    cls: frozenset(keys.split())
    for cls, keys in {
        "CLIPVisionConfig": (
            "attention_dropout hidden_act hidden_size image_size initializer_factor intermediate_size "
            "layer_norm_eps num_attention_heads num_channels num_hidden_layers patch_size projection_dim"
        ),
        "Gemma4AudioConfig": (
            "attention_chunk_size attention_context_left attention_context_right attention_invalid_logits_value "
            "attention_logit_cap conv_kernel_size gradient_clipping hidden_act hidden_size num_attention_heads "
            "num_hidden_layers output_proj_dims residual_weight rms_norm_eps subsampling_conv_channels "
            "use_clipped_linears"
        ),
        "Gemma4VisionConfig": (
            "attention_bias attention_dropout head_dim hidden_size intermediate_size max_position_embeddings "
            "num_attention_heads num_hidden_layers num_key_value_heads patch_size pooling_kernel_size "
            "position_embedding_size rms_norm_eps standardize use_clipped_linears"
        ),
        "Idefics3VisionConfig": (
            "attention_dropout hidden_act hidden_size image_size intermediate_size layer_norm_eps "
            "num_attention_heads num_channels num_hidden_layers patch_size"
        ),
        "Kimi_K25VisionConfig": (
            "hidden_act hidden_size intermediate_size merge_kernel_size num_attention_heads num_hidden_layers "
            "patch_size pos_emb_height pos_emb_time pos_emb_width"
        ),
        "Llama4VisionConfig": (
            "attention_dropout hidden_act hidden_size image_size intermediate_size multi_modal_projector_bias "
            "norm_eps num_attention_heads num_channels num_hidden_layers patch_size pixel_shuffle_ratio "
            "projector_dropout projector_input_dim projector_output_dim vision_feature_select_strategy "
            "vision_output_dim"
        ),
        "PixtralVisionConfig": (
            "attention_dropout head_dim hidden_act hidden_size image_size intermediate_size num_attention_heads "
            "num_channels num_hidden_layers patch_size"
        ),
        "Qwen2VLVisionConfig": (
            "depth embed_dim hidden_act hidden_size in_channels mlp_ratio num_attention_heads num_heads "
            "num_hidden_layers patch_size spatial_merge_size temporal_patch_size"
        ),
        "Qwen2_5_VLVisionConfig": (
            "depth fullatt_block_indexes hidden_act hidden_size in_channels intermediate_size num_attention_heads "
            "num_heads num_hidden_layers out_hidden_size patch_size spatial_merge_size temporal_patch_size "
            "tokens_per_second window_size"
        ),
        "Qwen3VLVisionConfig": (
            "deepstack_visual_indexes depth hidden_act hidden_size in_channels intermediate_size "
            "num_attention_heads num_heads num_hidden_layers num_position_embeddings out_hidden_size patch_size "
            "spatial_merge_size temporal_patch_size"
        ),
        "Qwen3VLMoeVisionConfig": (
            "deepstack_visual_indexes depth hidden_act hidden_size in_channels intermediate_size "
            "num_attention_heads num_heads num_hidden_layers num_position_embeddings out_hidden_size patch_size "
            "spatial_merge_size temporal_patch_size"
        ),
        "Qwen3_5MoeVisionConfig": (
            "depth hidden_act hidden_size in_channels intermediate_size num_attention_heads num_heads "
            "num_hidden_layers num_position_embeddings out_hidden_size patch_size spatial_merge_size "
            "temporal_patch_size"
        ),
        "Qwen3_5VisionConfig": (
            "depth hidden_act hidden_size in_channels intermediate_size num_attention_heads num_heads "
            "num_hidden_layers num_position_embeddings out_hidden_size patch_size spatial_merge_size "
            "temporal_patch_size"
        ),
        "Siglip2VisionConfig": (
            "attention_dropout hidden_act hidden_size intermediate_size layer_norm_eps num_attention_heads "
            "num_channels num_hidden_layers num_patches patch_size vision_use_head"
        ),
        "SiglipVisionConfig": (
            "attention_dropout hidden_act hidden_size image_size intermediate_size layer_norm_eps "
            "num_attention_heads num_channels num_hidden_layers patch_size vision_use_head"
        ),
        "SmolVLMVisionConfig": (
            "attention_dropout hidden_act hidden_size image_size intermediate_size layer_norm_eps "
            "num_attention_heads num_channels num_hidden_layers patch_size"
        ),
    }.items()
}


def typo_line(path: str, match: str, cls: str, present: bool = False) -> str:
    """The refusal of one misspelt sub-config key ``path`` (``vision_config.num_hiden_layers``)
    that resembles ``match``, a key of the config class ``cls``; ``present``: the sub-config
    also sets ``match``, so the misspelling is a duplicate that ``cls`` ignores for it."""
    if present:
        return (
            f"{path}: unknown key, a misspelt duplicate of {match}, which the config also sets ({cls} has no such "
            f"key: transformers would ignore it and read {match})"
        )
    return (
        f"{path}: unknown key; did you mean {match}? ({cls} has no such key: transformers would ignore it "
        f"and build its default {match})"
    )


def audit(where: str, cfg: dict[str, Any], cls: str, counted: Any) -> None:
    """Refuse a key of the sub-config ``cfg`` (found at ``where``, such as ``vision_config``)
    that is no key of its class ``cls`` (``SUB_CONFIG_KEYS``, ``COMMON_KEYS``) and is a near
    miss of a key the reader reads (``counted``: its defaults and aliases), as
    ``hf_config.unknown_keys`` treats the top level (difflib ratio >= TYPO_CUTOFF, or equal
    ignoring case; a key real in another class, REAL_KEYS, never is).  Other unknown keys (4.x
    files carry PretrainedConfig's old generation keys in each sub-config) change nothing and
    pass.  A class outside the table is not audited.

    Raises:
        ConfigError: one line naming each near miss by its path and the key it resembles.
    """
    known = SUB_CONFIG_KEYS.get(cls)
    if known is None:
        return
    from symtrans.catalog.reader import ConfigError
    from symtrans.catalog.type_keys import COMMON_KEYS

    unknown = [k for k in cfg if isinstance(k, str) and k not in known and k not in COMMON_KEYS]
    if not unknown:
        return
    near, _ = near_misses(unknown, set(counted))
    if near:
        raise ConfigError(
            "; ".join(typo_line(f"{where}.{k}", m, cls, m in cfg) for k, m in near) + "; fix the spelling"
        )


def near_misses(unknown: list[str], counted: set[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """``unknown`` split into near misses of ``counted`` (``(key, the key it resembles)``:
    difflib ratio >= TYPO_CUTOFF, or equal ignoring case) and the rest.  A key real in
    another class (REAL_KEYS) is never a near miss, nor one that holds every word of the key
    it resembles and whole words more (``mtp_num_hidden_layers``, ``vt_hidden_size``: the
    published Qwen3.5 and Kimi-K2.5 configs' own keys, beside num_hidden_layers and
    hidden_size): a misspelling changes letters inside a word, not whole words."""
    import difflib

    from symtrans.catalog.type_keys import TYPO_CUTOFF, real_keys

    targets = sorted(counted)
    by_lower = {k.lower(): k for k in targets}
    typos, others = [], []
    for key in unknown:
        match = None
        if key not in real_keys():
            match = by_lower.get(key.lower()) or next(
                iter(difflib.get_close_matches(key, targets, 1, TYPO_CUTOFF)), None
            )
        if match and not _more_words(key, match):
            typos.append((key, match))
        else:
            others.append(key)
    return typos, others


def _more_words(key: str, other: str) -> bool:
    """``key``'s words (``_``-separated, case ignored) hold all of ``other``'s and more."""
    mine, theirs = set(filter(None, key.lower().split("_"))), set(filter(None, other.lower().split("_")))
    return theirs < mine
