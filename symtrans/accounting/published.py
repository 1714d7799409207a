"""Published FLOP formulas as exact special cases of symtrans's derivation.

Each function returns a ``Published``: the formula as a SymPy expression in the engine's
symbols (translated at the boundary: Kaplan's n_layer is N, d_attn is h*d_k, n_ctx is
L; a paper's parameter count N becomes the engine's closed form, named P here), what it
estimates, its stated assumptions, and ``assumed``: the engine's own count under those
assumptions.  ``compare`` sets each formula beside the engine's exact count under the
default conventions (2 FLOPs per multiply-accumulate, full-square attention, head
counted, no recomputation) and prints the ratio and the symbolic residual
``exact - formula``; ``assumed - formula`` is 0 when the formula is reproduced exactly.

Sources (translated notation in brackets):

* Kaplan et al. 2020, Table 1: N = 2 d_model n_layer (2 d_attn + d_ff) and
  C_forward = 2N + 2 n_layer n_ctx d_attn (FLOPs per token, non-embedding);
* 6ND (Kaplan et al. 2020 §2.1; Hoffmann et al. 2022 §3): training FLOPs of D tokens;
* Hoffmann et al. 2022 (Chinchilla), App. F and Table A4;
* Chowdhery et al. 2022 (PaLM), App. B: 6N + 12 n_layer H Q T per token;
* Korthikanti et al. 2022 §6 (model FLOPs, no recomputation):
  72 B s l h^2 (1 + s/(6h) + V/(12 l h)); Narayanan et al. 2021 (SC'21) §5.1, which
  assumes full activation recomputation: 96 B s l h^2 (1 + s/(6h) + V/(16 l h))
  [s = L, l = N, h = d_model].
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import sympy as sp

from symtrans.accounting.flops import count, flops_expr, per_sequence, per_token, run_flops, tokens_per_step
from symtrans.engine import symbols as S
from symtrans.engine.architectures import Workload, build
from symtrans.engine.components import dims
from symtrans.engine.cost import DENSE
from symtrans.engine.roles import STACKS
from symtrans.engine.simplify import closed_form
from symtrans.engine.spec import Spec


@dataclass(frozen=True)
class Published:
    """A published formula and the engine's count of the same quantity.

    Attributes:
        key: short name (``kaplan-params``, ``kaplan-forward``, ``6nd``, ``chinchilla``,
            ``chinchilla-nonembedding``, ``palm``, ``megatron``, ``megatron-recompute``).
        name: the formula as people cite it.
        quantity: what it estimates, with its unit (e.g. "training FLOPs per token").
        formula: the published expression in the engine's symbols.
        exact: the engine's exact count of ``quantity`` under the default conventions.
        assumed: the engine's count under the formula's stated ``assumptions``.
        assumptions: the conditions under which ``assumed == formula``.
        source: paper and section/table.
    """

    key: str
    name: str
    quantity: str
    formula: sp.Expr
    exact: sp.Expr
    assumed: sp.Expr
    assumptions: tuple[str, ...]
    source: str
    substitutions: Mapping[sp.Symbol, sp.Expr] = field(default_factory=dict)

    @property
    def residual(self) -> sp.Expr:
        """``exact - formula`` as a closed form (units of ``quantity``)."""
        return closed_form(self.exact - self.formula)

    @property
    def assumed_residual(self) -> sp.Expr:
        """``assumed - formula`` with the assumed size relations substituted: 0 when the
        formula is an exact special case of the derivation."""
        return closed_form(sp.expand((self.assumed - self.formula).xreplace(dict(self.substitutions))))


# The two Megatron forms, credited once (the identity catalogue reads these too).
MEGATRON_96_SOURCE = (
    "Narayanan et al. 2021 (Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM, "
    "SC'21) §5.1: 96·B·s·l·h²·(1 + s/6h + V/16lh), assuming full activation recomputation"
)
MEGATRON_72_SOURCE = (
    "Korthikanti et al. 2022 (Reducing Activation Recomputation in Large Transformer Models) §6: "
    "model FLOPs 72·B·s·l·h²·(1 + s/6h + V/12lh), without recomputation"
)


def _single_stack(spec: Spec) -> None:
    if spec.family == "encoder-decoder":
        raise ValueError(
            "the published formulas describe single-stack models; an encoder-decoder has two "
            "(compare its forward FLOPs with 'symtrans flops' instead)"
        )
    if not spec.has("V"):
        raise ValueError(
            "the published formulas count a vocabulary's embedding and logits; this model reads pixels "
            "and has no vocabulary (compare its forward FLOPs with 'symtrans flops' instead)"
        )


def _stacks(model):
    return [c for c in model.children if c.block in STACKS]


def parameters(spec: Spec) -> sp.Expr:
    """P: the model's parameter count (parameters, tied tensors once), a closed form."""
    return closed_form(build(spec).params)


def non_embedding_parameters(spec: Spec) -> sp.Expr:
    """Parameters of the layer stack(s): no token/position embeddings, no heads
    (Kaplan et al. 2020 §2.1's non-embedding N)."""
    return closed_form(sp.Add(*[c.params for c in _stacks(build(spec))]))


def _d_attn(spec: Spec) -> sp.Expr:
    D = dims(spec)
    return D.h * D.d_k


def _mha_substitutions(spec: Spec) -> dict:
    """Kaplan/Megatron/Chinchilla assume multi-head attention with h*d_k = d_model."""
    subs = {}
    if spec.has("h_kv"):
        subs[S.h_kv] = S.h
    return subs


def kaplan_params(spec: Spec) -> Published:
    """Kaplan et al. 2020 Table 1: N = 2 d_model n_layer (2 d_attn + d_ff) (parameters).

    Raises:
        ValueError: for an encoder-decoder.
    """
    _single_stack(spec)
    formula = 2 * S.d_model * S.N * (2 * _d_attn(spec) + S.d_ff)
    exact = non_embedding_parameters(spec)
    return Published(
        "kaplan-params",
        "Kaplan 2020 N = 2·d_model·n_layer·(2·d_attn + d_ff)",
        "non-embedding parameters",
        formula,
        exact,
        closed_form(_layer_weights(spec)),
        (
            "biases and norm parameters are neglected",
            "multi-head attention (h_kv = h, d_v = d_k)",
            "an ungated two-matrix FFN (ffn=mlp)",
        ),
        "Kaplan et al. 2020, Table 1 (n_layer = N, d_attn = h*d_k)",
        _mha_substitutions(spec),
    )


def _layer_weights(spec: Spec) -> sp.Expr:
    """Weight elements of the stacks' matmuls (parameters that multiply activations)."""
    model = build(spec)
    return sp.Add(
        *[n.multiplicity * n.step.weights for n in model.nodes() if n.within(*STACKS) and n.step.kind == DENSE]
    )


def _per_token_of(spec: Spec, mask: str, select) -> sp.Expr:
    model = build(spec, Workload(mask=mask))
    return sp.cancel(count(model, "flops", select) / tokens_per_step(spec))


def kaplan_forward(spec: Spec) -> Published:
    """Kaplan et al. 2020 Table 1: C_forward = 2N + 2 n_layer n_ctx d_attn, forward FLOPs
    per token without embeddings and logits.

    Exact special case: the engine's forward per token with the causal attention counted
    as half the square (``mask=half``: 2 x 2 x h x L/2 x d_k per layer) and the LM head
    left out; N counts the matmul weights of the layers (Kaplan neglects biases/norms).

    Raises:
        ValueError: for an encoder-decoder.
    """
    _single_stack(spec)
    n_k = 2 * S.d_model * S.N * (2 * _d_attn(spec) + S.d_ff)
    formula = 2 * n_k + 2 * S.N * S.L * _d_attn(spec)
    in_stack = lambda n: n.within(*STACKS)
    return Published(
        "kaplan-forward",
        "Kaplan 2020 C_forward = 2N + 2·n_layer·n_ctx·d_attn",
        "forward FLOPs per token",
        closed_form(formula),
        per_token(spec, "forward"),
        closed_form(_per_token_of(spec, "half", in_stack)),
        (
            "causal attention counted as half the square (mask=half)",
            "no embeddings and no logits",
            "no relative-position projections (Transformer-XL's W_R and Q R^T are not in Table 1)",
            "multi-head attention (h_kv = h, d_v = d_k)",
            "an ungated two-matrix FFN (ffn=mlp)",
            "n_ctx = L",
        ),
        "Kaplan et al. 2020, Table 1",
        _mha_substitutions(spec),
    )


def six_nd(spec: Spec, D: sp.Expr | int = S.D) -> Published:
    """6ND: training FLOPs of D tokens for P parameters (FLOPs per run).

    Exact special case: every parameter takes part in exactly one matmul per token (P
    equals the matmul weight count: no embedding table apart from a tied head, no
    biases or norm parameters) and the attention-score terms are neglected.

    Raises:
        ValueError: for an encoder-decoder.
    """
    _single_stack(spec)
    D = sp.Integer(D) if isinstance(D, int) else D
    P = parameters(spec)
    dense = lambda n: n.step.kind == DENSE
    assumed = 3 * _per_token_of(spec, "full", dense) * D
    return Published(
        "6nd",
        "6ND",
        "training FLOPs per run of D tokens",
        6 * P * D,
        run_flops(spec, D),
        closed_form(sp.expand(assumed)),
        (
            "P equals the weights that multiply activations (no untied embedding table, biases, "
            "norms or learned positions)",
            "attention-score FLOPs neglected (L small against d_model)",
            "backward = 2 x forward",
        ),
        "Kaplan et al. 2020 §2.1; Hoffmann et al. 2022 §3",
    )


def chinchilla(spec: Spec, embeddings: bool = True) -> Published:
    """Chinchilla App. F: training FLOPs per sequence of L tokens, 3 x forward, with
    forward = embeddings 2 L V d_model + N x [2·3·L·d_model·(h d_k) + 2 L^2 (h d_k)
    + 3 h L^2 + 2 L^2 (h d_k) + 2 L (h d_k) d_model + 2 L (2 d_model d_ff)] + logits
    2 L d_model V.  ``embeddings=False`` leaves out embeddings and logits, the form
    under which Table A4's FLOPs ratios reproduce.

    Exact special case: the ``chinchilla`` (or ``chinchilla-nonembedding``) convention.

    Raises:
        ValueError: for an encoder-decoder.
    """
    _single_stack(spec)
    L, d, V, h, N = S.L, S.d_model, S.V, S.h, S.N
    da = _d_attn(spec)
    layer = (
        2 * 3 * L * d * da
        + 2 * L**2 * da
        + 3 * h * L**2
        + 2 * L**2 * da
        + 2 * L * da * d
        + 2 * L * (d * S.d_ff + d * S.d_ff)
    )
    fwd = N * layer + (2 * L * V * d + 2 * L * d * V if embeddings else 0)
    conv = "chinchilla" if embeddings else "chinchilla-nonembedding"
    return Published(
        "chinchilla" if embeddings else "chinchilla-nonembedding",
        "Chinchilla App. F" + ("" if embeddings else " without embeddings and logits (Table A4)"),
        "training FLOPs per sequence",
        closed_form(3 * fwd),
        per_sequence(spec, "training"),
        per_sequence(spec, "training", conv),
        (
            ("embeddings counted as a one-hot matmul, 2 L V d_model" if embeddings else "no embeddings and no logits"),
            "softmax counted at 3 per score; no biases, norms, activations or residual adds",
            "full-square attention",
            "multi-head attention (h_kv = h, d_v = d_k)",
            "an ungated two-matrix FFN (ffn=mlp)",
            "backward = 2 x forward",
        ),
        "Hoffmann et al. 2022, App. F" + ("" if embeddings else " and Table A4"),
        _mha_substitutions(spec),
    )


def palm(spec: Spec) -> Published:
    """PaLM App. B: model FLOPs per token 6N + 12 n_layer H Q T (training, no
    recomputation), H heads of width Q, T = L tokens of context.

    Exact special case: P equals the matmul weights (as for 6ND) and full-square
    attention with d_v = d_k.

    Raises:
        ValueError: for an encoder-decoder.
    """
    _single_stack(spec)
    D = dims(spec)
    formula = 6 * parameters(spec) + 12 * S.N * S.h * D.d_k * S.L
    return Published(
        "palm",
        "PaLM App. B 6N + 12·n_layer·H·Q·T",
        "training FLOPs per token",
        closed_form(formula),
        per_token(spec, "training"),
        per_token(spec, "training"),
        (
            "P equals the weights that multiply activations (no untied embedding table, biases, "
            "norms or learned positions)",
            "full-square attention",
            "d_v = d_k",
            "no recomputation",
        ),
        "Chowdhery et al. 2022, App. B",
    )


def megatron(spec: Spec, recompute: bool = False) -> Published:
    """Megatron-LM training FLOPs per step of B sequences of L tokens:
    72 B L N d^2 (1 + L/(6d) + V/(12 N d)), or with full activation recomputation
    96 B L N d^2 (1 + L/(6d) + V/(16 N d)) (d = d_model; the logits are not recomputed).

    Exact special case: d_ff = 4 d_model, h d_k = d_model, multi-head attention, an
    ungated FFN, full-square attention.

    Raises:
        ValueError: for an encoder-decoder.
    """
    _single_stack(spec)
    d, L, N, V, B = S.d_model, S.L, S.N, S.V, S.B
    if recompute:
        formula = 96 * B * L * N * d**2 * (1 + L / (6 * d) + V / (16 * N * d))
        name, src = "Megatron 96·B·L·N·d²·(1 + L/(6d) + V/(16·N·d))", MEGATRON_96_SOURCE
    else:
        formula = 72 * B * L * N * d**2 * (1 + L / (6 * d) + V / (12 * N * d))
        name, src = "Megatron 72·B·L·N·d²·(1 + L/(6d) + V/(12·N·d))", MEGATRON_72_SOURCE
    subs = _mha_substitutions(spec)
    subs[S.d_ff] = 4 * S.d_model
    if spec.has("d_k"):
        subs[S.d_k] = S.d_model / S.h
    if spec.has("d_v"):
        subs[S.d_v] = S.d_model / S.h
    rc = "full" if recompute else "none"
    return Published(
        "megatron-recompute" if recompute else "megatron",
        name,
        "training FLOPs per step (batch B)",
        closed_form(formula),
        flops_expr(spec, "training", recompute=rc),
        flops_expr(spec, "training", recompute=rc),
        (
            "d_ff = 4 d_model",
            "h d_k = d_model, multi-head attention",
            "an ungated two-matrix FFN",
            "full-square attention",
            "the logits computed once" + (" and not recomputed" if recompute else ""),
        ),
        src,
        subs,
    )


# What ``compare`` counts "exact" under: the conventions the formulas are stated in, whatever
# a caller's own --convention/--mask/--recompute/--mode (the CLI states this basis beside the rows).
COMPARE_BASIS = {
    "convention": "flops",
    "mask": "full",
    "recompute": "none",
    "description": (
        "each exact count is of the formula's own quantity (per token, per sequence, per step or per "
        "run, as named), under the flops convention (2 FLOPs per multiply-accumulate), the full-square "
        "attention mask and no recomputation (megatron-recompute: full recomputation)"
    ),
}

FORMULAS = (
    "kaplan-params",
    "kaplan-forward",
    "6nd",
    "chinchilla",
    "chinchilla-nonembedding",
    "palm",
    "megatron",
    "megatron-recompute",
)


def formulas(spec: Spec, D: sp.Expr | int = S.D) -> list[Published]:
    """Every published formula for ``spec`` (decoder-only or encoder-only), in FORMULAS order.

    Raises:
        ValueError: for an encoder-decoder.
    """
    return [
        kaplan_params(spec),
        kaplan_forward(spec),
        six_nd(spec, D),
        chinchilla(spec, True),
        chinchilla(spec, False),
        palm(spec),
        megatron(spec, False),
        megatron(spec, True),
    ]


@dataclass(frozen=True)
class Row:
    """One line of ``compare``: formula value against the exact count (same unit)."""

    key: str
    name: str
    quantity: str
    formula: sp.Expr
    value: sp.Rational
    exact: sp.Rational
    ratio: sp.Rational
    residual: sp.Expr
    assumed_residual: sp.Expr
    assumptions: tuple[str, ...]
    source: str


def compare(spec: Spec, values: Mapping[str, int] | None = None, D: int | None = None) -> list[Row]:
    """Each published formula beside the engine's exact count for ``spec``.

    Args:
        spec: a decoder-only or encoder-only model.
        values: sizes, including the workload (B, L); defaults to the spec's with B = 1.
        D: training tokens for 6ND (defaults to one step's B*L tokens).

    Returns rows with the formula's value, the exact count, ratio = value / exact
    (an exact Rational), the residual exact - formula as a closed form, and
    ``assumed_residual`` (0 when the formula is reproduced under its assumptions).

    Raises:
        ValueError: for an encoder-decoder, a missing size, or a non-positive D.
    """
    from symtrans.accounting.flops import evaluate

    vals = dict(spec.values)
    vals.setdefault("B", 1)
    vals.update(values or {})
    if "L" not in vals:
        raise ValueError("give the sequence length L (--seq-len)")
    if D is None:
        D = vals["B"] * vals["L"]
    if isinstance(D, bool) or not isinstance(D, int) or D <= 0:
        raise ValueError(f"the token count D must be a positive integer, not {D!r}")
    vals["D"] = D
    rows = []
    for p in formulas(spec):
        value = evaluate(p.formula, vals)
        exact = evaluate(p.exact, vals)
        rows.append(
            Row(
                p.key,
                p.name,
                p.quantity,
                p.formula,
                value,
                exact,
                sp.Rational(value, exact) if exact else sp.nan,
                p.residual,
                p.assumed_residual,
                p.assumptions,
                p.source,
            )
        )
    return rows
