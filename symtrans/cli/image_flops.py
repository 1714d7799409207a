"""``symtrans flops --part vision``: the image tower, FLOPs per image.

The text workload has no images, so ``flops`` counts the text forward; the image tower runs
once per image, which this command counts: the forward FLOPs of one image times ``--batch``
images, with the tokens per image stated.  A dual encoder (clip, siglip, siglip2):
``engine.dual.image_flops`` (patch embedding, the layers on the image's tokens, the pooling head
or projection).  A vision-language wrapper: ``engine.vision_flops.vlm_image_flops`` (its
``get_image_features``: tower, merging, projector), at the config's image size or
``--image-size`` where the tower takes any size; the tokens per image are those the language
model receives.
"""

from __future__ import annotations

import json
import re

from symtrans.cli.common import UsageError

_SIZE = re.compile(r"([1-9][0-9]*)(?:[xX]([1-9][0-9]*))?")
MAX_SIDE = 999_999  # pixels per side: a million-pixel side is no image a tower is given


def parse_image_size(text: str | None) -> tuple[int, int] | None:
    """``--image-size``: ``S`` (S x S px) or ``HxW``, as (height, width); None if not given.

    Raises:
        UsageError: anything else.
    """
    if text is None:
        return None
    m = _SIZE.fullmatch(text.strip())
    if m is None:
        raise UsageError(f"symtrans flops: --image-size takes pixels as S or HxW (e.g. 448 or 448x672), not {text!r}")
    if any(len(g) > 6 for g in m.groups() if g):  # the digits, before any int(): no huge integers
        raise UsageError(
            f"symtrans flops: --image-size {text.strip()[:40]!r}: each side must be at most {MAX_SIDE:,} pixels"
        )
    side = int(m.group(1))
    return side, int(m.group(2) or side)


def _wrapper_result(res, batch: int, cfg: dict, size: tuple[int, int] | None) -> dict:
    """``flops --part vision`` of a vision-language wrapper (``engine.vision_flops``)."""
    import sympy as sp

    from symtrans.catalog.models.vision_image import image_input
    from symtrans.engine.evaluate import exact
    from symtrans.engine.simplify import closed_form
    from symtrans.engine.vision_flops import vlm_image_flops

    spec = res.spec
    image = image_input(cfg, spec, size)
    r = vlm_image_flops(spec, image)
    each = exact(r.flops, spec.values)
    return {
        "model": res.name,
        "part": "vision",
        "mode": "forward",
        "unit": "FLOP",
        "image_size": [image.height, image.width],
        "tokens_per_image": r.lm_tokens,
        "tower_tokens_per_image": r.tower_tokens,
        "patch_size": spec.values["p_vis"],
        "patches_per_image": r.patches,
        "images": batch,
        "per_image": each,
        "total": batch * each,
        "closed_form": sp.sstr(closed_form(r.flops)),
        "notes": [
            "one forward pass of each image through the vision tower, any merging and the projector into the "
            "language model, as transformers' get_image_features (and, for Llama 4, its projector after it) runs "
            "them (2 FLOPs per multiply-accumulate; norms, softmax, activations and pooling not counted)",
            *r.notes,
        ],
    }


def image_flops_result(res, batch: int, cfg: dict | None = None, size: tuple[int, int] | None = None) -> dict:
    """The JSON object of ``flops --part vision``; ``cfg`` the config.json of a vision-language
    wrapper (its image size and the keys that change the image's FLOPs), ``size`` --image-size.

    Raises:
        UsageError: the model has no image tower, or a wrapper given as no config.json.
    """
    import sympy as sp

    from symtrans.engine.dual import image_flops, image_tokens
    from symtrans.engine.evaluate import exact
    from symtrans.engine.simplify import closed_form
    from symtrans.engine.spec import DUAL_VISIONS

    spec = res.spec
    if spec.vision == "none":
        raise UsageError(f"symtrans flops: --part vision counts an image tower; {res.name} has none")
    if spec.vision not in DUAL_VISIONS:
        if cfg is None:
            raise UsageError(f"symtrans flops: --part vision of {res.name} reads its config.json (give the file)")
        return _wrapper_result(res, batch, cfg, size)
    if size is not None:
        raise UsageError(
            f"symtrans flops: --image-size is not read for a dual encoder ({res.name}): its tower takes the "
            "config's image_size"
        )
    per_image = image_flops(spec)
    values = spec.values
    each = exact(per_image, values)
    return {
        "model": res.name,
        "part": "vision",
        "mode": "forward",
        "unit": "FLOP",
        "tokens_per_image": exact(image_tokens(spec), values),
        "patch_size": values["p_vis"],
        "patches_per_image": values["P_vis"],
        "images": batch,
        "per_image": each,
        "total": batch * each,
        "closed_form": sp.sstr(closed_form(per_image)),
        "notes": [
            "one forward pass of each image through the image tower and its projection "
            "(2 FLOPs per multiply-accumulate; norms, softmax and activations not counted)",
            "tokens per image: (image_size // patch_size)^2 patches"
            + (" + the class token" if spec.vision == "clip_dual" else "")
            + " (no merging)",
        ],
    }


def cmd_image_flops(args, res, emit) -> int:
    """Print ``image_flops_result`` as JSON or text."""
    if getattr(args, "mode", "forward") != "forward":
        raise UsageError(f"symtrans flops: --part vision counts the forward pass, not --mode {args.mode}")
    r = image_flops_result(res, args.batch, _config(args, res), parse_image_size(getattr(args, "image_size", None)))
    if args.format == "json":
        emit(args, json.dumps(r, indent=2))
        return 0
    if "image_size" in r:  # a vision-language wrapper
        h, w = r["image_size"]
        lines = [
            f"{r['model']}: forward FLOPs of the vision tower and projector: {r['total']:,} for {r['images']} "
            f"image(s) of {h} x {w} px",
            f"  per image: {r['per_image']:,} ({r['tokens_per_image']} tokens per image for the language model; "
            f"{r['tower_tokens_per_image']} tokens in the tower's layers)",
        ]
    else:
        lines = [
            f"{r['model']}: forward FLOPs of the image tower: {r['total']:,} for {r['images']} image(s)",
            f"  per image: {r['per_image']:,} ({r['tokens_per_image']} tokens per image: {r['patches_per_image']} "
            f"patches of {r['patch_size']} x {r['patch_size']} px"
            + (" + the class token)" if r["tokens_per_image"] > r["patches_per_image"] else ")"),
        ]
    lines.append(f"  closed form (per image): {r['closed_form']}")
    lines += [f"  note: {n}" for n in r["notes"]]
    emit(args, "\n".join(lines))
    return 0


def _config(args, res) -> dict | None:
    """The config.json of ``args.model`` (None for a preset or a dual encoder, which need none)."""
    from symtrans.engine.spec import DUAL_VISIONS

    if res.spec.vision in ("none", *DUAL_VISIONS):
        return None
    return config_of(args)


def config_of(args) -> dict | None:
    """The config.json that ``args.model`` names (a file or a folder holding one), or None (a preset)."""
    from pathlib import Path

    p = Path(args.model)
    if p.is_dir():
        p = p / "config.json"
    if not p.is_file():
        return None
    from symtrans.catalog.hf_config import read_config

    return read_config(p, str(args.model))
