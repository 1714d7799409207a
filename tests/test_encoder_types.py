"""Issue 11's encoders at full size (DistilBERT, XLM-RoBERTa, ELECTRA, DeBERTa-v3) and the
DeBERTa variants the generic key audit's one base config does not run through FlopCounterMode.

Full-size totals: each expected count is written out as arithmetic from the published
config.json (tests/fixtures/configs/<name>.json, the values of the Hugging Face model
repositories), and the same config is also built by transformers 5.x on the meta device, so
the figure has two sources independent of symtrans: the arithmetic and transformers.

Notation: lin(i, o) = i*o + o (a Linear with bias), LN(d) = 2d, a BERT layer
= 4 lin(d, d) + lin(d, ff) + lin(ff, d) + 2 LN(d).
"""

from __future__ import annotations

import pytest
from conftest import require  # noqa: E402

require("transformers")

from symtrans.catalog.hf_config import spec_from_config  # noqa: E402
from symtrans.engine.architectures import build  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402


def lin(i: int, o: int) -> int:
    return i * o + o


def bert_layer(d: int, ff: int) -> int:
    return 4 * lin(d, d) + lin(d, ff) + lin(ff, d) + 2 * (2 * d)


BASE_LAYER = bert_layer(768, 3072)  # 7,087,872

FULL_SIZE = [
    # DistilBertModel: word V x d + positions P x d + LN(d) + 6 layers; no token types, no pooler.
    ("distilbert-base-uncased", 30522 * 768 + 512 * 768 + 2 * 768 + 6 * BASE_LAYER, 66_362_880),
    # XLMRobertaModel: V 250002, 514 position rows (512 + padding_idx 1 + 1), one token type,
    # LN, 12 layers, pooler lin(d, d).
    (
        "xlm-roberta-base",
        250002 * 768 + 514 * 768 + 1 * 768 + 2 * 768 + 12 * BASE_LAYER + lin(768, 768),
        278_043_648,
    ),
    # ElectraModel, embedding_size = hidden_size: (V + P + 2 types) x d + LN(d), no
    # embeddings_project, 12 layers, no pooler.
    ("electra-base-discriminator", (30522 + 512 + 2) * 768 + 2 * 768 + 12 * BASE_LAYER, 108_891_648),
    # ElectraModel, embedding_size 128 < hidden 256: (V + P + 2) x 128 + LN(128) +
    # embeddings_project lin(128, 256) + 12 layers (d 256, ff 1024).
    (
        "electra-small-discriminator",
        (30522 + 512 + 2) * 128 + 2 * 128 + lin(128, 256) + 12 * bert_layer(256, 1024),
        13_483_008,
    ),
    # DebertaV2Model (DeBERTa-v3-base): word 128100 x d, no absolute positions
    # (position_biased_input false), no token types, LN(d); 12 layers; the relative table
    # 2 x position_buckets 256 = 512 rows x d and its LayerNorm (norm_rel_ebd); share_att_key:
    # no pos_key_proj / pos_query_proj.
    (
        "deberta-v3-base",
        128100 * 768 + 2 * 768 + 12 * BASE_LAYER + 2 * 256 * 768 + 2 * 768,
        183_831_552,
    ),
]


@pytest.mark.parametrize(("name", "arithmetic", "total"), FULL_SIZE, ids=[n for n, _, _ in FULL_SIZE])
def test_full_size_encoders(hf, read_fixture, name, arithmetic, total):
    cfg = read_fixture(name)
    spec, _ = spec_from_config(cfg, name)
    assert arithmetic == total
    assert exact(build(spec).params, spec.values) == total
    assert hf.count(hf.build(cfg["model_type"], cfg)) == total


def test_deberta_v3_base_spec(read_fixture):
    """The v3 config reads as a 2 x 256-row relative table with both terms and shared keys."""
    spec, _ = spec_from_config(read_fixture("deberta-v3-base"), "deberta-v3-base")
    assert spec.size("L_rel") == 256
    assert (spec.disentangled, spec.share_att_key, spec.rel_norm, spec.positional) == ("c2p|p2c", True, True, "none")


# DeBERTa variants for FlopCounterMode: forward and training FLOPs (eager attention) must equal
# symtrans's flops convention.  Each switches on what the key audit's base config leaves off.
_D = dict(
    model_type="deberta-v2",
    hidden_size=12,
    num_attention_heads=2,
    num_hidden_layers=2,
    intermediate_size=10,
    vocab_size=23,
    max_position_embeddings=17,
    relative_attention=True,
)
DEBERTA_FLOPS = {
    "v3-like: buckets, shared keys, table norm, no absolute positions": dict(
        _D,
        position_buckets=3,
        share_att_key=True,
        norm_rel_ebd="layer_norm",
        pos_att_type="p2c|c2p",
        position_biased_input=False,
    ),
    "p2c only, embedding projection without bias": dict(_D, pos_att_type=["p2c"], embedding_size=7),
    "c2p only, grouped ConvLayer, token types": dict(
        _D, pos_att_type="c2p", conv_kernel_size=3, conv_groups=3, type_vocab_size=2
    ),
    "table, no terms, shared keys (both projections still run)": dict(_D, share_att_key=True),
    "c2p only with shared keys (the unused W_Q projection has no backward)": dict(
        _D, share_att_key=True, pos_att_type="c2p", max_relative_positions=4
    ),
    "no relative attention, unused table norm": dict(_D, relative_attention=False, norm_rel_ebd="layer_norm"),
}


@pytest.mark.parametrize("cfg", DEBERTA_FLOPS.values(), ids=list(DEBERTA_FLOPS))
def test_deberta_flops_match_flop_counter(hf, cfg):
    from torch.utils.flop_counter import FlopCounterMode

    from symtrans.accounting.flops import evaluate, flops_expr

    torch = hf.torch
    spec, _ = spec_from_config(cfg, "deberta")
    torch.manual_seed(0)
    model = hf.model_class("deberta-v2")(hf.config("deberta-v2", {**cfg, "attn_implementation": "eager"})).eval()
    B, L = 2, 8
    ids = torch.ones(B, L, dtype=torch.long)

    def counted(run) -> int:
        counter = FlopCounterMode(display=False)
        with counter:
            run()
        return counter.get_total_flops()

    assert hf.count(model) == exact(build(spec).params, spec.values)
    forward = counted(lambda: model(input_ids=ids))  # autograd on: see test_model_types' FLOP test
    training = counted(lambda: model(input_ids=ids).last_hidden_state.sum().backward())
    values = {**spec.values, "B": B, "L": L}
    assert forward == int(evaluate(flops_expr(spec, "forward"), values))
    # torch.utils.flop_counter.conv_backward_flop counts grad_weight as conv(x^T, grad_out^T)
    # without dividing by the groups: g x the real 2*B*L*d*(d/g)*k.  Add what it over-counts.
    g, k, d = spec.conv_groups, spec.conv_kernel, spec.size("d_model")
    overcount = (g - 1) * 2 * B * L * d * (d // g) * k if k else 0
    assert training == int(evaluate(flops_expr(spec, "training"), values)) + overcount


@pytest.mark.parametrize(
    "cfg",
    [*DEBERTA_FLOPS.values(), dict(_D, pos_att_type="p2c|c2p", embedding_size=7)],
    ids=[*DEBERTA_FLOPS, "both terms, embed_proj"],
)
def test_deberta_walk_equals_engine(cfg):
    """The shape walk (its own derivation from shapes) sums to the engine's forward FLOPs."""
    from symtrans.analysis.walk import walk

    spec, _ = spec_from_config(cfg, "deberta")
    values = {**spec.values, "B": 3, "L": 11}
    assert exact(walk(spec).flops, values) == exact(build(spec).flops, values)
