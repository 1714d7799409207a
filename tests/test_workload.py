"""One workload for every output (issue 20, Build 3 and its first Must-show).

``symtrans flops t5-small --set L_src=512 --seq-len 128``, its JSON, ``symtrans report``
with the same arguments (headline, FLOPs section) and the report's chart state one forward
total.  The expected total is written out below from T5-small's published sizes (Raffel
et al. 2020, Table 14 / transformers' T5Config for t5-small: d_model 512, d_ff 2048, 8
heads of d_kv 64, 6 layers per stack, 32,128-token vocabulary) under the convention of
``torch.utils.flop_counter`` (2 FLOPs per multiply-accumulate, matrix products only; the
full L x L score square).  Nothing below comes from symtrans.
"""

from __future__ import annotations

import json

import pytest
from conftest import require

from symtrans.cli.main import main

ARGS = ["t5-small", "--set", "L_src=512", "--seq-len", "128"]


def _t5_small_forward(src: int, tgt: int) -> int:
    """Forward FLOPs of T5-small on one sequence: src encoder tokens, tgt decoder tokens."""
    d, ff, inner, n, vocab = 512, 2048, 8 * 64, 6, 32128
    enc_layer = (
        2 * src * d * inner * 4  # q, k, v, o projections (each d x inner)
        + 2 * src * src * inner * 2  # scores Q K^T and the weighted sum of V
        + 2 * src * d * ff * 2  # wi and wo
    )
    dec_layer = (
        2 * tgt * d * inner * 4  # self-attention q, k, v, o
        + 2 * tgt * tgt * inner * 2  # self-attention scores and weighted sum
        + 2 * tgt * d * inner * 2  # cross-attention q and o on the decoder tokens
        + 2 * src * d * inner * 2  # cross-attention k and v on the encoder output
        + 2 * tgt * src * inner * 2  # cross-attention scores and weighted sum
        + 2 * tgt * d * ff * 2  # wi and wo
    )
    lm_head = 2 * tgt * d * vocab
    return n * enc_layer + n * dec_layer + lm_head


EXPECTED = _t5_small_forward(512, 128)


def test_written_out_total_is_the_issue_figure():
    # the figure issue 20 quotes for `symtrans flops`: the arithmetic above reproduces it
    assert EXPECTED == 36_624_662_528
    assert _t5_small_forward(128, 128) == 16_089_350_144  # what the report printed: L_src = 128


def test_flops_json_report_and_chart_state_one_total(capsys, tmp_path):
    assert main(["flops", *ARGS]) == 0
    assert f"{EXPECTED:,}" in capsys.readouterr().out
    assert main(["flops", *ARGS, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["total"], out["L_src"], out["L_tgt"]) == (EXPECTED, 512, 128)

    md = tmp_path / "t5.md"
    assert main(["report", *ARGS, "--no-charts", "-o", str(md)]) == 0
    text = md.read_text()
    headline = next(line for line in text.splitlines() if line.startswith("| forward FLOPs"))
    assert f"{EXPECTED:,}" in headline and "= 512" in headline and "= 128" in headline
    assert f"{_t5_small_forward(128, 128):,}" not in text


def test_report_chart_states_the_same_total():
    require("matplotlib")
    from symtrans.catalog.resolve import resolve
    from symtrans.cli.main import command_workload
    from symtrans.render.plots import component_shares, shares

    res = resolve("t5-small", ["L_src=512"])
    wl = command_workload(res, 1, 128)
    assert wl.lengths == (("L_src", 512), ("L_tgt", 128))
    assert sum(v for _, v in shares(res.spec, wl.values(res.spec), "flops")) == EXPECTED
    fig = component_shares(res.spec, res.name, workload=wl)
    titles = [ax.get_title() for ax in fig.axes]
    assert any("36.6 GFLOP" in t and "L_src=512, L_tgt=128" in t for t in titles), titles


def test_notebook_and_diff_follow_the_same_rule():
    from symtrans.analysis.diff import diff as diff_models
    from symtrans.analysis.diff import parse_side
    from symtrans.catalog.resolve import resolve
    from symtrans.render.notebook import Model

    res = resolve("t5-small", ["L_src=512"])
    assert Model(res.name, res.spec).flops(seq_len=128) == EXPECTED
    r = diff_models(parse_side("t5-small"), parse_side("t5-small"), "flops", {"B": 1, "L": 128})
    assert r.a_total == _t5_small_forward(128, 128)


@pytest.mark.parametrize("bad", [0, -3, True, 1.5])
def test_workload_refuses_non_positive_or_non_integer_sizes(bad):
    from symtrans.base.errors import InputError
    from symtrans.catalog.resolve import resolve
    from symtrans.engine.workload import resolve_workload

    spec = resolve("gpt2").spec
    with pytest.raises(InputError):
        resolve_workload(spec, batch=bad)
    with pytest.raises(InputError):
        resolve_workload(spec, seq_len=bad)
