"""Notebook display: symtrans.model(...) and Cost objects render as LaTeX/Markdown (issue 5, "Notebooks").

Counts: GPT-2 124,439,808 (transformers GPT2LMHeadModel); forward FLOPs at L = 1024
291,648,307,200 (arithmetic in tests/test_cli.py); Mixtral 46,702,792,704 total and
12,879,925,248 active (transformers MixtralForCausalLM, tests/test_cli.py).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import symtrans
from symtrans.engine.spec import Spec


def test_model_counts():
    m = symtrans.model("gpt2")
    assert m.params == 124_439_808
    assert m.flops(1, 1024) == 291_648_307_200
    assert m.flops(1, 1024, mode="training") == 3 * 291_648_307_200
    assert repr(m) == "<symtrans.Model gpt2: 124,439,808 parameters>"
    mix = symtrans.model("mixtral-8x7b")
    assert (mix.params, mix.active_params) == (46_702_792_704, 12_879_925_248)


def test_model_changes_sizes_and_options():
    m = symtrans.model("gpt2", bias=False)
    # GPT-2 linear biases per layer 3*768 + 768 + 3072 + 768 = 6912, 12 layers (GPT2Block).
    assert m.params == 124_439_808 - 12 * 6912
    assert symtrans.model("gpt2", ["N=24"]).params == 124_439_808 + 12 * 7_087_872  # 7,087,872 per block
    spec = Spec(
        family="decoder-only",
        sizes=dict(d_model=768, d_ff=3072, h=12, N=12, V=50257, L_max=1024, L=1024),
        positional="learned",
        norm_position="pre",
        final_norm=True,
    )
    assert symtrans.model(spec).params == 124_439_808
    with pytest.raises(ValueError, match="unknown size or option"):
        symtrans.model("gpt2", colour=3)
    with pytest.raises(ValueError, match="unknown preset"):
        symtrans.model("gpt-9")


def test_model_latex_and_markdown():
    m = symtrans.model("gpt2")
    tex = m._repr_latex_()
    assert tex.startswith("$$") and tex.endswith("$$")
    assert r"124{,}439{,}808" in tex and r"d_{\mathrm{model}}" in tex and r"\text{gpt2}" in tex
    md = m._repr_markdown_()
    assert md.startswith("### gpt2: 124,439,808 parameters (124.4M)")
    assert "| embeddings | 1 | 39,383,808 |" in md  # wte 50257*768 + wpe 1024*768
    assert "| symbol | meaning | value |" in md and "| 768 |" in md


def test_cost_objects_display():
    cost = symtrans.model("gpt2").cost
    md = cost._repr_markdown_()
    assert md.startswith("**model**") and "| embeddings |" in md and "forward FLOPs" in md
    layer = cost.find("decoder layer")
    md = layer._repr_markdown_()
    assert "× $N$" in md  # the stack repeats the layer N times
    tex = layer._repr_latex_()
    assert tex.startswith("$$ P_{\\text{decoder layer}}")


def test_other_results_display():
    from symtrans.accounting.formulas import get
    from symtrans.analysis.diff import diff, parse_side
    from symtrans.analysis.solve import llama_rule, solve

    md = diff(parse_side("bert-base:V=30000"), parse_side("bert-base"))._repr_markdown_()
    assert "= **400,896** parameters" in md  # (30522 - 30000) * 768
    assert get("crossover")._repr_latex_().startswith("$$ L_{\\times}")
    r = solve(symtrans.model("llama-2-7b").spec, "d_model", 6_738_415_616, rules=[llama_rule()])
    assert "4096" in r._repr_markdown_()


def test_import_symtrans_is_light():
    code = (
        "import sys, symtrans; print(sorted(m for m in ('numpy', 'sympy', 'matplotlib', 'jinja2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert callable(symtrans.model) and callable(symtrans.assert_identity)
