"""Build a PDF from LaTeX source: latexmk (or pdflatex/xelatex), sandboxed and time-limited.

The engine is pdflatex unless the source asks for XeLaTeX with the magic comment
``%% !TEX program = xelatex`` (the report writer does so when its text has characters
plain pdflatex cannot set: Polish, Chinese, ...; see ``environment.LatexState``).
A character that no font of the document has is an error (``\\tracinglostchars=3``)
reported in one line naming it (``MissingFontError``), as is a missing font or package,
naming the Debian package to install.

The source is compiled in a fresh temporary directory with shell escape off
(``-no-shell-escape``), kpathsea's paranoid file access (``openin_any=p``,
``openout_any=p``: no absolute paths, no parent directories), no user latexmkrc
(``-norc``) and a time limit after which the whole process group is killed.
``SOURCE_DATE_EPOCH=0`` and ``FORCE_SOURCE_DATE=1`` (with ``\\pdftrailerid{}`` in the
preamble) make the output bytes reproducible.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unicodedata

__all__ = [
    "MissingFontError",
    "PDFBuildError",
    "TeXNotFoundError",
    "build_pdf",
    "build_pdf_and_log",
    "engine",
    "overfull_boxes",
    "tex_available",
]

DEBIAN_PACKAGES = ("texlive-latex-base", "texlive-latex-recommended", "latexmk")
# What XeLaTeX reports need beyond DEBIAN_PACKAGES (also installed by .ci/run).
# (hyperref under XeTeX loads the pzdr font of texlive-fonts-recommended.)
XETEX_PACKAGES = ("texlive-xetex", "texlive-fonts-recommended")
# The Debian package of a LaTeX package or font the report's preamble uses.
_PROVIDERS = {
    "fontspec.sty": "texlive-latex-recommended",
    "Noto Serif CJK SC": "fonts-noto-cjk",
    "Noto Sans CJK SC": "fonts-noto-cjk",
    "Noto Sans Mono CJK SC": "fonts-noto-cjk",
    "pzdr": "texlive-fonts-recommended",
}
_JOB = "report"
_XELATEX = re.compile(r"^%+ *!TEX program *= *xelatex *$", re.MULTILINE)


class PDFBuildError(RuntimeError):
    """The LaTeX run failed or timed out (the message names the first TeX error)."""


class TeXNotFoundError(PDFBuildError):
    """Neither latexmk nor pdflatex is installed."""


class MissingFontError(PDFBuildError):
    """The text has a character no installed font has, or a font the report needs is missing."""


def tex_available() -> bool:
    """True when latexmk or pdflatex is on PATH."""
    return bool(shutil.which("latexmk") or shutil.which("pdflatex"))


def engine(latex_source: str) -> str:
    """``"xelatex"`` when the source asks for it (``%% !TEX program = xelatex``), else ``"pdflatex"``."""
    return "xelatex" if _XELATEX.search(latex_source[:2000]) else "pdflatex"


def _named(char: str) -> str:
    name = unicodedata.name(char, "")
    return f"{char!r} (U+{ord(char):04X}{' ' + name if name else ''})"


def _known_failure(log: str) -> PDFBuildError | None:
    """A failure the user can fix (a character no font has, a missing font or package), as
    an error naming what to do; else None."""
    m = re.search(r"Missing character: There is no (.+?) \(U\+([0-9A-F]{4,6})\)", log)
    if m:
        char = chr(int(m.group(2), 16))
        return MissingFontError(
            f"the report text has the character {_named(char)}, which no installed font covers "
            "(Latin Modern for Latin text, Noto CJK for Chinese, Japanese and Korean); remove it from the title "
            "or model name, or write the report as HTML (-o NAME.html)"
        )
    m = re.search(r'The font "([^"]+)" cannot be found', log)
    if m:
        package = _PROVIDERS.get(m.group(1))
        hint = f"install the Debian package {package}" if package else "install it"
        return MissingFontError(f"the PDF needs the font {m.group(1)!r}, which is not installed; {hint}")
    m = re.search(r"Font \\\S+=(\S+) at \S+ not loadable", log)
    if m and m.group(1) in _PROVIDERS:
        return TeXNotFoundError(
            f"the PDF needs the TeX font {m.group(1)}, which is not installed; "
            f"install the Debian package {_PROVIDERS[m.group(1)]}"
        )
    m = re.search(r"File `([^']+)' not found", log)
    if m and m.group(1) in _PROVIDERS:
        return TeXNotFoundError(
            f"the PDF needs the LaTeX package {m.group(1)}, which is not installed; "
            f"install the Debian package {_PROVIDERS[m.group(1)]}"
        )
    return None


def _env(workdir: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "SOURCE_DATE_EPOCH": "0",
            "FORCE_SOURCE_DATE": "1",
            "openin_any": "p",
            "openout_any": "p",
            "shell_escape": "f",
            "TEXMFOUTPUT": workdir,
            "LC_ALL": "C",
        }
    )
    return env


def _run(cmd: list[str], workdir: str, timeout: float) -> tuple[int, str]:
    proc = subprocess.Popen(
        cmd,
        cwd=workdir,
        env=_env(workdir),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        raise PDFBuildError(f"the LaTeX build took longer than {timeout:g} s and was stopped") from None
    return proc.returncode, out.decode("utf-8", "replace")


def _first_error(workdir: str, output: str) -> str:
    log_path = os.path.join(workdir, _JOB + ".log")
    try:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            log = f.read()
    except OSError:
        log = output
    for line in log.splitlines():
        if line.startswith("! ") or re.match(r"^[^:\s]+\.tex:\d+: ", line):
            return line.strip()
    tail = [x for x in output.strip().splitlines() if x.strip()]
    return tail[-1].strip() if tail else "no output"


def build_pdf(latex_source: str, timeout: float = 120, files: dict[str, bytes] | None = None) -> bytes:
    """Compile ``latex_source`` and return the PDF bytes (see ``build_pdf_and_log``)."""
    return build_pdf_and_log(latex_source, timeout, files)[0]


def build_pdf_and_log(
    latex_source: str, timeout: float = 120, files: dict[str, bytes] | None = None
) -> tuple[bytes, str]:
    """Compile ``latex_source``; return the PDF bytes and TeX's log of the last run.

    ``files`` are extra inputs (e.g. chart images, ``{file name: bytes}``) written next
    to the source in the temporary directory; names must be plain file names.

    Uses ``latexmk -pdf`` (``-xelatex`` for a source that asks for XeLaTeX) with
    ``-no-shell-escape -interaction=nonstopmode -halt-on-error``, or, without latexmk,
    the engine itself run until its cross-references settle (at most 4 runs).  Nothing
    is written outside a temporary directory, which is removed afterwards.

    Raises:
        TeXNotFoundError: the engine, or a LaTeX package the source needs, is not
            installed (names the Debian packages to install).
        MissingFontError: the text has a character no font covers (named), or a font
            the source needs is missing (names its Debian package).
        PDFBuildError: TeX reported another error (the first one is quoted) or the run
            exceeded ``timeout`` seconds.
    """
    xelatex = engine(latex_source) == "xelatex"
    program = "xelatex" if xelatex else "pdflatex"
    latexmk, tex = shutil.which("latexmk"), shutil.which(program)
    if xelatex and not tex:
        raise TeXNotFoundError(
            "this report's text needs XeLaTeX (characters pdflatex cannot set), but xelatex is not installed; "
            f"install the Debian packages {', '.join(DEBIAN_PACKAGES + XETEX_PACKAGES)}"
        )
    if not latexmk and not tex:
        raise TeXNotFoundError(
            "PDF output needs TeX, but neither latexmk nor pdflatex is installed; "
            f"install the Debian packages {', '.join(DEBIAN_PACKAGES)}"
        )
    with tempfile.TemporaryDirectory(prefix="symtrans-tex-") as workdir:
        with open(os.path.join(workdir, _JOB + ".tex"), "w", encoding="utf-8") as f:
            f.write(latex_source)
        for name, data in (files or {}).items():
            if os.path.basename(name) != name or name.startswith("."):
                raise ValueError(f"extra TeX input {name!r} must be a plain file name")
            with open(os.path.join(workdir, name), "wb") as f:
                f.write(data)
        pdf_flags = ["-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error", "-file-line-error"]
        if latexmk:
            mode = "-xelatex" if xelatex else "-pdf"
            code, out = _run([latexmk, mode, "-norc", *pdf_flags, _JOB + ".tex"], workdir, timeout)
        else:
            code, out = 0, ""
            deadline = time.monotonic() + timeout
            for _ in range(4):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise PDFBuildError(f"the LaTeX build took longer than {timeout:g} s and was stopped")
                code, out = _run([tex, *pdf_flags, _JOB + ".tex"], workdir, left)
                if code != 0:
                    break
                with open(os.path.join(workdir, _JOB + ".log"), encoding="utf-8", errors="replace") as log:
                    if not re.search(r"Rerun|rerun", log.read()):
                        break
        try:
            with open(os.path.join(workdir, _JOB + ".log"), encoding="utf-8", errors="replace") as f:
                log_text = f.read()
        except OSError:
            log_text = out
        pdf_path = os.path.join(workdir, _JOB + ".pdf")
        if code != 0 or not os.path.exists(pdf_path):
            known = _known_failure(log_text)
            if known is not None:
                raise known
            raise PDFBuildError(f"LaTeX failed: {_first_error(workdir, out)}")
        with open(pdf_path, "rb") as f:
            return f.read(), log_text


_OVERFULL = re.compile(r"^Overfull \\hbox \(([0-9.]+)pt too wide\)(.*)$", re.MULTILINE)


def overfull_boxes(log: str, tolerance: float = 0.0) -> list[tuple[float, str]]:
    """(points, where) of each overfull hbox in a TeX log wider than ``tolerance`` pt."""
    return [(float(m.group(1)), m.group(2).strip()) for m in _OVERFULL.finditer(log) if float(m.group(1)) > tolerance]
