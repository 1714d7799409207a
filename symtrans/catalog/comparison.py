"""A hand count against its real implementation: the article's figures, item by item,
and the gap to the real count split into named terms (``symtrans params NAME``)."""

from __future__ import annotations

from dataclasses import dataclass

from symtrans.base.errors import InputError
from symtrans.base.numbers import grouped
from symtrans.catalog.handcounts import ITEMS, Item, _spec_with, gap_terms, item_value, verdict
from symtrans.catalog.preset import Preset
from symtrans.catalog.presets import get
from symtrans.engine.architectures import build
from symtrans.engine.evaluate import exact
from symtrans.engine.spec import Spec


@dataclass(frozen=True)
class Comparison:
    """A hand count next to the real implementation (all counts in parameters).

    Attributes:
        hand: exact count under the article's assumptions (the preset's Spec).
        items: (item, exact value, verdict) per printed figure of the article; the
            value is None and the verdict ``"absent"`` when ``--set`` removed the component;
            a figure that no longer matches after ``--set`` is ``"differs"``, not a slip.
        real_label: the real implementation as a command, e.g.
            ``"transformer-base --set V=32000"``; ``real`` its exact count.
        gap: ``gap_terms(hand spec, real spec)``; sums to ``real - hand``.
    """

    name: str
    hand: int
    items: tuple[tuple[Item, int | None, str], ...]
    real_label: str
    real: int
    gap: tuple[tuple[str, int], ...]


def compare(preset: Preset, spec: Spec | None = None) -> Comparison:
    """Compare ``preset`` (a hand count) with its real implementation.

    ``spec`` overrides the hand-count side (e.g. after ``--set``); the real side is
    always ``preset.real`` with ``preset.real_set``.

    Raises:
        ValueError: if the preset names no real implementation.
        KeyError: if ``preset.real`` is not a preset.
    """
    if not preset.real:
        raise InputError(f"preset {preset.name!r} names no real implementation to compare with")
    spec = spec or preset.spec
    real_spec = _spec_with(get(preset.real).spec, preset.real_set)
    items = []
    for it in ITEMS.get(preset.name, ()):
        try:
            v = item_value(spec, it)
        except KeyError:  # --set removed the component (e.g. norm=none): nothing to compare
            items.append((it, None, "absent"))
            continue
        vd = verdict(it.value, v, it.tolerance, it.up_to)
        items.append((it, v, vd if spec == preset.spec or vd == "exact" else "differs"))
    label = " ".join([preset.real, *(f"--set {s}" for s in preset.real_set)])
    return Comparison(
        preset.name,
        exact(build(spec).params, spec.values),
        tuple(items),
        label,
        exact(build(real_spec).params, real_spec.values),
        tuple(gap_terms(spec, real_spec)),
    )


def comparison_json(preset: Preset, spec: Spec | None = None) -> dict:
    """``compare`` as a JSON-ready dict (exact integers)."""
    c = compare(preset, spec)
    return {
        "kind": preset.kind,
        "exact_under_assumptions": c.hand,
        "items": [
            {
                "id": it.id,
                "quote": it.quote,
                "printed": it.printed,
                "printed_value": it.value,
                "exact": v,
                "verdict": vd,
            }
            for it, v, vd in c.items
        ],
        "real": {
            "model": c.real_label,
            "total": c.real,
            "difference": c.real - c.hand,
            "terms": [{"term": t, "parameters": n} for t, n in c.gap],
        },
    }


def comparison_lines(preset: Preset, spec: Spec | None = None) -> list[str]:
    """``compare`` as indented text lines for ``symtrans params``."""
    c = compare(preset, spec)
    lines = []
    if c.items:
        lines.append("  article figures (printed -> exact under the article's assumptions):")
        for it, v, vd in c.items:
            if v is None:
                lines.append(f"    {it.id:<7} {it.printed:>22} -> {'-':>12}  absent under --set  「{it.quote}」")
                continue
            mark = {
                "exact": "exact",
                "rounded": "rounds to the printed figure",
                "rounded up": "rounded up to the printed figure",
                "differs": f"differs after --set: {v - it.value:+,}",
            }.get(vd, f"slip: exact is {v - it.value:+,}")
            lines.append(f"    {it.id:<7} {it.printed:>22} -> {grouped(v):>12}  {mark}  「{it.quote}」")
    diff = c.real - c.hand
    terms = ", ".join(f"{t} {n:+,}" for t, n in c.gap)
    lines.append(
        f"  real implementation ({c.real_label}): {grouped(c.real)} ({diff:+,}{': ' + terms if terms else ''})"
    )
    return lines
