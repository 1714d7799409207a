"""argparse ``type=`` functions shared by the subcommands.

Kept apart from the catalog so that building the parser (every command does) reads no
preset: ``symtrans params`` of a preset answers from generated data without it.
"""

from __future__ import annotations

import argparse

from symtrans.base.numbers import parse_int

# Short names of --format values, as the report's -o extensions spell them (.md, .tex).
FORMAT_ALIASES = {"md": "markdown", "tex": "latex", "htm": "html"}


def format_arg(text: str) -> str:
    """An argparse ``type=`` for ``--format``: case-insensitive, and ``md``, ``tex`` and
    ``htm`` for markdown, latex and html (argparse then checks the command's choices)."""
    t = text.strip().lower()
    return FORMAT_ALIASES.get(t, t)


def size_arg(name: str):
    """An argparse ``type=`` for a workload size (``--batch``, ``--seq-len``, ``--prefill``, ...):
    an exact integer from 1 to 2**53, the limit ``--set`` and the Python API put on every size
    (``engine.spec.MAX_USER_SIZE``); budgets (``--compute``, ``--flops``) keep ``int_arg``'s.

    The returned function raises ``argparse.ArgumentTypeError`` (one line naming ``name``).
    """
    from symtrans.engine.spec import MAX_USER_SIZE

    parse_positive = int_arg(name)

    def parse(text: str) -> int:
        v = parse_positive(text)
        if v > MAX_USER_SIZE:
            raise argparse.ArgumentTypeError(f"{name} = {text} is implausibly large for a size (the limit is 2**53)")
        return v

    return parse


def int_arg(name: str, minimum: int = 1):
    """An argparse ``type=`` for an exact integer >= ``minimum`` (accepts 4096, 4_096, 7e9
    and the count shorthand every output prints, 1.5B, 70B, 124.4M, when it is whole).

    The returned function raises ``argparse.ArgumentTypeError`` (one line naming ``name``)
    for text that is not such an integer (``base.numbers.parse_int``: no float rounding,
    a bounded number of digits).
    """

    def parse(text: str) -> int:
        try:
            v = parse_int(text, name)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        if v < minimum:
            kind = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
            raise argparse.ArgumentTypeError(f"{name} must be {kind}, not {text}")
        return v

    return parse


def bytes_arg(name: str, allow_zero: bool = False):
    """An argparse ``type=`` for bytes, the one byte parser of every option
    (``base.numbers.parse_bytes``): 85899345920, 16e9, 80GB, 1.5GiB; positive (or zero
    with ``allow_zero``).  Raises ``argparse.ArgumentTypeError`` naming ``name``."""

    def parse(text: str) -> int:
        from symtrans.base.numbers import parse_bytes

        try:
            v = parse_bytes(text, name)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        if v < 0 or (v == 0 and not allow_zero):
            raise argparse.ArgumentTypeError(f"{name} must be {'zero or ' if allow_zero else ''}positive, not {text}")
        return v

    return parse
