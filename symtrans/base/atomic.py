"""Output transactions: everything one command writes lands together, or nothing does.

A command may write several files (a report, its chart images, a CSV).  ``Transaction``
collects them in memory; ``commit`` first checks every target again, writes each file to
a temporary file in its target's own directory (flushed and fsynced), and only when all
of them are on disk renames them into place.  ``os.replace`` within one directory is an
atomic rename (POSIX), and a file that a later rename would have to undo keeps a hard-linked
backup until the last rename has succeeded, so a failure at any point leaves every earlier
file byte-identical and no temporary file behind.  SIGINT, SIGTERM and SIGHUP are held
back while the renames run (delivered after them).  ``write_atomic`` is the one-file case.

An output too large to hold in memory (a sweep of millions of rows) is *streamed*:
``Transaction.stream`` returns a binary file that is written in pieces straight into its
temporary file (standard output: an anonymous temporary file, copied out on commit), and
takes part in the commit like any other file; ``discard`` (or a commit that fails)
removes it.  ``atomic_file`` is the one-file streaming case, as a ``with`` block.

A target is refused, with one sentence naming it, when it is not a place a shell ``>``
would write a regular file: a directory, a device node, a FIFO, a socket, a standard
stream or file-descriptor alias (``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``:
replacing the file behind it would clobber what the shell appends to, so the message
points to ``-o -``), a read-only file (refused by its mode bits even for root, who
would otherwise bypass them), a path ending in a separator or in ``/.`` (the kernel's
directory, which normalising would turn into the file before it), a symbolic link at the
final component (never followed: a chart name planted as a link must not redirect the
write), a file in a missing or unwritable directory, and any file
the command reads (``inputs``: compared by device and inode, so hard links and symbolic
links count as the same file).

Temporary names are at most ``max(len(target name), 24)`` bytes long, so a target whose
name fits the file system (255 bytes) always has a temporary name that fits as well.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
from typing import BinaryIO, Iterable

from symtrans.base.errors import InputError
from symtrans.base.interrupt import check as check_interrupt
from symtrans.base.interrupt import note_written

__all__ = ["Transaction", "atomic_file", "check_output", "write_atomic"]

# Directories whose entries are open file descriptors of a process (Linux).
_FD_DIR = re.compile(r"^/proc/(self|thread-self|\d+)(/task/\d+)?/fd$")
_STD_STREAMS = {"/dev/stdin", "/dev/stdout", "/dev/stderr"}
_TEMP_NAME_FLOOR = 24  # bytes: "." + name + "." + 8 hex digits + ".tmp" for names up to 10 bytes
_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)
_TO_STDOUT = "to write to standard output give '-o -' and redirect it in the shell"


def _refuse(code: int, path: str, why: str) -> OSError:
    """The error for an unusable target: one sentence naming ``path``."""
    cls = {errno.EISDIR: IsADirectoryError, errno.ENOTDIR: NotADirectoryError, errno.ENOENT: FileNotFoundError}.get(
        code, PermissionError if code in (errno.EACCES, errno.EPERM) else OSError
    )
    return cls(code, f"cannot write {path}: {why}")


def _umask() -> int:
    try:  # read it without changing it: os.umask sets it, which other threads would see
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _follow(shown: str) -> str:
    """The absolute path that writing ``shown`` would replace: symbolic links followed hop
    by hop, refusing any hop through a standard stream or a file-descriptor directory."""
    p = os.path.abspath(shown)
    for _ in range(40):  # the kernel's own limit on nested links
        head, tail = os.path.split(p)
        real_head = os.path.realpath(head)
        if p in _STD_STREAMS or _FD_DIR.match(real_head) or real_head == "/dev/fd":
            raise _refuse(
                errno.EINVAL, shown, f"it is an alias of an open file descriptor (like /dev/stdout); {_TO_STDOUT}"
            )
        p = os.path.join(real_head, tail)
        try:
            link = os.readlink(p)
        except OSError:  # not a link (or not there): p is the file to write
            return p
        p = os.path.normpath(os.path.join(real_head, link))
    raise _refuse(errno.ELOOP, shown, "too many levels of symbolic links")


def _writable_by_mode(st: os.stat_result, path: str) -> bool:
    """Whether the shell's ``>`` may open this file for writing by its permission bits.

    For root the mode bits are consulted directly (root's ``open`` would bypass them): a
    file with no write bit at all is read-only for everyone.
    """
    if os.geteuid() == 0:
        return bool(st.st_mode & 0o222)
    return os.access(path, os.W_OK)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_output(path: str | os.PathLike, inputs: Iterable[str | os.PathLike] = ()) -> str:
    """Check that ``path`` may be written as a regular file; return the path to replace.

    The one check every writer uses (``-o`` of every command, a report's charts, a sweep's
    stream): the target is a regular file or absent; the path does not end in a separator
    or in ``/.``/``/..`` (the kernel would take those as a directory, so a shell's ``>``
    fails with "Not a directory" where a normalised path would silently name the file);
    every directory on the path exists as the kernel resolves it (``d/../f`` needs ``d``);
    the final component is not a symbolic link (a chart name planted as a link to another
    file must not redirect the write); the directory is writable.

    Raises:
        InputError: the path is empty.
        IsADirectoryError, NotADirectoryError, FileNotFoundError, PermissionError,
        OSError: one sentence starting "cannot write PATH:" saying why (see the module
            docstring for the list).
    """
    shown = os.fspath(path)
    if isinstance(shown, bytes):
        shown = os.fsdecode(shown)
    if not shown:
        raise InputError("the output path is empty")
    head, tail = os.path.split(shown)
    if os.path.isdir(shown):
        raise _refuse(errno.EISDIR, shown, "it is a directory, give a file name")
    if shown.endswith(os.sep) or (os.altsep and shown.endswith(os.altsep)):
        raise _refuse(
            errno.ENOTDIR, shown, f"a path ending in '{os.sep}' names a directory, not a file; give a file name"
        )
    if tail in (os.curdir, os.pardir):
        raise _refuse(
            errno.ENOTDIR, shown, f"a path ending in '{os.sep}{tail}' names a directory, not a file; give a file name"
        )
    head = head or os.curdir
    # The directory as the kernel resolves it (not normalised: "d/../f" needs a directory d).
    if not os.path.isdir(head):
        if os.path.lexists(head) and not os.path.isdir(head):
            raise _refuse(errno.ENOTDIR, shown, f"{head} is not a directory")
        raise _refuse(errno.ENOENT, shown, f"the directory {head} does not exist")
    followed = _follow(shown)  # where a write through links would land: for the reasons below
    directory = os.path.dirname(followed)
    if not os.path.exists(directory):
        raise _refuse(errno.ENOENT, shown, f"the directory {directory} does not exist")
    if not os.path.isdir(directory):
        raise _refuse(errno.ENOTDIR, shown, f"{directory} is not a directory")
    try:
        st = os.stat(followed)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise _refuse(e.errno or errno.EIO, shown, e.strerror or str(e)) from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise _refuse(errno.EISDIR, shown, "it is a directory, give a file name")
        for test, kind in _KINDS:
            if test(st.st_mode):
                raise _refuse(errno.EINVAL, shown, f"it is {kind}, not a regular file; {_TO_STDOUT}")
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(errno.EINVAL, shown, f"it is not a regular file; {_TO_STDOUT}")
        if not _writable_by_mode(st, followed):
            raise _refuse(
                errno.EACCES,
                shown,
                f"the file is read-only (mode {stat.S_IMODE(st.st_mode):04o}); the shell's '>' would refuse it too",
            )
    for i in inputs:
        i = os.fspath(i)
        if _same_file(i, followed):
            raise _refuse(
                errno.EEXIST,
                shown,
                f"it is the input file {i}; writing there would overwrite it, so choose another output path",
            )
    target = os.path.join(os.path.realpath(head), tail)
    if os.path.islink(target):
        raise _refuse(
            errno.ELOOP,
            shown,
            f"it is a symbolic link (to {os.readlink(target)}); symtrans does not write through a link, "
            "give the path of the file itself",
        )
    directory = os.path.dirname(target)
    if not os.access(directory, os.W_OK | os.X_OK):
        raise _refuse(errno.EACCES, shown, f"the directory {directory} is not writable")
    return target


def _temp_name(base: str) -> str:
    import secrets  # here: reading commands that write no file do not pay for it

    token = secrets.token_hex(4)
    long = f".{base}.{token}.tmp"
    if len(os.fsencode(long)) <= max(len(os.fsencode(base)), _TEMP_NAME_FLOOR):
        return long
    return f".st-{token}.tmp"  # 16 bytes


def _create_temp(directory: str, base: str) -> tuple[int, str]:
    for _ in range(100):
        tmp = os.path.join(directory, _temp_name(base))
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name")


class _Signals:
    """Hold back SIGINT, SIGTERM and SIGHUP while the renames run; deliver them afterwards.

    The Python handlers are swapped for one that only notes the signal (Python runs
    handlers in the main thread, whichever thread the kernel picked, so this works with
    other threads alive, which blocking the signal with ``pthread_sigmask`` would not).
    On leaving, the first noted signal goes to the handler it was meant for: Ctrl-C
    raises ``KeyboardInterrupt`` then, and a default SIGTERM ends the process then.  Off
    the main thread nothing is swapped: Python delivers no signal there anyway.
    """

    _SET = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))

    def __enter__(self):
        self._old: dict[int, object] = {}
        self._pending: list[int] = []
        if threading.current_thread() is threading.main_thread():
            for sig in self._SET:
                handler = signal.getsignal(sig)
                if handler is None or handler is signal.SIG_IGN:  # not Python's to change, or ignored
                    continue
                self._old[sig] = signal.signal(sig, lambda signum, frame: self._pending.append(signum))
        return self

    def __exit__(self, *exc):
        for sig, handler in self._old.items():
            signal.signal(sig, handler)
        if self._pending:
            sig = self._pending[0]
            handler = self._old[sig]
            if callable(handler):
                handler(sig, None)  # e.g. signal.default_int_handler: KeyboardInterrupt
            else:  # SIG_DFL: what the signal would have done, now that the files are in place
                os.kill(os.getpid(), sig)
        return False


class Transaction:
    """The files one command writes: all are replaced together on ``commit``, or none.

    ``inputs`` are the files the command reads; no output may be one of them.  A ``path``
    of ``None`` means standard output, written after the files (so a failed commit prints
    nothing there either).

    Example::

        t = Transaction(inputs=["cfg.json"])
        t.add("r.md", text)
        t.add("r-shares.png", png)
        t.commit()
    """

    def __init__(self, inputs: Iterable[str | os.PathLike] = (), stdout=None, announce: bool = False) -> None:
        self.inputs = [os.fspath(i) for i in inputs]
        # announce: the files are the command's outputs, which a signal arriving just after
        # the renames names (interrupt.message); a cache file written on the way is not
        self._announce = announce
        self._files: dict[str, tuple[str, bytes]] = {}  # target path -> (path as given, bytes)
        self._streams: dict[str, tuple[str, str, BinaryIO]] = {}  # target -> (as given, temp file, file)
        self._stdout: list[str | bytes | BinaryIO] = []  # a BinaryIO: a streamed part, copied on commit
        self._out = stdout
        self._done = False

    def __len__(self) -> int:
        return len(self._files) + len(self._streams) + len(self._stdout)

    def add(self, path: str | os.PathLike | None, data: str | bytes) -> None:
        """Queue ``data`` (text is UTF-8 encoded) for ``path``; the target is checked now.

        Raises:
            TypeError: ``data`` is neither ``str`` nor ``bytes``.
            ValueError, OSError: as ``check_output``; also two outputs to one file.
        """
        if self._done:
            raise RuntimeError("this output transaction is already committed")
        if not isinstance(data, (str, bytes, bytearray, memoryview)):
            raise TypeError(f"an output needs str or bytes, not {type(data).__name__}")
        if path is None:
            self._stdout.append(data if isinstance(data, str) else bytes(data))
            return
        target, shown = self._claim(path)
        self._files[target] = (shown, data.encode("utf-8") if isinstance(data, str) else bytes(data))

    def _claim(self, path: str | os.PathLike) -> tuple[str, str]:
        """(target, path as given) of a new output; refuses a second output to one file."""
        target = check_output(path, self.inputs)
        shown = os.fsdecode(os.fspath(path))
        earlier = self._files.get(target, self._streams.get(target))
        if earlier is not None:
            raise _refuse(errno.EEXIST, shown, f"the command writes {earlier[0]} there already")
        return target, shown

    def stream(self, path: str | os.PathLike | None) -> BinaryIO:
        """A binary file for an output written in pieces (memory does not grow with it):
        for ``path`` a temporary file beside the target, renamed over it on ``commit``
        with the other files; for None (standard output) an anonymous temporary file,
        copied to standard output on ``commit`` (as UTF-8 text where standard output
        takes only text).  ``discard`` or a failed commit removes the temporary file.

        Raises:
            ValueError, OSError: as ``add``; also when the temporary file cannot be made.
        """
        if self._done:
            raise RuntimeError("this output transaction is already committed")
        if path is None:
            f = tempfile.TemporaryFile()  # no name: nothing to clean up after a crash
            self._stdout.append(f)
            return f
        target, shown = self._claim(path)
        directory, base = os.path.split(target)
        try:
            fd, tmp = _create_temp(directory, base)
        except PermissionError:
            raise _refuse(errno.EACCES, shown, f"the directory {directory} is not writable") from None
        except OSError as e:
            raise _refuse(e.errno or errno.EIO, shown, f"{e.strerror or e}; any earlier file is unchanged") from None
        f = os.fdopen(fd, "wb")
        self._streams[target] = (shown, tmp, f)
        return f

    def discard(self) -> None:
        """Give up the transaction: streamed temporary files are closed and removed;
        nothing is written.  A no-op after ``commit``."""
        if self._done:
            return
        self._done = True
        self._drop_streams()

    def _drop_streams(self) -> None:
        for _, tmp, f in self._streams.values():
            _close(f)
            _unlink(tmp)
        for part in self._stdout:
            if not isinstance(part, (str, bytes)):
                _close(part)

    def commit(self) -> None:
        """Write every queued file, then standard output; on failure nothing has changed.

        Raises:
            OSError: one sentence naming the file that could not be written, ending
                "any earlier file is unchanged".
        """
        if self._done:
            raise RuntimeError("this output transaction is already committed")
        self._done = True
        staged: list[tuple[str, str, str]] = []  # (path as given, target, temporary file)
        try:
            for target, (shown, tmp, f) in list(self._streams.items()):
                check_output(shown, self.inputs)  # again: the file system may have changed meanwhile
                self._finish_stream(shown, target, f)
                staged.append((shown, target, tmp))
            for target, (shown, payload) in list(self._files.items()):
                check_output(shown, self.inputs)
                staged.append((shown, target, self._stage(shown, target, payload)))
            with _Signals():
                check_interrupt()  # a signal a finaliser swallowed earlier still stops the run here
                self._rename_all(staged)
                if self._announce:  # a signal held back until now says what was written
                    note_written([shown for shown, _, _ in staged])
        except BaseException:
            for _, _, tmp in staged:
                _unlink(tmp)
            self._drop_streams()
            raise
        self._streams = {}  # renamed into place: nothing left to remove
        for directory in {os.path.dirname(t) for _, t, _ in staged}:
            _fsync_dir(directory)
        out = self._out if self._out is not None else sys.stdout
        try:
            for part in self._stdout:
                if isinstance(part, bytes):
                    out.flush()
                    out.buffer.write(part)
                    out.buffer.flush()
                elif isinstance(part, str):
                    out.write(part)
                else:
                    _copy_out(part, out)
            if self._stdout:
                out.flush()
        finally:
            self._drop_streams()

    @staticmethod
    def _finish_stream(shown: str, target: str, f: BinaryIO) -> None:
        """Flush, fsync and close a streamed file, with the target's mode (and owner)."""
        try:
            st = os.stat(target)
            mode, owner = stat.S_IMODE(st.st_mode), (st.st_uid, st.st_gid)
        except FileNotFoundError:
            mode, owner = 0o666 & ~_umask(), None
        try:
            f.flush()
            os.fsync(f.fileno())
            os.fchmod(f.fileno(), mode)
            if owner is not None and os.geteuid() == 0 and owner != (os.getuid(), os.getgid()):
                try:  # root replacing someone's file: the new file stays theirs
                    os.fchown(f.fileno(), *owner)
                except OSError:
                    pass
            f.close()
        except OSError as e:
            raise _refuse(e.errno or errno.EIO, shown, f"{e.strerror or e}; any earlier file is unchanged") from None

    @staticmethod
    def _stage(shown: str, target: str, payload: bytes) -> str:
        directory, base = os.path.split(target)
        try:
            st = os.stat(target)
            mode, owner = stat.S_IMODE(st.st_mode), (st.st_uid, st.st_gid)
        except FileNotFoundError:
            mode, owner = 0o666 & ~_umask(), None
        try:
            fd, tmp = _create_temp(directory, base)
        except PermissionError:
            raise _refuse(errno.EACCES, shown, f"the directory {directory} is not writable") from None
        except OSError as e:
            raise _refuse(e.errno or errno.EIO, shown, f"{e.strerror or e}; any earlier file is unchanged") from None
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(payload)
                f.flush()
                os.fsync(f.fileno())
                os.fchmod(f.fileno(), mode)
                if owner is not None and os.geteuid() == 0 and owner != (os.getuid(), os.getgid()):
                    try:  # root replacing someone's file: the new file stays theirs
                        os.fchown(f.fileno(), *owner)
                    except OSError:
                        pass
        except BaseException as e:
            _unlink(tmp)
            if isinstance(e, OSError):
                raise _refuse(
                    e.errno or errno.EIO, shown, f"{e.strerror or e}; any earlier file is unchanged"
                ) from None
            raise
        return tmp

    @staticmethod
    def _rename_all(staged: list[tuple[str, str, str]]) -> None:
        """Rename every staged file over its target; undo them all if one fails."""
        done: list[tuple[str, str | None]] = []  # (target, backup of the earlier file or None)
        try:
            for i, (shown, target, tmp) in enumerate(staged):
                backup = None
                try:
                    if i < len(staged) - 1 and os.path.lexists(target):  # a later failure must be undone
                        backup = _backup(target)
                    os.replace(tmp, target)
                except BaseException as e:
                    if backup:
                        _unlink(backup)
                    if isinstance(e, OSError):
                        raise _refuse(
                            e.errno or errno.EIO, shown, f"{e.strerror or e}; any earlier file is unchanged"
                        ) from None
                    raise
                done.append((target, backup))
        except BaseException:
            for target, backup in reversed(done):
                if backup is not None:
                    os.replace(backup, target)
                else:
                    _unlink(target)
            raise
        for _, backup in done:
            if backup is not None:
                _unlink(backup)


def _backup(target: str) -> str:
    """A second name for the earlier file (a hard link; a copy where links are not allowed)."""
    directory, base = os.path.split(target)
    for _ in range(100):
        name = os.path.join(directory, _temp_name(base))
        try:
            os.link(target, name)
            return name
        except FileExistsError:
            continue
        except OSError:
            break
    fd, name = _create_temp(directory, base)
    try:
        with os.fdopen(fd, "wb") as out, open(target, "rb") as src:
            while chunk := src.read(1 << 20):
                out.write(chunk)
            os.fchmod(out.fileno(), stat.S_IMODE(os.stat(target).st_mode))
    except BaseException:
        _unlink(name)
        raise
    return name


def _close(f) -> None:
    try:
        f.close()
    except OSError:
        pass


def _copy_out(f: BinaryIO, out) -> None:
    """Copy a streamed standard-output part to ``out``: its bytes to ``out.buffer``, or,
    where ``out`` takes only text (a StringIO), decoded as UTF-8."""
    import io

    f.flush()
    f.seek(0)
    buffer = getattr(out, "buffer", None)
    out.flush()
    if buffer is not None:
        shutil.copyfileobj(f, buffer, 1 << 20)
        buffer.flush()
        return
    text = io.TextIOWrapper(f, encoding="utf-8", newline="")
    try:
        shutil.copyfileobj(text, out, 1 << 20)
    finally:
        text.detach()


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _fsync_dir(directory: str) -> None:
    try:  # make the renames durable; not every file system allows it
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path: str | os.PathLike, data: str | bytes, inputs: Iterable[str | os.PathLike] = ()) -> None:
    """Write ``data`` (text is UTF-8 encoded) to ``path`` atomically (a one-file ``Transaction``).

    An existing file keeps its permission bits; a new file gets 0666 minus the umask.
    A symbolic link at the final component is refused (never followed), as ``check_output`` says.

    Raises:
        TypeError: if ``data`` is neither ``str`` nor ``bytes``.
        ValueError: if ``path`` is empty.
        IsADirectoryError, NotADirectoryError, FileNotFoundError, PermissionError,
        OSError: with one sentence naming the path, if it cannot be written (see
            ``check_output``).
    """
    t = Transaction(inputs)
    t.add(path, data)
    t.commit()


class atomic_file:  # noqa: N801 - used like open()
    """``with atomic_file(path) as f: f.write(bytes)``: one file written in pieces (a sweep
    streams its rows), a one-file streaming ``Transaction``: it replaces ``path``
    atomically when the block ends, and is removed, leaving any earlier file untouched,
    when the block raises (Ctrl-C and SIGTERM included, as exceptions).

    Raises (on entry): the errors of ``write_atomic``, naming the path; (on exit) the
    commit's ``OSError``.
    """

    def __init__(self, path: str | os.PathLike, inputs: Iterable[str | os.PathLike] = ()) -> None:
        self.path = path
        self._t = Transaction(inputs)

    def __enter__(self) -> BinaryIO:
        return self._t.stream(self.path)

    def __exit__(self, kind, value, tb) -> bool:
        if kind is None:
            self._t.commit()
        else:
            self._t.discard()
        return False
