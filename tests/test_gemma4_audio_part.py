"""``symtrans params --part audio``: Gemma 4's audio tower and embed_audio from the CLI, and the
one-line refusals where there is no audio tower or no audio FLOPs model.

The config: the E2B text model (partial, tests/fixtures/gemma4/gemma-4-e2b-partial.json), the E2B
vision tower of tests/test_gemma4.py and the E4B's published audio_config
(tests/fixtures/gemma4/gemma-4-e4b-audio-config.json).  Oracles, neither symtrans's output:

* arithmetic written out from transformers 5.24's modeling_gemma4.py (tests/test_gemma4.py,
  ``_audio_by_hand``): the conformer 304,824,608 plus embed_audio 1536 x 1536, 307,183,904;
* transformers' Gemma4ForConditionalGeneration on the meta device: the parameters of
  ``model.audio_tower`` and ``model.embed_audio``.
"""

from __future__ import annotations

import json

import pytest
import sympy as sp
from conftest import FIXTURES, require

torch = require("torch")
transformers = require("transformers")

from symtrans.cli.main import main  # noqa: E402

GEMMA4 = FIXTURES / "gemma4"
E2B_VISION = {  # tests/test_gemma4.py: the E2B / E4B tower's official sizes
    "model_type": "gemma4_vision",
    "hidden_size": 768,
    "head_dim": 64,
    "num_attention_heads": 12,
    "num_key_value_heads": 12,
    "standardize": False,
    "use_clipped_linears": True,
}

# By hand, Gemma4AudioModel at d = 1024, 12 layers, 8 heads, kernel 5, output 1536, channels 128 and
# 32: subsampling 10 c1 + 9 c1 c2 + c2 + (c1 // 4) c2 d; a layer 24 d^2 + K d + d / h + 9 d;
# output_proj d * 1536 + 1536; then embed_audio 1536 -> d_model = 1536, bias-free.
D = 1024
TOWER = 10 * 128 + 9 * 128 * 32 + 32 + 32 * 32 * D + 12 * (24 * D * D + 5 * D + D // 8 + 9 * D) + D * 1536 + 1536
AUDIO = TOWER + 1536 * 1536


def _config() -> dict:
    text = json.loads((GEMMA4 / "gemma-4-e2b-partial.json").read_text())["text_config"]
    audio = json.loads((GEMMA4 / "gemma-4-e4b-audio-config.json").read_text())["audio_config"]
    return dict(model_type="gemma4", text_config=text, vision_config=E2B_VISION, audio_config=audio)


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    p = tmp_path_factory.mktemp("gemma4") / "gemma-4-e2b-audio.json"
    p.write_text(json.dumps(_config()))
    return p


@pytest.fixture(scope="module")
def meta_audio() -> int:
    transformers.logging.set_verbosity_error()
    cfg = _config()
    config = transformers.Gemma4Config(**{k: v for k, v in cfg.items() if k != "model_type"})
    with torch.device("meta"):
        model = transformers.Gemma4ForConditionalGeneration(config)
    return sum(p.numel() for p in model.model.audio_tower.parameters()) + sum(
        p.numel() for p in model.model.embed_audio.parameters()
    )


def test_the_figure_by_hand_and_on_meta(meta_audio):
    assert TOWER == 304_824_608
    assert AUDIO == 307_183_904 == meta_audio


def test_params_part_audio_json(capsys, path, meta_audio):
    assert main(["params", str(path), "--part", "audio", "--format", "json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert (r["part"], r["total"], r["parts"]["audio"]) == ("audio", meta_audio, meta_audio)
    cf = sp.parse_expr(r["closed_form"], local_dict={k: sp.Symbol(k) for k in r["sizes"]})  # symtrans's own text
    assert int(cf.subs({sp.Symbol(k): v for k, v in r["sizes"].items()})) == AUDIO
    assert sum(c["total"] for c in r["components"] if c["depth"] == 0) == AUDIO
    assert not {"d_vis", "N_vis", "V", "N"} & {str(s) for s in cf.free_symbols}  # no text or vision size


def test_params_part_audio_text(capsys, path):
    assert main(["params", str(path), "--part", "audio"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("gemma-4-e2b-audio: 307,183,904 parameters of the audio tower and embed_audio")
    assert "audio tower and embed_audio: 307,183,904" in out.splitlines()[1]


@pytest.mark.parametrize(
    "config, words",
    [
        (GEMMA4 / "gemma-4-31b-it.json", "gemma-4-31b-it has none"),  # vision tower, no audio_config
        (FIXTURES / "configs" / "llama-2-7b.json", "llama-2-7b has none"),
        (FIXTURES / "configs" / "wav2vec2-base-960h.json", "use --part all"),
    ],
)
def test_no_audio_tower_refuses_part_audio_in_one_line(capsys, config, words):
    assert main(["params", str(config), "--part", "audio"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "usage:" not in err
    assert err.startswith("symtrans params: --part audio") and words in err


@pytest.mark.parametrize(
    ("config", "seconds", "words"),
    [
        ("path", ["--audio-seconds", "1"], "not modelled"),  # Gemma 4's audio tower: wav2vec2 / HuBERT only
        (FIXTURES / "configs" / "llama-2-7b.json", ["--audio-seconds", "1"], "not modelled"),
        (FIXTURES / "configs" / "wav2vec2-base-960h.json", [], "needs --audio-seconds"),  # tests/test_audio_flops.py
    ],
)
def test_flops_part_audio_is_refused_in_one_line(capsys, path, config, seconds, words):
    assert main(["flops", str(path if config == "path" else config), "--part", "audio", *seconds]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "usage:" not in err
    assert err.startswith("symtrans flops: --part audio") and words in err


def test_pipeline_names_the_audio_tower_as_audio():
    """vLLM pipeline refusals name a node's part: the audio tower's nodes are the audio tower,
    the vision tower's the vision encoder (never the audio tower called a vision encoder)."""
    from symtrans.accounting.vllm_pipeline import _part
    from symtrans.catalog.hf_config import spec_from_config
    from symtrans.engine.architectures import build
    from symtrans.engine.roles import Block

    spec, _ = spec_from_config(_config(), "test")
    nodes = list(build(spec).nodes())
    audio = [n for n in nodes if Block.AUDIO_TOWER in n.blocks]
    vision = [n for n in nodes if Block.VISION_TOWER in n.blocks]
    assert audio and vision
    assert {_part(n) for n in audio} == {"the audio tower and its projection into the language model (embed_audio)"}
    assert {_part(n) for n in vision} == {"the vision encoder and its projector (a vision-language model)"}
