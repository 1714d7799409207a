"""``symtrans inspect PATH``: what a checkpoint stores, against the closed form (issue 14).

Reads headers only (safetensors, GGUF); refuses pickles.  Bad input is one line on
stderr and exit 2 (the ``CheckpointError`` of the readers is a ValueError, which
``cli.main`` prints).
"""

from __future__ import annotations

import json

from symtrans.base.errors import InputError


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
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    p.add_argument("--tensors", action="store_true", help="list every stored tensor with its role (text, markdown)")
    p.add_argument("-o", "--output", metavar="PATH", help="write here (atomically) instead of standard output")

    def run(args) -> int:
        from symtrans.analysis.checkpoint import inspect

        ins = inspect(args.path, args.set)
        _refuse_overwriting(args.output, ins)
        if args.format == "json":
            emit(args, _json_text(ins.to_json()))
        elif args.format == "markdown":
            from symtrans.render.checkpoint import markdown

            emit(args, markdown(ins, tensors=args.tensors))
        else:
            from symtrans.render.checkpoint import text

            emit(args, text(ins, tensors=args.tensors))
        return 0

    p.set_defaults(func=run)


_TENSORS = "\x00tensor_list\x00"  # a placeholder no key or name can be: JSON escapes NUL


def _json_text(out: dict) -> str:
    """``out`` with its ``symbols`` as indented JSON, each ``tensor_list`` entry on one line.

    The closed forms are looked for outside the tensor list (no tensor holds one), and
    the list goes through the C encoder in one call, then is cut into one line per entry:
    the indented encoder is pure Python (a 90,000-tensor list took it 4 s and 1.5 M lines),
    and a ``json.dumps`` per entry cost 10 us each.  Every entry is a flat dict whose first
    key is ``name`` (``Inspection.to_json``), so ``}, {"name": `` occurs only between
    entries: inside a JSON string every ``"`` is escaped.
    """
    from symtrans.cli.common import with_symbols

    tensors = out.get("tensor_list", [])
    out = with_symbols({**out, "tensor_list": _TENSORS})
    text = json.dumps(out, indent=2)
    rows = json.dumps(tensors)[1:-1].replace('}, {"name": ', '},\n    {"name": ')
    return text.replace(json.dumps(_TENSORS), f"[\n    {rows}\n  ]" if tensors else "[]", 1)


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
