"""No manual regeneration (issue 20, Build 6): after an edit of the engine, the second
``symtrans params llama-2-7b --format json`` prints byte-identical JSON and is fast again.

The package is copied to a temporary directory, a comment is appended to its
``engine/cost.py`` (which changes the fingerprint of the closed forms' sources), and with an
empty ``XDG_CACHE_HOME``:

1. the first run builds the plan with SymPy and writes it to the per-user disk cache;
2. the next runs answer from the cache without importing SymPy.

Printed: the median wall time of ``python -c "import sympy"``, of the first run and of the
later runs (``--reps``, after one untimed warm-up of the bytecode), their ratio to
``import sympy``, and whether every output equals the unedited package's.  Usage::

    python benchmarks/regeneration.py [--reps 7]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARGV = ["-m", "symtrans", "params", "llama-2-7b", "--format", "json"]


def _run(argv: list[str], env: dict) -> tuple[float, bytes]:
    t = time.perf_counter()
    p = subprocess.run([sys.executable, *argv], env=env, capture_output=True, check=True)
    return time.perf_counter() - t, p.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        shutil.copytree(ROOT / "symtrans", tmp_path / "symtrans", ignore=shutil.ignore_patterns("__pycache__"))
        base = {k: v for k, v in os.environ.items() if k not in ("SYMTRANS_NO_GENERATED", "PYTHONDONTWRITEBYTECODE")}
        original_env = dict(base, PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(tmp_path / "cache-original"))
        _, want = _run(ARGV, original_env)
        with open(tmp_path / "symtrans" / "engine" / "cost.py", "a", encoding="utf-8") as f:
            f.write("\n# an edit of the engine: the fingerprint of the closed forms' sources changes\n")
        env = dict(base, PYTHONPATH=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"))
        sympy = statistics.median(_run(["-c", "import sympy"], env)[0] for _ in range(args.reps))
        first, out = _run(ARGV, env)
        same = [out == want]
        _run(ARGV, env)  # bytecode of the edited copy written; untimed
        later = []
        for _ in range(args.reps):
            t, out = _run(ARGV, env)
            later.append(t)
            same.append(out == want)
        second = statistics.median(later)
    print(f"import sympy:                 {sympy * 1e3:8.1f} ms")
    print(f"first run after the edit:     {first * 1e3:8.1f} ms ({first / sympy:.2f} x import sympy)")
    print(f"later runs (median of {args.reps}):   {second * 1e3:8.1f} ms ({second / sympy:.2f} x import sympy)")
    print(f"byte-identical JSON on every run: {all(same)}")
    return 0 if all(same) else 1


if __name__ == "__main__":
    sys.exit(main())
