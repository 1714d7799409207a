"""The identity catalogue, each identity proved symbolically (tracker issue 5, "Identity catalogue").

Every right side below is typed in from the paper (translated to symtrans's symbols,
written out here, not taken from the module), and compared with the engine's left side.
"""

from __future__ import annotations

import json

import pytest
import sympy as sp

from symtrans.accounting import formulas as I
from symtrans.accounting.formulas import assert_identity
from symtrans.cli.main import main
from symtrans.engine.architectures import build
from symtrans.engine.spec import Spec
from symtrans.engine.symbols import SYMBOLS

d, ff, N, h, d_k, V, L, B = (SYMBOLS[n] for n in ("d_model", "d_ff", "N", "h", "d_k", "V", "L", "B"))


@pytest.mark.parametrize("name", I.NAMES)
def test_every_catalogued_identity_holds(name):
    ident = I.get(name)
    assert ident.holds()
    ident.check()
    assert ident.source and ident.assumptions


def test_kaplan_params():
    # Kaplan et al. 2020 §2.1: N = 2 d_model n_layer (2 d_attn + d_ff) ~ 12 n_layer d_model^2 at d_ff = 4 d_model.
    assert_identity(I.get("kaplan-params").lhs, 12 * N * d**2)
    # With biases and LayerNorm (GPT2Block: c_attn 3d, c_proj d, c_fc 4d, mlp c_proj d, ln_1 + ln_2 4d)
    # the "≈" is 13 d per layer plus ln_f's 2d: sub-leading in d_model.
    gpt2 = Spec(
        family="decoder-only",
        sizes=dict(d_model=768, d_ff=3072, h=12, N=12, V=50257, L_max=1024, L=1024),
        positional="learned",
        norm_position="pre",
        final_norm=True,
    )
    stack = build(gpt2).child("decoder").params.xreplace({ff: 4 * d})
    assert sp.expand(stack - 12 * N * d**2 - (13 * N * d + 2 * d)) == 0


def test_kaplan_forward():
    # Kaplan Table 1: C_forward = 2 N + 2 n_layer n_ctx d_attn with N = 2 d n_layer (2 d + d_ff).
    assert_identity(I.get("kaplan-forward").lhs, 2 * (2 * d * N * (2 * d + ff)) + 2 * N * L * d)


def test_decoder_layer_minus_encoder_layer():
    # torch.nn.MultiheadAttention(512, 8): in_proj 3d^2 + 3d, out_proj d^2 + d; LayerNorm 2d.
    ident = I.get("decoder-minus-encoder")
    assert_identity(ident.lhs, 4 * d**2 + 4 * d + 2 * d)
    assert_identity(ident.rhs, 4 * d**2 + 6 * d)


def test_palm_training_flops():
    # PaLM App. B: 6N + 12 L H Q T per token; here the parameter count N_params of the
    # catalogue's model (tied V x d, Q and O maps d x h d_k, K and V maps d x h d_k,
    # SwiGLU 3 d d_ff, no biases, no norms) is written out.
    n_params = V * d + N * (4 * d * h * d_k + 3 * d * ff)
    assert_identity(I.get("palm").lhs, 6 * n_params + 12 * N * h * d_k * L)


def test_megatron():
    # Narayanan et al. 2021 §5.1: 72 B s l h^2 (1 + s/(6h) + V/(12 l h)); with full recomputation 96 (... V/(16 l h)).
    assert_identity(I.get("megatron").lhs, 72 * B * L * N * d**2 * (1 + L / (6 * d) + V / (12 * N * d)))
    assert_identity(I.get("megatron-recompute").lhs, 96 * B * L * N * d**2 * (1 + L / (6 * d) + V / (16 * N * d)))


def test_crossover_length():
    ident = I.get("crossover")
    assert_identity(ident.lhs, 2 * d + ff)
    assert ident.lhs.xreplace({ff: 4 * d}) == 6 * d
    assert ident.lhs.xreplace({d: 768, ff: 3072}) == 4608
    # Check at L = 4608 with the matmuls written out for one layer (B = 1):
    # attention scores QK^T + scores V: 2 * 2 * L^2 * d; weights Q, K, V, O and the two FFN maps:
    # 2 * L * (4 d^2 + 2 d d_ff).
    Lx, dm, dff = 4608, 768, 3072
    assert 4 * Lx * Lx * dm == 2 * Lx * (4 * dm * dm + 2 * dm * dff)
    assert 4 * (Lx - 1) ** 2 * dm < 2 * (Lx - 1) * (4 * dm * dm + 2 * dm * dff)


def test_assert_identity_failure_shows_the_residual():
    gpt2_stack = (
        build(
            Spec(
                family="decoder-only",
                sizes=dict(d_model=768, d_ff=3072, h=12, N=12, V=50257),
                positional="none",
                norm_position="pre",
            )
        )
        .child("decoder")
        .params
    )
    with pytest.raises(AssertionError) as info:
        assert_identity(gpt2_stack.xreplace({ff: 4 * d}), 12 * N * d**2, "Kaplan with biases")
    msg = str(info.value)
    assert msg.startswith("Kaplan with biases: identity does not hold")
    assert "residual lhs - rhs = 13*N*d_model" in msg  # 9 d of biases + 4 d of LayerNorm per layer
    assert "lhs = " in msg and "rhs = 12*N*d_model**2" in msg


def test_assert_identity_passes_and_handles_rational_forms():
    assert_identity(d * (d + 1), d**2 + d)
    assert_identity(L / (6 * d) * 6 * d, L)
    assert_identity(sp.Integer(4608), 4608)
    with pytest.raises(AssertionError, match=r"residual lhs - rhs = 1/\(6\*d_model\)"):
        assert_identity((L + 1) / (6 * d), L / (6 * d))


def test_assert_identity_refuses_text():
    with pytest.raises(TypeError, match="not str"):
        assert_identity("d_model", d)


def test_printable_in_reports():
    ident = I.get("megatron")
    assert "72" in ident.latex() and r"d_{\mathrm{model}}" in ident.latex()
    md = ident.markdown()
    # The 72 form is Korthikanti et al. 2022 §6 (model FLOPs, no recomputation); the 96 form,
    # with recomputation, is Narayanan et al. 2021 §5.1.
    assert "holds (residual 0)" in md and "Korthikanti" in md and "Narayanan" not in md
    assert ident._repr_latex_().startswith("$$")


def test_unknown_identity():
    with pytest.raises(KeyError, match="unknown identity"):
        I.get("pythagoras")


def test_cli_identities(capsys):
    assert main(["identities", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [x["name"] for x in data] == list(I.NAMES) and all(x["holds"] and x["residual"] == "0" for x in data)
    assert main(["identities", "crossover"]) == 0
    assert "d_ff + 2*d_model" in capsys.readouterr().out
    assert main(["identities", "nope"]) == 2
    assert "unknown identity" in capsys.readouterr().err


def test_megatron_forms_are_credited_to_the_right_papers(capsys):
    """The 96 form assumes recomputation: Narayanan et al. 2021 (SC'21) §5.1; the 72 form
    counts model FLOPs: Korthikanti et al. 2022 §6 (both papers, read for this test)."""
    import json

    from symtrans.cli.main import main

    by_name = {i.name: i for i in I.catalogue()}
    assert "Narayanan et al. 2021" in by_name["megatron-recompute"].source
    assert "Korthikanti et al. 2022" in by_name["megatron"].source
    assert "Korthikanti" not in by_name["megatron-recompute"].source
    assert "Narayanan" not in by_name["megatron"].source
    assert main(["flops", "gpt2", "--mode", "training", "--compare", "--format", "json"]) == 0
    rows = {r["formula_name"][:11]: r["source"] for r in json.loads(capsys.readouterr().out)["compare"]}
    assert "Korthikanti et al. 2022" in rows["Megatron 72"] and "Narayanan" not in rows["Megatron 72"]
    assert "Narayanan et al. 2021" in rows["Megatron 96"] and "Korthikanti" not in rows["Megatron 96"]
