"""Sweep and solve over training layouts (``symtrans train --sweep`` / ``--solve``).

A sweep takes the parallel sizes as axes (``tp=1,2,4 pp=1,2``) and evaluates every
combination exactly (``accounting.parallel.memory``, and the step time of the layouts that
fit); a combination the frameworks refuse is a row with the reason (``check_layout``'s
sentence), never dropped silently.  ``solve`` walks the layouts by device count, smallest
first, and returns those of the smallest count whose busiest device fits the accelerator's
memory, the fastest first: tp over the powers of two up to a node that divide the heads
and KV heads, pp over the divisors of the layers, dp over the powers of two, ep over the
divisors of the experts that divide dp.

Units: bytes and seconds; every value exact until printed.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

import sympy as sp

from symtrans.accounting import parallel as P
from symtrans.accounting import parallel_time as PT
from symtrans.base.errors import InputError

AXES = ("tp", "pp", "vpp", "dp", "ep", "cp", "micro_batch")
MAX_ROWS = 4096


def parse_axes(text: str) -> dict[str, list[int]]:
    """``"tp=1,2,4 pp=1,2"`` (axes separated by spaces or ';') -> {"tp": [1, 2, 4], "pp": [1, 2]}.

    Raises:
        InputError: an unknown axis, a repeated one, a value that is not a positive integer,
            or more than ``MAX_ROWS`` combinations.
    """
    axes: dict[str, list[int]] = {}
    for part in re.split(r"[;\s]+", text.strip()):
        if not part:
            continue
        name, eq, vals = part.partition("=")
        name = name.strip().replace("-", "_")
        if not eq or name not in AXES:
            raise InputError(f"--sweep takes axes {', '.join(AXES)} as NAME=V1,V2,..., not {part!r}")
        if name in axes:
            raise InputError(f"--sweep names {name} twice")
        values = []
        for v in vals.split(","):
            if not re.fullmatch(r"[1-9][0-9]{0,6}", v.strip()):
                raise InputError(f"--sweep {name} takes positive integers, not {v!r}")
            values.append(int(v))
        axes[name] = values
    if not axes:
        raise InputError("--sweep needs at least one axis, e.g. tp=1,2,4")
    n = 1
    for v in axes.values():
        n *= len(v)
    if n > MAX_ROWS:
        raise InputError(f"--sweep asks for {n:,} layouts; at most {MAX_ROWS:,}")
    return axes


def _with_batch(lay: P.Layout, fixed_global: bool) -> P.Layout:
    return lay if fixed_global else replace(lay, global_batch=lay.micro_batch * lay.dp)


def evaluate(spec, values: dict, lay: P.Layout, acc, cluster, mfu, timed: bool = True) -> dict:
    """One row: the layout's sizes, the busiest device's bytes and whether it fits, and the
    step time (when ``timed``); or the reason the layout is refused."""
    row = {k: getattr(lay, k) for k in AXES}
    row["devices"] = lay.devices
    row["global_batch"] = lay.global_batch
    try:
        P.check_layout(spec, values, lay)
    except InputError as e:
        row["refused"] = str(e)
        return row
    stages = P.memory(spec, values, lay)
    busiest = max(stages, key=lambda s: s.total)
    row["busiest_stage"] = busiest.stage if lay.pp > 1 else "only"
    row["busiest_bytes"] = int(sp.ceiling(busiest.total))
    row["fits"] = bool(acc.memory is None or busiest.total <= acc.memory)
    if timed:
        colls = PT.collectives(spec, values, lay, stages[0].params)
        t = PT.step_time(spec, values, lay, colls, acc, cluster, mfu)
        row["step_seconds"] = float(t.step)
        row["tokens_per_second"] = float(t.tokens_per_second)
    return row


def sweep(spec, values: dict, base: P.Layout, axes: dict[str, list[int]], acc, cluster, mfu, fixed_global: bool):
    """A row per combination of ``axes`` (the rest from ``base``)."""
    names = list(axes)
    rows = []
    for combo in itertools.product(*(axes[n] for n in names)):
        lay = _with_batch(replace(base, **dict(zip(names, combo))), fixed_global)
        rows.append(evaluate(spec, values, lay, acc, cluster, mfu))
    return rows


def _powers_of_two(limit: int) -> list[int]:
    out, n = [], 1
    while n <= limit:
        out.append(n)
        n *= 2
    return out


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def solve(spec, values: dict, base: P.Layout, acc, cluster, mfu, fixed_global: bool, max_devices: int) -> dict:
    """The layouts of the smallest device count whose busiest device fits, fastest first.

    Raises:
        InputError: the accelerator states no memory, or no layout of at most
            ``max_devices`` devices fits.
    """
    if acc.memory is None:
        raise InputError(f"--solve needs the device's memory; {acc.name} states none (give memory=...)")
    h, h_kv, n = int(values["h"]), int(values.get("h_kv", values["h"])), int(values["N"])
    tps = [t for t in _powers_of_two(min(cluster.gpus_per_node, h)) if h % t == 0 and h_kv % t == 0]
    pps = [p for p in _divisors(n) if p <= max_devices]
    dps = _powers_of_two(max_devices)
    eps = _divisors(int(values["E"])) if spec.is_moe else [1]
    by_devices: dict[int, list[P.Layout]] = {}
    for tp, pp, dp, ep in itertools.product(tps, pps, dps, eps):
        devices = tp * pp * dp * base.cp
        if devices > max_devices or dp % ep:
            continue
        sp_on = base.sequence_parallel or (spec.is_moe and tp > 1)  # Megatron needs SP for MoE with TP
        lay = _with_batch(replace(base, tp=tp, pp=pp, dp=dp, ep=ep, sequence_parallel=sp_on and tp > 1), fixed_global)
        by_devices.setdefault(devices, []).append(lay)
    tried = 0
    for devices in sorted(by_devices):
        rows = []
        for lay in by_devices[devices]:
            row = evaluate(spec, values, lay, acc, cluster, mfu, timed=False)
            tried += 1
            if row.get("fits"):
                rows.append((lay, row))
        if rows:
            timed = [evaluate(spec, values, lay, acc, cluster, mfu) for lay, _ in rows]
            timed.sort(key=lambda r: r["step_seconds"])
            return {"devices": devices, "layouts": timed, "tried": tried}
    raise InputError(
        f"no layout of at most {max_devices:,} devices fits {acc.name}'s {acc.memory:,} bytes "
        f"({tried:,} tried); raise --max-devices, recompute, or shard more (--zero, --distributed-optimizer)"
    )
