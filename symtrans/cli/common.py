"""What the subcommands of ``symtrans`` share (issue 20, Build 7: moved out of ``cli.main``,
which every subcommand's module imported while ``main`` imported them: a cycle).

The parser class that turns argparse's errors into one line (``UsageError``), the options
every model command takes (``_common``, ``_workload``), resolving MODEL (``_resolve``),
queued warnings (``_warn``), the command's output transaction (``_emit``, ``_outputs``),
the workload's sizes (``flops_values``, ``command_workload``), the numbers of a plan from
the cache or SymPy (``with_numbers``) and the symbols of closed forms (``with_symbols``).
Nothing heavy is imported at module level: ``symtrans params`` starts fast.
"""

from __future__ import annotations

import argparse
from typing import Mapping, Sequence

from symtrans.base.errors import SymtransError
from symtrans.cli.arguments import format_arg, size_arg


class UsageError(SymtransError):
    """Bad input: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    _active: argparse.ArgumentParser | None = None  # the innermost (sub)parser that ran

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        _Parser._active = self  # a subcommand's parser runs inside the root's: the last one wins
        return super().parse_known_args(args, namespace)

    # argparse prints the whole usage on error; the contract is one line on stderr.
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}{_did_you_mean(message, _Parser._active or self)}")


def _did_you_mean(message: str, parser: argparse.ArgumentParser) -> str:
    """A near miss among the subcommand's options for an unrecognized one (``--seqlen``:
    ``--seq-len``), as argparse itself only does from Python 3.14 (issue 25.16)."""
    import difflib

    if not message.startswith("unrecognized arguments:"):
        return ""
    options = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
    hints = []
    for token in message.split(":", 1)[1].split():
        if token.startswith("--"):
            close = difflib.get_close_matches(token.partition("=")[0], options, n=1, cutoff=0.7)
            hints += [(close[0], token.partition("=")[0])] if close else []
    if len(hints) == 1:
        return f"; did you mean {hints[0][0]}?"
    return f"; did you mean {', '.join(f'{o} (for {t})' for o, t in hints)}?" if hints else ""


def _common(
    p: argparse.ArgumentParser, formats: Sequence[str], default: str | None, format_help: str | None = None
) -> None:
    p.add_argument("model", metavar="MODEL", help="a preset name (see 'symtrans presets') or a config.json path")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a size symbol (d_model=1024) or an option (bias=false); repeatable",
    )
    p.add_argument("--format", type=format_arg, choices=formats, default=default, help=format_help)
    p.add_argument("-o", "--output", metavar="PATH", help="write here (atomically) instead of standard output")


def _workload(p: argparse.ArgumentParser) -> None:
    p.add_argument("--batch", type=size_arg("--batch"), default=1, metavar="B", help="sequences per batch (default 1)")
    p.add_argument(
        "--seq-len",
        type=size_arg("--seq-len"),
        default=None,
        metavar="L",
        help="tokens per sequence (default: the model's L)",
    )


def _resolve(args):
    from symtrans.accounting.spec_warnings import spec_warnings
    from symtrans.catalog.resolve import resolve

    res = resolve(args.model, args.set, generic_ok=True)
    if res.generic is not None:
        from symtrans.base.errors import InputError
        from symtrans.cli.generic import COMMANDS

        if args.command not in COMMANDS:
            raise InputError(
                f"symtrans {args.command}: {args.model}: model_type {res.generic.model_type!r} is counted from "
                f"transformers' modeling code, which gives {', '.join(COMMANDS)} only so far"
            )
        return res
    for w in spec_warnings(res.spec):  # e.g. a low-rank FFN whose r saves nothing
        _warn(args, w)
    return res


def _warn(args, text: str) -> None:
    """Queue a warning; ``main`` prints the queue to stderr only if the command succeeds,
    so a failing run still prints exactly one line (its error)."""
    args.__dict__.setdefault("_warnings", []).append(f"symtrans: warning: {text}")


def _input_files(args) -> list[str]:
    """The files a command reads: MODEL (a config.json, or a directory's config.json),
    diff's A and B (also as ``config.json:NAME=VALUE`` variants) and sweep's --csv."""
    import os

    paths = []
    for attr in ("model", "a", "b", "csv", "path"):
        v = getattr(args, attr, None)
        if not isinstance(v, str) or not v:
            continue
        for cand in (v, v.partition(":")[0]) if attr in ("a", "b") else (v,):
            if os.path.isdir(cand):
                cand = os.path.join(cand, "config.json")
            if cand and os.path.isfile(cand):
                paths.append(cand)
    return paths


def _outputs(args):
    """The command's output transaction (base/atomic.py): every file it writes, and its
    standard output, land together after the command has succeeded, or none of them."""
    tx = args.__dict__.get("_outputs")
    if tx is None:
        from symtrans.base.atomic import Transaction

        tx = args._outputs = Transaction(inputs=_input_files(args), announce=True)
    return tx


def _output_path(args) -> str | None:
    """``-o PATH``, or None for standard output (no -o, or ``-o -``)."""
    out = getattr(args, "output", None)
    return None if out == "-" else out  # -o '' stays '': an error (the output path is empty)


def _emit(args, data) -> None:
    """Queue ``data`` for ``-o`` (or standard output) in the command's transaction.

    Text gets a final newline, and any character a terminal would act on (ESC, other
    controls, lone surrogates) is shown escaped: names come from file names and keys.
    ``data`` may also be a writer of a streamed output (an output too large to hold, a
    sweep's rows): a function called at once with the binary file to write into
    (``atomic.Transaction.stream``); it writes numbers and JSON-escaped text only.
    """
    if callable(data):
        data(_outputs(args).stream(_output_path(args)))
        return
    if isinstance(data, str):
        from symtrans.base.escape import terminal_escape

        data = terminal_escape(data if data.endswith("\n") else data + "\n", keep="\n\t")
    _outputs(args).add(_output_path(args), data)


def _closed_form_texts(obj) -> list[str]:
    """Every closed form in a JSON-ready result: the values of ``closed_form``,
    ``*_closed_form`` and ``closed_forms`` keys, at any depth."""
    found: list[str] = []
    if isinstance(obj, dict):
        for key, value in obj.items():
            if (key == "closed_form" or key.endswith("_closed_form")) and isinstance(value, str):
                found.append(value)
            elif key == "closed_forms" and isinstance(value, dict):
                found += [v for v in value.values() if isinstance(v, str)]
            else:
                found += _closed_form_texts(value)
    elif isinstance(obj, list):
        for value in obj:
            found += _closed_form_texts(value)
    return found


def with_symbols(out: dict) -> dict:
    """``out`` with ``symbols``: each name in its closed forms -> assumptions, meaning, unit
    (``symbols.symbols_json``), so the strings can be read back (``symtrans.parse_closed_form``)."""
    from symtrans.engine.legend import symbols_json

    out["symbols"] = symbols_json(*_closed_form_texts(out))
    return out


def flops_values(res, batch: int, seq_len: int | None, v4_counted: bool = False) -> dict[str, int]:
    """Sizes for evaluating forward FLOPs: the spec's, with the workload's B, L (and
    L_src/L_tgt) set by the one rule of ``engine.workload.resolve_workload``."""
    return command_workload(res, batch, seq_len, v4_counted=v4_counted).values(res.spec)


def command_workload(res, batch: int, seq_len: int | None, mask: str = "full", v4_counted: bool = False):
    """The ``engine.workload.Workload`` of a command on ``res`` (a ``resolve.Resolved``):
    ``--batch``, ``--seq-len`` (else the model's L, with its source) and ``--mask``."""
    from symtrans.engine.workload import resolve_workload

    return resolve_workload(
        res.spec, batch, seq_len, mask=mask, seq_len_source=res.seq_len_source, v4_counted=v4_counted
    )


def with_numbers(spec, query: tuple, values: dict, assemble, generated: bool = True):
    """``assemble(numbers)`` with the plan of ``query`` (``cli.numbers``): from generated
    data when there is some, else (or when the data cannot answer) with SymPy."""
    from symtrans.cli import numbers as NB

    if generated:
        try:
            return assemble(plan_numbers(spec, query, values))
        except NB.Fallback:
            pass
    return assemble(plan_numbers(spec, query, values, generated=False))


def plan_numbers(spec, query: tuple, values: Mapping[str, int], generated: bool = True):
    """The plan of ``query`` for ``spec`` at ``values``: from generated data when there is
    some (``generated``), else built with SymPy and then cached on disk for next time.
    A ``numbers.Numbers``.  Here, not in ``numbers``, which ``plans`` imports: this one
    imports ``plans`` (SymPy) only when the cache cannot answer."""
    import os

    from symtrans.cli import numbers as NB

    if generated:
        data = NB.lookup(spec, query)
        if data is not None:
            return NB.TreeNumbers(data, values)
    from symtrans.cli import plans

    plan = plans.build(spec, query)
    if generated and not os.environ.get("SYMTRANS_NO_GENERATED"):
        try:
            NB.store(NB.plan_key(spec, query), plan.data())
        except ValueError:  # a closed form the trees cannot express (an unclosed sum): no cache
            pass
    return plan.numbers(values)
