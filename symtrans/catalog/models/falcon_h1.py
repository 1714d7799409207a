"""TII's Falcon-H1 (Falcon-LLM team 2025, arXiv:2507.22448): every layer runs grouped-query
attention and a Mamba 2 mixer in parallel on the same normed input, then a SwiGLU MLP, read
onto the engine's ``attention_mamba2`` layer kind (engine/parallel.py), all N layers of it.

Read off transformers 5.24's ``models/falcon_h1`` (FalconH1Config, modeling_falcon_h1.py);
checked on the meta device, by the key audit, by FlopCounterMode and by the real cache of a
tiny model (tests/test_kv_cache_real.py: per layer, K/V per token and the Mamba 2 conv and SSM
state per sequence):

* attention: q, k, v, o biased by ``attention_bias``, rotary positions (no weights),
  ``head_dim`` read with getattr, else hidden_size // num_attention_heads;
* Mamba 2 (FalconH1Mixer): d_inner = ``mamba_d_ssm``, or mamba_expand x hidden_size when it is
  null; mamba_n_heads heads of mamba_d_head ("auto": d_inner // heads; the config checks
  heads x head width = d_inner); ``mamba_proj_bias`` on in_proj, ``projectors_bias`` on out_proj,
  ``mamba_conv_bias`` on the convolution; the gated RMSNorm only with ``mamba_rms_norm``;
* the SwiGLU MLP of intermediate_size (``mlp_bias``), an input and a pre-FFN RMSNorm per layer,
  a final RMSNorm, the head tied by ``tie_word_embeddings``;
* the muP multipliers (embedding, lm_head, attention in/out, key, ssm in/out, the MLP's and the
  SSM's per-part lists) scale activations only: no count changes.
"""

from __future__ import annotations

from symtrans.catalog.models.hybrids import MAMBA2_DEFAULTS, kv_heads, mamba2_sizes
from symtrans.catalog.models.record import DECODER_NO_EFFECT, ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_size, show
from symtrans.engine.spec import Spec


def read_falcon_h1(r: Reader) -> Spec:
    """The Spec of a FalconH1ForCausalLM config.

    Raises:
        ConfigError: a malformed size; ``layer_types`` (FalconH1Config's read-only property);
            mamba_n_heads not dividing d_inner or a head width that disagrees (as
            FalconH1Config.validate_architecture refuses); mamba_n_groups not dividing the heads,
            or num_key_value_heads not dividing num_attention_heads (both build, no forward runs).
    """
    if "layer_types" in r.cfg:
        raise ConfigError(
            f"layer_types is {r.cls}'s read-only layers_block_type (every layer 'hybrid'): transformers refuses it"
        )
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    h_kv = kv_heads(r, h)
    if h % h_kv:
        raise ConfigError(f"num_attention_heads ({h}) is not a multiple of num_key_value_heads ({h_kv})")
    d_k = check_size("head_dim", r.cfg["head_dim"]) if r.given("head_dim") else d // h
    key, d_ssm = r.lookup("mamba_d_ssm")
    if key is None:
        d_ssm = r.defaults["mamba_d_ssm"]
    d_inner = r.size("mamba_expand") * d if d_ssm is None else check_size("mamba_d_ssm", d_ssm)
    sizes: dict[str, int] = dict(
        d_model=d, d_ff=r.size("intermediate_size"), h=h, V=r.size("vocab_size"), N=r.size("num_hidden_layers")
    )
    sizes["L_max"] = r.size("max_position_embeddings")
    opts = mamba2_sizes(r, d_inner, True, sizes)
    if h_kv != h:
        sizes["h_kv"] = h_kv
    if d_k * h != d:
        sizes["d_k"] = d_k
    opts.update(ssm_out_bias=r.flag("projectors_bias", note=False), ssm_gated_norm=r.flag("mamba_rms_norm", note=False))
    if r.flag("attention_bias"):
        opts["attention_bias"] = True
    if r.flag("mlp_bias"):
        opts["ffn_bias"] = True
    if d_ssm is None:
        r.notes.append(f"mamba_d_ssm null: the Mamba 2 width is mamba_expand x hidden_size = {show(d_inner)}")
    return Spec(
        family="decoder-only",
        sizes=sizes,
        mixers="attention_mamba2",
        norm="rmsnorm",
        norm_position="pre",
        final_norm=True,
        bias=False,
        ffn="swiglu",
        positional="rotary",
        tie_output=r.flag("tie_word_embeddings"),
        **opts,
    )


_MULTIPLIERS = (
    "embedding_multiplier lm_head_multiplier mlp_multipliers key_multiplier attention_out_multiplier "
    "attention_in_multiplier ssm_multipliers ssm_in_multiplier ssm_out_multiplier"
)

FALCON_H1 = ModelType(
    model_type="falcon_h1",
    config_class="FalconH1Config",
    model_class="FalconH1ForCausalLM",
    read=read_falcon_h1,
    defaults={
        "vocab_size": 128000,
        "tie_word_embeddings": False,
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "max_position_embeddings": 8192,
        "attention_bias": False,
        "mlp_bias": False,
        "mamba_d_ssm": 1024,
        **MAMBA2_DEFAULTS,  # FalconH1Config's equal BambaConfig's
        "mamba_rms_norm": False,
        "projectors_bias": False,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id hidden_act hidden_size initializer_range "
        "intermediate_size layer_types mamba_chunk_size mamba_conv_bias mamba_d_conv mamba_d_head mamba_d_ssm "
        "mamba_d_state mamba_expand mamba_n_groups mamba_n_heads mamba_norm_before_gate mamba_proj_bias "
        "mamba_rms_norm max_position_embeddings mlp_bias num_attention_heads num_hidden_layers num_key_value_heads "
        "num_logits_to_keep pad_token_id projectors_bias rms_norm_eps rope_parameters tie_word_embeddings "
        "time_step_limit use_cache vocab_size " + _MULTIPLIERS
    ),
    no_param_effect=no_effect(
        **{**DECODER_NO_EFFECT, "cache": "use_cache num_logits_to_keep"},
        kernel="mamba_chunk_size",
        clip="time_step_limit",
        scale=_MULTIPLIERS,
        **{"norm order": "mamba_norm_before_gate"},
    ),
    aliases={"layer_types": "layers_block_type"},
    getattr_keys=("head_dim",),
    # Falcon-H1's published files: attn_layer_indices and mamba_use_mlp (4.x-era keys FalconH1Config
    # 5.x has no field for and its modeling never reads)
    legacy_keys=keys("attn_layer_indices mamba_use_mlp"),
    pad_default=0,
    family="hybrid",
)

RECORDS = (FALCON_H1,)
