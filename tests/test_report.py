"""Derivation reports (Markdown, LaTeX, PDF) and atomic output.

Every expected number comes from outside the code under test: a reference
implementation's parameter count, a paper's figure, or arithmetic written out here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from decimal import Decimal

import jinja2
import pytest

from symtrans.base.atomic import write_atomic
from symtrans.catalog import presets
from symtrans.catalog.resolve import Resolved, resolve
from symtrans.engine.conventions import CONVENTIONS
from symtrans.render.report import (
    FLOP_CONVENTION,
    PDFBuildError,
    TeXNotFoundError,
    add_section,
    build_context,
    build_pdf,
    doc,
    make_environment,
    mathfmt,
    render,
    render_context,
)
from symtrans.render.report import pdf as pdf_module

needs_latexmk = pytest.mark.skipif(shutil.which("latexmk") is None, reason="latexmk is not installed")
needs_pdftotext = pytest.mark.skipif(
    shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) is not installed"
)

# Hugging Face GPT2LMHeadModel (gpt2): sum(p.numel() for p in model.parameters()).
GPT2_PARAMS = 124_439_808
# torch.nn.Transformer(512, 8, 6, 6, 2048) has 44,140,544 parameters; add one shared
# 37000 x 512 embedding (tied to the output projection).
TRANSFORMER_BASE_PARAMS = 44_140_544 + 37000 * 512
# Mixtral-8x7B (MixtralForCausalLM): 46,702,792,704 parameters; per token 6 of the 8 experts
# (3 matrices of 4096 x 14336 each) in each of 32 layers are idle.
MIXTRAL_PARAMS = 46_702_792_704
MIXTRAL_ACTIVE = MIXTRAL_PARAMS - 32 * (8 - 2) * 3 * 4096 * 14336


def gpt2_forward_flops(B: int, L: int) -> int:
    """2 FLOPs per multiply-accumulate over the matmuls of GPT-2 small (d 768, d_ff 3072,
    12 layers, V 50257): per layer Q, K, V, O (4 d^2 weights), QK^T and AV (2 L d each per
    token), the MLP (2 d d_ff), then the tied LM head (V d); written out by hand."""
    d, ff, n, V = 768, 3072, 12, 50257
    per_layer = 2 * B * L * (4 * d * d) + 2 * 2 * B * L * L * d + 2 * B * L * (2 * d * ff)
    return n * per_layer + 2 * B * L * V * d


def _section(md: str, heading: str) -> str:
    start = md.index(f"## {heading}\n")
    nxt = md.find("\n## ", start + 1)
    return md[start : nxt if nxt != -1 else len(md)]


def _table_rows(section: str) -> list[list[str]]:
    rows = []
    for line in section.splitlines():
        if line.startswith("| ") and not line.startswith("| component") and not line.startswith("| **total"):
            rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


@pytest.fixture(scope="module")
def gpt2_md():
    return render(resolve("gpt2"), "markdown")


@pytest.fixture(scope="module")
def gpt2_tex():
    return render(resolve("gpt2"), "latex")


# -- exact counts and published figures -------------------------------------------------


def test_gpt2_exact_count_and_published_figure(gpt2_md, gpt2_tex):
    for text in (gpt2_md, gpt2_tex):
        assert "124,439,808" in text and f"{GPT2_PARAMS:,}" == "124,439,808"
        assert "117M" in text  # Radford et al. 2019, Table 2
        assert "124,439,808 (124.4M)" in text
    # the difference to the published figure, worked out by hand
    assert GPT2_PARAMS - 117_000_000 == 7_439_808 and "7,439,808 parameters above" in gpt2_md
    assert presets.PRESETS["gpt2"].notes[0] in gpt2_md


def test_transformer_base_exact_count_and_published_figure():
    assert TRANSFORMER_BASE_PARAMS == 63_084_544
    for fmt in ("markdown", "latex"):
        text = render(resolve("transformer-base"), fmt)
        assert "63,084,544" in text
        assert "65M" in text  # Vaswani et al. 2017, Table 3


def test_mixture_of_experts_shows_active_parameters():
    md = render(resolve("mixtral-8x7b"), "markdown")
    assert f"{MIXTRAL_PARAMS:,}" in md
    assert MIXTRAL_ACTIVE == 12_879_925_248
    assert f"active parameters per token | **{MIXTRAL_ACTIVE:,} (12.88B)**" in md
    assert "Active parameters per token of the whole model" in md
    # a dense model has no active-parameter lines
    assert "active parameters" not in render(resolve("gpt2"), "markdown").lower()


# -- derivation lines: formula = substitution = value --------------------------------------


def test_derivation_line_shows_the_unevaluated_substitution(gpt2_md, gpt2_tex):
    assert 768 * 768 == 589_824
    line = next(x for x in gpt2_md.splitlines() if x.startswith("- **W_Q**"))
    assert r"$d_{\mathrm{model}}^{2} = 768 \cdot 768 = 589{,}824$" in line
    assert "query projection" in line and "Vaswani et al. 2017" in line  # note and source
    # LaTeX: the same line, and the label's subscript set in math (no literal underscore)
    assert r"\textbf{\ensuremath{W_{Q}}}: $d_{\mathrm{model}}^{2} = 768 \cdot 768 = 589{,}824$" in gpt2_tex
    assert 3072 * 768 == 2_359_296
    assert r"d_{\mathrm{ff}} d_{\mathrm{model}} = 3072 \cdot 768 = 2{,}359{,}296" in gpt2_md


def test_substitution_keeps_equal_numbers_apart():
    # Cross-attention scores multiply L_tgt by L_src; at 512 each they must print as
    # 512 . 512, not be merged into 512^2 (the substitution is not evaluated).
    md = render(resolve("transformer-base"), "markdown")
    assert r"4 B L_{\mathrm{src}} L_{\mathrm{tgt}} d_{\mathrm{model}}" in md
    assert r"4 \cdot 1 \cdot 512 \cdot 512 \cdot 512" in md
    assert "512^{" not in md


def _safe_eval(text: str) -> int:
    """Evaluate +, -, *, / and ** on integers exactly (the plain substitution of a line)."""
    import ast
    from fractions import Fraction

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return Fraction(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            ops = {
                ast.Add: lambda: a + b,
                ast.Sub: lambda: a - b,
                ast.Mult: lambda: a * b,
                ast.Div: lambda: a / b,
                ast.Pow: lambda: a ** int(b),
            }
            return ops[type(node.op)]()
        raise ValueError(ast.dump(node))

    value = ev(ast.parse(text, mode="eval"))
    assert value.denominator == 1
    return int(value)


@pytest.mark.parametrize("name", ["gpt2", "transformer-base", "mixtral-8x7b", "qwen3-0.6b", "t5-small", "bert-base"])
def test_every_substitution_evaluates_to_its_value(name):
    import dataclasses

    def equations(obj):
        if isinstance(obj, mathfmt.Equation):
            yield obj
        elif dataclasses.is_dataclass(obj):
            for f in dataclasses.fields(obj):
                yield from equations(getattr(obj, f.name))
        elif isinstance(obj, (list, tuple)):
            for v in obj:
                yield from equations(v)

    found = 0
    for section in build_context(resolve(name)).sections:
        for eq in equations(section.blocks):
            if eq.check is not None and "floor" not in eq.check:
                assert _safe_eval(eq.check) == eq.value, eq.check
                found += 1
    assert found > 10


# -- closed forms, breakdown, legend, notes -----------------------------------------------


def test_closed_forms_per_layer_and_whole_model(gpt2_md):
    cf = _section(gpt2_md, "Closed forms")
    # one GPT-2 layer: 4 d^2 + 4 d (attention) + 2 d d_ff + d_ff + d (MLP) + 4 d (two LayerNorms)
    d, ff = 768, 3072
    per_layer = 4 * d * d + 4 * d + 2 * d * ff + ff + d + 4 * d
    assert f"{per_layer:,}".replace(",", "{,}") in cf
    assert "Parameters per decoder layer" in cf and r"$N = 12$" in cf
    assert "Parameters of the whole model" in cf and "124{,}439{,}808" in cf


@pytest.mark.parametrize("name", ["gpt2", "transformer-base", "mixtral-8x7b", "bert-base", "t5-base"])
def test_breakdown_shares_sum_to_100_percent_and_counts_to_the_total(name):
    md = render(resolve(name), "markdown")
    rows = _table_rows(_section(md, "Parameter breakdown"))
    assert len(rows) >= 3
    shares = [Decimal(r[2].rstrip("%")) for r in rows]
    assert sum(shares) == Decimal("100.00")
    total = int(
        re.search(r"\| \*\*total\*\* \| \*\*([0-9,]+)\*\*", _section(md, "Parameter breakdown"))
        .group(1)
        .replace(",", "")
    )
    assert sum(int(r[1].replace(",", "")) for r in rows) == total


def test_percent_shares_round_to_exactly_100():
    assert mathfmt.percent_shares([1, 1, 1]) == ["33.34", "33.33", "33.33"]
    assert mathfmt.percent_shares([0, 0]) == ["0.00", "0.00"]
    assert mathfmt.percent_shares([3, 1]) == ["75.00", "25.00"]


def test_legend_lists_only_the_symbols_used(gpt2_md):
    legend = _section(gpt2_md, "Symbols")
    for sym, meaning in (
        (r"$d_{\mathrm{model}}$", "width"),
        ("$V$", "vocabulary"),
        ("$N$", "layers"),
        ("$L$", "sequence"),
    ):
        assert any(line.startswith(f"| {sym} |") and meaning in line for line in legend.splitlines()), sym
    assert r"h_{\mathrm{kv}}" not in legend and "$E$" not in legend  # GPT-2 has neither GQA nor experts


def test_assumptions_list_the_resolved_notes():
    res = resolve("gpt2", ["N=2"])
    md = render(res, "markdown")
    assert "--set N=2" in _section(md, "Assumptions")
    # 10 fewer layers of 7,087,872 parameters each (see test_closed_forms_per_layer_and_whole_model)
    assert f"{GPT2_PARAMS - 10 * 7_087_872:,}" in md


def test_numbers_are_exact_with_thousands_separators_and_si_prefixes(gpt2_md):
    assert not re.search(r"\d\.\d+e[+-]?\d", gpt2_md)  # no float notation anywhere
    assert mathfmt.count(GPT2_PARAMS) == "124,439,808 (124.4M)"
    assert mathfmt.si(MIXTRAL_PARAMS) == "46.7G"  # SI giga, not "B"
    assert mathfmt.si(1_398_441_351_577_600) == "1.398P"
    assert mathfmt.si(12_345) == "12.35k"
    assert mathfmt.si(999_960_000) == "1G"
    assert mathfmt.count(999) == "999"


# -- FLOPs ------------------------------------------------------------------------------


def test_flops_section_names_the_convention_and_matches_hand_arithmetic(gpt2_md):
    fl = _section(gpt2_md, "Forward FLOPs")
    assert "2 FLOPs per multiply-accumulate, matrix products only (bias adds, softmax, norms" in fl
    assert FLOP_CONVENTION in fl and FLOP_CONVENTION == CONVENTIONS["flops"].description  # one sentence, one place
    assert f"{gpt2_forward_flops(1, 1024):,}" in fl  # B = 1, L = the model's 1024
    assert "Forward FLOPs of the whole model" in fl and "Forward FLOPs per decoder layer" in fl


def test_flops_at_another_batch_and_length():
    md = render(resolve("gpt2"), "markdown", batch=4, seq_len=128)
    assert f"{gpt2_forward_flops(4, 128):,}" in md
    assert "$B = 4$" in md and "$L = 128$" in md
    assert "124,439,808" in md  # parameters still use the model's L = 1024 positions


def test_encoder_decoder_flops_use_equal_source_and_target_lengths():
    md = render(resolve("transformer-base"), "markdown", seq_len=64)
    assert r"$L_{\mathrm{src}} = 64$" in md and r"$L_{\mathrm{tgt}} = 64$" in md


def test_sinusoidal_positions_show_both_formulas():
    md = render(resolve("transformer-base"), "markdown")
    assert r"\sin{\left(\frac{\mathit{pos}}{10000^{\frac{2 i}{d_{\mathrm{model}}}}} \right)}" in md
    assert r"\cos{\left(\frac{\mathit{pos}}{10000^{\frac{2 i}{d_{\mathrm{model}}}}} \right)}" in md
    assert r"\operatorname{PE}{\left(\mathit{pos},2 i + 1 \right)}" in md
    assert "Sinusoidal positions" not in render(resolve("gpt2"), "markdown")


# -- API behaviour ------------------------------------------------------------------------


def test_bad_arguments_raise_value_error():
    res = resolve("gpt2")
    with pytest.raises(ValueError, match="format"):
        render(res, "docx")
    with pytest.raises(ValueError, match="language"):
        render(res, "markdown", lang="fr")
    with pytest.raises(ValueError, match="batch"):
        render(res, "markdown", batch=0)
    with pytest.raises(ValueError, match="seq_len"):
        render(res, "markdown", seq_len=-1)


def test_environment_factory_makes_new_strict_environments():
    a, b = make_environment("latex"), make_environment("latex")
    assert a is not b
    assert a.undefined is jinja2.StrictUndefined
    assert a.variable_start_string == r"\VAR{"


def test_strict_undefined_raises_on_a_missing_model_field():
    from types import SimpleNamespace

    report = build_context(resolve("gpt2"))
    report.sections[1].blocks.append(SimpleNamespace(kind="para"))  # a paragraph without its runs
    for fmt in ("markdown", "latex", "html"):
        with pytest.raises(jinja2.UndefinedError):
            render_context(report, fmt)


def test_sections_can_be_appended():
    report = build_context(resolve("gpt2"))
    section = doc.Section("extra", doc.runs("Extra section"), [doc.Bullets((doc.runs("an appended note"),))])
    add_section(report, section, after="legend")
    md = render_context(report, "markdown")
    assert md.index("## Symbols") < md.index("## Extra section") < md.index("## Published figure")
    assert "- an appended note" in md
    html = render_context(report, "html")
    assert '<section id="extra">' in html and "<li>an appended note</li>" in html


def test_resolved_without_preset_has_no_published_section():
    spec = presets.PRESETS["gpt2"].spec
    md = render(Resolved(name="custom", spec=spec), "markdown")
    assert "## Published figure" not in md and "124,439,808" in md


# -- PDF ------------------------------------------------------------------------------------


@needs_latexmk
@needs_pdftotext
def test_pdf_contains_the_derivation(tmp_path, gpt2_tex):
    data = build_pdf(gpt2_tex)
    assert data.startswith(b"%PDF")
    path = tmp_path / "gpt2.pdf"
    path.write_bytes(data)
    text = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout
    flat = re.sub(r"\s+", " ", text)
    assert "124,439,808" in flat
    assert "768 · 768 = 589,824" in flat


@needs_latexmk
def test_pdf_build_is_reproducible():
    src = r"\documentclass{article}\ifdefined\pdftrailerid\pdftrailerid{}\fi\begin{document}x\end{document}"
    assert build_pdf(src) == build_pdf(src)


@needs_latexmk
def test_pdf_build_reports_the_tex_error():
    with pytest.raises(PDFBuildError, match="Undefined control sequence"):
        build_pdf(r"\documentclass{article}\begin{document}\nosuchcommand\end{document}")


@needs_latexmk
def test_pdf_build_has_no_shell_escape(tmp_path):
    marker = tmp_path / "shell-escape-ran"
    build_pdf(r"\documentclass{article}\begin{document}x\immediate\write18{touch " + str(marker) + r"}\end{document}")
    assert not marker.exists()


@needs_latexmk
def test_pdf_build_stops_at_the_time_limit():
    with pytest.raises(PDFBuildError, match="longer than"):
        build_pdf(r"\documentclass{article}\begin{document}\loop\iftrue\repeat\end{document}", timeout=3)


def test_missing_tex_names_the_debian_packages(monkeypatch):
    monkeypatch.setattr(pdf_module.shutil, "which", lambda name: None)
    with pytest.raises(TeXNotFoundError) as e:
        build_pdf("irrelevant")
    for package in ("texlive-latex-base", "texlive-latex-recommended", "latexmk"):
        assert package in str(e.value)


# -- atomic output ------------------------------------------------------------------------


def test_write_atomic_writes_text_and_bytes(tmp_path):
    p = tmp_path / "out.md"
    write_atomic(p, "héllo\n")
    assert p.read_text(encoding="utf-8") == "héllo\n"
    write_atomic(p, b"%PDF")
    assert p.read_bytes() == b"%PDF"
    assert os.listdir(tmp_path) == ["out.md"]


def test_write_atomic_keeps_the_earlier_file_when_the_write_fails(tmp_path, monkeypatch):
    p = tmp_path / "report.md"
    p.write_text("earlier")

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="report.md"):
        write_atomic(p, "new content")
    assert p.read_text() == "earlier"
    assert os.listdir(tmp_path) == ["report.md"]  # no temporary file left behind


def test_write_atomic_keeps_the_earlier_file_when_the_rename_fails(tmp_path, monkeypatch):
    p = tmp_path / "report.tex"
    p.write_text("earlier")
    monkeypatch.setattr(os, "replace", lambda a, b: (_ for _ in ()).throw(PermissionError(13, "denied")))
    with pytest.raises(PermissionError):
        write_atomic(p, "new")
    assert p.read_text() == "earlier" and os.listdir(tmp_path) == ["report.tex"]


def test_write_atomic_rejects_directories_and_missing_directories(tmp_path):
    with pytest.raises(IsADirectoryError, match="is a directory"):
        write_atomic(tmp_path, "x")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_atomic(tmp_path / "no" / "such" / "file.md", "x")
    with pytest.raises(ValueError, match="empty"):
        write_atomic("", "x")


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write into read-only directories")
def test_write_atomic_unwritable_directory(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o555)
    try:
        with pytest.raises(PermissionError, match="not writable"):
            write_atomic(d / "x.md", "x")
    finally:
        d.chmod(0o755)


def test_model_without_a_length_still_reports_parameters_and_symbolic_flops():
    from symtrans.engine.spec import Spec

    spec = Spec(
        family="decoder-only",
        sizes=dict(d_model=64, d_ff=256, h=4, N=2, V=100),
        positional="rotary",
        norm="rmsnorm",
        bias=False,
    )
    # by hand: embeddings 100*64; per layer 4*64*64 (attention) + 2*64*256 (MLP) + 2*64 (norms); tied head
    expected = 100 * 64 + 2 * (4 * 64 * 64 + 2 * 64 * 256 + 2 * 64)
    md = render(Resolved(name="tiny", spec=spec), "markdown")
    assert f"**{expected:,}" in md
    assert "No values: the model sets no sequence length L" in md
    assert (
        f"{2 * 1 * 16 * (4 * 64 * 64 + 2 * 64 * 256) * 2 + 2 * 1 * 2 * 16 * 16 * 64 * 2 + 2 * 1 * 16 * 100 * 64:,}"
        in render(Resolved(name="tiny", spec=spec), "markdown", seq_len=16)
    )


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_pdflatex_fallback_without_latexmk(monkeypatch):
    real_which = shutil.which
    monkeypatch.setattr(pdf_module.shutil, "which", lambda name: None if name == "latexmk" else real_which(name))
    data = build_pdf(render(resolve("gpt2"), "latex"))
    assert data.startswith(b"%PDF")
