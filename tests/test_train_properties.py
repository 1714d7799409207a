"""Identities of the activations per tensor-parallel rank, for every size at once.

Korthikanti et al. 2022 §4.2.2: with sequence parallelism every saved activation of a
layer is split over the t ranks, so a rank holds exactly 1/t of the unsplit layer (Table 2:
sbh(34 + 5as/h) -> sbh(34/t + 5as/(ht))).  Without it (§4.2.1) the layer is a replicated
part plus a part split over t (sbh(10 + 24/t + ...)): linear in 1/t, so with A(t) the bytes
of a rank, A(1) - A(2) = 2 (A(2) - A(4)).  The closed forms are in the size symbols
(d_model, h, h_kv, d_ff, E, k, ...), so each identity is checked for all sizes at once, on
architectures that differ in FFN kind, norm, attention heads and experts.
"""

from __future__ import annotations

import pytest
import sympy as sp

from symtrans.accounting import parallel as P
from symtrans.catalog.resolve import resolve


def _layers(model: str, tp: int, sp_on: bool, recompute: str) -> sp.Expr:
    res = resolve(model, [])
    lay = P.Layout(tp=tp, sequence_parallel=sp_on, seq_len=64, recompute=recompute)
    return {t.name: t.expr for t in P.activation_terms(res.spec, res.spec.values, lay, "first")}["activations: layers"]


@pytest.mark.parametrize("model", ["gpt2", "llama-3-8b", "mixtral-8x7b", "gpt3-175b"])
@pytest.mark.parametrize("recompute", ["none", "selective"])
def test_sp_splits_everything_and_tp_is_linear_in_one_over_t(model, recompute):
    whole = _layers(model, 1, False, recompute)
    assert sp.expand(_layers(model, 4, True, recompute) * 4 - whole) == 0
    a2, a4 = _layers(model, 2, False, recompute), _layers(model, 4, False, recompute)
    assert sp.expand((whole - a2) - 2 * (a2 - a4)) == 0
    assert sp.expand(whole - a2) != 0  # TP does split something
