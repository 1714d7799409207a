"""Mixture-of-experts decoders that map onto the engine's existing parts (issue 21): OLMoE,
GLM-4.5 (glm4_moe), dots.llm1, MiniMax-M2, Phi-3.5-MoE, Granite MoE (and its shared-expert
variant), ERNIE 4.5 MoE and Hunyuan-A13B.  One record each, read by a :class:`MoeLayout`:
the attention, norms and head of a :class:`~symtrans.catalog.models.dense.DenseLayout`, then
the experts (E routed experts of one width, top-k, a router E x d_model, optional shared
experts, optional dense layers).

Each layout was read off the transformers 5.24 ``models/<type>/modeling_<type>.py`` named in
its record and is checked on the meta device, by the key audit and by FlopCounterMode (eager
attention, eager experts) in tests/test_model_types.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from symtrans.catalog.models.dense import DenseLayout
from symtrans.catalog.models.dsa import read_mla_moe
from symtrans.catalog.models.record import DECODER_NO_EFFECT, ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_size, show, window_size
from symtrans.engine.spec import Spec


def _required(r: Reader, key: str, zero_ok: bool = False) -> int:
    """A size whose class default may be None (Dots1Config's expert counts): missing or null
    with no number to fall back on is refused, as the model cannot build with it."""
    k, v = r.lookup(key)
    if k is None:
        v = r.defaults[key]
        if v is None:
            raise ConfigError(f"{key} must be given: {r.cls}'s default is null and {r.model} cannot build with it")
        r.notes.append(f"key {key} missing: used the transformers default {show(v)} ({r.cls})")
        return v
    if v is None:
        raise ConfigError(f"{k} must be {'a non-negative' if zero_ok else 'a positive'} integer, not null")
    return check_size(k, v, zero_ok=zero_ok)


def every_layer(r: Reader, n: int) -> int:
    return n


def after_first_dense(r: Reader, n: int) -> int:
    """Layers i >= ``first_k_dense_replace`` are MoE layers (Glm4MoeDecoderLayer, Dots1DecoderLayer)."""
    return max(n - _required(r, "first_k_dense_replace", zero_ok=True), 0)


def ernie_layers(r: Reader, n: int) -> int:
    """Ernie4_5_MoeDecoderLayer: (i + 1) % moe_layer_interval == 0 and start <= i <= end
    (end -1: the last layer, Ernie4_5_MoeConfig.__post_init__)."""
    step = r.size("moe_layer_interval")
    start = _int(r, "moe_layer_start_index")
    # not in the record's defaults: the class field is -1, its instance the last layer
    end = _int(r, "moe_layer_end_index") if "moe_layer_end_index" in r.cfg else -1
    end = n - 1 if end == -1 else end
    return sum(1 for i in range(max(start, 0), min(end, n - 1) + 1) if (i + 1) % step == 0)


def _topk_list(r: Reader, key: str, n: int) -> int:
    """Top-k as an int, or as a list of one k per layer that all agree (else refused: the
    parameters per token would differ by layer, which the engine's one k does not model)."""
    k, v = r.lookup(key)
    if not isinstance(v, list):
        return _required(r, key)
    ks = [check_size(f"{k}[{i}]", x) for i, x in enumerate(v)]
    if len(ks) < n:
        raise ConfigError(f"{k} has {len(ks)} entries for num_hidden_layers {n} (one top-k per layer)")
    if len(set(ks[:n])) != 1:
        raise ConfigError(f"{k} picks different numbers of experts by layer ({show(v)}): not modelled; give one top-k")
    return ks[0]


def _int(r: Reader, key: str) -> int:
    k, v = r.lookup(key)
    if k is None:
        return r.defaults[key]
    if isinstance(v, bool) or not isinstance(v, int):
        raise ConfigError(f"{k} must be an integer (a layer index), not {show(v)}")
    return v


@dataclass(frozen=True)
class MoeLayout:
    """How one MoE decoder type's config becomes a Spec.

    Attributes:
        attention: the DenseLayout of its attention, norms, options and LM head (its
            ``intermediate_size`` is the dense layers' width).
        experts_key, k_key: the keys of E and top-k (their canonical field names).
        expert_ff_key: the key of a routed expert's width.
        moe_layers: ``(reader, N) -> how many layers are MoE layers`` (the rest are dense).
        shared_count_key: a shared MLP of ``count x expert width`` in every MoE layer
            (DeepSeekMoE style: Glm4MoeMoE, Dots1MoE, ERNIE); 0 means none.
        shared_width_key: a shared MLP of this width (GraniteMoeShared); 0 means none.
        shared_same: one shared MLP of the routed experts' width (Hunyuan's shared_mlp).
        router_bias: the router carries E more parameters (ERNIE's e_score_correction_bias,
            an nn.Parameter; elsewhere it is a buffer and not counted).
        bias_key: the key whose truth biases the dense and shared MLPs and the LM head
            (ERNIE's use_bias; the stacked experts have no biases).
        head_bias_key: the key of the LM head's bias alone (Phi-3.5-MoE's lm_head_bias).
        qk_norm_key: the key that switches per-head QK RMSNorms of width head_dim (GLM-4.5's
            use_qk_norm).
        layer_types: the config class's rule for ``layer_types`` when the file gives none,
            ``(reader, N, window) -> list``; None for a type without windows.
        check: a type's own refusals ``(reader, spec) -> None``.
        k_per_layer: top-k may be a list, one entry per layer (HunYuanMoEV1Gate reads
            ``moe_topk[layer_idx]``): counted when every layer picks the same k.
    """

    attention: DenseLayout
    experts_key: str = "num_experts"
    k_key: str = "num_experts_per_tok"
    expert_ff_key: str = "intermediate_size"
    moe_layers: Callable[[Reader, int], int] = every_layer
    shared_count_key: str | None = None
    shared_width_key: str | None = None
    shared_same: bool = False
    router_bias: bool = False
    bias_key: str | None = None
    head_bias_key: str | None = None
    qk_norm_key: str | None = None
    layer_types: Callable[[Reader, int, int | None], list[str]] | None = None
    check: Callable[[Reader, Spec], None] | None = None
    k_per_layer: bool = False

    def read(self, r: Reader) -> Spec:
        """The Spec of ``r.cfg``: the dense layout's, with the experts laid into its layers.

        Raises:
            ConfigError: what the dense layout refuses; a null or malformed expert size;
                top-k above E; a layer pattern symtrans cannot close.
        """
        spec = self.attention.read(r)
        if self.check is not None:
            self.check(r, spec)
        sizes = dict(spec.values)
        n = sizes["N"]
        opts: dict[str, Any] = {}
        if self.bias_key and r.flag(self.bias_key, note=False):
            opts.update(ffn_bias=True, expert_bias=False, head_bias=True)
        if self.head_bias_key and r.flag(self.head_bias_key, note=False):
            opts["head_bias"] = True
        if self.qk_norm_key and r.flag(self.qk_norm_key, note=False):
            opts["qk_norm"] = "head"
        if self.layer_types is not None:
            sizes.update(self._windows(r, n))
        E = _required(r, self.experts_key)
        k = _topk_list(r, self.k_key, n) if self.k_per_layer else _required(r, self.k_key)
        expert_ff = _required(r, self.expert_ff_key)
        n_moe = min(self.moe_layers(r, n), n)
        if n_moe == 0:
            r.notes.append(f"no layer is a mixture-of-experts layer: {r.model} is counted as a dense model")
            return spec.replace(**opts)
        if k > E:
            raise ConfigError(f"{self.k_key} ({k}) exceeds the {E} experts ({self.experts_key})")
        sizes.update(E=E, k=k)
        if n_moe == n:
            sizes["d_ff"] = expert_ff
        else:
            if expert_ff != sizes["d_ff"]:
                sizes["d_ff_e"] = expert_ff
            sizes["N_moe"] = n_moe
            r.notes.append(
                f"{n_moe} of {n} layers are mixture-of-experts layers, the other {n - n_moe} dense "
                f"(width {sizes['d_ff']})"
            )
        shared = self._shared_width(r, expert_ff)
        if shared:
            opts["n_shared_experts"] = 1
            if shared != expert_ff:
                sizes["d_ff_s"] = shared
            r.notes.append(f"one shared expert MLP {shared} wide in every MoE layer, always active")
        if self.router_bias:
            opts["router_bias"] = True
        if "w" in sizes and "N_w" in sizes and n_moe < n:  # Spec refuses N_w over a dense + MoE stack
            sizes.pop("w")
            sizes.pop("N_w")
            opts["attention_pattern"] = "per-layer"
            r.notes.append("sliding-window and full layers over dense and MoE layers: FLOPs, KV cache and time refused")
        if opts.get("ffn_bias") and not shared and n_moe == n:
            opts.pop("ffn_bias")
            opts.pop("expert_bias")  # no dense or shared MLP left to carry the bias
        return spec.replace(sizes=sizes, **opts)

    def _windows(self, r: Reader, n: int) -> dict[str, int]:
        """``w`` (and ``N_w`` when only some layers slide) from ``sliding_window`` and
        ``layer_types`` (or the class's rule for it); {} without a window."""
        k, w = r.lookup("sliding_window")
        w = r.defaults.get("sliding_window") if k is None else window_size(r, "sliding_window", w)
        types = r.cfg.get("layer_types")
        if types is None:
            assert self.layer_types is not None
            types = self.layer_types(r, n, w)
        elif not isinstance(types, list) or any(t not in ("full_attention", "sliding_attention") for t in types):
            raise ConfigError('layer_types must be a list of "full_attention" and "sliding_attention"')
        elif len(types) != n:
            raise ConfigError(f"layer_types has {len(types)} entries for num_hidden_layers {n}")
        n_w = sum(t == "sliding_attention" for t in types)
        if w is None or n_w == 0:
            return {}
        r.notes.append(f"sliding_window {w} on {n_w} of the {n} layers (layer_types): FLOPs and KV cache")
        return {"w": w} if n_w == n else {"w": w, "N_w": n_w}

    def _shared_width(self, r: Reader, expert_ff: int) -> int:
        if self.shared_count_key:
            return _required(r, self.shared_count_key, zero_ok=True) * expert_ff
        if self.shared_width_key:
            return _required(r, self.shared_width_key, zero_ok=True)
        return expert_ff if self.shared_same else 0


MOE_NO_EFFECT: dict[str, str] = {**DECODER_NO_EFFECT, "cache": "use_cache output_router_logits"}


def _olmoe_check(r: Reader, spec: Spec) -> None:
    """OlmoeAttention's q_norm is hidden_size wide and its k_norm (hidden_size // h) x h_kv,
    whatever head_dim: equal to the 'full' QK norm of the heads only when h x head_dim is
    hidden_size (otherwise the model builds but its forward cannot apply the norms)."""
    v = spec.values
    d_k = v.get("d_k", v["d_model"] // v["h"])
    if d_k * v["h"] != v["d_model"]:
        raise ConfigError(
            f"num_attention_heads x head_dim = {v['h']} x {d_k} is not hidden_size ({v['d_model']}): OlmoeAttention's "
            "q_norm is hidden_size wide, so the model cannot run (and symtrans does not model it)"
        )


# AllenAI OLMoE: every layer a MoE of num_experts SwiGLU experts, QK RMSNorms over all heads
# (q_norm hidden_size wide, k_norm h_kv x head_dim), attention_bias on q, k, v and o.
OLMOE = ModelType(
    model_type="olmoe",
    config_class="OlmoeConfig",
    model_class="OlmoeForCausalLM",
    read=MoeLayout(
        DenseLayout(attention_bias_key="attention_bias", options=(("qk_norm", "full"),), head_dim_null=False),
        check=_olmoe_check,
    ).read,
    defaults={
        "vocab_size": 50304,
        "hidden_size": 2048,
        "intermediate_size": 2048,
        "num_hidden_layers": 16,
        "num_attention_heads": 16,
        "num_key_value_heads": None,
        "max_position_embeddings": 4096,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "num_experts": 64,
        "num_experts_per_tok": 8,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id clip_qkv eos_token_id hidden_act hidden_size initializer_range "
        "intermediate_size max_position_embeddings norm_topk_prob num_attention_heads num_experts num_experts_per_tok "
        "num_hidden_layers num_key_value_heads num_local_experts output_router_logits pad_token_id rms_norm_eps "
        "rope_parameters router_aux_loss_coef tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(**MOE_NO_EFFECT, clip="clip_qkv", routing="norm_topk_prob", loss="router_aux_loss_coef"),
    aliases={"num_local_experts": "num_experts"},
    getattr_keys=("head_dim",),
    pad_default=1,
    family="moe",
)


# Zhipu GLM-4.5 / 4.6 / 4.7 (glm4_moe): DeepSeekMoE-style layers after first_k_dense_replace dense ones
# (n_routed_experts of moe_intermediate_size, a shared MLP n_shared_experts x that wide, a
# sigmoid router E x d_model whose e_score_correction_bias is a buffer), attention_bias on
# q, k, v (o has none), optional per-head QK norms (use_qk_norm), partial rotary (no weights).
# transformers 5.x builds no multi-token-prediction layer (num_nextn_predict_layers).
GLM4_MOE = ModelType(
    model_type="glm4_moe",
    config_class="Glm4MoeConfig",
    model_class="Glm4MoeForCausalLM",
    read=MoeLayout(
        DenseLayout(qkv_bias_key="attention_bias", kv_null=False, head_dim_null=False),
        experts_key="n_routed_experts",
        expert_ff_key="moe_intermediate_size",
        moe_layers=after_first_dense,
        shared_count_key="n_shared_experts",
        qk_norm_key="use_qk_norm",
    ).read,
    defaults={
        "vocab_size": 151552,
        "hidden_size": 4096,
        "intermediate_size": 10944,
        "num_hidden_layers": 46,
        "num_attention_heads": 96,
        "num_key_value_heads": 8,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "moe_intermediate_size": 1408,
        "num_experts_per_tok": 8,
        "n_shared_experts": 1,
        "n_routed_experts": 128,
        "first_k_dense_replace": 1,
        "use_qk_norm": False,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id first_k_dense_replace hidden_act hidden_size "
        "initializer_range intermediate_size max_position_embeddings moe_intermediate_size n_group n_routed_experts "
        "n_shared_experts norm_topk_prob num_attention_heads num_experts_per_tok num_hidden_layers "
        "num_key_value_heads num_local_experts num_mtp_layers output_router_logits pad_token_id rms_norm_eps "
        "rope_parameters routed_scaling_factor tie_word_embeddings topk_group use_cache use_qk_norm vocab_size"
    ),
    no_param_effect=no_effect(
        **MOE_NO_EFFECT, routing="n_group topk_group norm_topk_prob routed_scaling_factor", mtp="num_mtp_layers"
    ),
    aliases={"num_local_experts": "n_routed_experts", "num_mtp_layers": "num_nextn_predict_layers"},
    getattr_keys=("head_dim",),
    # GLM-4.5's checkpoints write the MTP depth under the name the attribute_map maps from
    legacy_keys=keys("num_nextn_predict_layers"),
    pad_default=None,
    family="moe",
)


def _dots1_layer_types(r: Reader, n: int, w: int | None) -> list[str]:
    """Dots1Config.__post_init__: layers from max_window_layers on slide when sliding_window is set."""
    if w is None:  # the class never compares the layers with max_window_layers then
        return ["full_attention"] * n
    first = _int(r, "max_window_layers")
    return ["sliding_attention" if i >= first else "full_attention" for i in range(n)]


# rednote dots.llm1: DeepSeekMoE-style layers after first_k_dense_replace dense ones (a shared MLP of
# n_shared_experts x moe_intermediate_size; router bias a buffer), per-head QK RMSNorms,
# attention_bias on q, k, v and o; a sliding window on the layers layer_types marks.
DOTS1 = ModelType(
    model_type="dots1",
    config_class="Dots1Config",
    model_class="Dots1ForCausalLM",
    read=MoeLayout(
        DenseLayout(attention_bias_key="attention_bias", options=(("qk_norm", "head"),), head_dim_null=False),
        experts_key="n_routed_experts",
        expert_ff_key="moe_intermediate_size",
        moe_layers=after_first_dense,
        shared_count_key="n_shared_experts",
        layer_types=_dots1_layer_types,
    ).read,
    defaults={
        "vocab_size": 152064,
        "hidden_size": 4608,
        "intermediate_size": 10944,
        "num_hidden_layers": 62,
        "num_attention_heads": 32,
        "num_key_value_heads": 32,
        "max_position_embeddings": 2048,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "moe_intermediate_size": 1408,
        "num_experts_per_tok": None,
        "n_shared_experts": None,
        "n_routed_experts": None,
        "first_k_dense_replace": 0,
        "sliding_window": 4096,
        "max_window_layers": 62,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id first_k_dense_replace hidden_act hidden_size "
        "initializer_range intermediate_size layer_types max_position_embeddings max_window_layers "
        "moe_intermediate_size n_group n_routed_experts n_shared_experts norm_topk_prob num_attention_heads "
        "num_experts_per_tok num_hidden_layers num_key_value_heads num_local_experts output_router_logits "
        "pad_token_id rms_norm_eps rope_parameters routed_scaling_factor sliding_window tie_word_embeddings "
        "topk_group use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        **MOE_NO_EFFECT,
        routing="n_group topk_group norm_topk_prob routed_scaling_factor",
        window="sliding_window max_window_layers layer_types",
    ),
    aliases={"num_local_experts": "n_routed_experts"},
    getattr_keys=("head_dim",),
    # dots.llm1's checkpoints (their config.json, tests/fixtures/configs/dots.llm1-base.json): Dots1's
    # router is always sigmoid, every layer after first_k_dense_replace is a MoE one whatever
    # moe_layer_freq says, and the window follows sliding_window alone (transformers 5.24 reads none of the three)
    legacy_keys=keys("scoring_func moe_layer_freq use_sliding_window"),
    pad_default=None,
    family="moe",
)


# MiniMax-M2 / M2.1 / M2.5: every layer a MoE of num_local_experts SwiGLU experts (sigmoid router,
# its e_score_correction_bias a buffer), QK RMSNorms over all heads (h x head_dim, h_kv x
# head_dim), no biases; partial rotary from the checkpoints' rotary_dim (no weights).
MINIMAX_M2 = ModelType(
    model_type="minimax_m2",
    config_class="MiniMaxM2Config",
    model_class="MiniMaxM2ForCausalLM",
    read=MoeLayout(
        DenseLayout(options=(("qk_norm", "full"),), kv_null=False, head_dim_null=False),
        experts_key="num_local_experts",
    ).read,
    defaults={
        "vocab_size": 200064,
        "hidden_size": 3072,
        "intermediate_size": 1536,
        "num_hidden_layers": 62,
        "num_attention_heads": 48,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "max_position_embeddings": 196608,
        "tie_word_embeddings": False,
        "num_experts_per_tok": 8,
        "num_local_experts": 256,
    },
    config_keys=keys(
        "attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size initializer_range "
        "intermediate_size max_position_embeddings num_attention_heads num_experts num_experts_per_tok "
        "num_hidden_layers num_key_value_heads num_local_experts output_router_logits pad_token_id rms_norm_eps "
        "rope_parameters router_aux_loss_coef router_jitter_noise tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(**MOE_NO_EFFECT, loss="router_aux_loss_coef router_jitter_noise"),
    aliases={"num_experts": "num_local_experts"},
    # MiniMax's checkpoints: rotary_dim (MiniMaxM2Config turns it into partial_rotary_factor), and
    # switches of their own modeling code that transformers' class fixes (use_qk_norm, qk_norm_type,
    # scoring_func, use_routing_bias, use_mtp and the MTP sizes: no MTP layer is built)
    legacy_keys=keys(
        "shared_intermediate_size attention_bias rotary_dim use_qk_norm qk_norm_type scoring_func use_routing_bias use_mtp num_mtp_modules "
        "mtp_transformer_layers attn_type_list layernorm_full_attention_beta layernorm_linear_attention_beta "
        "layernorm_mlp_beta"
    ),
    pad_default=None,
    family="moe",
)


def _phimoe_layer_types(r: Reader, n: int, w: int | None) -> list[str]:
    """PhimoeModel: sliding_window, when set, masks every layer (no layer_types field)."""
    return ["sliding_attention" if w is not None else "full_attention"] * n


# Microsoft Phi-3.5-MoE: Mixtral-shaped (every layer a MoE of num_local_experts SwiGLU experts), with
# LayerNorms (weight and bias) instead of RMSNorms, attention_bias on q, k, v and o, lm_head_bias on
# the LM head; sliding_window on every layer when set.
PHIMOE = ModelType(
    model_type="phimoe",
    config_class="PhimoeConfig",
    model_class="PhimoeForCausalLM",
    read=MoeLayout(
        DenseLayout(
            attention_bias_key="attention_bias", options=(("norm", "layernorm"),), kv_null=False, head_dim_null=False
        ),
        experts_key="num_local_experts",
        head_bias_key="lm_head_bias",
        layer_types=_phimoe_layer_types,
    ).read,
    defaults={
        "vocab_size": 32064,
        "hidden_size": 4096,
        "intermediate_size": 6400,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "lm_head_bias": False,
        "num_experts_per_tok": 2,
        "num_local_experts": 16,
        "sliding_window": None,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id hidden_act hidden_size initializer_range "
        "input_jitter_noise intermediate_size lm_head_bias max_position_embeddings num_attention_heads "
        "num_experts_per_tok num_hidden_layers num_key_value_heads num_local_experts output_router_logits "
        "pad_token_id rms_norm_eps rope_parameters router_aux_loss_coef router_jitter_noise sliding_window "
        "tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        **MOE_NO_EFFECT,
        loss="router_aux_loss_coef router_jitter_noise input_jitter_noise",
        window="sliding_window",
    ),
    getattr_keys=("head_dim",),
    pad_default=None,
    family="moe",
)


_GRANITE_SCALES = "embedding_multiplier logits_scaling residual_multiplier attention_multiplier"
_GRANITE_KEYS = (
    "attention_bias attention_dropout attention_multiplier bos_token_id embedding_multiplier eos_token_id "
    "hidden_act hidden_size initializer_range intermediate_size logits_scaling max_position_embeddings "
    "num_attention_heads num_experts_per_tok num_hidden_layers num_key_value_heads num_local_experts "
    "output_router_logits pad_token_id residual_multiplier rms_norm_eps rope_parameters router_aux_loss_coef "
    "tie_word_embeddings use_cache vocab_size"
)
_GRANITE_DEFAULTS: dict[str, Any] = {
    "vocab_size": 32000,
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": None,
    "max_position_embeddings": 2048,
    "tie_word_embeddings": False,
    "attention_bias": False,
    "num_experts_per_tok": 2,
    "num_local_experts": 8,
}


# IBM Granite 3.x MoE: Mixtral-shaped (a router E x d_model, num_local_experts SwiGLU experts of
# intermediate_size), attention_bias on q, k, v and o; the four multipliers scale activations.
GRANITEMOE = ModelType(
    model_type="granitemoe",
    config_class="GraniteMoeConfig",
    model_class="GraniteMoeForCausalLM",
    read=MoeLayout(
        DenseLayout(attention_bias_key="attention_bias", head_dim_null=False), experts_key="num_local_experts"
    ).read,
    defaults=_GRANITE_DEFAULTS,
    config_keys=keys(_GRANITE_KEYS),
    no_param_effect=no_effect(**MOE_NO_EFFECT, scale=_GRANITE_SCALES, loss="router_aux_loss_coef"),
    getattr_keys=("head_dim",),
    pad_default=None,
    family="moe",
)


# IBM Granite MoE with a shared expert: GraniteMoe plus, in every layer, a gated shared MLP
# shared_intermediate_size wide (input_linear d -> 2 x that, output_linear back; 0: none).
GRANITEMOESHARED = ModelType(
    model_type="granitemoeshared",
    config_class="GraniteMoeSharedConfig",
    model_class="GraniteMoeSharedForCausalLM",
    read=MoeLayout(
        DenseLayout(attention_bias_key="attention_bias", head_dim_null=False),
        experts_key="num_local_experts",
        shared_width_key="shared_intermediate_size",
    ).read,
    defaults={**_GRANITE_DEFAULTS, "shared_intermediate_size": 0},
    config_keys=keys(_GRANITE_KEYS + " shared_intermediate_size"),
    no_param_effect=no_effect(**MOE_NO_EFFECT, scale=_GRANITE_SCALES, loss="router_aux_loss_coef"),
    getattr_keys=("head_dim",),
    pad_default=None,
    family="moe",
)


# Baidu ERNIE 4.5 MoE: MoE layers where (i + 1) % moe_layer_interval == 0 between moe_layer_start_index
# and moe_layer_end_index, the rest dense; a shared MLP of moe_num_shared_experts x moe_intermediate_size;
# the router's e_score_correction_bias (1 x E) is an nn.Parameter (counted); use_bias biases q, k, v, o,
# the dense and shared MLPs and the LM head (never the stacked experts).
ERNIE4_5_MOE = ModelType(
    model_type="ernie4_5_moe",
    config_class="Ernie4_5_MoeConfig",
    model_class="Ernie4_5_MoeForCausalLM",
    read=MoeLayout(
        DenseLayout(attention_bias_key="use_bias", kv_null=False, head_dim_null=False),
        experts_key="moe_num_experts",
        k_key="moe_k",
        expert_ff_key="moe_intermediate_size",
        moe_layers=ernie_layers,
        shared_count_key="moe_num_shared_experts",
        router_bias=True,
        bias_key="use_bias",
    ).read,
    defaults={
        "vocab_size": 103424,
        "hidden_size": 2560,
        "intermediate_size": 12288,
        "num_hidden_layers": 28,
        "num_attention_heads": 20,
        "num_key_value_heads": 4,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": True,
        "use_bias": False,
        "moe_intermediate_size": 1536,
        "moe_k": 6,
        "moe_num_experts": 64,
        "moe_num_shared_experts": 2,
        "moe_layer_start_index": 1,
        "moe_layer_interval": 1,
    },
    config_keys=keys(
        "bos_token_id eos_token_id hidden_act hidden_size initializer_range intermediate_size "
        "max_position_embeddings moe_intermediate_size moe_k moe_layer_end_index moe_layer_interval "
        "moe_layer_start_index moe_norm_min moe_num_experts moe_num_shared_experts num_attention_heads "
        "num_experts num_experts_per_tok num_hidden_layers num_key_value_heads output_router_logits "
        "pad_token_id rms_norm_eps rope_parameters router_aux_loss_coef tie_word_embeddings use_bias "
        "use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        **{k: v for k, v in MOE_NO_EFFECT.items() if k not in ("dropout", "eps")},
        eps="rms_norm_eps moe_norm_min",
        loss="router_aux_loss_coef",
    ),
    aliases={"num_experts": "moe_num_experts", "num_experts_per_tok": "moe_k"},
    getattr_keys=("head_dim",),
    pad_default=0,
    family="moe",
)


# Tencent Hunyuan-A13B (hunyuan_v1_moe): every layer a MoE of num_experts SwiGLU experts of
# intermediate_size plus one shared MLP of the same width, a float32 router (wg, no bias), per-head
# QK RMSNorms, attention_bias on q, k, v and o; head_dim required (its None default cannot build).
HUNYUAN_V1_MOE = ModelType(
    model_type="hunyuan_v1_moe",
    config_class="HunYuanMoEV1Config",
    model_class="HunYuanMoEV1ForCausalLM",
    read=MoeLayout(
        DenseLayout(
            attention_bias_key="attention_bias",
            options=(("qk_norm", "head"),),
            head_dim_null=False,
            head_dim_required=True,
        ),
        k_key="moe_topk",
        shared_same=True,
        k_per_layer=True,
    ).read,
    defaults={
        "vocab_size": 290943,
        "hidden_size": 4096,
        "intermediate_size": 11008,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": None,
        "head_dim": None,
        "max_position_embeddings": 2048,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "num_experts": 1,
        "moe_topk": 1,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eod_token_id eos_token_id head_dim hidden_act hidden_size "
        "initializer_range intermediate_size max_position_embeddings moe_topk num_attention_heads num_experts "
        "num_experts_per_tok num_hidden_layers num_key_value_heads num_local_experts output_router_logits "
        "pad_token_id pretraining_tp rms_norm_eps rope_parameters sep_token_id tie_word_embeddings use_cache "
        "vocab_size"
    ),
    no_param_effect=no_effect(
        **{**MOE_NO_EFFECT, "token": "bos_token_id eos_token_id pad_token_id eod_token_id sep_token_id"},
        tp="pretraining_tp",
    ),
    aliases={"num_experts_per_tok": "moe_topk", "num_local_experts": "num_experts"},
    # Hunyuan-A13B's checkpoints give per-layer lists that HunYuanMoEV1ForCausalLM never reads
    # (its experts are intermediate_size wide, one shared MLP a layer)
    legacy_keys=keys("moe_intermediate_size num_shared_expert"),
    pad_default=0,
    family="moe",
)


GLM4_MOE_LITE = ModelType(
    model_type="glm4_moe_lite",
    config_class="Glm4MoeLiteConfig",
    model_class="Glm4MoeLiteForCausalLM",
    read=read_mla_moe,  # catalog/models/dsa.py: DeepSeek-V3's MLA and MoE, no indexer
    defaults={
        "vocab_size": 154880,
        "hidden_size": 2048,
        "intermediate_size": 10240,
        "num_hidden_layers": 47,
        "num_attention_heads": 20,
        "max_position_embeddings": 202752,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "kv_lora_rank": 512,
        "q_lora_rank": 768,
        "qk_nope_head_dim": 192,
        "qk_rope_head_dim": 64,
        "v_head_dim": 256,
        "moe_intermediate_size": 1536,
        "n_routed_experts": 64,
        "n_shared_experts": 1,
        "num_experts_per_tok": 4,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size "
        "initializer_range intermediate_size kv_lora_rank max_position_embeddings mlp_layer_types "
        "moe_intermediate_size n_group n_routed_experts n_shared_experts norm_topk_prob num_attention_heads "
        "num_experts_per_tok num_hidden_layers num_key_value_heads num_local_experts output_router_logits "
        "pad_token_id pretraining_tp q_lora_rank qk_head_dim qk_nope_head_dim qk_rope_head_dim rms_norm_eps rope_interleave "
        "rope_parameters routed_scaling_factor tie_word_embeddings topk_group use_cache v_head_dim vocab_size"
    ),
    no_param_effect=no_effect(
        **{**MOE_NO_EFFECT, "rope": "rope_parameters rope_interleave"},
        routing="n_group topk_group norm_topk_prob routed_scaling_factor",
        tp="pretraining_tp",
        **{"kv heads": "num_key_value_heads", "mla dims": "qk_head_dim"},
    ),
    aliases={"num_local_experts": "n_routed_experts", "head_dim": "qk_rope_head_dim"},
    # GLM-4.7-Flash's checkpoint: DeepSeek's router method name, its MTP depth (not built) and its
    # first_k_dense_replace, which Glm4MoeLiteConfig never reads (its mlp_layer_types default says
    # the same for the release: the first layer dense)
    legacy_keys=keys("topk_method num_nextn_predict_layers first_k_dense_replace"),
    pad_default=None,
    family="moe",
)


def qwen_sparse_layers(r: Reader, n: int) -> int:
    """Qwen3VLMoeTextDecoderLayer: a MoE layer where i is not in ``mlp_only_layers`` and
    (i + 1) % ``decoder_sparse_step`` == 0 (the others are dense of ``intermediate_size``)."""
    step = r.size("decoder_sparse_step")
    k, only = r.lookup("mlp_only_layers")
    only = [] if k is None or only is None else only  # missing or null: [] (Qwen3VLMoeTextConfig)
    if not isinstance(only, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in only):
        raise ConfigError(f"{k} must be a list of layer indices or null, not {show(only)}")
    dense = set(only)
    return sum(1 for i in range(n) if (i + 1) % step == 0 and i not in dense)


# Qwen3-VL-MoE's language model (Qwen3VLMoeTextModel, transformers 5.24
# models/qwen3_vl_moe/modeling_qwen3_vl_moe.py): Qwen3-MoE's layers (per-head q/k RMSNorms,
# attention_bias on q, k, v and o, num_experts stacked SwiGLU experts of moe_intermediate_size,
# a router E x d_model, no shared expert) without a sliding window; multimodal rotary
# positions have no weights.  Only inside qwen3_vl_moe's text_config, whose own
# tie_word_embeddings alone ties lm_head.
QWEN3_VL_MOE_TEXT = ModelType(
    model_type="qwen3_vl_moe_text",
    config_class="Qwen3VLMoeTextConfig",
    model_class="Qwen3VLMoeTextModel",
    read=MoeLayout(
        DenseLayout(attention_bias_key="attention_bias", options=(("qk_norm", "head"),), kv_null=False),
        expert_ff_key="moe_intermediate_size",
        moe_layers=qwen_sparse_layers,
    ).read,
    defaults={
        "vocab_size": 151936,
        "hidden_size": 2048,
        "intermediate_size": 5632,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "num_key_value_heads": 16,
        "head_dim": None,
        "max_position_embeddings": 128000,
        "tie_word_embeddings": True,
        "attention_bias": False,
        "decoder_sparse_step": 1,
        "moe_intermediate_size": 1408,
        "num_experts_per_tok": 4,
        "num_experts": 60,
        "mlp_only_layers": None,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id decoder_sparse_step eos_token_id head_dim hidden_act "
        "hidden_size initializer_range intermediate_size max_position_embeddings mlp_only_layers "
        "moe_intermediate_size num_attention_heads num_experts num_experts_per_tok num_hidden_layers "
        "num_key_value_heads num_local_experts output_router_logits pad_token_id rms_norm_eps rope_parameters "
        "router_aux_loss_coef tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(**MOE_NO_EFFECT, loss="router_aux_loss_coef"),
    aliases={"num_local_experts": "num_experts"},
    # Qwen/Qwen3-VL-30B-A3B-Instruct's text_config writes norm_topk_prob; Qwen3VLMoeTextConfig has
    # no such field (Qwen3VLMoeTextTopKRouter always renormalises the top-k weights)
    legacy_keys=keys("norm_topk_prob"),
    pad_default=None,
    text_only=True,
    family="moe",
)


RECORDS = (
    OLMOE,
    GLM4_MOE,
    DOTS1,
    MINIMAX_M2,
    PHIMOE,
    GRANITEMOE,
    GRANITEMOESHARED,
    ERNIE4_5_MOE,
    HUNYUAN_V1_MOE,
    GLM4_MOE_LITE,
    QWEN3_VL_MOE_TEXT,
)
