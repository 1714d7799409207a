"""The vision side of the vision-language wrappers (llava, qwen2_vl, gemma3, paligemma, idefics3): their
``vision_config`` read into the Spec's ``vision`` option and sizes (``engine/vision.py`` counts them).

Defaults are transformers 5.x's: a LlavaConfig without vision_config builds LLaVA-1.5's CLIP
ViT-L/14 at 336 px (LlavaConfig.sub_configs_defaults); a vision_config dict takes the defaults
of CLIPVisionConfig; Qwen2VLConfig's vision_config takes Qwen2VLVisionConfig's; Gemma3Config's
takes SiglipVisionConfig's (also without one: its sub_configs_defaults name siglip_vision_model);
PaliGemmaConfig's a SiglipVisionConfig dict's defaults, and without one its sub_configs_defaults'
So400m/14 at 224 px; Idefics3Config's and SmolVLMConfig's Idefics3VisionConfig's (SmolVLMVisionConfig
has the same fields and defaults).
"""

from __future__ import annotations

import math
from typing import Any

from symtrans.catalog.reader import ConfigError, Reader, check_divides, check_rotary_head, show
from symtrans.catalog.sub_keys import audit

# LlavaConfig.sub_configs_defaults["vision_config"] (no vision_config in the file).
LLAVA_VISION_DEFAULTS = {
    "hidden_size": 1024,
    "intermediate_size": 4096,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "num_channels": 3,
    "image_size": 336,
    "patch_size": 14,
}
CLIP_VISION_DEFAULTS = {
    "hidden_size": 768,
    "intermediate_size": 3072,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "num_channels": 3,
    "image_size": 224,
    "patch_size": 32,
}
QWEN2_VL_VISION_DEFAULTS = {
    "embed_dim": 1280,
    "hidden_size": 3584,
    "depth": 32,
    "num_heads": 16,
    "mlp_ratio": 4,
    "in_channels": 3,
    "patch_size": 14,
    "temporal_patch_size": 2,
    "spatial_merge_size": 2,
}


# Mistral3Config.sub_configs_defaults (no vision_config / text_config in the file) and
# PixtralVisionConfig's own defaults (a vision_config dict).
MISTRAL3_VISION_DEFAULTS = {
    "hidden_size": 1024,
    "intermediate_size": 4096,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "num_channels": 3,
    "patch_size": 14,
}
PIXTRAL_VISION_DEFAULTS = {
    "hidden_size": 1024,
    "intermediate_size": 4096,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "num_channels": 3,
    "patch_size": 16,
}
MISTRAL3_TEXT_DEFAULT = {
    "model_type": "mistral",
    "head_dim": 128,
    "hidden_size": 5120,
    "intermediate_size": 32768,
    "max_position_embeddings": 131072,
    "num_attention_heads": 32,
    "num_hidden_layers": 40,
    "num_key_value_heads": 8,
    "sliding_window": None,
    "vocab_size": 131072,
}
# Qwen2_5_VLVisionConfig's defaults (transformers 5.x).
QWEN2_5_VL_VISION_DEFAULTS = {
    "depth": 32,
    "hidden_size": 3584,
    "intermediate_size": 3420,
    "num_heads": 16,
    "in_channels": 3,
    "patch_size": 14,
    "spatial_merge_size": 2,
    "temporal_patch_size": 2,
    "out_hidden_size": 3584,
}
SIGLIP_VISION_DEFAULTS = {
    "hidden_size": 768,
    "intermediate_size": 3072,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "num_channels": 3,
    "image_size": 224,
    "patch_size": 16,
    "vision_use_head": True,
}
# SiglipVisionConfig's fields (transformers 5.x) and those that change no parameter.
SIGLIP_VISION_KEYS = frozenset(SIGLIP_VISION_DEFAULTS) | {"hidden_act", "layer_norm_eps", "attention_dropout"}
SIGLIP_VISION_NO_EFFECT = {
    "hidden_act": "act",
    "layer_norm_eps": "eps",
    "attention_dropout": "dropout",
}


# PaliGemmaConfig.sub_configs_defaults (no vision_config / text_config in the file).
PALIGEMMA_VISION_DEFAULT = {
    "model_type": "siglip_vision_model",
    "intermediate_size": 4096,
    "hidden_size": 1152,
    "patch_size": 14,
    "image_size": 224,
    "num_hidden_layers": 27,
    "num_attention_heads": 16,
    "vision_use_head": False,
}
PALIGEMMA_TEXT_DEFAULT = {
    "model_type": "gemma",
    "hidden_size": 2048,
    "num_hidden_layers": 18,
    "intermediate_size": 16384,
    "num_attention_heads": 8,
    "num_key_value_heads": 1,
    "vocab_size": 257152,
}
# Idefics3VisionConfig's defaults (SmolVLMVisionConfig's are the same), transformers 5.x.
IDEFICS3_VISION_DEFAULTS = {
    "hidden_size": 1152,
    "intermediate_size": 3072,
    "num_hidden_layers": 12,
    "num_attention_heads": 16,
    "num_channels": 3,
    "image_size": 224,
    "patch_size": 32,
}
# Idefics3VisionConfig's fields and those that change no parameter.
IDEFICS3_VISION_KEYS = frozenset(IDEFICS3_VISION_DEFAULTS) | {
    "hidden_act",
    "layer_norm_eps",
    "attention_dropout",
    "initializer_range",
}
IDEFICS3_VISION_NO_EFFECT = {
    "hidden_act": "act",
    "layer_norm_eps": "eps",
    "attention_dropout": "dropout",
    "initializer_range": "init",
}
# The vision_config model_types of published Idefics3 / SmolVLM checkpoints: both config classes
# read vision_config with their own fixed class (not AutoConfig), whatever model_type it names;
# SmolVLM-256M-Instruct (an idefics3 checkpoint) names "idefics3", SmolVLM2 "smolvlm_vision".
IDEFICS3_VISION_TYPES = ("idefics3_vision", "idefics3", "smolvlm_vision", "smolvlm")


def _sub(r: Reader, key: str) -> dict[str, Any] | None:
    v = r.cfg.get(key)
    if v is not None and not isinstance(v, dict):
        raise ConfigError(f"{key} must be an object or null, not {show(v)}")
    return v


def _feature_layers(r: Reader, default: int) -> int:
    """How many vision layers the projector concatenates (``vision_feature_layer``: one index or a list)."""
    feat = r.cfg.get("vision_feature_layer", default)
    if isinstance(feat, list):
        if not feat or any(isinstance(x, bool) or not isinstance(x, int) for x in feat):
            raise ConfigError(f"vision_feature_layer must be an integer or a list of integers, not {show(feat)}")
        return len(feat)
    if isinstance(feat, bool) or not isinstance(feat, int):
        raise ConfigError(f"vision_feature_layer must be an integer or a list of integers, not {show(feat)}")
    return 1


def _sub_reader(
    where: str,
    cfg: dict[str, Any],
    mt: str,
    classes: tuple[str, str],
    defaults: dict[str, Any],
    aliases: dict[str, str],
) -> Reader:
    """The Reader of the sub-config ``cfg`` (at ``where``: vision_config, audio_config), once
    ``sub_keys.audit`` has refused a misspelt key of a size it reads (its defaults and aliases).

    Raises:
        ConfigError: a near miss of such a key, in one line naming its path.
    """
    audit(where, cfg, classes[0], {*defaults, *aliases, *aliases.values()})
    return Reader(cfg, mt, classes, defaults, aliases)


def _projector_bias(r: Reader, default: bool) -> bool:
    bias = r.cfg.get("multimodal_projector_bias", default)
    if not isinstance(bias, bool):
        raise ConfigError(f"multimodal_projector_bias must be true or false, not {show(bias)}")
    return bias


def llava_vision(r: Reader) -> tuple[dict[str, int], dict[str, Any], list[str]]:
    """(sizes, Spec options, notes) of LLaVA's (and LLaVA-NeXT's) CLIP vision tower and projector.

    Raises:
        ConfigError: a vision tower other than CLIP's, non-square images or patches, a
            malformed size, or hidden_size not divisible by the heads (CLIPVisionConfig).
    """
    vcfg = _sub(r, "vision_config")
    if vcfg is None:
        vr = Reader({}, "clip_vision_model", ("CLIPVisionConfig", "CLIPVisionModel"), LLAVA_VISION_DEFAULTS, {})
        vr.notes.append(f"no vision_config: {r.cls}'s default CLIP ViT-L/14 at 336 px")
    else:
        vmt = vcfg.get("model_type", "clip_vision_model")
        if vmt != "clip_vision_model":
            raise ConfigError(
                f"vision_config model_type {show(vmt)} is not supported inside {show(r.mt)}: symtrans counts a "
                "CLIP vision tower (clip_vision_model) only"
            )
        vr = _sub_reader(
            "vision_config",
            vcfg,
            "clip_vision_model",
            ("CLIPVisionConfig", "CLIPVisionModel"),
            CLIP_VISION_DEFAULTS,
            {},
        )
    sizes, side = _square_vit(vr, vcfg or {}, "CLIPVisionConfig")
    n_feat, bias = _feature_layers(r, -2), _projector_bias(r, True)
    sizes["n_feat"] = n_feat
    notes = [f"vision_config: {n}" for n in vr.notes]
    notes.append(_vit_note("CLIP ViT", sizes, side) + f"; projector {n_feat * sizes['d_vis']} -> d_model -> d_model")
    return sizes, {"vision": "clip", "projector_bias": bias}, notes


def qwen2_vl_vision(r: Reader, d_model: int) -> tuple[dict[str, int], dict[str, Any], list[str]]:
    """(sizes, Spec options, notes) of Qwen2-VL's vision tower and patch merger.

    Raises:
        ConfigError: a malformed size, or list-valued (non-square) patch sizes.
    """
    vcfg = _sub(r, "vision_config") or {}
    vr = _sub_reader(
        "vision_config",
        vcfg,
        "qwen2_vl_vision",
        ("Qwen2VLVisionConfig", "Qwen2VisionTransformerPretrainedModel"),
        QWEN2_VL_VISION_DEFAULTS,
        {"num_attention_heads": "num_heads", "num_hidden_layers": "depth"},
    )
    d = vr.size("embed_dim")
    # Qwen2VLVisionBlock: int(embed_dim * mlp_ratio), mlp_ratio a strict int field of the config
    f = d * vr.size("mlp_ratio")
    for key in ("patch_size", "temporal_patch_size"):
        if isinstance(vcfg.get(key), list):
            raise ConfigError(f"vision_config.{key} is a list: symtrans counts square patches of one size")
    sizes = dict(
        d_vis=d,
        d_ff_vis=f,
        N_vis=vr.size("depth"),
        C_vis=vr.size("in_channels"),
        p_vis=vr.size("patch_size"),
        t_vis=vr.size("temporal_patch_size"),
        m_vis=vr.size("spatial_merge_size"),
    )
    out = vr.size("hidden_size")
    if out != d_model:
        sizes["d_proj"] = out
    notes = [f"vision_config: {n}" for n in vr.notes]
    if "in_chans" in vcfg and vcfg.get("in_chans") != sizes["C_vis"]:
        notes.append(
            f"vision_config: in_chans {show(vcfg['in_chans'])} ignored (Qwen2VLVisionConfig reads in_channels)"
        )
    notes.append(
        f"vision tower: Qwen2-VL ViT, {sizes['N_vis']} layers of width {d}; the merger joins "
        f"{sizes['m_vis']} x {sizes['m_vis']} patches into one token of width {out}"
    )
    return sizes, {"vision": "qwen2_vl"}, notes


def _square_vit(vr: Reader, vcfg: dict[str, Any], attention: str) -> tuple[dict[str, int], int]:
    """The sizes of a ViT of square images and patches (CLIP's, SigLIP's and its Idefics3 copy):
    d_vis, d_ff_vis, N_vis, C_vis, p_vis and P_vis = (image_size // patch_size)^2; and the
    image side in pixels.

    Raises:
        ConfigError: list-valued image or patch sizes, a malformed size, or hidden_size not
            divisible by the heads (``attention`` refuses it).
    """
    for key in ("image_size", "patch_size"):
        if isinstance(vcfg.get(key), list):
            raise ConfigError(f"vision_config.{key} is a list: symtrans counts square images and patches of one size")
    d, h = vr.size("hidden_size"), vr.size("num_attention_heads")
    check_divides("hidden_size", d, "num_attention_heads", h, attention)
    side, patch = vr.size("image_size"), vr.size("patch_size")
    sizes = dict(
        d_vis=d,
        d_ff_vis=vr.size("intermediate_size"),
        N_vis=vr.size("num_hidden_layers"),
        C_vis=vr.size("num_channels"),
        p_vis=patch,
        P_vis=(side // patch) ** 2,
    )
    return sizes, side


def _vit_note(kind: str, sizes: dict[str, int], side: int) -> str:
    patch = sizes["p_vis"]
    return (
        f"vision tower: {kind}, {sizes['N_vis']} layers of width {sizes['d_vis']}, {side // patch}^2 = "
        f"{sizes['P_vis']} patches of {patch} x {patch} px per {side} px image"
    )


def siglip_vision(vcfg: dict[str, Any] | None, wrapper: str) -> tuple[dict[str, int], bool, list[str]]:
    """(sizes, vision_use_head, notes) of a SigLIP vision tower (SiglipVisionConfig's keys).

    Raises:
        ConfigError: a tower other than siglip_vision_model, list-valued (non-square) image or
            patch sizes, a malformed size, or hidden_size not divisible by the heads
            (SiglipAttention refuses it).
    """
    vmt = (vcfg or {}).get("model_type", "siglip_vision_model")
    if vmt != "siglip_vision_model":
        raise ConfigError(
            f"vision_config model_type {show(vmt)} is not supported inside {wrapper}: symtrans counts a SigLIP "
            "vision tower (siglip_vision_model) only"
        )
    vr = _sub_reader(
        "vision_config",
        vcfg or {},
        "siglip_vision_model",
        ("SiglipVisionConfig", "SiglipVisionModel"),
        SIGLIP_VISION_DEFAULTS,
        {},
    )
    sizes, side = _square_vit(vr, vcfg or {}, "SiglipAttention")
    head = vr.flag("vision_use_head")
    notes = [f"vision_config: {n}" for n in vr.notes]
    notes.append(
        _vit_note("SigLIP ViT", sizes, side)
        + (
            "; with its attention-pooling head (vision_use_head)"
            if head
            else "; no pooling head (vision_use_head false)"
        )
    )
    return sizes, head, notes


def gemma3_vision(r: Reader) -> tuple[dict[str, int], dict[str, Any], list[str]]:
    """(sizes, Spec options, notes) of Gemma 3's SigLIP tower and projector.

    Raises:
        ConfigError: as ``siglip_vision``; mm_tokens_per_image not a positive integer
            (Gemma3MultiModalProjector divides by its square root).
    """
    sizes, head, notes = siglip_vision(_sub(r, "vision_config"), "gemma3")
    tokens = r.size("mm_tokens_per_image")
    side = math.isqrt(sizes["P_vis"])
    per_side = math.isqrt(tokens)
    notes.append(
        f"projector: RMSNorm and a bias-free {sizes['d_vis']} -> d_model map; {side}^2 patches average-pooled "
        f"to {per_side}^2 tokens per image (mm_tokens_per_image {tokens}, no weights)"
    )
    return sizes, {"vision": "gemma3", "vision_head": head}, notes


def mistral3_vision(r: Reader) -> tuple[dict[str, int], dict[str, Any], list[str]]:
    """(sizes, Spec options, notes) of Mistral 3's Pixtral tower and projector.

    Raises:
        ConfigError: a tower other than pixtral, a list-valued (non-square) patch size, or a
            malformed size.
    """
    vcfg = _sub(r, "vision_config")
    if vcfg is None:
        vr = Reader({}, "pixtral", ("PixtralVisionConfig", "PixtralVisionModel"), MISTRAL3_VISION_DEFAULTS, {})
        vr.notes.append(f"no vision_config: {r.cls}'s default Pixtral tower (1024 wide, 24 layers, patch 14)")
    else:
        vmt = vcfg.get("model_type", "pixtral")
        if vmt != "pixtral":
            raise ConfigError(
                f"vision_config model_type {show(vmt)} is not supported inside mistral3: symtrans counts a Pixtral "
                "vision tower (pixtral) only"
            )
        if isinstance(vcfg.get("patch_size"), list):
            raise ConfigError("vision_config.patch_size is a list: symtrans counts square patches of one size")
        vr = _sub_reader(
            "vision_config", vcfg, "pixtral", ("PixtralVisionConfig", "PixtralVisionModel"), PIXTRAL_VISION_DEFAULTS, {}
        )
    d, h = vr.size("hidden_size"), vr.size("num_attention_heads")
    # PixtralVisionConfig sets head_dim = hidden_size // heads; its 2-D rotary table needs one
    # (a width of 0 divides by zero) of even width above 4 (the RoPE validation of transformers 5.x)
    if d < h:
        raise ConfigError(
            f"vision_config.num_attention_heads ({h}) exceeds hidden_size ({d}): PixtralVisionConfig's head_dim "
            "would be 0, which its rotary positions cannot use"
        )
    check_rotary_head(vr, "vision_config head_dim (hidden_size // num_attention_heads)", d // h)
    sizes = dict(
        d_vis=d,
        d_ff_vis=vr.size("intermediate_size"),
        N_vis=vr.size("num_hidden_layers"),
        C_vis=vr.size("num_channels"),
        p_vis=vr.size("patch_size"),
        m_vis=r.size("spatial_merge_size"),
        n_feat=_feature_layers(r, -1),
    )
    notes = [f"vision_config: {n}" for n in vr.notes]
    notes.append(
        f"vision tower: Pixtral ViT, {sizes['N_vis']} layers of width {sizes['d_vis']} (2-D rotary positions, no "
        f"table), patches of {sizes['p_vis']} x {sizes['p_vis']} px; the projector merges {sizes['m_vis']} x "
        f"{sizes['m_vis']} patches into one token"
    )
    return sizes, {"vision": "mistral3", "projector_bias": _projector_bias(r, False)}, notes


def _qwen_vision_reader(
    r: Reader, mt: str, classes: tuple[str, str], defaults: dict[str, Any], what: str
) -> tuple[dict[str, Any], Reader]:
    """(vision_config, its Reader) of Qwen2.5-VL (``mt`` qwen2_5_vl) or Qwen3-VL (qwen3_vl): the
    vision model_type ``<mt>_vision``, or ``<mt>`` (the Hub files, which the wrapper's config renames).

    Raises:
        ConfigError: a vision_config of another model_type, or list-valued (non-square) patch sizes.
    """
    vcfg = _sub(r, "vision_config") or {}
    vmt = vcfg.get("model_type", f"{mt}_vision")
    if vmt not in (f"{mt}_vision", mt):
        raise ConfigError(f"vision_config model_type {show(vmt)} is not {what} ({mt}_vision)")
    for key in ("patch_size", "temporal_patch_size"):
        if isinstance(vcfg.get(key), list):
            raise ConfigError(f"vision_config.{key} is a list: symtrans counts square patches of one size")
    aliases = {"num_attention_heads": "num_heads", "num_hidden_layers": "depth"}
    return vcfg, _sub_reader("vision_config", vcfg, f"{mt}_vision", classes, defaults, aliases)


def _qwen_vision_sizes(vr: Reader) -> dict[str, int]:
    """The tower sizes Qwen2.5-VL's and Qwen3-VL's vision configs share."""
    return dict(
        d_vis=vr.size("hidden_size"),
        d_ff_vis=vr.size("intermediate_size"),
        N_vis=vr.size("depth"),
        C_vis=vr.size("in_channels"),
        p_vis=vr.size("patch_size"),
        t_vis=vr.size("temporal_patch_size"),
        m_vis=vr.size("spatial_merge_size"),
    )


def qwen2_5_vl_vision(r: Reader, d_model: int) -> tuple[dict[str, int], dict[str, Any], list[str]]:
    """(sizes, Spec options, notes) of Qwen2.5-VL's vision tower and patch merger.

    Raises:
        ConfigError: a vision_config of another model_type, list-valued (non-square) patch
            sizes, or a malformed size.
    """
    vcfg, vr = _qwen_vision_reader(
        r,
        "qwen2_5_vl",
        ("Qwen2_5_VLVisionConfig", "Qwen2_5_VisionTransformerPretrainedModel"),
        QWEN2_5_VL_VISION_DEFAULTS,
        "Qwen2.5-VL's vision tower",
    )
    sizes = _qwen_vision_sizes(vr)
    out = vr.size("out_hidden_size")
    if out != d_model:
        sizes["d_proj"] = out
    notes = [f"vision_config: {n}" for n in vr.notes]
    notes.append(
        f"vision tower: Qwen2.5-VL ViT, {sizes['N_vis']} layers of width {sizes['d_vis']} (RMSNorm, biased SwiGLU "
        f"of {sizes['d_ff_vis']}); the merger joins {sizes['m_vis']} x {sizes['m_vis']} patches into one token of "
        f"width {out}; window attention (window_size, fullatt_block_indexes) changes no weight"
    )
    return sizes, {"vision": "qwen2_5_vl"}, notes


def paligemma_vision(r: Reader, d_model: int) -> tuple[dict[str, int], dict[str, Any], list[str]]:
    """(sizes, Spec options, notes) of PaliGemma's SigLIP tower and its one-map projector.

    The projector maps d_vis to ``projection_dim`` (PaliGemmaConfig writes it into the vision
    config, over any value there); where that differs from the text model's d_model it is the
    size d_proj (transformers builds it; an image forward could not place the features).

    Raises:
        ConfigError: as ``siglip_vision``; projection_dim not a positive integer.
    """
    vcfg = _sub(r, "vision_config")
    notes_first = []
    if vcfg is None:
        vcfg = PALIGEMMA_VISION_DEFAULT
        notes_first.append(f"no vision_config: {r.cls}'s default SigLIP So400m/14 at 224 px, no pooling head")
    sizes, head, notes = siglip_vision(vcfg, "paligemma")
    out = r.size("projection_dim")
    if out != d_model:
        sizes["d_proj"] = out
        notes.append(
            f"projection_dim {out} differs from the text model's hidden_size {d_model}: transformers builds the "
            "projector so, but its image features would not fit the token embeddings"
        )
    notes.append(f"projector: one biased {sizes['d_vis']} -> {out} map (PaliGemmaMultiModalProjector.linear)")
    return sizes, {"vision": "paligemma", "vision_head": head}, notes_first + notes


def idefics3_vision(r: Reader) -> tuple[dict[str, int], dict[str, Any], list[str]]:
    """(sizes, Spec options, notes) of Idefics3's (and SmolVLM's) SigLIP-shaped tower and its
    pixel-shuffle connector (scale_factor s: s x s patches stacked into one token, then one
    bias-free s^2 d_vis -> d_model map).

    Raises:
        ConfigError: a vision_config naming a model_type outside the Idefics3 / SmolVLM
            family, list-valued (non-square) image or patch sizes, a malformed size, or
            hidden_size not divisible by the heads (Idefics3VisionAttention refuses it).
    """
    vcfg = _sub(r, "vision_config") or {}
    vmt = vcfg.get("model_type", "idefics3_vision")
    if vmt not in IDEFICS3_VISION_TYPES:
        raise ConfigError(
            f"vision_config model_type {show(vmt)} is not supported inside {r.mt}: symtrans counts its own "
            f"SigLIP-shaped tower ({', '.join(IDEFICS3_VISION_TYPES)})"
        )
    cls = "SmolVLMVisionConfig" if r.mt == "smolvlm" else "Idefics3VisionConfig"
    vr = _sub_reader(
        "vision_config", vcfg, vmt, (cls, cls.replace("Config", "Transformer")), IDEFICS3_VISION_DEFAULTS, {}
    )
    sizes, side = _square_vit(vr, vcfg, "Idefics3VisionAttention")
    s = sizes["m_vis"] = r.size("scale_factor")
    notes = [f"vision_config: {n}" for n in vr.notes]
    notes.append(
        _vit_note("SigLIP-shaped ViT", sizes, side) + f", no pooling head; the connector's pixel shuffle "
        f"stacks {s} x {s} patches into one token and maps {s * s * sizes['d_vis']} -> d_model (no bias)"
    )
    return sizes, {"vision": "idefics3"}, notes


# Qwen3VLVisionConfig's defaults (transformers 5.x); deepstack_visual_indexes (8, 16, 24).
QWEN3_VL_VISION_DEFAULTS = {
    "depth": 27,
    "hidden_size": 1152,
    "intermediate_size": 4304,
    "num_heads": 16,
    "in_channels": 3,
    "patch_size": 16,
    "spatial_merge_size": 2,
    "temporal_patch_size": 2,
    "out_hidden_size": 3584,
    "num_position_embeddings": 2304,
}
QWEN3_VL_DEEPSTACK_DEFAULT = (8, 16, 24)


def qwen3_vl_vision(r: Reader, d_model: int) -> tuple[dict[str, int], dict[str, Any], list[str]]:
    """(sizes, Spec options, notes) of Qwen3-VL's vision model: tower, merger, DeepStack mergers
    (``qwen3_vl`` and ``qwen3_vl_moe``, whose vision config and model are the same).

    Raises:
        ConfigError: a vision_config of another model_type, list-valued (non-square) patch
            sizes, a malformed size, or deepstack_visual_indexes that is not a list of integers.
    """
    # Qwen3VLMoeVisionConfig / Qwen3VLMoeVisionModel (qwen3_vl_moe) are Qwen3-VL's, field for field
    cls = "Qwen3VLMoeVision" if r.mt == "qwen3_vl_moe" else "Qwen3VLVision"
    vcfg, vr = _qwen_vision_reader(
        r,
        r.mt if r.mt == "qwen3_vl_moe" else "qwen3_vl",
        (f"{cls}Config", f"{cls}Model"),
        QWEN3_VL_VISION_DEFAULTS,
        "Qwen3-VL's vision model",
    )
    deep = vcfg.get("deepstack_visual_indexes", list(QWEN3_VL_DEEPSTACK_DEFAULT))
    if not isinstance(deep, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in deep):
        raise ConfigError(f"vision_config.deepstack_visual_indexes must be a list of integers, not {show(deep)}")
    sizes = dict(_qwen_vision_sizes(vr), P_vis=vr.size("num_position_embeddings"))
    if deep:
        sizes["n_ds"] = len(deep)  # Qwen3VLVisionModel builds one merger per entry, whatever its index
    out = vr.size("out_hidden_size")
    if out != d_model:
        sizes["d_proj"] = out
    notes = [f"vision_config: {n}" for n in vr.notes]
    if "deepstack_visual_indexes" not in vcfg:
        notes.append(f"vision_config: key deepstack_visual_indexes missing: used {list(QWEN3_VL_DEEPSTACK_DEFAULT)}")
    m = sizes["m_vis"]
    notes.append(
        f"vision tower: Qwen3-VL ViT, {sizes['N_vis']} layers of width {sizes['d_vis']}, a learned grid of "
        f"{sizes['P_vis']} positions; the merger joins {m} x {m} patches into one token of width {out}, and "
        f"{len(deep)} DeepStack mergers (layers {deep}) feed the first language layers"
    )
    return sizes, {"vision": "qwen3_vl"}, notes


# Llama4VisionConfig's defaults (transformers 5.x).
LLAMA4_VISION_DEFAULTS = {
    "hidden_size": 768,
    "num_hidden_layers": 34,
    "num_attention_heads": 16,
    "num_channels": 3,
    "intermediate_size": 5632,
    "vision_output_dim": 7680,
    "image_size": 448,
    "patch_size": 14,
    "projector_input_dim": 4096,
    "projector_output_dim": 4096,
}


def llama4_vision(r: Reader) -> tuple[dict[str, int], dict[str, Any], list[str]]:
    """(sizes, Spec options, notes) of Llama 4's vision model and multi-modal projector.

    Raises:
        ConfigError: a vision_config of another model_type, list-valued (non-square) image or
            patch sizes, a malformed size, hidden_size not divisible by the heads (the attention
            maps would be h * (d // h) wide: refused rather than counted as d), or an image
            smaller than one patch (Llama4VisionRotaryEmbedding fails on an empty grid).
    """
    vcfg = _sub(r, "vision_config") or {}
    vmt = vcfg.get("model_type", "llama4_vision_model")
    if vmt != "llama4_vision_model":
        raise ConfigError(
            f"vision_config model_type {show(vmt)} is not supported inside llama4: symtrans counts Llama 4's own "
            "vision model (llama4_vision_model) only"
        )
    vr = _sub_reader(
        "vision_config",
        vcfg,
        "llama4_vision_model",
        ("Llama4VisionConfig", "Llama4VisionModel"),
        LLAMA4_VISION_DEFAULTS,
        {},
    )
    d, h = vr.size("hidden_size"), vr.size("num_attention_heads")
    if d % h:  # Llama4VisionAttention builds h * (d // h) wide maps and a head width its 2-D rotary table splits
        raise ConfigError(
            f"vision_config.num_attention_heads ({h}) does not divide hidden_size ({d}): Llama 4's vision attention "
            "would be narrower than the tower, which symtrans does not count"
        )
    vit, side = _square_vit(vr, vcfg, "Llama4VisionAttention")
    patch = vit["p_vis"]
    if side < patch:
        raise ConfigError(
            f"vision_config.image_size ({side}) is smaller than patch_size ({patch}): no patch grid, which "
            "Llama4VisionRotaryEmbedding cannot build"
        )
    sizes = dict(
        vit,
        d_ad_in=vr.size("projector_input_dim"),
        d_ad_out=vr.size("projector_output_dim"),
        d_vout=vr.size("vision_output_dim"),
    )
    notes = [f"vision_config: {n}" for n in vr.notes]
    notes.append(
        f"vision tower: Llama 4 ViT, {sizes['N_vis']} layers of width {d}, {side // patch}^2 = {sizes['P_vis']} "
        f"patches of {patch} x {patch} px per {side} px tile and a class token; a pixel-shuffle adapter "
        f"({sizes['d_ff_vis']} -> {sizes['d_ad_in']}, {sizes['d_ad_out']} -> {sizes['d_ad_out']}) and a bias-free "
        f"projector {sizes['d_vout']} -> d_model (multi_modal_projector_bias is never read)"
    )
    return sizes, {"vision": "llama4"}, notes


def qwen3_5_vision(r: Reader, d_model: int) -> tuple[dict[str, int], dict[str, Any], list[str]]:
    """(sizes, Spec options, notes) of the vision model of Qwen3.5 (``qwen3_5``) and Qwen3.5-MoE
    (``qwen3_5_moe``): Qwen3-VL's tower and merger without DeepStack mergers (Qwen3_5VisionModel
    deletes them; Qwen3_5MoeVisionModel is Qwen3_5VisionModel), so the engine's ``qwen3_vl``
    tower without n_ds counts it.  Its config class has Qwen3VLVisionConfig's defaults.

    Raises:
        ConfigError: a vision_config of another model_type, list-valued (non-square) patch
            sizes, or a malformed size.
    """
    cls = "Qwen3_5MoeVisionConfig" if r.mt == "qwen3_5_moe" else "Qwen3_5VisionConfig"
    vcfg, vr = _qwen_vision_reader(
        r, r.mt, (cls, cls.replace("Config", "Model")), QWEN3_VL_VISION_DEFAULTS, f"{r.mt}'s vision tower"
    )
    sizes = dict(_qwen_vision_sizes(vr), P_vis=vr.size("num_position_embeddings"))
    out = vr.size("out_hidden_size")
    if out != d_model:
        sizes["d_proj"] = out
    notes = [f"vision_config: {n}" for n in vr.notes]
    if vcfg.get("deepstack_visual_indexes"):
        notes.append(
            f"vision_config: deepstack_visual_indexes {show(vcfg['deepstack_visual_indexes'])} ignored "
            f"({cls} has no such field: Qwen3.5's tower builds no DeepStack mergers)"
        )
    side = math.isqrt(sizes["P_vis"])
    grid = f"{side} x {side}" if side * side == sizes["P_vis"] else str(sizes["P_vis"])
    notes.append(
        f"vision tower: Qwen3.5 ViT (Qwen3-VL's, no DeepStack), {sizes['N_vis']} layers of width {sizes['d_vis']}, "
        f"a learned {grid} position table interpolated to each image; the merger joins {sizes['m_vis']} x "
        f"{sizes['m_vis']} patches into one token of width {out}"
    )
    return sizes, {"vision": "qwen3_vl"}, notes


# Kimi_K25VisionConfig's defaults (transformers 5.24 models/kimi_k25).
KIMI_K25_VISION_DEFAULTS = {
    "hidden_size": 1152,
    "intermediate_size": 4304,
    "num_hidden_layers": 27,
    "num_attention_heads": 16,
    "patch_size": 14,
    "pos_emb_height": 64,
    "pos_emb_width": 64,
}
# Moonshot's published vision_config names its sizes for its own remote code; transformers
# 5.24's Kimi_K25VisionConfig has none of these fields and builds its own (the default) instead.
# Equal to what transformers builds, they are harmless; different, the model built is not the
# published one, so symtrans refuses (name in the file -> the field transformers reads).
KIMI_K25_REMOTE_SIZES = {
    "vt_hidden_size": "hidden_size",
    "vt_intermediate_size": "intermediate_size",
    "vt_num_hidden_layers": "num_hidden_layers",
    "vt_num_attention_heads": "num_attention_heads",
    "init_pos_emb_height": "pos_emb_height",
    "init_pos_emb_width": "pos_emb_width",
}
# Moonshot's projector (mm_projector_type) and position table kinds that transformers 5.24 builds.
KIMI_K25_REMOTE_KINDS = {"mm_projector_type": "patchmerger", "pos_emb_type": "divided_fixed"}


def kimi_k25_vision(r: Reader, d_model: int) -> tuple[dict[str, int], dict[str, Any], list[str]]:
    """(sizes, Spec options, notes) of Kimi K2.5's vision tower and its patch-merging projector.

    Raises:
        ConfigError: a malformed size, list-valued patch_size, a non-square merge_kernel_size,
            projection_hidden_size other than the tower's width (the projector's pre_norm would
            not fit its features), or a remote-code size key (``vt_hidden_size``, ...) that
            differs from what transformers 5.24 builds (it ignores that key).
    """
    vcfg = _sub(r, "vision_config") or {}
    vr = _sub_reader(
        "vision_config",
        vcfg,
        "kimi_k25_vision",
        ("Kimi_K25VisionConfig", "Kimi_K25VisionModel"),
        KIMI_K25_VISION_DEFAULTS,
        {},
    )
    if isinstance(vcfg.get("patch_size"), list):
        raise ConfigError("vision_config.patch_size is a list: symtrans counts square patches of one size")
    sizes = dict(
        d_vis=vr.size("hidden_size"),
        d_ff_vis=vr.size("intermediate_size"),
        N_vis=vr.size("num_hidden_layers"),
        C_vis=3,  # Kimi_K25VisionPatchEmbed: nn.Conv2d(3, ...), no channel field
        p_vis=vr.size("patch_size"),
        P_vis=vr.size("pos_emb_height") * vr.size("pos_emb_width"),
    )
    built = {"hidden_size": sizes["d_vis"], "intermediate_size": sizes["d_ff_vis"], "num_hidden_layers": sizes["N_vis"]}
    built.update(
        num_attention_heads=vr.size("num_attention_heads"),
        pos_emb_height=vr.size("pos_emb_height"),
        pos_emb_width=vr.size("pos_emb_width"),
    )
    for key, field in KIMI_K25_REMOTE_SIZES.items():
        if key in vcfg and vcfg[key] != built[field]:
            raise ConfigError(
                f"vision_config.{key} {show(vcfg[key])} is ignored by transformers 5.x, which builds {field} "
                f"{built[field]}: the model it builds is not this one (give {field})"
            )
    for key, kind in KIMI_K25_REMOTE_KINDS.items():
        if key in vcfg and vcfg[key] != kind:
            raise ConfigError(
                f"vision_config.{key} {show(vcfg[key])} is not modelled: transformers 5.x builds only the {kind} kind"
            )
    merge = vcfg.get("merge_kernel_size", [2, 2])
    if (
        not isinstance(merge, list)
        or len(merge) != 2
        or any(isinstance(x, bool) or not isinstance(x, int) or x < 1 for x in merge)
    ):
        raise ConfigError(f"vision_config.merge_kernel_size must be two positive integers, not {show(merge)}")
    if merge[0] != merge[1]:
        raise ConfigError(f"vision_config.merge_kernel_size {show(merge)} is not square: symtrans counts m x m merging")
    sizes["m_vis"] = merge[0]
    proj = r.cfg.get("projection_hidden_size", 1152)
    if proj != sizes["d_vis"]:
        raise ConfigError(
            f"projection_hidden_size {show(proj)} is not the vision hidden_size {sizes['d_vis']}: the projector's "
            "pre_norm would not fit the tower's features"
        )
    for key, width in (("mm_hidden_size", sizes["d_vis"]), ("text_hidden_size", d_model)):
        if key in vcfg and vcfg[key] != width:
            raise ConfigError(
                f"vision_config.{key} {show(vcfg[key])} is ignored by transformers 5.x, which builds the projector "
                f"{width} wide there: the model it builds is not this one"
            )
    notes = [f"vision_config: {n}" for n in vr.notes]
    m = sizes["m_vis"]
    notes.append(
        f"vision tower: Kimi K2.5 MoonViT, {sizes['N_vis']} layers of width {sizes['d_vis']}, a learned grid of "
        f"{sizes['P_vis']} positions; the projector merges {m} x {m} patches ({m * m * sizes['d_vis']} wide) and "
        f"maps them to the text model's {d_model}"
    )
    return sizes, {"vision": "kimi_k25"}, notes


# Gemma4VisionConfig's defaults (transformers 5.24 models/gemma4; the E2B / E4B tower).
GEMMA4_VISION_DEFAULTS = {
    "hidden_size": 768,
    "intermediate_size": 3072,
    "num_hidden_layers": 16,
    "num_attention_heads": 12,
    "num_key_value_heads": 12,
    "head_dim": 64,
    "patch_size": 16,
    "position_embedding_size": 10240,
    "pooling_kernel_size": 3,
}


def gemma4_vision(r: Reader) -> tuple[dict[str, int], dict[str, Any], list[str]]:
    """(sizes, Spec options, notes) of Gemma 4's vision tower and ``embed_vision``
    (``engine/vision.gemma4_tower``); no vision tower where vision_config is null or missing
    (Gemma4Config's sub-config is optional: Gemma4Model builds none).

    Raises:
        ConfigError: a vision_config that is not an object or names another model_type,
            a list-valued patch size, a malformed size, or num_attention_heads not a multiple
            of num_key_value_heads (Gemma4VisionAttention groups the heads).
    """
    vcfg = _sub(r, "vision_config")
    if vcfg is None:
        return {}, {}, ["no vision_config: Gemma4Model builds no vision tower and no embed_vision"]
    vmt = vcfg.get("model_type", "gemma4_vision")
    if vmt != "gemma4_vision":
        raise ConfigError(
            f"vision_config model_type {show(vmt)} is not supported inside gemma4: symtrans counts Gemma 4's own "
            "vision tower (gemma4_vision) only"
        )
    if isinstance(vcfg.get("patch_size"), list):
        raise ConfigError("vision_config.patch_size is a list: symtrans counts square patches of one size")
    vr = _sub_reader(
        "vision_config", vcfg, "gemma4_vision", ("Gemma4VisionConfig", "Gemma4VisionModel"), GEMMA4_VISION_DEFAULTS, {}
    )
    h, h_kv = vr.size("num_attention_heads"), vr.size("num_key_value_heads")
    check_divides("num_attention_heads", h, "num_key_value_heads", h_kv, "Gemma4VisionAttention")
    sizes = dict(
        d_vis=vr.size("hidden_size"),
        d_ff_vis=vr.size("intermediate_size"),
        N_vis=vr.size("num_hidden_layers"),
        C_vis=3,  # Gemma4VisionPatchEmbedder: nn.Linear(3 * patch_size**2, ...), no channel field
        p_vis=vr.size("patch_size"),
        P_vis=vr.size("position_embedding_size"),
        m_vis=vr.size("pooling_kernel_size"),
        h_vis=h,
        h_kv_vis=h_kv,
        d_k_vis=vr.size("head_dim"),
    )
    notes = [f"vision_config: {n}" for n in vr.notes]
    m = sizes["m_vis"]
    notes.append(
        f"vision tower: Gemma 4 ViT, {sizes['N_vis']} layers of width {sizes['d_vis']} ({h} heads of "
        f"{sizes['d_k_vis']}, {h_kv} key/value heads), patches of {sizes['p_vis']} x {sizes['p_vis']} px, two "
        f"position tables of {sizes['P_vis']} rows; the pooler averages {m} x {m} patches into one token (no "
        f"weights); embed_vision maps {sizes['d_vis']} -> d_model (bias-free, after an RMSNorm without scale)"
    )
    return sizes, {"vision": "gemma4"}, notes


# Gemma4AudioConfig's defaults (transformers 5.24 models/gemma4): the E2B / E4B audio tower.
GEMMA4_AUDIO_DEFAULTS = {
    "hidden_size": 1024,
    "num_hidden_layers": 12,
    "num_attention_heads": 8,
    "conv_kernel_size": 5,
    "output_proj_dims": 1536,
    "subsampling_conv_channels": [128, 32],
}


def gemma4_audio(r: Reader) -> tuple[dict[str, int], list[str]]:
    """(sizes, notes) of Gemma 4's audio tower and ``embed_audio`` (``engine/vision.gemma4_audio``);
    none where audio_config is null or missing (Gemma4Model then builds neither).

    Raises:
        ConfigError: an audio_config that is not an object or names another model_type, a
            malformed size, num_attention_heads not dividing hidden_size (Gemma4AudioAttention's
            heads of hidden_size // num_attention_heads would not fill ``post``'s input), or
            subsampling_conv_channels not two positive integers.
    """
    acfg = _sub(r, "audio_config")
    if acfg is None:
        return {}, []
    amt = acfg.get("model_type", "gemma4_audio")
    if amt != "gemma4_audio":
        raise ConfigError(
            f"audio_config model_type {show(amt)} is not supported inside gemma4: symtrans counts Gemma 4's own "
            "audio tower (gemma4_audio) only"
        )
    ar = _sub_reader(
        "audio_config", acfg, "gemma4_audio", ("Gemma4AudioConfig", "Gemma4AudioModel"), GEMMA4_AUDIO_DEFAULTS, {}
    )
    d, h = ar.size("hidden_size"), ar.size("num_attention_heads")
    check_divides("hidden_size", d, "num_attention_heads", h, "Gemma4AudioAttention")
    ch = acfg.get("subsampling_conv_channels", GEMMA4_AUDIO_DEFAULTS["subsampling_conv_channels"])
    if (
        not isinstance(ch, list | tuple)
        or len(ch) != 2
        or any(isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in ch)
    ):
        raise ConfigError(
            f"audio_config.subsampling_conv_channels must be two positive integers, not {show(ch)}: "
            "Gemma4AudioSubSampleConvProjection builds two convolutions"
        )
    sizes = dict(
        d_aud=d,
        N_aud=ar.size("num_hidden_layers"),
        h_aud=h,
        K_aud=ar.size("conv_kernel_size"),
        d_out_aud=ar.size("output_proj_dims"),
        c1_aud=ch[0],
        c2_aud=ch[1],
    )
    notes = [f"audio_config: {n}" for n in ar.notes]
    notes.append(
        f"audio tower: Gemma 4 conformer, {sizes['N_aud']} layers of width {d} ({h} heads), depthwise kernel "
        f"{sizes['K_aud']}, subsampling convolutions of {ch[0]} and {ch[1]} channels, output_proj {d} -> "
        f"{sizes['d_out_aud']}; embed_audio maps {sizes['d_out_aud']} -> d_model (bias-free, after an RMSNorm "
        "without scale)"
    )
    return sizes, notes
