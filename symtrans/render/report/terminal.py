"""A short plain-text summary of a report, for the terminal (``symtrans report``).

The headline numbers of the report model (``doc.Report``: the overview, breakdown and
published sections' figures), a few lines a person reads at a glance, instead of the
whole derivation; the derivation goes to a file (``-o NAME.html``, ``.md``, ``.tex``,
``.pdf``).
"""

from __future__ import annotations

import os

from symtrans.base.numbers import count as short
from symtrans.base.numbers import grouped, si

from . import doc

_KINDS = {"markdown": "Markdown", "latex": "LaTeX", "pdf": "PDF", "html": "HTML"}


def summary(report: doc.Report, output: str | None = None, fmt: str | None = None) -> str:
    """The summary lines of ``report``; with ``output``, a last line naming the written file
    (its format and size), else how to write the whole report."""
    over = report.section("overview").data
    lines = [f"{over['name']}: {grouped(over['params'])} parameters ({short(over['params'])})"]
    if over.get("active") is not None:
        lines.append(f"  active per token: {grouped(over['active'])} ({short(over['active'])})")
    if over.get("flops") is not None:
        workload = ", ".join([f"B = {over['batch']}"] + [f"{s} = {grouped(n)}" for s, n in over["lengths"]])
        lines.append(f"  forward FLOPs at {workload}: {grouped(over['flops'])} ({si(over['flops'])})")
    try:
        lines.append(f"  published: {report.section('published').data['published']}")
    except KeyError:
        pass
    try:
        parts = report.section("breakdown").data
    except KeyError:
        parts = None
    if parts:
        total = parts["total"] or 1
        shown = ", ".join(f"{name} {short(n)} ({100 * n / total:.1f}%)" for name, n in parts["rows"])
        lines.append(f"  components: {shown}")
    try:
        hand = report.section("handcount").data
        lines.append(
            f"  article's hand count: {grouped(hand['hand'])}; real implementation {grouped(hand['real'])} "
            f"({hand['real'] - hand['hand']:+,})"
        )
    except KeyError:
        pass
    if output:
        size = os.path.getsize(output) if os.path.exists(output) else None
        what = _KINDS.get(fmt or "", "")
        detail = ", ".join(x for x in (what, f"{size / 1024:.0f} kB" if size is not None else "") if x)
        hint = "; open it in a browser" if fmt == "html" else ""
        lines.append(f"  report: {output}" + (f" ({detail}{hint})" if detail else ""))
    else:
        lines.append(
            f"  the whole derivation: symtrans report {report.name} -o {_stem(report.name)}.html (or .md, .tex, .pdf)"
        )
    return "\n".join(lines)


def _stem(name: str) -> str:
    base = os.path.splitext(os.path.basename(name))[0]
    return "".join(c if c.isalnum() or c in ".-" else "-" for c in base) or "report"
