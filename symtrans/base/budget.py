"""A CPU-time budget for symbolic work that user input can make arbitrarily large.

Rule expressions (``--keep``) are bounded by their degree and expanded size
(``safe_parse``), but what SymPy then does with them (solving, simplifying, compiling a
sweep) has no useful a-priori bound.  ``time_budget`` runs such a block under a limit of
process CPU time (``setitimer(ITIMER_PROF)``, so a machine shared with other jobs does
not shorten it) and turns an overrun into ``BudgetExceeded``, a ``ValueError`` whose
message is one line naming the work: the CLI prints it and exits 2.

The timer needs the main thread of a Unix process; elsewhere (a worker thread, Windows)
the block runs without a limit, bounded only by the static checks.  Nested budgets keep
the outer deadline when it is the earlier one.
"""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from typing import Iterator

from symtrans.base.errors import InputError

SECONDS = 6.0  # CPU seconds: every legitimate solve or sweep compiles in well under one


class BudgetExceeded(InputError):
    """Symbolic work ran past its CPU-time budget (a ValueError: bad input, exit 2)."""


_active: list[float] = []  # CPU-time deadlines of the budgets in force, innermost last


def _available() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_budget(what: str, seconds: float | None = None) -> Iterator[None]:
    """Run the block with at most ``seconds`` (default ``SECONDS``) of CPU time.

    Raises:
        BudgetExceeded: "<what> needs more than N s of CPU time; ...", when it overruns.
    """
    limit = SECONDS if seconds is None else seconds
    if not _available():
        yield
        return
    now = time.process_time()
    deadline = now + limit
    if _active and _active[-1] < deadline:  # an enclosing budget ends first: it stays in charge
        yield
        return

    def expire(signum, frame):  # runs in the main thread, between bytecodes
        raise BudgetExceeded(
            f"{what} needs more than {limit:g} s of CPU time; the expression is too large to "
            "handle symbolically: simplify the constraints (--keep) or the budget"
        )

    previous = signal.signal(signal.SIGPROF, expire)
    outer = signal.getitimer(signal.ITIMER_PROF)
    _active.append(deadline)
    signal.setitimer(signal.ITIMER_PROF, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        _active.pop()
        signal.signal(signal.SIGPROF, previous)
        if outer[0] > 0:  # restore an enclosing timer with what is left of it
            left = outer[0] - (time.process_time() - now)
            signal.setitimer(signal.ITIMER_PROF, max(left, 1e-3), outer[1])
