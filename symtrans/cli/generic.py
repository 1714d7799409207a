"""``symtrans params`` for a config.json counted by the generic path (``catalog.generic``).

The result is cached on disk by ``cli.numbers`` (the same store, checks and fingerprint
as a config seen once), keyed on the config's canonical JSON, the installed transformers
version and a hash of the generic path's source: a config seen before is answered
without importing torch, transformers or SymPy.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from symtrans.cli import numbers as NB

GENERIC_SOURCES = Path(__file__).resolve().parent.parent / "catalog" / "generic"
# Commands that work on a generic model (the others refuse it in one line).
COMMANDS = ("params",)


def _transformers_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("transformers")
    except PackageNotFoundError:
        return "none"


def cache_key(cfg: dict) -> str:
    """The disk-cache key of the generic count of ``cfg``."""
    h = hashlib.sha256()
    for f in sorted(GENERIC_SOURCES.glob("*.py")):
        h.update(f.read_bytes())
    body = json.dumps(cfg, sort_keys=True, separators=(",", ":"), default=str)
    return f"generic|transformers {_transformers_version()}|{h.hexdigest()[:16]}|{body}"


def params_result(res) -> dict:
    """The JSON object of ``symtrans params`` for a generic model (see ``main.params_result``)."""
    g = res.generic
    key = cache_key(g.cfg)
    hit = NB.cached(key)
    if hit is not None and isinstance(hit.get("result"), dict):
        out = dict(hit["result"])
        out["model"] = res.name
        return out
    out = compute(res)
    NB.store(key, {"layout": [], "texts": {}, "trees": {}, "result": out})
    return out


def compute(res) -> dict:
    """Count with the generic path (imports torch and transformers) and shape the JSON."""
    import sympy as sp

    from symtrans.catalog.generic.model import count_input

    m = count_input(res.generic, res.name)
    rows = []
    for c in m.cost.children:
        for sub in (c, *c.children):
            depth = 0 if sub is c else 1
            mult = sub.multiplicity * (c.multiplicity if sub is not c else 1)
            count_v = int(mult.xreplace({s: sp.Integer(m.sizes[s.name]) for s in mult.free_symbols}))
            each = sub.params_each
            each_v = int(each.xreplace({s: sp.Integer(m.sizes[s.name]) for s in each.free_symbols}))
            rows.append(
                {
                    "name": sub.name,
                    "depth": depth,
                    "count": count_v,
                    "count_closed_form": sp.sstr(mult),
                    "each": each_v,
                    "total": count_v * each_v,
                    "share": (count_v * each_v) / m.total if m.total else 0.0,
                    "closed_form": sp.sstr(each),
                }
            )
    from symtrans.engine.legend import LEGEND

    def meaning(n: str) -> str:
        own = m.meanings.get(n, "")
        return f"{LEGEND[n].meaning} ({own})" if n in LEGEND else own

    symbols = {
        n: {
            "assumptions": {"integer": True, "positive": True},
            "meaning": meaning(n),
            "unit": LEGEND[n].unit if n in LEGEND else "",
        }
        for n in sorted(m.sizes)
    }
    return {
        "model": res.name,
        "family": "generic",
        "model_type": m.model_type,
        "counted_class": m.counted_class,
        "total": m.total,
        "closed_form": sp.sstr(m.closed_form),
        "sizes": m.sizes,
        "components": rows,
        "numeric_terms": m.numeric,
        "probes": m.probes,
        "notes": m.notes,
        "symbols": symbols,
    }
