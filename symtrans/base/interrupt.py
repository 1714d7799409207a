"""SIGINT, SIGTERM and SIGHUP as exceptions that cannot be swallowed, so cleanup runs on
every way a run can be stopped and no stopped run writes its files.

Python turns SIGINT (Ctrl-C) into ``KeyboardInterrupt``, which unwinds the stack: every
``finally`` block and context manager runs (a PDF build kills its TeX process group and
removes its temporary folder; an output transaction removes its temporary files).
SIGTERM and SIGHUP, by default, end the process at once and skip all of that.  Inside
``interrupts_as_exceptions()`` they raise ``Terminated`` instead, a ``KeyboardInterrupt``
subclass, so the one cleanup path serves all three signals.

An exception raised by a signal handler can be *swallowed*: when the handler happens to
run inside a finaliser (a weak-reference callback during garbage collection, a
``__del__``), Python prints "Exception ignored in: ..." and carries on, so a stopped run
went on to replace its output and exit 0 (issue 27.3).  Hence three guards:

* the handler first *records* the signal (``pending()``); the record is never cleared, so
  ``check()`` at the safe points (an output transaction calls it before its renames, the
  CLI before it returns) raises it again;
* while the block runs, ``sys.unraisablehook`` recognises a swallowed interrupt: it
  prints nothing and has the signal sent to the process again a moment later (from a
  helper thread), so it is raised once the finaliser has returned, in ordinary code;
* ``note_written`` records the files an output transaction has just renamed into place,
  so a signal landing after the renames says what was written (``message``).

Only the default disposition is replaced: a signal the caller ignores (``nohup``) or
handles itself keeps its handler.  Signal handlers belong to the main thread; elsewhere
the context manager does nothing.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator

__all__ = [
    "Terminated",
    "check",
    "exit_status",
    "interrupts_as_exceptions",
    "message",
    "note_written",
    "pending",
    "until_exit",
]

_CAUGHT = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))
_pending: list[int] = []  # signals received inside the block, first first; never cleared within a run
_written: list[str] = []  # files the last commit renamed into place
_raised = [0]  # how many times a handler raised (a re-sent signal is moot once it has)
_depth = [0]  # nesting of interrupts_as_exceptions: the outermost block starts a fresh record


class Terminated(KeyboardInterrupt):
    """The process received SIGTERM or SIGHUP (``signum``) inside ``interrupts_as_exceptions``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _exception(signum: int) -> KeyboardInterrupt:
    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)


def _raise(signum, frame) -> None:
    if signum not in _pending:
        _pending.append(signum)
    _raised[0] += 1
    raise _exception(signum)


def pending() -> int | None:
    """The first signal received inside ``interrupts_as_exceptions`` (None if none)."""
    return _pending[0] if _pending else None


def check() -> None:
    """Raise the interrupt of a signal already received (one a finaliser may have swallowed).

    Called at the safe points: before an output transaction renames its files, and when
    the CLI is about to report success.

    Raises:
        KeyboardInterrupt: ``Terminated`` for SIGTERM/SIGHUP, a plain one for SIGINT.
    """
    if _pending:
        _raised[0] += 1
        raise _exception(_pending[0])


def note_written(paths: list[str]) -> None:
    """Record the files an output transaction has just renamed into place (for ``message``)."""
    _written[:] = list(paths)


def _resend(signum: int) -> None:
    """Send ``signum`` to this process again a moment from now, from another thread: the
    main thread has left the finaliser by then, so the handler's exception propagates
    (if it lands in a finaliser again, the hook below sends it once more)."""

    raised = _raised[0]

    def later() -> None:
        time.sleep(0.02)
        if _depth[0] == 0 or _raised[0] != raised:  # the run is over, or the interrupt was raised meanwhile
            return
        try:
            os.kill(os.getpid(), signum)
        except OSError:
            pass

    threading.Thread(target=later, name="symtrans-resend-signal", daemon=True).start()


def _unraisable(previous):
    def hook(unraisable) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and _pending:
            for _ in range(3):  # swallowed in a finaliser: raised again in ordinary code
                try:
                    _resend(_pending[0])
                    return
                except KeyboardInterrupt:  # another signal landed in here: send once more
                    continue
            return  # check() at the next safe point still raises it
        previous(unraisable)

    return hook


@contextmanager
def interrupts_as_exceptions() -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP raise interrupts that cannot be lost
    (see the module docstring)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if _depth[0] == 0:  # a new run (the CLI called again in one process): nothing received yet
        _pending.clear()
        _written.clear()
    _depth[0] += 1
    replaced = {}
    for sig in _CAUGHT:
        if signal.getsignal(sig) is signal.SIG_DFL:
            replaced[sig] = signal.signal(sig, _raise)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not when ignored (nohup, &)
        replaced[signal.SIGINT] = signal.signal(signal.SIGINT, _raise)
    hook = None
    if replaced:
        hook, sys.unraisablehook = sys.unraisablehook, _unraisable(sys.unraisablehook)
    try:
        yield
    finally:
        _depth[0] -= 1
        for sig, old in replaced.items():
            signal.signal(sig, old)
        if hook is not None:
            sys.unraisablehook = hook


def until_exit() -> None:
    """For the rest of the process (the CLI, after its run): SIGINT, SIGTERM and SIGHUP at
    their default dispositions end it at once with one line saying what the run wrote
    and 128 + the signal number, instead of dying silently while the interpreter shuts
    down.  Ignored signals stay ignored; off the main thread nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        return

    def late(signum, frame) -> None:
        try:
            os.write(2, f"symtrans: {message(_exception(signum))}\n".encode("utf-8", "replace"))
        finally:
            os._exit(128 + signum)

    for sig in (*_CAUGHT, signal.SIGINT):
        current = signal.getsignal(sig)
        if current is signal.SIG_DFL or current is signal.default_int_handler:
            signal.signal(sig, late)


def exit_status(e: KeyboardInterrupt) -> int:
    """The shell's status for a run ended by this signal: 128 + its number (130 for Ctrl-C)."""
    return 128 + (e.signum if isinstance(e, Terminated) else signal.SIGINT)


def message(e: KeyboardInterrupt) -> str:
    """What stopped the run, and what it left, for its one line on stderr."""
    what = f"stopped by {signal.Signals(e.signum).name}" if isinstance(e, Terminated) else "interrupted (Ctrl-C)"
    if _written:
        shown = ", ".join(_written[:3]) + (f" and {len(_written) - 3} more" if len(_written) > 3 else "")
        return f"{what} after writing {shown} in full"
    return f"{what}; no output file was left half-written"
