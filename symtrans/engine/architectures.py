"""The three families, composed from components with multiplicity N.

``build(spec, workload)`` returns the model's ``Cost`` tree.  Its top-level children
are the components a report lists: embeddings, the stacks (each holding its layer
with multiplicity N and its final norm), and the heads.  Layer counts stay symbolic,
so a 1000-layer model costs the same to build as a 1-layer one, and built trees are
cached per structural spec (``Spec.structure()``) and workload.

Sources: Vaswani et al. 2017 (encoder-decoder); Devlin et al. 2019 and HF
``BertModel`` (encoder-only); Radford et al. 2019 and HF ``GPT2LMHeadModel``,
``LlamaForCausalLM``, ``MixtralForCausalLM`` (decoder-only); HF
``T5ForConditionalGeneration`` and ``BartForConditionalGeneration``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.engine import symbols as S
from symtrans.engine.components import (
    MASKS,
    attention,
    dims,
    feed_forward,
    linear,
    moe_feed_forward,
    norm,
    positions,
    relative_bias,
    token_embedding,
)
from symtrans.engine.conventions import per_element
from symtrans.engine.cost import NONE, ONE, ZERO, Cost, Matrix, Step, substitute  # noqa: F401 (re-exported)
from symtrans.engine.deepseek_v4 import hyper_head
from symtrans.engine.disentangled import conv_layer, relative_table
from symtrans.engine.dual import dual_parts
from symtrans.engine.frontends import audio_conv, patch_embedding, wav2vec2_front
from symtrans.engine.long_rules import encoder_windows
from symtrans.engine.roles import ATTENTION_BLOCKS, Block, Role
from symtrans.engine.spec import DECODER_SIZES, Spec
from symtrans.engine.stack import hybrid_layers
from symtrans.engine.transient_global import (
    longformer_global_maps,
    longformer_padded,
    transient_global,
    transient_global_steps,
)
from symtrans.engine.vision import vision_parts


@dataclass(frozen=True)
class Workload:
    """What the forward pass processes (all SymPy expressions; symbols by default).

    Attributes:
        batch: sequences in the batch (``B``).
        seq: tokens per sequence for encoder-only and decoder-only models (``L``).
        src, tgt: encoder and decoder tokens of an encoder-decoder (``L_src``, ``L_tgt``).
        context: keys each decoder query sees in causal self-attention; ``None``
            means the sequence itself (``seq`` or ``tgt``).  Decode with a KV cache
            processes seq = 1 new token against ``context`` cached ones.
        mask: ``full`` | ``causal`` | ``half`` | ``window``: how causal self-attention is
            counted (``components.attention_pairs``, ``windowed_pairs``).
    """

    batch: sp.Expr = S.B
    seq: sp.Expr = S.L
    src: sp.Expr = S.L_src
    tgt: sp.Expr = S.L_tgt
    context: sp.Expr | None = None
    mask: str = "full"

    def __post_init__(self) -> None:
        if self.mask not in MASKS:
            raise InputError(f"mask must be one of {', '.join(MASKS)}, not {self.mask!r}")

    @property
    def self_mask(self) -> str:
        """The mask of the decoder's self-attention.  A decode step against a KV cache
        (``context`` given) under ``full`` counts the keys the cache holds: every one on a
        full layer, at most w on a sliding layer (transformers' DynamicSlidingWindowLayer
        keeps the last w), which is the ``window`` count; a whole sequence or a prefill
        under ``full`` computes the whole square, the window applied as a mask."""
        return "window" if self.context is not None and self.mask == "full" else self.mask


FORWARD = Workload()


def _norms(spec: Spec, label: str, tokens: sp.Expr) -> Cost | None:
    steps = norm(spec, label, S.d_model, tokens)
    return Cost(name=label, block=Block.NORM, steps=tuple(steps)) if steps else None


def _layer(
    spec: Spec, name: str, blocks: list[Cost], n_norms: list[str | None], tokens: sp.Expr, multiplicity: sp.Expr
) -> Cost:
    """Interleave sublayers with their norms in the order of ``spec.norm_position``;
    ``layer_norms=sandwich`` puts one before and one after each sublayer (Gemma-2/3),
    ``shared`` one norm before the two branches of a ``parallel_block`` (GPT-J)."""
    children: list[Cost] = []
    if spec.layer_norms == "shared":  # one norm feeds attention and FFN (parallel block)
        nrm = _norms(spec, "input norm (shared by attention and feed-forward)", tokens)
        return _layer_cost(spec, name, ([nrm] if nrm else []) + list(blocks), len(blocks), tokens, multiplicity)
    for block, label in zip(blocks, n_norms):
        if spec.layer_norms == "sandwich":
            before, after = _norms(spec, f"{label} (before)", tokens), _norms(spec, f"{label} (after)", tokens)
            children += [c for c in (before, block, after) if c]
            continue
        nrm = _norms(spec, label, tokens) if label is not None else None  # None: this sublayer has no norm
        if spec.norm_position == "pre" and nrm:
            children.append(nrm)
        children.append(block)
        if spec.norm_position == "post" and nrm:
            children.append(nrm)
    return _layer_cost(spec, name, children, len(blocks), tokens, multiplicity)


def _layer_cost(
    spec: Spec, name: str, children: list[Cost], n_blocks: int, tokens: sp.Expr, multiplicity: sp.Expr
) -> Cost:
    residual = Step(
        label="residual adds",
        role=Role.RESIDUAL,
        elementwise=per_element("residual") * n_blocks * tokens * S.d_model,
        note="x + Attn(norm(x)) + FFN(norm(x)): both branches added to the layer input (all-ops only)"
        if spec.parallel_block
        else "x + Sublayer(x) after each sublayer (all-ops only)",
        source="Wang & Komatsuzaki 2021 (GPT-J parallel block)" if spec.parallel_block else "Vaswani et al. 2017 §3.1",
    )
    return Cost(
        name=name,
        block=Block.LAYER,
        steps=(residual,),
        children=tuple(children),
        multiplicity=multiplicity,
        note="one layer; the stack repeats it"
        + ("; attention and feed-forward read the same input (parallel block)" if spec.parallel_block else ""),
    )


def _ffn(spec: Spec, tokens: sp.Expr) -> Cost:
    return moe_feed_forward(spec, tokens) if spec.is_moe else feed_forward(spec, tokens)


def encoder_layer(
    spec: Spec,
    batch: sp.Expr,
    q: sp.Expr,
    multiplicity: sp.Expr = ONE,
    attention_norm: bool = True,
    name: str = "encoder layer",
    window: bool | None = None,
    mask: str = "full",
    longformer_window: sp.Expr = S.w_att,
) -> Cost:
    """Self-attention + norm + FFN + norm (torch ``TransformerEncoderLayer``, HF ``BertLayer``);
    ``attention_norm=False``: no norm before the attention (ModernBERT's first layer); ``window``,
    ``mask`` and ``longformer_window`` as ``components.attention``'s (the mask reaches a
    ``Spec.window_mask`` window only)."""
    t = batch * q
    att = attention(spec, "self", batch, q, q, mask=mask, window=window, longformer_window=longformer_window)
    if spec.encoder_attention == "longformer":  # LED: the global tokens' own Q, K, V maps
        att = replace(att, steps=att.steps + tuple(longformer_global_maps()))
    elif spec.encoder_attention == "transient-global":  # LongT5: the global tokens and their keys and values
        att = replace(att, steps=att.steps + tuple(transient_global_steps(batch, q)))
    return _layer(
        spec,
        name,
        [att, _ffn(spec, t)],
        ["attention norm" if attention_norm else None, "feed-forward norm"],
        t,
        multiplicity,
    )


def _led_layers(spec: Spec, batch: sp.Expr, q: sp.Expr, n: sp.Expr) -> list[Cost]:
    """An encoder-decoder's n encoder layers: alike, or LED's layers grouped by window when
    ``Spec.encoder_windows`` lists different ones (``LEDEncoderLayer`` reads
    ``config.attention_window[layer_id]``): the layers of the largest window, w_att, as n less the
    others, then each smaller window's layers, its window and count written out."""
    windows = encoder_windows(spec)
    if not windows:
        return [encoder_layer(spec, batch, q, n)]
    counts = Counter(windows)
    big = max(windows)
    others = sorted((w for w in counts if w != big), reverse=True)
    out = [encoder_layer(spec, batch, q, n - sum(counts[w] for w in others), name="encoder layer (window w_att)")]
    for w in others:
        out.append(
            encoder_layer(
                spec,
                batch,
                q,
                sp.Integer(counts[w]),
                name=f"encoder layer (window {w})",
                longformer_window=sp.Integer(w),
            )
        )
    return out


def _encoder_layers(spec: Spec, batch: sp.Expr, q: sp.Expr, n: sp.Expr, mask: str = "full") -> list[Cost]:
    """The encoder's n layers: alike, or (``first_attention_norm`` false) the first without its
    attention norm and the other n - 1 with it (ModernBertEncoderLayer)."""
    if spec.has("N_w"):
        # N_w windowed layers and N − N_w global ones (ModernBERT); which layer is which changes no count,
        # so the first layer (without its attention norm where first_attention_norm is false) is a global one
        first = (
            []
            if spec.first_attention_norm
            else [
                encoder_layer(
                    spec,
                    batch,
                    q,
                    ONE,
                    attention_norm=False,
                    name="first encoder layer (no attention norm; global attention)",
                    window=False,
                    mask=mask,
                )
            ]
        )
        full = n - S.N_w - len(first)
        windowed = encoder_layer(
            spec, batch, q, S.N_w, name="encoder layers (sliding window w)", window=True, mask=mask
        )
        out = first + [windowed]
        if full != 0:
            out.append(
                encoder_layer(spec, batch, q, full, name="encoder layers (global attention)", window=False, mask=mask)
            )
        return out
    if spec.first_attention_norm:
        return [encoder_layer(spec, batch, q, n, mask=mask)]
    first = encoder_layer(
        spec, batch, q, ONE, attention_norm=False, name="first encoder layer (no attention norm)", mask=mask
    )
    return [first, encoder_layer(spec, batch, q, n - 1, name="encoder layers 2..N", mask=mask)]


def decoder_layer(
    spec: Spec,
    batch: sp.Expr,
    q: sp.Expr,
    context: sp.Expr,
    src: sp.Expr | None,
    mask: str,
    multiplicity: sp.Expr = ONE,
    name: str = "decoder layer",
    moe: bool | None = None,
    window: bool | None = None,
) -> Cost:
    """Causal self-attention (+ cross-attention when ``src``) + FFN, each with its norm;
    ``window``: whether the self-attention attends within ``w`` (None: when the spec has w)."""
    t = batch * q
    if spec.mla:  # multi-head latent attention (DeepSeek-V2/V3; no sliding window)
        from symtrans.engine.mla import mla_attention

        blocks = [mla_attention(spec, "causal", batch, q, context, mask)]
    else:
        blocks = [attention(spec, "causal", batch, q, context, mask, window)]
    labels = ["attention norm"]
    if src is not None:
        blocks.append(attention(spec, "cross", batch, q, src))
        labels.append("cross-attention norm")
    use_moe = spec.is_moe if moe is None else moe
    blocks.append(moe_feed_forward(spec, t) if use_moe else feed_forward(spec, t))
    labels.append("feed-forward norm")
    return _layer(spec, name, blocks, labels, t, multiplicity)


def _embedding_width(spec: Spec) -> sp.Expr:
    """E_emb for ALBERT's factorized embedding (Lan et al. 2020 §3.1), else d_model."""
    return S.E_emb if spec.has("E_emb") else S.d_model


def _embeddings(
    spec: Spec,
    name: str,
    with_tokens: bool,
    token_note: str = "",
    tokens: sp.Expr | None = None,
    block: Block = Block.EMBEDDINGS,
    front: tuple[Step, ...] = (),
    positional: str | None = None,
    table: sp.Expr = S.L_max,
) -> Cost:
    """Token, position and token-type embeddings (+ norm), all ``E_emb`` wide when the
    spec factorizes the embedding, then the E_emb x d_model projection with bias on
    ``tokens`` rows (HF AlbertEmbeddings + AlbertTransformer.embedding_hidden_mapping_in).
    ``front``: a front end's steps before them (``frontends``); ``positional`` and
    ``table``: this stack's own position kind and table rows (``components.positions``)."""
    steps: list[Step] = list(front)
    width = _embedding_width(spec)
    if with_tokens:
        steps.append(token_embedding(tied_note=token_note, width=width))
    if spec.token_projection:  # OPT-350m: only the token table is E_emb wide
        width = S.d_model
    steps += positions(spec, width, positional, table)
    if spec.token_types:
        steps.append(
            Step(
                label="token-type embedding",
                role=Role.TYPE_EMBEDDING,
                params=spec.token_types * width,
                note=f"{spec.token_types} segment vectors",
                source="Devlin et al. 2019 §3; BertEmbeddings",
                matrices=(Matrix(ONE, sp.Integer(spec.token_types), width, lookup=True),),
            )
        )
    deberta = spec.embedding_projection == "deberta"  # project first, then the norm at d_model
    if spec.embedding_norm and not deberta:
        steps += norm(spec, "embedding norm", width, ONE)
    if spec.has("E_emb") and tokens is not None and spec.token_projection:
        steps += linear(
            "project_in",
            S.E_emb,
            S.d_model,
            tokens,
            False,
            "Zhang et al. 2022 (OPT); OPTDecoder.project_in",
            "E_emb -> d_model map of the token embeddings (no bias), before the positions are added",
            role=Role.EMBEDDING_PROJECTION,
        )
    elif spec.has("E_emb") and tokens is not None:
        steps += linear(
            "embedding projection",
            S.E_emb,
            S.d_model,
            tokens,
            not deberta,
            "DebertaV2Embeddings.embed_proj (no bias)"
            if deberta
            else "Lan et al. 2020 §3.1 (factorized embedding); AlbertTransformer.embedding_hidden_mapping_in",
            "E_emb -> d_model projection of the factorized embedding",
            role=Role.EMBEDDING_PROJECTION,
        )
    if spec.embedding_norm and deberta:
        steps += norm(spec, "embedding norm", S.d_model, ONE)
    return Cost(name=name, block=block, steps=tuple(steps))


def decoder_symbols(spec: Spec) -> dict[sp.Symbol, sp.Symbol]:
    """The encoder symbols an encoder-decoder's decoder replaces by its own sizes
    (``spec.DECODER_SIZES``: h -> h_dec, d_ff -> d_ff_dec, V -> V_dec where given; the
    position rows L_tgt_max are passed to the decoder's table directly)."""
    return {
        S.symbol(enc): S.symbol(dec)
        for dec, enc in DECODER_SIZES.items()
        if enc != "L_max" and spec.family == "encoder-decoder" and spec.has(dec)
    }


def _idle_shared(spec: Spec) -> Cost:
    """transformers' BART family with untied inputs keeps ``model.shared`` (V x d_model)
    besides the encoder's and decoder's own tables; no forward pass reads it, but it is a
    parameter (``model.parameters()``, the checkpoint): counted, 0 FLOPs."""
    width = _embedding_width(spec)
    return Cost(
        name="unused shared token embedding",
        block=Block.EMBEDDINGS,
        steps=(
            Step(
                label="shared (unused)",
                role=Role.UNUSED_EMBEDDING,
                params=S.V * width,
                note="model.shared: stored beside the untied encoder and decoder tables, read by no forward pass",
                source="HF BartModel / MBartModel / PegasusModel / MarianModel with tie_word_embeddings=false",
                matrices=(Matrix(ONE, S.V, width, lookup=True),),
            ),
        ),
    )


def _is_shared(spec: Spec, block: Cost) -> bool:
    if spec.share_layers == "all":
        return True
    if spec.share_layers == "attention":
        return block.block in ATTENTION_BLOCKS
    return block.block in (Block.FFN, Block.MOE)


# a stored copy of shared weights caches nothing: the layers that use it keep their K/V
_NO_CACHE = dict(cache=ZERO, cache_window=None, source_cache=ZERO, state=ZERO)


def _split_shared(c: Cost, weights_copy: bool) -> Cost:
    """``weights_copy``: the one stored copy (parameters, no FLOPs); otherwise the
    per-layer use of the shared weights (FLOPs and weights, 0 parameters, as a tied matrix)."""
    if weights_copy:  # stored once, run by the layers: no FLOPs, and no cache or state of its own
        steps = tuple(
            replace(s, flops=ZERO, kind=NONE, weights=ZERO, elementwise=ZERO, shape="", **_NO_CACHE)
            for s in c.steps
            if s.params != 0
        )
    else:
        steps = tuple(replace(s, params=ZERO, active=None if s.active is None else ZERO, matrices=()) for s in c.steps)
    return Cost(
        name=c.name,
        block=c.block,
        steps=steps,
        children=tuple(_split_shared(ch, weights_copy) for ch in c.children),
        multiplicity=c.multiplicity,
        note=c.note,
        source=c.source,
    )


def _share_layers(spec: Spec, layers: list[Cost]) -> list[Cost]:
    """ALBERT's cross-layer sharing (Lan et al. 2020 §3.1; HF AlbertTransformer with
    num_hidden_groups = 1): each layer Cost (multiplicity n) keeps its FLOPs but its
    shared blocks count 0 parameters, like a tied matrix; one copy of their weights
    is added with multiplicity 1.  ``attention``/``ffn`` share only that sublayer (its
    norm stays per layer); ``all`` shares the norms too.

    A stack of dense and MoE layers (``moe_first_dense``/``moe_every``) holds two layer
    Costs; a block both kinds have (the attention, the norms) is one module, stored
    once, while the dense FFN and the MoE block are two modules, one copy each."""
    if spec.share_layers == "none":
        return layers
    out: list[Cost] = []
    everything = spec.share_layers == "all"
    # What identifies a module is typed, never a label: a child block by (block, its
    # k-th occurrence in the layer, parameters); a layer step by (role, bias, parameters).
    stored: set[tuple] = set()

    def first_copy(key: tuple) -> bool:
        if key in stored:
            return False
        stored.add(key)
        return True

    for layer in layers:
        seen: dict = {}
        shared = []
        for c in layer.children:
            seen[c.block] = seen.get(c.block, 0) + 1
            if _is_shared(spec, c) and first_copy((c.block, seen[c.block], c.params)):
                shared.append(c)
        own = tuple(
            replace(s, flops=ZERO, kind=NONE, weights=ZERO, elementwise=ZERO, shape="", **_NO_CACHE)
            for s in layer.steps
            if everything and s.params != 0 and first_copy((s.role, s.bias, s.params))
        )
        if shared or own:
            out.append(
                Cost(
                    name=f"shared weights of the {layer.name}",
                    block=Block.SHARED_LAYER_WEIGHTS,
                    steps=own,
                    children=tuple(_split_shared(c, True) for c in shared),
                    note=f"one copy, used by every layer (share_layers={spec.share_layers})",
                    source="Lan et al. 2020 §3.1 (ALBERT cross-layer sharing)",
                )
            )
        steps = tuple(
            replace(s, params=ZERO, active=None if s.active is None else ZERO, matrices=()) if everything else s
            for s in layer.steps
        )
        out.append(
            Cost(
                name=layer.name,
                block=layer.block,
                steps=steps,
                multiplicity=layer.multiplicity,
                note=layer.note,
                source=layer.source,
                children=tuple(_split_shared(c, False) if _is_shared(spec, c) else c for c in layer.children),
            )
        )
    return out


def _stack(spec: Spec, name: str, block: Block, layers: list[Cost], tokens: sp.Expr) -> Cost:
    children: list[Cost] = []
    where = spec.relative_bias_at
    if where == "stack":
        children.append(relative_bias(spec))
    elif where == "layer":  # UMT5: every self-attention layer has its own table
        children.append(relative_bias(spec, multiplicity=sum(layer.multiplicity for layer in layers)))
    if spec.encoder_attention == "transient-global" and block == Block.ENCODER:  # LongT5 TGlobal
        children.append(transient_global(spec, sum(layer.multiplicity for layer in layers)))
    if spec.has("L_rel") or spec.rel_norm:  # DeBERTa's relative table and its norm (types-enc)
        children.append(relative_table(spec))
    children += _share_layers(spec, layers)
    if spec.conv_kernel:  # DeBERTa-v2's ConvLayer, run after the first layer (types-enc)
        children.append(conv_layer(spec, tokens))
    if spec.has("n_hc"):  # DeepSeek-V4: the streams collapse into one before the final norm
        children.append(hyper_head(tokens))
    if spec.final_norm:
        f = _norms(spec, "final norm", tokens)
        if f:
            children.append(f)
    if spec.token_projection:  # OPT-350m: back to the token embedding's width for the tied head
        steps = linear(
            "project_out",
            S.d_model,
            S.E_emb,
            tokens,
            False,
            "Zhang et al. 2022 (OPT); OPTDecoder.project_out",
            "d_model -> E_emb map after the last layer (no bias), for the E_emb-wide LM head",
            role=Role.OUTPUT_PROJECTION,
        )
        children.append(Cost(name="output projection", block=Block.OTHER, steps=tuple(steps)))
    return Cost(name=name, block=block, children=tuple(children))


def _lm_head(spec: Spec, tokens: sp.Expr) -> Cost:
    D = dims(spec)
    tied = spec.tie_output
    note = (
        "the transposed token embedding (tied): no new parameters, but the matmul still costs FLOPs"
        if tied
        else "its own d_model x V matrix (untied)"
    )
    steps = []
    if spec.has("E_emb") and not spec.token_projection:  # mirror the factorisation: d_model -> E_emb, then E_emb x V
        steps += linear(
            "W_head_proj",
            D.d_model,
            S.E_emb,
            tokens,
            spec.bias,
            "Lan et al. 2020 §3.1; as AlbertMLMHead.dense",
            "d_model -> E_emb, back to the embedding width",
            role=Role.HEAD_TRANSFORM,
        )
    steps += linear(
        "W_out",
        _embedding_width(spec),
        D.V,
        tokens,
        spec.head_bias,
        "Vaswani et al. 2017 §3.4; Press & Wolf 2017 (tying)",
        note,
        tied=tied,
        role=Role.LM_HEAD,
    )
    return Cost(name="LM head", block=Block.LM_HEAD, steps=tuple(steps))


def _layer_counts(spec: Spec, n: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """(dense layers, MoE layers) of a stack of n layers."""
    if not spec.is_moe:
        return n, sp.Integer(0)
    if spec.has("N_moe"):  # the config lists its MoE layers: how many there are (types-moe)
        return n - S.N_moe, S.N_moe
    moe = sp.floor((n - spec.moe_first_dense) / spec.moe_every) if (spec.moe_first_dense or spec.moe_every != 1) else n
    return n - moe, moe


def _decoder_layers(spec: Spec, batch, q, context, src, mask, n, decode: bool = False) -> list[Cost]:
    if spec.mixers != "attention":  # a stack of typed layer kinds (issue 20): decoder-only, by Spec
        return hybrid_layers(spec, batch, q, context, mask, decode)
    if spec.has("N_w"):  # the per-layer attention pattern: N_w windowed layers, N - N_w full ones
        moe = spec.is_moe  # a stack of dense and MoE layers with N_w is refused by Spec
        prefix = "MoE decoder layer" if moe else "decoder layer"
        out = [
            decoder_layer(
                spec, batch, q, context, src, mask, S.N_w, name=f"{prefix} (sliding window w)", moe=moe, window=True
            )
        ]
        if n - S.N_w != 0:
            out.append(
                decoder_layer(
                    spec,
                    batch,
                    q,
                    context,
                    src,
                    mask,
                    n - S.N_w,
                    name=f"{prefix} (full attention)",
                    moe=moe,
                    window=False,
                )
            )
        return out
    dense, moe = _layer_counts(spec, n)
    out = []
    if dense != 0:
        out.append(decoder_layer(spec, batch, q, context, src, mask, dense, moe=False))
    if moe != 0:
        out.append(decoder_layer(spec, batch, q, context, src, mask, moe, name="MoE decoder layer", moe=True))
    return out


def build(spec: Spec, workload: Workload = FORWARD) -> Cost:
    """The model's Cost tree (parameters, and forward FLOPs at ``workload``).

    The closed form depends only on ``spec.structure()``, so the tree is cached on it.
    """
    return _build(spec.structure(), workload)


@lru_cache(maxsize=256)
def _build(spec: Spec, wl: Workload) -> Cost:
    fam = spec.family
    B = wl.batch
    children: list[Cost] = []
    if fam == "encoder-decoder":
        n_enc, n_dec = (S.N, S.N) if spec.has("N") else (S.N_enc, S.N_dec)
        dec = decoder_symbols(spec)
        if spec.share_embeddings:
            shared_note = "one V x d_model matrix shared by encoder input, decoder input" + (
                " and the output projection" if spec.tie_output else ""
            )
            children.append(
                Cost(
                    name="shared token embedding",
                    block=Block.EMBEDDINGS,
                    steps=(token_embedding(tied_note=shared_note, width=_embedding_width(spec)),),
                )
            )
        if spec.idle_shared_embedding:
            children.append(_idle_shared(spec))
        enc_emb = _embeddings(
            spec,
            "encoder embeddings",
            not spec.share_embeddings and spec.frontend == "tokens",
            tokens=B * wl.src,
            block=Block.ENCODER_EMBEDDINGS,
            front=tuple(audio_conv(B, wl.src)) if spec.frontend == "conv1d" else (),
            table=S.L_src_max if spec.has("L_src_max") else S.L_max,
        )
        dec_emb = _embeddings(
            spec,
            "decoder embeddings",
            not spec.share_embeddings,
            "decoder input embedding" + (", tied to the output projection" if spec.tie_output else ""),
            tokens=B * wl.tgt,
            block=Block.DECODER_EMBEDDINGS,
            positional=spec.decoder_positions,
            table=S.L_tgt_max if spec.has("L_tgt_max") else S.L_max,
        )
        if enc_emb.steps:
            children.append(enc_emb)
        q_enc = longformer_padded(wl.src) if spec.encoder_attention == "longformer" else wl.src  # LED pads
        children.append(_stack(spec, "encoder", Block.ENCODER, _led_layers(spec, B, q_enc, n_enc), B * q_enc))
        if dec_emb.steps:
            children.append(substitute(dec_emb, dec))
        ctx = wl.tgt if wl.context is None else wl.context
        children.append(
            substitute(
                _stack(
                    spec,
                    "decoder",
                    Block.DECODER,
                    _decoder_layers(spec, B, wl.tgt, ctx, wl.src, wl.self_mask, n_dec),
                    B * wl.tgt,
                ),
                dec,
            )
        )
        if spec.lm_head:
            children.append(substitute(_lm_head(spec, B * wl.tgt), dec))
    elif fam == "encoder-only":
        front = {"patch": patch_embedding, "wav2vec2": lambda b, q: wav2vec2_front(spec, b, q)}.get(spec.frontend)
        children.append(
            _embeddings(
                spec,
                "embeddings",
                spec.frontend == "tokens",
                tokens=B * wl.seq,
                front=tuple(front(B, wl.seq)) if front else (),
            )
        )
        children.append(
            _stack(spec, "encoder", Block.ENCODER, _encoder_layers(spec, B, wl.seq, S.N, wl.mask), B * wl.seq)
        )
        if spec.pooler:
            children.append(
                Cost(
                    name="pooler",
                    block=Block.POOLER,
                    steps=tuple(
                        linear(
                            "W_pool",
                            S.d_model,
                            S.d_pool if spec.has("d_pool") else S.d_model,
                            B,
                            spec.pooler_bias,
                            "Devlin et al. 2019 §3; BertPooler",
                            "dense + tanh on the first token of each sequence",
                            role=Role.POOLER,
                        )
                    ),
                )
            )
        if spec.mlm_head:  # with E_emb: AlbertMLMHead (dense d_model -> E_emb, norm E_emb, decoder E_emb -> V)
            ew = _embedding_width(spec)
            steps = linear(
                "W_transform", S.d_model, ew, B * wl.seq, True, "BertPredictionHeadTransform", role=Role.HEAD_TRANSFORM
            )
            steps += norm(spec, "MLM norm", ew, B * wl.seq)
            steps += linear(
                "W_decoder",
                ew,
                S.V,
                B * wl.seq,
                True,
                "BertLMPredictionHead",
                "tied to the token embedding: only its V-vector bias is new",
                tied=spec.tie_output,
                role=Role.LM_HEAD,
            )
            children.append(Cost(name="MLM head", block=Block.MLM_HEAD, steps=tuple(steps)))
        children += dual_parts(spec, B)  # a dual encoder's text head, image tower and logit scale
    else:
        ctx = wl.seq if wl.context is None else wl.context
        children.append(
            _embeddings(
                spec,
                "embeddings",
                True,
                "one d_model vector per vocabulary entry" + ("; also the LM head (tied)" if spec.tie_output else ""),
                tokens=B * wl.seq,
            )
        )
        children.append(
            _stack(
                spec,
                "decoder",
                Block.DECODER,
                _decoder_layers(spec, B, wl.seq, ctx, None, wl.self_mask, S.N, wl.context is not None),
                B * wl.seq,
            )
        )
        if spec.lm_head:
            children.append(_lm_head(spec, B * wl.seq))
        children += vision_parts(spec)
    return Cost(name="model", block=Block.MODEL, children=tuple(c for c in children))
