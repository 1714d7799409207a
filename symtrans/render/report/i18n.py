"""Report languages: gettext message catalogs (made with Babel) for the report's prose.

The report's own sentences, headings, table headers, legend entries and the hand-count
comparison are English message ids (``doc.Msg``); a writer translates them when it
prints them, through Jinja2's i18n extension with the catalog of the language.  Prose
data of lower layers is translated the same way (``doc.data_msg``, issue 25.9): the Cost
tree's component names, step labels and notes, a preset's notes, reference and prose
published figure, where the workload length came from, the family, the optimizer, the
published formulas' quantities and assumptions, the roofline's assumptions, the
accelerators' sources and the shape walk's stages and operations.  Every number and
formula, model names, the articles' quotes and titles, and the sources of the derivation's
steps (citations) are the same in every language; so are the notes of a config.json
(they carry the config's own values), the train section, and the assumptions, defaults and
notes of the deploy sections (they carry the plan's own figures; the deploy sections' own
prose, headings and table labels are translated).

Catalogs: ``locale/<lang>/LC_MESSAGES/symtrans.po`` (edited by hand) compiled to
``symtrans.mo`` next to it (both shipped as package data; the standard library's
``gettext`` reads the ``.mo``, so Babel is needed only to work on the catalogs)::

    pybabel extract -k N_ -k msg -o /tmp/symtrans.pot symtrans   # the messages marked in the code
    pybabel compile -d symtrans/render/report/locale -D symtrans  # after editing a .po

Some messages are data of lower layers, used as message ids as they are: the legend's
meanings and units (``engine.symbols``), the FLOP convention (``engine.conventions``) and
the hand-count gap terms (``catalog.handcounts.category``); extraction cannot see them.
``tests/test_report_i18n.py`` is the guard: the shipped ``.mo`` is the compiled ``.po``,
every message any report prints has a translation, and each translation keeps the
placeholders of its message id.  (An English message changed in the code fails that
test until its translation is updated.)
"""

from __future__ import annotations

import gettext
from pathlib import Path

from symtrans.base.errors import InputError
from symtrans.render.languages import CHOICES, DEFAULT, LANGUAGES, Language

LOCALE_DIR = Path(__file__).resolve().parent / "locale"
DOMAIN = "symtrans"
__all__ = [
    "CHOICES",
    "DEFAULT",
    "LANGUAGES",
    "LOCALE_DIR",
    "Language",
    "UnsupportedLanguage",
    "check",
    "resolve",
    "translations",
]


class UnsupportedLanguage(InputError):
    """A language without a catalog."""


def check(lang: str) -> str:
    """``lang`` if it is a report language.

    Raises:
        UnsupportedLanguage: naming the supported ones.
    """
    if lang not in LANGUAGES:
        raise UnsupportedLanguage(
            f"report language must be one of {', '.join(CHOICES)}, not {lang!r} (no message catalog for it)"
        )
    return lang


def resolve(lang: str | None, article_language: str | None) -> str:
    """The language of a report: ``lang``; for ``"auto"`` (or None) the language of the
    article a hand-count preset reproduces, else English.

    Raises:
        UnsupportedLanguage: for a language without a catalog.
    """
    if lang in (None, "auto"):
        return article_language if article_language in LANGUAGES else DEFAULT
    return check(lang)


def translations(lang: str) -> gettext.NullTranslations:
    """The gettext translations of ``lang`` (English: the message ids themselves).

    Raises:
        UnsupportedLanguage: for a language without a catalog.
        FileNotFoundError: when the compiled catalog is missing from the installation.
    """
    check(lang)
    if lang == DEFAULT:
        return gettext.NullTranslations()
    path = LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.mo"
    with open(path, "rb") as f:
        return gettext.GNUTranslations(f)
