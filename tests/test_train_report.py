"""``symtrans report MODEL --train "OPTIONS"``: the training plan section in Markdown, HTML and PDF.

The figure checked is GPT-2's (124M, Radford et al. 2019: 12 layers, d 768, 12 heads, s 1024)
layer activations at tp 2 with SP and selective recomputation, one stage, without dropout:
Korthikanti et al. 2022 Table 2 and §4.1, written out below.
"""

from __future__ import annotations

import subprocess

from report_outputs import need_tool

from symtrans.cli.main import main

TRAIN = "--tp 2 --sequence-parallel --recompute selective --dp 2 --global-batch 4 --no-dropout"
# Table 2 (TP + SP + selective) is sbh·34/t with dropout; --no-dropout drops the two 1-byte sbh masks (§4.1):
# sbh·32/t per layer
LAYERS = 1024 * 1 * 768 * 32 // 2 * 12


def test_markdown_and_html_sections(tmp_path):
    md, html = tmp_path / "r.md", tmp_path / "r.html"
    assert main(["report", "gpt2", "--no-charts", "--train", TRAIN, "-o", str(md)]) == 0
    text = md.read_text()
    assert "## Training plan" in text and f"{LAYERS:,}" in text
    assert main(["report", "gpt2", "--no-charts", "--train", TRAIN, "-o", str(html)]) == 0
    page = html.read_text()
    assert "Training plan" in page and f"{LAYERS:,}" in page


def test_pdf_section(tmp_path):
    need_tool("latexmk", "latexmk")
    pdftotext = need_tool("pdftotext", "poppler-utils")
    out = tmp_path / "r.pdf"
    assert main(["report", "gpt2", "--no-charts", "--train", TRAIN, "-o", str(out)]) == 0
    text = subprocess.run([pdftotext, str(out), "-"], capture_output=True, text=True, check=True).stdout
    assert "Training plan" in text and f"{LAYERS:,}" in text


def test_bad_train_options_one_line(capsys):
    assert main(["report", "gpt2", "--train", "--tp 5", "-o", "-"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "must divide the 12 attention heads" in err
