"""State-space mixers: Mamba 1 (Gu & Dao 2023) and Mamba 2 (Dao & Gu 2024) as layer kinds.

Parameters follow the papers' blocks as transformers builds them (``MambaMixer``,
``JambaMambaMixer``, ``Mamba2Mixer``).  FLOPs follow the matmul convention: the dense maps
(in_proj, x_proj, dt_proj, out_proj), the depthwise causal convolution, and the products
of the scan that are matrix products in the reference PyTorch forward (what
``torch.utils.flop_counter`` counts on an eager CPU forward):

* Mamba 1's sequential scan reads each state out with one matmul per token,
  h_t C_t: 2·d_inner·d_state per token; the discretisation exp(Δ A), Δ B x and the state
  update are element-wise (about 5·d_inner·d_state per token) and not counted.
* Mamba 2's chunked SSD (Dao & Gu 2024 §6, ``mamba2_chunk_scan``) over n_c = ⌈L/L_chunk⌉
  chunks (the sequence zero-padded to n_c·L_chunk): C Bᵀ within chunks, its product with
  x, the chunk states B x, the inter-chunk recurrence over n_c + 1 chunk states, and the
  state read-out C h: 2·B·[n_c L_chunk²(h_ssm d_state + d_inner) + 2 n_c L_chunk d_inner
  d_state + (n_c + 1)² d_inner d_state].

The convolution: the eager forward convolves the sequence zero-padded by d_conv − 1 and
drops the extra outputs, so it computes L + d_conv − 1 positions: 2·B·(L + d_conv − 1)·
channels·d_conv FLOPs (``conv_flop_count`` of its F.conv1d).

State per sequence (``Step.state``, elements): the SSM state h (d_inner·d_state; Mamba 2
h_ssm heads of d_inner/h_ssm x d_state, the same number) and the convolution window
(channels·d_conv), as transformers' cache keeps them (tests/test_layer_kinds.py).
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from symtrans.engine import symbols as S
from symtrans.engine.components import expr_text, linear, norm
from symtrans.engine.cost import ATTENTION, DENSE, ONE, Cost, Step
from symtrans.engine.kinds import LayerKind
from symtrans.engine.roles import Block, Role
from symtrans.engine.spec import Spec

MAMBA1 = "Gu & Dao 2023 §3.4 (Mamba block); MambaMixer / JambaMambaMixer"
MAMBA2 = "Dao & Gu 2024 §7 (Mamba-2 block); Mamba2Mixer"


def conv_steps(channels: sp.Expr, batch: sp.Expr, q: sp.Expr, bias: bool, source: str, decode: bool) -> list[Step]:
    """A causal depthwise Conv1d of width d_conv over ``channels`` (weight channels·d_conv,
    bias channels); its cache is the last d_conv inputs per channel (``state``).

    FLOPs: the eager forward's F.conv1d over the sequence padded by d_conv − 1, so
    q + d_conv − 1 output positions (one in decode, where the window is the cached state)."""
    positions = ONE if decode else q + S.d_conv - 1
    steps = [
        Step(
            label="conv1d",
            role=Role.MIXER_CONV,
            params=channels * S.d_conv,
            flops=2 * batch * positions * channels * S.d_conv,
            kind=DENSE,
            weights=channels * S.d_conv,
            shape=f"{expr_text(channels)} x ({expr_text(positions)} x {expr_text(S.d_conv)}) . ({expr_text(S.d_conv)} x 1)",
            state=channels * S.d_conv,
            note="causal depthwise convolution of width d_conv per channel; the last d_conv inputs are its state",
            source=source,
        )
    ]
    if bias:
        steps.append(Step(label="bias of conv1d", role=Role.MIXER_CONV, bias=True, params=channels, source=source))
    return steps


def _vector(label: str, role: Role, width: sp.Expr, note: str, source: str) -> Step:
    return Step(label=label, role=role, params=width, note=note, source=source)


def chunk_count(q: sp.Expr) -> sp.Expr:
    """Chunks of a chunked scan over q tokens: ⌈q / L_chunk⌉ (the sequence is zero-padded)."""
    return sp.ceiling(q / S.L_chunk)


class Mamba(LayerKind):
    """Mamba 1: in_proj (d_model → 2·d_inner: x and the gate z), conv1d over x, x_proj
    (d_inner → dt_rank + 2·d_state: Δ, B, C), dt_proj (dt_rank → d_inner, with bias),
    A_log (d_inner x d_state), D (d_inner), out_proj (d_inner → d_model); Jamba adds RMSNorms
    on Δ, B, C (``ssm_inner_norms``)."""

    name = "mamba"
    title = "Mamba"
    block = Block.SSM_MIXER

    @classmethod
    def mixer(cls, spec: Spec, batch, q, context, mask, decode):
        t = batch * q
        di, ds, r = S.d_inner, S.d_state, S.dt_rank
        steps = linear(
            "in_proj",
            S.d_model,
            2 * di,
            t,
            spec.ssm_bias,
            MAMBA1,
            "x and the gate z, d_inner each",
            role=Role.MIXER_IN_PROJ,
        )
        steps += conv_steps(di, batch, q, spec.ssm_conv_bias, MAMBA1, decode)
        steps += linear(
            "x_proj",
            di,
            r + 2 * ds,
            t,
            False,
            MAMBA1,
            "input-dependent Δ (dt_rank), B and C (d_state each)",
            role=Role.SSM_X_PROJ,
        )
        if spec.ssm_inner_norms:
            jamba = "Lieber et al. 2024 (Jamba); JambaMambaMixer dt/b/c_layernorm"
            for label, width in (("dt norm", r), ("B norm", ds), ("C norm", ds)):
                steps += [replace(n, source=jamba) for n in norm(spec, label, width, t, Role.MIXER_NORM, "rmsnorm")]
        steps += linear(
            "dt_proj", r, di, t, True, MAMBA1, "Δ back to d_inner channels, with its bias", role=Role.SSM_DT_PROJ
        )
        steps.append(_vector("A_log", Role.SSM_A, di * ds, "the state matrix A = -exp(A_log), diagonal", MAMBA1))
        steps.append(_vector("D", Role.SSM_D, di, "the skip term D x", MAMBA1))
        steps.append(
            Step(
                label="selective scan (C h)",
                role=Role.SCAN,
                flops=2 * t * di * ds,
                kind=ATTENTION,
                shape=f"({expr_text(t)} x {expr_text(di)} x {expr_text(ds)}) . ({expr_text(ds)} x 1)",
                state=di * ds,
                note="each token reads its state out, y = C h (a matmul per token); the discretisation and state "
                "update are element-wise and not counted; the state h (d_inner x d_state) is kept per sequence",
                source=MAMBA1 + " (Algorithm 2; mamba_selective_scan)",
            )
        )
        steps += linear("out_proj", di, S.d_model, t, spec.ssm_bias, MAMBA1, role=Role.MIXER_OUT_PROJ)
        return Cost(name="Mamba mixer", block=cls.block, steps=tuple(steps), source=MAMBA1)


class Mamba2(LayerKind):
    """Mamba 2: in_proj (d_model → 2·d_inner + 2·g_ssm·d_state + h_ssm: z, x, B, C, Δ),
    conv1d over x, B, C, dt_bias, A_log and D (h_ssm each), the gated RMSNorm (d_inner;
    ``ssm_gated_norm``), out_proj (d_inner → d_model; its bias ``ssm_out_bias``, else ``ssm_bias``)."""

    name = "mamba2"
    title = "Mamba 2"
    block = Block.SSM_MIXER

    @classmethod
    def mixer(cls, spec: Spec, batch, q, context, mask, decode):
        t = batch * q
        di, ds, h, g = S.d_inner, S.d_state, S.h_ssm, S.g_ssm
        conv = di + 2 * g * ds
        steps = linear(
            "in_proj",
            S.d_model,
            2 * di + 2 * g * ds + h,
            t,
            spec.ssm_bias,
            MAMBA2,
            "z and x (d_inner each), B and C (g_ssm groups of d_state each), Δ (one per head)",
            role=Role.MIXER_IN_PROJ,
        )
        steps += conv_steps(conv, batch, q, spec.ssm_conv_bias, MAMBA2, decode)
        steps.append(_vector("dt_bias", Role.SSM_DT_BIAS, h, "the bias of Δ, one per head", MAMBA2))
        steps.append(_vector("A_log", Role.SSM_A, h, "A = -exp(A_log), one scalar per head", MAMBA2))
        steps.append(_vector("D", Role.SSM_D, h, "the skip term D x, one per head", MAMBA2))
        if decode:  # the recurrent form: one state update and read-out per token
            flops, shape = (
                2 * t * di * ds,
                f"({expr_text(t)} x {expr_text(di)} x {expr_text(ds)}) . ({expr_text(ds)} x 1)",
            )
        else:
            n_c, c = chunk_count(q), S.L_chunk
            flops = 2 * batch * (n_c * c**2 * (h * ds + di) + 2 * n_c * c * di * ds + (n_c + 1) ** 2 * di * ds)
            shape = "chunked SSD: C B^T, (C B^T) x, B x, chunk recurrence, C h"
        steps.append(
            Step(
                label="chunked scan (SSD)" if not decode else "state update (C h)",
                role=Role.SCAN,
                flops=flops,
                kind=ATTENTION,
                shape=shape,
                state=di * ds,
                note="the einsums of the chunked state-space dual form over ceiling(L/L_chunk) chunks; "
                "the state (h_ssm heads x d_inner/h_ssm x d_state) is kept per sequence",
                source=MAMBA2 + " (§6, SSD algorithm; mamba2_chunk_scan)",
            )
        )
        if spec.ssm_gated_norm:  # Falcon-H1 may build an nn.Identity instead (mamba_rms_norm false)
            steps += norm(spec, "gated RMSNorm", di, t, Role.MIXER_NORM, kind="rmsnorm")
        out_bias = spec.ssm_bias if spec.ssm_out_bias is None else spec.ssm_out_bias
        steps += linear("out_proj", di, S.d_model, t, out_bias, MAMBA2, role=Role.MIXER_OUT_PROJ)
        return Cost(name="Mamba 2 mixer", block=cls.block, steps=tuple(steps), source=MAMBA2)
