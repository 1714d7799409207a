"""Property tests over random specs (tracker issue 6, item 4).

The expected values here are structural facts, not numbers: a bigger size never gives a
smaller count, JSON round-trips integers, an MoE's active count never exceeds its total.
Counts themselves are checked against independent references elsewhere
(tests/test_reference_counts.py, tests/test_crosscheck_*.py).
"""

import json

from hypothesis import given
from hypothesis import strategies as st
from strategies import specs

from symtrans.catalog.resolve import Resolved
from symtrans.cli.main import build_parser, params_result
from symtrans.cli.usage import flops_command_result
from symtrans.engine.architectures import build
from symtrans.engine.evaluate import exact


def _grow(spec, name):
    v = spec.values
    if name == "d_model" and "d_k" not in v:
        return spec.replace(sizes={"d_model": v["d_model"] + v["h"]})  # keep h | d_model
    return spec.replace(sizes={name: v[name] + 1})


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


@given(specs())
def test_json_parses_back_to_the_same_integers(spec):
    # What is under test is the JSON of 'symtrans params' and 'symtrans flops' (the live code path,
    # with the parser's defaults): exact Python ints that survive a round trip, equal to the engine's.
    res = Resolved(name="random", spec=spec)
    p = params_result(res)
    back = json.loads(json.dumps(p))
    assert back["total"] == exact(build(spec).params, spec.values)
    assert type(back["total"]) is int
    args = build_parser().parse_args(["flops", "random", "--batch", "3", "--seq-len", "7"])
    f = json.loads(json.dumps(flops_command_result(res, args)))
    v = {**spec.values, "B": 3, "L": 7, "L_src": 7, "L_tgt": 7}
    assert f["total"] == exact(build(spec).flops, v)
    assert type(f["total"]) is int


@given(specs(moe=True))
def test_moe_active_never_exceeds_total_and_equals_it_when_k_is_E(spec):
    model = build(spec)
    v = spec.values
    assert exact(model.active_params, v) <= exact(model.params, v)
    all_on = spec.replace(sizes={"k": v["E"]})
    assert exact(build(all_on).active_params, all_on.values) == exact(build(all_on).params, all_on.values)
