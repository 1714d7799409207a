"""Issue 21's audio encoders (catalog/models/audio.py): wav2vec 2.0 and HuBERT read from published
configs (tests/fixtures/configs, sources in SOURCES.md) count exactly what transformers 5.x's
Wav2Vec2Model / HubertModel build from the same file on the meta device; their FLOPs are refused in
one line; the hypothesis draws, the key audit and the re-save test are in tests/test_model_types.py
and tests/test_resave.py, inspect's in tests/test_inspect_every_type.py.

Oracles: ``sum(p.numel())`` of the class built on the meta device, and the arithmetic written out
below from the modules of transformers 5.24 (models/wav2vec2/modeling_wav2vec2.py).
"""

from __future__ import annotations

import pytest
from conftest import CONFIG_DIR, require

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


def test_flops_are_refused_in_one_line(capsys):
    path = str(CONFIG_DIR / "wav2vec2-base-960h.json")
    assert main(["params", path]) == 0
    assert "94,371,712" in capsys.readouterr().out
    assert main(["flops", path]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "not modelled" in err and "parameters are exact" in err


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
