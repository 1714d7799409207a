"""The ``reconcile`` command: a vLLM start-up log, line by line, beside symtrans's prediction
for the same model, GPU and flags (issue 23).

Each figure the log prints (``analysis.vllm_log``: weights, memory outside PyTorch, the
activation peak, CUDA-visible memory, utilisation, KV cache memory, blocks, tokens, the
concurrency line, a refusal) is set against ``deploy``'s figure under ``--engine vllm``,
with the difference and the term of symtrans's model that explains it.  Settings the log
states (tensor parallelism, max_model_len, gpu_memory_utilization, the vLLM version) are
taken from it unless given as options.  The log is read, never evaluated; a file with no
line of a vLLM start-up log is refused in one line.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction

GiB = 2**30


def add_reconcile_parser(sub, common, emit) -> None:
    """The ``reconcile`` subcommand (registered by ``cli.main.build_parser``)."""
    from symtrans.cli.deploy import add_deploy_options

    p = sub.add_parser(
        "reconcile",
        help="a vLLM start-up log line by line: the logged figure, symtrans's prediction, the difference, the term",
    )
    p.add_argument("log", metavar="LOG", help="a vLLM start-up log (text)")
    common(p, ("text", "json"), "text")
    add_deploy_options(p)
    p.set_defaults(func=lambda args: cmd_reconcile(args, emit))


def _gib(n) -> str:
    return f"{float(Fraction(n) / GiB):,.2f} GiB"


def _settings_from_log(args, figs) -> list[str]:
    """Fill the options the user left out from what the log states; the notes say which."""
    taken = []
    tp = figs.get("tensor_parallel")
    if tp is not None and args.tensor_parallel == 1 and tp > 1:
        args.tensor_parallel = tp
        if args.devices == 1:
            args.devices = tp
        taken.append(f"tensor parallelism {tp}")
    mml = figs.get("max_model_len")
    if mml is None and figs.get("concurrency") is not None:
        mml = figs.get("concurrency")
    if mml is not None and args.max_model_len is None and args.prompt is None:
        args.max_model_len = mml
        taken.append(f"max_model_len {mml:,}")
    u = figs.get("utilisation")
    if u is not None and args.gpu_memory_utilization is None:
        args.gpu_memory_utilization = (
            str(u.numerator / u.denominator) if u.denominator in (1, 2, 4, 5, 10, 20, 25, 50, 100) else str(float(u))
        )
        taken.append(f"gpu_memory_utilization {float(u):g}")
    ver = figs.get("version")
    if ver is not None and args.engine_version is None:
        args.engine_version = ver
        taken.append(f"vLLM {ver}")
    return taken


def _assumed_engine(args, figs) -> dict:
    """Which vLLM profile the prediction assumes and where that came from: the option, the
    log's own version line, or the default (the figures differ by tens of percent between
    release lines, so a default is said aloud with the option that changes it)."""
    from symtrans.accounting import vllm_profile as vp

    rules = vp.version(args.engine_version)
    ver = figs.get("version")
    if args.engine_version is None:
        source = (
            "the default: the log does not print vLLM's version; "
            "pass --engine-version X.Y.Z (e.g. 0.6.4) if it came from another release"
        )
    elif ver is not None and args.engine_version == ver:
        source = f"the log, line {figs.figures['version'].line_no}"
    else:
        source = "--engine-version"
    return {"version": args.engine_version or vp.DEFAULT_VERSION, "profile": rules.name, "source": source}


def reconcile_result(res, args, figs) -> dict:
    """The rows of ``reconcile`` (JSON-ready), one per figure the log prints."""
    from symtrans.accounting import vllm_profile as vp
    from symtrans.accounting.deploy import DoesNotFit, plan
    from symtrans.accounting.hardware import parse_accelerator
    from symtrans.cli.deploy import _options

    acc = parse_accelerator(args.accelerator)
    opts, _ = _options(args, res.checkpoint)
    refused = False
    try:
        p = plan(res.spec, acc, opts)
        f = {
            "weights_per_device": p.weights_per_device,
            "activation_reserve": p.activation_reserve,
            "engine_terms": p.engine_terms,
            "usable": int(p.usable),
            "device_memory": p.device_memory,
            "token_budget": p.token_budget,
            "kv_bytes_per_token": p.kv_bytes_per_token,
            "utilisation": p.options.utilisation,
            # vLLM's 'Maximum concurrency' where it is not tokens / max_model_len (windows, state layers)
            "vllm_concurrency": p.vllm_concurrency,
        }
        mml = p.prompt + p.generate
    except DoesNotFit as e:
        if not e.figures:
            raise
        f, refused = e.figures, True
        mml = args.max_model_len or figs.get("max_model_len") or 0
    terms = f["engine_terms"]
    available = f["usable"] - f["weights_per_device"] - f["activation_reserve"]
    block = opts.block_size or 16
    rows: list[dict] = []

    def row(key, label, logged, predicted, unit, term):
        fig = figs.figures[key]
        diff = predicted - logged
        rows.append(
            {
                "line": fig.line_no,
                "figure": label,
                "logged": logged,
                "symtrans": predicted,
                "difference": diff,
                "percent": None if not logged else float(Fraction(diff) / Fraction(logged) * 100),
                "unit": unit,
                "term": term,
                "text": fig.line,
            }
        )

    deltas: dict[str, int] = {}
    if figs.get("total_gpu_memory") is not None:
        row(
            "total_gpu_memory",
            "CUDA-visible memory",
            figs.get("total_gpu_memory"),
            f["device_memory"],
            "bytes",
            "M: torch.cuda.mem_get_info's total (vllm_profile.CUDA_VISIBLE; the datasheet where none is measured)",
        )
        deltas["device memory x utilisation"] = int(
            (f["device_memory"] - figs.get("total_gpu_memory")) * f["utilisation"]
        )
    if figs.get("utilisation") is not None:
        row(
            "utilisation",
            "gpu_memory_utilization",
            figs.get("utilisation"),
            Fraction(f["utilisation"]),
            "fraction",
            "u: --gpu-memory-utilization, else the release's default (vllm_profile.VERSIONS)",
        )
    if figs.get("weights") is not None:
        row(
            "weights",
            "model weights",
            figs.get("weights"),
            f["weights_per_device"],
            "bytes",
            "W = matrices / tp + vectors (the log's figure also holds buffers such as the rotary cos/sin cache)",
        )
        deltas["weights"] = -(f["weights_per_device"] - figs.get("weights"))
    if figs.get("non_torch") is not None and "non-torch memory" in terms:
        row(
            "non_torch",
            "memory outside PyTorch",
            figs.get("non_torch"),
            terms["non-torch memory"],
            "bytes",
            "CUDA context, NCCL, custom all-reduce: the release's logged figure (--non-torch)",
        )
        deltas["memory outside PyTorch"] = -(terms["non-torch memory"] - figs.get("non_torch"))
    if figs.get("activation_peak") is not None and "activation peak" in terms:
        row(
            "activation_peak",
            "activation peak",
            figs.get("activation_peak"),
            terms["activation peak"],
            "bytes",
            "the profiling run's live tensors at max_num_batched_tokens + the sampler's logits (an estimate; "
            "--max-num-batched-tokens, --activation-reserve)",
        )
        deltas["activation peak"] = -(terms["activation peak"] - figs.get("activation_peak"))
    if figs.get("cuda_graphs") is not None and "CUDA graphs" in terms:
        row(
            "cuda_graphs",
            "CUDA graphs",
            figs.get("cuda_graphs"),
            terms["CUDA graphs"],
            "bytes",
            "captured after the KV cache is sized: not subtracted up to 0.20 ('In v0.19, CUDA graph memory "
            "profiling will be enabled by default'), subtracted from 0.21 (--cuda-graphs)",
        )
    if figs.get("peak_torch") is not None and "activation peak" in terms:
        if figs.get("weights") is not None:  # 0.6 logs the peak with the weights in it
            deltas["activation peak"] = (figs.get("peak_torch") - figs.get("weights")) - terms["activation peak"]
        row(
            "peak_torch",
            "PyTorch peak (weights + activations)",
            figs.get("peak_torch"),
            f["weights_per_device"] + terms["activation peak"],
            "bytes",
            "W + the profiling run's activation peak",
        )
    if figs.get("kv_memory") is not None:
        named = {k: v for k, v in deltas.items() if v}
        why = (
            "u·M − W − activations − non-torch; the largest gap is in " + max(named, key=lambda k: abs(named[k]))
            if named
            else "u·M − W − activations − non-torch (the log does not itemise them)"
        )
        row("kv_memory", "KV cache memory", figs.get("kv_memory"), available, "bytes", why)
    measured = vp.peak_measurement(opts.engine_version)
    # releases whose profiling peak held memory no log line states (vllm_profile.peak_measurement)
    upper = (
        f"; vLLM {opts.engine_version} subtracted {measured}: memory symtrans does not predict, so its figure is "
        "an upper bound"
        if measured
        else ""
    )
    if figs.get("gpu_blocks") is not None:
        row(
            "gpu_blocks",
            "GPU blocks",
            figs.get("gpu_blocks"),
            f["token_budget"] // block,
            "blocks",
            f"floor(available / ({block} x {f['kv_bytes_per_token']:,} bytes per token per device))" + upper,
        )
    for key, label in (("kv_tokens", "GPU KV cache size"), ("refused_tokens", "KV cache tokens (the refusal)")):
        if figs.get(key) is not None:
            row(
                key,
                label,
                figs.get(key),
                f["token_budget"],
                "tokens",
                (
                    f"blocks x {block}" + ("; symtrans refuses too" if refused else "; symtrans does not refuse")
                    if key == "refused_tokens"
                    else f"blocks x {block}"
                )
                + upper,
            )
    if figs.get("concurrency") is not None and mml:
        conc = figs.figures["concurrency"]
        row(
            "concurrency",
            f"maximum concurrency for {conc.value:,} tokens",
            conc.extra,
            Fraction(round((f.get("vllm_concurrency") or Fraction(f["token_budget"], conc.value)) * 100), 100),
            "x",
            "blocks / a request's blocks over the layer groups, two decimals (vllm/v1/core/kv_cache_utils.py, "
            "get_max_concurrency_for_kv_cache_config)"
            if f.get("vllm_concurrency") is not None
            else "tokens / max_model_len, two decimals (vllm/v1/core/kv_cache_utils.py)",
        )
    if figs.get("needed_kv") is not None and mml:
        need = -(-mml // block) * block * f["kv_bytes_per_token"]
        row(
            "needed_kv",
            "KV cache one request needs",
            figs.get("needed_kv"),
            need,
            "bytes",
            f"cdiv(max_model_len, {block}) blocks of one request",
        )
    if figs.get("refused_available") is not None:
        row(
            "refused_available",
            "available KV cache memory",
            figs.get("refused_available"),
            available,
            "bytes",
            "u·M − W − activations − non-torch",
        )
    rows.sort(key=lambda r: r["line"])
    return {"model": res.name, "accelerator": acc.name, "refused": refused, "rows": rows}


def _show(value, unit: str) -> str:
    if unit == "bytes":
        return _gib(value)
    if unit in ("fraction", "x"):
        return f"{float(Fraction(value)):.2f}"
    return f"{int(value):,}"


# The model a vLLM log serves, as its start-up lines name it (vllm/engine/arg_utils.py's
# "non-default args: {'model': ...}", the engine config's "model='...'", the api server's
# "served_model_name=...", or the command line "vllm serve NAME").
_LOG_MODEL = (
    re.compile(r"\bmodel='([^'\s]{1,200})'"),
    re.compile(r"'model': '([^'\s]{1,200})'"),
    re.compile(r"\bserved_model_name=\[?'?([^\s,'\]]{1,200})"),
    re.compile(r"\bvllm serve ([^\s-][^\s]{0,199})"),
)


def log_model(text: str) -> tuple[str, int] | None:
    """The model the log ``text`` serves and the 1-based line that names it first, or None."""
    for no, line in enumerate(text.splitlines(), 1):
        if len(line) > 20_000:
            continue
        for rx in _LOG_MODEL:
            m = rx.search(line)
            if m:
                return m.group(1), no
    return None


def _squash(name: str) -> str:
    """The last part of a model id or path, lower case, letters and digits only."""
    path = name.replace("\\", "/").rstrip("/")
    base = path.rsplit("/", 1)[-1]
    if base.lower() == "config.json":
        # a config.json names its model by its folder; one in the working folder names none (the
        # README's 'reconcile vllm.log config.json' warned on every log)
        base = path.rsplit("/", 2)[-2] if "/" in path else ""
    base = base[:-5] if base.lower().endswith(".json") else base
    return re.sub(r"[^a-z0-9]", "", base.lower())


def same_model(logged: str, names: list[str]) -> bool:
    """Whether the model a log names (``meta-llama/Llama-3.1-8B-Instruct``) and one of
    ``names`` (MODEL as given, its resolved name) could be the same: one's last part contains
    the other's, ignoring case and punctuation (llama-3.1-8b is in Llama-3.1-8B-Instruct).
    A name with no letters or digits proves nothing either way."""
    a = _squash(logged)
    if not a:
        return True
    for n in names:
        b = _squash(n)
        if not b or a in b or b in a:
            return True
    return False


def cmd_reconcile(args, emit) -> int:
    """``symtrans reconcile LOG MODEL --accelerator ACC``: print the rows as text or JSON."""
    from symtrans.analysis.vllm_log import MAX_BYTES, parse
    from symtrans.base.errors import InputError
    from symtrans.base.inputs import read_text
    from symtrans.cli.common import _resolve

    text = read_text(args.log, "a vLLM start-up log", MAX_BYTES)
    figs = parse(text)
    # the settings alone (--tensor-parallel-size 8, --max-model-len, a version) also appear in
    # prose such as a README: a start-up log has at least one memory or KV-budget line
    settings = {"tensor_parallel", "max_model_len", "version", "utilisation"}
    if not set(figs.figures) - settings:
        raise InputError(
            f"{args.log[:80]}: no line of a vLLM start-up log found (weights, KV cache memory, GPU blocks, "
            "'GPU KV cache size', 'Maximum concurrency')"
        )
    args.engine = "vllm"
    taken = _settings_from_log(args, figs)
    res = _resolve(args)
    named = log_model(text)
    if named is not None and not same_model(named[0], [args.model, res.name]):
        from symtrans.cli.common import _warn

        _warn(
            args,
            f"the log serves {named[0][:80]!r} (its line {named[1]}), not {args.model[:80]!r} as far as the names "
            "tell: its figures are another model's unless MODEL is that checkpoint's config",
        )
    r = reconcile_result(res, args, figs)
    r["from_log"] = taken
    r["engine"] = eng = _assumed_engine(args, figs)
    if args.format == "json":
        out = {**r, "rows": [{k: (str(v) if isinstance(v, Fraction) else v) for k, v in x.items()} for x in r["rows"]]}
        emit(args, json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    lines = [
        f"{r['model']} on {r['accelerator']}: the log's figures beside symtrans's (--engine vllm)"
        + (f"; from the log: {', '.join(taken)}" if taken else ""),
        f"engine profile: vLLM {eng['version']} (rules of the {eng['profile']} line), from {eng['source']}",
        f"  {'line':>5}  {'figure':<40} {'logged':>14} {'symtrans':>14} {'difference':>12}",
    ]
    for x in r["rows"]:
        pct = "" if x["percent"] is None else f" ({x['percent']:+.1f} %)"
        lines.append(
            f"  {x['line']:>5}  {x['figure'][:40]:<40} {_show(x['logged'], x['unit']):>14} "
            f"{_show(x['symtrans'], x['unit']):>14} {_show(x['difference'], x['unit']):>12}{pct}"
        )
        lines.append(f"         term: {x['term']}")
    emit(args, "\n".join(lines))
    return 0
