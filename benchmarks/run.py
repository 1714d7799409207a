#!/usr/bin/env python3
"""symtrans benchmarks: four ratios measured side by side in one run (issue 6, item 1).

    python benchmarks/run.py            # the full run (about 3-5 minutes on 2 cores)
    python benchmarks/run.py --quick    # a short smoke run (small sizes, fewer repetitions)

What is measured (each figure is the median over ``--rounds`` rounds of ``--reps``
repetitions; the rounds' own medians are printed to show how repeatable they are):

(a) Sweep.  One million random configurations per model family (GPT-2: learned
    positions, tied head, GELU MLP; Llama-2: RMSNorm, SwiGLU, untied head), parameters
    and training FLOPs, through ``symtrans.analysis.sweep.sweep`` (the public vectorised path,
    as a user calls it) against the same closed forms written by hand in NumPy (the
    floor).  The two must agree on every row before anything is timed.  Per-configuration
    SymPy substitution (``symtrans.engine.evaluate.exact``, exact ``xreplace``) is timed on a
    sample and extrapolated per configuration; the output says so.  Goal: <= 2x floor.
(b) Cold start.  Wall time of ``symtrans params llama-2-7b --format json`` in a fresh
    process against ``python -c "import sympy"`` (the floor; goal <= 1.5x) and against
    counting Llama-2-7B with ``transformers`` on the meta device in a fresh process,
    what users do today (goal: symtrans at least 5x faster).  The three are interleaved
    so they share the machine's noise; the two counts must agree.
(c) Depth.  Building and evaluating (parameters and forward FLOPs, exactly) a
    1,000-layer Llama-2-7B against a 1-layer one, with symtrans's caches and SymPy's
    cache cleared before every repetition so the build is really measured.  Goal:
    ratio <= 1.1, because N stays a symbol.
(d) Reports.  The Markdown derivation report of every preset (``symtrans.render.report.render``),
    in seconds per report, beside the in-process exact count of the same presets (the
    issue sets no goal: the ratio is informational).

Timings are never asserted anywhere: the run prints PASS/MISS against each goal.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run from a checkout: measure the working tree's symtrans
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import sympy as sp  # noqa: E402

from symtrans.analysis.solve import quantity_expr  # noqa: E402
from symtrans.analysis.sweep import sweep  # noqa: E402
from symtrans.catalog.presets import PRESETS, get  # noqa: E402
from symtrans.engine import architectures, cost, evaluate  # noqa: E402

# Llama-2-7B, config.json of meta-llama/Llama-2-7b-hf (Touvron et al. 2023, Table 1 / App. A).
LLAMA2_7B = dict(
    hidden_size=4096,
    intermediate_size=11008,
    num_hidden_layers=32,
    num_attention_heads=32,
    num_key_value_heads=32,
    vocab_size=32000,
    max_position_embeddings=4096,
)
TRANSFORMERS_COUNT = f"""
import torch
from transformers import LlamaConfig, LlamaForCausalLM
cfg = LlamaConfig(**{LLAMA2_7B!r}, tie_word_embeddings=False)
with torch.device("meta"):
    model = LlamaForCausalLM(cfg)
print(sum(p.numel() for p in model.parameters()))
"""


# ---------------------------------------------------------------------------------
# timing helpers


def clear_caches() -> None:
    """Empty symtrans's caches of built trees and closed forms, and SymPy's cache."""
    from symtrans.accounting import flops
    from symtrans.analysis import sweep as sweep_module

    for fn in (
        getattr(architectures, "_build", None),
        getattr(cost, "closed_form", None),
        getattr(flops, "_flops_expr", None),
        getattr(sweep_module, "_compiled", None),
    ):
        if fn is not None and hasattr(fn, "cache_clear"):
            fn.cache_clear()
    sp.core.cache.clear_cache()


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    """Wall time of ``fn()`` in seconds (after a garbage collection) and its result."""
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


class Series:
    """Repetitions of one measurement, grouped by round."""

    def __init__(self) -> None:
        self.rounds: list[list[float]] = []

    def new_round(self) -> None:
        self.rounds.append([])

    def add(self, seconds: float) -> None:
        self.rounds[-1].append(seconds)

    @property
    def median(self) -> float:
        return statistics.median([t for r in self.rounds for t in r])

    def detail(self) -> str:
        per_round = ", ".join(f"{statistics.median(r):.4g}" for r in self.rounds if r)
        n = sum(len(r) for r in self.rounds)
        return f"median {self.median:.4g} s of {n} (round medians: {per_round} s)"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


# ---------------------------------------------------------------------------------
# machine context


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def context(args) -> dict:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count()
    ctx = {
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "cpu": cpu_model(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "sympy": sp.__version__,
        "numpy": np.__version__,
    }
    for mod in ("jinja2", "torch", "transformers"):
        try:
            ctx[mod] = __import__(mod).__version__ if mod == "jinja2" else _version(mod)
        except Exception:  # noqa: BLE001 - absent or broken: reported as such
            ctx[mod] = "not installed"
    ctx["mode"] = "quick" if args.quick else "full"
    return ctx


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


# ---------------------------------------------------------------------------------
# (a) sweep


def random_columns(n: int, seed: int) -> dict[str, np.ndarray]:
    """n random configurations: h in 1..64 heads of width d_k in {32, 64, 80, 96, 128, 256}
    (so d_model = h * d_k and h divides d_model), d_ff in 1..40,000, N in 1..96,
    V in 1..260,000, L in 1..8,192, B in 1..64.  Every count fits in int64 (checked)."""
    rng = np.random.default_rng(seed)
    h = rng.integers(1, 65, n)
    seq = rng.integers(1, 8_193, n)
    return {
        "h": h,
        "d_model": h * rng.choice(np.array([32, 64, 80, 96, 128, 256]), n),
        "d_ff": rng.integers(1, 40_001, n),
        "N": rng.integers(1, 97, n),
        "V": rng.integers(1, 260_001, n),
        "L": seq,
        "L_max": seq,  # the position table as long as the sequence (GPT-2's n_positions = n_ctx)
        "B": rng.integers(1, 65, n),
    }


def floor_gpt2(c: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """GPT-2 (HF GPT2LMHeadModel), written by hand.

    Parameters: wte V*d + wpe L_max*d; per layer c_attn 3d^2+3d, attn c_proj d^2+d,
    mlp c_fc d*d_ff+d_ff, mlp c_proj d_ff*d+d, ln_1 + ln_2 4d; ln_f 2d; tied head 0:
        L_max*d + N*(2*d_ff*d + d_ff + 4*d^2 + 9*d) + V*d + 2*d.
    Training FLOPs = 3 x forward (backward = 2 x forward, Kaplan et al. 2020 §2.1), forward
    at 2 FLOPs per multiply-accumulate: per layer Q,K,V,O 2BL*4d^2, MLP 2BL*2*d*d_ff,
    QK^T and scores x V 2*2*B*L^2*d (full square); LM head 2BL*d*V:
        6*B*L*V*d + N*(24*B*L*d^2 + 12*B*L*d_ff*d + 12*B*L^2*d).
    """
    d, ff, N, V, L, B = c["d_model"], c["d_ff"], c["N"], c["V"], c["L"], c["B"]
    params = c["L_max"] * d + N * (2 * ff * d + ff + 4 * d * d + 9 * d) + V * d + 2 * d
    flops = 6 * B * L * V * d + N * (24 * B * L * d * d + 12 * B * L * ff * d + 12 * B * L * L * d)
    return params, flops


def floor_llama(c: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Llama-2 (HF LlamaForCausalLM, multi-head attention), written by hand.

    Parameters: embed_tokens V*d + untied lm_head V*d; per layer q,k,v,o 4d^2 (no bias),
    gate/up/down 3*d*d_ff, two RMSNorm weights 2d; final norm d:
        N*(3*d_ff*d + 4*d^2 + 2*d) + 2*V*d + d.
    Training FLOPs = 3 x forward: per layer 2BL*4d^2 + 2BL*3*d*d_ff (SwiGLU: three maps)
    + 4*B*L^2*d; LM head 2BL*d*V:
        6*B*L*V*d + N*(24*B*L*d^2 + 18*B*L*d_ff*d + 12*B*L^2*d).
    """
    d, ff, N, V, L, B = c["d_model"], c["d_ff"], c["N"], c["V"], c["L"], c["B"]
    params = N * (3 * ff * d + 4 * d * d + 2 * d) + 2 * V * d + d
    flops = 6 * B * L * V * d + N * (24 * B * L * d * d + 18 * B * L * ff * d + 12 * B * L * L * d)
    return params, flops


FAMILIES = (("gpt2", floor_gpt2), ("llama-2-7b", floor_llama))
QUANTITIES = ["params", "training_flops"]


def check_floor_exact(c: dict[str, np.ndarray], floor: Callable, k: int = 200) -> None:
    """The int64 floor cannot have wrapped: the same formulas in float64 stay below 2^62,
    and on k rows they equal Python-int (unbounded) arithmetic."""
    fl = {key: v.astype(np.float64) for key, v in c.items()}
    for arr in floor(fl):
        if not float(np.max(arr)) < 2.0**62:
            raise SystemExit("benchmark data overflow int64: shrink the random ranges")
    ints = floor(c)
    for i in range(0, len(c["N"]), max(1, len(c["N"]) // k)):
        row = {key: int(v[i]) for key, v in c.items()}
        exact = floor(row)
        if (int(ints[0][i]), int(ints[1][i])) != exact:
            raise SystemExit(f"the NumPy floor disagrees with Python integers at row {i}")


def bench_sweep(args, out: dict) -> None:
    print(f"\n(a) sweep: {args.rows:,} random configurations per family, parameters + training FLOPs")
    print("    " + random_columns.__doc__.split("\n")[0].strip() + " ...")
    lines = []
    results = {}
    for seed, (name, floor) in enumerate(FAMILIES):
        spec = get(name).spec
        cols = random_columns(args.rows, seed)
        check_floor_exact(cols, floor)
        # Cold: the first call compiles the closed forms (SymPy -> lambdify); caches cleared.
        clear_caches()
        t_cold, res = timed(lambda: sweep(spec, cols, QUANTITIES))
        fp, ff = floor(cols)
        got_p, got_f = res.columns["params"], res.columns["flops_training"]
        if not (got_p.dtype == np.int64 and np.array_equal(got_p, fp) and np.array_equal(got_f, ff)):
            raise SystemExit(f"{name}: symtrans's sweep and the hand-written NumPy floor disagree")
        s_sym, s_floor = Series(), Series()
        for _ in range(args.rounds):
            s_sym.new_round()
            s_floor.new_round()
            for _ in range(args.reps):  # interleaved: both see the same machine state
                s_sym.add(timed(lambda: sweep(spec, cols, QUANTITIES))[0])
                s_floor.add(timed(lambda: floor(cols))[0])
        # Per-configuration SymPy substitution on a sample, extrapolated.
        exprs = [quantity_expr(spec, q) for q in QUANTITIES]
        idx = np.linspace(0, args.rows - 1, args.sympy_sample).astype(int)
        rows = [{k: int(v[i]) for k, v in cols.items()} for i in idx]

        def substitute():
            return [[evaluate.exact(e, r) for e in exprs] for r in rows]

        t_sub, vals = timed(substitute)
        if vals != [[int(got_p[i]), int(got_f[i])] for i in idx]:
            raise SystemExit(f"{name}: SymPy substitution and the sweep disagree")
        per_config = t_sub / len(rows)
        ratio = s_sym.median / s_floor.median
        results[name] = {
            "symtrans_s": s_sym.median,
            "floor_s": s_floor.median,
            "ratio": ratio,
            "first_call_s": t_cold,
            "sympy_per_config_s": per_config,
            "sympy_extrapolated_s": per_config * args.rows,
            "sympy_sample": len(rows),
            "rounds": {"symtrans": s_sym.rounds, "floor": s_floor.rounds},
        }
        print(f"  {name} family: all {args.rows:,} rows agree (sweep = NumPy floor; SymPy on {len(rows):,} rows)")
        print(f"    symtrans sweep      {s_sym.detail()}")
        print(f"    NumPy floor         {s_floor.detail()}")
        print(f"    first call          {t_cold:.4g} s (caches cleared: builds the closed forms and lambdifies them)")
        print(
            f"    SymPy substitution  {per_config * 1e6:.1f} us per configuration, measured on {len(rows):,}, "
            f"extrapolated to {args.rows:,}: {per_config * args.rows:.4g} s"
        )
        lines.append((name, ratio, per_config * args.rows / s_sym.median))
    worst = max(r for _, r, _ in lines)
    parts = ", ".join(f"{n} {r:.2f}x" for n, r, _ in lines)
    sub = ", ".join(f"{n} {s:,.0f}x" for n, _, s in lines)
    out["sweep"] = {"rows": args.rows, "families": results, "worst_ratio": worst}
    out["ratios"]["a"] = (
        f"RATIO (a) sweep of {args.rows:,} configurations (params + training FLOPs), "
        f"symtrans / hand-written NumPy floor: {parts} (goal <= 2x: {verdict(worst <= 2)}); "
        f"per-configuration SymPy substitution (extrapolated from {args.sympy_sample:,} "
        f"configurations) / symtrans: {sub}"
    )


# ---------------------------------------------------------------------------------
# (b) cold start


def symtrans_command() -> tuple[list[str], str]:
    """The installed console script (its shebang is this interpreter) or ``python -m symtrans``."""
    script = Path(sysconfig.get_path("scripts")) / "symtrans"
    try:
        head = script.read_text(errors="replace")[:200]
    except OSError:
        head = ""
    if head.startswith("#!") and "symtrans.cli.main" in head:
        return [sys.executable, str(script)], f"{script} (the console script)"
    return [sys.executable, "-m", "symtrans"], "python -m symtrans"


def run_wall(cmd: list[str], env: dict, timeout: float = 600) -> tuple[float, str]:
    t0 = time.perf_counter()
    p = subprocess.run(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tempfile.gettempdir(),
        timeout=timeout,
        text=True,
    )
    t = time.perf_counter() - t0
    if p.returncode:
        raise SystemExit(f"{' '.join(cmd[:3])} ... failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    return t, p.stdout


def bench_cold_start(args, out: dict) -> None:
    env = dict(os.environ)
    bytecode = "as the environment sets it"
    if not args.keep_env and env.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        bytecode = "on (PYTHONDONTWRITEBYTECODE removed for these processes, as for an installed package)"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    st_cmd, st_label = symtrans_command()
    cmds = {
        "sympy": [sys.executable, "-c", "import sympy"],
        "symtrans": st_cmd + ["params", "llama-2-7b", "--format", "json"],
    }
    with_tf = not args.skip_transformers
    if with_tf:
        try:
            import importlib.util

            with_tf = (
                importlib.util.find_spec("transformers") is not None and importlib.util.find_spec("torch") is not None
            )
        except (ImportError, ValueError):
            with_tf = False
    if with_tf:
        cmds["transformers"] = [sys.executable, "-c", TRANSFORMERS_COUNT]
    print(f"\n(b) cold start, fresh processes, interleaved; bytecode cache {bytecode}")
    print(f"    symtrans:     {st_label} params llama-2-7b --format json")
    print('    floor:        python -c "import sympy"')
    print(
        "    transformers: "
        + (
            "LlamaForCausalLM(LlamaConfig(Llama-2-7B sizes)) on the meta device, sum of numel"
            if with_tf
            else "skipped ("
            + ("--skip-transformers" if args.skip_transformers else "torch or transformers not installed")
            + ")"
        )
    )
    # One untimed run of each warms the file cache and writes bytecode; it also checks the counts.
    outputs = {k: run_wall(c, env)[1] for k, c in cmds.items()}
    total = json.loads(outputs["symtrans"])["total"]
    if with_tf:
        tf_total = int(outputs["transformers"].strip().splitlines()[-1])
        if tf_total != total:
            raise SystemExit(f"symtrans counts {total:,} parameters, transformers {tf_total:,}")
        print(f"    both count {total:,} parameters")
    series = {k: Series() for k in cmds}
    order = list(cmds)
    for _ in range(args.rounds):
        for s in series.values():
            s.new_round()
        for rep in range(args.reps):
            for k in order[rep % len(order) :] + order[: rep % len(order)]:  # rotate the order
                if k == "transformers" and rep >= args.tf_reps:
                    continue
                series[k].add(run_wall(cmds[k], env)[0])
    for k, s in series.items():
        print(f"    {k:<12}  {s.detail()}")
    sym, floor = series["symtrans"].median, series["sympy"].median
    r_floor = sym / floor
    res = {
        "symtrans_s": sym,
        "sympy_import_s": floor,
        "ratio_to_floor": r_floor,
        "command": st_label,
        "bytecode": bytecode,
        "rounds": {k: s.rounds for k, s in series.items()},
    }
    text = (
        f"RATIO (b) cold start of 'symtrans params llama-2-7b --format json': {sym:.3f} s = {r_floor:.2f}x "
        f"the 'import sympy' floor {floor:.3f} s (goal <= 1.5x: {verdict(r_floor <= 1.5)}); "
    )
    if with_tf:
        tf = series["transformers"].median
        speedup = tf / sym
        res.update(transformers_s=tf, speedup_vs_transformers=speedup)
        text += (
            f"transformers on the meta device {tf:.2f} s = symtrans {speedup:.1f}x faster "
            f"(goal >= 5x: {verdict(speedup >= 5)})"
        )
    else:
        text += "transformers: not measured (n/a)"
    out["cold_start"] = res
    out["ratios"]["b"] = text


# ---------------------------------------------------------------------------------
# (c) depth


def llama_params(N: int) -> int:
    """Llama-2-7B with N layers (see floor_llama): N*(3*d_ff*d + 4*d^2 + 2*d) + 2*V*d + d."""
    d, ff, V = 4096, 11008, 32000
    return N * (3 * ff * d + 4 * d * d + 2 * d) + 2 * V * d + d


def bench_depth(args, out: dict) -> None:
    base = get("llama-2-7b").spec
    specs = {n: base.replace(sizes={"N": n}) for n in (1, 1000)}

    def once(spec):
        clear_caches()  # symtrans's built trees and closed forms, and SymPy's own cache

        def work():
            model = architectures.build(spec)
            v = dict(spec.values, B=1)
            return evaluate.exact(model.params, v), evaluate.exact(model.flops, v)

        return timed(work)

    for n, spec in specs.items():
        got = once(spec)[1][0]
        if got != llama_params(n):
            raise SystemExit(f"depth: {n} layers count {got:,}, the hand formula {llama_params(n):,}")
    series = {n: Series() for n in specs}
    for _ in range(args.rounds):
        for s in series.values():
            s.new_round()
        for rep in range(args.reps * 2):
            for n in (1, 1000) if rep % 2 == 0 else (1000, 1):  # alternate the order
                series[n].add(once(specs[n])[0])
    print(
        "\n(c) depth: build the Cost tree of Llama-2-7B and evaluate parameters and forward FLOPs exactly; "
        "caches cleared each time"
    )
    for n, s in series.items():
        print(f"    N = {n:<5} {s.detail()}  ({llama_params(n):,} parameters, equal to the hand formula)")
    ratio = series[1000].median / series[1].median
    out["depth"] = {
        "one_layer_s": series[1].median,
        "thousand_layers_s": series[1000].median,
        "ratio": ratio,
        "rounds": {str(n): s.rounds for n, s in series.items()},
    }
    out["ratios"]["c"] = (
        f"RATIO (c) depth, 1,000 layers / 1 layer (build + exact evaluation): "
        f"{series[1000].median * 1e3:.1f} ms / {series[1].median * 1e3:.1f} ms = {ratio:.3f} "
        f"(goal <= 1.1: {verdict(ratio <= 1.1)})"
    )


# ---------------------------------------------------------------------------------
# (d) reports


def bench_reports(args, out: dict) -> None:
    from symtrans.catalog.resolve import resolve
    from symtrans.cli.main import params_result
    from symtrans.render.report import render

    names = [n for n in PRESETS][: args.presets or None]
    resolved = [resolve(n) for n in names]
    s_rep, s_count = Series(), Series()
    slowest: dict[str, float] = {}
    for _ in range(args.rounds):
        s_rep.new_round()
        s_count.new_round()
        for _ in range(args.report_reps):
            clear_caches()  # each pass starts cold; structures repeat across presets within it
            times = []
            for r in resolved:
                t, text = timed(lambda: render(r, "markdown"))
                if not text.startswith("#"):
                    raise SystemExit(f"the report of {r.name} does not start with a title")
                times.append(t)
                slowest[r.name] = max(slowest.get(r.name, 0.0), t)
            s_rep.add(sum(times) / len(times))
            clear_caches()
            t, _ = timed(lambda: [params_result(r) for r in resolved])
            s_count.add(t / len(resolved))
    worst = max(slowest, key=slowest.get)
    ratio = s_rep.median / s_count.median
    print(
        f"\n(d) reports: Markdown derivation report of {len(names)} presets (symtrans.render.report.render), "
        "caches cleared before each pass"
    )
    print(f"    per report          {s_rep.detail()}")
    print(f"    per exact count     {s_count.detail()}  (params_result: total, closed form, components)")
    print(f"    slowest report      {worst}: {slowest[worst]:.3f} s")
    out["reports"] = {
        "presets": len(names),
        "seconds_per_report": s_rep.median,
        "seconds_per_count": s_count.median,
        "ratio": ratio,
        "slowest": [worst, slowest[worst]],
        "rounds": {"report": s_rep.rounds, "count": s_count.rounds},
    }
    out["ratios"]["d"] = (
        f"RATIO (d) reports: {s_rep.median:.3f} s per Markdown report over {len(names)} presets "
        f"({1 / s_rep.median:.1f} reports/s) = {ratio:.1f}x an in-process exact count "
        f"({s_count.median * 1e3:.1f} ms) (no goal in the issue: INFO)"
    )


# ---------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="a short smoke run: small sizes, one round, few repetitions")
    p.add_argument("--rows", type=int, default=None, help="configurations per family in (a) (default 1,000,000)")
    p.add_argument("--rounds", type=int, default=None, help="rounds of every measurement (default 2)")
    p.add_argument("--reps", type=int, default=None, help="repetitions per round (default 5)")
    p.add_argument("--skip-transformers", action="store_true", help="leave transformers out of (b)")
    p.add_argument(
        "--keep-env",
        action="store_true",
        help="run (b)'s processes with the environment as it is (e.g. PYTHONDONTWRITEBYTECODE)",
    )
    p.add_argument("--only", default="abcd", help="the sections to run, e.g. 'ab' (default abcd)")
    p.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = p.parse_args(argv)
    q = args.quick
    args.rows = (20_000 if q else 1_000_000) if args.rows is None else args.rows
    args.rounds = (1 if q else 2) if args.rounds is None else args.rounds
    args.reps = (2 if q else 5) if args.reps is None else args.reps
    args.tf_reps = 1 if q else 2  # transformers takes seconds per run
    args.report_reps = 1 if q else 2
    args.sympy_sample = 100 if q else 2_000
    args.presets = 3 if q else 0
    if args.rows < 1 or args.rounds < 1 or args.reps < 1 or not set(args.only) <= set("abcd"):
        p.error("--rows, --rounds and --reps must be positive; --only takes letters of abcd")

    t_start = time.perf_counter()
    out: dict = {"context": context(args), "ratios": {}}
    c = out["context"]
    print("symtrans benchmarks (benchmarks/run.py" + (" --quick" if q else "") + ")")
    print(f"machine: {c['cores']} cores ({c['usable_cores']} usable), {c['cpu']}; {c['os']}")
    print(
        f"versions: Python {c['python']}, SymPy {c['sympy']}, NumPy {c['numpy']}, Jinja2 {c['jinja2']}, "
        f"torch {c['torch']}, transformers {c['transformers']}"
    )
    print(
        f"each figure: median of {args.rounds} round(s) x {args.reps} repetition(s) "
        f"(transformers: {args.tf_reps}, reports: {args.report_reps} per round)"
    )
    for key, fn in (("a", bench_sweep), ("b", bench_cold_start), ("c", bench_depth), ("d", bench_reports)):
        if key in args.only:
            fn(args, out)
    elapsed = time.perf_counter() - t_start
    out["seconds"] = elapsed
    print(f"\nsummary ({elapsed:.0f} s in all; {c['cores']} cores, {c['cpu']}):")
    for key in "abcd":
        if key in out["ratios"]:
            print(out["ratios"][key])
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=float) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
