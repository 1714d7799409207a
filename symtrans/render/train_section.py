"""The "Training plan" section of a derivation report (``symtrans report MODEL --train ...``).

Built from the JSON object of ``symtrans train`` (plain data, so this module needs nothing
above render): per stage a table of the memory terms with their closed forms and sources,
the collectives of a step with their ring factors, and the step time with its assumptions.
Names and formulas are data text, escaped by each writer.
"""

from __future__ import annotations

from symtrans.base.numbers import binary_bytes, grouped


def _value(v) -> str:
    return grouped(v) if isinstance(v, int) else f"{v:,.1f}"


def report_section(r: dict) -> dict:
    """The keyword arguments of ``render.report.doc.add_section``: the section and the one it follows."""
    from symtrans.render.report import doc

    lay = r["layout"]
    shape = (
        f"tp {lay['tp']} x pp {lay['pp']}"
        + (f" (interleaved, v = {lay['vpp']})" if lay["vpp"] > 1 else "")
        + f" x dp {lay['dp']} x cp {lay['cp']} = {lay['devices']} devices"
        + (f", ep {lay['ep']}" if lay["ep"] > 1 else "")
        + (", sequence parallel" if lay["sequence_parallel"] else "")
        + (f", ZeRO-{lay['zero']}" if lay["zero"] else "")
        + (", distributed optimizer" if lay["distributed_optimizer"] else "")
    )
    blocks: list = [
        doc.Bullets(
            (
                doc.runs(f"layout: {shape}"),
                doc.runs(
                    f"batch: micro-batch {lay['micro_batch']} x {lay['micro_batches_per_step']} micro-batches x dp "
                    f"{lay['dp']} = {lay['global_batch']} sequences of {grouped(lay['seq_len'])} tokens; recompute "
                    f"{lay['recompute']}; {lay['optimizer']}, {lay['grad_dtype']} gradients"
                    + (", fp8" if lay["fp8"] else "")
                ),
            )
        )
    ]
    for m in r["memory"]:
        rows = [
            (t["name"], _value(t["value"]), binary_bytes(t["value"]), doc.Code(t["closed_form"]), t["source"])
            for t in m["terms"]
        ]
        rows.append(
            doc.Row(
                (
                    doc.runs("total"),
                    doc.runs(_value(m["total_bytes"])),
                    doc.runs(binary_bytes(m["total_bytes"])),
                    doc.runs("-"),
                    doc.runs("-"),
                ),
                "total",
            )
        )
        blocks.append(doc.Bullets((doc.runs(doc.strong(f"memory per device, {m['stage']} stage")),)))
        blocks.append(
            doc.table(
                [
                    doc.runs("term"),
                    doc.Column(doc.runs("bytes"), "r"),
                    doc.Column(doc.runs("binary"), "r"),
                    doc.Column(doc.runs("closed form"), wrap=0.3),
                    doc.Column(doc.runs("source"), wrap=0.3),
                ],
                rows,
                small=True,
                long=True,
            )
        )
    if r["communication"]:
        blocks.append(doc.Bullets((doc.runs(doc.strong("communication per step, one device of the first stage")),)))
        blocks.append(
            doc.table(
                [
                    doc.runs("axis"),
                    doc.runs("collective"),
                    doc.Column(doc.runs("n"), "r"),
                    doc.Column(doc.runs("per step"), "r"),
                    doc.Column(doc.runs("buffer bytes"), "r"),
                    doc.Column(doc.runs("ring factor"), "r"),
                    doc.Column(doc.runs("bytes per step"), "r"),
                    doc.Column(doc.runs("source"), wrap=0.25),
                ],
                [
                    (
                        c["axis"],
                        c["collective"],
                        str(c["group"]),
                        grouped(c["per_step"]),
                        _value(c["buffer_bytes"]),
                        c["ring_factor"],
                        _value(c["bytes_per_step"]),
                        c["source"],
                    )
                    for c in r["communication"]
                ],
                small=True,
            )
        )
    t = r["time"]
    items = [
        doc.runs(
            f"step: busy {t['busy_seconds']:.3f} s + bubble {t['bubble_seconds']:.3f} s (fraction "
            f"{t['bubble_fraction_exact']}) + exposed communication {t['exposed_communication_seconds']:.3f} s = ",
            doc.strong(f"{t['step_seconds']:.3f} s"),
            f" on {t['accelerator']} at MFU {t['mfu']}",
        ),
        doc.runs(f"{t['tokens_per_second']:,.0f} tokens/s; achieved MFU {t['achieved_mfu'] * 100:.1f}%"),
    ]
    if "time_to_train_days" in t:
        items.append(doc.runs(f"{grouped(t['training_tokens'])} tokens: {t['time_to_train_days']:,.2f} days"))
    items += [doc.runs(f"assumption: {a}") for a in t["assumptions"]]
    blocks.append(doc.Bullets(tuple(items)))
    section = doc.Section("training-plan", doc.runs("Training plan"), blocks, data={"step_seconds": t["step_seconds"]})
    return {"section": section, "after": None}
