"""Speed work of issue 6 (item 2), checked without timing anything.

* the ``params`` path imports no NumPy, Jinja2, matplotlib, tqdm, torch or TeX tooling;
* closed forms are cached per structural spec (``architectures.build``,
  ``flops.flops_expr``, ``cost.closed_form``, the sweep's compiled forms);
* ``simplify()`` is not called on the hot paths (params, flops, sweep, report);
* the sweep's fast paths (int64 check at the columns' extremes, no division when the
  denominator is 1, distinct rows by a dense table) give the exact values.

Known values are written out as arithmetic in each test, with their source.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from symtrans.accounting import flops
from symtrans.analysis.sweep import Compiled, sweep
from symtrans.catalog.presets import get
from symtrans.engine import architectures
from symtrans.engine.simplify import closed_form
from symtrans.engine.symbols import SYMBOLS

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("numpy", "jinja2", "markupsafe", "matplotlib", "tqdm", "torch", "transformers", "scipy", "pandas")

# Llama-2-7B sizes, config.json of meta-llama/Llama-2-7b-hf.
D, FF, V = 4096, 11008, 32000


def llama_params(n_layers: int) -> int:
    """LlamaForCausalLM by hand: per layer q,k,v,o 4*d^2, gate/up/down 3*d*d_ff, two
    RMSNorm weights 2*d; embed_tokens and the untied lm_head 2*V*d; final norm d."""
    return n_layers * (4 * D * D + 3 * D * FF + 2 * D) + 2 * V * D + D


def test_params_path_imports_nothing_heavy():
    code = (
        "import io, json, sys, contextlib\n"
        "from symtrans.cli.main import main\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n"
        "    code = main(['params', 'llama-2-7b', '--format', 'json'])\n"
        f"heavy = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))\n"
        "print(json.dumps({'code': code, 'total': json.loads(buf.getvalue())['total'], 'heavy': heavy,\n"
        "                  'report': 'symtrans.render.report' in sys.modules}))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["code"] == 0
    assert out["total"] == llama_params(32) == 6_738_415_616  # Llama-2-7B, HF LlamaForCausalLM count
    assert out["heavy"] == [], f"the params path imported {out['heavy']}"
    assert out["report"] is False  # no Jinja2 environment, no TeX


def test_build_is_cached_per_structure_and_n_stays_symbolic():
    spec = get("llama-2-7b").spec
    deep = spec.replace(sizes={"N": 1000})
    assert architectures.build(spec) is architectures.build(deep)  # same structure, one tree
    params = architectures.build(deep).params
    assert SYMBOLS["N"] in params.free_symbols  # the layers are a multiplicity, not 1000 copies
    from symtrans.engine.evaluate import exact

    assert exact(params, deep.values) == llama_params(1000) == 202_645_508_096


def test_closed_forms_are_cached():
    spec = get("gpt2").spec
    e = architectures.build(spec).params
    assert closed_form(e) is closed_form(e)
    wider = spec.replace(sizes={"d_model": 1024, "h": 16})
    assert flops.flops_expr(spec, "training") is flops.flops_expr(wider, "training")


@pytest.fixture
def no_simplify(monkeypatch):
    """Make any call of sympy's simplify() fail."""

    def refuse(*args, **kwargs):
        raise AssertionError("simplify() called on a hot path")

    monkeypatch.setattr(sp, "simplify", refuse)
    monkeypatch.setattr(sp.Expr, "simplify", refuse)
    monkeypatch.setattr(sys.modules["sympy.simplify.simplify"], "simplify", refuse)


def test_hot_paths_do_not_simplify(no_simplify, capsys):
    from symtrans.catalog.resolve import resolve
    from symtrans.cli.main import main
    from symtrans.render.report import render

    architectures._build.cache_clear()
    closed_form.cache_clear()
    flops._flops_expr.cache_clear()
    for argv in (
        ["params", "mixtral-8x7b", "--format", "json"],
        ["flops", "t5-small", "--format", "json"],
        ["sweep", "gpt2", "--grid", "N=1:3", "--quantity", "params"],
    ):
        assert main(argv) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert render(resolve("llama-2-7b"), "markdown").startswith("#")


def test_check_sizes_applies_the_spec_size_rules():
    spec = get("gpt2").spec
    spec.check_sizes({"d_model": 1024, "h": 16})  # 16 divides 1024
    with pytest.raises(ValueError, match="h=12 does not divide d_model=1000"):
        spec.check_sizes({"d_model": 1000})
    with pytest.raises(ValueError, match="N must be a positive integer, not 0"):
        spec.check_sizes({"N": 0})
    assert spec.values["d_model"] == 768  # unchanged


def test_row_rules_check_whole_columns_as_the_spec_checks_one_row():
    # spec.ROW_RULES are the Spec's own divisibility/order rules; on arrays they hold elementwise.
    from symtrans.engine.spec import ROW_RULES

    d_k_rule = ROW_RULES[0]
    cols = {"d_model": np.array([768, 1000, 1536]), "h": np.array([12, 12, 12])}
    assert d_k_rule.holds(cols).tolist() == [True, False, True]  # 1000 = 12 * 83 + 4
    spec = get("gpt2").spec
    for d, ok in zip(cols["d_model"].tolist(), [True, False, True]):
        try:
            spec.check_sizes({"d_model": d})
            assert ok
        except ValueError as e:
            assert not ok and str(e) == d_k_rule.message({"d_model": d, "h": 12})


def test_unit_denominator_returns_a_fresh_array():
    N = SYMBOLS["N"]
    col = np.array([1, 2, 3])
    out = Compiled.build("n", N)({"N": col}, 3)
    assert out is not col and out.tolist() == [1, 2, 3]
    out[0] = 99
    assert col.tolist() == [1, 2, 3]
    const = Compiled.build("five", sp.Integer(5))({}, 3)
    assert const.tolist() == [5, 5, 5] and const.flags.writeable


def test_rows_that_fit_int64_stay_exact_when_the_column_extremes_do_not():
    # GPT-2 parameters (HF GPT2LMHeadModel, see test_sweep.gpt2_params):
    # V*d + L*d + N*(4*d^2 + 2*d*d_ff + d_ff + 9*d) + 2*d.
    def gpt2(d, ff, n, V, L):
        return V * d + L * d + n * (4 * d * d + 2 * d * ff + ff + 9 * d) + 2 * d

    spec = get("gpt2").spec
    # Row 0: N huge, d small; row 1: d large, N = 1.  Each fits int64 (< 2^62), but the
    # bound at the columns' maxima (N = 10^12, d = 3*10^6) is ~3.6*10^25: the rows are
    # then checked one by one.  Row 2 is past 2^63 and comes back as a Python int.
    cols = {
        "N": np.array([10**12, 1, 10**9]),
        "d_model": np.array([12, 3_000_000, 3_000_000]),
        "h": np.array([12, 12, 12]),
    }
    res = sweep(spec, cols, ["params"])
    want = [
        gpt2(12, 3072, 10**12, 50257, 1024),
        gpt2(3_000_000, 3072, 1, 50257, 1024),
        gpt2(3_000_000, 3072, 10**9, 50257, 1024),
    ]
    assert want[0] < 2**62 and want[1] < 2**62 and want[2] > 2**63
    assert res.columns["params"].tolist() == want
