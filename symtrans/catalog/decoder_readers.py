"""The readers of the first-round decoder families (Granite, Phi-3, StarCoder2, Gemma 2/3, OLMo,
Cohere, StableLM, Phi, GPT-NeoX, GPT-J, Falcon), the MoE decoders (Qwen2/3-MoE, gpt-oss,
Llama 4 text, DeepSeek-V2/V3 with MLA) and Qwen2-VL's text model: each maps a config dict
(through a :class:`~symtrans.catalog.reader.Reader`) to a :class:`~symtrans.engine.spec.Spec`
as transformers 5.x builds the class counted, and raises ``ConfigError`` in one sentence naming
the key at fault.  ``catalog/hf_config.py`` dispatches to them by ``model_type``.
"""

from __future__ import annotations

from typing import Any

from symtrans.catalog.models.llama import QWEN_WINDOW_DEFAULT as _QWEN_WINDOW_DEFAULT
from symtrans.catalog.models.llama import heads as _heads
from symtrans.catalog.models.llama import window as _window
from symtrans.catalog.reader import (
    MISSING,
    ConfigError,
    Huge,
    Reader,
    check_divides,
    check_rotary_head,
    check_size,
    show,
    window_size,
)
from symtrans.engine.spec import Spec

# Short names of catalog/reader.py's helpers, as the readers were written with them.
_MISSING, _Huge, _show = MISSING, Huge, show
_check_divides, _check_rotary_head = check_divides, check_rotary_head


# --- decoder types (types-dec): granite, phi3, starcoder2, gemma2, gemma3_text, olmo, olmo2,
# cohere, stablelm, phi, gpt_neox, gptj, falcon

# Types whose num_key_value_heads field is ``int | None`` (null, or missing with a None
# default, means num_attention_heads); the others' strict int field refuses null.
_DEC_KV_NULLABLE = ("granite", "phi3", "olmo", "olmo2", "cohere", "phi")
# Types whose attention reads ``getattr(config, "head_dim", hidden_size // num_attention_heads)``:
# a null head_dim reaches nn.Linear as None (transformers fails); starcoder2 reads
# ``getattr(config, "head_dim", None) or hidden_size // num_attention_heads`` (null is d // h).
_DEC_HEAD_DIM_PLAIN = ("granite", "phi3", "olmo", "olmo2", "cohere", "phi")
_DEC_HEAD_DIM_OR = ("starcoder2",)
# Types whose attention (or config) refuses hidden_size not divisible by the heads.
_DEC_DIVIDES = ("gemma2", "gemma3_text", "stablelm", "gpt_neox", "gptj", "falcon")
# Types whose head width is always hidden_size // heads (head_dim, if given, is not read by the attention).
_DEC_NO_HEAD_DIM = ("stablelm", "gpt_neox", "gptj", "falcon")


def _dec_heads(r: Reader, h: int) -> int:
    """num_key_value_heads of a decoder type, checked against h."""
    given_null = "num_key_value_heads" in r.cfg and r.cfg["num_key_value_heads"] is None
    if r.mt in _DEC_KV_NULLABLE and (given_null or r.defaults["num_key_value_heads"] is None):
        h_kv = r.size("num_key_value_heads", h, f"num_attention_heads = {h}", nullable=True)
    else:
        h_kv = r.size("num_key_value_heads")
    if h_kv > h:
        raise ConfigError(f"num_key_value_heads ({h_kv}) exceeds num_attention_heads ({h})")
    if h % h_kv:
        raise ConfigError(f"num_attention_heads ({h}) is not a multiple of num_key_value_heads ({h_kv})")
    return h_kv


def _dec_head_dim(r: Reader, d: int, h: int) -> int | None:
    """The head width d_k when it is not d_model / h (None when it is): ``head_dim`` when
    the file gives it (read with getattr by the attention), else hidden_size // heads,
    rounded down (the output map is then h * (d // h) -> d)."""
    if r.mt in ("gemma2", "gemma3_text"):
        return r.size("head_dim")  # a field with a class default (256)
    if r.mt in _DEC_NO_HEAD_DIM:
        hd = r.cfg.get("head_dim")  # no field of these classes: any value is ignored, as transformers does
        if hd is not None and (isinstance(hd, bool) or not isinstance(hd, int) or hd * h != d):
            r.notes.append(
                f"head_dim {_show(r.cfg['head_dim'])} ignored: {r.model} always uses hidden_size // "
                f"num_attention_heads = {d // h}"
            )
        return None
    if r.given("head_dim"):
        return r.size("head_dim")
    if "head_dim" in r.cfg and r.mt in _DEC_HEAD_DIM_PLAIN:
        raise ConfigError(
            f"head_dim must be a positive integer, not null ({r.model}'s attention reads it with getattr "
            "and has no fallback for null)"
        )
    if d % h:
        r.notes.append(
            f"head_dim not given: {r.model} uses hidden_size // num_attention_heads = {d // h} "
            f"(rounded down: the query map is {d} x {h * (d // h)})"
        )
        return d // h
    return None


def _dec_window_all(r: Reader) -> int | None:
    """``sliding_window`` on every layer (Phi3Config, Starcoder2Config: null, the default,
    means none): the Spec's window ``w`` (FLOPs and KV cache, no parameters)."""
    k, w = r.lookup("sliding_window")
    if k is None:
        return None
    w = window_size(r, "sliding_window", w)
    if w is None:
        return None
    r.notes.append(f"sliding_window {w}: every layer attends to the last {w} positions (FLOPs and KV cache)")
    return w


def _dec_layer_pattern(r: Reader, n_layers: int) -> tuple[int, int] | None:
    """(w, N_w): the window and how many layers use it (Gemma2Config, Gemma3TextConfig), or None.

    ``layer_types`` (a list of "sliding_attention" / "full_attention", one per layer) or, when
    null, the class rule: gemma2 alternates (layer i slides iff i + 1 is odd), gemma3_text
    slides unless (i + 1) is a multiple of ``sliding_window_pattern`` (a kwarg, default 6:
    5 sliding layers in 6).  A null ``sliding_window`` means no window on any layer.
    ``use_bidirectional_attention`` (every layer attends both ways; Gemma-3 also halves the
    window) is refused: symtrans counts these as causal decoders.

    Raises:
        ConfigError: a malformed key, or use_bidirectional_attention true.
    """
    bidi = r.cfg.get("use_bidirectional_attention")
    if bidi is not None and not isinstance(bidi, bool):
        raise ConfigError(f"use_bidirectional_attention must be true, false or null, not {_show(bidi)}")
    if bidi:
        raise ConfigError(
            f"use_bidirectional_attention is true: {r.model} then attends both ways on every layer, which "
            "symtrans does not model for a decoder (its FLOPs, KV cache and window differ)"
        )
    k, w = r.lookup("sliding_window")
    if k is None:
        w = r.defaults["sliding_window"]
    types = r.cfg.get("layer_types")
    if types is None:
        if r.mt == "gemma2":
            types = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n_layers)]
        else:
            pattern = r.cfg.get("sliding_window_pattern", 6)
            if isinstance(pattern, bool) or not isinstance(pattern, int) or pattern <= 0:
                raise ConfigError(f"sliding_window_pattern must be a positive integer, not {_show(pattern)}")
            types = ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(n_layers)]
    elif not isinstance(types, list) or any(t not in ("full_attention", "sliding_attention") for t in types):
        raise ConfigError('layer_types must be a list of "full_attention" and "sliding_attention"')
    elif len(types) != n_layers:
        raise ConfigError(f"layer_types has {len(types)} entries for num_hidden_layers {n_layers}")
    w = window_size(r, "sliding_window", w)
    if w is None:
        return None
    n_w = sum(t == "sliding_attention" for t in types)
    if n_w == 0:
        return None
    r.notes.append(
        f"sliding_window {w} on {n_w} of the {n_layers} layers (layer_types), the others attend to every "
        "position: FLOPs and KV cache"
    )
    return w, n_w


def _dec_phi3_rope(r: Reader, d: int, h: int) -> None:
    """Phi3Config.validate_rope: rope_type default or longrope ("su" and "yarn" are read as
    longrope), and short_factor / long_factor lists of (d // h * partial_rotary_factor) // 2
    numbers.  Rotary settings change no parameter; a config transformers refuses is refused."""
    rope = r.cfg.get("rope_parameters")
    if rope is None:
        rope = r.cfg.get("rope_scaling")
    if rope is None:
        return
    if not isinstance(rope, dict):
        raise ConfigError(f"rope_parameters must be an object, not {_show(rope)}")
    kind = rope.get("rope_type", rope.get("type", "default"))
    if kind in ("su", "yarn"):
        kind = "longrope"
    if kind not in ("default", "longrope"):
        raise ConfigError(f"rope_parameters rope_type must be default or longrope for Phi3Config, not {_show(kind)}")
    factor = rope.get("partial_rotary_factor", r.cfg.get("partial_rotary_factor", 1.0))
    if isinstance(factor, bool) or not isinstance(factor, (int, float)):
        raise ConfigError(f"partial_rotary_factor must be a number, not {_show(factor)}")
    half = int(d // h * factor) // 2
    for key in ("short_factor", "long_factor"):
        v = rope.get(key)
        if v is None:
            continue
        if not isinstance(v, list) or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in v):
            raise ConfigError(f"rope_parameters {key} must be a list of numbers")
        if len(v) != half:
            raise ConfigError(
                f"rope_parameters {key} has {len(v)} numbers; Phi3Config requires "
                f"(hidden_size // num_attention_heads * partial_rotary_factor) // 2 = {half}"
            )


def _dec_falcon(r: Reader, d: int, h: int, opts: dict[str, Any]) -> int:
    """FalconForCausalLM's attention and layer layout; returns h_kv.

    query_key_value: new_decoder_architecture: (2 num_kv_heads + h) d_k (num_kv_heads
    null -> h); else multi_query: d + 2 d_k (one K/V head); else 3 d.  Norms: not
    parallel_attn: input and post-attention LayerNorms; parallel: ln_attn and ln_mlp when
    num_ln_in_parallel_attn is 2 (null becomes 2 with the new architecture, in
    FalconDecoderLayer) else one input_layernorm shared by both branches.  The new
    architecture always adds attention and MLP in parallel.
    """
    new = r.flag("new_decoder_architecture")
    mq = r.flag("multi_query")
    par = r.flag("parallel_attn")
    n_ln = r.cfg.get("num_ln_in_parallel_attn")
    if n_ln is not None and (isinstance(n_ln, bool) or not isinstance(n_ln, int)):
        raise ConfigError(f"num_ln_in_parallel_attn must be an integer or null, not {_show(n_ln)}")
    if n_ln is None and new:
        n_ln = 2
    if new:
        h_kv = r.size("num_kv_heads", h, f"num_attention_heads = {h}", nullable=True)
        if h_kv > h or h % h_kv:
            raise ConfigError(
                f"num_kv_heads ({h_kv}) does not divide num_attention_heads ({h}): FalconAttention splits the "
                "fused query_key_value into num_attention_heads // num_kv_heads query heads per K/V head"
            )
    else:
        h_kv = 1 if mq else h
    opts.update(norm="layernorm", bias=r.flag("bias"), ffn="mlp")
    opts["positional"] = "alibi" if r.flag("alibi") else "rotary"
    if par or new:
        opts.update(parallel_block=True, layer_norms="sublayer" if (not par or n_ln == 2) else "shared")
    return h_kv


def read_decoder(r: Reader) -> Spec:
    """The decoder types of transformers 5.24 that differ from Llama in norms, blocks, biases
    or attention pattern (each modeling file's shapes, checked on the meta device):

    * granite: LlamaForCausalLM's shapes (``attention_bias`` on q, k, v, o; ``mlp_bias`` on
      the three GLU maps); its multipliers are constants.
    * phi3: fused ``qkv_proj`` (d x (h + 2 h_kv) d_k) and ``gate_up_proj`` (d x 2 d_ff), the
      same parameters and FLOPs as separate maps; no biases.
    * starcoder2: ``use_bias`` on q, k, v, o and the two-map MLP; LayerNorm with β.
    * gemma2: four RMSNorms per layer (before and after attention and FFN: ``sandwich``),
      GeGLU, ``head_dim`` a field; sliding window on the layers ``layer_types`` marks.
    * gemma3_text: gemma2 plus q_norm, k_norm RMSNorm(head_dim) (``qk_norm=head``).
    * olmo: OlmoLayerNorm has no weights (norm none, final norm included).
    * olmo2: RMSNorms after attention and FFN (post-norm), q_norm RMSNorm(h d_k) and
      k_norm RMSNorm(h_kv d_k) (``qk_norm=full``).
    * cohere: parallel block, one weight-only LayerNorm; ``use_qk_norm``: weight-only
      LayerNorms of shape (heads, d_k) (``per_head``).
    * stablelm: LayerNorm with β; q, k, v biased by ``use_qkv_bias``, o never;
      ``use_parallel_residual``: one norm, parallel block; ``qk_layernorm``: a β-free
      LayerNorm(d_k) per head.
    * phi: parallel block with one LayerNorm; every Linear biased, the LM head too;
      ``qk_layernorm``: LayerNorm(d_k) with β for queries and keys (``head``).
    * gpt_neox: fused query_key_value (d x 3d) and dense biased by ``attention_bias``, MLP
      always biased, two LayerNorms per layer also when ``use_parallel_residual``.
    * gptj: parallel block with one LayerNorm (ln_1); q, k, v, out without bias; MLP biased
      (n_inner null -> 4d); the LM head has a bias.
    * falcon: see ``_dec_falcon``.
    """
    mt = r.mt
    gptj = mt == "gptj"
    if mt == "falcon" and r.cfg.get("n_embed") is not None:
        d = check_size("n_embed", r.cfg["n_embed"])
        r.notes.append(f"n_embed {d} read as hidden_size (FalconConfig's legacy name, which wins)")
    else:
        d = r.size("n_embd" if gptj else "hidden_size")
    h = r.size("n_head" if gptj else "num_attention_heads")
    if mt in _DEC_DIVIDES:  # Gemma2/3 configs check it; the others' attention raises
        _check_divides("hidden_size", d, "num_attention_heads", h, r.cls if mt.startswith("gemma") else r.model)
    if gptj:
        d_ff = r.size("n_inner", 4 * d, f"4 * n_embd = {4 * d}", nullable=True)
        if "rotary_dim" in r.cfg:  # a strict int field (rotary positions held in a buffer: no weights)
            check_size("rotary_dim", r.cfg["rotary_dim"], zero_ok=True)
    elif mt == "falcon":
        d_ff = r.size("ffn_hidden_size", 4 * d, f"4 * hidden_size = {4 * d}", nullable=True)
    else:
        d_ff = r.size("intermediate_size")
    sizes = dict(
        d_model=d,
        d_ff=d_ff,
        h=h,
        N=r.size("n_layer" if gptj else "num_hidden_layers"),
        V=r.size("vocab_size"),
        L_max=r.size("n_positions" if gptj else "max_position_embeddings"),
    )
    opts: dict[str, Any] = dict(
        norm="rmsnorm", bias=False, ffn="swiglu", positional="rotary", final_norm=True, norm_position="pre"
    )
    if mt == "falcon":
        h_kv = _dec_falcon(r, d, h, opts)
    elif mt in ("gpt_neox", "gptj"):
        h_kv = h
    else:
        h_kv = _dec_heads(r, h)
    if h_kv != h:
        sizes["h_kv"] = h_kv
    d_k = _dec_head_dim(r, d, h)
    if d_k is not None:
        sizes["d_k"] = d_k
    if mt == "granite":
        if r.flag("attention_bias"):
            opts["attention_bias"] = True
        if r.flag("mlp_bias"):
            opts["ffn_bias"] = True
    elif mt == "phi3":
        _dec_phi3_rope(r, d, h)
        r.notes.append(
            "Phi3Attention's fused qkv_proj and Phi3MLP's fused gate_up_proj are counted as their parts "
            "(the same parameters and FLOPs)"
        )
    elif mt == "starcoder2":
        opts.update(norm="layernorm", bias=r.flag("use_bias"), ffn="mlp")
    elif mt in ("gemma2", "gemma3_text"):
        opts.update(ffn="geglu", layer_norms="sandwich", attention_bias=r.flag("attention_bias"))
        if mt == "gemma3_text":
            opts["qk_norm"] = "head"
    elif mt == "olmo":
        opts.update(norm="none", attention_bias=r.flag("attention_bias"))
        r.notes.append("OlmoLayerNorm has no weights: the layer and final norms add no parameters")
    elif mt == "olmo2":
        opts.update(norm_position="post", qk_norm="full", attention_bias=r.flag("attention_bias"))
    elif mt == "cohere":
        opts.update(
            norm="layernorm",
            norm_bias=False,
            parallel_block=True,
            layer_norms="shared",
            attention_bias=r.flag("attention_bias"),
        )
        if r.flag("use_qk_norm"):
            opts["qk_norm"] = "per_head"
    elif mt == "stablelm":
        opts.update(norm="layernorm", qkv_bias=r.flag("use_qkv_bias"), out_bias=False)
        if r.flag("use_parallel_residual"):
            opts.update(parallel_block=True, layer_norms="shared")
        if r.flag("qk_layernorm"):
            opts.update(qk_norm="per_head", qk_norm_bias=False)
    elif mt == "phi":
        opts.update(norm="layernorm", bias=True, ffn="mlp", parallel_block=True, layer_norms="shared", head_bias=True)
        if r.flag("qk_layernorm"):
            opts["qk_norm"] = "head"
            if d_k is not None and d_k != d // h:
                raise ConfigError(
                    f"qk_layernorm with head_dim {d_k} unlike hidden_size // num_attention_heads = {d // h}: "
                    "PhiAttention builds its q/k LayerNorms at d // h, which its forward cannot apply"
                )
    elif mt == "gpt_neox":
        opts.update(norm="layernorm", attention_bias=r.flag("attention_bias"), ffn_bias=True, ffn="mlp")
        if r.flag("use_parallel_residual"):
            opts["parallel_block"] = True
    elif gptj:
        opts.update(
            norm="layernorm",
            attention_bias=False,
            ffn_bias=True,
            ffn="mlp",
            parallel_block=True,
            layer_norms="shared",
            head_bias=True,
        )
    if mt in ("phi3", "starcoder2"):
        w = _dec_window_all(r)
        if w is not None:
            sizes["w"] = w
    if mt in ("gemma2", "gemma3_text"):
        pattern = _dec_layer_pattern(r, sizes["N"])
        if pattern is not None:
            sizes["w"] = pattern[0]
            if pattern[1] != sizes["N"]:
                sizes["N_w"] = pattern[1]
    if opts.get("head_bias"):
        r.notes.append(f"{r.model}'s lm_head has a bias of V = {sizes['V']} entries (never tied)")
    return Spec(family="decoder-only", sizes=sizes, tie_output=r.flag("tie_word_embeddings"), **opts)


# --------------------------------------------------------------------------- types-moe


def _int_list(r: Reader, key: str) -> list[int] | None:
    """A JSON list of integers (layer indices), or None when missing or null."""
    v = r.cfg.get(key)
    if v is None:
        return None
    if not isinstance(v, list) or any(isinstance(x, bool) or not isinstance(x, int) for x in v):
        raise ConfigError(f"{key} must be a list of integers (layer indices) or null, not {_show(v)}")
    return v


def _layer_types(r: Reader, n_layers: int) -> list[str] | None:
    """``layer_types`` as given (None when missing or null), checked as PreTrainedConfig does:
    entries from ALLOWED_ATTN_LAYER_TYPES, one per layer."""
    types = r.cfg.get("layer_types")
    if types is None:
        return None
    if not isinstance(types, list) or any(t not in _ATTN_LAYER_TYPES for t in types):
        raise ConfigError(f"layer_types must be a list of {', '.join(_ATTN_LAYER_TYPES)}")
    if len(types) != n_layers:
        raise ConfigError(f"layer_types has {len(types)} entries for num_hidden_layers {n_layers}")
    return types


# transformers 5.x configuration_utils.ALLOWED_ATTN_LAYER_TYPES
_ATTN_LAYER_TYPES = (
    "full_attention",
    "sliding_attention",
    "chunked_attention",
    "window_attention",
    "indexed_attention",
    "compressed_sparse_attention",
    "heavily_compressed_attention",
    "minimax_m3_sparse",
    "conv",
    "moe",
    "hybrid",
    "hybrid_sliding",
    "reference_sliding_attention",
    "linear_attention",
)


def _moe_pattern(r: Reader, n: int) -> tuple[int | None, str]:
    """(the window w every layer uses or None, the Spec's attention_pattern) of a MoE type.

    Qwen2MoeConfig: ``sliding_window`` only with ``use_sliding_window`` (else 0), on the
    layers ``layer_types`` marks sliding (default: even layers below ``max_window_layers``).
    Qwen3MoeConfig: ``sliding_window`` on every layer with ``use_sliding_window``.
    GptOssConfig: ``sliding_window`` (128) on the ``layer_types`` sliding layers (default: the
    even layers).  Llama4TextConfig: ``attention_chunk_size`` on the ``layer_types`` chunked
    layers (default: every layer with rotary positions, ``no_rope_layers``).  One window on
    every layer, or none, is the Spec's ``w``; any other mix is ``per-layer`` (parameters
    exact, FLOPs/KV cache/time refused), noted here with the key that makes it."""
    mt = r.mt
    window_key = "attention_chunk_size" if mt == "llama4_text" else "sliding_window"
    k, w = r.lookup(window_key)
    if k is None:  # Qwen2/3MoeConfig: 4096, used only with use_sliding_window (the instance nulls it)
        w = _QWEN_WINDOW_DEFAULT if mt in ("qwen2_moe", "qwen3_moe") else r.defaults[window_key]
    else:
        w = window_size(r, window_key, w)
    use = True
    if mt in ("qwen2_moe", "qwen3_moe"):
        use = r.flag("use_sliding_window", note=False)
        if not use:
            w = None
    if mt == "qwen3_moe":
        return (w, "uniform") if w is None else _note_window(r, w, n, n)
    types = _layer_types(r, n)
    if mt == "qwen2_moe" and types is None:
        first = r.cfg.get("max_window_layers", 28)
        if isinstance(first, bool) or not isinstance(first, int):
            raise ConfigError(f"max_window_layers must be an integer, not {_show(first)}")
        types = ["sliding_attention" if (i + 1) % 2 and i < first and use else "full_attention" for i in range(n)]
    elif mt == "gpt_oss" and types is None:
        types = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n)]
    elif mt == "llama4_text" and types is None:
        rope = r.cfg.get("no_rope_layers")
        if rope is not None and (
            not isinstance(rope, list) or any(isinstance(x, bool) or not isinstance(x, int) for x in rope)
        ):
            raise ConfigError(
                f"no_rope_layers must be a list of integers (1: the layer uses rotary positions) or null, not {_show(rope)}"
            )
        interval = r.cfg.get("no_rope_layer_interval", 4)
        if isinstance(interval, bool) or not isinstance(interval, int) or interval == 0:
            raise ConfigError(f"no_rope_layer_interval must be a non-zero integer, not {_show(interval)}")
        rope = rope or [int((i + 1) % interval != 0) for i in range(n)]
        types = ["chunked_attention" if x and w is not None else "full_attention" for x in rope]
    if mt == "llama4_text":
        chunked = sum(t == "chunked_attention" for t in types) if w is not None else 0
        others = sum(t not in ("full_attention", "chunked_attention") for t in types)
        if chunked == 0 and others == 0:
            return None, "uniform"
        r.notes.append(
            f"layer_types makes {chunked} of {n} layers attend in chunks of attention_chunk_size {w}: "
            "chunked attention is not modelled yet, so FLOPs, KV cache and time are refused (parameters are exact)"
        )
        return None, "per-layer"
    sliding = sum(t == "sliding_attention" for t in types)
    others = sum(t not in ("full_attention", "sliding_attention") for t in types)
    if others:
        r.notes.append(
            "layer_types holds attention kinds other than full and sliding: FLOPs, KV cache and time are refused "
            "(parameters are exact)"
        )
        return None, "per-layer"
    if sliding == 0 or w is None:
        return None, "uniform"
    if mt == "qwen2_moe" and w == 0:  # use_sliding_window false: Qwen2MoeConfig sets sliding_window to 0
        w = None
    if w is None:
        r.notes.append(
            "layer_types marks sliding layers but use_sliding_window is false (sliding_window 0): FLOPs, KV cache "
            "and time are refused (parameters are exact)"
        )
        return None, "per-layer"
    return _note_window(r, w, sliding, n)


def _note_window(r: Reader, w: int, sliding: int, n: int) -> tuple[int | None, str]:
    """The window on ``sliding`` of ``n`` layers: all of them (``w``), or some (``w`` and the
    per-layer window count ``N_w``, read by ``read_moe_decoder``: Spec's per-layer windows)."""
    if sliding == n:
        r.notes.append(
            f"sliding_window {w} on every layer: every layer attends to the last {w} positions (FLOPs and KV cache)"
        )
        return w, "uniform"
    r.notes.append(
        f"layer_types makes {sliding} of {n} layers sliding-window ({w}) and the rest full (N_w = {sliding})"
    )
    return w, f"N_w={sliding}"


def _moe_layout(
    r: Reader, sizes: dict[str, int], opts: dict[str, Any], n_moe: int, E: int, k: int, dense_ff: int, expert_ff: int
) -> None:
    """Put the experts into ``sizes``/``opts``: E, k, and the layout of n_moe MoE layers among N.

    No MoE layer: a dense model (d_ff = dense_ff).  Every layer a MoE layer: d_ff is the
    expert width (the dense width is unused).  Otherwise d_ff is the dense width, d_ff_e
    the expert width when it differs, and N_moe the number of MoE layers."""
    n = sizes["N"]
    if n_moe == 0:
        sizes["d_ff"] = dense_ff
        r.notes.append(f"no layer is a mixture-of-experts layer: {r.model} is counted as a dense model")
        return
    if k > E:
        raise ConfigError(f"num_experts_per_tok ({k}) exceeds the {E} experts")
    sizes.update(E=E, k=k)
    if n_moe == n:
        sizes["d_ff"] = expert_ff
        return
    sizes["d_ff"] = dense_ff
    if expert_ff != dense_ff:
        sizes["d_ff_e"] = expert_ff
    sizes["N_moe"] = n_moe
    r.notes.append(
        f"{n_moe} of {n} layers are mixture-of-experts layers, the other {n - n_moe} dense (width {dense_ff})"
    )


def read_moe_decoder(r: Reader) -> Spec:
    """Qwen2-MoE, Qwen3-MoE, gpt-oss and Llama 4 (text): Llama-shaped attention, MoE layers.

    Formulas: arch-notes §2.C, checked against transformers 5.x on the meta device by
    tests/test_model_types.py.  Qwen2-MoE: q/k/v biases (``qkv_bias``), a shared expert of
    ``shared_expert_intermediate_size`` with its sigmoid gate; Qwen3-MoE: QK-norm of width
    head_dim; gpt-oss: biased router and experts, attention sinks; Llama 4: a shared expert of
    the expert width, dense layers of ``intermediate_size_mlp``, an L2 QK-norm (no weights).
    MoE layers: Qwen ``(i + 1) % decoder_sparse_step == 0`` and i not in ``mlp_only_layers``;
    Llama 4 ``moe_layers`` (default every ``interleave_moe_layer_step``-th); gpt-oss all.
    """
    mt = r.mt
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    n = r.size("num_hidden_layers")
    h_kv = _heads(r, h)
    sizes: dict[str, int] = dict(d_model=d, h=h, N=n, V=r.size("vocab_size"), L_max=r.size("max_position_embeddings"))
    if h_kv != h:
        sizes["h_kv"] = h_kv
    if mt in ("gpt_oss", "llama4_text") and r.lookup("head_dim")[0] is None:  # the class default (64, 128)
        hd = r.size("head_dim")
    elif mt in ("gpt_oss", "llama4_text"):  # a head_dim field: null -> hidden_size // heads
        hd = r.size("head_dim", d // h, f"hidden_size // num_attention_heads = {d // h}", nullable=True)
    elif r.given("head_dim"):  # Qwen2MoeAttention / Qwen3MoeAttention read it with getattr
        hd = r.size("head_dim")
    elif "head_dim" in r.cfg:
        raise ConfigError(
            f"head_dim must be a positive integer, not null ({r.model}'s attention reads it when present)"
        )
    else:
        hd = d // h
        if d % h:
            r.notes.append(f"head_dim not given: hidden_size // num_attention_heads = {hd} (rounded down)")
    if hd == 0:
        raise ConfigError(
            f"num_attention_heads ({h}) exceeds hidden_size ({d}): the heads would be 0 wide; give head_dim"
        )
    if hd * h != d or "head_dim" in r.cfg:
        sizes["d_k"] = hd
    if mt in ("gpt_oss", "llama4_text") or "head_dim" in r.cfg:  # validate_rope reads config.head_dim
        _check_rotary_head(r, "head_dim", hd)
    opts: dict[str, Any] = {}
    if mt == "qwen2_moe":
        if r.flag("qkv_bias"):
            opts["qkv_bias"] = True
            r.notes.append("Qwen2MoeAttention: q_proj, k_proj and v_proj have biases (qkv_bias), o_proj has none")
    elif r.flag("attention_bias"):
        opts["attention_bias"] = True
    if mt == "qwen3_moe":
        opts["qk_norm"] = True
    if mt == "llama4_text" and r.flag("use_qk_norm", True, note=False):
        r.notes.append("use_qk_norm: Llama 4's QK norm is an L2 norm without weights (no parameters)")
    # experts and their layers
    if mt in ("qwen2_moe", "qwen3_moe"):
        E = r.size("num_experts", zero_ok=True)
        k = r.size("num_experts_per_tok")
        step = r.size("decoder_sparse_step")
        dense_only = set(_int_list(r, "mlp_only_layers") or [])
        # every step-th layer, less the dense-only ones among them (no loop over the layers)
        n_moe = len(range(step - 1, n, step)) - sum(1 for i in dense_only if 0 <= i < n and (i + 1) % step == 0)
        n_moe = n_moe if E > 0 else 0
        dense_ff, expert_ff = r.size("intermediate_size"), r.size("moe_intermediate_size")
    elif mt == "gpt_oss":
        E, k = r.size("num_local_experts"), r.size("num_experts_per_tok")
        n_moe = n
        dense_ff = expert_ff = r.size("intermediate_size")
    else:  # llama4_text
        E, k = r.size("num_local_experts"), r.size("num_experts_per_tok")
        layers = _int_list(r, "moe_layers")
        if layers is None:
            step = r.size("interleave_moe_layer_step")
            n_moe = len(range(step - 1, n, step))
        else:
            n_moe = len({i for i in layers if 0 <= i < n})
        dense_ff, expert_ff = r.size("intermediate_size_mlp"), r.size("intermediate_size")
    _moe_layout(r, sizes, opts, n_moe, E, k, dense_ff, expert_ff)
    if "E" in sizes:
        if mt == "qwen2_moe":
            shared = r.size("shared_expert_intermediate_size")
            opts.update(n_shared_experts=1, shared_expert_gate=True)
            if shared != sizes.get("d_ff_e", sizes["d_ff"]):  # the routed experts' width
                sizes["d_ff_s"] = shared
            r.notes.append(
                "Qwen2MoeSparseMoeBlock: one shared expert with a sigmoid gate (Linear d_model -> 1, no bias)"
            )
        elif mt == "llama4_text":
            opts["n_shared_experts"] = 1
            r.notes.append("Llama4TextMoe: one shared expert of the routed experts' width (intermediate_size)")
        elif mt == "gpt_oss":
            opts.update(router_bias=True, expert_bias=True)
            r.notes.append("GptOssMLP: the router and every expert's maps have biases")
    if mt == "gpt_oss":
        opts["sinks"] = True
        r.notes.append("GptOssAttention: attention sinks, one learned logit per head and layer (h parameters)")
    w, pattern = _moe_pattern(r, n)
    if w is not None:
        sizes["w"] = w
    if pattern.startswith("N_w=") and "N_moe" not in sizes:  # some layers windowed, the rest full (Spec's N_w)
        sizes["N_w"] = int(pattern[4:])
    elif pattern.startswith("N_w="):  # windows over a dense + MoE stack: not modelled (Spec refuses N_w there)
        sizes.pop("w", None)
        opts["attention_pattern"] = "per-layer"
    elif pattern != "uniform":
        opts["attention_pattern"] = pattern
    return Spec(
        family="decoder-only",
        sizes=sizes,
        positional="rotary",
        norm="rmsnorm",
        bias=False,
        ffn="swiglu",
        final_norm=True,
        norm_position="pre",
        tie_output=r.flag("tie_word_embeddings"),
        **opts,
    )


def read_deepseek(r: Reader) -> Spec:
    """DeepSeek-V2 and -V3: multi-head latent attention (``engine.mla``) and DeepSeekMoE.

    Layers i < ``first_k_dense_replace`` are dense (``intermediate_size``); the rest have a
    router E x d_model (V3's ``e_score_correction_bias`` is a buffer: not counted), E routed
    experts of ``moe_intermediate_size`` and one shared MLP of ``n_shared_experts`` x that
    width (counted as n_shared_experts experts of the routed width: the same parameters and
    FLOPs).  transformers 5.x does not build V3's multi-token-prediction layer
    (``num_nextn_predict_layers``): the published 671B includes it, this count does not."""
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    n = r.size("num_hidden_layers")
    if r.mt == "deepseek_v2" and d % h:  # DeepseekV2Config.validate_architecture
        raise ConfigError(
            f"num_attention_heads ({h}) does not divide hidden_size ({d}), which DeepseekV2Config requires"
        )
    if "num_key_value_heads" in r.cfg and r.cfg["num_key_value_heads"] is not None:
        check_size("num_key_value_heads", r.cfg["num_key_value_heads"])  # a strict int field; MLA ignores it
    if "head_dim" in r.cfg and r.cfg["head_dim"] is not None:
        check_size("head_dim", r.cfg["head_dim"])
    sizes: dict[str, int] = dict(
        d_model=d,
        h=h,
        N=n,
        V=r.size("vocab_size"),
        L_max=r.size("max_position_embeddings"),
        r_kv=r.size("kv_lora_rank"),
        d_nope=r.size("qk_nope_head_dim"),
        d_rope=r.size("qk_rope_head_dim"),
        d_v=r.size("v_head_dim"),
    )
    _check_rotary_head(r, "qk_rope_head_dim", sizes["d_rope"])  # post-init: head_dim = qk_rope_head_dim
    if r.given("q_lora_rank") or ("q_lora_rank" not in r.cfg and r.defaults["q_lora_rank"] is not None):
        sizes["r_q"] = r.size("q_lora_rank")
    else:
        r.notes.append("q_lora_rank is null: queries use one q_proj (d_model x h*(d_nope + d_rope)), no compression")
    opts: dict[str, Any] = {"mla": True}
    if r.flag("attention_bias"):
        opts["attention_bias"] = True
    if r.mt == "deepseek_v2" and r.flag("mlp_bias"):
        opts.update(ffn_bias=True, expert_bias=False)  # dense and shared MLPs; the stacked experts have none
    E = r.size("n_routed_experts")
    k_key, k = r.lookup("num_experts_per_tok")
    if k_key is None:
        k = r.defaults["num_experts_per_tok"]
    if k is None:
        raise ConfigError(
            f"num_experts_per_tok is null ({r.cls}'s default): {r.model}'s router cannot pick experts "
            "(torch.topk needs k); give num_experts_per_tok"
        )
    k = check_size("num_experts_per_tok", k)
    first = r.size("first_k_dense_replace", zero_ok=True)
    _moe_layout(r, sizes, opts, max(n - first, 0), E, k, r.size("intermediate_size"), r.size("moe_intermediate_size"))
    if "E" in sizes:
        shared = r.size("n_shared_experts", zero_ok=True)
        if not shared and opts.get("ffn_bias"):
            raise ConfigError(
                "n_shared_experts is 0 with mlp_bias true: DeepseekV2MLP still builds a zero-width shared MLP "
                "whose down_proj keeps a d_model bias, which symtrans does not model"
            )
        if shared:  # one MLP of width n_shared_experts x moe_intermediate_size (one down_proj bias, if any)
            opts["n_shared_experts"] = 1
            width = shared * sizes.get("d_ff_e", sizes["d_ff"])
            if width != sizes.get("d_ff_e", sizes["d_ff"]):
                sizes["d_ff_s"] = width
            r.notes.append(
                f"shared_experts: one MLP of n_shared_experts x moe_intermediate_size = {shared} x "
                f"{sizes.get('d_ff_e', sizes['d_ff'])} = {width} wide, always active"
            )
    if r.mt == "deepseek_v3":
        r.notes.append(
            "DeepSeek-V3's multi-token-prediction layer (num_nextn_predict_layers) is in its checkpoints but "
            "not built by transformers 5.x: not counted (the published 671B includes it); the router's "
            "e_score_correction_bias is a buffer, not a parameter"
        )
    r.notes.append("multi-head latent attention: the KV cache holds r_kv + d_rope elements per token and layer")
    return Spec(
        family="decoder-only",
        sizes=sizes,
        positional="rotary",
        norm="rmsnorm",
        bias=False,
        ffn="swiglu",
        final_norm=True,
        norm_position="pre",
        tie_output=r.flag("tie_word_embeddings"),
        **opts,
    )


def read_qwen2_vl_text(r: Reader) -> Spec:
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    _check_divides("hidden_size", d, "num_attention_heads", h, "Qwen2VLAttention")
    r.head_dim_must_match("hidden_size", d, "num_attention_heads", h)
    h_kv = _heads(r, h)
    sizes = dict(
        d_model=d,
        d_ff=r.size("intermediate_size"),
        h=h,
        N=r.size("num_hidden_layers"),
        V=r.size("vocab_size"),
        L_max=r.size("max_position_embeddings"),
    )
    if h_kv != h:
        sizes["h_kv"] = h_kv
    w = _window(r, sizes["N"])
    if w is not None:
        sizes["w"] = w
    r.notes.append(
        "Qwen2VLAttention: q_proj, k_proj and v_proj have biases, o_proj has none; "
        "multimodal rotary positions (mrope) have no parameters"
    )
    return Spec(
        family="decoder-only",
        sizes=sizes,
        positional="rotary",
        norm="rmsnorm",
        bias=False,
        qkv_bias=True,
        ffn="swiglu",
        final_norm=True,
        norm_position="pre",
        tie_output=r.flag("tie_word_embeddings"),
    )
