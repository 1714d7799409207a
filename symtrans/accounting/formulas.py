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

The same formulas also appear in the identity catalogue (``Identity``, ``get``,
``catalogue``, ``assert_identity``): each pairs a left side derived by the engine with
the formula as the paper prints it, under stated assumptions, and ``holds()`` proves it
symbolically.  Every formula is written once, in the ``*_formula`` functions below, with
its source; ``Published`` (per model, ``compare``) and ``Identity`` (generic, proved) both
read it.

Notation: symtrans's N is layers and L sequence length.  Kaplan et al. 2020 write N for
parameters, n_layer for layers and n_ctx for the context; PaLM writes L for layers, H
heads, Q head width, T sequence length; Megatron writes l layers, h width, s sequence,
B batch.  They are translated here, at the boundary (DESIGN §1).

Units: parameters, or FLOPs at 2 per multiply-accumulate (matrix products only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Mapping

import sympy as sp

from symtrans.accounting.flops import count, flops_expr, per_sequence, per_token, run_flops, tokens_per_step
from symtrans.base.errors import InputError, UnknownNameError
from symtrans.engine import symbols as S
from symtrans.engine.architectures import Workload, build
from symtrans.engine.components import dims
from symtrans.engine.cost import DENSE
from symtrans.engine.roles import STACKS, Block
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


# -- the formulas, each written once (Published and Identity both read these) ------------


def kaplan_params_formula(d_attn: sp.Expr) -> sp.Expr:
    """Kaplan et al. 2020 Table 1: N = 2·d_model·n_layer·(2·d_attn + d_ff) (parameters;
    n_layer = N)."""
    return 2 * S.d_model * S.N * (2 * d_attn + S.d_ff)


def kaplan_forward_formula(d_attn: sp.Expr) -> sp.Expr:
    """Kaplan et al. 2020 Table 1: C_forward = 2N + 2·n_layer·n_ctx·d_attn (FLOPs per
    token; N = ``kaplan_params_formula``, n_ctx = L)."""
    return 2 * kaplan_params_formula(d_attn) + 2 * S.N * S.L * d_attn


def palm_formula(params: sp.Expr, d_k: sp.Expr) -> sp.Expr:
    """Chowdhery et al. 2022 (PaLM) App. B: 6N + 12·L·H·Q·T training FLOPs per token (their
    N parameters = ``params``, L layers = N, H heads = h, Q head width = d_k, T = L)."""
    return 6 * params + 12 * S.N * S.h * d_k * S.L


def megatron_formula(recompute: bool = False) -> sp.Expr:
    """Megatron-LM training FLOPs per step of B sequences (s = L, l = N, h = d_model):
    72·B·s·l·h²·(1 + s/6h + V/12lh) (``MEGATRON_72_SOURCE``), or with full activation
    recomputation 96·B·s·l·h²·(1 + s/6h + V/16lh) (``MEGATRON_96_SOURCE``)."""
    d, L, N, V, B = S.d_model, S.L, S.N, S.V, S.B
    if recompute:
        return 96 * B * L * N * d**2 * (1 + L / (6 * d) + V / (16 * N * d))
    return 72 * B * L * N * d**2 * (1 + L / (6 * d) + V / (12 * N * d))


def _single_stack(spec: Spec) -> None:
    if spec.family == "encoder-decoder":
        raise InputError(
            "the published formulas describe single-stack models; an encoder-decoder has two "
            "(compare its forward FLOPs with 'symtrans flops' instead)"
        )
    if not spec.has("V"):
        raise InputError(
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
    formula = kaplan_params_formula(_d_attn(spec))
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
    return closed_form(count(model, "flops", select) / tokens_per_step(spec))  # as flops.per_token: no cancel


def kaplan_forward(spec: Spec, mask: str = "full") -> Published:
    """Kaplan et al. 2020 Table 1: C_forward = 2N + 2 n_layer n_ctx d_attn, forward FLOPs
    per token without embeddings and logits.

    Exact special case: the engine's forward per token with the causal attention counted
    as half the square (``mask=half``: 2 x 2 x h x L/2 x d_k per layer) and the LM head
    left out; N counts the matmul weights of the layers (Kaplan neglects biases/norms).

    Raises:
        ValueError: for an encoder-decoder.
    """
    _single_stack(spec)
    formula = kaplan_forward_formula(_d_attn(spec))
    in_stack = lambda n: n.within(*STACKS)
    return Published(
        "kaplan-forward",
        "Kaplan 2020 C_forward = 2N + 2·n_layer·n_ctx·d_attn",
        "forward FLOPs per token",
        closed_form(formula),
        per_token(spec, "forward", mask=mask),
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


def six_nd(spec: Spec, D: sp.Expr | int = S.D, mask: str = "full") -> Published:
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
        run_flops(spec, D, mask=mask),
        closed_form(sp.expand(assumed)),
        (
            "P equals the weights that multiply activations (no untied embedding table, biases, "
            "norms or learned positions)",
            "attention-score FLOPs neglected (L small against d_model)",
            "backward = 2 x forward",
        ),
        "Kaplan et al. 2020 §2.1; Hoffmann et al. 2022 §3",
    )


def chinchilla(spec: Spec, embeddings: bool = True, mask: str = "full") -> Published:
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
        per_sequence(spec, "training", mask=mask),
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


def palm(spec: Spec, mask: str = "full") -> Published:
    """PaLM App. B: model FLOPs per token 6N + 12 n_layer H Q T (training, no
    recomputation), H heads of width Q, T = L tokens of context.

    Exact special case: P equals the matmul weights (as for 6ND) and full-square
    attention with d_v = d_k.

    Raises:
        ValueError: for an encoder-decoder.
    """
    _single_stack(spec)
    D = dims(spec)
    formula = palm_formula(parameters(spec), D.d_k)
    return Published(
        "palm",
        "PaLM App. B 6N + 12·n_layer·H·Q·T",
        "training FLOPs per token",
        closed_form(formula),
        per_token(spec, "training", mask=mask),
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


def megatron(spec: Spec, recompute: bool = False, mask: str = "full") -> Published:
    """Megatron-LM training FLOPs per step of B sequences of L tokens:
    72 B L N d^2 (1 + L/(6d) + V/(12 N d)), or with full activation recomputation
    96 B L N d^2 (1 + L/(6d) + V/(16 N d)) (d = d_model; the logits are not recomputed).

    Exact special case: d_ff = 4 d_model, h d_k = d_model, multi-head attention, an
    ungated FFN, full-square attention.

    Raises:
        ValueError: for an encoder-decoder.
    """
    _single_stack(spec)
    formula = megatron_formula(recompute)
    if recompute:
        name, src = "Megatron 96·B·L·N·d²·(1 + L/(6d) + V/(16·N·d))", MEGATRON_96_SOURCE
    else:
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
        flops_expr(spec, "training", mask=mask, recompute=rc),
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
    "recompute": "none",
    "description": (
        "each exact count is of the formula's own quantity (per token, per sequence, per step or per "
        "run, as named), under the flops convention (2 FLOPs per multiply-accumulate), the attention mask "
        "of --mask and no recomputation (megatron-recompute: full recomputation)"
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


def formulas(spec: Spec, D: sp.Expr | int = S.D, mask: str = "full") -> list[Published]:
    """Every published formula for ``spec`` (decoder-only or encoder-only), in FORMULAS order.

    ``mask``: how the exact count beside each formula counts attention scores (``flops
    --mask``; ``engine.conventions.MASK_MODES``).  Each formula's own special case (its
    assumed residual) keeps the mask the formula assumes.

    Raises:
        ValueError: for an encoder-decoder.
    """
    return [
        kaplan_params(spec),
        kaplan_forward(spec, mask),
        six_nd(spec, D, mask),
        chinchilla(spec, True, mask),
        chinchilla(spec, False, mask),
        palm(spec, mask),
        megatron(spec, False, mask),
        megatron(spec, True, mask),
    ]


@lru_cache(maxsize=256)
def _formulas(spec: Spec, mask: str = "full") -> tuple[tuple[Published, sp.Expr, sp.Expr], ...]:
    """``formulas(spec)`` with each residual and assumed residual, cached on the
    structural spec (closed forms depend on which sizes are present, not their values)."""
    return tuple((p, p.residual, p.assumed_residual) for p in formulas(spec, mask=mask))


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


def compare(spec: Spec, values: Mapping[str, int] | None = None, D: int | None = None, mask: str = "full") -> list[Row]:
    """Each published formula beside the engine's exact count for ``spec``.

    Args:
        spec: a decoder-only or encoder-only model.
        values: sizes, including the workload (B, L); defaults to the spec's with B = 1.
        D: training tokens for 6ND (defaults to one step's B*L tokens).
        mask: how the exact counts count attention scores (``flops --mask``): the
            ratios are against the count the user asked for.

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
        raise InputError("give the sequence length L (--seq-len)")
    if D is None:
        D = vals["B"] * vals["L"]
    if isinstance(D, bool) or not isinstance(D, int) or D <= 0:
        raise InputError(f"the token count D must be a positive integer, not {D!r}")
    vals["D"] = D
    rows = []
    for p, residual, assumed_residual in _formulas(spec.structure(), mask):
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
                residual,
                assumed_residual,
                p.assumptions,
                p.source,
            )
        )
    return rows


# ---------------------------------------------------------------------------------
# the identity catalogue


def residual(lhs, rhs) -> sp.Expr:
    """``lhs - rhs`` reduced to a canonical form: 0 exactly when the identity holds.

    Polynomials are expanded (DESIGN §3); rational functions are put over one
    denominator and cancelled; anything else (floor, ceiling) is simplified.

    Raises:
        TypeError: if a side is text (user text is never parsed here; use
            ``safe_parse.parse_constraint``) or not a number or SymPy expression.
    """
    sides = []
    for side in (lhs, rhs):
        if isinstance(side, str) or not isinstance(side, (int, sp.Basic)) or isinstance(side, bool):
            raise TypeError(f"assert_identity compares SymPy expressions or integers, not {type(side).__name__}")
        sides.append(sp.Integer(side) if isinstance(side, int) else side)
    r = sp.expand(sides[0] - sides[1])
    if r == 0:
        return r
    r2 = sp.cancel(sp.together(r))
    if r2 == 0:
        return r2
    if r2.has(sp.floor, sp.ceiling, sp.Min, sp.Max, sp.Piecewise):
        r3 = sp.simplify(r2)
        return r3
    return r2


def assert_identity(lhs, rhs, msg: str | None = None) -> None:
    """Assert that ``lhs == rhs`` symbolically (for any values of their symbols).

    Passes when the residual ``lhs - rhs`` reduces to 0 (see ``residual``).

    Raises:
        AssertionError: with a message showing the nonzero residual (expanded and
            factored), then both sides, prefixed by ``msg`` if given.
        TypeError: if a side is text or not an expression.
    """
    r = residual(lhs, rhs)
    if r == 0:
        return
    factored = sp.factor(r) if len(sp.sstr(r)) < 2000 else r
    head = f"{msg}: " if msg else ""
    lines = [f"{head}identity does not hold; residual lhs - rhs = {sp.sstr(r)} (should be 0)"]
    if factored != r:
        lines.append(f"  residual, factored: {sp.sstr(factored)}")
    lines.append(f"  lhs = {sp.sstr(lhs)}")
    lines.append(f"  rhs = {sp.sstr(rhs)}")
    raise AssertionError("\n".join(lines))


@dataclass(frozen=True)
class Identity:
    """One named identity.

    Attributes:
        name: the catalogue key, e.g. ``"megatron"``.
        title: one line for reports.
        lhs: the engine's side (derived from the Cost tree / ``flops``).
        rhs: the published formula, as printed (translated to symtrans symbols).
        assumptions: under which the identity is exact.
        source: the paper and section of ``rhs``.
        note: what the identity shows.
    """

    name: str
    title: str
    lhs: sp.Expr
    rhs: sp.Expr
    assumptions: str
    source: str
    note: str = ""
    lhs_name: str = ""

    def residual(self) -> sp.Expr:
        return residual(self.lhs, self.rhs)

    def holds(self) -> bool:
        """True when the residual is 0."""
        return self.residual() == 0

    def check(self) -> None:
        """``assert_identity`` with this identity's name in the message."""
        assert_identity(self.lhs, self.rhs, self.name)

    def latex(self) -> str:
        """The identity as a LaTeX display: lhs (closed form) = rhs."""
        from symtrans.engine.simplify import closed_form

        left = sp.latex(closed_form(self.lhs), symbol_names=S.LATEX_NAMES)
        right = sp.latex(self.rhs, symbol_names=S.LATEX_NAMES)
        parts = [self.lhs_name] if self.lhs_name else []
        if left != right or not parts:
            parts.append(left)
        parts.append(right)
        return " = ".join(parts)

    def markdown(self) -> str:
        """A Markdown paragraph: title, the identity, assumptions, source, status."""
        status = "holds (residual 0)" if self.holds() else f"does NOT hold: residual ${sp.latex(self.residual())}$"
        return (
            f"**{self.title}** (`{self.name}`)\n\n$$ {self.latex()} $$\n\n"
            f"- assumptions: {self.assumptions}\n- source: {self.source}\n"
            + (f"- {self.note}\n" if self.note else "")
            + f"- {status}\n"
        )

    def _repr_latex_(self) -> str:
        return f"$$ {self.latex()} $$"

    def _repr_markdown_(self) -> str:
        return self.markdown()


# ---------------------------------------------------------------------------------
# the catalogue


def _decoder(**options):
    from symtrans.engine.spec import Spec

    sizes = options.pop("sizes", dict(d_model=768, d_ff=3072, h=12, N=12, V=50257, L=1024))
    base = dict(family="decoder-only", sizes=sizes, positional="none", norm_position="pre", tie_output=True)
    base.update(options)
    return Spec(**base)


def _per_token(e: sp.Expr) -> sp.Expr:
    return sp.expand(e / (S.B * S.L))


def _kaplan_params() -> Identity:
    from symtrans.engine.architectures import build

    spec = _decoder(bias=False, norm="none")
    stack = next(build(spec).blocks_of(Block.DECODER)).params
    return Identity(
        "kaplan-params",
        "Kaplan's non-embedding parameter count: N ≈ 12·n_layer·d_model²",
        stack.xreplace({S.d_ff: 4 * S.d_model}),
        sp.expand(kaplan_params_formula(S.d_model).xreplace({S.d_ff: 4 * S.d_model})),
        "decoder-only stack without embeddings or head; d_ff = 4·d_model; h·d_k = d_model; no biases, no norms "
        "(with them the residual is the biases and norm scales, sub-leading in d_model)",
        "Kaplan et al. 2020, §2.1 and Table 1: N = 2·d_model·n_layer·(2·d_attn + d_ff) ≈ 12·n_layer·d_model²",
        "n_layer is symtrans's N; Kaplan's N (parameters) is the left side.",
        r"N_{\text{Kaplan}}",
    )


def _decoder_minus_encoder() -> Identity:
    from symtrans.engine.architectures import build
    from symtrans.engine.spec import Spec

    spec = Spec(
        family="encoder-decoder",
        sizes=dict(d_model=512, d_ff=2048, h=8, N=6, V=37000),
        positional="sinusoidal",
        final_norm=True,
    )
    model = build(spec)
    dec = next(next(model.blocks_of(Block.DECODER)).blocks_of(Block.LAYER))
    enc = next(next(model.blocks_of(Block.ENCODER)).blocks_of(Block.LAYER))
    d = S.d_model
    # Written out from the paper, not read from the tree: four d_model x d_model maps with
    # biases (W_Q, W_K, W_V, W_O with h*d_k = d_model) and one LayerNorm (γ and β).
    cross_attention_and_norm = 4 * (d * d + d) + 2 * d
    return Identity(
        "decoder-minus-encoder",
        "Decoder layer − encoder layer = cross-attention + its norm",
        dec.params_each - enc.params_each,
        cross_attention_and_norm,
        "encoder-decoder with biases and LayerNorm (torch.nn.Transformer); the same d_model, d_ff and h in both stacks",
        "Vaswani et al. 2017 §3.1: the decoder inserts a third sub-layer, multi-head attention over the encoder "
        "output, with its residual connection and layer normalisation",
        "cross-attention + norm = 4·d_model² + 4·d_model + 2·d_model here (four d_model×d_model maps with biases, γ and β).",
        r"P_{\text{decoder layer}} - P_{\text{encoder layer}}",
    )


def _palm() -> Identity:
    from symtrans.accounting.flops import flops_expr
    from symtrans.engine.architectures import build

    spec = _decoder(
        sizes=dict(d_model=4096, d_ff=16384, h=16, d_k=256, N=32, V=256000, L=2048),
        bias=False,
        norm="none",
        ffn="swiglu",
        positional="rotary",
        tie_output=True,
    )
    params = build(spec).params
    lhs = _per_token(flops_expr(spec, "training", "flops", "full"))
    return Identity(
        "palm",
        "PaLM's training FLOPs per token: 6·N_params + 12·N·h·d_k·L",
        lhs,
        palm_formula(params, S.d_k),
        "decoder-only; tied input and output embedding (counted once, its matmul is the head); no biases and "
        "no norm parameters (they are not matmul weights); full attention square (no causal saving); "
        "training = forward + backward = 3 x forward; no recomputation",
        "Chowdhery et al. 2022 (PaLM), App. B: 6N + 12LHQT FLOPs per token (their L layers, H heads, Q head "
        "width, T sequence length)",
        "PaLM's L, H, Q, T are symtrans's N, h, d_k, L; N_params is the model's parameter count.",
        r"C_{\text{train}} / (B L)",
    )


def _megatron(recompute: str = "none") -> Identity:
    from symtrans.accounting.flops import flops_expr

    spec = _decoder(sizes=dict(d_model=1024, d_ff=4096, h=16, N=24, V=50257, L=1024), bias=True)
    lhs = flops_expr(spec, "training", "flops", "full", recompute).xreplace({S.d_ff: 4 * S.d_model})
    rhs = megatron_formula(recompute == "full")
    if recompute == "full":
        name, title = (
            "megatron-recompute",
            "Megatron's training FLOPs with full recomputation: 96·B·L·N·d²·(1 + L/(6d) + V/(16·N·d))",
        )
        extra = "; full activation recomputation (one extra forward pass of the layers, not the logits)"
    else:
        name, title = "megatron", "Megatron's training FLOPs: 72·B·L·N·d_model²·(1 + L/(6·d_model) + V/(12·N·d_model))"
        extra = "; no recomputation"
    return Identity(
        name,
        title,
        lhs,
        rhs,
        "decoder-only (GPT); d_ff = 4·d_model; h·d_k = d_model; matmul FLOPs only (biases and norms cost none); "
        "full attention square; training = 3 x forward" + extra,
        MEGATRON_96_SOURCE if recompute == "full" else MEGATRON_72_SOURCE,
        "Megatron's l, h, s are symtrans's N, d_model, L.",
        r"C_{\text{train}}",
    )


def _kaplan_forward() -> Identity:
    from symtrans.accounting.flops import count
    from symtrans.engine.architectures import Workload, build

    spec = _decoder(bias=False, norm="none")
    model = build(spec, Workload(mask="half"))
    stack = count(model, "flops", lambda n: n.within(Block.DECODER))
    return Identity(
        "kaplan-forward",
        "Kaplan's forward FLOPs per token: C_forward = 2·N_params + 2·n_layer·n_ctx·d_attn",
        _per_token(stack),
        kaplan_forward_formula(S.d_model),
        "the layer stack (no embeddings, no logits: Kaplan's non-embedding count); h·d_k = d_attn = d_model; "
        "the causal attention counted as half the square (Kaplan's 'Mask' row)",
        "Kaplan et al. 2020, Table 1 and §2.1",
        "Kaplan's N = 2·d_model·n_layer·(2·d_attn + d_ff), n_layer = N, n_ctx = L.",
        r"C_{\text{forward}} / (B L)",
    )


def _crossover() -> Identity:
    from symtrans.engine.architectures import build
    from symtrans.engine.cost import ATTENTION, DENSE

    spec = _decoder(sizes=dict(d_model=768, d_ff=3072, h=12, N=12, V=50257, L=1024), ffn="mlp")
    layer = next(build(spec).blocks_of(Block.LAYER))
    attn = sp.Add(*[s.flops for _, m, s in layer.walk() if s.kind == ATTENTION])
    dense = sp.Add(*[s.flops for _, m, s in layer.walk() if s.kind == DENSE])
    roots = [r for r in sp.solve(sp.expand(attn - dense), S.L) if r != 0]
    if len(roots) != 1:  # pragma: no cover - a change in the components would show here
        raise RuntimeError(f"expected one crossover length, found {roots}")
    return Identity(
        "crossover",
        "Sequence length where the attention score matmuls equal the weight matmuls: L = 2·d_model + d_ff",
        roots[0],
        2 * S.d_model + S.d_ff,
        "one ungated (two-map) decoder layer; h·d_k = d_model; full attention square; matmul FLOPs: "
        "QK^T and scores·V (4·B·L²·d_model) against the Q, K, V, O and FFN maps (8·B·L·d_model² + 4·B·L·d_model·d_ff)",
        "arithmetic on Vaswani et al. 2017 §3.2 (attention) and §3.3 (FFN); PaLM App. B and Kaplan §2.1 state the "
        "same comparison per token",
        "at d_ff = 4·d_model it is L = 6·d_model (4608 at d_model 768).",
        r"L_{\times}",
    )


_BUILDERS = {
    "kaplan-params": _kaplan_params,
    "kaplan-forward": _kaplan_forward,
    "decoder-minus-encoder": _decoder_minus_encoder,
    "palm": _palm,
    "megatron": _megatron,
    "megatron-recompute": lambda: _megatron("full"),
    "crossover": _crossover,
}
NAMES = tuple(_BUILDERS)


@lru_cache(maxsize=None)
def get(name: str) -> Identity:
    """The identity called ``name`` (see ``NAMES``).

    Raises:
        KeyError: naming the known identities.
    """
    try:
        builder = _BUILDERS[name]
    except KeyError:
        raise UnknownNameError(f"unknown identity {name!r}; known: {', '.join(NAMES)}") from None
    return builder()


def catalogue() -> list[Identity]:
    """Every identity, in catalogue order."""
    return [get(n) for n in NAMES]
