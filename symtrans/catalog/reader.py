"""The shared machinery of reading one ``config.json`` dict: the error class, size checks and
the typed :class:`Reader` every model-type record's reader function receives.

It imports nothing of the catalog, so ``catalog/models/*`` records and ``catalog/hf_config``
both build on it without an import cycle.  ``hf_config`` re-exports the names it always had
(``ConfigError``, ``check_size``, ``MAX_SIZE``, ...).
"""

from __future__ import annotations

import json
import math
from typing import Any

from symtrans.base.errors import InputError

# Largest size accepted: beyond 2**53 a value is not a real model (and not exact in a float).
MAX_SIZE = 2**53
# The most layers read from a config.json: per-layer keys (layer_types, mlp_only_layers, ...)
# are lists of one entry per layer, so the reading is linear in the depth; the deepest
# published models have a few hundred layers.  A deeper model is counted in closed form at
# any depth with --set N=... (or N_enc/N_dec) on a config of ordinary depth.
MAX_LAYERS = 100_000
LAYER_KEYS = frozenset(
    ("num_hidden_layers", "n_layer", "n_layers", "num_layers", "encoder_layers", "decoder_layers", "num_decoder_layers")
)

MISSING = object()


class ConfigError(InputError):
    """A config that cannot be counted; the message is one sentence naming the field."""


class Huge:
    """A JSON integer too long to be a size, kept unparsed so the error can name its key."""

    def __init__(self, digits: str) -> None:
        self.digits = digits

    def __repr__(self) -> str:
        return f"a {len(self.digits.lstrip('-'))}-digit integer"


def show(v: Any) -> str:
    """A JSON-flavoured rendering of a value for messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v if len(v) <= 40 else v[:37] + "...")
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "a list"
    return repr(v)


class Reader:
    """Typed access to one config dict, collecting notes on the defaults used.

    Args:
        cfg: the parsed config dict.
        model_type: the type it is read as.
        classes: (config class, model class counted), transformers 5.x names.
        defaults: the config class's defaults of the keys the reader reads.
        aliases: the class's ``attribute_map`` (alias -> canonical key).
    """

    def __init__(
        self,
        cfg: dict[str, Any],
        model_type: str,
        classes: tuple[str, str],
        defaults: dict[str, Any],
        aliases: dict[str, str],
    ) -> None:
        self.cfg = cfg
        self.mt = model_type
        self.cls, self.model = classes
        self.defaults = defaults
        self.aliases = aliases
        self.notes: list[str] = []

    def given(self, key: str) -> bool:
        """Whether the file gives ``key`` (or an alias of it) with a non-null value."""
        k, v = self.lookup(key)
        return k is not None and v is not None

    def lookup(self, key: str) -> tuple[str | None, Any]:
        """``(the name the file gives key under, its value)``: ``key`` itself or an alias of it
        (``attribute_map``), noted when an alias is read; ``(None, MISSING)`` when the file gives
        neither, and a JSON ``null`` as ``None`` (absent and null differ for several config classes).

        Raises:
            ConfigError: the key and an alias of it are both given with different values.
        """
        names = [key] + [a for a, c in self.aliases.items() if c == key]
        present = [(n, self.cfg[n]) for n in names if n in self.cfg]
        if not present:
            return None, MISSING
        k0, v0 = present[0]
        for k, v in present[1:]:
            if v != v0 or type(v) is not type(v0):
                raise ConfigError(f"{k0} ({show(v0)}) and its alias {k} ({show(v)}) disagree")
        if k0 != key:
            self.notes.append(f"key {k0} read as {key} (its alias in {self.cls}.attribute_map)")
        return k0, v0

    def default(self, key: str, what: str, default: Any, shown: str | None) -> Any:
        """``default`` (``MISSING``: the class's default, ``self.defaults[key]``) for ``key``,
        which the file lacks (``what``: "missing") or gives as null ("is null"); notes
        "key KEY WHAT: used the transformers default SHOWN (CLASS)", ``shown`` (or the
        default's JSON text) naming the value.  With ``MISSING``, ``key`` must be one of the
        class's defaults (a reader's own key, never user text).
        """
        if default is MISSING:
            default = self.defaults[key]
        text = shown if shown is not None else show(default)
        self.notes.append(f"key {key} {what}: used the transformers default {text} ({self.cls})")
        return default

    def size(
        self,
        key: str,
        default: Any = MISSING,
        shown: str | None = None,
        *,
        nullable: bool = False,
        zero_ok: bool = False,
    ) -> int:
        """A positive (or, with ``zero_ok``, non-negative) integer size."""
        k, v = self.lookup(key)
        if k is None:
            return self.default(key, "missing", default, shown)
        if v is None and nullable:
            return self.default(key, "is null", default, shown)
        v = check_size(k, v, zero_ok=zero_ok)
        if key in LAYER_KEYS and v > MAX_LAYERS:
            raise ConfigError(
                f"{k} is {v:,}: more layers than symtrans reads from a config.json (at most {MAX_LAYERS:,}); "
                "count a deeper model with --set N=... on a config of ordinary depth (a closed form at any depth)"
            )
        return v

    def flag(self, key: str, default: Any = MISSING, note: bool = True) -> bool:
        """A JSON boolean; ``note=False`` for switches whose default is unremarkable."""
        k, v = self.lookup(key)
        if k is None:
            if not note:
                return self.defaults[key] if default is MISSING else default
            return self.default(key, "missing", default, None)
        if not isinstance(v, bool):
            raise ConfigError(f"{k} must be true or false, not {show(v)}")
        return v

    def text(self, key: str, default: Any = MISSING) -> str:
        k, v = self.lookup(key)
        if k is None:
            return self.default(key, "missing", default, None)
        if not isinstance(v, str):
            raise ConfigError(f"{k} must be a string, not {show(v)}")
        return v

    def ignored_flag(self, key: str, implemented: bool, what: str) -> None:
        """A legacy key the 5.x model ignores: validate it, and note when it disagrees."""
        if key in self.cfg:
            v = self.cfg[key]
            if not isinstance(v, bool):
                raise ConfigError(f"{key} must be true or false, not {show(v)}")
            if v != implemented:
                self.notes.append(
                    f"key {key} is {show(v)}, but {self.model} (transformers 5.x) ignores it: "
                    f"counted as implemented, {what}"
                )

    def head_dim_must_match(self, hidden_key: str, hidden: int, heads_key: str, heads: int) -> None:
        """For models without a head_dim setting: a head_dim in the file must agree."""
        if "head_dim" in self.cfg and self.cfg["head_dim"] is not None:
            hd = check_size("head_dim", self.cfg["head_dim"])
            if hd * heads != hidden:
                raise ConfigError(
                    f"head_dim ({hd}) contradicts {hidden_key} / {heads_key} = {hidden} / {heads}: "
                    f"{self.model} has no head_dim setting and always uses {hidden_key} / {heads_key}"
                )


def check_size(key: str, v: Any, zero_ok: bool = False) -> int:
    """``v`` as a size named ``key``: a JSON integer, positive (or >= 0), at most 2**53."""
    kind = "a non-negative integer" if zero_ok else "a positive integer"
    if isinstance(v, Huge):
        if v.digits.startswith("-"):
            raise ConfigError(f"{key} must be {kind}, not a negative {len(v.digits) - 1}-digit integer")
        raise ConfigError(f"{key} is {v!r}, implausibly large for a size (the limit is 2**53)")
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, float) and math.isfinite(v):
            raise ConfigError(f"{key} must be {kind}, not the number {v!r} (write it without a fraction or exponent)")
        if isinstance(v, str):
            raise ConfigError(f"{key} must be {kind}, not the string {show(v)}")
        raise ConfigError(f"{key} must be {kind}, not {show(v)}")
    if v < 0 or (v == 0 and not zero_ok):
        raise ConfigError(f"{key} must be {kind}, not {v}")
    if v > MAX_SIZE:
        raise ConfigError(f"{key} is {v}, implausibly large for a size (the limit is 2**53)")
    return v


def check_divides(hidden_key: str, hidden: int, heads_key: str, heads: int, model: str) -> None:
    if hidden % heads:
        raise ConfigError(f"{heads_key} ({heads}) does not divide {hidden_key} ({hidden}), which {model} requires")


def check_rotary_head(r: Reader, key: str, hd: int) -> None:
    """transformers 5.x's RoPE validation: a fully rotated head of odd width above 4 cannot
    rotate in pairs (``RotaryEmbeddingConfigMixin.validate_rope``)."""
    rope = r.cfg.get("rope_parameters")
    factor = rope.get("partial_rotary_factor", 1.0) if isinstance(rope, dict) else 1.0
    if not isinstance(factor, (int, float)) or isinstance(factor, bool):
        return  # rope_parameters is not modelled further; a bad factor is transformers' to refuse
    if hd > 4 and hd % 2 and int(hd * factor) == hd:
        raise ConfigError(
            f"{key} ({hd}) is odd: rotary positions rotate pairs of features, so {r.cls} requires it even"
        )


def window_size(r: Reader, key: str, v: Any) -> int | None:
    """A sliding window (or attention chunk) read from ``key``: a positive size, or None for
    "no window" given as null or as 0 (transformers 5.x's ``save_pretrained`` writes 0 for a
    window that is switched off, e.g. Qwen2MoeConfig without ``use_sliding_window``; a window
    changes FLOPs and the KV cache, never a parameter).

    Raises:
        ConfigError: a value that is no size (negative, a float, a string, ...).
    """
    if v is None:
        return None
    v = check_size(key, v, zero_ok=True)
    if v == 0:
        r.notes.append(f"{key} 0 read as no window (as transformers 5.x writes a window that is off)")
        return None
    return v
