"""Property tests over random specs (tracker issue 6, item 4).

The expected values here are structural facts, not numbers: the sum of the parts is
the whole, a bigger size never gives a smaller count, JSON round-trips integers.
"""

import json

import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import specs

from symtrans.catalog.resolve import Resolved
from symtrans.cli.main import flops_result, params_result
from symtrans.engine.architectures import build
from symtrans.engine.evaluate import exact
from symtrans.engine.simplify import identical

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(specs())
def test_components_sum_to_total(spec):
    model = build(spec)
    v = {**spec.values, "B": 2, "L": spec.values["L"], "L_src": 5, "L_tgt": 3}
    # Sum each step times the multiplicities on its path (independent of Cost.params).
    steps = list(model.walk())
    assert identical(model.params, sp.Add(*[m * s.params for _, m, s in steps]))
    assert identical(model.flops, sp.Add(*[m * s.flops for _, m, s in steps]))
    total = exact(model.params, v)
    assert total == sum(exact(c.params, v) for c in model.children)
    assert total >= 0 and exact(model.flops, v) >= 0


def _grow(spec, name):
    v = spec.values
    if name == "d_model" and "d_k" not in v:
        return spec.replace(sizes={"d_model": v["d_model"] + v["h"]})  # keep h | d_model
    return spec.replace(sizes={name: v[name] + 1})


@SETTINGS
@given(specs(), st.data())
def test_counts_are_monotone_in_every_size(spec, data):
    growable = [n for n in spec.values if n not in ("h", "h_kv", "k")]  # heads change divisibility
    name = data.draw(st.sampled_from(growable))
    if name == "E":
        bigger = spec.replace(sizes={"E": spec.values["E"] + 1})
    else:
        bigger = _grow(spec, name)
    fv = lambda sp_: {**sp_.values, "B": 1, "L": sp_.values["L"], "L_src": 4, "L_tgt": 4}
    assert exact(build(bigger).params, bigger.values) >= exact(build(spec).params, spec.values)
    assert exact(build(bigger).flops, fv(bigger)) >= exact(build(spec).flops, fv(spec))


@SETTINGS
@given(specs())
def test_json_parses_back_to_the_same_integers(spec):
    res = Resolved(name="random", spec=spec)
    p = params_result(res)
    back = json.loads(json.dumps(p))
    assert back["total"] == exact(build(spec).params, spec.values)
    assert type(back["total"]) is int
    f = json.loads(json.dumps(flops_result(res, 3, 7)))
    v = {**spec.values, "B": 3, "L": 7, "L_src": 7, "L_tgt": 7}
    assert f["total"] == exact(build(spec).flops, v)


@SETTINGS
@given(specs(moe=True))
def test_moe_active_never_exceeds_total_and_equals_it_when_k_is_E(spec):
    model = build(spec)
    v = spec.values
    assert exact(model.active_params, v) <= exact(model.params, v)
    all_on = spec.replace(sizes={"k": v["E"]})
    assert exact(build(all_on).active_params, all_on.values) == exact(build(all_on).params, all_on.values)
