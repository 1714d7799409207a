"""``symtrans flops --part audio --audio-seconds S``: a wav2vec 2.0 or HuBERT encoder's forward
FLOPs for S seconds of 16 kHz audio (``engine.audio_flops``): the convolutional feature encoder
on the n = S x 16,000 samples, then the feature projection, the position convolution and the
encoder layers at the frames it gives, stated.  Other audio towers (Gemma 4's) are refused.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction

from symtrans.cli.common import UsageError

_SECONDS = re.compile(r"([0-9]{1,6})(?:\.([0-9]{1,6}))?|\.([0-9]{1,6})")
MAX_SECONDS = 999_999  # digits before the point: no huge integers before any arithmetic


def parse_audio_seconds(text: str | None) -> Fraction | None:
    """``--audio-seconds``: a positive decimal number of seconds (at most six digits either side of
    the point), as an exact Fraction; None if not given.

    Raises:
        UsageError: anything else (zero, a sign, an exponent, more digits).
    """
    if text is None:
        return None
    m = _SECONDS.fullmatch(text.strip())
    if m is None or not any(c in "123456789" for c in text):
        raise UsageError(
            f"symtrans flops: --audio-seconds takes a positive decimal number of seconds with at most six digits "
            f"either side of the point (e.g. 1 or 2.5), not {text.strip()[:40]!r}"
        )
    whole, frac = m.group(1) or "0", m.group(2) or m.group(3) or ""
    return Fraction(int(whole + frac), 10 ** len(frac))


def audio_flops_result(res, batch: int, cfg: dict | None, seconds: Fraction | None) -> dict:
    """The JSON object of ``flops --part audio``: FLOPs of ``batch`` waveforms of ``seconds`` each
    through the wav2vec2 / hubert encoder of ``cfg`` (its config.json), frames and parts stated.

    Raises:
        UsageError: not a wav2vec 2.0 or HuBERT encoder, no config.json, no --audio-seconds.
    """
    import sympy as sp

    from symtrans.catalog.models.audio import audio_input
    from symtrans.engine.audio_flops import audio_flops

    if res.generic is not None or res.spec.frontend != "wav2vec2":
        raise UsageError(
            f"symtrans flops: --part audio counts a wav2vec 2.0 or HuBERT encoder from --audio-seconds; the audio "
            f"FLOPs of {res.name} are not modelled"
        )
    if cfg is None:
        raise UsageError(f"symtrans flops: --part audio of {res.name} reads its config.json (give the file)")
    if seconds is None:
        raise UsageError("symtrans flops: --part audio needs --audio-seconds S (seconds of 16 kHz audio per input)")
    audio = audio_input(cfg, seconds)
    r = audio_flops(res.spec, audio)
    return {
        "model": res.name,
        "part": "audio",
        "mode": "forward",
        "unit": "FLOP",
        "seconds": float(seconds),
        "sample_rate": audio.sample_rate,
        "samples": audio.samples,
        "frames": r.frames,
        "conv_positions": list(r.positions),
        "inputs": batch,
        "per_input": r.flops,
        "total": batch * r.flops,
        "parts": r.parts,
        "feature_encoder": " + ".join(r.conv_terms),
        "closed_form": sp.sstr(r.closed_form),
        "notes": [
            "convention: 2 FLOPs per multiply-accumulate of the matmuls and convolutions; a convolution counts "
            "2 x output elements x in_channels / groups x kernel (FlopCounterMode's count); norms (the feature "
            "encoder's GroupNorm or LayerNorms too), softmax, activations and bias adds not counted",
            f"sample rate {audio.sample_rate:,} Hz: Wav2Vec2FeatureExtractor's default (config.json names none); "
            f"{audio.samples:,} samples",
            f"frames: each convolution maps n positions to floor((n - kernel) / stride) + 1: "
            f"{audio.samples:,} -> {' -> '.join(f'{n:,}' for n in r.positions)}; L = {r.frames:,} frames",
            "closed form: the feature projection, position convolution and encoder layers of one input at L frames "
            "(the feature encoder's convolutions are the sum shown, at the samples)",
        ],
    }


def cmd_audio_flops(args, res, emit) -> int:
    """Print ``audio_flops_result`` as JSON or text."""
    if getattr(args, "mode", "forward") != "forward":
        raise UsageError(f"symtrans flops: --part audio counts the forward pass, not --mode {args.mode}")
    if getattr(args, "image_size", None) is not None:
        raise UsageError("symtrans flops: --image-size applies to --part vision (the image tower's FLOPs per image)")
    from symtrans.cli.image_flops import config_of

    seconds = parse_audio_seconds(getattr(args, "audio_seconds", None))
    r = audio_flops_result(res, args.batch, config_of(args), seconds)
    if args.format == "json":
        emit(args, json.dumps(r, indent=2))
        return 0
    lines = [
        f"{r['model']}: forward FLOPs of the audio encoder: {r['total']:,} for {r['inputs']} input(s) of "
        f"{r['seconds']:g} s ({r['samples']:,} samples at {r['sample_rate']:,} Hz)",
        f"  per input: {r['per_input']:,} ({r['frames']:,} frames)",
        *(f"    {name}: {n:,}" for name, n in r["parts"].items()),
        f"  feature encoder: {r['feature_encoder']}",
        f"  closed form (per input, L = {r['frames']:,}): {r['closed_form']}",
    ]
    lines += [f"  note: {n}" for n in r["notes"]]
    emit(args, "\n".join(lines))
    return 0
