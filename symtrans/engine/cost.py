"""Step and Cost: the data model every component writes into.

A ``Step`` is one line of a derivation (a weight matrix, a bias, a matmul of
activations); a ``Cost`` groups steps and child costs and repeats them
``multiplicity`` times (``N`` for a stack of layers).  Totals are *derived* from the
tree, never stored, so the components cannot disagree with the whole.

Units: ``params`` in parameters (scalars of trainable tensors, tied tensors once);
``flops`` in forward FLOPs under the matmul convention (2 per multiply-accumulate,
matrix products only), for the shape the model was built at (batch ``B``, ``L``
tokens, see ``architectures.Shape``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Iterator, NamedTuple

import sympy as sp

from symtrans.base.errors import UnknownNameError
from symtrans.engine.roles import Block, Role

ZERO = sp.Integer(0)
ONE = sp.Integer(1)
# the sequence length a Step.held expression is written in (Cost.cache_at puts the length in)
SEQ = sp.Symbol("T_seq", integer=True, nonnegative=True)

# Step kinds.  Conventions act on them: "dense" is an activation x weight matmul,
# "attention" a matmul of two activations (QK^T, scores x V), "none" costs no FLOPs.
DENSE = "dense"
ATTENTION = "attention"
NONE = "none"


class Matrix(NamedTuple):
    """``count`` 2-D tensors of ``rows`` x ``cols`` in PyTorch's storage layout.

    A linear map d_in -> d_out stores ``nn.Linear.weight`` as (d_out, d_in); a lookup
    table (``nn.Embedding``, ``lookup=True``) as (entries, width).  Quantized formats
    cut each row (``cols`` contiguous values) into blocks (``accounting.quantization``).
    """

    count: sp.Expr
    rows: sp.Expr
    cols: sp.Expr
    lookup: bool = False


@dataclass(frozen=True)
class Step:
    """One derivation line.

    Attributes:
        label: what is counted, for people, e.g. ``"W_Q"`` or ``"Q K^T"``.  No code
            decides a number from it: use ``role``.
        role: the tensor or operation counted (``roles.Role``).
        bias: the step is the bias vector of the ``role`` map (not its matrix).
        tied_to: for a tied matrix (``params`` 0), the role of the matrix that holds
            its parameters (``Role.TOKEN_EMBEDDING`` for a tied LM head).
        factor: 1 or 2 for the first and second factor of a low-rank map
            (``components.low_rank_linear``); 0 otherwise.
        params: trainable parameters this step adds (parameters); 0 for tied weights.
        flops: forward FLOPs (2 per multiply-accumulate) at the build shape.
        kind: ``"dense"``, ``"attention"`` or ``"none"`` (see module docstring).
        weights: weight elements the matmul multiplies by, counted even when the
            matrix is tied (parameters); 0 for non-dense steps.
        active: parameters used per token, where it differs from ``params``
            (mixture of experts); ``None`` means the same as ``params``.
        shape: the matmul as ``(m x k) . (k x n)`` in symbols, for the shape walk.
        elementwise: per-element operations for the all-ops convention (FLOPs).
        note: one sentence of why, shown in reports.
        source: where the formula comes from (paper section or implementation).
        cache: elements this step keeps per token of one sequence in a decode cache (the
            keys of W_K, the values of W_V, an MLA latent): bytes are ``cache`` x the
            cache dtype's bytes; 0 for a step that caches nothing.
        cache_window: at most this many positions of ``cache`` are kept (``w`` for a
            sliding-window layer: transformers' sliding-window cache layer and vLLM keep
            the last w); ``None`` keeps every position.
        chunk_window: for LED's Longformer Q K^T, the layer's attention window (w_att, or its own
            from ``Spec.encoder_windows``), whose overlapping chunks the layer computes; ``None``
            elsewhere.  The shape walk reads a layer's window here.
        source_cache: elements this step keeps per *source* token (cross-attention's keys
            and values of the encoder output, computed once at prefill): an
            encoder-decoder's cache holds them for the L_src source positions.
        cache_heads: the heads ``cache`` and ``source_cache`` are split into over
            tensor-parallel ranks (h_kv for K and V; 1 for an MLA latent, which every rank
            keeps whole); ``cache / cache_heads`` elements per head.
        state: elements this step keeps per sequence whatever its length (a Mamba
            mixer's SSM state and convolution window, a linear-attention state): bytes
            are ``state`` x the state dtype's bytes.
        held: elements this step's cache keeps for one sequence after ``SEQ`` tokens, an
            expression of ``SEQ`` (``Cost.cache_at`` puts the length in), for a cache that is
            neither so many elements per token nor a constant state: DeepSeek-V4's window of
            w - 1 keys, compressed entries every m tokens, open windows' buffers
            (``deepseek_v4.cache_steps``); bytes are ``held`` x the cache dtype's bytes.
        held_fp32: the same, for elements kept at fp32 whatever the cache dtype (4 bytes each:
            DeepSeek-V4's overlap gate logits, summed with its fp32 position bias).
        input_grad: False for a map applied to the raw model input (pixels, mel frames):
            no backward pass computes the gradient with respect to it, so its backward
            costs 1 x its forward (the weight gradient), not 2 x.
        grad: 1 where the backward pass differentiates this product, 0 where no gradient
            reaches it, or an expression of the workload that is 0 or 1 (its backward then
            costs 2 x its forward x ``grad``).  DeepSeek-V4's lightning indexer returns integer
            top-k indices (0); a V4 compressor's maps reach the loss only once a window of m
            tokens has closed, Min(1, floor(L/m)) (``deepseek_v4`` module docstring, Training).
            ``roles.NO_GRAD_ROLES`` are 0 whatever this says.
        matrices: the 2-D tensors among ``params`` (``Matrix``: a linear map d_in -> d_out
            is ``Matrix(1, d_out, d_in)``, an embedding ``Matrix(1, V, d_model, lookup=True)``);
            the rest of ``params`` are vectors (norms, biases).  Quantized formats and
            tensor parallelism act on the matrices (``accounting.quantization``).
    """

    label: str
    role: Role
    params: sp.Expr = ZERO
    flops: sp.Expr = ZERO
    kind: str = NONE
    weights: sp.Expr = ZERO
    active: sp.Expr | None = None
    shape: str = ""
    elementwise: sp.Expr = ZERO
    note: str = ""
    source: str = ""
    bias: bool = False
    tied_to: Role | None = None
    factor: int = 0
    matrices: tuple[Matrix, ...] = ()
    input_grad: bool = True
    grad: sp.Expr = ONE
    cache: sp.Expr = ZERO
    state: sp.Expr = ZERO
    cache_window: sp.Expr | None = None
    chunk_window: sp.Expr | None = None
    source_cache: sp.Expr = ZERO
    cache_heads: sp.Expr = ONE
    held: sp.Expr = ZERO
    held_fp32: sp.Expr = ZERO

    @property
    def active_params(self) -> sp.Expr:
        return self.params if self.active is None else self.active


@dataclass(frozen=True)
class Cost:
    """A component: steps plus child components, repeated ``multiplicity`` times.

    ``params``, ``flops``, ``active_params``, ``weights`` and ``elementwise`` are the
    multiplicity times the per-instance sums; ``*_each`` are the per-instance sums.
    ``name`` is for people; ``block`` (``roles.Block``) is what code reads.  ``kind``: for a
    ``Block.LAYER`` of a stack of layer kinds, the kind's name (``kinds.LayerKind.name``:
    ``"attention"``, ``"mamba2"``, ``"gated_deltanet"``, ...); empty elsewhere.
    """

    name: str
    block: Block
    steps: tuple[Step, ...] = ()
    children: tuple["Cost", ...] = ()
    multiplicity: sp.Expr = ONE
    note: str = ""
    source: str = ""
    kind: str = ""

    @cached_property
    def params_each(self) -> sp.Expr:
        return sp.Add(*[s.params for s in self.steps], *[c.params for c in self.children])

    @cached_property
    def flops_each(self) -> sp.Expr:
        return sp.Add(*[s.flops for s in self.steps], *[c.flops for c in self.children])

    @cached_property
    def active_each(self) -> sp.Expr:
        return sp.Add(*[s.active_params for s in self.steps], *[c.active_params for c in self.children])

    @cached_property
    def weights_each(self) -> sp.Expr:
        return sp.Add(*[s.weights for s in self.steps], *[c.weights for c in self.children])

    @cached_property
    def elementwise_each(self) -> sp.Expr:
        return sp.Add(*[s.elementwise for s in self.steps], *[c.elementwise for c in self.children])

    @cached_property
    def cache_each(self) -> sp.Expr:
        return sp.Add(*[s.cache for s in self.steps], *[c.cache for c in self.children])

    @cached_property
    def state_each(self) -> sp.Expr:
        return sp.Add(*[s.state for s in self.steps], *[c.state for c in self.children])

    @cached_property
    def source_cache_each(self) -> sp.Expr:
        return sp.Add(*[s.source_cache for s in self.steps], *[c.source_cache for c in self.children])

    @property
    def params(self) -> sp.Expr:
        return self.multiplicity * self.params_each

    @property
    def cache(self) -> sp.Expr:
        """Decode-cache elements per token of one sequence (``Step.cache`` summed): times
        the cache dtype's bytes, the K/V (or latent) bytes per token."""
        return self.multiplicity * self.cache_each

    @property
    def state(self) -> sp.Expr:
        """Constant state elements per sequence (``Step.state`` summed: SSM, convolution
        and linear-attention states): times the state dtype's bytes, bytes per sequence."""
        return self.multiplicity * self.state_each

    @property
    def source_cache(self) -> sp.Expr:
        """Cross-attention cache elements per source token (``Step.source_cache`` summed)."""
        return self.multiplicity * self.source_cache_each

    def cache_at(self, seq: sp.Expr, src: sp.Expr = ZERO) -> sp.Expr:
        """Decode-cache elements of one sequence after ``seq`` of its own tokens (and ``src``
        source tokens for cross-attention): every caching step keeps ``Step.cache`` elements
        for each of min(seq, ``cache_window``) positions, plus ``Step.source_cache`` for each
        of the ``src`` source positions.  The constant state (``state``) is not included.
        A step's ``held`` elements (``SEQ`` put to ``seq``) are included, its ``held_fp32`` are
        not (``held_fp32_at``).
        Units: elements (times the cache dtype's bytes: bytes)."""
        terms = []
        for node in self.nodes():
            st = node.step
            if st.held != 0:
                terms.append(node.multiplicity * st.held.xreplace({SEQ: seq}))
            if st.cache != 0:
                kept = seq if st.cache_window is None else sp.Min(seq, st.cache_window)
                terms.append(node.multiplicity * st.cache * kept)
            if st.source_cache != 0:
                terms.append(node.multiplicity * st.source_cache * src)
        return sp.Add(*terms)

    def held_fp32_at(self, seq: sp.Expr) -> sp.Expr:
        """Cache elements of one sequence after ``seq`` tokens kept at fp32 whatever the cache
        dtype (``Step.held_fp32`` summed, ``SEQ`` put to ``seq``).  Units: elements (x 4: bytes)."""
        return sp.Add(
            *[n.multiplicity * n.step.held_fp32.xreplace({SEQ: seq}) for n in self.nodes() if n.step.held_fp32 != 0]
        )

    def holds(self) -> bool:
        """Whether a step's cache is stated per sequence (``Step.held``/``held_fp32``)."""
        return any(n.step.held != 0 or n.step.held_fp32 != 0 for n in self.nodes())

    @property
    def flops(self) -> sp.Expr:
        return self.multiplicity * self.flops_each

    @property
    def active_params(self) -> sp.Expr:
        return self.multiplicity * self.active_each

    @property
    def weights(self) -> sp.Expr:
        return self.multiplicity * self.weights_each

    @property
    def elementwise(self) -> sp.Expr:
        return self.multiplicity * self.elementwise_each

    def walk(self, outer: sp.Expr = ONE, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], sp.Expr, Step]]:
        """Yield ``(path, total multiplicity, step)`` for every step, depth first."""
        mult = outer * self.multiplicity
        here = path + (self.name,)
        for s in self.steps:
            yield here, mult, s
        for c in self.children:
            yield from c.walk(mult, here)

    def nodes(self, outer: sp.Expr = ONE, blocks: tuple[Block, ...] = ()) -> Iterator["Node"]:
        """Yield a ``Node`` (enclosing blocks, total multiplicity, step) for every step,
        depth first: the typed view of ``walk`` that code decides numbers from."""
        mult = outer * self.multiplicity
        here = blocks + (self.block,)
        for s in self.steps:
            yield Node(here, mult, s)
        for c in self.children:
            yield from c.nodes(mult, here)

    def blocks_of(self, block: Block) -> Iterator["Cost"]:
        """Every descendant Cost (self included) whose block is ``block``, depth first."""
        if self.block == block:
            yield self
        for c in self.children:
            yield from c.blocks_of(block)

    def child(self, name: str) -> "Cost":
        """The direct child called ``name``.

        Raises:
            KeyError: naming the children that exist.
        """
        for c in self.children:
            if c.name == name:
                return c
        raise UnknownNameError(
            f"{self.name!r} has no component {name!r}; it has: {', '.join(c.name for c in self.children)}"
        )

    def find(self, name: str) -> "Cost":
        """The first descendant (depth first, self included) called ``name``."""
        if self.name == name:
            return self
        for c in self.children:
            try:
                return c.find(name)
            except KeyError:
                pass
        raise UnknownNameError(f"no component {name!r} under {self.name!r}")

    # Jupyter display (symtrans.notebook): the closed forms rendered, with the components.
    def _repr_markdown_(self) -> str:
        from symtrans.engine.display import cost_markdown

        return cost_markdown(self)

    def _repr_latex_(self) -> str:
        from symtrans.engine.display import cost_latex

        return cost_latex(self)


class Node(NamedTuple):
    """One step of a Cost tree with its context (``Cost.nodes``)."""

    blocks: tuple[Block, ...]
    multiplicity: sp.Expr
    step: Step

    def within(self, *blocks: Block) -> bool:
        """True when the step lies inside any of ``blocks``."""
        return any(b in self.blocks for b in blocks)


_SYMBOL_NAME = re.compile(r"\b[A-Za-z_][A-Za-z_0-9]*\b")


def substitute(c: Cost, subs: dict[sp.Symbol, sp.Symbol]) -> Cost:
    """``c`` with the symbols ``subs`` replaced in every count, matrix and shape (a stack
    built with the encoder's symbols, given the decoder's own sizes)."""
    if not subs:
        return c
    names = {str(a): str(b) for a, b in subs.items()}

    def e(x):
        return x.xreplace(subs) if isinstance(x, sp.Basic) else x

    steps = tuple(
        replace(
            st,
            params=e(st.params),
            flops=e(st.flops),
            weights=e(st.weights),
            active=e(st.active),
            elementwise=e(st.elementwise),
            shape=_SYMBOL_NAME.sub(lambda m: names.get(m.group(0), m.group(0)), st.shape),
            matrices=tuple(Matrix(e(m.count), e(m.rows), e(m.cols), m.lookup) for m in st.matrices),
            cache=e(st.cache),
            state=e(st.state),
            cache_window=e(st.cache_window),
            source_cache=e(st.source_cache),
            cache_heads=e(st.cache_heads),
            held=e(st.held),
            held_fp32=e(st.held_fp32),
            grad=e(st.grad),
        )
        for st in c.steps
    )
    return replace(
        c, steps=steps, children=tuple(substitute(ch, subs) for ch in c.children), multiplicity=e(c.multiplicity)
    )
