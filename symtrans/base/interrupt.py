"""SIGTERM and SIGHUP as exceptions, so cleanup runs on every way a run can be stopped.

Python turns SIGINT (Ctrl-C) into ``KeyboardInterrupt``, which unwinds the stack: every
``finally`` block and context manager runs (a PDF build kills its TeX process group and
removes its temporary folder; an output transaction removes its temporary files).
SIGTERM and SIGHUP, by default, end the process at once and skip all of that.  Inside
``interrupts_as_exceptions()`` they raise ``Terminated`` instead, a ``KeyboardInterrupt``
subclass, so the one cleanup path serves all three signals.

Only the default disposition is replaced: a signal the caller ignores (``nohup``) or
handles itself keeps its handler.  Signal handlers belong to the main thread; elsewhere
the context manager does nothing.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator

__all__ = ["Terminated", "exit_status", "interrupts_as_exceptions", "message"]

_CAUGHT = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))


class Terminated(KeyboardInterrupt):
    """The process received SIGTERM or SIGHUP (``signum``) inside ``interrupts_as_exceptions``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise(signum, frame) -> None:
    raise Terminated(signum)


@contextmanager
def interrupts_as_exceptions() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise ``Terminated`` (see the module docstring)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    replaced = {}
    for sig in _CAUGHT:
        if signal.getsignal(sig) is signal.SIG_DFL:
            replaced[sig] = signal.signal(sig, _raise)
    try:
        yield
    finally:
        for sig, old in replaced.items():
            signal.signal(sig, old)


def exit_status(e: KeyboardInterrupt) -> int:
    """The shell's status for a run ended by this signal: 128 + its number (130 for Ctrl-C)."""
    return 128 + (e.signum if isinstance(e, Terminated) else signal.SIGINT)


def message(e: KeyboardInterrupt) -> str:
    """What stopped the run, for its one line on stderr."""
    if isinstance(e, Terminated):
        return f"stopped by {signal.Signals(e.signum).name}; no output file was left half-written"
    return "interrupted (Ctrl-C); no output file was left half-written"
