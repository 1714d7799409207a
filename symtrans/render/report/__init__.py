"""Derivation reports: Markdown, LaTeX (and PDF), HTML; in English or Chinese.

Public API::

    render(resolved, fmt, title=None, batch=1, seq_len=None, lang="en") -> str
        # fmt: markdown | latex | html; lang: en | zh | auto
    build_context(resolved, title=None, batch=1, seq_len=None) -> doc.Report   # plain data
    render_context(report, fmt, env=None, lang="en") -> str
    make_environment(fmt, lang="en") -> jinja2.Environment                      # a new one per call
    build_pdf(latex_source, timeout=120) -> bytes
    latex_escape(text) -> str, markdown_escape(text) -> str, Math (trusted markup marker)

The report is one model (``doc``: sections of blocks of inline runs, the prose written
once as message ids); each format is a thin writer (``templates/<format>.j2``) and each
language a gettext catalog (``i18n``).  Write the results with
``symtrans.base.atomic.write_atomic``.  ``build_pdf`` raises ``TeXNotFoundError`` (no TeX
installed, naming the Debian packages) or ``PDFBuildError`` (TeX failed, a character no
font has, a time limit), both ``RuntimeError``; ``render`` raises ``ValueError`` for a
bad format, language, batch or length.
"""

from __future__ import annotations

from typing import Any

from symtrans.base.errors import InputError
from symtrans.base.escape import Math, latex_escape, markdown_escape

from . import doc, i18n
from .context import FLOP_CONVENTION, build_context
from .doc import add_section
from .environment import FORMATS, make_environment, template_name
from .pdf import MissingFontError, PDFBuildError, TeXNotFoundError, build_pdf, tex_available

__all__ = [
    "FLOP_CONVENTION",
    "FORMATS",
    "Math",
    "MissingFontError",
    "PDFBuildError",
    "TeXNotFoundError",
    "add_section",
    "build_context",
    "build_pdf",
    "doc",
    "i18n",
    "latex_escape",
    "make_environment",
    "markdown_escape",
    "render",
    "render_context",
    "report_language",
    "tex_available",
]


def report_language(report: doc.Report, lang: str | None) -> str:
    """The language ``lang`` (``"auto"``: the article's language for a hand count, else English).

    Raises:
        ValueError: a language without a catalog.
    """
    return i18n.resolve(lang, report.language)


def _page(report: doc.Report) -> dict[str, Any]:
    return {
        "title": report.title,
        "subject": report.subject,
        "name": report.name,
        "sections": report.sections,
        "footer": report.footer,
    }


def render_context(report: doc.Report, fmt: str, env: Any = None, lang: str | None = "en") -> str:
    """Print ``report`` (from ``build_context``, possibly with added sections) as ``fmt``.

    ``env`` reuses an environment from ``make_environment(fmt, lang)`` (its templates stay
    compiled); by default a new one is made.  A LaTeX report whose text plain pdflatex
    cannot set (Polish, Chinese, ...) is written for XeLaTeX (``fontspec``, and ``xeCJK``
    with Noto CJK for Chinese); ``build_pdf`` picks the engine from the source.

    Raises:
        ValueError: for an unknown format or language.
        jinja2.UndefinedError: when the model lacks a field a writer uses.
    """
    if fmt not in FORMATS:
        raise InputError(f"report format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    lang = report_language(report, lang)
    env = env if env is not None else make_environment(fmt, lang)
    state = env.globals["latex_state"]
    state.needs_unicode = state.cjk = False  # what this rendering needs (a reused environment starts afresh)
    text = env.get_template(template_name(fmt)).render(**_page(report))
    if fmt == "latex" and state.needs_unicode and not state.unicode:
        env = make_environment(fmt, lang, unicode=True)
        text = env.get_template(template_name(fmt)).render(**_page(report))
    return text.strip("\n") + "\n"


def render(
    resolved: Any,
    fmt: str,
    title: str | None = None,
    batch: int = 1,
    seq_len: int | None = None,
    lang: str | None = "en",
) -> str:
    """The derivation report of ``resolved`` (a ``resolve.Resolved``) as Markdown, LaTeX or HTML.

    Args:
        fmt: ``"markdown"``, ``"latex"`` (compile it with ``build_pdf``) or ``"html"``.
        title: the title; user text, escaped for the format.
        batch, seq_len: the workload of the FLOPs sections (B, and L; ``L_src = L_tgt``
            for encoder-decoders); ``seq_len`` defaults to the model's L.
        lang: ``"en"``, ``"zh"``, or ``"auto"`` (a hand count in its article's language).

    Raises:
        ValueError: unknown format or language, non-positive batch or seq_len.
    """
    if fmt not in FORMATS:
        raise InputError(f"report format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if lang not in (None, "auto"):
        i18n.check(lang)
    return render_context(build_context(resolved, title=title, batch=batch, seq_len=seq_len), fmt, lang=lang)
