"""PDF reports for people (tracker issue 13, items 1 and 5): any script, print quality.

* Every preset's PDF builds with no overfull box over 1 pt (read from TeX's log), carries
  its title and model in the PDF metadata (hyperref; read back with poppler's
  ``pdfinfo``), and ``pdftotext`` finds no ``[U+`` placeholder in it.
* Text plain pdflatex cannot set is built with XeLaTeX: a Polish title, and the Chinese
  report of a hand count with a Chinese title, come back from ``pdftotext`` character
  for character.
* A character no installed font covers is refused in one line naming it (exit 2); a
  missing engine or font names the Debian package to install.

TeX and poppler are installed by .ci/run; elsewhere a missing tool skips these tests
(naming its package), in CI (``CI=true``) it fails them.
"""

from __future__ import annotations

import html
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest
from report_outputs import need_tool

from symtrans.catalog import presets
from symtrans.catalog.resolve import resolve
from symtrans.render.report import MissingFontError, TeXNotFoundError, render, render_context
from symtrans.render.report import pdf as pdf_module
from symtrans.render.report.pdf import build_pdf_and_log, overfull_boxes

NAMES = list(presets.PRESETS)


def _tools() -> None:
    need_tool("latexmk", "latexmk")
    need_tool("xelatex", "texlive-xetex")
    need_tool("pdftotext", "poppler-utils")
    need_tool("pdfinfo", "poppler-utils")


def _text(pdf: bytes, tmp_path, name: str = "r") -> str:
    path = tmp_path / f"{name}.pdf"
    path.write_bytes(pdf)
    return subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout


def _info(pdf: bytes, tmp_path) -> dict[str, str]:
    path = tmp_path / "info.pdf"
    path.write_bytes(pdf)
    out = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in out.splitlines())}


@pytest.fixture(scope="module")
def gallery_pdfs():
    """Every preset's PDF and TeX log, built two at a time (the gallery's PDFs)."""
    _tools()
    from report_outputs import report_of

    sources = {n: render_context(report_of(n), "latex") for n in NAMES}
    with ThreadPoolExecutor(max_workers=2) as pool:
        built = dict(zip(NAMES, pool.map(lambda n: build_pdf_and_log(sources[n]), NAMES)))
    return built


@pytest.mark.parametrize("name", NAMES)
def test_gallery_pdf_has_no_overfull_box_over_1pt(gallery_pdfs, name):
    _, log = gallery_pdfs[name]
    assert overfull_boxes(log, tolerance=1.0) == []


@pytest.mark.parametrize("name", NAMES)
def test_gallery_pdf_metadata_names_the_title_and_model(gallery_pdfs, name, tmp_path):
    pdf, _ = gallery_pdfs[name]
    info = _info(pdf, tmp_path)
    assert info["Title"] == f"{name}: parameters and forward FLOPs"
    assert name in info["Subject"]
    assert "[U+" not in _text(pdf, tmp_path)


def test_overfull_boxes_are_read_from_the_log():
    log = (
        "Overfull \\hbox (14.45265pt too wide) in alignment at lines 278--291\nOverfull \\hbox (0.5pt too wide) in x\n"
    )
    assert overfull_boxes(log, tolerance=1.0) == [(14.45265, "in alignment at lines 278--291")]


def test_polish_title_renders(tmp_path):
    _tools()
    title = "Zażółć gęślą jaźń"
    tex = render(resolve("gpt2"), "latex", title=title)
    assert pdf_module.engine(tex) == "xelatex"  # OT1 pdflatex has no ogonek
    pdf, log = build_pdf_and_log(tex)
    text = _text(pdf, tmp_path)
    assert title in text and "[U+" not in text
    assert _info(pdf, tmp_path)["Title"] == title
    assert overfull_boxes(log, tolerance=1.0) == []


def test_a_title_is_printed_literally(tmp_path):
    """A user's title is text, never symbols (a new user's finding: "a_b" was set as a subscript,
    "«q»" as much-less/much-greater signs, and in HTML "$x_1$" kept its dollars around MathML).
    The PDF's text and the HTML heading must read back as the characters typed."""
    _tools()
    title = "a_b x_1 «q» ‹r› $x_1$ 50%"
    resolved = resolve("gpt2")
    tex = render(resolved, "latex", title=title)
    assert "\\ensuremath{\\ll}" not in tex and "\\ensuremath{a_{b}}" not in tex
    assert pdf_module.engine(tex) == "xelatex"  # OT1 pdflatex has no guillemets
    pdf, _ = build_pdf_and_log(tex)
    assert title in _text(pdf, tmp_path)
    assert _info(pdf, tmp_path)["Title"] == title
    page = render(resolved, "html", title=title)
    assert f"<h1>{html.escape(title, quote=True)}</h1>" in page


def test_chinese_report_with_a_chinese_title_renders(tmp_path):
    _tools()
    need_tool("fc-list", "fontconfig")
    title = "Transformer 参数量（文章 001）"
    tex = render(resolve("handcount-001-transformer"), "latex", title=title, lang="zh")
    pdf, log = build_pdf_and_log(tex)
    text = _text(pdf, tmp_path)
    assert "[U+" not in text
    for chars in (title, "文章数字与精确计数", "参数分解", "大模型-Transformer（解碼器層）"):
        assert chars in text, chars
    assert "77,625,344" in text  # the article's total, 35,663,872 + 41,961,472, exact under its assumptions
    assert _info(pdf, tmp_path)["Title"] == title
    assert overfull_boxes(log, tolerance=1.0) == []


def test_hand_count_pdf_cites_the_article_and_has_its_figures(gallery_pdfs, tmp_path):
    pdf, _ = gallery_pdfs["handcount-003-bert-base"]
    text = " ".join(_text(pdf, tmp_path).split())
    assert "Transformer模型参数解析" in text and "author not named in the text" in text
    assert "seeds/" not in text  # cited by title, not by a path outside the repository
    # 003-6, written out by hand: 2,359,296 x 2 + 3,072 + 768 = 4,722,432, printed 4,721,856
    path = tmp_path / "layout.pdf"
    path.write_bytes(pdf)
    layout = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True).stdout
    row = next(line for line in layout.splitlines() if line.lstrip().startswith("003-6"))
    assert re.search(r"4,721,856\s+4,722,432\s+slip: the exact count is", row), row


def test_a_character_no_font_has_is_refused_in_one_line(tmp_path, capsys):
    _tools()
    from symtrans.cli.main import main

    out = tmp_path / "r.pdf"
    assert main(["report", "gpt2", "--no-charts", "--title", "runes ᚠᚢ", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "U+16A0" in err and "RUNIC LETTER FEHU" in err
    assert not out.exists()


def test_missing_xelatex_names_the_debian_package(monkeypatch):
    real = pdf_module.shutil.which
    monkeypatch.setattr(pdf_module.shutil, "which", lambda name: None if name == "xelatex" else real(name))
    with pytest.raises(TeXNotFoundError, match="texlive-xetex"):
        pdf_module.build_pdf(render(resolve("gpt2"), "latex", title="Zażółć"))


def test_missing_fonts_and_packages_name_their_debian_package():
    # TeX's own messages for a missing font or package, as XeLaTeX and LaTeX print them.
    font = pdf_module._known_failure('! Package fontspec Error: The font "Noto Serif CJK SC" cannot be found.')
    assert isinstance(font, MissingFontError) and "fonts-noto-cjk" in str(font)
    pzdr = pdf_module._known_failure(r"! Font \XeTeXLink@font=pzdr at 0.00002pt not loadable: Metric (TFM) file")
    assert isinstance(pzdr, TeXNotFoundError) and "texlive-fonts-recommended" in str(pzdr)
    assert pdf_module._known_failure("! LaTeX Error: File `undefined-thing.sty' not found.") is None


def test_without_latexmk_the_engine_runs_until_nothing_asks_for_a_rerun(monkeypatch, tmp_path):
    # gpt2's report has longtables and hyperref outlines: its first pdflatex run warns
    # "Table widths have changed. Rerun LaTeX." and "Rerun to get outlines right"; the
    # second finds the widths and outlines of the first in its .aux/.out and asks for
    # nothing, so two runs make the PDF (latexmk runs the same two).  Every run's log
    # loads the package rerunfilecheck, which is no request for a rerun.
    _tools()
    real_which, real_run = pdf_module.shutil.which, pdf_module._run
    runs = []

    def run(cmd, *args, **kwargs):
        runs.append(cmd[0])
        return real_run(cmd, *args, **kwargs)

    monkeypatch.setattr(pdf_module.shutil, "which", lambda name: None if name == "latexmk" else real_which(name))
    monkeypatch.setattr(pdf_module, "_run", run)
    data = pdf_module.build_pdf(render(resolve("gpt2"), "latex"))
    assert len(runs) == 2 and all(r.endswith("pdflatex") for r in runs)
    assert "Shape walk" in _text(data, tmp_path)
