"""Harness of the adversarial input corpus (tracker issue 6, item 3).

The contract every case checks comes from DESIGN.md §6 ("Bad input exits with status 2
and one line on stderr naming what is wrong; no traceback, nothing half-written") and
§5 ("a failed run leaves any earlier file intact"), as issue 6 spells it out: exit
status 2, exactly one line on stderr, no traceback, nothing on stdout, no file written
and no existing file clobbered.

``reject`` runs one case in a fresh temporary directory that already holds sentinel
files (``existing_file``, and every plain ``-o`` target the case names), snapshots the
directory (names and bytes, recursively) before and after, and asserts all of the
above.  ``inprocess=True`` calls ``symtrans.cli.main.main(argv)`` (fast); otherwise the real
``python -m symtrans`` runs in a subprocess.

A file of a case may also be special (issue 15): ``fifo()``, ``device(major, minor)``,
``unix_socket()``, ``symlink(target)``, ``hard_link(target)`` or ``mode(content, 0o444)``.  The snapshot records
such entries by type, mode, device number and link target, without reading them (reading
a FIFO would block), so a device or FIFO that a command replaced shows up as a change.

With ``SYMTRANS_CORPUS_RECORD=FILE`` in the environment every case is also appended to
FILE as a JSON line (test id, working directory, argv, environment), for
``tests/adversarial/limits.py`` to run again under resource limits.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

SENTINEL = b"SENTINEL: an earlier output the user wants to keep\n"
CANARY = "canary"  # the file a successful injection ("touch canary") would create
# A command an injected expression would run: it would create CANARY in the working directory.
INJECT = "__import__('os').system('touch canary')"


@dataclass
class Outcome:
    code: int
    out: str
    err: str


@dataclass(frozen=True)
class Special:
    """A file of a case that is made by a call, not written: ``make(path)``."""

    make: Callable[[Path], None]


def fifo() -> Special:
    return Special(lambda p: os.mkfifo(p))


def device(major: int, minor: int) -> Special:
    """A character device node (needs root: tests using it skip otherwise)."""
    return Special(lambda p: os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(major, minor)))


def unix_socket() -> Special:
    def make(p: Path) -> None:
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(p))
        s.close()

    return Special(make)


def symlink(target: str) -> Special:
    return Special(lambda p: os.symlink(target, p))


def hard_link(target: str) -> Special:
    """A second name for the file ``target`` of the same case (made before it: list it first)."""
    return Special(lambda p: os.link(p.parent / target, p))


def mode(content: bytes | str, bits: int) -> Special:
    def make(p: Path) -> None:
        p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        p.chmod(bits)

    return Special(make)


def snapshot(root: Path) -> dict[str, object]:
    """Every path under ``root``: relative name -> bytes of a regular file (with its mode
    if not 0644), None for a directory, or a tuple describing any other entry."""
    out: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            p = os.path.join(dirpath, d)
            out[os.path.relpath(p, root)] = None if not os.path.islink(p) else ("link", os.readlink(p))
        for f in filenames:
            p = os.path.join(dirpath, f)
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode):
                data = Path(p).read_bytes()
                bits = stat.S_IMODE(st.st_mode)
                out[os.path.relpath(p, root)] = data if bits == 0o644 else (data, oct(bits))
            elif stat.S_ISLNK(st.st_mode):
                out[os.path.relpath(p, root)] = ("link", os.readlink(p))
            else:
                out[os.path.relpath(p, root)] = (stat.S_IFMT(st.st_mode), st.st_rdev, st.st_ino)
    return out


def _output_targets(argv: list[str]) -> list[str]:
    targets = []
    for i, a in enumerate(argv[:-1]):
        if a in ("-o", "--output"):
            targets.append(argv[i + 1])
    return targets


def _run_inprocess(argv, capsys) -> Outcome:
    from symtrans.cli.main import main

    capsys.readouterr()
    code = main(list(argv))
    cap = capsys.readouterr()
    return Outcome(code, cap.out, cap.err)


def default_signals() -> None:
    """``preexec_fn`` of every process a test starts: SIGINT, SIGTERM and SIGHUP at their
    default dispositions.  A child inherits ignored signals (``nohup bash .ci/run`` ignores
    SIGHUP, a shell's ``&`` SIGINT), and symtrans rightly keeps a signal its caller
    ignores, so a test that relies on a signal's effect must set it (issue 25.18)."""
    import signal

    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)


def run_subprocess(argv, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120) -> Outcome:
    """``python -m symtrans ARGV`` in ``cwd``; the repository is put on PYTHONPATH; the
    signal dispositions are the defaults (``default_signals``)."""
    repo = str(Path(__file__).resolve().parents[2])
    e = dict(os.environ if env is None else env)
    e["PYTHONPATH"] = repo + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    p = subprocess.run(
        [sys.executable, "-m", "symtrans", *argv],
        cwd=cwd,
        env=e,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=default_signals,
    )
    return Outcome(p.returncode, p.stdout, p.stderr)


def assert_one_line_exit_2(o: Outcome, needle: str | None = None) -> None:
    """The error contract of DESIGN.md §6: status 2, one stderr line, no traceback, no stdout."""
    assert o.code == 2, (o.code, o.err)
    assert o.out == "", o.out[:300]
    assert "Traceback" not in o.err, o.err
    assert o.err.endswith("\n") and o.err.count("\n") == 1, repr(o.err)
    assert len(o.err.strip()) > 10, repr(o.err)  # says something
    if needle is not None:
        assert needle.lower() in o.err.lower(), (needle, o.err)


def _record(request, work: Path, argv, env, inprocess: bool) -> None:
    """Append the case to $SYMTRANS_CORPUS_RECORD (see the module docstring)."""
    path = os.environ.get("SYMTRANS_CORPUS_RECORD")
    if not path:
        return
    line = {"id": request.node.nodeid, "cwd": str(work), "argv": list(argv), "env": env, "inprocess": inprocess}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


@pytest.fixture
def reject(tmp_path, capsys, monkeypatch, request):
    """``reject(argv, files={}, needle=None, inprocess=True)``: run one bad input, check it all.

    ``files`` (name -> str or bytes) are written into the working directory first, e.g.
    the config file under test; a name ending in ``/`` makes a directory.  ``env``
    replaces the environment of the subprocess.  Returns the Outcome.
    """

    def run(argv, files=None, needle=None, inprocess=True, env=None):
        work = tmp_path / "work"
        work.mkdir()
        (work / "existing_file").write_bytes(SENTINEL)
        for name, content in (files or {}).items():
            if name.endswith("/"):  # a directory
                (work / name).mkdir()
            elif isinstance(content, Special):
                content.make(work / name)
            else:
                (work / name).write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        for target in _output_targets(argv):
            if target and os.sep not in target and not (work / target).exists():
                (work / target).write_bytes(SENTINEL)  # an earlier output that must survive
        before = snapshot(work)
        _record(request, work, argv, env, inprocess)
        if inprocess:
            monkeypatch.chdir(work)
            o = _run_inprocess(argv, capsys)
            monkeypatch.chdir(tmp_path)
        else:
            o = run_subprocess(argv, work, env=env)
        after = snapshot(work)
        assert_one_line_exit_2(o, needle)
        assert not (work / CANARY).exists(), "an injected command ran"
        assert sorted(after) == sorted(before), f"files written: {sorted(set(after) ^ set(before))}"
        for name, data in before.items():
            assert after[name] == data, f"{name} was changed"
        return o

    return run
