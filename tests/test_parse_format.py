"""One parser for byte sizes and counts, one formatter each for counts, bytes and seconds
(issue 20 Build 4 and its second Must-show; issue 25 item 14).

Expected values are arithmetic written out here: 1.5 GiB = 1.5 x 2^30 = 1,610,612,736
bytes; 1.5B = 1.5 x 10^9 parameters (the shorthand every output prints, B for billion).
"""

from __future__ import annotations

import json

import pytest

from symtrans.cli.main import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_solve_takes_a_memory_budget_in_gib(capsys):
    code, out, err = run(
        capsys, "solve", "llama-2-7b", "--for", "d_model", "--memory", "1.5GiB", "--memory-mode", "inference"
    )
    assert code == 0, err
    assert "memory = 1,610,612,736 bytes" in out  # 1.5 x 2**30


def test_solve_takes_a_parameter_budget_in_the_printed_shorthand(capsys):
    code, out, err = run(capsys, "solve", "llama-2-7b", "--for", "d_model", "--params", "1.5B", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["target"] == 1_500_000_000


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("7e9", 7 * 10**9),
        ("1.5B", 15 * 10**8),
        ("70B", 70 * 10**9),
        ("124.4M", 124_400_000),
        ("32k", 32_000),
        # lowercase, as model names write counts (llama-7b, opt-125m, 1.5t tokens): the same powers of ten
        ("7b", 7 * 10**9),
        ("125m", 125 * 10**6),
        ("32K", 32_000),
        ("1.5t", 15 * 10**11),
    ],
)
def test_counts_parse_exactly(text, value):
    from symtrans.base.numbers import parse_int

    assert parse_int(text, "--params") == value


@pytest.mark.parametrize(
    ("text", "value"),
    [("1.5GiB", 3 * 2**29), ("80GB", 80 * 10**9), ("16e9", 16 * 10**9), ("85899345920", 80 * 2**30), ("40KB", 40_000)],
)
def test_bytes_parse_exactly(text, value):
    from symtrans.base.numbers import parse_bytes

    assert parse_bytes(text, "--memory") == value


@pytest.mark.parametrize("text", ["1.2345678901B", "1.5", "2.5001k", "1.5 apples", "1e-3B"])
def test_fractional_or_unknown_counts_are_refused(text):
    from symtrans.base.numbers import parse_int

    with pytest.raises(ValueError):
        parse_int(text, "--params")


def test_solve_takes_a_lowercase_parameter_budget(capsys):
    # the user's '--params 7b' was refused ("must be an integer, not '7b'") while 1.5B worked
    code, out, err = run(capsys, "solve", "llama-2-7b", "--for", "d_model", "--params", "7b", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["target"] == 7_000_000_000


def test_lowercase_b_stays_bytes_not_billions_in_byte_sizes():
    from symtrans.base.numbers import parse_bytes

    with pytest.raises(ValueError):
        parse_bytes("7b", "--memory")  # not 7e9 bytes: byte units are case-sensitive (B, kB, KiB)


def test_solve_refuses_a_fraction_of_a_byte_in_one_line(capsys):
    code, out, err = run(capsys, "solve", "gpt2", "--for", "N", "--memory", "1.5B")  # 1.5 bytes
    assert code == 2 and len(err.strip().splitlines()) == 1 and "whole number of bytes" in err


def test_cli_and_report_shorthand_agree_on_a_billion():
    # 999,960,000 rounds to one billion at one decimal (CLI) and at four digits (report):
    # before, the CLI printed "1000.0M" while the report printed "1B".
    from symtrans.base.numbers import count, si
    from symtrans.render.report import mathfmt

    assert count(999_960_000) == "1.0B"
    assert mathfmt.count(999_960_000) == "999,960,000 (1B)"
    assert si(999_960_000) == "1.0 GFLOP"
    assert mathfmt.si(12_345) == "12.35k"  # ties round away from zero, as a reader rounds


def test_seconds_and_bytes_have_one_formatter():
    from symtrans.base.numbers import byte_size, seconds

    assert seconds(0.0012345) == "1.234 ms" or seconds(0.0012345) == "1.235 ms"  # %.4g of a float
    assert seconds(2.5) == "2.5 s"
    assert seconds(172_800) == "1.728e+05 s (2 days)"
    assert byte_size(80 * 2**30) == "85,899,345,920 bytes = 80.00 GiB (binary) = 85.90 GB (decimal)"
    assert byte_size(1000) == "1,000 bytes"
