"""FLOP conventions as data (DESIGN §2).

People who quote FLOPs disagree on five choices; symtrans makes each one a named,
documented value instead of a code branch:

* what one multiply-accumulate costs: 2 FLOPs (``flops``, the default) or 1 MAC
  (``macs``, the fvcore / ptflops convention);
* whether element-wise work (softmax, norms, activations, bias and residual adds) is
  counted, and at how many operations per element (``all-ops``; ``PER_ELEMENT`` states
  and cites each cost);
* how a causal mask counts the attention scores (``MASK_MODES``: the full square, the
  exact lower triangle, or half the square);
* the backward multiplier (``BACKWARD_MULTIPLIER`` = 2: gradients with respect to the
  inputs and to the weights, each one matmul of the forward's size);
* activation recomputation (``RECOMPUTE``: none, selective, full).

Fixed for every convention: an embedding lookup costs 0 FLOPs (it is a gather, not a
matmul) except under the Chinchilla App. F conventions, which count it as a one-hot
matmul because the paper does; the LM head matmul is always counted, tied or not
(except ``chinchilla-nonembedding``, which drops it as Table A4's ratios require);
MoE feed-forward FLOPs are those of the k active experts plus the router.

This module holds data only (no SymPy trees); ``symtrans.flops`` applies it.
"""

from __future__ import annotations

from dataclasses import dataclass

from symtrans.base.errors import InputError
from symtrans.engine.roles import Role


@dataclass(frozen=True)
class OpCost:
    """Operations per element of one element-wise operation (all-ops convention).

    Attributes:
        cost: FLOPs per element (an exact integer).
        what: the operations counted.
        source: where the figure comes from.
    """

    cost: int
    what: str
    source: str


# Per-element costs used by the components' ``Step.elementwise`` terms.  Only the
# ``all-ops`` convention (and, for softmax alone, the Chinchilla conventions) counts them.
PER_ELEMENT: dict[str, OpCost] = {
    "softmax": OpCost(
        3,
        "exp, sum and divide, per attention score",
        "Hoffmann et al. 2022 (Chinchilla) App. F: softmax = 3 x num_heads x seq_len^2 per layer",
    ),
    "scale": OpCost(1, "the 1/sqrt(d_k) multiply, per attention score", "Vaswani et al. 2017 eq. 1"),
    "layernorm": OpCost(
        5,
        "mean (sum), variance (square and sum), shift by β, scale by γ, per element",
        "Clark et al. 2020 (ELECTRA) flops_computation.py, LAYER_NORM_FLOPS = 5",
    ),
    "rmsnorm": OpCost(
        4,
        "square, sum, multiply by 1/rms, scale by γ, per element",
        "Zhang & Sennrich 2019 eq. 4 (no mean, no shift: one less than LayerNorm's 5)",
    ),
    "activation": OpCost(
        1,
        "one operation per element of the d_ff activation (ReLU's max)",
        "Vaswani et al. 2017 §3.3 (ReLU); GELU would cost more (ELECTRA counts 8) but the spec does "
        "not name the activation function, so one is counted",
    ),
    "gate": OpCost(
        1,
        "the element-wise product of gate and up projections, per d_ff element",
        "Shazeer 2020 (GLU variants), (act(xW) * xV)",
    ),
    "bias": OpCost(1, "one add per output element", "Vaswani et al. 2017 §3.3, xW + b"),
    "residual": OpCost(1, "one add per d_model element, per sublayer", "Vaswani et al. 2017 §3.1, x + Sublayer(x)"),
}


def per_element(op: str) -> int:
    """FLOPs per element of element-wise operation ``op`` (see ``PER_ELEMENT``).

    Raises:
        ValueError: naming the known operations, for an unknown ``op``.
    """
    try:
        return PER_ELEMENT[op].cost
    except KeyError:
        raise InputError(f"unknown element-wise operation {op!r}; known: {', '.join(PER_ELEMENT)}") from None


@dataclass(frozen=True)
class Convention:
    """One named way of counting FLOPs.

    Attributes:
        name: the CLI name (``--convention``).
        flops_per_mac: FLOPs per multiply-accumulate of a matrix product (2, or 1 for MACs).
        elementwise: count the components' element-wise terms (``PER_ELEMENT``).
        matmul_roles: if set, only matmul Steps with these roles count (a paper's term list).
        elementwise_roles: if set, only element-wise terms of Steps with these roles count
            (bias vectors never: their role is the map's).
        embedding_matmul: count each token-embedding lookup as a one-hot matmul,
            2 x V x d_model FLOPs per token (Chinchilla App. F), instead of 0.
        logits: count the LM head matmul (2 x d_model x V per token).
        unit: the unit of the count (``FLOP`` or ``MAC``).
        description: one sentence for reports.
        source: who uses it.
    """

    name: str
    flops_per_mac: int
    elementwise: bool
    description: str
    source: str
    matmul_roles: frozenset[Role] | None = None
    elementwise_roles: frozenset[Role] | None = None
    embedding_matmul: bool = False
    logits: bool = True
    unit: str = "FLOP"


# Hoffmann et al. 2022 App. F's term list, as the roles of the steps that compute it:
# Q/K/V projections, Q K^T, softmax, softmax @ V, the output projection and the two (or,
# for gated FFNs, three) FFN maps; router/experts for MoE layers; the logits.
_APP_F_MATMULS = frozenset(
    {
        Role.Q_PROJ,
        Role.K_PROJ,
        Role.V_PROJ,
        Role.ATTENTION_SCORES,
        Role.ATTENTION_VALUES,
        Role.O_PROJ,
        Role.FFN_UP,
        Role.FFN_GATE,
        Role.FFN_DOWN,
        Role.ROUTER,
        Role.EXPERTS,
        Role.LM_HEAD,
        # --- types-moe: MLA's projections are its Q/K/V maps
        Role.Q_DOWN,
        Role.Q_UP,
        Role.KV_DOWN,
        Role.KV_UP,
    }
)

CONVENTIONS: dict[str, Convention] = {
    c.name: c
    for c in (
        Convention(
            "flops",
            2,
            False,
            "2 FLOPs per multiply-accumulate, matrix products only (bias adds, softmax, norms and activations "
            "not counted; embedding lookups cost 0; the LM head is counted, tied or not)",
            "Kaplan et al. 2020 Table 1; Narayanan et al. 2021 (Megatron) §5.1; Chowdhery et al. 2022 (PaLM) App. B; "
            "nanoGPT estimate_mfu; torch.utils.flop_counter",
        ),
        Convention(
            "macs",
            1,
            False,
            "1 per multiply-accumulate (MAC), matrix products only: half the 'flops' count",
            "fvcore FlopCountAnalysis (counts one per MAC despite its name); ptflops get_model_complexity_info",
            unit="MAC",
        ),
        Convention(
            "all-ops",
            2,
            True,
            "2 FLOPs per multiply-accumulate plus every element-wise operation at the per-element costs of "
            "PER_ELEMENT (softmax 3, attention scale 1, LayerNorm 5, RMSNorm 4, activation 1, GLU product 1, "
            "bias add 1, residual add 1)",
            "Hoffmann et al. 2022 (Chinchilla) App. F (softmax); Clark et al. 2020 (ELECTRA) flops_computation.py (norms)",
        ),
        Convention(
            "chinchilla",
            2,
            True,
            "exactly the term list of Chinchilla App. F: embeddings as a one-hot matmul (2 x L x V x d_model), "
            "Q/K/V/output projections, Q K^T, softmax at 3 per score, softmax @ V, the FFN maps and the logits; "
            "nothing else (no norms, biases, residuals, position projections)",
            "Hoffmann et al. 2022, App. F",
            matmul_roles=_APP_F_MATMULS,
            elementwise_roles=frozenset({Role.SOFTMAX}),
            embedding_matmul=True,
        ),
        Convention(
            "chinchilla-nonembedding",
            2,
            True,
            "Chinchilla App. F's term list without the embeddings and the logits: the convention under which "
            "the FLOPs ratios of Table A4 reproduce",
            "Hoffmann et al. 2022, App. F and Table A4",
            matmul_roles=_APP_F_MATMULS - {Role.LM_HEAD},
            elementwise_roles=frozenset({Role.SOFTMAX}),
            logits=False,
        ),
    )
}


def convention(name: str) -> Convention:
    """The convention called ``name``.

    Raises:
        ValueError: one sentence listing the valid names.
    """
    try:
        return CONVENTIONS[name]
    except (KeyError, TypeError):
        raise InputError(f"unknown convention {name!r}; valid conventions: {', '.join(CONVENTIONS)}") from None


@dataclass(frozen=True)
class Choice:
    """A named option with its meaning and source (mask modes, recomputation, modes)."""

    name: str
    description: str
    source: str


def _table(*choices: Choice) -> dict[str, Choice]:
    return {c.name: c for c in choices}


# How causal self-attention's query-key pairs are counted (components.attention_pairs).
MASK_MODES: dict[str, Choice] = _table(
    Choice(
        "full",
        "the full L x L square of scores on every layer, windowed or not, as eager and SDPA attention compute "
        "it before masking",
        "Chowdhery et al. 2022 (PaLM) App. B; Narayanan et al. 2021 (Megatron); nanoGPT",
    ),
    Choice(
        "causal",
        "the exact lower triangle: L(L+1)/2 query-key pairs per head",
        "the causal mask of Vaswani et al. 2017 §3.2.3, counted exactly",
    ),
    Choice("half", "half the square, L^2/2 pairs per head", "Kaplan et al. 2020 Table 1 and §2.1 (causal halving)"),
    Choice(
        "window",
        "the full square, but each sliding-window layer only its band of L x min(L, w) pairs, as a kernel that "
        "skips the keys outside the window computes it",
        "FlashAttention-2 window_size (Dao 2023); Mistral's rolling buffer cache (Jiang et al. 2023 §2)",
    ),
)

# The backward pass of a matmul Y = X W is two matmuls of the same size: dX = dY W^T and
# dW = X^T dY.  The same multiplier is applied to counted element-wise work, as App. F does.
BACKWARD_MULTIPLIER = 2
BACKWARD_SOURCE = (
    "Kaplan et al. 2020 §2.1; Hoffmann et al. 2022 App. F; Narayanan et al. 2021 §5.1: "
    "backward = 2 x forward (gradients with respect to inputs and to weights)"
)

RECOMPUTE: dict[str, Choice] = _table(
    Choice("none", "activations are stored; training = forward + backward = 3 x forward", "Narayanan et al. 2021 §5.1"),
    Choice(
        "selective",
        "the attention-score part (Q K^T, softmax, softmax @ V) is recomputed once in the backward pass",
        "Korthikanti et al. 2022 §4.2 (selective activation recomputation)",
    ),
    Choice(
        "full",
        "one extra forward pass of the layers (not the logits) before the backward pass",
        "Korthikanti et al. 2022 §4.1, §6 (96 = 4 x 24 B L N d_model^2 with the logits' 6 B L d_model V unchanged)",
    ),
)

MODES: dict[str, Choice] = _table(
    Choice("forward", "one forward pass", "—"),
    Choice("backward", "the backward pass: 2 x forward per counted operation", BACKWARD_SOURCE),
    Choice("training", "forward + backward (+ recomputation)", BACKWARD_SOURCE),
    Choice(
        "prefill",
        "inference: one forward pass over the L_pre prompt tokens, logits for the last one",
        "Pope et al. 2022 (Efficiently scaling Transformer inference) §2",
    ),
    Choice(
        "decode",
        "inference: T_gen tokens one at a time with a KV cache, token t attending to L_pre + t keys",
        "Pope et al. 2022 §2; Kaplan et al. 2020 Table 1 (per-token cost with context n_ctx)",
    ),
)

# The modes of one step of B sequences (``flops.flops_expr``); prefill and decode are inference.
TRAINING_MODES = ("forward", "backward", "training")


def choice(table: dict[str, Choice], name: str, what: str) -> Choice:
    """``table[name]``, or ValueError listing the valid names of ``what``."""
    try:
        return table[name]
    except (KeyError, TypeError):
        raise InputError(f"unknown {what} {name!r}; valid {what}s: {', '.join(table)}") from None
