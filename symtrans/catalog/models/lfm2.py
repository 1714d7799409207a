"""Liquid AI's LFM2 (2025): gated short-convolution layers interleaved with grouped-query
attention layers, each followed by a SwiGLU MLP, read onto the engine's ``short_conv|attention``
stack (N_attn attention layers, the rest short convolutions).

Read off transformers 5.24's ``models/lfm2`` (Lfm2Config, modeling_lfm2.py); checked on the
meta device and by the key audit in tests/test_model_types.py:

* ``layer_types`` names each layer's mixer; missing, the config class writes it from
  ``full_attn_idxs`` (missing too: every layer attention);
* ``block_ff_dim`` and ``tie_embedding`` (Liquid's own names) are taken over
  ``intermediate_size`` and ``tie_word_embeddings`` by the config class;
* the MLP width: with ``block_auto_adjust_ff_dim``, ``int(2 f / 3)``, then with a
  ``block_ffn_dim_multiplier`` ``int(m x that)`` rounded up to a multiple of
  ``block_multiple_of`` (Lfm2MLP);
* attention: per-head RMSNorms on q and k, rotary positions, no biases; ``head_dim`` read with
  getattr, else hidden_size // num_attention_heads; the short convolution has
  ``conv_L_cache`` taps and ``conv_bias`` biases on its in/out projections and conv.
"""

from __future__ import annotations

from typing import Any

from symtrans.catalog.models.record import ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_size, show
from symtrans.engine.spec import Spec

_KINDS = ("conv", "full_attention")


def _layer_types(r: Reader, n: int) -> list[str]:
    types = r.cfg.get("layer_types")
    if types is None:
        idxs = r.cfg.get("full_attn_idxs")
        if idxs is None:
            return ["full_attention"] * n
        if not isinstance(idxs, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in idxs):
            raise ConfigError(f"full_attn_idxs must be a list of layer indices, not {show(idxs)}")
        return ["full_attention" if i in idxs else "conv" for i in range(n)]
    if not isinstance(types, list) or any(t not in _KINDS for t in types):
        raise ConfigError(f"layer_types must be a list of {' / '.join(_KINDS)}, not {show(types)}")
    if len(types) != n:
        raise ConfigError(f"layer_types has {len(types)} entries for num_hidden_layers {n}")
    return types


def _ff_width(r: Reader) -> int:
    f = check_size("block_ff_dim", r.cfg["block_ff_dim"]) if r.given("block_ff_dim") else r.size("intermediate_size")
    if not r.flag("block_auto_adjust_ff_dim", note=False):
        return f
    f = int(2 * f / 3)
    m = r.cfg.get("block_ffn_dim_multiplier", r.defaults["block_ffn_dim_multiplier"])
    # Lfm2Config's field is a strict number (null is refused there), so the rounding always applies
    if isinstance(m, bool) or not isinstance(m, (int, float)) or m <= 0:
        raise ConfigError(f"block_ffn_dim_multiplier must be a positive number, not {show(m)}")
    step = r.size("block_multiple_of")
    f = step * ((int(m * f) + step - 1) // step)
    if f < 1:
        raise ConfigError("the adjusted MLP width (block_auto_adjust_ff_dim) is 0")
    return f


def read_lfm2(r: Reader) -> Spec:
    """The Spec of an Lfm2ForCausalLM config.

    Raises:
        ConfigError: a malformed size or layer list; num_key_value_heads not dividing
            num_attention_heads.
    """
    d = r.size("hidden_size")
    n = r.size("num_hidden_layers")
    types = _layer_types(r, n)
    n_attn = types.count("full_attention")
    h = r.size("num_attention_heads")
    h_kv = r.size("num_key_value_heads")
    if h % h_kv:
        raise ConfigError(f"num_attention_heads ({h}) is not a multiple of num_key_value_heads ({h_kv})")
    d_k = check_size("head_dim", r.cfg["head_dim"]) if r.given("head_dim") else d // h
    sizes: dict[str, int] = dict(d_model=d, d_ff=_ff_width(r), h=h, V=r.size("vocab_size"), N=n)
    sizes["L_max"] = r.size("max_position_embeddings")
    if h_kv != h:
        sizes["h_kv"] = h_kv
    if d_k * h != d:
        sizes["d_k"] = d_k
    if n_attn == 0:
        mixers = "short_conv"
    elif n_attn == n:
        mixers = "attention"
    else:
        mixers, sizes["N_attn"] = "short_conv|attention", n_attn
    opts: dict[str, Any] = {}
    if n_attn < n:
        sizes["d_conv"] = r.size("conv_L_cache")
        opts["ssm_conv_bias"] = r.flag("conv_bias", note=False)
    tie = r.cfg["tie_embedding"] if "tie_embedding" in r.cfg else r.flag("tie_word_embeddings")
    if not isinstance(tie, bool):
        raise ConfigError(f"tie_embedding must be true or false, not {show(tie)}")
    return Spec(
        family="decoder-only",
        sizes=sizes,
        mixers=mixers,
        norm="rmsnorm",
        norm_position="pre",
        final_norm=True,
        bias=False,
        ffn="swiglu",
        positional="rotary",
        qk_norm="head",
        tie_output=tie,
        **opts,
    )


LFM2 = ModelType(
    model_type="lfm2",
    config_class="Lfm2Config",
    model_class="Lfm2ForCausalLM",
    read=read_lfm2,
    defaults={
        "vocab_size": 65536,
        "hidden_size": 2560,
        "intermediate_size": 12288,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "max_position_embeddings": 128000,
        "tie_word_embeddings": True,
        "conv_bias": False,
        "conv_L_cache": 3,
        "block_multiple_of": 256,
        "block_ffn_dim_multiplier": 1.0,
        "block_auto_adjust_ff_dim": True,
    },
    config_keys=keys(
        "block_auto_adjust_ff_dim block_ffn_dim_multiplier block_multiple_of bos_token_id conv_L_cache conv_bias "
        "eos_token_id full_attn_idxs hidden_size initializer_range intermediate_size layer_types "
        "max_position_embeddings norm_eps num_attention_heads num_hidden_layers num_key_value_heads pad_token_id "
        "rope_parameters tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        positions="max_position_embeddings",
        token="bos_token_id eos_token_id pad_token_id",
        init="initializer_range",
        eps="norm_eps",
        rope="rope_parameters",
        cache="use_cache",
    ),
    # Liquid's own names in LiquidAI/LFM2.5-350M: block_ff_dim and tie_embedding are popped by
    # Lfm2Config into intermediate_size and tie_word_embeddings (read above); the rest no code reads
    legacy_keys=keys(
        "block_dim block_ff_dim block_mlp_init_scale block_norm_eps block_out_init_scale block_use_swiglu "
        "block_use_xavier_init conv_dim conv_use_xavier_init tie_embedding"
    ),
    getattr_keys=("head_dim",),
    pad_default=0,
    family="hybrid",
)

RECORDS = (LFM2,)
