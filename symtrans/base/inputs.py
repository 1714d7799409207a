"""Reading an input file: regular files only, a size cap, and one set of text encodings.

Every file symtrans reads (a ``config.json``, a CSV of configurations) goes through
``read_text``.  It opens nothing that is not a regular file (a FIFO would block until
a writer comes, ``/dev/zero`` never ends, a terminal waits for typing), it reads at most
``limit`` bytes, and it accepts exactly the encodings a text editor or Windows tool
writes: UTF-8 with or without a byte-order mark, and UTF-16 (either byte order) with
one.  Every failure is an ``InputError`` (a ``ValueError``) whose one sentence starts
with the path.
"""

from __future__ import annotations

import codecs
import os
import stat

from symtrans.base.errors import InputError  # noqa: F401 (re-exported)

__all__ = ["InputError", "read_text"]

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)
ENCODINGS = "UTF-8 or UTF-16 text (UTF-8 with or without a byte-order mark, UTF-16 with one)"


def _kind(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_bytes(path: str | os.PathLike, kind: str, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises:
        InputError: "PATH: ..." for a missing or unreadable file, anything but a regular
            file, or more than ``limit`` bytes.
    """
    shown = os.fsdecode(os.fspath(path))
    try:
        st = os.stat(path)  # before opening: opening a FIFO or a tape device has effects
        what = _kind(st.st_mode)
        if what is None and st.st_size > limit:
            raise InputError(f"{shown}: the file is {st.st_size:,} bytes, too large for {kind} (limit {limit:,})")
        if what is None:
            # O_NONBLOCK: should the file have become a FIFO since the stat, opening returns at once.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as f:
                what = _kind(os.fstat(fd).st_mode)
                raw = f.read(limit + 1) if what is None else b""
        if what is not None:
            raise InputError(f"{shown}: is {what}, not a regular file; {kind} must be a regular file")
    except InputError:
        raise
    except FileNotFoundError:
        raise InputError(f"{shown}: no such file") from None
    except NotADirectoryError:
        raise InputError(f"{shown}: no such file (a part of the path is not a directory)") from None
    except OSError as e:
        raise InputError(f"{shown}: cannot be read ({e.strerror or e})") from None
    if len(raw) > limit:
        raise InputError(f"{shown}: more than {limit:,} bytes, too large for {kind}")
    return raw


def decode(raw: bytes, shown: str, kind: str) -> str:
    """``raw`` as text: UTF-8 (a leading byte-order mark dropped) or UTF-16 with a byte-order mark.

    Raises:
        InputError: "SHOWN: is not UTF-8 or UTF-16 text ..., so not KIND (byte 0x.. at offset N)".
    """
    if raw.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        encoding = None  # UTF-32 also starts with a UTF-16 byte-order mark: not a UTF-16 file
    elif raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"  # the codec reads the mark, picks the byte order and drops it
    else:
        encoding = "utf-8-sig"
    try:
        if encoding is None:
            raise UnicodeDecodeError("utf-32", raw, 0, 4, "UTF-32 is not supported")
        text = raw.decode(encoding)
    except UnicodeDecodeError as e:
        ends = e.end >= len(raw) and ("end of data" in e.reason or "truncated" in e.reason)
        where = f"byte 0x{raw[e.start]:02x} at offset {e.start}" + (
            ", where the file ends mid-character" if ends else ""
        )
        raise InputError(f"{shown}: is not {ENCODINGS}, so not {kind} ({where})") from None
    if "\x00" in text:  # valid UTF-8, but no text holds NUL: typically UTF-16 without its byte-order mark
        where = f"a NUL character at offset {text.index(chr(0))}; UTF-16 needs a byte-order mark"
        raise InputError(f"{shown}: is not {ENCODINGS}, so not {kind} ({where})")
    return text


def read_text(path: str | os.PathLike, kind: str, limit: int) -> str:
    """The text of the regular file ``path`` (at most ``limit`` bytes; see the module docstring).

    ``kind`` names what the file should be, for the messages ("a config.json", "a CSV file").

    Raises:
        InputError: one sentence starting with the path: no such file, not a regular file,
            too large, or not in one of the accepted encodings.
    """
    return decode(read_bytes(path, kind, limit), os.fsdecode(os.fspath(path)), kind)
