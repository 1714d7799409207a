"""The multi-head latent attention family of issue 21: DeepSeek-V3.2 (``deepseek_v32``) and GLM-5
(``glm_moe_dsa``), which add DeepSeek Sparse Attention's lightning indexer to DeepSeek-V3's MLA
(``engine/dsa.py``), and Mistral 4 (``mistral4``), DeepSeek-V3's MLA and MoE under Mistral's name.

Each layout was read off transformers 5.24's ``models/<type>/modeling_<type>.py``:

* ``DeepseekV32ForCausalLM``: every layer is MLA with the queries compressed (``q_a_proj``; the
  indexer reads the query latent, so ``q_lora_rank`` null cannot build) and its
  ``DeepseekV32Indexer``; the MLP of layer i is ``DeepseekV32MoE`` where ``mlp_layer_types[i]``
  is "sparse" (default: the first ``first_k_dense_replace`` layers dense), else a dense MLP of
  ``intermediate_size``; the MoE has n_routed_experts of ``moe_intermediate_size``, a router
  E x d_model (its ``e_score_correction_bias`` a buffer) and a shared MLP n_shared_experts x
  that wide; no biases in any MLP (``mlp_bias`` is never read).
* ``GlmMoeDsaForCausalLM``: the same, except that a layer whose ``indexer_types`` entry is
  "shared" builds no indexer (it reuses the previous full layer's top-k); the default pattern
  comes from ``index_topk_pattern`` or ``index_topk_freq`` / ``index_skip_topk_offset``
  (GlmMoeDsaConfig.__post_init__).
* ``Mistral4ForCausalLM``: DeepseekV3Attention (``q_lora_rank`` null: one q_proj) and
  DeepseekV3MoE from layer ``first_k_dense_replace`` on; its router has no correction bias.

None of the three builds the checkpoints' multi-token-prediction layer (``num_nextn_predict_layers``).
"""

from __future__ import annotations

from typing import Any

from symtrans.catalog.models.record import DECODER_NO_EFFECT, ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_rotary_head, check_size, show
from symtrans.engine.spec import Spec

_NO_EFFECT = {**DECODER_NO_EFFECT, "cache": "use_cache output_router_logits"}
_ROUTING = "n_group topk_group norm_topk_prob routed_scaling_factor"


def _nullable_int(r: Reader, key: str, zero_ok: bool = False) -> int:
    """A size whose config field admits null but whose model cannot build with it."""
    k, v = r.lookup(key)
    if k is None:
        v = r.defaults[key]
        r.notes.append(f"key {key} missing: used the transformers default {show(v)} ({r.cls})")
        return v
    if v is None:
        raise ConfigError(f"{k} is null: {r.model} cannot build without it; give an integer")
    return check_size(k, v, zero_ok=zero_ok)


def _layer_list(r: Reader, key: str, values: tuple[str, ...], n: int) -> list[str] | None:
    """A per-layer list of ``values`` (None when absent or null), at least n long."""
    v = r.cfg.get(key)
    if v is None:
        return None
    if not isinstance(v, list) or any(t not in values for t in v):
        raise ConfigError(f"{key} must be a list of {' and '.join(repr(x) for x in values)}, not {show(v)}")
    if len(v) < n:
        raise ConfigError(f"{key} has {len(v)} entries for num_hidden_layers {n} (one per layer)")
    return v[:n]


def _glm_indexer_types(r: Reader, n: int) -> list[str]:
    """GlmMoeDsaConfig.__post_init__: the file's indexer_types, else index_topk_pattern ("F"/"S"
    per layer), else "full" where max(i - offset + 1, 0) % freq == 0."""
    given = _layer_list(r, "indexer_types", ("full", "shared"), n)
    if given is not None:
        return given
    pattern = r.cfg.get("index_topk_pattern")
    if pattern is not None:
        if not isinstance(pattern, str) or set(pattern) - {"F", "S"}:
            raise ConfigError(f'index_topk_pattern must be a string of "F" and "S", not {show(pattern)}')
        if len(pattern) < n:
            raise ConfigError(f"index_topk_pattern has {len(pattern)} letters for num_hidden_layers {n}")
        return ["full" if c == "F" else "shared" for c in pattern[:n]]
    freq = r.cfg.get("index_topk_freq", 1)
    offset = r.cfg.get("index_skip_topk_offset", 2)
    if isinstance(freq, bool) or not isinstance(freq, int):
        raise ConfigError(f"index_topk_freq must be an integer, not {show(freq)}")
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise ConfigError(f"index_skip_topk_offset must be an integer, not {show(offset)}")
    freq = max(freq, 1)
    return ["full" if max(i - offset + 1, 0) % freq == 0 else "shared" for i in range(n)]


def read_mla_moe(r: Reader) -> Spec:
    """The Spec of a deepseek_v32, glm_moe_dsa, mistral4 or glm4_moe_lite config (module docstring;
    GLM-4.7-Flash's Glm4MoeLiteForCausalLM is DeepSeek-V3's MLA, q_lora_rank null giving one q_proj,
    and MoE layers where mlp_layer_types says "sparse", by default every layer but the first).

    Raises:
        ConfigError: a malformed size or layer list; a null size the model cannot build with;
            top-k above E; an indexer narrower than the rotary part it rotates; a GLM layer 0
            that shares a previous layer's top-k (there is none: its forward fails).
    """
    mt = r.mt
    dsa = mt in ("deepseek_v32", "glm_moe_dsa")
    n = r.size("num_hidden_layers")
    h = r.size("num_attention_heads")
    kv_heads = r.cfg.get("num_key_value_heads", 0)
    if "num_key_value_heads" in r.cfg and not (mt == "mistral4" and kv_heads is None):  # never read for a shape
        check_size("num_key_value_heads", kv_heads)  # but a strict int field (Mistral4Config's may be null)
    sizes: dict[str, int] = dict(
        d_model=r.size("hidden_size"),
        d_ff=r.size("intermediate_size"),
        h=h,
        N=n,
        V=r.size("vocab_size"),
        L_max=r.size("max_position_embeddings"),
        r_kv=r.size("kv_lora_rank"),
        d_nope=r.size("qk_nope_head_dim"),
        d_rope=r.size("qk_rope_head_dim"),
        d_v=_nullable_int(r, "v_head_dim"),
    )
    check_rotary_head(r, "qk_rope_head_dim", sizes["d_rope"])
    opts: dict[str, Any] = {"mla": True}
    if not dsa and "q_lora_rank" in r.cfg and r.cfg["q_lora_rank"] is None:
        r.notes.append("q_lora_rank is null: queries use one q_proj (d_model x h*(d_nope + d_rope)), no compression")
    else:  # DeepSeek-V3.2's attention and indexer read the query latent: it cannot be null
        sizes["r_q"] = _nullable_int(r, "q_lora_rank")
    if r.flag("attention_bias"):
        opts["attention_bias"] = True
    if mt == "mistral4":
        first = _nullable_int(r, "first_k_dense_replace", zero_ok=True)
        n_moe = max(n - first, 0)  # Mistral4DecoderLayer: layer_idx >= first_k_dense_replace
    else:
        types = _layer_list(r, "mlp_layer_types", ("dense", "sparse"), n)
        if types is None and mt == "glm4_moe_lite":  # Glm4MoeLiteConfig: the first layer dense
            types = ["dense"] + ["sparse"] * (n - 1)
        elif types is None:
            first = r.size("first_k_dense_replace", zero_ok=True)
            types = ["dense"] * min(first, n) + ["sparse"] * max(n - first, 0)
        n_moe = types.count("sparse")
    lt = r.cfg.get("layer_types")
    if dsa and lt is not None and (not isinstance(lt, list) or len(lt) != n):
        raise ConfigError(f"layer_types must list one type per layer ({n}), not {show(lt)}: {r.cls} refuses it")
    if dsa:
        d_idx, h_idx, k_idx = r.size("index_head_dim"), r.size("index_n_heads"), r.size("index_topk")
        if d_idx < sizes["d_rope"]:
            raise ConfigError(
                f"index_head_dim ({d_idx}) is below qk_rope_head_dim ({sizes['d_rope']}): the indexer rotates the "
                f"first qk_rope_head_dim features of its heads, so {r.model} cannot run"
            )
        sizes.update(h_idx=h_idx, d_idx=d_idx, k_idx=k_idx)
        shared = 0
        if mt == "glm_moe_dsa":
            itypes = _glm_indexer_types(r, n)
            if itypes[0] == "shared":
                raise ConfigError(
                    "indexer_types[0] is 'shared': layer 0 has no earlier full layer whose top-k it could reuse, "
                    f"so {r.model}'s forward fails"
                )
            shared = itypes.count("shared")
        opts["mixers"] = "dsa|attention" if shared else "dsa"
        if shared:
            sizes["N_attn"] = shared
            r.notes.append(
                f"indexer_types: {n - shared} layers run their own lightning indexer, {shared} reuse the previous "
                "one's top-k (no indexer weights)"
            )
        r.notes.append(
            "DeepSeek Sparse Attention: each layer's lightning indexer (h_idx heads of d_idx) picks index_topk "
            "keys per query; eager transformers computes the dense scores under that mask (--mask full)"
        )
    if n_moe:
        E, expert_ff = r.size("n_routed_experts"), r.size("moe_intermediate_size")
        if dsa and r.cfg.get("num_experts") is not None:  # __post_init__'s BC re-route
            E = check_size("num_experts", r.cfg["num_experts"])
            r.notes.append(f"num_experts ({E}) replaces n_routed_experts, as {r.cls}.__post_init__ does")
        k = _nullable_int(r, "num_experts_per_tok")
        if k > E:
            raise ConfigError(f"num_experts_per_tok ({k}) exceeds the {E} experts (n_routed_experts)")
        sizes.update(E=E, k=k)
        if n_moe == n:
            sizes["d_ff"] = expert_ff
        else:
            sizes["N_moe"] = n_moe
            if expert_ff != sizes["d_ff"]:
                sizes["d_ff_e"] = expert_ff
        shared_ff = r.size("n_shared_experts", zero_ok=True) * expert_ff
        if shared_ff:
            opts["n_shared_experts"] = 1
            if shared_ff != expert_ff:
                sizes["d_ff_s"] = shared_ff
    r.notes.append("multi-head latent attention: the KV cache holds r_kv + d_rope elements per token and layer")
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
        final_norm=True,
        norm_position="pre",
        tie_output=r.flag("tie_word_embeddings"),
        **opts,
    )


_V32_KEYS = (
    "attention_bias attention_dropout bos_token_id eos_token_id first_k_dense_replace head_dim hidden_act "
    "hidden_size index_head_dim index_n_heads index_topk initializer_range intermediate_size kv_lora_rank "
    "layer_types max_position_embeddings mlp_bias mlp_layer_types moe_intermediate_size n_group n_routed_experts "
    "n_shared_experts norm_topk_prob num_attention_heads num_experts_per_tok num_hidden_layers num_key_value_heads "
    "num_local_experts output_router_logits pad_token_id q_lora_rank qk_head_dim qk_nope_head_dim qk_rope_head_dim "
    "rms_norm_eps rope_parameters routed_scaling_factor tie_word_embeddings topk_group use_cache v_head_dim "
    "vocab_size"
)
# layer_types: every layer is "indexed_attention", which picks the cache class (DynamicIndexedLayer)
_V32_NO_EFFECT = no_effect(
    **{**_NO_EFFECT, "cache": "use_cache output_router_logits layer_types"},
    routing=_ROUTING,
    topk="index_topk",
    unread="mlp_bias",
    **{"kv heads": "num_key_value_heads", "mla dims": "qk_head_dim head_dim"},
)
# DeepSeek's own keys in the published config.json that DeepseekV32Config never reads: its MoE
# period and expert-parallel degree, router method names, the MTP depth (a layer not built)
_DEEPSEEK_LEGACY = "ep_size moe_layer_freq scoring_func topk_method num_nextn_predict_layers"
_DEFAULTS = {
    "max_position_embeddings": 163840,
    "tie_word_embeddings": False,
    "attention_bias": False,
    "kv_lora_rank": 512,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "moe_intermediate_size": 2048,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "num_experts_per_tok": 8,
}

DEEPSEEK_V32 = ModelType(
    model_type="deepseek_v32",
    config_class="DeepseekV32Config",
    model_class="DeepseekV32ForCausalLM",
    read=read_mla_moe,
    defaults={
        **_DEFAULTS,
        "vocab_size": 129280,
        "hidden_size": 7168,
        "intermediate_size": 18432,
        "num_hidden_layers": 61,
        "num_attention_heads": 128,
        "q_lora_rank": 1536,
        "qk_nope_head_dim": 128,
        "first_k_dense_replace": 3,
        "index_head_dim": 128,
        "index_n_heads": 64,
        "index_topk": 2048,
    },
    config_keys=keys(_V32_KEYS),
    no_param_effect=_V32_NO_EFFECT,
    aliases={"num_local_experts": "n_routed_experts"},
    legacy_keys=keys(_DEEPSEEK_LEGACY + " num_experts"),
    pad_default=None,
    family="moe",
)

GLM_MOE_DSA = ModelType(
    model_type="glm_moe_dsa",
    config_class="GlmMoeDsaConfig",
    model_class="GlmMoeDsaForCausalLM",
    read=read_mla_moe,
    defaults={
        **_DEFAULTS,
        "max_position_embeddings": 202752,
        "vocab_size": 154880,
        "hidden_size": 6144,
        "intermediate_size": 12288,
        "num_hidden_layers": 78,
        "num_attention_heads": 64,
        "q_lora_rank": 2048,
        "qk_nope_head_dim": 192,
        "v_head_dim": 256,
        "first_k_dense_replace": 3,
        "index_head_dim": 128,
        "index_n_heads": 32,
        "index_topk": 2048,
    },
    config_keys=keys(_V32_KEYS + " indexer_types"),
    no_param_effect=_V32_NO_EFFECT,
    aliases={"num_local_experts": "n_routed_experts"},
    # GLM-5's config.json: the indexer schedule GlmMoeDsaConfig pops into indexer_types (read),
    # and keys it never reads (rope and indexer-rope layouts, router dtype, MTP top-k sharing)
    legacy_keys=keys(
        _DEEPSEEK_LEGACY + " num_experts index_topk_pattern index_topk_freq index_skip_topk_offset "
        "indexer_rope_interleave index_share_for_mtp_iteration moe_router_dtype pretraining_tp rope_interleave"
    ),
    pad_default=None,
    family="moe",
)

MISTRAL4 = ModelType(
    model_type="mistral4",
    config_class="Mistral4Config",
    model_class="Mistral4ForCausalLM",
    read=read_mla_moe,
    defaults={
        **_DEFAULTS,
        "max_position_embeddings": 1048576,
        "vocab_size": 131072,
        "hidden_size": 4096,
        "intermediate_size": 12288,
        "num_hidden_layers": 36,
        "num_attention_heads": 32,
        "kv_lora_rank": 256,
        "q_lora_rank": 1024,
        "qk_nope_head_dim": 64,
        "n_routed_experts": 128,
        "num_experts_per_tok": 4,
        "first_k_dense_replace": 0,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id first_k_dense_replace head_dim hidden_act "
        "hidden_size initializer_range intermediate_size kv_lora_rank max_position_embeddings moe_intermediate_size "
        "n_group n_routed_experts n_shared_experts norm_topk_prob num_attention_heads num_experts_per_tok "
        "num_hidden_layers num_key_value_heads num_local_experts output_router_logits pad_token_id pretraining_tp "
        "q_lora_rank qk_head_dim qk_nope_head_dim qk_rope_head_dim rms_norm_eps rope_interleave rope_parameters "
        "routed_scaling_factor tie_word_embeddings topk_group use_cache v_head_dim vocab_size"
    ),
    no_param_effect=no_effect(
        **{**_NO_EFFECT, "rope": "rope_parameters rope_interleave"},
        routing=_ROUTING,
        tp="pretraining_tp",
        **{"kv heads": "num_key_value_heads", "mla dims": "qk_head_dim head_dim"},
    ),
    aliases={"num_local_experts": "n_routed_experts"},
    legacy_keys=keys(_DEEPSEEK_LEGACY),
    pad_default=11,
    family="moe",
)

RECORDS = (DEEPSEEK_V32, GLM_MOE_DSA, MISTRAL4)
