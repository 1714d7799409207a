"""Training and inference FLOPs under a named convention, as closed forms.

One derivation, many conventions: the components' Cost tree (``architectures.build``)
holds every matmul (``Step.kind`` dense or attention, forward FLOPs at 2 per
multiply-accumulate) and every element-wise term (``Step.elementwise``); a
``conventions.Convention`` decides which of them count and at what price.  The modes:

* ``forward``: one forward pass of B sequences of L tokens (L_src/L_tgt for an
  encoder-decoder);
* ``backward``: ``BACKWARD_MULTIPLIER`` (2) x forward: per matmul, the gradients with
  respect to the inputs and to the weights; 0 for a product no gradient reaches
  (``roles.NO_GRAD_ROLES``, ``Step.grad``: the lightning indexers, a DeepSeek-V4 compressor
  before its first window closes), 1 x forward for a map of the raw input (``Step.input_grad``);
* ``training``: forward + backward, plus the recomputation the ``recompute`` option asks
  for (``full``: one more forward pass of the layers, not the logits; ``selective``: one
  more forward of the attention-score terms, Korthikanti et al. 2022 §4);
* ``prefill_expr``: inference forward over L_pre prompt tokens, logits for the last one;
* ``decode_expr``: T_gen tokens, one at a time with a KV cache: step t (1..T_gen) runs
  one token at position L_pre + t whose query attends to all L_pre + t cached keys
  (itself included), with its logits; the sum over t is closed with the sum-of-powers
  formula (``power_sum``: sum_{t=1}^{n} t = n(n+1)/2, ...), term by term.

``component_flops`` splits ``flops_expr`` by component under the same options (a layer
stack's share includes its recomputation), so the components add up to the total.

Units: FLOPs (or MACs under ``macs``).  Everything returned is an exact SymPy
expression; ``evaluate.exact`` substitutes integers without rounding.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.engine import mixer_rules
from symtrans.engine import symbols as S
from symtrans.engine.architectures import Workload, build
from symtrans.engine.conventions import (  # noqa: F401 (TRAINING_MODES re-exported)
    BACKWARD_MULTIPLIER,
    MASK_MODES,
    RECOMPUTE,
    TRAINING_MODES,
    Convention,
    choice,
)
from symtrans.engine.conventions import convention as get_convention
from symtrans.engine.cost import ATTENTION, DENSE, Cost, Node, Step
from symtrans.engine.roles import FRONT_END_ROLES, HEADS, NO_GRAD_ROLES, STACKS, Block, Role
from symtrans.engine.spec import Spec


def _step_cost(step: Step, conv: Convention) -> sp.Expr:
    """What one Step costs under ``conv`` (FLOPs, or MACs), per instance."""
    total = sp.Integer(0)
    if step.kind in (DENSE, ATTENTION) and (conv.matmul_roles is None or step.role in conv.matmul_roles):
        total += step.flops * sp.Rational(conv.flops_per_mac, 2)
    if conv.elementwise and (conv.elementwise_roles is None or (step.role in conv.elementwise_roles and not step.bias)):
        total += step.elementwise
    return total


def count(model: Cost, conv: Convention | str = "flops", select=None) -> sp.Expr:
    """Forward cost of the Cost tree ``model`` under convention ``conv``.

    Args:
        model: a built tree (``architectures.build``).
        conv: a Convention or its name.
        select: optional predicate ``(node) -> bool`` on ``Cost.nodes`` restricting the steps.

    Returns the sum over steps of multiplicity x cost (FLOPs or MACs), unsimplified.
    The LM/MLM head is skipped when the convention leaves out the logits.

    Raises:
        ValueError: for an unknown convention name.
    """
    conv = get_convention(conv) if isinstance(conv, str) else conv
    return _sum_steps(model.nodes(), conv, select)


def _sum_steps(nodes, conv: Convention, select=None, share=None) -> sp.Expr:
    """``count`` over ``Cost.nodes`` (blocks from the model's root, multiplicity, step),
    each step's cost times ``share(node)`` where given."""
    terms = []
    for node in nodes:
        if not conv.logits and node.within(*HEADS):
            continue
        if select is not None and not select(node):
            continue
        c = _step_cost(node.step, conv)
        if c != 0:
            terms.append(node.multiplicity * c * (1 if share is None else share(node)))
    return sp.Add(*terms)


def _no_grad(node: Node) -> sp.Expr:
    """The share of a step's forward that no gradient flows back through: 1 for the
    ``NO_GRAD_ROLES``, else 1 - ``Step.grad`` (0 for most steps)."""
    return sp.Integer(1) if node.step.role in NO_GRAD_ROLES else 1 - node.step.grad


def _embedding_lookups(spec: Spec, model: Cost, wl: Workload, conv: Convention) -> sp.Expr:
    """Chinchilla App. F's embedding term, 2 x tokens x V x width (0 for other conventions),
    summed over the token tables of the tree ``model`` (``_lookup_cost``; none for a
    pixel or mel-frame front end), with the token counts of ``wl``."""
    if not conv.embedding_matmul:
        return sp.Integer(0)
    tables = [n for n in model.nodes() if n.step.role == Role.TOKEN_EMBEDDING]
    return sp.Add(*[n.multiplicity * _lookup_cost(spec, wl, conv, n) for n in tables])


_NO_MODE = object()  # prefill and decode take no training mode


def _check(mode, mask: str, recompute: str) -> None:
    if mode is not _NO_MODE and (not isinstance(mode, str) or mode not in TRAINING_MODES):  # None too
        raise InputError(
            f"unknown mode {mode!r}; valid modes: {', '.join(TRAINING_MODES)} "
            "(prefill and decode: prefill_expr, decode_expr)"
        )
    choice(MASK_MODES, mask, "mask")
    choice(RECOMPUTE, recompute, "recompute option")


def _in_stack(node: Node) -> bool:
    return node.within(*STACKS)


def _attention_scores(node: Node) -> bool:
    return _in_stack(node) and (node.step.kind == ATTENTION or node.step.role == Role.SOFTMAX)


def forward_expr(spec: Spec, convention: str = "flops", mask: str = "full") -> sp.Expr:
    """Forward FLOPs of B sequences (symbols B, L; L_src, L_tgt for encoder-decoders).

    Raises:
        ValueError: unknown convention or mask.
    """
    return flops_expr(spec, "forward", convention, mask)


def flops_expr(
    spec: Spec, mode: str = "forward", convention: str = "flops", mask: str = "full", recompute: str = "none"
) -> sp.Expr:
    """FLOPs of one step of B sequences, as a closed form in B and L (L_src/L_tgt).

    Args:
        spec: the model.
        mode: ``forward`` | ``backward`` (2 x forward) | ``training`` (forward + backward
            + recomputation).
        convention: a name of ``conventions.CONVENTIONS`` (``flops``, ``macs``,
            ``all-ops``, ``chinchilla``, ``chinchilla-nonembedding``).
        mask: ``full`` | ``causal`` | ``half``: how causal self-attention counts.
        recompute: ``none`` | ``selective`` | ``full``; only ``training`` is affected.

    Returns FLOPs (MACs under ``macs``), simplified by ``cost.closed_form``.
    Sources: Kaplan et al. 2020 §2.1 and Narayanan et al. 2021 §5.1 (backward = 2 x
    forward); Korthikanti et al. 2022 §4 (recomputation).

    Raises:
        ValueError: unknown mode, convention, mask or recompute option, each message
            listing the valid ones.

    The closed form depends only on ``spec.structure()``; it is cached on it.
    """
    spec.check_workload(
        v4_counted=mixer_rules.v4_flops(spec, mode, convention, mask, recompute)
    )  # per-layer patterns refused
    return _flops_expr(spec.structure(), mode, convention, mask, recompute)


@lru_cache(maxsize=512)
def _flops_expr(spec: Spec, mode: str, convention: str, mask: str, recompute: str) -> sp.Expr:
    from symtrans.engine.simplify import closed_form

    return closed_form(_flops_sum(spec, mode, convention, mask, recompute))


def flops_sum(
    spec: Spec, mode: str = "forward", convention: str = "flops", mask: str = "full", recompute: str = "none"
) -> sp.Expr:
    """``flops_expr`` before simplification: the sum over the steps, equal to the closed
    form but not expanded or grouped.  For code that only evaluates it (a sweep), which
    need not pay for the simplification.

    Raises:
        ValueError: as ``flops_expr``.
    """
    return _flops_sum(spec.structure(), mode, convention, mask, recompute)


@lru_cache(maxsize=512)
def _flops_sum(spec: Spec, mode: str, convention: str, mask: str, recompute: str) -> sp.Expr:
    _check(mode, mask, recompute)
    conv = get_convention(convention)
    wl = Workload(mask=mask)
    model = build(spec, wl)
    return _mode_cost(spec, wl, conv, mode, recompute, list(model.nodes()))


def _lookup_cost(spec: Spec, wl: Workload, conv: Convention, node: Node) -> sp.Expr:
    """Chinchilla App. F's one-hot matmul for the token-embedding step ``node``:
    2 x tokens x V x width (x flops_per_mac / 2).  Tokens: B*L; for an encoder-decoder
    B*L_src for an encoder table, B*L_tgt for a decoder table and B*(L_src + L_tgt) for
    a table both share.  Summed over the tree this is ``_embedding_lookups``."""
    table = node.step.matrices[0]  # V (or a target vocabulary of its own, Marian) x width
    rows, width = table.rows, table.cols
    if spec.family != "encoder-decoder":
        tokens = wl.batch * wl.seq
    elif node.within(Block.ENCODER_EMBEDDINGS):
        tokens = wl.batch * wl.src
    elif node.within(Block.DECODER_EMBEDDINGS):
        tokens = wl.batch * wl.tgt
    else:
        tokens = wl.batch * (wl.src + wl.tgt)
    return 2 * tokens * rows * width * sp.Rational(conv.flops_per_mac, 2)


def _mode_cost(spec: Spec, wl: Workload, conv: Convention, mode: str, recompute: str, walked: list) -> sp.Expr:
    """FLOPs of the steps ``walked`` (``Cost.nodes``, blocks from the model's root) under ``mode``: forward (with the embedding lookups of the
    Chinchilla conventions), backward = 2 x forward, training = 3 x forward plus the
    recomputation of the selected steps (``full``: the layer stacks; ``selective``: their
    attention scores).  Applied to the whole tree it is ``flops_expr``; applied to one
    component it is that component's share, so the shares add up to the total."""
    fwd = _sum_steps(walked, conv)
    if conv.embedding_matmul:
        fwd += sp.Add(
            *[n.multiplicity * _lookup_cost(spec, wl, conv, n) for n in walked if n.step.role == Role.TOKEN_EMBEDDING]
        )
    if mode == "forward":
        return fwd
    # A product nothing reads gets no gradient: forward FLOPs only (DeBERTa's share_att_key
    # projects the relative table with both W_Q and W_K even when one term is off).  A map of
    # the raw input (a convolutional front end on pixels or mel frames) has no input gradient
    # to compute: its backward is the weight gradient alone, 1 x its forward.
    # The DSA indexer (no_grad) and DeepSeek-V4's indexer (integer top-k) and, before a window
    # of m tokens closes, its compressors (``Step.grad``) get no gradient either.
    dead = _sum_steps(walked, conv, lambda n: _no_grad(n) != 0, _no_grad)
    bwd = BACKWARD_MULTIPLIER * (fwd - dead) - _sum_steps(walked, conv, lambda n: not n.step.input_grad)
    if mode == "backward":
        return bwd
    extra = sp.Integer(0)
    if recompute == "full":
        extra = _sum_steps(walked, conv, _in_stack)
    elif recompute == "selective":
        extra = _sum_steps(walked, conv, _attention_scores)
    return fwd + bwd + extra


@dataclass(frozen=True)
class ComponentFlops:
    """One component's share of ``flops_expr`` (closed forms in the sizes and B, L).

    Attributes:
        name: the component (``decoder``, ``decoder layer``, ``LM head``...).
        depth: 0 for a top-level component, 1 for its children.
        count: instances (its multiplicity times its parents'), e.g. N layers.
        each: FLOPs (MACs under ``macs``) of one instance under the mode, recomputation included.
        total: count x each.
    """

    name: str
    depth: int
    count: sp.Expr
    each: sp.Expr
    total: sp.Expr


def component_flops(
    spec: Spec,
    mode: str = "forward",
    convention: str = "flops",
    mask: str = "full",
    recompute: str = "none",
    depth: int = 1,
) -> list[ComponentFlops]:
    """Per-component FLOPs under a mode, convention, mask and recomputation: the
    top-level components (depth 0) and their children down to ``depth``, depth first.

    The depth-0 totals add up exactly to ``flops_expr(spec, mode, convention, mask,
    recompute)``: both are ``_mode_cost`` over the same steps (the recomputed forward of
    a layer stack is part of that stack's share; the logits are never recomputed).

    Raises:
        ValueError: as ``flops_expr``.
    """
    from symtrans.engine.cost import ONE
    from symtrans.engine.simplify import closed_form

    _check(mode, mask, recompute)
    spec.check_workload(v4_counted=mixer_rules.v4_flops(spec, mode, convention, mask, recompute))
    conv = get_convention(convention)
    wl = Workload(mask=mask)
    model = build(spec, wl)
    rows: list[ComponentFlops] = []

    def visit(c: Cost, prefix: tuple[Block, ...], d: int, outer: sp.Expr) -> None:
        n = outer * c.multiplicity
        one = Cost(name=c.name, block=c.block, steps=c.steps, children=c.children)  # a single instance
        each = closed_form(_mode_cost(spec, wl, conv, mode, recompute, list(one.nodes(ONE, prefix))))
        rows.append(ComponentFlops(c.name, d, n, each, closed_form(n * each)))
        if d < depth:
            for ch in c.children:
                visit(ch, prefix + (c.block,), d + 1, n)

    for c in model.children:
        visit(c, (model.block,), 0, ONE)
    return rows


def tokens_per_step(spec: Spec) -> sp.Expr:
    """Tokens one step processes, the divisor of ``per_token``: B*L, or B*L_tgt
    (target tokens) for an encoder-decoder."""
    return S.B * (S.L_tgt if spec.family == "encoder-decoder" else S.L)


def per_token(
    spec: Spec, mode: str = "training", convention: str = "flops", mask: str = "full", recompute: str = "none"
) -> sp.Expr:
    """FLOPs per token: ``flops_expr`` / (B*L) (per target token, B*L_tgt, for an
    encoder-decoder).  A closed form in L (the batch cancels).

    Raises:
        ValueError: as ``flops_expr``.
    """
    from symtrans.engine.simplify import closed_form

    # Expanding the quotient gives what expanding sympy.cancel's gives (tests/test_numbers.py),
    # without the cost of cancel's polynomial gcd.
    return closed_form(flops_expr(spec, mode, convention, mask, recompute) / tokens_per_step(spec))


def per_sequence(
    spec: Spec, mode: str = "training", convention: str = "flops", mask: str = "full", recompute: str = "none"
) -> sp.Expr:
    """FLOPs per sequence: ``flops_expr`` at B = 1.

    Raises:
        ValueError: as ``flops_expr``.
    """
    return flops_expr(spec, mode, convention, mask, recompute).xreplace({S.B: sp.Integer(1)})


def run_flops(
    spec: Spec,
    D: sp.Expr | int = S.D,
    mode: str = "training",
    convention: str = "flops",
    mask: str = "full",
    recompute: str = "none",
) -> sp.Expr:
    """FLOPs of a run over D tokens: ``per_token`` x D (symbols L and D unless given).

    Raises:
        ValueError: as ``flops_expr``; a non-positive D.
    """
    if not isinstance(D, sp.Basic):
        if isinstance(D, bool) or not isinstance(D, int) or D <= 0:
            raise InputError(f"the token count D must be a positive integer, not {D!r}")
        D = sp.Integer(D)
    return sp.expand(per_token(spec, mode, convention, mask, recompute) * D)


# ---------------------------------------------------------------------------------
# inference


def _require_generation(spec: Spec) -> None:
    if spec.family == "encoder-only":
        raise InputError(
            "an encoder-only model does not generate; prefill and decode need a decoder (use --mode forward)"
        )
    if spec.family == "decoder-only" and not spec.lm_head:
        raise InputError("the model has no LM head (lm_head=false), so it does not generate")


def _is_cross_kv(node: Node) -> bool:
    """The K/V projections of cross-attention (weights and biases): computed once per
    source sequence and cached."""
    return node.within(Block.CROSS_ATTENTION) and node.step.role in (Role.K_PROJ, Role.V_PROJ)


def prefill_expr(spec: Spec, convention: str = "flops", mask: str = "full") -> sp.Expr:
    """Inference prefill: one forward pass over L_pre prompt tokens for B sequences,
    with the LM head applied to the last position only (it yields the first token).

    For an encoder-decoder the prompt is the source: the encoder over L_pre tokens plus
    every decoder layer's cross-attention K/V projections of them (computed once and
    cached).  Returns FLOPs as a closed form in B and L_pre.  Source: Pope et al. 2022
    (Efficiently Scaling Transformer Inference) §2.

    Raises:
        ValueError: unknown convention or mask; an encoder-only model.
    """
    return _prefill_expr(spec.structure(), convention, mask)


@lru_cache(maxsize=512)
def _prefill_expr(spec: Spec, convention: str, mask: str) -> sp.Expr:
    from symtrans.engine.simplify import closed_form

    _check(_NO_MODE, mask, "none")
    _require_generation(spec)
    spec.check_workload(v4_counted=mixer_rules.v4_flops(spec, "prefill", convention, mask))
    conv = get_convention(convention)
    if spec.family == "encoder-decoder":
        wl = Workload(src=S.L_pre, tgt=sp.Integer(1), mask=mask)
        model = build(spec, wl)
        enc = count(model, conv, lambda n: n.within(Block.ENCODER) or n.step.role in FRONT_END_ROLES)
        kv = count(model, conv, _is_cross_kv)
        emb = _embedding_lookups(spec, model, Workload(src=S.L_pre, tgt=sp.Integer(0)), conv)
        return closed_form(enc + kv + emb)
    wl = Workload(seq=S.L_pre, mask=mask)
    model = build(spec, wl)
    body = count(model, conv, lambda n: not n.within(*HEADS))
    head = count(model, conv, lambda n: n.within(*HEADS)).xreplace({S.L_pre: sp.Integer(1)})
    return closed_form(body + head + _embedding_lookups(spec, model, wl, conv))


def decode_step_expr(spec: Spec, convention: str = "flops", mask: str = "full") -> sp.Expr:
    """FLOPs of decode step t: one new token per sequence (B of them) through the
    layers and the head, its query attending to L_pre + t cached keys (decoder-only),
    or t target keys plus L_pre source keys whose K/V are cached (encoder-decoder).
    A closed form in B, L_pre and t.

    Raises:
        ValueError: unknown convention or mask; an encoder-only model.
    """
    return _decode_step_expr(spec.structure(), convention, mask)


@lru_cache(maxsize=512)
def _decode_step_expr(spec: Spec, convention: str, mask: str) -> sp.Expr:
    from symtrans.engine.simplify import closed_form

    return closed_form(_decode_step_count(spec, convention, mask))


def _decode_step_model(spec: Spec, mask: str) -> Cost:
    """The tree of decode step t (one new token per sequence; see ``decode_step_expr``)."""
    _check(_NO_MODE, mask, "none")
    _require_generation(spec)
    spec.check_workload(v4_counted=mixer_rules.v4_flops(spec, "decode", "flops", mask))
    one = sp.Integer(1)
    if spec.family == "encoder-decoder":
        return build(spec, Workload(src=S.L_pre, tgt=one, context=S.t, mask=mask))
    return build(spec, Workload(seq=one, context=S.L_pre + S.t, mask=mask))


def _decode_step_count(spec: Spec, convention: str, mask: str) -> sp.Expr:
    mixer_rules.v4_flops(spec, "decode", convention, mask)  # DeepSeek-V4: flops or macs only
    conv = get_convention(convention)
    model = _decode_step_model(spec, mask)
    one = sp.Integer(1)
    if spec.family == "encoder-decoder":
        body = count(
            model,
            conv,
            lambda n: not n.within(Block.ENCODER, Block.ENCODER_EMBEDDINGS) and not _is_cross_kv(n),
        )
        return body + _embedding_lookups(spec, model, Workload(src=sp.Integer(0), tgt=one), conv)
    wl = Workload(seq=one, context=S.L_pre + S.t, mask=mask)
    return count(model, conv) + _embedding_lookups(spec, model, wl, conv)


def _windowed_nodes(cost: Cost, outer: sp.Expr = sp.Integer(1), blocks: tuple = ()):
    """The steps of every attention Cost of ``cost`` whose keys and values are cached for
    the last w positions only (a step with ``Step.cache_window``): the layers whose
    decode-step context is capped at w.  ``Node``s as ``Cost.nodes`` gives them."""
    mult, here = outer * cost.multiplicity, blocks + (cost.block,)
    if any(st.cache_window is not None for st in cost.steps):
        yield from (Node(here, mult, st) for st in cost.steps)
        return
    for c in cost.children:
        yield from _windowed_nodes(c, mult, here)


def _uncapped(e: sp.Expr) -> sp.Expr:
    """``e`` with every cap at the window lifted: Min(w, x) read as x."""
    return e.replace(
        lambda x: isinstance(x, sp.Min) and S.w in x.args, lambda x: sp.Min(*(a for a in x.args if a != S.w))
    )


def _has_window(spec: Spec) -> bool:
    """True when some layer of the tree caches K/V for the last w positions only."""
    return any(st.cache_window is not None for _, _, st in _decode_step_model(spec, "full").walk())


def power_sum(p: int, n: sp.Expr = S.T_gen) -> sp.Expr:
    """sum_{t=1}^{n} t**p as a polynomial in ``n`` (Faulhaber's formula, p >= 0):
    (1/(p+1)) * sum_{j=0}^{p} C(p+1, j) * B_j * n**(p+1-j), with the Bernoulli numbers
    B_j of the convention B_1 = +1/2.  Written for p = 1: n(n+1)/2.

    The identity is proved in tests/test_speed.py by induction: power_sum(p, 0) = 0 and
    power_sum(p, n) - power_sum(p, n - 1) = n**p, symbolically.

    Raises:
        ValueError: a negative p.
    """
    if isinstance(p, bool) or not isinstance(p, int) or p < 0:
        raise InputError(f"the power of a sum of powers must be a non-negative integer, not {p!r}")
    return _power_sum(p).xreplace({_N_SUM: n})


_N_SUM = sp.Symbol("n", integer=True, nonnegative=True)


@lru_cache(maxsize=None)
def _power_sum(p: int) -> sp.Expr:
    terms = []
    for j in range(p + 1):
        b = sp.bernoulli(j)
        if j == 1:  # the B_1 = +1/2 convention, whichever SymPy's bernoulli(1) follows
            b = sp.Rational(1, 2)
        terms.append(sp.binomial(p + 1, j) * b * _N_SUM ** (p + 1 - j))
    return sp.expand(sp.Add(*terms) / (p + 1))


def sum_over_positions(term: sp.Expr, t: sp.Symbol = S.t, n: sp.Expr = S.T_gen) -> sp.Expr | None:
    """sum_{t=1}^{n} ``term`` in closed form when ``term`` is a polynomial in ``t``
    (coefficients free of ``t``: any expression in the other sizes), else None.

    Term by term: c * t**p sums to c * ``power_sum(p, n)``; no ``sympy.summation``
    (whose telescoping and solving take about a second on a GQA or MoE step)."""
    out = []
    for a in sp.Add.make_args(sp.expand(term)):
        coeff, part = a.as_independent(t, as_Add=False)
        if part == 1:
            p = 0
        elif part == t:
            p = 1
        elif part.is_Pow and part.base == t and part.exp.is_Integer and part.exp > 0:
            p = int(part.exp)
        else:
            return None
        out.append(coeff * power_sum(p, n))
    return sp.Add(*out)


def decode_expr(spec: Spec, convention: str = "flops", mask: str = "full") -> sp.Expr:
    """Inference decode of T_gen tokens with a KV cache for B sequences: the sum over
    t = 1..T_gen of ``decode_step_expr``, a closed form in B, L_pre and T_gen.

    The step is a polynomial in t (the context L_pre + t enters the attention terms
    linearly), so the sum is closed term by term with the sum of powers
    (``sum_over_positions``: sum_{t=1}^{T_gen} t = T_gen(T_gen+1)/2); a sliding window
    is closed by ``_windowed_decode``.  A step that is not polynomial in t would fall
    back to ``sympy.summation`` (an unevaluated Sum where it cannot close it).

    The closed form depends only on ``spec.structure()``; it is cached on it.

    Raises:
        ValueError: unknown convention or mask; an encoder-only model.
    """
    return _decode_expr(spec.structure(), convention, mask)


@lru_cache(maxsize=512)
def _decode_expr(spec: Spec, convention: str, mask: str) -> sp.Expr:
    from symtrans.engine.simplify import closed_form

    if mixer_rules.v4_flops(spec, "decode", convention, mask):
        return closed_form(_v4_decode(spec, convention, mask))
    spec.check_workload()
    if _has_window(spec):
        return _windowed_decode(spec, convention, mask)
    step = decode_step_expr(spec, convention, mask)
    total = sum_over_positions(step)
    if total is None:
        total = sp.summation(sp.expand(step), (S.t, 1, S.T_gen))
    return closed_form(total) if not total.has(sp.Sum) else total


def _v4_decode(spec: Spec, convention: str, mask: str) -> sp.Expr:
    """DeepSeek-V4's decode of T_gen tokens after L_pre: its step at context c reads Min(c, w)
    window keys and floor(c/m) compressed entries, summed over c = L_pre + 1 .. L_pre + T_gen in
    closed form (``deepseek_v4.decode_sum``)."""
    from symtrans.engine.deepseek_v4 import decode_sum

    _check(_NO_MODE, mask, "none")
    spec.check_workload(v4_counted=True)
    c = sp.Dummy("c", integer=True, positive=True)
    model = build(spec, Workload(seq=sp.Integer(1), context=c, mask=mask))
    return decode_sum(count(model, get_convention(convention)), c, S.L_pre, S.T_gen)


def decode_sum(spec: Spec, convention: str = "flops", mask: str = "full") -> tuple[sp.Expr, tuple[int, ...]] | None:
    """The derivation of ``decode_expr`` before the sum is closed: (the FLOPs of decode
    step t, a polynomial in t; the powers p >= 1 of t it holds, each closed by
    ``power_sum``).  None under a sliding window (``_windowed_decode`` closes that sum)
    or when the step is not a polynomial in t.  For the report's derivation text.

    Raises:
        ValueError: as ``decode_expr``.
    """
    if _has_window(spec):
        return None
    step = sp.expand(decode_step_expr(spec, convention, mask))
    powers = set()
    for a in sp.Add.make_args(step):
        part = a.as_independent(S.t, as_Add=False)[1]
        if part == S.t:
            powers.add(1)
        elif part.is_Pow and part.base == S.t and part.exp.is_Integer and part.exp > 0:
            powers.add(int(part.exp))
        elif part != 1:
            return None
    return decode_step_expr(spec, convention, mask), tuple(sorted(powers))


def _windowed_decode(spec: Spec, convention: str, mask: str) -> sp.Expr:
    """Decode under a causal sliding window w (Mistral, Jiang et al. 2023 §2): the token at
    context c attends to min(c, w) keys.  With the unwindowed step A + K*c (c = P + t,
    P = L_pre for a decoder-only model, 0 for an encoder-decoder's self-attention), the sum
    over t = 1..T_gen is T_gen*A + K*(m*P + m*(m+1)/2 + (T_gen - m)*w), where
    m = Min(Max(w - P, 0), T_gen) steps still fit in the window.

    The unwindowed step is the tree's with the window's cap lifted (every Min(w, c) read
    as c: the keys a full-cache layer reads).  The slope K_w of the layers whose K/V cache
    keeps the last w positions (``Step.cache_window``, e.g. the N_w windowed layers of a
    mixed stack) follows the windowed sum; the rest K - K_w follows the full one,
    T_gen*P + T_gen*(T_gen + 1)/2."""
    from symtrans.engine.simplify import closed_form

    if mask == "half":
        raise InputError("the half-square mask is not defined for sliding-window decode; use full or causal")
    conv = get_convention(convention)
    step = sp.expand(closed_form(_uncapped(_decode_step_count(spec, convention, mask))))
    P = S.L_pre if spec.family == "decoder-only" else sp.Integer(0)
    K = sp.diff(step, S.t)
    A = sp.expand(step - K * (P + S.t))
    if A.has(S.t) or K.has(S.t):
        raise InputError("a decode step is not linear in the context length; cannot close the windowed sum")
    windowed_nodes = _windowed_nodes(_decode_step_model(spec, mask))
    K_w = sp.expand(sp.diff(closed_form(_uncapped(_sum_steps(windowed_nodes, conv))), S.t))
    m = sp.Min(sp.Max(S.w - P, 0), S.T_gen)
    windowed = m * P + m * (m + 1) / 2 + (S.T_gen - m) * S.w
    rest = sp.expand(K - K_w)
    if rest == 0:  # every layer windowed
        return sp.expand(S.T_gen * A) + K * windowed
    full = S.T_gen * P + S.T_gen * (S.T_gen + 1) / 2
    return sp.expand(S.T_gen * A) + K_w * windowed + rest * full


def inference_expr(spec: Spec, convention: str = "flops", mask: str = "full") -> sp.Expr:
    """Prefill plus decode: FLOPs to read L_pre prompt tokens and generate T_gen more.

    Raises:
        ValueError: as ``prefill_expr``.
    """
    from symtrans.engine.simplify import closed_form

    return closed_form(prefill_expr(spec, convention, mask) + decode_expr(spec, convention, mask))


def evaluate(expr: sp.Expr, values: dict[str, int]) -> sp.Rational:
    """``expr`` at ``values`` exactly (a SymPy Integer or Rational, never a float);
    unevaluated sums are carried out after substitution.

    Raises:
        ValueError: a symbol without a value, a value that is not a positive integer, or
            a negative result (``evaluate.substitution``, ``evaluate.check_count``).
    """
    from symtrans.engine.evaluate import as_expr, check_count, substitution

    e = as_expr(expr).xreplace(substitution(values))
    if e.has(sp.Sum):
        e = e.doit()
    if e.free_symbols:
        missing = ", ".join(sorted(str(s) for s in e.free_symbols))
        raise InputError(f"no value for {missing}; give it with --set NAME=VALUE")
    return check_count(sp.Rational(e))
