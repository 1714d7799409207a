"""``symtrans report handcount-001-deployment`` (issue 23, build 6): article 001's whole
deployment section (「模型的算力要求計算方式」) as a report section, in Markdown and PDF.

Independent source: the article's own text (shared/seeds/001, the section that begins
「一般在模型部署時我們主要考慮四類資源」), each printed figure written out below as the article
prints it, and the exact figures as arithmetic on the article's model, 77,625,344 parameters
(the article's own count), fp16: weights 77,625,344 x 2 = 155,250,688 bytes; the KV cache of
one request 2 (K, V) x 6 decoder layers x 512 x 2 bytes x (512 target + 512 source tokens)
= 12,582,912 bytes; one 512 x 512 fp16 sequence 524,288 bytes.
"""

from __future__ import annotations

import re
import subprocess
from fractions import Fraction

import pytest

from symtrans.catalog import deploy_handcount as hc
from symtrans.cli.main import main

# Every figure the deployment section prints, as printed (the article's text, in order).
ARTICLE_FIGURES = [
    "155.2MB", "0.145GB",  # 模型參數顯存
    "3.14MB", "0.003GB",  # 運行時顯存
    "0.5MB", "0.0005GB",  # 輸入輸出顯存
    "× 1.2", "0.178GB", "0.18GB",  # 總顯存（含 20% 余量）
    "79,411,200,000", "79.41 TFLOPs",  # 推理 FLOPs
    "65×0.7", "1.74",  # T4
    "128×0.7", "89.6", "0.886",  # 含光 800
    "0.145×3", "0.435GB", "1GB",  # 主機內存, one request
    "100MB", "255MB", "0.25GB",  # 存儲
    "5%-10%", "1.1",  # the parallel overhead
    "0.545GB", "0.55GB",  # 100 requests on one card
    "0.003×50", "0.35GB", "0.7GB",  # two cards, 50 requests each
    "7941 TFLOPs", "7.94 PFLOPs",  # 總算力
    "1.74×1.1", "1.91", "100/1.91", "52",  # 耗時 and 吞吐量
    "1GB×100×1.2", "120GB",  # 主機內存, 100 requests
    "每批 20 條", "20GB",  # in batches of 20
]  # fmt: skip

W = 77_625_344 * 2  # fp16 weights, bytes
KV = 2 * 6 * 512 * 2 * (512 + 512)  # one request's KV cache, bytes
E = 512 * 512 * 2  # one fp16 sequence of d_model vectors, bytes
T4 = Fraction(65 * 10**12 * 7, 10)  # FLOP/s at 70%


def _whole(x: Fraction) -> str:
    """A byte count with a fractional margin, as the report shows it: whole bytes rounded up,
    the exact fraction beside them (issue 27.5: a byte count is an integer)."""
    return f"{-(-x.numerator // x.denominator):,} bytes (rounded up from {x.numerator:,}/{x.denominator:,})"


# The exact figures, written out: each (printed, exact as the report prints it).
EXACT = {
    # 3 x the weights (the article's own host-memory rule, applied once)
    "0.435GB": f"{3 * W:,} bytes",
    "1GB": f"{3 * W:,} bytes",
    "20GB": f"{3 * W:,} bytes",
    # (W + 50 x (KV + 2E)) x 1.1 per card, twice that on two cards
    "0.35GB": _whole((W + 50 * (KV + 2 * E)) * Fraction(11, 10)),
    "0.7GB": _whole(2 * (W + 50 * (KV + 2 * E)) * Fraction(11, 10)),
    # the single-request margin kept with the parallel overhead: 1.2 x 1.1
    "1.1": "x 1.32",
    # 100 requests / (100 x 2 x 77,600,000 x 512 / (65e12 x 0.7)) s
    "52 條/秒": f"{float(100 / (100 * 2 * 77_600_000 * 512 / T4)):,.1f} requests/s",
    "0.55GB": _whole((W + 100 * (KV + 2 * E)) * Fraction(11, 10)),
    # (W + KV + 2E) x 1.2 for one request: 168,882,176 x 6/5 = 202,658,611.2
    "0.18GB": _whole((W + KV + 2 * E) * Fraction(6, 5)),
    "155.2MB": f"{W:,} bytes",
    "3.14MB": f"{KV:,} bytes",
}
# The article's own arithmetic on its own inputs, as the report prints it (six digits).
ARTICLE_ARITHMETIC = {
    "0.35GB": "0.352 GB",  # (0.145 + 0.15 + 0.025) x 1.1
    "0.7GB": "0.704 GB",  # 2 x 0.352
    "0.435GB": "0.435 GB",  # 0.145 x 3
    "0.55GB": "0.5445 GB",  # (0.145 + 0.3 + 0.05) x 1.1
    "52 條/秒": "52.356 requests/s",  # 100 / 1.91
    "20GB": "20 GB",  # 1 x 20: its own x 1.2 would give 24
}
HANGUANG = "Hanguang 800's 128 TFLOPS fp16 is the article's own figure; we found no published source for it"


def _report(capsys, *argv) -> str:
    code = main(["report", "handcount-001-deployment", "--no-charts", *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def _section(text: str) -> str:
    i = text.index("## Article 001's deployment section")
    return text[i : text.index("\n## ", i + 5)]


def _flat(text: str) -> str:
    """Whitespace removed: pdftotext breaks lines and table cells where TeX set them."""
    return re.sub(r"\s+", "", text)


def test_markdown_lists_every_figure_of_the_section(capsys):
    s = _section(_report(capsys, "-o", "-", "--format", "markdown"))
    flat = _flat(s)
    for printed in ARTICLE_FIGURES:
        assert _flat(printed) in flat, printed
    for printed, exact in EXACT.items():
        assert "#### " in s and f": {printed}\n" in s
        assert exact in s, (printed, exact)
    rows = {line.split("|")[2].strip(): line for line in s.splitlines() if line.startswith("| 001-d")}
    for printed, article in ARTICLE_ARITHMETIC.items():
        assert f"| {article} |" in rows[printed], (printed, rows[printed])
    assert HANGUANG in s


def test_each_new_figure_names_its_slip():
    slip = {f.printed: f.slip for f in hc.figures()}
    assert "1.2 to 1.1" in slip["1.1"]  # the margin that changes
    assert "24GB" in slip["20GB"]  # 1 GB x 20 x 1.2 = 24, printed 20
    assert "allowance" in slip["1GB"] and "120GB" in slip["1GB"]  # the 1 GB the 120 GB multiplies
    assert "0.4338" in slip["0.435GB"]  # 3 x 155,250,688 / 2^30 = 0.43378
    assert round(3 * W / 2**30, 4) == 0.4338
    assert "1.91 s" in slip["52 條/秒"]


def test_pdf_lists_every_figure_of_the_section(capsys, tmp_path):
    import shutil

    if shutil.which("pdftotext") is None or shutil.which("latexmk") is None:
        from conftest import oracles_required

        if oracles_required():
            pytest.fail("pdftotext and latexmk are needed for the PDF test", pytrace=False)
        pytest.skip("pdftotext and latexmk are needed for the PDF test")
    path = tmp_path / "d.pdf"
    _report(capsys, "--format", "pdf", "-o", str(path))
    text = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout
    i = text.index("Article 001's deployment section")
    flat = _flat(text[i:])
    for printed in ARTICLE_FIGURES:
        assert _flat(printed) in flat, printed
    for printed, exact in EXACT.items():
        assert _flat(exact) in flat, (printed, exact)
    assert _flat(HANGUANG) in flat


def test_byte_counts_are_whole(capsys):
    # Issue 27.5: a byte count is an integer.  The article's x1.2 / x1.1 margins make fractions
    # (0.18GB's exact figure was printed "202,658,611.2 bytes"): each is shown as whole bytes,
    # rounded up, with the exact fraction beside it, and the two must agree.
    s = _section(_report(capsys, "-o", "-", "--format", "markdown"))
    assert not re.search(r"\d\.\d+ bytes", s)
    shown = re.findall(r"([\d,]+) bytes \(rounded up from ([\d,]+)/([\d,]+)\)", s)
    assert len(shown) >= 4  # 0.18GB, 0.55GB, 0.35GB and 0.7GB carry a margin
    for whole, num, den in shown:
        exact = Fraction(int(num.replace(",", "")), int(den.replace(",", "")))
        assert exact.denominator != 1 and int(whole.replace(",", "")) == -(-exact.numerator // exact.denominator)
    # 0.18GB: (155,250,688 + 12,582,912 + 1,048,576) x 6/5 = 1,013,293,056 / 5 = 202,658,611.2
    assert "202,658,612 bytes (rounded up from 1,013,293,056/5)" in s
