"""diff: two models or two conventions compared term by term (tracker issue 5, "Diff / explain").

Expected values: article 003's BERT-base hand count (shared/seeds/003, its own items
23,040,000 + 393,216 + 85,017,600 + 589,824) against transformers' BertModel
(109,482,240 on the meta device); article 000's Transformer-base hand count against
torch.nn.Transformer(512, 8, 6, 6, 2048) + one 37,000 x 512 shared embedding; PaLM App. B
and Kaplan et al. 2020 Table 1 for the attention terms; all arithmetic written out.
"""

from __future__ import annotations

import json

import pytest
import sympy as sp

from symtrans.analysis.diff import Side, diff, parse_side
from symtrans.cli.main import main
from symtrans.engine.spec import Spec
from symtrans.engine.symbols import SYMBOLS

d_model, N, B, L = (SYMBOLS[n] for n in ("d_model", "N", "B", "L"))

HAND_003 = "bert-base:V=30000,token_types=0,embedding_norm=false,attention_bias=false,pooler_bias=false"


def test_bert_hand_count_gap_splits_into_five_terms_summing_to_441600():
    r = diff(parse_side(HAND_003), parse_side("bert-base"))
    # Article 003's own items: word embeddings 30,000 x 768, positions 512 x 768, 12 layers of
    # 7,084,800, pooler 768 x 768 (no bias).
    assert r.a_total == 23_040_000 + 393_216 + 12 * 7_084_800 + 589_824 == 109_040_640
    assert r.b_total == 109_482_240  # transformers BertModel (bert-base-uncased), meta device
    terms = dict((name, value) for name, value, _ in r.by_category())
    expected = {
        "token embedding (V x d_model)": (30_522 - 30_000) * 768,  # 400,896: V 30522 vs 30000
        "attention biases": 12 * 4 * 768,  # 36,864: Q, K, V, O biases, 12 layers
        "token-type embedding": 2 * 768,  # 1,536
        "embedding norm": 2 * 768,  # 1,536: LayerNorm gamma and beta
        "pooler bias": 768,
    }
    assert terms == expected
    assert sum(expected.values()) == 441_600 == r.delta
    assert sum(row.delta for row in r.rows) == 441_600
    # Symbolically, at equal sizes: 4 d_model biases per layer, plus 2 + 2 + 1 d_model.
    assert sp.expand(r.symbolic - (4 * N * d_model + 5 * d_model)) == 0
    assert r.size_changes == {"V": (30_000, 30_522)}
    vocab = next(row for row in r.rows if row.label == "token embedding")
    assert (vocab.structural_value, vocab.size_value) == (0, 400_896)


def test_the_preset_of_the_hand_count_gives_the_same_diff():
    a = diff(parse_side("handcount-003-bert-base"), parse_side("bert-base"))
    assert a.delta == 441_600 and len(a.by_category()) == 5


def test_vaswani_hand_count_60m_against_the_torch_module_and_the_paper():
    # Article 000: no biases, no norms, V = 32,000 shared: 16,384,000 + 18,874,368 + 25,165,824.
    hand = Side(
        "hand",
        Spec(
            family="encoder-decoder",
            sizes=dict(d_model=512, d_ff=2048, h=8, N=6, V=32000),
            bias=False,
            norm="none",
            positional="sinusoidal",
        ),
    )
    r = diff(hand, parse_side("transformer-base"))
    assert r.a_total == 16_384_000 + 18_874_368 + 25_165_824 == 60_424_192
    assert r.b_total == 44_140_544 + 37_000 * 512 == 63_084_544  # torch.nn.Transformer + shared embedding
    terms = dict((name, value) for name, value, _ in r.by_category())
    assert terms["token embedding (V x d_model)"] == 5_000 * 512  # V 37,000 vs 32,000
    assert terms["attention biases"] == (6 * 4 + 6 * 8) * 512  # 36,864
    assert terms["FFN biases"] == 12 * (2048 + 512)  # 30,720
    assert terms["per-layer norms"] == (6 * 2 + 6 * 3) * 2 * 512  # 30,720
    assert terms["final norms"] == 2 * 2 * 512  # 2,048
    assert sum(terms.values()) == 63_084_544 - 60_424_192
    # The paper's "65M" (Vaswani et al. 2017 Table 3) is a rounded figure the diff cannot reach.
    assert 65_000_000 - r.b_total == 1_915_456


def test_palm_attention_term_against_kaplans():
    # Training FLOPs per token: PaLM App. B counts 12*N*h*d_k*L = 12*N*d_model*L for the
    # attention scores (full square); Kaplan Table 1 counts 2*N*L*d_model forward (half the
    # square), 6*N*L*d_model in training.  Over B*L tokens the gap is 6*B*L^2*N*d_model.
    kaplan = parse_side("gpt2", mask="half", mode="training")
    palm = parse_side("gpt2", mask="full", mode="training")
    r = diff(kaplan, palm, "flops", {"B": 1, "L": 2048})
    assert sp.expand(r.symbolic - 6 * B * L**2 * N * d_model) == 0
    assert r.delta == 6 * 2048**2 * 12 * 768
    assert [name for name, _, _ in r.by_category()] == ["attention score matmuls"]
    assert sum(row.delta for row in r.rows) == r.delta


def test_one_model_under_two_conventions():
    r = diff(parse_side("gpt2"), parse_side("gpt2", convention="macs"), "flops", {"B": 1, "L": 1024})
    assert r.a_total == 291_648_307_200  # GPT-2 forward at L 1024 (tests/test_cli.py arithmetic)
    assert r.delta == -291_648_307_200 // 2  # a MAC is half of 2 FLOPs
    c = diff(parse_side("gpt2"), parse_side("gpt2", convention="chinchilla"), "flops", {"B": 1, "L": 1024})
    terms = dict((name, value) for name, value, _ in c.by_category())
    # Chinchilla App. F: embeddings as a one-hot matmul 2*L*V*d_model, softmax 3 per score (h L^2 per layer).
    assert terms["embedding lookups as one-hot matmuls (Chinchilla App. F)"] == 2 * 1024 * 50257 * 768
    assert terms["softmax"] == 3 * 12 * 1024**2 * 12
    assert sum(row.delta for row in c.rows) == c.delta


def test_diff_is_antisymmetric_and_parameters_live_in_steps():
    # The rows add up to the difference by construction (a residual row takes any rest), so what is
    # checked is the matching of steps across two trees: B - A row for row is -(A - B), and no
    # parameter falls outside the steps (no residual row).
    from hypothesis import given
    from strategies import specs

    @given(specs(), specs())
    def check(a, b):
        ab, ba = diff(Side("a", a), Side("b", b)), diff(Side("b", b), Side("a", a))
        assert ab.delta == -ba.delta
        assert {(r.path, r.label): r.delta for r in ab.rows} == {(r.path, r.label): -r.delta for r in ba.rows}
        assert all(row.label != "terms outside the components" for row in ab.rows)

    check()


def test_identical_sides_have_no_rows():
    r = diff(parse_side("llama-2-7b"), parse_side("llama-2-7b"))
    assert r.delta == 0 and r.rows == () and "no component differs" in r.text()


@pytest.mark.parametrize(
    "text, message",
    [
        ("gpt2:foo=1", "unknown --set name 'foo'"),
        ("gpt2:d_model=abc", "integer"),
        ("gpt3000", "unknown preset"),
        ("gpt2:d_model=1000", "does not divide"),
    ],
)
def test_bad_sides(text, message):
    with pytest.raises(ValueError, match=message):
        parse_side(text)


def test_bad_quantity_and_mode():
    with pytest.raises(ValueError, match="quantity"):
        diff(parse_side("gpt2"), parse_side("gpt2"), "speed")
    with pytest.raises(ValueError, match="mode"):
        diff(parse_side("gpt2", mode="decode"), parse_side("gpt2"), "flops")


# ------------------------------------------------------------------ CLI


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_diff_json_and_text(capsys):
    code, out, err = run(capsys, "diff", HAND_003, "bert-base", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["difference"] == 441_600 and data["a_total"] == 109_040_640
    assert sum(t["difference"] for t in data["terms"]) == 441_600
    code, out, _ = run(capsys, "diff", HAND_003, "bert-base")
    assert "attention biases" in out and "36,864" in out and "4*N*d_model" in out


def test_cli_diff_one_model_with_set_b_and_masks(capsys):
    code, out, _ = run(capsys, "diff", "gpt2", "--set-b", "bias=false", "--format", "json")
    # GPT-2's linear biases per layer: 3*768 + 768 + 3072 + 768 = 6912; 12 layers.
    assert json.loads(out)["difference"] == -12 * 6912
    code, out, _ = run(
        capsys, "diff", "gpt2", "--quantity", "flops", "--mask-a", "half", "--seq-len", "1024", "--format", "markdown"
    )
    assert code == 0 and "attention score matmuls" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["gpt2:foo=1"], "unknown --set name"),
        (["gpt2", "--set-b", "d_model=1000"], "does not divide"),
        (["bert-base", "--quantity", "flops", "--set-a", "L=7", "--convention-b", "nope"], "invalid choice"),
    ],
)
def test_cli_diff_bad_input(capsys, argv, message):
    code, out, err = run(capsys, "diff", *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1
