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
import threading
import time
import unicodedata

from symtrans.base.errors import EnvironmentProblem, InputError

__all__ = [
    "MissingFontError",
    "PDFBuildError",
    "TeXNotFoundError",
    "build_pdf",
    "build_pdf_and_log",
    "engine",
    "overfull_boxes",
    "stop_all",
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
# The warnings that ask for another run (longtable's "Table widths have changed. Rerun
# LaTeX.", LaTeX's and rerunfilecheck's "Rerun to get ... right"); not the log's line that
# loads the package rerunfilecheck, present in every run with hyperref.
_RERUN = re.compile(r"\bRerun (?:LaTeX|to get)\b")


class PDFBuildError(EnvironmentProblem):
    """The LaTeX run failed or timed out (the message names the first TeX error)."""


class TeXNotFoundError(PDFBuildError):
    """Neither latexmk nor pdflatex is installed."""


class MissingFontError(PDFBuildError):
    """The text has a character no installed font has, or a font the report needs is missing."""


def tex_available() -> bool:
    """True when latexmk or pdflatex is on PATH."""
    return bool(shutil.which("latexmk") or shutil.which("pdflatex"))


def require_tex() -> None:
    """Check that a PDF can be built at all, before the work that precedes the build.

    Raises:
        TeXNotFoundError: neither latexmk nor pdflatex is on PATH (names the Debian
            packages to install).
    """
    if not tex_available():
        raise TeXNotFoundError(
            "PDF output needs TeX, but neither latexmk nor pdflatex is installed; "
            f"install the Debian packages {', '.join(DEBIAN_PACKAGES)}"
        )


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


# Process groups of the TeX runs in progress (any thread), so that ``stop_all`` can end
# them from the main thread when it is interrupted (the gallery builds in threads).
_LIVE: set[int] = set()
_LIVE_LOCK = threading.Lock()


def _group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs (zombies do not: they write nothing)."""
    try:
        entries = os.listdir("/proc")
    except OSError:  # no /proc: ask the kernel (which counts zombies too)
        try:
            os.killpg(pgid, 0)
            return True
        except OSError:
            return False
    for pid in entries:
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def _kill_group(pgid: int) -> bool:
    """SIGKILL the process group ``pgid``; False when it has no process left."""
    try:
        os.killpg(pgid, signal.SIGKILL)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _stop(proc: subprocess.Popen) -> None:
    """Kill the process group of ``proc`` (latexmk and every pdflatex it started), reap
    ``proc`` and wait (at most 2 s) until no process of the group runs, so that nothing
    writes into the temporary folder while it is removed."""
    if _kill_group(proc.pid):
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        deadline = time.monotonic() + 2
        while _group_alive(proc.pid) and time.monotonic() < deadline:
            _kill_group(proc.pid)
            time.sleep(0.01)
    if proc.stdout is not None:
        proc.stdout.close()


def stop_all() -> None:
    """Kill every TeX process group this process has started and not yet reaped (from
    the main thread, when it is interrupted while other threads build PDFs)."""
    with _LIVE_LOCK:
        groups = list(_LIVE)
    for pgid in groups:
        _kill_group(pgid)


def _run(cmd: list[str], workdir: str, timeout: float) -> tuple[int, str]:
    """Run ``cmd`` in its own session and process group; the group is killed on every way
    out (normal end, time limit, error, Ctrl-C, SIGTERM via ``interrupt.Terminated``)."""
    proc = subprocess.Popen(
        cmd,
        cwd=workdir,
        env=_env(workdir),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: Ctrl-C on the terminal does not reach it, killpg does
    )
    with _LIVE_LOCK:
        _LIVE.add(proc.pid)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise PDFBuildError(f"the LaTeX build took longer than {timeout:g} s and was stopped") from None
    finally:
        _stop(proc)  # whatever latexmk left running, or everything on the way out of an exception
        with _LIVE_LOCK:
            _LIVE.discard(proc.pid)
    return proc.returncode, out.decode("utf-8", "replace")


# A TeX error: "! message" (also right after a file opened on the same line, "(./report.aux)! ..."),
# or with -file-line-error "./report.tex:16: message" (any input file: .tex, .aux, .toc, .sty ...).
_TEX_ERROR = re.compile(r"^(?:\([^()]*\))*! (.+)$|^\S+\.[A-Za-z]+:\d+: (.+)$")
_MAX_MESSAGE = 400  # characters of TeX's words in the one-line message


def _tex_error(log: str, output: str) -> str:
    """TeX's own words for the failure, on one line: the first error of the log or of the
    terminal output with the lines that continue it (up to TeX's "l.NN" context line,
    which names the source line).  The log and folder are deleted after the build, so
    the message never refers the user to them."""
    for text in (log, output):
        lines = text.splitlines()
        for i, line in enumerate(lines):
            m = _TEX_ERROR.match(line)
            if not m:
                continue
            parts = [(m.group(1) or m.group(2)).strip()]
            for more in lines[i + 1 : i + 4]:  # TeX continues a long message on the next lines
                more = more.strip()
                if not more or more.startswith(("Type ", "See the ", "! ", "l.")):
                    break
                parts.append(more)
            context = next((x.strip() for x in lines[i + 1 : i + 12] if re.match(r"^l\.\d+ ", x)), None)
            if context:  # "l.16 <the source up to the error>": which text TeX choked on
                parts.append(f"(at: {context.split(' ', 1)[1].strip()})")
            return _clip(" ".join(parts))
    useful = [
        x.strip()
        for x in output.splitlines()
        if x.strip() and not re.search(r"\.log\b|\.fls\b|^Latexmk:|^-+$|^Collected error summary|gave return code", x)
    ]
    return _clip(useful[-1]) if useful else "TeX stopped without naming an error"


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."


def _read_log(workdir: str) -> str:
    try:
        with open(os.path.join(workdir, _JOB + ".log"), encoding="utf-8", errors="replace") as f:
            return f.read(4 << 20)
    except OSError:
        return ""


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
        require_tex()
    from symtrans.base.interrupt import interrupts_as_exceptions

    # The temporary folder is removed by the same ``finally`` that has already killed
    # the TeX process group (in ``_run``): on success, on a TeX error, at the time
    # limit, on Ctrl-C and, through ``interrupts_as_exceptions``, on SIGTERM and SIGHUP.
    with interrupts_as_exceptions():
        workdir = tempfile.mkdtemp(prefix="symtrans-tex-")
        try:
            return _build(workdir, latex_source, files, latexmk, tex, xelatex, timeout)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
            if os.path.exists(workdir):  # a file appeared while removing: once more
                shutil.rmtree(workdir, ignore_errors=True)


def _build(workdir, latex_source, files, latexmk, tex, xelatex, timeout) -> tuple[bytes, str]:
    with open(os.path.join(workdir, _JOB + ".tex"), "w", encoding="utf-8") as f:
        f.write(latex_source)
    for name, data in (files or {}).items():
        if os.path.basename(name) != name or name.startswith("."):
            raise InputError(f"extra TeX input {name!r} must be a plain file name")
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
            if code != 0 or not _RERUN.search(_read_log(workdir)):
                break
    log_text = _read_log(workdir) or out
    pdf_path = os.path.join(workdir, _JOB + ".pdf")
    if code != 0 or not os.path.exists(pdf_path):
        known = _known_failure(log_text)
        if known is not None:
            raise known
        raise PDFBuildError(f"LaTeX failed: {_tex_error(log_text, out)}")
    with open(pdf_path, "rb") as f:
        return f.read(), log_text


_OVERFULL = re.compile(r"^Overfull \\hbox \(([0-9.]+)pt too wide\)(.*)$", re.MULTILINE)


def overfull_boxes(log: str, tolerance: float = 0.0) -> list[tuple[float, str]]:
    """(points, where) of each overfull hbox in a TeX log wider than ``tolerance`` pt."""
    return [(float(m.group(1)), m.group(2).strip()) for m in _OVERFULL.finditer(log) if float(m.group(1)) > tolerance]
