"""Closed forms of the generic transformers path read back with their JSON ``symbols`` map.

A generic closed form uses names outside symtrans's legend (config keys such as
``num_shared_experts``, repeat counts such as ``N_layers_mlp_2``); the JSON lists them in
its ``symbols`` map, and ``symtrans.parse_closed_form(text, symbols=j["symbols"])`` admits
exactly those.  Oracle for the total: transformers' own count on the meta device
(``tests/test_generic.py``'s ``oracle_count``: the class of issue 22's rule, written out
there).  The read-back expression, evaluated at the JSON's ``sizes``, must equal it.
"""

from __future__ import annotations

import json

import pytest
import sympy as sp
from conftest import require

torch = require("torch")
transformers = require("transformers")

from test_generic import ALL_TYPES, oracle_count  # noqa: E402
from transformers.models.auto.configuration_auto import CONFIG_MAPPING  # noqa: E402

import symtrans  # noqa: E402
from symtrans.base.errors import InputError  # noqa: E402

# afmoe: the new-user trial's type (num_shared_experts, N_layers_mlp_2); the others come
# from test_generic.py's NAMED list (dense, MoE, hybrid, seq2seq, encoder, vision-text).
TYPES = ["afmoe", "llama", "qwen2_moe", "jamba", "t5", "modernbert", "clip"]


def params_json(mt: str, tmp_path, capsys) -> dict:
    from symtrans.cli.main import main

    path = tmp_path / f"gen_{mt}.json"
    path.write_text(json.dumps(CONFIG_MAPPING[mt]().to_dict()))
    code = main(["params", str(path), "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def at(expr: sp.Expr, sizes: dict) -> sp.Expr:
    # Without a model: the symbols the JSON map describes (positive integers), by name.
    return expr.xreplace({sp.Symbol(k, integer=True, positive=True): v for k, v in sizes.items()})


@pytest.mark.parametrize("mt", [t for t in TYPES if t in ALL_TYPES])
def test_generic_closed_form_reads_back_to_the_meta_count(mt, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    expected = oracle_count(mt)
    assert expected is not None, f"{mt}'s default config no longer builds in transformers"
    j = params_json(mt, tmp_path, capsys)
    assert j["total"] == expected
    expr = symtrans.parse_closed_form(j["closed_form"], symbols=j["symbols"])
    assert {s.name for s in expr.free_symbols} <= set(j["symbols"]) <= set(j["sizes"])
    assert at(expr, j["sizes"]) == expected
    for c in j["components"]:  # every component's form reads back to its own count
        assert at(symtrans.parse_closed_form(c["closed_form"], symbols=j["symbols"]), j["sizes"]) == c["each"]


def test_afmoe_needs_the_map_and_the_map_admits_nothing_else(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    j = params_json("afmoe", tmp_path, capsys)
    assert "num_shared_experts" in j["symbols"]  # the name the trial met
    with pytest.raises(InputError, match="unknown symbol '(num_shared_experts|N_layers_mlp_2)'") as e:
        symtrans.parse_closed_form(j["closed_form"])  # without the map: the legend only
    assert "\n" not in str(e.value)
    with pytest.raises(InputError, match="unknown symbol 'not_in_the_map'") as e:
        symtrans.parse_closed_form(j["closed_form"] + " + not_in_the_map", symbols=j["symbols"])
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(
    "symbols, words",
    [
        ({"Min": {}}, "functions"),  # would shadow the call Min(...)
        ({"__class__": {}}, "plain identifier"),
        ({"lambda": {}}, "plain identifier"),
        ({"a b": {}}, "plain identifier"),
        ({"x" * 101: {}}, "plain identifier"),
        ({"q_x": {"assumptions": {"commutative": False}}}, "assumptions"),
        ({"q_x": {"assumptions": {"integer": "yes"}}}, "assumptions"),
        ({"d_model": {"assumptions": {"positive": False}}}, "legend"),
        ({"q_x": sp.Symbol("other")}, "not 'q_x'"),
        ({f"n{i}": {} for i in range(1001)}, "limit"),
        ("num_shared_experts", "not a string"),
        (42, "int"),
    ],
)
def test_a_malformed_symbols_map_is_refused_in_one_line(symbols, words):
    with pytest.raises(InputError, match=words) as e:
        symtrans.parse_closed_form("d_model", symbols=symbols)
    assert "\n" not in str(e.value) and len(str(e.value)) < 300


def test_the_map_keeps_the_legend_and_the_parser_limits():
    from symtrans.engine.symbols import SYMBOLS

    # Arithmetic written out: q_x*d_model at q_x = 3, d_model = 7 is 21; d_model stays the legend's.
    assert "q_x" not in SYMBOLS
    expr = symtrans.parse_closed_form("q_x*d_model", symbols=["q_x"])
    assert expr.xreplace({sp.Symbol("q_x", integer=True, positive=True): 3, SYMBOLS["d_model"]: 7}) == 21
    # The legend's own name through the map is the legend's Symbol (E: experts, not Euler's number).
    assert (
        symtrans.parse_closed_form("E", symbols={"E": {"assumptions": {"integer": True, "positive": True}}})
        == SYMBOLS["E"]
    )
    with pytest.raises(InputError, match="exponent"):
        symtrans.parse_closed_form("q_x**65", symbols=["q_x"])
    with pytest.raises(InputError, match="function calls"):
        symtrans.parse_closed_form("q_x(1)", symbols=["q_x"])
    with pytest.raises(InputError, match="20,000"):
        symtrans.parse_closed_form("q_x+" * 10_001 + "q_x", symbols=["q_x"])
