"""Commands that analyse the closed forms: solve, plan, sweep, diff, identities, plot.

One function per command; ``add_analysis_parsers`` registers them on the ``symtrans``
parser (``cli.build_parser``).  Nothing heavy is imported at module level: NumPy,
matplotlib and the analysis modules load inside the commands.  Bad input raises
``ValueError`` (one line on stderr, exit 2, via ``cli.main``); output files are
written atomically, after everything has been computed, so a failed run never leaves
partial output over an existing file.
"""

from __future__ import annotations

import argparse
import json

from symtrans.base.errors import InputError
from symtrans.cli.arguments import bytes_arg, format_arg, int_arg

_bytes = bytes_arg("--memory")  # 85899345920, 16e9, 80GB, 1.5GiB: the one byte parser


def _rules(args) -> list:
    from symtrans.analysis.solve import keep_rule, llama_rule

    rules = [keep_rule(t) for t in args.keep]
    if args.llama_ffn:
        rules.append(llama_rule(args.ffn_multiple_of, args.ffn_dim_multiplier))
    return rules


def _add_rule_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--keep",
        action="append",
        default=[],
        metavar="NAME=EXPR",
        help="tie a size to others, e.g. d_ff=4*d_model or h=d_model/128 (numbers, size names, "
        "+ - * / ** and parentheses only; parsed, never evaluated); repeatable",
    )
    p.add_argument(
        "--llama-ffn",
        action="store_true",
        help="d_ff by Llama's rule: 2/3 of 4*d_model, times --ffn-dim-multiplier, rounded up to "
        "--ffn-multiple-of (Meta's llama model.py)",
    )
    p.add_argument(
        "--ffn-multiple-of",
        type=int_arg("--ffn-multiple-of"),
        default=256,
        metavar="M",
        help="Llama's multiple_of (default 256; Llama-2-70B and Llama 3 use 4096 and 1024)",
    )
    p.add_argument(
        "--ffn-dim-multiplier",
        type=float,
        default=None,
        metavar="X",
        help="Llama's ffn_dim_multiplier (1.3 for Llama-2-70B and Llama 3)",
    )


def _notes_to_stderr(args, notes) -> None:
    """Queue notes for stderr: ``cli.main`` prints them after the output is committed,
    and drops them when the command fails (whose one line is then its error)."""
    args.__dict__.setdefault("_warnings", []).extend(f"symtrans: note: {n}" for n in notes)


# ---------------------------------------------------------------------------------
# solve and plan


def _plan_lines(plan) -> list[str]:
    from symtrans.base.numbers import count, grouped

    d = plan.to_dict()
    return [
        f"compute-optimal split of C = {grouped(plan.compute)} FLOPs at {plan.tokens_per_param} tokens per parameter:",
        f"  parameters = sqrt(C / (6 * {plan.tokens_per_param})) = {d['params']} ~ {grouped(d['params_rounded'])} "
        f"({count(d['params_rounded'])})",
        f"  tokens D = {plan.tokens_per_param} x parameters ~ {grouped(d['tokens_rounded'])} ({count(d['tokens_rounded'])})",
        f"  source: {plan.source}",
        *[f"  caveat: {c}" for c in plan.caveats],
    ]


def _cmd_plan(args, emit) -> int:
    from symtrans.analysis.solve import chinchilla

    plan = chinchilla(args.compute, args.tokens_per_param)
    if args.format == "json":
        emit(args, json.dumps(plan.to_dict(), indent=2))
    else:
        emit(args, "\n".join(_plan_lines(plan)))
    return 0


def _cmd_solve(args, emit) -> int:
    from symtrans.analysis.solve import chinchilla, solve
    from symtrans.base.numbers import grouped
    from symtrans.catalog.resolve import resolve

    budgets = [
        (q, v)
        for q, v in (
            ("params", args.params),
            ("active_params", args.active_params),
            ("flops", args.flops),
            ("training_flops", args.training_flops),
            ("memory", args.memory),
            ("compute", args.compute),
        )
        if v is not None
    ]
    if len(budgets) != 1:
        raise InputError(
            "give exactly one budget: --params, --active-params, --flops, --training-flops, --memory or --compute"
        )
    quantity, target = budgets[0]
    res = resolve(args.model, args.set)
    plan = None
    if quantity == "compute":
        plan = chinchilla(target, args.tokens_per_param)
        quantity, target = "params", plan.to_dict()["params_rounded"]
    workload = {"B": args.batch}
    if args.seq_len is not None:
        workload["L"] = args.seq_len
    memory_options = {"mode": args.memory_mode, "dtype": args.dtype} if quantity == "memory" else None
    r = solve(
        res.spec,
        args.unknown,
        target,
        quantity,
        rules=_rules(args),
        multiple_of=args.multiple_of,
        workload=workload,
        mask=args.mask,
        convention=args.convention,
        memory_options=memory_options,
    )
    if r.context is not None:  # the answer passes the model's maximum positions (issue 25.2)
        from symtrans.analysis.solve import context_warning
        from symtrans.cli.common import _warn

        _warn(args, context_warning(r.unknown, r.below.value, r.context[0], r.context[1]))
    if args.format == "json":
        out = r.to_dict()
        out["model"] = res.name
        if plan is not None:
            out["plan"] = plan.to_dict()
        from symtrans.cli.common import with_symbols

        emit(args, json.dumps(with_symbols(out), indent=2))
        return 0
    import sympy as sp

    lines = _plan_lines(plan) if plan is not None else []
    lines += [
        f"{res.name}: solve for {r.unknown} with {r.quantity} = {grouped(r.target)} {r.unit}",
        f"  closed form: {sp.sstr(r.closed_form)}",
    ]
    lines += [f"  rule: {t}" for t in r.rules]
    lines.append(f"  equation (relaxed): {sp.sstr(r.equation.lhs)} = {sp.sstr(r.equation.rhs)}")
    for s in r.solutions:
        lines.append(f"  symbolic solution: {r.unknown} = {sp.sstr(s)}")
    if r.root_located is not None:  # exact: the rational value, or the integers around the root
        t = r.root_located.text()
        lines.append(f"  real root: {r.unknown} {'= ' + t if t[0].isdigit() else 'is ' + t}")
    if r.exact is not None:
        lines.append(f"  exact: {r.unknown} = {r.exact} gives exactly {grouped(r.target)} {r.unit}")
    lines.append(f"  valid {r.unknown}: multiples of {r.step} that satisfy the rules and the model's constraints")
    for label, c in (("below", r.below), ("above", r.above)):
        if c is not None and (r.exact is None or label == "below"):
            diff = c.count - r.target
            sizes = ", ".join(f"{k}={v}" for k, v in c.sizes.items())
            lines.append(
                f"  nearest {label}: {r.unknown} = {c.value}: {grouped(c.count)} {r.unit} "
                f"({'+' if diff >= 0 else '-'}{grouped(abs(diff))}); {sizes}"
            )
    if r.context is not None and r.context[2] is not None:
        limit, _, at = r.context
        lines.append(
            f"  within the context: {r.unknown} = {limit:,}: {grouped(at.count)} {r.unit} "
            f"({grouped(r.target - at.count)} under the budget)"
        )
    lines += [f"  note: {n}" for n in r.notes]
    emit(args, "\n".join(lines))
    return 0


# ---------------------------------------------------------------------------------
# sweep


def _cmd_sweep(args, emit) -> int:
    """``symtrans sweep``: the grid or the CSV file streams through the sweep batch by
    batch (``sweep.Sweeper``, ``sweep.stream``), so memory stays flat in the number of
    rows (a CSV file is read whole: a regular file of at most ``sweep.MAX_CSV_BYTES``);
    the output streams into the command's output transaction (``emit`` with a writer:
    ``atomic.Transaction.stream``, a temporary file renamed over -o or copied to standard
    output only once every row is computed), so a failure prints one error and nothing else."""
    from symtrans.analysis.sweep import Sweeper, csv_file_batches, grid_batches, parse_grid, stream
    from symtrans.catalog.resolve import resolve

    if args.grid and args.csv:
        raise InputError("give the configurations with --grid NAME=... (repeatable) or with --csv FILE, not both")
    if not args.grid and not args.csv:
        raise InputError("give the configurations with --grid NAME=... (repeatable) or with --csv FILE")
    res = resolve(args.model, args.set)
    defaults = {"B": args.batch}
    if args.seq_len is not None:
        defaults["L"] = args.seq_len
    quantities = None
    if args.quantity:
        quantities = [q.strip().replace("-", "_") for q in args.quantity.split(",") if q.strip()]
    invalid = "error" if (args.strict or args.csv) else "skip"
    memory_options = {"mode": args.memory_mode, "dtype": args.dtype}
    progress = None if args.progress == "auto" else args.progress == "on"
    if args.csv:
        names, batches = csv_file_batches(args.csv)  # a regular file, size-capped, UTF-8 or UTF-16
        total = None
    else:
        axes = [parse_grid(g) for g in args.grid]
        total, batches = grid_batches(axes)
        names = [a for a, _ in axes]
    sweeper = Sweeper(
        res.spec,
        names,
        quantities,
        rules=_rules(args),
        defaults=defaults,
        mask=args.mask,
        convention=args.convention,
        memory_options=memory_options,
        invalid=invalid,
    )
    fmt = "json" if args.format == "json" else "csv"
    notes: list[str] = []
    # a streamed output: written into the output transaction's temporary file, committed
    # by cli.main after the command
    emit(args, lambda out: notes.extend(stream(sweeper, batches, out, fmt, res.name, total, progress)))
    _notes_to_stderr(args, notes)
    return 0


# ---------------------------------------------------------------------------------
# diff


def _cmd_diff(args, emit) -> int:
    from symtrans.analysis.diff import diff, parse_side

    b_text = args.b if args.b is not None else args.a
    common = {"convention": args.convention, "mask": args.mask, "mode": args.mode}
    a = parse_side(args.a, args.set_a, **{**common, **_pick(args, "a")})
    b = parse_side(b_text, args.set_b, **{**common, **_pick(args, "b")})
    workload = {"B": args.batch}
    if args.seq_len is not None:
        workload["L"] = args.seq_len
    quantity = args.quantity.replace("-", "_")
    flops_only = [
        f"--{k.replace('_', '-')}"
        for k in ("mask_a", "mask_b", "convention_a", "convention_b", "mode_a", "mode_b")
        if getattr(args, k) is not None
    ]
    flops_only += [
        f"--{k}" for k, d in (("mask", "full"), ("convention", "flops"), ("mode", "forward")) if getattr(args, k) != d
    ]
    if quantity != "flops" and flops_only:  # they change FLOPs only: with params they would do nothing
        raise InputError(f"{flops_only[0]} applies to --quantity flops, not {args.quantity}")
    if quantity == "flops":
        for s in (a, b):
            if "L" not in s.spec.values and "L" not in workload:
                raise InputError("FLOPs need a sequence length: give --seq-len")
    r = diff(a, b, quantity, workload if quantity == "flops" else {})
    if args.format == "json":
        emit(args, json.dumps(r.to_dict(), indent=2))
    elif args.format == "markdown":
        emit(args, r.markdown())
    else:
        emit(args, r.text())
    return 0


def _pick(args, side: str) -> dict:
    return {
        k: getattr(args, f"{k}_{side}")
        for k in ("convention", "mask", "mode")
        if getattr(args, f"{k}_{side}") is not None
    }


# ---------------------------------------------------------------------------------
# identities


def _cmd_identities(args, emit) -> int:
    import sympy as sp

    from symtrans.accounting.formulas import NAMES, get

    names = args.names or list(NAMES)
    items = [get(n) for n in names]
    if args.format == "json":
        out = [
            {
                "name": i.name,
                "title": i.title,
                "lhs": sp.sstr(i.lhs),
                "rhs": sp.sstr(i.rhs),
                "residual": sp.sstr(i.residual()),
                "holds": i.holds(),
                "assumptions": i.assumptions,
                "source": i.source,
                "note": i.note,
            }
            for i in items
        ]
        emit(args, json.dumps(out, indent=2))
    elif args.format == "markdown":
        emit(args, "\n".join(i.markdown() for i in items))
    elif args.format == "latex":
        emit(args, "\n".join(f"% {i.name}\n\\[ {i.latex()} \\]" for i in items))
    else:
        lines = []
        for i in items:
            status = "holds (residual 0)" if i.holds() else f"DOES NOT HOLD: residual {sp.sstr(i.residual())}"
            lines += [
                f"{i.name}: {i.title}",
                f"  {sp.sstr(i.rhs)}  -- {status}",
                f"  assumptions: {i.assumptions}",
                f"  source: {i.source}",
            ]
            if i.note:
                lines.append(f"  note: {i.note}")
        emit(args, "\n".join(lines))
    return 0


# ---------------------------------------------------------------------------------
# plot


def _flat_line_hint(args, res) -> None:
    """Warn when the parameters do not depend on the x axis (a rotary model over L): the
    line is flat, and FLOPs are what grow with it (issue 25.17)."""
    if args.quantity != "params":
        return
    from symtrans.cli.common import _warn
    from symtrans.engine.architectures import build
    from symtrans.engine.symbols import SYMBOLS

    x = SYMBOLS.get(args.over)
    if x is not None and x not in build(res.spec).params.free_symbols:
        why = ""
        if args.over == "L":
            why = (
                " (a position table's rows are L_max, not the workload's L)"
                if res.spec.positional in ("learned", "sinusoidal-table")
                else f" ({res.spec.positional} positions have no parameters)"
            )
        _warn(
            args,
            f"the parameters of {res.name} do not depend on {args.over}{why}: the line is flat; "
            f"--quantity flops shows how the cost grows with {args.over}",
        )


def _cmd_plot(args, emit, usage_error) -> int:
    import os

    from symtrans.catalog.resolve import resolve
    from symtrans.render.plots import FORMATS, PlotsUnavailable, component_shares, scaling, to_bytes

    ext = os.path.splitext(args.output)[1].lstrip(".").lower()
    if ext not in FORMATS:
        raise InputError(f"the chart file must end in .{', .'.join(FORMATS)}, not {args.output!r}")
    res = resolve(args.model, args.set)
    try:
        if args.kind == "shares":
            fig = component_shares(res.spec, res.name, args.batch, args.seq_len, args.mask)
        else:
            _flat_line_hint(args, res)
            fig = scaling(
                res.spec,
                args.over,
                args.quantity,
                res.name,
                mark_presets=not args.no_presets,
                batch=args.batch,
                seq_len=args.seq_len,
            )
    except PlotsUnavailable as e:
        raise usage_error(f"symtrans plot: {e}") from None
    emit(args, to_bytes(fig, ext))  # the command's output transaction (cli.common._emit)
    return 0


# ---------------------------------------------------------------------------------
# registration


def add_analysis_parsers(sub, common, workload, emit, usage_error) -> None:
    """Register solve, plan, sweep, diff, identities and plot on the subparsers ``sub``.

    ``common``/``workload`` add the shared MODEL/--set/--format/-o and --batch/--seq-len
    options (``cli._common``, ``cli._workload``); ``emit`` prints or writes atomically;
    ``usage_error`` is the CLI's one-line error class.
    """
    from symtrans.engine.conventions import CONVENTIONS, MASK_MODES

    def counting(p, suffix: str = "") -> None:
        p.add_argument(
            f"--convention{suffix}",
            choices=tuple(CONVENTIONS),
            default=None if suffix else "flops",
            help="FLOP convention" + (f" of side {suffix[-1].upper()}" if suffix else " (default flops)"),
        )
        p.add_argument(
            f"--mask{suffix}",
            choices=tuple(MASK_MODES),
            default=None if suffix else "full",
            help="how causal attention scores count: full square, exact triangle, half"
            + (f" (side {suffix[-1].upper()})" if suffix else " (default full)"),
        )

    p = sub.add_parser(
        "solve",
        help="solve a closed form for a size under a budget (parameters, FLOPs, memory, compute)",
        description="Solve for one size (--for) so that the model meets a budget: the symbolic solution, the real "
        "root and the nearest valid integer configurations on both sides, with exact counts.",
        epilog="examples: symtrans solve llama-2-7b --for d_model --params 6738415616 --llama-ffn | "
        "symtrans solve gpt2 --for d_model --params 1.5e9 --keep d_ff=4*d_model | "
        "symtrans solve gpt2 --for N --params 7e9 | "
        "symtrans solve llama-2-7b --for L --memory 80GiB --memory-mode inference --batch 8 | "
        "symtrans solve gpt2 --for d_model --compute 1e21 --keep d_ff=4*d_model",
    )
    common(p, ("text", "json"), "text")
    p.add_argument(
        "--for", dest="unknown", required=True, metavar="NAME", help="the size to solve for (d_model, N, L, ...)"
    )
    p.add_argument(
        "--params", type=int_arg("--params"), default=None, metavar="P", help="parameter budget (e.g. 7e9 or 1.5B)"
    )
    p.add_argument(
        "--active-params",
        type=int_arg("--active-params"),
        default=None,
        metavar="P",
        help="active parameters per token (mixture of experts)",
    )
    p.add_argument(
        "--flops", type=int_arg("--flops"), default=None, metavar="F", help="forward FLOPs budget at --batch/--seq-len"
    )
    p.add_argument(
        "--training-flops",
        type=int_arg("--training-flops"),
        default=None,
        metavar="F",
        help="training (forward + backward) FLOPs budget of one step",
    )
    p.add_argument(
        "--memory", type=_bytes, default=None, metavar="BYTES", help="memory budget (85899345920, 16e9, 80GB, 1.5GiB)"
    )
    p.add_argument(
        "--compute",
        type=int_arg("--compute"),
        default=None,
        metavar="C",
        help="a training compute budget: Chinchilla's compute-optimal parameter count becomes the target",
    )
    p.add_argument(
        "--tokens-per-param", default="20", metavar="R", help="Chinchilla's tokens per parameter (default 20)"
    )
    p.add_argument(
        "--multiple-of",
        type=int_arg("--multiple-of"),
        default=None,
        metavar="M",
        help="valid values are multiples of M (default: h for d_model, else 1)",
    )
    p.add_argument("--memory-mode", choices=("training", "inference"), default="training")
    p.add_argument("--dtype", default="bf16", help="weight dtype for memory budgets (default bf16)")
    workload(p)
    counting(p)
    _add_rule_options(p)
    p.set_defaults(func=lambda a: _cmd_solve(a, emit))

    p = sub.add_parser(
        "plan",
        help="compute-optimal parameters and tokens for a compute budget (Chinchilla)",
        description="N = sqrt(C / (6 r)), D = r N from C = 6ND and r tokens per parameter "
        "(Hoffmann et al. 2022); prints the source and the caveats.",
    )
    p.add_argument(
        "--compute", type=int_arg("--compute"), required=True, metavar="C", help="training FLOPs (e.g. 5.76e23)"
    )
    p.add_argument("--tokens-per-param", default="20", metavar="R", help="tokens per parameter (default 20)")
    p.add_argument("--format", type=format_arg, choices=("text", "json"), default="text")
    p.add_argument("-o", "--output", metavar="PATH", help="write here (atomically) instead of standard output")
    p.set_defaults(func=lambda a: _cmd_plan(a, emit))

    p = sub.add_parser(
        "sweep",
        help="evaluate parameters, FLOPs and memory over a grid or a CSV of configurations",
        description="Vectorised exact evaluation (integer NumPy code generated from the closed forms, in "
        "cache-sized chunks; values past 2^62 fall back to Python integers). Grid combinations the model "
        "rejects (h not dividing d_model, ...) are skipped with a note unless --strict; rows of a CSV must "
        "all be valid. The grid or the CSV file streams through in batches, so memory does not grow with "
        "the rows; the output is shown (or written, atomically) only after every row is computed.",
        epilog="examples: symtrans sweep gpt2 --grid d_model=512:8192:512 --grid N=12,24,48 --keep d_ff=4*d_model "
        "--keep h=d_model/64 -o sweep.csv | symtrans sweep llama-2-7b --csv configs.csv --format json",
    )
    common(p, ("csv", "json"), "csv")
    p.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="NAME=SPEC",
        help="START:STOP:STEP (STOP included), A,B,C or one value; repeatable: the grid is the product",
    )
    p.add_argument("--csv", default=None, metavar="FILE", help="configurations, one a row, header of size names")
    p.add_argument(
        "--quantity",
        default=None,
        metavar="LIST",
        help="comma-separated: params, active_params, flops, training_flops, memory (default: all; memory is "
        "left out with a note for a model whose memory is not modelled, such as LED and LongT5)",
    )
    p.add_argument("--strict", action="store_true", help="an invalid grid combination is an error")
    p.add_argument(
        "--progress",
        choices=("auto", "on", "off"),
        default="auto",
        help="progress bar on stderr (auto: on a terminal, for long runs)",
    )
    p.add_argument("--memory-mode", choices=("training", "inference"), default="training")
    p.add_argument("--dtype", default="bf16", help="weight dtype of the memory column (default bf16)")
    workload(p)
    counting(p)
    _add_rule_options(p)
    p.set_defaults(func=lambda a: _cmd_sweep(a, emit))

    p = sub.add_parser(
        "diff",
        help="compare two models, or one model under two conventions, term by term",
        description="A and B are each a preset, a config.json, or a variant PRESET:NAME=VALUE,NAME=VALUE. "
        "Omit B to compare A with itself under other settings (--set-b, --convention-b, --mask-b, "
        "--mode-b). Prints B - A per component and per named term, symbolically and exactly.",
        epilog="examples: symtrans diff 'bert-base:V=30000,token_types=0,embedding_norm=false,attention_bias=false,"
        "pooler_bias=false' bert-base | symtrans diff gpt2 --quantity flops --mask-a half --mask-b full "
        "(Kaplan's attention term against PaLM's) | symtrans diff gpt2 --quantity flops --convention-b chinchilla",
    )
    p.add_argument("a", metavar="A", help="preset, config.json or PRESET:NAME=VALUE,...")
    p.add_argument("b", metavar="B", nargs="?", default=None, help="the same forms; default: A again")
    p.add_argument("--set-a", action="append", default=[], metavar="NAME=VALUE", help="override on side A; repeatable")
    p.add_argument("--set-b", action="append", default=[], metavar="NAME=VALUE", help="override on side B; repeatable")
    p.add_argument("--quantity", choices=("params", "active-params", "flops"), default="params")
    p.add_argument(
        "--mode", choices=("forward", "training"), default="forward", help="FLOPs of one pass or of training"
    )
    p.add_argument("--mode-a", choices=("forward", "training"), default=None)
    p.add_argument("--mode-b", choices=("forward", "training"), default=None)
    counting(p)
    counting(p, "-a")
    counting(p, "-b")
    p.add_argument("--format", type=format_arg, choices=("text", "json", "markdown"), default="text")
    p.add_argument("-o", "--output", metavar="PATH", help="write here (atomically) instead of standard output")
    workload(p)
    p.set_defaults(func=lambda a: _cmd_diff(a, emit))

    p = sub.add_parser("identities", help="the identity catalogue (Kaplan, PaLM, Megatron, crossover ...), each proved")
    p.add_argument("names", nargs="*", metavar="NAME", help="identities to show (default: all)")
    p.add_argument("--format", type=format_arg, choices=("text", "markdown", "latex", "json"), default="text")
    p.add_argument("-o", "--output", metavar="PATH", help="write here (atomically) instead of standard output")
    p.set_defaults(func=lambda a: _cmd_identities(a, emit))

    p = sub.add_parser("plot", help="chart: component shares, or parameters/FLOPs against a size (needs matplotlib)")
    p.add_argument("model", metavar="MODEL", help="a preset name or a config.json path")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a size or an option")
    p.add_argument("--kind", choices=("shares", "scaling"), default="shares")
    p.add_argument(
        "--over", default="d_model", metavar="NAME", help="the size on the x axis of --kind scaling (d_model, N, L)"
    )
    p.add_argument("--quantity", choices=("params", "flops"), default="params")
    p.add_argument("--no-presets", action="store_true", help="do not mark the published presets")
    p.add_argument("--mask", choices=tuple(MASK_MODES), default="full")
    p.add_argument("-o", "--output", metavar="PATH", required=True, help="the chart file: .png, .svg or .pdf")
    workload(p)
    p.set_defaults(func=lambda a: _cmd_plot(a, emit, usage_error))
