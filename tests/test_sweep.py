"""sweep: vectorised, exact, overflow-safe evaluation over many configurations (issue 5, "Sweep").

Oracles: the GPT-2 count and forward FLOPs written out module by module from
transformers' GPT2LMHeadModel (Python integers, which cannot overflow), and
``evaluate.exact`` (SymPy Integers) on a random subset of rows for every column.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from conftest import require

from symtrans.analysis.solve import keep_rule, llama_rule, quantity_expr
from symtrans.analysis.sweep import Compiled, grid, parse_grid, read_csv, sweep
from symtrans.cli.main import main
from symtrans.engine.evaluate import exact
from symtrans.engine.spec import Spec

GPT2 = Spec(
    family="decoder-only",
    sizes=dict(d_model=768, d_ff=3072, h=12, N=12, V=50257, L_max=1024, L=1024),
    positional="learned",
    norm_position="pre",
    final_norm=True,
    tie_output=True,
)
INT64_MAX = 2**63 - 1


def gpt2_params(d, ff, n, V, L):
    """GPT2LMHeadModel: wte V*d, wpe L*d, per block c_attn 3d^2+3d, attn c_proj d^2+d,
    mlp c_fc d*ff+ff, mlp c_proj ff*d+d, ln_1 and ln_2 2d each; ln_f 2d; lm_head tied."""
    return V * d + L * d + n * (3 * d * d + 3 * d + d * d + d + d * ff + ff + ff * d + d + 4 * d) + 2 * d


def gpt2_forward(d, ff, n, V, L, B):
    """Forward FLOPs, 2 per multiply-accumulate, full square: per layer the Q,K,V,O maps
    2BL*4d^2 and the MLP 2BL*2*d*ff, QK^T and scores*V 2*2*B*L^2*d; the head 2BL*d*V."""
    return n * (2 * B * L * 4 * d * d + 2 * B * L * 2 * d * ff + 4 * B * L * L * d) + 2 * B * L * d * V


def random_columns(n: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Random GPT-2-shaped configurations; about a third with layer counts and lengths
    large enough to push parameters and FLOPs past 2^63."""
    rng = np.random.default_rng(seed)
    big = rng.random(n) < 0.35
    h = rng.integers(1, 65, n)
    seq = np.where(big, rng.integers(10**4, 10**7, n), rng.integers(1, 8193, n))
    return {
        "h": h,
        "d_model": h * rng.integers(1, 257, n),
        "d_ff": rng.integers(1, 65_536, n),
        "N": np.where(big, rng.integers(10**6, 10**12, n), rng.integers(1, 97, n)),
        "V": rng.integers(1, 300_000, n),
        "L": seq,
        "L_max": seq,  # a position table as long as the sequence (gpt2_params takes one length)
        "B": rng.integers(1, 4097, n),
    }


# ------------------------------------------------------------------ must show


def test_ten_thousand_random_configurations_equal_exact_evaluation():
    cols = random_columns(10_000)
    res = sweep(GPT2, cols)
    assert len(res) == 10_000
    out = {k: res.columns[k].tolist() for k in ("params", "flops_forward", "flops_training", "memory_bytes")}
    rows = zip(*(cols[k].tolist() for k in ("d_model", "d_ff", "N", "V", "L", "B")))
    over = 0
    for i, (d, ff, n, V, L, B) in enumerate(rows):
        p, f = gpt2_params(d, ff, n, V, L), gpt2_forward(d, ff, n, V, L, B)
        assert out["params"][i] == p, i
        assert out["flops_forward"][i] == f, i
        assert out["flops_training"][i] == 3 * f, i  # forward + backward (2 x forward)
        over += f > INT64_MAX
    assert over > 2000  # many rows exceed 2^63 and still agree exactly
    # Every column (memory included) against evaluate.exact on a random subset of rows.
    exprs = {
        "params": quantity_expr(GPT2, "params"),
        "flops_forward": quantity_expr(GPT2, "flops"),
        "flops_training": quantity_expr(GPT2, "training_flops"),
        "memory_bytes": quantity_expr(GPT2, "memory"),
    }
    pick = np.random.default_rng(1).choice(10_000, 400, replace=False)
    big_checked = 0
    for i in pick.tolist():
        values = {k: int(cols[k][i]) for k in cols}
        for name, e in exprs.items():
            assert out[name][i] == exact(e, values), (name, i)
        big_checked += out["memory_bytes"][i] > INT64_MAX
    assert big_checked > 0
    # Columns with huge values hold Python ints, never wrapped int64.
    assert res.columns["flops_forward"].dtype == object
    assert all(isinstance(v, int) and v > 0 for v in out["flops_forward"])


def test_int64_would_wrap_where_sweep_does_not():
    d, n = 3 * 10**6, 10**6
    cols = {"d_model": np.array([768, d]), "h": np.array([12, 12]), "N": np.array([12, n])}
    res = sweep(GPT2, cols, ["params"])
    expected = gpt2_params(d, 3072, n, 50257, 1024)
    assert expected > INT64_MAX
    with np.errstate(over="ignore"):
        wrapped = int(np.int64(n) * (np.int64(4) * np.int64(d) * np.int64(d)))
    assert wrapped != n * 4 * d * d  # naive int64 arithmetic would be wrong here
    assert res.columns["params"].tolist() == [124_439_808, expected]


def test_fractions_floors_and_moe_rows_are_exact():
    # Causal mask (L(L+1)/2 pairs: halves), explicit d_k, GQA, and MoE layers every 2nd layer
    # after 1 dense one (floor): evaluate.exact on every row, including rows past 2^63.
    spec = Spec(
        family="decoder-only",
        sizes=dict(d_model=4096, d_ff=14336, h=32, h_kv=8, d_k=128, N=32, V=32000, L_max=4096, L=4096, E=8, k=2),
        positional="rotary",
        norm="rmsnorm",
        bias=False,
        ffn="swiglu",
        final_norm=True,
        tie_output=False,
        norm_position="pre",
        moe_first_dense=1,
        moe_every=2,
    )
    rng = np.random.default_rng(7)
    n = 300
    cols = {
        # N >= 3: one dense layer, then every 2nd is MoE; N < 3 would leave no MoE layer (refused)
        "N": np.where(rng.random(n) < 0.4, rng.integers(10**9, 10**12, n), rng.integers(3, 99, n)),
        "L": rng.integers(1, 10**6, n),
        "B": rng.integers(1, 512, n),
    }
    res = sweep(spec, cols, ["params", "active_params", "flops", "training_flops"], mask="causal")
    exprs = {
        "params": quantity_expr(spec, "params"),
        "active_params": quantity_expr(spec, "active_params"),
        "flops_forward": quantity_expr(spec, "flops", "causal"),
        "flops_training": quantity_expr(spec, "training_flops", "causal"),
    }
    over = 0
    for i in range(n):
        values = {**spec.values, **{k: int(cols[k][i]) for k in cols}}
        for name, e in exprs.items():
            v = res.columns[name][i]
            assert int(v) == exact(e, values), (name, i)
            over += int(v) > INT64_MAX
    assert over > 0


def test_derived_sizes_by_rule():
    res = sweep(GPT2, grid([parse_grid("d_model=768:3072:768")]), ["params"], rules=[keep_rule("d_ff=4*d_model")])
    assert res.columns["d_ff"].tolist() == [3072, 6144, 9216, 12288]
    assert res.columns["params"].tolist() == [gpt2_params(d, 4 * d, 12, 50257, 1024) for d in (768, 1536, 2304, 3072)]
    llama = sweep(
        GPT2.replace(ffn="swiglu", sizes={"h": 32}),
        {"d_model": np.array([4096, 5120])},
        ["params"],
        rules=[llama_rule()],
    )
    assert llama.columns["d_ff"].tolist() == [11008, 13824]  # Llama-2-7B and 13B config.json


# ------------------------------------------------------------------ grids and CSV


def test_grid_ranges_include_stop_and_multiply():
    assert parse_grid("d_model=512:2048:512") == ("d_model", [512, 1024, 1536, 2048])
    assert parse_grid("N=12,24,48") == ("N", [12, 24, 48])
    assert parse_grid("V=32e3") == ("V", [32000])
    cols = grid([parse_grid("d_model=512:1024:512"), parse_grid("N=1,2,3")])
    assert list(zip(cols["d_model"].tolist(), cols["N"].tolist())) == [
        (512, 1),
        (512, 2),
        (512, 3),
        (1024, 1),
        (1024, 2),
        (1024, 3),
    ]


@pytest.mark.parametrize(
    "text, message",
    [
        ("d_model=2048:512:512", "empty"),
        ("d_model=", "empty grid"),
        ("d_model=,", "empty grid"),
        ("width=1,2", "unknown size"),
        ("d_model=512:1024:0", "step must be positive"),
        ("d_model=0,512", "positive"),
        ("d_model", "NAME=START"),
        ("d_model=1:2:3:4", "START:STOP"),
        ("d_model=abc", "integer"),
    ],
)
def test_bad_grids(text, message):
    with pytest.raises(ValueError, match=message):
        parse_grid(text)


def test_sweep_of_no_rows_and_too_many_rows():
    with pytest.raises(ValueError, match="no configurations"):
        sweep(GPT2, {"d_model": np.array([], dtype=np.int64)})
    with pytest.raises(ValueError, match="at most"):
        grid([("d_model", list(range(1, 10_001))), ("N", list(range(1, 10_001)))])


def test_invalid_rows_skip_or_error():
    cols = grid([parse_grid("d_model=512:1024:256")])  # h = 12 divides only 768
    with pytest.raises(ValueError, match="h=12 does not divide d_model=512"):
        sweep(GPT2, cols, ["params"])
    res = sweep(GPT2, cols, ["params"], invalid="skip")
    assert res.columns["d_model"].tolist() == [768]
    assert res.notes[0].startswith("skipped 2 of 3 configurations that the model rejects (e.g. d_model=512, h=12: ")


def test_read_csv():
    cols = read_csv("d_model,N\n768,12\n1_024,24\n\n")
    assert cols["d_model"].tolist() == [768, 1024] and cols["N"].tolist() == [12, 24]
    for text, message in (
        ("", "empty"),
        ("d_model,N\n", "no configurations"),
        ("width\n3\n", "unknown CSV column"),
        ("d_model,N\n768\n", "line 2 has 1 values"),
        ("d_model\n-3\n", "line 2"),
        ("d_model,d_model\n1,2\n", "twice"),
    ):
        with pytest.raises(ValueError, match=message):
            read_csv(text)


def test_compiled_detects_non_integer_counts():
    import sympy as sp

    from symtrans.engine.symbols import SYMBOLS

    c = Compiled.build("half", SYMBOLS["L"] * (SYMBOLS["L"] - 1) / 3)
    assert c({"L": np.array([3, 4])}, 2).tolist() == [2, 4]
    with pytest.raises(ValueError, match="not an integer at L=5"):
        c({"L": np.array([3, 5])}, 2)
    assert sp.Integer(1)  # sympy imported for the symbols above


def test_progress_bar_only_when_asked_or_on_a_terminal(capsys):
    require("tqdm")
    cols = {"N": np.arange(1, 70_001)}
    sweep(GPT2, cols, ["params"])
    assert capsys.readouterr().err == ""  # not a terminal: no bar
    sweep(GPT2, cols, ["params"], progress=True)
    assert "config" in capsys.readouterr().err


# ------------------------------------------------------------------ CLI and files


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_sweep_csv_to_stdout_and_json_file(capsys, tmp_path):
    code, out, err = run(
        capsys, "sweep", "gpt2", "--grid", "d_model=768:1536:768", "--grid", "N=12,24", "--quantity", "params"
    )
    assert code == 0, err
    lines = out.strip().splitlines()
    assert lines[0] == "d_model,N,params"
    assert lines[1] == f"768,12,{gpt2_params(768, 3072, 12, 50257, 1024)}"
    path = tmp_path / "s.json"
    code, out, err = run(capsys, "sweep", "gpt2", "--grid", "N=1,2", "--format", "json", "-o", str(path))
    data = json.loads(path.read_text())
    assert [r["params"] for r in data["rows"]] == [gpt2_params(768, 3072, n, 50257, 1024) for n in (1, 2)]


def test_cli_sweep_never_overwrites_with_partial_output(capsys, tmp_path):
    out = tmp_path / "out.csv"
    out.write_text("precious\n")
    bad = tmp_path / "configs.csv"
    bad.write_text("d_model,N\n768,12\n1000,12\n")  # h = 12 does not divide 1000
    code, _, err = run(capsys, "sweep", "gpt2", "--csv", str(bad), "-o", str(out))
    assert code == 2 and "does not divide" in err and err.count("\n") == 1
    assert out.read_text() == "precious\n"
    code, _, err = run(capsys, "sweep", "gpt2", "--grid", "d_model=2048:512:512", "-o", str(out))
    assert code == 2 and "empty" in err
    assert out.read_text() == "precious\n"
    assert sorted(os.listdir(tmp_path)) == ["configs.csv", "out.csv"]  # no temporary files left


def test_failure_in_a_late_chunk_leaves_the_file_intact(capsys, tmp_path, monkeypatch):
    import symtrans.analysis.sweep as sw
    from symtrans.base.errors import InputError

    out = tmp_path / "out.csv"
    out.write_text("precious\n")
    from symtrans.analysis.kernel import Kernel

    monkeypatch.setattr(sw, "CHUNK", 2)
    calls = {"n": 0}
    real = Kernel.run

    def flaky(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 3:
            raise InputError("simulated failure in the middle of the sweep")  # one of symtrans's own: exit 2
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Kernel, "run", flaky)
    code, _, err = run(capsys, "sweep", "gpt2", "--grid", "N=1:10", "--quantity", "params", "-o", str(out))
    assert code == 2 and "simulated failure" in err
    assert out.read_text() == "precious\n"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--grid", "d_model=1,2", "--csv", "x.csv"], "not both"),
        ([], "--grid"),
        (["--csv", "/nonexistent/configs.csv"], "/nonexistent/configs.csv: no such file"),
        (["--grid", "N=1", "--keep", "d_ff=eval(1)"], "only numbers"),  # hostile text: safe_parse must refuse it
        (["--grid", "N=1", "--quantity", "speed"], "unknown quantity"),
    ],
)
def test_cli_sweep_bad_input(capsys, argv, message):
    code, out, err = run(capsys, "sweep", "gpt2", *argv)
    assert code == 2 and out == "" and message in err


# ------------------------------------------------------------------ encoder-decoder lengths (finding H1)


def t5_small_forward(S: int, T: int) -> int:
    """T5-small forward FLOPs at B = 1, S source and T target tokens, 2 per multiply-accumulate,
    full score squares, written out from transformers' T5ForConditionalGeneration (d_model 512,
    8 heads of 64, d_ff 2048, 6 + 6 layers, vocabulary 32128): encoder layer q,k,v,o 8*S*d^2,
    QK^T and scores*V 4*S^2*d, wi and wo 4*S*d*d_ff; decoder layer self-attention 8*T*d^2 +
    4*T^2*d, cross-attention q,o 4*T*d^2 + k,v 4*S*d^2 + scores 4*T*S*d, wi and wo 4*T*d*d_ff;
    lm_head 2*T*d*V."""
    d, ff, n, V = 512, 2048, 6, 32128
    enc = 8 * S * d * d + 4 * S * S * d + 4 * S * d * ff
    dec = 8 * T * d * d + 4 * T * T * d + 4 * T * d * d + 4 * S * d * d + 4 * T * S * d + 4 * T * d * ff
    return n * (enc + dec) + 2 * T * d * V


def t5_small_training_memory(S: int, T: int) -> int:
    """T5-small training bytes at B = 1: 16 per parameter (bf16 weights and gradients, Adam's fp32
    master copy and two moments) x 60,506,624, plus Korthikanti et al. 2022 §4.1's activations
    tensor by tensor (2 bytes, 1 per dropout-mask element, full score squares, norm inputs kept):
    encoder layer 18*S*d + 4*S*d_ff + 5*h*S^2; decoder layer 27*T*d + 4*S*d + 4*T*d_ff + 5*h*T^2
    + 5*h*T*S; the LM head's input 2*T*d and fp32 logits 4*T*V."""
    d, ff, h, V = 512, 2048, 8, 32128
    enc = 18 * S * d + 4 * S * ff + 5 * h * S * S
    dec = 27 * T * d + 4 * S * d + 4 * T * ff + 5 * h * T * T + 5 * h * T * S
    return 16 * 60_506_624 + 6 * (enc + dec) + 2 * T * d + 4 * T * V


def test_t5_oracles_match_the_users_figures():
    # The fresh-user report: 49,257,906,176 at L_src = 128, L_tgt = 512; 71,605,157,888 and
    # 1,350,574,080 bytes at 512 / 512.
    assert t5_small_forward(128, 512) == 49_257_906_176
    assert t5_small_forward(512, 512) == 71_605_157_888
    assert t5_small_training_memory(512, 512) == 1_350_574_080


def test_cli_sweep_of_the_source_length(capsys):
    # Before the fix both rows printed 71,605,157,888.
    code, out, err = run(capsys, "sweep", "t5-small", "--grid", "L_src=128,512", "--quantity", "flops")
    assert code == 0, err
    assert out.splitlines() == [
        "L_src,flops_forward",
        f"128,{t5_small_forward(128, 512)}",
        f"512,{t5_small_forward(512, 512)}",
    ]
    assert "L_tgt not given: equals L" in err


def test_cli_sweep_csv_of_source_and_target_lengths(capsys, tmp_path):
    path = tmp_path / "t5.csv"
    path.write_text("L_src,L_tgt\n128,32\n512,512\n")
    code, out, err = run(capsys, "sweep", "t5-small", "--csv", str(path), "--quantity", "flops,memory")
    assert code == 0, err
    assert out.splitlines()[1:] == [
        f"{S},{T},{t5_small_forward(S, T)},{t5_small_training_memory(S, T)}" for S, T in ((128, 32), (512, 512))
    ]


def test_sweep_lengths_from_set_rules_and_L():
    from symtrans.catalog.resolve import resolve

    spec = resolve("t5-small", ["L_src=128"]).spec
    res = sweep(spec, {"L_tgt": np.array([32, 64])}, ["flops"])
    assert res.columns["flops_forward"].tolist() == [t5_small_forward(128, 32), t5_small_forward(128, 64)]
    t5 = resolve("t5-small").spec
    res = sweep(t5, {"L_src": np.array([128, 512])}, ["flops", "memory"], rules=[keep_rule("L_tgt=L_src/4")])
    assert res.columns["L_tgt"].tolist() == [32, 128]
    assert res.columns["flops_forward"].tolist() == [t5_small_forward(128, 32), t5_small_forward(512, 128)]
    assert res.columns["memory_bytes"].tolist() == [
        t5_small_training_memory(128, 32),
        t5_small_training_memory(512, 128),
    ]
    res = sweep(t5, {"L": np.array([64, 256])}, ["flops"])  # neither given: both equal L
    assert res.columns["flops_forward"].tolist() == [t5_small_forward(64, 64), t5_small_forward(256, 256)]


def test_source_length_of_a_decoder_only_model_is_rejected(capsys):
    with pytest.raises(ValueError, match="L_src is a length of encoder-decoder models"):
        sweep(GPT2, {"L_src": np.array([128])}, ["flops"])
    code, out, err = run(capsys, "sweep", "gpt2", "--grid", "L_tgt=128", "--quantity", "flops")
    assert code == 2 and out == "" and "encoder-decoder" in err and err.count("\n") == 1


# ------------------------------------------------------------------ sliding windows: Min and Max (finding H3)


def mistral_forward(L: int, B: int = 1, causal: bool = False) -> int:
    """Mistral-7B forward FLOPs, 2 per multiply-accumulate (config.json: hidden 4096, 32 heads of
    128, 8 KV heads, intermediate 14336, 32 layers, vocabulary 32000, sliding_window 4096):
    per layer q_proj and o_proj 2*2*B*L*d^2, k_proj and v_proj 2*2*B*L*d*1024, QK^T and
    scores*V 2*2*B*d*pairs, gate/up/down 3*2*B*L*d*d_ff; lm_head 2*B*L*d*V.  Pairs: each query
    sees at most w keys (Jiang et al. 2023 §2): L*min(L, w) over the full square; causally the
    query at position p sees min(p, w) keys, summed over p = 1..L."""
    d, ff, n, V, w = 4096, 14336, 32, 32000, 4096
    pairs = sum(min(p, w) for p in range(1, L + 1)) if causal else L * min(L, w)
    return n * (4 * B * L * d * d + 4 * B * L * d * 1024 + 4 * B * d * pairs + 6 * B * L * d * ff) + 2 * B * L * d * V


def test_cli_sweep_of_a_sliding_window_model(capsys):
    # Before the fix: "symtrans: error: cannot bound Min(L, w)".
    # --mask window: the band L*min(L, w) (since 8e9f66a --mask full counts the whole square, as
    # eager attention computes it, and the window drops out of the formula).
    code, out, err = run(
        capsys, "sweep", "mistral-7b", "--grid", "d_model=4096", "--quantity", "params,flops", "--mask", "window"
    )
    assert code == 0, err
    # 7,241,732,096: Mistral-7B-v0.1's parameter count in transformers (MistralForCausalLM).
    # L = 8192: the preset's documented context (Jiang et al. 2023, Table 1: context_len 8192).
    assert out.splitlines()[1] == f"4096,7241732096,{mistral_forward(8192)}"
    code, out, err = run(
        capsys, "sweep", "mistral-7b", "--grid", "L=1024,4096,8192", "--quantity", "flops", "--mask", "causal"
    )
    assert code == 0, err
    assert out.splitlines()[1:] == [f"{L},{mistral_forward(L, causal=True)}" for L in (1024, 4096, 8192)]


def test_cli_sweep_over_the_window_of_gpt2(capsys):
    code, out, err = run(capsys, "sweep", "gpt2", "--grid", "w=128,512,2048", "--quantity", "flops", "--mask", "window")
    assert code == 0, err
    # GPT-2 with a sliding window under --mask window (FlashAttention's window_size band; --mask full
    # counts the whole square since 8e9f66a): the score matmuls cover L*min(L, w) pairs instead of L^2.
    expected = [
        12 * (2 * 1024 * 4 * 768**2 + 2 * 1024 * 2 * 768 * 3072 + 4 * 1024 * min(1024, w) * 768)
        + 2 * 1024 * 768 * 50257
        for w in (128, 512, 2048)
    ]
    assert out.splitlines()[1:] == [f"{w},{f}" for w, f in zip((128, 512, 2048), expected)]
    assert expected[2] == gpt2_forward(768, 3072, 12, 50257, 1024, 1)  # w >= L: the full square


@pytest.mark.parametrize("mask", ["full", "causal", "half"])
def test_sliding_window_rows_equal_exact_evaluation(mask):
    from symtrans.catalog.resolve import resolve

    spec = resolve("mistral-7b").spec
    rng = np.random.default_rng(11)
    n = 400
    big = rng.random(n) < 0.3
    cols = {
        "L": np.where(big, rng.integers(10**6, 10**9, n), rng.integers(1, 20_000, n)),
        "w": np.where(rng.random(n) < 0.5, rng.integers(1, 8192, n), rng.integers(1, 10**7, n)),
        "N": np.where(big, rng.integers(10**4, 10**7, n), rng.integers(1, 64, n)),
        "B": rng.integers(1, 64, n),
    }
    quantities = ["params", "flops", "training_flops", "memory"]
    for mode in ("training", "inference"):
        res = sweep(spec, cols, quantities, mask=mask, memory_options={"mode": mode})
        exprs = {
            name: quantity_expr(spec, q, mask, memory_options={"mode": mode})
            for name, q in zip(("params", "flops_forward", "flops_training", "memory_bytes"), quantities)
        }
        over = 0
        for i in range(n):
            values = {**spec.values, **{k: int(cols[k][i]) for k in cols}}
            for name, e in exprs.items():
                v = int(res.columns[name][i])
                assert v == exact(e, values), (mode, name, i, values)
                over += v > INT64_MAX
        assert over > 0  # rows past 2^63 (object arrays) agree too
    both = {(L < w, L > w) for L, w in zip(cols["L"].tolist(), cols["w"].tolist())}
    assert {(True, False), (False, True)} <= both  # windows shorter and longer than the sequence


def test_compiled_min_and_max_of_fractions_are_exact():
    import sympy as sp

    from symtrans.engine.symbols import SYMBOLS

    L, w, h = SYMBOLS["L"], SYMBOLS["w"], SYMBOLS["h"]
    e = 6 * (h + 1) * sp.Min(L / 2, w / (h + 1)) + sp.Max(L, 3 * w) * sp.Min(L, w, h) + sp.floor(sp.Min(L, w) / 3)
    c = Compiled.build("e", e)
    rng = np.random.default_rng(5)
    for cols in (
        {"L": rng.integers(1, 10**4, 300), "w": rng.integers(1, 10**4, 300), "h": rng.integers(1, 50, 300)},
        {
            "L": rng.integers(1, 3 * 10**9, 300),
            "w": rng.integers(1, 3 * 10**9, 300),
            "h": rng.integers(10**8, 10**9, 300),
        },
    ):
        got = c(cols, 300)
        for i in range(300):
            vals = {k: int(v[i]) for k, v in cols.items()}
            # min(L/2, w/(h+1)) * 6 (h+1) = min(3 L (h+1), 6 w), integer arithmetic written out
            want = (
                min(3 * vals["L"] * (vals["h"] + 1), 6 * vals["w"])
                + max(vals["L"], 3 * vals["w"]) * min(vals["L"], vals["w"], vals["h"])
                + min(vals["L"], vals["w"]) // 3
            )
            assert int(got[i]) == want, (i, vals)


# ------------------------------------------------------------------ skipped rows and the README example


def test_skipped_rows_are_counted_with_the_reason(capsys):
    # The README's old example: h = 12 divides d_model = 512 k only when 1536 = lcm(512, 12) does,
    # i.e. 5 of the 16 widths 512..8192 (1536, 3072, 4608, 6144, 7680): 15 rows kept, 33 of 48 skipped.
    code, out, err = run(
        capsys,
        "sweep",
        "gpt2",
        "--grid",
        "d_model=512:8192:512",
        "--grid",
        "N=12,24,48",
        "--keep",
        "d_ff=4*d_model",
        "--quantity",
        "params",
    )
    assert code == 0
    assert len(out.splitlines()) == 1 + 15  # d_model in 1536, 3072, 4608, 6144, 7680 (5 widths) x 3 depths
    assert "skipped 33 of 48 configurations that the model rejects (e.g. d_model=512, h=12: " in err


def test_readme_sweep_example_keeps_every_row(capsys):
    import re
    import shlex

    readme = open(os.path.join(os.path.dirname(__file__), "..", "README.md"), encoding="utf-8").read()
    line = next(l for l in readme.splitlines() if l.startswith("symtrans sweep gpt2 "))
    argv = [a for a in shlex.split(line.split("#")[0])][1:]
    argv = argv[: argv.index("-o")] if "-o" in argv else argv
    code, out, err = run(capsys, *argv, "--quantity", "params")
    assert code == 0, err
    rows = out.splitlines()[1:]
    assert len(rows) == 16 * 3 and "skipped" not in err
    # h = d_model/64 heads of width 64 (GPT-2's head width), d_ff = 4 d_model: gpt2_params per row.
    header = out.splitlines()[0].split(",")
    for row in rows:
        v = dict(zip(header, map(int, row.split(","))))
        assert v["h"] * 64 == v["d_model"] and v["d_ff"] == 4 * v["d_model"]
        assert v["params"] == gpt2_params(v["d_model"], v["d_ff"], v["N"], 50257, 1024)
    assert re.search(r"--keep 'h=d_model/64'", line)


# ------------------------------------------------------------------ option ranges and rule values per row


def _moe_spec(**options):
    # Mixtral-like layout: 1 dense layer, then every 2nd layer is a MoE layer
    return Spec(
        family="decoder-only",
        sizes=dict(d_model=64, d_ff=128, h=4, N=8, V=100, L=16, E=4, k=2),
        positional="rotary",
        norm="rmsnorm",
        bias=False,
        ffn="swiglu",
        moe_first_dense=1,
        moe_every=2,
        **options,
    )


def test_sweep_checks_the_moe_layout_against_every_layer_count():
    # moe_first_dense + moe_every = 3 layers are needed for one MoE layer: N = 1 and 2 are
    # invalid configurations (Spec's own range check), N = 3.. are kept, with exact counts.
    spec = _moe_spec()
    cols = {"N": np.arange(1, 7)}
    res = sweep(spec, cols, ["params"], invalid="skip")
    assert res.columns["N"].tolist() == [3, 4, 5, 6]
    from symtrans.engine.architectures import build

    params = build(spec).params
    assert res.columns["params"].tolist() == [exact(params, {**spec.values, "N": n}) for n in (3, 4, 5, 6)]
    assert "skipped 2 of 6" in res.notes[0] and "N=1" in res.notes[0] and "moe_first_dense" in res.notes[0]
    with pytest.raises(ValueError, match=r"invalid configuration \(.*N=1.*\): moe_first_dense=1"):
        sweep(spec, cols, ["params"])


def test_sweep_checks_the_global_tokens_against_the_sequence_length():
    # 3 global tokens need L >= 3: as a column (rows skipped) and as a fixed default (every row).
    spec = Spec(family="encoder-only", sizes=dict(d_model=8, d_ff=16, h=2, N=1, V=10, L=12, w=4), global_tokens=3)
    res = sweep(spec, {"L": np.arange(1, 6)}, ["flops"], invalid="skip")
    assert res.columns["L"].tolist() == [3, 4, 5]
    assert "global_tokens=3 exceeds" in res.notes[0]
    with pytest.raises(ValueError, match="every configuration is invalid .*global_tokens=3 exceeds the 2 tokens"):
        sweep(spec, {"d_model": np.array([8, 16])}, ["flops"], defaults={"L": 2}, invalid="skip")


def test_rule_values_that_are_not_positive_integers_are_invalid_rows():
    # d_ff = d_model/7 is an integer at d_model = 840 and 1680 only (multiples of h = 12 all);
    # d_ff = d_model - 768 is zero at 768 (not a size): those rows are skipped, or refused
    # with invalid="error", as solve skips such candidates.
    cols = {"d_model": np.array([768, 840, 1680])}
    res = sweep(GPT2, cols, ["params"], rules=[keep_rule("d_ff=d_model/7")], invalid="skip")
    assert res.columns["d_model"].tolist() == [840, 1680] and res.columns["d_ff"].tolist() == [120, 240]
    assert res.columns["params"].tolist() == [gpt2_params(d, d // 7, 12, 50257, 1024) for d in (840, 1680)]
    assert "skipped 1 of 3" in res.notes[0] and "768/7, not a positive integer" in res.notes[0]
    with pytest.raises(ValueError, match=r"invalid configuration \(d_model=768\): the constraint d_ff = d_model - 768"):
        sweep(GPT2, {"d_model": np.array([768, 840])}, ["params"], rules=[keep_rule("d_ff=d_model-768")])
    # past int64 (Python ints) the remainder is checked the same way
    big = sweep(
        GPT2,
        {"d_model": np.array([84 * 2**70, 84 * 2**70 + 12], dtype=object)},
        ["params"],
        rules=[keep_rule("d_ff=d_model/7")],
        invalid="skip",
    )
    assert big.columns["d_ff"].tolist() == [12 * 2**70]
