"""The HTML report in a real browser (tracker issue 13, item 3).

Debian's chromium, headless, loads the page written by ``symtrans report MODEL -o
MODEL.html``, with a small script appended to a copy of it that counts the ``<math>``
elements rendered with a non-zero box (and laid out as MathML, ``display: ... math``) and
the tables that fit their container; it writes the counts into the DOM, which
``--dump-dom`` prints.  A page with an over-wide table shows the check can fail.

A screenshot of the bert-base report is kept as a test artifact in
``tmp/artifacts/bert-base.png`` of the repository (``SYMTRANS_ARTIFACTS`` to change it).

Without chromium the tests skip, naming the Debian package; in CI (``CI=true``) they fail.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from report_outputs import need_tool

from symtrans.cli.main import main

ARTIFACTS = Path(os.environ.get("SYMTRANS_ARTIFACTS", Path(__file__).resolve().parents[1] / "tmp" / "artifacts"))

CHECK = """
<script>
(function () {
  var maths = Array.prototype.slice.call(document.querySelectorAll('math'));
  var rendered = maths.filter(function (m) {
    var r = m.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && getComputedStyle(m).display.indexOf('math') >= 0;
  }).length;
  var tables = Array.prototype.slice.call(document.querySelectorAll('table'));
  var fit = tables.filter(function (t) {
    return t.getBoundingClientRect().width <= t.parentElement.clientWidth + 0.5;
  }).length;
  var out = document.createElement('pre');
  out.id = 'symtrans-check';
  out.textContent = JSON.stringify({math: maths.length, math_rendered: rendered, tables: tables.length, tables_fit: fit});
  document.body.appendChild(out);
})();
</script>
"""

_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1024,768"]


def _chromium() -> str:
    return need_tool("chromium", "chromium")


def _check(page: Path, tmp_path: Path) -> dict:
    """Load ``page`` with the counting script in headless chromium; return the counts."""
    probe = tmp_path / ("probe-" + page.name)
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", CHECK + "</body>"), encoding="utf-8")
    out = subprocess.run(
        [_chromium(), *_FLAGS, "--dump-dom", probe.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    m = re.search(r'<pre id="symtrans-check">([^<]*)</pre>', out)
    assert m, "the check script did not run"
    return json.loads(m.group(1).replace("&quot;", '"'))


def _report(tmp_path: Path, capsys, *argv: str) -> Path:
    out = tmp_path / f"{argv[0]}.html"
    assert main(["report", *argv, "-o", str(out)]) == 0, capsys.readouterr().err
    return out


@pytest.mark.parametrize(
    "args", [("bert-base",), ("mixtral-8x7b",), ("t5-small",), ("handcount-001-transformer", "--lang", "zh")]
)
def test_every_formula_renders_and_no_table_overflows(tmp_path, capsys, args):
    _chromium()
    counts = _check(_report(tmp_path, capsys, *args), tmp_path)
    assert counts["math"] > 100
    assert counts["math_rendered"] == counts["math"], counts
    assert counts["tables"] >= 8
    assert counts["tables_fit"] == counts["tables"], counts


def test_the_check_sees_an_overflowing_table(tmp_path):
    _chromium()
    page = tmp_path / "wide.html"
    page.write_text(
        '<!DOCTYPE html><html><body><main style="width: 300px"><div><table><tr><td style="white-space: nowrap">'
        + "x" * 400
        + "</td></tr></table></div><math><mi>x</mi></math></main></body></html>",
        encoding="utf-8",
    )
    counts = _check(page, tmp_path)
    assert counts == {"math": 1, "math_rendered": 1, "tables": 1, "tables_fit": 0}


def test_screenshot_of_bert_base_is_kept_as_an_artifact(tmp_path, capsys):
    chromium = _chromium()
    page = _report(tmp_path, capsys, "bert-base")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "bert-base.png"
    subprocess.run(
        [chromium, *_FLAGS[:-1], "--window-size=1024,4000", f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 50_000
