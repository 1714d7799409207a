"""Llama-shaped decoders: llama, mistral, mixtral, qwen2, qwen3, gemma (transformers 5.x
``models/<type>/``): RMSNorm, rotary positions, a GLU feed-forward (Mixtral: E experts of it),
grouped-query attention; Qwen2 biases q, k, v; Qwen3 normalises q and k per head; Gemma uses
GeGLU and a head_dim field.  Checked on the meta device by tests/test_model_types.py.
"""

from __future__ import annotations

from typing import Any

from symtrans.catalog.models.record import DECODER_NO_EFFECT, ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_rotary_head, show, window_size
from symtrans.engine.spec import Spec

# LlamaConfig-style defaults shared by the decoder classes (each record overrides its own).
DECODER_DEFAULTS: dict[str, Any] = {
    "vocab_size": 32000,
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "tie_word_embeddings": False,
}
# Qwen2Config / Qwen3Config: the keys that set the sliding window (workload, not weights).
QWEN_WINDOW = "sliding_window use_sliding_window max_window_layers layer_types"


# Config classes whose num_key_value_heads may be null (``int | None``): null means
# num_attention_heads (their __post_init__).  The others' strict int field refuses null.
_KV_HEADS_NULLABLE = ("llama", "qwen2", "qwen3", "qwen2_vl_text", "qwen2_5_vl_text", "qwen3_vl_text")
# Qwen3-shaped attention (head_dim field, per-head q/k RMSNorms, attention_bias switch).
_QWEN3_SHAPED = ("qwen3", "qwen3_vl_text")


def heads(r: Reader, h: int, h_key: str = "num_attention_heads") -> int:
    """num_key_value_heads, checked against h (null -> h where the config class says so)."""
    d = r.defaults["num_key_value_heads"]
    if r.mt in _KV_HEADS_NULLABLE:
        if d is None or ("num_key_value_heads" in r.cfg and r.cfg["num_key_value_heads"] is None):
            h_kv = r.size("num_key_value_heads", h, f"{h_key} = {h}", nullable=True)
        else:
            h_kv = r.size("num_key_value_heads")
    else:
        h_kv = r.size("num_key_value_heads")
    if h_kv > h:
        raise ConfigError(f"num_key_value_heads ({h_kv}) exceeds {h_key} ({h})")
    if h % h_kv:
        raise ConfigError(f"{h_key} ({h}) is not a multiple of num_key_value_heads ({h_kv})")
    return h_kv


def llama_like(r: Reader) -> Spec:
    mt = r.mt
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    h_kv = heads(r, h)
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
    if mt == "llama" and d % h:  # LlamaConfig.validate_architecture, head_dim given or not
        raise ConfigError(f"num_attention_heads ({h}) does not divide hidden_size ({d}), which LlamaConfig requires")
    if mt in (*_QWEN3_SHAPED, "gemma"):
        sizes["d_k"] = r.size("head_dim")  # an explicit class default (128 / 256)
    elif r.given("head_dim"):
        sizes["d_k"] = r.size("head_dim")
    elif mt == "qwen2" and "head_dim" in r.cfg:
        raise ConfigError("head_dim must be a positive integer, not null (Qwen2Attention reads it when present)")
    else:
        if d % h:
            if mt == "llama":
                raise ConfigError(
                    f"num_attention_heads ({h}) does not divide hidden_size ({d}), which LlamaConfig requires"
                )
            sizes["d_k"] = d // h
            r.notes.append(
                f"head_dim not given: {r.cls} uses hidden_size // num_attention_heads = {d // h} "
                f"(rounded down: q_proj is {d} x {h * (d // h)})"
            )
        elif mt != "qwen2":
            r.size("head_dim", d // h, f"hidden_size // num_attention_heads = {d // h}", nullable=True)
    if "d_k" in sizes:  # transformers' RoPE validation of the head width (found by fuzzing: counted before)
        check_rotary_head(r, "head_dim", sizes["d_k"])
    else:
        check_rotary_head(r, "hidden_size / num_attention_heads", d // h)
    opts: dict[str, Any] = {}
    if mt == "llama":
        if r.flag("attention_bias"):
            opts["attention_bias"] = True
        if r.flag("mlp_bias"):
            opts["ffn_bias"] = True
    elif mt in (*_QWEN3_SHAPED, "gemma"):
        if r.flag("attention_bias"):
            opts["attention_bias"] = True
    elif mt == "qwen2":
        opts["qkv_bias"] = True
        r.notes.append("Qwen2Attention: q_proj, k_proj and v_proj have biases, o_proj has none")
    for key in ("attention_bias", "mlp_bias"):
        if key in r.cfg and key not in r.defaults:
            v = r.cfg[key]
            if not isinstance(v, bool):
                raise ConfigError(f"{key} must be true or false, not {show(v)}")
            if v:
                r.notes.append(f"key {key} is true, but {r.model} (transformers 5.x) has no such setting: ignored")
    if mt == "mixtral":
        E = r.size("num_local_experts")
        k = r.size("num_experts_per_tok")
        if k > E:
            raise ConfigError(f"num_experts_per_tok ({k}) exceeds num_local_experts ({E})")
        sizes.update(E=E, k=k)
    if mt in _QWEN3_SHAPED:
        opts["qk_norm"] = True
    w = window(r, sizes["N"])
    if w is not None:
        sizes["w"] = w
    return Spec(
        family="decoder-only",
        sizes=sizes,
        positional="rotary",
        norm="rmsnorm",
        bias=False,
        ffn="geglu" if mt == "gemma" else "swiglu",
        final_norm=True,
        norm_position="pre",
        tie_output=r.flag("tie_word_embeddings"),
        **opts,
    )


# Qwen2Config / Qwen3Config defaults of sliding_window and max_window_layers (fields whose
# instance value differs: __post_init__ nulls sliding_window unless use_sliding_window).
QWEN_WINDOW_DEFAULT = 4096
QWEN_MAX_WINDOW_LAYERS = 28


def window(r: Reader, n_layers: int) -> int | None:
    """The sliding window every layer uses (the Spec's workload size ``w``), or None.

    MistralConfig and MixtralConfig: ``sliding_window`` (null: none) on every layer.
    Qwen2Config and Qwen3Config: ``sliding_window`` only with ``use_sliding_window``, on the
    layers that ``layer_types`` marks "sliding_attention" (by default the layers from
    ``max_window_layers`` on).  The window changes FLOPs and the KV cache, never parameters.

    Raises:
        ConfigError: a malformed window key, or some layers windowed and others not
            (symtrans has one window for the whole stack).
    """
    if r.mt not in ("mistral", "mixtral", "qwen2", "qwen3", "qwen2_vl_text", "qwen2_5_vl_text"):
        return None
    k, w = r.lookup("sliding_window")
    if k is None:  # MistralConfig 4096, MixtralConfig None; Qwen2/3Config 4096 (used only when switched on)
        w = r.defaults["sliding_window"] if r.mt in ("mistral", "mixtral") else QWEN_WINDOW_DEFAULT
        if r.mt in ("mistral", "mixtral") and w is not None:
            r.default("sliding_window", "missing", w, None)
    if k is not None:
        w = window_size(r, "sliding_window", w)
    if r.mt in ("mistral", "mixtral"):
        if w is not None:
            r.notes.append(f"sliding_window {w}: every layer attends to the last {w} positions (FLOPs and KV cache)")
        return w
    use = r.cfg.get("use_sliding_window", False)
    if not isinstance(use, bool):
        raise ConfigError(f"use_sliding_window must be true or false, not {show(use)}")
    if not use:
        w = None
    types = r.cfg.get("layer_types")
    if types is None:
        first = r.cfg.get("max_window_layers", r.defaults.get("max_window_layers", QWEN_MAX_WINDOW_LAYERS))
        if isinstance(first, bool) or not isinstance(first, int):
            raise ConfigError(f"max_window_layers must be an integer, not {show(first)}")
        types = ["sliding_attention" if w is not None and i >= first else "full_attention" for i in range(n_layers)]
    elif not isinstance(types, list) or any(t not in ("full_attention", "sliding_attention") for t in types):
        raise ConfigError('layer_types must be a list of "full_attention" and "sliding_attention"')
    elif len(types) != n_layers:
        raise ConfigError(f"layer_types has {len(types)} entries for num_hidden_layers {n_layers}")
    sliding = sum(t == "sliding_attention" for t in types) if w is not None else 0
    if sliding == 0:
        return None
    if sliding != n_layers:
        raise ConfigError(
            f"layer_types makes {sliding} of {n_layers} layers sliding-window ({w}) and the rest full: "
            "symtrans has one attention window for the whole stack"
        )
    r.notes.append(f"sliding_window {w} on every layer (use_sliding_window, layer_types): FLOPs and KV cache")
    return w


LLAMA = ModelType(
    model_type="llama",
    config_class="LlamaConfig",
    model_class="LlamaForCausalLM",
    read=llama_like,
    defaults={
        **DECODER_DEFAULTS,
        "intermediate_size": 11008,
        "num_key_value_heads": None,
        "head_dim": None,
        "max_position_embeddings": 2048,
        "attention_bias": False,
        "mlp_bias": False,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size "
        "initializer_range intermediate_size max_position_embeddings mlp_bias num_attention_heads "
        "num_hidden_layers num_key_value_heads pad_token_id pretraining_tp rms_norm_eps rope_parameters "
        "tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(**DECODER_NO_EFFECT, tp="pretraining_tp"),
    pad_default=None,
    family="llama",
)


MISTRAL = ModelType(
    model_type="mistral",
    config_class="MistralConfig",
    model_class="MistralForCausalLM",
    read=llama_like,
    defaults={
        **DECODER_DEFAULTS,
        "intermediate_size": 14336,
        "num_key_value_heads": 8,
        "head_dim": None,
        "max_position_embeddings": 4096 * 32,
        "sliding_window": 4096,
    },
    config_keys=keys(
        "attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size initializer_range "
        "intermediate_size max_position_embeddings num_attention_heads num_hidden_layers num_key_value_heads "
        "pad_token_id rms_norm_eps rope_parameters sliding_window tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(**DECODER_NO_EFFECT, window="sliding_window"),
    pad_default=None,
    family="llama",
)


MIXTRAL = ModelType(
    model_type="mixtral",
    config_class="MixtralConfig",
    model_class="MixtralForCausalLM",
    read=llama_like,
    defaults={
        **DECODER_DEFAULTS,
        "intermediate_size": 14336,
        "num_key_value_heads": 8,
        "head_dim": None,
        "max_position_embeddings": 4096 * 32,
        "num_local_experts": 8,
        "num_experts_per_tok": 2,
        "sliding_window": None,
    },
    config_keys=keys(
        "attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size initializer_range "
        "intermediate_size max_position_embeddings num_attention_heads num_experts num_experts_per_tok "
        "num_hidden_layers num_key_value_heads num_local_experts output_router_logits pad_token_id "
        "rms_norm_eps rope_parameters router_aux_loss_coef router_jitter_noise sliding_window "
        "tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        **{**DECODER_NO_EFFECT, "cache": "use_cache output_router_logits"},
        window="sliding_window",
        loss="router_aux_loss_coef router_jitter_noise",
    ),
    aliases={"num_experts": "num_local_experts"},
    pad_default=None,
    family="llama",
)


QWEN2 = ModelType(
    model_type="qwen2",
    config_class="Qwen2Config",
    model_class="Qwen2ForCausalLM",
    read=llama_like,
    defaults={
        **DECODER_DEFAULTS,
        "vocab_size": 151936,
        "intermediate_size": 22016,
        "num_key_value_heads": 32,
        "max_position_embeddings": 32768,
    },
    config_keys=keys(
        "attention_dropout bos_token_id eos_token_id hidden_act hidden_size initializer_range intermediate_size "
        "layer_types max_position_embeddings max_window_layers num_attention_heads num_hidden_layers "
        "num_key_value_heads pad_token_id rms_norm_eps rope_parameters sliding_window tie_word_embeddings "
        "use_cache use_sliding_window vocab_size"
    ),
    no_param_effect=no_effect(**DECODER_NO_EFFECT, window=QWEN_WINDOW),
    getattr_keys=("head_dim",),  # Qwen2Attention: getattr(config, "head_dim", d // h)
    pad_default=None,
    family="llama",
)


QWEN3 = ModelType(
    model_type="qwen3",
    config_class="Qwen3Config",
    model_class="Qwen3ForCausalLM",
    read=llama_like,
    defaults={
        **DECODER_DEFAULTS,
        "vocab_size": 151936,
        "intermediate_size": 22016,
        "num_key_value_heads": 32,
        "head_dim": 128,
        "max_position_embeddings": 32768,
        "attention_bias": False,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size "
        "initializer_range intermediate_size layer_types max_position_embeddings max_window_layers "
        "num_attention_heads num_hidden_layers num_key_value_heads pad_token_id rms_norm_eps rope_parameters "
        "sliding_window tie_word_embeddings use_cache use_sliding_window vocab_size"
    ),
    no_param_effect=no_effect(**DECODER_NO_EFFECT, window=QWEN_WINDOW),
    pad_default=None,
    family="llama",
)


GEMMA = ModelType(
    model_type="gemma",
    config_class="GemmaConfig",
    model_class="GemmaForCausalLM",
    read=llama_like,
    defaults={
        **DECODER_DEFAULTS,
        "vocab_size": 256000,
        "hidden_size": 3072,
        "intermediate_size": 24576,
        "num_hidden_layers": 28,
        "num_attention_heads": 16,
        "num_key_value_heads": 16,
        "head_dim": 256,
        "max_position_embeddings": 8192,
        "tie_word_embeddings": True,
        "attention_bias": False,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size "
        "initializer_range intermediate_size max_position_embeddings num_attention_heads num_hidden_layers "
        "num_key_value_heads pad_token_id rms_norm_eps rope_parameters tie_word_embeddings "
        "use_bidirectional_attention use_cache vocab_size"
    ),
    no_param_effect=no_effect(**DECODER_NO_EFFECT, mask="use_bidirectional_attention"),
    pad_default=0,
    family="llama",
)


# Qwen3-VL's language model (Qwen3VLTextModel): Qwen3's layers (per-head q/k RMSNorms, bias
# switch, head_dim field) without a sliding window, and interleaved multimodal rotary positions
# (mrope_section, mrope_interleaved: buffers, no weights).  Only inside qwen3_vl's text_config.
QWEN3_VL_TEXT = ModelType(
    model_type="qwen3_vl_text",
    config_class="Qwen3VLTextConfig",
    model_class="Qwen3VLTextModel",
    read=llama_like,
    defaults={
        "vocab_size": 151936,
        "hidden_size": 4096,
        "intermediate_size": 22016,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 32,
        "head_dim": 128,
        "max_position_embeddings": 128000,
        "attention_bias": False,
        "tie_word_embeddings": False,  # no such field: the wrapper's own flag decides (and is passed down)
    },
    config_keys=keys(
        "attention_bias attention_dropout head_dim hidden_act hidden_size initializer_range intermediate_size "
        "max_position_embeddings num_attention_heads num_hidden_layers num_key_value_heads pad_token_id "
        "rms_norm_eps rope_parameters use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        **{**DECODER_NO_EFFECT, "token": "pad_token_id"},
    ),
    # Qwen/Qwen3-VL-*'s text_config still writes these; Qwen3VLTextConfig has no such fields
    # (the wrapper's tie_word_embeddings alone ties lm_head)
    legacy_keys=frozenset({"bos_token_id", "eos_token_id", "tie_word_embeddings"}),
    pad_default=None,
    text_only=True,
    family="llama",
)


RECORDS = (LLAMA, MISTRAL, MIXTRAL, QWEN2, QWEN3, GEMMA, QWEN3_VL_TEXT)
