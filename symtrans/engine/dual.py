"""Dual encoders (CLIP, SigLIP): the parts beside the text tower.

A dual encoder is two towers that map a text and an image into one joint space, trained so
that matching pairs score high.  Its text tower is an encoder-only stack (token and learned
position tables, pre-norm layers with biased q, k, v, out and a biased two-layer MLP, a final
LayerNorm), which ``architectures.build`` builds as any encoder; this module adds what sits
beside that stack, placed in the model's Cost tree when ``Spec.vision`` is ``clip_dual``,
``siglip_dual`` or ``siglip2_dual`` (SigLIP 2: SigLIP's weights, its patch embedding a Linear
over flattened patches and its position table of num_patches rows resized to each image):

- the text tower's map of its pooled token into the joint space (``Block.TEXT_HEAD``), run on
  one token per sequence: CLIP's bias-free ``text_projection`` d_model -> d_proj
  (``CLIPModel.text_projection``, the end-of-text token's state); SigLIP's biased ``head``
  d_model -> d_proj (``SiglipTextModel.head``, d_proj = ``projection_size``, the last token's
  state);
- the image tower (``Block.VISION_TOWER``, ``engine/vision.py``): CLIP's ViT with class token
  (``vision.clip_vision_tower``), or SigLIP's ViT with its attention-pooling head when
  ``vision_head`` (``vision.siglip_tower``; ``SiglipVisionConfig.vision_use_head``, default
  true, which Gemma 3's tower sets false);
- CLIP's bias-free ``visual_projection`` d_vis -> d_proj (``Block.PROJECTOR``); SigLIP has none
  (its pooled image is d_vis wide and must equal the text's d_proj to be compared);
- the logits' learned scale (``Block.CONTRASTIVE``): CLIP's ``logit_scale`` (one scalar),
  SigLIP's ``logit_scale`` and ``logit_bias`` (two): neither tower's, in the whole count only.

The text figure (``--part text``) is the text tower with its projection; the vision figure the
image tower with its projection; the whole class adds the logit scale (and bias).

Sources: Radford et al. 2021 §2.4-2.5 (CLIP: a text Transformer whose [EOS] state is linearly
projected, an image encoder linearly projected, a learned temperature) and HF ``CLIPModel``
(transformers 5.x ``models/clip/modeling_clip.py``); Zhai et al. 2023 §2-3 (SigLIP: the sigmoid
loss with a learned temperature t and bias b; the MAP head) and HF ``SiglipModel``,
``SiglipTextModel.head`` (``models/siglip/modeling_siglip.py``).
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.engine import symbols as S
from symtrans.engine.components import linear
from symtrans.engine.cost import Cost, Step
from symtrans.engine.roles import Block, Role
from symtrans.engine.spec import Spec
from symtrans.engine.vision import clip_vision_tower, siglip_tower

_CLIP = "Radford et al. 2021 §2.5 (CLIP projections, temperature); HF CLIPModel"
_SIGLIP = "Zhai et al. 2023 §3 (SigLIP: temperature t and bias b); HF SiglipModel, SiglipTextModel.head"
_SIGLIP2 = "Tschannen et al. 2025 (SigLIP 2, NaFlex); HF Siglip2Model, Siglip2VisionEmbeddings"


def _logits(names: tuple[str, ...], source: str) -> Cost:
    steps = tuple(
        Step(
            label=name,
            role=Role.LOGIT_SCALE,
            params=sp.Integer(1),
            note="one learned scalar of the image-text logits (no FLOPs worth counting: one multiply per logit)",
            source=source,
        )
        for name in names
    )
    return Cost(name="logit " + " and ".join(n.split("_")[1] for n in names), block=Block.CONTRASTIVE, steps=steps)


def dual_parts(spec: Spec, batch: sp.Expr) -> list[Cost]:
    """The parts of a dual encoder beside its text stack (empty for any other model).

    Args:
        spec: the model (``spec.vision`` ``clip_dual``, ``siglip_dual`` or ``siglip2_dual``).
        batch: the text sequences of the forward pass: the text projection runs on one
            pooled token of each (FLOPs 2 batch d_model d_proj).

    Returns:
        [text head, image tower, (CLIP: visual projection), logit scale]: parameters exact as
        transformers 5.x builds ``CLIPModel`` / ``SiglipModel``; the image tower's FLOPs in a
        text forward are 0 (it runs once per image: ``image_flops``).
    """
    if spec.vision == "clip_dual":
        text = linear(
            "text_projection",
            S.d_model,
            S.d_proj,
            batch,
            False,
            _CLIP,
            "d_model x d_proj, bias-free: the end-of-text token's state into the joint space",
            role=Role.TEXT_PROJECTION,
        )
        visual = linear(
            "visual_projection",
            S.d_vis,
            S.d_proj,
            sp.Integer(0),
            False,
            _CLIP,
            "d_vis x d_proj, bias-free: the pooled class token into the joint space (once per image)",
            role=Role.VISION,
        )
        return [
            Cost(name="text projection", block=Block.TEXT_HEAD, steps=tuple(text), source=_CLIP),
            clip_vision_tower(spec),
            Cost(name="visual projection", block=Block.PROJECTOR, steps=tuple(visual), source=_CLIP),
            _logits(("logit_scale",), _CLIP),
        ]
    if spec.vision in ("siglip_dual", "siglip2_dual"):
        source = _SIGLIP if spec.vision == "siglip_dual" else _SIGLIP2
        head = linear(
            "text head",
            S.d_model,
            S.d_proj,
            batch,
            True,
            _SIGLIP,
            "d_model x d_proj and its bias (projection_size, default hidden_size): the last token's state",
            role=Role.TEXT_PROJECTION,
        )
        tower = siglip_tower(spec)
        if spec.vision == "siglip2_dual":  # the same weights, a Linear over flattened patches
            first = replace(
                tower.steps[0],
                label="patch embedding (Linear C_vis p_vis^2 -> d_vis, biased)",
                note="biased linear map of each flattened patch of C_vis p_vis^2 pixels (NaFlex)",
                source=_SIGLIP2,
            )
            table = replace(
                tower.steps[1], note="num_patches learned rows, resized to each image's patch grid", source=_SIGLIP2
            )
            tower = replace(tower, name="vision tower (SigLIP 2)", steps=(first, table, *tower.steps[2:]))
        return [
            Cost(name="text head", block=Block.TEXT_HEAD, steps=tuple(head), source=source),
            tower,
            _logits(("logit_scale", "logit_bias"), source),
        ]
    return []


def image_tokens(spec: Spec) -> sp.Expr:
    """Tokens the image tower's layers see per image: CLIP's P_vis patches + the class token,
    SigLIP's P_vis patches (P_vis = (image_size // patch_size)^2, no merging in either);
    SigLIP 2's num_patches (P_vis: the rows of its position table, which NaFlex resizes)."""
    return S.P_vis + 1 if spec.vision == "clip_dual" else S.P_vis


def image_flops(spec: Spec) -> sp.Expr:
    """Forward FLOPs of one image through a dual encoder's image tower and its projection
    (2 per multiply-accumulate; norms, softmax, activations and bias adds are not matmuls).

    With T = ``image_tokens`` and d = d_vis, f = d_ff_vis:

    - patch embedding: a Conv2d of stride p_vis, 2 P_vis C_vis p_vis^2 d (each patch a dot
      product of C_vis p_vis^2 pixels per output channel);
    - each of N_vis layers: q, k, v, out 8 T d^2; scores Q K^T and their use on V 4 T^2 d;
      MLP 4 T d f;
    - CLIP: ``visual_projection`` of the pooled class token, 2 d d_proj;
    - SigLIP with its pooling head (``vision_head``): one learned query against the T tokens,
      q 2 d^2, k and v 4 T d^2, scores and values 4 T d, out_proj 2 d^2, MLP 4 d f;
    - SigLIP 2 (NaFlex): a Linear patch embedding (the same 2 P_vis C_vis p_vis^2 d), and the
      position table of P_vis rows resized to each image's grid as one (T x P_vis)(P_vis x d)
      matmul, 2 T P_vis d (``Siglip2VisionEmbeddings.resize_positional_embeddings``); T is the
      patches per image, here P_vis (num_patches, the processor's max_num_patches by default).

    Raises:
        InputError: a model that is no dual encoder.
    """
    if spec.vision not in ("clip_dual", "siglip_dual", "siglip2_dual"):
        raise InputError(
            f"image FLOPs are modelled for dual encoders (clip, siglip, siglip2), not vision={spec.vision}"
        )
    d, f, T = S.d_vis, S.d_ff_vis, image_tokens(spec)
    total = 2 * S.P_vis * S.C_vis * S.p_vis**2 * d + S.N_vis * (8 * T * d**2 + 4 * T**2 * d + 4 * T * d * f)
    if spec.vision == "clip_dual":
        return total + 2 * d * S.d_proj
    if spec.vision == "siglip2_dual":  # the num_patches table resized to the image: a T x P_vis matmul
        total += 2 * T * S.P_vis * d
    if spec.vision_head:
        total += 4 * d**2 + 4 * T * d**2 + 4 * T * d + 4 * d * f
    return total
