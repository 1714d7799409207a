"""One message formatter for every error line (issue 27.11, 27.12) and plain-text chart
labels (27.8).

The contract (DESIGN.md §6, issue 27): an error is one line; what it quotes is capped at
its first 80 characters and a count; characters a terminal acts on (ESC, BEL) are shown
escaped; the Python API's messages are the same lines.  A file name is drawn in a chart as
text: ``$`` never starts matplotlib's mathtext, and a successful run prints nothing on
stderr (no "Glyph missing" font warning).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import default_signals  # noqa: E402  (tests/adversarial/conftest.py)

REPO = Path(__file__).resolve().parents[2]
GPT2 = json.dumps({"model_type": "gpt2", "n_layer": 2})  # the rest from GPT2Config's defaults


def test_a_4096_character_path_is_quoted_by_its_first_80_characters(reject):
    # a 4,096-character path gave an 8,552-character line
    o = reject(["params", "p" * 4096 + ".json"], needle="characters)")
    assert len(o.err) < 300 and "p" * 81 not in o.err and "p" * 79 in o.err


@pytest.mark.parametrize(
    "model_type", [" ".join(f"m{i}" for i in range(200_000)), "z" * 200_000], ids=["200000-words", "one-long-word"]
)
def test_a_config_quoting_200000_items_is_one_short_line(reject, model_type):
    # a config with 200,000 unknown modules gave a 2,089,045-character error
    o = reject(["params", "c.json"], files={"c.json": json.dumps({"model_type": model_type})})
    assert len(o.err) < 1200, len(o.err)


@pytest.mark.parametrize("ch,shown", [("\x1b", "\\x1b"), ("\x07", "\\x07"), ("\x9b", "\\x9b")])
def test_control_characters_in_a_file_name_are_escaped(reject, ch, shown):
    o = reject(["params", f"a{ch}[31mb.json"], needle=f"a{shown}[31mb.json: no such file")
    assert ch not in o.err


def test_the_api_message_is_the_cli_line():
    # parse_closed_form quoted 5,000 characters of its input
    from symtrans import parse_closed_form

    with pytest.raises(ValueError) as e:
        parse_closed_form("d_model*" + "x" * 5000 + "\x1b")
    msg = str(e.value)
    assert "characters)" in msg and "x" * 81 not in msg and len(msg) < 300
    assert "\x1b" not in msg and "\n" not in msg


def _run(argv, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "symtrans", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=default_signals,
    )


# The two mathtext names; the second also holds control characters and CJK text the
# chart font has no glyphs for (one process per command and name: each draws real charts).
MATHTEXT_NAMES = ["x$\\frac$y.json", "a$x^{$b\x07\x1b中文.json"]


@pytest.mark.parametrize("name", MATHTEXT_NAMES, ids=["frac", "caret-controls-cjk"])
@pytest.mark.parametrize("cmd", ["report", "plot"])
def test_a_file_name_is_drawn_as_plain_text_and_stderr_stays_empty(tmp_path, name, cmd):
    # report and plot ended in matplotlib's ParseSyntaxException (12 cases); a CJK or
    # control character printed a "Glyph ... missing from font(s)" warning on stderr
    (tmp_path / name).write_text(GPT2)
    out = "r.md" if cmd == "report" else "c.png"
    p = _run([cmd, name, "-o", out], tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stderr == "", p.stderr
    assert (tmp_path / out).stat().st_size > 0
    if cmd == "report":
        assert (tmp_path / "r-shares.png").read_bytes().startswith(b"\x89PNG")
