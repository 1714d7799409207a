"""A catalogue of named identities between the engine's closed forms and published formulas.

Each ``Identity`` pairs a left side derived by the engine (Cost trees, ``flops``) with a
right side as a paper prints it, under stated assumptions; ``holds()`` proves it
symbolically (the residual ``lhs - rhs`` expands to 0), and ``latex()``/``markdown()``
print it for reports.  ``assert_identity`` is the public checker for users' own tests.

Notation: symtrans's N is layers and L sequence length.  Kaplan et al. 2020 write N for
parameters, n_layer for layers and n_ctx for the context; PaLM writes L for layers, H
heads, Q head width, T sequence length; Megatron writes l layers, h width, s sequence,
B batch.  They are translated here, at the boundary (DESIGN §1).

Units: parameters, or FLOPs at 2 per multiply-accumulate (matrix products only).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from symtrans.accounting.published import MEGATRON_72_SOURCE, MEGATRON_96_SOURCE
from symtrans.engine import symbols as S
from symtrans.engine.roles import Block


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
        12 * S.N * S.d_model**2,
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
        6 * params + 12 * S.N * S.h * S.d_k * S.L,
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
    d, n, b, l, v = S.d_model, S.N, S.B, S.L, S.V
    if recompute == "full":
        rhs = 96 * b * l * n * d**2 * (1 + l / (6 * d) + v / (16 * n * d))
        name, title = (
            "megatron-recompute",
            "Megatron's training FLOPs with full recomputation: 96·B·L·N·d²·(1 + L/(6d) + V/(16·N·d))",
        )
        extra = "; full activation recomputation (one extra forward pass of the layers, not the logits)"
    else:
        rhs = 72 * b * l * n * d**2 * (1 + l / (6 * d) + v / (12 * n * d))
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
    d, n, l = S.d_model, S.N, S.L
    n_kaplan = 2 * d * n * (2 * d + S.d_ff)
    return Identity(
        "kaplan-forward",
        "Kaplan's forward FLOPs per token: C_forward = 2·N_params + 2·n_layer·n_ctx·d_attn",
        _per_token(stack),
        2 * n_kaplan + 2 * n * l * d,
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
        raise KeyError(f"unknown identity {name!r}; known: {', '.join(NAMES)}") from None
    return builder()


def catalogue() -> list[Identity]:
    """Every identity, in catalogue order."""
    return [get(n) for n in NAMES]
