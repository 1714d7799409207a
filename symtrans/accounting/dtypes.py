"""Number formats of weights, activations and caches: bytes per element, exact.

SymPy-free, so that a command can check a dtype name (and the CLI answer from generated
numbers) without importing SymPy; ``DType.bytes`` gives the SymPy Rational the closed
forms multiply by.  ``memory`` re-exports everything here.  Units: bytes per element.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from symtrans.base.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    import sympy as sp


@dataclass(frozen=True)
class DType:
    """A number format: bytes per element (exact; 1/2 for 4-bit) and where it is used."""

    name: str
    size: Fraction  # bytes per element
    note: str

    @property
    def bytes(self) -> sp.Rational:
        """Bytes per element as a SymPy Rational (for the closed forms)."""
        import sympy as sp

        return sp.Rational(self.size.numerator, self.size.denominator)


DTYPES: dict[str, DType] = {
    d.name: d
    for d in (
        DType("fp32", Fraction(4), "IEEE 754 single precision"),
        DType("bf16", Fraction(2), "bfloat16 (8-bit exponent, 7-bit mantissa)"),
        DType("fp16", Fraction(2), "IEEE 754 half precision"),
        DType("fp8", Fraction(1), "E4M3/E5M2 (Micikevicius et al. 2022)"),
        DType("int8", Fraction(1), "8-bit integer weights (LLM.int8(), Dettmers et al. 2022)"),
        DType(
            "int4",
            Fraction(1, 2),
            "4-bit weights (GPTQ, AWQ, NF4): two parameters per byte, so a packed "
            "tensor holds half as many uint8 elements as parameters; per-group scales "
            "are not included",
        ),
    )
}
TRAINING_DTYPES = ("fp32", "bf16", "fp16")


def get_dtype(name: str) -> DType:
    """The dtype called ``name``; ValueError listing the valid ones otherwise."""
    try:
        return DTYPES[name]
    except (KeyError, TypeError):
        raise InputError(f"unknown dtype {name!r}; valid dtypes: {', '.join(DTYPES)}") from None
