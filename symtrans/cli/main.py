"""The ``symtrans`` command line (DESIGN §6).

``main(argv)`` returns the exit status: 0 on success, 2 on bad input.  Bad input is
one line on stderr naming the problem (no traceback), and nothing is written: everything
a command outputs (files and standard output) goes into one ``atomic.Transaction``,
committed only when the command has succeeded.  Ctrl-C, SIGTERM and SIGHUP print one
line and exit with 128 + the signal number (``base/interrupt.py``).  Heavy imports
(Jinja2, NumPy, matplotlib) happen inside the commands that need them, so ``symtrans
params`` starts fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from symtrans.base.errors import SymtransError
from symtrans.cli.arguments import format_arg, int_arg
from symtrans.cli.common import (  # the helpers every subcommand shares (issue 20, Build 7)
    UsageError,
    _common,
    _emit,
    _input_files,
    _output_path,
    _outputs,
    _Parser,
    _resolve,
    _warn,
    _workload,
    command_workload,
    flops_values,
    with_numbers,
    with_symbols,
)

CONVENTION_NOTE = "FLOPs: 2 per multiply-accumulate, matrix products only (bias adds, softmax and norms not counted)"


# ---------------------------------------------------------------------------------
# shared helpers


def _table(rows, unit_fmt) -> list[str]:
    """The component table of ``params`` and ``flops`` text: ``rows`` are the JSON rows
    (name, depth, count, each, total, share)."""
    from symtrans.base.numbers import grouped

    width = max(
        (len(r["name"]) + 2 * r["depth"] + (len(f" x {r['count']}") if r["count"] != 1 else 0) for r in rows),
        default=10,
    )
    lines = []
    for r in rows:
        label = "  " * r["depth"] + r["name"] + (f" x {r['count']}" if r["count"] != 1 else "")
        each = f"  ({grouped(r['each'])} each)" if r["count"] not in (0, 1) else ""
        lines.append(f"  {label:<{width}}  {grouped(r['total']):>20}  {r['share'] * 100:6.2f}%{each}")
    return lines


# ---------------------------------------------------------------------------------
# presets


def _cmd_presets(args) -> int:
    from symtrans.base.numbers import count
    from symtrans.catalog.presets import PRESETS
    from symtrans.engine.architectures import build
    from symtrans.engine.evaluate import exact

    def active(p) -> dict:  # MoE presets: the parameters one token uses (k of E experts)
        return {"active": exact(build(p.spec).active_params, p.spec.values)} if p.spec.is_moe else {}

    if args.format == "json":
        out = [
            {
                "name": p.name,
                "family": p.spec.family,
                "total": exact(build(p.spec).params, p.spec.values),
                **active(p),
                "published": p.published,
                "source": p.source,
                "reference": p.reference,
                "kind": p.kind,
            }
            for p in PRESETS.values()
        ]
        _emit(args, json.dumps(out, indent=2))
        return 0
    lines = []
    for p in PRESETS.values():
        if p.kind != "model":
            continue
        total = exact(build(p.spec).params, p.spec.values)
        shown = count(total) + (f" ({count(active(p)['active'])} active)" if p.spec.is_moe else "")
        lines.append(f"{p.name:<18} {p.spec.family:<16} {shown:>8}  (published {p.published or '-'})  {p.source}")
    hand = [p for p in PRESETS.values() if p.kind != "model"]
    if hand:  # the teaching articles' hand counts (handcounts.py), in their own section
        lines += ["", "hand counts (teaching articles; 'symtrans params NAME' compares with the real implementation):"]
        for p in hand:
            total = exact(build(p.spec).params, p.spec.values)
            lines.append(
                f"{p.name:<31} {p.kind:<10} {count(total):>8}  (article {p.published or '-'}; "
                f"real: {' '.join([p.real, *(f'--set {s}' for s in p.real_set)])})"
            )
    _emit(args, "\n".join(lines))
    return 0


def _cmd_model_types(args) -> int:
    """The config.json model types symtrans reads (hf_config.CLASSES, the one table)."""
    from symtrans.catalog.hf_config import CLASSES

    if args.format == "json":
        out = [{"model_type": mt, "counted_as": model, "config_class": cls} for mt, (cls, model) in CLASSES.items()]
        _emit(args, json.dumps(out, indent=2))
        return 0
    if args.format == "markdown":  # the README's table (tests/test_model_types_table.py keeps it current)
        from symtrans.render.model_types import markdown_table

        _emit(args, markdown_table())
        return 0
    width = max(len(mt) for mt in CLASSES)
    lines = [f"{mt:<{width}}  {model} (defaults from {cls}, transformers 5.x)" for mt, (cls, model) in CLASSES.items()]
    lines.append(f"{len(CLASSES)} model types; 'symtrans params path/to/config.json' reads any of them")
    _emit(args, "\n".join(lines))
    return 0


# ---------------------------------------------------------------------------------
# params


def params_result(res, generated: bool = True, part: str = "all") -> dict:
    """The JSON object of ``symtrans params``: exact ``total``, ``closed_form``, components.

    ``generated``: answer from the data generated from the closed forms when the model's
    structure has some (no SymPy), else compute with SymPy (``cli.numbers``).
    ``part``: ``"text"``, ``"vision"`` or ``"audio"`` make ``total``, ``closed_form`` and
    ``components`` those of that part of a vision-language model (``vision.select_part``;
    ``"part"`` says which); ``parts`` always holds all the figures (``"audio"`` only for a
    model with an audio tower: Gemma 4's tower and embed_audio).

    Raises:
        UsageError: ``part`` is not ``"all"`` and the model has no vision tower, or ``part`` is
        ``"audio"`` and it has no audio tower.
    """
    from symtrans.cli import numbers as NB

    spec = res.spec
    values = spec.values
    if part == "audio" and "d_aud" not in values:
        whole = " (it is an audio encoder as a whole: use --part all)" if spec.frontend == "wav2vec2" else ""
        raise UsageError(
            f"symtrans params: --part audio counts an audio tower beside a language model "
            f"(Gemma 4 with audio_config); {res.name} has none{whole}"
        )
    if part != "all" and spec.vision == "none":
        raise UsageError(
            f"symtrans params: --part {part} needs a vision-language model; {res.name} has no vision tower"
        )

    def assemble(n) -> dict:
        total = n.integer("total")
        out = {
            "model": res.name,
            "family": spec.family,
            "total": total,
            "closed_form": n.text("closed_form"),
            "sizes": values,
            "components": _component_rows(n, total),
        }
        if spec.is_moe:
            out["active"] = n.integer("active")
            out["active_closed_form"] = n.text("active_closed_form")
        return out

    out = with_numbers(spec, NB.params_query(part), values, assemble, generated)
    if res.modified_from:
        out.update(published=None, source=None, reference=None, modified_from=res.modified_from)
        out["changes"] = list(res.changes)
    if res.preset:
        out["published"] = res.preset.published
        out["source"] = res.preset.source
        out["reference"] = res.preset.reference
        if res.preset.real:  # a hand count: its article figures and the real implementation
            from symtrans.catalog.comparison import comparison_json

            out["hand_count"] = comparison_json(res.preset, spec)
    if spec.vision != "none":  # a vision-language model: the text-only figure beside the whole class
        from symtrans.engine.architectures import build
        from symtrans.engine.evaluate import exact
        from symtrans.engine.vision import select_part

        model = build(spec)
        out["parts"] = {p: exact(select_part(model, p).params, values) for p in ("all", "text", "vision")}
        if "d_aud" in values:  # Gemma 4's audio tower and embed_audio: in all, neither text nor vision
            out["parts"]["audio"] = exact(select_part(model, "audio").params, values)
        out["part"] = part
    out["notes"] = list(res.notes) + (list(res.preset.notes) if res.preset else [])
    out["counted_class"] = res.counted_class
    return out


def _generic_params(args, res) -> int:
    """``params`` of a config counted from transformers' modeling code (cli/generic.py)."""
    from symtrans.cli.generic import params_result as generic_result

    if args.format not in ("text", "json") or getattr(args, "lora", None) or getattr(args, "adapter", None):
        raise UsageError("symtrans params: a generic model gives --format text or json only, without --lora/--adapter")
    part = getattr(args, "part", "all")
    if part != "all":  # the generic count is the whole class: never print it under a part's name
        raise UsageError(
            f"symtrans params: --part {part} needs a model type with its own record; model_type "
            f"{res.generic.model_type!r} is counted from transformers' modeling code as one whole class (use --part all)"
        )
    r = generic_result(res)
    if args.format == "json":
        _emit(args, json.dumps(r, indent=2))
        return 0
    from symtrans.base.numbers import count, grouped

    lines = [f"{r['model']}: {grouped(r['total'])} parameters ({count(r['total'])})"]
    lines.append(f"  counted class: {r['counted_class']} (model_type {r['model_type']})")
    lines.append(f"  closed form: {r['closed_form']}")
    lines.append("  components:")
    lines += _table(r["components"], grouped)
    for n in r["notes"]:
        lines.append(f"  note: {n}")
    if r["numeric_terms"]:
        lines.append(f"  note: numeric (no closed form fits): {', '.join(r['numeric_terms'])}")
    _emit(args, "\n".join(lines))
    return 0


def _component_rows(n, grand: int) -> list[dict]:
    """The components of ``summary.rows`` as JSON rows: multiplicity, count per instance,
    total and exact share of ``grand`` (as a float), and the closed form per instance."""
    from fractions import Fraction

    rows = []
    for i, (name, depth) in enumerate(n.layout):
        mult = n.integer(f"r{i}.count")
        each = n.integer(f"r{i}.each")
        total = mult * each
        rows.append(
            {
                "name": name,
                "depth": depth,
                "count": mult,
                "each": each,
                "total": total,
                "share": float(Fraction(total, grand) if grand else Fraction(0)),
                "closed_form": n.text(f"r{i}.formula"),
            }
        )
    return rows


def _peft(args, res) -> dict | None:
    """``--lora`` / ``--adapter``: trainable against frozen parameters (lora.py); warnings to stderr."""
    if not (getattr(args, "lora", None) or getattr(args, "adapter", None)):
        return None
    if args.format not in ("text", "json"):
        raise UsageError("symtrans params: --lora and --adapter work with --format text or json")
    from symtrans.accounting.lora import parse_peft, peft_result

    out = peft_result(res.spec, parse_peft(args.lora, args.adapter))
    for w in out["warnings"]:
        _warn(args, w)
    return out


def _peft_lines(p: dict) -> list[str]:
    from symtrans.base.numbers import binary_bytes, grouped

    what = []
    if "lora" in p:
        what.append(f"LoRA r={p['lora']['r']} on {', '.join(p['lora']['targets'])}")
    if "adapter" in p:
        what.append(f"{p['adapter']['placement']} adapters r={p['adapter']['r']}")
    lines = [
        f"  {' + '.join(what)}: trainable {grouped(p['trainable'])} ({p['trainable_share'] * 100:.4f}%), "
        f"frozen {grouped(p['frozen'])}"
    ]
    both = "lora" in p and "adapter" in p  # then say which rank each term's r is
    for t in p["terms"]:
        shape = f" ({t['d_in']} x {t['d_out']}, {t['count']} copies x {grouped(t['each'])})" if "d_in" in t else ""
        rank = f" (r = {t['r']})" if both else ""
        lines.append(f"    {t['name']}{shape}: {grouped(t['total'])}   closed form {t['closed_form']}{rank}")
    subst = f" ({p['trainable_closed_form_note']})" if "trainable_closed_form_note" in p else ""
    lines.append(f"    trainable closed form{subst}: {p['trainable_closed_form']}")
    tb = p["training_state_bytes"]
    lines.append(
        f"    training state (weights, gradients, Adam): full fine-tune {binary_bytes(tb['full_fine_tune'])}, "
        f"this method {binary_bytes(tb['peft'])} ({tb['convention']})"
    )
    return lines


def _cmd_params(args) -> int:
    res = _resolve(args)
    if res.generic is not None:
        return _generic_params(args, res)
    peft = _peft(args, res)
    part = getattr(args, "part", "all")
    if args.format in ("markdown", "latex"):
        if part != "all":  # the derivation report derives the whole model; refuse, never mislabel
            raise UsageError(
                f"symtrans params: --part {part} gives --format text or json; "
                f"the {args.format} report derives the whole model"
            )
        from symtrans.render.report import render

        _emit(args, render(res, args.format, title=getattr(args, "title", None)))
        return 0
    r = params_result(res, part=part)
    if peft:
        r["peft"] = peft
    if args.format == "json":
        _emit(args, json.dumps(with_symbols(r), indent=2))
        return 0
    from symtrans.base.numbers import count, grouped

    headline = r["total"]  # of the chosen part (params_result)
    from symtrans.engine.spec import DUAL_VISIONS

    dual = res.spec.vision in DUAL_VISIONS  # CLIP / SigLIP: two towers and the logits' scale
    text_part = "text tower and its projection" if dual else "language model and LM head"
    vision_part = "image tower and its projection" if dual else "vision tower and projector"
    what = {
        "all": "parameters",
        "text": f"parameters of the {'text tower' if dual else 'language model'} (text only)",
        "vision": f"parameters of the {vision_part}",
        "audio": "parameters of the audio tower and embed_audio",
    }[part]
    lines = [f"{r['model']}: {grouped(headline)} {what} ({count(headline)})"]
    if "parts" in r:
        rest = r["parts"]["all"] - r["parts"]["text"] - r["parts"]["vision"] - r["parts"].get("audio", 0)
        lines.append(
            f"  text only ({text_part}): {grouped(r['parts']['text'])}; "
            f"{vision_part}: {grouped(r['parts']['vision'])}; "
            + (f"audio tower and embed_audio: {grouped(r['parts']['audio'])}; " if "audio" in r["parts"] else "")
            + f"all: {grouped(r['parts']['all'])}"
            + (
                f" (with the logits' learned scale{' and bias' if rest == 2 else ''}, {rest}, in neither tower)"
                if dual
                else ""
            )
        )
    if peft:
        lines += _peft_lines(peft)
    if "active" in r:
        lines.append(f"  active per token: {grouped(r['active'])} ({count(r['active'])})")
    if res.preset and res.preset.published:
        lines.append(f"  published: {res.preset.published} ({res.preset.source})")
        lines.append(f"  reference: {res.preset.reference}")
    lines.append(f"  closed form: {r['closed_form']}")
    lines.append("  components:")
    lines += _table(r["components"], grouped)
    if res.preset and res.preset.real:  # a hand count (handcounts.py)
        from symtrans.catalog.comparison import comparison_lines

        lines += comparison_lines(res.preset, res.spec)
    for n in r["notes"]:
        lines.append(f"  note: {n}")
    _emit(args, "\n".join(lines))
    return 0


# ---------------------------------------------------------------------------------
# flops


def _check_flops_options(args, res) -> None:
    """Refuse ``flops`` options that would change nothing (one sentence, exit 2).

    A causal-mask count on an encoder-only model (its self-attention is bidirectional:
    there is no mask to count; ``--mask window`` counts the band of a masked window), and prompt/generation lengths outside the inference modes
    that read them (--prefill: prefill and decode; --generate: decode).
    """
    from symtrans.engine.conventions import MODES

    masked_window = args.mask == "window" and res.spec.window_mask  # the band of a bidirectional window (ModernBERT)
    if args.mask != "full" and res.spec.family == "encoder-only" and not masked_window:
        raise UsageError(
            f"symtrans flops: --mask {args.mask} counts a causal mask, but {res.name} is encoder-only: "
            "its self-attention is bidirectional (every query meets every key), so there is no mask"
        )
    if args.mode in MODES:  # an unknown mode is reported by usage_cli, naming the valid ones
        if args.prefill is not None and args.mode not in ("prefill", "decode"):
            raise UsageError(
                f"symtrans flops: --prefill (prompt tokens) applies to --mode prefill or decode, not {args.mode}"
            )
        if args.generate is not None and args.mode != "decode":
            raise UsageError(f"symtrans flops: --generate (generated tokens) applies to --mode decode, not {args.mode}")


def _cmd_flops(args) -> int:
    res = _resolve(args)
    if getattr(args, "part", "all") == "audio":  # a wav2vec2 / HuBERT encoder, per input of --audio-seconds
        from symtrans.cli.audio_flops import cmd_audio_flops

        return cmd_audio_flops(args, res, _emit)
    if getattr(args, "audio_seconds", None) is not None:
        raise UsageError("symtrans flops: --audio-seconds applies to --part audio (an audio encoder's FLOPs per input)")
    if getattr(args, "part", "all") == "vision":  # the image tower, per image
        from symtrans.cli.image_flops import cmd_image_flops

        return cmd_image_flops(args, res, _emit)
    if getattr(args, "image_size", None) is not None:
        raise UsageError("symtrans flops: --image-size applies to --part vision (the image tower's FLOPs per image)")
    _check_flops_options(args, res)  # modes, conventions, masks, recomputation, --compare: usage.py
    from symtrans.cli.usage import cmd_flops

    return cmd_flops(args, res, _emit)


# ---------------------------------------------------------------------------------
# report

REPORT_EXTENSIONS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".tex": "latex",
    ".pdf": "pdf",
    ".html": "html",
    ".htm": "html",
}


def report_format(fmt: str | None, output: str | None) -> str:
    """The format of ``symtrans report``: ``--format`` if given, else the one the ``-o``
    extension names (.md/.markdown, .tex, .pdf, .html/.htm), else markdown.

    Raises:
        UsageError: an explicit --format that contradicts a known extension of -o; an
            extension naming another format (``-o report.docx`` wrote Markdown into a
            .docx file) without --format.  No extension, or .txt, is Markdown.
    """
    import os

    ext = os.path.splitext(output)[1].lower() if output else ""
    implied = REPORT_EXTENSIONS.get(ext)
    if fmt is None and implied is None and ext not in ("", ".txt"):
        known = ", ".join(sorted(REPORT_EXTENSIONS))
        raise UsageError(
            f"symtrans report: -o {output}: the extension {ext} is not a report format symtrans writes ({known}); "
            "use one of those, or give --format to write that format under this name"
        )
    if fmt is None:
        return implied or "markdown"
    if implied is not None and implied != fmt:
        raise UsageError(
            f"symtrans report: --format {fmt} contradicts the extension {ext} of -o {output} "
            f"(which means {implied}); change one of them"
        )
    return fmt


def _cmd_report(args) -> int:
    from symtrans.catalog import deploy_handcount as hc

    handcount = args.model == hc.HANDCOUNT  # article 001's deployment section, on its model (issue 23.8)
    if handcount:
        args.model = hc.PRESET
        if args.title is None:
            args.title = f"{hc.HANDCOUNT}: article 001's deployment section, on {hc.PRESET}"
    res = _resolve(args)  # the model's errors first, then the format's
    if handcount:
        from dataclasses import replace

        from symtrans.render.deploy_handcount_section import report_section

        res = replace(res, sections=res.sections + (report_section(),))
    from symtrans.cli.inspect import with_checkpoint_section

    res = with_checkpoint_section(args.model, args.set, res)  # a model directory with weights
    if args.train is not None:  # the training plan of a layout (issue 24)
        from symtrans.cli.train import with_train_section

        res = with_train_section(args.model, args.set, args.train, res)
    from symtrans.cli.deploy import with_deploy_section  # the serving plan (issue 23, build 6)

    res = with_deploy_section(res, args, args._deploy_defaults)
    out = _output_path(args)
    explicit = args.format is not None
    args.format = report_format(args.format, out)
    if args.format == "pdf":  # before the report and its charts are built: seconds of work for nothing
        if not args.output:
            raise UsageError("report --format pdf needs -o PATH (or -o - for standard output)")
        from symtrans.render.report.pdf import require_tex

        require_tex()
    if out and not args.no_charts:  # likewise every chart file: checked again when written
        from symtrans.base.atomic import check_output
        from symtrans.render.plots import chart_paths

        for path in chart_paths(res.spec, out, args.format):
            check_output(path, _input_files(args))
    from symtrans.render.report import build_context, i18n, render_context
    from symtrans.render.report.terminal import summary

    wl = command_workload(res, args.batch, args.seq_len)  # the headline, the FLOPs sections and the charts read it
    report = build_context(res, title=args.title, workload=wl)
    lang = i18n.resolve(args.lang, report.language)
    if not out and not explicit and sys.stdout.isatty():
        # a person at a terminal: the headline numbers, and how to write the whole report
        _emit(args, summary(report))
        return 0
    if args.format == "pdf":
        from symtrans.render.report import build_pdf

        files: dict[str, bytes] = {}
        if not args.no_charts:  # charts (symtrans.plots) go into the TeX directory, embedded in the PDF
            from symtrans.render.plots import add_chart_section

            files = _charts(
                args, add_chart_section(report, res, out or "report.pdf", "latex", workload=wl, asked=args.charts)
            )
        _emit(args, build_pdf(render_context(report, "latex", lang=lang), files=files))
        if out:
            _report_written(args, report, out, "pdf")
        return 0
    if out and not args.no_charts:  # charts go next to the report file (inlined in HTML), in the same transaction
        from symtrans.render.plots import add_chart_section, beside

        files = _charts(args, add_chart_section(report, res, out, args.format, workload=wl, asked=args.charts))
        for path, data in beside(out, files).items():
            _outputs(args).add(path, data)
    _emit(args, render_context(report, args.format, lang=lang))
    if out:
        _report_written(args, report, out, args.format)
    return 0


def _charts(args, files):
    """The chart files; None (no matplotlib, charts not asked for with --charts): a warning."""
    if files is None:
        from symtrans.render.plots import INSTALL_HINT

        _warn(args, f"the report has no charts: they need matplotlib ({INSTALL_HINT}); --no-charts silences this")
        return {}
    return files


def _report_written(args, report, output: str, fmt: str) -> None:
    """On a terminal, the report's headline numbers and the file written (scripts get
    silence), once the file is in place (after the command's transaction commits)."""
    args.__dict__.setdefault("_after_commit", []).append(lambda: _print_summary(report, output, fmt))


def _print_summary(report, output: str, fmt: str) -> None:
    if sys.stdout.isatty():
        from symtrans.render.report.terminal import summary

        sys.stdout.write(summary(report, output, fmt) + "\n")


# ---------------------------------------------------------------------------------
# walk


def _pe_table_size(args) -> tuple[int, int]:
    """(d_model, positions) of ``walk --pe-table``: d_model from MODEL or ``--set d_model=``
    (default 6), positions from ``--positions`` or ``--seq-len`` (default 7)."""
    if args.step is not None:
        raise UsageError("symtrans walk: --step shows a step of the shape walk; it does not apply to --pe-table")
    if args.model:
        d = _resolve(args).spec.size("d_model")
    else:
        from symtrans.catalog.resolve import parse_setting

        d = 6
        for item in args.set:
            name, value = parse_setting(item)
            if name != "d_model":
                raise UsageError(f"symtrans walk: --pe-table without MODEL takes only --set d_model=N, not {name}")
            d = value
    if args.positions is not None and args.seq_len is not None and args.positions != args.seq_len:
        raise UsageError(f"symtrans walk: --positions {args.positions} and --seq-len {args.seq_len} disagree; give one")
    positions = args.positions or args.seq_len or 7
    return d, positions


def _cmd_walk(args) -> int:
    """``symtrans walk``: the shape walk (walk.py), or ``--pe-table`` (exact sinusoids)."""
    if args.pe_table:
        from symtrans.analysis.walk import pe_table, render_pe_table

        d, positions = _pe_table_size(args)
        if args.format == "json":
            rows = [[{"exact": str(v), "value": float(v.evalf(30))} for v in row] for row in pe_table(d, positions)]
            _emit(args, json.dumps({"d_model": d, "positions": positions, "table": rows}, indent=2))
        else:
            _emit(args, render_pe_table(d, positions))
        return 0
    if args.positions is not None:
        raise UsageError("symtrans walk: --positions is the row count of --pe-table; for the walk give --seq-len")
    if not args.model:
        raise UsageError("symtrans walk: MODEL is required (or give --pe-table)")
    res = _resolve(args)
    from symtrans.analysis.walk import render_markdown, render_text, step_detail, walk, walk_rows
    from symtrans.base.numbers import grouped, si
    from symtrans.engine.architectures import build
    from symtrans.engine.evaluate import exact

    w = walk(res.spec)
    v = flops_values(res, args.batch, args.seq_len)
    total = exact(w.flops, v)
    engine = exact(build(res.spec).flops, v)
    if args.step is not None:  # one step, in the format asked for
        if args.format == "json":
            _emit(args, json.dumps({"model": res.name, "values": v, "step": step_detail(w, args.step, v)}, indent=2))
        elif args.format == "markdown":
            _emit(args, render_markdown(w, v, step=args.step))
        else:
            _emit(args, render_text(w, v, step=args.step))
        return 0
    kept = {kind: exact(w.kept(kind), v) for kind in ("cache", "state")}
    if args.format == "json":
        _emit(
            args,
            json.dumps(
                {
                    "model": res.name,
                    "values": v,
                    "total_flops": total,
                    "engine_flops": engine,
                    **(
                        {
                            "kv_cache_elements_per_token": kept["cache"],
                            "state_elements_per_sequence": kept["state"],
                        }
                        if w.kinds
                        else {}
                    ),
                    "steps": walk_rows(w, v),
                },
                indent=2,
            ),
        )
        return 0
    from symtrans.base.escape import markdown_escape

    name = markdown_escape(res.name) if args.format == "markdown" else res.name  # a file's name: user text
    head = f"{name}: shape walk of the forward pass at B={args.batch}, " + (
        f"L_src={v['L_src']}, L_tgt={v['L_tgt']}" if res.spec.family == "encoder-decoder" else f"L={v['L']}"
    )
    tail = (
        f"sum over the steps: {grouped(total)} FLOPs ({si(total)}); the cost engine's forward FLOPs: "
        f"{grouped(engine)}{' (equal)' if total == engine else ' (DIFFERENT: please report)'}"
    )
    body = render_markdown(w, v) if args.format == "markdown" else render_text(w, v)
    if w.kinds:  # a hybrid: what its layers keep (the cache and state steps above)
        tail += (
            f"\nkept after the forward: K/V cache {grouped(kept['cache'])} elements per token "
            f"({grouped(2 * kept['cache'])} bytes at bf16); state {grouped(kept['state'])} elements per sequence "
            f"({grouped(2 * kept['state'])} bytes at bf16), whatever its length"
        )
    _emit(args, "\n".join([head, f"convention: {CONVENTION_NOTE}", body, tail]))
    return 0


# ---------------------------------------------------------------------------------
# parser


class _Skipped:
    """Stands in for the parser of a subcommand that this run does not use (see ``build_parser``):
    every method is a no-op that returns it."""

    def __getattr__(self, name: str):
        return lambda *args, **kwargs: self


class _OnlySubparsers:
    """``add_subparsers()`` that builds the parser of one subcommand only: building all
    fourteen costs more than answering ``symtrans params`` from generated data."""

    def __init__(self, sub, only: str) -> None:
        self.sub, self.only, self.found = sub, only, False

    def add_parser(self, name: str, **kwargs):
        if name != self.only:
            return _Skipped()
        self.found = True
        return self.sub.add_parser(name, **kwargs)


def _wants(sub, *names: str) -> bool:
    """Whether building ``sub`` needs any of the subcommands ``names``: a module that
    only registers other subcommands is not imported (each costs start-up time)."""
    return not isinstance(sub, _OnlySubparsers) or sub.only in names


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; ``only``: build just that subcommand (the one being run; the
    parse is the same for a command line that starts with it).  An unknown ``only``
    builds them all."""
    parser = _Parser(prog="symtrans", description="Exact, symbolic parameter counts and FLOPs of Transformer models.")
    parser.add_argument("--version", action=_VersionAction, help="print the version of symtrans and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    if only is not None:
        sub = _OnlySubparsers(sub, only)

    p = sub.add_parser("presets", help="list the presets with their provenance")
    p.add_argument("--format", type=format_arg, choices=("text", "json"), default="text")
    p.add_argument("-o", "--output", metavar="PATH")
    p.set_defaults(func=_cmd_presets)

    p = sub.add_parser("model-types", help="list the config.json model types symtrans reads")
    p.add_argument("--format", type=format_arg, choices=("text", "json", "markdown"), default="text")
    p.add_argument("-o", "--output", metavar="PATH")
    p.set_defaults(func=_cmd_model_types)

    p = sub.add_parser("params", help="exact parameter count and closed form")
    _common(p, ("text", "json", "markdown", "latex"), "text")
    p.add_argument("--title", default=None, help="title for markdown/latex output")
    p.add_argument(
        "--lora",
        default=None,
        metavar="r=R,targets=q,v",
        help="LoRA trainable vs frozen parameters; targets: q, k, v, o, gate, up, down, attention, ffn, all",
    )
    p.add_argument(
        "--part",
        choices=("all", "text", "vision", "audio"),
        default="all",
        help="a vision-language model: the whole class (all), its language model (text), its vision side "
        "or its audio tower (Gemma 4: audio tower and embed_audio)",
    )
    p.add_argument(
        "--adapter",
        default=None,
        metavar="r=R[,placement=houlsby|pfeiffer]",
        help="bottleneck adapters of width r: trainable vs frozen parameters",
    )
    p.set_defaults(func=_cmd_params)

    if _wants(sub, "flops", "memory", "time"):
        from symtrans.cli.usage import add_flops_options, add_memory_parser, add_time_parser

        p = sub.add_parser("flops", help="FLOPs: forward, backward, training, prefill, decode; conventions; --compare")
        _common(p, ("text", "json"), "text")
        _workload(p)
        add_flops_options(p)
        p.add_argument(
            "--part",
            choices=("all", "vision", "audio"),
            default="all",
            help="vision: the image tower (a dual encoder's, or a vision-language model's tower and projector), "
            "forward FLOPs per image and for --batch images, tokens per image stated; audio: a wav2vec 2.0 or HuBERT "
            "encoder's forward FLOPs per input of --audio-seconds and for --batch inputs, frames stated (other audio "
            "towers refused)",
        )
        p.add_argument(
            "--image-size",
            default=None,
            metavar="S|HxW",
            help="with --part vision: the image in pixels, for a tower that takes any size (Qwen-VL, Mistral 3, Kimi K2.5), tiles it (LLaVA-NeXT) or "
            "resizes it to its soft-token budget (Gemma 4)",
        )
        p.add_argument(
            "--audio-seconds",
            default=None,
            metavar="S",
            help="with --part audio: seconds of audio per input (16,000 samples a second, the feature extractor's "
            "default), e.g. 1 or 2.5",
        )
        p.set_defaults(func=_cmd_flops)
        add_memory_parser(sub, _common, _workload, _emit)
        add_time_parser(sub, _common, _workload, _emit)
    if _wants(sub, "deploy"):
        from symtrans.cli.deploy import add_deploy_parser  # serving plan (issue 12)

        add_deploy_parser(sub, _common, _emit, UsageError)
    if _wants(sub, "reconcile"):
        from symtrans.cli.reconcile import add_reconcile_parser  # a vLLM log line by line (issue 23)

        add_reconcile_parser(sub, _common, _emit)

    if _wants(sub, "train"):
        from symtrans.cli.train import add_train_parser  # training at scale (issue 24)

        add_train_parser(sub, _common, _emit, UsageError)

    if _wants(sub, "report"):
        p = sub.add_parser("report", help="derivation report: HTML, Markdown, LaTeX or PDF")
        _common(
            p,
            ("markdown", "latex", "pdf", "html"),
            None,  # None: from the -o extension (report_format)
            "default: from the -o extension (.html html, .md markdown, .tex latex, .pdf pdf), else markdown; "
            "without -o on a terminal, a short summary",
        )
        _workload(p)
        p.add_argument("--title", default=None, help="report title (any script; escaped for every format)")
        from symtrans.render.languages import CHOICES as LANGUAGES  # data only: no Jinja2, no SymPy

        p.add_argument(
            "--lang",
            choices=LANGUAGES,
            default="en",
            help="language of the report's text (numbers, formulas and sources are the same in all); "
            "auto: a hand-count preset in its article's language, else English",
        )
        charts = p.add_mutually_exclusive_group()
        charts.add_argument(
            "--no-charts",
            action="store_true",
            help="leave out the charts (with -o they are written next to the report; they need matplotlib)",
        )
        charts.add_argument(
            "--charts",
            action="store_true",
            help="ask for the charts: without matplotlib the report says how to install it "
            "(by default the charts are drawn when matplotlib is installed, else left out with a warning)",
        )
        p.add_argument(
            "--train",
            default=None,
            metavar='"OPTIONS"',
            help='add a training plan section: the options of symtrans train, quoted (--train "--tp 8 --pp 2")',
        )
        from symtrans.cli.deploy import add_deploy_options

        p.add_argument(
            "--deploy",
            default=None,
            metavar="ACCELERATOR",
            help="add a deployment plan section on this accelerator (the plan of symtrans deploy; its options below)",
        )
        group = p.add_argument_group("deployment plan (with --deploy; the options of symtrans deploy)")
        before = len(p._actions)
        add_deploy_options(group, accelerator=False)
        deploy_defaults = {a.dest: (a.option_strings[0], a.default) for a in p._actions[before:]}
        p.set_defaults(func=_cmd_report, _deploy_defaults=deploy_defaults)

    p = sub.add_parser("walk", help="shape walk: every step of the forward pass, its shapes and FLOPs")
    p.add_argument("model", metavar="MODEL", nargs="?", help="a preset name or a config.json path")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a size or an option")
    p.add_argument("--format", type=format_arg, choices=("text", "json", "markdown"), default="text")
    p.add_argument("-o", "--output", metavar="PATH", help="write here (atomically) instead of standard output")
    _workload(p)
    p.add_argument(
        "--step",
        type=int_arg("--step"),
        default=None,
        metavar="K",
        help="show step K only: FLOPs as formula = substitution = value",
    )
    p.add_argument(
        "--pe-table",
        action="store_true",
        help="print the exact sinusoidal table instead (d_model of MODEL or --set d_model=N, default 6; "
        "--positions rows, default 7)",
    )
    p.add_argument(
        "--positions",
        type=int_arg("--positions"),
        default=None,
        metavar="P",
        help="rows (positions 0..P-1) of --pe-table (default 7; --seq-len is accepted too)",
    )
    p.set_defaults(func=_cmd_walk)

    if _wants(sub, "solve", "plan", "sweep", "diff", "identities", "plot"):
        from symtrans.cli.analysis import add_analysis_parsers

        add_analysis_parsers(sub, _common, _workload, _emit, UsageError)
    if _wants(sub, "inspect"):
        from symtrans.cli.inspect import add_inspect_parser  # checkpoint headers vs the formula

        add_inspect_parser(sub, _emit)
    if only is not None and not sub.found:
        return build_parser()
    return parser


def _refuse_overwriting_input(args) -> None:
    """Check ``-o`` before any work (a PDF build takes seconds): it must be a place the
    shell's ``>`` could write a regular file, and not a file the command reads
    (``params cfg.json -o cfg.json`` would replace the user's config with the output).
    The output transaction checks every path it writes again, chart files included.

    Raises:
        OSError, ValueError: one sentence naming -o (``atomic.check_output``).
    """
    out = _output_path(args)
    if out is not None:
        from symtrans.base.atomic import check_output

        check_output(out, _input_files(args))


def version() -> str:
    """The installed version of symtrans (importlib.metadata), else the one in the source
    tree's pyproject.toml, else "unknown"."""
    try:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as dist_version

        try:
            return dist_version("symtrans")
        except PackageNotFoundError:
            pass
    except ImportError:  # pragma: no cover - Python >= 3.8 has importlib.metadata
        pass
    import re
    from pathlib import Path

    try:
        text = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return "unknown"
    m = re.search(r'^version\s*=\s*"([^"]+)"', text, re.MULTILINE)
    return m.group(1) if m else "unknown"


class _VersionAction(argparse.Action):
    """``--version``: looked up only when asked for (importlib.metadata is not free at startup)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(f"symtrans {version()}\n")
        parser.exit()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 2 bad input, 128 + N when
    stopped by signal N: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP).

    Every line on stderr has the characters a terminal would act on shown escaped.
    """
    from symtrans.base.escape import one_line
    from symtrans.base.interrupt import check, exit_status, interrupts_as_exceptions, message, until_exit

    try:
        with interrupts_as_exceptions():  # SIGTERM/SIGHUP unwind like Ctrl-C: TeX killed, temp files removed
            try:
                status = _main(argv, lambda line: print(one_line(line), file=sys.stderr))
            except Exception:
                # A C extension may turn the handler's exception into its own (matplotlib's
                # path converter raised "ValueError: Invalid affine transformation matrix"
                # for a SIGTERM that landed inside it): with a signal received, any
                # exception is that signal's.
                check()
                raise
            check()  # a signal that a finaliser swallowed still ends the run with its status
        if argv is None:  # the process is this command: a signal during shutdown still says what was written
            until_exit()
        return status
    except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM/SIGHUP (interrupt.Terminated)
        print(f"symtrans: {message(e)}", file=sys.stderr)
        return exit_status(e)
    except BrokenPipeError:  # the reader of standard output went away (| head): stop quietly, as cat does
        import os

        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        except (OSError, ValueError):
            pass
        return 128 + 13  # SIGPIPE


def _main(argv: Sequence[str] | None, say) -> int:
    from symtrans.base.interrupt import check as check_interrupt

    args_list = sys.argv[1:] if argv is None else list(argv)
    # only the subcommand being run is built (building all of them costs more than
    # answering ``symtrans params`` from generated data)
    parser = build_parser(args_list[0] if args_list and not args_list[0].startswith("-") else None)
    args = None
    try:
        args = parser.parse_args(args_list)
        _refuse_overwriting_input(args)
        status = args.func(args) or 0
        if status == 0:
            _outputs(args).commit()  # the files and standard output, all together
            for after in getattr(args, "_after_commit", ()):  # messages about the files just written
                after()
        for w in getattr(args, "_warnings", ()):  # queued by _warn; dropped when the command fails
            say(w)
        return status
    except UsageError as e:
        say(str(e))
        return 2
    except BrokenPipeError:
        raise
    except (SymtransError, OSError, RecursionError) as e:
        # symtrans's own errors (bad input, an unusable environment: base/errors.py), the
        # file system's, and input nested too deep to read: one line, exit 2.  Any other
        # exception (a ValueError from SymPy, a KeyError from a dict) is a bug: its traceback.
        check_interrupt()  # an error caused by a signal (EINTR, a converted exception) is the signal's
        msg = str(e)
        if isinstance(e, OSError) and e.strerror and e.filename is None:
            msg = e.strerror  # our own OSErrors name the path; drop the "[Errno N]" prefix
        say(f"symtrans: error: {msg}")  # say: one line, capped and escaped (escape.one_line)
        return 2
    except SystemExit as e:  # --help and --version exit through argparse
        return int(e.code or 0)
    finally:  # a command that failed or was stopped: its streamed outputs' temporary files go
        tx = args.__dict__.get("_outputs") if args is not None else None
        if tx is not None:
            tx.discard()  # a no-op after the commit


def run() -> None:
    sys.exit(main())


if __name__ == "__main__":
    run()
