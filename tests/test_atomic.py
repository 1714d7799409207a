"""The output transaction (symtrans/base/atomic.py) and the input reader (base/inputs.py).

All of a command's files are renamed into place together or not at all (issue 15, "Data
loss"): a failure while staging, while renaming (undone from the backups) or a Ctrl-C at
any point leaves every earlier file byte-identical and no temporary file behind.
"""

from __future__ import annotations

import os
import signal
import stat
import threading
import time

import pytest

from symtrans.base import atomic
from symtrans.base.atomic import Transaction, check_output, write_atomic
from symtrans.base.inputs import InputError, read_text


def _three(tmp_path):
    (tmp_path / "a.md").write_bytes(b"old a")
    (tmp_path / "b.png").write_bytes(b"old b")
    t = Transaction()
    t.add(tmp_path / "a.md", "new a")
    t.add(tmp_path / "b.png", b"new b")
    t.add(tmp_path / "c.png", b"new c")  # a new file
    return t


def _state(tmp_path):
    return {p.name: p.read_bytes() for p in sorted(tmp_path.iterdir())}


def test_commit_writes_every_file_and_nothing_else(tmp_path):
    _three(tmp_path).commit()
    assert _state(tmp_path) == {"a.md": b"new a", "b.png": b"new b", "c.png": b"new c"}


@pytest.mark.parametrize("failing_call", [1, 2, 3])
def test_a_failed_rename_undoes_the_earlier_ones(tmp_path, monkeypatch, failing_call):
    t = _three(tmp_path)
    before = _state(tmp_path)
    real_replace, calls = os.replace, []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == failing_call:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="No space left on device; any earlier file is unchanged"):
        t.commit()
    monkeypatch.undo()
    assert _state(tmp_path) == before  # restored, and no temporary file or backup left


@pytest.mark.parametrize("failing_call", [1, 2])
def test_ctrl_c_while_renaming_undoes_the_earlier_renames(tmp_path, monkeypatch, failing_call):
    t = _three(tmp_path)
    before = _state(tmp_path)
    real_replace, calls = os.replace, []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == failing_call + 1:
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        t.commit()
    monkeypatch.undo()
    assert _state(tmp_path) == before


def test_ctrl_c_while_staging_leaves_no_temporary_file(tmp_path, monkeypatch):
    t = _three(tmp_path)
    before = _state(tmp_path)
    real_fsync, calls = os.fsync, []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(KeyboardInterrupt):
        t.commit()
    monkeypatch.undo()
    assert _state(tmp_path) == before


@pytest.fixture
def default_sigint():
    """SIGINT raises KeyboardInterrupt during the test, whatever the run inherited (a run
    started in the background or under nohup ignores it; the check must not skip there)."""
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, saved)


def test_a_signal_during_the_renames_waits_until_they_are_done(tmp_path, monkeypatch, default_sigint):
    # SIGINT arrives between two renames: it is held back, so all of them happen, and the
    # KeyboardInterrupt is raised only afterwards (never leaving a half-renamed set).
    # Another thread is alive, as in a test run or the gallery: the kernel may hand the
    # signal to it, which must not matter.
    t = _three(tmp_path)
    real_replace = os.replace
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()

    def replace(src, dst):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # time for the handler to run, were it not held back
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    try:
        with pytest.raises(KeyboardInterrupt):
            t.commit()
    finally:
        monkeypatch.undo()
        stop.set()
    assert _state(tmp_path) == {"a.md": b"new a", "b.png": b"new b", "c.png": b"new c"}


def test_standard_output_comes_after_the_files_and_not_at_all_on_failure(tmp_path, capsys):
    (tmp_path / "d").mkdir()
    t = Transaction()
    t.add(None, "to stdout\n")
    t.add(tmp_path / "ok.md", "x")
    (tmp_path / "ok.md").mkdir()  # the target turns into a directory before the commit
    with pytest.raises(IsADirectoryError):
        t.commit()
    assert capsys.readouterr().out == ""
    t = Transaction()
    t.add(None, "to stdout\n")
    t.add(tmp_path / "fine.md", "x")
    t.commit()
    assert capsys.readouterr().out == "to stdout\n" and (tmp_path / "fine.md").read_text() == "x"


def test_two_outputs_to_one_file_are_refused(tmp_path):
    t = Transaction()
    t.add(tmp_path / "x", "1")
    with pytest.raises(OSError, match="writes .* there already"):
        t.add(tmp_path / "." / "x", "2")


def test_every_output_is_checked_against_every_input(tmp_path):
    cfg = tmp_path / "cfg.json"
    cfg.write_text("{}")
    os.link(cfg, tmp_path / "hard")
    os.symlink("cfg.json", tmp_path / "soft")
    t = Transaction(inputs=[str(cfg)])
    for name in ("cfg.json", "hard", "soft"):
        with pytest.raises(OSError, match="it is the input file"):
            t.add(tmp_path / name, "x")
    assert cfg.read_text() == "{}"


@pytest.mark.parametrize("length", [1, 10, 11, 24, 100, 253, 255])
def test_temporary_names_fit_wherever_the_target_fits(tmp_path, monkeypatch, length):
    # A 253-character -o name failed: the temporary name (".NAME.XXXXXXXX.tmp") was longer.
    seen = []
    real_open = os.open

    def spy(path, flags, *a):
        if flags & os.O_CREAT:
            seen.append(os.path.basename(path))
        return real_open(path, flags, *a)

    monkeypatch.setattr(os, "open", spy)
    name = "n" * length
    (tmp_path / name).write_text("old")  # an existing target: a multi-file commit backs it up too
    t = Transaction()
    t.add(tmp_path / name, "new")
    t.add(tmp_path / "other", "x")
    t.commit()
    assert seen and all(len(s.encode()) <= max(length, 24) for s in seen), seen
    assert (tmp_path / name).read_text() == "new"


def test_modes_are_kept_and_new_files_follow_the_umask(tmp_path):
    p = tmp_path / "x"
    p.write_text("old")
    p.chmod(0o640)
    write_atomic(p, "new")
    assert stat.S_IMODE(p.stat().st_mode) == 0o640
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "fresh", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "fresh").stat().st_mode) == 0o640


@pytest.mark.parametrize("bits", [0o444, 0o400, 0o000, 0o555])
def test_a_read_only_file_is_refused_even_for_root(tmp_path, bits):
    p = tmp_path / "prot.txt"
    p.write_text("prot")
    p.chmod(bits)
    with pytest.raises(PermissionError, match="read-only"):
        write_atomic(p, "x")
    assert stat.S_IMODE(p.stat().st_mode) == bits
    p.chmod(0o644)
    assert p.read_text() == "prot"


@pytest.mark.parametrize("path", ["/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/fd/1", "/proc/self/fd/1"])
def test_stream_aliases_are_refused_without_touching_them(path):
    with pytest.raises(OSError, match="alias of an open file descriptor.*-o -"):
        check_output(path)


def test_links_through_a_stream_alias_are_refused(tmp_path):
    os.symlink("/dev/stdout", tmp_path / "a")
    os.symlink("a", tmp_path / "b")
    os.symlink(str(tmp_path / "fd"), tmp_path / "c")
    os.symlink("/proc/self/fd", tmp_path / "fd")
    for name in ("a", "b"):
        with pytest.raises(OSError, match="alias of an open file descriptor"):
            check_output(tmp_path / name)
    with pytest.raises(OSError, match="alias of an open file descriptor"):
        check_output(tmp_path / "fd" / "1")


def test_fifo_and_socket_targets_are_refused(tmp_path):
    import socket

    os.mkfifo(tmp_path / "f")
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(tmp_path / "s"))
    s.close()
    with pytest.raises(OSError, match="FIFO"):
        write_atomic(tmp_path / "f", "x")
    with pytest.raises(OSError, match="socket"):
        write_atomic(tmp_path / "s", "x")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "f").st_mode) and stat.S_ISSOCK(os.lstat(tmp_path / "s").st_mode)


# -- streamed outputs (a sweep's rows): written in pieces, committed with the rest ----------


def test_a_streamed_file_lands_with_the_others_and_its_bytes_as_written(tmp_path):
    (tmp_path / "s.csv").write_bytes(b"old")
    (tmp_path / "s.csv").chmod(0o640)
    t = Transaction()
    f = t.stream(tmp_path / "s.csv")
    for i in range(1000):
        f.write(b"%d\n" % i)
    t.add(tmp_path / "r.md", "report")
    assert (tmp_path / "s.csv").read_bytes() == b"old"  # nothing replaced before the commit
    t.commit()
    assert (tmp_path / "s.csv").read_bytes() == b"".join(b"%d\n" % i for i in range(1000))
    assert stat.S_IMODE(os.stat(tmp_path / "s.csv").st_mode) == 0o640  # the earlier file's mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.md", "s.csv"]  # no temporary file left


def test_a_discarded_or_failed_stream_leaves_the_earlier_file_and_no_temporary_file(tmp_path):
    (tmp_path / "s.csv").write_bytes(b"old")
    t = Transaction()
    t.stream(tmp_path / "s.csv").write(b"new, half written")
    assert len(list(tmp_path.iterdir())) == 2  # the temporary file beside the target
    t.discard()
    assert _state(tmp_path) == {"s.csv": b"old"}
    t = Transaction()
    t.stream(tmp_path / "s.csv").write(b"new")
    t.add(tmp_path / "gone", "x")
    (tmp_path / "gone").mkdir()  # a later output fails at the commit: the stream goes too
    with pytest.raises(IsADirectoryError):
        t.commit()
    assert (tmp_path / "s.csv").read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == [
        "gone",
        "s.csv",
    ]


def test_a_stream_to_standard_output_is_copied_after_the_files(tmp_path, capsys):
    t = Transaction()
    t.stream(None).write("héllo\n".encode())
    t.add(tmp_path / "a.md", "x")
    t.commit()
    assert capsys.readouterr().out == "héllo\n" and (tmp_path / "a.md").read_text() == "x"


def test_a_stream_is_checked_like_any_output(tmp_path):
    cfg = tmp_path / "cfg.csv"
    cfg.write_text("N\n1\n")
    t = Transaction(inputs=[str(cfg)])
    with pytest.raises(OSError, match="it is the input file"):
        t.stream(cfg)
    t.add(tmp_path / "x", "1")
    with pytest.raises(OSError, match="writes .* there already"):
        t.stream(tmp_path / "x")


def test_atomic_file_commits_on_success_and_removes_on_error(tmp_path):
    with atomic.atomic_file(tmp_path / "a") as f:
        f.write(b"one")
        f.write(b"two")
    assert (tmp_path / "a").read_bytes() == b"onetwo"
    with pytest.raises(KeyboardInterrupt):
        with atomic.atomic_file(tmp_path / "a") as f:
            f.write(b"three")
            raise KeyboardInterrupt
    assert _state(tmp_path) == {"a": b"onetwo"}


def test_temp_name_helper_never_exceeds_the_floor_for_short_names():
    for n in range(1, 40):
        assert len(atomic._temp_name("x" * n)) <= max(n, 24)


# -- the input reader ---------------------------------------------------------------


def test_reader_refuses_a_fifo_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "f")
    with pytest.raises(InputError, match="f: is a FIFO"):
        read_text(tmp_path / "f", "a config.json", 100)


def test_reader_caps_the_size_before_reading(tmp_path):
    p = tmp_path / "big"
    with open(p, "wb") as f:
        f.truncate(101)
    with pytest.raises(InputError, match="101 bytes, too large for a CSV file .limit 100."):
        read_text(p, "a CSV file", 100)


@pytest.mark.parametrize(
    "raw,text",
    [
        (b"ab", "ab"),
        (b"\xef\xbb\xbfab", "ab"),
        (b"\xff\xfea\x00b\x00", "ab"),
        (b"\xfe\xff\x00a\x00b", "ab"),
        (b"\xff\xfe=\xd8\x00\xde", "\U0001f600"),  # a surrogate pair in UTF-16 LE: one character
    ],
)
def test_reader_accepts_utf8_and_utf16_with_a_mark(tmp_path, raw, text):
    (tmp_path / "t").write_bytes(raw)
    assert read_text(tmp_path / "t", "a CSV file", 100) == text


@pytest.mark.parametrize(
    "raw,where",
    [
        (b"a\xe9", "byte 0xe9 at offset 1, where the file ends mid-character"),
        (b"a\xe9b", "byte 0xe9 at offset 1"),
        (b"a\x00b\x00", "a NUL character at offset 1; UTF-16 needs a byte-order mark"),
        (b"\xff\xfe\x00\x00a\x00\x00\x00", "byte 0xff at offset 0"),  # UTF-32
        (b"\xff\xfea\x00b", "byte 0x62 at offset 4, where the file ends mid-character"),
        (b"\xed\xa0\x80", "byte 0xed at offset 0"),  # a surrogate encoded in UTF-8 (CESU)
    ],
)
def test_reader_refuses_anything_else_in_one_sentence(tmp_path, raw, where):
    (tmp_path / "t").write_bytes(raw)
    with pytest.raises(InputError) as e:
        read_text(tmp_path / "t", "a CSV file", 100)
    assert str(e.value) == (
        f"{tmp_path / 't'}: is not UTF-8 or UTF-16 text (UTF-8 with or without a byte-order mark, UTF-16 with "
        f"one), so not a CSV file ({where})"
    )
