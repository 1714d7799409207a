"""Closed forms of every dimension and count of a model, inferred from rebuilds.

The method (issue 22): rebuild the model on meta with one integer config key changed at
a time (on a copy with few layers, for speed) and see which quantities move and by what
factor; a quantity is then ``c * prod(key**e)`` (or, failing that, affine in the keys
that move it).  Every fitted form is verified at the real config and at two or more
probes that change many keys at once; a quantity no form fits stays numeric, and says so.
Counts themselves never come from the forms: they are the real config's meta build.
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

import sympy as sp

from symtrans.base.errors import InputError

# Keys that never size a tensor: token ids and generation settings.
_SKIP_SUFFIXES = ("_id", "_ids", "_token", "_index")
_SKIP = {"max_length", "min_length", "num_beams", "top_k", "num_return_sequences", "no_repeat_ngram_size"}
_LAYER_WORDS = ("layer", "depth", "block")
MAX_EXPONENT = 3


@dataclass
class Inference:
    """The fitted forms: quantity name -> SymPy expression (None: numeric), the key
    symbols used, the number of verification probes, and the builds made."""

    forms: dict[str, sp.Expr | None]
    symbols: dict[str, sp.Symbol]
    values: dict[str, int]  # key path -> value at the real config
    probes: int
    builds: int
    numeric: list[str] = field(default_factory=list)
    moved: frozenset[str] = frozenset()  # key paths whose change moved some quantity


def flatten(d: dict[str, Any], prefix: str = "") -> dict[str, int]:
    """The positive integer keys of a config dict, nested sub-configs as ``a.b``."""
    out: dict[str, int] = {}
    for k, v in d.items():
        if not isinstance(k, str):  # a table keyed by numbers (aria's patch -> query map) sizes no key
            continue
        path = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, path + "."))
        elif isinstance(v, int) and not isinstance(v, bool) and v > 0:
            if k in _SKIP or k.endswith(_SKIP_SUFFIXES) or k.startswith("_"):
                continue
            out[path] = v
    return out


def with_value(d: dict[str, Any], path: str, value: int, layer_key: bool) -> dict[str, Any]:
    """A copy of ``d`` with ``path`` set to ``value``; for a layer count, the per-layer
    lists beside it (``layer_types``, ...) cut or cycled to the new length."""
    out = copy.deepcopy(d)
    *parents, key = path.split(".")
    level = out
    for p in parents:
        level = level[p]
    old = level[key]
    level[key] = value
    if layer_key:
        for k, v in list(level.items()):
            if isinstance(v, list) and len(v) == old and old > 0:
                level[k] = [v[i % old] for i in range(value)]
    return out


def _layer_keys(values: dict[str, int], counts: set[int]) -> list[str]:
    return [p for p, v in values.items() if any(w in p.split(".")[-1] for w in _LAYER_WORDS) and v in counts]


def fit(q0: int, moves: list[tuple[sp.Symbol, int, int, int]]) -> sp.Expr | None:
    """A form for a quantity ``q0`` that moves as ``moves`` says: (symbol, v0, v1, q1)
    per key that changes it.  A product ``c * prod(s**e)`` first, else affine."""
    if q0 == 0:
        return None
    expr: sp.Expr = sp.Integer(1)
    scale = Fraction(q0)
    product = True
    for s, v0, v1, q1 in moves:
        ratio, base = Fraction(q1, q0), Fraction(v1, v0)
        e = next((e for e in range(-MAX_EXPONENT, MAX_EXPONENT + 1) if e and base**e == ratio), None)
        if e is None:
            product = False
            break
        expr *= s**e
        scale /= Fraction(v0) ** e
    if product:
        return sp.Rational(scale.numerator, scale.denominator) * expr
    const = Fraction(q0)
    terms: sp.Expr = sp.Integer(0)
    for s, v0, v1, q1 in moves:
        slope = Fraction(q1 - q0, v1 - v0)
        const -= slope * v0
        terms += sp.Rational(slope.numerator, slope.denominator) * s
    return terms + sp.Rational(const.numerator, const.denominator)


def evaluate(form: sp.Expr, subs: dict[sp.Symbol, int]):
    v = form.xreplace({s: sp.Integer(x) for s, x in subs.items()})
    return int(v) if v.is_Integer else None


def infer(
    real_cfg: dict[str, Any],
    real_quantities: dict[str, int],
    measure: Callable[[dict[str, Any]], dict[str, int]],
    key_symbols: Callable[[list[str]], dict[str, sp.Symbol]],
    seed: int = 0,
    probes: int = 2,
) -> Inference:
    """Fit and verify a form for every quantity of ``real_quantities``.

    Args:
        real_cfg: the full config dict (``to_dict()`` of the real config).
        real_quantities: the quantities of the real build (``structure.Node.quantities``).
        measure: config dict -> quantities of its meta build (raises InputError when the
            modeling code refuses the config).
        key_symbols: key paths -> symbols (``symbols.key_symbols``).
    """
    measure = _memo(measure)
    values = flatten(real_cfg)
    counts = {v for q, v in real_quantities.items() if q.startswith(("count:", "total:"))}
    layer_keys = _layer_keys(values, counts)
    # The baseline: few layers, as long as every quantity of the real build is still there.
    base_cfg, base_q = real_cfg, real_quantities
    if layer_keys:
        for r in (2, 4, 8):
            if all(values[k] <= r for k in layer_keys):
                break
            trial = real_cfg
            for k in layer_keys:
                trial = with_value(trial, k, min(values[k], r), True)
            try:
                q = measure(trial)
            except InputError:
                continue
            if set(real_quantities) <= set(q):
                base_cfg, base_q = trial, q
                break
    base_values = flatten(base_cfg)
    relevant = [v for v in base_q.values() if v > 1]
    candidates = [
        k
        for k, v in base_values.items()
        if k in values and (v == 1 or k in layer_keys or any(q % v == 0 or v % q == 0 for q in relevant))
    ]
    symbols = key_symbols(sorted(values))
    changed: dict[str, tuple[int, dict[str, int]]] = {}  # key -> (new value, quantities)
    for k in candidates:
        v = base_values[k]
        # A new value that keeps every quantity there (a key past its domain, such as more
        # dense layers than layers, removes a kind of layer and teaches nothing).
        for nv in (2 * v, v // 2 if v % 2 == 0 and v > 2 else 0, v + 1, v - 1):
            if nv <= 0 or nv == v:
                continue
            try:
                q = measure(with_value(base_cfg, k, nv, k in layer_keys))
            except InputError:
                continue
            if set(base_q) <= set(q):
                changed[k] = (nv, q)
                break
    forms: dict[str, sp.Expr | None] = {}
    for name, q0 in real_quantities.items():
        if name not in base_q:
            forms[name] = None
            continue
        b0 = base_q[name]
        moves = [
            (symbols[k], base_values[k], nv, q[name]) for k, (nv, q) in changed.items() if name in q and q[name] != b0
        ]
        if any(name not in q for _, q in changed.values()):
            forms[name] = None
            continue
        forms[name] = fit(b0, moves) if b0 else (sp.Integer(0) if not moves else None)
    # Verify: at the real config, and at probes that change many keys at once.
    checks = [(values, real_quantities)]
    rng = random.Random(seed)
    tries = 0
    keys = list(changed)
    while len(checks) < probes + 1 and tries < 4 * probes and keys:
        tries += 1
        # two or three keys at once: products of sums show there, and such a config
        # usually builds (changing half the keys at once mostly breaks a constraint)
        pick = rng.sample(keys, k=min(len(keys), rng.randint(2, 3)))
        trial = base_cfg
        for k in pick:
            trial = with_value(trial, k, changed[k][0], k in layer_keys)
        try:
            checks.append((flatten(trial), measure(trial)))
        except InputError:
            continue
    # And at the real depth, with keys changed jointly: a form fitted one key at a time
    # can be a coincidence of the defaults (L_max*d_model/h where the truth is L_max*64, or
    # a division by a key that happens to be 1).  Every key a form uses is doubled alone,
    # every form's keys together and in pairs, keys it divides by tripled, and random
    # draws of several keys; a form that misses any probe stays numeric.
    jointly, extra = _verify_real(
        real_cfg, base_cfg, real_quantities, base_q, values, forms, symbols, layer_keys, measure, rng
    )
    checks += extra
    done = len(checks) - 1
    # A probe where some form is not a whole number (d_model*h_kv/h with h = 3*32 and
    # d_model = 4096) lies outside the forms' own domain (d_k = d_model/h assumes h | d_model,
    # as every curated record does): it refutes nothing there and is left out.
    fitted = [f for f in forms.values() if f is not None]
    inside = []
    for i, (vals, qs) in enumerate(checks):
        subs = {symbols[k]: vals[k] for k in symbols if k in vals}
        if i == 0 or _inside(fitted, subs):
            inside.append((subs, qs))
    for name, form in forms.items():
        if form is None:
            continue
        ok = done >= min(probes, 1) and name not in jointly["unchecked"]
        for subs, qs in inside:
            if name not in qs:
                continue
            if evaluate(form, subs) != qs[name]:
                ok = False
                break
        if not ok:
            forms[name] = None
    numeric = sorted(n for n, f in forms.items() if f is None)
    numeric += [f"structure:{k}" for k in jointly["structural"]]
    moved = frozenset(k for k, (_, q) in changed.items() if any(q.get(n) != b for n, b in base_q.items()))
    return Inference(forms, symbols, values, done, measure.builds, numeric, moved)


def _memo(measure):
    """``measure`` that builds each distinct config once (``.builds`` counts the builds):
    probes of the key sets can name the same config (a layer key doubled with and without
    per-layer lists, when it has none).  A refusal is remembered too."""
    seen: dict[str, dict[str, int] | InputError] = {}

    def once(cfg):
        key = json.dumps(cfg, sort_keys=True, default=str)
        if key not in seen:
            once.builds += 1
            try:
                seen[key] = measure(cfg)
            except InputError as e:
                seen[key] = e
        out = seen[key]
        if isinstance(out, InputError):
            raise out
        return out

    once.builds = 0
    return once


def _form_keys(form: sp.Expr, symbols: dict[str, sp.Symbol]) -> list[str]:
    return sorted(k for k, s in symbols.items() if s in form.free_symbols)


def _inside(fitted: list[sp.Expr], subs: dict[sp.Symbol, int]) -> bool:
    """Every form a whole number at ``subs``: the probe lies in the forms' domain."""
    return all(evaluate(f, subs) is not None for f in fitted)


def _divisors(form: sp.Expr, symbols: dict[str, sp.Symbol]) -> list[str]:
    """Keys ``form`` divides by (a negative power anywhere in it)."""
    neg = {b for b, e in (p.as_base_exp() for p in sp.preorder_traversal(form) if p.is_Pow) if e.is_negative}
    return sorted(k for k, s in symbols.items() if s in neg)


def _verify_real(real_cfg, base_cfg, real_q, base_q, values, forms, symbols, layer_keys, measure, rng, cap=48):
    """Probes of the real config (the few-layer copy when the real one refuses) with keys
    changed jointly: returns ({"unchecked": forms with no joint probe, "failed": builds
    refused}, [(values, quantities)])."""
    key_sets: list[tuple[tuple[str, ...], int, bool]] = []
    seen: set[tuple[tuple[str, ...], int, bool]] = set()

    def add(keys, factor=2, cycle=True):
        t = (tuple(sorted(keys)), factor, cycle)
        if t[0] and t not in seen:
            seen.add(t)
            key_sets.append(t)

    used = sorted({k for f in forms.values() if f is not None for k in _form_keys(f, symbols)})
    fitted = [f for f in forms.values() if f is not None]
    multi: dict[tuple[str, ...], list[str]] = {}
    for name, f in forms.items():
        if f is None:
            continue
        ks = tuple(_form_keys(f, symbols))
        if len(ks) > 1:
            multi.setdefault(ks, []).append(name)
    for k in used:
        add([k])
        if k in layer_keys:  # the key alone, its per-layer lists untouched (a user's edit)
            add([k], 2, False)
    for ks in sorted(multi, key=len):
        add(ks)
        pairs = [(a, b) for i, a in enumerate(ks) for b in ks[i + 1 :]]
        for pair in pairs if len(pairs) <= 6 else rng.sample(pairs, 6):
            add(pair)
    for f in forms.values():
        if f is not None:
            for k in _divisors(f, symbols):
                add([k], 3)
                add(_form_keys(f, symbols), 3)
    others = sorted(set(values) - set(used))
    for _ in range(4):
        if len(used) >= 2:
            pick = rng.sample(used, k=min(len(used), rng.randint(2, 4)))
            if others:
                pick.append(rng.choice(others))
            add(pick)
    out: list[tuple[dict[str, int], dict[str, int]]] = []
    failed = 0
    ok_sets: list[set[str]] = []
    structural: set[str] = set()
    real, base = (real_cfg, real_q), (base_cfg, base_q)
    # Keys that decide how many modules of a kind there are: a layer count, or a key a
    # count's form uses (first_k_dense_replace: doubled on a 4-layer copy, it leaves no MoE
    # layer).  A probe that changes one runs at the real depth (a form fitted on the
    # few-layer copy can miss what only a deeper stack has); any other runs on the
    # few-layer copy, whose other keys are the real config's, so its tensors have the
    # real shapes, and whose build costs a fraction of the real one (DeepSeek-V3: 4
    # layers against 61).  The other config is the fallback when one refuses.
    depth_keys = set(layer_keys)
    for name, f in forms.items():
        if f is not None and name.startswith(("count:", "total:")):
            depth_keys.update(_form_keys(f, symbols))
    for keys, factor, cycle in key_sets[:cap]:
        order = (real, base) if depth_keys & set(keys) else (base, real)
        for cfg, ref in order if base_cfg is not real_cfg else (real,):
            cur = flatten(cfg)
            trial = cfg
            for k in keys:
                if k in cur:
                    trial = with_value(trial, k, factor * cur[k], cycle and k in layer_keys)
            try:
                q = measure(trial)
            except InputError:
                failed += 1
                continue
            vals = flatten(trial)
            out.append((vals, q))
            if _inside(fitted, {symbols[k]: vals[k] for k in symbols if k in vals}):
                ok_sets.append(set(keys))
            # Modules that appear or vanish (electra's projection when embedding_size
            # reaches hidden_size, canine's one embedding per hash function) are a change
            # of structure no product of keys states: the form holds at this structure only.
            if set(keys) <= set(used) and set(q) != set(ref):
                structural.update(keys)
            break
    unchecked = set()
    for ks, names in multi.items():
        # at least one probe that changed two or more of the form's keys at once
        if not any(len(set(ks) & s) > 1 for s in ok_sets):
            unchecked.update(names)
    for name, f in forms.items():
        if f is not None and _divisors(f, symbols):
            div = set(_divisors(f, symbols))
            if not any(div & s for s in ok_sets):
                unchecked.add(name)
    return {"unchecked": unchecked, "failed": failed, "structural": sorted(structural)}, out
