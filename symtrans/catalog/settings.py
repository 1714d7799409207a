"""``--set NAME=VALUE``: a size symbol (an integer), a Spec option (a boolean, an
integer or one of its choices) or a Hugging Face config key naming a size, parsed into a
typed value and applied to a Spec.  User text is never evaluated: values are matched
against fixed patterns.  Kept apart from ``resolve`` (which reads the presets) so that the
hand counts, which the presets are built from, can apply settings without an import cycle.
"""

from __future__ import annotations

from symtrans.base.errors import InputError
from symtrans.base.numbers import parse_int
from symtrans.engine.legend import LEGEND as SYMBOLS
from symtrans.engine.spec import BOOL_SPELLINGS, MAX_USER_SIZE, OPTION_NAMES, OPTION_TYPES, WORKLOAD_OPTIONS, Spec

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def parse_setting(item: str) -> tuple[str, object]:
    """Parse one ``NAME=VALUE`` into (name, typed value).

    Raises:
        ValueError: for a missing '=', an unknown name, or a value of the wrong type.
    """
    if "=" not in item:
        raise InputError(f"--set takes NAME=VALUE, not {item!r}")
    name, _, raw = item.partition("=")
    name, raw = name.strip(), raw.strip()
    if name in SYMBOLS:
        value = parse_int(raw, name)
        if value <= 0:
            raise InputError(f"{name} must be a positive integer, not {raw}")
        if value > MAX_USER_SIZE:  # the limit every size takes (config.json, workload options, the API)
            raise InputError(f"{name} = {raw} is implausibly large for a size (the limit is 2**53)")
        return name, value
    if name in OPTION_NAMES:
        kind = OPTION_TYPES[name]
        if isinstance(kind, tuple):
            if name in BOOL_SPELLINGS and raw.lower() in _TRUE | _FALSE:  # qk_norm=true is qk_norm=head
                return name, BOOL_SPELLINGS[name][raw.lower() in _TRUE]
            if raw not in kind:
                raise InputError(f"{name} must be one of {', '.join(kind)}, not {raw!r}")
            return name, raw
        if kind is bool:
            low = raw.lower()
            if low in _TRUE:
                return name, True
            if low in _FALSE:
                return name, False
            raise InputError(f"{name} must be true or false, not {raw!r}")
        if kind is str:  # mixers: kinds joined by "|", checked by Spec
            return name, raw
        return name, parse_int(raw, name)
    from symtrans.catalog.hf_config import size_of_key  # here: only a Hugging Face name pays for it

    hf = size_of_key(name)
    if hf is not None:  # a config.json key (num_hidden_layers=16): the size it sets (issue 25.15)
        return parse_setting(f"{hf[0]}={raw}")
    import difflib

    from symtrans.catalog.hf_config import SIZE_OF_KEY

    close = difflib.get_close_matches(name, list(SYMBOLS) + list(OPTION_NAMES) + list(SIZE_OF_KEY), n=3)
    if close:
        shown = [f"{c} ({SIZE_OF_KEY[c]})" if c in SIZE_OF_KEY else c for c in close]
        hint = f"; did you mean {', '.join(shown)}?"
    else:  # nothing alike: name the first of each, in the legend's order, as argparse names choices
        sizes = [n for n in SYMBOLS if n not in WORKLOAD_OPTIONS]  # B, D, ... have options of their own
        hint = f"; choose a size ({_first(sizes)}) or an option ({_first(list(OPTION_NAMES))})"
    raise InputError(f"unknown --set name {name!r}{hint}")


# Characters of names an unknown --set name's hint shows of each list: the ~130 sizes and ~70
# options no longer fit in one error line (escape.MESSAGE_CAP, 1,000 characters), which cut the
# options off entirely; the legend's order puts the common sizes (d_model ... k) first.
_HINT_NAMES = 400


def _first(names: list[str]) -> str:
    """``names`` joined by commas up to ``_HINT_NAMES`` characters, then how many more."""
    shown: list[str] = []
    for n in names:
        if shown and len(", ".join([*shown, n])) > _HINT_NAMES:
            break
        shown.append(n)
    rest = len(names) - len(shown)
    return ", ".join(shown) + (f" and {rest} more" if rest else "")


def apply_settings(spec: Spec, settings: list[str]) -> tuple[Spec, tuple[str, ...]]:
    """``spec`` with every ``NAME=VALUE`` applied; returns it and a note per change."""
    sizes: dict[str, int] = {}
    options: dict[str, object] = {}
    read_as: dict[str, str] = {}
    for item in settings:
        name, value = parse_setting(item)
        (sizes if name in SYMBOLS else options)[name] = value
        typed = item.partition("=")[0].strip()
        if typed != name:  # a Hugging Face key name: say which size it set
            read_as[name] = f" (read from {typed}, the config.json name)"
    if not sizes and not options:
        return spec, ()
    new = spec.replace(sizes=sizes, **options)
    notes = tuple(f"--set {k}={v}{read_as.get(k, '')}" for k, v in {**sizes, **options}.items())
    return new, notes
