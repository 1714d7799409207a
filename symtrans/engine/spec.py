"""Spec: an architecture's options plus the numbers for its symbols, validated.

A Spec has two halves:

* options (``family``, ``bias``, ``norm``, ``ffn``, ``positional``, tying, ...), which
  decide the *shape* of the closed form;
* ``sizes``, the integer values of the symbols (``d_model``, ``d_ff``, ``h``, ``N``,
  ``V``, ``L`` and, where present, ``d_k``, ``h_kv``, ``E``, ``k``, ``N_enc``, ...).
  Which optional sizes are present is structural too: a Spec with ``h_kv`` has
  grouped-query attention in its formula, one without it uses ``h``; one without
  ``d_k`` uses ``d_model/h``.

Every option name is also a ``--set`` key.  Construction validates everything and
raises ``ValueError`` with one sentence that names the field.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from typing import Any

from symtrans.engine.symbols import SYMBOLS

FAMILIES = ("encoder-decoder", "encoder-only", "decoder-only")
NORMS = ("layernorm", "rmsnorm", "none")
POSITIONALS = ("sinusoidal", "learned", "none", "rotary", "alibi", "relative", "transformer-xl", "sinusoidal-table")
FFNS = ("mlp", "swiglu", "geglu")
NORM_POSITIONS = ("post", "pre")
SHARE_LAYERS = ("none", "all", "attention", "ffn")
# What the first stack reads: token ids through an embedding table, image patches (ViT's Conv2d
# patch embedding), or mel frames (Whisper's two Conv1d layers).
FRONTENDS = ("tokens", "patch", "conv1d")

# Sizes that every model needs, per family.
_REQUIRED = {
    "encoder-decoder": ("d_model", "d_ff", "h", "V"),
    "encoder-only": ("d_model", "d_ff", "h", "V"),
    "decoder-only": ("d_model", "d_ff", "h", "V"),
}
# Sizes that describe the model (as opposed to a workload such as B or L_src).
MODEL_SIZES = (
    "d_model",
    "d_ff",
    "h",
    "h_kv",
    "d_k",
    "d_v",
    "N",
    "N_enc",
    "N_dec",
    "V",
    "L_max",
    "E",
    "k",
    "E_emb",
    "r",
    "w",
    # --- seq2seq and front ends
    "h_dec",
    "d_ff_dec",
    "V_dec",
    "L_src_max",
    "L_tgt_max",
    "C_in",
    "p",
    "d_pool",
)
# The decoder's own sizes of an encoder-decoder, where they differ from the encoder's: each
# replaces its encoder symbol in the decoder's embeddings, stack and LM head.
DECODER_SIZES = {"h_dec": "h", "d_ff_dec": "d_ff", "V_dec": "V", "L_tgt_max": "L_max"}
# Sizes that describe a workload.  A Spec may carry L (its default sequence length, see
# resolve.default_seq_len) and, for an encoder-decoder, L_src and L_tgt as defaults
# (``flops``, ``memory``, ``solve`` and ``sweep`` use them); the others belong
# to an option of the command (or an argument in Python), so a Spec refuses them rather
# than carry a value that every command would silently replace (``--set B=8`` with B = 1).
WORKLOAD_SIZES = ("B", "L", "L_src", "L_tgt", "L_pre", "T_gen", "D")
WORKLOAD_OPTIONS = {
    "B": "the batch size: give it with --batch (batch= in Python)",
    "L_pre": "the prompt length of prefill and decode: give it with --prefill (flops, time)",
    "T_gen": "the number of generated tokens: give it with --generate (flops, time)",
    "D": "the number of training tokens: give it with --tokens (flops, time)",
    "N_d": "the number of data-parallel ranks: give it with --dp (memory)",
    "t": "the summation index of decode (1..T_gen)",
}


@dataclass(frozen=True)
class Spec:
    """An architecture and its sizes.

    Options (all are ``--set`` keys):
        family: ``encoder-decoder`` | ``encoder-only`` | ``decoder-only``.
        bias: all linear biases; ``attention_bias`` (Q, K, V and output),
            ``qkv_bias``, ``out_bias`` and ``ffn_bias`` override it when not None.
        norm: ``layernorm`` | ``rmsnorm`` | ``none``; ``norm_bias`` is LayerNorm's β.
        norm_position: ``post`` (Vaswani 2017, BERT) or ``pre`` (GPT-2, Llama); it
            changes no count, only the order of the shape walk.
        final_norm: a norm after the last layer of every stack.
        embedding_norm: a norm after the embeddings of every stack (BERT, BART).
        positional: ``sinusoidal`` | ``learned`` | ``none`` | ``rotary`` | ``alibi`` |
            ``relative`` (T5's bucketed bias, ``relative_buckets`` x h per stack) |
            ``transformer-xl`` (Dai et al. 2019: per layer W_R d_model x h*d_k and the
            u, v biases, h*d_k each; used by Chinchilla/Gopher).
        position_offset: extra learned position rows (BART and OPT keep 2).
        tie_output: the LM head shares the (decoder) token embedding.
        head_bias: the LM head has a V-vector bias.
        share_embeddings: encoder and decoder inputs share one V x d_model matrix.
        token_types: rows of the token-type (segment) embedding; 0 means none.
        pooler, mlm_head: BERT's pooler (d_model x d_model + bias, on the first
            token) and masked-LM head (dense + norm + tied decoder + V bias);
            encoder-only models only (elsewhere construction raises ValueError).
        pooler_bias: the pooler's d_model bias (hand counts often drop it).
        lm_head: whether the model has an LM head at all (decoder-only and
            encoder-decoder default True).
        ffn: ``mlp`` (two maps) | ``swiglu`` | ``geglu`` (three maps).
        qk_norm: a norm of width d_k on queries and on keys (Qwen3, OLMo-2).
        n_shared_experts: dense experts every MoE layer always runs (DeepSeekMoE).
        moe_first_dense, moe_every: of N layers, the first ``moe_first_dense`` are
            dense and then every ``moe_every``-th is a MoE layer.  These three need
            E (a spec without experts that sets one raises ValueError), and the
            layout must leave at least one MoE layer (moe_first_dense + moe_every <= N).
            The layout applies to decoder layers (an encoder's are all MoE layers; an
            encoder-only model refuses it).
        share_layers: ALBERT's cross-layer sharing (Lan et al. 2020 §3.1): ``none``,
            ``all`` (one layer's weights serve all N), ``attention`` or ``ffn`` (only
            that sublayer is shared).  Parameters stop scaling with N; FLOPs do not.
        global_tokens: Longformer's global tokens (Beltagy et al. 2020 §3.1) on top
            of a bidirectional local window ``w``; 0 means none; at most the tokens of
            a sequence (L, or L_src for an encoder-decoder; checked again at every
            workload by ``check_sizes(..., workload=True)``).
        k_bias: the key projection's bias; None means as the query and value maps
            (``qkv_bias``); Whisper's k_proj alone has none.
        idle_shared_embedding: an encoder-decoder whose inputs are untied
            (``share_embeddings`` false) also stores a V x d_model ``shared`` table that no
            forward pass reads (transformers' BART, mBART, Pegasus and Marian with
            ``tie_word_embeddings`` false); counted, as ``model.parameters()`` counts it.
        decoder_positional: the decoder's positions where they differ from the
            encoder's ``positional`` (Whisper: a sinusoidal table in the encoder, a learned
            one in the decoder); None means the same.
        frontend: ``tokens`` (an embedding table of V rows) | ``patch`` (ViT: a p x p
            Conv2d patch embedding of C_in channels, a CLS token and L_max = patches + 1
            learned positions; no vocabulary) | ``conv1d`` (Whisper's encoder: two width-3
            Conv1d layers over C_in mel bins, the second with stride 2).
    Positions ``sinusoidal-table``: the sinusoids stored as a frozen (L_max x d_model)
    parameter (Pegasus, Marian, Whisper's encoder): counted, as ``model.parameters()``
    counts it.  An encoder-decoder may give its stacks their own table rows
    (``L_src_max``, ``L_tgt_max``) and its decoder its own ``h_dec``, ``d_ff_dec`` and
    ``V_dec`` (``DECODER_SIZES``).
    Variant sizes: ``E_emb`` (ALBERT's factorized embedding width), ``r`` (rank of a
    low-rank FFN), ``w`` (local / sliding-window attention); see ``variants.py``.
    """

    family: str = "decoder-only"
    sizes: tuple[tuple[str, int], ...] = ()
    bias: bool = True
    attention_bias: bool | None = None
    qkv_bias: bool | None = None
    out_bias: bool | None = None
    ffn_bias: bool | None = None
    norm: str = "layernorm"
    norm_bias: bool = True
    norm_position: str = "post"
    final_norm: bool = False
    embedding_norm: bool = False
    positional: str = "sinusoidal"
    position_offset: int = 0
    relative_buckets: int = 32
    tie_output: bool = True
    head_bias: bool = False
    share_embeddings: bool = True
    token_types: int = 0
    pooler: bool = False
    pooler_bias: bool = True
    mlm_head: bool = False
    lm_head: bool = True
    ffn: str = "mlp"
    qk_norm: bool = False
    n_shared_experts: int = 0
    moe_first_dense: int = 0
    moe_every: int = 1
    share_layers: str = "none"
    global_tokens: int = 0
    # --- seq2seq and front ends
    k_bias: bool | None = None
    idle_shared_embedding: bool = False
    decoder_positional: str | None = None
    frontend: str = "tokens"

    def __post_init__(self) -> None:
        # Normalise sizes to a sorted tuple of (name, int) so equal specs hash equal.
        object.__setattr__(self, "sizes", tuple(sorted(dict(self.sizes).items())))
        _validate(self)

    # -- sizes -------------------------------------------------------------
    @property
    def values(self) -> dict[str, int]:
        """The sizes as a dict name -> int."""
        return dict(self.sizes)

    def has(self, name: str) -> bool:
        return name in self.values

    def size(self, name: str) -> int:
        """The integer value of size ``name``.

        Raises:
            KeyError: if the spec does not set it.
        """
        return self.values[name]

    # -- resolved options ----------------------------------------------------
    @property
    def qkv_bias_on(self) -> bool:
        return _first(self.qkv_bias, self.attention_bias, self.bias)

    @property
    def out_bias_on(self) -> bool:
        return _first(self.out_bias, self.attention_bias, self.bias)

    @property
    def k_bias_on(self) -> bool:
        return _first(self.k_bias, self.qkv_bias, self.attention_bias, self.bias)

    @property
    def decoder_positions(self) -> str:
        """The decoder's positional kind (``decoder_positional``, else ``positional``)."""
        return self.positional if self.decoder_positional is None else self.decoder_positional

    @property
    def ffn_bias_on(self) -> bool:
        return _first(self.ffn_bias, self.bias)

    @property
    def is_moe(self) -> bool:
        return "E" in self.values

    def structure(self) -> "Spec":
        """The spec with every size value replaced by 1: equal for equal closed forms.

        Used as the cache key of built models (the closed form depends on which
        sizes are present, never on their values).
        """
        return _unchecked_replace(self, sizes=tuple((n, 1) for n, _ in self.sizes))

    def replace(self, **changes: Any) -> "Spec":
        """A copy with options changed and sizes merged (``sizes={...}`` adds/overrides).

        Raises:
            ValueError: if the result is invalid.
        """
        if "sizes" in changes:
            merged = self.values
            merged.update(dict(changes["sizes"]))
            changes["sizes"] = tuple(merged.items())
        return dataclasses.replace(self, **changes)

    def check_sizes(self, sizes: dict[str, int], workload: bool = False) -> None:
        """Validate this spec's sizes with ``sizes`` merged in, without building a Spec.

        The same size checks as construction (``replace(sizes=sizes)`` would raise the
        same error); the options are not re-checked (they are unchanged).  Used by
        sweeps, which validate many size combinations against one set of options.

        With ``workload=True``, ``sizes`` may also hold the workload (B, L as the sequence
        length, L_pre, T_gen, ...): the option ranges that depend on it are checked too
        (``global_tokens`` <= the encoder's sequence length).  Every place that evaluates
        a count at a workload calls this (``workload_values``).

        Raises:
            ValueError: one sentence naming the size that is wrong.
        """
        merged = self.values
        merged.update(sizes)
        _validate_sizes(self, merged, workload)


def _first(*vals: bool | None) -> bool:
    for v in vals:
        if v is not None:
            return bool(v)
    return False


def _unchecked_replace(spec: Spec, **changes: Any) -> Spec:
    new = object.__new__(Spec)
    for f in fields(Spec):
        object.__setattr__(new, f.name, changes.get(f.name, getattr(spec, f.name)))
    return new


OPTION_NAMES = tuple(f.name for f in fields(Spec) if f.name != "sizes")
OPTION_TYPES: dict[str, Any] = {
    "family": FAMILIES,
    "norm": NORMS,
    "positional": POSITIONALS,
    "ffn": FFNS,
    "norm_position": NORM_POSITIONS,
    "bias": bool,
    "attention_bias": bool,
    "qkv_bias": bool,
    "out_bias": bool,
    "ffn_bias": bool,
    "norm_bias": bool,
    "final_norm": bool,
    "embedding_norm": bool,
    "tie_output": bool,
    "head_bias": bool,
    "share_embeddings": bool,
    "pooler": bool,
    "pooler_bias": bool,
    "mlm_head": bool,
    "lm_head": bool,
    "qk_norm": bool,
    "position_offset": int,
    "relative_buckets": int,
    "token_types": int,
    "n_shared_experts": int,
    "moe_first_dense": int,
    "moe_every": int,
    "share_layers": SHARE_LAYERS,
    "global_tokens": int,
    # --- seq2seq and front ends
    "k_bias": bool,
    "idle_shared_embedding": bool,
    "decoder_positional": POSITIONALS,
    "frontend": FRONTENDS,
}
_NULLABLE = ("attention_bias", "qkv_bias", "out_bias", "ffn_bias", "k_bias", "decoder_positional")
_NONNEGATIVE_INTS = ("position_offset", "token_types", "n_shared_experts", "moe_first_dense", "global_tokens")


def _validate(spec: Spec) -> None:
    for name in OPTION_TYPES:
        value = getattr(spec, name)
        kind = OPTION_TYPES[name]
        if isinstance(kind, tuple):
            if value is None and name in _NULLABLE:
                continue
            if value not in kind:
                raise ValueError(f"{name} must be one of {', '.join(kind)}, not {value!r}")
        elif kind is bool:
            if not (isinstance(value, bool) or (value is None and name in _NULLABLE)):
                raise ValueError(f"{name} must be true or false, not {value!r}")
        elif kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be an integer, not {value!r}")
            if value < 0 or (name not in _NONNEGATIVE_INTS and value == 0):
                raise ValueError(
                    f"{name} must be {'non-negative' if name in _NONNEGATIVE_INTS else 'positive'}, not {value}"
                )
    # Options that only an encoder-only model has: elsewhere they would change nothing.
    for name in ("pooler", "mlm_head"):
        if getattr(spec, name) and spec.family != "encoder-only":
            raise ValueError(
                f"{name} applies to encoder-only models (BERT's heads), not to a {spec.family} model; set {name}=false"
            )
    _validate_seq2seq_options(spec)
    _validate_sizes(spec, spec.values)


def _validate_seq2seq_options(spec: Spec) -> None:
    """The options of the BART family, Whisper and ViT, each where it changes something."""
    if spec.family != "encoder-decoder":
        for name, off in (("idle_shared_embedding", False), ("decoder_positional", None)):
            if getattr(spec, name) != off:
                raise ValueError(f"{name} applies to encoder-decoder models, not to a {spec.family} model")
    if spec.idle_shared_embedding and spec.share_embeddings:
        raise ValueError(
            "idle_shared_embedding is the unused shared table of untied inputs; with share_embeddings=true "
            "the shared table is the one the model reads: drop idle_shared_embedding"
        )
    if spec.frontend == "patch":
        if spec.family != "encoder-only":
            raise ValueError(f"frontend=patch is a vision encoder's (ViT); a {spec.family} model reads tokens")
        if spec.positional != "learned":
            raise ValueError("frontend=patch needs positional=learned (ViT's (patches + 1) x d_model table)")
        if spec.mlm_head or spec.token_types:
            raise ValueError("frontend=patch reads pixels: a model without a vocabulary has no MLM head or token types")
    if spec.frontend == "conv1d":
        if spec.family != "encoder-decoder":
            raise ValueError(f"frontend=conv1d is an audio encoder's (Whisper); a {spec.family} model reads tokens")
        if spec.share_embeddings or spec.idle_shared_embedding:
            raise ValueError(
                "frontend=conv1d: the encoder reads mel frames, so no token table is shared with it: "
                "set share_embeddings=false"
            )


def _validate_sizes(spec: Spec, v: dict[str, int], workload: bool = False) -> None:
    """The checks of the sizes ``v`` (types, presence per family, divisibility, and the
    option ranges that depend on sizes) for ``spec``'s options.  ``workload``: ``v`` may
    hold workload sizes too (``Spec.check_sizes``)."""
    for name, value in v.items():
        if name not in SYMBOLS:
            raise ValueError(f"unknown size {name!r}; known sizes: {', '.join(MODEL_SIZES + WORKLOAD_SIZES)}")
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be a positive integer, not {value!r}")
        if value <= 0:
            raise ValueError(f"{name} must be a positive integer, not {value}")
        if not workload and name in WORKLOAD_OPTIONS:
            raise ValueError(f"{name} is not a size of the model but {WORKLOAD_OPTIONS[name]}")
        if not workload and name in ("L_src", "L_tgt") and spec.family != "encoder-decoder":
            raise ValueError(
                f"{name} is a length of encoder-decoder models; this {spec.family} model reads L tokens: "
                "give --seq-len (or set L)"
            )
    for name in _REQUIRED[spec.family]:
        if name == "V" and spec.frontend == "patch":
            if "V" in v:
                raise ValueError("frontend=patch reads pixels, not tokens: drop V (there is no vocabulary)")
            continue
        if name not in v:
            raise ValueError(f"{spec.family} model needs size {name}")
    if spec.family == "encoder-decoder":
        if "N" not in v and not ("N_enc" in v and "N_dec" in v):
            raise ValueError("encoder-decoder model needs N, or both N_enc and N_dec")
        if "N" in v and ("N_enc" in v or "N_dec" in v):
            raise ValueError("give either N or N_enc and N_dec, not both")
    elif "N" not in v:
        raise ValueError(f"{spec.family} model needs size N")
    if "d_k" not in v and v["d_model"] % v["h"]:
        raise ValueError(f"h={v['h']} does not divide d_model={v['d_model']}; give d_k (head_dim) explicitly")
    if "h_kv" in v and v["h"] % v["h_kv"]:
        raise ValueError(f"h={v['h']} is not divisible by h_kv={v['h_kv']}")
    if "k" in v and "E" not in v:
        raise ValueError("k (experts per token) needs E (experts)")
    if "E" in v and "k" not in v:
        raise ValueError("E (experts) needs k (experts per token)")
    if "E" in v and v["k"] > v["E"]:
        raise ValueError(f"k={v['k']} experts per token exceeds E={v['E']} experts")
    if "E" not in v:  # the MoE layout options describe MoE layers; without E they would change nothing
        for name, dense in (("n_shared_experts", 0), ("moe_first_dense", 0), ("moe_every", 1)):
            if getattr(spec, name) != dense:
                raise ValueError(
                    f"{name} applies to mixture-of-experts models, and this one has no experts: "
                    f"give E and k as well, or drop {name}"
                )
    _validate_stack_sizes(spec, v)
    if spec.global_tokens and "w" not in v:
        raise ValueError("global_tokens need a local attention window w")
    if spec.global_tokens and spec.family == "decoder-only":
        raise ValueError("global_tokens apply to bidirectional (encoder) self-attention; a decoder-only model has none")
    _validate_ranges(spec, v)


_TABLES = ("learned", "sinusoidal-table")


def _validate_stack_sizes(spec: Spec, v: dict[str, int]) -> None:
    """Position-table rows per stack, the decoder's own sizes and the front ends' sizes."""
    seq2seq = spec.family == "encoder-decoder"
    for name in ("L_src_max", *DECODER_SIZES):
        if name in v and not seq2seq:
            raise ValueError(f"{name} is a size of an encoder-decoder's stack; this {spec.family} model has one stack")
    for name, frontends in (("C_in", ("patch", "conv1d")), ("p", ("patch",))):
        if name in v and spec.frontend not in frontends:
            raise ValueError(
                f"{name} is a size of the {' or '.join(frontends)} front end; this model's is {spec.frontend}"
            )
    if "d_pool" in v and not spec.pooler:
        raise ValueError("d_pool is the pooler's output width; this model has no pooler")
    stacks = [("encoder", spec.positional, "L_src_max"), ("decoder", spec.decoder_positions, "L_tgt_max")]
    for stack, kind, own in stacks if seq2seq else [("model", spec.positional, "")]:
        if kind in _TABLES and "L_max" not in v and own not in v:
            raise ValueError(
                f"{kind} positions need L_max (rows of the position table, max_position_embeddings)"
                + (f" or the {stack}'s own {own}" if own else "")
            )
    if "V_dec" in v and spec.share_embeddings:
        raise ValueError("V_dec: a token table shared by encoder and decoder has one vocabulary V; drop V_dec")
    if "h_dec" in v and "d_k" not in v and v["d_model"] % v["h_dec"]:
        raise ValueError(f"h_dec={v['h_dec']} does not divide d_model={v['d_model']}")
    if "h_dec" in v and "h_kv" in v and v["h_dec"] % v["h_kv"]:
        raise ValueError(f"h_dec={v['h_dec']} is not divisible by h_kv={v['h_kv']}")
    if spec.frontend != "tokens":
        needed = ("C_in", "p") if spec.frontend == "patch" else ("C_in",)
        for name in needed:
            if name not in v:
                raise ValueError(f"frontend={spec.frontend} needs size {name}")


def _validate_ranges(spec: Spec, v: dict[str, int]) -> None:
    """Options whose range depends on the sizes: the MoE layout within the N layers, and
    the global tokens within the encoder's sequence."""
    layout = spec.moe_first_dense != 0 or spec.moe_every != 1
    if layout and spec.family == "encoder-only":  # the layout would change nothing: refuse it
        raise ValueError(
            "moe_first_dense and moe_every lay out the layers of a decoder; every layer of an "
            "encoder-only mixture-of-experts model is a MoE layer: drop them"
        )
    if "E" in v:
        n_name = "N" if "N" in v else "N_dec"
        n = v[n_name]
        if spec.moe_first_dense >= n:
            raise ValueError(
                f"moe_first_dense={spec.moe_first_dense} dense layers leave none of the {n_name}={n} layers "
                f"for the experts; moe_first_dense must be below {n_name}"
            )
        if spec.moe_first_dense + spec.moe_every > n:
            raise ValueError(
                f"moe_every={spec.moe_every} after moe_first_dense={spec.moe_first_dense} dense layers leaves no "
                f"mixture-of-experts layer among the {n_name}={n} layers; moe_first_dense + moe_every must be at "
                f"most {n_name}"
            )
    if spec.frontend == "conv1d" and "L_src" in v and "L_src_max" in v and v["L_src"] != v["L_src_max"]:
        raise ValueError(
            f"L_src = {v['L_src']}: the convolutional audio front end (Whisper) reads exactly 2 x L_src_max "
            f"mel frames, so the source length is L_src_max = {v['L_src_max']}"
        )
    if spec.global_tokens:
        # The encoder's self-attention reads L tokens (L_src for an encoder-decoder, L when not given).
        seq = "L_src" if spec.family == "encoder-decoder" and "L_src" in v else "L"
        if seq in v and spec.global_tokens > v[seq]:
            raise ValueError(
                f"global_tokens={spec.global_tokens} exceeds the {v[seq]} tokens of a sequence ({seq}); "
                f"a sequence cannot hold more global tokens than tokens"
            )
