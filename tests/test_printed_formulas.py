"""Every printed formula evaluates to the value printed beside it (issue 25.1).

``symtrans diff llama-2-7b mistral-7b`` printed ``weight matrices 503,316,480
N*(-2*d_model**2 + 2*d_model**2*h_kv/h)``: that formula is the change at *equal* sizes
and evaluates to -805,306,368 at Mistral's sizes; the other 1,308,622,848 is d_ff
11,008 -> 14,336.  The oracle here is the printed text itself: each formula is parsed
back from the output and evaluated at the printed sizes (the side's preset sizes,
which ``symtrans show`` and the report's symbol table print), with no call to the code
that made the row.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from symtrans.catalog.presets import PRESETS
from symtrans.catalog.resolve import resolve
from symtrans.engine.evaluate import exact_rational
from symtrans.engine.parse import parse_closed_form

# At most 60 examples each, also in CI (a report of a big preset takes ~0.3 s).
FEW = settings(max_examples=min(settings().max_examples, 60))
NAMES = sorted(n for n, p in PRESETS.items() if "L" in p.spec.values)

_NUM = r"(-?[\d,]+(?:/\d+)?)"
_AT_B = re.compile(r"^(?:  symbolic \(same sizes\): |  .+?\s{2,}-?[\d,/]+   )([^=]+?) = " + _NUM + r" at B's sizes")
_COMPONENT = re.compile(r"^  (.+?): ([^:]+): (.+) -> (.+): " + _NUM + "$")
_SIDE = re.compile(r"^(.*) = " + _NUM + "$")


def _n(text: str):
    from fractions import Fraction

    return Fraction(text.replace(",", ""))


def _value(expr_text: str, sizes: dict) -> object:
    from fractions import Fraction

    r = exact_rational(parse_closed_form(expr_text), sizes)
    return Fraction(int(r.p), int(r.q))


def _sizes(name: str, quantity: str) -> dict:
    spec = resolve(name).spec
    v = dict(spec.values)
    if quantity == "flops":
        v["B"] = 1
        if spec.family == "encoder-decoder":  # both stacks at the model's L (only a seq2seq model has them)
            v.setdefault("L_src", v["L"])
            v.setdefault("L_tgt", v["L"])
    return v


def _diff_text(a: str, b: str, args: list[str]) -> str:
    import contextlib
    import io

    from symtrans.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["diff", a, b, *args]) == 0
    return out.getvalue()


_SIZE = re.compile(r"(\w+) (absent|[\d,]+) -> (absent|[\d,]+)")


def _printed_middle(text: str, va: dict, vb: dict) -> dict:
    """B's sizes, A's for symbols only A has, then each B value the ``sizes:`` line prints.

    The sizes line must agree with the presets wherever they state a size, so it cannot
    hide a wrong value; it adds what a one-stack B gives an encoder-decoder A's L_src/L_tgt.
    """
    middle = {**va, **vb}
    line = next((t for t in text.splitlines() if t.startswith("  sizes: ")), "")
    for name, was, now in _SIZE.findall(line):
        if name in va:
            assert was != "absent" and int(was.replace(",", "")) == va[name], line
        if name in vb:
            assert now != "absent" and int(now.replace(",", "")) == vb[name], line
        if now != "absent":
            middle[name] = int(now.replace(",", ""))
    return middle


def _check(text: str, a: str, b: str, quantity: str) -> int:
    va, vb = _sizes(a, quantity), _sizes(b, quantity)
    middle = _printed_middle(text, va, vb)
    checked = 0
    for line in text.splitlines():
        for m in _AT_B.finditer(line) if "->" not in line else ():
            assert _value(m.group(1), middle) == _n(m.group(2)), line
            checked += 1
        c = _COMPONENT.match(line)
        if c:
            for side, sizes in ((c.group(3), va), (c.group(4), vb)):
                if side == "-":
                    continue
                s = _SIDE.match(side)
                assert s, f"a formula without its value: {line}"
                assert _value(s.group(1), sizes) == _n(s.group(2)), line
                checked += 1
    return checked


def test_llama2_to_mistral_weight_matrices_split_at_equal_sizes_and_sizes():
    text = _diff_text("llama-2-7b", "mistral-7b", [])
    # Hand arithmetic, N = 32, d_model = 4,096, h = 32, Mistral's h_kv = 8:
    # K and V shrink from d_model^2 to d_model^2 * 8/32 each: 32 * 2 * (4096^2/4 - 4096^2).
    equal_sizes = 32 * 2 * (4096 * 4096 // 4 - 4096 * 4096)
    assert equal_sizes == -805_306_368
    # d_ff 11,008 -> 14,336 in three SwiGLU matrices: 32 * 3 * 4096 * (14336 - 11008).
    from_sizes = 32 * 3 * 4096 * (14_336 - 11_008)
    assert from_sizes == 1_308_622_848 and equal_sizes + from_sizes == 503_316_480
    row = next(line for line in text.splitlines() if line.strip().startswith("weight matrices"))
    assert "503,316,480" in row and "= -805,306,368 at B's sizes" in row and "+ 1,308,622,848 from sizes" in row
    assert _check(text, "llama-2-7b", "mistral-7b", "params") >= 6


@FEW
@given(
    a=st.sampled_from(NAMES),
    b=st.sampled_from(NAMES),
    quantity=st.sampled_from(["params", "flops"]),
    mask=st.sampled_from(["full", "causal"]),
    mode=st.sampled_from(["forward", "training"]),
)
def test_every_diff_formula_evaluates_to_the_value_beside_it(a, b, quantity, mask, mode):
    args = ["--quantity", quantity]
    if quantity == "flops":
        args += ["--mask", mask, "--mode", mode]
    text = _diff_text(a, b, args)
    _check(text, a, b, quantity)


@FEW
@given(name=st.sampled_from(NAMES), seq_len=st.sampled_from([None, 1, 128, 4096]), batch=st.integers(1, 8))
def test_every_report_equation_evaluates_to_the_value_beside_it(name, seq_len, batch):
    """A report row ``formula = substitution = value``: its substitution (the formula with the
    printed sizes put in) evaluated as integer arithmetic equals the printed value."""
    import ast
    import dataclasses
    from fractions import Fraction

    from symtrans.render.report import mathfmt
    from symtrans.render.report.context import build_context

    def ev(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return Fraction(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        x, y = ev(node.left), ev(node.right)
        return {ast.Add: x + y, ast.Sub: x - y, ast.Mult: x * y}.get(type(node.op)) or (
            x / y if isinstance(node.op, ast.Div) else x ** int(y)
        )

    def equations(obj):
        if isinstance(obj, mathfmt.Equation):
            yield obj
        elif dataclasses.is_dataclass(obj):
            for f in dataclasses.fields(obj):
                yield from equations(getattr(obj, f.name))
        elif isinstance(obj, (list, tuple)):
            for v in obj:
                yield from equations(v)

    for section in build_context(resolve(name), batch=batch, seq_len=seq_len).sections:
        for eq in equations(section.blocks):
            if eq.check is not None and "floor" not in eq.check and "Min" not in eq.check:
                assert ev(ast.parse(eq.check, mode="eval").body) == eq.value, eq.check
