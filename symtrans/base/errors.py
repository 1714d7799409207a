"""symtrans's own error classes: what the CLI turns into one line and exit 2.

A ``SymtransError`` is bad input or an unusable environment, explained in one sentence that
names what to change.  Every other exception is a bug and shows its traceback: the CLI
never turns a ValueError or KeyError raised by SymPy, NumPy or the standard library into a
one-line message (``tests/test_errors.py``).

The classes also derive from the builtin a caller would expect (``InputError`` is a
``ValueError``, ``UnknownNameError`` a ``KeyError``), so ``except ValueError`` still works.
"""

from __future__ import annotations

__all__ = ["EnvironmentProblem", "InputError", "SymtransError", "UnknownNameError"]


class SymtransError(Exception):
    """The root of symtrans's own errors (one sentence, for the user).

    ``str()`` is the one line a user sees, through the one message formatter
    (``escape.one_line``): quoted runs capped at 80 characters with their length, control
    characters escaped, so the API's messages are the CLI's.  ``args`` keep the full text.
    """

    def __str__(self) -> str:
        from symtrans.base.escape import one_line

        return one_line(super().__str__())


class InputError(SymtransError, ValueError):
    """A value, size, option, file or config that symtrans refuses (one sentence naming it)."""


class UnknownNameError(SymtransError, KeyError):
    """An unknown preset, symbol, component, section or identity (the message lists the known ones)."""

    def __str__(self) -> str:  # KeyError's str() quotes its argument
        from symtrans.base.escape import one_line

        return one_line(self.args[0]) if self.args else ""


class EnvironmentProblem(SymtransError, RuntimeError):
    """Something the machine lacks or refuses (TeX, a font, a browser, a time limit)."""
