"""Smoke test of tests/adversarial/limits.py (issue 15): it records corpus cases and runs
each again as a real process under resource limits.

No timing is asserted (timings depend on the machine; the limits here are generous): only
that the script records the selected case, runs it, reports it with its exit status and
measures, and prints the summary line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif("SYMTRANS_CORPUS_RECORD" in os.environ, reason="inside a limits.py run")
def test_limits_script_runs_a_selected_case(tmp_path):
    out_json = tmp_path / "limits.json"
    p = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests" / "adversarial" / "limits.py"),
            "-k",
            "not_a_writable and socket",
            "--seconds",
            "120",
            "--wall",
            "600",
            "--json",
            str(out_json),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    lines = p.stdout.splitlines()
    assert any(line.startswith("ok ") and "[o-socket]" in line and "exit       2" in line for line in lines), lines
    assert lines[-1].startswith("1 cases; max CPU") and lines[-1].endswith("over the limits: 0")
    (r,) = json.loads(out_json.read_text())
    assert r["argv"] == ["params", "gpt2", "-o", "s"] and r["exit"] == 2 and r["over"] == []
    assert 0 < r["max_rss_mb"] < 1024
