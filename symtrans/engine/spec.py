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
POSITIONALS = ("sinusoidal", "learned", "none", "rotary", "alibi", "relative", "transformer-xl")
FFNS = ("mlp", "swiglu", "geglu")
NORM_POSITIONS = ("post", "pre")
SHARE_LAYERS = ("none", "all", "attention", "ffn")

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
    "N_w",  # --- gpt2-like: windowed layers of a mixed stack (GPT-Neo's global/local layers)
)
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
        token_projection: with ``E_emb``, only the token embedding (and the LM head tied to
            it) is E_emb wide, with a bias-free E_emb -> d_model map after the lookup and
            d_model -> E_emb after the last layer (OPT-350m's project_in / project_out);
            without it, E_emb factorizes every embedding as ALBERT does.
    Variant sizes: ``E_emb`` (ALBERT's factorized embedding width), ``r`` (rank of a
    low-rank FFN), ``w`` (local / sliding-window attention); see ``variants.py``.
    ``N_w`` (with ``w``, below N): only N_w of the N decoder layers use the window, the
    others attend fully (GPT-Neo's alternating local and global layers).  Parameters do not
    depend on it; FLOPs, the KV cache and time do, and per-layer windows are not modelled
    yet, so every evaluation at a workload refuses such a spec (``check_sizes``).
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
    token_projection: bool = False

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
    "token_projection": bool,
}
_NONNEGATIVE_INTS = ("position_offset", "token_types", "n_shared_experts", "moe_first_dense", "global_tokens")


def _validate(spec: Spec) -> None:
    for name in OPTION_TYPES:
        value = getattr(spec, name)
        kind = OPTION_TYPES[name]
        if isinstance(kind, tuple):
            if value not in kind:
                raise ValueError(f"{name} must be one of {', '.join(kind)}, not {value!r}")
        elif kind is bool:
            if not (
                isinstance(value, bool)
                or (value is None and name in ("attention_bias", "qkv_bias", "out_bias", "ffn_bias"))
            ):
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
    _validate_sizes(spec, spec.values)


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
    if spec.positional == "learned" and "L_max" not in v:
        raise ValueError("learned positions need L_max (rows of the position table, max_position_embeddings)")
    if "N_w" in v:
        if "w" not in v or spec.family != "decoder-only":
            raise ValueError("N_w (windowed layers) needs a decoder-only model with a local attention window w")
        if v["N_w"] >= v["N"]:
            raise ValueError(
                f"N_w={v['N_w']} windowed layers must be fewer than N={v['N']}; when every layer uses the window, give w alone"
            )
        if workload:
            raise ValueError(
                f"N_w={v['N_w']} of the N={v['N']} layers attend within the window w={v['w']} and the others to "
                "every position (a config's attention_types or layer_types): symtrans does not model per-layer "
                "attention windows yet, so FLOPs, the KV cache and time are not counted for this model "
                "(parameters are)"
            )
    if spec.token_projection and ("E_emb" not in v or spec.family != "decoder-only"):
        raise ValueError("token_projection needs a decoder-only model with an embedding width E_emb")
    if spec.global_tokens and "w" not in v:
        raise ValueError("global_tokens need a local attention window w")
    if spec.global_tokens and spec.family == "decoder-only":
        raise ValueError("global_tokens apply to bidirectional (encoder) self-attention; a decoder-only model has none")
    _validate_ranges(spec, v)


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
    if spec.global_tokens:
        # The encoder's self-attention reads L tokens (L_src for an encoder-decoder, L when not given).
        seq = "L_src" if spec.family == "encoder-decoder" and "L_src" in v else "L"
        if seq in v and spec.global_tokens > v[seq]:
            raise ValueError(
                f"global_tokens={spec.global_tokens} exceeds the {v[seq]} tokens of a sequence ({seq}); "
                f"a sequence cannot hold more global tokens than tokens"
            )
