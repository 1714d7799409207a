"""The rules of the ``wav2vec2`` front end (wav2vec 2.0, HuBERT) that ``spec.Spec`` checks: its
sizes (P_fe: the convolutional feature encoder's parameters, summed by the config reader; C_in:
its last layer's channels; K_pos, G_pos: the position convolution's kernel and groups) and options
(``audio_feature_norm``: the C_in LayerNorm before the feature projection; ``audio_mask_embed``:
masked_spec_embed; ``pos_conv_norm``: ``weight`` or ``batch``), and why its memory is refused.  Plain checks on a spec's fields, importing
nothing of the engine, so ``spec.py`` calls them without a cycle.  M_fe1 and M_fe: the feature
encoder's multiply-accumulates for the first frame and each further one on the shortest waveform
of L frames (``catalog/models/audio.feature_encoder`` sums them) (``frontends.wav2vec2_front``
builds the steps; Baevski et al. 2020 §2, HF ``Wav2Vec2Model``).
"""

from __future__ import annotations

from typing import Any

from symtrans.base.errors import InputError

POS_CONV_NORMS = ("weight", "batch")  # the position convolution's weight norm, or HuBERT's BatchNorm1d
# feature-encoder parameters and MACs (first frame, each further frame), position kernel and groups
WAV2VEC2_SIZES = ("P_fe", "M_fe1", "M_fe", "K_pos", "G_pos")
MEMORY_REFUSAL = (
    "memory of an audio encoder (wav2vec 2.0, HuBERT) are not modelled: its convolutional "
    "feature encoder's activations follow the waveform's length layer by layer; parameters and FLOPs are exact"
)


def check_options(spec: Any) -> None:
    """The audio options belong to the wav2vec2 front end, which is an encoder without tokens.

    Raises:
        InputError: one sentence naming the option or the front end.
    """
    if spec.frontend != "wav2vec2":
        if not spec.audio_feature_norm or spec.audio_mask_embed or spec.pos_conv_norm != "weight":
            raise InputError(
                "audio_feature_norm, audio_mask_embed and pos_conv_norm are options of the wav2vec2 front end; "
                f"this model's is {spec.frontend}"
            )
        return
    if spec.family != "encoder-only" or spec.positional != "none" or spec.mlm_head or spec.token_types or spec.pooler:
        raise InputError(
            "frontend=wav2vec2 is an audio encoder's (wav2vec 2.0, HuBERT): encoder-only, positional=none "
            "(its positions are a convolution), without a vocabulary, MLM head, token types or pooler"
        )


def check_sizes(spec: Any, v: dict[str, int]) -> None:
    """P_fe, M_fe1, M_fe, K_pos and G_pos: needed by the wav2vec2 front end and by nothing else; G_pos divides
    d_model (torch's Conv1d needs its channels divisible by the groups).

    Raises:
        InputError: one sentence naming the size.
    """
    for name in WAV2VEC2_SIZES:
        if spec.frontend != "wav2vec2" and name in v:
            raise InputError(f"{name} is a size of the wav2vec2 front end; this model's is {spec.frontend}")
        if spec.frontend == "wav2vec2" and name not in v:
            raise InputError(f"frontend=wav2vec2 needs size {name}")
    if spec.frontend == "wav2vec2" and v["d_model"] % v["G_pos"]:
        raise InputError(
            f"G_pos={v['G_pos']} does not divide d_model={v['d_model']} (the grouped position convolution)"
        )
