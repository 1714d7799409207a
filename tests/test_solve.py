"""solve, llama_ffn_dim, the Chinchilla planner and safe_parse (tracker issue 5, "Solve").

Expected values come from: Meta's llama ``model.py`` d_ff rule and the released
config.json files (intermediate_size), transformers' LlamaForCausalLM on the meta
device, Hoffmann et al. 2022 (Chinchilla), and arithmetic written out in the tests.
"""

from __future__ import annotations

import json
import math
import os

import pytest
import sympy as sp
from conftest import require

from symtrans.analysis.solve import chinchilla, keep_rule, llama_ffn_dim, llama_rule, solve
from symtrans.base.safe_parse import parse_assignment, parse_constraint
from symtrans.cli.main import main
from symtrans.engine.spec import Spec
from symtrans.engine.symbols import SYMBOLS

d_model, d_ff, N, h = (SYMBOLS[n] for n in ("d_model", "d_ff", "N", "h"))

# Llama-2-7B's shape (Touvron et al. 2023 Table 1; config.json of meta-llama/Llama-2-7b-hf):
# N 32, h 32, V 32000, SwiGLU, RMSNorm, no biases, untied head; d_model is what we solve for.
LLAMA_SHAPE = Spec(
    family="decoder-only",
    sizes=dict(d_model=4096, d_ff=11008, h=32, N=32, V=32000, L_max=4096, L=4096),
    positional="rotary",
    norm="rmsnorm",
    bias=False,
    ffn="swiglu",
    final_norm=True,
    tie_output=False,
    norm_position="pre",
)


def meta_llama_d_ff(dim: int, multiple_of: int = 256) -> int:
    """Meta's llama/model.py FeedForward, written out: hidden = int(2 * 4 * dim / 3), rounded up."""
    hidden = int(2 * (4 * dim) / 3)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


def llama_params(dim: int) -> int:
    """LlamaForCausalLM's parameters, module by module (no biases):
    embed_tokens V*dim + lm_head dim*V + per layer (q, k, v, o: 4*dim^2; gate, up, down:
    3*dim*d_ff; two RMSNorm weights: 2*dim) + the final norm dim."""
    V, layers, ff = 32000, 32, meta_llama_d_ff(dim)
    return 2 * V * dim + layers * (4 * dim * dim + 3 * dim * ff + 2 * dim) + dim


# ------------------------------------------------------------------ Llama's d_ff rule


@pytest.mark.parametrize(
    "dim, multiple_of, multiplier, expected",
    [
        (4096, 256, None, 11008),  # Llama-2-7B config.json intermediate_size
        (5120, 256, None, 13824),  # Llama-2-13B
        (8192, 4096, 1.3, 28672),  # Llama-2-70B (ffn_dim_multiplier 1.3, multiple_of 4096)
        (4096, 1024, 1.3, 14336),  # Llama-3-8B (ffn_dim_multiplier 1.3, multiple_of 1024)
    ],
)
def test_llama_ffn_dim_reproduces_the_released_widths(dim, multiple_of, multiplier, expected):
    assert llama_ffn_dim(dim, multiple_of, multiplier) == expected


def test_llama_ffn_expr_agrees_with_meta_rule_on_many_widths():
    rule = llama_rule(256)
    for dim in range(32, 20000, 97):
        assert rule.value({"d_model": dim}) == meta_llama_d_ff(dim)
        assert int(rule.expr.xreplace({d_model: dim})) == meta_llama_d_ff(dim)


@pytest.mark.parametrize("bad", [0, -5, True, 3.5])
def test_llama_ffn_dim_rejects_bad_widths(bad):
    with pytest.raises(ValueError, match="d_model"):
        llama_ffn_dim(bad)


# ------------------------------------------------------------------ must show: solve for d_model


def test_solve_llama2_7b_count_returns_exactly_4096():
    # 6,738,415,616 = LlamaForCausalLM(Llama-2-7b-hf config) on the meta device.
    assert llama_params(4096) == 6_738_415_616
    r = solve(LLAMA_SHAPE, "d_model", 6_738_415_616, rules=[llama_rule(256)])
    assert r.exact == 4096
    assert r.below.count == r.above.count == 6_738_415_616
    assert r.below.sizes["d_ff"] == 11008
    # The relaxed equation is Llama's count with d_ff = 8/3 d_model (written out):
    # 2*32000*d + 32*(4 d^2 + 3 d (8/3) d + 2 d) + d = 384 d^2 + 64065 d.
    assert sp.expand(r.equation.lhs - (384 * d_model**2 + 64065 * d_model)) == 0
    assert r.solutions and abs(float(r.solutions[0]) - float(r.root)) < 1e-9
    assert r.step == 64  # h = 32 must divide d_model, and RoPE needs an even head width


def test_solve_llama2_at_7e9_gives_nearest_valid_widths_on_both_sides():
    target = 7_000_000_000
    r = solve(LLAMA_SHAPE, "d_model", target, rules=[llama_rule(256)])
    # Valid widths: h = 32 divides d_model and the head width d_model/32 is even, because
    # RoPE rotates pairs of features (Su et al. 2021 §3.2; transformers rejects an odd
    # head_dim): multiples of 64.  Brute force with the written-out count.
    widths = range(64, 8192, 64)
    below = max(w for w in widths if llama_params(w) <= target)
    above = min(w for w in widths if llama_params(w) >= target)
    assert (below, above) == (4160, 4224)
    assert (r.below.value, r.above.value) == (below, above)
    assert r.below.count == llama_params(4160) == 6_980_018_240
    assert r.above.count == llama_params(4224) == 7_122_006_144
    assert r.exact is None
    assert r.below.value < float(r.root) < r.above.value


def test_the_two_7e9_neighbours_match_transformers_on_the_meta_device():
    torch, transformers = require("torch"), require("transformers")
    r = solve(LLAMA_SHAPE, "d_model", 7_000_000_000, rules=[llama_rule(256)])
    for c in (r.below, r.above):
        cfg = transformers.LlamaConfig(
            hidden_size=c.value,
            intermediate_size=c.sizes["d_ff"],
            num_hidden_layers=32,
            num_attention_heads=32,
            num_key_value_heads=32,
            vocab_size=32000,
            tie_word_embeddings=False,
        )
        with torch.device("meta"):
            model = transformers.LlamaForCausalLM(cfg)
        assert sum(p.numel() for p in model.parameters()) == c.count


def test_keep_constraint_and_multiple_of():
    # GPT-2 shape with d_ff = 4 d_model: params = V d + L d + N (12 d^2 + 13 d) + 2 d (GPT2LMHeadModel).
    spec = Spec(
        family="decoder-only",
        sizes=dict(d_model=768, d_ff=3072, h=12, N=12, V=50257, L_max=1024, L=1024),
        positional="learned",
        norm_position="pre",
        final_norm=True,
        tie_output=True,
    )

    def gpt2(d):
        return 50257 * d + 1024 * d + 12 * (12 * d * d + 13 * d) + 2 * d

    r = solve(spec, "d_model", 10**9, rules=[keep_rule("d_ff=4*d_model")], multiple_of=128)
    # Valid: multiples of 128 that h = 12 divides, i.e. multiples of 384.
    valid = [d for d in range(128, 20000, 128) if d % 12 == 0]
    below = max(d for d in valid if gpt2(d) <= 10**9)
    above = min(d for d in valid if gpt2(d) >= 10**9)
    assert (below, above) == (2304, 2688)
    assert (r.below.value, r.above.value) == (below, above)
    assert r.below.count == gpt2(below) and r.above.count == gpt2(above)
    assert r.below.sizes["d_ff"] == 4 * below


def test_h_tied_to_d_model_makes_the_step_the_head_width():
    spec = LLAMA_SHAPE
    r = solve(spec, "d_model", 7_000_000_000, rules=[llama_rule(256), keep_rule("h=d_model/128")])
    assert r.step == 128  # h = d_model/128 is an integer; d_k = 128 is even
    assert r.below.value % 128 == 0 and r.below.sizes["h"] == r.below.value // 128


def test_solve_for_layers_is_linear():
    # GPT-2 (124,439,808 = transformers GPT2LMHeadModel): per layer 12*768^2 + 13*768 = 7,087,872,
    # outside the layers 50257*768 + 1024*768 + 2*768 = 39,385,344.
    spec = Spec(
        family="decoder-only",
        sizes=dict(d_model=768, d_ff=3072, h=12, N=12, V=50257, L_max=1024, L=1024),
        positional="learned",
        norm_position="pre",
        final_norm=True,
        tie_output=True,
    )
    r = solve(spec, "N", 124_439_808)
    assert r.exact == 12
    r = solve(spec, "N", 10**9)
    n = (10**9 - 39_385_344) // 7_087_872
    assert (r.below.value, r.above.value) == (n, n + 1)
    assert r.below.count == 39_385_344 + n * 7_087_872


def test_solve_for_sequence_length_under_a_flops_budget():
    # GPT-2 forward FLOPs at B = 1 (2 per MAC, full square):
    # 12 * (2 L (4*768^2 + 2*768*3072) + 4 L^2 768) + 2 L 768 50257.
    spec = Spec(
        family="decoder-only",
        sizes=dict(d_model=768, d_ff=3072, h=12, N=12, V=50257, L_max=1024, L=1024),
        positional="rotary",
        norm_position="pre",
        final_norm=True,
        tie_output=True,
    )

    def fwd(L):
        return 12 * (2 * L * (4 * 768**2 + 2 * 768 * 3072) + 4 * L * L * 768) + 2 * L * 768 * 50257

    assert fwd(1024) == 291_648_307_200
    r = solve(spec, "L", 10**12, "flops")
    best = max(L for L in range(1, 5000) if fwd(L) <= 10**12)
    assert (r.below.value, r.above.value) == (best, best + 1)
    assert r.below.count == fwd(best)


def test_training_flops_and_memory_budgets_are_solved_too():
    r = solve(LLAMA_SHAPE, "L", 10**15, "training_flops", workload={"B": 8})

    # One training step = 3 x forward (Kaplan et al. 2020 §2.1): the forward count at B = 8, written out.
    def fwd(L):
        d, ff = 4096, 11008
        return 8 * (32 * (2 * L * (4 * d * d + 3 * d * ff) + 4 * L * L * d) + 2 * L * d * 32000)

    best = max(L for L in range(1, 8000) if 3 * fwd(L) <= 10**15)
    assert r.below.value == best and r.below.count == 3 * fwd(best)
    m = solve(LLAMA_SHAPE, "L", 80 * 2**30, "memory", workload={"B": 8}, memory_options={"mode": "inference"})
    assert m.below.count <= 80 * 2**30 < m.above.count and m.above.value == m.below.value + 1


# ------------------------------------------------------------------ bad input


def test_unsatisfiable_target_names_the_smallest_count():
    with pytest.raises(ValueError, match="no valid d_model gives at most 1,000 parameters"):
        solve(LLAMA_SHAPE, "d_model", 1000, rules=[llama_rule()])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(unknown="d_modle"), "unknown symbol"),
        (dict(target=0), "positive integer"),
        (dict(target=-7), "positive integer"),
        (dict(quantity="bananas"), "quantity must be one of"),
        (dict(unknown="L"), "does not depend on L"),
        (dict(multiple_of=0), "multiple_of"),
    ],
)
def test_bad_solve_arguments(kwargs, message):
    args = dict(spec=LLAMA_SHAPE, unknown="d_model", target=7 * 10**9)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        solve(**args)


def test_cyclic_and_self_referencing_constraints():
    with pytest.raises(ValueError, match="cycle"):
        solve(LLAMA_SHAPE, "N", 10**9, rules=[keep_rule("d_ff=3*h"), keep_rule("h=d_ff/3")])
    with pytest.raises(ValueError, match="refers to d_ff itself"):
        keep_rule("d_ff=2*d_ff")
    with pytest.raises(ValueError, match="cannot also be set"):
        solve(LLAMA_SHAPE, "d_ff", 10**9, rules=[keep_rule("d_ff=4*d_model")])


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('touch PWNED')",
        "d_model.__class__",
        "open('x')",
        "[d_model]",
        "d_model if h else N",
        "lambda: 1",
        "d_model // 2",
        "d_model % 3",
        "d_model < 3",
        "'text'",
        "d_model ** h",
        "2 ** 1000",
        "((10 ** 64) ** 64) ** 64",
        "x" * 501,
        "",
        "d_model +",
    ],
)
def test_constraints_other_than_arithmetic_are_rejected_without_evaluation(text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError):
        parse_constraint(text, SYMBOLS)
    assert not os.path.exists(tmp_path / "PWNED")  # nothing was evaluated


def test_unknown_symbols_are_named():
    with pytest.raises(ValueError, match="unknown symbol 'width'"):
        parse_constraint("4*width", SYMBOLS)
    with pytest.raises(ValueError, match="unknown symbol 'dff'"):
        parse_assignment("dff=4*d_model", SYMBOLS)


def test_parse_builds_exact_expressions():
    assert parse_constraint("4*d_model", SYMBOLS) == 4 * d_model
    assert parse_constraint("(8/3)*d_model", SYMBOLS) == sp.Rational(8, 3) * d_model
    assert parse_constraint("1.3*d_model", SYMBOLS) == sp.Rational(13, 10) * d_model  # exact decimal
    assert parse_constraint("7e9", SYMBOLS) == 7_000_000_000
    assert parse_constraint("-(h - 2)**2", SYMBOLS) == -((h - 2) ** 2)
    assert parse_assignment(" d_ff = 4 * d_model ", SYMBOLS) == ("d_ff", 4 * d_model)


def test_parse_agrees_with_directly_built_sympy_on_random_expressions():
    from hypothesis import given
    from hypothesis import strategies as st

    names = ["d_model", "d_ff", "h", "N", "V"]
    leaf = st.one_of(
        st.integers(0, 10**6).map(lambda i: (str(i), sp.Integer(i))),
        st.sampled_from(names).map(lambda n: (n, SYMBOLS[n])),
    )

    def combine(children):
        ops = st.sampled_from([("+", lambda a, b: a + b), ("-", lambda a, b: a - b), ("*", lambda a, b: a * b)])
        return st.tuples(children, ops, children).map(
            lambda t: (f"({t[0][0]} {t[1][0]} {t[2][0]})", t[1][1](t[0][1], t[2][1]))
        )

    @given(st.recursive(leaf, combine, max_leaves=12))
    def check(pair):
        text, expected = pair
        if len(text) <= 500:
            assert sp.expand(parse_constraint(text, SYMBOLS) - expected) == 0

    check()


# ------------------------------------------------------------------ Chinchilla planner


def test_chinchilla_reproduces_chinchilla():
    # Hoffmann et al. 2022: Chinchilla, 70B parameters on 1.4T tokens; C = 6 N D = 6 * 7e10 * 1.4e12.
    plan = chinchilla(6 * 70 * 10**9 * 1400 * 10**9)
    assert plan.params == 70 * 10**9 and plan.tokens == 1400 * 10**9
    d = plan.to_dict()
    assert "Hoffmann et al. 2022" in d["source"] and len(d["caveats"]) >= 3


def test_chinchilla_general_budget_is_exact():
    plan = chinchilla(10**21)
    # N = sqrt(1e21 / 120); written out: 120 N^2 = C.
    assert sp.simplify(120 * plan.params**2 - 10**21) == 0
    assert plan.to_dict()["params_rounded"] == round(math.sqrt(10**21 / 120))
    with pytest.raises(ValueError):
        chinchilla(0)
    with pytest.raises(ValueError):
        chinchilla(10**21, "-3")


# ------------------------------------------------------------------ CLI


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_solve_json(capsys):
    code, out, err = run(
        capsys, "solve", "llama-2-7b", "--for", "d_model", "--params", "6738415616", "--llama-ffn", "--format", "json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["exact"] == 4096 and data["below"]["count"] == 6_738_415_616


def test_cli_solve_text_shows_both_sides(capsys):
    code, out, _ = run(capsys, "solve", "llama-2-7b", "--for", "d_model", "--params", "7e9", "--llama-ffn")
    assert code == 0
    assert "d_model = 4160: 6,980,018,240" in out and "d_model = 4224: 7,122,006,144" in out
    assert "symbolic solution" in out and "real root" in out


def test_cli_solve_compute_budget(capsys):
    code, out, _ = run(capsys, "solve", "gpt2", "--for", "d_model", "--compute", "5.88e23", "--keep", "d_ff=4*d_model")
    assert code == 0
    assert "70,000,000,000" in out  # Chinchilla's N at C = 5.88e23
    code, out, _ = run(capsys, "plan", "--compute", "5.88e23", "--format", "json")
    assert json.loads(out)["tokens_rounded"] == 1_400_000_000_000


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--keep", "d_ff=__import__('os')"], "only numbers"),
        (["--keep", "d_ff=4*width"], "unknown symbol 'width'"),
        (["--params", "0"], "positive"),
        (["--params", "12"], "no valid d_model"),
        ([], "exactly one budget"),
    ],
)
def test_cli_solve_bad_input_is_one_line_exit_2(capsys, argv, message):
    base = ["solve", "gpt2", "--for", "d_model"]
    if argv and argv[0] != "--params":
        base += ["--params", "1e9"]
    code, out, err = run(capsys, *base, *argv)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


# ------------------------------------------------------------------ encoder-decoder lengths (finding H1)
# T5-small (Raffel et al. 2020; config.json of t5-small: d_model 512, d_kv 64, 8 heads, d_ff 2048 (ReLU),
# 6 + 6 layers, vocabulary 32128, 60,506,624 parameters per transformers' T5ForConditionalGeneration).


def t5_small_forward(S: int, T: int) -> int:
    """Forward FLOPs of T5-small at B = 1, S source and T target tokens, 2 per multiply-accumulate,
    full score squares, written out module by module (inner width 8 x 64 = 512 = d):
    encoder layer: q,k,v,o 4*2*S*d^2; QK^T and scores*V 2*2*S^2*d; wi, wo 2*2*S*d*d_ff.
    decoder layer: self-attention 8*T*d^2 + 4*T^2*d; cross-attention q,o 4*T*d^2, k,v on the
    encoder output 4*S*d^2, QK^T and scores*V 4*T*S*d; wi, wo 4*T*d*d_ff.  lm_head 2*T*d*V."""
    d, ff, n, V = 512, 2048, 6, 32128
    enc = 8 * S * d * d + 4 * S * S * d + 4 * S * d * ff
    dec = 8 * T * d * d + 4 * T * T * d + 4 * T * d * d + 4 * S * d * d + 4 * T * S * d + 4 * T * d * ff
    return n * (enc + dec) + 2 * T * d * V


def test_t5_flops_oracle_matches_the_users_figure():
    # The fresh-user report: flops t5-small --set L_src=128 (L_tgt = L = 512) gives 49,257,906,176.
    assert t5_small_forward(128, 512) == 49_257_906_176


def test_solve_for_the_source_length_of_an_encoder_decoder():
    # Before the fix: "flops of this model does not depend on L_src".
    from symtrans.catalog.resolve import resolve

    spec = resolve("t5-small").spec
    r = solve(spec, "L_src", 10**11, "flops")  # L_tgt not given: equals L = 512
    best = max(S for S in range(1, 4000) if t5_small_forward(S, 512) <= 10**11)
    assert (r.below.value, r.above.value) == (best, best + 1) == (929, 930)
    assert r.below.count == t5_small_forward(best, 512) and r.above.count == t5_small_forward(best + 1, 512)
    assert "L_tgt not given: equals L" in r.notes
    r = solve(spec, "L_tgt", 10**11, "flops", workload={"B": 1, "L": 512})  # L_src = L = 512
    best = max(T for T in range(1, 4000) if t5_small_forward(512, T) <= 10**11)
    assert r.below.value == best and r.below.count == t5_small_forward(512, best)


def test_solve_for_L_keeps_a_given_source_length():
    # Before the fix --set L_src=512 was dropped and L_src = L_tgt = L were solved together.
    from symtrans.catalog.resolve import resolve

    r = solve(resolve("t5-small", ["L_src=512"]).spec, "L", 10**11, "flops")
    best = max(T for T in range(1, 4000) if t5_small_forward(512, T) <= 10**11)
    assert (r.below.value, r.below.count) == (best, t5_small_forward(512, best))
    # Neither length given: both equal L, as symtrans flops defaults them.
    r = solve(resolve("t5-small").spec, "L", 10**11, "flops")
    best = max(L for L in range(1, 4000) if t5_small_forward(L, L) <= 10**11)
    assert (r.below.value, r.below.count) == (best, t5_small_forward(best, best))


def test_solve_memory_for_the_source_length():
    # Training memory of T5-small in bytes, bf16 weights and gradients, Adam with fp32 master
    # weights and two moments (2 + 2 + 12 bytes per parameter, 60,506,624 parameters), plus the
    # activations of Korthikanti et al. 2022 §4.1 tensor by tensor at 2 bytes (1 per dropout-mask
    # element), B = 1, full score squares, RMSNorm inputs kept, d = 512, h = 8, d_ff = 2048:
    # encoder layer 18*S*d + 4*S*d_ff + 5*h*S^2; decoder layer 27*T*d + 4*S*d + 4*T*d_ff
    # + 5*h*T^2 + 5*h*T*S (self- and cross-attention); LM head input 2*T*d and fp32 logits 4*T*V.
    def mem(S, T):
        d, ff, h = 512, 2048, 8
        enc = 18 * S * d + 4 * S * ff + 5 * h * S * S
        dec = 27 * T * d + 4 * S * d + 4 * T * ff + 5 * h * T * T + 5 * h * T * S
        return 16 * 60_506_624 + 6 * (enc + dec) + 2 * T * d + 4 * T * 32128

    from symtrans.catalog.resolve import resolve

    r = solve(resolve("t5-small", ["L_tgt=32"]).spec, "L_src", 1_200_000_000, "memory")
    best = max(S for S in range(1, 4000) if mem(S, 32) <= 1_200_000_000)
    assert (r.below.value, r.below.count) == (best, mem(best, 32))


def test_cli_solve_for_L_src(capsys):
    code, out, err = run(capsys, "solve", "t5-small", "--for", "L_src", "--flops", "1e11", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["below"]["value"] == 929 and data["below"]["count"] == t5_small_forward(929, 512)
    code, out, err = run(capsys, "solve", "gpt2", "--for", "L_src", "--flops", "1e11")
    assert code == 2 and out == "" and "encoder-decoder" in err and err.count("\n") == 1
