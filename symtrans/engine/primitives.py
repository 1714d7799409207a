"""The building blocks every component is written with: the per-head widths of a spec
(``Dims``), a weight matrix applied to tokens (``linear``) and a normalisation
(``norm``), each returning Steps.  Kept apart from ``components`` so that modules the
components call (``disentangled``) can use them without an import cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from symtrans.engine import symbols as S
from symtrans.engine.conventions import per_element
from symtrans.engine.cost import DENSE, ONE, ZERO, Matrix, Step
from symtrans.engine.roles import Role
from symtrans.engine.spec import Spec


@dataclass(frozen=True)
class Dims:
    """The symbolic sizes a spec's formulas use (a symbol, or its default expression)."""

    d_model: sp.Expr
    d_ff: sp.Expr
    h: sp.Expr
    h_kv: sp.Expr
    d_k: sp.Expr
    d_v: sp.Expr
    V: sp.Expr
    L: sp.Expr


def dims(spec: Spec) -> Dims:
    """Symbols for ``spec``: ``d_k`` defaults to d_model/h, ``d_v`` to d_k, ``h_kv`` to h.

    Multi-head latent attention (``spec.mla``): every one of the h heads has its own key
    and value once the latent is expanded, keys of width d_nope + d_rope and values d_v."""
    if spec.mla:
        return Dims(d_model=S.d_model, d_ff=S.d_ff, h=S.h, h_kv=S.h, d_k=S.d_nope + S.d_rope, d_v=S.d_v, V=S.V, L=S.L)
    d_k = S.d_k if spec.has("d_k") else S.d_model / S.h
    return Dims(
        d_model=S.d_model,
        d_ff=S.d_ff,
        h=S.h,
        h_kv=S.h_kv if spec.has("h_kv") else S.h,
        d_k=d_k,
        d_v=S.d_v if spec.has("d_v") else d_k,
        V=S.V,
        L=S.L,
    )


def expr_text(e: sp.Expr) -> str:
    """``e`` as a Step's shape text prints it: SymPy's ``sstr`` with ``^`` for powers
    (``d_model^2``), never parsed back."""
    return sp.sstr(e).replace("**", "^")


def linear(
    label: str,
    d_in: sp.Expr,
    d_out: sp.Expr,
    tokens: sp.Expr,
    bias: bool,
    source: str,
    note: str = "",
    tied: bool = False,
    *,
    role: Role,
    factor: int = 0,
) -> list[Step]:
    """A linear map d_in -> d_out applied to ``tokens`` rows; its steps carry ``role``
    (the bias step too, with ``bias=True``).  A ``tied`` matrix is held by the token
    embedding (``tied_to``).

    Weight: d_in*d_out parameters (0 when ``tied``: another matrix holds them);
    bias: d_out parameters.  FLOPs: 2*tokens*d_in*d_out (the matmul
    (tokens x d_in)(d_in x d_out)); the bias add is elementwise (tokens*d_out).
    """
    w = d_in * d_out
    steps = [
        Step(
            label=label,
            role=role,
            tied_to=Role.TOKEN_EMBEDDING if tied else None,
            factor=factor,
            params=ZERO if tied else w,
            flops=2 * tokens * w,
            kind=DENSE,
            weights=w,
            shape=f"({expr_text(tokens)} x {expr_text(d_in)}) . ({expr_text(d_in)} x {expr_text(d_out)})",
            note=note or f"a {expr_text(d_in)} x {expr_text(d_out)} weight matrix",
            source=source,
            matrices=() if tied else (Matrix(ONE, d_out, d_in),),  # nn.Linear.weight is (out_features, in_features)
        )
    ]
    if bias:
        steps.append(
            Step(
                label=f"bias of {label}",
                role=role,
                bias=True,
                factor=factor,
                params=d_out,
                elementwise=per_element("bias") * tokens * d_out,
                note=f"one bias per output feature ({expr_text(d_out)})",
                source=source,
            )
        )
    return steps


def norm(
    spec: Spec,
    label: str,
    width: sp.Expr,
    tokens: sp.Expr,
    role: Role = Role.NORM,
    kind: str | None = None,
    bias: bool | None = None,
) -> list[Step]:
    """LayerNorm (γ and, with ``norm_bias``, β: 2*width) or RMSNorm (γ: width); none -> [].

    ``kind`` overrides ``spec.norm`` (the QK norms are RMSNorms in a model without norms)
    and ``bias`` overrides ``spec.norm_bias`` (``qk_norm_bias``); overrides, not
    ``spec.replace``, because the spec here may be the unvalidated structural one (every
    size 1) that a new Spec would check again."""
    kind = spec.norm if kind is None else kind
    beta = spec.norm_bias if bias is None else bias
    if kind == "none":
        return []
    if kind == "layernorm":
        params = 2 * width if beta else width
        note = "LayerNorm scale γ and shift β" if beta else "LayerNorm scale γ (no β)"
        src = "Ba et al. 2016; torch.nn.LayerNorm"
    else:
        params = width
        note = "RMSNorm scale γ"
        src = "Zhang & Sennrich 2019; LlamaRMSNorm / T5LayerNorm"
    return [
        Step(
            label=label,
            role=role,
            params=params,
            elementwise=per_element(kind) * tokens * width,
            note=note,
            source=src,
        )
    ]
