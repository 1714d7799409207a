"""Parameter-efficient and long-context variants (tracker issue 7, "Must show" and bad input).

Every expected value names its source: the Hugging Face implementation counted on the
meta device, a paper's formula, brute-force enumeration of a mask written here, or
arithmetic written out in the test.  None is taken from the code under test.
"""

import json

import pytest
import sympy as sp
from conftest import require

from symtrans.accounting.variants import (
    factorized_embedding_saving,
    low_rank_break_even,
    low_rank_ffn_saving,
    low_rank_saving,
    sharing_saving,
    window_regimes,
)
from symtrans.catalog.presets import PRESETS
from symtrans.cli.main import main
from symtrans.engine import symbols as S
from symtrans.engine.architectures import Workload, build
from symtrans.engine.components import windowed_pairs
from symtrans.engine.evaluate import exact
from symtrans.engine.simplify import identical
from symtrans.engine.spec import Spec

ALBERT = PRESETS["albert-base-v2"].spec

# ALBERT-base, written out (HF AlbertModel parameter shapes: embeddings 128 wide, one shared layer).
ALBERT_EMBEDDINGS = 30000 * 128 + 512 * 128 + 2 * 128 + 2 * 128  # word, position, type, LayerNorm
ALBERT_PROJECTION = 128 * 768 + 768  # embedding_hidden_mapping_in
ALBERT_ATTENTION = 4 * (768 * 768 + 768)  # query, key, value, dense
ALBERT_FFN = 768 * 3072 + 3072 + 3072 * 768 + 768  # ffn, ffn_output
ALBERT_NORMS = 2 * 768 + 2 * 768  # attention.LayerNorm, full_layer_layer_norm
ALBERT_LAYER = ALBERT_ATTENTION + ALBERT_FFN + ALBERT_NORMS  # 7,087,872
POOLER = 768 * 768 + 768


def params(spec: Spec) -> int:
    return exact(build(spec).params, spec.values)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- ALBERT: cross-layer sharing and the factorized embedding -------------------------------


def test_albert_base_v2_is_the_hf_albertmodel_count():
    # transformers AlbertModel(albert-base-v2 config) with its pooler: 11,683,584 (meta device,
    # asserted live below); the written-out shapes give the same number.
    assert ALBERT_LAYER == 7_087_872
    assert ALBERT_EMBEDDINGS + ALBERT_PROJECTION + ALBERT_LAYER + POOLER == 11_683_584
    assert params(ALBERT) == 11_683_584


def test_albert_unshared_is_bert_base_with_the_factorized_embedding():
    # Twelve unshared layers: the BERT-base encoder (HF BertModel 109,482,240 minus its
    # embeddings 30522*768 + 512*768 + 2*768 + 2*768 = 23,837,184) plus ALBERT's factorized
    # embeddings and their projection.
    bert_embeddings = 30522 * 768 + 512 * 768 + 2 * 768 + 2 * 768
    assert bert_embeddings == 23_837_184
    expected = 109_482_240 - bert_embeddings + ALBERT_EMBEDDINGS + ALBERT_PROJECTION
    assert expected == 12 * ALBERT_LAYER + POOLER + ALBERT_EMBEDDINGS + ALBERT_PROJECTION == 89_650_176
    assert params(ALBERT.replace(share_layers="none")) == expected


def test_albert_against_hf_on_the_meta_device(read_fixture):
    torch, transformers = require("torch"), require("transformers")
    cfg = read_fixture("albert-base-v2")

    def count(**over):
        with torch.device("meta"):
            model = transformers.AlbertModel(transformers.AlbertConfig(**{**cfg, **over}))
        return sum(p.numel() for p in model.parameters())

    assert count() == params(ALBERT) == 11_683_584
    # num_hidden_groups = 12: each layer its own group, i.e. no sharing.
    assert count(num_hidden_groups=12) == params(ALBERT.replace(share_layers="none")) == 89_650_176


def test_sharing_stops_parameters_scaling_with_n_but_not_flops():
    model = build(ALBERT)
    assert S.N not in model.params.free_symbols
    unshared = build(ALBERT.replace(share_layers="none"))
    assert identical(model.flops, unshared.flops)
    assert S.N in model.flops.free_symbols
    # (N - 1) copies of one layer are saved.
    layer = ALBERT_LAYER
    assert exact(sharing_saving(ALBERT), ALBERT.values) == 11 * layer


@pytest.mark.parametrize("mode, shared_part", [("attention", ALBERT_ATTENTION), ("ffn", ALBERT_FFN)])
def test_sharing_only_attention_or_only_ffn(mode, shared_part):
    # The shared sublayer is stored once instead of 12 times; its LayerNorm stays per layer.
    expected = 89_650_176 - 11 * shared_part
    assert params(ALBERT.replace(share_layers=mode)) == expected


def test_factorized_embedding_saving_closed_form():
    # Lan et al. 2020 §3.1: O(V*H) -> O(V*E + E*H).
    assert identical(factorized_embedding_saving(), S.V * S.d_model - S.V * S.E_emb - S.E_emb * S.d_model)
    # At ALBERT-base sizes: 30000*768 - (30000*128 + 128*768) = 23,040,000 - 3,938,304.
    assert exact(factorized_embedding_saving(), {"V": 30000, "d_model": 768, "E_emb": 128}) == 19_101_696
    # The engine's whole difference adds what the classic formula leaves out: the position
    # (L_max rows), token-type (2 rows) and LayerNorm (2) tables shrink from d_model to E_emb wide,
    # and the projection has a d_model bias.
    spec = ALBERT.replace(share_layers="none")
    plain = Spec(**{**spec.__dict__, "sizes": tuple((n, v) for n, v in spec.sizes if n != "E_emb")})
    diff = build(plain).params - build(spec).params
    assert identical(diff, factorized_embedding_saving() + (S.L_max + 2 + 2) * (S.d_model - S.E_emb) - S.d_model)


# -- low-rank FFN ------------------------------------------------------------------------


def test_low_rank_ffn_counts_each_map_as_two_factors():
    # Each d_model x d_ff map becomes d_model x r + r x d_ff (bias unchanged): per BERT-base
    # layer, 2*(768*3072) weights become 2*r*(768 + 3072).
    spec = PRESETS["bert-base"].spec
    low = spec.replace(sizes={"r": 64})
    assert params(spec) - params(low) == 12 * 2 * (768 * 3072 - 64 * (768 + 3072))
    assert identical(low_rank_saving(), S.d_model * S.d_ff - S.r * (S.d_model + S.d_ff))
    assert identical(low_rank_ffn_saving(low), 2 * S.N * low_rank_saving())
    # FLOPs: 2*B*L*r*(d_in + d_out) per map instead of 2*B*L*d_in*d_out.
    flops_diff = build(spec).flops - build(low).flops
    assert identical(flops_diff, 2 * S.N * 2 * S.B * S.L * (S.d_model * S.d_ff - S.r * (S.d_model + S.d_ff)))


def test_low_rank_break_even():
    # r* = d_in*d_out/(d_in + d_out) = 768*3072/3840 = 614.4 for BERT-base.
    assert low_rank_break_even().subs({S.d_model: 768, S.d_ff: 3072}) == sp.Rational(3072, 5)
    spec = PRESETS["bert-base"].spec
    # r = 614 still saves 768*3072 - 614*3840 = 1,536 per map; r = 615 costs 2,304 more per map.
    assert params(spec) - params(spec.replace(sizes={"r": 614})) == 24 * 1536
    assert params(spec) - params(spec.replace(sizes={"r": 615})) == -24 * 2304


# -- local / sliding-window attention ------------------------------------------------------


def brute_causal(q, kv, w):
    # query i (the last q of kv positions) sees key j when 0 <= i - j < w (HF sliding-window mask)
    return sum(1 for i in range(kv - q, kv) for j in range(kv) if 0 <= i - j < w)


def brute_bidirectional(n, w):
    # Longformer §3.1: w/2 keys on each side of every query, plus the query itself
    return sum(1 for i in range(n) for j in range(n) if abs(i - j) <= w // 2)


@pytest.mark.parametrize("L, w", [(1, 1), (5, 3), (3, 5), (7, 7), (16, 4), (9, 1), (2, 8)])
def test_causal_window_pairs_equal_brute_force(L, w):
    pairs = windowed_pairs(S.L, S.L, "causal")
    assert pairs.subs({S.L: L, S.w: w}) == brute_causal(L, L, w)
    # decode: one new query against L cached keys sees min(L, w) of them
    assert windowed_pairs(1, S.L, "causal").subs({S.L: L, S.w: w}) == brute_causal(1, L, w) == min(L, w)


@pytest.mark.parametrize("L, w", [(1, 2), (5, 2), (3, 8), (10, 4), (9, 6), (4, 6), (7, 3), (2, 5)])
def test_bidirectional_window_pairs_equal_brute_force(L, w):
    assert windowed_pairs(S.L, S.L, "full", causal=False).subs({S.L: L, S.w: w}) == brute_bidirectional(L, w)


def test_window_at_or_below_w_equals_the_full_closed_form_symbolically():
    # L <= w: write L = w - j with j >= 0; Min(w - j, w) is then w - j and the local form is
    # exactly the dense one, for every mask convention.
    j = sp.Symbol("j", integer=True, nonnegative=True)
    at = {S.L: S.w - j}
    from symtrans.engine.components import attention_pairs

    for mask in ("causal", "full", "half"):
        local = windowed_pairs(S.L, S.L, mask).subs(at)
        dense = attention_pairs(S.L, S.L, mask).subs(at)
        assert identical(local, dense), mask
    assert identical(windowed_pairs(S.L, S.L, "causal").subs(at), (S.L * (S.L + 1) / 2).subs(at))
    # The whole model: Mistral-7B shaped, causal count.
    spec = PRESETS["mistral-7b"].spec
    win = spec.replace(sizes={"w": 4096})
    wl = Workload(mask="causal")
    assert identical(build(win, wl).flops.subs(at), build(spec, wl).flops.subs(at))
    # Bidirectional: L <= a + 1 with a = floor(w/2) keys each side (L = a + 1 - j) gives the full square.
    at2 = {S.L: sp.floor(S.w / 2) + 1 - j}
    assert identical(windowed_pairs(S.L, S.L, "full", causal=False).subs(at2), (S.L**2).subs(at2))


def test_window_crossover_regimes():
    small, large = window_regimes(windowed_pairs(S.L, S.L, "causal"))
    assert identical(small, S.L * (S.L + 1) / 2)  # L <= w: the causal triangle
    assert identical(large, S.L * S.w - S.w * (S.w - 1) / 2)  # L >= w: L*w minus the first triangle's gap
    assert identical(small.subs(S.L, S.w), large.subs(S.L, S.w))  # they meet at L = w


def test_mistral_window_flops_and_kv_cache_at_32k():
    spec = PRESETS["mistral-7b"].spec  # sliding_window 4096 (config.json)
    assert spec.values["w"] == 4096
    unwindowed = spec.replace(sizes={"w": 32768})  # a window as long as L is no window
    v = {**spec.values, "B": 1, "L": 32768}
    full = exact(build(unwindowed, Workload(mask="causal")).flops, {**v, "w": 32768})
    local = exact(build(spec, Workload(mask="causal")).flops, v)
    # Per layer, QK^T and scores.V each cost 2*h*pairs*d_k with h*d_k = 4096:
    # causal pairs 32768*32769/2; windowed 32768*4096 - 4096*4095/2.
    pairs_full = 32768 * 32769 // 2
    pairs_local = 32768 * 4096 - 4096 * 4095 // 2
    assert full - local == 32 * 2 * 2 * 4096 * (pairs_full - pairs_local)
    # The KV cache keeps the last w = 4096 tokens: 2 (K, V) * 32 layers * 8 heads * 128 * 2 bytes each.
    from symtrans.accounting.memory import kv_cache_bytes

    assert exact(kv_cache_bytes(spec, S.B, S.L), v) == 4096 * 2 * 32 * 8 * 128 * 2
    assert exact(kv_cache_bytes(unwindowed, S.B, S.L), {**v, "w": 32768}) == 32768 * 2 * 32 * 8 * 128 * 2


def brute_global(n, w, g):
    # Longformer §3.1: the band, plus every pair whose query or key is one of the g global
    # tokens (the first g positions); a pair in both counts once
    return sum(1 for i in range(n) for j in range(n) if abs(i - j) <= w // 2 or i < g or j < g)


def test_global_tokens_add_their_rows_and_columns():
    # The kept pairs are the union of the band, the g global rows and the g global columns:
    # with L = 12, w = 4 (2 keys each side) and g = 2, the band's 54 pairs plus the 34 global
    # pairs outside it (rows 0-1: 24 pairs, 7 of them in the band; columns 0-1 in rows 2-11:
    # 20, 3 of them in the band): 88.
    spec = Spec(family="encoder-only", sizes=dict(d_model=8, d_ff=16, h=2, N=1, V=10, L=12, w=4), global_tokens=2)
    att = build(spec).find("self-attention")
    qk = [s for s in att.steps if s.label == "Q K^T"][0]
    assert brute_bidirectional(12, 4) == 54 and brute_global(12, 4, 2) == 54 + (24 - 7) + (20 - 3) == 88
    assert exact(qk.flops, {**spec.values, "B": 1}) == 2 * 2 * 88 * 4  # 2 * B * h * pairs * d_k


@pytest.mark.parametrize("n", [1, 2, 5, 9, 16])
@pytest.mark.parametrize("w", [1, 2, 3, 6, 40])
def test_global_token_pairs_equal_brute_force_and_never_exceed_the_square(n, w):
    for g in range(1, n + 1):
        pairs = windowed_pairs(S.L, S.L, "full", causal=False, global_tokens=g).subs({S.L: n, S.w: w})
        assert pairs == brute_global(n, w, g) <= n * n
    # every token global: every pair is kept, exactly the full square
    assert windowed_pairs(S.L, S.L, "full", causal=False, global_tokens=n).subs({S.L: n, S.w: w}) == n * n


def test_global_tokens_as_many_as_tokens_cost_exactly_full_attention(capsys):
    # Issue 15: bert-base with w = 128 and 512 global tokens printed 108.6 GFLOPs, more than
    # full attention (96.6 G).  With every one of the L = 512 tokens global, every pair is
    # kept: the FLOPs equal those of bert-base without a window.
    code, out, _ = run(capsys, "flops", "bert-base", "--format", "json")
    full = json.loads(out)["total"]
    code, out, err = run(
        capsys, "flops", "bert-base", "--set", "w=128", "--set", "global_tokens=512", "--format", "json"
    )
    assert code == 0, err
    assert json.loads(out)["total"] == full
    code, out, err = run(capsys, "flops", "bert-base", "--set", "w=128", "--set", "global_tokens=513")
    assert code == 2 and out == "" and "exceeds the 512 tokens" in err and err.count("\n") == 1


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize("size", ["r", "w", "E_emb"])
@pytest.mark.parametrize("value", [0, -3])
def test_non_positive_rank_or_window_is_an_error(size, value):
    with pytest.raises(ValueError, match=f"{size} must be a positive integer"):
        PRESETS["gpt2"].spec.replace(sizes={size: value})


@pytest.mark.parametrize("setting", ["r=0", "w=0", "w=-1", "r=-5"])
def test_cli_rejects_non_positive_rank_and_window(capsys, setting):
    code, out, err = run(capsys, "params", "gpt2", "--set", setting)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "must be a positive integer" in err


def test_rank_above_min_dimension_warns_that_it_saves_nothing(capsys):
    # r = 1000 > min(768, 3072): r*(768 + 3072) = 3,840,000 > 768*3072 = 2,359,296.
    code, out, err = run(capsys, "params", "gpt2", "--set", "r=1000", "--format", "json")
    assert code == 0
    assert "saves nothing" in err and "min(d_in, d_out) = 768" in err
    assert json.loads(out)["total"] == 124_439_808 + 12 * 2 * (1000 * 3840 - 768 * 3072)
    code, out, err = run(capsys, "params", "gpt2", "--set", "r=64")
    assert code == 0 and "saves nothing" not in err


def test_bad_window_options():
    with pytest.raises(ValueError, match="global_tokens need a local attention window"):
        PRESETS["bert-base"].spec.replace(global_tokens=2)
    with pytest.raises(ValueError, match="decoder-only model has none"):
        PRESETS["gpt2"].spec.replace(sizes={"w": 4}, global_tokens=1)
    with pytest.raises(ValueError, match="share_layers must be one of"):
        ALBERT.replace(share_layers="some")
