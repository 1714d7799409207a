"""Article 001's deployment section as a report section (``symtrans report handcount-001-deployment``).

Every figure the article prints in 「模型的算力要求計算方式」 (``catalog.deploy_handcount``):
its words, the printed figure, the article's own arithmetic from its own inputs with how
that arithmetic gives the printed digits, the exact figure for the article's model and the
slip, named.  It follows the article's parameter figures ("handcount").  A summary table first (printed, the article's value, exact), then one entry
per figure.  Like the deployment plan's section its prose is translated (``--lang``); the
article's quotes and arithmetic, the figures' ids and how each is worked out are data text,
escaped by each writer.  Nothing is recomputed here: the figures are ``deploy_handcount.verdicts()``.
"""

from __future__ import annotations

from fractions import Fraction


def _article(value: Fraction, unit: str) -> str:
    """The article's own arithmetic in its printed unit, to six significant digits."""
    return f"{float(value):.6g} {unit}"


def report_section() -> dict:
    """The keyword arguments of ``render.report.doc.add_section``: the section and the one it follows."""
    from symtrans.catalog import deploy_handcount as hc
    from symtrans.render.report import doc
    from symtrans.render.report.doc import N_

    rows = hc.verdicts()
    intro = doc.Bullets(
        (
            doc.msg(
                N_(
                    "{name}: the deployment calculation of article 001 ({title}) for its Transformer ({preset}), one "
                    "request and 100 concurrent ones; each printed figure with the article's own arithmetic from its "
                    "own inputs, how that gives the printed digits, the exact figure for its model and the slip, named"
                ),
                name=hc.HANDCOUNT,
                title="「模型的算力要求計算方式」",
                preset=hc.PRESET,
            ),
            doc.msg(
                N_(
                    "the article's inputs: P = {params} parameters (its model has {exact}), fp16, max_seq_len 512, "
                    "NVIDIA T4 at 65 TFLOPS and Hanguang 800 at 128 TFLOPS fp16, both at {utilisation} utilisation, "
                    "100 concurrent requests"
                ),
                params="77,600,000",
                exact="77,625,344",
                utilisation="70%",
            ),
            doc.runs(doc.strong(hc.HANGUANG_SOURCE)),
        )
    )
    table = doc.table(
        [
            doc.msg(N_("figure")),
            doc.Column(doc.msg(N_("printed")), "r"),
            doc.Column(doc.msg(N_("the article's arithmetic")), "r"),
            doc.msg(N_("digits")),
            doc.Column(doc.msg(N_("exact")), wrap=0.35),
        ],
        [(f.id, f.printed, _article(f.article, f.unit), how, hc.fmt_exact(f.exact, f.exact_unit)) for f, how in rows],
        small=True,
        long=True,
    )
    entries = []
    for f, how in rows:
        article = f"{f.arithmetic} = {_article(f.article, f.unit)}"
        if f.article_figure is not None:
            article += f" (it prints {f.article_figure:,})"
        items = [
            doc.runs(f"「{f.quote}」"),
            doc.msg(
                N_("the article's arithmetic: {article}; the printed digits: {digits}"), article=article, digits=how
            ),
            doc.msg(N_("exact: {exact}: {how}"), exact=hc.fmt_exact(f.exact, f.exact_unit), how=f.exact_how),
            doc.msg(N_("slip: {slip}"), slip=f.slip) if f.slip else doc.msg(N_("slip: none")),
        ]
        entries.append(doc.Heading(4, doc.runs(f"{f.id}: {f.printed}")))
        entries.append(doc.Bullets(tuple(items)))
    section = doc.Section(
        "deployment-handcount-001",
        doc.msg(N_("Article 001's deployment section")),
        [intro, table, *entries],
        data={"figures": [f.id for f, _ in rows]},
    )
    return {"section": section, "after": "handcount"}  # beside the article's parameter figures
