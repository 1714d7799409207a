"""Qwen3-Next (Qwen team 2025): Gated DeltaNet linear-attention layers (Yang et al. 2024)
interleaved with gated full-attention layers, a mixture of experts with one gated shared
expert, read onto the engine's ``gated_deltanet|attention`` stack (N_attn full-attention
layers, the rest linear; N_moe MoE layers).

Read off transformers 5.24's ``models/qwen3_next`` (Qwen3NextConfig, modeling_qwen3_next.py);
checked on the meta device and by the key audit in tests/test_model_types.py:

* ``layer_types`` names each layer's mixer; missing, the config class writes it from
  ``full_attention_interval`` (default 4: every 4th layer full attention);
* layer i's FFN is the MoE when i is not in ``mlp_only_layers``, ``num_experts > 0`` and
  ``(i + 1) % decoder_sparse_step == 0``, else a SwiGLU MLP of ``intermediate_size``;
* full attention: q_proj doubled for its output gate, RMSNorms on q and k per head,
  ``attention_bias`` on q, k, v and o, rotary positions (partial: no weights).
"""

from __future__ import annotations

from typing import Any

from symtrans.catalog.models.record import DECODER_NO_EFFECT, ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_size, show
from symtrans.engine.spec import Spec

_KINDS = ("linear_attention", "full_attention")


def _layer_types(r: Reader, n: int) -> list[str]:
    types = r.cfg.get("layer_types")
    if types is None:
        interval = r.cfg.get("full_attention_interval", 4)
        interval = check_size("full_attention_interval", interval)
        return ["linear_attention" if (i + 1) % interval else "full_attention" for i in range(n)]
    if not isinstance(types, list) or any(t not in _KINDS for t in types):
        raise ConfigError(f"layer_types must be a list of {' / '.join(_KINDS)}, not {show(types)}")
    if len(types) != n:
        raise ConfigError(f"layer_types has {len(types)} entries for num_hidden_layers {n}")
    return types


def _moe_layers(r: Reader, n: int, experts: int) -> int:
    only = r.cfg.get("mlp_only_layers") or []
    if not isinstance(only, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in only):
        raise ConfigError(f"mlp_only_layers must be a list of layer indices, not {show(only)}")
    step = r.size("decoder_sparse_step")
    return sum(1 for i in range(n) if i not in only and experts > 0 and (i + 1) % step == 0)


def read_qwen3_next(r: Reader) -> Spec:
    """The Spec of a Qwen3NextForCausalLM config.

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
    # Qwen3NextConfig's head_dim is a plain int field defaulting to 256 (not hidden_size //
    # num_attention_heads, which is 128 at its defaults), and a null is refused by the config.
    d_k = r.size("head_dim")
    experts = r.size("num_experts", zero_ok=True)
    n_moe = _moe_layers(r, n, experts)
    sizes: dict[str, int] = dict(d_model=d, d_ff=r.size("intermediate_size"), h=h, h_kv=h_kv, d_k=d_k)
    sizes.update(V=r.size("vocab_size"), N=n, L_max=r.size("max_position_embeddings"))
    if n_attn == 0:
        mixers = "gated_deltanet"
    elif n_attn == n:
        mixers = "attention"
    else:
        mixers, sizes["N_attn"] = "gated_deltanet|attention", n_attn
    if n_attn < n:
        hk, hv = r.size("linear_num_key_heads"), r.size("linear_num_value_heads")
        if hv % hk:
            raise ConfigError(f"linear_num_value_heads ({hv}) must be a multiple of linear_num_key_heads ({hk})")
        sizes.update(
            h_lk=hk,
            h_lv=hv,
            d_lk=r.size("linear_key_head_dim"),
            d_lv=r.size("linear_value_head_dim"),
            d_conv=r.size("linear_conv_kernel_dim"),
        )
    moe: dict[str, Any] = {}
    if n_moe:
        k = r.size("num_experts_per_tok")
        if k > experts:
            raise ConfigError(f"num_experts_per_tok ({k}) exceeds num_experts ({experts})")
        sizes.update(
            E=experts, k=k, d_ff_e=r.size("moe_intermediate_size"), d_ff_s=r.size("shared_expert_intermediate_size")
        )
        if n_moe < n:
            sizes["N_moe"] = n_moe
        moe = dict(n_shared_experts=1, shared_expert_gate=True)
    opts: dict[str, Any] = {}
    if n_attn and r.flag("attention_bias"):
        opts["attention_bias"] = True
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
        attention_gate=n_attn > 0,
        tie_output=r.flag("tie_word_embeddings"),
        **moe,
        **opts,
    )


QWEN3_NEXT = ModelType(
    model_type="qwen3_next",
    config_class="Qwen3NextConfig",
    model_class="Qwen3NextForCausalLM",
    read=read_qwen3_next,
    defaults={
        "vocab_size": 151936,
        "hidden_size": 2048,
        "intermediate_size": 5632,
        "num_hidden_layers": 48,
        "num_attention_heads": 16,
        "num_key_value_heads": 2,
        "max_position_embeddings": 32768,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "head_dim": 256,
        "linear_conv_kernel_dim": 4,
        "linear_key_head_dim": 128,
        "linear_value_head_dim": 128,
        "linear_num_key_heads": 16,
        "linear_num_value_heads": 32,
        "decoder_sparse_step": 1,
        "moe_intermediate_size": 512,
        "shared_expert_intermediate_size": 512,
        "num_experts_per_tok": 10,
        "num_experts": 512,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id decoder_sparse_step eos_token_id head_dim hidden_act "
        "hidden_size initializer_range intermediate_size layer_types linear_conv_kernel_dim linear_key_head_dim "
        "linear_num_key_heads linear_num_value_heads linear_value_head_dim max_position_embeddings "
        "mlp_only_layers moe_intermediate_size norm_topk_prob num_attention_heads num_experts "
        "num_experts_per_tok num_hidden_layers num_key_value_heads output_router_logits pad_token_id "
        "rms_norm_eps rope_parameters router_aux_loss_coef shared_expert_intermediate_size tie_word_embeddings "
        "use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        **{**DECODER_NO_EFFECT, "cache": "use_cache output_router_logits"},
        routing="norm_topk_prob",
        loss="router_aux_loss_coef",
    ),
    # full_attention_interval is popped by Qwen3NextConfig to write layer_types (read above);
    # use_sliding_window no code reads
    legacy_keys=keys("full_attention_interval use_sliding_window"),
    pad_default=None,
    family="hybrid",
)


def _qwen3_5_stack(r: Reader, d_ff: int) -> tuple[dict[str, int], str, int]:
    """(sizes, mixers, full-attention layers) of a Qwen3.5 stack whose FFN width is ``d_ff``:
    the layer pair of Qwen3-Next, read the same way by both Qwen3.5 text configs."""
    d = r.size("hidden_size")
    n = r.size("num_hidden_layers")
    types = _layer_types(r, n)
    n_attn = types.count("full_attention")
    h = r.size("num_attention_heads")
    h_kv = r.size("num_key_value_heads")
    if h % h_kv:
        raise ConfigError(f"num_attention_heads ({h}) is not a multiple of num_key_value_heads ({h_kv})")
    sizes: dict[str, int] = dict(d_model=d, d_ff=d_ff, h=h, h_kv=h_kv, d_k=r.size("head_dim"))
    sizes.update(V=r.size("vocab_size"), N=n, L_max=r.size("max_position_embeddings"))
    if n_attn == 0:
        mixers = "gated_deltanet"
    elif n_attn == n:
        mixers = "attention"
    else:
        mixers, sizes["N_attn"] = "gated_deltanet|attention", n_attn
    if n_attn < n:
        hk, hv = r.size("linear_num_key_heads"), r.size("linear_num_value_heads")
        if hv % hk:
            raise ConfigError(f"linear_num_value_heads ({hv}) must be a multiple of linear_num_key_heads ({hk})")
        sizes.update(
            h_lk=hk,
            h_lv=hv,
            d_lk=r.size("linear_key_head_dim"),
            d_lv=r.size("linear_value_head_dim"),
            d_conv=r.size("linear_conv_kernel_dim"),
        )
    return sizes, mixers, n_attn


def _qwen3_5_spec(r: Reader, sizes: dict[str, int], mixers: str, n_attn: int, **moe: Any) -> Spec:
    opts: dict[str, Any] = {}
    if n_attn and r.flag("attention_bias"):
        opts["attention_bias"] = True
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
        attention_gate=n_attn > 0,
        tie_output=r.flag("tie_word_embeddings"),
        **moe,
        **opts,
    )


def read_qwen3_5_text(r: Reader) -> Spec:
    """The Spec of a Qwen3_5ForCausalLM config (Qwen3_5TextConfig, the text model of Qwen3.5):
    Qwen3-Next's layer pair without experts, a SwiGLU MLP of ``intermediate_size`` on every
    layer.  Its Gated DeltaNet splits the input maps differently (in_proj_qkv, in_proj_z,
    in_proj_b, in_proj_a against Qwen3-Next's in_proj_qkvz and in_proj_ba): the same shapes in
    total, so the same kind counts it.

    Raises:
        ConfigError: a malformed size or layer list; num_key_value_heads not dividing
            num_attention_heads.
    """
    sizes, mixers, n_attn = _qwen3_5_stack(r, r.size("intermediate_size"))
    return _qwen3_5_spec(r, sizes, mixers, n_attn)


def read_qwen3_5_moe_text(r: Reader) -> Spec:
    """The Spec of a Qwen3_5MoeForCausalLM config (Qwen3_5MoeTextConfig, the text model of
    Qwen3.5-MoE / Qwen3.6-35B-A3B): Qwen3.5's layer pair with Qwen3-Next's sparse MoE block on
    every layer (Qwen3_5MoeDecoderLayer builds Qwen3_5MoeSparseMoeBlock unconditionally; the
    config has no intermediate_size, decoder_sparse_step or mlp_only_layers): a router
    d_model x E, E SwiGLU experts of ``moe_intermediate_size`` (the stack's d_ff), one SwiGLU
    shared expert of ``shared_expert_intermediate_size`` and its sigmoid gate d_model x 1.

    Raises:
        ConfigError: as ``read_qwen3_5_text``; num_experts 0, or num_experts_per_tok above it.
    """
    sizes, mixers, n_attn = _qwen3_5_stack(r, r.size("moe_intermediate_size"))
    experts, k = r.size("num_experts"), r.size("num_experts_per_tok")
    if k > experts:
        raise ConfigError(f"num_experts_per_tok ({k}) exceeds num_experts ({experts})")
    sizes.update(E=experts, k=k, d_ff_s=r.size("shared_expert_intermediate_size"))
    return _qwen3_5_spec(r, sizes, mixers, n_attn, n_shared_experts=1, shared_expert_gate=True)


# Keys of published Qwen3.5 / Qwen3.6 config.json files that no 5.x config class holds and no
# modeling code reads: the multi-token-prediction head (mtp_*: transformers builds none and
# drops its weights on load), the state dtype of vLLM's kernels, the output gate (always
# built), the MoE-layer list of Qwen3-Next's config (no experts to place) and
# partial_rotary_factor (moved into rope_parameters by the config: no weights).
_QWEN3_5_CHECKPOINT_KEYS = (
    "mtp_num_hidden_layers mtp_use_dedicated_embeddings mamba_ssm_dtype attn_output_gate mlp_only_layers "
    "partial_rotary_factor"
)

QWEN3_5_TEXT = ModelType(
    model_type="qwen3_5_text",
    config_class="Qwen3_5TextConfig",
    model_class="Qwen3_5ForCausalLM",
    read=read_qwen3_5_text,
    defaults={
        "vocab_size": 248320,
        "hidden_size": 4096,
        "intermediate_size": 12288,
        "num_hidden_layers": 32,
        "num_attention_heads": 16,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "max_position_embeddings": 32768,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "linear_conv_kernel_dim": 4,
        "linear_key_head_dim": 128,
        "linear_value_head_dim": 128,
        "linear_num_key_heads": 16,
        "linear_num_value_heads": 32,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size "
        "initializer_range intermediate_size layer_types linear_conv_kernel_dim linear_key_head_dim "
        "linear_num_key_heads linear_num_value_heads linear_value_head_dim max_position_embeddings "
        "num_attention_heads num_hidden_layers num_key_value_heads pad_token_id rms_norm_eps rope_parameters "
        "tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(**DECODER_NO_EFFECT),
    # full_attention_interval: popped by Qwen3_5TextConfig to write layer_types (read above)
    legacy_keys=keys("full_attention_interval " + _QWEN3_5_CHECKPOINT_KEYS),
    pad_default=None,
    family="hybrid",
)

QWEN3_5_MOE_TEXT = ModelType(
    model_type="qwen3_5_moe_text",
    config_class="Qwen3_5MoeTextConfig",
    model_class="Qwen3_5MoeForCausalLM",
    read=read_qwen3_5_moe_text,
    defaults={
        "vocab_size": 248320,
        "hidden_size": 2048,
        "num_hidden_layers": 40,
        "num_attention_heads": 16,
        "num_key_value_heads": 2,
        "head_dim": 256,
        "max_position_embeddings": 32768,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "linear_conv_kernel_dim": 4,
        "linear_key_head_dim": 128,
        "linear_value_head_dim": 128,
        "linear_num_key_heads": 16,
        "linear_num_value_heads": 32,
        "moe_intermediate_size": 512,
        "shared_expert_intermediate_size": 512,
        "num_experts_per_tok": 8,
        "num_experts": 256,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size "
        "initializer_range layer_types linear_conv_kernel_dim linear_key_head_dim linear_num_key_heads "
        "linear_num_value_heads linear_value_head_dim max_position_embeddings moe_intermediate_size "
        "num_attention_heads num_experts num_experts_per_tok num_hidden_layers num_key_value_heads "
        "output_router_logits pad_token_id rms_norm_eps rope_parameters router_aux_loss_coef "
        "shared_expert_intermediate_size tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        **{**DECODER_NO_EFFECT, "cache": "use_cache output_router_logits"},
        loss="router_aux_loss_coef",
    ),
    # full_attention_interval: popped by Qwen3_5MoeTextConfig to write layer_types (read above)
    legacy_keys=keys("full_attention_interval " + _QWEN3_5_CHECKPOINT_KEYS),
    pad_default=None,
    family="hybrid",
)

RECORDS = (QWEN3_NEXT, QWEN3_5_TEXT, QWEN3_5_MOE_TEXT)
