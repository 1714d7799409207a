"""Property tests over random specs (tracker issue 6, item 4).

The expected values here are structural facts, not numbers: a bigger size never gives a
smaller count, JSON round-trips integers, an MoE's active count never exceeds its total.
Counts themselves are checked against independent references elsewhere
(tests/test_reference_counts.py, tests/test_crosscheck_*.py).
"""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import specs, variant_specs

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


# ---------------------------------------------------------------------------------------
# Issue 15, build item 3: the invariants over random options (norm and FFN layouts, windows,
# global tokens, sharing, MoE layout, low-rank FFN).  Every count is a non-negative integer,
# every size a positive int, and the options change the counts as written out below.

VARIANTS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # examples: the profile (conftest)


def _norm_params(spec, width):
    if spec.norm == "layernorm":
        return 2 * width if spec.norm_bias else width
    return width if spec.norm == "rmsnorm" else 0


def _first(*vals):
    return next(v for v in vals if v is not None)


def _attention_params(spec):
    """One attention block written out (Vaswani et al. 2017 §3.2.2; GQA): W_Q d x h*d_k,
    W_K and W_V d x h_kv*d_k, W_O h*d_k x d, their biases, and the QK norms (RMSNorm when
    the model has no norm)."""
    v = spec.values
    d, h = v["d_model"], v["h"]
    dk, hkv = v.get("d_k", d // h), v.get("h_kv", h)
    qkv_bias = _first(spec.qkv_bias, spec.attention_bias, spec.bias)
    out_bias = _first(spec.out_bias, spec.attention_bias, spec.bias)
    p = d * h * dk + 2 * d * hkv * dk + h * dk * d
    p += (h * dk + 2 * hkv * dk if qkv_bias else 0) + (d if out_bias else 0)
    assert spec.qk_norm in ("none", "head")  # strategies.py draws true/false, read as head/none
    if spec.qk_norm == "head":
        p += 2 * (_norm_params(spec, dk) if spec.norm != "none" else dk)
    return p


def _ffn_params(spec):
    """One dense FFN written out: two maps (mlp) or three (GLU), each d_in x d_out, or
    r*(d_in + d_out) when low-rank, plus a d_out bias per map when the FFN has biases."""
    v = spec.values
    d, f = v["d_model"], v["d_ff"]
    maps = [(d, f), (f, d)] if spec.ffn == "mlp" else [(d, f), (d, f), (f, d)]
    bias = _first(spec.ffn_bias, spec.bias)
    r = v.get("r")
    return sum((r * (a + b) if r else a * b) + (b if bias else 0) for a, b in maps)


def _moe_params(spec):
    """One MoE block: the router d x E (no bias), E experts and the shared experts."""
    v = spec.values
    return v["d_model"] * v["E"] + (v["E"] + spec.n_shared_experts) * _ffn_params(spec)


def _stacks(spec):
    """(encoder layers, decoder layers, decoder MoE layers) of the layout."""
    v = spec.values
    fam = spec.family
    n_enc = 0 if fam == "decoder-only" else v.get("N", v.get("N_enc"))
    n_dec = 0 if fam == "encoder-only" else v.get("N", v.get("N_dec"))
    moe = (n_dec - spec.moe_first_dense) // spec.moe_every if spec.is_moe else 0
    return n_enc, n_dec, moe


def _workload(spec, data):
    """B and a sequence length holding the global tokens; L_src = L_tgt = L."""
    seq = data.draw(st.integers(max(spec.global_tokens, 1), spec.values["L"] + 64))
    return {**spec.values, "B": data.draw(st.integers(1, 4)), "L": seq, "L_src": seq, "L_tgt": seq}


@VARIANTS
@given(variant_specs(), st.data())
def test_every_count_is_a_non_negative_integer(spec, data):
    from symtrans.accounting.flops import evaluate, flops_expr
    from symtrans.analysis.solve import quantity_expr
    from symtrans.engine.architectures import Workload

    v = _workload(spec, data)
    spec.check_sizes(v, workload=True)
    model = build(spec)
    counts = [exact(model.params, v), exact(model.active_params, v), exact(model.flops, v)]
    counts.append(exact(build(spec, Workload(mask="causal")).flops, v))
    assert all(type(c) is int and c >= 0 for c in counts)
    assert counts[1] <= counts[0]  # active parameters never exceed the total
    for mode in ("backward", "training"):
        assert evaluate(flops_expr(spec, mode), v) >= 0
    memory = evaluate(quantity_expr(spec, "memory"), v)
    assert memory.is_Integer and memory > 0  # whole bytes (rounded up)
    for row in model.walk():  # and every step of the derivation, on its own
        _, mult, step = row
        assert exact(mult * step.params, v) >= 0 and exact(mult * step.weights, v) >= 0


@VARIANTS
@given(variant_specs(), st.data())
def test_sizes_must_be_positive_ints(spec, data):
    name = data.draw(st.sampled_from(sorted(spec.values)))
    good = spec.values[name]
    bad = data.draw(st.sampled_from([float(good), good + 0.5, True, False, 0, -good, str(good)]))
    import pytest

    with pytest.raises(ValueError, match=f"{name} must be a positive integer"):
        exact(build(spec).params, {**spec.values, name: bad})
    with pytest.raises(ValueError, match=f"{name} must be a positive integer"):
        spec.replace(sizes={name: bad})


@VARIANTS
@given(variant_specs(), st.data())
def test_windows_and_global_tokens_keep_at_most_the_full_square(spec, data):
    import dataclasses

    from symtrans.engine.architectures import Workload

    v = _workload(spec, data)
    no_globals = spec.replace(global_tokens=0)
    full = dataclasses.replace(no_globals, sizes=tuple((n, x) for n, x in spec.sizes if n != "w"))
    for mask in ("full", "causal"):
        wl = Workload(mask=mask)
        f = exact(build(spec, wl).flops, v)
        assert exact(build(no_globals, wl).flops, v) <= f <= exact(build(full, wl).flops, v)
    if spec.global_tokens == v["L"] and spec.family == "encoder-only":  # every token global: no window left
        assert exact(build(spec).flops, v) == exact(build(full).flops, v)


@VARIANTS
@given(variant_specs(), st.data())
def test_sharing_stores_each_shared_block_once(spec, data):
    # share_layers=attention saves all but one copy of every attention block of a stack
    # (dense and MoE layers share one); ffn all but one dense FFN and one MoE block per
    # stack; the FLOPs do not change.  Expected savings written out above.
    v = _workload(spec, data)
    none = spec.replace(share_layers="none")
    p_none = exact(build(none).params, v)
    n_enc, n_dec, moe = _stacks(spec)
    att = _attention_params(spec)
    saved = {"attention": max(n_enc - 1, 0) * att + max(n_dec - 1, 0) * att}
    if spec.family == "encoder-decoder":
        saved["attention"] += max(n_dec - 1, 0) * att  # the cross-attention, shared as well
    enc_ffn = _moe_params(spec) if spec.is_moe else _ffn_params(spec)
    dense = n_dec - moe
    saved["ffn"] = max(n_enc - 1, 0) * enc_ffn + max(dense - 1, 0) * _ffn_params(spec)
    if moe:
        saved["ffn"] += (moe - 1) * _moe_params(spec)
    for kind, s in saved.items():
        shared = spec.replace(share_layers=kind)
        assert exact(build(shared).params, v) == p_none - s
        assert exact(build(shared).flops, v) == exact(build(none).flops, v)
    everything = spec.replace(share_layers="all")
    p_all = exact(build(everything).params, v)
    assert p_all <= min(p_none - saved["attention"], p_none - saved["ffn"])
    assert exact(build(everything).flops, v) == exact(build(none).flops, v)


@VARIANTS
@given(specs(moe=True), st.data())
def test_moe_layout_replaces_moe_blocks_by_dense_ffns(spec, data):
    # Of n decoder layers, the first f dense and then every e-th MoE: (n - f) // e MoE
    # layers; each of the others holds a dense FFN instead of a MoE block.
    n_name = "N" if "N" in spec.values else "N_dec"
    if spec.family == "encoder-only":
        return  # the layout applies to decoder layers
    n = spec.values[n_name]
    first = data.draw(st.integers(0, n - 1))
    every = data.draw(st.integers(1, n - first))
    laid = spec.replace(moe_first_dense=first, moe_every=every)
    moe = (n - first) // every
    assert moe >= 1
    diff = (n - moe) * (_ffn_params(spec) - _moe_params(spec))
    assert exact(build(laid).params, laid.values) == exact(build(spec).params, spec.values) + diff
