"""``symtrans flops --part vision``: a dual encoder's image tower, FLOPs per image.

The text workload has no images, so ``flops`` counts a dual encoder's text forward; the image
tower runs once per image, which this command counts: the forward FLOPs of one image
(``engine.dual.image_flops``: patch embedding, the layers on the image's tokens, the pooling
head or projection) times ``--batch`` images, with the tokens per image stated.
"""

from __future__ import annotations

import json

from symtrans.cli.common import UsageError


def image_flops_result(res, batch: int) -> dict:
    """The JSON object of ``flops --part vision``.

    Raises:
        UsageError: the model is no dual encoder (clip, siglip).
    """
    import sympy as sp

    from symtrans.engine.dual import image_flops, image_tokens
    from symtrans.engine.evaluate import exact
    from symtrans.engine.simplify import closed_form
    from symtrans.engine.spec import DUAL_VISIONS

    spec = res.spec
    if spec.vision not in DUAL_VISIONS:
        raise UsageError(
            f"symtrans flops: --part vision counts a dual encoder's image tower (clip, siglip); {res.name} is none"
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
    r = image_flops_result(res, args.batch)
    if args.format == "json":
        emit(args, json.dumps(r, indent=2))
        return 0
    lines = [
        f"{r['model']}: forward FLOPs of the image tower: {r['total']:,} for {r['images']} image(s)",
        f"  per image: {r['per_image']:,} ({r['tokens_per_image']} tokens per image: {r['patches_per_image']} "
        f"patches of {r['patch_size']} x {r['patch_size']} px"
        + (" + the class token)" if r["tokens_per_image"] > r["patches_per_image"] else ")"),
        f"  closed form (per image): {r['closed_form']}",
    ]
    lines += [f"  note: {n}" for n in r["notes"]]
    emit(args, "\n".join(lines))
    return 0
