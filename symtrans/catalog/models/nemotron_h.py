"""NVIDIA's Nemotron-H and Nemotron 3 (Nemotron-H team 2025, arXiv:2504.03624): a stack of
layers that are each one RMSNorm, one "mixer" and a residual add, the mixer being Mamba 2,
attention, an MLP or a mixture of experts, read onto the engine's layer kinds
``mamba2|attention|mlp|moe`` with ``mixer_only`` (engine/ffn_layers.py: a layer of an FFN
alone), one count per kind (N_attn, N_mlp, N_moe; Mamba 2 has the rest).

Read off transformers 5.24's ``models/nemotron_h`` (NemotronHConfig, modeling_nemotron_h.py);
checked on the meta device, by the key audit, by FlopCounterMode and by the real cache of a
tiny model (tests/test_kv_cache_real.py):

* the layers are ``layers_block_type`` (alias ``layer_types``: "linear_attention", "full_attention",
  "mlp", "moe"; the 4.x names "mamba" and "attention" are remapped by transformers), else the
  published ``hybrid_override_pattern`` (M, *, -, E per layer), else the class's 4 layers; N is
  their number and ``num_hidden_layers`` is ignored (a read-only property in 5.x);
* Mamba 2 (NemotronHMamba2Mixer): d_inner = mamba_num_heads x mamba_head_dim (``expand`` is
  not read), n_groups groups of ssm_state_size, conv_kernel, ``use_bias`` on in_proj and out_proj,
  ``use_conv_bias`` on the convolution;
* attention: q, k, v, o without biases whatever ``attention_bias``, head_dim a plain field,
  no positions (NemotronHAttention applies no rotary embedding);
* MLP (NemotronHMLP): up and down maps of intermediate_size, ``mlp_bias``, ReLU² (no gate);
* MoE (NemotronHMoE): a router n_routed_experts x d_model (its e_score_correction_bias a
  buffer), n_routed_experts non-gated experts of moe_intermediate_size (no biases), top-k, and
  one shared NemotronHMLP of moe_shared_expert_intermediate_size (``n_shared_experts`` is not
  read; a width of 0 falls back to intermediate_size, as ``intermediate_size or ...`` does);
* the LM head is never tied (NemotronHForCausalLM has no tied weights), a final RMSNorm.
"""

from __future__ import annotations

from typing import Any

from symtrans.catalog.models.record import NO_PADDING, ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_size, show
from symtrans.engine.spec import Spec

_PATTERN = {"M": "linear_attention", "*": "full_attention", "-": "mlp", "E": "moe"}
# layer type -> engine kind, in the order of Spec.mixers (the first present kind has the rest)
_KINDS = {"linear_attention": "mamba2", "full_attention": "attention", "mlp": "mlp", "moe": "moe"}
_LEGACY = {"mamba": "linear_attention", "attention": "full_attention"}  # remap_legacy_layer_types
_COUNTS = {"attention": "N_attn", "mlp": "N_mlp", "moe": "N_moe"}
_DEFAULT_LAYERS = ["linear_attention", "moe", "full_attention", "mlp"]  # NemotronHConfig.__post_init__


def _layers(r: Reader) -> list[str]:
    """The layer types, as NemotronHConfig.__post_init__ settles them."""
    key, types = r.lookup("layers_block_type")
    if key is not None and types is not None:
        if not isinstance(types, list) or any(_LEGACY.get(t, t) not in _KINDS for t in types if isinstance(t, str)):
            raise ConfigError(f"{key} must be a list of {' / '.join(_KINDS)}, not {show(types)}")
        if any(not isinstance(t, str) for t in types):
            raise ConfigError(f"{key} must be a list of {' / '.join(_KINDS)}, not {show(types)}")
        return [_LEGACY.get(t, t) for t in types]
    pattern = r.cfg.get("hybrid_override_pattern")
    if pattern is None:
        r.notes.append(f"no layers_block_type nor hybrid_override_pattern: {r.cls}'s 4 layers M, E, *, -")
        return list(_DEFAULT_LAYERS)
    if not isinstance(pattern, str) or any(c not in _PATTERN for c in pattern):
        raise ConfigError(f"hybrid_override_pattern must be a string of M, *, - and E, not {show(pattern)}")
    return [_PATTERN[c] for c in pattern]


def _legacy_size(r: Reader, key: str, old: str, zero_ok: bool = False) -> int:
    """``key``, or the 4.x name ``old`` that NemotronHConfig.__post_init__ pops into it (which wins)."""
    if old in r.cfg:
        return check_size(old, r.cfg[old], zero_ok=zero_ok)
    return r.size(key, zero_ok=zero_ok)


def _legacy_flag(r: Reader, key: str, old: str) -> bool:
    if old in r.cfg:
        value = r.cfg[old]
        if not isinstance(value, bool):
            raise ConfigError(f"{old} must be true or false, not {show(value)}")
        return value
    return r.flag(key, note=False)


def read_nemotron_h(r: Reader) -> Spec:
    """The Spec of a NemotronHForCausalLM config.

    Raises:
        ConfigError: a malformed size, layer list or pattern; no layer at all;
            num_key_value_heads not dividing num_attention_heads, or n_groups not dividing
            mamba_num_heads (both build, but no forward runs); top-k above the experts;
            ``moe_latent_size`` (latent expert projections, not modelled); attention layers
            alone (no Mamba, MLP or MoE layer: not modelled).
    """
    types = _layers(r)
    n = len(types)
    if n == 0:
        raise ConfigError("the layer list is empty: a NemotronH model of no layers")
    given_n = r.cfg.get("num_hidden_layers")
    if given_n is not None and given_n != n:
        r.notes.append(f"num_hidden_layers {show(given_n)} ignored: {r.cls} has one layer per layer type ({n})")
    d = r.size("hidden_size")
    counts = {kind: sum(_KINDS[t] == kind for t in types) for kind in ("mamba2", "attention", "mlp", "moe")}
    present = [kind for kind, c in counts.items() if c]
    if present == ["attention"]:  # the engine's attention-only stacks always carry an FFN half
        raise ConfigError(
            "every layer is attention ('*'), with no FFN layer: a stack of attention alone is not modelled"
        )
    sizes: dict[str, int] = dict(d_model=d, V=r.size("vocab_size"), N=n, L_max=r.size("max_position_embeddings"))
    for kind in present[1:]:
        sizes[_COUNTS[kind]] = counts[kind]
    opts: dict[str, Any] = {}
    if counts["attention"]:
        h, h_kv = r.size("num_attention_heads"), r.size("num_key_value_heads")
        if h % h_kv:
            raise ConfigError(f"num_attention_heads ({h}) is not a multiple of num_key_value_heads ({h_kv})")
        sizes.update(h=h, h_kv=h_kv, d_k=r.size("head_dim"))
    if counts["mamba2"]:
        heads, groups = r.size("mamba_num_heads"), _legacy_size(r, "n_groups", "mamba_n_groups")
        if heads % groups:
            raise ConfigError(
                f"n_groups ({groups}) must divide mamba_num_heads ({heads}): heads share B and C by group"
            )
        sizes.update(
            d_inner=heads * r.size("mamba_head_dim"),
            h_ssm=heads,
            g_ssm=groups,
            d_state=r.size("ssm_state_size"),
            d_conv=_legacy_size(r, "conv_kernel", "mamba_d_conv"),
            L_chunk=_legacy_size(r, "chunk_size", "mamba_chunk_size"),
        )
        opts.update(
            ssm_bias=r.flag("use_bias", note=False), ssm_conv_bias=_legacy_flag(r, "use_conv_bias", "mamba_conv_bias")
        )
    if counts["mlp"] or counts["moe"]:
        dense = r.size("intermediate_size", zero_ok=not counts["mlp"])
        if counts["mlp"]:
            sizes["d_ff"] = dense
        if r.flag("mlp_bias", note=False):
            opts["ffn_bias"] = True
    if counts["moe"]:
        if r.cfg.get("moe_latent_size") is not None:
            raise ConfigError("moe_latent_size (latent projections around the experts) is not modelled yet")
        experts, k = r.size("n_routed_experts"), r.size("num_experts_per_tok")
        if k > experts:
            raise ConfigError(f"num_experts_per_tok ({k}) exceeds n_routed_experts ({experts})")
        width = r.size("moe_intermediate_size")
        shared = r.size("moe_shared_expert_intermediate_size", zero_ok=True) or dense  # NemotronHMLP: `or`
        if not shared:
            raise ConfigError("moe_shared_expert_intermediate_size and intermediate_size 0: a shared expert 0 wide")
        sizes.update(E=experts, k=k)
        if counts["mlp"] and width != sizes["d_ff"]:
            sizes["d_ff_e"] = width
        sizes.setdefault("d_ff", width)
        if shared != width:
            sizes["d_ff_s"] = shared
        opts.update(n_shared_experts=1, expert_bias=False if opts.get("ffn_bias") else None)
    return Spec(
        family="decoder-only",
        sizes=sizes,
        mixers="|".join(present),
        mixer_only=True,
        norm="rmsnorm",
        norm_position="pre",
        final_norm=True,
        bias=False,
        ffn="mlp",
        positional="none",
        tie_output=False,
        **opts,
    )


NEMOTRON_H = ModelType(
    model_type="nemotron_h",
    config_class="NemotronHConfig",
    model_class="NemotronHForCausalLM",
    read=read_nemotron_h,
    defaults={
        "vocab_size": 131072,
        "hidden_size": 4096,
        "max_position_embeddings": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "intermediate_size": 21504,
        "mlp_bias": False,
        "mamba_num_heads": 128,
        "mamba_head_dim": 64,
        "ssm_state_size": 128,
        "n_groups": 8,
        "conv_kernel": 4,
        "chunk_size": 128,
        "use_bias": False,
        "use_conv_bias": True,
        "n_routed_experts": 8,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 7688,
        "moe_shared_expert_intermediate_size": 7688,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id chunk_size conv_kernel eos_token_id expand head_dim "
        "hidden_dropout hidden_size initializer_range intermediate_size layer_norm_epsilon layer_types "
        "layers_block_type mamba_head_dim mamba_hidden_act mamba_num_heads mamba_proj_bias mamba_ssm_cache_dtype "
        "max_position_embeddings mlp_bias mlp_hidden_act moe_intermediate_size moe_latent_size "
        "moe_shared_expert_intermediate_size moe_shared_expert_overlap mtp_layers_block_type n_group n_groups "
        "n_routed_experts n_shared_experts norm_topk_prob num_attention_heads num_experts_per_tok "
        "num_key_value_heads num_local_experts num_logits_to_keep num_nextn_predict_layers output_router_logits "
        "pad_token_id rescale_prenorm_residual residual_in_fp32 routed_scaling_factor sliding_window "
        "ssm_state_size tie_word_embeddings time_step_floor time_step_limit time_step_max time_step_min "
        "topk_group use_bias use_cache use_conv_bias use_mamba_kernels vocab_size"
    ),
    no_param_effect=no_effect(
        positions="max_position_embeddings",
        dropout="attention_dropout hidden_dropout",
        token="bos_token_id eos_token_id pad_token_id",
        act="mamba_hidden_act mlp_hidden_act",
        init="initializer_range rescale_prenorm_residual time_step_floor time_step_max",
        eps="layer_norm_epsilon",
        cache="use_cache num_logits_to_keep output_router_logits mamba_ssm_cache_dtype",
        kernel="chunk_size use_mamba_kernels",
        clip="time_step_limit time_step_min",
        routing="n_group topk_group norm_topk_prob routed_scaling_factor moe_shared_expert_overlap",
        precision="residual_in_fp32",
        unread="attention_bias tie_word_embeddings expand n_shared_experts mamba_proj_bias sliding_window "
        "num_nextn_predict_layers mtp_layers_block_type",
    ),
    aliases={"layer_types": "layers_block_type", "num_local_experts": "n_routed_experts"},
    legacy_keys=keys(
        "hybrid_override_pattern mtp_hybrid_override_pattern num_hidden_layers mamba_n_groups mamba_d_conv "
        "mamba_expand mamba_dt_min mamba_dt_max mamba_dt_limit mamba_dt_init_floor mamba_conv_bias mamba_chunk_size "
        "norm_eps"  # Nemotron 3 Nano's file; 5.24's models/nemotron_h reads layer_norm_epsilon (grepped)
    ),
    pad_default=NO_PADDING,
    family="hybrid",
)

RECORDS = (NEMOTRON_H,)
