"""The "Deployment plan" section of a derivation report (``symtrans report MODEL --deploy ACCELERATOR``).

Built from the JSON object ``symtrans deploy --format json`` prints (``cli.deploy.deploy_result``),
so the report shows the plan the CLI prints and recomputes nothing: the memory per device, each
closed form of the plan as formula, substitution and value, vLLM's two start-up lines, the
serving times and the plan's assumptions. Exact numbers arrive as ints or ``"p/q"`` strings.
The section's prose is translated (``--lang``); names, formulas and notes are data text, escaped by
each writer.
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


def vllm_lines(r: dict) -> tuple[str, str]:
    """The two lines vLLM prints at start-up for the plan ``r`` (``deploy_result``), quoted:
    its KV cache budget in tokens and its maximum concurrency for one request of prompt +
    generate tokens (vllm/v1/core/kv_cache_utils.py), two decimals.  ``symtrans deploy``'s
    text and the report's deploy section both quote these."""
    req = r["workload"]["prompt"] + r["workload"]["generate"]
    return (
        f"'GPU KV cache size: {grouped(r['token_budget'])} tokens'",
        f"'Maximum concurrency for {grouped(req)} tokens per request: {float(_f(r['vllm_concurrency'])):.2f}x'",
    )


def report_section(r: dict) -> dict:
    """The keyword arguments of ``render.report.doc.add_section``: the section and the one it follows.

    The section's own prose is message ids (``doc.msg``), translated into the report's language;
    names, numbers, formulas, vLLM's quoted log lines and the plan's assumptions, defaults and notes
    (which carry the plan's own figures) are data text, the same in every language; the closed
    forms' names and the memory terms are data messages (``doc.data_msg``).

    Args:
        r: the plan as ``symtrans deploy --format json`` prints it.
    """
    from symtrans.accounting.quantization import TERM_LABELS
    from symtrans.render.report import doc
    from symtrans.render.report.doc import N_

    a, w, m, wl = r["accelerator"], r["weights"], r["memory_per_device"], r["workload"]
    quant = f", {w['quantization']}" if w["quantization"] else ""
    engine = r["engine"]
    u = f"{float(_f(wl['gpu_memory_utilization'])):g}"
    blocks: list = [
        doc.Bullets(
            (
                doc.msg(
                    N_(
                        "{model} on {devices} x {accelerator} ({replicas} of tensor parallelism {tp}); weights {weights}; KV cache {kv}"
                    ),
                    model=r["model"],
                    devices=str(r["devices"]),
                    accelerator=a["name"],
                    replicas=doc.msg(
                        N_("{n} replicas") if r["replicas"] > 1 else N_("{n} replica"), n=str(r["replicas"])
                    ),
                    tp=str(r["tensor_parallel"]),
                    weights=f"{w['dtype']}{quant}",
                    kv=w["kv_dtype"],
                ),
                doc.msg(
                    N_(
                        "{accelerator}: peak {peak} {precision}, {bandwidth}, {memory} per device, of which CUDA reports {cuda}; source: {source}"
                    ),
                    accelerator=a["name"],
                    peak=si(a["peak_flops_per_second"], "FLOP/s"),
                    precision=a["precision"],
                    bandwidth=si(a["bandwidth_bytes_per_second"], "B/s", 2),
                    memory=_bytes(a["memory_bytes"]),
                    cuda=_bytes(a["cuda_visible_bytes"]),
                    source=a["source"],
                ),
                doc.msg(
                    N_(
                        "engine {engine}; request {prompt} prompt + {generate} generated tokens; gpu_memory_utilization {u}; block size {block}"
                    ),
                    engine=engine["name"] + (f" {engine['version']}" if engine["version"] else ""),
                    prompt=grouped(wl["prompt"]),
                    generate=grouped(wl["generate"]),
                    u=u,
                    block=str(wl["block_size"]),
                ),
            )
        )
    ]
    rows = [
        (doc.msg(N_("weights (once)")), _bytes(m["weights"])),
        (doc.msg(N_("KV cache per token")), _bytes(m["kv_cache_per_token"])),
        (doc.msg(N_("KV cache per request")), _bytes(m["kv_cache_per_request"])),
        (
            doc.msg(
                N_("KV cache allocated ({blocks} blocks of {block} tokens)"),
                blocks=grouped(m["kv_blocks"]),
                block=str(wl["block_size"]),
            ),
            _bytes(m["kv_cache_allocated"]),
        ),
        (doc.msg(N_("of which {n} requests hold"), n=grouped(r["batch_per_replica"])), _bytes(m["kv_cache_at_batch"])),
        (
            doc.msg(
                N_("activation reserve (default)") if m["activation_reserve_default"] else N_("activation reserve")
            ),
            _bytes(m["activation_reserve"]),
        ),
        *((doc.data_msg(k), _bytes(v)) for k, v in engine["terms"].items()),
        (doc.msg(N_("usable at utilisation {u}"), u=u), _bytes(m["usable"])),
        (doc.msg(N_("headroom")), _bytes(m["headroom"])),
    ]
    term, nbytes = doc.msg(N_("term")), doc.Column(doc.msg(N_("bytes")), "r")
    blocks.append(doc.Bullets((doc.runs(doc.strong(doc.msg(N_("memory per device")))),)))
    blocks.append(doc.table([term, nbytes], rows, small=True))
    if r["weight_terms"] and any(k not in ("unquantized", "vectors") for k in r["weight_terms"]):
        blocks.append(
            doc.Bullets(
                (
                    doc.runs(
                        doc.strong(doc.msg(N_("weights in all: {bytes}"), bytes=_bytes(r["weights_total"]))),
                        f": {w['quantization_layout']}",
                    ),
                )
            )
        )
        blocks.append(
            doc.table(
                [term, nbytes],
                [(doc.data_msg(TERM_LABELS.get(k, k)), _bytes(v)) for k, v in r["weight_terms"].items()],
                small=True,
            )
        )
    blocks.append(doc.Bullets((doc.runs(doc.strong(doc.msg(N_("derivation: formula = substitution = value")))),)))
    blocks.append(
        doc.table(
            [
                doc.msg(N_("quantity")),
                doc.Column(doc.msg(N_("formula")), wrap=0.3),
                doc.Column(doc.msg(N_("substitution")), wrap=0.3),
                doc.Column(doc.msg(N_("value")), "r"),
            ],
            [
                (
                    doc.data_msg(f["name"]),
                    doc.Code(f["formula"]),
                    doc.Code(f["substituted"]),
                    _value(f["value"], f["unit"]),
                )
                for f in r["formulas"]
            ],
            small=True,
            long=True,
        )
    )
    req = grouped(wl["prompt"] + wl["generate"])
    concurrency = dict(
        requests=grouped(r["max_concurrency"]), tokens=req, per_replica=grouped(r["max_concurrency_per_replica"])
    )
    items = [
        doc.msg(
            N_(
                "maximum concurrency: {requests} whole requests of {tokens} tokens ({per_replica} per replica); "
                "vLLM prints {budget_line} and {concurrency_line}"
            ),
            **concurrency,
            **dict(zip(("budget_line", "concurrency_line"), vllm_lines(r))),
        )
        if engine["name"] == "vllm"
        # --engine none models no serving engine: no line of vLLM's to quote
        else doc.msg(
            N_("maximum concurrency: {requests} whole requests of {tokens} tokens ({per_replica} per replica)"),
            **concurrency,
        ),
        doc.msg(
            N_(
                "at {concurrent} concurrent ({per_replica} per replica): TTFT {ttft} ({ttft_bound}), TPOT {tpot} "
                "({tpot_bound}); {tokens_per_second} generated tokens/s, {requests_per_second} requests/s"
            ),
            concurrent=grouped(r["concurrency"]),
            per_replica=grouped(r["batch_per_replica"]),
            ttft=doc.strong(seconds(_f(r["ttft"]["seconds"]))),
            ttft_bound=doc.data_msg(r["ttft"]["bound"]),
            tpot=doc.strong(seconds(_f(r["tpot_seconds"]))),
            tpot_bound=doc.data_msg(r["decode"]["bound"]),
            tokens_per_second=f"{float(_f(r['output_tokens_per_second'])):,.1f}",
            requests_per_second=f"{float(_f(r['requests_per_second'])):,.2f}",
        ),
    ]
    if r.get("mla"):
        ml, d = r["mla"], r["mla"]["decode_flops_per_token"]
        items.append(
            doc.msg(
                N_(
                    "multi-head latent attention decoded {form}: {flops} FLOPs for a token at context {context} "
                    "(absorbed {absorbed}; expanded {expanded})"
                ),
                form=doc.data_msg(ml["form"]),
                flops=f"{float(_f(d[ml['form']])):.4g}",
                context=grouped(ml["context"]),
                absorbed=f"{float(_f(d['absorbed'])):.4g}",
                expanded=f"{float(_f(d['expanded'])):.4g}",
            )
        )
    items.append(
        doc.msg(
            N_("host memory {host}; storage {disk} (checkpoint {checkpoint})"),
            host=_bytes(r["host_bytes"]),
            disk=_bytes(r["disk_bytes"]),
            checkpoint=_bytes(r["checkpoint_bytes"]),
        )
    )
    items += [doc.msg(N_("default: {text}"), text=s) for s in r.get("defaults", ())]
    items += [doc.msg(N_("assumption: {text}"), text=s) for s in r["assumptions"]]
    items += [doc.msg(N_("note: {text}"), text=s) for s in r["notes"]]
    blocks.append(doc.Bullets(tuple(items)))
    section = doc.Section(
        "deployment-plan",
        doc.msg(N_("Deployment plan")),
        blocks,
        data={"token_budget": r["token_budget"], "tpot_seconds": r["tpot_seconds"]},
    )
    return {"section": section, "after": None}
