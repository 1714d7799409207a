"""``symtrans memory --inference`` of a model whose cache is stated per sequence (DeepSeek-V4).

DeepSeek-V4's cache is not linear in the length L (a window of w - 1 keys, floor(L/m)
compressed entries, L mod m open tokens: ``memory.kv_cache_bytes``, ``Step.held``), so it has
no KV cache per token; and its activations (compressors, the lightning indexer) are not
modelled, so neither is an inference total or its margin.  What is exact is stated: the
weights (``memory.inference_weights_bytes``) and the cache of B sequences of L tokens, with
its closed form; the rest is ``null`` in JSON and "not modelled" in text, with the reason.
Training memory is refused in one line (its activations are the bulk of it).
"""

from __future__ import annotations

from symtrans.base.errors import InputError

NOT_MODELLED = {
    "activations_bytes": "DeepSeek-V4's activations (compressors, lightning indexer) are not modelled",
    "kv_cache_bytes_per_token": "the cache is not linear in L (a window, compressed entries every m tokens, "
    "open tokens): it is stated per sequence",
    "margin_bytes": "a fraction of weights + cache + activations, and the activations are not modelled",
    "total_bytes": "weights + cache + activations + margin, and the activations are not modelled",
}


def holds_cache(spec) -> bool:
    """Whether ``spec``'s cache is stated per sequence (``Cost.holds``: DeepSeek-V4's steps
    carry ``Step.held``).  Builds the Cost tree (SymPy): call it off the fast path."""
    from symtrans.engine.architectures import build

    return build(spec).holds()


def held_memory_result(res, args, dtype_source) -> dict:
    """The JSON object of ``symtrans memory --inference`` for a model whose cache is stated per
    sequence: ``weights_bytes``, ``kv_cache_bytes`` (B sequences) and
    ``kv_cache_bytes_per_sequence`` exact, with closed forms; the keys of ``NOT_MODELLED``
    null, with ``not_modelled`` giving the reasons.  ``dtype_source``: the CLI's
    ``(checkpoint, given, dtype) -> dict`` of where the weights' dtype came from.

    Raises:
        InputError: training memory (no ``--inference``), an activations option (eager or
            FlashAttention), a cache dtype other than the model's (``memory.kv_cache_bytes``).
    """
    import sympy as sp

    from symtrans.accounting.memory import inference_weights_bytes, kv_cache_bytes
    from symtrans.accounting.quantization import weight_format
    from symtrans.accounting.roofline import default_kv_dtype
    from symtrans.catalog.resolve import seq_len_warning
    from symtrans.cli.common import _warn
    from symtrans.engine import symbols as S
    from symtrans.engine.evaluate import exact
    from symtrans.engine.simplify import closed_form

    spec = res.spec
    if not args.inference:
        raise InputError(
            "training memory of DeepSeek-V4 is not modelled (its activations: compressors, lightning indexer); "
            "--inference gives its weights and its cache per sequence"
        )
    if args.eager_attention or args.flash_attention:
        raise InputError(
            "--eager-attention and --flash-attention change activations, which are not modelled for DeepSeek-V4"
        )
    if args.zero != 0 or args.dp is not None:
        raise InputError("--zero and --dp apply to training memory; --inference counts one replica: leave them out")
    seq = args.seq_len if args.seq_len is not None else spec.values.get("L")
    if seq is None:
        raise InputError("give --seq-len (the model has no sequence length L)")
    v = spec.values
    v.update(B=args.batch, L=seq)
    w = seq_len_warning(spec, v)
    if w:
        _warn(args, w)
    fmt, notes = weight_format(getattr(res, "checkpoint", None), args.dtype, args.quantization)
    fmt.check(spec, v)
    kv_dtype = args.kv_dtype or default_kv_dtype(fmt.dtype)
    B, L = S.B, S.L
    not_modelled = dict(NOT_MODELLED)
    if fmt.quantization is None:
        weights = inference_weights_bytes(spec, fmt.dtype)
    else:  # which of V4's matrices a server quantizes is not checked: no figure rather than a guess
        weights = None
        not_modelled = {
            "weights_bytes": f"{fmt.quantization.name} weights of DeepSeek-V4 are not checked "
            "(--quantization none gives them in the weights' dtype)",
            **not_modelled,
        }
    cache = kv_cache_bytes(spec, B, L, kv_dtype)
    per_sequence = kv_cache_bytes(spec, 1, L, kv_dtype)
    out = {
        "model": res.name,
        "mode": "inference",
        "unit": "bytes",
        "dtype": fmt.dtype,
        "quantization": fmt.quantization.name if fmt.quantization else None,
        "kv_dtype": kv_dtype,
        "batch": args.batch,
        "seq_len": seq,
        "seq_len_source": "--seq-len" if args.seq_len is not None else res.seq_len_source,
        **dtype_source(getattr(res, "checkpoint", None), args.dtype, fmt.dtype),
        "flash_attention": False,
        "eager_attention": False,
        "weights_bytes": None if weights is None else int(exact(weights, v)),
        "gradients_bytes": 0,
        "optimizer_bytes": 0,
        "kv_cache_bytes": int(exact(cache, v)),  # whole bytes: elements x 2 or 4
        "kv_cache_bytes_per_sequence": int(exact(per_sequence, v)),
        **{k: None for k in not_modelled},
        "not_modelled": not_modelled,
        "closed_forms": {"kv_cache_bytes": str(cache)},
        "notes": notes
        + [
            "DeepSeek-V4's cache after L tokens (transformers' DeepseekV4 caches): per layer a window of "
            "min(L, w - 1) keys (K = V), floor(L/m) compressed entries and L mod m open tokens; CSA's overlap "
            "gates at fp32"
        ],
    }
    if weights is not None:
        out["closed_forms"]["weights_bytes"] = str(weights if weights.has(sp.ceiling) else closed_form(weights))
    return out


def held_memory_lines(r: dict, bytes_text) -> list[str]:
    """The text of ``held_memory_result``: the stated figures, then each one not modelled with
    its reason.  ``bytes_text``: the CLI's byte formatter."""
    head = f"{r['model']}: inference memory per rank at B={r['batch']}, L={r['seq_len']}, weights {r['dtype']}"
    head += (f" ({r['quantization']})" if r["quantization"] else "") + f", KV cache {r['kv_dtype']}"
    lines = [head, f"  L = {r['seq_len']:,}: {r['seq_len_source']}", f"  weights {r['dtype']}: {r['dtype_from']}"]
    rows = [("weights", bytes_text(r["weights_bytes"]))] if r["weights_bytes"] is not None else []
    rows += [
        ("KV cache", bytes_text(r["kv_cache_bytes"])),
        ("  per sequence", bytes_text(r["kv_cache_bytes_per_sequence"])),
    ]
    labels = {
        "weights_bytes": "weights",
        "activations_bytes": "activations",
        "kv_cache_bytes_per_token": "KV cache per token",
        "margin_bytes": "margin",
        "total_bytes": "total",
    }
    rows += [(labels[k], f"not modelled: {why}") for k, why in r["not_modelled"].items()]
    width = max(len(a) for a, _ in rows)
    lines += [f"  {label:<{width}}  {text}" for label, text in rows]
    lines.append(f"  KV cache closed form: {r['closed_forms']['kv_cache_bytes']}")
    lines.append("  units: GiB = 2^30 bytes (binary), GB = 10^9 bytes (decimal)")
    lines += [f"  note: {n}" for n in r["notes"]]
    return lines
