"""Chinese reports in Chinese (issue 25.9, 25.10): the derivation's sentences and the
component names come from the catalogue, and an XeLaTeX PDF prints an em dash, not '---'.

Expected text: the catalogue's own translations (symtrans.po, reviewed by hand) of the
sentences the Cost tree writes, e.g. Vaswani et al. 2017 §3.2.2's "query projection".
"""

from __future__ import annotations

import subprocess

from report_outputs import need_tool

from symtrans.catalog.resolve import resolve
from symtrans.render.report import build_context, build_pdf, render_context


def test_zh_derivation_sentences_and_component_names_are_chinese():
    zh = render_context(build_context(resolve("gpt2")), "markdown", lang="zh")
    derivation = zh.split("\n## ", 3)[-1]
    for chinese in (
        "查询投影，h 个宽 d_k 的头",
        "#### 解码器层 / 因果自注意力",
        "### 嵌入:",
        "LayerNorm 的缩放 γ 与平移 β",
    ):
        assert chinese in zh, chinese
    for english in ("query projection", "causal self-attention", "one bias per output feature"):
        assert english not in zh, english
    assert "W_Q 的偏置" in derivation or "W_Q 的偏置" in zh
    en = render_context(build_context(resolve("gpt2")), "markdown", lang="en")
    assert "query projection, h heads of width d_k" in en  # English stays English


def test_latex_writer_prints_an_em_dash_not_three_hyphens():
    for lang in ("en", "zh"):
        tex = render_context(build_context(resolve("handcount-001-transformer")), "latex", lang=lang)
        assert " --- " not in tex and "}---" not in tex
        assert r"\textemdash{}" in tex


def test_chinese_pdf_of_handcount_001_has_chinese_body_text_and_no_literal_dashes(tmp_path):
    need_tool("xelatex", "texlive-xetex")
    need_tool("pdftotext", "poppler-utils")
    tex = render_context(build_context(resolve("handcount-001-transformer")), "latex", lang="zh")
    assert r"\setmainfont{Noto Serif CJK SC}" in tex  # the Simplified Chinese face of Noto CJK
    path = tmp_path / "h001.pdf"
    path.write_bytes(build_pdf(tex))
    text = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout
    assert "---" not in text and "—" in text
    for chinese in ("词表中每个词元一个", "编码器层", "查询投影", "262,144 — 查询投影"):
        assert chinese in text, chinese
