"""The report's section model: plain data that the Markdown, LaTeX and HTML writers print.

A report is a ``Report`` holding ``Section``s; a section is a title and a list of
*blocks* (paragraphs, bullet lists, tables, derivations, displayed equations, charts);
a block holds *inline runs*.  All the report's prose is written once, here in the
section builders (``context``, ``usage_report``, ``walk_section``), never in a writer:
the writers (``templates/<format>.j2``) only decide how a paragraph, a table or a
formula looks in their format.

Inline runs:

* ``Text``: data text (a model name, a Step's note, a source): escaped, never translated;
* ``Msg``: the report's own prose, an English message id translated at write time
  through the gettext catalogs (``i18n``), with ``{name}`` placeholders filled by
  other runs (``args``), so a translation may reorder them;
* ``Formula`` (``mathfmt``): math printed by SymPy, as LaTeX and as MathML;
* ``Strong`` (bold runs) and ``Code`` (a command, in a monospace font).

A run sequence is a tuple of runs; ``runs(...)`` builds one from runs and plain
strings (a plain string is ``Text``).  ``N_`` marks a message id for extraction
(``pybabel extract -k N_ -k msg``) without translating it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence, Union

from symtrans.base.errors import UnknownNameError

from .mathfmt import Equation, Formula


def N_(msgid: str) -> str:  # noqa: N802 (gettext's name for a no-op marker)
    """Mark ``msgid`` for extraction; it is translated when written, not here."""
    return msgid


# -- inline runs -------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """Data text, printed escaped and untranslated."""

    text: str
    kind: str = field(default="text", init=False)


class UserText(str):
    """A user's own text (``report --title``), printed literally: the writers escape it
    but never set its ``x_1``-like words as symbols, as they do in symtrans's data text."""


@dataclass(frozen=True)
class Msg:
    """Report prose: ``msgid`` translated when written, its ``{name}`` placeholders
    replaced by ``args[name]`` (a run sequence)."""

    msgid: str
    args: Mapping[str, tuple] = field(default_factory=dict)
    kind: str = field(default="msg", init=False)


@dataclass(frozen=True)
class Strong:
    """Bold runs."""

    runs: tuple
    kind: str = field(default="strong", init=False)


@dataclass(frozen=True)
class Code:
    """A command or file name in a monospace font (escaped, untranslated)."""

    text: str
    kind: str = field(default="code", init=False)


Run = Union[Text, Msg, Strong, Code, Formula]
_RUNS = (Text, Msg, Strong, Code, Formula)


def runs(*items: Any) -> tuple:
    """A run sequence from runs, ``Formula``s, nested run sequences and plain strings
    (data text).  ``None`` items are skipped."""
    out: list = []
    for item in items:
        if item is None:
            continue
        if isinstance(item, str):
            out.append(Text(item))
        elif isinstance(item, (tuple, list)):
            out.extend(runs(*item))
        elif isinstance(item, _RUNS):
            out.append(item)
        else:
            raise TypeError(f"not an inline run: {item!r}")
    return tuple(out)


def msg(msgid: str, **args: Any) -> tuple:
    """A one-run sequence: the message ``msgid`` with its placeholders filled by ``args``
    (each a run, a Formula, a string of data text, or a run sequence)."""
    return (Msg(msgid, {k: runs(v) for k, v in args.items()}),)


def data_msg(text: str) -> tuple:
    """Data text of a lower layer as a message id: the Cost tree's component names, step
    labels and notes, a preset's notes and reference, the published formulas' quantities
    and assumptions, the optimizer and the roofline's assumptions.  Translated when the
    language's catalog has it, else printed as it is (issue 25.9); tests/test_report_i18n.py
    requires a translation of every one a preset's report prints.  Text with a ``{`` is
    never a message id (it would read as a placeholder)."""
    return msg(text) if "{" not in text else runs(text)


def data_list(texts: Any, sep: str = "; ") -> tuple:
    """``data_msg`` of each of ``texts``, joined by ``sep``."""
    out: list = []
    for i, text in enumerate(texts):
        out += ([sep] if i else []) + [data_msg(text)]
    return runs(*out)


def strong(*items: Any) -> tuple:
    """A one-run sequence: ``items`` (as ``runs`` takes them) in bold."""
    return (Strong(runs(*items)),)


# -- blocks ----------------------------------------------------------------------


@dataclass(frozen=True)
class Para:
    runs: tuple
    kind: str = field(default="para", init=False)


@dataclass(frozen=True)
class Bullets:
    items: tuple  # of run sequences
    kind: str = field(default="bullets", init=False)


@dataclass(frozen=True)
class Heading:
    """A heading inside a section (level 3 or 4), with an optional right-hand part."""

    level: int
    runs: tuple
    aside: tuple | None = None
    kind: str = field(default="heading", init=False)


@dataclass(frozen=True)
class Column:
    """A table column: header runs, ``align`` ``"l"`` or ``"r"``, and ``wrap``: the share
    of the line width a column of running text may take (``None``: as wide as its cells)."""

    header: tuple
    align: str = "l"
    wrap: float | None = None


@dataclass(frozen=True)
class Row:
    """A table row; ``style`` is ``"body"``, ``"total"`` (set off, bold) or ``"group"``
    (a heading row spanning the table: its first cell only)."""

    cells: tuple  # of run sequences
    style: str = "body"


@dataclass(frozen=True)
class Table:
    """``long``: may run over pages; ``small``: set in a smaller font (wide tables);
    ``header``: print the header row (a key-value table has none)."""

    columns: tuple
    rows: tuple
    long: bool = False
    small: bool = False
    header: bool = True
    kind: str = field(default="table", init=False)


@dataclass(frozen=True)
class Display:
    """A derivation on its own lines: formula = substitution = value, after ``lead``."""

    eq: Equation
    lead: tuple = ()
    kind: str = field(default="display", init=False)


@dataclass(frozen=True)
class Auto:
    """A derivation inline when it fits one line, else displayed, after ``lead``."""

    eq: Equation
    lead: tuple = ()
    kind: str = field(default="auto", init=False)


@dataclass(frozen=True)
class Formulas:
    """Displayed formulas, one per line (no substitution)."""

    formulas: tuple
    kind: str = field(default="formulas", init=False)


@dataclass(frozen=True)
class DerivationStep:
    """One step of a derivation: its label, note and source, and its equation(s)."""

    label: tuple
    note: tuple
    source: tuple | None
    eq: Equation
    active: Equation | None = None


@dataclass(frozen=True)
class Derivation:
    """Steps shown as ``label: formula = substitution = value — note (source)``;
    ``active_label`` introduces a step's active-per-token equation."""

    steps: tuple
    active_label: tuple = ()
    kind: str = field(default="derivation", init=False)


@dataclass(frozen=True)
class Chart:
    """A chart: ``path`` (a file symtrans wrote next to the report, named by symtrans),
    or ``svg`` (the chart itself, inlined in HTML); ``title`` its caption."""

    title: tuple
    path: str = ""
    svg: str = ""
    kind: str = field(default="chart", init=False)


Block = Union[Para, Bullets, Heading, Table, Display, Auto, Formulas, Derivation, Chart]


# -- sections and the report ----------------------------------------------------------


@dataclass
class Section:
    """``id`` names the section (``add_section(after=...)``); ``title`` is a run sequence."""

    id: str
    title: tuple
    blocks: list = field(default_factory=list)
    data: Any = None  # the section's figures as plain data, for other outputs (the terminal summary)


@dataclass
class Report:
    """A whole report.

    Attributes:
        title: the title (a run sequence: the user's text, or the default message).
        name: the model's name (preset, config path, or "PRESET, modified ...").
        subject: the hyperref/HTML subject line (runs).
        sections: in order.
        language: the language a hand-count preset's article is written in (``--lang auto``),
            else ``None``.
        footer: the closing line.
    """

    title: tuple
    name: str
    subject: tuple
    sections: list = field(default_factory=list)
    language: str | None = None
    footer: tuple = ()

    def section(self, id: str) -> Section:
        """The section ``id``.

        Raises:
            KeyError: no such section.
        """
        for s in self.sections:
            if s.id == id:
                return s
        raise UnknownNameError(f"no section {id!r} in the report")


def add_section(report: Report, section: Section, after: str | None = None) -> None:
    """Append ``section`` (or insert it after the section ``after``, when there is one)."""
    ids = [s.id for s in report.sections]
    if after is not None and after in ids:
        report.sections.insert(ids.index(after) + 1, section)
    else:
        report.sections.append(section)


def table(headers: Sequence[tuple], rows: Sequence[Row | Sequence], **options: Any) -> Table:
    """A ``Table`` from ``Column``s (or header run sequences, left-aligned) and rows
    (``Row``s or sequences of cells, each cell anything ``runs`` takes)."""
    columns = tuple(h if isinstance(h, Column) else Column(runs(h)) for h in headers)
    out = []
    for r in rows:
        if isinstance(r, Row):
            out.append(Row(tuple(runs(c) for c in r.cells), r.style))
        else:
            out.append(Row(tuple(runs(c) for c in r)))
    return Table(columns, tuple(out), **options)
