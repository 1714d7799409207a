"""Forward FLOPs of one waveform through a wav2vec 2.0 or HuBERT encoder, from its samples.

``flops`` counts the encoder at L frames (the shortest waveform of L frames); this module counts
one waveform of n samples as transformers 5.24's ``Wav2Vec2Model.forward`` /
``HubertModel.forward`` (``models/wav2vec2/modeling_wav2vec2.py``, ``models/hubert/modeling_hubert.py``)
runs it.  2 FLOPs per multiply-accumulate of the matmuls and convolutions
(``torch.utils.flop_counter.FlopCounterMode``'s convention: a convolution is 2 x output elements
x in_channels / groups x kernel); norms, softmax, activations and bias adds are not counted.

- the convolutional feature encoder (``Wav2Vec2FeatureEncoder``): Conv1d layer i (C_(i-1) -> C_i
  channels, C_0 = 1, kernel k_i, stride s_i, no padding) maps n_(i-1) positions to
  n_i = floor((n_(i-1) - k_i) / s_i) + 1 (n_0 = n samples), 2 n_i C_(i-1) k_i C_i FLOPs; L = n_last
  frames.  ``feat_extract_norm`` (a GroupNorm or LayerNorms) adds no matmul;
- the feature projection, the position convolution (Conv1d(d_model, d_model, K_pos, groups G_pos),
  padding K_pos // 2) and the N encoder layers at L frames: the steps of ``architectures.build``
  (``frontends.wav2vec2_front``) at B = 1 and L frames.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.engine import symbols as S
from symtrans.engine.roles import Role
from symtrans.engine.spec import Spec


@dataclass(frozen=True)
class AudioInput:
    """One waveform as the feature encoder receives it.

    Attributes:
        samples: n, the waveform's length in samples (``input_values`` of shape (1, n)).
        sample_rate: samples per second (Hz), to state seconds.
        dims, kernels, strides: the config's conv_dim, conv_kernel and conv_stride (one entry a layer).
    """

    samples: int
    sample_rate: int
    dims: tuple[int, ...]
    kernels: tuple[int, ...]
    strides: tuple[int, ...]


@dataclass(frozen=True)
class AudioFlops:
    """The forward FLOPs of one waveform (integers): ``parts`` maps "feature encoder", "feature
    projection", "position convolution" and "encoder layers" to theirs, ``flops`` is their sum;
    ``positions`` the output positions of each convolution (the last is ``frames``, L);
    ``conv_terms`` each convolution's FLOPs as arithmetic text; ``closed_form`` the rest (projection,
    position convolution, layers) for one waveform as a SymPy expression in the sizes and L."""

    flops: int
    frames: int
    positions: tuple[int, ...]
    parts: dict[str, int]
    conv_terms: tuple[str, ...]
    closed_form: sp.Expr


def conv_positions(samples: int, kernels: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...]:
    """The output positions of each unpadded Conv1d layer for ``samples`` input samples:
    n_i = floor((n_(i-1) - k_i) / s_i) + 1 (torch.nn.Conv1d, padding 0, dilation 1).

    Raises:
        InputError: a layer gets fewer positions than its kernel (the waveform is shorter than the
            stack's receptive field: it gives no frame).
    """
    out, n = [], samples
    for i, (k, s) in enumerate(zip(kernels, strides)):
        if n < k:
            field, hop = 1, 1
            for kk, ss in zip(kernels, strides):
                field, hop = field + (kk - 1) * hop, hop * ss
            raise InputError(
                f"{samples:,} samples give no frame: convolution {i} (kernel {k}) gets {n} positions; the feature "
                f"encoder needs at least {field:,} samples (its receptive field) for one frame"
            )
        n = (n - k) // s + 1
        out.append(n)
    return tuple(out)


_PARTS = {Role.EMBEDDING_PROJECTION: "feature projection", Role.CONV: "position convolution"}


def audio_flops(spec: Spec, audio: AudioInput) -> AudioFlops:
    """The forward FLOPs of one waveform of ``audio.samples`` samples through ``spec`` (a
    ``frontend="wav2vec2"`` encoder), parts and frames stated (module docstring).

    Raises:
        InputError: the model is not a wav2vec2-style encoder, or the waveform gives no frame.
    """
    if spec.frontend != "wav2vec2":
        raise InputError("audio FLOPs from samples are modelled for wav2vec 2.0 and HuBERT encoders only")
    from symtrans.engine.architectures import build
    from symtrans.engine.evaluate import exact
    from symtrans.engine.simplify import closed_form

    positions = conv_positions(audio.samples, audio.kernels, audio.strides)
    frames = positions[-1]
    conv, terms, c_in = 0, [], 1
    for n, c, k in zip(positions, audio.dims, audio.kernels):
        conv += 2 * n * c_in * k * c
        terms.append(f"2 x {n} x {c_in} x {k} x {c}")
        c_in = c
    rest = {name: sp.Integer(0) for name in (*_PARTS.values(), "encoder layers")}
    for _, mult, step in build(spec).walk():
        if step.role == Role.AUDIO_CONV:  # at the shortest waveform of L frames: replaced by the count above
            continue
        name = _PARTS.get(step.role, "encoder layers")
        rest[name] += mult * step.flops
    at = {S.B: 1}
    values = {**spec.values, "L": frames}
    parts = {"feature encoder": conv, **{k: exact(v.subs(at), values) for k, v in rest.items()}}
    return AudioFlops(
        flops=sum(parts.values()),
        frames=frames,
        positions=positions,
        parts=parts,
        conv_terms=tuple(terms),
        closed_form=closed_form(sp.Add(*rest.values()).subs(at)),
    )
