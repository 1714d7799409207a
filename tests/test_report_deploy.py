"""``symtrans report MODEL --deploy ACCELERATOR [deploy options]`` (issue 23, build 6): the
deployment plan as a derivation section (formula, substitution, value) in Markdown, LaTeX/PDF
and HTML, read from the plan ``symtrans deploy --format json`` prints for the same model and
options (nothing recomputed); a deploy option without ``--deploy`` is refused in one line.

Independent figures: the KV bytes per token are written out as arithmetic from the published
configs (Llama-3-8B: 2 (K and V) x 32 layers x 8 KV heads x 128 x 2 bytes; Qwen3-235B-A22B-FP8
at TP 4: 94 layers x 2 x 4/4 heads x 128 x 2 bytes = 48,128, issue 23's must-show).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from symtrans.cli.main import main

QWEN3_FP8 = str(Path(__file__).parent / "vllm_logs" / "configs" / "qwen3-235b-a22b-fp8.json")
OPTIONS = ["--generate", "256", "--prompt", "1024"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _plan(capsys, model, accelerator, *options) -> dict:
    code, out, err = run(capsys, "deploy", model, "--accelerator", accelerator, *options, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _section(text: str, start: str, end: str) -> str:
    i = text.index(start)
    return text[i : text.index(end, i + len(start))]


def test_markdown_section_is_the_plan_deploy_prints(capsys):
    plan = _plan(capsys, "llama-3-8b", "h100-sxm", *OPTIONS)
    code, out, err = run(capsys, "report", "llama-3-8b", "--deploy", "h100-sxm", *OPTIONS, "--no-charts")
    assert code == 0, err
    s = _section(out, "## Deployment plan", "## Assumptions")
    assert 2 * 32 * 8 * 128 * 2 == 131_072 == plan["memory_per_device"]["kv_cache_per_token"]
    assert "| KV cache per token | 131,072 B = 128.00 KiB |" in s
    # every closed form of the plan, as formula | substitution | value, in deploy's order
    at = 0
    for f in plan["formulas"]:
        row = f"| {f['name']} | `{f['formula']}` | `{f['substituted']}` |"
        assert row in s[at:], f["name"]
        at = s.index(row, at)
    budget, req = plan["token_budget"], 1024 + 256
    assert f"'GPU KV cache size: {budget:,} tokens'" in s
    assert f"'Maximum concurrency for {req:,} tokens per request: {budget / req:.2f}x'" in s
    for a in plan["assumptions"]:
        assert f"- assumption: {a}" in s


def test_fp8_checkpoint_section_shows_vllm_kv_bytes_and_the_weight_terms(capsys):
    assert 94 * 2 * (4 // 4) * 128 * 2 == 48_128
    argv = ("--devices", "4", "--tensor-parallel-size", "4")
    code, out, err = run(capsys, "report", QWEN3_FP8, "--deploy", "h100-sxm", *argv, "--no-charts")
    assert code == 0, err
    s = _section(out, "## Deployment plan", "## Assumptions")
    assert "| KV cache per token | 48,128 B = 47.00 KiB |" in s
    # vLLM's kv_cache_dtype=auto: bf16 for the fp8 checkpoint; the weights by term, scales included
    assert "weights bf16, fp8 block 128x128; KV cache bf16" in s and "| scales |" in s


def test_html_and_latex_carry_the_section_escaped(capsys, tmp_path):
    for fmt, name in (("html", "r.html"), ("latex", "r.tex")):
        path = tmp_path / name
        code, _, err = run(capsys, "report", "llama-3-8b", "--deploy", "h100-sxm", "--no-charts", "-o", str(path))
        assert code == 0, err
        text = path.read_text(encoding="utf-8")
        assert "Deployment plan" in text
        # text each writer must escape or carry: '_' (LaTeX), '·' and '−' (the budget's closed form)
        if fmt == "html":
            assert "gpu_memory_utilization" in text and "floor((u·M − W − R)" in text
        else:
            assert r"gpu\texttt{\char95}memory\texttt{\char95}utilization" in text


@pytest.mark.skipif(
    shutil.which("latexmk") is None or shutil.which("pdftotext") is None,
    reason="latexmk and pdftotext (poppler-utils) are needed for PDF tests",
)
def test_pdf_builds_with_the_section(capsys, tmp_path):
    path = tmp_path / "r.pdf"
    code, _, err = run(capsys, "report", "llama-3-8b", "--deploy", "h100-sxm", "--no-charts", "-o", str(path))
    assert code == 0, err
    text = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout
    assert "Deployment plan" in text and "token budget" in text


def test_deploy_options_without_deploy_and_a_plan_deploy_refuses_are_one_line(capsys):
    code, out, err = run(capsys, "report", "llama-3-8b", "--devices", "2", "--no-charts")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        "symtrans report: --devices is an option of the deployment plan; give --deploy ACCELERATOR"
    ]
    code, out, err = run(
        capsys, "report", "llama-3-8b", "--deploy", "h100-sxm", "--devices", "2", "--tensor-parallel", "3"
    )
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
