"""The "Deployment plan" section of a derivation report (``symtrans report MODEL --deploy ACCELERATOR``).

Built from the JSON object ``symtrans deploy --format json`` prints (``cli.deploy.deploy_result``),
so the report shows the plan the CLI prints and recomputes nothing: the memory per device, each
closed form of the plan as formula, substitution and value, vLLM's two start-up lines, the
serving times and the plan's assumptions. Exact numbers arrive as ints or ``"p/q"`` strings.
Names, formulas and notes are data text, escaped by each writer.
"""

from __future__ import annotations

from fractions import Fraction

from symtrans.base.numbers import binary_bytes, grouped, seconds, si


def _f(x) -> Fraction:
    """An exact JSON number of the plan (int or ``"p/q"``) as a Fraction."""
    return Fraction(x)


def _bytes(x) -> str:
    f = _f(x)
    exact = grouped(f.numerator) if f.denominator == 1 else f"{float(f):,.1f}"
    return f"{exact} B" if abs(f) < 1024 else f"{exact} B = {binary_bytes(f)}"


def _value(value, unit: str) -> str:
    """A closed form's value in its unit, as ``symtrans deploy`` prints it."""
    if unit == "bytes":
        return _bytes(value)
    if unit == "s":
        return seconds(_f(value))
    if unit == "tokens/s":
        return f"{float(_f(value)):,.1f} tokens/s"
    return f"{grouped(int(_f(value)))} {unit}"


def report_section(r: dict) -> dict:
    """The keyword arguments of ``render.report.doc.add_section``: the section and the one it follows.

    Args:
        r: the plan as ``symtrans deploy --format json`` prints it.
    """
    from symtrans.accounting.quantization import TERM_LABELS
    from symtrans.render.report import doc

    a, w, m, wl = r["accelerator"], r["weights"], r["memory_per_device"], r["workload"]
    quant = f", {w['quantization']}" if w["quantization"] else ""
    replicas = f"{r['replicas']} replica{'s' if r['replicas'] > 1 else ''}"
    engine = r["engine"]
    blocks: list = [
        doc.Bullets(
            (
                doc.runs(
                    f"{r['model']} on {r['devices']} x {a['name']} ({replicas} of tensor parallelism "
                    f"{r['tensor_parallel']}); weights {w['dtype']}{quant}; KV cache {w['kv_dtype']}"
                ),
                doc.runs(
                    f"{a['name']}: peak {si(a['peak_flops_per_second'], 'FLOP/s')} {a['precision']}, "
                    f"{si(a['bandwidth_bytes_per_second'], 'B/s', 2)}, {_bytes(a['memory_bytes'])} per device, of which "
                    f"CUDA reports {_bytes(a['cuda_visible_bytes'])}; source: {a['source']}"
                ),
                doc.runs(
                    f"engine {engine['name']}" + (f" {engine['version']}" if engine["version"] else "") + "; "
                    f"request {grouped(wl['prompt'])} prompt + {grouped(wl['generate'])} generated tokens; "
                    f"gpu_memory_utilization {float(_f(wl['gpu_memory_utilization'])):g}; block size {wl['block_size']}"
                ),
            )
        )
    ]
    rows = [
        ("weights (once)", _bytes(m["weights"])),
        ("KV cache per token", _bytes(m["kv_cache_per_token"])),
        ("KV cache per request", _bytes(m["kv_cache_per_request"])),
        (
            f"KV cache allocated ({grouped(m['kv_blocks'])} blocks of {wl['block_size']} tokens)",
            _bytes(m["kv_cache_allocated"]),
        ),
        (f"of which {grouped(r['batch_per_replica'])} requests hold", _bytes(m["kv_cache_at_batch"])),
        (
            "activation reserve" + (" (default)" if m["activation_reserve_default"] else ""),
            _bytes(m["activation_reserve"]),
        ),
        *((k, _bytes(v)) for k, v in engine["terms"].items()),
        (f"usable at utilisation {float(_f(wl['gpu_memory_utilization'])):g}", _bytes(m["usable"])),
        ("headroom", _bytes(m["headroom"])),
    ]
    blocks.append(doc.Bullets((doc.runs(doc.strong("memory per device")),)))
    blocks.append(doc.table([doc.runs("term"), doc.Column(doc.runs("bytes"), "r")], rows, small=True))
    if r["weight_terms"] and any(k not in ("unquantized", "vectors") for k in r["weight_terms"]):
        blocks.append(
            doc.Bullets(
                (
                    doc.runs(
                        doc.strong(f"weights in all: {_bytes(r['weights_total'])}"), f": {w['quantization_layout']}"
                    ),
                )
            )
        )
        blocks.append(
            doc.table(
                [doc.runs("term"), doc.Column(doc.runs("bytes"), "r")],
                [(TERM_LABELS.get(k, k), _bytes(v)) for k, v in r["weight_terms"].items()],
                small=True,
            )
        )
    blocks.append(doc.Bullets((doc.runs(doc.strong("derivation: formula = substitution = value")),)))
    blocks.append(
        doc.table(
            [
                doc.runs("quantity"),
                doc.Column(doc.runs("formula"), wrap=0.3),
                doc.Column(doc.runs("substitution"), wrap=0.3),
                doc.Column(doc.runs("value"), "r"),
            ],
            [
                (f["name"], doc.Code(f["formula"]), doc.Code(f["substituted"]), _value(f["value"], f["unit"]))
                for f in r["formulas"]
            ],
            small=True,
            long=True,
        )
    )
    req = wl["prompt"] + wl["generate"]
    items = [
        doc.runs(
            f"maximum concurrency: {grouped(r['max_concurrency'])} whole requests of {grouped(req)} tokens "
            f"({grouped(r['max_concurrency_per_replica'])} per replica); vLLM prints 'GPU KV cache size: "
            f"{grouped(r['token_budget'])} tokens' and 'Maximum concurrency for {grouped(req)} tokens per request: "
            f"{float(_f(r['vllm_concurrency'])):.2f}x'"
        ),
        doc.runs(
            f"at {grouped(r['concurrency'])} concurrent ({grouped(r['batch_per_replica'])} per replica): TTFT ",
            doc.strong(seconds(_f(r["ttft"]["seconds"]))),
            f" ({r['ttft']['bound']}), TPOT ",
            doc.strong(seconds(_f(r["tpot_seconds"]))),
            f" ({r['decode']['bound']}); {float(_f(r['output_tokens_per_second'])):,.1f} generated tokens/s, "
            f"{float(_f(r['requests_per_second'])):,.2f} requests/s",
        ),
    ]
    if r.get("mla"):
        ml, d = r["mla"], r["mla"]["decode_flops_per_token"]
        items.append(
            doc.runs(
                f"multi-head latent attention decoded {ml['form']}: {float(_f(d[ml['form']])):.4g} FLOPs for a token at "
                f"context {grouped(ml['context'])} (absorbed {float(_f(d['absorbed'])):.4g}; expanded "
                f"{float(_f(d['expanded'])):.4g})"
            )
        )
    items.append(
        doc.runs(
            f"host memory {_bytes(r['host_bytes'])}; storage {_bytes(r['disk_bytes'])} "
            f"(checkpoint {_bytes(r['checkpoint_bytes'])})"
        )
    )
    items += [doc.runs(f"default: {s}") for s in r.get("defaults", ())]
    items += [doc.runs(f"assumption: {s}") for s in r["assumptions"]]
    items += [doc.runs(f"note: {s}") for s in r["notes"]]
    blocks.append(doc.Bullets(tuple(items)))
    section = doc.Section(
        "deployment-plan",
        doc.runs("Deployment plan"),
        blocks,
        data={"token_budget": r["token_budget"], "tpot_seconds": r["tpot_seconds"]},
    )
    return {"section": section, "after": None}
