"""Forward FLOPs of one image through a vision-language wrapper's vision tower and projector.

The text workload has no images (``flops`` counts the language model on tokens); this module
counts what ``get_image_features`` of the wrapper runs for one image: the patch embedding, the
tower's layers on the image's patch tokens, any merging (pixel shuffle, pooling, patch merger)
and the projector into the language model's width.  2 FLOPs per multiply-accumulate of the
matmuls and convolutions (``torch.utils.flop_counter.FlopCounterMode``'s convention); norms,
softmax, activations, rotary positions, bias adds and the pooling's averages are not counted.

With T the patch tokens the tower's layers see, d = d_vis, f = d_ff_vis, D = d_model:

- patch embedding (a convolution of stride p_vis, or a Linear over flattened patches):
  2 T_p C_vis p_vis^2 d (Qwen's 3-D patches: C_vis t_vis p_vis^2), T_p the patches;
- each of N_vis layers: q, k, v, out 8 T d^2; Q K^T and the weighted sum of V 4 T^2 d (over
  each attention span: Qwen2.5-VL's windowed layers sum over their windows); the MLP 4 T d f
  (a gated MLP, SwiGLU: 6 T d f);
- the projector on the tokens the language model receives.

Sources (transformers 5.24, ``get_image_features`` of each ``*ForConditionalGeneration``):
HF ``LlavaModel.get_image_features`` (every CLIP layer runs, ``vision_feature_layer`` picks the
hidden states, ``vision_feature_select_strategy`` "default" drops the class token, the
projector maps n_feat d_vis -> D -> D); ``Qwen2VisionTransformerPretrainedModel`` (Conv3d patches,
each image its own attention span, ``PatchMerger`` over m_vis^2 patches);
``Qwen2_5_VisionTransformerPretrainedModel`` with ``vision_utils.get_vision_window_index``
(windows of window_size // m_vis // p_vis merged tokens a side, full attention in the
``fullatt_block_indexes`` layers); ``Gemma3MultiModalProjector`` (average pooling to
mm_tokens_per_image, then a d_vis x D matmul); ``PaliGemmaMultiModalProjector`` (one Linear);
``Idefics3Connector`` (pixel shuffle of scale_factor, then a bias-free Linear);
``PixtralVisionModel`` (a gated MLP, 2-D rotary positions: any image size, the conv flooring each
side) with ``Mistral3MultiModalProjector`` (``Mistral3PatchMerger``: m_vis x m_vis patches unfolded
into a bias-free m_vis^2 d_vis -> d_vis map, then linear_1 and linear_2); ``Qwen3VLVisionModel``
(Qwen2-VL's blocks, its learned positions interpolated per image without matmuls, and each
``deepstack_visual_indexes`` layer's DeepStack merger, the merger's maps); ``Llama4VisionModel``
(Unfold + bias-free Linear patches, the class token appended, CLIP-style layers, the class token
dropped, ``Llama4VisionPixelShuffleMLP``: pixel shuffle then fc1 d_ff_vis -> d_ad_in, fc2) with
``Llama4MultiModalProjector`` (d_vout -> D, which ``Llama4ForConditionalGeneration.forward``
applies to what ``get_image_features`` returns: counted here too); ``Kimi_K25VisionModel``
(Conv2d patches of 3 channels, its position table resampled by an embedding_bag, each image its
own attention span, ``temporal_merge`` gathering m_vis x m_vis patches by index_add) with
``Kimi_K25MultimodalProjection`` (in_proj m_vis^2 d_vis -> m_vis^2 d_vis, out_proj -> D);
``LlavaNextModel`` (anyres
tiling, ``_anyres``: the CLIP tower and the projector on each of the image's tiles and its base
tile; ``pack_image_features`` unpads and appends ``image_newline`` without a matmul);
``Gemma4Model.get_image_features`` (``Gemma4VisionModel`` on the processor's patches, padded to
its patch budget, and ``embed_vision`` on the image's soft tokens: ``_gemma4``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.engine import symbols as S
from symtrans.engine.spec import Spec

# The wrappers' towers whose image FLOPs are modelled (spec.vision; LLaVA-NeXT's is clip with
# image_newline).
IMAGE_FLOP_VISIONS = (
    "clip",
    "qwen2_vl",
    "qwen2_5_vl",
    "gemma3",
    "paligemma",
    "idefics3",
    "mistral3",
    "qwen3_vl",
    "llama4",
    "kimi_k25",
    "gemma4",
)
# Wrappers whose tower takes images of any size (rotary positions, or Qwen3-VL's and Kimi
# K2.5's tables interpolated to each image's grid): the Qwen and Kimi towers' sides multiples
# of p_vis m_vis (their processors pad or resize to such sides).
VARIABLE_SIZE_VISIONS = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl", "mistral3", "kimi_k25")
_QWEN_VISIONS = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl")
# Gemma4ImageProcessor's max_soft_tokens values (transformers 5.24 _SUPPORTED_SOFT_TOKENS): it refuses others.
GEMMA4_SOFT_TOKENS = (70, 140, 280, 560, 1120)


@dataclass(frozen=True)
class ImageInput:
    """One image as the wrapper's processor hands it to ``get_image_features``.

    Attributes:
        height, width: pixels (a fixed-size tower: its config's image_size).
        drop_class: LLaVA's ``vision_feature_select_strategy`` "default" (the class token is
            not given to the language model); "full" keeps it.
        window: Qwen2.5-VL's ``window_size`` in pixels; ``full_layers`` its layers of full
            attention (``fullatt_block_indexes`` within range(N_vis)).
        pooled: Gemma 3's ``mm_tokens_per_image`` (the average pooling's target).
        deepstack: Qwen3-VL's DeepStack mergers that run (the distinct
            ``deepstack_visual_indexes`` within range(N_vis): each runs after its layer).
        shuffle: Llama 4's pixel shuffle as k = 1 / pixel_shuffle_ratio (k x k patches a token).
        pinpoints: LLaVA-NeXT's ``image_grid_pinpoints`` as (height, width) pairs in pixels, and
            ``tile`` its tower's image_size in pixels (the side of each tile); height and width
            are then the image's own size, before the processor resizes it.
        soft: Gemma 4's max_soft_tokens (the processor's soft-token budget per image); height
            and width are then the image's own size, before the processor resizes it.
    """

    height: int
    width: int
    drop_class: bool = True
    window: int = 0
    full_layers: int = 0
    pooled: int = 0
    deepstack: int = 0
    shuffle: int = 0
    pinpoints: tuple[tuple[int, int], ...] = ()
    tile: int = 0
    soft: int = 0


@dataclass(frozen=True)
class ImageFlops:
    """The FLOPs of one image: ``flops`` a SymPy expression in the model's sizes (the image's
    token counts written in as integers), ``patches`` the patch tokens the tower's layers see
    (CLIP's add its class token: ``tower_tokens``), ``lm_tokens`` what the language model
    receives, and ``notes`` how the tokens follow from the image."""

    flops: sp.Expr
    patches: int
    tower_tokens: int
    lm_tokens: int
    notes: tuple[str, ...]


def _layers(T: int, gated: bool = False, attention: sp.Expr | None = None) -> sp.Expr:
    """N_vis layers on T tokens: 8 T d^2 (q, k, v, out), 4 T^2 d (or ``attention`` per layer
    summed: a windowed tower), 4 T d f (6 T d f gated)."""
    d, f = S.d_vis, S.d_ff_vis
    mlp = (6 if gated else 4) * T * d * f
    if attention is None:
        return S.N_vis * (8 * T * d**2 + 4 * T**2 * d + mlp)
    return S.N_vis * (8 * T * d**2 + mlp) + attention


def _siglip_head(T: int) -> sp.Expr:
    """SigLIP's attention-pooling head on T tokens: q 2 d^2, k and v 4 T d^2, scores and
    values 4 T d, out_proj 2 d^2, MLP 4 d f (engine/dual.image_flops)."""
    d = S.d_vis
    return 4 * d**2 + 4 * T * d**2 + 4 * T * d + 4 * d * S.d_ff_vis


def _window_spans(n: int, w: int) -> list[int]:
    """The window lengths along a side of n merged tokens cut into windows of w."""
    return [w] * (n // w) + ([n % w] if n % w else [])


def check_modelled(spec: Spec) -> None:
    """Refuse a model whose image FLOPs are not modelled, naming its tower.

    Raises:
        InputError: a model without a wrapper's vision tower of IMAGE_FLOP_VISIONS.
    """
    if spec.vision not in IMAGE_FLOP_VISIONS:
        raise InputError(f"image FLOPs are not modelled for vision={spec.vision}")


def image_flops_modelled(spec: Spec) -> bool:
    """Whether ``vlm_image_flops`` counts ``spec``'s image tower (``check_modelled`` passes)."""
    try:
        check_modelled(spec)
    except InputError:
        return False
    return True


def grid(spec: Spec, image: ImageInput) -> tuple[int, int]:
    """The patch grid (rows, columns) of ``image``.

    Raises:
        InputError: a variable-size tower's image whose sides are not multiples of
            p_vis m_vis (its processor resizes to such sides), or a fixed-size tower's image
            other than its config's (its position table has one row per patch of that size).
    """
    v = spec.values
    p = v["p_vis"]
    if spec.vision == "mistral3":  # Pixtral: the conv floors each side; the merger needs m_vis x m_vis patches
        unit = p * v["m_vis"]
        if image.height < unit or image.width < unit:
            raise InputError(
                f"image size {image.height} x {image.width} px is below patch_size x spatial_merge_size = {unit} px "
                "a side: Mistral 3's patch merger gives it no token"
            )
        return image.height // p, image.width // p
    if spec.vision in VARIABLE_SIZE_VISIONS:
        unit = p * v["m_vis"]
        if image.height % unit or image.width % unit or not image.height or not image.width:
            raise InputError(
                f"image size {image.height} x {image.width} px: {spec.vision}'s processor resizes (or pads) images to sides that "
                f"are multiples of patch_size x spatial_merge_size = {unit} px; give such a size"
            )
        return image.height // p, image.width // p
    side = math.isqrt(v["P_vis"])
    return side, side


def vlm_image_flops(spec: Spec, image: ImageInput) -> ImageFlops:
    """Forward FLOPs of one image through ``spec``'s vision tower and projector (module doc).

    Raises:
        InputError: a model with no modelled image tower (the tower named), or an image
            size the tower cannot take (``grid``).
    """
    check_modelled(spec)
    if spec.vision == "gemma4":
        return _gemma4(spec, image)
    v = spec.values
    d, D, C, p = S.d_vis, S.d_model, S.C_vis, S.p_vis
    rows, cols = grid(spec, image)
    P = rows * cols
    patch = 2 * P * C * p**2 * d
    if spec.vision == "clip" and spec.image_newline:
        return _anyres(image, rows, patch)
    if spec.vision == "clip":
        T = P + 1
        lm = P if image.drop_class else T
        proj = 2 * lm * S.n_feat * d * D + 2 * lm * D**2
        kept = (
            f"the {P} patch tokens (vision_feature_select_strategy default: the class token dropped)"
            if image.drop_class
            else f"all {T} (vision_feature_select_strategy full)"
        )
        notes = [
            f"{rows} x {cols} = {P} patches + the class token = {T} tokens in each CLIP layer; the language model receives {kept}"
        ]
        return ImageFlops(patch + _layers(T) + proj, P, T, lm, tuple(notes))
    if spec.vision == "mistral3":
        m = v["m_vis"]
        if v["n_feat"] != 1:
            raise InputError(
                f"vision_feature_layer lists {v['n_feat']} layers: Mistral 3's projector norm and patch merger are "
                "one layer wide, so get_image_features cannot run"
            )
        lm = (rows // m) * (cols // m)
        merger = 2 * lm * m**2 * d**2 + 2 * lm * d * D + 2 * lm * D**2  # patch merger, linear_1, linear_2
        notes = [
            f"{rows} x {cols} = {P} patches of {v['p_vis']} px in each Pixtral layer (2-D rotary positions, any "
            f"size); the patch merger joins {m} x {m} into {lm} (the processor adds its row-break and end tokens)"
        ]
        return ImageFlops(patch + _layers(P, True) + merger, P, P, lm, tuple(notes))
    if spec.vision in _QWEN_VISIONS:
        m = v["m_vis"]
        out = S.d_proj if spec.has("d_proj") else D
        patch = 2 * P * C * S.t_vis * p**2 * d  # one image: one temporal patch (the frame repeated t_vis times)
        merger = 2 * P * m**2 * d**2 + 2 * P * d * out  # fc1 and fc2 on the P / m^2 merged tokens
        lm = P // (m * m)
        notes = [
            f"{rows} x {cols} = {P} patches of {v['p_vis']} px in each layer; the merger joins {m} x {m} into {lm}"
        ]
        if spec.vision == "qwen2_vl":
            return ImageFlops(patch + _layers(P) + merger, P, P, lm, tuple(notes))
        if spec.vision == "qwen3_vl":  # each DeepStack merger that runs: the merger's maps again
            notes.append(
                f"{image.deepstack} DeepStack merger(s) run (deepstack_visual_indexes within the {v['N_vis']} layers)"
            )
            return ImageFlops(patch + _layers(P) + (1 + image.deepstack) * merger, P, P, lm, tuple(notes))
        w = image.window // m // v["p_vis"]
        if w < 1:
            raise InputError(
                f"window_size {image.window} px is below spatial_merge_size x patch_size = {m * v['p_vis']} px: "
                "Qwen2.5-VL's window index divides by zero"
            )
        spans = sum(a * a for a in _window_spans(rows // m, w)) * sum(b * b for b in _window_spans(cols // m, w))
        windowed = spans * m**4  # sum over windows of (tokens in the window)^2
        attention = 4 * d * (image.full_layers * P**2 + (S.N_vis - image.full_layers) * windowed)
        notes.append(
            f"windows of {w} x {w} merged tokens ({w * m * v['p_vis']} px) in all but the {image.full_layers} layers "
            "of full attention (fullatt_block_indexes)"
        )
        return ImageFlops(patch + _layers(P, True, attention) + merger, P, P, lm, tuple(notes))
    if spec.vision == "llama4":
        return _llama4(spec, image, rows, patch)
    if spec.vision == "kimi_k25":  # MoonViT: one attention span per image, then m x m patches merged
        m = v["m_vis"]
        lm = P // (m * m)
        proj = 2 * lm * (m**2 * d) ** 2 + 2 * lm * m**2 * d * D  # in_proj, out_proj on the merged tokens
        notes = [
            f"{rows} x {cols} = {P} patches of {v['p_vis']} px in each MoonViT layer (its position table resampled "
            f"to the grid without matmuls); the projector joins {m} x {m} into {lm}"
        ]
        return ImageFlops(patch + _layers(P) + proj, P, P, lm, tuple(notes))
    head = _siglip_head(P) if spec.vision_head else 0
    if spec.vision == "gemma3":
        k = rows // math.isqrt(image.pooled)  # Gemma3MultiModalProjector's AvgPool2d kernel and stride
        if k < 1:
            raise InputError(
                f"mm_tokens_per_image {image.pooled} exceeds the {rows} x {cols} patches: Gemma 3's pooling cannot run"
            )
        lm = (rows // k) ** 2
        notes = [f"{rows} x {cols} = {P} patches in each SigLIP layer, average-pooled {k} x {k} to {lm} tokens"]
        return ImageFlops(patch + _layers(P) + head + 2 * lm * d * D, P, P, lm, tuple(notes))
    if spec.vision == "paligemma":
        out = S.d_proj if spec.has("d_proj") else D
        notes = [f"{rows} x {cols} = {P} patches in each SigLIP layer, each one token of the language model"]
        return ImageFlops(patch + _layers(P) + head + 2 * P * d * out, P, P, P, tuple(notes))
    # idefics3 (and smolvlm): the pixel shuffle stacks s x s patches into one token of s^2 d_vis
    s = v["m_vis"]
    if rows % s:
        raise InputError(
            f"the {rows} x {cols} patch grid does not split into {s} x {s} blocks (scale_factor {s}): "
            "Idefics3's pixel shuffle cannot run"
        )
    lm = P // (s * s)
    notes = [f"{rows} x {cols} = {P} patches in each layer; the pixel shuffle stacks {s} x {s} into {lm} tokens"]
    return ImageFlops(patch + _layers(P) + 2 * P * d * D, P, P, lm, tuple(notes))


def _llama4(spec: Spec, image: ImageInput, rows: int, patch: sp.Expr) -> ImageFlops:
    """One image_size x image_size tile through Llama 4's vision model and projector.

    Raises:
        InputError: a pixel shuffle that cannot run (the patch grid not divisible by k, or
            d_vis k^2 other than d_ff_vis, fc1's input), or adapter widths that do not chain
            (projector_input_dim, projector_output_dim, vision_output_dim).
    """
    v, k = spec.values, image.shuffle
    P = rows * rows
    if rows % k or v["d_vis"] * k * k != v["d_ff_vis"]:
        raise InputError(
            f"pixel_shuffle_ratio 1/{k}: the {rows} x {rows} patch grid and hidden_size {v['d_vis']} x {k}^2 must "
            f"give whole tokens of intermediate_size {v['d_ff_vis']} (the adapter's fc1 input): Llama 4's pixel "
            "shuffle cannot run"
        )
    if not v["d_ad_in"] == v["d_ad_out"] == v["d_vout"]:
        raise InputError(
            f"projector_input_dim {v['d_ad_in']}, projector_output_dim {v['d_ad_out']} and vision_output_dim "
            f"{v['d_vout']} differ: Llama 4's adapter and projector cannot chain"
        )
    T, lm = P + 1, P // (k * k)
    adapter = 2 * lm * S.d_ff_vis * S.d_ad_in + 2 * lm * S.d_ad_out**2
    proj = 2 * lm * S.d_vout * S.d_model
    notes = [
        f"one {image.height} x {image.width} px tile: {rows} x {rows} = {P} patches + the class token = {T} tokens "
        f"in each layer; the pixel shuffle stacks {k} x {k} patches into {lm} tokens (the processor cuts an image "
        "into such tiles and adds a global one, each costing this)"
    ]
    return ImageFlops(patch + _layers(T) + adapter + proj, P, T, lm, tuple(notes))


def select_best_resolution(height: int, width: int, pinpoints: tuple[tuple[int, int], ...]) -> tuple[int, int]:
    """The (height, width) in pixels of the pinpoint an image of ``height`` x ``width`` px is resized to.

    transformers 5.24's ``image_processing_utils.select_best_resolution``, the same float
    arithmetic in the same order: each pinpoint (h, w) scales the image by
    s = min(w / width, h / height); its effective resolution is
    min(int(width s) int(height s), width height) and its waste h w - effective; the first
    pinpoint of the largest effective resolution wins, a later one only with strictly less waste.

    Raises:
        InputError: no pinpoint keeps a pixel of the image (every effective resolution 0:
            transformers finds no best fit and fails).
    """
    best, most, least = None, 0, float("inf")
    for h, w in pinpoints:
        scale = min(w / width, h / height)
        effective = min(int(width * scale) * int(height * scale), width * height)
        wasted = w * h - effective
        if effective > most or (effective == most and wasted < least):
            best, most, least = (h, w), effective, wasted
    if best is None:
        raise InputError(
            f"image size {height} x {width} px keeps no pixel in any image_grid_pinpoints resolution: "
            "transformers' select_best_resolution finds no best fit"
        )
    return best


def unpadded_grid(height: int, width: int, rows: int, cols: int) -> tuple[int, int]:
    """The (rows, cols) of patch features LLaVA-NeXT keeps of the tiles' ``rows`` x ``cols``
    grid for an image of ``height`` x ``width`` px: transformers 5.24's ``unpad_image`` (the same
    float arithmetic), which cuts the padding the processor added to keep the aspect ratio."""
    if width / height > cols / rows:
        new = int(round(height * (cols / width), 7))
        return rows - 2 * ((rows - new) // 2), cols
    new = int(round(width * (rows / height), 7))
    return rows, cols - 2 * ((cols - new) // 2)


def _anyres(image: ImageInput, side: int, patch: sp.Expr) -> ImageFlops:
    """One image through LLaVA-NeXT's anyres tiling (``LlavaNextModel.get_image_features``).

    With S = image.tile px (the tower's image_size), P = (S // p_vis)^2 patches a tile and
    (h, w) = ``select_best_resolution`` of the image: n = ceil(h / S) ceil(w / S) tiles plus
    one base tile (the whole image resized to S x S), each through the CLIP tower on P + 1
    tokens (``image_size_to_num_patches``); the projector on the P patch tokens of each
    (vision_feature_select_strategy "default"); the language model receives the base tile's P
    tokens, then the (h // S) side x (w // S) side grid of the tiles' tokens unpadded to
    r x c (``unpadded_grid``), each of its r rows followed by image_newline: P + r (c + 1).

    Raises:
        InputError: the pinpoint chosen is not a whole number of tiles a side (transformers'
            ``pack_image_features`` cannot reshape the tiles' features into its grid).
    """
    t, P = image.tile, side * side
    h, w = select_best_resolution(image.height, image.width, image.pinpoints)
    if h % t or w % t:
        raise InputError(
            f"image_grid_pinpoints resolution {h} x {w} px (the best fit of a {image.height} x {image.width} px "
            f"image) is not a whole number of {t} px tiles a side: transformers' pack_image_features cannot reshape "
            "its features"
        )
    tiles = (h // t) * (w // t)
    n = tiles + 1
    r, c = unpadded_grid(image.height, image.width, (h // t) * side, (w // t) * side)
    T, d, D = P + 1, S.d_vis, S.d_model
    proj = 2 * P * S.n_feat * d * D + 2 * P * D**2
    lm = P + r * (c + 1)
    notes = [
        f"anyres: the {image.height} x {image.width} px image is resized to fit {h} x {w} px (select_best_resolution "
        f"over image_grid_pinpoints), cut into {h // t} x {w // t} = {tiles} tiles of {t} px, plus the base tile "
        f"(the whole image at {t} px): {n} tiles, each {side} x {side} = {P} patches + the class token = {T} tokens "
        "in each CLIP layer, and the projector on each tile's patch tokens (the class token dropped)",
        f"the language model receives the base tile's {P} tokens and the {(h // t) * side} x {(w // t) * side} grid "
        f"of the tiles' tokens unpadded to {r} x {c}, each row followed by image_newline: {P} + {r} x ({c} + 1) = {lm}",
    ]
    return ImageFlops(n * (patch + _layers(T) + proj), n * P, n * T, lm, tuple(notes))


def gemma4_resize(height: int, width: int, patch: int, budget: int, k: int) -> tuple[int, int]:
    """The (height, width) in pixels Gemma 4's processor resizes an image of ``height`` x
    ``width`` px to, for patches of ``patch`` px, a budget of ``budget`` patches and a pooling
    kernel of ``k``.

    transformers 5.24's ``image_processing_gemma4.get_aspect_ratio_preserving_size``, the same
    float arithmetic in the same order: scale by sqrt(budget patch^2 / (height width)), floor
    each side to a multiple of k patch px; a side floored to 0 becomes k patch px, the other
    floor(long / short) k patch px, at most (budget // k^2) k patch px.

    Raises:
        InputError: where transformers raises (both sides floored to 0, or the result over the
            budget).
    """
    total, target = height * width, budget * patch**2
    factor = math.sqrt(target / total)
    unit = k * patch
    h = int(math.floor(factor * height / unit)) * unit
    w = int(math.floor(factor * width / unit)) * unit
    if h == 0 and w == 0:
        raise InputError(
            f"image size {height} x {width} px resizes to 0 x 0 px: Gemma 4's processor (sides multiples of "
            f"pooling_kernel_size x patch_size = {unit} px) fails"
        )
    longest = (budget // k**2) * unit
    if h == 0:
        h, w = unit, min(int(math.floor(width / height)) * unit, longest)
    elif w == 0:
        h, w = min(int(math.floor(height / width)) * unit, longest), unit
    if h * w > target:
        raise InputError(
            f"image size {height} x {width} px resizes to {h} x {w} px, over the {budget} patches of {patch} px: "
            "Gemma 4's processor fails"
        )
    return h, w


def _gemma4(spec: Spec, image: ImageInput) -> ImageFlops:
    """One image through Gemma 4's ``get_image_features`` (transformers 5.24 modeling_gemma4.py).

    With n = image.soft (max_soft_tokens), k = m_vis (pooling_kernel_size), the processor's
    budget T = n k^2 patches (``Gemma4ImageProcessor._preprocess``: max_patches): the image is
    resized to h x w px (``gemma4_resize``), cut into (h / p_vis)(w / p_vis) patches and padded
    to T; the tower runs on all T (padding masked, not skipped), so its FLOPs do not depend on
    the image's size:

    - ``Gemma4VisionPatchEmbedder.input_proj`` on the T flattened patches: 2 T C_vis p_vis^2 d_vis,
      C_vis = 3 (the position tables are an embedding lookup: no FLOPs);
    - each of N_vis ``Gemma4VisionEncoderLayer``: q 2 T d_vis h_vis d_k_vis, k and v
      4 T d_vis h_kv_vis d_k_vis, o 2 T h_vis d_k_vis d_vis (``Gemma4VisionAttention``; q_norm,
      k_norm, v_norm and the 2-D rotary positions elementwise); Q K^T and the weighted sum of V
      4 T^2 h_vis d_k_vis (``eager_attention_forward``, the K/V heads repeated to h_vis); the
      GeGLU ``Gemma4VisionMLP`` 6 T d_vis d_ff_vis;
    - ``Gemma4VisionPooler._avg_pool_by_positions``: a (n x T) averaging matrix times the
      (T x d_vis) states, 2 n T d_vis;
    - ``Gemma4MultimodalEmbedder.embedding_projection`` on the image's soft tokens alone
      (the pooler's mask strips the padding): 2 t d_vis d_model, t = (h / (k p_vis))(w / (k p_vis)),
      the tokens the language model receives (``num_soft_tokens_per_image``).

    Raises:
        InputError: pooling_kernel_size 1 (the pooler then returns its padding mask, True for
            padding, which get_image_features keeps as the valid tokens: its split fails), a
            resize transformers refuses (``gemma4_resize``), or a patch grid side over
            position_embedding_size (the position table's lookup is out of range).
    """
    v = spec.values
    p, k, n = v["p_vis"], v["m_vis"], image.soft
    if k == 1:
        raise InputError(
            "pooling_kernel_size 1: Gemma 4's pooler then returns its padding mask (True for padding) as the mask "
            "of valid tokens, so get_image_features keeps the wrong rows and its split fails"
        )
    T = n * k * k
    h, w = gemma4_resize(image.height, image.width, p, T, k)
    rows, cols = h // p, w // p
    if max(rows, cols) > v["P_vis"]:
        raise InputError(
            f"the {rows} x {cols} patch grid (the {image.height} x {image.width} px image resized to {h} x {w} px) "
            f"has a side over position_embedding_size {v['P_vis']}: Gemma 4's position table has no row for it"
        )
    lm = (rows // k) * (cols // k)
    d, f, dk = S.d_vis, S.d_ff_vis, S.d_k_vis
    q, kv = S.h_vis * dk, S.h_kv_vis * dk
    layer = 2 * T * d * q + 4 * T * d * kv + 2 * T * q * d + 4 * T**2 * q + 6 * T * d * f
    flops = 2 * T * S.C_vis * S.p_vis**2 * d + S.N_vis * layer + 2 * n * T * d + 2 * lm * d * S.d_model
    notes = (
        f"the {image.height} x {image.width} px image is resized to {h} x {w} px (aspect ratio kept, sides "
        f"multiples of pooling_kernel_size x patch_size = {k * p} px, at most max_soft_tokens x {k}^2 = {T} "
        f"patches): {rows} x {cols} = {rows * cols} patches, padded to {T}, all of which each layer computes "
        "(the padding masked, not skipped)",
        f"the pooler averages {k} x {k} patches into {n} slots by a matmul ({n} x {T} weights times the states: "
        f"counted); embed_vision maps the image's {rows // k} x {cols // k} = {lm} soft tokens, the language "
        f"model's tokens for it (max_soft_tokens {n})",
    )
    return ImageFlops(flops, rows * cols, T, lm, notes)
