"""Audio encoders over the raw waveform: wav2vec 2.0 and HuBERT, counted as transformers 5.x's
``Wav2Vec2Model`` and ``HubertModel`` build them (no CTC, classification or pre-training head).

Read off transformers 5.24's ``models/wav2vec2/modeling_wav2vec2.py`` and
``models/hubert/modeling_hubert.py`` (Baevski et al. 2020 §2; Hsu et al. 2021); checked on the
meta device, by the key audit and the re-save test in tests/test_model_types.py, and on
facebook/wav2vec2-base-960h's published config in tests/test_audio_types.py:

* the convolutional feature encoder (``feature_extractor.conv_layers``): one Conv1d per entry of
  ``conv_dim`` / ``conv_kernel`` / ``conv_stride`` (1 input channel, then the previous layer's),
  biased by ``conv_bias``; ``feat_extract_norm`` "group" puts a GroupNorm (affine, conv_dim[0]
  channels) after the first layer only, "layer" a LayerNorm after every layer.  Its parameters
  are a sum over the layers, so the reader gives it as one size, P_fe, and shows the sum;
* the feature projection: LayerNorm of conv_dim[-1] (HuBERT: only with ``feat_proj_layer_norm``)
  and a biased Linear conv_dim[-1] -> hidden_size;
* ``masked_spec_embed`` (hidden_size) when ``mask_time_prob`` or ``mask_feature_prob`` is above 0;
* the position convolution: Conv1d(hidden_size, hidden_size, num_conv_pos_embeddings, groups
  num_conv_pos_embedding_groups) with bias, weight-normed over dim 2 (g has num_conv_pos_embeddings
  elements) or, in HuBERT with ``conv_pos_batch_norm``, followed by a BatchNorm1d instead;
* one LayerNorm of the encoder (before the layers, or after them with ``do_stable_layer_norm``)
  and num_hidden_layers BERT-shaped layers: biased q, k, v, out maps, a LayerNorm, a biased
  two-map MLP, a LayerNorm (post-norm, or pre-norm with ``do_stable_layer_norm``).

Refused (each changes the count and is not modelled): ``add_adapter`` (Wav2Vec2Adapter's
convolutions) and ``adapter_attn_dim`` in the stable layer-norm layers (an adapter in each).
FLOPs at L frames are those of the shortest waveform that gives L frames (``feature_encoder``;
matched with FlopCounterMode in tests/test_audio_types.py); ``audio_input`` gives ``flops --part audio``
the samples of S seconds and the conv lists, for the FLOPs of any waveform (``engine.audio_flops``,
tests/test_audio_flops.py); memory is refused
(``accounting.memory``): the feature encoder's activations follow the waveform layer by layer.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from symtrans.catalog.models.record import ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_divides, check_size, show
from symtrans.engine.audio_flops import AudioInput
from symtrans.engine.spec import Spec

SAMPLE_RATE = 16_000  # Hz: wav2vec 2.0's and HuBERT's feature extractors read 16 kHz audio
# Wav2Vec2Config and HubertConfig name no sample rate: Wav2Vec2FeatureExtractor's sampling_rate
# (16,000 by default) lives in preprocessor_config.json, not in config.json.


def _numbers(r: Reader, key: str) -> list[int]:
    """A list of positive integers (conv_dim, conv_kernel, conv_stride), or the class default."""
    if key not in r.cfg:
        return list(r.default(key, "missing", r.defaults[key], None))
    v = r.cfg[key]
    if not isinstance(v, (list, tuple)):
        raise ConfigError(f"{key} must be a list of positive integers, not {show(v)}")
    return [check_size(f"{key}[{i}]", x) for i, x in enumerate(v)]


def _probability(r: Reader, key: str) -> float:
    if key not in r.cfg:
        return r.defaults[key]
    v = r.cfg[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ConfigError(f"{key} must be a number, not {show(v)}")
    return v


def receptive_field(kernels: list[int], strides: list[int]) -> tuple[int, int]:
    """(R, H): the samples one frame of the stack of unpadded Conv1d layers reads (its receptive
    field) and the samples between frames (the hop, prod(conv_stride)).  A waveform of T >= R samples
    gives floor((T - R) / H) + 1 frames: each layer maps n positions to floor((n - k) / s) + 1 and
    the nested floors combine (floor(floor(x / a) / b) = floor(x / (a b)))."""
    field, hop = 1, 1
    for k, s in zip(kernels, strides):
        field += (k - 1) * hop
        hop *= s
    return field, hop


def feature_encoder(r: Reader) -> tuple[int, int, int, int]:
    """(P_fe, M_fe1, M_fe, the last layer's channels) of the convolutional feature encoder, with a
    note showing the sums and the frames per second of 16 kHz audio.

    MACs: layer i (C_(i-1) -> C_i channels, kernel k_i, stride s_i) computes C_(i-1) k_i C_i
    multiply-accumulates per output position.  On the shortest waveform of L frames,
    T = R + (L - 1) H samples (``receptive_field``), layer i has n_i = (R - R_i) / H_i + 1 +
    (L - 1) H / H_i output positions (R_i, H_i: the field and hop of layers 1..i; both divisions
    exact), so the stack's MACs are M_fe1 + (L - 1) M_fe with M_fe1 = sum C_(i-1) k_i C_i
    ((R - R_i) / H_i + 1) and M_fe = sum C_(i-1) k_i C_i H / H_i.

    Raises:
        ConfigError: lists of different lengths or none, a size that is not a positive
            integer, a num_feat_extract_layers other than len(conv_dim), a feat_extract_norm
            other than "group" or "layer".
    """
    dims, kernels, strides = (_numbers(r, k) for k in ("conv_dim", "conv_kernel", "conv_stride"))
    if not dims or len({len(dims), len(kernels), len(strides)}) != 1:
        raise ConfigError(
            f"conv_dim, conv_kernel and conv_stride must be lists of one equal, non-zero length (one entry per "
            f"convolution), not {len(dims)}, {len(kernels)} and {len(strides)} entries"
        )
    given = r.cfg.get("num_feat_extract_layers", len(dims))
    if given != len(dims):
        raise ConfigError(
            f"num_feat_extract_layers ({show(given)}) differs from the {len(dims)} entries of conv_dim: "
            f"{r.cls} refuses the mismatch"
        )
    bias = r.flag("conv_bias", note=False)
    kind = r.text("feat_extract_norm")
    if kind not in ("group", "layer"):
        raise ConfigError(f'feat_extract_norm must be "group" or "layer", not {show(kind)}')
    c_in, weights, terms = 1, 0, []
    for c, k in zip(dims, kernels):
        weights += c_in * c * k + (c if bias else 0)
        terms.append(f"{c_in} x {c} x {k}" + (f" + {c}" if bias else ""))
        c_in = c
    norms = 2 * dims[0] if kind == "group" else 2 * sum(dims)
    total = weights + norms
    field, hop = receptive_field(kernels, strides)
    first = further = 0
    c_in = 1
    for i, (c, k) in enumerate(zip(dims, kernels)):
        field_i, hop_i = receptive_field(kernels[: i + 1], strides[: i + 1])
        first += c_in * k * c * ((field - field_i) // hop_i + 1)
        further += c_in * k * c * (hop // hop_i)
        c_in = c
    fps = Fraction(SAMPLE_RATE, hop)
    r.notes.append(
        f"convolutional feature encoder P_fe = {total:,}: {len(dims)} Conv1d layers ({' + '.join(terms)} = "
        f"{weights:,}{', with biases' if bias else ''}) + "
        + (
            f"GroupNorm of the first layer 2 x {dims[0]}"
            if kind == "group"
            else f"a LayerNorm after each, 2 x {sum(dims)}"
        )
        + f" = {norms:,}; conv strides {' x '.join(map(str, strides))} = {hop} samples per frame: "
        f"{float(fps):g} frames per second of 16 kHz audio (the encoder's L is frames, not tokens)"
    )
    r.notes.append(
        f"audio input: T samples of 16 kHz audio give L = floor((T - {field}) / {hop}) + 1 frames (receptive "
        f"field R = {field} samples, hop H = {hop}); FLOPs at L frames are those of the shortest such waveform, "
        f"T = {field} + {hop}(L - 1) samples: the feature encoder's MACs are M_fe1 + (L - 1) M_fe = {first:,} + "
        f"(L - 1) x {further:,} (a longer waveform of the same L frames adds positions to the earlier layers)"
    )
    return total, first, further, dims[-1]


def audio_input(cfg: dict[str, Any], seconds: Fraction) -> AudioInput:
    """One waveform of ``seconds`` of 16 kHz audio (``SAMPLE_RATE``) for the feature encoder of a
    wav2vec2 or hubert config.json: its samples and the config's conv_dim / conv_kernel / conv_stride
    (the class defaults where missing), for ``engine.audio_flops``.

    Raises:
        ConfigError: a malformed conv list (``_numbers``), or ``seconds`` that is not a whole
            number of samples at 16,000 Hz.
    """
    samples = seconds * SAMPLE_RATE
    if samples.denominator != 1:
        raise ConfigError(
            f"{float(seconds):g} s is {float(samples):g} samples at {SAMPLE_RATE:,} Hz: give seconds that make a "
            "whole number of samples"
        )
    mt = cfg.get("model_type")
    record = HUBERT if mt == "hubert" else WAV2VEC2
    r = Reader(cfg, record.model_type, (record.config_class, record.model_class), record.defaults, {})
    dims, kernels, strides = (tuple(_numbers(r, k)) for k in ("conv_dim", "conv_kernel", "conv_stride"))
    return AudioInput(int(samples), SAMPLE_RATE, dims, kernels, strides)


def read_wav2vec2(r: Reader) -> Spec:
    """Wav2Vec2Model and HubertModel (see the module docstring).

    Raises:
        ConfigError: a malformed size or list, num_attention_heads not dividing hidden_size
            (Wav2Vec2Attention), num_conv_pos_embedding_groups not dividing it (Conv1d),
            add_adapter true, adapter_attn_dim with do_stable_layer_norm (not modelled).
    """
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    check_divides("hidden_size", d, "num_attention_heads", h, f"{r.model}'s attention")
    groups = r.size("num_conv_pos_embedding_groups")
    check_divides("hidden_size", d, "num_conv_pos_embedding_groups", groups, "the grouped position convolution")
    stable = r.flag("do_stable_layer_norm", note=False)
    if r.mt == "wav2vec2" and r.flag("add_adapter", note=False):
        raise ConfigError(
            f"add_adapter is true: the Wav2Vec2Adapter convolutions after {r.model}'s encoder are not modelled by symtrans"
        )
    adapter = r.cfg.get("adapter_attn_dim")
    if adapter is not None:
        check_size("adapter_attn_dim", adapter)
        if stable:
            raise ConfigError(
                f"adapter_attn_dim is {adapter}: the attention adapters in every stable layer-norm layer of {r.model} "
                "are not modelled by symtrans"
            )
        r.notes.append(f"adapter_attn_dim is {adapter}, but only stable layer-norm layers build adapters: no effect")
    p_fe, m_first, m_further, c_last = feature_encoder(r)
    mask = _probability(r, "mask_time_prob") > 0 or _probability(r, "mask_feature_prob") > 0
    hubert = r.mt == "hubert"
    proj_norm = r.flag("feat_proj_layer_norm", note=False) if hubert else True
    batch_norm = hubert and r.flag("conv_pos_batch_norm", note=False)
    r.notes.append(
        f"{r.model} without a head (vocab_size sizes the CTC head of {r.model.replace('Model', 'ForCTC')}, not counted)"
        + ("; masked_spec_embed counted (mask_time_prob or mask_feature_prob above 0)" if mask else "")
    )
    return Spec(
        family="encoder-only",
        sizes=dict(
            d_model=d,
            d_ff=r.size("intermediate_size"),
            h=h,
            N=r.size("num_hidden_layers"),
            C_in=c_last,
            P_fe=p_fe,
            M_fe1=m_first,
            M_fe=m_further,
            K_pos=r.size("num_conv_pos_embeddings"),
            G_pos=groups,
        ),
        frontend="wav2vec2",
        positional="none",
        audio_feature_norm=proj_norm,
        audio_mask_embed=mask,
        pos_conv_norm="batch" if batch_norm else "weight",
        bias=True,
        norm="layernorm",
        norm_position="pre" if stable else "post",
        embedding_norm=not stable,
        final_norm=stable,
    )


_DEFAULTS: dict[str, Any] = {
    "hidden_size": 768,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "conv_dim": (512, 512, 512, 512, 512, 512, 512),
    "conv_stride": (5, 2, 2, 2, 2, 2, 2),
    "conv_kernel": (10, 3, 3, 3, 3, 2, 2),
    "conv_bias": False,
    "feat_extract_norm": "group",
    "num_conv_pos_embeddings": 128,
    "num_conv_pos_embedding_groups": 16,
    "do_stable_layer_norm": False,
    "mask_time_prob": 0.05,
    "mask_feature_prob": 0.0,
}
_SHARED_KEYS = (
    "activation_dropout apply_spec_augment attention_dropout bos_token_id classifier_proj_size conv_bias conv_dim "
    "conv_kernel conv_stride ctc_loss_reduction ctc_zero_infinity do_stable_layer_norm eos_token_id "
    "feat_extract_activation feat_extract_norm feat_proj_dropout final_dropout hidden_act hidden_dropout hidden_size "
    "initializer_range intermediate_size layer_norm_eps layerdrop mask_feature_length mask_feature_min_masks "
    "mask_feature_prob mask_time_length mask_time_min_masks mask_time_prob num_attention_heads "
    "num_conv_pos_embedding_groups num_conv_pos_embeddings num_hidden_layers pad_token_id use_weighted_layer_sum "
    "vocab_size"
)
_SHARED_NO_EFFECT = dict(
    dropout="activation_dropout attention_dropout feat_proj_dropout final_dropout hidden_dropout layerdrop",
    act="feat_extract_activation hidden_act",
    init="initializer_range",
    eps="layer_norm_eps",
    token="bos_token_id eos_token_id pad_token_id",
    augment="apply_spec_augment mask_feature_length mask_feature_min_masks mask_time_length mask_time_min_masks",
    loss="ctc_loss_reduction ctc_zero_infinity",
    **{"norm place": "do_stable_layer_norm"},
    **{"no head": "classifier_proj_size use_weighted_layer_sum vocab_size"},
)
# Keys the published files still carry (transformers 4.x wrote them) that 5.x's classes do not
# read or derive themselves: num_feat_extract_layers (len(conv_dim), checked), the old
# feat_extract_dropout and hidden_dropout_prob.
_LEGACY = frozenset({"num_feat_extract_layers", "feat_extract_dropout", "hidden_dropout_prob"})

WAV2VEC2 = ModelType(
    model_type="wav2vec2",
    config_class="Wav2Vec2Config",
    model_class="Wav2Vec2Model",
    read=read_wav2vec2,
    defaults={**_DEFAULTS, "add_adapter": False},
    config_keys=keys(
        _SHARED_KEYS + " adapter_attn_dim adapter_kernel_size adapter_stride add_adapter codevector_dim "
        "contrastive_logits_temperature diversity_loss_weight feat_quantizer_dropout num_adapter_layers "
        "num_codevector_groups num_codevectors_per_group num_negatives output_hidden_size proj_codevector_dim "
        "tdnn_dilation tdnn_dim tdnn_kernel xvector_output_dim"
    ),
    no_param_effect=no_effect(
        **{
            **_SHARED_NO_EFFECT,
            "dropout": _SHARED_NO_EFFECT["dropout"] + " feat_quantizer_dropout",
            "loss": _SHARED_NO_EFFECT["loss"] + " contrastive_logits_temperature diversity_loss_weight num_negatives",
            "no head": _SHARED_NO_EFFECT["no head"]
            + " codevector_dim num_codevector_groups num_codevectors_per_group proj_codevector_dim tdnn_dilation "
            "tdnn_dim tdnn_kernel xvector_output_dim",
        }
    ),
    legacy_keys=_LEGACY,
    family="audio encoder",
)

HUBERT = ModelType(
    model_type="hubert",
    config_class="HubertConfig",
    model_class="HubertModel",
    read=read_wav2vec2,
    defaults={**_DEFAULTS, "feat_proj_layer_norm": True, "conv_pos_batch_norm": False},
    config_keys=keys(_SHARED_KEYS + " conv_pos_batch_norm feat_proj_layer_norm"),
    no_param_effect=no_effect(**_SHARED_NO_EFFECT),
    getattr_keys=("adapter_attn_dim",),
    legacy_keys=_LEGACY,
    family="audio encoder",
)

RECORDS = (WAV2VEC2, HUBERT)
