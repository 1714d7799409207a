"""The ``flops`` (extended), ``memory`` and ``time`` commands of the symtrans CLI.

``cli.py`` builds the parser and calls ``cmd_flops``/``cmd_memory``/``cmd_time``; this
module holds their options, their JSON objects and their text.  Every count is exact:
JSON integers, or a ``"p/q"`` string where a count is a fraction (an average per token
over a padded or chunked sequence); text shows the exact integer with separators (a
fraction as its decimal digits, exact where they end, labelled as an average) and a decimal SI prefix
(kFLOP, MFLOP, GFLOP, TFLOP, PFLOP: powers of 1000).  Bytes are shown both in binary
units (KiB, MiB, GiB: powers of 1024) and in decimal ones (kB, MB, GB: powers of
1000), each labelled.  Bad input raises ValueError (one line, exit 2 in ``cli.main``).
"""

from __future__ import annotations

import argparse
import functools
import json
from fractions import Fraction

from symtrans.accounting.roofline import inference_lengths, inference_roofline, roofline_assumptions
from symtrans.base.errors import InputError
from symtrans.cli.arguments import int_arg, size_arg
from symtrans.engine.conventions import CONVENTIONS, MASK_MODES, MODES, RECOMPUTE, TRAINING_MODES

_DTYPE_HELP = "fp32, bf16, fp16, fp8, int8, int4"
_QUANT_HELP = (
    "quantized weights with --inference: none, gptq[:bits=4,group_size=128], awq, nf4|fp4[:double_quant=true], "
    "bnb-int8, q8_0, q4_0, q4_k, q6_k (default: the config's quantization_config)"
)


# ---------------------------------------------------------------------------------
# parser options


def add_flops_options(p: argparse.ArgumentParser) -> None:
    """--mode, --convention, --mask, --recompute, --tokens, --prefill, --generate, --compare."""
    p.add_argument("--mode", default="forward", metavar="MODE", help=f"one of {', '.join(MODES)} (default forward)")
    p.add_argument(
        "--convention",
        default="flops",
        metavar="NAME",
        help=f"one of {', '.join(CONVENTIONS)} (default flops: 2 per multiply-accumulate)",
    )
    p.add_argument(
        "--mask",
        default="full",
        metavar="MASK",
        help=f"causal attention counted as {', '.join(MASK_MODES)} (default full square)",
    )
    p.add_argument(
        "--recompute",
        default="none",
        metavar="KIND",
        help=f"activation recomputation for --mode training: {', '.join(RECOMPUTE)}",
    )
    p.add_argument(
        "--tokens",
        type=int_arg("--tokens"),
        default=None,
        metavar="D",
        help="training tokens: also report FLOPs per run (D tokens) and PF-days",
    )
    p.add_argument(
        "--prefill",
        type=size_arg("--prefill"),
        default=None,
        metavar="L_pre",
        help="prompt tokens for --mode prefill/decode (default: the sequence length)",
    )
    p.add_argument(
        "--generate",
        type=size_arg("--generate"),
        default=None,
        metavar="T_gen",
        help="generated tokens for --mode decode (default 1)",
    )
    p.add_argument(
        "--compare",
        action="store_true",
        help="set the published formulas (Kaplan, 6ND, Chinchilla, PaLM, Megatron) beside the exact count",
    )


def add_memory_parser(sub, common, workload, emit) -> None:
    """The ``memory`` subcommand."""
    p = sub.add_parser("memory", help="memory: weights, gradients, optimizer, activations, KV cache (bytes)")
    common(p, ("text", "json"), "text")
    workload(p)
    p.add_argument(
        "--dtype",
        default=None,
        metavar="DTYPE",
        help=f"weight dtype: {_DTYPE_HELP} (default: the config's torch_dtype, else bf16)",
    )
    p.add_argument(
        "--kv-dtype",
        default=None,
        metavar="DTYPE",
        help="KV cache dtype (default: the weight dtype, bf16 for int8/int4 weights)",
    )
    p.add_argument("--quantization", default=None, metavar="SPEC", help=_QUANT_HELP)
    p.add_argument(
        "--optimizer",
        default="adam-mixed",
        metavar="NAME",
        help="adam-mixed (default; 12 bytes/parameter), adam, adamw, adam-8bit, sgd-momentum, sgd",
    )
    p.add_argument("--zero", type=int_arg("--zero", 0), default=0, metavar="STAGE", help="ZeRO stage 0-3")
    p.add_argument(
        "--dp", type=int_arg("--dp"), default=None, metavar="N_d", help="data-parallel ranks (training; default 1)"
    )
    p.add_argument(
        "--recompute", default="none", metavar="KIND", help=f"activation recomputation: {', '.join(RECOMPUTE)}"
    )
    p.add_argument("--flash-attention", action="store_true", help="FlashAttention: no stored score matrices")
    p.add_argument(
        "--eager-attention",
        action="store_true",
        help="inference: eager attention stores each layer's B x h x L x L scores (default: fused, none)",
    )
    p.add_argument("--no-dropout", action="store_true", help="no dropout masks among the saved activations")
    p.add_argument(
        "--inference",
        action="store_true",
        help="inference footprint: weights + KV cache of B x L tokens + activations + margin",
    )
    p.add_argument("--margin", default="0.1", metavar="FRACTION", help="inference headroom (default 0.1 = 10%%)")
    p.set_defaults(func=functools.partial(cmd_memory, emit=emit))  # emit: cli.main's, as for deploy


def add_time_parser(sub, common, workload, emit) -> None:
    """The ``time`` subcommand."""
    from symtrans.accounting.hardware import ACCELERATORS

    p = sub.add_parser("time", help="step time at a given MFU, MFU from a throughput, roofline of prefill/decode")
    common(p, ("text", "json"), "text")
    workload(p)
    p.add_argument("--accelerator", default=None, metavar="NAME", help=f"one of {', '.join(ACCELERATORS)}")
    p.add_argument(
        "--devices",
        type=int_arg("--devices"),
        default=1,
        metavar="n",
        help="devices training together (data parallel): divides the step and run time; prefill and "
        "decode stay one request on one device",
    )
    p.add_argument(
        "--precision",
        default=None,
        metavar="P",
        help="peak used: bf16 (default; fp16 on a device without bf16), fp16 or fp8",
    )
    p.add_argument(
        "--mfu",
        default="1",
        metavar="U",
        help="model FLOPs utilisation for the step time (default 1: the ideal lower bound)",
    )
    p.add_argument(
        "--tokens-per-second", default=None, metavar="X", help="measured training throughput: report MFU (PaLM App. B)"
    )
    p.add_argument("--tokens", type=int_arg("--tokens"), default=None, metavar="D", help="training tokens (run time)")
    p.add_argument("--recompute", default="none", metavar="KIND", help=f"{', '.join(RECOMPUTE)}")
    p.add_argument("--prefill", type=size_arg("--prefill"), default=None, metavar="L_pre")
    p.add_argument("--generate", type=size_arg("--generate"), default=None, metavar="T_gen")
    p.add_argument(
        "--dtype",
        default=None,
        metavar="DTYPE",
        help=f"weight dtype for the roofline: {_DTYPE_HELP} (default: the config's torch_dtype, else bf16)",
    )
    p.add_argument("--kv-dtype", default=None, metavar="DTYPE")
    p.add_argument("--quantization", default=None, metavar="SPEC", help=_QUANT_HELP.replace(" with --inference", ""))
    p.set_defaults(func=functools.partial(cmd_time, emit=emit))  # emit: cli.main's, as for deploy


# ---------------------------------------------------------------------------------
# helpers


def exact_json(x):
    """An exact number for JSON: int when integral, else the string 'p/q' (never a float)."""
    f = _frac(x)
    return f.numerator if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def _frac(x) -> Fraction:
    """An exact number (int, float, Fraction, SymPy Rational or an ``exact_json`` 'p/q') as a Fraction."""
    if isinstance(x, (int, float, Fraction, str)):  # a float converts exactly, as sympy.Rational did
        return Fraction(x)
    return Fraction(int(x.p), int(x.q))  # a SymPy Rational


def _num(x, unit: str) -> str:
    """'874,944,921,600 (874.9 GFLOP)'; a fraction (an average per token over a padded or
    chunked sequence) as decimal digits, exact where they end ('425,496,231.936 (425.5 MFLOP)'),
    else 'about 413,122,811.65 (exactly 413535934464/1001; 413.1 MFLOP)' (``numbers.exact_decimal``)."""
    from symtrans.base.numbers import exact_decimal, si

    f = _frac(x)
    text = exact_decimal(f)
    return f"{text[:-1]}; {si(f, unit)})" if text.endswith(")") else f"{text} ({si(f, unit)})"


def _average(x, unit: str, tokens: int, what: str) -> str:
    """The label and value of a per-token figure: the total / ``tokens``.  An integer prints as
    a count; a fraction (attention padded to blocks or chunks, a window, a half-square mask)
    is labelled as the average it is, over the ``tokens`` (B x L) tokens of ``what``."""
    f = _frac(x)
    label = "" if f.denominator == 1 else f" (an average: the total over {what} = {tokens:,} tokens)"
    return f"{label}: {_num(f, unit)}"


def _bytes(x) -> str:
    """'13,476,831,232 bytes = 12.55 GiB (binary) = 13.48 GB (decimal)' (``base.numbers.byte_size``)."""
    from symtrans.base.numbers import byte_size

    return byte_size(_frac(x))


def _seconds(x) -> str:
    """Seconds as s, ms or µs: ``base.numbers.seconds``, the one formatter of times."""
    from symtrans.base.numbers import seconds

    return seconds(float(_frac(x)))


def _values(res, batch: int, seq_len: int | None, args=None, v4_counted: bool = False) -> dict[str, int]:
    from symtrans.catalog.resolve import seq_len_warning
    from symtrans.cli.common import _warn, flops_values

    v = flops_values(res, batch, seq_len, v4_counted)
    w = seq_len_warning(res.spec, v)
    if w and args is not None:
        _warn(args, w)
    return v


def _seq_len_source(res, args) -> str:
    """Where the workload length came from: --seq-len, or the model's default (resolve)."""
    return "--seq-len" if getattr(args, "seq_len", None) is not None else res.seq_len_source


def _tokens(spec, v) -> int:
    return v["B"] * (v["L_tgt"] if spec.family == "encoder-decoder" else v["L"])


def _component_rows(n) -> list[dict]:
    """Per-component FLOPs (top-level components and their children) under the mode,
    convention, mask and recomputation (``flops.component_flops``, through the plan
    ``n``): a layer stack's row includes its recomputed forward pass, so the top-level
    rows add up exactly to the total, and each share is of that total."""
    rows = []
    for i, (name, depth) in enumerate(n.layout):
        rows.append(
            {
                "name": name,
                "depth": depth,
                "count": exact_json(n.value(f"c{i}.count")),
                "each": exact_json(n.value(f"c{i}.each")),
                "total": exact_json(n.value(f"c{i}.total")),
                "closed_form": n.text(f"c{i}.closed_form"),
            }
        )
    grand = sum(_frac(r["total"]) for r in rows if r["depth"] == 0)
    for r in rows:
        r["share"] = float(_frac(r["total"]) / grand) if grand else 0.0
    return rows


# ---------------------------------------------------------------------------------
# flops


def flops_command_result(res, args, generated: bool = True) -> dict:
    """The JSON object of ``symtrans flops`` with the mode/convention options.

    Keys: model, mode, convention, convention_note, mask, recompute, batch, seq_len
    (and L_src/L_tgt, or L_pre/T_gen), total, per_token, per_sequence, closed_form,
    components; per_run and pf_days with --tokens; compare with --compare.
    ``generated``: the closed forms' numbers from generated data when there is some
    (no SymPy; ``cli.numbers``), else from SymPy.
    """
    from symtrans.accounting.hardware import PF_DAY
    from symtrans.cli import numbers as NB
    from symtrans.cli.common import _warn, with_numbers
    from symtrans.engine import mixer_rules
    from symtrans.engine.conventions import choice
    from symtrans.engine.conventions import convention as get_conv

    spec = res.spec
    mode = choice(MODES, args.mode, "mode").name
    conv = get_conv(args.convention)
    choice(MASK_MODES, args.mask, "mask")
    choice(RECOMPUTE, args.recompute, "recompute option")
    if args.mask == "window" and not spec.has("w"):  # the band is of windowed layers only
        _warn(args, f"--mask window: {res.name} has no sliding window (no w): every layer counts as under --mask full")
    if args.recompute != "none" and mode != "training":
        raise InputError(f"--recompute applies to --mode training, not {mode}")
    v4_counted = mixer_rules.v4_flops(spec, mode, conv.name, args.mask, args.recompute)  # DeepSeek-V4
    v = _values(res, args.batch, args.seq_len, args, v4_counted)
    head = {
        "model": res.name,
        "mode": mode,
        "convention": conv.name,
        "convention_note": conv.description,
        "unit": conv.unit,
        "mask": args.mask,
        "recompute": args.recompute,
        "batch": args.batch,
        "seq_len": v["L"],
        "seq_len_source": _seq_len_source(res, args),
    }
    if spec.family == "encoder-decoder" and mode in TRAINING_MODES:
        head["L_src"], head["L_tgt"] = v["L_src"], v["L_tgt"]
    if mode in TRAINING_MODES:
        tokens = _tokens(spec, v)
    else:
        v["L_pre"], v["T_gen"] = inference_lengths(spec, v, args.prefill, args.generate)
        head["L_pre"] = v["L_pre"]
        if mode == "prefill":
            tokens = v["B"] * v["L_pre"]
        else:
            head["T_gen"] = v["T_gen"]
            tokens = v["B"] * v["T_gen"]
    if args.tokens is not None and mode != "training":
        raise InputError("--tokens (FLOPs per run) applies to --mode training")

    def assemble(n) -> dict:
        out = dict(head)
        if mode in TRAINING_MODES:
            out["components"] = _component_rows(n)
        total = _frac(n.value("total"))
        out["total"] = exact_json(total)
        out["per_token"] = exact_json(total / tokens)
        out["per_sequence"] = exact_json(total / v["B"])
        out["closed_form"] = n.text("closed_form")
        if args.tokens is not None:
            run = total / tokens * args.tokens
            out["tokens"] = args.tokens
            out["per_run"] = exact_json(run)
            out["pf_days"] = float(run / PF_DAY)  # PF-days (hardware.pf_days), an exact fraction as a float
        return out

    out = with_numbers(spec, NB.flops_query(mode, conv.name, args.mask, args.recompute), v, assemble, generated)
    if spec.vision != "none":  # the Cost tree's vision subtrees count 0 FLOPs (engine/vision.py)
        from symtrans.engine.spec import DUAL_VISIONS
        from symtrans.engine.vision_flops import image_flops_modelled

        out["vision_note"] = "the workload has no images, so the vision tower's FLOPs are 0 " + (
            "(its forward FLOPs per image: flops --part vision)"
            if spec.vision in DUAL_VISIONS or image_flops_modelled(spec)
            else "(per-image FLOPs are not modelled yet)"
        )
    if args.compare:
        import sympy as sp

        from symtrans.accounting.formulas import COMPARE_BASIS, compare

        D = args.tokens if args.tokens is not None else _tokens(spec, v)
        vals = {k: val for k, val in v.items() if k in ("B", "L")}
        out["compare_basis"] = {**COMPARE_BASIS, "mask": args.mask}  # the exact counts follow --mask
        # the options of the header that the compare section does not follow
        out["compare_basis"]["differs_from_header"] = [
            f"--{k} {out[k]}" for k in ("convention", "recompute") if out[k] != COMPARE_BASIS[k]
        ] + ([f"--mode {mode}"] if mode not in ("forward", "training") else [])
        out["compare"] = [
            {
                "key": r.key,
                "formula_name": r.name,
                "quantity": r.quantity,
                "formula": sp.sstr(r.formula),
                "value": exact_json(r.value),
                "exact": exact_json(r.exact),
                "ratio": float(r.ratio),
                "ratio_exact": exact_json(r.ratio),
                "residual": sp.sstr(r.residual),
                "residual_under_assumptions": sp.sstr(r.assumed_residual),
                "assumptions": list(r.assumptions),
                "source": r.source,
            }
            for r in compare(spec, vals, D, args.mask)
        ]
    return out


def _compare_lines(rows: list[dict], basis: dict) -> list[str]:
    lines = [
        f"  published formulas (ratio = formula / exact; residual = exact - formula), exact counts under "
        f"--mask {basis['mask']}; {basis['description']}:"
    ]
    if basis["differs_from_header"]:
        lines.append(
            f"    note: so these exact counts are not the count above, which is under "
            f"{', '.join(basis['differs_from_header'])}"
        )
    for r in rows:
        lines.append(f"    {r['formula_name']}  [{r['quantity']}; {r['source']}]")
        lines.append(f"      formula  {r['formula']}")
        lines.append(f"      value {_plain(r['value'])}   exact {_plain(r['exact'])}   ratio {r['ratio']:.4f}")
        lines.append(f"      residual {r['residual']}")
        tail = "0: reproduced exactly" if r["residual_under_assumptions"] == "0" else r["residual_under_assumptions"]
        lines.append(f"      under its assumptions ({'; '.join(r['assumptions'])}): residual {tail}")
    return lines


def _plain(x) -> str:
    from symtrans.base.numbers import grouped

    return grouped(x) if isinstance(x, int) else str(x)


def cmd_flops(args, res, emit) -> int:
    """``symtrans flops``: print the result as JSON or text."""
    r = flops_command_result(res, args)
    if args.format == "json":
        from symtrans.cli.common import with_symbols

        emit(args, json.dumps(with_symbols(r), indent=2))
        return 0
    u = r["unit"]
    if "L_pre" in r:
        shape = f"B={r['batch']}, L_pre={r['L_pre']}" + (f", T_gen={r['T_gen']}" if "T_gen" in r else "")
    elif "L_src" in r:
        shape = f"B={r['batch']}, L_src={r['L_src']}, L_tgt={r['L_tgt']}"
    else:
        shape = f"B={r['batch']}, L={r['seq_len']}"
    per = "generated token" if r["mode"] == "decode" else "token"
    if r["mode"] == "decode":
        tokens, what = r["batch"] * r["T_gen"], "B x T_gen"
    elif "L_pre" in r:
        tokens, what = r["batch"] * r["L_pre"], "B x L_pre"
    elif "L_tgt" in r:
        tokens, what = r["batch"] * r["L_tgt"], "B x L_tgt"
    else:
        tokens, what = r["batch"] * r["seq_len"], "B x L"
    if "L_pre" in r:  # inference counts the prompt L_pre, not L: say where L_pre came from
        given = getattr(args, "prefill", None) is not None
        source = "--prefill" if given else f"the sequence length, {r['seq_len_source']} (set --prefill)"
        length = f"  L_pre = {r['L_pre']:,}: {source}"
    else:
        length = f"  L = {r['seq_len']:,}: {r['seq_len_source']}"
    lines = [
        f"{r['model']}: {r['mode']} {u}s at {shape}: {_num(r['total'], u)}",
        length,
        f"  per {per}{_average(r['per_token'], u, tokens, what)}",
        f"  per sequence: {_num(r['per_sequence'], u)}",
    ]
    if "per_run" in r:
        run = "" if _frac(r["per_run"]).denominator == 1 else " (D x the average per token)"
        lines.append(
            f"  per run of D={r['tokens']:,} tokens{run}: {_num(r['per_run'], u)} = {r['pf_days']:.4g} PF-days"
        )
    lines.append(f"  convention: {r['convention']}: {r['convention_note']}")
    if r["mode"] == "decode" and r["mask"] != "half":
        # a decode step's scores are its queries against the keys in the KV cache: full,
        # causal and window count the same (Workload.self_mask), so no square is meant
        lines.append(
            "  attention: each generated token scores the keys its KV cache holds (the prompt and the tokens "
            "before it; at most w on a sliding-window layer)"
        )
    else:
        lines.append(f"  mask: {r['mask']}: {MASK_MODES[r['mask']].description}")
    if r["mode"] == "training":
        lines.append(f"  recompute: {r['recompute']}: {RECOMPUTE[r['recompute']].description}")
    lines.append(f"  closed form: {r['closed_form']}")
    if "components" in r:
        lines.append(
            "  components (sum = the total"
            + (f"; the layer stacks include their {r['recompute']} recomputation" if r["recompute"] != "none" else "")
            + "):"
        )

        # As params prints them: the multiplicity beside the name, the count per instance last.
        def label(c) -> str:
            return "  " * c["depth"] + c["name"] + (f" x {c['count']}" if c["count"] != 1 else "")

        width = max(len(label(c)) for c in r["components"])
        for c in r["components"]:
            each = f"  ({_plain(c['each'])} each)" if c["count"] not in (0, 1) else ""
            lines.append(f"    {label(c):<{width}}  {_plain(c['total']):>24}  {c['share'] * 100:6.2f}%{each}")
    if "vision_note" in r:
        lines.append(f"  note: {r['vision_note']}")
    if "compare" in r:
        lines += _compare_lines(r["compare"], r["compare_basis"])
    emit(args, "\n".join(lines))
    return 0


# ---------------------------------------------------------------------------------
# memory


def _check_parallel_options(args) -> None:
    """ZeRO and data parallelism are training options: refuse them where they would be
    silently ignored (issue 25.7), and settle ``args.dp`` (default 1).

    Raises:
        InputError: ``--zero``/``--dp`` with ``--inference`` (one replica's weights, KV cache
            and activations: no gradients or optimizer states to shard), or ``--zero 1-3``
            without ``--dp`` (ZeRO shards over the data-parallel ranks: over one rank,
            nothing is sharded).
    """
    if args.inference and (args.zero != 0 or args.dp is not None):
        given = " and ".join(o for o, on in (("--zero", args.zero != 0), ("--dp", args.dp is not None)) if on)
        raise InputError(
            f"{given} {'apply' if ' and ' in given else 'applies'} to training memory; --inference counts one replica's weights, KV cache and "
            "activations (no gradients or optimizer states to shard): leave them out"
        )
    if args.zero in (1, 2, 3) and args.dp is None:
        raise InputError(
            f"--zero {args.zero} shards over the data-parallel ranks: give --dp N_d "
            "(over one rank, ZeRO shards nothing)"
        )
    if args.dp is None:
        args.dp = 1


def memory_command_result(res, args, generated: bool = True) -> dict:
    """The JSON object of ``symtrans memory``: the seven byte counts (exact), their
    closed forms and the options used (``generated``: as ``flops_command_result``)."""
    from symtrans.accounting.quantization import weight_format
    from symtrans.accounting.roofline import default_kv_dtype
    from symtrans.cli import numbers as NB
    from symtrans.cli.common import with_numbers

    spec = res.spec
    _check_parallel_options(args)
    v = _values(res, args.batch, args.seq_len, args)
    mode = "inference" if args.inference else "training"
    seq = v["L_tgt"] if spec.family == "encoder-decoder" else v["L"]
    src = v["L_src"] if spec.family == "encoder-decoder" else None
    # a checkpoint's quantization_config describes inference weights; training counts its dtype only
    quant_arg = args.quantization if (mode == "inference" or args.quantization is not None) else "none"
    fmt, notes = weight_format(getattr(res, "checkpoint", None), args.dtype, quant_arg)
    fmt.check(spec, v)
    head = {
        "model": res.name,
        "mode": mode,
        "unit": "bytes",
        "dtype": fmt.dtype,
        "quantization": fmt.quantization.name if fmt.quantization else None,
        "kv_dtype": args.kv_dtype or default_kv_dtype(fmt.dtype),
        "batch": args.batch,
        "seq_len": seq,
        "seq_len_source": _seq_len_source(res, args),
        **_dtype_source(getattr(res, "checkpoint", None), args.dtype, fmt.dtype),
    }
    if mode == "training":
        head.update({"optimizer": args.optimizer, "zero_stage": args.zero, "dp": args.dp, "recompute": args.recompute})

    def assemble(n) -> dict:
        out = dict(head)
        if mode == "training":  # memory.OPTIMIZERS, through the plan (with the weights' dtype)
            out["optimizer_bytes_per_parameter"] = exact_json(n.value("optimizer_bytes_per_parameter"))
            out["optimizer_note"] = n.text("optimizer_note")
        out["flash_attention"] = bool(args.flash_attention)
        out["eager_attention"] = bool(args.eager_attention)
        keys = [k for k, depth in n.layout if depth == 0]  # memory.KEYS, in order (the plan's layout)
        for k in keys + ["activations_bytes_per_layer", "margin_bytes"]:
            out[k] = exact_json(n.value(k))
        out["closed_forms"] = {k: n.text(k) for k in keys}
        if fmt.quantization is not None:  # the weights by term (depth 1 of the layout), those not zero
            out["quantization_layout"] = fmt.quantization.describe()
            terms = {k: exact_json(n.value(f"weights.{k}")) for k, depth in n.layout if depth == 1}
            out["weight_terms"] = {k: t for k, t in terms.items() if t != 0}
        out["notes"] = notes
        return out

    out = with_numbers(spec, NB.memory_query(args, fmt, args.batch, seq, src), v, assemble, generated)
    if mode == "inference" and args.dtype is None and head["dtype_source"] != "default" and fmt.dtype == "fp32":
        # A checkpoint stored in fp32 (gemma-2-9b's config) is served in 16 bits: both figures, apart (issue 25.8).
        import copy

        served = copy.copy(args)
        served.dtype, served.dp = SERVING_DTYPE, None  # dp: settled again by _check_parallel_options
        s = memory_command_result(res, served, generated)
        out["serving"] = {
            "dtype": SERVING_DTYPE,
            **{k: s[k] for k in ("weights_bytes", "kv_cache_bytes", "total_bytes")},
        }
    return out


SERVING_DTYPE = "bf16"  # a 16-bit serving dtype: servers cast fp32 checkpoints down (Gemma-2 needs bf16, not fp16)


def _dtype_source(checkpoint, given: str | None, dtype: str) -> dict:
    """Where the weights' dtype came from (``dtype_source``: ``--dtype``, ``checkpoint``
    or ``default``), in words, and the checkpoint's own dtype (None without one)."""
    ck_dtype = getattr(checkpoint, "dtype", None)
    if given is not None:
        source, words = "--dtype", "--dtype"
    elif ck_dtype:
        source, words = "checkpoint", "the checkpoint's dtype (the config's torch_dtype), as stored"
    else:
        source, words = "default", "symtrans's default (no checkpoint dtype; --dtype to change)"
    return {"dtype_source": source, "dtype_from": words, "checkpoint_dtype": ck_dtype}


def cmd_memory(args, res=None, emit=None) -> int:
    """``symtrans memory``: print the result as JSON or text."""
    from symtrans.cli.common import _emit, _resolve, with_symbols

    res = res or _resolve(args)
    emit = emit or _emit
    dp_given = args.dp  # _check_parallel_options settles it to 1
    try:
        r = memory_command_result(res, args)
    except InputError:  # refused; DeepSeek-V4's cache is stated per sequence (checked here, off the fast path)
        from symtrans.cli.held_memory import held_memory_lines, held_memory_result, holds_cache

        if res.generic is not None or not holds_cache(res.spec):
            raise
        args.dp = dp_given
        r = held_memory_result(res, args, _dtype_source)
        emit(
            args,
            json.dumps(with_symbols(r), indent=2) if args.format == "json" else "\n".join(held_memory_lines(r, _bytes)),
        )
        return 0
    if args.format == "json":
        emit(args, json.dumps(with_symbols(r), indent=2))
        return 0
    head = (
        f"{r['model']}: {r['mode']} memory per rank at B={r['batch']}, L={r['seq_len']}, weights {r['dtype']}"
        + (f" ({r['quantization']})" if r["quantization"] else "")
        + (
            f", {r['optimizer']}, ZeRO stage {r['zero_stage']} over {r['dp']} ranks, recompute {r['recompute']}"
            if r["mode"] == "training"
            else f", KV cache {r['kv_dtype']}"
        )
        + (", FlashAttention" if r["flash_attention"] else "")
        + (", eager attention" if r["eager_attention"] else "")
    )
    lines = [head, f"  L = {r['seq_len']:,}: {r['seq_len_source']}", f"  weights {r['dtype']}: {r['dtype_from']}"]
    if "serving" in r:
        sv = r["serving"]
        lines.append(
            f"  served in {sv['dtype']} (the serving dtype: servers cast fp32 checkpoints to 16 bits; --dtype {sv['dtype']}): "
            f"weights {_bytes(sv['weights_bytes'])}, total {_bytes(sv['total_bytes'])}"
        )
    if r["mode"] == "training":
        lines.append(
            f"  optimizer {r['optimizer']}: {r['optimizer_bytes_per_parameter']} bytes per parameter "
            f"with {r['dtype']} weights ({r['optimizer_note']})"
        )
    labels = [
        ("weights", "weights_bytes"),
        ("gradients", "gradients_bytes"),
        ("optimizer states", "optimizer_bytes"),
        ("activations", "activations_bytes"),
        ("  of which per layer", "activations_bytes_per_layer"),
        # a hybrid's cache holds K/V per token and its constant state: say the total includes both
        ("KV cache and state" if r["state_bytes_per_sequence"] else "KV cache", "kv_cache_bytes"),
        ("KV cache per token", "kv_cache_bytes_per_token"),
        ("state per sequence", "state_bytes_per_sequence"),  # SSM / linear-attention state, any length
    ]
    if r["mode"] == "inference":
        labels.append(("margin", "margin_bytes"))
    labels.append(("total", "total_bytes"))
    width = max(len(a) for a, _ in labels)
    for label, key in labels:
        lines.append(f"  {label:<{width}}  {_bytes(r[key])}")
    if "weight_terms" in r:
        from symtrans.accounting.quantization import TERM_LABELS

        lines.append(f"  weights, {r['quantization']}: {r['quantization_layout']}")
        for k, n in r["weight_terms"].items():
            lines.append(f"    {TERM_LABELS[k]:<32}  {_bytes(n)}")
    lines.append("  units: GiB = 2^30 bytes (binary), GB = 10^9 bytes (decimal)")
    for n in r["notes"]:
        lines.append(f"  note: {n}")
    if r["dtype"] == "int4":
        lines.append(
            "  note: int4 packs two parameters per byte; a packed tensor's element count is half the parameter count"
        )
    emit(args, "\n".join(lines))
    return 0


# ---------------------------------------------------------------------------------
# time


def time_command_result(res, args) -> dict:
    """The JSON object of ``symtrans time``: training step (and run) time at the MFU on
    ``--devices`` devices, MFU from a measured throughput, and the roofline of prefill
    and decode of one request on one device (``inference_roofline``)."""
    from symtrans.accounting import flops as F
    from symtrans.accounting.flops import evaluate
    from symtrans.accounting.hardware import ACCELERATORS, accelerator, mfu, parse_utilisation, step_time

    spec = res.spec
    if args.accelerator is None:
        raise InputError(f"give --accelerator; valid accelerators: {', '.join(ACCELERATORS)}")
    acc = accelerator(args.accelerator)
    precision = args.precision or acc.default_precision
    peak = acc.peak(precision)
    choice_recompute = RECOMPUTE.get(args.recompute)
    if choice_recompute is None:
        raise InputError(
            f"unknown recompute option {args.recompute!r}; valid recompute options: {', '.join(RECOMPUTE)}"
        )
    v = _values(res, args.batch, args.seq_len, args)
    tokens = _tokens(spec, v)
    u = parse_utilisation(args.mfu, "--mfu")
    hw = evaluate(F.flops_expr(spec, "training", recompute=args.recompute), v)
    model_flops = evaluate(F.flops_expr(spec, "training"), v)
    out = {
        "model": res.name,
        "accelerator": acc.name,
        "source": acc.source,
        "devices": args.devices,
        "precision": precision,
        "peak_flops_per_second": peak,
        "bandwidth_bytes_per_second": acc.bandwidth,
        "batch": args.batch,
        "seq_len": v["L"],
        "seq_len_source": _seq_len_source(res, args),
        "mfu": float(u),
        "training": {
            "model_flops_per_step": exact_json(model_flops),
            "hardware_flops_per_step": exact_json(hw),
            "recompute": args.recompute,
            # MFU counts model FLOPs only (PaLM App. B), so the step time is model FLOPs / (n peak
            # MFU) whatever the recomputation; the hardware FLOPs utilisation is then MFU x hw / model
            "step_seconds": float(step_time(model_flops, acc, args.devices, u, precision)),
            "hfu": float(u * hw / model_flops),
        },
    }
    if args.tokens is not None:
        steps = _ratio(args.tokens, tokens)
        out["training"]["tokens"] = args.tokens
        out["training"]["run_seconds"] = float(step_time(model_flops, acc, args.devices, u, precision) * steps)
    if args.tokens_per_second is not None:
        per_token = model_flops / tokens
        out["training"]["measured_tokens_per_second"] = args.tokens_per_second
        out["training"]["mfu_measured"] = float(mfu(args.tokens_per_second, per_token, acc, args.devices, precision))
    if spec.family != "encoder-only" and (spec.family != "decoder-only" or spec.lm_head):
        from symtrans.accounting.quantization import weight_format

        fmt, notes = weight_format(getattr(res, "checkpoint", None), args.dtype, args.quantization)
        fmt.check(spec, v)
        v["L_pre"], v["T_gen"] = inference_lengths(spec, v, args.prefill, args.generate)
        B, Lp, Tg = v["B"], v["L_pre"], v["T_gen"]
        ph = inference_roofline(spec, v, acc, precision, fmt.dtype, args.kv_dtype, fmt.quantization)
        out["dtype"] = fmt.dtype
        out["quantization"] = fmt.quantization.name if fmt.quantization else None
        out["notes"] = notes
        out["L_pre"], out["T_gen"] = Lp, Tg
        out["roofline_devices"] = 1
        out["roofline_assumptions"] = roofline_assumptions(spec, args.devices)
        out["fits_one_device"] = bool(ph["resident_bytes"] <= acc.memory)
        out["resident_bytes"] = exact_json(ph["resident_bytes"])
        rows = []
        for x, n_tok, weights in (
            (ph["prefill"], B * Lp, ph["weights_prefill"]),
            (ph["decode"], B * Tg, ph["weights_decode"]),
        ):
            rows.append(
                {
                    "phase": x.phase,
                    "flops": exact_json(x.flops),
                    "bytes": exact_json(x.bytes),
                    "weights_read_per_step": exact_json(weights),
                    "intensity_flops_per_byte": float(x.intensity),
                    "ridge_flops_per_byte": float(x.ridge),
                    "bound": x.bound,
                    "seconds": float(x.time),
                    "seconds_per_token": float(x.time / (n_tok if x.phase == "prefill" else Tg)),
                    "tokens_per_second_all_devices": float(args.devices * n_tok / x.time),
                }
            )
        out["roofline"] = rows
    return out


def _ratio(a, b):
    """a / b as an exact SymPy Rational."""
    import sympy as sp

    return sp.Rational(a, b)


def cmd_time(args, res=None, emit=None) -> int:
    """``symtrans time``: print the result as JSON or text."""
    from symtrans.cli.common import _emit, _resolve

    res = res or _resolve(args)
    emit = emit or _emit
    r = time_command_result(res, args)
    if args.format == "json":
        emit(args, json.dumps(r, indent=2))
        return 0
    t = r["training"]
    from symtrans.accounting.hardware import accelerator
    from symtrans.base.numbers import grouped, si

    acc = accelerator(r["accelerator"])
    missing = [p for p in ("bf16", "fp16", "fp8") if getattr(acc, p) is None]
    lines = [
        f"{r['model']} on {r['devices']} x {r['accelerator']} ({r['precision']} peak "
        f"{si(r['peak_flops_per_second'], 'FLOP/s')}"
        + (f" (no {', no '.join(missing)})" if missing else "")
        + f" and {si(r['bandwidth_bytes_per_second'], 'B/s', 2)} per device; {r['source']})",
        f"  L = {r['seq_len']:,}: {r['seq_len_source']}",
        f"  training step (B={r['batch']}, L={r['seq_len']}): {_num(t['model_flops_per_step'], 'FLOP')} model FLOPs"
        + (
            f", {_num(t['hardware_flops_per_step'], 'FLOP')} with {t['recompute']} recomputation"
            if t["recompute"] != "none"
            else ""
        ),
        f"  step time at MFU {r['mfu']:.3g} on {r['devices']} device{'s' if r['devices'] != 1 else ''}: "
        f"{_seconds(t['step_seconds'])}",
    ]
    if "run_seconds" in t:
        lines.append(f"  run of D={t['tokens']:,} tokens: {_seconds(t['run_seconds'])}")
    if "mfu_measured" in t:
        lines.append(
            f"  MFU at {t['measured_tokens_per_second']} tokens/s (PaLM App. B): {t['mfu_measured'] * 100:.2f}%"
        )
    if r.get("roofline"):
        lines.append(f"  prefill and decode of B={r['batch']}: " + "; ".join(r["roofline_assumptions"]))
        if not r["fits_one_device"]:
            lines.append(
                f"  note: weights and KV cache ({_bytes(r['resident_bytes'])}) exceed one "
                f"{r['accelerator']}'s memory; a real deployment splits the model over devices "
                "(tensor parallelism), which this roofline does not model"
            )
    for x in r.get("roofline", []):
        what = f"L_pre={r['L_pre']}" if x["phase"] == "prefill" else f"T_gen={r['T_gen']} after L_pre={r['L_pre']}"
        lines.append(
            f"  {x['phase']} ({what}): reads {grouped(x['weights_read_per_step'])} parameters per step; "
            f"{x['intensity_flops_per_byte']:.4g} FLOP/byte vs ridge "
            f"{x['ridge_flops_per_byte']:.4g}: {x['bound']}; {_seconds(x['seconds'])} "
            f"({_seconds(x['seconds_per_token'])} per token"
            + (
                f"; {x['tokens_per_second_all_devices']:.4g} tokens/s on {r['devices']} replicas"
                if r["devices"] != 1
                else ""
            )
            + ")"
        )
    for n in r.get("notes", []):
        lines.append(f"  note: {n}")
    emit(args, "\n".join(lines))
    return 0
