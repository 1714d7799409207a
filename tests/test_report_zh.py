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
    # the overview's values and the preset's notes, body text of the first two pages (issue 25.9)
    for chinese in ("有文献记载的训练上下文", "文章的手工计数", "与真实实现的差距", "编码器-解码器"):
        assert chinese in text, chinese
    for english in ("the documented training context", "the article's hand count", "Gap to the real implementation"):
        assert english not in text, english


# -- issue 25.9, second part: the presets' notes, the overview's values, the assumptions ---------

import functools  # noqa: E402

import pytest  # noqa: E402
from conftest import require  # noqa: E402
from report_outputs import report_of  # noqa: E402

from symtrans.base.escape import markdown_escape  # noqa: E402
from symtrans.catalog import presets  # noqa: E402
from symtrans.render.report import i18n  # noqa: E402


@functools.lru_cache(maxsize=1)
def _catalogue_sentences() -> tuple[str, ...]:
    """The English sources of the catalogue that read differently in Chinese, of three words or
    more (shorter ones, as "total", also occur inside other text)."""
    from babel.messages.pofile import read_po

    require("babel")
    with open(i18n.LOCALE_DIR / "zh" / "LC_MESSAGES" / "symtrans.po", "rb") as f:
        catalog = read_po(f)
    return tuple(m.id for m in catalog if m.id and m.string != m.id and len(m.id.split()) >= 3 and "{" not in m.id)


@pytest.mark.parametrize("name", list(presets.PRESETS))
def test_no_english_sentence_of_the_catalogue_is_left_in_a_chinese_report(name):
    zh = render_context(report_of(name), "markdown", lang="zh")
    left = [s for s in _catalogue_sentences() if markdown_escape(s) in zh]
    assert left == []


def test_overview_values_notes_and_assumptions_of_handcount_001_are_chinese():
    zh = render_context(report_of("handcount-001-transformer"), "markdown", lang="zh")
    overview = zh.split("\n## ", 1)[0]
    # the catalogue's translations (symtrans.po) of the overview's values
    assert "| 序列长度 L 的来源 | handcount-001-transformer 有文献记载的训练上下文 |" in overview
    assert (
        "| 计数复现 | 文章的手工计数：35,663,872 + 41,961,472 = 77,625,344（嵌入在编码器和解码器中各计一次） |"
        in overview
    )
    assert "| 结构类型 | 编码器-解码器 |" in overview
    published = zh.split("\n## 公布数字与精确计数", 1)[1].split("\n## ", 1)[0]
    for chinese in ("假设（文章的表格）", "笔误：", "与真实实现的差距", "示例演算（8 维"):
        assert chinese in published, chinese
    for english in ("Assumptions (the article's table)", "Gap to the real implementation", "Worked example"):
        assert english not in zh, english
    assert "Adam/AdamW 混合精度" in zh and "in mixed precision" not in zh  # the optimizer
    assert "一个请求在一个设备上" in zh  # the roofline's assumptions
    assert "NVIDIA H100 数据手册（SXM）" in zh  # the accelerators' sources
    # symtrans's remark on the article's tied output layer stands outside the article's words
    assert "= 16777216」 （共享权重，不重复计入） |" in zh


def test_a_config_reports_default_length_in_chinese(tmp_path):
    import json

    from report_outputs import resolve as resolve_path

    # Llama-3-8B's config.json shape with a made-up context: L falls back to symtrans's default 2,048
    cfg = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4}
    cfg |= {"num_hidden_layers": 2, "vocab_size": 100, "max_position_embeddings": 4096}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    zh = render_context(build_context(resolve_path(str(path))), "markdown", lang="zh")
    assert "symtrans 的默认值 2048 个 token（用 --seq-len 设置）；模型最多支持 L_max = 4,096" in zh
