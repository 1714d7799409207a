"""Fill the per-user plan cache (``numbers``) for every preset ahead of time (optional:
the first run that needs a plan caches it)::

    python -m symtrans.cli.warm

Moved out of ``plans`` (issue 20, Build 7): it parses ``memory``'s defaults with the
command's own parser (``main.build_parser``), and ``main`` reaches ``plans``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from symtrans.cli import numbers as NB
from symtrans.cli import plans
from symtrans.cli.common import flops_values
from symtrans.cli.main import build_parser

# Generated into the package before the disk cache held presets too; no longer read.
OLD_DATA_PATH = Path(__file__).resolve().parent / "_numbers_data.py"


# ---------------------------------------------------------------------------------
# the presets' plans


def preset_queries(preset) -> list[tuple]:
    """The queries shipped for a preset: ``params``, and ``flops`` and ``memory`` with
    their default options at the preset's own workload (B = 1, L of the preset)."""
    from symtrans.accounting.quantization import weight_format
    from symtrans.catalog.resolve import resolve

    res = resolve(preset.name)
    out = [NB.params_query()]
    if preset.spec.family == "encoder-decoder" and "L" not in res.spec.values:
        return out  # no default sequence length: flops and memory need --seq-len
    if "L" not in res.spec.values:
        return out
    out.append(NB.flops_query("forward", "flops", "full", "none"))
    args = build_parser().parse_args(["memory", preset.name])
    v = flops_values(res, args.batch, args.seq_len)
    seq = v["L_tgt"] if res.spec.family == "encoder-decoder" else v["L"]
    src = v["L_src"] if res.spec.family == "encoder-decoder" else None
    fmt, _ = weight_format(res.checkpoint, args.dtype, "none")  # memory's default: training, unquantized
    out.append(NB.memory_query(args, fmt, args.batch, seq, src))
    return out


def warm(presets=None) -> int:
    """Build and cache (``numbers.store``) the plans of ``preset_queries`` for every preset
    (or ``presets``) whose plan is not cached yet; returns how many were built."""
    from symtrans.catalog.presets import PRESETS

    built = 0
    for p in presets if presets is not None else PRESETS.values():
        for q in preset_queries(p):
            if NB.lookup(p.spec, q) is not None:
                continue
            try:
                data = plans.build(p.spec, q).data()
            except ValueError:
                continue  # not expressible as trees: answered with SymPy
            NB.store(NB.plan_key(p.spec, q), data)
            built += 1
    return built


def main(argv: list[str] | None = None) -> int:
    """Fill the per-user cache for every preset; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m symtrans.cli.warm", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="accepted for old scripts: nothing can be stale")
    args = parser.parse_args(argv)
    if OLD_DATA_PATH.exists():
        print(
            f"note: {OLD_DATA_PATH} is no longer read (plans are cached per user on first use); delete it",
            file=sys.stderr,
        )
    if args.check:
        print("nothing to regenerate: plans are rebuilt automatically when the closed forms' sources change")
        return 0
    n = warm()
    print(f"cached {n} plans in {NB.cache_dir()} (nothing is written into the package)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
