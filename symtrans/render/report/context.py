"""The report model of a ``Resolved`` model: its sections as plain data (``doc``).

``build_context`` returns a ``doc.Report``: a list of ``Section``s, each a title and
blocks of inline runs.  The report's prose is written here (and in ``usage_report``,
``walk_section``) once, as ``doc.Msg`` message ids; the writers print the same model
as Markdown, LaTeX or HTML in any language of ``i18n``.  A later feature adds a section
with ``doc.add_section``; nothing else changes.

All prose of a derivation comes from the components (``Step.note``/``Step.source``);
all formulas from SymPy.  Counts are exact integers; shares are exact fractions rounded
for display only.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Iterator

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.engine import evaluate
from symtrans.engine.architectures import Workload, build
from symtrans.engine.conventions import CONVENTIONS
from symtrans.engine.cost import Cost, Step
from symtrans.engine.roles import Block
from symtrans.engine.simplify import closed_form
from symtrans.engine.spec import Spec
from symtrans.engine.symbols import LATEX_NAMES, SYMBOLS, legend_for

from . import doc
from .doc import N_, Column, Row, Section, UserText, data_msg, msg, runs, strong, table
from .mathfmt import Formula, count, equation, formula, join, number, percent_shares, ratio_percent, setting, thousands

# The FLOP convention of the forward-FLOPs section (one sentence, kept in conventions.py).
FLOP_CONVENTION = CONVENTIONS["flops"].description
# The layer Costs of architectures.build: their closed forms are shown per layer.


def _costs(
    cost: Cost, outer: sp.Expr = sp.Integer(1), path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], sp.Expr, Cost]]:
    """(path below the root, total multiplicity, cost) for every cost, depth first."""
    mult = outer * cost.multiplicity
    here = path + (cost.name,)
    yield here, mult, cost
    for c in cost.children:
        yield from _costs(c, mult, here)


# Where the workload length came from (``catalog.resolve.default_seq_len``,
# ``engine.workload.resolve_workload``): data text with a name or a number in it, read back
# into a message id and its placeholders so that it is translated (issue 25.9).
_LENGTH_SOURCES = (
    (
        re.compile(r"the documented training context of (?P<name>\S+) \(this config matches that preset\)"),
        N_("the documented training context of {name} (this config matches that preset)"),
    ),
    (re.compile(r"the documented training context of (?P<name>\S+)"), N_("the documented training context of {name}")),
    (
        re.compile(
            r"symtrans's default of (?P<n>\d+) tokens \(set --seq-len\); the model supports up to L_max = (?P<max>[\d,]+)"
        ),
        N_("symtrans's default of {n} tokens (set --seq-len); the model supports up to L_max = {max}"),
    ),
    (
        re.compile(r"symtrans's default of (?P<n>\d+) tokens \(set --seq-len\)"),
        N_("symtrans's default of {n} tokens (set --seq-len)"),
    ),
)


def _length_source_runs(text: str) -> tuple:
    """Where L came from, translated: a pattern of ``_LENGTH_SOURCES``, else ``data_msg``."""
    for pattern, msgid in _LENGTH_SOURCES:
        m = pattern.fullmatch(text)
        if m:
            return msg(msgid, **m.groupdict())
    return data_msg(text)


def _figure(text: str) -> tuple:
    """A published figure: as printed ("110M"), or translated when it is prose ("not printed
    (...)", "47B total, 13B active")."""
    return data_msg(text) if re.search(r"[a-z]{3,}", text) else runs(text)


def _path(names) -> tuple:
    """``decoder layer / attention norm``, each name translated (``data_msg``)."""
    out: list = []
    for i, name in enumerate(names):
        out += ([" / "] if i else []) + [data_msg(name)]
    return runs(*out)


def _shows_params(step: Step) -> bool:
    """Steps of the parameter derivation: those with parameters, tied matrices, and
    parameter-free components such as positions (FLOP-only steps are left out)."""
    return step.params != 0 or step.weights != 0 or (step.flops == 0 and step.elementwise == 0)


def _flop_values(wl: Any, spec: Spec) -> tuple[dict[str, int] | None, list[tuple[sp.Symbol, int]]]:
    """Sizes for the FLOPs section and the sequence lengths used (None without a workload)."""
    if wl is None:
        return None, []
    return wl.values(spec), [(SYMBOLS[n], x) for n, x in wl.lengths]


def _option_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _architecture(spec: Spec) -> list[tuple[str, str]]:
    """Every option (but ``family``) that differs from the Spec default, as text."""
    out = []
    for f in dataclasses.fields(Spec):
        if f.name in ("family", "sizes"):
            continue
        value = getattr(spec, f.name)
        default = f.default if f.default is not dataclasses.MISSING else None
        if value != default:
            out.append((f.name, _option_text(value)))
    return out


def _checked(n: int | None, what: str) -> int | None:
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise InputError(f"{what} must be a positive integer, not {n!r}")
    return n


def workload_runs(batch: int, lengths: list[tuple[sp.Symbol, int]]) -> tuple:
    """``B = 1, L = 1024`` as runs."""
    from symtrans.engine.symbols import B

    parts: list = [setting(B, batch)]
    for sym, n in lengths:
        parts += [", ", setting(sym, n)]
    return runs(*parts)


def _share(text: str) -> str:
    return f"{text}%"


NO_LENGTH = N_("the model sets no sequence length L; give seq_len (--seq-len) for values")


# The longest report title (characters).
MAX_TITLE = 1000


def build_context(
    resolved: Any, title: str | None = None, batch: int = 1, seq_len: int | None = None, workload: Any = None
) -> doc.Report:
    """The report of ``resolved`` (a ``resolve.Resolved``) as a ``doc.Report``.

    Args:
        title: the report title (user text); default ``"<name>: parameters and forward FLOPs"``.
        batch: sequences per batch ``B`` for the FLOPs sections.
        seq_len: tokens per sequence ``L`` for the FLOPs sections; default the spec's
            ``L`` (an encoder-decoder's stacks: ``engine.workload.resolve_workload``).
        workload: the command's ``engine.workload.Workload`` (then ``batch`` and
            ``seq_len`` are not read): the CLI resolves it once for the report and its charts.

    Raises:
        InputError: for a non-positive ``batch`` or ``seq_len``, a title longer than
            ``MAX_TITLE`` characters, or sizes that give a non-integer count.
    """
    from symtrans.engine.workload import resolve_workload

    batch = _checked(batch, "batch")
    seq_len = _checked(seq_len, "seq_len")
    if title is not None and len(title) > MAX_TITLE:
        # TeX's hyperref turns the title into PDF metadata in time quadratic in its length
        # (60,000 characters: minutes), and no heading of that size is a title.
        raise InputError(f"the title has {len(title):,} characters; a report title has at most {MAX_TITLE:,}")
    spec: Spec = resolved.spec
    preset = resolved.preset
    if workload is None and (seq_len is not None or spec.has("L")):
        workload = resolve_workload(spec, batch, seq_len, seq_len_source=getattr(resolved, "seq_len_source", ""))
    if workload is not None:
        batch = workload.batch
    model = build(spec, workload.tree() if workload is not None else Workload())
    values = dict(spec.values)
    fvalues, lengths = _flop_values(workload, spec)

    total = evaluate.exact(model.params, values)
    active = evaluate.exact(model.active_params, values) if spec.is_moe else None
    flops_total = evaluate.exact(model.flops, fvalues) if fvalues else None
    top = list(model.children)
    layers = [(path, mult, c) for path, mult, c in _costs(model) if c.block == Block.LAYER]

    from symtrans.catalog.handcounts import article_of

    article = article_of(preset.name) if preset is not None else None
    # where the sizes come from: a hand count cites its article (title and author, translated)
    source: tuple = ()
    if preset is not None:
        from .handcount_section import citation

        source = citation(article) if article is not None else runs(preset.source)
    report = doc.Report(
        title=runs(UserText(title))
        if title is not None
        else msg("{name}: parameters and forward FLOPs", name=resolved.name),
        name=resolved.name,
        subject=msg("Parameters, FLOPs and memory of {model}, derived by symtrans", model=resolved.name),
        language=article.language if article is not None else None,
        footer=msg(
            "Generated by symtrans from the model's Cost tree: every formula is printed by SymPy, every number is exact."
        ),
    )

    # -- overview (no heading: the headline numbers under the title) ----------------------
    rows: list[Row] = [Row((msg("parameters"), strong(count(total))))]
    if active is not None:
        rows.append(Row((msg("active parameters per token"), strong(count(active)))))
    if flops_total is not None:
        rows.append(
            Row(
                (
                    msg("forward FLOPs"),
                    msg(
                        "{flops} at {workload}",
                        flops=strong(count(flops_total, "FLOP")),
                        workload=workload_runs(batch, lengths),
                    ),
                )
            )
        )
        # where L came from (a config.json has no workload: symtrans's default), as the CLI says (issue 25.13)
        length_source = workload.seq_len_source if workload is not None else None
        if length_source:
            rows.append(Row((msg("sequence length from"), _length_source_runs(length_source))))
    rows.append(Row((msg("family"), data_msg(spec.family))))
    if preset is not None:
        rows.append(Row((msg("sizes from"), source)))
        rows.append(Row((msg("count reproduces"), data_msg(preset.reference))))
    options = "; ".join(f"{name} = {value}" for name, value in _architecture(spec))
    rows.append(Row((msg("options"), runs(options))))
    overview = table([Column(()), Column((), wrap=0.8)], rows, header=False)
    doc.add_section(
        report,
        Section(
            "overview",
            (),
            [overview],
            data={
                "name": resolved.name,
                "family": spec.family,
                "params": total,
                "active": active,
                "flops": flops_total,
                "batch": batch,
                "lengths": [(str(s), n) for s, n in lengths],
            },
        ),
    )

    # -- legend --------------------------------------------------------------------------
    legend_rows = []
    for info in legend_for(model.params, model.active_params, model.flops):
        value = values.get(info.name)
        flop_value = fvalues.get(info.name) if fvalues else None
        if value is not None:
            shown: tuple = runs(thousands(value))
            if flop_value is not None and flop_value != value:
                shown = runs(shown, " ", msg("(FLOPs section: {value})", value=thousands(flop_value)))
        elif flop_value is not None:
            shown = runs(thousands(flop_value))
        else:
            shown = runs("—")
        legend_rows.append((_symbol(info.name), msg(info.meaning), msg(info.unit), shown))
    doc.add_section(
        report,
        Section(
            "legend",
            msg("Symbols"),
            [
                table(
                    [msg("symbol"), Column(msg("meaning"), wrap=0.55), msg("unit"), Column(msg("value"), "r")],
                    legend_rows,
                )
            ],
        ),
    )

    # -- published figure vs exact count -------------------------------------------------
    if preset is not None and preset.published:
        items: list[tuple] = []
        pv = int(round(preset.published_value)) if preset.published_value is not None else None
        if pv is not None:
            items.append(
                msg(
                    "published: {figure} (read as {value}); {source}",
                    figure=strong(_figure(preset.published)),
                    value=thousands(pv),
                    source=source,
                )
            )
        else:
            items.append(msg("published: {figure}; {source}", figure=strong(_figure(preset.published)), source=source))
        items.append(
            msg(
                "exact count: {count}, the count of {reference}",
                count=strong(count(total)),
                reference=data_msg(preset.reference),
            )
        )
        if pv is not None:
            diff = total - pv
            text = (
                N_("the exact count is {difference} parameters above the published figure ({percent}%)")
                if diff >= 0
                else N_("the exact count is {difference} parameters below the published figure ({percent}%)")
            )
            items.append(msg(text, difference=thousands(abs(diff)), percent=ratio_percent(diff, pv) if pv else "—"))
        items += [data_msg(note) for note in preset.notes]  # translated like the derivation (issue 25.9)
        doc.add_section(
            report,
            Section(
                "published",
                msg("Published figure and exact count"),
                [doc.Bullets(tuple(items))],
                data={"published": preset.published, "value": pv},
            ),
        )

    # -- hand counts: the article's figures next to the exact counts -------------------------
    if preset is not None and preset.real:
        from .handcount_section import handcount_section

        doc.add_section(report, handcount_section(preset, spec, article))

    # -- breakdown -----------------------------------------------------------------------
    counts = [evaluate.exact(c.params, values) for c in top]
    shares = percent_shares(counts)
    headers = [msg("component"), Column(msg("parameters"), "r"), Column(msg("share"), "r")]
    if spec.is_moe:
        headers.append(Column(msg("active per token"), "r"))
    brows: list = []
    for c, n, share in zip(top, counts, shares):
        cells = [data_msg(c.name), thousands(n), _share(share)]
        if spec.is_moe:
            cells.append(thousands(evaluate.exact(c.active_params, values)))
        brows.append(cells)
    total_cells = [msg("total"), thousands(total), "100.00%"]
    if spec.is_moe:
        total_cells.append(thousands(active))
    brows.append(Row(tuple(total_cells), "total"))
    doc.add_section(
        report,
        Section(
            "breakdown",
            msg("Parameter breakdown"),
            [table(headers, brows)],
            data={"rows": [(c.name, n) for c, n in zip(top, counts)], "total": total, "active": active},
        ),
    )

    # -- closed forms --------------------------------------------------------------------
    blocks: list = []
    for path, mult, c in layers:
        each = evaluate.exact(c.params_each, values)
        n = evaluate.exact(mult, values)
        eq = equation(closed_form(c.params_each), values)
        lead = runs(
            msg(
                "{per_layer}, repeated {multiplicity} times ({count} × {each} = {total}):",
                per_layer=strong(msg("Parameters per {layer}", layer=data_msg(c.name))),
                multiplicity=join([formula(mult), number(n)]),
                count=thousands(n),
                each=thousands(eq.value),
                total=thousands(each * n),
            )
        )
        blocks.append(doc.Display(eq, lead))
        if spec.is_moe and c.active_each != c.params_each:
            blocks.append(
                doc.Display(
                    equation(closed_form(c.active_each), values),
                    msg("Active parameters per token in one {layer}:", layer=data_msg(c.name)),
                )
            )
    blocks.append(
        doc.Display(equation(closed_form(model.params), values), strong(msg("Parameters of the whole model:")))
    )
    if spec.is_moe:
        blocks.append(
            doc.Display(
                equation(closed_form(model.active_params), values),
                strong(msg("Active parameters per token of the whole model:")),
            )
        )
    doc.add_section(report, Section("closed_forms", msg("Closed forms"), blocks))

    # -- derivation ----------------------------------------------------------------------
    blocks = [
        doc.Para(
            msg(
                "Each line reads formula = substitution = value, in parameters per instance; "
                "× in a heading gives how many instances the model holds."
            )
        )
    ]
    for comp in top:
        blocks.append(doc.Heading(3, runs(data_msg(comp.name), ": ", count(evaluate.exact(comp.params, values)))))
        for path, mult, c in _costs(comp):
            steps = [s for s in c.steps if _shows_params(s)]
            if not steps:
                continue
            each = evaluate.exact(sp.Add(*[s.params for s in c.steps]), values)
            n = evaluate.exact(mult, values)
            if len(path) > 1:
                aside = join([formula(mult), number(n)]) if mult != 1 else None
                blocks.append(doc.Heading(4, _path(path[1:]), aside))
            blocks.append(
                doc.Derivation(
                    tuple(
                        doc.DerivationStep(
                            data_msg(s.label),
                            data_msg(s.note),
                            runs(s.source) if s.source else None,
                            equation(s.params, values),
                            equation(s.active, values) if s.active is not None else None,
                        )
                        for s in steps
                    ),
                    msg("active per token:"),
                )
            )
            if mult != 1:
                blocks.append(
                    doc.Para(
                        msg(
                            "Subtotal: {each} per instance × {count} = {total}.",
                            each=thousands(each),
                            count=thousands(n),
                            total=thousands(each * n),
                        )
                    )
                )
    doc.add_section(report, Section("derivation", msg("Derivation"), blocks))

    # -- sinusoidal positions --------------------------------------------------------------
    if spec.positional == "sinusoidal":
        doc.add_section(report, _sinusoids())

    # -- FLOPs ---------------------------------------------------------------------------
    blocks = [
        doc.Para(
            msg(
                "Convention: {convention}. Attention scores are counted over every query-key pair "
                "(no causal discount).",
                convention=msg(FLOP_CONVENTION),
            )
        )
    ]
    if fvalues is not None:
        flop_counts = [evaluate.exact(c.flops, fvalues) for c in top]
        flop_shares = percent_shares(flop_counts)
        blocks.append(doc.Para(msg("Workload: {workload}.", workload=workload_runs(batch, lengths))))
        frows: list = [[data_msg(c.name), thousands(n), _share(s)] for c, n, s in zip(top, flop_counts, flop_shares)]
        frows.append(Row((msg("total"), thousands(flops_total), "100.00%"), "total"))
        blocks.append(table([msg("component"), Column(msg("forward FLOPs"), "r"), Column(msg("share"), "r")], frows))
    else:
        blocks.append(doc.Para(msg("No values: {why}.", why=msg(NO_LENGTH))))
    for c in top:
        eq = equation(closed_form(c.flops), fvalues)
        if eq.constant and eq.value == 0:
            continue
        blocks.append(doc.Auto(eq, strong(data_msg(c.name), ":")))
    for path, mult, c in layers:
        blocks.append(
            doc.Display(
                equation(closed_form(c.flops_each), fvalues),
                runs(
                    strong(msg("Forward FLOPs per {layer}", layer=data_msg(c.name))),
                    " (× ",
                    join([formula(mult), number(evaluate.exact(mult, values))]),
                    "):",
                ),
            )
        )
    blocks.append(
        doc.Display(equation(closed_form(model.flops), fvalues), strong(msg("Forward FLOPs of the whole model:")))
    )
    doc.add_section(report, Section("flops", msg("Forward FLOPs"), blocks))

    # -- shape walk (walk.py: shapes of every step; their FLOPs sum to the total above) ------
    from symtrans.analysis.walk import layer_kinds
    from symtrans.render.report.walk_section import report_section

    if not layer_kinds(model):  # a hybrid's walk is `symtrans walk`'s (its steps have no zh entries yet)
        doc.add_section(report, report_section(spec, fvalues), after="flops")

    # -- training/inference FLOPs, memory and time (usage_report.py) ----------------------
    from symtrans.render.usage_report import add_sections as add_usage_sections

    add_usage_sections(report, spec, fvalues, after="walk")

    # -- sections the caller brings (Resolved.sections: e.g. cli/inspect.py's checkpoint vs formula)
    for extra in resolved.sections:
        doc.add_section(report, extra["section"], after=extra.get("after"))

    # -- assumptions ---------------------------------------------------------------------
    notes = [msg("A parameter is one scalar of a trainable tensor; tied tensors count once.")]
    notes += [runs(n) for n in resolved.notes]
    doc.add_section(report, Section("assumptions", msg("Assumptions"), [doc.Bullets(tuple(notes))]))
    return report


def _symbol(name: str) -> Formula:
    from symtrans.engine.symbols import SYMBOLS

    return formula(SYMBOLS[name])


def _sinusoids() -> Section:
    """PE(pos, 2i) and PE(pos, 2i+1) of Vaswani et al. 2017 §3.5, printed by SymPy.

    Built unevaluated, so the angle prints as the paper writes it, pos / 10000^(2i/d_model).
    """
    from symtrans.base.escape import Math
    from symtrans.engine.symbols import d_model

    from .mathfmt import _MathMLFormulaPrinter

    pos, i = sp.Symbol("pos", integer=True, nonnegative=True), sp.Symbol("i", integer=True, nonnegative=True)
    pe = sp.Function("PE")
    with sp.evaluate(False):
        angle = pos / sp.Integer(10000) ** (2 * i / d_model)
        eqs = [sp.Eq(pe(pos, 2 * i), sp.sin(angle)), sp.Eq(pe(pos, 2 * i + 1), sp.cos(angle))]
    names = dict(LATEX_NAMES)
    names[pos] = r"\mathit{pos}"

    def both(e: sp.Basic) -> Formula:
        return Formula(Math(sp.latex(e, symbol_names=names)), lambda: _MathMLFormulaPrinter().doprint(e))

    return Section(
        "positions",
        msg("Sinusoidal positions"),
        [
            doc.Para(
                msg(
                    "Fixed, not learned, so they add no parameters ({source}); {pos} is the position and {i} "
                    "the index of the feature pair:",
                    source="Vaswani et al. 2017 §3.5",
                    pos=both(pos),
                    i=both(i),
                )
            ),
            doc.Formulas(tuple(both(e) for e in eqs)),
        ],
    )
