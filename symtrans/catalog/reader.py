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
from symtrans.engine.spec import MAX_USER_SIZE

# Largest size accepted: beyond 2**53 a value is not a real model (and not exact in a float).
# One limit with one home (engine.spec.MAX_USER_SIZE): --set, workload options, the Python API
# and every size in a config.json.
MAX_SIZE = MAX_USER_SIZE
# The most layers read from a config.json, a different limit for a different reason: reading a
# config builds one entry per layer (the layer_types, mlp_only_layers, ... lists a config gives,
# or the default pattern the readers expand as transformers' config classes do), so its time and
# memory are linear in the depth (10**8 layers took 800 MB, 2**31 a MemoryError); the deepest
# published models have a few hundred layers.  --set N=... (or N_enc/N_dec) resizes the closed
# form, where N is a symbol, and builds nothing per layer, so it takes any depth up to MAX_SIZE on
# a config of ordinary depth.
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
                f"{k} is {v:,}: more layers than symtrans reads from a config.json (at most {MAX_LAYERS:,}: reading "
                "builds each layer's entry); count a deeper model with --set N=... on a config of ordinary depth "
                "(the closed form, up to 2**53 layers)"
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


# The gated feed-forward networks' activations (transformers' ACT2FN names) by the Spec.ffn that
# names them (Shazeer 2020, "GLU Variants Improve Transformer": SwiGLU, GEGLU, ReGLU).
GATED_FFNS = {
    "swiglu": ("silu", "swish"),
    "geglu": ("gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu_python", "gelu_accurate", "gelu_10"),
    "reglu": ("relu",),
}


def gated_ffn(key: str, act: Any) -> str:
    """The ``Spec.ffn`` of a gated feed-forward network (gate, up and down maps: act(X W_gate) *
    X W_up, then W_down) whose activation is ``act``, the ACT2FN name read from ``key``:
    ``swiglu`` (silu, swish), ``geglu`` (gelu and its approximations), ``reglu`` (relu).  The
    count is three maps whatever the activation; the kind names the one the model runs.

    Raises:
        ConfigError: any other activation (one line): no kind names it, and the label would
            name an activation the model does not use.
    """
    for ffn, names in GATED_FFNS.items():
        if act in names:
            return ffn
    known = "; ".join(f"{ffn}: {', '.join(names)}" for ffn, names in GATED_FFNS.items())
    raise ConfigError(
        f"{key} {show(act)}: symtrans names gated feed-forward networks by their activation ({known}) and "
        "has no name for this one"
    )


def typo_refusal(typos: list[tuple[str, str]], cfg: dict[str, Any], cls: str) -> str:
    """The one-line refusal of unknown keys that nearly spell a key the count reads.

    ``typos``: (unknown key, the key it resembles) pairs in file order; ``cfg``: the config
    (or sub-config) holding them; ``cls``: its config class.  A near miss whose real key is
    absent is ignored by ``cls`` and the real key's default used ("did you mean ...?"); one
    whose real key ``cfg`` also sets is a misspelt duplicate: ``cls`` reads the real key's
    value and ignores the misspelling, so the message says that instead.
    """
    named = [
        f"{key} (a misspelt duplicate of {match}, which the config also sets)"
        if match in cfg
        else f"{key} (did you mean {match}?)"
        for key, match in typos
    ]
    dup = [match in cfg for _, match in typos]
    if all(dup):
        one = len(typos) == 1
        tail = (
            f"{cls} has no such key, so {'it' if one else 'each'} would be ignored and the correctly spelt key "
            f"read; remove the misspelling{'' if one else 's'} (or move {'its value' if one else 'their values'} "
            "to the correct key if meant)"
        )
    elif any(dup):
        tail = (
            f"{cls} has no such key, so each would be ignored and its real key read (its default where the "
            "config does not set it); fix the spelling"
        )
    else:
        tail = f"{cls} has no such key, so it would be ignored and a default used instead; fix the spelling"
    return f"unknown key{'s' if len(typos) > 1 else ''} {', '.join(named)}: {tail}"


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
