"""AI21's Jamba (Lieber et al. 2024): Mamba 1 layers interleaved with grouped-query attention
layers, a mixture of experts on every other layer, read onto the engine's ``mamba|attention``
stack (one count symbol per kind: N_attn attention layers, the rest Mamba; N_moe MoE layers).

Read off transformers 5.24's ``models/jamba`` (JambaConfig and modeling_jamba.py); checked on
the meta device and by the key audit in tests/test_model_types.py:

* layer i is attention when ``i % attn_layer_period == attn_layer_offset``, else Mamba
  (JambaConfig.layers_block_type); its FFN is a mixture of ``num_experts`` experts when
  ``i % expert_layer_period == expert_layer_offset`` and ``num_experts > 1``, else one SwiGLU
  MLP (layers_num_experts);
* attention has no biases and no positions (Jamba relies on its Mamba layers for order);
  ``head_dim`` is read with getattr, else hidden_size // num_attention_heads;
* the Mamba mixer is Mamba 1 with d_inner = mamba_expand x hidden_size and Jamba's RMSNorms on
  dt (dt_rank), B and C (d_state each); ``mamba_dt_rank`` "auto" is ceil(hidden_size / 16).
"""

from __future__ import annotations

import math

from symtrans.catalog.models.record import ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_size
from symtrans.engine.spec import Spec


def _layers(n: int, period: int, offset: int) -> int:
    """How many of layers 0 .. n-1 have ``i % period == offset`` (closed: no loop over n)."""
    return 0 if offset >= n else (n - 1 - offset) // period + 1


def read_jamba(r: Reader) -> Spec:
    """The Spec of a JambaForCausalLM config.

    Raises:
        ConfigError: a malformed size; an offset not below its period (as JambaConfig refuses);
            heads that do not divide (num_key_value_heads must divide num_attention_heads).
    """
    d = r.size("hidden_size")
    n = r.size("num_hidden_layers")
    a_period, e_period = r.size("attn_layer_period"), r.size("expert_layer_period")
    a_offset = r.size("attn_layer_offset", zero_ok=True)
    e_offset = r.size("expert_layer_offset", zero_ok=True)
    if a_offset >= a_period:
        raise ConfigError(f"attn_layer_offset ({a_offset}) must be smaller than attn_layer_period ({a_period})")
    if e_offset >= e_period:
        raise ConfigError(f"expert_layer_offset ({e_offset}) must be smaller than expert_layer_period ({e_period})")
    h = r.size("num_attention_heads")
    h_kv = r.size("num_key_value_heads")  # JambaConfig's field is a strict int: null is refused there too
    if h % h_kv:
        raise ConfigError(f"num_attention_heads ({h}) is not a multiple of num_key_value_heads ({h_kv})")
    d_k = check_size("head_dim", r.cfg["head_dim"]) if r.given("head_dim") else d // h
    n_attn = _layers(n, a_period, a_offset)
    experts = r.size("num_experts")
    n_moe = _layers(n, e_period, e_offset) if experts > 1 else 0
    sizes: dict[str, int] = dict(d_model=d, d_ff=r.size("intermediate_size"), h=h, V=r.size("vocab_size"), N=n)
    if h_kv != h:
        sizes["h_kv"] = h_kv
    if d_k * h != d:
        sizes["d_k"] = d_k
    if n_attn == 0:
        mixers = "mamba"
    elif n_attn == n:
        mixers = "attention"
    else:
        mixers, sizes["N_attn"] = "mamba|attention", n_attn
    if n_attn < n:
        dt = r.cfg.get("mamba_dt_rank", "auto")
        dt_rank = math.ceil(d / 16) if dt == "auto" else r.size("mamba_dt_rank")
        sizes.update(
            d_inner=r.size("mamba_expand") * d,
            d_state=r.size("mamba_d_state"),
            d_conv=r.size("mamba_d_conv"),
            dt_rank=dt_rank,
        )
    if n_moe:
        k = r.size("num_experts_per_tok")
        if k > experts:
            raise ConfigError(f"num_experts_per_tok ({k}) exceeds num_experts ({experts})")
        sizes.update(E=experts, k=k)
        if n_moe < n:
            sizes["N_moe"] = n_moe
    mamba = n_attn < n
    return Spec(
        family="decoder-only",
        sizes=sizes,
        mixers=mixers,
        norm="rmsnorm",
        norm_position="pre",
        final_norm=True,
        bias=False,
        ffn="swiglu",
        positional="none",
        tie_output=r.flag("tie_word_embeddings"),
        ssm_inner_norms=mamba,
        ssm_bias=mamba and r.flag("mamba_proj_bias", note=False),
        ssm_conv_bias=r.flag("mamba_conv_bias", note=False) if mamba else True,
    )


JAMBA = ModelType(
    model_type="jamba",
    config_class="JambaConfig",
    model_class="JambaForCausalLM",
    read=read_jamba,
    defaults={
        "vocab_size": 65536,
        "tie_word_embeddings": False,
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "num_experts_per_tok": 2,
        "num_experts": 16,
        "expert_layer_period": 2,
        "expert_layer_offset": 1,
        "attn_layer_period": 8,
        "attn_layer_offset": 4,
        "mamba_d_state": 16,
        "mamba_d_conv": 4,
        "mamba_expand": 2,
        "mamba_dt_rank": "auto",
        "mamba_conv_bias": True,
        "mamba_proj_bias": False,
    },
    config_keys=keys(
        "attention_dropout attn_layer_offset attn_layer_period bos_token_id eos_token_id expert_layer_offset "
        "expert_layer_period hidden_act hidden_size initializer_range intermediate_size mamba_conv_bias mamba_d_conv "
        "mamba_d_state mamba_dt_rank mamba_expand mamba_proj_bias max_position_embeddings num_attention_heads "
        "num_experts num_experts_per_tok num_hidden_layers num_key_value_heads num_local_experts "
        "output_router_logits pad_token_id rms_norm_eps router_aux_loss_coef tie_word_embeddings "
        "use_associative_scan use_cache use_mamba_kernels use_mambapy vocab_size"
    ),
    no_param_effect=no_effect(
        positions="max_position_embeddings",
        dropout="attention_dropout",
        token="bos_token_id eos_token_id pad_token_id",
        act="hidden_act",
        init="initializer_range",
        eps="rms_norm_eps",
        cache="use_cache output_router_logits",
        loss="router_aux_loss_coef",
        kernel="use_mamba_kernels use_mambapy use_associative_scan",
    ),
    aliases={"num_local_experts": "num_experts"},
    # ai21labs/AI21-Jamba-1.5-Mini: 4.x-era keys that JambaConfig 5.x and its modeling never read
    legacy_keys=keys("num_logits_to_keep sliding_window"),
    getattr_keys=("head_dim",),
    pad_default=0,
    family="hybrid",
)

RECORDS = (JAMBA,)
