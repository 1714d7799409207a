"""Databricks DBRX (``dbrx``, issue 21): a mixture-of-experts decoder whose attention and
experts are configured in two nested objects, ``attn_config`` (DbrxAttentionConfig) and
``ffn_config`` (DbrxFFNConfig), read here as transformers 5.24's ``models/dbrx/modeling_dbrx.py``
builds them:

- per block: ``norm_1`` and ``norm_2``, LayerNorms without a bias (d_model weights each);
  ``Wqkv`` one bias-free map d_model -> d_model + 2 x kv_n_heads x head_dim (head_dim =
  d_model // n_heads), ``out_proj`` d_model x d_model; a router ``layer`` d_model -> E (no
  bias); the experts ``w1``, ``v1``, ``w2``, each one 2-D tensor (E x ffn_hidden_size) x
  d_model: a gated MLP per expert (activation ``ffn_act_fn["name"]``, SiLU by default);
- ``wte`` (V x d_model), ``norm_f`` (bias-free LayerNorm), ``lm_head`` d_model x V, never tied
  (DbrxConfig.validate_architecture refuses ``tie_word_embeddings``); rotary positions.

DbrxAttention reads ``attn_config.rope_theta``, which DbrxAttentionConfig does not define: a
config without it (or without ``attn_config``) cannot build in transformers 5.24, so symtrans
refuses it as well (DBRX's published config.json gives it).
"""

from __future__ import annotations

from typing import Any

from symtrans.catalog.models.record import ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_divides, check_rotary_head, check_size, show
from symtrans.engine.spec import Spec

# The field defaults of the nested classes (DbrxAttentionConfig, DbrxFFNConfig, transformers 5.24).
ATTN_DEFAULTS: dict[str, Any] = {"kv_n_heads": 1}
FFN_DEFAULTS: dict[str, Any] = {"ffn_hidden_size": 3584, "moe_num_experts": 4, "moe_top_k": 1}
# Every field of the nested classes (their own, not PretrainedConfig's), plus attn_config's
# rope_theta that DbrxAttention reads: any other nested key is noted as unread.
ATTN_KEYS = frozenset("attn_pdrop clip_qkv kv_n_heads rope_theta".split())
FFN_KEYS = frozenset(
    "hidden_size ffn_act_fn ffn_hidden_size moe_num_experts moe_top_k moe_jitter_eps moe_loss_weight "
    "moe_normalize_expert_weights".split()
)
# Keys of DBRX's published ffn_config that DbrxFFNConfig stores and never reads (MegaBlocks settings).
FFN_LEGACY = frozenset("uniform_expert_assignment".split())


def _nested(r: Reader, key: str, known: frozenset[str]) -> dict[str, Any] | None:
    """``attn_config`` / ``ffn_config`` as a dict (None when missing or null), noting any key
    the nested config class neither defines nor reads."""
    v = r.cfg.get(key)
    if v is not None and not isinstance(v, dict):
        raise ConfigError(f"{key} must be an object or null, not {show(v)}")
    if v is not None:
        unread = sorted(set(v) - known - FFN_LEGACY - {"model_type", "transformers_version", "architectures"})
        if unread:
            r.notes.append(f"{key} keys {', '.join(unread)} are not read by {r.model} (transformers 5.x)")
    return v


# The nested fields' types that transformers 5.24's @strict classes accept (a JSON integer is
# no float): DBRX's published ffn_config writes moe_normalize_expert_weights as 1, which
# DbrxFFNConfig refuses, so that file cannot load in transformers 5.24 without 1 -> 1.0.
_NUMBER, _FLOAT = (int, float), (float,)
_TYPES: dict[str, dict[str, tuple[tuple[type, ...], bool]]] = {
    "attn_config": {"attn_pdrop": (_NUMBER, False), "clip_qkv": (_NUMBER, True)},
    "ffn_config": {
        "moe_jitter_eps": (_NUMBER, True),
        "moe_loss_weight": (_FLOAT, False),
        "moe_normalize_expert_weights": (_FLOAT, True),
    },
}


def _check_types(where: str, block: dict[str, Any]) -> None:
    for key, (types, nullable) in _TYPES[where].items():
        if key not in block:
            continue
        v = block[key]
        if v is None and nullable:
            continue
        if isinstance(v, bool) or not isinstance(v, types):
            kind = "a number" if types is _NUMBER else "a float"
            raise ConfigError(
                f"{where}.{key} must be {kind}{' or null' if nullable else ''}, not {show(v)}: "
                f"{'DbrxAttentionConfig' if where == 'attn_config' else 'DbrxFFNConfig'} (transformers 5.24, strict) "
                f"refuses it{' (write 1.0 for 1)' if types is _FLOAT and isinstance(v, int) else ''}"
            )


def _sub_size(r: Reader, block: dict[str, Any] | None, where: str, key: str, defaults: dict[str, Any]) -> int:
    if block is None or key not in block:
        r.notes.append(f"key {where}.{key} missing: used the transformers default {defaults[key]} ({r.cls})")
        return defaults[key]
    return check_size(f"{where}.{key}", block[key])


def read_dbrx(r: Reader) -> Spec:
    """The Spec of a DBRX config: ``d_model``, ``n_heads``, ``n_layers``, ``vocab_size``,
    ``max_seq_len`` at the top; ``kv_n_heads`` (h_kv) and ``rope_theta`` in ``attn_config``;
    ``ffn_hidden_size`` (d_ff, one expert's width), ``moe_num_experts`` (E) and ``moe_top_k``
    (k) in ``ffn_config``.  Parameters (DbrxForCausalLM, transformers 5.24)::

        V d + N (2 d + d (d + 2 h_kv d_k) + d^2 + E d + 3 E d_ff d) + d + d V,   d_k = d // h

    Raises:
        ConfigError: a malformed size; hidden_size without d_model (the experts take d_model's
            default: builds, cannot run); n_heads not dividing d_model or kv_n_heads not dividing
            n_heads (builds, cannot run); attn_config without rope_theta (cannot build);
            tie_word_embeddings true (DbrxConfig refuses it); moe_top_k above moe_num_experts;
            a nested number of the wrong JSON type (the strict classes refuse an integer
            moe_normalize_expert_weights or moe_loss_weight).
    """
    if "hidden_size" in r.cfg and "d_model" not in r.cfg:
        raise ConfigError(
            "hidden_size is given without d_model: DbrxConfig sizes the router and experts from d_model's default "
            "(2048) before the alias applies, so the model builds but cannot run; give d_model"
        )
    d = r.size("d_model")
    h = r.size("n_heads")
    check_divides("d_model", d, "n_heads", h, "DbrxAttention (head_dim = d_model // n_heads)")
    attn = _nested(r, "attn_config", ATTN_KEYS)
    ffn = _nested(r, "ffn_config", FFN_KEYS)
    for where, block in (("attn_config", attn), ("ffn_config", ffn)):
        if block is not None:
            _check_types(where, block)
    if attn is None or "rope_theta" not in attn:
        raise ConfigError(
            f"attn_config.rope_theta must be given: DbrxAttention reads it and {r.model} (transformers 5.24) "
            "cannot build without it"
        )
    h_kv = _sub_size(r, attn, "attn_config", "kv_n_heads", ATTN_DEFAULTS)
    if h_kv > h or h % h_kv:
        raise ConfigError(
            f"attn_config.kv_n_heads ({h_kv}) must divide n_heads ({h}): DbrxAttention builds but cannot run"
        )
    d_k = d // h
    check_rotary_head(r, "d_model // n_heads", d_k)
    if attn.get("clip_qkv") is None:
        r.notes.append(
            "attn_config.clip_qkv is null: DbrxAttention (transformers 5.24) builds but its forward calls "
            "torch.clamp with neither bound and fails; counted as built"
        )
    E = _sub_size(r, ffn, "ffn_config", "moe_num_experts", FFN_DEFAULTS)
    k = _sub_size(r, ffn, "ffn_config", "moe_top_k", FFN_DEFAULTS)
    if k > E:
        raise ConfigError(f"ffn_config.moe_top_k ({k}) exceeds the {E} experts (ffn_config.moe_num_experts)")
    act = (ffn or {}).get("ffn_act_fn")
    if act is not None and not (isinstance(act, dict) and isinstance(act.get("name", "silu"), str)):
        raise ConfigError(f'ffn_config.ffn_act_fn must be an object like {{"name": "silu"}} or null, not {show(act)}')
    if r.flag("tie_word_embeddings", note=False):
        raise ConfigError("tie_word_embeddings is true, which DbrxConfig refuses (DBRX's LM head is never tied)")
    sizes: dict[str, int] = dict(
        d_model=d,
        d_ff=_sub_size(r, ffn, "ffn_config", "ffn_hidden_size", FFN_DEFAULTS),
        h=h,
        N=r.size("n_layers"),
        V=r.size("vocab_size"),
        L_max=r.size("max_seq_len"),
        E=E,
        k=k,
    )
    if h_kv != h:
        sizes["h_kv"] = h_kv
    r.notes.append(
        "DbrxForCausalLM: bias-free maps (one fused Wqkv), weight-only LayerNorms, every block a mixture of "
        f"{E} gated experts (top {k}) with a router {E} x d_model, an untied LM head"
    )
    return Spec(
        family="decoder-only",
        sizes=sizes,
        positional="rotary",
        norm="layernorm",
        norm_bias=False,
        bias=False,
        ffn="swiglu",
        norm_position="pre",
        final_norm=True,
        tie_output=False,
    )


DBRX = ModelType(
    model_type="dbrx",
    config_class="DbrxConfig",
    model_class="DbrxForCausalLM",
    read=read_dbrx,
    defaults={
        "d_model": 2048,
        "n_heads": 16,
        "n_layers": 24,
        "max_seq_len": 2048,
        "vocab_size": 32000,
        "tie_word_embeddings": False,
    },
    config_keys=keys(
        "attn_config bos_token_id d_model emb_pdrop eos_token_id ffn_config hidden_size initializer_range "
        "max_position_embeddings max_seq_len n_heads n_layers num_attention_heads num_hidden_layers "
        "num_key_value_heads output_router_logits pad_token_id resid_pdrop rope_parameters tie_word_embeddings "
        "use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        positions="max_seq_len max_position_embeddings",
        dropout="emb_pdrop resid_pdrop",
        token="bos_token_id eos_token_id pad_token_id",
        init="initializer_range",
        rope="rope_parameters",
        cache="use_cache output_router_logits",
        derived="num_key_value_heads",
    ),
    aliases={
        "num_attention_heads": "n_heads",
        "hidden_size": "d_model",
        "num_hidden_layers": "n_layers",
        "max_position_embeddings": "max_seq_len",
    },
    pad_default=None,
    family="moe",
)


RECORDS = (DBRX,)
