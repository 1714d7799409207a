"""Vision towers of vision-language wrappers and the projectors into the language model.

Each function returns the Cost subtrees of the image side, placed beside the language model
by ``architectures.build`` when ``Spec.vision`` is set.  Their parameters are exact
(checked against transformers 5.x on the meta device by tests/test_vision_towers.py);
the text workload has no images, so their FLOPs in a text forward are 0 (the tower runs
once per image, which the text forward does not include).

Sources: Radford et al. 2021 §2.4 (CLIP's ViT: class token, learned positions, a LayerNorm
before the transformer) and HF ``CLIPVisionTransformer`` (``embeddings.class_embedding``,
``patch_embedding`` a bias-free Conv2d, ``position_embedding`` of patches + 1 rows,
``pre_layrnorm``, ``encoder.layers`` with q/k/v/out and fc1/fc2 all biased, two LayerNorms
each, ``post_layernorm``); Liu et al. 2023 (LLaVA-1.5: a two-layer MLP projector) and HF
``LlavaMultiModalProjector`` (``linear_1`` d_vis*n_feat -> d_model, GELU, ``linear_2``);
Wang et al. 2024 §2.1 (Qwen2-VL: a 675M ViT, 3-D patches of 2 frames, adjacent 2 x 2 tokens
merged by an MLP) and HF ``Qwen2VisionTransformerPretrainedModel`` (``patch_embed.proj`` a
bias-free Conv3d, ``blocks`` with fused qkv and proj biased, fc1/fc2 biased, LayerNorms
norm1/norm2, ``merger``: LayerNorm ln_q, Linear m^2 d_vis -> m^2 d_vis, GELU, Linear -> d_proj);
Zhai et al. 2023 §2 (SigLIP: a ViT without class token, a MAP attention-pooling head) and HF
``SiglipVisionTransformer`` (``patch_embedding`` a biased Conv2d, ``position_embedding`` of
(image_size // patch_size)^2 rows, ``encoder.layers`` as CLIP's, ``post_layernorm``, ``head`` a
``SiglipMultiheadAttentionPoolingHead`` when ``vision_use_head``: probe, torch
``nn.MultiheadAttention`` (in_proj 3 d_vis x d_vis + 3 d_vis, out_proj biased), LayerNorm, MLP);
Gemma Team 2025 §2.1 (Gemma 3: a 400M SigLIP encoder, its 4096 patch tokens average-pooled to 256
and projected) and HF ``Gemma3MultiModalProjector`` (``mm_soft_emb_norm`` a Gemma RMSNorm of
d_vis, ``mm_input_projection_weight`` d_vis x d_model, bias-free; the pooling has no weights);
Beyer et al. 2024 §3 (PaliGemma: SigLIP So400m and Gemma joined by one linear projection) and HF
``PaliGemmaMultiModalProjector`` (``linear``: d_vis -> projection_dim, biased); Laurençon et al.
2024 §3 (Idefics3: SigLIP, a pixel shuffle of ratio r, one linear map into Llama 3) and HF
``Idefics3VisionTransformer`` (SigLIP's embeddings and encoder, ``post_layernorm``, no head) with
``Idefics3Connector`` (``modality_projection.proj``: scale_factor^2 d_vis -> d_model, bias-free;
the pixel shuffle has no weights), which ``SmolVLMForConditionalGeneration`` copies.
HF ``Qwen3_5VisionModel`` (transformers 5.24 models/qwen3_5) is Qwen3-VL's vision model without
its DeepStack mergers: ``qwen3_vl_tower`` without n_ds counts it.
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.engine import symbols as S
from symtrans.engine.components import linear, norm
from symtrans.engine.cost import ZERO, Cost, Step
from symtrans.engine.roles import AUDIO_BLOCKS, VISION_BLOCKS, Block, Role
from symtrans.engine.spec import Spec

_CLIP = "Radford et al. 2021 §2.4 (CLIP ViT); HF CLIPVisionTransformer"
_LLAVA = "Liu et al. 2023 (LLaVA-1.5 MLP projector); HF LlavaMultiModalProjector"
_LLAVA_NEXT = "Liu et al. 2024 (LLaVA-NeXT); HF LlavaNextModel.image_newline"
_QWEN2_VL = "Wang et al. 2024 §2.1 (Qwen2-VL ViT); HF Qwen2VisionTransformerPretrainedModel"
_SIGLIP = "Zhai et al. 2023 (SigLIP ViT, MAP head); HF SiglipVisionTransformer"
_GEMMA3 = "Gemma Team 2025 §2.1 (Gemma 3 projector); HF Gemma3MultiModalProjector"
_QWEN2_5_VL = "Bai et al. 2025 §2.1 (Qwen2.5-VL ViT: RMSNorm, SwiGLU); HF Qwen2_5_VisionTransformerPretrainedModel"
_PIXTRAL = "Mistral AI 2024 (Pixtral 12B: a ViT with RoPE-2D, gated FFN, RMSNorm); HF PixtralVisionModel"
_MISTRAL3 = "HF Mistral3MultiModalProjector (RMSNorm, patch merger, two-layer MLP)"
_PALIGEMMA = "Beyer et al. 2024 §3 (PaliGemma linear projection); HF PaliGemmaMultiModalProjector"
_IDEFICS3 = (
    "Laurençon et al. 2024 §3 (Idefics3 pixel shuffle + linear); HF Idefics3Connector, Idefics3VisionTransformer"
)
_QWEN3_VL = (
    "Qwen Team 2025 (Qwen3-VL: learned positions interpolated per image, DeepStack); HF Qwen3VLVisionModel "
    "(Qwen3VLVisionPatchEmbed, pos_embed, Qwen3VLVisionBlock, Qwen3VLVisionPatchMerger)"
)
_KIMI_K25 = (
    "Kimi Team 2026 (Kimi K2.5: a MoonViT tower, 2 x 2 patch merging into an MLP projector); HF Kimi_K25VisionModel "
    "(Kimi_K25VisionPatchEmbed, Kimi_K25VisionEncoderLayer, final_layernorm) and Kimi_K25MultimodalProjection"
)
_LLAMA4 = (
    "Meta 2025 (Llama 4: early-fusion MetaCLIP-based vision encoder); HF Llama4VisionModel "
    "(Llama4UnfoldConvolution, Llama4VisionEncoderLayer, Llama4VisionPixelShuffleMLP) and Llama4MultiModalProjector"
)
_GEMMA4 = (
    "Gemma Team 2026 (Gemma 4); HF Gemma4VisionModel (Gemma4VisionPatchEmbedder, Gemma4VisionEncoderLayer, "
    "Gemma4VisionPooler) and Gemma4MultimodalEmbedder (model.embed_vision), transformers 5.24 models/gemma4"
)
_GEMMA4_AUDIO = (
    "Gemma Team 2026 (Gemma 4 audio: a USM-style conformer, Zhang et al. 2023); HF Gemma4AudioModel "
    "(Gemma4AudioSubSampleConvProjection, Gemma4AudioLayer) and Gemma4MultimodalEmbedder (model.embed_audio), "
    "transformers 5.24 models/gemma4"
)
_NO_AUDIO = "the text workload has no audio: the audio tower runs once per clip, not in this forward"
_NO_IMAGES = "the text workload has no images: the vision tower runs once per image, not in this forward"


def _ln(spec: Spec, label: str, width: sp.Expr) -> list[Step]:
    return norm(spec, label, width, ZERO, kind="layernorm", bias=True)


def _lin(label: str, d_in: sp.Expr, d_out: sp.Expr, bias: bool, source: str) -> list[Step]:
    return linear(label, d_in, d_out, ZERO, bias, source, role=Role.VISION)


def _conv(label: str, taps: sp.Expr, source: str, bias: bool = False) -> Step:
    w = taps * S.d_vis
    return Step(
        label=label,
        role=Role.VISION,
        params=w + S.d_vis if bias else w,
        weights=w,
        note=("biased" if bias else "bias-free")
        + " convolution: each patch of C_vis channels mapped to d_vis (a linear map of its pixels)",
        source=source,
        input_grad=False,
    )


def _positions_with_class(label: str, note: str, source: str) -> Step:
    """A learned position table of P_vis + 1 rows of d_vis: one per patch and the class token's."""
    rows = (S.P_vis + 1) * S.d_vis
    return Step(label=label, role=Role.VISION, params=rows, weights=rows, note=note, source=source)


def _positions(note: str, source: str) -> Step:
    """A learned position table of P_vis rows of width d_vis."""
    rows = S.P_vis * S.d_vis
    return Step(label="position table", role=Role.VISION, params=rows, weights=rows, note=note, source=source)


def _vit_layer(spec: Spec, qkv_fused: bool, source: str) -> Cost:
    """One pre-norm ViT layer: LayerNorm, attention (q, k, v, out, all biased), LayerNorm,
    MLP d_vis -> d_ff_vis -> d_vis (biased).  4 d_vis^2 + 2 d_vis d_ff_vis + 9 d_vis + d_ff_vis."""
    d, f = S.d_vis, S.d_ff_vis
    steps = _ln(spec, "norm before attention", d)
    if qkv_fused:
        steps += _lin("qkv (fused q, k, v)", d, 3 * d, True, source)
    else:
        for name in ("W_Q", "W_K", "W_V"):
            steps += _lin(name, d, d, True, source)
    steps += _lin("W_O", d, d, True, source)
    steps += _ln(spec, "norm before the MLP", d)
    steps += _lin("fc1", d, f, True, source) + _lin("fc2", f, d, True, source)
    return Cost(name="vision layer", block=Block.LAYER, steps=tuple(steps), multiplicity=S.N_vis, note=_NO_IMAGES)


def clip_vision_tower(spec: Spec) -> Cost:
    """CLIP's vision transformer (``CLIPVisionTransformer``), as LLaVA and CLIPModel hold it.

    d_vis (class token) + C_vis p_vis^2 d_vis (patch conv) + (P_vis + 1) d_vis (positions)
    + 2 d_vis (pre-LN) + N_vis layers + 2 d_vis (post-LN).
    """
    d = S.d_vis
    emb = [
        Step(label="class token", role=Role.VISION, params=d, note="one learned d_vis vector", source=_CLIP),
        _conv("patch embedding (Conv2d p_vis x p_vis, stride p_vis)", S.C_vis * S.p_vis**2, _CLIP),
        _positions_with_class("position table", "one learned row per patch and one for the class token", _CLIP),
    ]
    emb += _ln(spec, "pre_layrnorm", d)
    return Cost(
        name="vision tower (CLIP)",
        block=Block.VISION_TOWER,
        steps=tuple(emb + _ln(spec, "post_layernorm", d)),
        children=(_vit_layer(spec, False, _CLIP),),
        note=_NO_IMAGES,
        source=_CLIP,
    )


def clip_tower(spec: Spec) -> list[Cost]:
    """LLaVA's CLIP vision tower (``clip_vision_tower``) and projector.

    Projector: n_feat d_vis d_model + d_model^2 (+ 2 d_model with ``projector_bias``), and
    LLaVA-NeXT's image_newline, d_model, with ``image_newline``.
    """
    d = S.d_vis
    tower = clip_vision_tower(spec)
    b = spec.projector_bias
    proj = _lin("linear_1", S.n_feat * d, S.d_model, b, _LLAVA) + _lin("linear_2", S.d_model, S.d_model, b, _LLAVA)
    if spec.image_newline:
        proj.append(
            Step(
                label="image_newline",
                role=Role.VISION,
                params=S.d_model,
                note="one learned d_model vector after each row of image features (LLaVA-NeXT)",
                source=_LLAVA_NEXT,
            )
        )
    return [tower, Cost(name="multi-modal projector", block=Block.PROJECTOR, steps=tuple(proj), source=_LLAVA)]


def qwen2_vl_tower(spec: Spec) -> list[Cost]:
    """Qwen2-VL's vision tower with its patch merger (``model.visual``).

    C_vis t_vis p_vis^2 d_vis (3-D patch conv) + N_vis layers + 2 d_vis (ln_q) +
    (m_vis^2 d_vis)^2 + m_vis^2 d_vis + m_vis^2 d_vis d_proj + d_proj (merger MLP).
    """
    d, m2 = S.d_vis, S.m_vis**2
    out = S.d_proj if spec.has("d_proj") else S.d_model
    merger = _ln(spec, "ln_q", d) + _lin("merger fc1", m2 * d, m2 * d, True, _QWEN2_VL)
    merger += _lin("merger fc2", m2 * d, out, True, _QWEN2_VL)
    tower = Cost(
        name="vision tower (Qwen2-VL)",
        block=Block.VISION_TOWER,
        steps=(_conv("patch embedding (Conv3d t_vis x p_vis x p_vis)", S.C_vis * S.t_vis * S.p_vis**2, _QWEN2_VL),),
        children=(_vit_layer(spec, True, _QWEN2_VL),),
        note=_NO_IMAGES,
        source=_QWEN2_VL,
    )
    return [tower, Cost(name="patch merger", block=Block.PROJECTOR, steps=tuple(merger), source=_QWEN2_VL)]


def siglip_tower(spec: Spec, name: str = "vision tower (SigLIP)", source: str = _SIGLIP) -> Cost:
    """SigLIP's vision transformer (``SiglipVisionModel``), as Gemma 3 and PaliGemma wrap it,
    and Idefics3's copy of it (``Idefics3VisionTransformer``, never with a head).

    C_vis p_vis^2 d_vis + d_vis (biased patch conv) + P_vis d_vis (positions, no class token)
    + N_vis layers + 2 d_vis (post_layernorm); with ``vision_head`` the MAP head adds
    d_vis (probe) + 4 d_vis^2 + 4 d_vis (nn.MultiheadAttention) + 2 d_vis (LayerNorm)
    + 2 d_vis d_ff_vis + d_ff_vis + d_vis (MLP).
    """
    d, f = S.d_vis, S.d_ff_vis
    emb = [
        _conv("patch embedding (Conv2d p_vis x p_vis, stride p_vis, biased)", S.C_vis * S.p_vis**2, _SIGLIP, True),
        _positions("one learned row per patch (no class token)", _SIGLIP),
    ]
    steps = emb + _ln(spec, "post_layernorm", d)
    if spec.vision_head:
        steps.append(Step(label="head probe", role=Role.VISION, params=d, note="one learned query", source=_SIGLIP))
        steps += _lin("head in_proj (q, k, v)", d, 3 * d, True, _SIGLIP) + _lin("head out_proj", d, d, True, _SIGLIP)
        steps += _ln(spec, "head layernorm", d)
        steps += _lin("head fc1", d, f, True, _SIGLIP) + _lin("head fc2", f, d, True, _SIGLIP)
    return Cost(
        name=name,
        block=Block.VISION_TOWER,
        steps=tuple(steps),
        children=(_vit_layer(spec, False, source),),
        note=_NO_IMAGES,
        source=source,
    )


def gemma3_tower(spec: Spec) -> list[Cost]:
    """Gemma 3's SigLIP tower and its projector: RMSNorm d_vis + d_vis d_model (no bias)."""
    proj = norm(spec, "mm_soft_emb_norm", S.d_vis, ZERO, kind="rmsnorm")
    proj += _lin("mm_input_projection", S.d_vis, S.d_model, False, _GEMMA3)
    return [
        siglip_tower(spec),
        Cost(name="multi-modal projector", block=Block.PROJECTOR, steps=tuple(proj), source=_GEMMA3),
    ]


def paligemma_tower(spec: Spec) -> list[Cost]:
    """PaliGemma's SigLIP tower and its projector: d_vis d_proj + d_proj (one biased map to
    projection_dim, d_proj where it differs from d_model)."""
    out = S.d_proj if spec.has("d_proj") else S.d_model
    proj = _lin("linear", S.d_vis, out, True, _PALIGEMMA)
    return [
        siglip_tower(spec),
        Cost(name="multi-modal projector", block=Block.PROJECTOR, steps=tuple(proj), source=_PALIGEMMA),
    ]


def idefics3_tower(spec: Spec) -> list[Cost]:
    """Idefics3's (and SmolVLM's) SigLIP-shaped tower and its connector: the pixel shuffle
    stacks m_vis x m_vis neighbouring patches into one m_vis^2 d_vis vector (no weights), then
    one bias-free map m_vis^2 d_vis -> d_model."""
    proj = _lin("modality_projection (after the pixel shuffle)", S.m_vis**2 * S.d_vis, S.d_model, False, _IDEFICS3)
    return [
        siglip_tower(spec, "vision tower (Idefics3 SigLIP)", _IDEFICS3),
        Cost(name="connector", block=Block.PROJECTOR, steps=tuple(proj), source=_IDEFICS3),
    ]


def qwen2_5_vl_tower(spec: Spec) -> list[Cost]:
    """Qwen2.5-VL's vision tower with its patch merger (``model.visual``).

    C_vis t_vis p_vis^2 d_vis (bias-free 3-D patch conv) + N_vis blocks of 2 d_vis (RMSNorms
    norm1, norm2) + 3 d_vis^2 + 3 d_vis (fused qkv) + d_vis^2 + d_vis (proj) + 3 d_vis d_ff_vis
    + 2 d_ff_vis + d_vis (gate, up, down, all biased) + the merger: d_vis (RMSNorm ln_q) +
    (m_vis^2 d_vis)^2 + m_vis^2 d_vis + m_vis^2 d_vis d_proj + d_proj.
    """
    d, f, m2 = S.d_vis, S.d_ff_vis, S.m_vis**2
    out = S.d_proj if spec.has("d_proj") else S.d_model
    block = norm(spec, "norm1", d, ZERO, kind="rmsnorm") + _lin("qkv (fused q, k, v)", d, 3 * d, True, _QWEN2_5_VL)
    block += _lin("proj", d, d, True, _QWEN2_5_VL) + norm(spec, "norm2", d, ZERO, kind="rmsnorm")
    block += _lin("gate_proj", d, f, True, _QWEN2_5_VL) + _lin("up_proj", d, f, True, _QWEN2_5_VL)
    block += _lin("down_proj", f, d, True, _QWEN2_5_VL)
    blocks = Cost(name="vision layer", block=Block.LAYER, steps=tuple(block), multiplicity=S.N_vis, note=_NO_IMAGES)
    conv = _conv("patch embedding (Conv3d t_vis x p_vis x p_vis)", S.C_vis * S.t_vis * S.p_vis**2, _QWEN2_5_VL)
    tower = Cost(
        name="vision tower (Qwen2.5-VL)",
        block=Block.VISION_TOWER,
        steps=(conv,),
        children=(blocks,),
        note=_NO_IMAGES,
        source=_QWEN2_5_VL,
    )
    merger = norm(spec, "ln_q", d, ZERO, kind="rmsnorm") + _lin("merger fc1", m2 * d, m2 * d, True, _QWEN2_5_VL)
    merger += _lin("merger fc2", m2 * d, out, True, _QWEN2_5_VL)
    return [tower, Cost(name="patch merger", block=Block.PROJECTOR, steps=tuple(merger), source=_QWEN2_5_VL)]


def pixtral_tower(spec: Spec) -> list[Cost]:
    """Mistral 3's Pixtral tower (``PixtralVisionModel``) and ``Mistral3MultiModalProjector``.

    Tower: C_vis p_vis^2 d_vis (bias-free patch conv) + d_vis (ln_pre RMSNorm) + N_vis layers of
    2 d_vis (two RMSNorms) + 4 d_vis^2 (bias-free q, k, v, o) + 3 d_vis d_ff_vis (bias-free
    gated MLP); no position table (2-D rotary).  Projector: d_vis (RMSNorm) + m_vis^2 d_vis^2
    (patch merger, no bias) + n_feat d_vis d_model + d_model^2 (+ 2 d_model with ``projector_bias``).
    """
    d, f = S.d_vis, S.d_ff_vis
    layer = norm(spec, "attention_norm", d, ZERO, kind="rmsnorm")
    for name in ("W_Q", "W_K", "W_V", "W_O"):
        layer += _lin(name, d, d, False, _PIXTRAL)
    layer += norm(spec, "ffn_norm", d, ZERO, kind="rmsnorm")
    layer += _lin("gate_proj", d, f, False, _PIXTRAL) + _lin("up_proj", d, f, False, _PIXTRAL)
    layer += _lin("down_proj", f, d, False, _PIXTRAL)
    layers = Cost(name="vision layer", block=Block.LAYER, steps=tuple(layer), multiplicity=S.N_vis, note=_NO_IMAGES)
    conv = _conv("patch_conv (Conv2d p_vis x p_vis, stride p_vis)", S.C_vis * S.p_vis**2, _PIXTRAL)
    tower = Cost(
        name="vision tower (Pixtral)",
        block=Block.VISION_TOWER,
        steps=(conv, *norm(spec, "ln_pre", d, ZERO, kind="rmsnorm")),
        children=(layers,),
        note=_NO_IMAGES,
        source=_PIXTRAL,
    )
    b = spec.projector_bias
    proj = norm(spec, "norm", d, ZERO, kind="rmsnorm") + _lin("patch merger", S.m_vis**2 * d, d, False, _MISTRAL3)
    proj += _lin("linear_1", S.n_feat * d, S.d_model, b, _MISTRAL3) + _lin(
        "linear_2", S.d_model, S.d_model, b, _MISTRAL3
    )
    return [tower, Cost(name="multi-modal projector", block=Block.PROJECTOR, steps=tuple(proj), source=_MISTRAL3)]


def _merger(spec: Spec, name: str, norm_width: sp.Expr, out: sp.Expr) -> list[Step]:
    """Qwen3VLVisionPatchMerger: LayerNorm of ``norm_width``, fc1 m^2 d_vis -> m^2 d_vis, fc2 -> out, biased."""
    m2d = S.m_vis**2 * S.d_vis
    steps = _ln(spec, f"{name} norm", norm_width) + _lin(f"{name} fc1", m2d, m2d, True, _QWEN3_VL)
    return steps + _lin(f"{name} fc2", m2d, out, True, _QWEN3_VL)


def qwen3_vl_tower(spec: Spec) -> list[Cost]:
    """Qwen3-VL's vision model (``model.visual``): tower, merger and DeepStack mergers.

    Tower: C_vis t_vis p_vis^2 d_vis + d_vis (biased 3-D patch conv) + P_vis d_vis (pos_embed,
    num_position_embeddings rows, interpolated to each image's grid) + N_vis layers of Qwen2-VL's
    block (two LayerNorms, fused biased qkv, biased proj, biased fc1/fc2 of d_ff_vis).  Merger:
    2 d_vis (LayerNorm before the shuffle) + (m_vis^2 d_vis)^2 + m_vis^2 d_vis + m_vis^2 d_vis d_proj
    + d_proj.  Each of the n_ds DeepStack mergers (one per deepstack_visual_indexes entry): the
    same maps with the LayerNorm after the shuffle, 2 m_vis^2 d_vis.
    """
    out = S.d_proj if spec.has("d_proj") else S.d_model
    conv = _conv(
        "patch embedding (Conv3d t_vis x p_vis x p_vis, biased)", S.C_vis * S.t_vis * S.p_vis**2, _QWEN3_VL, True
    )
    pos = Step(
        label="position table (pos_embed)",
        role=Role.VISION,
        params=S.P_vis * S.d_vis,
        weights=S.P_vis * S.d_vis,
        note="num_position_embeddings learned rows, bilinearly interpolated to each image's patch grid",
        source=_QWEN3_VL,
    )
    tower = Cost(
        name="vision tower (Qwen3-VL)",
        block=Block.VISION_TOWER,
        steps=(conv, pos),
        children=(_vit_layer(spec, True, _QWEN3_VL),),
        note=_NO_IMAGES,
        source=_QWEN3_VL,
    )
    deep: tuple[Cost, ...] = ()
    if spec.has("n_ds"):
        deepstack = _merger(spec, "deepstack merger", S.m_vis**2 * S.d_vis, out)
        deep = (
            Cost(
                name="DeepStack mergers",
                block=Block.LAYER,
                steps=tuple(deepstack),
                multiplicity=S.n_ds,
                note="one per deepstack_visual_indexes entry: that vision layer's merged features are added to "
                "the hidden states of the first n_ds language layers",
                source=_QWEN3_VL,
            ),
        )
    merger = Cost(
        name="patch merger",
        block=Block.PROJECTOR,
        steps=tuple(_merger(spec, "merger", S.d_vis, out)),
        children=deep,
        source=_QWEN3_VL,
    )
    return [tower, merger]


def llama4_tower(spec: Spec) -> list[Cost]:
    """Llama 4's vision model (``vision_model``) and ``Llama4MultiModalProjector``.

    Tower: C_vis p_vis^2 d_vis (Unfold + bias-free linear) + d_vis (class token) + (P_vis + 1)
    d_vis (positional_embedding_vlm) + 4 d_vis (layernorm_pre, layernorm_post) + N_vis CLIP-style
    layers (LayerNorms, biased q, k, v, o and fc1/fc2) + the pixel-shuffle adapter's bias-free
    fc1 d_ff_vis x d_ad_in and fc2 d_ad_out x d_ad_out.  Projector: d_vout x d_model, bias-free.
    """
    d = S.d_vis
    steps = [
        _conv("patch embedding (Unfold p_vis x p_vis, bias-free linear)", S.C_vis * S.p_vis**2, _LLAMA4),
        Step(label="class token", role=Role.VISION, params=d, note="one learned d_vis vector", source=_LLAMA4),
        _positions_with_class(
            "position table (positional_embedding_vlm)",
            "one learned row per patch of the image_size x image_size tile and one for the class token",
            _LLAMA4,
        ),
    ]
    steps += _ln(spec, "layernorm_pre", d) + _ln(spec, "layernorm_post", d)
    steps += _lin("adapter fc1 (after the pixel shuffle)", S.d_ff_vis, S.d_ad_in, False, _LLAMA4)
    steps += _lin("adapter fc2", S.d_ad_out, S.d_ad_out, False, _LLAMA4)
    tower = Cost(
        name="vision tower (Llama 4)",
        block=Block.VISION_TOWER,
        steps=tuple(steps),
        children=(_vit_layer(spec, False, _LLAMA4),),
        note=_NO_IMAGES,
        source=_LLAMA4,
    )
    proj = _lin("linear_1", S.d_vout, S.d_model, False, _LLAMA4)
    return [tower, Cost(name="multi-modal projector", block=Block.PROJECTOR, steps=tuple(proj), source=_LLAMA4)]


def kimi_k25_tower(spec: Spec) -> list[Cost]:
    """Kimi K2.5's vision tower (``model.vision_tower``: Kimi_K25VisionModel) and
    ``Kimi_K25MultimodalProjection`` (``model.mm_projector``), transformers 5.24 models/kimi_k25.

    Tower: C_vis p_vis^2 d_vis + d_vis (biased Conv2d; C_vis is 3, fixed by the module) +
    P_vis d_vis (position_embeddings, pos_emb_height x pos_emb_width rows, resampled to each
    image's grid; the time axis is a sinusoidal table, no weights) + N_vis layers (two
    LayerNorms, biased q, k, v, proj and fc1/fc2; 2-D rotary positions have no weights) +
    2 d_vis (final_layernorm).  Projector: 2 d_vis (pre_norm, a LayerNorm of
    projection_hidden_size = d_vis) + (m_vis^2 d_vis)^2 + m_vis^2 d_vis (in_proj) +
    m_vis^2 d_vis d_model + d_model (out_proj) over each m_vis x m_vis merged patch group.
    """
    conv = _conv("patch embedding (Conv2d p_vis x p_vis, biased)", S.C_vis * S.p_vis**2, _KIMI_K25, True)
    pos = replace(
        _positions(
            "pos_emb_height x pos_emb_width learned rows, resampled (bicubic) to each image's patch grid", _KIMI_K25
        ),
        label="position table (position_embeddings)",
    )
    tower = Cost(
        name="vision tower (Kimi K2.5)",
        block=Block.VISION_TOWER,
        steps=(conv, pos, *_ln(spec, "final_layernorm", S.d_vis)),
        children=(_vit_layer(spec, False, _KIMI_K25),),
        note=_NO_IMAGES,
        source=_KIMI_K25,
    )
    m2d = S.m_vis**2 * S.d_vis
    proj = _ln(spec, "pre_norm", S.d_vis) + _lin("in_proj", m2d, m2d, True, _KIMI_K25)
    proj += _lin("out_proj", m2d, S.d_model, True, _KIMI_K25)
    return [tower, Cost(name="multi-modal projector", block=Block.PROJECTOR, steps=tuple(proj), source=_KIMI_K25)]


def gemma4_tower(spec: Spec) -> list[Cost]:
    """Gemma 4's vision tower (``model.vision_tower``: Gemma4VisionModel) and ``model.embed_vision``
    (Gemma4MultimodalEmbedder), transformers 5.24 models/gemma4.

    Tower: 3 p_vis^2 d_vis (``patch_embedder.input_proj``, bias-free; C_vis is 3, fixed by the
    module) + 2 P_vis d_vis (``position_embedding_table``: one table of P_vis rows per axis, the x
    and y rows of a patch summed) + N_vis layers (four RMSNorms of d_vis; bias-free q d_vis ->
    h_vis d_k_vis, k and v d_vis -> h_kv_vis d_k_vis, o back; q_norm and k_norm of d_k_vis, v_norm
    without a scale; a bias-free GeGLU MLP d_vis -> d_ff_vis -> d_vis).  The 2-D rotary positions,
    the pooler (m_vis x m_vis patches averaged into one token) and ``standardize``'s std_bias and
    std_scale (buffers) have no parameters; the clipped linears' bounds are buffers too.
    embed_vision: an RMSNorm without a scale and a bias-free d_vis -> d_model map.
    """
    d, f = S.d_vis, S.d_ff_vis
    q, kv = S.h_vis * S.d_k_vis, S.h_kv_vis * S.d_k_vis
    layer = norm(spec, "input_layernorm", d, ZERO, kind="rmsnorm")
    layer += _lin("q_proj", d, q, False, _GEMMA4) + _lin("k_proj", d, kv, False, _GEMMA4)
    layer += _lin("v_proj", d, kv, False, _GEMMA4) + _lin("o_proj", q, d, False, _GEMMA4)
    for label in ("q_norm", "k_norm"):
        layer += norm(spec, label, S.d_k_vis, ZERO, kind="rmsnorm")
    for label in ("post_attention_layernorm", "pre_feedforward_layernorm"):
        layer += norm(spec, label, d, ZERO, kind="rmsnorm")
    layer += _lin("gate_proj", d, f, False, _GEMMA4) + _lin("up_proj", d, f, False, _GEMMA4)
    layer += _lin("down_proj", f, d, False, _GEMMA4) + norm(spec, "post_feedforward_layernorm", d, ZERO, kind="rmsnorm")
    rows = 2 * S.P_vis * d
    steps = (
        _conv("patch embedding (input_proj: 3 p_vis^2 pixels -> d_vis, bias-free)", S.C_vis * S.p_vis**2, _GEMMA4),
        Step(
            label="position table",
            role=Role.VISION,
            params=rows,
            weights=rows,
            note="two learned tables of P_vis rows (x and y), summed per patch",
            source=_GEMMA4,
        ),
    )
    tower = Cost(
        name="vision tower (Gemma 4)",
        block=Block.VISION_TOWER,
        steps=steps,
        children=(
            Cost(name="vision layer", block=Block.LAYER, steps=tuple(layer), multiplicity=S.N_vis, note=_NO_IMAGES),
        ),
        note=_NO_IMAGES,
        source=_GEMMA4,
    )
    proj = _lin("embedding_projection (after an RMSNorm without scale)", d, S.d_model, False, _GEMMA4)
    return [tower, Cost(name="embed_vision", block=Block.PROJECTOR, steps=tuple(proj), source=_GEMMA4)]


def _weights(label: str, n: sp.Expr, note: str) -> Step:
    return Step(label=label, role=Role.VISION, params=n, weights=n, note=note, source=_GEMMA4_AUDIO, input_grad=False)


def gemma4_audio(spec: Spec) -> list[Cost]:
    """Gemma 4's audio tower (``model.audio_tower``: Gemma4AudioModel, a conformer) and
    ``model.embed_audio`` (Gemma4MultimodalEmbedder), transformers 5.24 models/gemma4.  Every
    linear is bias-free except ``output_proj``; the clipped linears' bounds are buffers.

    Subsampling: two bias-free 3 x 3 convolutions, 1 -> c1_aud -> c2_aud channels, each with a
    bias-free LayerNorm (9 c1 + c1 + 9 c1 c2 + c2), and ``input_proj_linear``
    (c1_aud // 4) c2_aud -> d_aud (the module sizes it from the first convolution's channels).
    N_aud layers, with d_k = d_aud / h_aud (``check``: h_aud divides d_aud): two macaron
    feed-forwards (two RMSNorms, d_aud -> 4 d_aud -> d_aud), attention (q, k, v d_aud -> d_aud,
    ``post`` d_aud -> d_aud, ``relative_k_proj`` d_aud -> d_aud, a ``per_dim_scale`` of d_k),
    the light convolution (RMSNorm, ``linear_start`` d_aud -> 2 d_aud, a depthwise kernel of
    K_aud taps per channel, RMSNorm, ``linear_end`` d_aud -> d_aud) and three RMSNorms:
    24 d_aud^2 + K_aud d_aud + d_aud / h_aud + 9 d_aud a layer.  ``output_proj`` d_aud ->
    d_out_aud with a bias.  The sinusoidal relative positions are a buffer.
    embed_audio: an RMSNorm without a scale and a bias-free d_out_aud -> d_model map.
    """
    d, n_out = S.d_aud, S.d_out_aud
    c1, c2 = S.c1_aud, S.c2_aud
    src = _GEMMA4_AUDIO
    layer: list[Step] = []
    for ffn in ("feed_forward1", "feed_forward2"):
        layer += norm(spec, f"{ffn}.pre_layer_norm", d, ZERO, kind="rmsnorm")
        layer += _lin(f"{ffn}.ffw_layer_1", d, 4 * d, False, src) + _lin(f"{ffn}.ffw_layer_2", 4 * d, d, False, src)
        layer += norm(spec, f"{ffn}.post_layer_norm", d, ZERO, kind="rmsnorm")
    for label in ("q_proj", "k_proj", "v_proj", "post", "relative_k_proj"):
        layer += _lin(f"self_attn.{label}", d, d, False, src)
    layer.append(_weights("self_attn.per_dim_scale", d / S.h_aud, "one learned scale per head dimension d_aud / h_aud"))
    layer += norm(spec, "lconv1d.pre_layer_norm", d, ZERO, kind="rmsnorm")
    layer += _lin("lconv1d.linear_start", d, 2 * d, False, src)
    layer.append(
        _weights("lconv1d.depthwise_conv1d", S.K_aud * d, "depthwise causal convolution: K_aud taps a channel")
    )
    layer += norm(spec, "lconv1d.conv_norm", d, ZERO, kind="rmsnorm")
    layer += _lin("lconv1d.linear_end", d, d, False, src)
    for label in ("norm_pre_attn", "norm_post_attn", "norm_out"):
        layer += norm(spec, label, d, ZERO, kind="rmsnorm")
    steps = [
        _weights("subsampling conv 0 (3 x 3, 1 -> c1_aud, bias-free) and its LayerNorm", 10 * c1, "9 c1 + c1"),
        _weights(
            "subsampling conv 1 (3 x 3, c1 -> c2_aud, bias-free) and its LayerNorm", 9 * c1 * c2 + c2, "9 c1 c2 + c2"
        ),
        _weights(
            "input_proj_linear ((c1_aud // 4) c2_aud -> d_aud, bias-free)",
            sp.floor(c1 / 4) * c2 * d,
            "the flattened frequency axis: c1_aud // 4 rows of c2_aud channels (HF sizes it so)",
        ),
    ]
    steps += _lin("output_proj", d, n_out, True, src)
    tower = Cost(
        name="audio tower (Gemma 4)",
        block=Block.AUDIO_TOWER,
        steps=tuple(steps),
        children=(
            Cost(name="audio layer", block=Block.LAYER, steps=tuple(layer), multiplicity=S.N_aud, note=_NO_AUDIO),
        ),
        note=_NO_AUDIO,
        source=src,
    )
    proj = _lin("embedding_projection (after an RMSNorm without scale)", n_out, S.d_model, False, src)
    return [tower, Cost(name="embed_audio", block=Block.AUDIO_TOWER, steps=tuple(proj), note=_NO_AUDIO, source=src)]


def vision_parts(spec: Spec) -> list[Cost]:
    """The image side of ``spec`` (empty without ``vision``)."""
    if spec.vision == "clip":
        return clip_tower(spec)
    if spec.vision == "qwen2_vl":
        return qwen2_vl_tower(spec)
    if spec.vision == "gemma3":
        return gemma3_tower(spec)
    if spec.vision == "mistral3":
        return pixtral_tower(spec)
    if spec.vision == "qwen2_5_vl":
        return qwen2_5_vl_tower(spec)
    if spec.vision == "paligemma":
        return paligemma_tower(spec)
    if spec.vision == "idefics3":
        return idefics3_tower(spec)
    if spec.vision == "qwen3_vl":
        return qwen3_vl_tower(spec)
    if spec.vision == "llama4":
        return llama4_tower(spec)
    if spec.vision == "kimi_k25":
        return kimi_k25_tower(spec)
    if spec.vision == "gemma4":
        return gemma4_tower(spec) + (gemma4_audio(spec) if "d_aud" in spec.values else [])
    return []


def select_part(cost: Cost, part: str) -> Cost:
    """The part of a vision-language model's Cost tree that ``params --part`` counts.

    ``"text"``: the tree without its ``VISION_BLOCKS`` children (language model, LM head;
    a dual encoder's text tower and its projection);
    ``"vision"``: only those children (vision tower, projector), without the top level's own
    steps; ``"audio"``: only the ``AUDIO_BLOCKS`` children (Gemma 4's audio tower and
    embed_audio), which ``"text"`` and ``"vision"`` leave out; ``"all"``: ``cost`` itself.  A dual encoder's ``Block.CONTRASTIVE`` (the logits'
    scale and bias) is neither tower's: in ``"all"`` only.  Selected by ``Block``, never by a
    component's name.

    Raises:
        InputError: ``part`` is none of those.
    """
    if part == "all":
        return cost
    if part not in ("text", "vision", "audio"):
        raise InputError(f"part must be all, text, vision or audio, not {part!r}")
    side = {"text": (), "vision": VISION_BLOCKS, "audio": AUDIO_BLOCKS}[part]
    keep = tuple(
        c
        for c in cost.children
        if c.block != Block.CONTRASTIVE and (c.block in side if side else c.block not in VISION_BLOCKS + AUDIO_BLOCKS)
    )
    steps = cost.steps if part == "text" else ()
    return replace(cost, steps=steps, children=keep)


def vision_params(cost: Cost) -> sp.Expr:
    """The parameters of the image side of a model's Cost tree (its ``VISION_BLOCKS``
    subtrees); 0 for a model without one.  The text-only figure is ``cost.params`` less it
    (and, for a dual encoder, less its ``Block.CONTRASTIVE`` logit scale: ``select_part``)."""
    return sp.Add(*[c.params for c in cost.children if c.block in VISION_BLOCKS])
