"""One report model, three writers (tracker issue 10, item 8; issue 13, item 3).

Each section is written once (``render/report/doc.py``: blocks of runs, the prose as
message ids); Markdown, LaTeX and HTML are thin writers.  So the three formats of every
preset's report must show the same numbers, the same section titles and the same table
columns: the drift that item 8 found (the Markdown usage table had a "quantity" column
the LaTeX lacked) cannot come back.

Numbers are read back from each format's own syntax (``report_outputs``), independently
of the writers.
"""

from __future__ import annotations

import re

import pytest
from report_outputs import html_numbers, html_text, latex_numbers, markdown_numbers, report_of

from symtrans.catalog import presets
from symtrans.catalog.resolve import resolve
from symtrans.render.report import render, render_context

# Hugging Face BertModel (bert-base-uncased): sum(p.numel() for p in model.parameters()).
BERT_BASE_PARAMS = 109_482_240


@pytest.mark.parametrize("name", list(presets.PRESETS))
def test_markdown_latex_and_html_show_the_same_numbers(name):
    report = report_of(name)
    md = markdown_numbers(render_context(report, "markdown"))
    tex = latex_numbers(render_context(report, "latex"))
    page = html_numbers(render_context(report, "html"))
    assert sum(md.values()) > 200  # a whole report, not an empty page
    assert md == tex, f"only in Markdown: {dict(md - tex)}; only in LaTeX: {dict(tex - md)}"
    assert md == page, f"only in Markdown: {dict(md - page)}; only in HTML: {dict(page - md)}"


def test_the_number_check_can_fail():
    # A number missing from one format is found: the check above is not vacuous.
    report = report_of("gpt2")
    md = render_context(report, "markdown")
    page = render_context(report, "html").replace("124,439,808", "124,439,809", 1)
    assert markdown_numbers(md) != html_numbers(page)


def test_section_titles_are_the_same_in_every_format():
    report = report_of("mixtral-8x7b")
    md = render_context(report, "markdown")
    tex = render_context(report, "latex")
    page = render_context(report, "html")
    md_titles = re.findall(r"^## (.+)$", md, flags=re.MULTILINE)
    tex_titles = re.findall(r"^\\section\{\\texorpdfstring\{(.+?)\}\{", tex, flags=re.MULTILINE)
    html_titles = re.findall(r"<h2>(.+?)</h2>", page)
    assert md_titles[:3] == ["Symbols", "Published figure and exact count", "Parameter breakdown"]
    assert md_titles == tex_titles == html_titles


def test_published_formulas_table_has_the_same_columns_everywhere():
    # The drift of issue 10: the Markdown table had a "quantity" column the LaTeX lacked.
    report = report_of("gpt2")
    columns = ["formula", "quantity", "formula value", "exact count", "ratio", "exact under its assumptions"]
    md = render_context(report, "markdown")
    assert "| " + " | ".join(columns) + " |" in md
    tex = render_context(report, "latex")
    assert " & ".join(columns) + r" \\" in tex
    page = render_context(report, "html")
    header = re.search(
        r'<section id="usage_flops">.*?<thead><tr>(.*?)</tr></thead>.*?<thead><tr>(.*?)</tr>', page, re.S
    )
    assert re.findall(r"<th[^>]*>([^<]*)</th>", header.group(2)) == columns


def test_html_report_of_bert_base_has_the_markdown_numbers_and_the_exact_count():
    md = render(resolve("bert-base"), "markdown")
    page = render(resolve("bert-base"), "html")
    assert markdown_numbers(md) == html_numbers(page)
    assert "109,482,240" in html_text(page) and f"{BERT_BASE_PARAMS:,}" == "109,482,240"


def test_html_is_one_self_contained_file():
    page = render(resolve("gpt2"), "html")
    assert page.startswith("<!DOCTYPE html>") and '<meta charset="utf-8">' in page
    assert "<script" not in page and "<link" not in page  # no code, no external style sheet
    assert not re.search(r'(?:src|href)="(?:https?:)?//', page)  # nothing fetched from the network
    assert "@media print" in page  # print CSS
    assert "<math" in page and "<msub><mi>d</mi><mi>model</mi></msub>" in page  # SymPy's MathML
    assert "$" not in html_text(page)  # no LaTeX math left for a script to typeset


def test_subscripts_are_math_in_latex_and_html_not_literal_underscores():
    report = report_of("gpt2")
    tex = render_context(report, "latex")
    page = render_context(report, "html")
    # the step label W_1 (the engine's sources may still spell a formula in plain text, "xW_1")
    assert r"\textbf{\ensuremath{W_{1}}}" in tex and r"\textbf{W\texttt{\char95}1" not in tex
    assert r"\textbf{bias of \ensuremath{W_{1}}}" in tex
    assert "<strong><math><msub><mi>W</mi><mi>1</mi></msub></math></strong>" in page


def test_hostile_title_is_escaped_in_html():
    title = '<script>alert(1)</script> <img src=x onerror=alert(2)> & "quoted" </title><math>'
    page = render(resolve("gpt2"), "html", title=title)
    assert "<script" not in page and "<img src=x" not in page and "</title><math>" not in page
    assert "<title>&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(2)&gt; &amp; " in page
    assert "<h1>&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert html_text(page).count(title) == 1  # the heading shows it literally (the head is not body text)
