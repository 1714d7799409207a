"""Report languages: gettext message catalogs (made with Babel) for the report's prose.

The report's own sentences, headings, table headers, legend entries and the hand-count
comparison are English message ids (``doc.Msg``); a writer translates them when it
prints them, through Jinja2's i18n extension with the catalog of the language.  Data
(model and component names, notes of the Cost tree, sources) and every number and
formula are the same in every language.

Catalogs: ``locale/<lang>/LC_MESSAGES/symtrans.po`` (edited by hand) compiled to
``symtrans.mo`` next to it (shipped as package data; the standard library's
``gettext`` reads it, so Babel is needed only to work on the catalogs)::

    pybabel extract -F babel.cfg -k N_ -k msg -o symtrans/render/report/locale/symtrans.pot .
    pybabel update -i symtrans/render/report/locale/symtrans.pot -d symtrans/render/report/locale -D symtrans
    pybabel compile -d symtrans/render/report/locale -D symtrans

``tests/test_report_i18n.py`` checks that the shipped ``.mo`` is the compiled ``.po``,
that every message a report prints has a translation, and that each translation keeps
the placeholders of its message id.
"""

from __future__ import annotations

import gettext
from dataclasses import dataclass
from pathlib import Path

LOCALE_DIR = Path(__file__).resolve().parent / "locale"
DOMAIN = "symtrans"


@dataclass(frozen=True)
class Language:
    """A report language: its code, its name and its HTML ``lang`` tag."""

    code: str
    name: str
    html: str


LANGUAGES: dict[str, Language] = {
    "en": Language("en", "English", "en"),
    "zh": Language("zh", "中文（简体）", "zh-Hans"),
}
# --lang: a language, or "auto" (a hand-count preset's article language, else English).
CHOICES = (*LANGUAGES, "auto")
DEFAULT = "en"


class UnsupportedLanguage(ValueError):
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
