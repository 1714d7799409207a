"""The shape walk: every step of the forward pass with its tensor shapes and FLOPs.

Each step names the operation, the shapes of its inputs and output as tuples of
symbols (``(B, L, d_model)``, ``(B, h, L, d_k)``, ...) and the FLOPs that follow from
those shapes alone: a product (..., m x k) . (k x n) costs 2*(batch dims)*m*k*n
(2 per multiply-accumulate, matrix products only; lookups, reshapes, norms, softmax,
activations and residual adds cost 0 under this convention).  A causal or local mask
keeps only ``pairs`` of the q x kv score entries; the two attention products then cost
2*B*h*pairs*d_k and 2*B*h*pairs*d_v.

Which layers a stack has, how many of each, and which of them are MoE or windowed layers are
the Cost tree's (``architectures.build``: its ``Block.LAYER`` nodes, their multiplicities, a
``Block.MOE`` child, a K projection whose ``Step.cache_window`` is set); the walk reads no Spec
option to rebuild that structure (tests/test_one_source.py scans for it).  Inside a layer the
walk is its own: every matrix product is a step whose FLOPs follow from its shapes, and the kept
query-key pairs are counted row by row from the mask's definition (``kept_pairs``: a SymPy sum
over the query rows, or, for a local window, a count over the rows at numbers).  Summed over its
steps (times their repeats) the walk must equal the cost engine's forward FLOPs, which
``tests/test_walk.py`` checks for every preset, so a shape, mask or window error in either shows
up there; the layer counts themselves are checked there against a layer-by-layer count.

A long-input encoder is walked as transformers computes it: LongT5's padded blocks and transient
global tokens, LED's input padded to a multiple of its largest window and each layer's overlapping
chunks of its own window (``Step.chunk_window``), with no global tokens.

A stack of layer kinds (hybrid and state-space models) is walked by ``walk_hybrid``: its Mamba,
Mamba 2, Gated DeltaNet and short-convolution mixers from transformers' reference forwards, and the
tensors each layer keeps (``Walk.kept``: K/V per token, states per sequence).

Also: the exact sinusoidal positional-encoding table (Vaswani et al. 2017 §3.5),
PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)),
as SymPy values with decimals beside them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping

import sympy as sp

from symtrans.analysis.walk_hybrid import hybrid_stack
from symtrans.base.errors import InputError
from symtrans.engine import symbols as S
from symtrans.engine.architectures import FORWARD, Workload, build, decoder_symbols
from symtrans.engine.components import MASKS, dims
from symtrans.engine.cost import Cost
from symtrans.engine.roles import Block, Role
from symtrans.engine.spec import DUAL_VISIONS, Spec

Shape = tuple  # of sympy expressions
ZERO = sp.Integer(0)
ONE = sp.Integer(1)


@dataclass(frozen=True)
class WalkStep:
    """One operation of the forward pass.

    Attributes:
        stage: where it happens, e.g. ``"decoder layer"``; ``repeat`` times (N layers).
        op: the operation, e.g. ``"Q = X W_Q"``.
        inputs: shapes of the operands (tuples of symbols), weights included.
        output: shape of the result.
        flops: forward FLOPs of one instance, from the shapes (2 per multiply-accumulate).
        repeat: how many times the model runs this step (N for a layer's step).
        kind: ``matmul`` (a product of two tensors), ``lookup`` or ``elementwise``/``reshape`` (0 FLOPs);
            ``cache`` / ``state``: a tensor a layer keeps, per token / per sequence, its shape
            without the batch (``Walk.kept``).
        pairs: for masked attention products, the kept query-key pairs per sequence and head.
        note: one sentence of why.
    """

    stage: str
    op: str
    inputs: tuple[Shape, ...]
    output: Shape
    flops: sp.Expr = ZERO
    repeat: sp.Expr = ONE
    kind: str = "elementwise"
    pairs: sp.Expr | None = None
    note: str = ""

    @property
    def total_flops(self) -> sp.Expr:
        """``repeat * flops`` (FLOPs)."""
        return self.repeat * self.flops


@dataclass(frozen=True)
class Walk:
    """The steps of one forward pass of ``spec`` at ``workload``."""

    spec: Spec
    workload: Workload
    steps: tuple[WalkStep, ...] = field(default_factory=tuple)
    kinds: tuple[str, ...] = ()  # the layer kinds of a stack of them (``layer_kinds``); () for attention layers

    @property
    def flops(self) -> sp.Expr:
        """Forward FLOPs: the sum over steps of repeat * flops (FLOPs)."""
        return sp.Add(*[s.total_flops for s in self.steps])

    def kept(self, kind: str) -> sp.Expr:
        """Elements the model keeps after the forward: ``kind="cache"``, per token of one sequence
        (an attention layer's K and V); ``kind="state"``, per sequence whatever its length (a
        convolution window, an SSM or delta-rule state).  The sum over the steps of that kind of
        repeat x the product of the shape (given without the batch; walk_hybrid)."""
        return sp.Add(*[s.repeat * _prod(s.output) for s in self.steps if s.kind == kind])

    def evaluate(self, values: Mapping[str, int]) -> list[dict]:
        """Every step at numbers: shapes as integer tuples, FLOPs exact (Python ints).

        ``values`` maps size names (the spec's plus B, L, L_src, L_tgt, ...) to integers.

        Raises:
            ValueError: if a symbol has no value or a count is not an integer.
        """
        from symtrans.engine.evaluate import exact

        out = []
        for i, s in enumerate(self.steps, 1):
            out.append(
                {
                    "index": i,
                    "stage": s.stage,
                    "op": s.op,
                    "kind": s.kind,
                    "inputs": [[exact(d, values) for d in shp] for shp in s.inputs],
                    "output": [exact(d, values) for d in s.output],
                    "repeat": exact(s.repeat, values),
                    "flops": exact(s.flops, values),
                    "total_flops": exact(s.total_flops, values),
                    **({"pairs": exact(s.pairs, values)} if s.pairs is not None else {}),
                }
            )
        return out


# ---------------------------------------------------------------------------------
# FLOPs from shapes


def _prod(xs) -> sp.Expr:
    return sp.Mul(*xs) if xs else ONE


def _same(a: sp.Expr, b: sp.Expr) -> bool:
    return sp.expand(a - b) == 0


def matmul_flops(a: Shape, b: Shape, pairs: sp.Expr | None = None, masked: str = "") -> tuple[Shape, sp.Expr]:
    """The output shape and FLOPs of a . b, from the shapes alone.

    ``a`` is (*lead, m, k); ``b`` is (k, n) (a weight, broadcast over ``lead``) or
    (*lead, k, n) (a batched product).  FLOPs = 2 * prod(lead) * m * k * n.  With a
    mask, ``pairs`` kept entries replace the m*n score entries (``masked="out"``, for
    Q K^T) or the m*k ones (``masked="left"``, for scores . V).

    Raises:
        ValueError: if the inner dimensions or the batch dimensions differ.
    """
    *lead, m, k = a
    if len(b) == 2:
        k2, n = b
    else:
        *blead, k2, n = b
        if len(blead) != len(lead) or not all(_same(x, y) for x, y in zip(lead, blead)):
            raise InputError(f"batch dimensions differ: {a} . {b}")
    if not _same(k, k2):
        raise InputError(f"inner dimensions differ: {a} . {b}")
    batch = _prod(lead)
    if pairs is None:
        flops = 2 * batch * m * k * n
    elif masked == "out":
        flops = 2 * batch * pairs * k
    else:
        flops = 2 * batch * pairs * n
    return tuple(lead) + (m, n), flops


class _Builder:
    def __init__(self) -> None:
        self.steps: list[WalkStep] = []

    def mm(self, stage, op, a, b, repeat=ONE, note="", pairs=None, masked=""):
        out, flops = matmul_flops(a, b, pairs, masked)
        self.steps.append(WalkStep(stage, op, (a, b), out, flops, repeat, "matmul", pairs, note))
        return out

    def linear(self, stage, name, x, d_in, d_out, repeat=ONE, note="", low_rank=False):
        """x . W (d_in x d_out); a low-rank map is x . U (d_in x r) then . V (r x d_out)."""
        if low_rank:
            y = self.mm(stage, f"{name}: x U (rank r)", x, (d_in, S.r), repeat, "first factor of the low-rank map")
            return self.mm(stage, f"{name}: (x U) V", y, (S.r, d_out), repeat, "second factor")
        return self.mm(stage, name, x, (d_in, d_out), repeat, note)

    def op(self, stage, op, inputs, output, repeat=ONE, note="", kind="elementwise"):
        self.steps.append(WalkStep(stage, op, tuple(inputs), output, ZERO, repeat, kind, None, note))
        return output


# ---------------------------------------------------------------------------------
# the forward pass


def walk(spec: Spec, workload: Workload = FORWARD) -> Walk:
    """The shape walk of ``spec``'s forward pass at ``workload`` (batch B, L tokens, ...).

    Steps follow the implementation's order (embeddings; per layer: norms before or
    after each sublayer per ``norm_position``, attention, cross-attention, FFN or MoE;
    final norm; heads).  Layer steps carry ``repeat`` = the number of such layers.

    Raises:
        ValueError: for an invalid workload mask, a decode step of a stack of layer kinds
            (the tree's ``Cost.kind`` layers; its full forward is ``walk_hybrid.hybrid_stack``'s), a kind
            that walk_hybrid does not trace.
    """
    if workload.mask not in MASKS:
        raise InputError(f"mask must be one of {', '.join(MASKS)}, not {workload.mask!r}")
    b = _Builder()
    wl = workload
    B = wl.batch
    tree = build(spec, wl)  # the layer structure: which layers, how many, MoE or windowed, of which kind
    kinds = layer_kinds(tree)
    if kinds:  # a stack of layer kinds (hybrid, state-space): walk_hybrid, a full forward only
        if wl.context is not None or spec.family != "decoder-only":
            raise InputError(
                f"walk traces a full forward of a stack of layer kinds ({'|'.join(kinds)}), not a decode step"
            )
        _embed(b, spec, "embeddings", B, wl.seq)
        x = (B, wl.seq, S.d_model)

        def attention(b, spec, st, x, mask, n, keys=None):
            _attention(b, spec, st, x, x, "causal", mask, x[1], n, keys=keys)

        stack = next(c for c in tree.children if c.block == Block.DECODER)
        hybrid_stack(b, spec, stack, x, wl.self_mask, attention, _ffn, _moe, kept_pairs)
        if spec.lm_head:
            _lm_head(b, spec, x)
        return Walk(spec, workload, tuple(b.steps), kinds)
    fam = spec.family
    if fam == "encoder-decoder":
        q_enc = wl.src
        if spec.encoder_attention == "longformer":  # LED runs its encoder on the ids padded to the window
            q_enc = sp.ceiling(wl.src / S.w_att) * S.w_att
            b.op(
                "encoder embeddings",
                "pad the ids to a multiple of w_att",
                [(B, wl.src)],
                (B, q_enc),
                kind="reshape",
                note="LEDEncoder._pad_to_window_size (pad_token_id; w_att the largest window of the layers)",
            )
        if spec.frontend == "conv1d":
            _audio_front(b, spec, "encoder embeddings", B, wl.src)
        else:
            _embed(b, spec, "encoder embeddings", B, q_enc, table=S.L_src_max if spec.has("L_src_max") else S.L_max)
        x_enc = (B, q_enc, S.d_model)
        _stack(b, spec, "encoder", x_enc, _layer_groups(tree, Block.ENCODER), kind="self", mask=wl.mask, context=q_enc)
        if spec.encoder_attention == "longformer":
            x_enc = b.op(
                "encoder",
                "cut the output back to the L_src positions",
                [x_enc],
                (B, wl.src, S.d_model),
                kind="reshape",
                note="LEDEncoder drops the padding; cross-attention reads L_src keys",
            )
        first_decoder_step = len(b.steps)
        _embed(
            b,
            spec,
            "decoder embeddings",
            B,
            wl.tgt,
            positional=spec.decoder_positions,
            table=S.L_tgt_max if spec.has("L_tgt_max") else S.L_max,
        )
        ctx = wl.tgt if wl.context is None else wl.context
        _stack(
            b,
            spec,
            "decoder",
            (B, wl.tgt, S.d_model),
            _layer_groups(tree, Block.DECODER),
            kind="causal",
            mask=wl.self_mask,
            context=ctx,
            memory=x_enc,
        )
        if spec.lm_head:
            _lm_head(b, spec, (B, wl.tgt, S.d_model))
        _own_sizes(b, first_decoder_step, decoder_symbols(spec))
    elif fam == "encoder-only":
        if spec.frontend == "patch":
            _patch_front(b, spec, "embeddings", B, wl.seq)
        elif spec.frontend == "wav2vec2":
            _wav2vec2_front(b, spec, "embeddings", B, wl.seq)
        else:
            _embed(b, spec, "embeddings", B, wl.seq)
        x = (B, wl.seq, S.d_model)
        if spec.has("L_rel"):  # DeBERTa (types-enc): the table every layer reads
            table = (2 * S.L_rel, S.d_model)
            b.op("relative positions", "R = rel_embeddings (all 2 L_rel rows)", [table], table, kind="lookup")
            if spec.rel_norm:
                b.op("relative positions", "norm(R)", [table], table)
        _stack(
            b,
            spec,
            "encoder",
            x,
            _layer_groups(tree, Block.ENCODER),
            kind="self",
            mask=wl.mask,
            context=wl.seq,
        )
        if spec.conv_kernel:  # DeBERTa-v2's ConvLayer after the first layer, as an unfolded matmul
            k, g = spec.conv_kernel, spec.conv_groups
            cols = b.op(
                "ConvLayer",
                f"unfold {k} neighbouring positions (same padding), per group of d_model/{g}",
                [x],
                (B, wl.seq, k * S.d_model / g),
                kind="reshape",
            )
            y = b.mm("ConvLayer", "X_unfolded W_conv", cols, (k * S.d_model / g, S.d_model), note="Conv1d + bias")
            b.op("ConvLayer", "activation, residual add, norm", [y, x], x)
        if spec.pooler:
            first = b.op("pooler", "x[:, 0, :] (first token)", [x], (B, S.d_model), kind="reshape")
            out = S.d_pool if spec.has("d_pool") else S.d_model
            b.mm("pooler", "x_0 W_pool", first, (S.d_model, out), note="dense + tanh (BertPooler)")
        if spec.vision in DUAL_VISIONS:  # CLIP / SigLIP: the pooled token into the joint space (engine/dual.py)
            pooled = b.op("text head", "x[:, eos, :] (one pooled token)", [x], (B, S.d_model), kind="reshape")
            b.mm("text head", "x_pooled W_proj", pooled, (S.d_model, S.d_proj), note="text_projection / head")
        if spec.mlm_head:
            ew = S.E_emb if spec.has("E_emb") else S.d_model
            y = b.mm("MLM head", "x W_transform", x, (S.d_model, ew), note="dense + activation + norm")
            b.op("MLM head", "norm", [y], y)
            b.mm("MLM head", "logits = y W_decoder", y, (ew, S.V), note="tied to the token embedding")
    else:
        _embed(b, spec, "embeddings", B, wl.seq)
        ctx = wl.seq if wl.context is None else wl.context
        x = (B, wl.seq, S.d_model)
        _stack(
            b,
            spec,
            "decoder",
            x,
            _layer_groups(tree, Block.DECODER),
            kind="causal",
            mask=wl.self_mask,
            context=ctx,
        )
        if spec.lm_head:
            _lm_head(b, spec, x)
    return Walk(spec, workload, tuple(b.steps))


# ---------------------------------------------------------------------------------
# kept query-key pairs, from their definitions (not the engine's formulas); the layer groups, the tree's


class _RowCount(sp.Function):
    """Pairs of a local window, counted row by row once every argument is an integer.

    Arguments ``(q, kv, w)``: the last q of kv positions are queries (1-based absolute
    positions kv-q+1 .. kv), the keys are positions 1 .. kv, and ``w`` is the window.
    Symbolic arguments leave the count unevaluated (it then prints as a function of them).
    """

    is_integer = None

    @classmethod
    def eval(cls, q, kv, w):
        if all(isinstance(x, sp.Integer) for x in (q, kv, w)):
            return cls._count(int(q), int(kv), int(w))
        return None


class CausalWindowPairs(_RowCount):
    """Sliding-window causal attention (Mistral, Jiang et al. 2023 §2; HF's mask keeps key j for
    the query at position p when 0 <= p - j < w): the row at p keeps keys max(1, p-w+1) .. p."""

    is_integer = True

    @staticmethod
    def _count(q: int, kv: int, w: int) -> sp.Integer:
        return sp.Integer(sum(p - max(1, p - w + 1) + 1 for p in range(kv - q + 1, kv + 1)))


class HalfWindowPairs(_RowCount):
    """The 'half' count of a causal window: the area of the band {0 <= p - j < w} in the continuous
    kv x kv square, integral over x in [0, kv] of min(x, w) dx, for q of the kv rows (q/kv of it)."""

    @staticmethod
    def _count(q: int, kv: int, w: int) -> sp.Rational:
        area = sp.Rational(kv * kv, 2) if kv <= w else sp.Rational(w * w, 2) + (kv - w) * w
        return sp.Rational(q, kv) * area


class LocalWindowPairs(_RowCount):
    """Bidirectional local attention (Longformer, Beltagy et al. 2020 §3.1): a = floor(w/2) keys on
    each side of the query and the query itself, clipped to the sequence: keys max(1, p-a) .. min(kv, p+a)."""

    is_integer = True

    @staticmethod
    def _count(q: int, kv: int, w: int) -> sp.Integer:
        a = w // 2
        return sp.Integer(sum(min(kv, p + a) - max(1, p - a) + 1 for p in range(kv - q + 1, kv + 1)))


class GlobalLocalPairs(sp.Function):
    """Longformer's band plus g global tokens (Beltagy et al. 2020 §3.1), counted row by row
    at numbers as the set of kept pairs: a global query (one of the first g positions) keeps
    every key; any other query keeps its band and the g global keys, each pair once."""

    is_integer = True

    @classmethod
    def eval(cls, n, w, g):
        if all(isinstance(x, sp.Integer) for x in (n, w, g)):
            n, a, g = int(n), int(w) // 2, int(g)
            rows = 0
            for p in range(1, n + 1):
                lo, hi = max(1, p - a), min(n, p + a)
                rows += n if p <= g else (hi - lo + 1) + max(0, min(g, lo - 1))
            return sp.Integer(rows)
        return None


def kept_pairs(
    q: sp.Expr, kv: sp.Expr, mask: str, causal: bool, window: sp.Expr | None = None, global_tokens: int = 0
) -> sp.Expr:
    """Query-key pairs per sequence and head that one attention computes.

    The last ``q`` of ``kv`` positions are queries (a prefill or full pass has q = kv; a
    decode step q = 1); row p (1-based position kv-q+1 .. kv) keeps, by definition:

    * bidirectional, or ``mask="full"`` (the causal mask not subtracted): every key, kv;
    * ``mask="causal"``: the keys at or before it, p;
    * ``mask="half"``: by convention half the q x kv square, q*kv/2;
    * with a causal ``window`` w: ``full``, every key, kv (eager attention masks the
      square); ``window``, the keys of the last w positions, min(kv, w) per row;
      ``causal``: ``CausalWindowPairs``; ``half``: ``HalfWindowPairs``;
    * ``mask="window"`` without a window: as ``full``;
    * with a bidirectional window, ``LocalWindowPairs``; with ``global_tokens`` g,
      ``GlobalLocalPairs``: the band united with the g global rows and columns, each pair
      once (g = kv keeps the full square).  A causal window has no global tokens.

    The sums over rows are done by SymPy (a closed form in q and kv), the window counts by
    going through the rows at numbers.

    Raises:
        ValueError: for an unknown mask.
    """
    if mask not in MASKS:
        raise InputError(f"mask must be one of {', '.join(MASKS)}, not {mask!r}")
    p = sp.Dummy("p", integer=True, positive=True)
    rows = (p, kv - q + 1, kv)
    if window is None:
        if causal and mask == "half":
            return q * kv / 2
        return sp.summation(p if causal and mask == "causal" else kv, rows)
    if not causal:
        return GlobalLocalPairs(kv, window, global_tokens) if global_tokens else LocalWindowPairs(q, kv, window)
    if mask == "full":  # eager attention: the whole score matrix, the window applied as a mask
        pairs = sp.summation(kv, rows)
    elif mask == "window":
        pairs = sp.summation(sp.Min(kv, window), rows)
    elif mask == "causal":
        pairs = CausalWindowPairs(q, kv, window)
    else:
        pairs = HalfWindowPairs(q, kv, window)
    return pairs


def layer_kinds(tree: Cost) -> tuple[str, ...]:
    """The kinds of the decoder's layers where the Cost tree builds a stack of layer kinds
    (``Cost.kind`` of its ``Block.LAYER`` nodes, in the stack's order: ``("attention", "mamba")``
    for Jamba); ``()`` for a stack of plain attention layers (or no decoder)."""
    return tuple(
        layer.kind
        for s in tree.children
        if s.block == Block.DECODER
        for layer in s.children
        if layer.block == Block.LAYER and layer.kind
    )


def _layer_groups(tree: Cost, stack: Block) -> list[tuple]:
    """(layers, MoE, windowed, chunk window) for each ``Block.LAYER`` node of the tree's ``stack``: its
    multiplicity, whether it holds a ``Block.MOE`` block, and whether its causal self-attention
    keeps a window of K/V (``Step.cache_window``; ``None`` for a stack that caches nothing, an
    encoder, whose layers attend within ``w`` whenever the spec has one).  ``windowed`` is also
    ``None`` when every layer group has the same pattern (the step names then carry no window).
    The chunk window is an LED encoder layer's Longformer window (``Step.chunk_window``), else None."""
    layers = [c for s in tree.children if s.block == stack for c in s.children if c.block == Block.LAYER]
    groups = []
    for layer in layers:
        moe = any(True for _ in layer.blocks_of(Block.MOE))
        keys = [n.step for n in layer.nodes() if n.step.role == Role.K_PROJ and n.step.cache != 0]
        window = None if not keys else any(st.cache_window is not None for st in keys)
        chunk = next((n.step.chunk_window for n in layer.nodes() if n.step.chunk_window is not None), None)
        groups.append((layer.multiplicity, moe, window, chunk))
    if len({g[2] for g in groups}) == 1:
        groups = [(n, moe, None, chunk) for n, moe, _, chunk in groups]
    merged: dict[tuple, sp.Expr] = {}  # layers alike in the walk (ModernBERT's first one differs by a norm)
    for n, moe, window, chunk in groups:
        merged[(moe, window, chunk)] = merged.get((moe, window, chunk), ZERO) + n
    return [(n, moe, window, chunk) for (moe, window, chunk), n in merged.items()]


def _own_sizes(b: _Builder, start: int, subs: dict) -> None:
    """The steps from ``start`` on with the decoder's own sizes (h_dec, d_ff_dec, V_dec)."""
    if not subs:
        return

    def e(x):
        return x.xreplace(subs) if isinstance(x, sp.Basic) else x

    for i in range(start, len(b.steps)):
        st = b.steps[i]
        b.steps[i] = WalkStep(
            st.stage,
            st.op,
            tuple(tuple(e(d) for d in shp) for shp in st.inputs),
            tuple(e(d) for d in st.output),
            e(st.flops),
            e(st.repeat),
            st.kind,
            e(st.pairs),
            st.note,
        )


def _patch_front(b: _Builder, spec: Spec, stage: str, B: sp.Expr, q: sp.Expr) -> None:
    """ViT: q - 1 patches of p x p pixels in C_in channels, each mapped to d_model by the
    stride-p Conv2d (a matmul over its C_in*p^2 inputs), the CLS token before them, then
    the learned positions (Dosovitskiy et al. 2021 §3.1)."""
    patches = (B, q - 1, S.C_in * S.p**2)
    b.op(stage, "pixels -> (L - 1) patches of C_in*p^2 values", [], patches, note="the input image", kind="reshape")
    y = b.mm(stage, "patches W_patch (Conv2d p x p, stride p)", patches, (S.C_in * S.p**2, S.d_model))
    x = b.op(stage, "prepend the CLS token", [y, (S.d_model,)], (B, q, S.d_model), kind="reshape")
    b.op(stage, "X + P[positions]", [x, (q, S.d_model)], x, note="the learned (patches + 1) x d_model table")


def _wav2vec2_front(b: _Builder, spec: Spec, stage: str, B: sp.Expr, q: sp.Expr) -> None:
    """wav2vec 2.0 / HuBERT: the convolutional feature encoder over the shortest 16 kHz waveform of
    q frames (its multiply-accumulates summed layer by layer by the config reader, M_fe1 + (q - 1)
    M_fe), the feature projection C_in -> d_model, then the grouped position convolution as G_pos
    unfolded products over K_pos taps of d_model/G_pos channels, at q + 1 positions for an even
    K_pos (padding K_pos // 2 each side; the last output dropped) and q for an odd one."""
    macs = S.M_fe1 + (q - 1) * S.M_fe
    b.op(stage, "waveform: R + (L - 1) H samples", [], (B, 1, q), note="16 kHz audio, one channel", kind="reshape")
    feats = b.mm(
        stage,
        "feature encoder: Conv1d layers (M_fe1 + (L - 1) M_fe multiply-accumulates)",
        (B, 1, macs),
        (macs, 1),
        note="the reader's sum over the layers of positions x C_(i-1) k_i C_i, counted as one product",
    )
    x = b.op(stage, "the last layer's C_in channels per frame", [feats], (B, q, S.C_in), kind="reshape")
    if spec.audio_feature_norm:
        b.op(stage, "norm of the C_in features", [x], x)
    y = b.mm(stage, "X W_feature_projection (C_in -> d_model)", x, (S.C_in, S.d_model))
    outputs = q + 1 + 2 * sp.floor(S.K_pos / 2) - S.K_pos
    width = S.K_pos * S.d_model / S.G_pos
    cols = b.op(
        stage, "unfold K_pos taps per group (padding K_pos // 2)", [y], (B, S.G_pos, outputs, width), kind="reshape"
    )
    pos = b.mm(stage, "position conv: per group, taps W_pos", cols, (B, S.G_pos, width, S.d_model / S.G_pos))
    b.op(stage, "GELU, X + pos (the last output dropped for an even K_pos)", [pos, y], (B, q, S.d_model))


def _audio_front(b: _Builder, spec: Spec, stage: str, B: sp.Expr, q: sp.Expr) -> None:
    """Whisper: 2q mel frames of C_in bins; conv1 (width 3) over every frame, conv2
    (width 3, stride 2) down to q positions, each a matmul over its 3 x channels window
    (Radford et al. 2022 §2.2), then the stored sinusoidal table."""
    frames = (B, 2 * q, 3 * S.C_in)
    b.op(stage, "mel frames -> width-3 windows", [], frames, note="2*L_src frames of C_in mel bins", kind="reshape")
    y = b.mm(stage, "conv1: windows W_1 (C_in -> d_model)", frames, (3 * S.C_in, S.d_model))
    b.op(stage, "GELU", [y], y)
    w = b.op(stage, "width-3 windows, stride 2", [y], (B, q, 3 * S.d_model), kind="reshape")
    x = b.mm(stage, "conv2: windows W_2 (stride 2)", w, (3 * S.d_model, S.d_model))
    b.op(stage, "GELU", [x], x)
    table = S.L_src_max if spec.has("L_src_max") else S.L_max
    b.op(
        stage,
        "X + PE[positions]",
        [x, (q, S.d_model)],
        x,
        note=f"rows of the stored {sp.sstr(table)} x d_model sinusoids",
    )


def _embed(
    b: _Builder,
    spec: Spec,
    stage: str,
    B: sp.Expr,
    q: sp.Expr,
    positional: str | None = None,
    table: sp.Expr = S.L_max,
) -> None:
    width = S.E_emb if spec.has("E_emb") else S.d_model
    positional = spec.positional if positional is None else positional
    x = (B, q, width)
    b.op(stage, "token ids", [], (B, q), note="the input: B sequences of tokens", kind="reshape")
    b.op(
        stage,
        "X = E[ids] (lookup)",
        [(B, q), (S.V, width)],
        x,
        note="a row lookup, not a matmul: 0 FLOPs",
        kind="lookup",
    )
    if spec.token_projection:  # OPT-350m: project the E_emb-wide token rows in, then add d_model-wide positions
        x = b.mm(stage, "X W_project_in (E_emb -> d_model)", x, (S.E_emb, S.d_model), note="OPTDecoder.project_in")
        width = S.d_model
    if positional == "learned":
        b.op(
            stage,
            "X + P[positions]",
            [x, (q, width)],
            x,
            note=f"rows 0..{sp.sstr(q)}-1 of the learned ({'L' if table == S.L_max else sp.sstr(table)} + "
            f"{spec.position_offset}) x width table, added",
        )
    elif positional == "sinusoidal-table":
        b.op(stage, "X + PE[positions]", [x, (q, width)], x, note="rows of the stored (frozen) sinusoidal table")
    elif positional == "sinusoidal":
        b.op(stage, "X + PE", [x, (q, width)], x, note="PE(pos,2i) = sin(pos/10000^(2i/d_model)), cos for 2i+1")
    if spec.token_types:
        b.op(stage, "X + T[token types]", [x, (spec.token_types, width)], x, note="segment embedding, added")
    deberta = spec.embedding_projection == "deberta"  # DeBERTa: project, then the norm at d_model
    if spec.embedding_norm and not deberta:
        b.op(stage, "norm", [x], x)
    if spec.has("E_emb") and not spec.token_projection:
        y = b.mm(
            stage,
            "X W_proj (E_emb -> d_model)",
            x,
            (S.E_emb, S.d_model),
            note="DeBERTa's embed_proj (no bias)"
            if deberta
            else "ALBERT's factorized embedding projection (Lan et al. 2020 §3.1)",
        )
        if spec.embedding_norm and deberta:
            b.op(stage, "norm", [y], y)


def _stack(
    b: _Builder,
    spec: Spec,
    stage: str,
    x: Shape,
    groups,
    kind: str,
    mask: str,
    context: sp.Expr,
    memory: Shape | None = None,
) -> None:
    for group in groups:
        n, moe, window, chunk = (*group, None, None)[:4]  # window: None = whenever the spec has w
        name = (
            f"{'MoE ' if moe else ''}{stage} layer"
            + {None: "", True: " (sliding window w)", False: " (full attention)"}[window]
            + (f" (window {sp.sstr(chunk)})" if chunk is not None else "")
        )
        if kind == "self" and spec.encoder_attention != "full":  # LongT5's blocks, LED's chunks
            sub = [("attention", lambda st, r, chunk=chunk: _long_attention(b, spec, st, x, r, chunk))]
        else:
            sub = [
                (
                    "attention",
                    lambda st, r, window=window: _attention(b, spec, st, x, x, kind, mask, context, r, window),
                )
            ]
        if memory is not None:
            sub.append(
                ("cross-attention", lambda st, r: _attention(b, spec, st, x, memory, "cross", mask, memory[1], r))
            )
        sub.append(("feed-forward", lambda st, r, moe=moe: (_moe if moe else _ffn)(b, spec, st, x, r)))
        shared = f" (weights shared: {spec.share_layers})" if spec.share_layers != "none" else ""
        st = f"{name} x {sp.sstr(n)}{shared}" if n != 1 else name + shared
        norms = spec.norm != "none"
        if norms and spec.layer_norms == "shared":  # one norm feeds both branches (parallel block)
            b.op(st, "input norm (shared by attention and feed-forward)", [x], x, n)
        for label, fn in sub:
            if norms and spec.layer_norms == "sandwich":
                b.op(st, f"{label} norm (before)", [x], x, n)
            elif norms and spec.layer_norms == "sublayer" and spec.norm_position == "pre":
                b.op(st, f"{label} norm", [x], x, n)
            fn(st, n)
            if norms and spec.layer_norms == "sandwich":
                b.op(st, f"{label} norm (after)", [x], x, n)
            b.op(
                st,
                "residual add"
                + (" (both branches read the layer input: parallel block)" if spec.parallel_block else ""),
                [x, x],
                x,
                n,
            )
            if norms and spec.layer_norms == "sublayer" and spec.norm_position == "post":
                b.op(st, f"{label} norm", [x], x, n)
    if spec.final_norm and spec.norm != "none":
        b.op(stage, "final norm", [x], x)


def _attention(
    b: _Builder,
    spec: Spec,
    st: str,
    x: Shape,
    src: Shape,
    kind: str,
    mask: str,
    context: sp.Expr,
    n: sp.Expr,
    window: bool | None = None,
    keys: sp.Expr | None = None,
) -> None:
    if spec.mla:
        return _mla_attention(b, spec, st, x, mask, context, n, keys)
    D = dims(spec)
    Bt, q, _ = x
    kv_rows = src[1]  # rows the K and V projections see
    kv = context  # keys each query is compared with
    if spec.attention_gate and kind != "cross":  # Qwen3-Next: q_proj emits the queries and an output gate
        qg = b.linear(st, "[Q, gate] = X W_Q", x, D.d_model, 2 * D.h * D.d_k, n, "Qwen3NextAttention.q_proj")
        q_ = b.op(st, "split the queries from the gate", [qg], (Bt, q, D.h * D.d_k), n, kind="reshape")
    else:
        q_ = b.linear(st, "Q = X W_Q", x, D.d_model, D.h * D.d_k, n)
    k_ = b.linear(
        st, "K = X W_K" if kind != "cross" else "K = M W_K (encoder output M)", src, D.d_model, D.h_kv * D.d_k, n
    )
    v_ = b.linear(st, "V = X W_V" if kind != "cross" else "V = M W_V", src, D.d_model, D.h_kv * D.d_v, n)
    Q = b.op(st, "split heads", [q_], (Bt, D.h, q, D.d_k), n, kind="reshape")
    K = b.op(st, "split K heads", [k_], (Bt, D.h_kv, kv_rows, D.d_k), n, kind="reshape")
    Vv = b.op(st, "split V heads", [v_], (Bt, D.h_kv, kv_rows, D.d_v), n, kind="reshape")
    if spec.qk_norm != "none":
        width = {"head": "width d_k", "per_head": "width d_k, one per head", "full": "over all heads", "l2": "L2"}
        b.op(st, f"query and key norms ({width[spec.qk_norm]})", [Q, K], Q, n)
    if spec.positional == "rotary" and kind != "cross":
        b.op(st, "rotate Q and K (RoPE)", [Q, K], Q, n, note="Su et al. 2021: elementwise rotations")
    if not _same(kv_rows, kv):
        K = b.op(
            st,
            "append K to the KV cache",
            [K],
            (Bt, D.h_kv, kv, D.d_k),
            n,
            kind="reshape",
            note="decode: keys of earlier tokens come from the cache",
        )
        Vv = b.op(st, "append V to the KV cache", [Vv], (Bt, D.h_kv, kv, D.d_v), n, kind="reshape")
    if spec.has("h_kv"):
        K = b.op(
            st,
            "repeat K heads h/h_kv times",
            [K],
            (Bt, D.h, kv, D.d_k),
            n,
            kind="reshape",
            note="grouped-query attention shares each K/V head among h/h_kv query heads",
        )
        Vv = b.op(st, "repeat V heads h/h_kv times", [Vv], (Bt, D.h, kv, D.d_v), n, kind="reshape")
    Kt = b.op(st, "K^T", [K], (Bt, D.h, D.d_k, kv), n, kind="reshape")
    if (spec.has("w") if window is None else window) and kind != "cross":
        pairs = kept_pairs(q, kv, mask, kind == "causal", S.w, spec.global_tokens)
        why = (
            f"local window w ({'causal, ' + mask + ' count' if kind == 'causal' else 'w/2 keys each side'})"
            + (f" + {spec.global_tokens} global tokens" if spec.global_tokens else "")
            + ": only kept pairs cost FLOPs"
        )
    else:
        pairs = kept_pairs(q, kv, mask, kind == "causal")
        why = (
            {
                "full": "causal mask not subtracted (the 'full' count: every query meets every key)",
                "causal": "causal mask: only the kept lower triangle costs FLOPs",
                "half": "causal mask counted as half the square",
                "window": "no window on this layer: every query meets every key (as 'full')",
            }[mask]
            if kind == "causal"
            else "every query meets every key"
        )
    scores = b.mm(st, "S = Q K^T / sqrt(d_k)", Q, Kt, n, why, pairs=pairs, masked="out")
    if spec.positional == "transformer-xl" and kind != "cross":  # Dai et al. 2019 §3.3
        Rw = b.mm(
            st,
            "R W_R (relative encodings R, shared by the batch)",
            (kv, D.d_model),
            (D.d_model, D.h * D.d_k),
            n,
            "the kv sinusoidal relative encodings, projected once per batch",
        )
        Rt = b.op(st, "split R heads, transpose, broadcast over B", [Rw], (Bt, D.h, D.d_k, kv), n, kind="reshape")
        pos = b.mm(st, "P = (Q + v) R^T", Q, Rt, n, why, pairs=pairs, masked="out")
        b.op(st, "S + shift(P) (relative shift), + (u K^T)", [scores, pos], scores, n)
    if (spec.positional == "alibi" or spec.relative_bias_at) and kind != "cross":
        b.op(st, "S + position bias", [scores], scores, n)
    if spec.sinks:
        b.op(st, "append one sink logit per head to every row of S", [scores], scores, n, note="gpt-oss: h parameters")
    if spec.has("L_rel") and kind == "self":
        _disentangled(b, spec, st, Q, K, scores, n)
    A = b.op(st, "A = softmax(mask(S))", [scores], scores, n)
    out = b.mm(st, "O = A V", A, Vv, n, why, pairs=pairs, masked="left")
    cat = b.op(st, "concatenate heads", [out], (Bt, q, D.h * D.d_v), n, kind="reshape")
    if spec.attention_gate and kind != "cross":
        b.op(st, "O * sigmoid(gate)", [cat], cat, n)
    b.linear(st, "X' = O W_O", cat, D.h * D.d_v, D.d_model, n)


def _long_attention(b: _Builder, spec: Spec, st: str, x: Shape, n: sp.Expr, chunk: sp.Expr | None) -> None:
    """A long-input encoder's self-attention as transformers 5.24 computes it, eager, no global tokens.

    LED (``LEDEncoderSelfAttention``, Beltagy et al. 2020 §3.1), window w = ``chunk`` over the q padded
    positions, a = w / 2: ``_sliding_chunks_query_key_matmul`` multiplies q / a - 1 overlapping chunks
    of w queries by w keys; ``_sliding_chunks_matmul_attn_probs_value`` multiplies q / a chunks of a
    queries' probabilities by 3a values (padded by a at each end).  The mask's band is the same chunked
    product of 1-wide ones (a contraction of size 1: an elementwise product, 0 FLOPs).  The global
    tokens' query_global, key_global and value_global maps do not run without global tokens.

    LongT5 (``LongT5LocalAttention`` / ``LongT5TransientGlobalAttention``, Guo et al. 2022 §3.1):
    ceil(q / b_loc) blocks of b_loc queries (the last padded), each against its own and both
    neighbouring blocks' keys, 3 b_loc, and for transient-global the G = floor(q / b_glob) global
    tokens' keys: the global aggregates x^T one_hot (a product by the B x q x G one-hot matrix),
    their norm, and the layer's W_K and W_V on the G tokens."""
    D = dims(spec)
    Bt, q, _ = x
    q_ = b.linear(st, "Q = X W_Q", x, D.d_model, D.h * D.d_k, n)
    k_ = b.linear(st, "K = X W_K", x, D.d_model, D.h * D.d_k, n)
    b.linear(st, "V = X W_V", x, D.d_model, D.h * D.d_v, n)
    heads = b.op(st, "split Q, K, V heads", [q_, k_], (Bt, D.h, q, D.d_k), n, kind="reshape")
    if spec.encoder_attention == "longformer":
        w = chunk
        a = w / 2
        qc = b.op(
            st,
            "Q: overlapping chunks of w, stride w/2 (_chunk)",
            [heads],
            (Bt, D.h, q / a - 1, w, D.d_k),
            n,
            kind="reshape",
        )
        kc = b.op(st, "K^T: the same chunks", [heads], (Bt, D.h, q / a - 1, D.d_k, w), n, kind="reshape")
        scores = b.mm(st, "S = Q K^T / sqrt(d_k), chunk by chunk", qc, kc, n, "every product of the overlapping chunks")
        band = b.op(
            st, "diagonals to the band of w + 1 keys per query", [scores], (Bt, q, D.h, w + 1), n, kind="reshape"
        )
        b.op(st, "+ mask band (the chunked product of 1-wide ones: 0 FLOPs)", [band], band, n)
        b.op(st, "A = softmax(S)", [band], band, n)
        ac = b.op(
            st,
            "A: chunks of w/2 queries x 3w/2 keys (_pad_and_diagonalize)",
            [band],
            (Bt, D.h, q / a, a, 3 * a),
            n,
            kind="reshape",
        )
        vc = b.op(
            st,
            "V padded w/2 each side: chunks of 3w/2, stride w/2",
            [heads],
            (Bt, D.h, q / a, 3 * a, D.d_v),
            n,
            kind="reshape",
        )
        out = b.mm(st, "O = A V, chunk by chunk", ac, vc, n, "each chunk of w/2 queries against 3w/2 values")
    else:
        blocks = sp.ceiling(q / S.b_loc)
        keys = 3 * S.b_loc
        if spec.encoder_attention == "transient-global":
            G = sp.floor(q / S.b_glob)
            xt = b.op(st, "X^T", [x], (Bt, D.d_model, q), n, kind="reshape")
            agg = b.mm(
                st, "global aggregates X^T one_hot", xt, (Bt, q, G), n, "each of the G tokens sums b_glob tokens"
            )
            g = b.op(st, "transpose; global_input_layer_norm", [agg], (Bt, G, D.d_model), n)
            b.linear(st, "K_g = X_g W_K (global tokens)", g, D.d_model, D.h * D.d_k, n, "the layer's own W_K")
            b.linear(st, "V_g = X_g W_V (global tokens)", g, D.d_model, D.h * D.d_v, n, "the layer's own W_V")
            keys = keys + G
        qb = b.op(
            st,
            "Q: ceil(L / b_loc) blocks of b_loc (padded)",
            [heads],
            (Bt, D.h, blocks, S.b_loc, D.d_k),
            n,
            kind="reshape",
        )
        kb = b.op(
            st,
            "K^T: 3 neighbouring blocks per block" + (" + G global keys" if keys != 3 * S.b_loc else ""),
            [heads],
            (Bt, D.h, blocks, D.d_k, keys),
            n,
            kind="reshape",
        )
        scores = b.mm(st, "S = Q K^T, block by block", qb, kb, n, "every query of a block against its block's keys")
        b.op(st, "S + position bias (local, and global for transient-global)", [scores], scores, n)
        A = b.op(st, "A = softmax(S)", [scores], scores, n)
        vb = b.op(st, "V: the same keys' values", [heads], (Bt, D.h, blocks, keys, D.d_v), n, kind="reshape")
        out = b.mm(st, "O = A V, block by block", A, vb, n)
    cat = b.op(st, "concatenate heads (padding dropped)", [out], (Bt, q, D.h * D.d_v), n, kind="reshape")
    b.linear(st, "X' = O W_O", cat, D.h * D.d_v, D.d_model, n)


def _mla_attention(
    b: _Builder, spec: Spec, st: str, x: Shape, mask: str, context: sp.Expr, n: sp.Expr, keys: sp.Expr | None = None
) -> None:
    """Multi-head latent attention (DeepSeek-V2 §2.1) as transformers 5.x runs it
    (DeepseekV3Attention): the latent c (r_kv) and the shared rotary key (d_rope) of the new
    tokens are cached, and W_UKV expands every cached latent into h keys and values each step.
    ``keys``: DeepSeek Sparse Attention's top k_idx keys per query (DeepSeek-V3.2 §2.1, eq. 2),
    counted as a causal window of k_idx keys under ``causal`` and ``half``; under ``full`` and
    ``window`` the dense square (eager attention applies the top-k as a mask)."""
    Bt, q, _ = x
    kv = context
    dk = S.d_nope + S.d_rope
    if spec.has("r_q"):
        cq = b.linear(st, "C_Q = X W_DQ (query latent)", x, S.d_model, S.r_q, n)
        b.op(st, "norm of C_Q", [cq], cq, n)
        q_ = b.linear(st, "Q = C_Q W_UQ", cq, S.r_q, S.h * dk, n)
    else:
        q_ = b.linear(st, "Q = X W_Q", x, S.d_model, S.h * dk, n)
    Q = b.op(st, "split heads", [q_], (Bt, S.h, q, dk), n, kind="reshape")
    ckv = b.linear(st, "[C_KV, k_rope] = X W_DKV", x, S.d_model, S.r_kv + S.d_rope, n)
    b.op(st, "norm of C_KV; rotate Q and k_rope (RoPE)", [ckv], ckv, n)
    latent = (Bt, kv, S.r_kv)
    if not _same(q, kv):
        b.op(st, "append C_KV and k_rope to the cache", [ckv], (Bt, kv, S.r_kv + S.d_rope), n, kind="reshape")
    kv_ = b.linear(st, "[K_nope, V] = C_KV W_UKV (every cached position)", latent, S.r_kv, S.h * (S.d_nope + S.d_v), n)
    K = b.op(st, "split heads, append the shared k_rope to every head", [kv_], (Bt, S.h, kv, dk), n, kind="reshape")
    Vv = b.op(st, "split V heads", [kv_], (Bt, S.h, kv, S.d_v), n, kind="reshape")
    Kt = b.op(st, "K^T", [K], (Bt, S.h, dk, kv), n, kind="reshape")
    if keys is not None:
        pairs = kept_pairs(q, kv, "full" if mask == "window" else mask, True, keys)
    else:
        pairs = kept_pairs(q, kv, mask, True, S.w) if spec.has("w") else kept_pairs(q, kv, mask, True)
    why = "causal self-attention over the expanded keys" + (", top k_idx of them" if keys is not None else "")
    scores = b.mm(st, "S = Q K^T / sqrt(d_nope + d_rope)", Q, Kt, n, why, pairs=pairs, masked="out")
    A = b.op(st, "A = softmax(mask(S))", [scores], scores, n)
    out = b.mm(st, "O = A V", A, Vv, n, why, pairs=pairs, masked="left")
    cat = b.op(st, "concatenate heads", [out], (Bt, q, S.h * S.d_v), n, kind="reshape")
    b.linear(st, "X' = O W_O", cat, S.h * S.d_v, S.d_model, n)


def _disentangled(b: _Builder, spec: Spec, st: str, Q: Shape, K: Shape, scores: Shape, n: sp.Expr) -> None:
    """DeBERTa's c2p and p2c terms (He et al. 2021 §3.1; HF DisentangledSelfAttention): the
    2 L_rel table rows projected once per layer (not per sequence), then each term's product
    against every table row, gathered per query-key pair."""
    D = dims(spec)
    Bt = Q[0]
    table = (2 * S.L_rel, D.d_model)
    terms = spec.disentangled.split("|") if spec.disentangled != "none" else []
    for term, w, rows, what in (("p2c", "Q", K, "K"), ("c2p", "K", Q, "Q")):
        if not (spec.share_att_key or term in terms):
            continue
        name = f"W_{w}" if spec.share_att_key else f"W_pos_{w}"
        used = "" if term in terms else " (share_att_key: computed, not used)"
        P = b.mm(st, f"R {name}{used}", table, (D.d_model, D.h * D.d_k), n, "the relative table, once per layer")
        if term not in terms:
            continue
        Pt = b.op(st, "split heads, transpose, repeat over B", [P], (Bt, D.h, D.d_k, 2 * S.L_rel), n, kind="reshape")
        prod = b.mm(st, f"{term} = {what} (R {name})^T", rows, Pt, n, "every token against all 2 L_rel distances")
        b.op(st, f"gather {term} per pair, scale, add to S", [prod, scores], scores, n)


def _ffn(b: _Builder, spec: Spec, st: str, x: Shape, n: sp.Expr, label: str = "", width=None) -> None:
    D = dims(spec)
    if width is not None:  # a routed or shared expert's own width (types-moe)
        D = replace(D, d_ff=width)
    lr = spec.has("r")
    *lead, _ = x
    hid = tuple(lead) + (D.d_ff,)
    if spec.ffn == "mlp":
        h1 = b.linear(st, f"{label}H = X W_1", x, D.d_model, D.d_ff, n, low_rank=lr)
        b.op(st, f"{label}activation", [h1], h1, n)
        b.linear(st, f"{label}Y = H W_2", hid, D.d_ff, D.d_model, n, low_rank=lr)
        return
    g = b.linear(st, f"{label}G = X W_gate", x, D.d_model, D.d_ff, n, low_rank=lr)
    b.linear(st, f"{label}U = X W_up", x, D.d_model, D.d_ff, n, low_rank=lr)
    b.op(st, f"{label}act(G) * U", [g, g], g, n)
    b.linear(st, f"{label}Y = (act(G) * U) W_down", hid, D.d_ff, D.d_model, n, low_rank=lr)


def _moe(b: _Builder, spec: Spec, st: str, x: Shape, n: sp.Expr) -> None:
    Bt, q, _ = x
    logits = b.mm(st, "router logits = X W_router", x, (S.d_model, S.E), n)
    b.op(st, "top-k of E experts per token", [logits], (Bt, q, S.k), n, kind="reshape")
    routed = (S.k * Bt * q, S.d_model)
    b.op(
        st,
        "dispatch: k copies of each token to its experts",
        [x],
        routed,
        n,
        kind="reshape",
        note="the E experts together see k*B*L token rows",
    )
    width_e = S.d_ff_e if spec.has("d_ff_e") else S.d_ff
    _ffn(b, spec, st, routed, n, "experts: ", width_e)
    b.op(st, "combine: gate-weighted sum of the k outputs", [routed], x, n)
    if spec.n_shared_experts:
        _ffn(b, spec, st, x, n * spec.n_shared_experts, "shared expert: ", S.d_ff_s if spec.has("d_ff_s") else width_e)
    if spec.shared_expert_gate:
        g = b.linear(st, "shared expert gate g = X W_g", x, S.d_model, ONE, n)
        b.op(st, "sigmoid(g) * shared expert output", [g, x], x, n)


def _lm_head(b: _Builder, spec: Spec, x: Shape) -> None:
    if spec.token_projection:  # OPT-350m's project_out, the decoder's last map
        x = b.mm(
            "decoder", "X W_project_out (d_model -> E_emb)", x, (S.d_model, S.E_emb), note="OPTDecoder.project_out"
        )
    elif spec.has("E_emb"):
        x = b.mm("LM head", "X W_head_proj (d_model -> E_emb)", x, (S.d_model, S.E_emb))
    w = S.E_emb if spec.has("E_emb") else S.d_model
    b.mm("LM head", "logits = X W_out" + (" (tied: E^T)" if spec.tie_output else ""), x, (w, S.V))


# ---------------------------------------------------------------------------------
# rendering


def _shape(shp: Shape) -> str:
    return " x ".join(sp.sstr(d) for d in shp) if shp else "()"


def walk_rows(w: Walk, values: Mapping[str, int] | None = None) -> list[dict]:
    """JSON-ready rows: symbolic shapes and FLOPs, plus numbers when ``values`` are given."""
    nums = w.evaluate(values) if values is not None else None
    rows = []
    for i, s in enumerate(w.steps):
        row = {
            "index": i + 1,
            "stage": s.stage,
            "op": s.op,
            "kind": s.kind,
            "inputs": [_shape(x) for x in s.inputs],
            "output": _shape(s.output),
            "repeat": sp.sstr(s.repeat),
            "flops": sp.sstr(s.flops),
        }
        if nums is not None:
            row["at"] = {k: nums[i][k] for k in ("inputs", "output", "repeat", "flops", "total_flops")}
        rows.append(row)
    return rows


def step_detail(w: Walk, step: int, values: Mapping[str, int] | None = None) -> dict:
    """Step ``step`` (1-based) of the walk as JSON-ready data: its shapes, its FLOPs formula
    and, with ``values``, the shapes at those sizes and the FLOPs as formula = substitution =
    value (exact integers, FLOPs), times the layers it repeats over.

    Raises:
        ValueError: for a step number out of range.
    """
    from symtrans.engine.evaluate import exact

    if not 1 <= step <= len(w.steps):
        raise InputError(f"--step must be between 1 and {len(w.steps)}, not {step}")
    s = w.steps[step - 1]
    out: dict = {
        "index": step,
        "stage": s.stage,
        "op": s.op,
        "kind": s.kind,
        "inputs": [_shape(x) for x in s.inputs],
        "output": _shape(s.output),
        "flops": sp.sstr(s.flops),
        "repeat": sp.sstr(s.repeat),
        "note": s.note,
    }
    if values is not None:
        sub = {S.SYMBOLS[k]: sp.Integer(v) for k, v in values.items() if k in S.SYMBOLS}
        with sp.evaluate(False):  # the substituted middle step, unevaluated
            middle = sp.sstr(s.flops.xreplace(sub))
        out["at"] = {
            "inputs": [[exact(d, values) for d in x] for x in s.inputs],
            "output": [exact(d, values) for d in s.output],
            "flops_substituted": middle,
            "flops": exact(s.flops, values),
            "repeat": exact(s.repeat, values),
            "total_flops": exact(s.total_flops, values),
        }
    return out


def render_text(w: Walk, values: Mapping[str, int] | None = None, step: int | None = None) -> str:
    """The walk as a plain-text table (symbols; numbers in brackets when ``values`` given).

    ``step`` (1-based) prints only that step with its FLOPs as formula = substitution = value.

    Raises:
        ValueError: for a step number out of range.
    """
    from symtrans.base.numbers import grouped

    if step is not None:
        d = step_detail(w, step, values)
        lines = [
            f"step {step}: {d['op']}  [{d['stage']}]",
            f"  inputs: {', '.join(d['inputs']) or '-'}",
            f"  output: {d['output']}",
            f"  FLOPs:  {d['flops']}",
        ]
        if d["note"]:
            lines.append(f"  why:    {d['note']}")
        if "at" in d:
            at = d["at"]
            lines.append(
                f"  at:     inputs {', '.join(' x '.join(map(str, x)) or '()' for x in at['inputs']) or '-'}"
                f" -> {' x '.join(map(str, at['output'])) or '()'}"
            )
            lines.append(f"  FLOPs = {d['flops']} = {at['flops_substituted']} = {grouped(at['flops'])}")
            if d["repeat"] != "1":
                lines.append(f"  x {d['repeat']} = {at['repeat']} layers: {grouped(at['total_flops'])}")
        return "\n".join(lines)
    rows = walk_rows(w, values)
    lines = []
    for r in rows:
        rep = f" x{r['repeat']}" if r["repeat"] != "1" else ""
        flops = "" if r["flops"] == "0" else f"  FLOPs {r['flops']}"
        lines.append(
            f"{r['index']:>3}. [{r['stage']}] {r['op']}: {' , '.join(r['inputs']) or '-'} -> {r['output']}{flops}"
        )
        if values is not None:
            at = r["at"]
            ins = " , ".join(" x ".join(str(d) for d in x) for x in at["inputs"]) or "-"
            f = ""
            if at["flops"]:
                f = f"  FLOPs {grouped(at['flops'])}"
                if rep:
                    f += f" (x{at['repeat']} = {grouped(at['total_flops'])})"
            lines.append(f"       {ins} -> {' x '.join(str(d) for d in at['output'])}{f}")
    return "\n".join(lines)


def render_markdown(w: Walk, values: Mapping[str, int] | None = None, step: int | None = None) -> str:
    """The walk as a Markdown table: step, operation, input and output shapes, FLOPs.

    ``step`` (1-based) renders only that step, with its FLOPs as formula = substitution =
    value when ``values`` are given.

    Raises:
        ValueError: for a step number out of range.
    """
    from symtrans.base.numbers import grouped

    if step is not None:
        d = step_detail(w, step, values)
        lines = [
            f"### Step {step}: `{d['op']}` ({d['stage']})",
            "",
            f"- inputs: {', '.join(f'`{x}`' for x in d['inputs']) or '-'}",
            f"- output: `{d['output']}`",
            f"- FLOPs: `{d['flops']}`",
        ]
        if d["note"]:
            lines.append(f"- why: {d['note']}")
        if "at" in d:
            at = d["at"]
            lines.append(f"- FLOPs = `{d['flops']}` = `{at['flops_substituted']}` = {grouped(at['flops'])}")
            if d["repeat"] != "1":
                lines.append(f"- x `{d['repeat']}` = {at['repeat']} layers: {grouped(at['total_flops'])}")
        return "\n".join(lines)
    rows = walk_rows(w, values)
    head = "| # | stage | operation | inputs | output | FLOPs |" + (" at these sizes |" if values is not None else "")
    sep = "|---|---|---|---|---|---|" + ("---:|" if values is not None else "")
    lines = [head, sep]
    for r in rows:
        cells = [
            str(r["index"]),
            r["stage"],
            r["op"],
            "; ".join(f"`{x}`" for x in r["inputs"]) or "-",
            f"`{r['output']}`",
            f"`{r['flops']}`" + (f" x `{r['repeat']}`" if r["repeat"] != "1" else ""),
        ]
        if values is not None:
            cells.append(grouped(r["at"]["total_flops"]))
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------
# sinusoidal table


def pe_value(pos: int, j: int, d_model: int) -> sp.Expr:
    """Exact PE(pos, j): sin(pos/10000^(2i/d_model)) for j = 2i, cos(...) for j = 2i + 1.

    Vaswani et al. 2017 §3.5.  i is the pair index j // 2 (not the column index).
    """
    i = j // 2
    angle = sp.Integer(pos) / sp.Integer(10000) ** sp.Rational(2 * i, d_model)
    return sp.sin(angle) if j % 2 == 0 else sp.cos(angle)


def pe_table(d_model: int = 6, positions: int = 7) -> list[list[sp.Expr]]:
    """The exact sinusoidal table, ``positions`` rows by ``d_model`` columns.

    Defaults: d_model 6 and positions 0..6, the worked example of a 6-wide model with
    seven tokens ("when you play the game of thrones").

    Raises:
        ValueError: for d_model or positions outside 1..64 (the exact table is for small widths).
    """
    for name, v in (("d_model", d_model), ("positions", positions)):
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 64:
            raise InputError(f"the exact PE table needs {name} between 1 and 64, not {v!r}")
    return [[pe_value(p, j, d_model) for j in range(d_model)] for p in range(positions)]


def render_pe_table(d_model: int = 6, positions: int = 7, digits: int = 6) -> str:
    """The exact table as text: each entry as its SymPy value with its decimal beside it."""
    table = pe_table(d_model, positions)
    lines = [
        f"sinusoidal positional encoding, d_model = {d_model}, positions 0..{positions - 1} "
        f"(Vaswani et al. 2017 §3.5): PE(pos,2i) = sin(pos/10000^(2i/d_model)), PE(pos,2i+1) = cos(...)"
    ]
    for p, row in enumerate(table):
        cells = [f"{sp.sstr(v)} = {float(v.evalf(30)):.{digits}f}" for v in row]
        lines.append(f"pos {p}: " + " | ".join(cells))
    return "\n".join(lines)
