"""Run every case of the adversarial corpus under resource limits (issue 15, "Must show").

"No command exceeds 10 s or 1 GB RSS on any input from the corpus" is a property of the
machine as much as of the code, so it is checked here, by a script, not by a timed
assertion in the tests.  The script

1. runs the corpus (``pytest tests/adversarial``) with ``SYMTRANS_CORPUS_RECORD`` set: the
   ``reject`` fixture (conftest.py) records every case it runs (working directory with its
   files, FIFOs and device nodes, argv, environment), and the directories are kept;
2. runs each recorded case again as a real ``python -m symtrans`` process in its
   directory, under ``resource.setrlimit``: ``RLIMIT_CPU`` (default 10 s; SIGXCPU, then
   SIGKILL one second later) and ``RLIMIT_AS`` (default 1 GiB of address space, which
   bounds the resident set too), plus a wall-clock limit after which its whole process
   group (TeX included) is killed;
3. prints one line per case (CPU seconds of the process and the children it waited for,
   wall seconds, peak RSS, exit status) and a summary; exits 1 if any case went over.

    python3 tests/adversarial/limits.py                    # the whole corpus
    python3 tests/adversarial/limits.py -k fifo --jobs 2   # a part of it, two at a time
    python3 tests/adversarial/limits.py --wall 30          # a busy machine: CPU stays at 10 s

On a machine shared with other work, wall time includes waiting for a core; CPU time
does not, which is why CPU time is the limit enforced by default and wall time gets its
own option.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent


@dataclass
class Result:
    id: str
    argv: list[str]
    exit: int | None  # None: killed at the wall-clock limit
    signal: str | None
    cpu_s: float
    wall_s: float
    max_rss_mb: float
    over: list[str]


def _limits(cpu_s: int, memory: int):
    def apply() -> None:  # runs in the child, before exec
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # not inherited as ignored (nohup, &)
            signal.signal(sig, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return apply


def record(record_file: Path, basetemp: Path, select: str | None) -> int:
    """Run the corpus once with recording on; returns pytest's exit status."""
    env = dict(os.environ, SYMTRANS_CORPUS_RECORD=str(record_file))
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={basetemp}", str(CORPUS)]
    if select:
        cmd += ["-k", select]
    return subprocess.run(cmd, env=env, cwd=REPO, stdout=subprocess.DEVNULL).returncode


def run_case(case: dict, cpu_s: int, memory: int, wall_s: float) -> Result:
    """Run one recorded case under the limits and measure it."""
    env = dict(os.environ if case.get("env") is None else case["env"])
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "symtrans", *case["argv"]],
            cwd=case["cwd"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            preexec_fn=_limits(cpu_s, memory),
            start_new_session=True,  # its own process group: the wall-clock kill reaches TeX too
        )
        killed = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > wall_s and not killed:
                os.killpg(proc.pid, signal.SIGKILL)
                killed = True
            time.sleep(0.005)
        wall = time.monotonic() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # anything the case left running
        except (ProcessLookupError, PermissionError):
            pass
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    cpu = usage.ru_utime + usage.ru_stime
    rss_mb = usage.ru_maxrss / 1024  # kB on Linux
    code = proc.returncode
    sig = signal.Signals(-code).name if code < 0 else None
    over = []
    if killed:
        over.append(f"wall > {wall_s:g} s")
    if cpu > cpu_s or sig in ("SIGXCPU",) or (sig == "SIGKILL" and not killed):
        over.append(f"CPU > {cpu_s} s")
    if "MemoryError" in stderr or rss_mb * 2**20 > memory:
        over.append(f"memory > {memory / 2**30:g} GiB")
    return Result(case["id"], case["argv"], None if killed else code, sig, cpu, wall, rss_mb, over)


def _short(argv: list[str], width: int = 70) -> str:
    text = " ".join(a if len(a) <= 40 else a[:37] + "..." for a in argv)
    return text if len(text) <= width else text[: width - 3] + "..."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=10, help="CPU seconds per case (RLIMIT_CPU; default 10)")
    parser.add_argument("--memory", type=float, default=1.0, help="GiB of address space per case (default 1)")
    parser.add_argument("--wall", type=float, default=None, help="wall-clock seconds per case (default: --seconds)")
    parser.add_argument("-k", dest="select", default=None, help="only the corpus tests pytest -k selects")
    parser.add_argument("--jobs", type=int, default=1, help="cases run at once (default 1: clean timings)")
    parser.add_argument("--replay", type=Path, default=None, help="a record file of an earlier run (skips step 1)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    parser.add_argument("--keep", action="store_true", help="keep the recorded working directories")
    args = parser.parse_args(argv)
    memory = int(args.memory * 2**30)
    wall = args.wall if args.wall is not None else float(args.seconds)

    scratch = Path(tempfile.mkdtemp(prefix="symtrans-limits-"))
    try:
        record_file = args.replay or scratch / "cases.jsonl"
        if args.replay is None:
            status = record(record_file, scratch / "pytest", args.select)
            print(f"corpus run (recording): pytest exit status {status}", flush=True)
        if not record_file.exists():
            print("no corpus case was recorded", file=sys.stderr)
            return 2
        cases = [json.loads(line) for line in record_file.read_text(encoding="utf-8").splitlines() if line]
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(lambda c: run_case(c, args.seconds, memory, wall), cases))
        for r in results:
            verdict = "OVER" if r.over else "ok  "
            status = r.signal or ("killed" if r.exit is None else str(r.exit))
            print(
                f"{verdict} cpu {r.cpu_s:6.2f} s  wall {r.wall_s:6.2f} s  rss {r.max_rss_mb:6.0f} MB  "
                f"exit {status:>7}  {r.id.split('::', 1)[-1]}  [{_short(r.argv)}]"
                + (f"  <- {', '.join(r.over)}" if r.over else "")
            )
        over = [r for r in results if r.over]
        if results:
            cpu = max(results, key=lambda r: r.cpu_s)
            rss = max(results, key=lambda r: r.max_rss_mb)
            print(
                f"{len(results)} cases; max CPU {cpu.cpu_s:.2f} s ({cpu.id.split('::', 1)[-1]}); "
                f"max RSS {rss.max_rss_mb:.0f} MB ({rss.id.split('::', 1)[-1]}); "
                f"limits {args.seconds} s CPU, {wall:g} s wall, {args.memory:g} GiB; over the limits: {len(over)}"
            )
        if args.json:
            args.json.write_text(json.dumps([asdict(r) for r in results], indent=2), encoding="utf-8")
        return 1 if over else 0
    finally:
        if args.keep:
            print(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
