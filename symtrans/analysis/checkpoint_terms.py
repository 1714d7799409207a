"""The terms of ``inspect``'s explanation, ``stored elements - formula parameters``: their
keys and labels, in a module of their own so that ``analysis/checkpoint.py`` (the curated
explanation) and ``analysis/checkpoint_generic.py`` (the generic path's) share them
without importing each other."""

from __future__ import annotations

from dataclasses import dataclass

TERM_LABELS = {
    "tied_copy": "tied matrix stored twice",
    "buffers": "non-parameter buffers",
    "quant_metadata": "quantization metadata",
    "packing": "packed quantized weights (stored words vs the parameters they hold)",
    "padded_vocab": "padded vocabulary rows",
    "unexpected": "unexpected tensors (not in the counted model)",
    "missing": "missing tensors (in the formula, not stored)",
    "other": "shapes that differ from the formula's sizes",
}


@dataclass(frozen=True)
class Term:
    """One named part of ``stored elements - formula parameters`` (elements, signed)."""

    key: str
    elements: int
    tensors: tuple[str, ...] = ()
    detail: str = ""

    @property
    def label(self) -> str:
        return TERM_LABELS[self.key]
