"""``symtrans flops --part audio --audio-seconds S`` (issue 21, Build item 2): a wav2vec 2.0 or
HuBERT encoder's forward FLOPs for n = S x 16,000 samples (engine/audio_flops.py,
catalog/models/audio.audio_input, cli/audio_flops.py).

Oracles: FlopCounterMode (torch 2.13) on transformers 5.24's eager Wav2Vec2Model / HubertModel
forward on the meta device, fed input_values of n samples (tiny configs at several n, strides
leaving remainders, and a hypothesis draw), with the model's own output length as the frames;
and facebook/wav2vec2-base-960h's published config at 1 s written out by hand below from
models/wav2vec2/modeling_wav2vec2.py (Wav2Vec2FeatureEncoder, Wav2Vec2FeatureProjection,
Wav2Vec2PositionalConvEmbedding, Wav2Vec2EncoderLayer).
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from conftest import CONFIG_DIR, require
from hypothesis import given, settings
from hypothesis import strategies as st

require("transformers")

from symtrans.catalog.hf_config import spec_from_config  # noqa: E402
from symtrans.catalog.models.audio import audio_input  # noqa: E402
from symtrans.cli.main import main  # noqa: E402
from symtrans.engine.audio_flops import audio_flops  # noqa: E402

BASE = CONFIG_DIR / "wav2vec2-base-960h.json"

# wav2vec2-base-960h on 1 s = 16,000 samples.  Conv1d(C_in, C_out, k, stride s) gives
# floor((n - k) / s) + 1 positions: kernels 10,3,3,3,3,2,2, strides 5,2,2,2,2,2,2:
# 16000 -> (16000-10)//5+1 = 3199 -> (3199-3)//2+1 = 1599 -> 799 -> 399 -> 199 -> (199-2)//2+1 = 99 -> 49.
_POSITIONS = [3199, 1599, 799, 399, 199, 99, 49]
# FlopCounterMode counts a convolution as 2 x output elements x (in_channels / groups) x kernel:
_FEATURE_ENCODER = 2 * (3199 * 1 * 10 * 512 + (1599 + 799 + 399 + 199) * 512 * 3 * 512 + (99 + 49) * 512 * 2 * 512)
_PROJECTION = 2 * 49 * 512 * 768  # Linear 512 -> 768 on 49 frames
# Conv1d(768, 768, 128, padding 64, groups 16): 49 + 128 - 128 + 1 = 50 outputs (the last dropped after it)
_POSITION_CONV = 2 * 50 * 768 * (768 // 16) * 128
# 12 layers: q, k, v, out 8 L d^2; Q K^T and the weighted sum 4 L^2 d; MLP 4 L d d_ff
_LAYERS = 12 * (8 * 49 * 768**2 + 4 * 49**2 * 768 + 4 * 49 * 768 * 3072)
_BASE_ONE_SECOND = _FEATURE_ENCODER + _PROJECTION + _POSITION_CONV + _LAYERS


def test_the_arithmetic():
    assert _BASE_ONE_SECOND == 13_822_748_672
    assert (16_000 - 400) // 320 + 1 == 49  # receptive field 400, hop 320 (Baevski et al. 2020 §2): the same L


def _engine(cfg: dict, samples: int):
    spec, _ = spec_from_config(cfg, "x")
    return audio_flops(spec, audio_input(cfg, Fraction(samples, 16_000)))


def _counted(hf, cfg: dict, samples: int) -> tuple[int, int]:
    """(FlopCounterMode's forward FLOPs, the frames the model gave) for one waveform of ``samples``."""
    from torch.utils.flop_counter import FlopCounterMode

    model = hf.build(cfg["model_type"], {**cfg, "attn_implementation": "eager"}).eval()
    counter = FlopCounterMode(display=False)
    with counter:
        out = model(input_values=hf.torch.zeros(1, samples, device="meta"))
    return counter.get_total_flops(), out.last_hidden_state.shape[1]


def test_published_one_second_by_hand_and_counter(hf, read_fixture):
    cfg = read_fixture("wav2vec2-base-960h")
    r = _engine(cfg, 16_000)
    assert (r.frames, list(r.positions)) == (49, _POSITIONS)
    assert r.parts == {
        "feature encoder": _FEATURE_ENCODER,
        "feature projection": _PROJECTION,
        "position convolution": _POSITION_CONV,
        "encoder layers": _LAYERS,
    }
    assert r.flops == _BASE_ONE_SECOND
    assert _counted(hf, cfg, 16_000) == (_BASE_ONE_SECOND, 49)


def test_hubert_fixture_matches_the_counter(hf, read_fixture):
    cfg = read_fixture("higgs-audio-v3-semantic-hubert")
    counted, frames = _counted(hf, cfg, 8_000)  # 0.5 s
    r = _engine(cfg, 8_000)
    assert (r.flops, r.frames) == (counted, frames)


_TINY = dict(
    hidden_size=8,
    num_attention_heads=2,
    num_hidden_layers=2,
    intermediate_size=12,
    conv_dim=[4, 6, 5],
    conv_kernel=[5, 3, 2],
    conv_stride=[3, 2, 2],
    num_conv_pos_embeddings=5,
    num_conv_pos_embedding_groups=2,
    mask_time_prob=0.0,
)


@pytest.mark.parametrize("model_type", ["wav2vec2", "hubert"])
@pytest.mark.parametrize("norm", ["group", "layer"])
@pytest.mark.parametrize("samples", [17, 29, 30, 31, 45, 100])  # R = 17, H = 12: 29 exact, 30 and 31 remainders
def test_tiny_configs_match_the_counter(hf, model_type, norm, samples):
    cfg = dict(_TINY, model_type=model_type, feat_extract_norm=norm)
    counted, frames = _counted(hf, cfg, samples)
    r = _engine(cfg, samples)
    assert (r.flops, r.frames) == (counted, frames)


_convs = st.lists(st.tuples(st.integers(1, 6), st.integers(1, 5), st.integers(1, 3)), min_size=1, max_size=4)


# 20 examples (the task's count): each draw builds and runs a model; tests/test_audio_types.py draws 200 at L frames
@settings(max_examples=20, deadline=None)
@given(
    model_type=st.sampled_from(["wav2vec2", "hubert"]),
    convs=_convs,
    heads=st.integers(1, 3),
    groups=st.integers(1, 3),
    kernel=st.integers(1, 6),
    norm=st.sampled_from(["group", "layer"]),
    bias=st.booleans(),
    stable=st.booleans(),
    frames=st.integers(2, 6),  # GroupNorm refuses one value per channel: 2 frames give the first layer 2+
    extra=st.integers(0, 40),  # samples past the shortest waveform of those frames: remainders at every layer
)
def test_random_waveforms_match_the_counter(
    hf, model_type, convs, heads, groups, kernel, norm, bias, stable, frames, extra
):
    field, hop = 1, 1
    for _, k, s in convs:
        field, hop = field + (k - 1) * hop, hop * s
    samples = field + (frames - 1) * hop + extra
    cfg = dict(
        model_type=model_type,
        hidden_size=2 * heads * groups,
        num_attention_heads=heads,
        num_hidden_layers=1,
        intermediate_size=5,
        conv_dim=[c for c, _, _ in convs],
        conv_kernel=[k for _, k, _ in convs],
        conv_stride=[s for _, _, s in convs],
        conv_bias=bias,
        feat_extract_norm=norm,
        num_conv_pos_embeddings=kernel,
        num_conv_pos_embedding_groups=groups,
        do_stable_layer_norm=stable,
        mask_time_prob=0.0,
    )
    counted, given_frames = _counted(hf, cfg, samples)
    r = _engine(cfg, samples)
    assert (r.flops, r.frames) == (counted, given_frames)


def test_cli_json_and_text(capsys):
    assert (
        main(["flops", str(BASE), "--part", "audio", "--audio-seconds", "1", "--batch", "3", "--format", "json"]) == 0
    )
    r = json.loads(capsys.readouterr().out)
    assert (r["samples"], r["sample_rate"], r["frames"], r["conv_positions"]) == (16_000, 16_000, 49, _POSITIONS)
    assert (r["per_input"], r["total"]) == (_BASE_ONE_SECOND, 3 * _BASE_ONE_SECOND)
    assert any("convolution counts 2 x output elements x in_channels / groups x kernel" in n for n in r["notes"])
    assert main(["flops", str(BASE), "--part", "audio", "--audio-seconds", "2.5"]) == 0
    out = capsys.readouterr().out
    # 40,000 samples: (40000 - 400) // 320 + 1 = 124 frames
    assert "of 2.5 s (40,000 samples at 16,000 Hz)" in out and "(124 frames)" in out
    assert "16,000 Hz: Wav2Vec2FeatureExtractor's default" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--audio-seconds", "0.00001"], "0.16 samples at 16,000 Hz"),
        (["--audio-seconds", "0.02"], "320 samples give no frame"),  # under the receptive field of 400
        (["--audio-seconds", "0"], "--audio-seconds takes a positive decimal number"),
        (["--audio-seconds", "1e3"], "--audio-seconds takes a positive decimal number"),
        (["--audio-seconds", "-1"], "--audio-seconds takes a positive decimal number"),
        (["--audio-seconds", "1234567"], "--audio-seconds takes a positive decimal number"),
        (["--audio-seconds", "1", "--mode", "training"], "counts the forward pass, not --mode training"),
        (["--audio-seconds", "1", "--image-size", "224"], "--image-size applies to --part vision"),
    ],
)
def test_refusals_are_one_line(capsys, argv, message):
    assert main(["flops", str(BASE), "--part", "audio", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_audio_seconds_needs_part_audio(capsys):
    assert main(["flops", str(BASE), "--audio-seconds", "1"]) == 2
    assert "--audio-seconds applies to --part audio" in capsys.readouterr().err
