"""One image as a vision-language wrapper's config describes it, for ``flops --part vision``:
its size in pixels and the keys that change what ``get_image_features`` computes but no
parameter (``engine.vision_flops.ImageInput``).

Defaults are transformers 5.24's: LlavaConfig's vision_feature_select_strategy "default" and,
without vision_config, its CLIP ViT-L/14 at 336 px (a vision_config dict: CLIPVisionConfig's
224 px); SiglipVisionConfig's and Idefics3VisionConfig's image_size 224 (PaliGemma without
vision_config: its So400m at 224 px); Gemma3Config's mm_tokens_per_image 256;
Qwen2_5_VLVisionConfig's window_size 112 and fullatt_block_indexes (7, 15, 23, 31);
Qwen3VLVisionConfig's deepstack_visual_indexes (8, 16, 24) (Qwen3.5's tower has none);
Llama4VisionConfig's image_size 448 and pixel_shuffle_ratio 0.5; PixtralVisionConfig's image_size 1024 (Mistral3Config without vision_config: 1540), the longest
side its processor gives, which ``--image-size`` may change (2-D rotary positions: any size).
Qwen2-VL, Qwen2.5-VL and Qwen3-VL have no image size in their config (their processor resizes
each image to a multiple of patch_size x spatial_merge_size between min_pixels and max_pixels),
nor has Kimi K2.5 (its processor pads each side to a multiple of patch_size x
merge_kernel_size): the size must be given.  LLaVA-NeXT tiles each image after a best fit among its
image_grid_pinpoints (LlavaNextConfig's default [[336, 672], [672, 336], [672, 672], [1008, 336],
[336, 1008]]), so its FLOPs depend on the image's own size, which must be given too.  Gemma 4's
processor resizes each image to fit its budget of max_soft_tokens x pooling_kernel_size^2
patches and pads it to the budget: the tokens per image depend on the image's own size, which
must be given; the budget is the config's vision_soft_tokens_per_image (the published configs
write the processor's max_soft_tokens there), else Gemma4ImageProcessor's default 280.
"""

from __future__ import annotations

from typing import Any

from symtrans.catalog.reader import ConfigError, show
from symtrans.engine.spec import Spec
from symtrans.engine.vision_flops import GEMMA4_SOFT_TOKENS, VARIABLE_SIZE_VISIONS, ImageInput, check_modelled

# The image side in pixels of a tower whose config names none: (a vision_config without
# image_size: the tower's config class's default; no vision_config: the wrapper's default tower).
_SIDE_DEFAULT = {
    "clip": (224, 336),
    "gemma3": (224, 224),
    "paligemma": (224, 224),
    "idefics3": (224, 224),
    "llama4": (448, 448),
    "mistral3": (1024, 1540),
}
_TOWER = {
    "clip": "LLaVA's CLIP tower",
    "gemma3": "Gemma 3's SigLIP tower",
    "paligemma": "PaliGemma's SigLIP tower",
    "idefics3": "Idefics3's SigLIP-shaped tower (one tile)",
    "llama4": "Llama 4's vision tower (one tile)",
}
_PINPOINTS = ((336, 672), (672, 336), (672, 672), (1008, 336), (336, 1008))  # LlavaNextConfig.__post_init__
_GEMMA4_SOFT = 280  # Gemma4ImageProcessor.max_soft_tokens
_QWEN2_5_WINDOW = 112
_QWEN2_5_FULL = (7, 15, 23, 31)


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{what} must be a positive integer, not {show(value)}")
    return value


def _vision_config(cfg: dict[str, Any]) -> dict[str, Any] | None:
    """``cfg``'s vision_config: a dict, or None when absent (or null).

    Raises:
        ConfigError: a vision_config that is not an object.
    """
    vcfg = cfg.get("vision_config")
    if vcfg is not None and not isinstance(vcfg, dict):
        raise ConfigError(f"vision_config must be an object of the vision tower's keys, not {show(vcfg)}")
    return vcfg


def config_side(cfg: dict[str, Any], spec: Spec) -> int:
    """The image side in pixels a fixed-size tower's config names (vision_config.image_size),
    else its default (``_SIDE_DEFAULT``).

    Raises:
        ConfigError: a vision_config that is not an object, or an image_size that is not a
            positive integer.
    """
    vcfg = _vision_config(cfg)
    with_config, without = _SIDE_DEFAULT[spec.vision]
    if vcfg is None:  # no vision_config: the wrapper's own default tower
        return without
    return _int(vcfg.get("image_size", with_config), "vision_config.image_size")


def image_input(cfg: dict[str, Any], spec: Spec, size: tuple[int, int] | None) -> ImageInput:
    """The image of ``flops --part vision``: ``size`` (height, width) or the config's.

    Raises:
        InputError: a tower whose image FLOPs are not modelled (``check_modelled``).
        ConfigError: no size for a tower without one in its config (Qwen2-VL, Qwen2.5-VL, Qwen3-VL,
            Kimi K2.5, LLaVA-NeXT, Gemma 4), Gemma 4's vision_soft_tokens_per_image not a value its
            processor takes, a
            size other than a fixed-size tower's, a vision_config that is not an object, or a
            malformed key.
    """
    check_modelled(spec)
    vcfg = _vision_config(cfg) or {}
    if spec.vision == "mistral3":
        if size is None:
            side = config_side(cfg, spec)  # the longest side its processor gives: any size runs
            size = (side, side)
        height, width = size
    elif spec.vision in VARIABLE_SIZE_VISIONS:
        if size is None:
            raise ConfigError(
                f"{spec.vision} takes images of any size and its config names none: give --image-size (pixels, "
                "e.g. 448 or 448x672)"
            )
        height, width = size
    elif spec.image_newline:  # LLaVA-NeXT: tiles of the tower's size after a best fit of the image's own
        if size is None:
            raise ConfigError(
                "llava_next tiles each image by its own size (anyres: a best fit among image_grid_pinpoints): give "
                "--image-size (pixels, e.g. 672 or 480x640)"
            )
        height, width = size
    elif spec.vision == "gemma4":  # resized to its patch budget by the image's own size
        if size is None:
            raise ConfigError(
                "gemma4 resizes each image by its own size to its soft-token budget: give --image-size (pixels, "
                "e.g. 768 or 480x640)"
            )
        height, width = size
    else:
        side = config_side(cfg, spec)
        if size is not None and size != (side, side):
            raise ConfigError(
                f"{_TOWER[spec.vision]} takes {side} x {side} px images only (its position table has one row per "
                f"patch of that size), not {size[0]} x {size[1]}"
            )
        height = width = side
    kw: dict[str, Any] = {}
    if spec.vision == "clip":
        strategy = cfg.get("vision_feature_select_strategy", "default")
        if strategy not in ("default", "full"):
            raise ConfigError(f"vision_feature_select_strategy must be default or full, not {show(strategy)}")
        kw["drop_class"] = strategy == "default"
        if spec.image_newline:
            kw.update(_anyres_keys(cfg, spec, strategy))
        n = spec.size("N_vis")
        feat = cfg.get("vision_feature_layer", -2)
        for i in feat if isinstance(feat, list) else [feat]:
            if isinstance(i, bool) or not isinstance(i, int) or not -(n + 1) <= i <= n:
                raise ConfigError(
                    f"vision_feature_layer {show(i)} is outside the {n + 1} hidden states of the {n}-layer tower "
                    "(the embeddings' and each layer's): get_image_features cannot pick it"
                )
    elif spec.vision == "qwen2_5_vl":
        kw["window"] = _int(vcfg.get("window_size", _QWEN2_5_WINDOW), "vision_config.window_size")
        full = vcfg.get("fullatt_block_indexes", list(_QWEN2_5_FULL))
        if not isinstance(full, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in full):
            raise ConfigError(f"vision_config.fullatt_block_indexes must be a list of integers, not {show(full)}")
        kw["full_layers"] = len({i for i in full if 0 <= i < spec.size("N_vis")})  # `layer_num in` the list
    elif spec.vision == "qwen3_vl" and spec.has("n_ds"):  # Qwen3.5's tower (no n_ds) runs none
        deep = vcfg.get("deepstack_visual_indexes", [8, 16, 24])
        if not isinstance(deep, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in deep):
            raise ConfigError(f"vision_config.deepstack_visual_indexes must be a list of integers, not {show(deep)}")
        kw["deepstack"] = len({i for i in deep if 0 <= i < spec.size("N_vis")})  # `layer_num in` the list
    elif spec.vision == "kimi_k25":
        pos_h = _int(vcfg.get("pos_emb_height", 64), "vision_config.pos_emb_height")
        pos_w = _int(vcfg.get("pos_emb_width", 64), "vision_config.pos_emb_width")
        if pos_h > pos_w:  # Kimi_K25VisionPositionEmbeddings: num_grid_per_side = pos_emb_height
            raise ConfigError(
                f"vision_config.pos_emb_height {pos_h} exceeds pos_emb_width {pos_w}: Kimi K2.5 resamples a "
                f"{pos_h} x {pos_h} square of its {pos_h} x {pos_w} position table, past its rows, so "
                "get_image_features cannot run"
            )
    elif spec.vision == "llama4":
        ratio = vcfg.get("pixel_shuffle_ratio", 0.5)
        k = round(1 / ratio) if isinstance(ratio, (int, float)) and not isinstance(ratio, bool) and ratio > 0 else 0
        if k < 1 or abs(ratio * k - 1) > 1e-9:
            raise ConfigError(
                f"vision_config.pixel_shuffle_ratio {show(ratio)} is not 1/k for a whole k: symtrans counts a pixel "
                "shuffle of k x k patches"
            )
        kw["shuffle"] = k
    elif spec.vision == "gemma4":
        soft = cfg.get("vision_soft_tokens_per_image", _GEMMA4_SOFT)
        if isinstance(soft, bool) or not isinstance(soft, int) or soft not in GEMMA4_SOFT_TOKENS:
            raise ConfigError(
                f"vision_soft_tokens_per_image must be one of {', '.join(map(str, GEMMA4_SOFT_TOKENS))} (Gemma 4's "
                f"processor refuses other max_soft_tokens), not {show(soft)}"
            )
        kw["soft"] = soft
    elif spec.vision == "gemma3":
        kw["pooled"] = _int(cfg.get("mm_tokens_per_image", 256), "mm_tokens_per_image")
    return ImageInput(height=height, width=width, **kw)


def _anyres_keys(cfg: dict[str, Any], spec: Spec, strategy: str) -> dict[str, Any]:
    """LLaVA-NeXT's ``pinpoints`` and ``tile`` (``engine.vision_flops.ImageInput``).

    Raises:
        ConfigError: image_grid_pinpoints not a list of [height, width] pairs of positive
            integers, or vision_feature_select_strategy "full" (transformers' pack_image_features
            reshapes each tile's features to (image_size // patch_size)^2 tokens, which the class
            token breaks).
    """
    if strategy != "default":
        raise ConfigError(
            "vision_feature_select_strategy full: LLaVA-NeXT's pack_image_features reshapes each tile's features "
            "to (image_size // patch_size)^2 patch tokens, which the class token kept by full breaks"
        )
    raw = cfg.get("image_grid_pinpoints")
    pins = _PINPOINTS if raw is None else raw
    ok = isinstance(pins, (list, tuple)) and len(pins) > 0
    ok = ok and all(
        isinstance(p, (list, tuple))
        and len(p) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in p)
        for p in pins
    )
    if not ok:
        raise ConfigError(
            f"image_grid_pinpoints must be a list of [height, width] pairs of positive integers, not {show(raw)}"
        )
    return {"pinpoints": tuple((h, w) for h, w in pins), "tile": config_side(cfg, spec)}
