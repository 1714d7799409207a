"""Count a config.json of a type without a curated record from transformers' modeling code.

``count(cfg)`` builds the real config's model class on meta (the exact count), reads its
structure (``structure``), infers a closed form for every dimension and count from
rebuilds (``infer``) and returns a ``GenericModel``: the Cost tree, the sizes, the
closed form and the notes every output carries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.catalog.generic import build as B
from symtrans.catalog.generic import infer as I
from symtrans.catalog.generic import structure as T
from symtrans.catalog.generic import symbols as Y
from symtrans.catalog.generic.tree import Builder
from symtrans.engine.cost import Cost
from symtrans.engine.roles import Block


@dataclass
class GenericModel:
    """A model counted from transformers' modeling code.

    Attributes:
        name: display name; model_type, counted_class: what was built (transformers class).
        cost: the Cost tree (parameters only: FLOPs are not inferred on this path).
        total: the exact parameter count (the meta build's ``sum(p.numel())``).
        sizes: symbol name -> value at this config; meanings: symbol name -> its config key.
        numeric: quantities (``module.tensor:dim`` or ``count:...``) no closed form fits.
        probes: the verification probes the closed forms passed; builds: meta builds made.
    """

    name: str
    model_type: str
    counted_class: str
    version: str
    cost: Cost
    total: int
    sizes: dict[str, int]
    meanings: dict[str, str]
    numeric: list[str]
    probes: int
    builds: int
    notes: list[str] = field(default_factory=list)
    keys: dict[str, str] = field(default_factory=dict)  # config key path -> symbol name

    @property
    def closed_form(self) -> sp.Expr:
        from symtrans.engine.simplify import closed_form

        return closed_form(self.cost.params)

    @property
    def params(self) -> int:
        return self.total

    def subs(self, expr: sp.Expr, **sizes: int) -> int:
        """``expr`` (a SymPy expression, such as ``self.cost.params``) at this model's sizes
        (or ``sizes``), exactly.

        Raises:
            InputError: ``expr`` is not a SymPy expression (text is never parsed here: sympify
                would run it as Python).
        """
        if not isinstance(expr, sp.Basic):
            raise InputError(f"subs takes a SymPy expression, not {type(expr).__name__}")
        syms = {s.name: s for s in expr.free_symbols}
        v = expr.xreplace({syms[n]: sp.Integer(x) for n, x in {**self.sizes, **sizes}.items() if n in syms})
        return int(v) if v.is_Integer else v


def check_keys(cfg: dict[str, Any], model_type: str, kept: set[str], counted: set[str]) -> list[str]:
    """The top-level keys of ``cfg`` unknown to ``model_type``'s config class, in file order,
    as the curated path treats them (``hf_config.unknown_keys``).  Unknown: not an argument,
    alias or default key of the class, not a key every config takes (COMMON_KEYS), and still
    in the built config (``kept``: its ``to_dict()``; a legacy key the class reads and drops,
    such as DeepSeek-V4's compress_ratios, is not unknown).  A near miss (difflib ratio >=
    TYPO_CUTOFF, or equal ignoring case) of a key the count depends on (``counted``: the
    closed form's top-level keys and those whose change moved a tensor) is refused; a key
    real in another class (REAL_KEYS, such as use_sliding_window) never is.  The rest are returned for a note.

    Raises:
        ConfigError: naming each near miss and the key it resembles (transformers keeps it
            as an extra attribute and builds with the real key's default); more than
            MAX_UNKNOWN_KEYS unknown keys.
    """
    from symtrans.catalog import hf_config as H
    from symtrans.catalog.reader import ConfigError, typo_refusal

    cls, keys = B.class_keys(model_type)
    unknown = [k for k in cfg if k not in keys and k not in H.COMMON_KEYS and k in kept]
    if not unknown:
        return []
    if len(unknown) > H.MAX_UNKNOWN_KEYS:
        raise ConfigError(
            f"{len(unknown):,} keys are unknown to {cls} (at most {H.MAX_UNKNOWN_KEYS:,} are accepted); "
            f"this is not a config.json of a {model_type} model"
        )
    from symtrans.catalog.sub_keys import near_misses

    typos, others = near_misses(unknown, counted)
    if typos:
        raise ConfigError(typo_refusal(typos, cfg, cls))
    return others


def check_sub_keys(cfg: dict[str, Any], config, counted: set[str]) -> list[str]:
    """The keys of ``cfg``'s sub-configs (``text_config``, ``vision_config``, ``audio_config``,
    ..., at any depth) unknown to the sub-config's own transformers class, as ``a.b`` paths in
    file order, as ``check_keys`` treats the top level.  A sub-config is a key whose value in
    ``cfg`` is an object and in ``config`` (the built transformers config) a config instance;
    its known keys are its class's (``build.config_class_keys``: ``__init__`` arguments,
    ``attribute_map``, default ``to_dict()``) and the keys every config takes (COMMON_KEYS);
    a key the class reads and drops (absent from its ``to_dict()``) is not unknown.
    ``counted``: the key paths the count depends on (``a.b``: the closed form's keys and the
    keys whose change moved a tensor in the inference).

    Raises:
        ConfigError: one line naming each near miss (difflib ratio >= TYPO_CUTOFF, or equal
            ignoring case, of a counted key of the same sub-config) by its path and the key it
            resembles: transformers keeps it as an extra attribute and builds that key's
            default; more than MAX_UNKNOWN_KEYS unknown keys in all.
    """
    from transformers import PretrainedConfig

    from symtrans.catalog import hf_config as H
    from symtrans.catalog.reader import ConfigError
    from symtrans.catalog.sub_keys import near_misses, typo_line

    typos: list[str] = []
    others: list[str] = []
    pending = [(cfg, config, "")]
    while pending:
        level, obj, pre = pending.pop(0)
        for key, value in level.items():
            sub = getattr(obj, key, None) if isinstance(value, dict) and isinstance(key, str) else None
            if not isinstance(sub, PretrainedConfig):
                continue
            path = f"{pre}{key}."
            cls, keys = B.config_class_keys(type(sub))
            kept = set(sub.to_dict())
            unknown = [
                k for k in value if isinstance(k, str) and k not in keys and k not in H.COMMON_KEYS and k in kept
            ]
            if len(others) + len(unknown) > H.MAX_UNKNOWN_KEYS:
                raise ConfigError(
                    f"more than {H.MAX_UNKNOWN_KEYS:,} keys of the sub-configs are unknown to their config classes "
                    "(at most that many are accepted); this is not a model's config.json"
                )
            mine = {c[len(path) :] for c in counted if c.startswith(path) and "." not in c[len(path) :]}
            near, rest = near_misses(unknown, mine)
            typos += [typo_line(path + k, m, cls, m in value) for k, m in near]
            others += [path + k for k in rest]
            pending.append((value, sub, path))
    if typos:
        raise ConfigError("; ".join(typos) + "; fix the spelling")
    return others


def count(cfg: dict[str, Any], name: str = "config", probes: int = 6, class_name: str | None = None) -> GenericModel:
    """Count ``cfg`` (a parsed config.json whose model_type transformers knows) as the class
    the rule names (``build.MAPPINGS``), or as ``class_name`` (a curated record's class,
    for the agreement check).

    Raises:
        InputError: transformers' config class or model class refuses the config.
        GenericUnavailable: torch or transformers is missing.
    """
    mt = cfg["model_type"]
    config = B.config_object(mt, cfg)
    model, cls = B.build_meta(mt, config, class_name)
    total = sum(p.numel() for p in model.parameters())
    root = T.tree(model)
    real_q = root.quantities()
    del model

    def measure(d: dict[str, Any]) -> dict[str, int]:
        m, _ = B.build_meta(mt, B.config_object(mt, d), cls)
        return T.tree(m).quantities()

    config_dict = config.to_dict()
    inf = I.infer(config_dict, real_q, measure, Y.key_symbols, probes=probes)
    taken = {s.name for s in inf.symbols.values()}
    builder = Builder(inf.forms, lambda label: Y.count_symbol(label, taken))
    cost = builder.cost(root, cls, Block.MODEL)
    sizes = {inf.symbols[k].name: v for k, v in inf.values.items()}
    sizes.update(builder.count_values)
    used = {s.name for s in cost.params.free_symbols}
    sizes = {k: v for k, v in sizes.items() if k in used}
    meanings = {inf.symbols[k].name: f"config key {k}" for k in inf.values if inf.symbols[k].name in used}
    meanings.update(
        {n: "count of a kind of repeated module no config key gives" for n in builder.count_values if n in used}
    )
    check = cost.params.xreplace({s: sp.Integer(sizes[s.name]) for s in cost.params.free_symbols})
    if check != total:  # the forms were verified at the real config: a mismatch is a bug
        raise RuntimeError(f"generic closed form gives {check} at the real config, the meta build {total}")
    keys = {k: inf.symbols[k].name for k in inf.values if inf.symbols[k].name in used}
    # a typo of a key the count depends on is an error (transformers would use the default),
    # at the top level and inside every sub-config
    counted = set(keys) | set(inf.moved)
    unknown = check_keys(cfg, mt, set(config_dict), {k for k in counted if "." not in k})
    unknown_sub = check_sub_keys(cfg, config, counted)
    version = B.version()
    numeric_count = sum(1 for n in inf.numeric if n in real_q)
    notes = [
        f"counted from transformers {version}'s modeling code ({cls} on the meta device); "
        f"closed form inferred from {inf.probes} probes"
    ]
    if unknown:
        notes.append(
            f"key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} not known to {type(config).__name__} "
            f"(transformers {version}): ignored"
        )
    if unknown_sub:
        owners = "their sub-configs' classes" if len(unknown_sub) > 1 else "its sub-config's class"
        notes.append(
            f"key{'s' if len(unknown_sub) > 1 else ''} {', '.join(unknown_sub)} not known to {owners} "
            f"(transformers {version}): ignored"
        )
    if numeric_count:
        notes.append(f"{numeric_count} dimension(s) or count(s) fit no product of config keys: kept numeric")
    moved = [n.split(":", 1)[1] for n in inf.numeric if n.startswith("structure:")]
    if moved:
        notes.append(
            "changing " + ", ".join(moved) + " adds or removes modules: the closed form holds at this structure only"
        )
    notes.append("FLOPs, memory and deploy are not available for this type yet (parameters only)")
    return GenericModel(
        name, mt, cls, version, cost, total, sizes, meanings, inf.numeric, inf.probes, inf.builds, notes, keys
    )


def count_input(g, name: str) -> GenericModel:
    """``count`` of a ``resolve.GenericInput``, after ``route.check``; errors start with its path.

    Raises:
        InputError: as ``route.check`` and ``count``.
    """
    from symtrans.base.errors import InputError
    from symtrans.catalog.generic.route import check

    try:
        check(g.cfg, g.model_type, g.supported)
        return count(g.cfg, name)
    except InputError as e:
        raise InputError(f"{g.path}: {e}") from None
