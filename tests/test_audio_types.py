"""Issue 21's audio encoders (catalog/models/audio.py): wav2vec 2.0 and HuBERT read from published
configs (tests/fixtures/configs, sources in SOURCES.md) count exactly what transformers 5.x's
Wav2Vec2Model / HubertModel build from the same file on the meta device; their forward FLOPs equal
FlopCounterMode's on the eager forward of the shortest waveform of L frames (published configs and
hypothesis draws); memory is refused in one line; the hypothesis draws, the key audit and the re-save test are in tests/test_model_types.py
and tests/test_resave.py, inspect's in tests/test_inspect_every_type.py.

Oracles: ``sum(p.numel())`` of the class built on the meta device, FlopCounterMode (torch 2.13) and
the model's own output length, and the arithmetic written out
below from the modules of transformers 5.24 (models/wav2vec2/modeling_wav2vec2.py).
"""

from __future__ import annotations

import pytest
from conftest import CONFIG_DIR, require
from hypothesis import given
from hypothesis import strategies as st

require("transformers")
from hf_reference import reference_total  # noqa: E402

from symtrans.catalog.hf_config import spec_from_config  # noqa: E402
from symtrans.cli.main import main  # noqa: E402
from symtrans.engine.architectures import build  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402

# wav2vec2-base by hand (d = 768, d_ff = 3072, 12 layers, 7 bias-free convolutions of 512 channels):
_FEATURE_ENCODER = 1 * 512 * 10 + 2 * 512 + 4 * 512 * 512 * 3 + 2 * 512 * 512 * 2  # GroupNorm after conv 0
_PROJECTION = 2 * 512 + 512 * 768 + 768  # LayerNorm of 512, then 512 -> 768 with bias
_POSITION_CONV = 768 * (768 // 16) * 128 + 128 + 768  # v (16 groups, kernel 128), weight-norm g (1, 1, 128), bias
_LAYER = 4 * (768 * 768 + 768) + 2 * 768 + (768 * 3072 + 3072) + (3072 * 768 + 768) + 2 * 768
_BASE = _FEATURE_ENCODER + _PROJECTION + _POSITION_CONV + 2 * 768 + 12 * _LAYER  # + encoder.layer_norm

PUBLISHED = [
    # facebook/wav2vec2-base-960h: masked_spec_embed (768) counted, mask_time_prob 0.05
    ("wav2vec2-base-960h", _BASE + 768),
    # HuBERT-base as Higgs Audio v3's semantic model: mask_time_prob 0, no masked_spec_embed
    ("higgs-audio-v3-semantic-hubert", _BASE),
]


def test_the_arithmetic():
    assert _BASE + 768 == 94_371_712  # Baevski et al. 2020 §4.2: BASE, "95m parameters"


@pytest.mark.parametrize(("name", "total"), PUBLISHED, ids=[n for n, _ in PUBLISHED])
def test_published_configs_by_hand(hf, read_fixture, name, total):
    """The meta-device match of these files is in tests/test_encoder_published.py; here the
    count against the arithmetic above, the feature encoder's sum and the frames per second."""
    cfg = read_fixture(name)
    assert reference_total(hf, cfg["model_type"], cfg, hf.build(cfg["model_type"], cfg)) == total
    spec, notes = spec_from_config(cfg, name)
    assert exact(build(spec).params, spec.values) == total
    assert spec.values["P_fe"] == _FEATURE_ENCODER
    # 16 kHz audio: 5 x 2^6 = 320 samples per frame, 50 frames per second
    assert any("320 samples per frame: 50 frames per second of 16 kHz audio" in n for n in notes), notes


# --- FLOPs: FlopCounterMode (torch 2.13) on the eager forward of the class on the meta device, fed the
# shortest waveform of L frames.  The waveform's length is the test's input, from the conv lists:
# receptive field R = 1 + sum (k_i - 1) s_1...s_(i-1), hop H = s_1...s_n; the model's own output
# length checks that it gives L frames.


def _field_and_hop(cfg: dict) -> tuple[int, int]:
    field, hop = 1, 1
    for k, s in zip(cfg["conv_kernel"], cfg["conv_stride"]):
        field, hop = field + (k - 1) * hop, hop * s
    return field, hop


def _counted_forward(hf, model_type: str, cfg: dict, batch: int, frames: int) -> tuple[int, int]:
    """(FlopCounterMode's forward FLOPs, the frames the model gave) for the shortest waveform of
    ``frames`` frames."""
    from torch.utils.flop_counter import FlopCounterMode

    field, hop = _field_and_hop(cfg)
    model = hf.build(model_type, {**cfg, "attn_implementation": "eager"}).eval()
    counter = FlopCounterMode(display=False)
    with counter:
        out = model(input_values=hf.torch.zeros(batch, field + (frames - 1) * hop, device="meta"))
    return counter.get_total_flops(), out.last_hidden_state.shape[1]


def _engine_forward(cfg: dict, batch: int, frames: int, mode: str = "forward") -> int:
    from symtrans.accounting.flops import evaluate, flops_expr

    spec, _ = spec_from_config(cfg, "x")
    return int(evaluate(flops_expr(spec, mode), {**spec.values, "B": batch, "L": frames}))


def test_base_receptive_field_and_hop():
    # Baevski et al. 2020 §2 / §4.2: the feature encoder's receptive field is 400 samples (25 ms) and
    # its stride 20 ms (320 samples at 16 kHz); transformers' own output-length rule agrees on 1 s.
    cfg = {"conv_kernel": [10, 3, 3, 3, 3, 2, 2], "conv_stride": [5, 2, 2, 2, 2, 2, 2]}
    assert _field_and_hop(cfg) == (400, 320)
    assert (16_000 - 400) // 320 + 1 == 49


@pytest.mark.parametrize(("name", "frames"), [("wav2vec2-base-960h", 49), ("higgs-audio-v3-semantic-hubert", 1)])
def test_published_flops_match_the_counter(hf, read_fixture, name, frames):
    """wav2vec2-base-960h at 49 frames (15,760 samples, 0.985 s): FlopCounterMode 13,750,429,696."""
    cfg = read_fixture(name)
    counted, given = _counted_forward(hf, cfg["model_type"], cfg, 1, frames)
    assert given == frames
    if name == "wav2vec2-base-960h":
        assert counted == 13_750_429_696  # FlopCounterMode, torch 2.13.0 / transformers 5.24, meta device
    assert _engine_forward(cfg, 1, frames) == counted


def test_notes_state_the_samples(read_fixture):
    _, notes = spec_from_config(read_fixture("wav2vec2-base-960h"), "x")
    assert any("L = floor((T - 400) / 320) + 1 frames" in n and "T = 400 + 320(L - 1) samples" in n for n in notes)


_convs = st.lists(st.tuples(st.integers(1, 6), st.integers(1, 5), st.integers(1, 3)), min_size=1, max_size=4)


@given(
    model_type=st.sampled_from(["wav2vec2", "hubert"]),
    convs=_convs,
    heads=st.integers(1, 3),
    head=st.integers(1, 4),
    groups=st.integers(1, 3),
    kernel=st.integers(1, 6),
    layers=st.integers(1, 2),
    d_ff=st.integers(1, 12),
    norm=st.sampled_from(["group", "layer"]),
    stable=st.booleans(),
    bias=st.booleans(),
    batch_norm=st.booleans(),
    frames=st.integers(2, 9),  # GroupNorm refuses one value per channel: 2 frames give the first layer 2+
    batch=st.integers(1, 2),
)
def test_random_forward_flops_match_the_counter(
    hf, model_type, convs, heads, head, groups, kernel, layers, d_ff, norm, stable, bias, batch_norm, frames, batch
):
    """Random conv stacks (kernels and strides 1..5 and 1..3), even and odd position kernels, grouped
    position convolutions, both norm placements and HuBERT's BatchNorm: the eager forward's
    FlopCounterMode total equals the engine's at B and L frames."""
    d = heads * head * groups
    cfg = dict(
        model_type=model_type,
        hidden_size=d,
        num_attention_heads=heads,
        num_hidden_layers=layers,
        intermediate_size=d_ff,
        conv_dim=[c for c, _, _ in convs],
        conv_kernel=[k for _, k, _ in convs],
        conv_stride=[s for _, _, s in convs],
        conv_bias=bias,
        feat_extract_norm=norm,
        num_conv_pos_embeddings=kernel,
        num_conv_pos_embedding_groups=groups,
        do_stable_layer_norm=stable,
        mask_time_prob=0.0,
        **({"conv_pos_batch_norm": batch_norm} if model_type == "hubert" else {}),
    )
    counted, given = _counted_forward(hf, model_type, cfg, batch, frames)
    assert given == frames
    assert _engine_forward(cfg, batch, frames) == counted


def test_training_is_three_forwards_as_the_counter_sees_it(hf):
    """Forward + backward in training mode (the feature encoder asks for its input's gradient then,
    so every convolution's backward is 2 x its forward) against FlopCounterMode, with one position
    group: torch 2.13's counter counts a grouped convolution's weight gradient G_pos times (with 4
    groups it saw 3 x the position convolution's forward more than 3 x forward), so G_pos = 1 here."""
    from torch.utils.flop_counter import FlopCounterMode

    cfg = dict(
        model_type="wav2vec2",
        hidden_size=8,
        num_attention_heads=2,
        num_hidden_layers=1,
        intermediate_size=6,
        conv_dim=[4, 3, 5],
        conv_kernel=[4, 3, 2],
        conv_stride=[3, 2, 2],
        num_conv_pos_embeddings=4,
        num_conv_pos_embedding_groups=1,
        mask_time_prob=0.0,
        layerdrop=0.0,  # in training mode each layer is otherwise skipped with probability 0.1 (LayerDrop)
    )
    field, hop = _field_and_hop(cfg)
    model = hf.build("wav2vec2", {**cfg, "attn_implementation": "eager"}).train()
    counter = FlopCounterMode(display=False)
    with counter:
        model(input_values=hf.torch.zeros(2, field + 6 * hop, device="meta")).last_hidden_state.sum().backward()
    assert _engine_forward(cfg, 2, 7, "training") == counter.get_total_flops()


def test_memory_is_refused_in_one_line(capsys):
    path = str(CONFIG_DIR / "wav2vec2-base-960h.json")
    assert main(["params", path]) == 0
    assert "94,371,712" in capsys.readouterr().out
    assert main(["flops", path, "--seq-len", "49"]) == 0
    assert "13,750,429,696" in capsys.readouterr().out
    assert main(["memory", path]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "not modelled" in err and "parameters and FLOPs are exact" in err


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (dict(add_adapter=True), "add_adapter"),
        (dict(do_stable_layer_norm=True, adapter_attn_dim=4), "adapter_attn_dim"),
        (dict(conv_kernel=[10, 3]), "conv_kernel"),
        (dict(num_feat_extract_layers=6), "num_feat_extract_layers"),
        (dict(feat_extract_norm="batch"), "feat_extract_norm"),
        (dict(num_conv_pos_embedding_groups=5), "num_conv_pos_embedding_groups"),
        (dict(mask_time_prob=True), "mask_time_prob"),
    ],
)
def test_refusals_name_the_field(read_fixture, change, field):
    """What the count does not model (adapters) or transformers refuses is refused in one line."""
    from symtrans.catalog.hf_config import ConfigError

    with pytest.raises(ConfigError) as e:
        spec_from_config({**read_fixture("wav2vec2-base-960h"), **change}, "x")
    assert field in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("name", "role", "buffer"),
    [
        # the names older checkpoints (torch.nn.utils.weight_norm, Wav2Vec2ForCTC) store, beside the
        # parametrization names 5.x saves (tests/test_inspect_every_type.py)
        ("wav2vec2.encoder.pos_conv_embed.conv.weight_g", "conv", False),
        ("wav2vec2.encoder.pos_conv_embed.conv.weight_v", "conv", False),
        ("hubert.encoder.pos_conv_embed.batch_norm.running_var", None, True),
        ("hubert.feature_extractor.conv_layers.6.conv.weight", "audio_conv", False),
        ("wav2vec2.masked_spec_embed", "mask_embedding", False),
    ],
)
def test_checkpoint_names_of_older_files(name, role, buffer):
    from symtrans.catalog.checkpoint.names import FAMILIES, match

    m = match(name, FAMILIES["wav2vec2"])
    assert m.rule is not None, name
    assert (m.rule.role.value if m.rule.role else None) == role and m.rule.buffer == buffer


def test_walk_sums_to_the_counter(capsys):
    """The shape walk of wav2vec2-base-960h at 49 frames sums to FlopCounterMode's 13,750,429,696
    (test_published_flops_match_the_counter), the position convolution at 50 outputs (kernel 128)."""
    import json

    assert main(["walk", str(CONFIG_DIR / "wav2vec2-base-960h.json"), "--seq-len", "49", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["total_flops"] == out["engine_flops"] == 13_750_429_696
    conv = [s for s in out["steps"] if s["op"].startswith("position conv")]
    assert conv[0]["at"]["inputs"][0] == [1, 16, 50, 128 * 768 // 16]
