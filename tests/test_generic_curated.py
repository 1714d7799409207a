"""The generic path agrees with every curated record on its fixtures (issue 22).

For each config in tests/fixtures/configs, the curated reader (hf_config) and the generic
path (counting the same class, the record's ``CLASSES`` entry, from transformers' modeling
code on meta) must give the same total, and equivalent closed forms: ``expand(a - b) == 0``
once every symbol that only one side has is replaced by its value (the curated engine
derives d_k = d_model / h where the generic path reads the config's head_dim, and names
layer counts N_w where the generic path may use a key).  The independent oracle of the
totals is transformers' own meta count (the test builds the class itself).  Both are
hand-written engine against inferred: this is how the inference is checked.
"""

from __future__ import annotations

import json
import random

import pytest
from conftest import CONFIG_DIR, require
from hf_reference import UNLOADABLE

torch = require("torch")
transformers = require("transformers")

FIXTURES = sorted(p.stem for p in CONFIG_DIR.glob("*.json"))


def meta_count(class_name: str, cfg: dict) -> int:
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    kw = {k: v for k, v in cfg.items() if k not in ("model_type", "auto_map", "architectures", "transformers_version")}
    config = CONFIG_MAPPING[cfg["model_type"]](**kw)
    with torch.device("meta"):
        model = getattr(transformers, class_name)._from_config(config)
    return sum(p.numel() for p in model.parameters())


# Totals agree; the closed forms are not yet shown equivalent (issue 22, left open), so these
# assert that the symbol search still finds no mapping: when a change maps one, its line fails and
# the fixture leaves the set.  By cause:
# - vision-language wrappers: the curated records and the generic inference write the tower's merger,
#   patch and DeepStack sizes differently, beyond the search's reach;
# - hybrids: the generic path counts layers per module class (a Jamba layer with Mamba and MoE is one
#   group, Falcon-H1's parallel layer another), the curated record per mixer kind and per feed-forward
#   kind (N_attn, N_moe, N_mlp, N_par cut across those groups; Zamba2's shared blocks are stored
#   N_mem times and used N_hyb times);
# - MoE decoders with dense first layers (dots.llm1, GLM-4.7-Flash, the DSA and MLA+MoE records):
#   the curated record counts N_moe MoE layers of a stack (and N_attn indexer-less layers), the generic
#   path groups layers by module class.  (GLM-4.5-Air maps since issue 22's joint probes.)
# - DeepSeek-V4: the curated record counts its attention layers per kind (N_csa, N_hca and the rest),
#   the generic path by module class; its hyper-connections' (2 + n_hc) n_hc rows are beyond the search.
UNMAPPED = {
    "qwen2-vl-7b",
    "qwen3-vl-4b",
    "qwen3-vl-30b-a3b",
    "qwen3.5-0.8b",
    "qwen3.6-35b-a3b",
    "kimi-k2.5",
    "ai21-jamba-1.5-mini",
    "qwen3-coder-next",
    "qwen3-next-80b-a3b-instruct",
    "falcon-h1-tiny-90m-instruct",
    "nemotron-3-nano-30b-a3b",
    "zamba2-1.2b-shaped",
    "dots.llm1-base",
    "glm-4.7-flash",
    "deepseek-v3.2",
    "glm-5-fp8-aiconfigurator",
    "glm-5.1",
    "glm-5.3-shaped",
    "mistral-small-4-shaped",
    "deepseek-v4-flash-shaped",
}
# The T5 family's untied checkpoints (mT5, UMT5, LongT5: tie_word_embeddings false): the curated record
# counts the lm_head that from_pretrained keeps (tests/hf_reference.reference_total adds it to the meta
# count), the generic path the fresh 5.x model, whose config class forces tying: the totals differ by
# exactly that head, d_model x vocab_size rows (LongT5 tglobal-base: 768 x 32,128 = 24,674,304).
# (Not LongT5: its checkpoints store only shared.weight, transformers#47620; both paths count the head tied.)
T5_UNTIED = {"mt5-small", "umt5-xxl-comfyui"}


@pytest.mark.parametrize("name", FIXTURES)
def test_generic_agrees_with_curated(name):
    import sympy as sp

    from symtrans.catalog.generic.model import count
    from symtrans.catalog.hf_config import CLASSES, spec_from_config
    from symtrans.engine.architectures import build

    cfg = json.loads((CONFIG_DIR / f"{name}.json").read_text())
    cls = CLASSES[cfg["model_type"]][1]
    spec, _ = spec_from_config(cfg, name)
    curated = build(spec).params
    curated_values = spec.values
    curated_total = int(curated.xreplace({s: sp.Integer(curated_values[s.name]) for s in curated.free_symbols}))
    if name in UNLOADABLE:  # transformers 5.24 refuses the published value, and so does the generic path
        from symtrans.base.errors import InputError

        sub, key, value = UNLOADABLE[name]
        with pytest.raises(InputError, match=key):
            count(cfg, name, class_name=cls)
        cfg = {**cfg, sub: {**cfg[sub], key: value}}  # a value that changes no weight
    g = count(cfg, name, class_name=cls)
    expected = meta_count(cls, cfg)
    if name in T5_UNTIED:
        assert g.total == expected
        assert curated_total - expected == cfg["d_model"] * cfg["vocab_size"]
        return
    assert g.total == expected == curated_total
    gform = g.cost.params
    mapping = symbol_mapping(gform, g.sizes, curated, curated_values)
    if name in UNMAPPED:
        assert mapping is None, f"{name}: the closed forms now map; remove it from UNMAPPED"
        return
    assert mapping is not None, f"{name}: no mapping of symbols makes the closed forms equal"


def _candidates(v: int, pool: dict) -> list:
    """Expressions in ``pool``'s symbols (symbol -> value) worth ``v``: a symbol, a small
    multiple, a ratio; the number itself last."""
    import sympy as sp

    out = [s for s, x in pool.items() if x == v]
    out += [k * s for s, x in pool.items() for k in range(2, 9) if k * x == v]
    out += [a / b for a, x in pool.items() for b, y in pool.items() if a != b and y and x == v * y]
    return out[:12] + [sp.Integer(v)]


def symbol_mapping(gform, gvalues, curated, cvalues):
    """A substitution under which ``expand(generic - curated) == 0``: symbols named alike
    (with equal values) are one; each other symbol is tried as an expression of the other
    side's symbols of the same value (the curated engine writes d_k = d_model / h, bart's
    decoder depth is N), the number itself last.  None if none works."""
    import itertools

    import sympy as sp

    cnames = {s.name: s for s in curated.free_symbols}
    gonly = [s for s in gform.free_symbols if not (s.name in cnames and cvalues[s.name] == gvalues[s.name])]
    shared = {cnames[s.name] for s in gform.free_symbols if s not in gonly}
    conly = [s for s in curated.free_symbols if s not in shared]
    gpool = {s: gvalues[s.name] for s in gform.free_symbols if s not in gonly}
    cpool = {s: cvalues[s.name] for s in curated.free_symbols}
    gsub = {s: cnames[s.name] for s in gform.free_symbols if s not in gonly}
    options = [_candidates(gvalues[s.name], cpool) for s in gonly]
    coptions = [_candidates(cvalues[s.name], gpool) for s in conly]

    # Then the same with the vision tower's symbols pinned to their values (llava, qwen2_vl:
    # a dozen vision keys with several candidates each are too many to search; their text
    # stack is still compared symbol by symbol).
    def vision(s) -> bool:
        return "vision" in s.name or s.name.endswith("_vis")

    pinned = [o[-1:] if vision(s) else o for s, o in zip(gonly, options)]
    cpinned = [o[-1:] if vision(s) else o for s, o in zip(conly, coptions)]
    combos = itertools.chain(
        itertools.islice(itertools.product(*options, *coptions), 2000),
        itertools.islice(itertools.product(*pinned, *cpinned), 2000),
    )
    # A choice whose two sides differ at one point cannot make expand(a - b) zero (expand
    # keeps the function), so it is skipped without the expansion, which costs ~15 ms on the
    # large forms (DeepSeek-V4's 4,000 combinations took a minute).  The point is random and
    # the arithmetic is modulo the prime P (a ring map from the rationals whose denominators
    # P does not divide): different residues mean different rational values.  A zero, or a
    # division by a multiple of P, still goes through expand: the result is the same.
    rng = random.Random(0)
    point = {s: rng.randrange(1, _P) for s in gform.free_symbols | curated.free_symbols}
    ga, cb = _evaluator(gform), _evaluator(curated)
    value = _memo_value(point)
    gpoint = {s: point[t] for s, t in gsub.items()}
    sides: dict = {}  # (side, values of the symbols it replaces) -> its value at the point

    def side(f, base, syms, exprs):
        vals = tuple(value(c) for c in exprs)
        key = (f, vals)
        if key not in sides:
            sides[key] = f({**base, **dict(zip(syms, vals))})
        return sides[key]

    for choice in combos:
        try:
            left = side(ga, gpoint, gonly, choice[: len(gonly)])
            if left != side(cb, point, conly, choice[len(gonly) :]):
                continue
        except _Undefined:
            pass
        a = gform.xreplace({**gsub, **dict(zip(gonly, choice[: len(gonly)]))})
        b = curated.xreplace(dict(zip(conly, choice[len(gonly) :])))
        if sp.expand(a - b) == 0:
            return choice
    return None


_P = 2**61 - 1  # a Mersenne prime


class _Undefined(Exception):
    """The expression has no value modulo _P at the point (a division by a multiple of _P,
    a non-integer power, a node the evaluator does not know)."""


def _inverse(x: int) -> int:
    if x % _P == 0:
        raise _Undefined
    return pow(x, -1, _P)


def _evaluator(expr):
    """``expr`` (Add, Mul, integer Pow of symbols and rationals) as a function of
    ``{symbol: int}`` giving its value modulo _P; raises _Undefined where it has none."""
    import sympy as sp

    if isinstance(expr, sp.Symbol):
        return lambda env: env[expr]
    if isinstance(expr, sp.Rational):
        try:
            c = int(expr.p) * _inverse(int(expr.q)) % _P
        except _Undefined:

            def undefined_constant(env):
                raise _Undefined

            return undefined_constant
        return lambda env: c
    if isinstance(expr, (sp.Add, sp.Mul)):
        parts = [_evaluator(a) for a in expr.args]
        if isinstance(expr, sp.Add):
            return lambda env: sum(f(env) for f in parts) % _P

        def product(env):
            out = 1
            for f in parts:
                out = out * f(env) % _P
            return out

        return product
    if isinstance(expr, sp.Pow) and expr.exp.is_Integer:
        base, e = _evaluator(expr.base), int(expr.exp)
        if e >= 0:
            return lambda env: pow(base(env), e, _P)
        return lambda env: pow(_inverse(base(env)), -e, _P)

    def undefined(env):
        raise _Undefined

    return undefined


def _memo_value(point):
    """The value at ``point`` (modulo _P) of a candidate expression, computed once per candidate."""
    seen = {}

    def value(expr):
        if expr not in seen:
            try:
                seen[expr] = _evaluator(expr)(point)
            except _Undefined:
                seen[expr] = None
        if seen[expr] is None:
            raise _Undefined
        return seen[expr]

    return value
