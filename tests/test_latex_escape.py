"""LaTeX (and Markdown) escaping of report text: hostile input prints literally.

The PDF tests compile a report whose title is hostile TeX, extract the text with
``pdftotext`` (poppler-utils) and check that the title appears character for character
and that no file was read or written.  They skip where latexmk or pdftotext is absent;
CI installs both.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import unicodedata

import jinja2
import pytest

from symtrans.catalog.resolve import resolve
from symtrans.render.report import Math, build_pdf, latex_escape, make_environment, markdown_escape, render

needs_tex = pytest.mark.skipif(
    shutil.which("latexmk") is None or shutil.which("pdftotext") is None,
    reason="latexmk and pdftotext (poppler-utils) are needed for PDF tests",
)

HOSTILE = r"\input{/etc/passwd} \write18{rm -rf /} \catcode`\^^5c=0 ^^5c { % $ _ # & ~ } \\ -- ''"

# After escaping, only these constructs may contain TeX's special characters.
_ESCAPES = re.compile(
    r"\\textbackslash\{\}|\\textless\{\}|\\textgreater\{\}|\\textbar\{\}|\\allowbreak\{\}"
    r"|\\texttt\{\\char\d+\}|\\[{}$&#%]|\{\}|\\ensuremath\{\\[a-zA-Z]+\}|\\S\{\}"
)


def _pdf_text(pdf: bytes, tmp_path) -> str:
    path = tmp_path / "out.pdf"
    path.write_bytes(pdf)
    text = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout
    return unicodedata.normalize("NFKC", text)


def _squeeze(text: str) -> str:
    """Without whitespace: line breaks may fall after '/' where the source has no space."""
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize(
    "text",
    [
        HOSTILE,
        "{",
        "}",
        "}{",
        "%",
        "$x$",
        "a_b",
        "#1",
        "&",
        "~",
        "^",
        "^^5c",
        "^^^^005c",
        "\\",
        "\\\\",
        "\\relax",
        "\\catcode`\\{=12",
        "\x00\x07\x1b",
        "end\\end{document}",
    ],
)
def test_escaped_text_has_no_live_special_characters(text):
    out = latex_escape(text)
    rest = _ESCAPES.sub("", out)
    assert not re.search(r"[\\{}$&#%^_~]", rest), (text, out, rest)
    assert "^" not in out  # no ^^ notation can survive
    assert out.count("{") - out.count(r"\{") == out.count("}") - out.count(r"\}")  # balanced groups


def test_specific_escapes():
    assert latex_escape("100%") == r"100\%"
    assert latex_escape("a & b") == r"a \& b"
    assert latex_escape("{x}") == r"\{x\}"
    assert latex_escape("\\input") == r"\textbackslash{}input"
    assert latex_escape("--") == "-{}-"  # no en-dash ligature
    assert latex_escape("γ") == r"\ensuremath{\gamma}"
    assert latex_escape("é") == r"\'{e}"
    assert latex_escape("§3.2") == r"\S{}3.2"
    assert latex_escape("大").startswith("[U+5927]")  # pdflatex has no CJK font: shown as its code point


def test_math_passes_raw_and_string_operations_do_not_keep_it_raw():
    m = Math(r"\frac{a}{b}")
    assert latex_escape(m) == r"\frac{a}{b}"
    assert latex_escape(m + "{") == r"\textbackslash{}frac\{a\}\{b\}\{"  # plain str again: escaped
    assert markdown_escape(m) == r"\frac{a}{b}"


def test_templates_escape_every_variable():
    env = make_environment("latex")
    out = env.from_string(r"\VAR{x} \VAR{x ~ m} \VAR{m} \VAR{'%'}").render(x="a_%", m=Math(r"\alpha"))
    assert out == r"a\texttt{\char95}\% a\texttt{\char95}\%\textbackslash{}alpha \alpha \%"
    md = make_environment("markdown").from_string("{{ x }}").render(x="<script>|*$")
    assert md == r"\<script\>\|\*\$"


def test_strict_undefined_in_both_environments():
    for fmt, src in (("latex", r"\VAR{missing}"), ("markdown", "{{ missing }}")):
        with pytest.raises(jinja2.UndefinedError):
            make_environment(fmt).from_string(src).render()


def test_hostile_title_in_latex_source_is_escaped():
    tex = render(resolve("gpt2"), "latex", title=HOSTILE)
    assert r"\input{/etc/passwd}" not in tex
    assert r"\write18{" not in tex
    assert "^^5c" not in tex
    assert r"\textbackslash{}input\{/\allowbreak{}etc/\allowbreak{}passwd\}" in tex


def test_hostile_title_in_markdown_is_escaped():
    md = render(resolve("gpt2"), "markdown", title="<img src=x onerror=alert(1)> | $x$ *b*\n# not a heading")
    first = md.splitlines()[0]
    assert first == r"# \<img src=x onerror=alert(1)\> \| \$x\$ \*b\* # not a heading"


@needs_tex
def test_hostile_title_prints_literally_in_the_pdf_and_reads_no_file(tmp_path):
    canary = tmp_path / "canary.tex"
    canary.write_text("CANARYSECRET\n")
    pwned = tmp_path / "pwned"
    title = HOSTILE + rf" \input{{{canary}}} \immediate\write18{{touch {pwned}}} γβ é §"
    pdf = build_pdf(render(resolve("gpt2"), "latex", title=title))
    text = _pdf_text(pdf, tmp_path)
    # pdftotext gives the title back character for character (whitespace aside).
    assert _squeeze(unicodedata.normalize("NFKC", title)) in _squeeze(text)
    assert "CANARYSECRET" not in text
    assert "root:" not in text  # /etc/passwd was not read
    assert not pwned.exists()
