"""Front ends that read something other than token ids: ViT's patch embedding and
Whisper's convolutional audio input.  Each returns the derivation Steps of its weights
and FLOPs, to be placed in the first stack's embeddings.

Convolutions cost 2 FLOPs per multiply-accumulate like every matmul: an output position
of a Conv with C_in input channels and kernel k (k x k for images) to C_out channels is
a dot product of C_in*k (C_in*k*k) weights, once per output channel, so a convolution
costs 2 x (output positions) x C_in x k x C_out (torch.utils.flop_counter's count); its
bias add is elementwise.  A convolution of the raw input (pixels, mel frames) computes no
input gradient in the backward pass (``Step.input_grad``).

Sources: Dosovitskiy et al. 2021 §3.1 (ViT: patches, class token, learned positions) and
HF ``ViTEmbeddings``/``ViTPatchEmbeddings``; Radford et al. 2022 §2.2 (Whisper: two
width-3 convolutions with GELU, the second with stride 2, then sinusoidal positions) and
HF ``WhisperEncoder.conv1``/``conv2``.
"""

from __future__ import annotations

import sympy as sp

from symtrans.engine import symbols as S
from symtrans.engine.conventions import per_element
from symtrans.engine.cost import DENSE, Step
from symtrans.engine.roles import Role

_VIT = "Dosovitskiy et al. 2021 §3.1 (ViT); ViTPatchEmbeddings.projection"
_WHISPER = "Radford et al. 2022 §2.2 (Whisper); WhisperEncoder.conv1, conv2"


def _fmt(e: sp.Expr) -> str:
    return sp.sstr(e).replace("**", "^")


def _conv(
    label: str, role: Role, c_in: sp.Expr, kernel: sp.Expr, positions: sp.Expr, source: str, note: str, raw: bool
) -> list[Step]:
    """A convolution from ``c_in`` channels (``kernel`` taps each) to d_model channels at
    ``positions`` output positions, with its d_model bias.  Weight c_in*kernel*d_model
    parameters; FLOPs 2*positions*c_in*kernel*d_model."""
    w = c_in * kernel * S.d_model
    return [
        Step(
            label=label,
            role=role,
            params=w,
            flops=2 * positions * w,
            kind=DENSE,
            weights=w,
            shape=f"({_fmt(positions)} x {_fmt(c_in * kernel)}) . ({_fmt(c_in * kernel)} x d_model)",
            note=note,
            source=source,
            input_grad=not raw,
        ),
        Step(
            label=f"bias of {label}",
            role=role,
            bias=True,
            params=S.d_model,
            elementwise=per_element("bias") * positions * S.d_model,
            note="one bias per output channel (d_model)",
            source=source,
        ),
    ]


def patch_embedding(batch: sp.Expr, seq: sp.Expr) -> list[Step]:
    """ViT's input: a Conv2d(C_in, d_model, kernel p, stride p) over the image, one token
    per p x p patch, and a learned class token (d_model parameters) before them.

    ``seq`` is the tokens per image the encoder sees, the class token included, so the
    convolution runs on ``batch*(seq - 1)`` patches (the position table has L_max =
    patches + 1 rows).  Parameters C_in*p^2*d_model + d_model (+ d_model for the class
    token); FLOPs 2*B*(L - 1)*C_in*p^2*d_model.
    """
    steps = _conv(
        "patch embedding (Conv2d p x p, stride p)",
        Role.PATCH_EMBEDDING,
        S.C_in,
        S.p**2,
        batch * (seq - 1),
        _VIT,
        "each p x p patch of C_in channels mapped to d_model: a linear map of C_in*p^2 pixels",
        raw=True,
    )
    steps.append(
        Step(
            label="CLS token",
            role=Role.CLS_TOKEN,
            params=S.d_model,
            note="one learned d_model vector prepended to every image's patches (the pooler reads it)",
            source="Dosovitskiy et al. 2021 §3.1; ViTEmbeddings.cls_token",
        )
    )
    return steps


def audio_conv(batch: sp.Expr, src: sp.Expr) -> list[Step]:
    """Whisper's encoder input: Conv1d(C_in mel bins, d_model, 3, padding 1) over 2*L_src
    frames, GELU, Conv1d(d_model, d_model, 3, stride 2, padding 1) down to L_src positions,
    GELU.  (WhisperEncoder requires exactly 2*max_source_positions input frames.)

    Parameters 3*C_in*d_model + d_model + 3*d_model^2 + d_model; FLOPs
    2*B*(2*L_src)*3*C_in*d_model + 2*B*L_src*3*d_model^2.
    """
    frames = 2 * batch * src
    steps = _conv(
        "conv1 (width 3, C_in -> d_model)",
        Role.AUDIO_CONV,
        S.C_in,
        sp.Integer(3),
        frames,
        _WHISPER,
        "width-3 convolution over the 2*L_src mel frames, C_in mel bins in",
        raw=True,
    )
    gelu = Step(
        label="GELU",
        role=Role.ACTIVATION,
        elementwise=per_element("activation") * frames * S.d_model,
        note="after each convolution (all-ops only)",
        source=_WHISPER,
    )
    steps.append(gelu)
    steps += _conv(
        "conv2 (width 3, stride 2)",
        Role.AUDIO_CONV,
        S.d_model,
        sp.Integer(3),
        batch * src,
        _WHISPER,
        "width-3 convolution with stride 2: the 2*L_src frames become L_src positions",
        raw=False,
    )
    steps.append(
        Step(
            label="GELU",
            role=Role.ACTIVATION,
            elementwise=per_element("activation") * batch * src * S.d_model,
            note="after the second convolution (all-ops only)",
            source=_WHISPER,
        )
    )
    return steps
