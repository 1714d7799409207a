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
import threading
import time

__all__ = ["PDFBuildError", "TeXNotFoundError", "build_pdf", "stop_all", "tex_available"]

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
    from symtrans.base.interrupt import interrupts_as_exceptions

    # The temporary folder is removed by the same ``finally`` that has already killed
    # the TeX process group (in ``_run``): on success, on a TeX error, at the time
    # limit, on Ctrl-C and, through ``interrupts_as_exceptions``, on SIGTERM and SIGHUP.
    with interrupts_as_exceptions():
        workdir = tempfile.mkdtemp(prefix="symtrans-tex-")
        try:
            return _build(workdir, latex_source, files, latexmk, pdflatex, timeout)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
            if os.path.exists(workdir):  # a file appeared while removing: once more
                shutil.rmtree(workdir, ignore_errors=True)


def _build(workdir, latex_source, files, latexmk, pdflatex, timeout) -> bytes:
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
            if code != 0 or (not draft and not re.search(r"Rerun|rerun", _read_log(workdir))):
                break
            draft = False
    pdf_path = os.path.join(workdir, _JOB + ".pdf")
    if code != 0 or not os.path.exists(pdf_path):
        raise PDFBuildError(f"LaTeX failed: {_tex_error(_read_log(workdir), out)}")
    with open(pdf_path, "rb") as f:
        return f.read()
