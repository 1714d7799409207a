"""The dispatch of a model_type without a curated record (called from hf_config's one
refusal point): to the generic path when transformers has the type, else one line.

Nothing from the config's folder is ever imported: ``auto_map`` is never followed.
"""

from __future__ import annotations

import json
from typing import Any

from symtrans.base.errors import InputError


class GenericRoute(Exception):  # noqa: N818 - control flow, not an error: hf_config's callers catch it
    """``cfg`` is to be counted by the generic path (not a ValueError, so that the
    curated readers' error handling lets it through).  ``supported`` lists the curated
    types, for the refusals ``check`` gives once transformers is imported."""

    def __init__(self, cfg: dict[str, Any], model_type: str, supported: str) -> None:
        super().__init__(model_type)
        self.cfg = cfg
        self.model_type = model_type
        self.supported = supported


def route(cfg: dict[str, Any], model_type: str, supported: str) -> Exception:
    """The exception to raise for ``model_type``: ``GenericRoute`` when torch and
    transformers are installed (found, not imported: a config seen before is answered from
    the disk cache without them), else an ``InputError`` of one line naming the extra."""
    from importlib.util import find_spec

    from symtrans.catalog.generic.build import EXTRA

    missing = [m for m in ("torch", "transformers") if find_spec(m) is None]
    if missing:
        return InputError(
            f"model_type {model_type!r} has no curated record and the generic path needs "
            f"{' and '.join(missing)} ({EXTRA}); supported model types: {supported}"
        )
    if not _listed(model_type):
        shown = json.dumps(model_type, ensure_ascii=False)
        if "auto_map" in cfg:
            return InputError(
                f"model_type {shown} is not supported: it has no curated record, the installed transformers has no "
                "such type, and its auto_map names code in the config's folder (symtrans never runs remote code)"
            )
        return InputError(
            f"model_type {shown} is not supported; supported model types: {supported} "
            "(and the installed transformers has no such type to count it from)"
        )
    return GenericRoute(cfg, model_type, supported)


def _listed(model_type: str) -> bool:
    """Whether the installed transformers lists ``model_type`` in CONFIG_MAPPING_NAMES, read
    from its source text (importing it would import torch: seconds, on every refusal and on
    every config answered from the disk cache).  ``check`` confirms it after the import."""
    from importlib.util import find_spec

    spec = find_spec("transformers")
    if spec is None or not spec.submodule_search_locations:
        return True  # unknown layout: let check decide after the import
    from pathlib import Path

    auto = Path(next(iter(spec.submodule_search_locations))) / "models" / "auto"
    quoted = f'"{model_type}"'
    found = False
    for name in ("auto_mappings.py", "configuration_auto.py"):  # the table and its additions
        try:
            found = found or quoted in (auto / name).read_text(encoding="utf-8")
        except OSError:
            continue
    return found or not (auto / "configuration_auto.py").exists()  # unknown layout: check decides


def check(cfg: dict[str, Any], model_type: str, supported: str) -> None:
    """Refuse, in one line, a type the installed transformers lacks (whatever ``auto_map``
    names: symtrans never runs code from the config's folder) or has no model class for.

    Raises:
        InputError: as described.
    """
    from symtrans.catalog.generic import build as B

    if not B.known_type(model_type):
        tf = B.version()
        if "auto_map" in cfg:
            raise InputError(
                f"model_type {model_type!r} is not in transformers {tf} and its auto_map names code in the "
                "config's folder: symtrans never runs remote code"
            )
        raise InputError(f"model_type {model_type!r} is not in transformers {tf}; supported model types: {supported}")
    if B.model_class_name(model_type) is None:
        raise InputError(f"transformers {B.version()} has no model class for model_type {model_type!r}")
