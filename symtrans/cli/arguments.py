"""argparse ``type=`` functions shared by the subcommands.

Kept apart from the catalog so that building the parser (every command does) reads no
preset: ``symtrans params`` of a preset answers from generated data without it.
"""

from __future__ import annotations

import argparse

from symtrans.base.numbers import parse_int


def int_arg(name: str, minimum: int = 1):
    """An argparse ``type=`` for an exact integer >= ``minimum`` (accepts 4096, 4_096, 7e9).

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
