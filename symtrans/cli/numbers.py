"""The numbers of ``symtrans params``, ``flops`` and ``memory``, with or without SymPy.

A command's output is assembled from a *plan*: the closed forms it prints (text), the
components it lists (layout) and the quantities it evaluates at the sizes.  The plan is
built with SymPy (``plans``), or, when the model's structure was seen before, read from
data generated from the closed forms, which this module evaluates with Python integers
and fractions, without importing SymPy.  That data is cached on disk, per user, under
``$XDG_CACHE_HOME/symtrans/numbers`` (default ``~/.cache``), keyed on the model's
structure (``Spec.structure()``: the options and which sizes are present), the command's
options and a fingerprint of the source files that make the closed forms.  It is written
by the first run that needs it (atomically), for a preset as for a config.json: nothing
is generated into the package, so an edit of the engine needs no regeneration step (the
first run after it rebuilds with SymPy, the next ones answer from the cache again), and a
changed formula never answers from old data.  ``python -m symtrans.cli.warm`` fills the
cache for every preset ahead of time (optional).  A cache file is data (evaluation trees in
JSON), never code: it is checked (format, fingerprint, key, checksum) before use and
rewritten when stale or corrupt; the cache is an optimisation, any failure falls back to
SymPy.  Either way the output is the same text (``assemble`` is shared).

Trees are Horner forms of integer polynomials (``kernel``): ``("v", name)``,
``("c", int)``, ``("+", a, b)``, ``("*", a, b)``, ``("//", a, b)`` (floor division),
``("min", a, b)``, ``("max", a, b)`` and ``("/", a, b)`` (an exact fraction).
"""

from __future__ import annotations

import hashlib
import json
import os
from fractions import Fraction
from pathlib import Path
from typing import Mapping

from symtrans.base.errors import InputError

FORMAT = 1
PACKAGE = Path(__file__).resolve().parent.parent
# The sources whose code decides the closed forms (and so the data generated from them).
FINGERPRINT_SOURCES = ("engine", "accounting", "render/summary.py", "cli/plans.py", "analysis/kernel.py")


class Fallback(Exception):
    """The data cannot answer (missing, stale, a non-integer count, a missing size):
    the command computes with SymPy instead, which also gives the proper error."""


# ---------------------------------------------------------------------------------
# keys


def fingerprint() -> str:
    """sha256 of the source files that make the closed forms (``FINGERPRINT_SOURCES``).

    Raises:
        Fallback: a source file cannot be read (an installation without sources).
    """
    h = hashlib.sha256()
    try:
        for rel in FINGERPRINT_SOURCES:
            path = PACKAGE / rel
            files = sorted(path.glob("*.py")) if path.is_dir() else [path]
            for f in files:
                h.update(f.relative_to(PACKAGE).as_posix().encode())
                h.update(b"\0")
                h.update(f.read_bytes())
                h.update(b"\0")
    except OSError:
        raise Fallback("no sources to fingerprint") from None
    return h.hexdigest()


def plan_key(spec, query: tuple) -> str:
    """The key of a plan: the model's structure and the command's options, as text."""
    return f"{spec.structure()!r}|{query!r}"


def key_id(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def params_query(part: str = "all") -> tuple:
    """``part``: ``params --part`` (``vision.select_part``); the whole model keeps its old key."""
    return ("params",) if part == "all" else ("params", part)


def flops_query(mode: str, convention: str, mask: str, recompute: str) -> tuple:
    return ("flops", mode, convention, mask, recompute)


def memory_query(args, fmt, batch: int, seq: int, src: int | None) -> tuple:
    """Memory's closed forms are printed with B, L (and L_src) and N_d substituted: they
    are part of the key, with the weights' format ``fmt`` (``quantization.WeightFormat``:
    the dtype and the quantization's layout fields)."""
    q = fmt.quantization
    return (
        "memory",
        fmt.dtype,
        None if q is None else (q.method, q.bits, q.group_size, q.double_quant, q.lm_head),
        args.kv_dtype,
        args.optimizer,
        args.zero,
        args.dp or 1,  # --dp is None when not given (usage._check_parallel_options)
        args.recompute,
        bool(args.flash_attention),
        bool(args.eager_attention),
        not args.no_dropout,
        "inference" if args.inference else "training",
        str(args.margin),
        batch,
        seq,
        src,
    )


# ---------------------------------------------------------------------------------
# evaluation


def evaluate_tree(node, v: Mapping[str, int]):
    """A tree at the sizes ``v``: an int, or a Fraction where a division leaves a remainder.

    Raises:
        KeyError: a size without a value.
    """
    op = node[0]
    if op == "v":
        return v[node[1]]
    if op == "c":
        return node[1]
    a = evaluate_tree(node[1], v)
    b = evaluate_tree(node[2], v)
    if op == "+":
        return a + b
    if op == "*":
        return a * b
    if op == "//":
        return a // b
    if op == "min":
        return min(a, b)
    if op == "max":
        return max(a, b)
    if op == "/":
        q = Fraction(a, b)
        return q.numerator if q.denominator == 1 else q
    raise InputError(f"unknown operation {op!r} in generated data")


class Numbers:
    """A plan evaluated at the sizes: ``layout`` (rows: name, depth), ``text(key)`` (a
    closed form as ``sympy.sstr`` prints it), ``value(key)`` (exact: int or Fraction)
    and ``integer(key)`` (an exact int; a non-integer count raises)."""

    def __init__(self, layout, texts: Mapping[str, str]) -> None:
        self.layout = [(str(n), int(d)) for n, d in layout]
        self.texts = texts

    def text(self, key: str) -> str:
        return self.texts[key]

    def value(self, key: str):  # pragma: no cover - implemented by the subclasses
        raise NotImplementedError

    def integer(self, key: str) -> int:  # pragma: no cover - implemented by the subclasses
        raise NotImplementedError


class TreeNumbers(Numbers):
    """Numbers from generated data (no SymPy)."""

    def __init__(self, data: Mapping, values: Mapping[str, int]) -> None:
        super().__init__(data["layout"], data["texts"])
        self.trees = data["trees"]
        self.values = dict(values)
        self._memo: dict = {}

    def value(self, key: str):
        hit = self._memo.get(key)
        if hit is None:
            try:
                hit = self._memo[key] = evaluate_tree(self.trees[key], self.values)
            except (KeyError, ZeroDivisionError, TypeError, RecursionError) as e:
                raise Fallback(f"cannot evaluate {key}: {e}") from None
        return hit

    def integer(self, key: str) -> int:
        x = self.value(key)
        if not isinstance(x, int):
            raise Fallback(f"{key} is not an integer")  # the SymPy path says why
        return x


def exact_json(x) -> int | str:
    """An exact number for JSON: int when integral, else the string 'p/q' (never a float)."""
    f = Fraction(x)
    return f.numerator if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def as_fraction(x) -> Fraction:
    """An int, a Fraction or an ``exact_json`` string 'p/q' as a Fraction."""
    return x if isinstance(x, Fraction) else Fraction(x)


# ---------------------------------------------------------------------------------
# where plans are found


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/symtrans/numbers`` (``~/.cache/symtrans/numbers`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "symtrans" / "numbers"


def _checksum(entry: Mapping) -> str:
    body = {k: entry[k] for k in ("format", "fingerprint", "key", "plan")}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _cached(key: str, fp: str) -> Mapping | None:
    path = cache_dir() / f"{key_id(key)}.json"
    try:
        if not path.is_file():  # missing, or not a regular file (a FIFO would block the read)
            return None
        entry = json.loads(path.read_text(encoding="utf-8"))
        if (
            isinstance(entry, dict)
            and entry.get("format") == FORMAT
            and entry.get("fingerprint") == fp
            and entry.get("key") == key
            and entry.get("checksum") == _checksum(entry)
            and _well_formed(entry["plan"])
        ):
            return entry["plan"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None  # missing, stale or corrupt: never trusted, rebuilt by the caller


def _well_formed(plan) -> bool:
    return (
        isinstance(plan, dict)
        and isinstance(plan.get("layout"), list)
        and isinstance(plan.get("texts"), dict)
        and isinstance(plan.get("trees"), dict)
        and all(isinstance(t, str) for t in plan["texts"].values())
    )


def store(key: str, plan: Mapping) -> None:
    """Write ``plan`` (JSON data) to the disk cache, atomically; any failure is ignored
    (the cache is an optimisation)."""
    try:
        from symtrans.base.atomic import write_atomic

        fp = fingerprint()
        directory = cache_dir()
        directory.mkdir(parents=True, exist_ok=True)
        entry = {"format": FORMAT, "fingerprint": fp, "key": key, "plan": plan}
        entry["checksum"] = _checksum(entry)
        write_atomic(directory / f"{key_id(key)}.json", json.dumps(entry, separators=(",", ":")))
    except (OSError, ValueError, Fallback):
        pass


def cached(key: str) -> Mapping | None:
    """The plan stored on disk under ``key`` (any text naming what it answers: the generic
    path keys on the config's contents), or None when missing, stale or corrupt."""
    if os.environ.get("SYMTRANS_NO_GENERATED"):
        return None
    try:
        return _cached(key, fingerprint())
    except Fallback:
        return None


def lookup(spec, query: tuple) -> Mapping | None:
    """The plan data for ``spec``'s structure and ``query`` from the disk cache, else None
    (build it with SymPy: ``plans``; ``common.plan_numbers`` then stores it)."""
    if os.environ.get("SYMTRANS_NO_GENERATED"):  # tests and benchmarks force the SymPy path
        return None
    try:
        fp = fingerprint()
    except Fallback:
        return None
    key = plan_key(spec, query)
    return _cached(key, fp)
