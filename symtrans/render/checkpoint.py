"""Text and Markdown of a checkpoint inspection (``symtrans.analysis.checkpoint``).

Both formats show the same figures, in the same order: files and bytes, stored tensors
per dtype, logical parameters, quantization, the formula and the named terms of the
difference, components, and (on request) every tensor.  Every name from the file is
escaped for Markdown (tensor names are untrusted text).
"""

from __future__ import annotations

from symtrans.analysis.checkpoint import Inspection
from symtrans.base.escape import markdown_escape
from symtrans.base.numbers import binary_bytes, count, grouped


def _signed(n: int) -> str:
    return f"+{grouped(n)}" if n > 0 else grouped(n)


def _shape(s) -> str:
    return "(" + ", ".join(str(x) for x in s) + ")"


def _names(names, limit: int = 4) -> str:
    shown = list(names[:limit])
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def text(ins: Inspection, tensors: bool = False) -> str:
    """The plain-text report of ``ins``; ``tensors`` lists every stored tensor."""
    j = ins.to_json(tensor_list=tensors)
    ck = ins.checkpoint
    nfiles = len(ck.files)
    lines = [
        f"{ck.path}: {ck.format}, {nfiles} file{'s' if nfiles != 1 else ''}, "
        f"{grouped(ck.file_bytes)} bytes ({binary_bytes(ck.file_bytes)})",
        f"  stored: {j['tensors']} tensors, {grouped(j['stored_elements'])} elements, "
        f"{grouped(j['stored_bytes'])} bytes of tensor data",
    ]
    for r in j["by_dtype"]:
        lines.append(
            f"    {r['dtype']:<10} {r['tensors']:>6} tensors  {grouped(r['elements']):>18} elements  "
            f"{grouped(r['bytes']):>18} bytes"
        )
    lines.append(f"  logical parameters: {grouped(j['logical_parameters'])} ({count(j['logical_parameters'])})")
    q = j["quantization"]
    if q:
        lines.append(
            f"  quantization ({', '.join(q['methods']) or 'metadata only'}): {q['quantized_tensors']} quantized tensors "
            f"hold {grouped(q['quantized_parameters'])} parameters in {grouped(q['quantized_bytes'])} bytes; "
            f"overhead {grouped(q['overhead_bytes'])} bytes"
            + (f" ({q['metadata_tensors']} metadata tensors)" if q["metadata_tensors"] else "")
            + (
                f"; {q['bits_per_quantized_parameter']} bits per parameter"
                if "bits_per_quantized_parameter" in q
                else ""
            )
        )
    lines.append(
        f"  naming: {j['naming']}; sizes from {j['spec_source']}" + (f" ({ck.config_path})" if ck.config_path else "")
    )
    if j["formula"] is None:
        lines.append(f"  formula: not compared ({j['spec_error']})")
    else:
        sizes = ", ".join(f"{k} {grouped(v)}" for k, v in j["sizes"].items())
        lines.append(f"  formula ({j['family']}; {sizes}): {grouped(j['formula']['parameters'])} parameters")
        lines.append(f"    closed form: {j['formula']['closed_form']}")
        lines.append(
            f"  stored - formula = {_signed(j['difference'])} elements"
            + (":" if j["terms"] else " (nothing to explain)")
        )
        width = max((len(_signed(t["elements"])) for t in j["terms"]), default=0)
        for t in j["terms"]:
            lines.append(f"    {_signed(t['elements']):>{width}}  {t['label']}: {t['detail']}")
            if t["tensors"] and t["term"] not in ("tied_copy",):
                lines.append(f"    {'':>{width}}    ({_names(t['tensors'])})")
        lines.append(
            f"  logical parameters - formula = {_signed(j['logical_parameters'] - j['formula']['parameters'])}"
        )
    if "inferred" in j:
        lines.append("  sizes from the shapes: " + "; ".join(f"{k}: {v}" for k, v in j["inferred"].items()))
        for n in j["not_inferred"]:
            lines.append(f"  not inferable: {n}")
    lines.append("  components (logical parameters):")
    for r in j["components"]:
        where = "/".join(x for x in (r["stack"], r["block"]) if x) or "-"
        lines.append(f"    {where:<32} {str(r['role']):<22} {r['tensors']:>6} tensors  {grouped(r['parameters']):>18}")
    if tensors:
        lines.append("  tensors:")
        for t in j["tensor_list"]:
            rep = f" -> {_shape(t['represents'])}" if "represents" in t else ""
            role = f"{t['role']}{' bias' if t['bias'] else ''}" if t["role"] else "?"
            layer = f" layer {t['layer']}" if t["layer"] is not None else ""
            lines.append(
                f"    {t['name']}  {t['dtype']} {_shape(t['shape'])}{rep}  {t['kind']}  {role}{layer}"
                f"  {grouped(t['parameters'])}"
            )
    for n in j["notes"]:
        lines.append(f"  note: {n}")
    return "\n".join(lines)


def markdown(ins: Inspection, tensors: bool = False, title: str | None = None) -> str:
    """The Markdown report of ``ins`` (a ``#`` title, tables); names are escaped."""
    j = ins.to_json(tensor_list=tensors)
    ck = ins.checkpoint
    e = markdown_escape
    out = [f"# {e(title or 'Checkpoint ' + ck.path)}", ""]
    out += [
        f"- format: {ck.format}, {len(ck.files)} file(s), {grouped(ck.file_bytes)} bytes ({binary_bytes(ck.file_bytes)})",
        f"- stored: {j['tensors']} tensors, {grouped(j['stored_elements'])} elements, {grouped(j['stored_bytes'])} bytes",
        f"- logical parameters: **{grouped(j['logical_parameters'])}**",
        f"- naming: {e(j['naming'])}; sizes from {e(j['spec_source'])}",
        "",
        "| dtype | tensors | elements | bytes |",
        "|---|---:|---:|---:|",
    ]
    out += [
        f"| {e(r['dtype'])} | {r['tensors']} | {grouped(r['elements'])} | {grouped(r['bytes'])} |"
        for r in j["by_dtype"]
    ]
    q = j["quantization"]
    if q:
        out += [
            "",
            f"Quantization ({e(', '.join(q['methods']) or 'metadata only')}): {q['quantized_tensors']} quantized tensors "
            f"hold {grouped(q['quantized_parameters'])} parameters in {grouped(q['quantized_bytes'])} bytes; "
            f"overhead {grouped(q['overhead_bytes'])} bytes.",
        ]
    out += ["", section(ins, level=2)]
    out += ["", "## Components", "", "| stack | block | role | tensors | parameters |", "|---|---|---|---:|---:|"]
    for r in j["components"]:
        out.append(
            f"| {e(r['stack'] or '')} | {e(r['block'] or '')} | {e(r['role'] or '?')} | {r['tensors']} | {grouped(r['parameters'])} |"
        )
    if tensors:
        out += [
            "",
            "## Tensors",
            "",
            "| name | dtype | shape | kind | role | layer | parameters |",
            "|---|---|---|---|---|---:|---:|",
        ]
        for t in j["tensor_list"]:
            out.append(
                f"| {e(t['name'])} | {e(t['dtype'])} | {_shape(t['shape'])} | {t['kind']} | "
                f"{e((t['role'] or '?') + (' bias' if t['bias'] else ''))} | {'' if t['layer'] is None else t['layer']} | "
                f"{grouped(t['parameters'])} |"
            )
    if j["notes"]:
        out += ["", "Notes:", ""] + [f"- {e(n)}" for n in j["notes"]]
    return "\n".join(out) + "\n"


def section(ins: Inspection, level: int = 2) -> str:
    """The "checkpoint vs formula" section in Markdown (also used by ``report``)."""
    j = ins.to_json(tensor_list=False)
    e = markdown_escape
    h = "#" * level
    out = [f"{h} Checkpoint vs formula", ""]
    if j["formula"] is None:
        out.append(f"No formula to compare with: {e(j['spec_error'])}.")
        return "\n".join(out)
    out += [
        f"Stored: {grouped(j['stored_elements'])} elements; logical parameters: {grouped(j['logical_parameters'])}; "
        f"formula ({e(j['spec_source'])}): {grouped(j['formula']['parameters'])} parameters. "
        f"Stored - formula = {_signed(j['difference'])} elements.",
        "",
    ]
    if j["terms"]:
        out += ["| term | elements | detail |", "|---|---:|---|"]
        out += [f"| {e(t['label'])} | {_signed(t['elements'])} | {e(t['detail'])} |" for t in j["terms"]]
    else:
        out.append("Every stored element is a parameter of the formula.")
    if j.get("not_inferred"):
        out += [""] + [f"- not inferable: {e(n)}" for n in j["not_inferred"]]
    return "\n".join(out)


def report_section(ins: Inspection) -> dict:
    """The "Checkpoint vs formula" section of a derivation report: the keyword arguments of
    ``render.report.doc.add_section`` (a ``doc.Section`` and the section it follows).
    Tensor names and paths are data text, escaped by each writer."""
    from symtrans.render.report import doc

    j = ins.to_json(tensor_list=False)
    q = j["quantization"]
    items = [
        doc.runs(
            f"checkpoint: {j['path']} ({j['format']}, {len(j['files'])} file(s), {grouped(j['file_bytes'])} bytes)"
        ),
        doc.runs(f"stored: {grouped(j['tensors'])} tensors, {grouped(j['stored_elements'])} elements"),
        doc.runs(
            "logical parameters: ",
            doc.strong(grouped(j["logical_parameters"])),
            (
                f" ({', '.join(q['methods'])}: {grouped(q['quantized_parameters'])} parameters in "
                f"{grouped(q['quantized_bytes'])} bytes, overhead {grouped(q['overhead_bytes'])} bytes)"
                if q
                else None
            ),
        ),
    ]
    blocks: list = []
    if j["formula"]:
        items.append(
            doc.runs(
                f"formula, sizes from {j['spec_source']}: ",
                doc.strong(grouped(j["formula"]["parameters"])),
                " parameters",
            )
        )
        terms = j.get("terms", [])
        items.append(
            doc.runs(
                f"stored - formula = {_signed(j['difference'])} elements"
                + ("" if terms else ": every stored element is a parameter of the formula")
            )
        )
        if terms:
            blocks.append(
                doc.table(
                    [doc.runs("term"), doc.Column(doc.runs("elements"), "r"), doc.Column(doc.runs("detail"), wrap=0.5)],
                    [(t["label"], _signed(t["elements"]), t["detail"]) for t in terms],
                )
            )
    else:
        items.append(doc.runs(f"not compared with the formula: {j.get('spec_error', '')}"))
    section = doc.Section(
        "checkpoint",
        doc.runs("Checkpoint vs formula"),
        [doc.Bullets(tuple(items)), *blocks],
        data={"logical_parameters": j["logical_parameters"]},
    )
    return {"section": section, "after": "breakdown"}
