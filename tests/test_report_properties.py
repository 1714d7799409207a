"""Property test: every report renders under StrictUndefined (tracker issue 6, item 4).

For random valid specs (``strategies.specs``: all three families, every option, MoE or
not) with a random title and workload, the Markdown, LaTeX and HTML reports render through
environments whose ``undefined`` is ``jinja2.StrictUndefined``, so any variable a
template uses but the context lacks fails the test instead of printing blank.

The numbers the report prints are checked against two independent sources:

* the engine's exact count, ``evaluate.exact`` over ``architectures.build`` (the engine
  itself is checked against real implementations in tests/test_crosscheck_hf.py and
  tests/test_crosscheck_torch.py); the report's templates and formatting are the code
  under test here;
* arithmetic written out in this test: the component rows of the printed breakdown add
  up to the printed total.
"""

from __future__ import annotations

import re

import jinja2
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import specs

from symtrans.catalog.resolve import Resolved
from symtrans.engine.architectures import build
from symtrans.engine.evaluate import exact
from symtrans.render.report import build_context, make_environment, render_context

# Fewer examples than the profile's (conftest.py): each one renders two whole reports (about 2 s on the
# shared CI machine), and what is checked is the templates, not a count; the counts are checked
# against independent references in tests/test_reference_counts.py and the cross-checks.
SETTINGS = settings(max_examples=25)

_NUM = r"([0-9][0-9,]*)"


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def _one(pattern: str, text: str) -> int:
    found = re.findall(pattern, text, flags=re.MULTILINE)
    assert len(found) == 1, (pattern, found)
    return _int(found[0])


def _expected(spec, batch: int, seq_len: int | None) -> dict[str, int]:
    model = build(spec)
    v = dict(spec.values)
    length = seq_len if seq_len is not None else v["L"]
    fv = {**v, "B": batch, "L": length, "L_src": length, "L_tgt": length}
    out = {"params": exact(model.params, v), "flops": exact(model.flops, fv)}
    if spec.is_moe:
        out["active"] = exact(model.active_params, v)
    return out


def _render_all(spec, title, batch: int, seq_len) -> dict[str, str]:
    """The report as Markdown, LaTeX and HTML, each rendered by a StrictUndefined environment."""
    context = build_context(Resolved(name="random-spec", spec=spec), title=title, batch=batch, seq_len=seq_len)
    out = {}
    for fmt in ("markdown", "latex", "html"):
        env = make_environment(fmt)
        assert env.undefined is jinja2.StrictUndefined
        out[fmt] = render_context(context, fmt, env)
    return out


def _check_markdown(md: str, spec, want: dict[str, int]) -> None:
    assert md.startswith("# ")
    assert _one(r"^\| parameters \| \*\*" + _NUM, md) == want["params"]
    assert _one(r"^\| forward FLOPs \| \*\*" + _NUM, md) == want["flops"]
    if spec.is_moe:
        assert _one(r"^\| active parameters per token \| \*\*" + _NUM, md) == want["active"]
    # The breakdown: its component rows add up to its total row, which is the exact count.
    section = md.split("\n## Parameter breakdown\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| ([^|*][^|]*?) \| " + _NUM + r" \|", section, flags=re.MULTILINE)
    total = _one(r"^\| \*\*total\*\* \| \*\*" + _NUM, section)
    assert rows and sum(_int(n) for _, n in rows) == total == want["params"]


def _check_latex(tex: str, spec, want: dict[str, int]) -> None:
    # (a report for XeLaTeX starts with comment lines that say so)
    preamble = [line for line in tex.splitlines() if not line.startswith("%")]
    assert preamble[0].startswith("\\documentclass") and tex.rstrip().endswith("\\end{document}")
    assert tex.count("\\begin{document}") == 1
    assert _one(r"^parameters & \\textbf\{" + _NUM, tex) == want["params"]
    assert _one(r"^forward FLOPs & \\textbf\{" + _NUM, tex) == want["flops"]
    if spec.is_moe:
        assert _one(r"^active parameters per token & \\textbf\{" + _NUM, tex) == want["active"]
    section = tex.split("{Parameter breakdown}}", 1)[1].split("\\section{", 1)[0]
    rows = re.findall(r"^([^&\\]+?) & " + _NUM + r" & ", section, flags=re.MULTILINE)
    total = _one(r"^\\textbf\{total\} & \\textbf\{" + _NUM, section)
    assert rows and sum(_int(n) for _, n in rows) == total == want["params"]


def _check_html(page: str, spec, want: dict[str, int]) -> None:
    from html.parser import HTMLParser

    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    HTMLParser().feed(page)  # well-formed enough for Python's parser

    def cell(label: str) -> int:
        found = re.findall(r"<tr><td class=\"l\">" + label + r"</td><td[^>]*><strong>" + _NUM, page)
        assert len(found) == 1, (label, found)
        return _int(found[0])

    assert cell("parameters") == want["params"]
    assert cell("forward FLOPs") == want["flops"]
    if spec.is_moe:
        assert cell("active parameters per token") == want["active"]
    section = page.split('<section id="breakdown">', 1)[1].split("</section>", 1)[0]
    rows = re.findall(r'<tr><td class="l">[^<]*</td><td class="r">' + _NUM + "</td>", section)
    total = _one(r'<tr class="total"><td class="l">total</td><td class="r">' + _NUM, section)
    assert rows and sum(_int(n) for n in rows) == total == want["params"]


TITLES = st.none() | st.text(max_size=40)
BATCH = st.integers(1, 4)
SEQ = st.none() | st.integers(1, 64)


@SETTINGS
@given(specs(), TITLES, BATCH, SEQ)
def test_every_report_renders_under_strict_undefined_and_prints_the_exact_counts(spec, title, batch, seq_len):
    reports = _render_all(spec, title, batch, seq_len)
    want = _expected(spec, batch, seq_len)
    _check_markdown(reports["markdown"], spec, want)
    _check_latex(reports["latex"], spec, want)
    _check_html(reports["html"], spec, want)
