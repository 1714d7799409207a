"""``symtrans params --part text|vision`` (JSON and text): ``total``, ``closed_form`` and
``components`` are those of the chosen part of a vision-language model, not the whole class.

Oracle: transformers 5.x's LlavaForConditionalGeneration built on the meta device from
llava-1.5-7b's published config.json (tests/fixtures/configs): the text part is
``model.model.language_model`` + ``lm_head`` (hf_reference.language_model_count), the vision
part ``model.model.vision_tower`` + ``model.model.multi_modal_projector`` counted directly.
"""

from __future__ import annotations

import json

import pytest
import sympy as sp
from conftest import FIXTURES, require

require("transformers")
from hf_reference import language_model_count  # noqa: E402

from symtrans.cli.main import main  # noqa: E402

PATH = FIXTURES / "configs" / "llava-1.5-7b.json"


def _json(capsys, *argv: str) -> dict:
    assert main(["params", str(PATH), "--format", "json", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def _at_sizes(closed_form: str, sizes: dict) -> int:
    """The closed form (symtrans's own output, not user text) evaluated at the sizes."""
    e = sp.parse_expr(closed_form, local_dict={k: sp.Symbol(k) for k in sizes})
    return int(e.subs({sp.Symbol(k): v for k, v in sizes.items()}))


@pytest.fixture(scope="module")
def oracle(hf) -> dict:
    cfg = json.loads(PATH.read_text(encoding="utf-8"))
    model = hf.build("llava", {k: v for k, v in cfg.items() if k != "model_type"})
    vision = hf.count(model.model.vision_tower) + hf.count(model.model.multi_modal_projector)
    return {"all": hf.count(model), "text": language_model_count(hf, model), "vision": vision}


@pytest.mark.parametrize("part", ["text", "vision", "all"])
def test_part_total_closed_form_and_components_are_the_parts(capsys, oracle, part):
    r = _json(capsys, "--part", part)
    assert (r["part"], r["total"]) == (part, oracle[part])
    assert r["parts"] == oracle  # the side map stays the three figures
    assert _at_sizes(r["closed_form"], r["sizes"]) == oracle[part]
    top = [c for c in r["components"] if c["depth"] == 0]
    assert sum(c["total"] for c in top) == oracle[part]
    vision_symbols = {"C_vis", "p_vis", "d_vis", "N_vis"}
    named = set(r["closed_form"].replace("*", " ").replace("+", " ").split())
    assert (part == "text") == (not named & vision_symbols)


def test_published_figures(oracle):
    # 7,063,427,072 = 6,738,939,904 + 324,487,168 (the figures, test_vision_towers.py)
    assert oracle == {"all": 7_063_427_072, "text": 6_738_939_904, "vision": 324_487_168}


def test_part_text_headline_closed_form_and_report_refusal(capsys, oracle):
    assert main(["params", str(PATH), "--part", "vision"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("llava-1.5-7b: 324,487,168 parameters of the vision tower and projector")
    components = out.split("  components:")[1]
    assert "LM head" not in components and "decoder layer" not in components
    assert main(["params", str(PATH), "--part", "text", "--format", "markdown"]) == 2
    assert "--part text gives --format text or json" in capsys.readouterr().err


def test_flops_says_the_vision_tower_is_zero_because_there_are_no_images(capsys):
    assert main(["flops", str(PATH)]) == 0
    out = capsys.readouterr().out
    assert "note: the workload has no images, so the vision tower's FLOPs are 0" in out
    assert main(["flops", str(FIXTURES / "configs" / "llava-1.5-7b.json"), "--format", "json"]) == 0
    assert "no images" in json.loads(capsys.readouterr().out)["vision_note"]
