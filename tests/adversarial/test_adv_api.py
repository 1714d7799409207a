"""The Python API validates exactly what the CLI validates (issue 27.7).

``--set N=...`` takes a positive integer of at most 2**53 (``catalog.resolve.parse_setting``,
the config reader's ``MAX_SIZE``); closed-form text takes no number past 2**4096 and no
function but Min, Max, floor and ceiling (``engine.parse``).  The API took what the CLI
refuses: ``parse_closed_form`` integers of 4,300 and more digits (with Python's own
"use sys.set_int_max_str_digits()" message), ``Model.subs`` an undefined ``f(12)``, and it
refused ``sympy.Integer(2)`` with "must be a positive integer, not 2".  The expected counts
are GPT-2 small with 2 layers: 124,439,808 - 10 * 7,087,872 = 53,561,088 (each GPT-2 small
layer holds 12*768**2 + 13*768 = 7,087,872 parameters; Radford et al. 2019, as counted by
GPT2LMHeadModel).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import symtrans

TWO_LAYERS = 124_439_808 - 10 * (12 * 768**2 + 13 * 768)  # 53,561,088


@pytest.mark.parametrize("two", [2, sp.Integer(2), np.int64(2), np.uint8(2)], ids=["int", "sympy", "int64", "uint8"])
def test_integer_types_are_sizes(two):
    assert symtrans.model("gpt2", N=two).params == TWO_LAYERS
    m = symtrans.model("gpt2")
    assert m.subs(m.closed_form, N=two) == TWO_LAYERS


@pytest.mark.parametrize(
    "bad,needle",
    [
        (10**5000, "about 5,000 digits"),
        (2**53 + 1, "2**53"),
        (0, "positive integer"),
        (-3, "positive integer"),
        (2.0, "float"),
        (True, "bool"),
        ("2", "str"),
        (sp.Rational(1, 2), "positive integer"),
    ],
    ids=["5000-digits", "2**53+1", "zero", "negative", "float", "bool", "str", "rational"],
)
def test_sizes_the_cli_refuses_the_api_refuses(bad, needle):
    m = symtrans.model("gpt2")
    for call in (lambda: symtrans.model("gpt2", N=bad), lambda: m.subs(m.closed_form, N=bad)):
        with pytest.raises(ValueError) as e:
            call()
        msg = str(e.value)
        assert needle in msg and "set_int_max_str_digits" not in msg and len(msg) < 200, msg


def test_subs_refuses_an_undefined_function():
    m = symtrans.model("gpt2")
    with pytest.raises(ValueError, match="calls f, which symtrans does not define"):
        m.subs(sp.Function("f")(12) + m.closed_form)
    with pytest.raises(ValueError, match="not allowed"):
        m.subs("N*f(12)")


@pytest.mark.parametrize("digits", [1_300, 4_300, 4_400, 19_000])
def test_closed_form_numbers_past_2_to_4096_are_refused_in_one_line(digits):
    with pytest.raises(ValueError) as e:
        symtrans.parse_closed_form("N*" + "9" * digits)
    msg = str(e.value)
    assert f"{digits:,} digits" in msg and "set_int_max_str_digits" not in msg, msg


def test_a_number_below_the_limit_is_exact():
    # 2**4096 has 1,234 digits; 10**1000 is below it and kept exactly
    assert symtrans.parse_closed_form("N*1" + "0" * 1000) == sp.Symbol("N", positive=True, integer=True) * 10**1000
