"""Dual encoders (issue 21): ``clip`` (CLIPModel), ``siglip`` (SiglipModel) and ``siglip2``
(Siglip2Model), each a text tower and an image tower mapped into one joint space
(``engine/dual.py``).

Read off transformers 5.24's ``models/clip`` and ``models/siglip``:

* text tower (``CLIPTextModel`` / ``SiglipTextModel``, from ``text_config``): token table
  vocab_size x hidden_size (no padding row), a learned position table max_position_embeddings
  x hidden_size, num_hidden_layers pre-norm layers (LayerNorm, biased q, k, v, out_proj;
  LayerNorm, biased fc1/fc2 of intermediate_size), ``final_layer_norm``; hidden_size must be a
  multiple of num_attention_heads (``CLIPTextConfig``/``SiglipTextConfig.validate_architecture``).
  CLIP's text is causal, SigLIP's bidirectional: the same weights;
* image tower (from ``vision_config``): CLIP's ViT with class token (``CLIPVisionTransformer``)
  or SigLIP's ViT with its attention-pooling head when ``vision_use_head`` (default true);
* CLIP: ``text_projection`` hidden_size -> projection_dim and ``visual_projection``
  vision hidden_size -> projection_dim, both bias-free, and ``logit_scale``; the top-level
  ``projection_dim`` is read (``CLIPConfig``), the sub-configs' own ``projection_dim`` only by
  ``CLIPTextModelWithProjection`` / ``CLIPVisionModelWithProjection``, not by CLIPModel;
* SigLIP: the text tower's biased ``head`` hidden_size -> ``projection_size`` (default
  hidden_size, ``SiglipTextConfig.__post_init__``), ``logit_scale`` and ``logit_bias``.

CLIPConfig's legacy ``text_config_dict`` / ``vision_config_dict`` (null in Hub files written
by 4.x) replace the sub-config: ``CLIPConfig.__post_init__`` updates it with every field of
``CLIPTextConfig(**text_config_dict)``, so a given one is read in its place.
"""

from __future__ import annotations

import math
from typing import Any

from symtrans.catalog.models.record import ModelType, keys, no_effect
from symtrans.catalog.models.vision import (
    CLIP_VISION_DEFAULTS,
    SIGLIP_VISION_DEFAULTS,
    SIGLIP_VISION_KEYS,
    siglip_vision,
)
from symtrans.catalog.reader import ConfigError, Reader, check_divides, show
from symtrans.engine.spec import Spec

CLIP_TEXT_DEFAULTS = {
    "vocab_size": 49408,
    "hidden_size": 512,
    "intermediate_size": 2048,
    "num_hidden_layers": 12,
    "num_attention_heads": 8,
    "max_position_embeddings": 77,
}
SIGLIP_TEXT_DEFAULTS = {
    "vocab_size": 32000,
    "hidden_size": 768,
    "intermediate_size": 3072,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "max_position_embeddings": 64,
}
# The fields of the sub-config classes (transformers 5.24) and those that change no parameter
# of CLIPModel / SiglipModel (tests/test_dual_encoders.py audits each against transformers).
CLIP_TEXT_KEYS = frozenset(CLIP_TEXT_DEFAULTS) | keys(
    "projection_dim hidden_act layer_norm_eps attention_dropout initializer_range initializer_factor "
    "pad_token_id bos_token_id eos_token_id"
)
CLIP_TEXT_NO_EFFECT = no_effect(
    act="hidden_act",
    eps="layer_norm_eps",
    dropout="attention_dropout",
    init="initializer_range initializer_factor",
    token="pad_token_id bos_token_id eos_token_id",
    **{"no head": "projection_dim"},
)
CLIP_VISION_KEYS = frozenset(CLIP_VISION_DEFAULTS) | keys(
    "projection_dim hidden_act layer_norm_eps attention_dropout initializer_range initializer_factor"
)
CLIP_VISION_NO_EFFECT = no_effect(
    act="hidden_act",
    eps="layer_norm_eps",
    dropout="attention_dropout",
    init="initializer_range initializer_factor",
    **{"no head": "projection_dim"},
)
SIGLIP_TEXT_KEYS = frozenset(SIGLIP_TEXT_DEFAULTS) | keys(
    "projection_size hidden_act layer_norm_eps attention_dropout pad_token_id bos_token_id eos_token_id"
)
SIGLIP_TEXT_NO_EFFECT = no_effect(
    act="hidden_act",
    eps="layer_norm_eps",
    dropout="attention_dropout",
    token="pad_token_id bos_token_id eos_token_id",
)


def _sub(r: Reader, key: str, model_type: str) -> dict[str, Any]:
    """A sub-config (``text_config`` / ``vision_config``) as a dict ({} when missing or null),
    refusing another tower's model_type."""
    v = r.cfg.get(key)
    legacy = r.cfg.get(f"{key}_dict")  # CLIPConfig only: replaces the sub-config's fields
    if legacy is not None:
        if not isinstance(legacy, dict):
            raise ConfigError(f"{key}_dict must be an object or null, not {show(legacy)}")
        r.notes.append(f"{key}_dict given: {r.cls} builds the {key} from it (its fields replace {key}'s)")
        v = legacy
    if v is None:
        r.notes.append(f"key {key} missing: used {r.cls}'s default {model_type} tower")
        return {}
    if not isinstance(v, dict):
        raise ConfigError(f"{key} must be an object or null, not {show(v)}")
    mt = v.get("model_type", model_type)
    if mt != model_type:
        raise ConfigError(
            f"{key} model_type {show(mt)} is not supported inside {r.mt}: symtrans counts a {model_type} tower only"
        )
    return v


def _check_typos(where: str, cfg: dict[str, Any], fields: frozenset[str], counted: Any) -> None:
    """Refuse a sub-config key that is no field of its class but nearly spells a key that sets a
    size (``text_config.num_hidden_layer``): transformers would build the class default there,
    so counting it would be a guess.  Other unknown keys (4.x files carry PretrainedConfig's
    old generation keys in each sub-config) change nothing and pass."""
    for key in cfg:
        if key in fields:
            continue
        import difflib  # here: only an unknown key needs it; every config.json imports this module

        close = difflib.get_close_matches(key, list(counted), n=1, cutoff=0.85)
        if close and close[0] in cfg:  # both spelt: the class reads the real key and ignores this one
            raise ConfigError(
                f"{where}.{key} is not a key of its config class (a misspelt duplicate of {close[0]}, which "
                f"{where} also sets): transformers would ignore it and read {close[0]}; remove the misspelling"
            )
        if close:
            raise ConfigError(
                f"{where}.{key} is not a key of its config class (did you mean {close[0]}?): transformers would "
                "ignore it and build the default; fix the spelling"
            )


def _text(r: Reader, cfg: dict[str, Any], mt: str, cls: str, defaults: dict[str, Any]) -> tuple[Reader, dict]:
    """The text tower's sizes (d_model, d_ff, h, N, V, L_max) from ``text_config``."""
    tr = Reader(cfg, mt, (cls, r.model), defaults, {})
    d, h = tr.size("hidden_size"), tr.size("num_attention_heads")
    check_divides("text_config.hidden_size", d, "num_attention_heads", h, cls)
    sizes = dict(
        d_model=d,
        d_ff=tr.size("intermediate_size"),
        h=h,
        N=tr.size("num_hidden_layers"),
        V=tr.size("vocab_size"),
        L_max=tr.size("max_position_embeddings"),
    )
    return tr, sizes


def _spec(sizes: dict[str, int], vision: str, **opts: Any) -> Spec:
    """An encoder-only text tower (learned positions, pre-LN, biased maps, GELU MLP, final
    LayerNorm, no pooler) with its dual encoder's other parts (``vision``)."""
    return Spec(
        family="encoder-only",
        sizes=sizes,
        positional="learned",
        norm="layernorm",
        norm_position="pre",
        final_norm=True,
        bias=True,
        ffn="mlp",
        pooler=False,
        vision=vision,
        **opts,
    )


def read_clip(r: Reader) -> Spec:
    """The Spec of a CLIPModel config.

    Raises:
        ConfigError: a sub-config of another model_type or not an object; a hidden_size not a
            multiple of its heads; list-valued image or patch sizes; a malformed size.
    """
    tcfg = _sub(r, "text_config", "clip_text_model")
    vcfg = _sub(r, "vision_config", "clip_vision_model")
    _check_typos("text_config", tcfg, CLIP_TEXT_KEYS, CLIP_TEXT_DEFAULTS)
    _check_typos("vision_config", vcfg, CLIP_VISION_KEYS, CLIP_VISION_DEFAULTS)
    tr, sizes = _text(r, tcfg, "clip_text_model", "CLIPTextConfig", CLIP_TEXT_DEFAULTS)
    for key in ("image_size", "patch_size"):
        if isinstance(vcfg.get(key), list):
            raise ConfigError(f"vision_config.{key} is a list: symtrans counts square images and patches of one size")
    vr = Reader(vcfg, "clip_vision_model", ("CLIPVisionConfig", r.model), CLIP_VISION_DEFAULTS, {})
    dv, hv = vr.size("hidden_size"), vr.size("num_attention_heads")
    check_divides("vision_config.hidden_size", dv, "num_attention_heads", hv, "CLIPVisionConfig")
    side, patch = vr.size("image_size"), vr.size("patch_size")
    proj = r.size("projection_dim")
    sizes.update(
        d_vis=dv,
        d_ff_vis=vr.size("intermediate_size"),
        N_vis=vr.size("num_hidden_layers"),
        C_vis=vr.size("num_channels"),
        p_vis=patch,
        P_vis=(side // patch) ** 2,
        d_proj=proj,
    )
    r.notes += [f"text_config: {n}" for n in tr.notes] + [f"vision_config: {n}" for n in vr.notes]
    r.notes.insert(
        0,
        f"counted: transformers {r.model}: the text tower (text_model, causal, {sizes['N']} layers of width "
        f"{sizes['d_model']}) and text_projection, the CLIP vision tower (vision_model, {sizes['N_vis']} layers "
        f"of width {dv}, {side // patch}^2 = {sizes['P_vis']} patches of {patch} x {patch} px and a class token "
        f"per {side} px image) and visual_projection, both into {proj} dimensions (projection_dim), and "
        "logit_scale; --part text is text_model + text_projection, --part vision is vision_model + "
        "visual_projection, logit_scale is in neither",
    )
    return _spec(sizes, "clip_dual")


def read_siglip(r: Reader) -> Spec:
    """The Spec of a SiglipModel config.

    Raises:
        ConfigError: a sub-config of another model_type or not an object; a hidden_size not a
            multiple of its heads; list-valued image or patch sizes; a malformed size.
    """
    tcfg = _sub(r, "text_config", "siglip_text_model")
    vcfg = _sub(r, "vision_config", "siglip_vision_model")
    _check_typos("text_config", tcfg, SIGLIP_TEXT_KEYS, {**SIGLIP_TEXT_DEFAULTS, "projection_size": None})
    _check_typos("vision_config", vcfg, SIGLIP_VISION_KEYS, SIGLIP_VISION_DEFAULTS)
    tr, sizes = _text(r, tcfg, "siglip_text_model", "SiglipTextConfig", SIGLIP_TEXT_DEFAULTS)
    proj = tr.size("projection_size", sizes["d_model"], f"hidden_size = {sizes['d_model']}", nullable=True)
    vsizes, head, vnotes = siglip_vision(vcfg, "siglip")
    sizes.update(vsizes, d_proj=proj)
    r.notes += [f"text_config: {n}" for n in tr.notes] + vnotes
    r.notes.insert(
        0,
        f"counted: transformers {r.model}: the text tower (text_model, bidirectional, {sizes['N']} layers of width "
        f"{sizes['d_model']}, with its head into {proj} dimensions), the SigLIP vision tower (vision_model"
        + (", with its attention-pooling head" if head else ", no pooling head (vision_use_head false)")
        + "), logit_scale and logit_bias; --part text is text_model, --part vision is vision_model, the two "
        "logit parameters are in neither",
    )
    return _spec(sizes, "siglip_dual", vision_head=head)


# Siglip2VisionConfig's defaults (transformers 5.24): no image_size; num_patches rows of positions.
SIGLIP2_VISION_DEFAULTS = {
    "hidden_size": 768,
    "intermediate_size": 3072,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "num_channels": 3,
    "patch_size": 16,
    "num_patches": 256,
    "vision_use_head": True,
}
SIGLIP2_VISION_KEYS = frozenset(SIGLIP2_VISION_DEFAULTS) | keys("hidden_act layer_norm_eps attention_dropout")
SIGLIP2_VISION_NO_EFFECT = no_effect(act="hidden_act", eps="layer_norm_eps", dropout="attention_dropout")


def read_siglip2(r: Reader) -> Spec:
    """The Spec of a Siglip2Model config: SigLIP's text tower (Siglip2TextConfig has
    SiglipTextConfig's fields and defaults) and SigLIP 2's NaFlex vision tower (a biased Linear
    over flattened patches, num_patches learned positions resized to each image, the pooling
    head with ``vision_use_head``).

    Raises:
        ConfigError: a sub-config of another model_type or not an object; a hidden_size not a
            multiple of its heads (Siglip2Attention refuses it); a malformed size.
    """
    tcfg = _sub(r, "text_config", "siglip2_text_model")
    vcfg = _sub(r, "vision_config", "siglip2_vision_model")
    _check_typos("text_config", tcfg, SIGLIP_TEXT_KEYS, {**SIGLIP_TEXT_DEFAULTS, "projection_size": None})
    _check_typos("vision_config", vcfg, SIGLIP2_VISION_KEYS, SIGLIP2_VISION_DEFAULTS)
    tr, sizes = _text(r, tcfg, "siglip2_text_model", "Siglip2TextConfig", SIGLIP_TEXT_DEFAULTS)
    proj = tr.size("projection_size", sizes["d_model"], f"hidden_size = {sizes['d_model']}", nullable=True)
    vr = Reader(vcfg, "siglip2_vision_model", ("Siglip2VisionConfig", r.model), SIGLIP2_VISION_DEFAULTS, {})
    dv, hv = vr.size("hidden_size"), vr.size("num_attention_heads")
    check_divides("vision_config.hidden_size", dv, "num_attention_heads", hv, "Siglip2Attention")
    head = vr.flag("vision_use_head")
    patches = vr.size("num_patches")
    sizes.update(
        d_vis=dv,
        d_ff_vis=vr.size("intermediate_size"),
        N_vis=vr.size("num_hidden_layers"),
        C_vis=vr.size("num_channels"),
        p_vis=vr.size("patch_size"),
        P_vis=patches,
        d_proj=proj,
    )
    r.notes += [f"text_config: {n}" for n in tr.notes] + [f"vision_config: {n}" for n in vr.notes]
    if math.isqrt(patches) ** 2 != patches:  # Siglip2VisionEmbeddings reshapes the table to a square grid
        r.notes.append(
            f"num_patches {patches} is not a square: transformers builds the model (counted), but its forward "
            "cannot reshape the position table to a grid"
        )
    r.notes.insert(
        0,
        f"counted: transformers {r.model}: the text tower (text_model, bidirectional, {sizes['N']} layers of width "
        f"{sizes['d_model']}, with its head into {proj} dimensions), the SigLIP 2 vision tower (vision_model, "
        f"{sizes['N_vis']} layers of width {dv}, a Linear patch embedding of {sizes['p_vis']} x {sizes['p_vis']} px "
        f"patches, {patches} learned positions resized to each image"
        + (", with its attention-pooling head" if head else ", no pooling head (vision_use_head false)")
        + "), logit_scale and logit_bias; --part text is text_model, --part vision is vision_model, the two "
        "logit parameters are in neither",
    )
    return _spec(sizes, "siglip2_dual", vision_head=head)


CLIP = ModelType(
    model_type="clip",
    config_class="CLIPConfig",
    model_class="CLIPModel",
    read=read_clip,
    defaults={"projection_dim": 512},
    config_keys=keys("text_config vision_config projection_dim logit_scale_init_value initializer_factor"),
    no_param_effect=no_effect(init="logit_scale_init_value initializer_factor"),
    # 4.x files carry these (null): CLIPConfig.__post_init__ pops them, reading a given one
    legacy_keys=keys("text_config_dict vision_config_dict"),
    family="dual encoder",
)

SIGLIP = ModelType(
    model_type="siglip",
    config_class="SiglipConfig",
    model_class="SiglipModel",
    read=read_siglip,
    defaults={},
    config_keys=keys("text_config vision_config initializer_factor"),
    no_param_effect=no_effect(init="initializer_factor"),
    family="dual encoder",
)

SIGLIP2 = ModelType(
    model_type="siglip2",
    config_class="Siglip2Config",
    model_class="Siglip2Model",
    read=read_siglip2,
    defaults={},
    config_keys=keys("text_config vision_config initializer_factor"),
    no_param_effect=no_effect(init="initializer_factor"),
    family="dual encoder",
)

RECORDS = (CLIP, SIGLIP, SIGLIP2)
