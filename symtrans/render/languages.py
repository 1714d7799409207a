"""The report languages, as data (no heavy imports: the command line reads the choices of
``--lang`` from here; ``render.report.i18n`` loads their message catalogs)."""

from __future__ import annotations

from dataclasses import dataclass


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
