"""The JSON ``symbols`` map, ``symtrans.parse_closed_form`` and ``symtrans.model(...).sizes``/``.subs``
(tracker issue 13, item 7).

Independent figures: Mixtral-8x7B has 46,702,792,704 parameters and 12,879,925,248 active
per token (``MixtralForCausalLM`` of mistralai/Mixtral-8x7B-v0.1 counted on the meta device,
tests/reference_counts.py); Llama-2-7B 6,738,415,616 (``LlamaForCausalLM``, same table).
"""

from __future__ import annotations

import json

import pytest
import sympy as sp

import symtrans
from symtrans.catalog.presets import PRESETS
from symtrans.cli.main import main
from symtrans.engine.symbols import SYMBOLS

MIXTRAL_TOTAL = 46_702_792_704
MIXTRAL_ACTIVE = 12_879_925_248


def run_json(capsys, *argv) -> dict:
    code = main([*argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def at(expr: sp.Expr, sizes: dict[str, int]) -> sp.Expr:
    """Substitution by the JSON names, through the symbols the JSON ``symbols`` map describes:
    a symbol is its name with its assumptions (integer, positive)."""
    return expr.xreplace({sp.Symbol(k, integer=True, positive=True): sp.Integer(v) for k, v in sizes.items()})


def test_mixtral_closed_form_read_back_gives_the_total(capsys):
    """Must show (issue 13): parse_closed_form of the mixtral-8x7b JSON closed form, with the
    JSON sizes substituted, gives the JSON total, 46,702,792,704 (MixtralForCausalLM)."""
    j = run_json(capsys, "params", "mixtral-8x7b")
    assert j["total"] == MIXTRAL_TOTAL and j["active"] == MIXTRAL_ACTIVE
    total = at(symtrans.parse_closed_form(j["closed_form"]), j["sizes"])
    assert total.is_Integer and total == MIXTRAL_TOTAL
    assert at(symtrans.parse_closed_form(j["active_closed_form"]), j["sizes"]) == MIXTRAL_ACTIVE
    for c in j["components"]:  # every component's closed form too
        assert at(symtrans.parse_closed_form(c["closed_form"]), j["sizes"]) == c["each"], c["name"]
    # The trap the parser avoids: sympify reads N as SymPy's N() and E as Euler's number.
    assert sp.sympify("E") == sp.E and sp.sympify("N") == sp.N
    assert symtrans.parse_closed_form("E") == SYMBOLS["E"] and SYMBOLS["E"].is_integer
    assert symtrans.parse_closed_form("N") == SYMBOLS["N"]


def test_json_symbols_map_names_assumptions_meaning_unit(capsys):
    j = run_json(capsys, "params", "mixtral-8x7b")
    # The names in "N*(3*E*d_ff*d_model + E*d_model + 2*d_model**2 + 2*d_model**2*h_kv/h + 2*d_model)
    # + 2*V*d_model + d_model", and k from the active count's closed form.
    assert set(j["symbols"]) == {"N", "E", "d_ff", "d_model", "h", "h_kv", "V", "k"}
    for entry in j["symbols"].values():
        assert entry["assumptions"] == {"integer": True, "positive": True}
    assert j["symbols"]["N"]["meaning"] == "layers in a stack" and j["symbols"]["N"]["unit"] == "layers"
    assert j["symbols"]["E"]["meaning"] == "experts per mixture-of-experts layer"
    assert j["symbols"]["k"]["unit"] == "experts"


def _closed_forms(j: dict) -> list[str]:
    found = []
    for key, value in j.items():
        if key in ("closed_form", "active_closed_form"):
            found.append(value)
        elif key == "closed_forms":
            found += list(value.values())
        elif key == "components":
            found += [c["closed_form"] for c in value]
    return found


COMMANDS = [
    ("params",),
    ("flops",),
    ("flops", "--mode", "training"),
    ("flops", "--mode", "decode", "--prefill", "64", "--generate", "16"),
    ("memory", "--inference", "--batch", "2", "--seq-len", "128"),
]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_printed_closed_form_reads_back_to_its_value(capsys, name):
    """Each preset's params, flops and memory JSON: every closed form parses, its names are
    exactly the ``symbols`` map's keys, and the total read back at the printed sizes is the
    printed total (a value computed by the engine and printed; the read-back is the check)."""
    for cmd in COMMANDS:
        code = main([cmd[0], name, *cmd[1:], "--format", "json"])
        out, err = capsys.readouterr()
        if code != 0:  # decode of an encoder-only model: refused in one line, nothing to read
            assert cmd[0] == "flops" and "does not generate" in err, err
            continue
        j = json.loads(out)
        forms = _closed_forms(j)
        names = set()
        for text in forms:
            names |= {s.name for s in symtrans.parse_closed_form(text).free_symbols}
        assert names == set(j["symbols"]), (name, cmd)
        if cmd[0] == "params":
            sizes = j["sizes"]
            assert at(symtrans.parse_closed_form(j["closed_form"]), sizes) == j["total"]
        elif cmd[0] == "flops":
            sizes = {**PRESETS[name].spec.values, "B": j["batch"], "L": j["seq_len"]}
            sizes.update({k: j[k] for k in ("L_src", "L_tgt", "L_pre", "T_gen") if k in j})
            if PRESETS[name].spec.family == "encoder-decoder":
                sizes.setdefault("L_src", j["seq_len"])
                sizes.setdefault("L_tgt", j["seq_len"])
            assert at(symtrans.parse_closed_form(j["closed_form"]), sizes) == sp.Rational(j["total"]), cmd
        else:
            sizes = {**PRESETS[name].spec.values, "B": j["batch"], "L": j["seq_len"]}
            if PRESETS[name].spec.family == "encoder-decoder":
                sizes.update(L_src=j["seq_len"], L_tgt=j["seq_len"])
            for key, text in j["closed_forms"].items():
                assert at(symtrans.parse_closed_form(text), sizes) == sp.Rational(j[key]), key  # "p/q" when not whole


def test_symbols_skip_function_names(capsys):
    """Sliding-window FLOPs print Min/Max and memory prints ceiling: functions, not symbols."""
    j = run_json(capsys, "flops", "mistral-7b", "--seq-len", "8192", "--mode", "decode")
    assert "Min(" in j["closed_form"] and "w" in j["symbols"]
    assert not {"Min", "Max", "ceiling", "floor"} & set(j["symbols"])
    m = symtrans.model("mistral-7b")
    assert m.subs(j["closed_form"], B=1, L_pre=j["L_pre"], T_gen=j["T_gen"]) == j["total"]


def test_solve_json_carries_symbols(capsys):
    """Llama's rule d_ff = 256 ceil(floor(8 d_model / 3) / 256) prints floor and ceiling."""
    j = run_json(capsys, "solve", "llama-2-7b", "--for", "d_model", "--params", "6738415616", "--llama-ffn")
    assert j["exact"] == 4096 and "ceiling(floor(" in j["closed_form"]
    expr = symtrans.parse_closed_form(j["closed_form"])
    assert set(j["symbols"]) == {s.name for s in expr.free_symbols} == {"N", "V", "d_model"}
    assert at(expr, j["below"]["sizes"]) == 6_738_415_616


BAD = [
    ("x + 1", "unknown symbol 'x'"),
    ("d_model + pi", "unknown symbol 'pi'"),
    ("exp(d_model)", "function calls other than Min, Max, floor, ceiling are not allowed, not exp"),
    ("__import__('os').system('true')", "not allowed"),
    ("N(2)", "not allowed, not N"),
    ("d_model.__class__", "not Attribute"),
    ("d_model[0]", "not Subscript"),
    ("d_model ** 65", "exponent 65 is larger than 64"),
    ("2 ** 10 ** 10", "larger than 64"),
    ("(d_model + 1) ** 64 ** 2", "larger than 64"),
    ("((d_model + 1) ** 64 + 1) ** 64", "degree 4,096"),
    ("d_model ** d_ff", "an exponent must be a number"),
    ("d_model " + "+ d_model " * 2500, "longer than 20,000 characters"),
    ("Min(d_model, key=1)", "plain arguments"),
    ("floor(d_model, 2)", "wrong number of arguments"),
    ("lambda: 0", "not Lambda"),
    ("d_model < 2", "not Compare"),
    ("d_model /", "cannot parse"),
    ("", "empty"),
    ("d_model / 0", "division by zero"),
]


@pytest.mark.parametrize("text, message", BAD)
def test_bad_closed_forms_are_refused_in_one_line(text, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("*", r"\*")) as e:
        symtrans.parse_closed_form(text)
    assert "\n" not in str(e.value)


def test_non_text_is_refused():
    with pytest.raises(ValueError, match="a closed form is text, not int"):
        symtrans.parse_closed_form(12)


def test_model_sizes_and_subs():
    m = symtrans.model("llama-2-7b")
    assert m.sizes["d_model"] == 4096 and m.sizes["N"] == 32 and m.sizes["V"] == 32000
    m.sizes["N"] = 1  # a copy: the model is unchanged
    assert m.sizes["N"] == 32
    assert m.subs(m.closed_form) == 6_738_415_616 and isinstance(m.subs(m.closed_form), int)
    # Substitution only: N=1 leaves one layer; Llama-2-7B's layer is 202,383,360 parameters
    # (4 d_model^2 attention + 3 d_model d_ff SwiGLU + 2 d_model RMSNorm), embeddings and
    # head 2 x 32000 x 4096, final norm 4096.
    layer = 4 * 4096**2 + 3 * 4096 * 11008 + 2 * 4096
    assert layer == 202_383_360
    assert m.subs(m.closed_form, N=1) == layer + 2 * 32000 * 4096 + 4096
    assert m.subs(m.flops_closed_form(), B=2, L=512) == m.flops(2, 512)
    assert m.subs("d_model / 3") == sp.Rational(4096, 3)  # exact, never a float
    with pytest.raises(ValueError, match="no value for B"):
        m.subs(m.flops_closed_form())
    with pytest.raises(ValueError, match="B must be a positive integer"):
        m.subs(m.flops_closed_form(), B=1.0)
    with pytest.raises(ValueError, match="unknown size 'Q'"):
        m.subs(m.closed_form, Q=1)
    with pytest.raises(ValueError, match="unknown symbol 'x'"):
        m.subs("x")
