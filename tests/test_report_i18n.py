"""Reports in Chinese (tracker issue 13, item 2): gettext catalogs made with Babel, printed
through Jinja2's i18n extension.

The fixed text (headings, legend, notes, the hand-count comparison) is translated; the
numbers, formulas and sources are the same as in English, which is what these tests
check, for every preset.  The catalog itself is checked against Babel's reading of the
``.po`` file: the shipped ``.mo`` is that file compiled, every translation keeps its
message's placeholders, and every message a report prints has a translation.
"""

from __future__ import annotations

import dataclasses
import gettext
import re
from collections import Counter

import pytest
from conftest import require
from report_outputs import markdown_numbers, report_of

from symtrans.base.escape import markdown_escape
from symtrans.catalog import presets
from symtrans.catalog.resolve import Resolved, resolve
from symtrans.render.report import build_context, doc, i18n, render, render_context

babel = require("babel")  # Babel (the extra 'test') reads the .po catalogs
from babel.messages.pofile import read_po  # noqa: E402

PO = i18n.LOCALE_DIR / "zh" / "LC_MESSAGES" / "symtrans.po"
MO = i18n.LOCALE_DIR / "zh" / "LC_MESSAGES" / "symtrans.mo"
HAND_COUNTS = [n for n, p in presets.PRESETS.items() if p.kind != "model"]


@pytest.fixture(scope="module")
def catalog():
    with open(PO, "rb") as f:
        return read_po(f)


def test_the_shipped_mo_is_the_compiled_po(catalog):
    with open(MO, "rb") as f:
        mo = gettext.GNUTranslations(f)
    compiled = {k: v for k, v in mo._catalog.items() if k}  # the "" entry is the header
    assert compiled == {m.id: m.string for m in catalog if m.id}, "recompile: pybabel compile -d ... -D symtrans"


def test_every_translation_keeps_its_placeholders(catalog):
    for m in catalog:
        if not m.id:
            continue
        assert m.string and not m.fuzzy, m.id
        assert sorted(re.findall(r"\{\w+\}", m.id)) == sorted(re.findall(r"\{\w+\}", m.string)), m.id


def _messages(obj, out: set) -> None:
    if isinstance(obj, doc.Msg):
        out.add(obj.msgid)
        for v in obj.args.values():
            _messages(v, out)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _messages(v, out)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            _messages(getattr(obj, f.name), out)


def test_every_message_a_report_prints_has_a_translation(catalog):
    from symtrans.engine.spec import Spec
    from symtrans.engine.symbols import LEGEND
    from symtrans.render import plots
    from symtrans.render.report.handcount_section import _VERDICTS

    used: set[str] = set()
    reports = [report_of(n) for n in presets.PRESETS]
    no_length = Spec(family="decoder-only", sizes=dict(d_model=64, d_ff=256, h=4, N=2, V=100), bias=False)
    reports.append(build_context(Resolved(name="tiny", spec=no_length)))
    charts = build_context(resolve("gpt2"))
    plots.add_chart_section(charts, resolve("gpt2"), None, "html")  # "give an output file"
    reports.append(charts)
    for r in reports:
        _messages([r.title, r.subject, r.footer], used)
        for s in r.sections:
            _messages([s.title, s.blocks], used)
    used |= {info.meaning for info in LEGEND.values()} | {info.unit for info in LEGEND.values()}
    used |= set(_VERDICTS.values()) | set(plots.CHART_TITLES.values())
    used |= {"Charts need matplotlib; install it with {command}", "by {author}"}
    translated = {m.id for m in catalog if m.id and m.string}
    assert len(used) > 150
    assert sorted(used - translated) == []


@pytest.mark.parametrize("name", list(presets.PRESETS))
def test_chinese_report_has_the_english_numbers_formulas_and_sources(name):
    report = report_of(name)
    en = render_context(report, "markdown", lang="en")
    zh = render_context(report, "markdown", lang="zh")
    assert en != zh
    assert markdown_numbers(en) == markdown_numbers(zh)

    def math(text: str) -> Counter:
        return Counter(re.findall(r"\$\$.*?\$\$|\$[^$\n]+\$", text, flags=re.S))

    assert math(en) == math(zh) and sum(math(en).values()) > 50
    preset = presets.PRESETS[name]
    from symtrans.engine.architectures import build

    # the sources of the parameter derivation's steps (those holding parameters): the same text
    sources = {step.source for _, _, step in build(preset.spec).walk() if step.source and step.params != 0}
    for source in sources:
        assert markdown_escape(source) in en and markdown_escape(source) in zh, source
    # the preset's notes and reference are prose: English in English, the catalog's Chinese in
    # Chinese (issue 25.9), each with the same numbers (checked above for the whole report)
    zh_catalog = i18n.translations("zh")
    for text in {preset.reference, *preset.notes}:
        assert markdown_escape(text) in en, text
        translated = zh_catalog.gettext(text)
        assert markdown_escape(translated) in zh, text
        if translated != text:  # a class name ("transformers GPT2LMHeadModel") reads the same in both
            assert markdown_escape(text) not in zh, text


def test_chinese_headings_legend_and_comparison():
    zh = render(resolve("handcount-003-bert-base"), "markdown", lang="zh")
    for text in (
        "## 符号",
        "## 参数分解",
        "## 推导",
        "## 文章数字与精确计数",
        "| 文章原文 |",
        "模型（残差流）宽度",
        "原文未署名作者",
    ):
        assert text in zh, text
    # the article's slip, translated, with the difference worked out by hand:
    # 2,359,296 x 2 + 3,072 + 768 = 4,722,432, printed 4,721,856
    assert 2_359_296 * 2 + 3_072 + 768 - 4_721_856 == 576
    assert "| 4,721,856 | 4,722,432 | 笔误：精确计数相差 +576 |" in zh


def test_html_declares_the_language():
    assert '<html lang="zh-Hans">' in render(resolve("gpt2"), "html", lang="zh")
    assert '<html lang="en">' in render(resolve("gpt2"), "html")


@pytest.mark.parametrize("name", HAND_COUNTS)
def test_lang_auto_writes_a_hand_count_in_its_article_language(name):
    assert "## 符号" in render(resolve(name), "markdown", lang="auto")


def test_lang_auto_keeps_english_for_models():
    assert "## Symbols" in render(resolve("gpt2"), "markdown", lang="auto")


def test_unsupported_language_is_one_line_and_exit_2(capsys, tmp_path):
    from symtrans.cli.main import main

    out = tmp_path / "r.md"
    assert main(["report", "gpt2", "--lang", "fr", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--lang" in err and "'zh'" in err
    assert not out.exists()
    with pytest.raises(ValueError, match="no message catalog"):
        render(resolve("gpt2"), "markdown", lang="fr")


def test_the_package_data_ships_the_catalogs_and_writers():
    # pip installs what [tool.setuptools.package-data] names (checked by building a wheel
    # once by hand: unzip -l shows locale/zh/LC_MESSAGES/symtrans.mo and templates/*.j2).
    import fnmatch
    from pathlib import Path

    tomllib = require("tomllib")  # Python 3.11+ reads pyproject.toml

    root = Path(__file__).resolve().parents[1]
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = data["tool"]["setuptools"]["package-data"]["symtrans.render.report"]
    package = root / "symtrans" / "render" / "report"
    needed = [MO, PO, *sorted((package / "templates").glob("*.j2"))]
    for path in needed:
        rel = path.relative_to(package).as_posix()
        assert any(fnmatch.fnmatch(rel, p) for p in patterns), rel
