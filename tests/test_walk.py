"""The shape walk (tracker issue 7): shapes, FLOPs from shapes, the identity with the
cost engine, evaluation at numbers, the exact sinusoidal table and the CLI.

Sources: the matmul rule (m x k)(k x n) = 2*m*k*n FLOPs (2 per multiply-accumulate, the
convention of Kaplan et al. 2020 and torch.utils.flop_counter); Vaswani et al. 2017 §3.5
for the sinusoids, checked against Python's math.sin/math.cos; the 6-wide worked example
of the teaching article 004 (7 tokens, d_model 6, d_k 4, V 23), its arithmetic written out.
The identity test compares two derivations of each layer's FLOPs that share no formula: the walk
(from shapes, with its own row-by-row count of kept query-key pairs) and the Cost tree; the walk's
pair count is itself checked against a pass over every (query, key) pair.  Which layers a stack
has and how many (dense/MoE, windowed/full) the walk takes from the tree (issue 20: no consumer
rebuilds layer structure from the Spec), so those counts are checked here against their own
oracle: a pass over the layers 1..N by the config's rule (``_moe_by_layer``, below), at depths.
"""

import json
import math
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st
from strategies import specs

from symtrans.analysis.walk import (
    CausalWindowPairs,
    GlobalLocalPairs,
    HalfWindowPairs,
    LocalWindowPairs,
    kept_pairs,
    matmul_flops,
    pe_table,
    walk,
)
from symtrans.base.errors import InputError
from symtrans.catalog.presets import PRESETS
from symtrans.cli.main import main
from symtrans.engine import symbols as S
from symtrans.engine.architectures import Workload, build
from symtrans.engine.evaluate import exact, exact_rational
from symtrans.engine.simplify import identical
from symtrans.engine.spec import Spec


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- the identity: walk FLOPs summed == the cost engine's forward FLOPs ----------------------
# The walk counts kept query-key pairs itself (walk.kept_pairs), so the two derivations of a layer share
# no formula; the layer counts are the tree's, checked against a layer-by-layer count (_moe_by_layer).  Where the walk's count is a closed form the identity is
# checked symbolically; a local window or a MoE layer pattern is counted row by row (layer by layer)
# at numbers, so both are compared at lengths below, at and above the window, and at several depths.

WORKLOADS = [
    Workload(),
    Workload(mask="causal"),
    Workload(mask="half"),
    Workload(seq=1, tgt=1, context=S.L, mask="causal"),
]  # decode one token


def _lengths(spec: Spec) -> list[int]:
    if spec.has("w"):
        w = spec.size("w")
        return sorted({1, 2, 3, max(1, w - 1), w, w + 1, 2 * w + 3})
    return [1, 2, 3, 17, 64]


def _depths(spec: Spec) -> list[int | None]:
    if spec.moe_first_dense or spec.moe_every != 1:
        first = spec.moe_first_dense
        return [first + 1, first + 2, first + 5, first + 2 * spec.moe_every + 1]
    return [None]


def _moe_by_layer(n: int, first: int, every: int) -> int:
    """MoE layers among n by the config's rule, going through the layers: layer l (1-based) is a
    MoE layer when l > first and (l - first) % every == 0 (first_k_dense_replace /
    moe_layer_freq as DeepSeek's and Mixtral-derived configs state it).  The oracle of the tree's
    closed form floor((N - first) / every)."""
    return sum(1 for layer in range(1, n + 1) if layer > first and (layer - first) % every == 0)


def _tree_moe_layers(spec: Spec, wl: Workload) -> sp.Expr:
    """MoE layers of the decoder (or the one stack) as the tree states them: the multiplicities
    of its Block.LAYER nodes that hold a Block.MOE block."""
    from symtrans.engine.roles import Block

    layers = [
        c
        for s in build(spec, wl).children
        if s.block in (Block.DECODER, Block.ENCODER)
        for c in s.children
        if c.block == Block.LAYER
    ]
    return sp.Add(*[c.multiplicity for c in layers if any(True for _ in c.blocks_of(Block.MOE))])


def assert_walk_equals_engine(spec: Spec, wl: Workload) -> None:
    w, e = walk(spec, wl).flops, build(spec, wl).flops
    if not w.has(CausalWindowPairs, HalfWindowPairs, LocalWindowPairs, GlobalLocalPairs):
        assert sp.expand(w - e) == 0, wl
    for L in _lengths(spec):
        for n in _depths(spec):
            v = {**spec.values, "B": 2, "L": L, "L_src": L, "L_tgt": max(1, L - 1)}
            if n is not None:
                v[("N" if spec.has("N") else "N_dec")] = n
            assert exact_rational(w, v) == exact_rational(e, v), (wl, v)
            if spec.is_moe and not spec.has("N_moe") and spec.mixers == "attention":
                depth = v.get("N", v.get("N_dec"))
                expected = _moe_by_layer(depth, spec.moe_first_dense, spec.moe_every)
                assert exact(_tree_moe_layers(spec, wl), v) == expected, (wl, v)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_walk_flops_equal_engine_forward_flops_for_every_preset(name):
    spec = PRESETS[name].spec
    for wl in WORKLOADS:
        assert_walk_equals_engine(spec, wl)


@pytest.mark.parametrize(
    "name, sizes, options",
    [
        ("mistral-7b", {"w": 4096}, {}),
        ("mistral-7b", {"w": 5}, {}),
        ("bert-base", {"w": 128}, {"global_tokens": 3}),
        ("bert-base", {"w": 7}, {}),
        ("t5-small", {"w": 64, "r": 32}, {}),
        ("gpt2", {"E_emb": 128}, {"share_layers": "attention"}),
        ("mixtral-8x7b", {"r": 256}, {"n_shared_experts": 1, "moe_first_dense": 1, "moe_every": 2}),
        ("mixtral-8x7b", {}, {"moe_first_dense": 3, "moe_every": 3}),
        ("albert-base-v2", {}, {"mlm_head": True}),
    ],
)
def test_walk_identity_with_the_variants(name, sizes, options):
    spec = PRESETS[name].spec.replace(sizes=sizes, **options)
    for wl in WORKLOADS:
        assert_walk_equals_engine(spec, wl)


@given(
    spec=specs(),
    variant=st.fixed_dictionaries(
        {
            "w": st.sampled_from([None, 1, 2, 3, 8]),
            "r": st.sampled_from([None, 3]),
            "E_emb": st.sampled_from([None, 5]),
            "share": st.sampled_from(["none", "all", "attention", "ffn"]),
        }
    ),
    mask=st.sampled_from(["full", "causal", "half"]),
    decode=st.booleans(),
    B=st.integers(1, 3),
    L=st.integers(1, 40),
    L_tgt=st.integers(1, 40),
)
def test_walk_identity_on_random_specs(spec, variant, mask, decode, B, L, L_tgt):
    sizes = {k: v for k, v in variant.items() if k != "share" and v is not None}
    spec = spec.replace(sizes=sizes, share_layers=variant["share"])
    wl = Workload(seq=1, tgt=1, context=S.L, mask=mask) if decode else Workload(mask=mask)
    v = {**spec.values, "B": B, "L": L, "L_src": L, "L_tgt": L_tgt}
    assert exact_rational(walk(spec, wl).flops, v) == exact_rational(build(spec, wl).flops, v)


# -- kept pairs, from the mask's definition: a brute-force pass over every (query, key) pair -----------


def _brute_pairs(q: int, kv: int, mask: str, causal: bool, w: int | None, g: int) -> Fraction:
    """Every query position p (the last q of kv) against every key j, by the mask's rule."""
    if causal and mask == "half":  # a convention, not a mask: half the (banded) square, continuous
        if w is None:
            return Fraction(q * kv, 2)
        area = Fraction(kv * kv, 2) if kv <= w else Fraction(w * w, 2) + (kv - w) * w
        return Fraction(q, kv) * area  # global tokens belong to bidirectional attention only
    kept = 0
    for p in range(kv - q + 1, kv + 1):
        for j in range(1, kv + 1):
            if w is None:
                keep = not causal or mask in ("full", "window") or j <= p
            elif not causal:  # the band, or a global row (p <= g) or column (j <= g)
                keep = abs(p - j) <= w // 2 or p <= g or j <= g
            elif mask == "full":  # eager attention: the whole score matrix, the window applied as a mask after
                keep = True
            elif mask == "window":  # a kernel that reads the window only: min(kv, w) keys for every query
                keep = j > kv - w
            else:
                keep = 0 <= p - j < w
            kept += keep
    return Fraction(kept)


@given(
    kv=st.integers(1, 30),
    data=st.data(),
    mask=st.sampled_from(["full", "causal", "half", "window"]),
    causal=st.booleans(),
    w=st.one_of(st.none(), st.integers(1, 12)),
    g=st.integers(0, 2),
)
def test_kept_pairs_match_a_pass_over_every_pair(kv, data, mask, causal, w, g):
    q = data.draw(st.integers(1, kv), label="q") if causal else kv  # bidirectional: every position queries
    g = g if w is not None and not causal else 0  # global tokens: bidirectional windows only
    g = min(g, kv)  # at most every position is global (Spec refuses more)
    expected = _brute_pairs(q, kv, mask, causal, w, g)
    values = {"L": kv, "L_pre": q, "w": w or 1}
    got = kept_pairs(S.L_pre, S.L, mask, causal, S.w if w is not None else None, g)
    assert exact_rational(got, values) == expected
    # ... and the engine's closed forms agree (they share no code with the walk's count).
    from symtrans.engine.components import attention_pairs, windowed_pairs

    if w is None:
        engine = attention_pairs(S.L_pre, S.L, mask if causal else "full")
    else:
        engine = windowed_pairs(S.L_pre, S.L, mask, causal=causal, global_tokens=g)
    assert exact_rational(engine, values) == expected


def test_kept_pairs_written_out():
    # Causal, L = 4: rows keep 1, 2, 3, 4 keys = 10 = 4*5/2.  Window w = 2: 1, 2, 2, 2 = 7.
    # Decode (q = 1) at kv = 4: the one query row keeps all 4 keys, or 2 under the window.
    at = {"L": 4, "L_pre": 1, "w": 2}
    assert exact_rational(kept_pairs(S.L, S.L, "causal", True), at) == 10
    assert exact_rational(kept_pairs(S.L, S.L, "causal", True, S.w), at) == 7
    assert exact_rational(kept_pairs(S.L_pre, S.L, "causal", True), at) == 4
    assert exact_rational(kept_pairs(S.L_pre, S.L, "causal", True, S.w), at) == 2
    # Longformer, L = 5, w = 2 (one key each side): rows keep 2, 3, 3, 3, 2 = 13.  One global token
    # (position 1): its row keeps all 5; rows 2..5 keep their band plus key 1 when outside it:
    # 3 (band 1-3), 3 + 1, 3 + 1, 2 + 1 -> 5 + 3 + 4 + 4 + 3 = 19.
    assert exact_rational(kept_pairs(S.L, S.L, "full", False, S.w), {"L": 5, "w": 2}) == 13
    assert exact_rational(kept_pairs(S.L, S.L, "full", False, S.w, 1), {"L": 5, "w": 2}) == 19


def test_moe_layers_written_out():
    # 7 layers, the first 1 dense, then every 2nd a MoE layer: layers 3, 5, 7 (1-based) -> 3 MoE, 4 dense.
    assert _moe_by_layer(7, 1, 2) == 3
    spec = PRESETS["mixtral-8x7b"].spec.replace(moe_first_dense=1, moe_every=2)
    assert exact(_tree_moe_layers(spec, Workload()), {"N": 7}) == 3
    # Fewer layers than the dense prefix: no MoE layer, all dense.
    assert _moe_by_layer(2, 3, 1) == 0


def test_a_dense_prefix_as_long_as_the_stack_is_refused_and_a_shorter_one_counts_alike():
    # The engine's closed form counts floor((N - moe_first_dense) / moe_every) MoE layers, which
    # would be negative for N < moe_first_dense; the Spec refuses such a model where the sizes
    # are given (issue 15: no negative count), in one InputError naming the option.
    with pytest.raises(InputError, match="moe_first_dense=3 .* N=1"):
        PRESETS["mixtral-8x7b"].spec.replace(sizes={"N": 1}, moe_first_dense=3)
    with pytest.raises(InputError, match="moe_first_dense must be below N"):
        PRESETS["mixtral-8x7b"].spec.replace(sizes={"N": 3}, moe_first_dense=3)
    # N = 4 with 3 dense layers: one MoE layer (layer 4).  The walk (layer by layer, from
    # shapes) and the closed form agree.
    spec = PRESETS["mixtral-8x7b"].spec.replace(sizes={"N": 4}, moe_first_dense=3)
    at = {**spec.values, "B": 1, "L": 8}
    assert exact(build(spec).flops, at) == exact(walk(spec).flops, at)
    # Parameters written out (Mixtral-8x7B's config: d_model 4096, d_ff 14336, 32 heads, 8 KV
    # heads of 128, 8 experts, V 32000, untied head): per layer attention 2*4096^2 + 2*4096*1024
    # and two RMSNorms; 3 dense SwiGLU FFNs of 3*4096*14336; one MoE layer of 8 such experts and
    # a 4096 x 8 router; embedding and head 2*32000*4096; final norm 4096.
    attention, ffn = 2 * 4096**2 + 2 * 4096 * 1024, 3 * 4096 * 14336
    expected = 4 * (attention + 2 * 4096) + 3 * ffn + 8 * ffn + 4096 * 8 + 2 * 32000 * 4096 + 4096
    assert exact(build(spec).params, spec.values) == expected == 2_367_754_240
    assert exact(_tree_moe_layers(spec, Workload()), {"N": 4}) == _moe_by_layer(4, 3, 1) == 1


# -- FLOPs from shapes ----------------------------------------------------------------------------


def test_matmul_flops_follow_from_shapes():
    out, flops = matmul_flops((S.B, S.L, S.d_model), (S.d_model, S.d_ff))
    assert out == (S.B, S.L, S.d_ff) and identical(flops, 2 * S.B * S.L * S.d_model * S.d_ff)
    out, flops = matmul_flops((S.B, S.h, S.L, S.d_k), (S.B, S.h, S.d_k, S.L))
    assert out == (S.B, S.h, S.L, S.L) and identical(flops, 2 * S.B * S.h * S.L * S.d_k * S.L)
    with pytest.raises(ValueError, match="inner dimensions differ"):
        matmul_flops((S.B, S.L, S.d_model), (S.d_ff, S.d_model))
    with pytest.raises(ValueError, match="batch dimensions differ"):
        matmul_flops((S.B, S.h, S.L, S.d_k), (S.B, S.h_kv, S.d_k, S.L))


def test_shapes_of_a_gqa_layer():
    # Llama-3-8B: Q is B x h x L x d_k; K and V are projected to h_kv heads, then repeated to h.
    steps = {s.op: s for s in walk(PRESETS["llama-3-8b"].spec).steps}
    D = S.d_model / S.h  # d_k = d_model/h when head_dim is not given
    assert steps["split heads"].output == (S.B, S.h, S.L, D)
    assert steps["split K heads"].output == (S.B, S.h_kv, S.L, D)
    assert steps["repeat K heads h/h_kv times"].output == (S.B, S.h, S.L, D)
    assert steps["S = Q K^T / sqrt(d_k)"].output == (S.B, S.h, S.L, S.L)
    assert steps["logits = X W_out"].output == (S.B, S.L, S.V)


# -- the 6-wide worked example (article 004) -------------------------------------------------------

TOY = Spec(
    family="encoder-decoder",
    sizes=dict(d_model=6, d_ff=6, h=1, d_k=4, N=1, V=23, L_max=7, L=7),
    positional="sinusoidal",
)


def test_the_six_wide_example_shapes_and_flops():
    values = {**TOY.values, "B": 1, "L_src": 7, "L_tgt": 7}
    w = walk(TOY)
    at = {(r["stage"], r["op"]): r for r in w.evaluate(values)}
    enc = "encoder layer x N"
    assert at[("encoder embeddings", "X = E[ids] (lookup)")]["output"] == [1, 7, 6]
    assert at[(enc, "Q = X W_Q")]["inputs"] == [[1, 7, 6], [6, 4]]  # W_Q is 6 x 4
    assert at[(enc, "split heads")]["output"] == [1, 1, 7, 4]  # Q: 7 x 4, one head
    assert at[(enc, "S = Q K^T / sqrt(d_k)")]["output"] == [1, 1, 7, 7]  # scores 7 x 7
    assert at[(enc, "O = A V")]["output"] == [1, 1, 7, 4]
    assert at[(enc, "X' = O W_O")]["inputs"] == [[1, 7, 4], [4, 6]]  # (7 x 4)(4 x 6) = 7 x 6
    assert at[(enc, "X' = O W_O")]["output"] == [1, 7, 6]
    # Encoder layer FLOPs: Q, K, V 3*2*7*6*4 = 1,008; QK^T 2*7*7*4 = 392; AV 392; W_O 2*7*4*6 = 336;
    # FFN (two 6 x 6 maps) 2*2*7*6*6 = 1,008.
    enc_flops = sum(r["total_flops"] for (stage, _), r in at.items() if stage == enc)
    assert enc_flops == 1008 + 392 + 392 + 336 + 1008 == 3136
    # Cross-attention: Q from the 7 decoder rows, K and V from the 7 encoder rows.
    assert at[("decoder layer x N", "K = M W_K (encoder output M)")]["inputs"] == [[1, 7, 6], [6, 4]]
    # The tied output projection 6 x 23: 2*7*6*23 = 1,932 FLOPs.
    assert at[("LM head", "logits = X W_out (tied: E^T)")]["flops"] == 2 * 7 * 6 * 23


# -- the exact sinusoidal table -----------------------------------------------------------------


def test_pe_table_d6_matches_math_sin_cos():
    table = pe_table(6, 7)
    assert len(table) == 7 and all(len(row) == 6 for row in table)
    for pos, row in enumerate(table):
        for j, value in enumerate(row):
            i = j // 2  # the pair index, not the column index
            angle = pos / 10000 ** (2 * i / 6)
            expected = math.sin(angle) if j % 2 == 0 else math.cos(angle)
            assert not value.has(sp.Float)  # exact SymPy values
            assert abs(float(value.evalf(30)) - expected) < 1e-12


def test_pe_table_first_rows():
    table = pe_table(6, 7)
    assert table[0] == [0, 1, 0, 1, 0, 1]  # sin 0 = 0, cos 0 = 1
    assert table[1][0] == sp.sin(1) and table[1][1] == sp.cos(1)


# -- CLI -------------------------------------------------------------------------------------------


def test_cli_walk_text_says_the_sum_equals_the_engine(capsys):
    code, out, err = run(capsys, "walk", "gpt2", "--seq-len", "8")
    assert code == 0 and err == ""
    assert "(equal)" in out and "S = Q K^T / sqrt(d_k)" in out
    assert "B x h x L x L" in out  # a symbolic shape
    assert "1 x 12 x 8 x 8" in out  # the same shape at numbers


def test_cli_walk_json_total_equals_flops_command(capsys):
    code, out, _ = run(capsys, "walk", "llama-2-7b", "--seq-len", "128", "--format", "json")
    walked = json.loads(out)
    code2, out2, _ = run(capsys, "flops", "llama-2-7b", "--seq-len", "128", "--format", "json")
    assert code == code2 == 0
    assert walked["total_flops"] == json.loads(out2)["total"]
    assert sum(s["at"]["total_flops"] for s in walked["steps"]) == walked["total_flops"]


def test_cli_walk_one_step_at_numbers(capsys):
    code, out, _ = run(capsys, "walk", "gpt2", "--seq-len", "1024", "--step", "5")
    assert code == 0
    # Step 5 of GPT-2 (pre-norm) is Q = X W_Q: 2*B*L*d_model**2 = 2*1*1024*768**2.
    assert "Q = X W_Q" in out
    assert f"= {2 * 1 * 1024 * 768**2:,}" in out


def test_cli_walk_markdown(capsys):
    code, out, _ = run(capsys, "walk", "bert-base", "--seq-len", "16", "--format", "markdown")
    assert code == 0 and "| # | stage | operation |" in out


def test_cli_pe_table(capsys):
    code, out, _ = run(capsys, "walk", "--pe-table")
    assert code == 0
    assert "d_model = 6" in out and "pos 6:" in out and "sin(1) = 0.841471" in out
    code, out, _ = run(capsys, "walk", "--pe-table", "--format", "json")
    table = json.loads(out)["table"]
    assert abs(table[6][0]["value"] - math.sin(6)) < 1e-12 and table[6][0]["exact"] == "sin(6)"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["walk"], "MODEL is required"),
        (["walk", "gpt2", "--step", "999"], "--step must be between 1 and"),
        (["walk", "gpt2", "--step", "0"], "must be a positive integer"),
        (["walk", "--pe-table", "--seq-len", "65"], "between 1 and 64"),
        (["walk", "gpt-9"], "unknown preset"),
    ],
)
def test_cli_walk_bad_input(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err


def test_report_has_the_shape_walk_section():
    from symtrans.catalog.resolve import resolve
    from symtrans.render.report import render

    md = render(resolve("stories15m"), "markdown", seq_len=256)
    assert "## Shape walk" in md
    # The sum printed at the end of the section is the model's forward FLOPs at B = 1, L = 256.
    from symtrans.engine.evaluate import exact

    spec = PRESETS["stories15m"].spec
    total = exact(build(spec).flops, {**spec.values, "B": 1, "L": 256})
    assert f"Sum over the steps: **{total:,}** FLOPs" in md
