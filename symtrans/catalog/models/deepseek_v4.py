"""DeepSeek-V4 (``deepseek_v4``): shared-KV attention with a sliding window, KV compressors and a
lightning indexer, a grouped low-rank output projection, manifold-constrained hyper-connections,
and a mixture of experts in every layer (``engine/deepseek_v4.py`` holds the shapes).

Read off transformers 5.24's ``models/deepseek_v4`` (``DeepseekV4Config``,
``DeepseekV4ForCausalLM``):

* ``layer_types`` (sliding_attention, compressed_sparse_attention, heavily_compressed_attention)
  picks each layer's compressor: the file's list (at least num_hidden_layers long, cut to it), else
  the legacy per-layer ``compress_ratios`` (0, 4, 128), else two heavily compressed layers then
  compressed sparse and heavily compressed in turn (``__post_init__``).  Counted with one symbol per
  kind (N_csa, N_hca; sliding layers are the rest).
* ``compress_rates`` (or the legacy ``compress_rate_csa`` / ``compress_rate_hca``) sizes each
  compressor's ``position_bias`` (m_csa, m_hca).
* Every layer is a MoE (``DeepseekV4SparseMoeBlock``): a router E x d_model (the hash router of the
  ``hash_moe`` layers has the same weight; its ``tid2eid`` table is a buffer), E experts of
  ``moe_intermediate_size`` and one shared SwiGLU MLP of that width, biased with ``mlp_bias``;
  ``n_shared_experts`` is never read (there is always one).
* ``num_key_value_heads``, ``attention_bias`` and ``n_shared_experts`` shape nothing.

* ``sliding_window`` (w, default 128) sizes no parameter, only the cache (``memory.v4_cache_bytes``);
  one that is null or below 2 (transformers' window then keeps every key) is left out, and the cache
  is then refused.

The multi-token-prediction layer of the checkpoints (``num_nextn_predict_layers``) is not built.
FLOPs are counted as the eager model computes them (``engine/deepseek_v4.py``): forward, backward and
training (the lightning indexer gets no gradient), prefill and decode with the cache; a KV cache per
token and time are refused (``mixer_rules.v4_flops``, ``V4_WORKLOAD_REFUSAL``).
"""

from __future__ import annotations

from typing import Any

from symtrans.catalog.models.record import DECODER_NO_EFFECT, ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_size, show
from symtrans.engine.spec import Spec

_TYPES = ("sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention")
_RATIO_TO_TYPE = {0: _TYPES[0], 4: _TYPES[1], 128: _TYPES[2]}  # DeepseekV4Config's legacy compress_ratios
_KINDS = {_TYPES[0]: "v4_swa", _TYPES[1]: "v4_csa", _TYPES[2]: "v4_hca"}
_RATE = {_TYPES[1]: "m_csa", _TYPES[2]: "m_hca"}
# transformers 5.24 activations.ACT2FN, less prelu and xielu (modules with weights of their own): the
# router's scoring_func and the MLPs' hidden_act are looked up there (DeepseekV4TopKRouter.score_fn)
_ACTIVATIONS = (
    "gelu gelu_10 gelu_accurate gelu_fast gelu_new gelu_python gelu_python_tanh gelu_pytorch_tanh hardswish "
    "laplace leaky_relu linear mish quick_gelu relu relu2 relu6 sigmoid silu sqrtsoftplus swish tanh"
).split()


def _activation(r: Reader, key: str) -> None:
    v = r.cfg.get(key)
    if v is None:
        return
    if v in ("prelu", "xielu"):
        raise ConfigError(f"{key} {v} is an activation with learned weights, which symtrans does not count here")
    if v not in _ACTIVATIONS:
        raise ConfigError(f"{key} must name an activation of transformers' ACT2FN (such as silu), not {show(v)}")


def _per_layer(r: Reader, key: str, given: Any, allowed: tuple, n: int) -> list:
    if not isinstance(given, list) or any(isinstance(t, bool) or t not in allowed for t in given):
        raise ConfigError(f"{key} must be a list of {', '.join(show(t) for t in allowed)}, not {show(given)}")
    if len(given) < n:
        raise ConfigError(f"{key} has {len(given)} entries for num_hidden_layers {n}: {r.cls} requires one per layer")
    return given[:n]


def _layer_types(r: Reader, n: int) -> list[str]:
    """DeepseekV4Config.__post_init__: layer_types, else compress_ratios, else the V4-Pro default."""
    if r.cfg.get("layer_types") is not None:
        return _per_layer(r, "layer_types", r.cfg["layer_types"], _TYPES, n)
    if r.cfg.get("compress_ratios") is not None:
        ratios = _per_layer(r, "compress_ratios", r.cfg["compress_ratios"], tuple(_RATIO_TO_TYPE), n)
        return [_RATIO_TO_TYPE[x] for x in ratios]
    r.notes.append(
        "layer_types missing: two heavily compressed attention layers, then compressed sparse and heavily "
        f"compressed in turn ({r.cls}.__post_init__)"
    )
    return [_TYPES[2]] * min(n, 2) + [_TYPES[1] if i % 2 else _TYPES[2] for i in range(max(n - 2, 0))]


def _rate(r: Reader, layer_type: str) -> int:
    """A compressor's rate: compress_rates[type], a legacy compress_rate_csa/hca over it, or the default."""
    legacy = "compress_rate_csa" if layer_type == _TYPES[1] else "compress_rate_hca"
    if r.cfg.get(legacy) is not None:
        return check_size(legacy, r.cfg[legacy])
    rates = r.cfg.get("compress_rates")
    if rates is None:
        return {_TYPES[1]: 4, _TYPES[2]: 128}[layer_type]
    if not isinstance(rates, dict):
        raise ConfigError(f"compress_rates must map attention types to rates, not {show(rates)}")
    if layer_type not in rates:
        raise ConfigError(f"compress_rates has no rate for {layer_type}, which layer_types uses: {r.cls} needs one")
    return check_size(f"compress_rates[{layer_type}]", rates[layer_type])


def _indexer_fits_the_rotary_part(r: Reader, d_k: int, d_idx: int) -> None:
    """Refuse an indexer head narrower than the rotary part of a head.  DeepseekV4Indexer rotates the
    trailing int(head_dim x factor) features of each index head with the "compress" rope
    (``apply_rotary_pos_emb``, transformers 5.24's modeling_deepseek_v4.py); with fewer features the
    model builds but its forward fails, so there are no FLOPs or cache to count.  The factor, as
    DeepseekV4Config and DeepseekV4RotaryEmbedding resolve it: a nested rope_parameters' "compress"
    entry (1.0 when a default-type entry omits it), else partial_rotary_factor, else the legacy
    qk_rope_head_dim / head_dim, else 0.125.  Where that is not certain (a malformed value, a
    non-default rope omitting it) nothing is refused: the parameter count does not read it."""
    rope = r.cfg.get("rope_parameters")
    compress = rope.get("compress") if isinstance(rope, dict) and isinstance(rope.get("main"), dict) else None
    if isinstance(compress, dict):
        default = 1.0 if compress.get("rope_type", "default") == "default" else None
        factor = compress.get("partial_rotary_factor", default)
    else:
        factor = r.cfg.get("partial_rotary_factor")
        legacy = r.cfg.get("qk_rope_head_dim")
        if factor is None and isinstance(legacy, int) and not isinstance(legacy, bool) and legacy > 0:
            factor = legacy / d_k
        elif factor is None:
            factor = 0.125
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 0 < factor <= 1:
        return
    rotary = int(d_k * factor)
    if rotary > d_idx:
        raise ConfigError(
            f"index_head_dim ({d_idx}) is narrower than the rotary part of a head (head_dim {d_k} x "
            f"partial_rotary_factor {factor:g} = {rotary}): DeepseekV4Indexer builds but cannot run"
        )


def read_deepseek_v4(r: Reader) -> Spec:
    """The Spec of a deepseek_v4 config (module docstring).

    Raises:
        ConfigError: a malformed size or per-layer list; a scoring_func or hidden_act that is no
            activation of transformers' ACT2FN, or one with weights (prelu, xielu); o_groups not dividing
            num_attention_heads x head_dim (the grouped output projection's forward cannot
            split the heads); num_experts_per_tok above n_routed_experts.
    """
    n = r.size("num_hidden_layers")
    h = r.size("num_attention_heads")
    d_k = r.size("head_dim")
    g_o = r.size("o_groups")
    if "num_key_value_heads" in r.cfg:  # a strict int field that shapes nothing (one shared key-value head)
        check_size("num_key_value_heads", r.cfg["num_key_value_heads"])
    if (h * d_k) % g_o:
        raise ConfigError(
            f"o_groups ({g_o}) does not divide num_attention_heads x head_dim ({h * d_k}): the grouped output "
            f"projection of {r.model} splits the heads' outputs into o_groups equal groups, so its forward fails"
        )
    for key in ("scoring_func", "hidden_act"):
        _activation(r, key)
    E, k = r.size("n_routed_experts"), r.size("num_experts_per_tok")
    if k > E:
        raise ConfigError(f"num_experts_per_tok ({k}) exceeds the {E} experts (n_routed_experts)")
    sizes: dict[str, int] = dict(
        d_model=r.size("hidden_size"),
        d_ff=r.size("moe_intermediate_size"),
        h=h,
        N=n,
        V=r.size("vocab_size"),
        L_max=r.size("max_position_embeddings"),
        d_k=d_k,
        r_q=r.size("q_lora_rank"),
        g_o=g_o,
        r_o=r.size("o_lora_rank"),
        n_hc=r.size("hc_mult"),
        E=E,
        k=k,
    )
    window = r.cfg.get("sliding_window", 128)  # DeepseekV4Config's default; sizes only the cache
    if isinstance(window, int) and not isinstance(window, bool) and window >= 2:
        sizes["w"] = window
    types = _layer_types(r, n)
    counts = {t: types.count(t) for t in _TYPES}
    present = [t for t in _TYPES if counts[t]]
    for t in present[1:]:  # the first kind has the rest of the N layers
        sizes["N_attn" if t == _TYPES[0] else "N_" + _KINDS[t][3:]] = counts[t]
    for t in present:
        if t in _RATE:
            sizes[_RATE[t]] = _rate(r, t)
    if counts[_TYPES[1]]:
        sizes.update(h_idx=r.size("index_n_heads"), d_idx=r.size("index_head_dim"), k_idx=r.size("index_topk"))
        _indexer_fits_the_rotary_part(r, d_k, sizes["d_idx"])
    r.notes.append(
        "layer_types: "
        + ", ".join(f"{counts[t]} {t.replace('_', ' ')}" for t in _TYPES)
        + "; manifold-constrained hyper-connections over hc_mult residual streams"
    )
    r.notes.append(
        "multi-token-prediction layers (num_nextn_predict_layers) are in the checkpoints but not built by "
        f"{r.model}: not counted"
    )
    return Spec(
        family="decoder-only",
        sizes=sizes,
        positional="rotary",
        norm="rmsnorm",
        bias=False,
        ffn="swiglu",
        ffn_bias=r.flag("mlp_bias", note=False),
        expert_bias=False,
        final_norm=True,
        norm_position="pre",
        tie_output=r.flag("tie_word_embeddings"),
        n_shared_experts=1,
        mixers="|".join(_KINDS[t] for t in present),
    )


DEEPSEEK_V4 = ModelType(
    model_type="deepseek_v4",
    config_class="DeepseekV4Config",
    model_class="DeepseekV4ForCausalLM",
    read=read_deepseek_v4,
    defaults={
        "vocab_size": 129280,
        "hidden_size": 4096,
        "moe_intermediate_size": 2048,
        "num_hidden_layers": 43,
        "num_attention_heads": 64,
        "head_dim": 512,
        "q_lora_rank": 1024,
        "num_experts_per_tok": 6,
        "n_routed_experts": 256,
        "max_position_embeddings": 1048576,
        "hc_mult": 4,
        "o_groups": 8,
        "o_lora_rank": 1024,
        "index_n_heads": 64,
        "index_head_dim": 128,
        "index_topk": 512,
        "tie_word_embeddings": False,
        "mlp_bias": False,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id compress_rates compress_rope_theta eos_token_id hc_eps "
        "hc_mult hc_sinkhorn_iters head_dim hidden_act hidden_size index_head_dim index_n_heads index_topk "
        "initializer_range intermediate_size layer_types max_position_embeddings mlp_bias mlp_layer_types "
        "moe_intermediate_size n_routed_experts n_shared_experts norm_topk_prob num_attention_heads "
        "num_experts_per_tok num_hidden_layers num_key_value_heads num_local_experts num_nextn_predict_layers "
        "o_groups o_lora_rank output_router_logits pad_token_id partial_rotary_factor q_lora_rank rms_norm_eps "
        "rope_parameters rope_theta routed_scaling_factor router_aux_loss_coef router_jitter_noise scoring_func "
        "sliding_window swiglu_limit tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        **{
            **DECODER_NO_EFFECT,
            "cache": "use_cache output_router_logits",
            "rope": "rope_parameters rope_theta compress_rope_theta partial_rotary_factor",
            "eps": "rms_norm_eps hc_eps",
        },
        routing="scoring_func norm_topk_prob routed_scaling_factor mlp_layer_types",
        loss="router_aux_loss_coef router_jitter_noise",
        **{"swiglu clamp": "swiglu_limit"},
        window="sliding_window",
        topk="index_topk",
        mtp="num_nextn_predict_layers",
        sinkhorn="hc_sinkhorn_iters",
        unread="attention_bias n_shared_experts num_key_value_heads",
    ),
    aliases={"num_local_experts": "n_routed_experts", "intermediate_size": "moe_intermediate_size"},
    # DeepseekV4Config.__post_init__ pops compress_ratios, compress_rate_csa/hca, num_hash_layers and
    # qk_rope_head_dim into its fields; the published config.json also carries keys no 5.x code reads
    # (the routed experts' storage dtype, the router's method name)
    legacy_keys=keys(
        "compress_ratios compress_rate_csa compress_rate_hca num_hash_layers qk_rope_head_dim expert_dtype topk_method"
    ),
    pad_default=None,
    family="moe",
)

RECORDS = (DEEPSEEK_V4,)
