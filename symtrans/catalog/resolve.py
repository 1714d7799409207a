"""Turn what the user typed (MODEL and --set NAME=VALUE) into a validated Spec.

MODEL is a preset name or a path to a Hugging Face ``config.json``.  ``--set`` takes a
size symbol (an integer) or a Spec option (a boolean, an integer or one of its
choices).  User text is never evaluated: values are matched against fixed patterns.
Every failure raises ``ValueError`` with one sentence; the CLI prints it and exits 2.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from symtrans.base.errors import InputError
from symtrans.base.numbers import MAX_INT_DIGITS, parse_int  # noqa: F401 (re-exported for the CLI)
from symtrans.catalog import presets
from symtrans.catalog.settings import apply_settings, parse_setting  # noqa: F401 (re-exported)
from symtrans.engine.spec import WORKLOAD_SIZES, Spec

if TYPE_CHECKING:  # pragma: no cover - imported where a config.json is read (it imports SymPy)
    from symtrans.accounting.checkpoint_config import Checkpoint

# Integers may be written 4096, 4_096 or 7e9-style when exact (e.g. 32e3).


@dataclass(frozen=True)
class Resolved:
    """A model ready to count.

    Attributes:
        name: the preset name or the config file's stem, for titles.
        spec: the validated Spec (with --set applied).
        preset: the Preset it came from, if any (provenance, published figure).
        notes: assumptions made on the way (config defaults, --set changes).
        seq_len_source: where the workload's default sequence length ``L`` (a size of
            ``spec``) comes from: a preset's documented training context, ``--set L``,
            or the stated default of ``default_seq_len``.
        modified_from: the preset a ``--set`` changed (its published figure, source and
            notes no longer apply, so ``preset`` is None), and ``changes`` the settings.
        sections: extra report sections, each the keyword arguments of
            ``render.report.doc.add_section`` (``symtrans report DIR`` adds "Checkpoint vs
            formula" for a checkpoint directory).
        checkpoint: for a config.json, its weights' dtype and quantization
            (``accounting.quantization.Checkpoint``); None for a preset.
    """

    name: str
    spec: Spec
    preset: presets.Preset | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    seq_len_source: str = ""
    modified_from: str = ""
    changes: tuple[str, ...] = ()
    sections: tuple[dict, ...] = field(default_factory=tuple)
    checkpoint: Checkpoint | None = None
    counted_class: str | None = None
    generic: GenericInput | None = None


@dataclass(frozen=True)
class GenericInput:
    """A config.json whose model_type has no curated record, for the generic path
    (``catalog.generic``): its parsed dict, type and path.  ``Resolved.spec`` is None."""

    cfg: dict
    model_type: str
    path: str
    supported: str = ""


# The workload length when nothing documents one: GPT-3's context (Brown et al. 2020 §2.1),
# capped by the model's own maximum positions.
DEFAULT_SEQ_LEN = 2048


def default_seq_len(spec: Spec, preset: presets.Preset | None = None) -> tuple[int, str]:
    """The default workload sequence length ``L`` of ``spec`` (tokens) and its source.

    In order: the ``L`` the spec already carries (a preset's documented training
    context, or ``--set L``); the documented context of a preset whose spec this one
    equals (so a config.json of a preset model gives the preset's numbers); the learned
    position table's rows ``L_max`` (a table that size is the training context); and
    otherwise ``DEFAULT_SEQ_LEN`` capped by ``L_max`` (max_position_embeddings is the
    longest context a model supports, not a typical request).  Parameter counts never
    depend on it: only FLOPs, memory and time do.
    """
    v = spec.values
    if "L" in v:
        if preset is not None and preset.spec.values.get("L") == v["L"]:
            return v["L"], preset.context_source or f"the documented training context of {preset.name}"
        return v["L"], "--set L"
    # Compare the sizes first (cheap tuples): building a Spec without L validates it, and
    # doing that for every preset cost a config.json's cold start about 9 ms.
    sizes = tuple((n, x) for n, x in spec.sizes if n != "L")
    for p in presets.PRESETS.values():
        if p.kind != "model" or not p.spec.has("L"):
            continue
        if tuple((n, x) for n, x in p.spec.sizes if n != "L") == sizes and _without_l(p.spec) == spec:
            return p.spec.values["L"], f"the documented training context of {p.name} (this config matches that preset)"
    if "L_max" in v and spec.positional == "learned":
        return v["L_max"], "the learned position table's rows (L_max)"
    if "L_tgt_max" in v and spec.decoder_positions == "learned":  # Whisper: the decoder's own table
        return v["L_tgt_max"], "the decoder's learned position table's rows (L_tgt_max)"
    if "L_max" in v and v["L_max"] < DEFAULT_SEQ_LEN:
        return v["L_max"], "the model's maximum positions (L_max)"
    return DEFAULT_SEQ_LEN, f"symtrans's default of {DEFAULT_SEQ_LEN} tokens (set --seq-len)" + (
        f"; the model supports up to L_max = {v['L_max']:,}" if "L_max" in v else ""
    )


def seq_len_warning(spec: Spec, values: dict[str, int]) -> str | None:
    """A warning when the workload's lengths exceed a learned position table (the model
    has no position vector past row ``L_max``), else None."""
    tables = ("learned", "sinusoidal-table")  # a stored table has no row past its last
    if spec.family == "encoder-decoder":  # each stack's own table (L_src_max, L_tgt_max) or the shared L_max
        stacks = [("L_src", spec.positional, "L_src_max"), ("L_tgt", spec.decoder_positions, "L_tgt_max")]
    else:
        stacks = [("L", spec.positional, "L_max")]
    over = []
    for n, kind, rows in stacks:
        rows = rows if rows in values else "L_max"
        if kind in tables and rows in values and values.get(n, 0) > values[rows]:
            table = "learned position table" if kind == "learned" else "stored sinusoidal table"
            over.append(f"{n} = {values[n]:,} exceeds the {table}'s {rows} = {values[rows]:,} rows")
    if not over:
        return None
    return f"{' and '.join(over)}: the model cannot run at this length (counted as if it could)"


def _without_l(spec: Spec) -> Spec:
    import dataclasses

    return dataclasses.replace(spec, sizes=tuple((n, x) for n, x in spec.sizes if n != "L"))


# A Hugging Face Hub repository id (owner/name), as people paste it from the model page.
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*")


def _hub_id_message(model: str) -> str:
    """Why ``owner/name`` is not read (no download: counts come from local files) and
    how to get its config.json, with the presets whose names resemble its name."""
    import difflib

    name = model.partition("/")[2].lower()
    close = difflib.get_close_matches(name, presets.PRESETS, n=3, cutoff=0.6)
    hint = f"; presets of similar names: {', '.join(close)}" if close else ""
    return (
        f"{model}: no such file; it looks like a Hugging Face Hub id, and symtrans reads local files only "
        f"(it never downloads): fetch the config with 'hf download {model} config.json --local-dir DIR' "
        f"and give DIR{hint}"
    )


def resolve(model: str, settings: list[str] | None = None, generic_ok: bool = False) -> Resolved:
    """Resolve MODEL (preset name or config.json path) and apply ``settings``.

    ``generic_ok``: a config.json whose model_type has no curated record may be returned
    for the generic path (``Resolved.generic``, ``spec`` None); otherwise it is refused.

    Raises:
        ValueError: unknown preset (with close names), unreadable or invalid config,
            bad --set, or an invalid resulting spec.
    """
    settings = list(settings or [])
    if _HUB_ID.fullmatch(model) and not model.endswith(".json") and not os.path.exists(model):
        raise InputError(_hub_id_message(model))
    if model.endswith(".json") or os.sep in model or os.path.exists(model):
        from symtrans.catalog.generic.route import GenericRoute
        from symtrans.catalog.hf_config import load_config_checkpoint  # imported here: only config users pay for it

        try:
            spec, name, notes, checkpoint = load_config_checkpoint(model)
        except GenericRoute as g:
            if not generic_ok:  # a caller that needs a Spec (solve, sweep, diff, ...)
                raise InputError(
                    f"{model}: model_type {g.model_type!r} is counted from transformers' modeling code, "
                    "which gives 'symtrans params' (and symtrans.model) only so far"
                ) from None
            return _generic(model, g, settings)
        preset = None
    else:
        try:
            preset = presets.get(model)
        except KeyError as e:
            raise InputError(e.args[0]) from None
        spec, name, notes, checkpoint = preset.spec, preset.name, (), None
    spec, set_notes = apply_settings(spec, settings)
    seq_len, source = default_seq_len(spec, preset)
    modified_from, changes = "", ()
    if preset is not None and preset.kind == "model" and _model_part(spec) != _model_part(preset.spec):
        # A changed model is not the published one: name it so and drop its provenance.
        changes = tuple(s.strip() for s in settings if parse_setting(s)[0] not in WORKLOAD_SIZES)
        modified_from, name, preset = preset.name, f"{preset.name}, modified ({', '.join(changes)})", None
    if not spec.has("L"):
        spec = spec.replace(sizes={"L": seq_len})
    return Resolved(
        name=name,
        spec=spec,
        preset=preset,
        notes=tuple(notes) + set_notes,
        seq_len_source=source,
        modified_from=modified_from,
        changes=changes,
        checkpoint=checkpoint,
        counted_class=_counted_class(notes, preset),
    )


# The class a curated count reproduces, as its first note or a preset's reference names it.
_CLASS = re.compile(r"\b([A-Z][A-Za-z0-9]*(?:ForCausalLM|ForConditionalGeneration|LMHeadModel|Model))\b")


def _counted_class(notes, preset) -> str | None:
    texts = list(notes[:1]) + ([preset.reference] if preset is not None else [])
    for text in texts:
        m = _CLASS.search(text)
        if m:
            return m.group(1)
    return None


def _generic(model: str, g, settings: list[str]) -> Resolved:
    """The Resolved of a config.json for the generic path: no Spec, no --set."""
    from pathlib import Path

    if settings:
        raise InputError(
            f"{model}: --set works with curated model types only; model_type {g.model_type!r} is counted "
            "from transformers' modeling code (edit the config.json instead)"
        )
    p = Path(model)
    name = p.resolve().name if p.is_dir() else (p.stem if p.stem != "config" else p.resolve().parent.name or p.stem)
    return Resolved(
        name=name,
        spec=None,  # type: ignore[arg-type] - the generic path has no Spec
        generic=GenericInput(cfg=g.cfg, model_type=g.model_type, path=model, supported=g.supported),
    )


def _model_part(spec: Spec) -> Spec:
    """``spec`` without its workload sizes (B, L, ...): what a --set can modify of the model."""
    import dataclasses

    return dataclasses.replace(spec, sizes=tuple((n, x) for n, x in spec.sizes if n not in WORKLOAD_SIZES))
