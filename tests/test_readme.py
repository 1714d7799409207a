"""The README's Python snippets run as written, and its quick start keeps its shape (issue 13).

Each fenced ``python`` block of our own README.md is run in a fresh interpreter (a
subprocess, in an empty folder, with this checkout on PYTHONPATH); the snippets check
themselves with ``assert`` against figures written out in them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PYTHON_BLOCKS = re.findall(r"^```python\n(.*?)^```$", README, flags=re.M | re.S)


def test_the_readme_has_python_snippets():
    assert len(PYTHON_BLOCKS) >= 3
    assert any("symtrans.parse_closed_form" in b for b in PYTHON_BLOCKS)
    assert any(".subs(" in b and ".sizes" in b for b in PYTHON_BLOCKS)


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_readme_python_snippet_runs(index, tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    p = subprocess.run(
        [sys.executable, "-c", PYTHON_BLOCKS[index]], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert p.returncode == 0, f"README python block {index + 1}:\n{PYTHON_BLOCKS[index]}\n{p.stderr}"


def test_quick_start_is_a_venv_step_and_two_commands():
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "python3 -m venv .venv && . .venv/bin/activate" in section
    commands = re.findall(r"^```sh\n(.*?)^```$", section, flags=re.M | re.S)
    # the plots extra: without matplotlib the report warns that it has no charts
    assert commands == ["pip install '.[plots]' && symtrans report llama-2-7b -o llama-2-7b.html\n", "bash .ci/run\n"]
    # The second command is the CI entry point: it installs the plots extra, which holds matplotlib.
    assert re.search(r"pip install .*-e '\.\[[a-z,]*plots", (ROOT / ".ci" / "run").read_text(encoding="utf-8"))
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^plots = \[.*"matplotlib', pyproject, flags=re.M)
