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


# The class defaults of the Mamba 2 keys, equal in BambaConfig, GraniteMoeHybridConfig and FalconH1Config.
MAMBA2_DEFAULTS: dict[str, Any] = {
    "mamba_n_heads": 128,
    "mamba_n_groups": 1,
    "mamba_d_state": 256,
    "mamba_d_conv": 4,
    "mamba_expand": 2,
    "mamba_chunk_size": 256,
    "mamba_conv_bias": True,
    "mamba_proj_bias": False,
}


def _spec(r: Reader, sizes: dict[str, int], mixers: str, positional: str, opts: dict[str, Any]) -> Spec:
    """A pre-norm RMSNorm decoder of SwiGLU FFNs without biases but those of ``opts``."""
    return Spec(
        family="decoder-only",
        sizes=sizes,
        mixers=mixers,
        norm="rmsnorm",
        norm_position="pre",
        final_norm=True,
        bias=False,
        ffn="swiglu",
        positional=positional,
        tie_output=r.flag("tie_word_embeddings"),
        **opts,
    )


def kv_heads(r: Reader, h: int) -> int:
    """num_key_value_heads of a hybrid's attention layers: absent, the config class's own default
    (BambaConfig and FalconH1Config: 8; GraniteMoeHybridConfig: None); null (or that None), the
    class's __init__ sets it to num_attention_heads (transformers 5.24)."""
    key, value = r.lookup("num_key_value_heads")
    if key is None and r.defaults.get("num_key_value_heads") is not None:
        return r.size("num_key_value_heads")
    return r.size("num_key_value_heads", h, f"num_attention_heads = {h}", nullable=True)


def _stack(r: Reader, d: int, n: int, n_attn: int) -> tuple[dict[str, int], str]:
    """The sizes of the GQA attention and the vocabulary, and ``Spec.mixers`` of a stack of
    ``n_attn`` attention layers among ``n`` (the rest Mamba 2): BambaAttention and
    GraniteMoeHybridAttention read ``head_dim`` with getattr, else hidden_size // heads.

    Raises:
        ConfigError: num_key_value_heads not dividing num_attention_heads; a malformed size.
    """
    h = r.size("num_attention_heads")
    h_kv = kv_heads(r, h)
    if h % h_kv:
        raise ConfigError(f"num_attention_heads ({h}) is not a multiple of num_key_value_heads ({h_kv})")
    d_k = check_size("head_dim", r.cfg["head_dim"]) if r.given("head_dim") else d // h
    sizes: dict[str, int] = dict(d_model=d, h=h, V=r.size("vocab_size"), N=n, L_max=r.size("max_position_embeddings"))
    if h_kv != h:
        sizes["h_kv"] = h_kv
    if d_k * h != d:
        sizes["d_k"] = d_k
    if n_attn == 0:
        return sizes, "mamba2"
    if n_attn == n:
        return sizes, "attention"
    sizes["N_attn"] = n_attn
    return sizes, "mamba2|attention"


def mamba2_sizes(r: Reader, d_inner: int, used: bool, sizes: dict[str, int]) -> dict[str, Any]:
    """The Mamba 2 sizes of a mixer ``d_inner`` wide (BambaMixer of Bamba and GraniteMoeHybrid:
    mamba_expand x hidden_size; FalconH1Mixer: mamba_d_ssm), added to ``sizes`` when ``used``
    (some layer is Mamba); the mixer's options (its in_proj / out_proj and conv biases).

    The config classes check mamba_n_heads x mamba_d_head = mamba_expand x hidden_size for
    every config (validate_architecture), so these are checked whatever the stack.

    Raises:
        ConfigError: the heads do not divide d_inner, the head width disagrees, or the groups
            do not divide the heads (with a Mamba layer).
    """
    heads = r.size("mamba_n_heads")
    if d_inner % heads:
        raise ConfigError(f"mamba_n_heads ({heads}) must divide the Mamba 2 width ({d_inner}), as {r.cls} requires")
    head = r.cfg.get("mamba_d_head", "auto")  # the config classes: "auto" is d_inner // mamba_n_heads
    head = d_inner // heads if head == "auto" else r.size("mamba_d_head")
    if head * heads != d_inner:
        raise ConfigError(
            f"mamba_d_head x mamba_n_heads = {head} x {heads} must equal the Mamba 2 width {d_inner} ({r.cls} requires it)"
        )
    groups = r.size("mamba_n_groups")
    if not used:
        return {}
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
    return dict(ssm_bias=r.flag("mamba_proj_bias", note=False), ssm_conv_bias=r.flag("mamba_conv_bias", note=False))


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
    sizes, mixers = _stack(r, d, n, n_attn)
    sizes["d_ff"] = r.size("intermediate_size")
    opts = mamba2_sizes(r, r.size("mamba_expand") * d, n_attn < n, sizes)
    if n_attn and r.flag("attention_bias"):
        opts["attention_bias"] = True
    if r.flag("mlp_bias"):
        opts["ffn_bias"] = True
    return _spec(r, sizes, mixers, "rotary", opts)


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
        **MAMBA2_DEFAULTS,
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


# GraniteMoeHybridConfig.layers_block_type after transformers' remap_legacy_layer_types (the
# published files write "mamba" and "attention"): the decoder layer builds a Mamba 2 mixer for
# "linear_attention" and attention for anything else, but its forward looks a layer's mask up
# under "full_attention" or "linear_attention" only, so other names are refused.
_GRANITE_KINDS = {"mamba": "mamba2", "linear_attention": "mamba2", "attention": "attention"}
_GRANITE_KINDS["full_attention"] = "attention"


def _granite_attention_layers(r: Reader, n: int) -> int:
    _key, types = r.lookup("layer_types")  # or its alias layers_block_type
    if _key is None or types is None:  # GraniteMoeHybridConfig.__post_init__: every layer Mamba
        return 0
    if not isinstance(types, list) or any(not isinstance(t, str) or t not in _GRANITE_KINDS for t in types):
        raise ConfigError(f"layer_types must be a list of {' / '.join(_GRANITE_KINDS)}, not {show(types)}")
    if len(types) != n:
        raise ConfigError(f"layer_types has {len(types)} entries for num_hidden_layers {n}")
    return sum(_GRANITE_KINDS[t] == "attention" for t in types)


def read_granitemoehybrid(r: Reader) -> Spec:
    """The Spec of a GraniteMoeHybridForCausalLM config (Granite 4.0-H).

    Read off transformers 5.24's ``models/granitemoehybrid`` (modular_granitemoehybrid.py):
    each layer is an RMSNorm, its mixer (the Bamba Mamba 2 mixer or GQA attention with
    ``attention_bias`` on q, k, v and o, rotary positions only when ``position_embedding_type``
    is "rope", none with the published "nope"), an RMSNorm and its FFN: with
    ``num_local_experts`` > 0 a mixture of that many SwiGLU experts of ``intermediate_size``
    (router E x d_model, no bias) plus the ungated shared SwiGLU MLP of
    ``shared_intermediate_size`` (GraniteMoeHybridMLP, always built); with 0 experts the shared
    MLP alone.  The four muP multipliers scale activations only.

    Raises:
        ConfigError: a malformed size or layer list; the Mamba 2 checks of ``mamba2_sizes``;
            num_key_value_heads not dividing num_attention_heads; top-k above the experts; an
            FFN of no width (no experts and shared_intermediate_size 0).
    """
    d = r.size("hidden_size")
    n = r.size("num_hidden_layers")
    n_attn = _granite_attention_layers(r, n)
    sizes, mixers = _stack(r, d, n, n_attn)
    experts = r.size("num_local_experts", zero_ok=True)
    shared = r.size("shared_intermediate_size", zero_ok=True)
    opts = mamba2_sizes(r, r.size("mamba_expand") * d, n_attn < n, sizes)
    if experts:
        k = r.size("num_experts_per_tok")
        if k > experts:
            raise ConfigError(f"num_experts_per_tok ({k}) exceeds num_local_experts ({experts})")
        sizes.update(E=experts, k=k, d_ff=r.size("intermediate_size"))
        if shared:  # a shared MLP 0 wide has no weights (nn.Linear(d, 0))
            opts["n_shared_experts"] = 1
            if shared != sizes["d_ff"]:
                sizes["d_ff_s"] = shared
    elif shared:
        sizes["d_ff"] = shared  # no experts: the shared MLP is the layer's FFN; intermediate_size unused
    else:
        raise ConfigError("num_local_experts 0 and shared_intermediate_size 0 leave every layer an FFN 0 wide")
    if n_attn and r.flag("attention_bias"):
        opts["attention_bias"] = True
    rope = r.cfg.get("position_embedding_type") == "rope"
    return _spec(r, sizes, mixers, "rotary" if rope else "none", opts)


# IBM's Granite 4.0-H (Mamba 2 + attention, MoE with a shared MLP or a dense MLP, 2025).
GRANITEMOEHYBRID = ModelType(
    model_type="granitemoehybrid",
    config_class="GraniteMoeHybridConfig",
    model_class="GraniteMoeHybridForCausalLM",
    read=read_granitemoehybrid,
    defaults={
        "vocab_size": 32000,
        "tie_word_embeddings": False,
        "hidden_size": 4096,
        "intermediate_size": 11008,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": None,
        "max_position_embeddings": 2048,
        "attention_bias": False,
        "num_local_experts": 8,
        "num_experts_per_tok": 2,
        "shared_intermediate_size": 1024,
        **MAMBA2_DEFAULTS,
    },
    config_keys=keys(
        "attention_bias attention_dropout attention_multiplier bos_token_id embedding_multiplier eos_token_id "
        "hidden_act hidden_size initializer_range intermediate_size layer_types layers_block_type logits_scaling "
        "mamba_chunk_size mamba_conv_bias mamba_d_conv mamba_d_head mamba_d_state mamba_expand mamba_n_groups "
        "mamba_n_heads mamba_proj_bias max_position_embeddings num_attention_heads num_experts_per_tok "
        "num_hidden_layers num_key_value_heads num_local_experts output_router_logits pad_token_id "
        "position_embedding_type residual_multiplier rms_norm_eps rope_parameters router_aux_loss_coef "
        "shared_intermediate_size tie_word_embeddings time_step_limit use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        positions="max_position_embeddings",
        dropout="attention_dropout",
        token="bos_token_id eos_token_id pad_token_id",
        act="hidden_act",
        init="initializer_range",
        eps="rms_norm_eps",
        rope="rope_parameters position_embedding_type",
        cache="use_cache output_router_logits",
        loss="router_aux_loss_coef",
        kernel="mamba_chunk_size",
        clip="time_step_limit",
        scale="embedding_multiplier logits_scaling residual_multiplier attention_multiplier",
    ),
    aliases={"layers_block_type": "layer_types"},
    getattr_keys=("head_dim",),
    pad_default=None,
    family="hybrid",
)

RECORDS = (BAMBA, GRANITEMOEHYBRID)
