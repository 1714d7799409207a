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

from symtrans.cli import main
from symtrans.evaluate import exact
from symtrans.solve import keep_rule, llama_rule, quantity_expr
from symtrans.spec import Spec
from symtrans.sweep import Compiled, grid, parse_grid, read_csv, sweep

GPT2 = Spec(family="decoder-only", sizes=dict(d_model=768, d_ff=3072, h=12, N=12, V=50257, L=1024),
            positional="learned", norm_position="pre", final_norm=True, tie_output=True)
INT64_MAX = 2 ** 63 - 1


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
    return {
        "h": h,
        "d_model": h * rng.integers(1, 257, n),
        "d_ff": rng.integers(1, 65_536, n),
        "N": np.where(big, rng.integers(10 ** 6, 10 ** 12, n), rng.integers(1, 97, n)),
        "V": rng.integers(1, 300_000, n),
        "L": np.where(big, rng.integers(10 ** 4, 10 ** 7, n), rng.integers(1, 8193, n)),
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
    exprs = {"params": quantity_expr(GPT2, "params"), "flops_forward": quantity_expr(GPT2, "flops"),
             "flops_training": quantity_expr(GPT2, "training_flops"), "memory_bytes": quantity_expr(GPT2, "memory")}
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
    d, n = 3 * 10 ** 6, 10 ** 6
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
    spec = Spec(family="decoder-only", sizes=dict(d_model=4096, d_ff=14336, h=32, h_kv=8, d_k=128, N=32, V=32000,
                                                  L=4096, E=8, k=2),
                positional="rotary", norm="rmsnorm", bias=False, ffn="swiglu", final_norm=True, tie_output=False,
                norm_position="pre", moe_first_dense=1, moe_every=2)
    rng = np.random.default_rng(7)
    n = 300
    cols = {"N": np.where(rng.random(n) < 0.4, rng.integers(10 ** 9, 10 ** 12, n), rng.integers(1, 99, n)),
            "L": rng.integers(1, 10 ** 6, n), "B": rng.integers(1, 512, n)}
    res = sweep(spec, cols, ["params", "active_params", "flops", "training_flops"], mask="causal")
    exprs = {"params": quantity_expr(spec, "params"), "active_params": quantity_expr(spec, "active_params"),
             "flops_forward": quantity_expr(spec, "flops", "causal"),
             "flops_training": quantity_expr(spec, "training_flops", "causal")}
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
    llama = sweep(GPT2.replace(ffn="swiglu", sizes={"h": 32}), {"d_model": np.array([4096, 5120])}, ["params"], rules=[llama_rule()])
    assert llama.columns["d_ff"].tolist() == [11008, 13824]  # Llama-2-7B and 13B config.json


# ------------------------------------------------------------------ grids and CSV

def test_grid_ranges_include_stop_and_multiply():
    assert parse_grid("d_model=512:2048:512") == ("d_model", [512, 1024, 1536, 2048])
    assert parse_grid("N=12,24,48") == ("N", [12, 24, 48])
    assert parse_grid("V=32e3") == ("V", [32000])
    cols = grid([parse_grid("d_model=512:1024:512"), parse_grid("N=1,2,3")])
    assert list(zip(cols["d_model"].tolist(), cols["N"].tolist())) == [
        (512, 1), (512, 2), (512, 3), (1024, 1), (1024, 2), (1024, 3)]


@pytest.mark.parametrize("text, message", [
    ("d_model=2048:512:512", "empty"),
    ("d_model=", "empty grid"),
    ("d_model=,", "empty grid"),
    ("width=1,2", "unknown size"),
    ("d_model=512:1024:0", "step must be positive"),
    ("d_model=0,512", "positive"),
    ("d_model", "NAME=START"),
    ("d_model=1:2:3:4", "START:STOP"),
    ("d_model=abc", "integer"),
])
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
    assert "skipped 2 invalid configurations" in res.notes[0]


def test_read_csv():
    cols = read_csv("d_model,N\n768,12\n1_024,24\n\n")
    assert cols["d_model"].tolist() == [768, 1024] and cols["N"].tolist() == [12, 24]
    for text, message in (("", "empty"), ("d_model,N\n", "no configurations"), ("width\n3\n", "unknown CSV column"),
                          ("d_model,N\n768\n", "line 2 has 1 values"), ("d_model\n-3\n", "line 2"),
                          ("d_model,d_model\n1,2\n", "twice")):
        with pytest.raises(ValueError, match=message):
            read_csv(text)


def test_compiled_detects_non_integer_counts():
    import sympy as sp
    from symtrans.symbols import SYMBOLS
    c = Compiled.build("half", SYMBOLS["L"] * (SYMBOLS["L"] - 1) / 3)
    assert c({"L": np.array([3, 4])}, 2).tolist() == [2, 4]
    with pytest.raises(ValueError, match="not an integer at L=5"):
        c({"L": np.array([3, 5])}, 2)
    assert sp.Integer(1)  # sympy imported for the symbols above


def test_progress_bar_only_when_asked_or_on_a_terminal(capsys):
    pytest.importorskip("tqdm")
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
    code, out, err = run(capsys, "sweep", "gpt2", "--grid", "d_model=768:1536:768", "--grid", "N=12,24",
                         "--quantity", "params")
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
    import symtrans.sweep as sw
    out = tmp_path / "out.csv"
    out.write_text("precious\n")
    monkeypatch.setattr(sw, "CHUNK", 2)
    calls = {"n": 0}
    real = sw.Compiled.__call__

    def flaky(self, cols, n):
        calls["n"] += 1
        if calls["n"] > 3:
            raise ValueError("simulated failure in the middle of the sweep")
        return real(self, cols, n)

    monkeypatch.setattr(sw.Compiled, "__call__", flaky)
    code, _, err = run(capsys, "sweep", "gpt2", "--grid", "N=1:10", "--quantity", "params", "-o", str(out))
    assert code == 2 and "simulated failure" in err
    assert out.read_text() == "precious\n"


@pytest.mark.parametrize("argv, message", [
    (["--grid", "d_model=1,2", "--csv", "x.csv"], "not both"),
    ([], "--grid"),
    (["--csv", "/nonexistent/configs.csv"], "cannot read"),
    (["--grid", "N=1", "--keep", "d_ff=eval(1)"], "only numbers"),
    (["--grid", "N=1", "--quantity", "speed"], "unknown quantity"),
])
def test_cli_sweep_bad_input(capsys, argv, message):
    code, out, err = run(capsys, "sweep", "gpt2", *argv)
    assert code == 2 and out == "" and message in err
