"""Explain a checkpoint whose config.json has a model_type without a curated record.

Such a type is counted by the generic path (``symtrans.catalog.generic``): the installed
transformers' own modeling code built on the meta device.  Guessing a llama-like layout
from the tensor names would explain a real tensor (BitNet's ``attn_sub_norm``) as
"unexpected" and infer sizes the config contradicts, so here the formula is the generic
path's exact count (``count(config)``, what ``symtrans params`` prints) and every stored
tensor is matched by *name* against the same meta model's parameters and buffers.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from symtrans.catalog.checkpoint.formats import Checkpoint
from symtrans.catalog.checkpoint.inventory import Entry
from symtrans.catalog.checkpoint.names import Kind


class NoGenericExplanation(Exception):
    """The generic path cannot explain this checkpoint (one line: why)."""


def model_names(cfg: dict[str, Any], class_name: str) -> tuple[dict[str, int], set[str], set[str], str]:
    """(parameter name -> elements, counted once), tied alias names, buffer names and the
    base-model prefix of ``class_name`` built from ``cfg`` on the meta device."""
    from symtrans.catalog.generic import build as B

    mt = cfg["model_type"]
    model, _ = B.build_meta(mt, B.config_object(mt, cfg), class_name)
    params = {n: p.numel() for n, p in model.named_parameters()}
    aliases = {n for n, _ in model.named_parameters(remove_duplicate=False)} - set(params)
    buffers = {n for n, _ in model.named_buffers(remove_duplicate=False)}
    return params, aliases, buffers, getattr(model, "base_model_prefix", "") or ""


def explain_generic(ck: Checkpoint, entries: list[Entry]):
    """``(generic model, entries, terms)`` for ``ck`` (config.json of a type without a
    curated record): the formula is ``generic.total`` (the meta build's
    ``sum(p.numel())``), the terms are tied copies, buffers, stored tensors the model
    lacks and model parameters no tensor holds, matched by name (no roles are guessed).

    Raises:
        NoGenericExplanation: torch/transformers missing, or transformers cannot build the type.
    """
    from symtrans.analysis.checkpoint_terms import Term
    from symtrans.base.errors import EnvironmentProblem, InputError
    from symtrans.catalog.generic.model import count
    from symtrans.catalog.generic.route import check

    cfg = ck.config or {}
    mt = cfg.get("model_type")
    try:
        check(cfg, mt, "see `symtrans presets`")
        g = count(cfg, str(mt))
        params, aliases, buffers, prefix = model_names(cfg, g.counted_class)
    except EnvironmentProblem as e:
        raise NoGenericExplanation(
            f"model_type {mt!r} has no curated record and explaining it needs the generic path: {e}"
        ) from None
    except InputError as e:
        raise NoGenericExplanation(
            f"model_type {mt!r} has no curated record and the generic path refuses it: {e}"
        ) from None

    def own(name: str) -> str:
        # a bare base model (saved without its head) stores names without the prefix
        if name in params or name in aliases or name in buffers or not prefix:
            return name
        return f"{prefix}.{name}"

    out: list[Entry] = []
    held: set[str] = set()
    for e in entries:
        e = replace(e, role=None, block=None, stack=None, fused=(), part=None)  # no guessed roles
        n = own(e.name)
        if n in params:  # the model's own name decides, whatever the leaf looked like
            held.add(n)
            out.append(
                e if e.kind == Kind.PARAMETER else replace(e, kind=Kind.PARAMETER, logical=e.tensor.elements, why="")
            )
        elif n in aliases:
            out.append(e.as_kind(Kind.TIED_COPY, f"a tied alias in {g.counted_class}"))
        elif n in buffers:
            out.append(e.as_kind(Kind.BUFFER, f"a buffer of {g.counted_class}"))
        else:
            out.append(e)  # quantization metadata keeps its kind; a parameter here is unexpected
    terms: list[Term] = []
    for key, kind in (("tied_copy", Kind.TIED_COPY), ("buffers", Kind.BUFFER), ("quant_metadata", Kind.QUANT_META)):
        xs = [e for e in out if e.kind == kind]
        if xs:
            terms.append(Term(key, sum(e.tensor.elements for e in xs), tuple(e.name for e in xs), xs[0].why))
    packed = [e for e in out if e.kind == Kind.PARAMETER and e.logical != e.tensor.elements]
    if packed:
        terms.append(
            Term(
                "packing",
                sum(e.tensor.elements - e.logical for e in packed),
                tuple(e.name for e in packed),
                f"{len(packed)} packed tensors hold {sum(e.logical for e in packed):,} parameters",
            )
        )
    extra = [e for e in out if e.kind == Kind.PARAMETER and own(e.name) not in params]
    if extra:
        terms.append(
            Term(
                "unexpected",
                sum(e.logical for e in extra),
                tuple(e.name for e in extra),
                f"names {g.counted_class} does not have",
            )
        )
    absent = sorted(set(params) - held)
    if absent:
        terms.append(
            Term(
                "missing",
                -sum(params[n] for n in absent),
                tuple(absent),
                f"parameters of {g.counted_class} no stored tensor holds",
            )
        )
    return g, out, terms


__all__ = ["NoGenericExplanation", "explain_generic"]
