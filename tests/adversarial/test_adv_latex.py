"""Adversarial LaTeX: hostile titles and model names (issue 6, item 3, "LaTeX").

Titles (``--title``) and model names (a config file's NAME, which becomes the default
title) holding ``\\input``, ``\\write18``, ``\\catcode``, ``^^5c``, unbalanced braces,
``%`` and TeX's other special characters must render *literally*: the command succeeds,
the ``.tex`` holds them only in escaped form, and the PDF text (read back with poppler's
``pdftotext``) shows them character for character.  PDF builds run with shell escape
off, in a temporary directory, under a time limit; without TeX, ``report --format pdf``
fails with one clear line (exit 2) and writes nothing.

The expected escaped forms are written out by hand below from TeX's rules (The TeXbook,
ch. 7-8: ``\\ { } $ & # ^ _ ~ %`` are special; ``^^5c`` is the character ``\\``), not
taken from ``symtrans.base.escape``.  The PDF tests skip where latexmk or pdftotext
is absent; CI (.ci/run) installs both.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unicodedata

import pytest
from conftest import run_subprocess  # noqa: E402

needs_tex = pytest.mark.skipif(
    shutil.which("latexmk") is None and shutil.which("pdflatex") is None or shutil.which("pdftotext") is None,
    reason="TeX (latexmk or pdflatex) and pdftotext are needed for PDF tests",
)

HOSTILE_TITLES = [
    r"\input{/etc/passwd}",
    r"\immediate\write18{touch pwned}",
    r"\write18{rm -rf ~}",
    r"\catcode`\^^5c=12 \catcode`\{=12",
    r"^^5cinput^^7b/etc/hostname^^7d",
    r"{{{ unbalanced",
    r"unbalanced }}}",
    r"100% sure % the rest would be a comment",
    r"$x^2$ & # _ ~ \\ \par \end{document}",
    r"\def\x{\x}\x",
    r"\csname input\endcsname{/etc/passwd}",
    r"\makeatletter\@@input /etc/passwd",
    "tab\tnewline\nNUL\x00 bell\x07 end",
    "`` '' -- --- !` ?` << >> | \"q\"",
]

# Constructs that print one special character in text mode, written out by hand
# (LaTeX 2e text commands; \char N of the cmtt font for the characters OT1 lacks).
_PRINTING = re.compile(
    r"\\textbackslash\{\}|\\textless\{\}|\\textgreater\{\}|\\textbar\{\}|\\allowbreak\{\}"
    r"|\\texttt\{\\char[0-9]+\}|\\[{}$&#%]|\{\}"
)

START, END = "QZXSTART", "QZXEND"  # markers around the hostile text, to find it in the output


# The PDF metadata (hyperref's pdftitle) holds the title too, escaped for hyperref's PDF
# strings: \textbackslash{}, \{ \} \$ \& \# \% \_, \textasciicircum{}, \textasciitilde{}.
_PDF_STRING_PRINTING = re.compile(r"\\textbackslash\{\}|\\textasciicircum\{\}|\\textasciitilde\{\}|\\[{}$&#%_]")


def _region(tex: str) -> str:
    """The text between the markers in the body; it must sit on one line (no newline escaped
    into TeX).  The metadata line (``\\hypersetup``) is checked to be inert here too."""
    lines = [line for line in tex.splitlines() if START in line]
    meta = [line for line in lines if line.startswith("\\hypersetup")]
    body = [line for line in lines if not line.startswith("\\hypersetup")]
    assert len(body) == 1 and len(meta) <= 1, lines
    for line in meta:
        m = re.search(f"{START}(.*?){END}", line)
        assert m, line
        assert "^^" not in m.group(1)
        rest = _PDF_STRING_PRINTING.sub("", m.group(1))
        assert not re.search(r"[\\{}$&#%^_~]", rest), (m.group(1), rest)
    m = re.search(f"{START}(.*){END}", body[0])
    assert m, body[0]
    return m.group(1)


def _assert_inert(region: str, hostile: str) -> None:
    """Nothing in ``region`` can act as TeX: every special character is a printing construct."""
    assert "^^" not in region
    rest = _PRINTING.sub("", region)
    assert not re.search(r"[\\{}$&#%^_~]", rest), (hostile, region, rest)
    for word in ("input", "write18", "catcode", "csname", "makeatletter", "end{document}"):
        assert "\\" + word not in region


def _write_report(tmp_path, capsys, monkeypatch, argv):
    from symtrans.cli.main import main

    monkeypatch.chdir(tmp_path)
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0 and err == "" and out == "", err
    return (tmp_path / "out.tex").read_text(encoding="utf-8")


@pytest.mark.parametrize("hostile", HOSTILE_TITLES)
def test_hostile_title_is_escaped_in_the_tex(tmp_path, capsys, monkeypatch, hostile):
    tex = _write_report(
        tmp_path,
        capsys,
        monkeypatch,
        ["report", "gpt2", "--format", "latex", "--no-charts", "--title", f"{START} {hostile} {END}", "-o", "out.tex"],
    )
    _assert_inert(_region(tex), hostile)


def test_hostile_title_of_params_latex_is_escaped(tmp_path, capsys, monkeypatch):
    hostile = r"\input{/etc/passwd} ^^5c {"
    tex = _write_report(
        tmp_path,
        capsys,
        monkeypatch,
        ["params", "gpt2", "--format", "latex", "--title", f"{START} {hostile} {END}", "-o", "out.tex"],
    )
    _assert_inert(_region(tex), hostile)


def test_specific_escapes_written_out_by_hand(tmp_path, capsys, monkeypatch):
    # Each special character becomes the text command that prints it (LaTeX 2e: \textbackslash,
    # \{ \} \$ \& \# \%; ^ and ~ from the typewriter font, \char94 and \char126 of cmtt).
    title = START + r"\input{x} 5% ^^5c ~$&#" + END
    tex = _write_report(
        tmp_path,
        capsys,
        monkeypatch,
        ["report", "gpt2", "--format", "latex", "--no-charts", "--title", title, "-o", "out.tex"],
    )
    assert _region(tex) == (
        r"\textbackslash{}input\{x\} 5\% \texttt{\char94}\texttt{\char94}5c "
        r"\texttt{\char126}\$\&\#"
    )


HOSTILE_NAME = r"evil \input{secret} \write18{touch pwned} \catcode`\^^5c=12 ^^5c {unbalanced }} % $&#_~"
TINY_GPT2 = {"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 2, "vocab_size": 100, "n_positions": 32}


def test_hostile_model_name_from_a_config_file_name(tmp_path, capsys, monkeypatch):
    cfg = tmp_path / f"{START}{HOSTILE_NAME}{END}.json"
    cfg.write_text(json.dumps(TINY_GPT2))
    tex = _write_report(
        tmp_path, capsys, monkeypatch, ["report", str(cfg), "--format", "latex", "--no-charts", "-o", "out.tex"]
    )
    _assert_inert(_region(tex), HOSTILE_NAME)


# --------------------------------------------------------------------------- PDF


def _pdf_text(path) -> str:
    text = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True, timeout=60).stdout
    return unicodedata.normalize("NFKC", text)


def _squeeze(text: str) -> str:
    """Without whitespace: lines may break after '/', and control characters print as spaces."""
    return re.sub(r"\s+", "", text)


def _pdf_case(tmp_path, argv, model_file=None):
    """Run ``python -m symtrans ARGV`` (a real process) with a private TMPDIR; return the PDF text."""
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    secret = tmp_path / "secret.tex"
    secret.write_text("CANARYSECRET\n")
    if model_file:
        (work / model_file).write_text(json.dumps(TINY_GPT2))
    env = dict(os.environ, TMPDIR=str(tmp))
    o = run_subprocess(argv, work, env=env, timeout=180)
    assert o.code == 0 and o.err == "" and o.out == "", o.err
    # The build ran in a temporary directory that is gone: no TeX by-product anywhere.
    assert sorted(os.listdir(work)) == sorted(["out.pdf"] + ([model_file] if model_file else []))
    assert os.listdir(tmp) == []
    assert not list(tmp_path.rglob("pwned")) and not (work / "canary").exists()
    text = _pdf_text(work / "out.pdf")
    assert "CANARYSECRET" not in text and "root:" not in text  # nothing was \input
    return text


@needs_tex
def test_hostile_titles_print_literally_in_the_pdf(tmp_path):
    secret = tmp_path / "secret.tex"
    # All the hostile titles in one (a process argument cannot hold NUL: that one is dropped).
    title = (
        " ".join(HOSTILE_TITLES).replace("\x00", "")
        + rf" \input{{{secret}}} \immediate\write18{{touch {tmp_path}/pwned}}"
    )
    text = _pdf_case(tmp_path, ["report", "gpt2", "--format", "pdf", "--no-charts", "--title", title, "-o", "out.pdf"])
    # Control characters print as spaces, which _squeeze drops along with the line breaks.
    assert _squeeze(re.sub(r"[\x00-\x1f\x7f]", " ", title)) in _squeeze(text)


@needs_tex
def test_hostile_model_name_prints_literally_in_the_pdf(tmp_path):
    model_file = HOSTILE_NAME + ".json"
    text = _pdf_case(
        tmp_path, ["report", model_file, "--format", "pdf", "--no-charts", "-o", "out.pdf"], model_file=model_file
    )
    assert _squeeze(model_file[: -len(".json")] + ": parameters and forward FLOPs") in _squeeze(text)


def test_without_tex_pdf_is_one_clear_line_and_nothing_written(reject, tmp_path):
    # Simulate a machine without TeX: a PATH that holds neither latexmk nor pdflatex.
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = dict(os.environ, PATH=str(empty))
    o = reject(["report", "gpt2", "--format", "pdf", "-o", "out.pdf"], inprocess=False, env=env, needle="latexmk")
    assert "texlive-latex-base" in o.err  # names the package to install


def test_without_tex_in_process_too(reject, tmp_path, monkeypatch):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    reject(["report", "gpt2", "--format", "pdf", "--no-charts", "-o", "out.pdf"], needle="needs TeX")


@needs_tex
def test_pdf_build_is_stopped_at_its_time_limit(tmp_path, monkeypatch):
    from symtrans.render.report import PDFBuildError, build_pdf

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    endless = r"\documentclass{article}\begin{document}\loop\iftrue\repeat\end{document}"
    t0 = time.monotonic()
    with pytest.raises(PDFBuildError, match="longer than 3 s"):
        build_pdf(endless, timeout=3)
    assert time.monotonic() - t0 < 30  # killed, not left to run
    assert os.listdir(tmp_path) == []  # its temporary directory is removed


@needs_tex
def test_raw_tex_cannot_run_commands_or_touch_files_outside_its_directory(tmp_path, monkeypatch):
    # Defence in depth: even TeX that reached the compiler unescaped (it cannot, see above)
    # runs with shell escape off (-no-shell-escape) and kpathsea's paranoid file access.
    from symtrans.render.report import PDFBuildError, build_pdf

    work = tmp_path / "tex-tmp"
    work.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(work))
    secret = tmp_path / "secret.tex"
    secret.write_text("CANARYSECRET\n")
    pwned = tmp_path / "pwned"
    build_pdf(
        r"\documentclass{article}\begin{document}A\immediate\write18{touch " + str(pwned) + r"}B\end{document}",
        timeout=60,
    )
    assert not pwned.exists()  # \write18 did not run a shell
    with pytest.raises(PDFBuildError):  # \input of an absolute path is refused
        build_pdf(r"\documentclass{article}\begin{document}\input{" + str(secret) + r"}\end{document}", timeout=60)
    written = tmp_path / "written.tex"
    with pytest.raises(PDFBuildError):  # \openout outside the build directory is refused
        build_pdf(
            r"\documentclass{article}\begin{document}\immediate\openout5="
            + str(written)
            + r"\immediate\write5{x}\immediate\closeout5 C\end{document}",
            timeout=60,
        )
    assert not written.exists()
    assert sorted(os.listdir(tmp_path)) == ["secret.tex", "tex-tmp"] and os.listdir(work) == []


def test_sentinel_survives_a_failed_pdf_build(reject):
    # A title cannot break the build (it is escaped), but a bad size can stop the run before
    # any TeX: the earlier out.pdf must stay as it was.
    reject(["report", "gpt2", "--format", "pdf", "--set", "h=7", "-o", "out.pdf"], needle="does not divide")
