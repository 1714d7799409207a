"""Jinja2 environments of the report writers (Markdown, LaTeX, HTML), made by a factory.

A writer is one template, ``templates/<format>.j2``: a macro per block and inline run of
the section model (``doc``) and the page around them.  It holds no prose: every
sentence comes from the model, translated through Jinja2's i18n extension
(``jinja2.ext.i18n``, ``gettext``) with the catalogs of ``i18n``.

Escaping: ``autoescape`` is on and ``finalize`` escapes *every* printed value for the
format (``{{ x }}`` prints ``escape(x)``), so data text can never become markup.  Only
two kinds of value pass through raw: ``Math`` (markup printed by SymPy or by the number
formatter) and the output of the writer's own macros (``Markup``, which Jinja returns
from a macro when autoescape is on).  In LaTeX and HTML, identifiers with a subscript
in running text (``W_1``, ``d_model``) are set as math, so no literal underscore shows.

The LaTeX writer uses delimiters that cannot clash with TeX: ``\\VAR{expr}``,
``\\BLOCK{statement}``, ``\\#{comment}`` and ``%#`` line comments.
"""

from __future__ import annotations

import base64
import html
import re
from typing import Any, Callable, NamedTuple

import jinja2
from markupsafe import Markup

from symtrans.base.errors import InputError
from symtrans.base.escape import Math, latex_escape, markdown_escape, needs_unicode_tex

from . import i18n, mathfmt
from .doc import UserText

FORMATS = ("markdown", "latex", "html")
_TEMPLATE = {"markdown": "markdown.j2", "latex": "latex.j2", "html": "html.j2"}

# An identifier with a subscript in running text: one letter, "_", letters or digits
# (W_1, W_Q, d_model, L_src, n_layer); not option names such as tie_output.
_IDENTIFIER = re.compile(r"(?<![A-Za-z0-9_\\])([A-Za-z]_[A-Za-z0-9]+)(?![A-Za-z0-9_])")
_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


class Part(NamedTuple):
    """A piece of a translated message: literal ``text``, or the placeholder ``arg``."""

    text: str
    arg: str | None


def placeholders(message: str) -> list[Part]:
    """``"a {x} b"`` -> ``[Part("a ", None), Part("", "x"), Part(" b", None)]``."""
    out: list[Part] = []
    pos = 0
    for m in _PLACEHOLDER.finditer(message):
        if m.start() > pos:
            out.append(Part(message[pos : m.start()], None))
        out.append(Part("", m.group(1)))
        pos = m.end()
    if pos < len(message):
        out.append(Part(message[pos:], None))
    return out


class LatexState:
    """What one LaTeX rendering needed: a character plain pdflatex cannot set (then the
    report is rendered again for XeLaTeX), and text beyond the Latin script that Latin
    Modern lacks (``cjk``: then the Noto CJK fonts, which cover Latin, Greek, Cyrillic and
    CJK, set the whole text)."""

    def __init__(self, unicode: bool) -> None:
        self.unicode = unicode
        self.needs_unicode = False
        self.cjk = False


# Characters beyond Latin Modern: from Greek (U+0370) up, but general punctuation (dashes, quotes).
_BEYOND_LATIN = re.compile("[\u0370-\u1fff\u2070-\U0010ffff]")


def _split_identifiers(text: str) -> list[tuple[str, bool]]:
    """(piece, is_identifier) pieces of ``text``."""
    out: list[tuple[str, bool]] = []
    pos = 0
    for m in _IDENTIFIER.finditer(text):
        if m.start() > pos:
            out.append((text[pos : m.start()], False))
        out.append((m.group(1), True))
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], False))
    return out


def _latex_text(state: LatexState) -> Callable[[str], str]:
    def escape(text: str) -> str:
        if needs_unicode_tex(text):
            state.needs_unicode = True
        if _BEYOND_LATIN.search(latex_escape(text, unicode=True)):  # math symbols and Greek go to math mode
            state.cjk = True
        if isinstance(text, UserText):
            return latex_escape(text, unicode=state.unicode)
        out = []
        for piece, ident in _split_identifiers(text):
            if ident:
                out.append("\\ensuremath{%s}" % mathfmt.identifier(piece).tex)
            else:
                out.append(latex_escape(piece, unicode=state.unicode))
        return "".join(out)

    return escape


def _html_text(text: str) -> str:
    if isinstance(text, UserText):
        return html.escape(text, quote=True)
    out = []
    for piece, ident in _split_identifiers(text):
        if ident:
            out.append(f"<math>{mathfmt.identifier(piece).mathml}</math>")
        else:
            out.append(html.escape(piece, quote=True))
    return "".join(out)


def _finalizer(escape: Callable[[str], str]) -> Callable[..., Markup]:
    """Escape every printed value; ``Math`` and the writers' own ``Markup`` pass raw.

    ``pass_context`` keeps Jinja from folding constants at compile time, when it would
    HTML-escape them into ``Markup`` before ``finalize`` sees them: a literal
    ``{{ '%' }}`` is escaped at run time like any value.
    """

    @jinja2.pass_context
    def finalize(context: Any, value: object) -> Markup:
        if isinstance(value, jinja2.Undefined):
            str(value)  # StrictUndefined raises here
        if isinstance(value, (Math, Markup)):
            return Markup(value)
        return Markup(escape(value if isinstance(value, str) else str(value)))  # a UserText stays one

    return finalize


def _math_join(items: object, sep: str = " ") -> Math:
    """Join ``Math`` lines into one ``Math`` (``join`` would return escaped text)."""
    items = list(items)  # type: ignore[call-overload]
    if not all(isinstance(i, Math) for i in items):
        raise TypeError("mathjoin joins Math values only")
    if sep not in (" ", ""):
        raise InputError("mathjoin separators are ' ' and ''")
    return Math(sep.join(items))


def _raw_escape(escape: Callable[[str], str]) -> Callable[[object], Markup]:
    def f(value: object) -> Markup:
        return Markup(escape(value if isinstance(value, str) else str(value)))  # a UserText stays one

    return f


def _tex_code(state: LatexState) -> Callable[[object], Markup]:
    """A command in the writer's ``\\symtranscode`` (``\\texttt``, without the stretch
    XeTeX's Chinese line breaking puts between characters): escaped, identifiers left as
    they are."""

    def code(text: object) -> Markup:
        return Markup("\\symtranscode{%s}" % latex_escape(str(text), unicode=state.unicode).replace("-", "-{}"))

    return code


def _pdf_string(state: LatexState) -> Callable[[object], Markup]:
    """Text for hyperref's PDF metadata (``pdftitle``): TeX specials as the commands
    hyperref's PDF strings understand; other characters as they are (UTF-8, for which
    the report is written for XeLaTeX)."""

    def pdf_string(text: object) -> Markup:
        s = str(text)
        if not s.isascii():
            state.needs_unicode = True
        return Markup("".join(_PDF_STRING.get(c, c if (ord(c) >= 0x20 and ord(c) != 0x7F) else " ") for c in s))

    return pdf_string


_PDF_STRING = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "%": r"\%",
    "_": r"\_",
    "^": r"\textasciicircum{}",
    "~": r"\textasciitilde{}",
}


def _colspec(t: Any) -> Markup:
    """The column specification of a ``doc.Table``: ``l``/``r`` columns as wide as their
    cells; text columns (``Column.wrap``) ragged-right paragraphs: ``X`` columns of a
    ``tabularx`` sharing the line in proportion to their ``wrap``, or, in a ``longtable``,
    ``p`` columns sharing ``\\symtranswrap`` (the line less the measured widths of the
    other columns, see the writer's ``table`` macro) in that proportion."""
    wraps = [c.wrap for c in t.columns if c.wrap]
    specs = []
    for c in t.columns:
        if not c.wrap:
            specs.append(c.align)
        elif t.long:
            specs.append(r">{\raggedright\arraybackslash}p{%.3f\symtranswrap}" % (c.wrap / sum(wraps)))
        else:
            factor = c.wrap * len(wraps) / sum(wraps)
            specs.append(r">{\raggedright\arraybackslash\hsize=%.3f\hsize}X" % factor)
    body = "@{}" + "".join(specs) + "@{}"
    if _table_env(t) == "tabularx":
        return Markup("{\\linewidth}{%s}" % body)
    return Markup("{%s}" % body)


def _plain_length(cell: Any) -> int:
    """Characters of a cell's runs (a rough width, to pick the cells worth measuring)."""
    n = 0
    for r in cell:
        kind = r.kind
        if kind in ("text", "code"):
            n += len(r.text)
        elif kind == "msg":
            n += len(r.msgid) + sum(_plain_length(a) for a in r.args.values())
        elif kind == "strong":
            n += _plain_length(r.runs)
        elif kind == "math":
            n += len(r.tex) // 2
    return n


def _widest(t: Any, column: int, keep: int = 3) -> list[tuple[Any, str]]:
    """(cell, row style) of the header and the ``keep`` longest cells of ``column``: the
    candidates for its width, which TeX measures (``\\symtransmeasure``)."""
    cells = [(row.cells[column], row.style) for row in t.rows if row.style != "group" and column < len(row.cells)]
    cells.sort(key=lambda c: -_plain_length(c[0]))
    head = [(t.columns[column].header, "body")] if t.header else []
    return head + cells[:keep]


def _table_env(t: Any) -> str:
    if t.long:
        return "longtable"
    return "tabularx" if any(c.wrap for c in t.columns) else "tabular"


_PATH = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]*")


def _safe_path(path: object) -> Markup:
    """A file name symtrans made (``[A-Za-z0-9.-]``, see ``plots.add_chart_section``), raw.

    Raises:
        ValueError: for any other name.
    """
    if not _PATH.fullmatch(str(path)):
        raise InputError(f"chart file name {path!r} is not one symtrans makes")
    return Markup(str(path))


class _MemoryBytecodeCache(jinja2.BytecodeCache):
    """Compiled templates kept in memory, shared by the environments of one process.

    Jinja's own mechanism (``jinja2.BytecodeCache``): a template is compiled once and
    reloaded from its bytecode while its source checksum is unchanged, so a new
    environment per report (no shared environment state) does not recompile the
    writer; an edited template is recompiled.  Jinja's cache key is the template's
    name, not the environment's options: hence one cache per format.
    """

    def __init__(self) -> None:
        self._store: dict[str, bytes] = {}

    def load_bytecode(self, bucket: "jinja2.bccache.Bucket") -> None:
        data = self._store.get(bucket.key)
        if data is not None:
            bucket.bytecode_from_string(data)

    def dump_bytecode(self, bucket: "jinja2.bccache.Bucket") -> None:
        self._store[bucket.key] = bucket.bytecode_to_string()


_BYTECODE = {fmt: _MemoryBytecodeCache() for fmt in FORMATS}


def make_environment(fmt: str, lang: str = "en", unicode: bool = False) -> jinja2.Environment:
    """A new Jinja2 environment for the writer of ``fmt`` (``"markdown"``, ``"latex"`` or
    ``"html"``) in language ``lang`` (``i18n.LANGUAGES``).

    ``unicode`` (LaTeX only): escape for XeLaTeX with fontspec (non-ASCII text passes
    through) instead of plain pdflatex.  ``env.globals["latex_state"]`` records what a
    LaTeX rendering needed (``LatexState``).

    Raises:
        ValueError: for another format or an unsupported language.
    """
    if fmt not in FORMATS:
        raise InputError(f"report format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    translations = i18n.translations(lang)
    loader = jinja2.PackageLoader("symtrans.render.report", "templates")
    common: dict[str, Any] = dict(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        bytecode_cache=_BYTECODE[fmt],
        extensions=["jinja2.ext.i18n"],
    )
    state = LatexState(unicode)
    if fmt == "latex":
        escape = _latex_text(state)
        env = jinja2.Environment(
            block_start_string=r"\BLOCK{",
            block_end_string="}",
            variable_start_string=r"\VAR{",
            variable_end_string="}",
            comment_start_string=r"\#{",
            comment_end_string="}",
            line_comment_prefix="%#",
            finalize=_finalizer(escape),
            **common,
        )
        env.filters["code"] = _tex_code(state)
        env.filters["pdfstring"] = _pdf_string(state)
        env.filters["plaintext"] = lambda text: Markup(str(text))
        env.filters["colspec"] = _colspec
        env.filters["table_env"] = _table_env
        env.filters["widest"] = _widest
    elif fmt == "html":
        escape = _html_text
        env = jinja2.Environment(finalize=_finalizer(escape), **common)
        env.filters["code"] = lambda text: Markup("<code>%s</code>" % html.escape(str(text)))
        env.filters["plaintext"] = lambda text: Markup(html.escape(str(text), quote=True))
        env.filters["b64"] = lambda data: Markup(
            base64.b64encode(data if isinstance(data, bytes) else str(data).encode()).decode()
        )
    else:
        escape = markdown_escape
        env = jinja2.Environment(finalize=_finalizer(escape), **common)
        env.filters["code"] = lambda text: Markup("`%s`" % str(text).replace("`", "'"))
    env.filters["mathnum"] = (lambda n: mathfmt.number(n).mathml) if fmt == "html" else mathfmt.math_number
    env.filters["safe_path"] = _safe_path
    env.install_gettext_translations(translations, newstyle=False)  # type: ignore[attr-defined]
    env.filters["placeholders"] = placeholders
    env.filters["mathjoin"] = _math_join
    env.filters["escape_text"] = _raw_escape(escape)
    env.globals["latex_state"] = state
    env.globals["lang"] = lang
    env.globals["html_lang"] = i18n.LANGUAGES[lang].html
    return env


def template_name(fmt: str) -> str:
    """The writer template of ``fmt``."""
    return _TEMPLATE[fmt]
