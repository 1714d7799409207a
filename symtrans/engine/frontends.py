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
HF ``WhisperEncoder.conv1``/``conv2``; Baevski et al. 2020 §2 and §4.2 (wav2vec 2.0: a
convolutional feature encoder over the raw 16 kHz waveform, seven layers of 512 channels with
strides (5,2,2,2,2,2,2), 320 samples (20 ms) per frame, then a convolutional relative position
embedding of kernel 128 in 16 groups) and HF ``Wav2Vec2FeatureEncoder``,
``Wav2Vec2FeatureProjection``, ``Wav2Vec2PositionalConvEmbedding``, ``Wav2Vec2Model.masked_spec_embed``;
Hsu et al. 2021 (HuBERT: the same front end) and HF ``HubertFeatureProjection``
(``feat_proj_layer_norm``), ``HubertPositionalConvEmbedding`` (``conv_pos_batch_norm``).
"""

from __future__ import annotations

import sympy as sp

from symtrans.engine import symbols as S
from symtrans.engine.conventions import per_element
from symtrans.engine.cost import DENSE, Step
from symtrans.engine.primitives import expr_text, linear, norm
from symtrans.engine.roles import Role
from symtrans.engine.spec import Spec

_VIT = "Dosovitskiy et al. 2021 §3.1 (ViT); ViTPatchEmbeddings.projection"
_WHISPER = "Radford et al. 2022 §2.2 (Whisper); WhisperEncoder.conv1, conv2"
_WAV2VEC2 = "Baevski et al. 2020 §2, §4.2 (wav2vec 2.0); Hsu et al. 2021 (HuBERT)"


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
            shape=f"({expr_text(positions)} x {expr_text(c_in * kernel)}) . ({expr_text(c_in * kernel)} x d_model)",
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


def wav2vec2_front(spec: Spec, batch: sp.Expr, seq: sp.Expr) -> list[Step]:
    """wav2vec 2.0's and HuBERT's input side, up to the first encoder layer, for ``batch``
    sequences of ``seq`` frames (d_model wide each).

    * the convolutional feature encoder (``feature_extractor``): P_fe parameters, the
      config reader's sum over its layers of C_(i-1) x C_i x k_i (+ C_i with conv_bias) and
      the norms (a GroupNorm of C_0 channels after the first layer, or a LayerNorm after
      each: 2 C_i); its FLOPs are refused (``Spec.check_workload``), 0 here;
    * the feature projection: LayerNorm of C_in (2 C_in; optional in HuBERT), then
      Linear C_in -> d_model with bias;
    * ``masked_spec_embed``: a learned d_model vector, when the config masks in training;
    * the position convolution: Conv1d(d_model, d_model, K_pos, groups G_pos) with bias,
      d_model x (d_model / G_pos) x K_pos weights, with weight norm (g: K_pos elements, as
      ``weight_norm(dim=2)`` keeps one magnitude per kernel tap) or a BatchNorm1d of d_model
      (2 d_model).  FLOPs 2 x B x L' x d_model x (d_model / G_pos) x K_pos, with padding K_pos // 2
      on each side: L' = L + 1 for an even K_pos (Wav2Vec2SamePadLayer drops the last output), L for
      an odd one.

    Parameters P_fe + (2 C_in) + C_in d_model + d_model (+ d_model) + d_model^2 K_pos / G_pos
    + d_model + (K_pos | 2 d_model).
    """
    frames = batch * seq
    macs = S.M_fe1 + (seq - 1) * S.M_fe
    steps = [
        Step(
            label="convolutional feature encoder",
            role=Role.AUDIO_CONV,
            params=S.P_fe,
            flops=2 * batch * macs,
            kind=DENSE,
            weights=S.P_fe,
            shape=f"{expr_text(batch)} x ({expr_text(macs)}) multiply-accumulates",
            note="Conv1d layers over the raw waveform (conv_dim, conv_kernel, conv_stride), with their biases "
            "and norms: P_fe parameters, summed layer by layer by the config reader (the notes show the sum); "
            "M_fe1 + (L - 1) M_fe multiply-accumulates on the shortest waveform of L frames, R + (L - 1) H "
            "samples (receptive field R, hop H = prod(conv_stride))",
            source=_WAV2VEC2 + "; Wav2Vec2FeatureEncoder",
        )
    ]
    if spec.audio_feature_norm:
        steps += norm(spec, "feature projection norm", S.C_in, frames)
    steps += linear(
        "feature projection",
        S.C_in,
        S.d_model,
        frames,
        True,
        _WAV2VEC2 + "; Wav2Vec2FeatureProjection.projection",
        "the C_in channels of the last convolution mapped to d_model per frame",
        role=Role.EMBEDDING_PROJECTION,
    )
    if spec.audio_mask_embed:
        steps.append(
            Step(
                label="masked_spec_embed",
                role=Role.MASK_EMBEDDING,
                params=S.d_model,
                note="the learned vector that replaces masked frames in training (built when mask_time_prob "
                "or mask_feature_prob is above 0)",
                source=_WAV2VEC2 + "; Wav2Vec2Model.masked_spec_embed",
            )
        )
    w = S.d_model * (S.d_model / S.G_pos) * S.K_pos
    # padding K_pos // 2 on each side: L + 1 outputs for an even kernel (Wav2Vec2SamePadLayer drops the last)
    outputs = batch * (seq + 1 + 2 * sp.floor(S.K_pos / 2) - S.K_pos)
    steps.append(
        Step(
            label="position convolution (K_pos taps, G_pos groups)",
            role=Role.CONV,
            params=w,
            flops=2 * outputs * w,
            kind=DENSE,
            weights=w,
            shape=f"({expr_text(outputs)} x {expr_text(S.d_model * S.K_pos / S.G_pos)}) . "
            f"({expr_text(S.d_model * S.K_pos / S.G_pos)} x d_model)",
            note="a grouped convolution over the frames: each of the G_pos groups maps d_model/G_pos channels "
            "times K_pos taps to d_model/G_pos channels",
            source=_WAV2VEC2 + "; Wav2Vec2PositionalConvEmbedding.conv",
        )
    )
    steps.append(
        Step(
            label="bias of the position convolution",
            role=Role.CONV,
            bias=True,
            params=S.d_model,
            elementwise=per_element("bias") * frames * S.d_model,
            note="one bias per output channel",
            source=_WAV2VEC2 + "; Wav2Vec2PositionalConvEmbedding.conv",
        )
    )
    if spec.pos_conv_norm == "weight":
        steps.append(
            Step(
                label="weight norm g of the position convolution",
                role=Role.CONV,
                params=S.K_pos,
                note="weight_norm(conv, dim=2) stores the direction v (the weights above) and a magnitude g of "
                "shape (1, 1, K_pos): one per kernel tap",
                source="Salimans & Kingma 2016 (weight normalisation); torch.nn.utils.parametrizations.weight_norm",
            )
        )
    else:
        steps.append(
            Step(
                label="BatchNorm1d of the position convolution",
                role=Role.NORM,
                params=2 * S.d_model,
                elementwise=per_element("layernorm") * frames * S.d_model,
                note="scale and shift per channel (its running mean and variance are buffers, not parameters); "
                "no weight norm then",
                source="Ioffe & Szegedy 2015; HubertPositionalConvEmbedding.batch_norm (conv_pos_batch_norm)",
            )
        )
    return steps
