"""The report section of a hand-count preset: the article's printed figures next to the
exact counts under its assumptions, and the gap to the real implementation
(``catalog.comparison.compare``, the same comparison ``symtrans params`` prints)."""

from __future__ import annotations

from typing import Any

from symtrans.catalog.comparison import compare
from symtrans.engine.spec import Spec

from . import doc
from .doc import N_, Column, Section, msg, runs, strong, table
from .mathfmt import count, thousands

_VERDICTS = {
    "exact": N_("exact"),
    "rounded": N_("rounds to the printed figure"),
    "rounded up": N_("rounded up to the printed figure"),
    "slip": N_("slip: the exact count is {difference} off"),
    "differs": N_("differs after --set by {difference}"),
    "absent": N_("absent under --set"),
}


_TIED = " (tied, not added)"


def citation(article: Any) -> tuple:
    """``article 003: 「title」 (English title), by AUTHOR`` as runs (the author, or that
    the text names none)."""
    byline = msg("by {author}", author=article.author) if article.author else msg("author not named in the text")
    return msg(
        "article {id}: 「{title}」 ({title_en}), {byline}",
        id=article.id,
        title=article.title,
        title_en=article.title_en,
        byline=byline,
    )


def _verdict(verdict: str, exact: int | None, printed: int) -> tuple:
    if verdict in ("slip", "differs") and exact is not None:
        return msg(_VERDICTS[verdict], difference=f"{exact - printed:+,}")
    return msg(_VERDICTS[verdict])


def handcount_section(preset: Any, spec: Spec, article: Any) -> Section:
    """The section "Article figures and exact counts" of a hand-count ``preset`` under ``spec``."""
    c = compare(preset, spec)
    blocks: list = []
    if article is not None:
        blocks.append(doc.Para(msg("The hand count of {citation}.", citation=citation(article))))
    if c.items:
        blocks.append(
            doc.Para(
                msg(
                    "Each figure the article prints, and the exact count under the article's assumptions "
                    "({total} in all):",
                    total=thousands(c.hand),
                )
            )
        )
        rows = []
        for it, value, verdict in c.items:
            # "(tied, not added)" is symtrans's remark on the article's figure, not the article's words
            quote, tied = (it.quote[: -len(_TIED)], True) if it.quote.endswith(_TIED) else (it.quote, False)
            rows.append(
                (
                    it.id,
                    runs("「", quote, "」", (" ", msg("(tied, not added)")) if tied else None),
                    it.printed,
                    thousands(value) if value is not None else "—",
                    _verdict(verdict, value, it.value),
                )
            )
        blocks.append(
            table(
                [
                    msg("item"),
                    Column(msg("the article's text"), wrap=0.34),
                    Column(msg("printed"), "r"),
                    Column(msg("exact"), "r"),
                    Column(msg("verdict"), wrap=0.16),
                ],
                rows,
                long=True,
                small=True,
            )
        )
    diff = c.real - c.hand
    blocks.append(
        doc.Para(
            msg(
                "The real implementation, {model}, has {count}: {difference} against the count under the "
                "article's assumptions.",
                model=doc.Code(c.real_label),
                count=strong(count(c.real)),
                difference=f"{diff:+,}",
            )
        )
    )
    if c.gap:
        blocks.append(doc.Bullets(tuple(runs(msg(term), ": ", f"{n:+,}") for term, n in c.gap)))
    return Section(
        "handcount",
        msg("Article figures and exact counts"),
        blocks,
        data={"hand": c.hand, "real": c.real, "items": [(it.id, it.value, v, vd) for it, v, vd in c.items]},
    )
