"""``symtrans inspect PATH``: what a checkpoint stores, against the closed form (issue 14).

Reads headers only (safetensors, GGUF); refuses pickles.  Bad input is one line on
stderr and exit 2 (the ``CheckpointError`` of the readers is a ValueError, which
``cli.main`` prints).
"""

from __future__ import annotations

import json

from symtrans.base.errors import InputError
from symtrans.cli.arguments import format_arg


def add_inspect_parser(sub, emit) -> None:
    """Register ``inspect`` on the subparsers ``sub``; ``emit(args, text)`` writes output."""
    p = sub.add_parser(
        "inspect",
        help="read a checkpoint's headers (safetensors, GGUF): tensors, logical parameters, vs the formula",
    )
    p.add_argument(
        "path",
        metavar="PATH",
        help="a .safetensors file, a *.safetensors.index.json, a model directory or a .gguf file",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a size the shapes cannot show (h=32, k=2) or an option (tie_output=true); repeatable",
    )
    p.add_argument("--format", type=format_arg, choices=("text", "json", "markdown"), default="text")
    p.add_argument("--tensors", action="store_true", help="list every stored tensor with its role (text, markdown)")
    p.add_argument("-o", "--output", metavar="PATH", help="write here (atomically) instead of standard output")

    def run(args) -> int:
        from symtrans.analysis.checkpoint import inspect

        ins = inspect(args.path, args.set)
        _refuse_overwriting(args.output, ins)
        if args.format == "json":
            emit(args, _json_text(ins.to_json(tensor_list=False), ins.entries))
        elif args.format == "markdown":
            from symtrans.render.checkpoint import markdown

            emit(args, markdown(ins, tensors=args.tensors))
        else:
            from symtrans.render.checkpoint import text

            emit(args, text(ins, tensors=args.tensors))
        return 0

    p.set_defaults(func=run)


_TENSORS = "\x00tensor_list\x00"  # a placeholder no key or name can be: JSON escapes NUL


def _json_text(out: dict, entries=None) -> str:
    """``out`` with its ``symbols`` as indented JSON, each ``tensor_list`` entry on one line.

    The closed forms are looked for outside the tensor list (no tensor holds one).  The
    list is ``out["tensor_list"]`` or, given ``entries`` (``Inspection.entries``), their
    rows written straight as text (``_row_lines``): the indented encoder is pure Python
    (a 90,000-tensor list took it 4 s and 1.5 M lines), and a dict per row held 90 MB
    and cost 0.4 s to build and 0.5 s to encode.
    """
    from symtrans.cli.common import with_symbols

    if entries is None:
        rows = [json.dumps(t) for t in out.get("tensor_list", [])]
    else:
        rows = _row_lines(entries)
    out = with_symbols({**out, "tensor_list": _TENSORS})
    text = json.dumps(out, indent=2)
    body = "[\n    " + ",\n    ".join(rows) + "\n  ]" if rows else "[]"
    return text.replace(json.dumps(_TENSORS), body, 1)


def _row_lines(entries) -> list[str]:
    """Each entry's row of ``Inspection.to_json``'s ``tensor_list`` as the text
    ``json.dumps`` gives it (keys in that order; ``", "`` and ``": "`` separators; strings
    by the encoder's own ASCII escaper; ints, bools and None as JSON writes them), one
    string per entry."""
    from json.encoder import encode_basestring_ascii as q

    def text(x) -> str:  # a str, a str enum (as its value) or None, as JSON
        return "null" if x is None else q(getattr(x, "_value_", x))

    # The fields from "file" to "stack" repeat across a checkpoint (a few dozen
    # combinations): each combination is written once.
    middles: dict[tuple, tuple[str, str]] = {}
    lines = []
    append = lines.append
    for e in entries:
        t = e.tensor
        sig = (t.file, t.dtype, t.shape, t.nbytes, e.kind, e.role, e.block, e.stack)
        mid = middles.get(sig)
        if mid is None:
            mid = middles[sig] = (
                f'"file": {text(t.file)}, "dtype": {text(t.dtype)}, "shape": {_ints(t.shape)}, "bytes": {t.nbytes}, ',
                f'"kind": {text(e.kind)}, "role": {text(e.role)}, "block": {text(e.block)}, "stack": {text(e.stack)}, ',
            )
        layer = e.layer
        line = (
            f'{{"name": {q(t.name)}, {mid[0]}{mid[1]}"layer": {"null" if layer is None else layer}, '
            f'"bias": {"true" if e.bias else "false"}, "parameters": {e.logical}'
        )
        if e.shape != t.shape:
            line += f', "represents": {_ints(e.shape)}'
        if e.quant:
            line += f', "quantization": {q(e.quant)}'
        if e.why:
            line += f', "why": {q(e.why)}'
        append(line + "}")
    return lines


def _ints(shape) -> str:
    """A tuple of ints as ``json.dumps(list(shape))`` writes it."""
    return "[" + ", ".join(map(str, shape)) + "]"


def _refuse_overwriting(output: str | None, ins) -> None:
    """``-o`` must not name a file of the checkpoint (a shard, the index, config.json).

    Raises:
        ValueError: naming the file.
    """
    import os

    if not output:
        return
    ck = ins.checkpoint
    inputs = [f.path for f in ck.files] + [p for p in (ck.config_path, ck.path) if p and os.path.isfile(p)]
    target = os.path.realpath(output)
    for path in inputs:
        if os.path.realpath(path) == target:
            raise InputError(
                f"symtrans inspect: -o {output} is the checkpoint's file {path}; choose another output path"
            )


def with_checkpoint_section(model: str, settings: list[str], res):
    """``res`` with a "Checkpoint vs formula" report section when MODEL is a directory
    that holds weights (safetensors or GGUF) beside its config.json; else ``res``.

    Raises:
        ValueError: the weights are there but cannot be read (one line, exit 2).
    """
    import os

    if not os.path.isdir(model) or not any(
        n.endswith((".safetensors", ".safetensors.index.json", ".gguf")) for n in os.listdir(model)
    ):
        return res
    from dataclasses import replace

    from symtrans.analysis.checkpoint import inspect
    from symtrans.render.checkpoint import report_section

    section = report_section(inspect(model, settings))
    return replace(res, sections=res.sections + (section,))
