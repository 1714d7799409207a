"""Helpers for the report tests: every preset's report model built once per test session,
and the visible numbers of a Markdown, LaTeX or HTML report.

The numbers are read from each format's own syntax with the standard library (the HTML
through ``html.parser``), not with the writers under test: a number is a run of digits
with thousands separators and an optional decimal part; in LaTeX and Markdown math
``124{,}439{,}808`` reads as ``124,439,808``.  Only the visible content counts: the
LaTeX preamble and column specifications, and the HTML head (CSS), are left out.
"""

from __future__ import annotations

import os
import re
import shutil
from collections import Counter
from functools import lru_cache
from html.parser import HTMLParser

import pytest

from symtrans.catalog.resolve import resolve

IN_CI = os.environ.get("CI", "").lower() == "true"


def need_tool(tool: str, package: str) -> str:
    """The path of ``tool``; a missing tool skips the test, naming the Debian package,
    except in CI (``CI=true``), where it fails: CI installs everything (.ci/run)."""
    path = shutil.which(tool)
    if path is None:
        message = f"{tool} is not installed (Debian package {package})"
        if IN_CI:
            pytest.fail(f"{message}; CI must install it (.ci/run)")
        pytest.skip(message)
    return path


@lru_cache(maxsize=None)
def report_of(name: str):
    """The report model (``doc.Report``) of preset ``name``, built once per session."""
    from symtrans.render.report import build_context

    return build_context(resolve(name))


# (a digit after "_" counts: W_1 is a subscript 1 in every format)
_NUMBER = re.compile(r"(?<![0-9A-Za-z.])[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?")


def numbers(text: str) -> Counter:
    """Every number in ``text`` (``1,024`` and ``1{,}024`` alike; a superscript ``²`` is the
    ``^2`` LaTeX prints for it), counted."""
    text = text.replace("{,}", ",").translate(str.maketrans({"²": "^2", "³": "^3", "¹": "^1"}))
    return Counter(_NUMBER.findall(text))


def markdown_numbers(md: str) -> Counter:
    # table alignment rows (|---|--:|) hold no numbers; everything else is content
    return numbers(md)


_TEX_LAYOUT = [
    re.compile(r"\\begin\{(?:longtable|tabularx|tabular)\}(?:\{\\linewidth\})?\{(?:[^{}]|\{[^{}]*\})*\}"),
    re.compile(r"\\multicolumn\{[0-9]+\}"),
    re.compile(r"\\(?:setlength|addtolength)\{\\[a-zA-Z]+\}\{[^{}]*\}"),
    re.compile(r"\\includegraphics\[[^\]]*\]"),
    re.compile(r"\\char[0-9]+"),
    re.compile(r"\\(?:hsize|linewidth|tabcolsep|textwidth)"),
    re.compile(r"\\(?:ex)?hyphenpenalty=[0-9]+"),
]


def _group_end(text: str, start: int) -> int:
    """The index after the brace group that opens at ``text[start] == "{"``."""
    depth = 0
    i = start
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(c, 0)
        i += 1
        if depth == 0:
            return i
    raise ValueError("unbalanced braces")


def _drop_pdf_strings(body: str) -> str:
    """``\\texorpdfstring{TeX}{PDF}`` -> ``TeX`` (the PDF bookmark repeats the heading)."""
    out, pos = [], 0
    key = "\\texorpdfstring"
    while (i := body.find(key, pos)) != -1:
        first_end = _group_end(body, i + len(key))
        second_end = _group_end(body, first_end)
        out += [body[pos:i], body[i + len(key) + 1 : first_end - 1]]
        pos = second_end
    return "".join(out) + body[pos:]


def latex_numbers(tex: str) -> Counter:
    body = tex.split("\\begin{document}", 1)[1].split("\\end{document}", 1)[0]
    body = "\n".join(line for line in body.splitlines() if not line.startswith("\\setlength{\\above"))
    body = _drop_pdf_strings(body)
    for pattern in _TEX_LAYOUT:
        body = pattern.sub(" ", body)
    body = re.sub(r"\\symtransmeasure\{.*$", " ", body, flags=re.MULTILINE)  # width measurements repeat cells
    return numbers(body)


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("style", "script", "head", "svg"):
            self._skip += 1
        elif tag in ("mn", "mi", "mo", "td", "th", "li", "p", "div", "tr"):
            self.parts.append(" ")

    def handle_endtag(self, tag):
        if tag in ("style", "script", "head", "svg"):
            self._skip -= 1
        elif tag in ("mn", "mi", "mo", "td", "th"):
            self.parts.append(" ")

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def html_text(page: str) -> str:
    """The visible text of an HTML page (the body; MathML tokens apart)."""
    parser = _Text()
    parser.feed(page)
    return "".join(parser.parts)


def html_numbers(page: str) -> Counter:
    return numbers(html_text(page))
