"""Published Qwen3.5 / Qwen3.6 configs (issue 21: qwen3_5, qwen3_5_moe and their text models).

Each file (sources in tests/fixtures/configs/SOURCES.md) counts exactly what transformers 5.x
builds from it on the meta device, and every figure is also written out here by hand from the
file's sizes and transformers 5.24's module shapes (models/qwen3_5, models/qwen3_5_moe), so a
change in the installed transformers cannot move both sides at once.
"""

from __future__ import annotations

import json

import pytest
from conftest import require

require("transformers")

from symtrans.catalog.hf_config import spec_from_config  # noqa: E402
from symtrans.engine.architectures import build  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402
from symtrans.engine.vision import vision_params  # noqa: E402


def _vision(d: int, f: int, n: int, out: int, positions: int = 2304, m: int = 2, c: int = 3, t: int = 2, p: int = 16):
    """Qwen3_5VisionModel written out: biased Conv3d (c t p^2 d + d), position table (positions x d),
    n blocks (two LayerNorms 4d, fused qkv 3d^2 + 3d, proj d^2 + d, fc1 d f + f, fc2 f d + d), merger
    (LayerNorm 2d, fc1 (m^2 d)^2 + m^2 d, fc2 m^2 d out + out)."""
    block = 4 * d + 3 * d * d + 3 * d + d * d + d + d * f + f + f * d + d
    merger = 2 * d + (m * m * d) ** 2 + m * m * d + m * m * d * out + out
    return c * t * p * p * d + d + positions * d + n * block + merger


def _attention(d: int, h: int, h_kv: int, d_k: int) -> int:
    """Qwen3_5Attention: q_proj doubled for the output gate, k, v, o, RMSNorms q_norm, k_norm of d_k."""
    return d * 2 * h * d_k + 2 * d * h_kv * d_k + h * d_k * d + 2 * d_k


def _deltanet(d: int, hk: int, hv: int, dk: int = 128, dv: int = 128, conv: int = 4) -> int:
    """Qwen3_5GatedDeltaNet: in_proj_qkv d x (2 hk dk + hv dv), in_proj_z d x hv dv, in_proj_b and
    in_proj_a d x hv, depthwise conv (2 hk dk + hv dv) x conv (no bias), dt_bias and A_log hv each,
    the gated RMSNorm dv, out_proj hv dv x d."""
    qkv = 2 * hk * dk + hv * dv
    return d * qkv + d * hv * dv + 2 * d * hv + qkv * conv + 2 * hv + dv + hv * dv * d


# Qwen/Qwen3.5-0.8B: V 248,320 tied, d 1,024, 24 layers (every 4th full attention: 6), heads 8/2 of 256,
# linear heads 16/16, SwiGLU MLP 3,584; tower 12 x 768 wide, MLP 3,072, out 1,024.
QWEN3_5_08B_TEXT = (
    248_320 * 1_024
    + 6 * _attention(1_024, 8, 2, 256)
    + 18 * _deltanet(1_024, 16, 16)
    + 24 * (3 * 1_024 * 3_584 + 2 * 1_024)
    + 1_024
)
QWEN3_5_08B_VISION = _vision(768, 3_072, 12, 1_024)
# Qwen3.6-35B-A3B (qwen3_5_moe): V 248,320 untied, d 2,048, 40 layers (10 full attention), heads 16/2 of
# 256, linear heads 16/32; every layer a MoE: router 256 x d, 256 SwiGLU experts of 512, a shared
# SwiGLU expert of 512 and its gate d x 1; tower 27 x 1,152 wide, MLP 4,304, out 2,048.
QWEN3_6_MOE_LAYER = 256 * 2_048 + 256 * 3 * 2_048 * 512 + 3 * 2_048 * 512 + 2_048
QWEN3_6_35B_TEXT = (
    2 * 248_320 * 2_048
    + 10 * _attention(2_048, 16, 2, 256)
    + 30 * _deltanet(2_048, 16, 32)
    + 40 * (QWEN3_6_MOE_LAYER + 2 * 2_048)
    + 2_048
)
QWEN3_6_35B_VISION = _vision(1_152, 4_304, 27, 2_048)

PUBLISHED = [
    # (fixture, text-only figure, vision tower + merger): the whole class is their sum
    ("qwen3.5-0.8b", QWEN3_5_08B_TEXT, QWEN3_5_08B_VISION),
    ("qwen3.6-35b-a3b", QWEN3_6_35B_TEXT, QWEN3_6_35B_VISION),
]


def test_the_written_out_figures():
    # the model cards' sizes: "0.8B" (text 752,393,024 + tower 100,592,896) and "35B" total, "A3B" active
    assert (QWEN3_5_08B_TEXT, QWEN3_5_08B_VISION) == (752_393_024, 100_592_896)
    assert (QWEN3_6_35B_TEXT, QWEN3_6_35B_VISION) == (34_660_610_688, 446_571_248)


@pytest.mark.parametrize(("name", "text", "vision"), PUBLISHED, ids=[n for n, _, _ in PUBLISHED])
def test_published_configs(hf, read_fixture, name, text, vision):
    cfg = read_fixture(name)
    model = hf.build(cfg["model_type"], cfg)
    assert hf.count(model) == text + vision
    assert hf.count(model.model.visual) == vision
    spec, notes = spec_from_config(cfg, name)
    tree = build(spec)
    assert exact(tree.params, spec.values) == text + vision
    assert exact(vision_params(tree), spec.values) == vision
    assert not [n for n in notes if "unknown" in n], notes  # every key of the published file is known


@pytest.mark.parametrize(("name", "text", "vision"), PUBLISHED, ids=[n for n, _, _ in PUBLISHED])
def test_published_text_models_alone(hf, read_fixture, name, text, vision):
    """The text_config on its own is a supported type (qwen3_5_text, qwen3_5_moe_text): the
    *ForCausalLM class transformers builds from it counts the text-only figure (the 0.8B ties its
    head in text_config as the wrapper does; the 35B unties both)."""
    cfg = read_fixture(name)["text_config"]
    assert hf.count(hf.build(cfg["model_type"], cfg)) == text
    spec, _ = spec_from_config(cfg, name)
    assert exact(build(spec).params, spec.values) == text


def test_qwen3_6_active_parameters(read_fixture):
    # 8 of 256 experts a token: 40 x 248 idle experts of 3 x 2,048 x 512 leave the text model
    # 3,454,988,928 ("A3B"); the vision tower is dense
    spec, _ = spec_from_config(read_fixture("qwen3.6-35b-a3b"), "x")
    idle = 40 * 248 * 3 * 2_048 * 512
    assert QWEN3_6_35B_TEXT - idle == 3_454_988_928
    assert exact(build(spec).active_params, spec.values) == QWEN3_6_35B_TEXT + QWEN3_6_35B_VISION - idle


def test_cli_part_text_vision_all(capsys, config_dir):
    from symtrans.cli.main import main

    path = str(config_dir / "qwen3.5-0.8b.json")
    assert main(["params", path, "--format", "json"]) == 0
    parts = json.loads(capsys.readouterr().out)["parts"]
    assert parts == {"all": 852_985_920, "text": QWEN3_5_08B_TEXT, "vision": QWEN3_5_08B_VISION}
    for part, figure in (("text", "752,393,024"), ("vision", "100,592,896"), ("all", "852,985,920")):
        assert main(["params", path, "--part", part]) == 0
        assert figure in capsys.readouterr().out.splitlines()[0]
