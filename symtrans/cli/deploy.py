"""The ``deploy`` command: serving capacity of MODEL on accelerators (``accounting.deploy``).

Text shows each figure as its closed form, the substitution and the exact value;
JSON carries the same numbers exactly (integers, or ``"p/q"`` strings for fractions,
never floats).  Bad input (a malformed --accelerator, a zero length, a utilisation
outside (0, 1], a model that does not fit) is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
from fractions import Fraction

from symtrans.cli.arguments import bytes_arg, int_arg, size_arg


def _bytes_arg(name: str, allow_zero: bool = True):
    """argparse ``type=`` for bytes written 0, 85899345920, 16GiB, 100MB (``arguments.bytes_arg``)."""
    return bytes_arg(name, allow_zero)


def add_deploy_parser(sub, common, emit, usage_error) -> None:
    """The ``deploy`` subcommand (registered by ``cli.main.build_parser``)."""

    p = sub.add_parser(
        "deploy",
        help="serving plan: memory per device, max concurrency (vLLM's), TTFT, TPOT, throughput, devices, host, disk",
    )
    common(p, ("text", "json"), "text")
    add_deploy_options(p)
    p.set_defaults(func=lambda args: cmd_deploy(args, emit))


def add_deploy_options(p, accelerator_required: bool = True, accelerator: bool = True) -> None:
    """The options of ``deploy`` (shared with ``reconcile``, and with ``report --deploy``, which
    names the accelerator itself: ``accelerator=False``)."""
    from symtrans.accounting.hardware import ACCELERATORS

    if accelerator:
        p.add_argument(
            "--accelerator",
            required=accelerator_required,
            metavar="NAME|SPEC",
            help=f"one of {', '.join(ACCELERATORS)}, or peak=65e12,bandwidth=320e9,memory=16GiB[,fp8=...][,name=...]",
        )
    p.add_argument("--devices", type=int_arg("--devices"), default=1, metavar="n", help="devices in all (default 1)")
    p.add_argument(
        "--tensor-parallel",
        "--tensor-parallel-size",
        dest="tensor_parallel",
        type=int_arg("--tensor-parallel"),
        default=1,
        metavar="tp",
        help="devices per replica, splitting each layer (default 1); must divide --devices",
    )
    p.add_argument(
        "--dtype",
        default=None,
        metavar="DTYPE",
        help="weight dtype: fp32, bf16, fp16, fp8, int8, int4 (default: the config's torch_dtype, else bf16)",
    )
    p.add_argument(
        "--kv-dtype",
        "--kv-cache-dtype",
        dest="kv_dtype",
        default=None,
        metavar="DTYPE",
        help="KV cache dtype: under --engine vllm, vLLM's auto, bfloat16, fp8, fp8_e4m3, fp8_e5m2; under --engine "
        "none also bf16, fp16, int8, ... (default auto: the model's 16-bit dtype under --engine vllm, as vLLM's "
        "kv_cache_dtype=auto; else the weight dtype)",
    )
    p.add_argument(
        "--engine",
        default="vllm",
        choices=("vllm", "none"),
        help="serving engine whose start-up rules size the KV cache (default vllm; none: the bare formula)",
    )
    p.add_argument(
        "--engine-version",
        default=None,
        metavar="V",
        help="vLLM release: 0.4, 0.6, 0.7, 0.8, latest or 0.x.y (default latest)",
    )
    p.add_argument(
        "--non-torch",
        type=_bytes_arg("--non-torch"),
        default=None,
        metavar="BYTES",
        help="memory outside PyTorch per device: CUDA context, NCCL (default: the vLLM release's logged figure)",
    )
    p.add_argument(
        "--cuda-graphs",
        type=_bytes_arg("--cuda-graphs"),
        default=None,
        metavar="BYTES",
        help="CUDA-graph memory counted against the KV cache (default 0: V1 captures graphs after sizing it)",
    )
    p.add_argument(
        "--max-num-batched-tokens",
        type=size_arg("--max-num-batched-tokens"),
        default=None,
        metavar="T",
        help="tokens of the profiling run (default: vLLM's for the release and device)",
    )
    p.add_argument(
        "--max-num-seqs",
        type=size_arg("--max-num-seqs"),
        default=None,
        metavar="S",
        help="sequences of the profiling run's sampler (default: vLLM's for the release and device)",
    )
    p.add_argument(
        "--max-model-len",
        type=size_arg("--max-model-len"),
        default=None,
        metavar="TOKENS",
        help="tokens of one request, prompt + generated (vLLM's; default: the model's context)",
    )
    p.add_argument(
        "--mla",
        default=None,
        choices=("absorbed", "expanded"),
        help="multi-head latent attention at decode: absorbed (vLLM, SGLang; default under --engine vllm) or "
        "expanded (transformers' eager; default under --engine none)",
    )
    p.add_argument(
        "--enable-prefix-caching",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="vLLM's flag (default: the release's, on from V1, off in V0 and under --engine none); "
        "--shared-prefix needs it on",
    )
    p.add_argument(
        "--shared-prefix",
        type=size_arg("--shared-prefix"),
        default=0,
        metavar="TOKENS",
        help="prompt tokens every request shares (a system prompt): its whole blocks are cached once "
        "(vLLM's automatic prefix caching); raises the whole requests that fit, not the logged budget",
    )
    p.add_argument(
        "--pipeline-parallel-size",
        type=int_arg("--pipeline-parallel-size"),
        default=1,
        metavar="pp",
        help="pipeline stages: layers split as vLLM splits them (get_pp_indices); the KV budget is the most loaded "
        "stage's",
    )
    p.add_argument(
        "--quantization",
        default=None,
        metavar="SPEC",
        help="none, gptq[:bits=4,group_size=128,lm_head=false], awq[:group_size=128], nf4|fp4[:double_quant=true], "
        "bnb-int8, q8_0, q4_0, q4_k, q6_k (default: the config's quantization_config)",
    )
    p.add_argument("--precision", default=None, metavar="P", help="peak used: bf16, fp16 or fp8 (default: the dtype's)")
    p.add_argument(
        "--concurrency",
        type=size_arg("--concurrency"),
        default=None,
        metavar="C",
        help="requests in flight in all (default: as many as fit)",
    )
    p.add_argument(
        "--prompt",
        type=size_arg("--prompt"),
        default=None,
        metavar="L_pre",
        help="prompt tokens per request (default: the context L minus --generate)",
    )
    p.add_argument(
        "--generate", type=size_arg("--generate"), default=None, metavar="T_gen", help="generated tokens (default 1)"
    )
    p.add_argument(
        "--gpu-memory-utilization",
        default=None,
        metavar="U",
        help="fraction of device memory for weights, activations and KV cache, in (0, 1] (vLLM's; default: the "
        "release's, 0.92 in the latest, else 0.9)",
    )
    p.add_argument(
        "--activation-reserve",
        type=_bytes_arg("--activation-reserve"),
        default=None,
        metavar="BYTES",
        help="bytes kept for activations (default: one layer's prefill activations with FlashAttention + logits)",
    )
    p.add_argument(
        "--block-size",
        type=int_arg("--block-size"),
        default=None,
        metavar="TOKENS",
        help="KV cache block in tokens (default 16 under --engine vllm, else 1)",
    )
    p.add_argument("--compute-efficiency", default=None, metavar="E", help="fraction of the peak achieved (default 1)")
    p.add_argument(
        "--bandwidth-efficiency", default=None, metavar="E", help="fraction of the bandwidth achieved (default 1)"
    )
    p.add_argument(
        "--target-latency",
        default=None,
        metavar="SECONDS",
        help="seconds a request may take (its wave's prefill + decode): the batch and devices that meet it",
    )
    p.add_argument(
        "--target-throughput",
        default=None,
        metavar="TOKENS/S",
        help="generated tokens per second wanted in all: the devices it takes",
    )
    p.add_argument(
        "--disk-allowance",
        type=_bytes_arg("--disk-allowance"),
        default=None,
        metavar="BYTES",
        help="bytes beside the checkpoint on disk: tokenizer, config (default 0)",
    )
    p.add_argument(
        "--host-allowance",
        type=_bytes_arg("--host-allowance"),
        default=0,
        metavar="BYTES",
        help="host memory beyond the staged checkpoint: runtime, tokenizer, buffers (default 0)",
    )


# vllm/config/cache.py CacheDType, the values symtrans can size (fp8_inc, Intel Gaudi's, and
# fp8_ds_mla, DeepSeek MLA's packed layout, are left out rather than sized as plain fp8)
VLLM_KV_DTYPES = ("auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2")


def _vllm_auto_dtype(fmt, notes, accelerator):
    """vLLM's ``--dtype auto`` for a float32 config: the platform's first supported dtype
    ("Downcast for float32 models", ``_resolve_auto_dtype`` in vllm/config/model.py), bfloat16
    on a device of compute capability 8.0 or more.  Below it the choice is float16 unless the
    model type refuses float16 (``_FLOAT16_NOT_SUPPORTED_MODELS``: gemma2, gemma3, glm4, ...),
    which is not modelled: the config's float32 is kept there, with a note."""
    from dataclasses import replace

    from symtrans.accounting.hardware import ACCELERATORS

    # a device without bf16 units (hardware.Accelerator.bf16 None: the V100 and T4, compute
    # capability below 8.0, where vLLM's CUDA platform lists no bfloat16)
    name = str(accelerator or "").strip().lower()
    if name in ACCELERATORS and ACCELERATORS[name].bf16 is None:
        notes.append(
            f"weights kept in fp32: vLLM's --dtype auto downcasts float32 configs, to float16 on {name} unless the "
            "model type refuses float16 (vllm/config/model.py, _resolve_auto_dtype); give --dtype fp16 or fp32"
        )
        return fmt, notes
    notes = [n for n in notes if not n.startswith("weights in")]
    custom = (
        ""
        if name in ACCELERATORS
        else " (a device given by its figures is taken to have bf16: give --dtype fp16 if not)"
    )
    notes.append(
        "weights in bf16: the config's torch_dtype is float32, which vLLM's --dtype auto downcasts to the platform's "
        "first supported dtype (vllm/config/model.py, _resolve_auto_dtype: 'Downcast for float32 models'); give "
        f"--dtype fp32 to keep it{custom}"
    )
    return replace(fmt, dtype="bf16"), notes


def _options(args, checkpoint, length_source: str = ""):
    from symtrans.accounting.deploy import DeployOptions
    from symtrans.accounting.hardware import fraction
    from symtrans.accounting.quantization import weight_format
    from symtrans.base.errors import InputError

    fmt, notes = weight_format(checkpoint, args.dtype, args.quantization)
    if args.engine == "vllm" and args.dtype is None and fmt.dtype == "fp32":
        fmt, notes = _vllm_auto_dtype(fmt, notes, getattr(args, "accelerator", None))
    kv = args.kv_dtype
    if kv is not None and args.engine == "vllm" and kv.strip().lower() not in VLLM_KV_DTYPES + ("bf16",):
        raise InputError(
            f"--kv-cache-dtype {kv[:40]!r} is not a vLLM cache dtype: under --engine vllm give "
            f"{', '.join(VLLM_KV_DTYPES)} (vllm/config/cache.py CacheDType); --engine none takes symtrans's wider list"
        )
    aliases = {"auto": None, "fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "bfloat16": "bf16", "float16": "fp16"}
    if kv is not None:
        kv = aliases.get(kv.strip().lower(), kv)
    if kv is None and args.engine == "vllm" and fmt.dtype not in ("fp32", "bf16", "fp16"):
        kv = "bf16"  # vLLM's kv_cache_dtype=auto is the model's activation dtype, not its weights' fp8/int
        notes.append(
            f"KV cache bf16: vLLM's kv_cache_dtype=auto follows the model's 16-bit dtype, not the {fmt.dtype} weights "
            "(vllm/config/cache.py); give --kv-cache-dtype fp8 for an fp8 cache"
        )
    given: dict = {}  # options left out take DeployOptions' defaults (one place for each)
    for key, flag, upper in (
        ("gpu_memory_utilization", "--gpu-memory-utilization", 1),
        ("compute_efficiency", "--compute-efficiency", 1),
        ("bandwidth_efficiency", "--bandwidth-efficiency", 1),
        ("target_latency", "--target-latency", None),
        ("target_throughput", "--target-throughput", None),
    ):
        if getattr(args, key) is not None:
            given["utilisation" if key == "gpu_memory_utilization" else key] = fraction(getattr(args, key), flag, upper)
    for key in ("generate", "disk_allowance"):
        if getattr(args, key) is not None:
            given[key] = getattr(args, key)
    opts = DeployOptions(
        devices=args.devices,
        tensor_parallel=args.tensor_parallel,
        pipeline_parallel=args.pipeline_parallel_size,
        dtype=fmt.dtype,
        kv_dtype=kv,
        quantization=fmt.quantization,
        precision=args.precision,
        concurrency=args.concurrency,
        prompt=args.prompt,
        activation_reserve=args.activation_reserve,
        block_size=args.block_size,
        host_allowance=args.host_allowance,
        engine=args.engine,
        engine_version=args.engine_version,
        non_torch=args.non_torch,
        cuda_graphs=args.cuda_graphs,
        max_num_batched_tokens=args.max_num_batched_tokens,
        max_num_seqs=args.max_num_seqs,
        max_model_len=args.max_model_len,
        shared_prefix=args.shared_prefix,
        prefix_caching=args.enable_prefix_caching,
        serving_context=getattr(checkpoint, "serving_context", None),
        config_positions=getattr(checkpoint, "max_positions", None),
        length_source=length_source,
        mla=args.mla,
        **given,
    )
    return opts, notes


def _mla(spec, p) -> dict:
    """Decode FLOPs per token of the request's last token, both ways (``mla_decode``)."""
    from symtrans.accounting.mla_decode import decode_flops_per_token

    ctx = p.prompt + p.generate
    return {
        "form": p.mla,
        "context": ctx,
        "decode_flops_per_token": {
            f: _x(decode_flops_per_token(spec, spec.values, ctx, f)) for f in ("absorbed", "expanded")
        },
    }


def _x(x):
    """Exact JSON number: int, or 'p/q'."""
    import sympy as sp

    r = sp.Rational(x)
    return int(r) if r.q == 1 else f"{r.p}/{r.q}"


def _hybrid(h) -> dict | None:
    """vLLM's page layout of a hybrid model (``accounting.vllm_hybrid``), or ``None``."""
    if h is None:
        return None
    return {
        "attention_layers": h.attention_layers,
        "state_layers": h.state_layers,
        "attention_bytes_per_token_per_layer": h.attention_bytes,
        "state_bytes_per_layer": h.state_bytes,
        "block_size": h.block_size,
        "page_bytes": h.page,
        "group_size": h.group_size,
        "attention_groups": h.attention_groups,
        "state_groups": h.state_groups,
    }


def _roof(r) -> dict:
    return {
        "flops": _x(r.flops),
        "bytes": _x(r.bytes),
        "seconds": _x(r.time),
        "bound": r.bound,
        "compute_seconds": _x(r.compute_time),
        "memory_seconds": _x(r.memory_time),
    }


def deploy_result(res, args) -> dict:
    """The JSON object of ``symtrans deploy`` (exact numbers)."""
    from symtrans.accounting.deploy import plan
    from symtrans.accounting.hardware import parse_accelerator

    acc = parse_accelerator(args.accelerator)
    opts, notes = _options(args, res.checkpoint, res.seq_len_source)
    p = plan(res.spec, acc, opts)
    o = p.options
    out = {
        "model": res.name,
        "accelerator": {
            "name": acc.name,
            "source": acc.source,
            "precision": p.precision,
            "peak_flops_per_second": acc.peak(p.precision),
            "bandwidth_bytes_per_second": acc.bandwidth,
            "memory_bytes": acc.memory,
            "cuda_visible_bytes": p.device_memory,
        },
        "engine": {"name": o.engine, "version": o.engine_version, "terms": p.engine_terms},
        "mla": _mla(res.spec, p) if p.mla else None,
        "devices": o.devices,
        "tensor_parallel": o.tensor_parallel,
        "replicas": p.replicas,
        "weights": {
            "dtype": o.dtype,
            "quantization": o.quantization.name if o.quantization else None,
            "quantization_layout": o.quantization.describe() if o.quantization else None,
            "kv_dtype": p.kv_dtype,
        },
        "workload": {
            "prompt": p.prompt,
            "generate": p.generate,
            "tokens_per_request": p.tokens_per_request,
            "gpu_memory_utilization": _x(o.utilisation),
            "block_size": o.block_size,
            "shared_prefix": o.shared_prefix,
            "compute_efficiency": _x(o.compute_efficiency),
            "bandwidth_efficiency": _x(o.bandwidth_efficiency),
        },
        "memory_per_device": {
            "weights": p.weights_per_device,
            "kv_cache_per_token": p.kv_bytes_per_token,
            "kv_cache_per_request": p.kv_bytes_per_request,
            "kv_cache_allocated": p.kv_cache_allocated,
            "kv_blocks": p.kv_blocks,
            "kv_cache_at_batch": p.kv_cache_at_batch,
            "activation_reserve": p.activation_reserve,
            "activation_reserve_default": p.reserve_is_default,
            "usable": _x(p.usable),
            "headroom": _x(p.device_memory - p.usable),
        },
        "weights_total": p.weights_total,
        "weight_terms": {k: _x(v) for k, v in p.weight_terms.items()},
        "token_budget": p.token_budget,
        # vLLM's 'Maximum concurrency' line: budget / max_model_len, or blocks over a hybrid request's
        # blocks; null under --engine none, which models no serving engine to quote
        "vllm_concurrency": _x(
            p.vllm_concurrency if p.vllm_concurrency is not None else Fraction(p.token_budget, p.prompt + p.generate)
        )
        if o.engine == "vllm"
        else None,
        "hybrid": _hybrid(p.hybrid),
        "pipeline_stages": [
            {"layers": s.layers, "weights": s.weights, "kv_cache_per_token": s.kv_bytes_per_token, "logits": s.logits}
            for s in p.stages
        ],
        "max_concurrency_per_replica": p.max_concurrency,
        "max_concurrency": p.max_concurrency * p.replicas,
        "batch_per_replica": p.batch,
        "batch_bound": p.batch_bound,
        "concurrency": p.concurrency,
        "ttft": _roof(p.ttft),
        "decode": _roof(p.decode),
        "tpot_seconds": _x(p.tpot),
        "wave_seconds": _x(p.wave_seconds),
        "requests_per_second": _x(p.requests_per_second),
        "output_tokens_per_second": _x(p.output_tokens_per_second),
        "decode_tokens_per_second": _x(p.decode_tokens_per_second),
        "checkpoint_bytes": p.checkpoint_bytes,
        "disk_bytes": p.disk_bytes,
        "host_bytes": p.host_bytes,
        "allowances": {"disk": o.disk_allowance, "host": o.host_allowance},
        "targets": {
            k: {kk: _x(vv) if not isinstance(vv, bool) else vv for kk, vv in t.items()} for k, t in p.targets.items()
        },
        "formulas": [
            {"name": f.name, "formula": f.formula, "substituted": f.substituted, "value": _x(f.value), "unit": f.unit}
            for f in p.formulas
        ],
        "defaults": p.defaults,
        "assumptions": p.assumptions,
        "notes": notes
        + list(res.notes)
        + (
            [
                f"{p.generate} generated token per request (the default of --generate): the throughput above is "
                "the rate of whole requests, mostly prefill; give --generate (and --prompt) for a serving mix"
            ]
            if args.generate is None and p.generate == 1
            else []
        ),
    }
    if res.preset is not None:
        from symtrans.catalog import deploy_handcount

        if res.preset.name == deploy_handcount.PRESET:
            out["hand_count"] = deploy_handcount.as_json()
    return out


def with_deploy_section(res, args, defaults: dict):
    """``res`` with a "Deployment plan" report section for ``report MODEL --deploy ACCELERATOR [deploy options]``:
    the plan ``deploy --format json`` prints for the same model and options (``deploy_result``),
    rendered by ``render.deploy_section``; nothing is recomputed.

    Args:
        res: the report's resolved model.
        args: the report's arguments; ``args.deploy`` is the accelerator (``None``: no section).
        defaults: each deploy option's destination and default, to refuse one given without ``--deploy``.

    Raises:
        UsageError: a deploy option without ``--deploy`` (one line); InputError: a plan deploy refuses.
    """
    from dataclasses import replace

    from symtrans.cli.common import UsageError
    from symtrans.render.deploy_section import report_section

    if args.deploy is None:
        given = sorted(flag for dest, (flag, default) in defaults.items() if getattr(args, dest) != default)
        if given:
            raise UsageError(
                f"symtrans report: {given[0]} is an option of the deployment plan; give --deploy ACCELERATOR"
            )
        return res
    args.accelerator = args.deploy
    return replace(res, sections=res.sections + (report_section(deploy_result(res, args)),))


def _seconds(x) -> str:
    """Seconds as s, ms or µs: ``base.numbers.seconds``, the one formatter of times."""
    from symtrans.base.numbers import seconds

    return seconds(x)


def _bytes(n) -> str:
    from fractions import Fraction

    from symtrans.base.numbers import binary_bytes, grouped, si

    f = Fraction(n) if not isinstance(n, str) else Fraction(n)
    exact = grouped(f.numerator) if f.denominator == 1 else f"{float(f):,.1f}"
    if abs(f) < 1024:
        return f"{exact} bytes"
    return f"{exact} bytes = {binary_bytes(f)} = {si(f, 'B', 2)}"


def _value(f) -> str:
    if f.unit == "bytes":
        return _bytes(int(f.value))
    if f.unit == "s":
        return _seconds(f.value)
    if f.unit == "tokens/s":
        return f"{float(f.value):,.1f} tokens/s"
    return f"{int(f.value):,} {f.unit}"


def deploy_text(r: dict) -> str:
    """The text of ``symtrans deploy`` from its JSON object."""
    from fractions import Fraction

    from symtrans.base.numbers import si

    a, w, m = r["accelerator"], r["weights"], r["memory_per_device"]
    quant = f", {w['quantization']}" if w["quantization"] else ""
    lines = [
        f"{r['model']} on {r['devices']} x {a['name']} ({r['replicas']} replica{'s' if r['replicas'] > 1 else ''} of "
        f"tensor parallelism {r['tensor_parallel']}); weights {w['dtype']}{quant}, KV cache {w['kv_dtype']}; peak {si(a['peak_flops_per_second'], 'FLOP/s')} "
        f"{a['precision']}, {si(a['bandwidth_bytes_per_second'], 'B/s', 2)}, {_bytes(a['memory_bytes'])} per device",
        f"  source: {a['source']}",
        f"  request: {r['workload']['prompt']:,} prompt + {r['workload']['generate']:,} generated tokens"
        + (
            ""
            if r["workload"]["tokens_per_request"] == r["workload"]["prompt"] + r["workload"]["generate"]
            else f" (its KV cache takes what {r['workload']['tokens_per_request']:,} tokens in every layer would: "
            "windowed layers hold their window)"
        ),
        "  memory per device:",
        f"    weights (once)               {_bytes(m['weights'])}",
        f"    KV cache per request         {_bytes(m['kv_cache_per_request'])} "
        f"({m['kv_cache_per_token']:,} bytes per token)",
        f"    KV cache allocated           {_bytes(m['kv_cache_allocated'])} ({m['kv_blocks']:,} blocks of "
        f"{r['workload']['block_size']} tokens, whatever the batch)",
        f"      of which {r['batch_per_replica']:,} requests hold {_bytes(m['kv_cache_at_batch'])}"
        + (" (the shared prefix's blocks once)" if r["workload"].get("shared_prefix") else ""),
        f"    activation reserve           {_bytes(m['activation_reserve'])}"
        + (" (default)" if m["activation_reserve_default"] else ""),
        f"    usable at utilisation {float(Fraction(r['workload']['gpu_memory_utilization'])):g}  {_bytes(Fraction(m['usable']))} "
        f"(of {_bytes(a['cuda_visible_bytes'])}, rounded down to a whole byte); headroom {_bytes(Fraction(m['headroom']))}",
    ]
    for k, v in r["engine"]["terms"].items():
        lines.append(f"    {k:<29}{_bytes(v)}")
    if r["weight_terms"] and any(k not in ("unquantized", "vectors") for k in r["weight_terms"]):
        from symtrans.accounting.quantization import TERM_LABELS

        lines.append(f"  weights in all: {_bytes(r['weights_total'])}: {w['quantization_layout']}")
        for k, v in r["weight_terms"].items():
            lines.append(f"    {TERM_LABELS[k]:<30}{_bytes(Fraction(v))}")
    lines.append("  closed forms:")
    for f in r["_formulas"]:
        lines.append(f"    {f.name}: {f.formula} = {f.substituted} = {_value(f)}")
    req = r["workload"]["prompt"] + r["workload"]["generate"]
    concurrency = (
        f"  maximum concurrency: {r['max_concurrency']:,} whole requests of {req:,} tokens "
        f"({r['max_concurrency_per_replica']:,} per replica)"
    )
    if r["engine"]["name"] == "vllm":  # --engine none models no serving engine: no vLLM line to quote
        from symtrans.render.deploy_section import vllm_lines

        concurrency += "; vLLM prints: {} and {}".format(*vllm_lines(r))
    lines.append(concurrency)
    lines.append(
        f"  at {r['concurrency']:,} concurrent ({r['batch_per_replica']:,} per replica, bound by {r['batch_bound']}): TTFT {_seconds(Fraction(r['ttft']['seconds']))} "
        f"({r['ttft']['bound']}), TPOT {_seconds(Fraction(r['tpot_seconds']))} ({r['decode']['bound']}), "
        f"{float(Fraction(r['output_tokens_per_second'])):,.1f} generated tokens/s and "
        f"{float(Fraction(r['requests_per_second'])):,.2f} requests/s in waves, "
        f"{float(Fraction(r['decode_tokens_per_second'])):,.1f} tokens/s while decoding"
    )
    if r.get("mla"):
        ml = r["mla"]
        d = ml["decode_flops_per_token"]
        lines.append(
            f"  multi-head latent attention decoded {ml['form']}: {float(Fraction(d[ml['form']])):.4g} FLOPs for a token "
            f"at context {ml['context']:,} (absorbed {float(Fraction(d['absorbed'])):.4g}, vLLM and SGLang; expanded "
            f"{float(Fraction(d['expanded'])):.4g}, transformers' eager re-expanding the cache; --mla)"
        )
    t = r["targets"]
    if "latency" in t:
        lt = t["latency"]
        if lt["reachable"]:
            lines.append(
                f"  target latency {_seconds(Fraction(lt['target']))}: up to {lt['batch']:,} requests per replica "
                f"({_seconds(Fraction(lt['latency']))})"
                + (f"; {lt['devices']:,} devices for {r['concurrency']:,} requests" if "devices" in lt else "")
            )
        else:
            lines.append(
                f"  target latency {_seconds(Fraction(lt['target']))}: not reachable at --tensor-parallel "
                f"{r['tensor_parallel']}; a request alone takes {_seconds(Fraction(lt['minimum']))}"
            )
    if "throughput" in t:
        tt = t["throughput"]
        lines.append(
            f"  target throughput {float(Fraction(tt['target'])):,.1f} tokens/s: {tt['replicas']:,} replicas at batch "
            f"{tt['batch']:,} ({float(Fraction(tt['per_replica'])):,.1f} tokens/s each) = {tt['devices']:,} devices"
        )
    lines.append(
        f"  host memory {_bytes(r['host_bytes'])}; storage {_bytes(r['disk_bytes'])} "
        f"(checkpoint {_bytes(r['checkpoint_bytes'])})"
    )
    for s in r["defaults"]:
        lines.append(f"  default: {s}")
    for s in r["assumptions"]:
        lines.append(f"  assumption: {s}")
    for n in r["notes"]:
        lines.append(f"  note: {n}")
    return "\n".join(lines)


def cmd_deploy(args, emit) -> int:
    """``symtrans deploy``: print the plan as JSON or text (and article 001's hand count
    for its model)."""
    from symtrans.catalog import deploy_handcount as hc
    from symtrans.cli.common import _resolve

    alias = args.model == hc.HANDCOUNT
    if alias:  # the article's figures, on its model under its assumptions
        args.model = hc.PRESET
        for key, value in (("dtype", "fp16"), ("compute_efficiency", "7/10"), ("disk_allowance", 100 * 10**6)):
            if getattr(args, key) is None:
                setattr(args, key, value)
    res = _resolve(args)
    r = deploy_result(res, args)
    if alias:
        r["notes"].append(
            f"{hc.HANDCOUNT}: the article's fp16 weights, 70% of the peak and 100 MB beside the checkpoint, "
            "unless given"
        )
    if args.format == "json":
        emit(args, json.dumps(r, indent=2, ensure_ascii=False))
        return 0
    from symtrans.accounting.deploy import Formula

    r["_formulas"] = [
        Formula(f["name"], f["formula"], f["substituted"], _frac(f["value"]), f["unit"]) for f in r["formulas"]
    ]
    text = deploy_text(r)
    if "hand_count" in r:
        from symtrans.catalog.deploy_handcount import lines

        text += "\n" + "\n".join(lines())
    emit(args, text)
    return 0


def _frac(x):
    import sympy as sp

    if isinstance(x, str):
        p, _, q = x.partition("/")
        return sp.Rational(int(p), int(q))
    return sp.Integer(x)
