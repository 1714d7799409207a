"""Hybrid state-space decoders built on the engine's existing layer kinds (issue 21): Mamba 2
mixers interleaved with grouped-query attention layers, each layer followed by a SwiGLU MLP,
read onto the ``mamba2|attention`` stack (N_attn attention layers, the rest Mamba 2).

Read off transformers 5.24's ``models/bamba`` (BambaConfig, modeling_bamba.py); checked on the
meta device, by the key audit and by the real cache of a tiny model (tests/test_kv_cache_real.py:
K/V bytes per token of the attention layers, conv and SSM state bytes per sequence of the
Mamba 2 layers):

* layer i is attention when i is in ``attn_layer_indices`` (BambaConfig.layers_block_type),
  else a Mamba 2 mixer (BambaMixer: the Mamba2Mixer of Dao and Gu 2024, d_inner =
  mamba_expand x hidden_size = mamba_n_heads x mamba_d_head);
* attention: q, k, v, o biased by ``attention_bias``, rotary positions on half of each head
  (no weights), head_dim read with getattr, else hidden_size // num_attention_heads;
* every layer has its SwiGLU MLP (``mlp_bias``) and two RMSNorms; a final RMSNorm.
"""

from __future__ import annotations

from typing import Any

from symtrans.catalog.models.record import ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_size, show
from symtrans.engine.spec import Spec


def _attention_layers(r: Reader, n: int) -> int:
    """How many of layers 0 .. n-1 ``attn_layer_indices`` names (BambaConfig.layers_block_type);
    ``layer_types`` is that property's alias, which BambaConfig cannot set (refused)."""
    if "layer_types" in r.cfg:
        raise ConfigError(
            f"layer_types is {r.cls}'s read-only layers_block_type (derived from attn_layer_indices): "
            "transformers refuses to set it; give attn_layer_indices"
        )
    idx = r.cfg.get("attn_layer_indices")
    if idx is None:
        return 0
    if not isinstance(idx, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in idx):
        raise ConfigError(f"attn_layer_indices must be a list of layer indices, not {show(idx)}")
    return len({i for i in idx if 0 <= i < n})


def read_bamba(r: Reader) -> Spec:
    """The Spec of a BambaForCausalLM config.

    Raises:
        ConfigError: a malformed size or index list; mamba_n_heads x mamba_d_head not
            mamba_expand x hidden_size (BambaConfig.validate_architecture); mamba_n_groups not
            dividing mamba_n_heads (heads share B and C by group); num_key_value_heads not
            dividing num_attention_heads.
    """
    d = r.size("hidden_size")
    n = r.size("num_hidden_layers")
    n_attn = _attention_layers(r, n)
    h = r.size("num_attention_heads")
    h_kv = r.size("num_key_value_heads", h, f"num_attention_heads = {h}", nullable=True)
    if h % h_kv:
        raise ConfigError(f"num_attention_heads ({h}) is not a multiple of num_key_value_heads ({h_kv})")
    d_k = check_size("head_dim", r.cfg["head_dim"]) if r.given("head_dim") else d // h
    sizes: dict[str, int] = dict(d_model=d, d_ff=r.size("intermediate_size"), h=h, V=r.size("vocab_size"), N=n)
    sizes["L_max"] = r.size("max_position_embeddings")
    if h_kv != h:
        sizes["h_kv"] = h_kv
    if d_k * h != d:
        sizes["d_k"] = d_k
    if n_attn == 0:
        mixers = "mamba2"
    elif n_attn == n:
        mixers = "attention"
    else:
        mixers, sizes["N_attn"] = "mamba2|attention", n_attn
    # validated whatever the stack: BambaConfig checks them for every config
    d_inner = r.size("mamba_expand") * d
    heads = r.size("mamba_n_heads")
    if d_inner % heads:
        raise ConfigError(
            f"mamba_n_heads ({heads}) must divide mamba_expand x hidden_size ({d_inner}), as {r.cls} requires"
        )
    head = r.cfg.get("mamba_d_head", "auto")  # BambaConfig: "auto" is d_inner // mamba_n_heads
    head = d_inner // heads if head == "auto" else r.size("mamba_d_head")
    if head * heads != d_inner:
        raise ConfigError(
            f"mamba_d_head x mamba_n_heads = {head} x {heads} must equal mamba_expand x hidden_size = {d_inner} "
            f"({r.cls} requires it)"
        )
    groups = r.size("mamba_n_groups")
    opts: dict[str, Any] = {}
    if n_attn < n:
        if heads % groups:
            raise ConfigError(
                f"mamba_n_groups ({groups}) must divide mamba_n_heads ({heads}): heads share B and C by group"
            )
        sizes.update(
            d_inner=d_inner,
            d_state=r.size("mamba_d_state"),
            d_conv=r.size("mamba_d_conv"),
            h_ssm=heads,
            g_ssm=groups,
            L_chunk=r.size("mamba_chunk_size"),
        )
        opts.update(ssm_bias=r.flag("mamba_proj_bias", note=False), ssm_conv_bias=r.flag("mamba_conv_bias", note=False))
    if n_attn and r.flag("attention_bias"):
        opts["attention_bias"] = True
    if r.flag("mlp_bias"):
        opts["ffn_bias"] = True
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
        tie_output=r.flag("tie_word_embeddings"),
        **opts,
    )


# IBM's Bamba (Mamba 2 + attention, 2024-25).
BAMBA = ModelType(
    model_type="bamba",
    config_class="BambaConfig",
    model_class="BambaForCausalLM",
    read=read_bamba,
    defaults={
        "vocab_size": 128000,
        "tie_word_embeddings": False,
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "max_position_embeddings": 262144,
        "attention_bias": False,
        "mlp_bias": False,
        "mamba_n_heads": 128,
        "mamba_n_groups": 1,
        "mamba_d_state": 256,
        "mamba_d_conv": 4,
        "mamba_expand": 2,
        "mamba_chunk_size": 256,
        "mamba_conv_bias": True,
        "mamba_proj_bias": False,
    },
    config_keys=keys(
        "attention_bias attention_dropout attn_layer_indices bos_token_id eos_token_id hidden_act hidden_size "
        "initializer_range intermediate_size layer_types mamba_chunk_size mamba_conv_bias mamba_d_conv "
        "mamba_d_head mamba_d_state mamba_expand mamba_n_groups mamba_n_heads mamba_proj_bias "
        "max_position_embeddings mlp_bias num_attention_heads num_hidden_layers num_key_value_heads "
        "num_logits_to_keep pad_token_id rms_norm_eps rope_parameters tie_word_embeddings time_step_limit "
        "use_cache vocab_size z_loss_coefficient"
    ),
    no_param_effect=no_effect(
        positions="max_position_embeddings",
        dropout="attention_dropout",
        token="bos_token_id eos_token_id pad_token_id",
        act="hidden_act",
        init="initializer_range",
        eps="rms_norm_eps",
        rope="rope_parameters",
        cache="use_cache num_logits_to_keep",
        loss="z_loss_coefficient",
        kernel="mamba_chunk_size",
        clip="time_step_limit",
    ),
    aliases={"layer_types": "layers_block_type"},
    getattr_keys=("head_dim",),
    pad_default=0,
)

RECORDS = (BAMBA,)
