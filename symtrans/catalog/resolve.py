"""Turn what the user typed (MODEL and --set NAME=VALUE) into a validated Spec.

MODEL is a preset name or a path to a Hugging Face ``config.json``.  ``--set`` takes a
size symbol (an integer) or a Spec option (a boolean, an integer or one of its
choices).  User text is never evaluated: values are matched against fixed patterns.
Every failure raises ``ValueError`` with one sentence; the CLI prints it and exits 2.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from symtrans.base.numbers import MAX_INT_DIGITS, parse_int  # noqa: F401 (re-exported for the CLI)
from symtrans.catalog import presets
from symtrans.engine.legend import LEGEND as SYMBOLS
from symtrans.engine.spec import OPTION_NAMES, OPTION_TYPES, Spec

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}
# Integers may be written 4096, 4_096 or 7e9-style when exact (e.g. 32e3).


@dataclass(frozen=True)
class Resolved:
    """A model ready to count.

    Attributes:
        name: the preset name or the config file's stem, for titles.
        spec: the validated Spec (with --set applied).
        preset: the Preset it came from, if any (provenance, published figure).
        notes: assumptions made on the way (config defaults, --set changes).
    """

    name: str
    spec: Spec
    preset: presets.Preset | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


def int_arg(name: str, minimum: int = 1):
    """An argparse ``type=`` for an exact integer >= ``minimum`` (accepts 4096, 4_096, 7e9)."""
    import argparse

    def parse(text: str) -> int:
        try:
            v = parse_int(text, name)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        if v < minimum:
            kind = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
            raise argparse.ArgumentTypeError(f"{name} must be {kind}, not {text}")
        return v

    return parse


def parse_setting(item: str) -> tuple[str, object]:
    """Parse one ``NAME=VALUE`` into (name, typed value).

    Raises:
        ValueError: for a missing '=', an unknown name, or a value of the wrong type.
    """
    if "=" not in item:
        raise ValueError(f"--set takes NAME=VALUE, not {item!r}")
    name, _, raw = item.partition("=")
    name, raw = name.strip(), raw.strip()
    if name in SYMBOLS:
        value = parse_int(raw, name)
        if value <= 0:
            raise ValueError(f"{name} must be a positive integer, not {raw}")
        if value > 2**53:  # the limit hf_config.MAX_SIZE puts on sizes in a config.json
            raise ValueError(f"{name} = {raw} is implausibly large for a size (the limit is 2**53)")
        return name, value
    if name in OPTION_NAMES:
        kind = OPTION_TYPES[name]
        if isinstance(kind, tuple):
            if raw not in kind:
                raise ValueError(f"{name} must be one of {', '.join(kind)}, not {raw!r}")
            return name, raw
        if kind is bool:
            low = raw.lower()
            if low in _TRUE:
                return name, True
            if low in _FALSE:
                return name, False
            raise ValueError(f"{name} must be true or false, not {raw!r}")
        return name, parse_int(raw, name)
    import difflib

    close = difflib.get_close_matches(name, list(SYMBOLS) + list(OPTION_NAMES), n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise ValueError(f"unknown --set name {name!r}{hint}")


def apply_settings(spec: Spec, settings: list[str]) -> tuple[Spec, tuple[str, ...]]:
    """``spec`` with every ``NAME=VALUE`` applied; returns it and a note per change."""
    sizes: dict[str, int] = {}
    options: dict[str, object] = {}
    for item in settings:
        name, value = parse_setting(item)
        (sizes if name in SYMBOLS else options)[name] = value
    if not sizes and not options:
        return spec, ()
    new = spec.replace(sizes=sizes, **options)
    notes = tuple(f"--set {k}={v}" for k, v in {**sizes, **options}.items())
    return new, notes


def resolve(model: str, settings: list[str] | None = None) -> Resolved:
    """Resolve MODEL (preset name or config.json path) and apply ``settings``.

    Raises:
        ValueError: unknown preset (with close names), unreadable or invalid config,
            bad --set, or an invalid resulting spec.
    """
    settings = list(settings or [])
    if model.endswith(".json") or os.sep in model or os.path.exists(model):
        from symtrans.catalog.hf_config import load_config  # imported here: only config users pay for it

        spec, name, notes = load_config(model)
        preset = None
    else:
        try:
            preset = presets.get(model)
        except KeyError as e:
            raise ValueError(e.args[0]) from None
        spec, name, notes = preset.spec, preset.name, ()
    spec, set_notes = apply_settings(spec, settings)
    return Resolved(name=name, spec=spec, preset=preset, notes=tuple(notes) + set_notes)
