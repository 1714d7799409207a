"""``symtrans train MODEL``: memory, communication and step time per device of a training
layout (tensor, pipeline with interleaving, data with ZeRO or the distributed optimizer,
expert and context parallelism, sequence parallelism).

The figures come from ``accounting.parallel`` (memory) and ``accounting.parallel_time``
(collectives, step time); this module parses the options, builds the JSON (every figure)
and prints the text.  Bad layouts are one line on stderr and exit status 2.
"""

from __future__ import annotations

import json

from symtrans.cli.arguments import int_arg, size_arg

DEFAULT_TOKENS = None


def add_train_parser(sub, common, emit, usage_error) -> None:
    """Register ``train`` on the subcommand parser ``sub``."""
    p = sub.add_parser("train", help="training at scale: memory, communication and step time per device")
    common(p, ("text", "json"), "text")
    for flag, what in (
        ("--tp", "tensor-parallel size"),
        ("--pp", "pipeline-parallel stages"),
        ("--vpp", "model chunks per device (interleaved schedule; 1 = plain 1F1B)"),
        ("--dp", "data-parallel size"),
        ("--ep", "expert-parallel size (carved out of dp x cp)"),
        ("--cp", "context-parallel size"),
    ):
        p.add_argument(flag, type=int_arg(flag), default=1, metavar="N", help=f"{what} (default 1)")
    p.add_argument("--devices", type=int_arg("--devices"), default=None, metavar="N", help="check dp x tp x pp x cp")
    p.add_argument("--sequence-parallel", action="store_true", help="Megatron sequence parallelism (with --tp)")
    p.add_argument("--zero", type=int_arg("--zero", 0), default=0, metavar="STAGE", help="ZeRO stage 0-3 over dp x cp")
    p.add_argument(
        "--distributed-optimizer",
        action="store_true",
        help="Megatron's distributed optimizer: master weights and states sharded over dp x cp",
    )
    p.add_argument("--micro-batch", type=size_arg("--micro-batch"), default=1, metavar="b")
    p.add_argument(
        "--global-batch", type=size_arg("--global-batch"), default=None, metavar="B", help="default micro-batch x dp"
    )
    p.add_argument("--seq-len", type=size_arg("--seq-len"), default=None, metavar="s", help="default: the model's L")
    p.add_argument("--recompute", default="none", choices=("none", "selective", "full"))
    p.add_argument(
        "--recompute-layers",
        type=int_arg("--recompute-layers", 0),
        default=None,
        metavar="K",
        help="under --recompute full: layers per stage recomputed (default all)",
    )
    p.add_argument("--grad-dtype", default="bf16", choices=("bf16", "fp32"))
    p.add_argument("--optimizer", default="adamw", choices=("adamw", "adam8bit", "sgd", "adafactor", "muon"))
    p.add_argument("--fp8", action="store_true", help="TransformerEngine FP8: weight copies, amax history, fp8 peak")
    p.add_argument("--no-dropout", action="store_true", help="no dropout masks among the saved activations")
    p.add_argument("--accelerator", default="h100-sxm", metavar="NAME", help="device (default h100-sxm)")
    p.add_argument(
        "--cluster",
        default="dgx-h100",
        metavar="NAME|gpus_per_node=N,intra=B/s,inter=B/s",
        help="node size and bandwidths: dgx-h100 (default), dgx-a100, or custom",
    )
    p.add_argument("--mfu", default="0.4", metavar="U", help="utilisation of the busy time (default 0.4)")
    p.add_argument("--tokens", type=int_arg("--tokens"), default=None, metavar="D", help="training tokens: run time")
    p.add_argument(
        "--compare",
        action="store_true",
        help="beside DeepSpeed's estimate_zero2/3 and Megatron-LM's theoretical_memory_usage, differences named",
    )
    p.add_argument(
        "--sweep",
        default=None,
        metavar='"tp=1,2,4 pp=1,2 ..."',
        help="evaluate every combination of these axes (tp, pp, vpp, dp, ep, cp, micro_batch); refused ones say why",
    )
    p.add_argument(
        "--solve",
        action="store_true",
        help="the smallest tp x pp x dp (x ep) whose busiest device fits the accelerator, fastest first",
    )
    p.add_argument("--max-devices", type=int_arg("--max-devices"), default=4096, metavar="N", help="for --solve")
    p.set_defaults(func=lambda args: cmd_train(args, emit))


def layout_from_args(args, spec):
    from symtrans.accounting.parallel import Layout
    from symtrans.base.errors import InputError

    seq = args.seq_len or spec.values.get("L")
    if seq is None:
        raise InputError("give --seq-len (the model has no L)")
    gb = args.global_batch if args.global_batch is not None else args.micro_batch * args.dp
    return Layout(
        tp=args.tp,
        pp=args.pp,
        vpp=args.vpp,
        dp=args.dp,
        ep=args.ep,
        cp=args.cp,
        sequence_parallel=args.sequence_parallel,
        zero=args.zero,
        distributed_optimizer=args.distributed_optimizer,
        micro_batch=args.micro_batch,
        global_batch=gb,
        seq_len=seq,
        recompute=args.recompute,
        recompute_layers=args.recompute_layers,
        grad_dtype=args.grad_dtype,
        optimizer=args.optimizer,
        fp8=args.fp8,
        dropout=not args.no_dropout,
    )


def _num(v):
    return int(v) if v.is_Integer else float(v)


def train_result(res, lay, acc, cluster, mfu, tokens=None, devices=None, compare=False) -> dict:
    """The JSON object of ``symtrans train`` (every figure, with closed forms and sources)."""
    import sympy as sp

    from symtrans.accounting import parallel as P
    from symtrans.accounting import parallel_time as PT

    spec, values = res.spec, res.spec.values
    P.check_layout(spec, values, lay, devices)
    stages = P.memory(spec, values, lay)
    colls = PT.collectives(spec, values, lay, stages[0].params)
    t = PT.step_time(spec, values, lay, colls, acc, cluster, mfu)
    out = {
        "model": res.name,
        "layout": {
            "tp": lay.tp,
            "pp": lay.pp,
            "vpp": lay.vpp,
            "dp": lay.dp,
            "ep": lay.ep,
            "cp": lay.cp,
            "devices": lay.devices,
            "sequence_parallel": lay.sequence_parallel,
            "zero": lay.zero,
            "distributed_optimizer": lay.distributed_optimizer,
            "micro_batch": lay.micro_batch,
            "global_batch": lay.global_batch,
            "micro_batches_per_step": lay.micro_batches,
            "seq_len": lay.seq_len,
            "recompute": lay.recompute,
            "recompute_layers": lay.recompute_layers,
            "grad_dtype": lay.grad_dtype,
            "optimizer": lay.optimizer,
            "fp8": lay.fp8,
            "dropout": lay.dropout,
        },
        "memory": [],
        "communication": [],
        "time": {},
    }
    for st in stages:
        p = st.params
        out["memory"].append(
            {
                "stage": st.stage if lay.pp > 1 else "only",
                "parameters": {
                    "dense": _num(P.evaluate(p.dense, values)),
                    "experts": _num(P.evaluate(p.experts, values)),
                    "total": _num(P.evaluate(p.total, values)),
                    "dense_closed_form": str(p.dense),
                    "experts_closed_form": str(p.experts),
                },
                "terms": [term.json() for term in st.terms],
                # micro-batches in flight, in units of one stage's L/p layers (Rational under interleaving)
                "in_flight_micro_batches": str(P.in_flight(lay, st.stage)[0]),
                "expert_weights_bytes": _num(
                    P.evaluate(2 * p.experts / (sp.Rational(lay.dp * lay.cp, lay.ep) if lay.zero >= 3 else 1), values)
                ),
                "total_bytes": _num(st.total),
                "fits": bool(st.total <= acc.memory) if acc.memory else None,
                "device_memory_bytes": acc.memory,
                "notes": p.notes,
            }
        )
    for c, secs in zip(colls, t.per_collective):
        out["communication"].append(c.json(values, secs))
    out["communication_bytes_per_step"] = _num(sp.Add(*[c.bytes(values) for c in colls]))
    out["time"] = {
        "accelerator": acc.name,
        "peak_flops": t.peak,
        "mfu": str(mfu),
        "cluster": {
            "name": cluster.name,
            "gpus_per_node": cluster.gpus_per_node,
            "intra": cluster.intra,
            "inter": cluster.inter,
        },
        "training_flops_per_step": t.flops_hw,
        "model_flops_per_step": t.flops_model,
        "busy_seconds": float(t.busy),
        "bubble_seconds": float(t.bubble),
        "bubble_fraction": float(t.bubble_fraction),
        "bubble_fraction_exact": str(t.bubble_fraction),
        "exposed_communication_seconds": float(t.exposed),
        "overlapped_communication_seconds": float(t.overlapped),
        "step_seconds": float(t.step),
        "tokens_per_step": lay.global_batch * lay.seq_len,
        "tokens_per_second": float(t.tokens_per_second),
        "achieved_mfu": float(sp.Rational(t.flops_model) / (t.step * lay.devices * t.peak)),
        "assumptions": t.assumptions,
    }
    if compare:
        from symtrans.accounting import parallel_refs as R

        first = stages[0]
        named = {term.name: term.value for term in first.terms}
        states = sp.Add(*[v for k, v in named.items() if not k.startswith("activations") and not k.startswith("fp8")])
        acts = sp.Add(*[v for k, v in named.items() if k.startswith("activations")])
        refs = [
            R.deepspeed(spec, values, lay, states),
            R.megatron(spec, values, lay, states - named.get("ZeRO-3 gathered working set", 0), acts),
        ]
        out["references"] = [x for x in refs if x is not None]
    if tokens is not None:
        secs = sp.Rational(tokens) / t.tokens_per_second
        out["time"]["training_tokens"] = tokens
        out["time"]["time_to_train_seconds"] = float(secs)
        out["time"]["time_to_train_days"] = float(secs / 86400)
    return out


def cmd_train(args, emit) -> int:
    from symtrans.accounting.hardware import parse_accelerator, parse_utilisation
    from symtrans.accounting.parallel_time import parse_cluster
    from symtrans.catalog.resolve import seq_len_warning
    from symtrans.cli.common import UsageError, _resolve, _warn, flops_values

    res = _resolve(args)
    lay = layout_from_args(args, res.spec)
    # past a learned position table the model cannot run: warn as flops does, in its words
    w = seq_len_warning(res.spec, flops_values(res, 1, lay.seq_len))
    if w:
        _warn(args, w)
    acc = parse_accelerator(args.accelerator)
    if args.fp8 and acc.fp8 is None:
        raise UsageError(f"symtrans train: --fp8 needs fp8 tensor units; {acc.name} has none")
    cluster = parse_cluster(args.cluster)
    mfu = parse_utilisation(args.mfu)
    if args.sweep is not None or args.solve:
        return _search(args, emit, res, lay, acc, cluster, mfu)
    r = train_result(res, lay, acc, cluster, mfu, args.tokens, args.devices, args.compare)
    if args.format == "json":
        emit(args, json.dumps(r, indent=2))
        return 0
    emit(args, "\n".join(text_lines(r)))
    return 0


def _b(x) -> str:
    from symtrans.base.numbers import binary_bytes

    return f"{x:>20,}  {binary_bytes(x):>11}" if isinstance(x, int) else f"{x:>20,.1f}  {binary_bytes(x):>11}"


def text_lines(r: dict) -> list[str]:
    from symtrans.base.numbers import count

    lay = r["layout"]
    head = (
        f"{r['model']}: training on {lay['devices']} devices: tp {lay['tp']} x pp {lay['pp']}"
        + (f" (interleaved, v {lay['vpp']})" if lay["vpp"] > 1 else "")
        + f" x dp {lay['dp']} x cp {lay['cp']}"
        + (f", ep {lay['ep']}" if lay["ep"] > 1 else "")
        + (", SP" if lay["sequence_parallel"] else "")
        + (f", ZeRO-{lay['zero']}" if lay["zero"] else "")
        + (", distributed optimizer" if lay["distributed_optimizer"] else "")
    )
    lines = [
        head,
        f"  batch: micro {lay['micro_batch']} x {lay['micro_batches_per_step']} micro-batches x dp {lay['dp']} = "
        f"global {lay['global_batch']} sequences of {lay['seq_len']:,} tokens; recompute {lay['recompute']}; "
        f"{lay['optimizer']}, {lay['grad_dtype']} gradients" + (", fp8" if lay["fp8"] else ""),
    ]
    for m in r["memory"]:
        lines.append(
            f"  memory per device, {m['stage']} stage ({count(m['parameters']['total'])} parameters held"
            + (f", {count(m['parameters']['experts'])} of them expert shards" if m["parameters"]["experts"] else "")
            + "):"
        )
        for t in m["terms"]:
            lines.append(f"    {t['name']:<38} {_b(t['value'])}")
        if m["parameters"]["experts"]:
            lines.append(f"      {'of the weights, expert shards':<36} {_b(m['expert_weights_bytes'])}")
        lines.append(f"      micro-batches in flight: {m['in_flight_micro_batches']} (in units of the stage's layers)")
        fits = "" if m["fits"] is None else ("  fits" if m["fits"] else "  DOES NOT FIT")
        lines.append(f"    {'total':<38} {_b(m['total_bytes'])}{fits} (device {m['device_memory_bytes'] or 0:,} bytes)")
        for n in m["notes"]:
            lines.append(f"    note: {n}")
    lines.append("  communication per step, one device of the first stage (ring factor per rank):")
    for c in r["communication"]:
        lines.append(
            f"    {c['axis']:<12} {c['collective']:<15} n={c['group']:<5} {c['per_step']:>6} x "
            f"{c['buffer_bytes']:>16,} B x {c['ring_factor']:<7} = {_b(c['bytes_per_step'])}  "
            f"{c['seconds'] * 1e3:9.2f} ms{'' if c['exposed'] else ' (overlapped)'}"
        )
    t = r["time"]
    lines += [
        f"  time per step on {t['accelerator']} at MFU {t['mfu']} (busy time):",
        f"    busy {t['busy_seconds']:.3f} s + bubble {t['bubble_seconds']:.3f} s "
        f"({t['bubble_fraction'] * 100:.2f}% = {t['bubble_fraction_exact']}) + exposed communication "
        f"{t['exposed_communication_seconds']:.3f} s = {t['step_seconds']:.3f} s",
        f"    {t['tokens_per_second']:,.0f} tokens/s; achieved MFU {t['achieved_mfu'] * 100:.1f}%",
    ]
    if "time_to_train_days" in t:
        lines.append(f"    {t['training_tokens']:,} tokens: {t['time_to_train_days']:,.2f} days")
    for ref in r.get("references", []):
        if "value" in ref:
            lines.append(
                f"  {ref['reference']} ({ref['source']}): {ref['formula']} = {ref['value']:,} bytes of model states; "
                f"symtrans {ref['symtrans']:,}; difference {ref['difference']:,}: {ref['named']}"
            )
        else:
            lines.append(
                f"  {ref['reference']} ({ref['source']}), first stage: weights and optimizer "
                f"{ref['weights_and_optimizer']:,.0f} (symtrans {ref['symtrans_weights_and_optimizer']:,.0f}), "
                f"activations {ref['activations']:,.0f} (symtrans {ref['symtrans_activations']:,.0f}): {ref['named']}"
            )
    for a in t["assumptions"]:
        lines.append(f"  assumption: {a}")
    return lines


def with_train_section(model: str, settings: list[str], options: str, res):
    """``res`` with a "Training plan" report section for ``report MODEL --train "OPTIONS"``:
    OPTIONS are ``symtrans train``'s (``--tp 8 --pp 2 ...``), split as a shell would
    (``shlex``, never evaluated) and parsed by the same parser.

    Raises:
        UsageError: an option ``train`` does not take (one line); InputError: a bad layout.
    """
    import argparse
    import shlex
    from dataclasses import replace

    from symtrans.accounting.hardware import parse_accelerator, parse_utilisation
    from symtrans.accounting.parallel_time import parse_cluster
    from symtrans.cli.common import UsageError, _common, _Parser
    from symtrans.render.train_section import report_section

    try:
        words = shlex.split(options)
    except ValueError as e:
        raise UsageError(f"symtrans report: --train {options!r}: {e}") from None
    parser = _Parser(prog="symtrans report --train")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    add_train_parser(sub, _common, None, UsageError)
    extra = [w for s in settings for w in ("--set", s)]
    args = parser.parse_args(["train", model, *extra, *words])
    if args.format != "text" or args.output:
        raise UsageError("symtrans report: --train takes the layout options of train, not --format or -o")
    if not isinstance(args, argparse.Namespace):  # pragma: no cover - argparse always returns one
        raise UsageError("symtrans report: --train could not be read")
    lay = layout_from_args(args, res.spec)
    acc = parse_accelerator(args.accelerator)
    if args.fp8 and acc.fp8 is None:
        raise UsageError(f"symtrans report: --fp8 needs fp8 tensor units; {acc.name} has none")
    r = train_result(res, lay, acc, parse_cluster(args.cluster), parse_utilisation(args.mfu), args.tokens, args.devices)
    return replace(res, sections=res.sections + (report_section(r),))


def _search(args, emit, res, lay, acc, cluster, mfu) -> int:
    """``--sweep`` and ``--solve``: rows of layouts (analysis.parallel_search)."""
    from symtrans.analysis import parallel_search as PS
    from symtrans.cli.common import UsageError

    if args.sweep is not None and args.solve:
        raise UsageError("symtrans train: give --sweep or --solve, not both")
    fixed = args.global_batch is not None
    spec, values = res.spec, res.spec.values
    if args.solve:
        found = PS.solve(spec, values, lay, acc, cluster, mfu, fixed, args.max_devices)
        out = {"model": res.name, "accelerator": acc.name, "device_memory_bytes": acc.memory, **found}
        rows = found["layouts"]
        head = (
            f"{res.name}: the smallest layout that fits {acc.name} ({acc.memory:,} bytes): {found['devices']} devices "
            f"({len(rows)} layout(s) of that size fit, fastest first; {found['tried']:,} evaluated)"
        )
    else:
        rows = PS.sweep(spec, values, lay, PS.parse_axes(args.sweep), acc, cluster, mfu, fixed)
        out = {"model": res.name, "accelerator": acc.name, "device_memory_bytes": acc.memory, "rows": rows}
        head = f"{res.name}: {len(rows)} layouts on {acc.name} ({acc.memory or '-'} bytes per device)"
    if args.format == "json":
        emit(args, json.dumps(out, indent=2))
        return 0
    from symtrans.base.numbers import binary_bytes

    lines = [head, "     tp   pp  vpp    dp   ep   cp   mb  devices  busiest device              step s    tokens/s"]
    for r in rows:
        sizes = (
            f"  {r['tp']:>5}{r['pp']:>5}{r['vpp']:>5}{r['dp']:>6}{r['ep']:>5}{r['cp']:>5}{r['micro_batch']:>5}"
            f"{r['devices']:>9}"
        )
        if "refused" in r:
            lines.append(f"{sizes}  refused: {r['refused']}")
            continue
        fit = "fits" if r["fits"] else "DOES NOT FIT"
        lines.append(
            f"{sizes}  {binary_bytes(r['busiest_bytes']):>11} {r['busiest_stage']:<5} {fit:<12}"
            f"{r['step_seconds']:>9.3f} {r['tokens_per_second']:>11,.0f}"
        )
    emit(args, "\n".join(lines))
    return 0
