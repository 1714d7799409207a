"""Smoke test of benchmarks/run.py (issues 6 and 16): a short run prints the eight ratios.

No timing is asserted (timings depend on the machine): only that the run finishes,
checks its own results (the sweep against the hand-written NumPy floor, the counts
against hand formulas) and prints each ratio line against its goal.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_quick_run_prints_the_eight_ratios(tmp_path):
    out_json = tmp_path / "figures.json"
    p = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "run.py"),
            "--quick",
            "--rows",
            "5000",
            "--skip-transformers",
            "--json",
            str(out_json),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    lines = p.stdout.splitlines()
    ratio_lines = [line for line in lines if line.startswith("RATIO (")]
    assert [line[:9] for line in ratio_lines] == [f"RATIO ({k})" for k in "abcdefgh"]
    a, b, c, d, e, f, g, h = ratio_lines
    assert re.search(r"gpt2 [0-9.]+x \(CLI path [0-9.]+x; old floor [0-9.]+x\), llama-2-7b [0-9.]+x", a)
    assert re.search(r"\(goal <= 1.5x: (PASS|MISS)\); first call .* \(goal <= 0.3 s: (PASS|MISS)\)", a)
    assert "extrapolated from 100 configurations" in a
    assert re.search(r"= [0-9.]+x the 'import sympy' floor [0-9.]+ s; a config.json seen before", b)
    assert re.search(r"seen for the first time [0-9.]+ s = [0-9.]+x; deploy [0-9.]+ s = [0-9.]+x", b)
    assert re.search(r"\(goal <= 0.25x each: (PASS|MISS)\)", b)
    assert "transformers: not measured" in b  # --skip-transformers
    assert re.search(r"= [0-9.]+ \(goal <= 1.1: (PASS|MISS)\)", c)
    assert re.search(r"median [0-9.]+ s per Markdown report over 4 presets, slowest", d)  # 3 + mixtral-8x7b
    assert re.search(r"peak RSS [0-9]+ MiB = [0-9.]+x the 10,000-row sweep", e)
    assert re.search(r"gallery without PDFs: [0-9.]+ s", f)
    assert re.search(r"the slower chart [0-9.]+ s \(goal <= 0.3 s: (PASS|MISS)\); a Markdown report with charts", g)
    assert re.search(r"= [0-9.]+x one without \(goal <= 1.5x: (PASS|MISS)\)", g)
    assert re.search(r"inspect of a 9,\d{3}-tensor safetensors header = [0-9.]+x safe_open plus a JSON parse", h)
    assert re.search(r"\(--format json [0-9.]+x; goal <= 2x: (PASS|MISS)\); peak RSS [0-9]+ MiB", h)
    # The machine's context comes first.
    assert lines[1].startswith("machine: ") and " cores " in lines[1]
    assert re.match(r"versions: Python [0-9.]+, SymPy [0-9.]+, NumPy [0-9.]+", lines[2])
    figures = json.loads(out_json.read_text())
    assert sorted(figures["ratios"]) == list("abcdefgh")
    assert figures["sweep"]["rows"] == 5000 and figures["reports"]["presets"] == 4
    assert figures["context"]["cores"] >= 1


def test_bad_arguments_exit_with_status_2():
    p = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--rows", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2 and "must be positive" in p.stderr


def test_inspect_benchmark_quick_run(tmp_path):
    """benchmarks/inspect_checkpoint.py (issue 14): sparse checkpoints inspected from their
    headers; the run checks the element counts itself and prints its ratio lines."""
    p = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "inspect_checkpoint.py"), "--quick", "--reps", "1"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    ratios = [line for line in p.stdout.splitlines() if line.startswith("RATIO ")]
    assert [line.split(":")[0] for line in ratios] == ["RATIO safetensors", "RATIO gguf"]
    assert any(line.startswith("peer gguf:") for line in p.stdout.splitlines())


def test_the_generic_benchmark_times_types_that_take_the_generic_path():
    # benchmarks/generic.py times the generic path (issue 22) on four configs through the CLI:
    # a type with a curated record would be answered by its record instead, and the figure
    # would not be the generic path's.  Each must also be a type the installed transformers has.
    import importlib.util

    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    from symtrans.catalog.hf_config import SUPPORTED

    spec = importlib.util.spec_from_file_location("bench_generic", ROOT / "benchmarks" / "generic.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    types = [cfg["model_type"] for cfg in bench.CONFIGS.values()]
    assert len(types) == 4
    for mt in types:
        assert mt not in SUPPORTED and mt in CONFIG_MAPPING_NAMES, mt
