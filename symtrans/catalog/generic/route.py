"""The dispatch of a model_type without a curated record (called from hf_config's one
refusal point): to the generic path when transformers has the type, else one line.

Nothing from the config's folder is ever imported: ``auto_map`` is never followed.
"""

from __future__ import annotations

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
    return GenericRoute(cfg, model_type, supported)


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
