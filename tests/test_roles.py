"""Labels are for people: renaming every step label and component name changes no number.

The same quantities are computed twice, once as built and once with a marker appended to
every ``Step.label`` and ``Cost.name`` (every cache cleared in between), and must agree:
parameters, FLOPs under every convention and mode (forward, backward, training, prefill,
decode), per-component FLOPs (Chinchilla's term list included), diff totals and terms,
LoRA counts, hand-count comparisons, chart groups, and every number in a Markdown report.
No expected value comes from a source other than the code itself here: the test asserts
an invariance (the numbers are checked against their references elsewhere).
"""

from __future__ import annotations

import gc
import re
from functools import _lru_cache_wrapper

import pytest

from symtrans.engine.cost import Cost, Step
from symtrans.engine.roles import Block, Role

MARK = " ⟨renamed⟩"
PRESETS = (
    "gpt2",
    "bert-base",
    "t5-small",
    "mixtral-8x7b",
    "albert-base-v2",
    "transformer-base",
    "qwen3-0.6b",
    "mistral-7b",
)
HANDCOUNTS = ("handcount-000-transformer-base", "handcount-001-transformer", "handcount-003-bert-base")


def _clear_caches() -> None:
    for obj in gc.get_objects():
        if isinstance(obj, _lru_cache_wrapper) and getattr(obj, "__module__", "").startswith("symtrans"):
            obj.cache_clear()


def _numbers(text: str) -> list[str]:
    return re.findall(r"\d[\d,]*(?:\.\d+)?", text)


def _everything() -> dict:
    from symtrans.accounting import flops as F
    from symtrans.accounting.lora import lora_params
    from symtrans.analysis.diff import diff, parse_side
    from symtrans.catalog.comparison import comparison_json
    from symtrans.catalog.presets import get
    from symtrans.catalog.resolve import resolve
    from symtrans.engine.architectures import build
    from symtrans.engine.conventions import CONVENTIONS
    from symtrans.engine.evaluate import exact
    from symtrans.render.plots import shares
    from symtrans.render.report import render

    out: dict = {}
    for name in PRESETS:
        spec = get(name).spec
        v = {**spec.values, "B": 2, "L": 64, "L_src": 48, "L_tgt": 32, "L_pre": 40, "T_gen": 8}
        out[name, "params"] = exact(build(spec).params, spec.values)
        for conv in CONVENTIONS:
            for mode in F.TRAINING_MODES:
                for mask in ("full", "causal"):
                    out[name, conv, mode, mask] = F.evaluate(F.flops_expr(spec, mode, conv, mask), v)
            out[name, conv, "components"] = [
                (r.depth, F.evaluate(r.total, v)) for r in F.component_flops(spec, "training", conv, depth=3)
            ]
            if spec.family != "encoder-only":
                out[name, conv, "prefill"] = F.evaluate(F.prefill_expr(spec, conv), v)
                out[name, conv, "decode"] = F.evaluate(F.decode_expr(spec, conv), v)
        out[name, "shares"] = sorted(shares(spec, v, "params")[i][1] for i in range(len(shares(spec, v, "params"))))
        out[name, "flop shares"] = sorted(n for _, n in shares(spec, v, "flops"))
        if not spec.has("r"):
            out[name, "lora"] = exact(lora_params(spec, ("q", "k", "v", "o")), {**spec.values, "r": 8})
    for a, b in (("bert-base:V=30000", "bert-base"), ("gpt2", "llama-2-7b"), ("t5-small", "transformer-base")):
        d = diff(parse_side(a), parse_side(b))
        out[a, b, "diff"] = (d.delta, sorted(v for _, v, _ in d.by_category()), sorted(r.delta for r in d.rows))
    for name in HANDCOUNTS:
        c = comparison_json(get(name))
        out[name, "comparison"] = (
            c["exact_under_assumptions"],
            [i["exact"] for i in c["items"]],
            sorted(t["parameters"] for t in c["real"]["terms"]),
        )
    for name in ("gpt2", "t5-small", "mixtral-8x7b"):
        out[name, "report"] = _numbers(render(resolve(name), "markdown"))
    return out


@pytest.fixture(scope="module")
def as_built():
    _clear_caches()
    return _everything()


def test_renaming_every_label_changes_no_number(as_built, monkeypatch):
    step_init, cost_init = Step.__init__, Cost.__init__

    def renamed_step(self, *args, **kwargs):
        step_init(self, *args, **kwargs)
        object.__setattr__(self, "label", self.label + MARK)

    def renamed_cost(self, *args, **kwargs):
        cost_init(self, *args, **kwargs)
        object.__setattr__(self, "name", self.name + MARK)

    monkeypatch.setattr(Step, "__init__", renamed_step)
    monkeypatch.setattr(Cost, "__init__", renamed_cost)
    _clear_caches()
    try:
        from symtrans.catalog.presets import get
        from symtrans.engine.architectures import build

        assert build(get("gpt2").spec).children[0].steps[0].label.endswith(MARK)  # the marker took effect
        renamed = _everything()
    finally:
        monkeypatch.undo()
        _clear_caches()
    differing = [k for k in as_built if as_built[k] != renamed[k]]
    assert not differing, f"numbers that depend on labels: {differing[:10]}"


def test_every_step_and_block_is_typed():
    """Every step of every preset carries a Role and every component a Block (never OTHER)."""
    from symtrans.catalog.presets import PRESETS as ALL
    from symtrans.engine.architectures import build

    for name, p in ALL.items():
        model = build(p.spec)
        for node in model.nodes():
            assert isinstance(node.step.role, Role), (name, node.step.label)
            assert all(isinstance(b, Block) and b != Block.OTHER for b in node.blocks), (name, node.step.label)
