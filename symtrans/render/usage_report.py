"""Report sections for training/inference FLOPs, memory and time.

``add_sections(report, spec, values)`` adds three sections to a report (``doc.Report``,
after the shape walk): ``usage_flops`` (modes, conventions, recomputation, prefill/decode
closed forms and the published formulas), ``usage_memory`` (training and inference
bytes) and ``usage_time`` (ideal step time and roofline verdicts on every accelerator of
``hardware.ACCELERATORS``).  Sections are ``doc`` models: the prose is written here once
and printed by every writer (Markdown, LaTeX, HTML) in every report language.
"""

from __future__ import annotations

import sympy as sp

from symtrans.engine.simplify import closed_form
from symtrans.engine.spec import Spec
from symtrans.render.report import doc
from symtrans.render.report.doc import N_, Column, Section, data_list, data_msg, msg, runs, strong, table


def _fmt_bytes(n) -> str:
    from symtrans.base.numbers import binary_bytes, si

    r = sp.Rational(n)
    if r < 1024:
        return f"{r} bytes"
    return f"{binary_bytes(r)} = {si(r, 'B', 2)}"


def _fmt_seconds(x) -> str:
    """Seconds as s, ms or µs: ``base.numbers.seconds``, the one formatter of times."""
    from symtrans.base.numbers import seconds

    return seconds(x)


def _exact(x) -> str:
    """An exact number as text: '124,439,808', or 'p/q' for a fraction (never a float)."""
    r = sp.Rational(x)
    return f"{int(r):,}" if r.q == 1 else f"{r.p}/{r.q}"


def _generative(spec: Spec) -> bool:
    return spec.family == "encoder-decoder" or (spec.family == "decoder-only" and spec.lm_head)


# (label, mode, convention, mask, recomputation) of the FLOPs table.
_FLOP_ROWS = (
    (N_("forward"), "forward", "flops", "full", "none"),
    (N_("backward (2 x forward)"), "backward", "flops", "full", "none"),
    (N_("training (forward + backward)"), "training", "flops", "full", "none"),
    (N_("training, selective recomputation"), "training", "flops", "full", "selective"),
    (N_("training, full recomputation"), "training", "flops", "full", "full"),
    (N_("forward, exact causal triangle"), "forward", "flops", "causal", "none"),
    (N_("forward, in MACs (fvcore, ptflops)"), "forward", "macs", "full", "none"),
    (N_("forward, all-ops"), "forward", "all-ops", "full", "none"),
)


def _flops_section(spec: Spec, values: dict[str, int] | None) -> Section:
    from symtrans.accounting import flops as F
    from symtrans.engine.conventions import CONVENTIONS
    from symtrans.engine.symbols import SYMBOLS

    from .report.mathfmt import equation, setting

    blocks: list = [
        doc.Para(
            msg(
                "Convention: {convention}. Backward = 2 x forward per matmul (gradients with respect to inputs and "
                "to weights); full recomputation adds one forward pass of the layers, not of the logits.",
                convention=msg(CONVENTIONS["flops"].description),
            )
        )
    ]
    if values is not None:
        tokens = values["B"] * (values["L_tgt"] if spec.family == "encoder-decoder" else values["L"])
        rows = []
        for label, mode, conv, mask, rc in _FLOP_ROWS:
            total = F.evaluate(F.flops_expr(spec, mode, conv, mask, rc), values)
            unit = CONVENTIONS[conv].unit
            rows.append((msg(label), f"{_exact(total)} {unit}", f"{_exact(total / tokens)} {unit}"))
        blocks.append(table([msg("mode"), Column(msg("count"), "r"), Column(msg("per token"), "r")], rows))
    blocks.append(
        doc.Display(
            equation(F.flops_expr(spec, "training"), values),
            strong(msg("Training FLOPs per step (forward + backward):")),
        )
    )
    if _generative(spec):
        inf_values = None
        if values is not None:  # the defaults of 'symtrans flops --mode prefill/decode' and 'symtrans time'
            from symtrans.accounting.roofline import inference_lengths

            pre, gen = inference_lengths(spec, values)
            inf_values = {**values, "L_pre": pre, "T_gen": gen}
        for label, expr in (
            (N_("prefill of L_pre prompt tokens (logits for the last one)"), F.prefill_expr(spec)),
            (N_("decode of T_gen tokens with a KV cache (summed over positions)"), F.decode_expr(spec)),
        ):
            lead: tuple = strong(msg(label))
            if inf_values is not None:
                lead = msg(
                    "{label} (at {prefill}, {generate}, the defaults of {prefill_command} and {decode_command}):",
                    label=lead,
                    prefill=setting(SYMBOLS["L_pre"], inf_values["L_pre"]),
                    generate=setting(SYMBOLS["T_gen"], inf_values["T_gen"]),
                    prefill_command=doc.Code("symtrans flops --mode prefill"),
                    decode_command=doc.Code("--mode decode"),
                )
            else:
                lead = runs(lead, ":")
            blocks.append(doc.Display(equation(expr, inf_values), lead))
        found = F.decode_sum(spec)  # how the decode sum closes: the step as a function of t, sums of powers
        if found is not None:
            from symtrans.engine import symbols as S

            from .report.mathfmt import formula

            step, powers = found
            blocks.append(doc.Display(equation(step, None), msg("one decode step at position t (context L_pre + t):")))
            sums = [
                runs(formula(sp.Eq(sp.Sum(S.t**p, (S.t, 1, S.T_gen)), sp.factor(F.power_sum(p)), evaluate=False)))
                for p in powers
            ]
            blocks.append(doc.Para(msg("The sum over t = 1 … T_gen closes with the sums of powers:")))
            blocks.append(doc.Bullets(tuple(sums)))
    if spec.family != "encoder-decoder" and spec.has("V") and values is not None:  # no vocabulary: no formulas
        from symtrans.accounting.formulas import compare

        found = compare(spec, {"B": values["B"], "L": values["L"]})
        if found:
            blocks.append(doc.Heading(3, msg("Published formulas")))
            blocks.append(doc.Para(msg("Ratio = formula / exact count; residual = exact count - formula.")))
            rows = [
                (
                    r.name,
                    data_msg(r.quantity),
                    _exact(r.value),
                    _exact(r.exact),
                    f"{float(r.ratio):.4f}",
                    msg(N_("yes") if r.assumed_residual == 0 else N_("no")),
                )
                for r in found
            ]
            blocks.append(
                table(
                    [
                        Column(msg("formula"), wrap=0.24),
                        Column(msg("quantity"), wrap=0.14),
                        Column(msg("formula value"), "r"),
                        Column(msg("exact count"), "r"),
                        Column(msg("ratio"), "r"),
                        Column(msg("exact under its assumptions"), wrap=0.1),
                    ],
                    rows,
                    long=True,
                    small=True,
                )
            )
            for r in found:
                blocks.append(
                    doc.Display(
                        equation(r.residual, None),
                        msg(
                            "{name} ({source}); assumptions: {assumptions}. Residual:",
                            name=strong(r.name),
                            source=r.source,
                            assumptions=data_list(r.assumptions),
                        ),
                    )
                )
    return Section("usage_flops", msg("Training and inference FLOPs"), blocks)


_TRAINING_MEMORY = (
    (N_("weights (bf16)"), "weights_bytes"),
    (N_("gradients (bf16)"), "gradients_bytes"),
    (N_("optimizer states (Adam, mixed precision)"), "optimizer_bytes"),
    (N_("activations (Korthikanti et al. 2022, no recomputation)"), "activations_bytes"),
    (N_("total"), "total_bytes"),
)
_INFERENCE_MEMORY = (
    (N_("weights (bf16)"), "weights_bytes"),
    (N_("KV cache (bf16)"), "kv_cache_bytes"),
    (N_("activations (one layer, the last logits)"), "activations_bytes"),
    (N_("margin (10%)"), "margin_bytes"),
    (N_("total"), "total_bytes"),
)


def _memory_section(spec: Spec, values: dict[str, int] | None) -> Section:
    from symtrans.accounting.flops import evaluate
    from symtrans.accounting.memory import OPTIMIZERS, memory_terms

    from .report.mathfmt import equation, formula

    with sp.evaluate(False):
        gib, gb = formula(sp.Pow(2, 30)), formula(sp.Pow(10, 9))
    blocks: list = [
        doc.Para(
            msg(
                "Bytes per data-parallel rank; GiB = {gib} bytes (binary), GB = {gb} bytes (decimal). "
                "Optimizer: {optimizer}.",
                gib=gib,
                gb=gb,
                optimizer=data_msg(OPTIMIZERS["adam-mixed"].description),
            )
        )
    ]
    if values is None:
        blocks.append(doc.Para(msg("No values: the model sets no sequence length.")))
        return Section("usage_memory", msg("Memory"), blocks)
    seq = values["L_tgt"] if spec.family == "encoder-decoder" else values["L"]
    src = values.get("L_src") if spec.family == "encoder-decoder" else None
    train = memory_terms(spec, batch=values["B"], seq_len=seq, src_len=src)
    infer = memory_terms(spec, mode="inference", batch=values["B"], seq_len=seq, src_len=src)
    for head, terms, labels in ((N_("training"), train, _TRAINING_MEMORY), (N_("inference"), infer, _INFERENCE_MEMORY)):
        rows = []
        for label, key in labels:
            n = evaluate(terms[key], values)
            rows.append(doc.Row((msg(label), _exact(n), _fmt_bytes(n)), "total" if key == "total_bytes" else "body"))
        blocks.append(table([msg(head), Column(msg("bytes"), "r"), Column((), "r")], rows))
    blocks.append(
        doc.Display(
            equation(closed_form(train["kv_cache_bytes_per_token"]), values),
            strong(msg("KV cache per token (bytes, 16-bit):")),
        )
    )
    blocks.append(
        doc.Display(
            equation(closed_form(train["activations_bytes_per_layer"]), values),
            strong(msg("Activations per layer (bytes, 16-bit, after Korthikanti et al. 2022):")),
        )
    )
    return Section("usage_memory", msg("Memory"), blocks)


def _time_section(spec: Spec, values: dict[str, int] | None) -> Section:
    """Ideal training step on one device, and prefill/decode of one request on the roofline
    with the CLI's workload (``roofline.inference_lengths``, ``roofline.inference_roofline``):
    the same figures as ``symtrans time MODEL --accelerator NAME``."""
    from symtrans.accounting import flops as F
    from symtrans.accounting.flops import evaluate
    from symtrans.accounting.hardware import ACCELERATORS, step_time
    from symtrans.accounting.roofline import (
        inference_lengths,
        inference_phases,
        inference_roofline,
        roofline_assumptions,
    )
    from symtrans.base.numbers import si
    from symtrans.engine.symbols import SYMBOLS

    from .report.mathfmt import setting

    if values is None:
        return Section(
            "usage_time", msg("Time on accelerators"), [doc.Para(msg("No values: the model sets no sequence length."))]
        )
    blocks: list = [
        doc.Para(
            msg(
                "Training step on one device at 100% model FLOPs utilisation (a lower bound: divide by the MFU and "
                "by the number of devices). Peak: bf16, or fp16 on a device without bf16."
            )
        )
    ]
    train = evaluate(F.flops_expr(spec, "training"), values)
    generative = _generative(spec)
    if generative:
        pre, gen = inference_lengths(spec, values)
        v = {**values, "L_pre": pre, "T_gen": gen}
        blocks.append(
            doc.Para(
                msg(
                    "Prefill of {prefill} prompt tokens and decode of {generate} token after them (the defaults of "
                    "{command}), on the roofline with weights and KV cache in bf16: compute- or memory-bound, and "
                    "the roofline time. Assumptions: {assumptions}.",
                    prefill=setting(SYMBOLS["L_pre"], pre),
                    generate=setting(SYMBOLS["T_gen"], gen),
                    command=doc.Code("symtrans time"),
                    assumptions=data_list(roofline_assumptions(spec, 1)),
                )
            )
        )
    bound = {"compute": N_("compute, {time}"), "memory": N_("memory, {time}")}
    rows = []
    phases = inference_phases(spec, v) if generative else None  # FLOPs and bytes once; each accelerator its roofline
    for acc in ACCELERATORS.values():
        row: list = [
            acc.name,
            f"{si(acc.peak(), 'FLOP/s')} {acc.default_precision}",
            si(acc.bandwidth, "B/s", 2),
            _fmt_seconds(step_time(train, acc)),
        ]
        if generative:
            ph = inference_roofline(spec, v, acc, phases=phases)
            pre_bound = ph["prefill"].bound.split("-")[0]
            dec_bound = ph["decode"].bound.split("-")[0]
            row.append(msg(bound[pre_bound], time=_fmt_seconds(ph["prefill"].time)))
            row.append(msg(bound[dec_bound], time=msg("{time}/token", time=_fmt_seconds(ph["decode"].time))))
        rows.append(row)
    columns = [
        msg("accelerator"),
        Column(msg("peak"), "r"),
        Column(msg("bandwidth"), "r"),
        Column(msg("training step"), "r"),
    ]
    if generative:
        columns += [Column(msg("prefill"), wrap=0.14), Column(msg("decode"), wrap=0.16)]
    blocks.append(table(columns, rows, long=True, small=True))
    blocks.append(doc.Para(msg("Sources:")))
    blocks.append(doc.Bullets(tuple(runs(f"{a.name}: ", data_msg(a.source)) for a in ACCELERATORS.values())))
    return Section("usage_time", msg("Time on accelerators"), blocks)


def add_sections(report: doc.Report, spec: Spec, values: dict[str, int] | None, after: str = "walk") -> None:
    """Add the FLOPs (training/inference), memory and time sections to ``report``, after
    the section ``after``.

    ``values`` are the sizes with the report's workload (B, L or L_src/L_tgt), or None
    when the model has no sequence length (then only closed forms are shown).

    Raises:
        ValueError: sizes that give a non-integer count.
    """
    doc.add_section(report, _flops_section(spec, values), after=after)
    doc.add_section(report, _memory_section(spec, values), after="usage_flops")
    doc.add_section(report, _time_section(spec, values), after="usage_memory")
