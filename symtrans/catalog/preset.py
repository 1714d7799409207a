"""The Preset record: a named Spec with its provenance (see ``presets`` for the table)."""

from __future__ import annotations

from dataclasses import dataclass, field

from symtrans.engine.spec import Spec


@dataclass(frozen=True)
class Preset:
    """A named model.

    Attributes:
        name: the CLI name, e.g. ``"llama-2-7b"``.
        spec: the architecture and sizes.
        source: where the sizes come from (paper table, config.json of a checkpoint).
        reference: the implementation whose parameter count the spec reproduces.
        published: the parameter figure as printed (text, e.g. ``"65M"``), and
            ``published_value`` its number in parameters.
        notes: why the published figure and the exact count differ, misprints, ...
        kind: ``"model"`` (reproduces an implementation) or ``"hand count"`` (reproduces
            a teaching article's count under its stated assumptions; see handcounts.py).
        real: for a hand count, the preset of the real implementation to compare with,
            and ``real_set`` the ``--set NAME=VALUE`` overrides applied to it.
        context_source: where the spec's workload length ``L`` (the documented training
            context) comes from, when it is not simply the position table's rows.
    """

    name: str
    spec: Spec
    source: str
    reference: str
    published: str = ""
    published_value: float | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    kind: str = "model"
    real: str = ""
    real_set: tuple[str, ...] = ()
    context_source: str = ""
