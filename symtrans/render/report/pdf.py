"""Build a PDF from LaTeX source: pdflatex (or latexmk), sandboxed and time-limited.

pdflatex runs once in ``-draftmode`` (it lays out the document and writes the
cross-references and longtable widths, but no PDF), then until its log asks for no rerun
(at most 4 more runs): what latexmk decides for these reports, without latexmk's own
start-up and without writing a PDF that the next run replaces (a gallery builds dozens of
PDFs); latexmk is used when pdflatex is not on PATH.

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

__all__ = ["PDFBuildError", "TeXNotFoundError", "build_pdf", "tex_available"]

DEBIAN_PACKAGES = ("texlive-latex-base", "texlive-latex-recommended", "latexmk")
_JOB = "report"


class PDFBuildError(RuntimeError):
    """The LaTeX run failed or timed out (the message names the first TeX error)."""


class TeXNotFoundError(PDFBuildError):
    """Neither latexmk nor pdflatex is installed."""


def tex_available() -> bool:
    """True when latexmk or pdflatex is on PATH."""
    return bool(shutil.which("latexmk") or shutil.which("pdflatex"))


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
    """Compile ``latex_source`` and return the PDF bytes.

    ``files`` are extra inputs (e.g. chart images, ``{file name: bytes}``) written next
    to the source in the temporary directory; names must be plain file names.

    Uses ``pdflatex -no-shell-escape -interaction=nonstopmode -halt-on-error``, first in
    ``-draftmode``, then until its cross-references and table widths settle (at most 4
    more runs), or, without pdflatex,
    ``latexmk -pdf`` with the same flags.  Nothing is written outside a temporary
    directory, which is removed afterwards.

    Raises:
        TeXNotFoundError: neither latexmk nor pdflatex is installed (names the Debian
            packages to install).
        PDFBuildError: TeX reported an error (the first one is quoted) or the run
            exceeded ``timeout`` seconds.
    """
    latexmk, pdflatex = shutil.which("latexmk"), shutil.which("pdflatex")
    if not latexmk and not pdflatex:
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
        if not pdflatex:
            code, out = _run([latexmk, "-pdf", "-norc", *pdf_flags, _JOB + ".tex"], workdir, timeout)
        else:
            code, out = 0, ""
            deadline = time.monotonic() + timeout
            # The first run only measures (tables, cross-references) in -draftmode, which writes
            # no PDF and is cheaper; the runs after it write the PDF until nothing asks to rerun.
            draft = True
            for _ in range(5):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise PDFBuildError(f"the LaTeX build took longer than {timeout:g} s and was stopped")
                mode = ["-draftmode"] if draft else []
                code, out = _run([pdflatex, *mode, *pdf_flags, _JOB + ".tex"], workdir, left)
                if code != 0:
                    break
                with open(os.path.join(workdir, _JOB + ".log"), encoding="utf-8", errors="replace") as log:
                    if not draft and not re.search(r"Rerun|rerun", log.read()):
                        break
                draft = False
        pdf_path = os.path.join(workdir, _JOB + ".pdf")
        if code != 0 or not os.path.exists(pdf_path):
            raise PDFBuildError(f"LaTeX failed: {_first_error(workdir, out)}")
        with open(pdf_path, "rb") as f:
            return f.read()
