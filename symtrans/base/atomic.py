"""Atomic file output: a failed write leaves any earlier file intact.

``write_atomic`` writes to a temporary file in the target's own directory (so the
final ``os.replace`` is a rename on one file system, which POSIX makes atomic), flushes
and fsyncs it, then renames it over the target.  On any failure the temporary file is
removed and the earlier file, if any, is untouched.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile

__all__ = ["atomic_file", "write_atomic"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Write ``data`` (text is UTF-8 encoded) to ``path`` atomically.

    An existing file keeps its permission bits; a new file gets 0666 minus the umask.
    A symbolic link is followed: the file it points to is replaced, the link stays.

    Raises:
        TypeError: if ``data`` is neither ``str`` nor ``bytes``.
        ValueError: if ``path`` is empty.
        IsADirectoryError, NotADirectoryError, FileNotFoundError, PermissionError,
        OSError: with one sentence naming the path, if it cannot be written.
    """
    if isinstance(data, str):
        payload = data.encode("utf-8")
    elif isinstance(data, (bytes, bytearray, memoryview)):
        payload = bytes(data)
    else:
        raise TypeError(f"write_atomic needs str or bytes, not {type(data).__name__}")
    with atomic_file(path) as f:
        f.write(payload)


class atomic_file:  # noqa: N801 - used like open()
    """``with atomic_file(path) as f: f.write(bytes)``: a file written in pieces (a sweep
    streams its rows) that replaces ``path`` atomically when the block ends, and is
    removed, leaving any earlier file untouched, when the block raises.

    Raises (on entry): the errors of ``write_atomic``, naming the path.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        target = os.fspath(path)
        if isinstance(target, bytes):
            target = os.fsdecode(target)
        if not target:
            raise ValueError("the output path is empty")
        self.target = target

    def __enter__(self):
        target = self.target
        if target.endswith(os.sep) or os.path.isdir(target):
            raise IsADirectoryError(errno.EISDIR, f"cannot write {target}: it is a directory, give a file name")
        if os.path.islink(target):
            target = self.target = os.path.realpath(target)
        directory = os.path.dirname(os.path.abspath(target))
        if not os.path.exists(directory):
            raise FileNotFoundError(errno.ENOENT, f"cannot write {target}: the directory {directory} does not exist")
        if not os.path.isdir(directory):
            raise NotADirectoryError(errno.ENOTDIR, f"cannot write {target}: {directory} is not a directory")
        try:
            self.mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            self.mode = 0o666 & ~_umask()
        except OSError as e:
            raise OSError(e.errno, f"cannot write {target}: {e.strerror or e}") from None
        try:
            fd, self.tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(target) + ".", suffix=".tmp")
        except PermissionError:
            raise PermissionError(
                errno.EACCES, f"cannot write {target}: the directory {directory} is not writable"
            ) from None
        except OSError as e:
            raise OSError(e.errno, f"cannot write {target}: {e.strerror or e}") from None
        self.file = os.fdopen(fd, "wb")
        return self.file

    def __exit__(self, kind, value, tb) -> bool:
        committing = kind is None
        if committing:
            try:
                self.file.flush()
                os.fsync(self.file.fileno())
                self.file.close()
                os.chmod(self.tmp, self.mode)
                os.replace(self.tmp, self.target)
                return False
            except BaseException as e:  # noqa: BLE001 - cleaned up and re-raised below
                value = e
        try:  # the block or the commit failed: drop the temporary file, keep any earlier one
            self.file.close()
        except OSError:
            pass
        try:
            os.unlink(self.tmp)
        except OSError:
            pass
        if isinstance(value, OSError):
            raise OSError(
                value.errno, f"cannot write {self.target}: {value.strerror or value}; any earlier file is unchanged"
            ) from None
        if committing:
            raise value
        return False  # the block's own exception propagates
