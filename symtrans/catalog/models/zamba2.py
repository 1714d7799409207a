"""Zyphra's Zamba2 (Glorioso et al. 2024, arXiv:2411.15242): a Mamba 2 backbone in which some
layers ("hybrid") first run a shared transformer block on the concatenation of the hidden state
and the token embeddings, read onto the engine's ``mamba2|zamba2_hybrid`` stack
(engine/zamba2.py; N_hyb hybrid layers, the rest Mamba 2).

Read off transformers 5.24's ``models/zamba2`` (Zamba2Config, modeling_zamba2.py); checked on
the meta device, by the key audit, by FlopCounterMode and by the real cache of a tiny model
(tests/test_kv_cache_real.py: K/V per token at the hybrid layers, the Mamba 2 conv and SSM state
per sequence at every layer):

* the layers are ``layers_block_type`` (alias ``layer_types``; "hybrid", else a Mamba 2 layer,
  4.x's "mamba" remapped to "linear_attention"), else the class's 54 layers, 9 of them hybrid;
  num_hidden_layers must equal their number (Zamba2Config's layer-type check);
* every layer: an RMSNorm and a Mamba 2 mixer (Zamba2MambaMixer): d_inner = mamba_expand x
  hidden_size, n_mamba_heads heads, mamba_ngroups groups of mamba_d_state; in_proj and out_proj
  biased by ``add_bias_linear``; the conv1d always has a bias (``use_conv_bias`` is not read);
* a hybrid layer adds a d_model x d_model map (no bias) and a use of a shared block
  (Zamba2AttentionDecoderLayer): RMSNorm of 2 x hidden_size, attention at that width with
  head_dim = 2 x hidden_size // num_attention_heads (no biases, rotary only with
  ``use_mem_rope``), an RMSNorm and a gated MLP of intermediate_size (4 x hidden_size when null;
  biases with ``add_bias_linear``), with LoRA adapters of ``adapter_rank`` per use on the MLP's
  gate and up maps, and on q, k, v with ``use_shared_attention_adapter``;
* weight sharing: ``num_mem_blocks`` blocks are used round-robin, so min(num_mem_blocks, N_hyb)
  are stored, each with the adapters of its own uses (N_hyb adapter sets in all); with
  ``tie_word_embeddings`` false transformers 5.24 ties none of them, so every hybrid layer keeps
  its own block and its block's adapter slots: N_hyb blocks and, with N_hyb = q x num_mem_blocks + m,
  m (q+1)^2 + (num_mem_blocks - m) q^2 adapter sets (checked on the meta device);
* the LM head is tied by ``tie_word_embeddings``; a final RMSNorm.
"""

from __future__ import annotations

from typing import Any

from symtrans.catalog.models.hybrids import kv_heads
from symtrans.catalog.models.record import ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, gated_ffn, show
from symtrans.engine.spec import Spec

_MAMBA = ("linear_attention", "mamba")  # "mamba": the 4.x name remap_legacy_layer_types renames
_DEFAULT_HYBRID = 9  # Zamba2Config.__post_init__'s 54 layers: 1 + 7 x (5 + 1) + 4 + 1 + 3 + 1 + 2


def _layers(r: Reader) -> tuple[int, int]:
    """(N, N_hyb): the layers and the hybrid ones, as Zamba2Config.__post_init__ settles them.

    Raises:
        ConfigError: a malformed list; num_hidden_layers disagreeing with it (transformers refuses);
            layer_types without layers_block_type (it builds, but hybrid_layer_ids stay the default's).
    """
    if "layer_types" in r.cfg and "layers_block_type" not in r.cfg:
        raise ConfigError(
            f"layer_types alone: {r.cls} sets it after __post_init__, which derives hybrid_layer_ids from the default "
            "layers, so the adapters and the forward disagree with it; give layers_block_type"
        )
    key, types = r.lookup("layers_block_type")
    n_given = r.size("num_hidden_layers")
    if key is None or types is None:
        if n_given != 54:
            raise ConfigError(
                f"num_hidden_layers {n_given} without layers_block_type: {r.cls} builds its 54 default "
                "layer types, and transformers refuses the mismatch; give layers_block_type"
            )
        r.notes.append(f"no layers_block_type: {r.cls}'s 54 layers, {_DEFAULT_HYBRID} of them hybrid")
        return 54, _DEFAULT_HYBRID
    if not isinstance(types, list) or any(not isinstance(t, str) or t not in (*_MAMBA, "hybrid") for t in types):
        raise ConfigError(f"{key} must be a list of hybrid / linear_attention / mamba, not {show(types)}")
    if len(types) != n_given:
        raise ConfigError(
            f"num_hidden_layers ({n_given}) must equal the {len(types)} entries of {key} (Zamba2Config refuses it)"
        )
    if not types:
        raise ConfigError(f"{key} is empty: a Zamba2 model of no layers")
    return len(types), sum(t == "hybrid" for t in types)


def _stored(r: Reader, n_hyb: int, blocks: int, tied: bool) -> tuple[int, int]:
    """(N_mem, N_adp): shared blocks and adapter sets stored (closed form, see the module docstring)."""
    if tied:
        return min(blocks, n_hyb), n_hyb
    q, m = divmod(n_hyb, blocks)
    r.notes.append(
        f"tie_word_embeddings false: {r.cls} unties the shared blocks too, {n_hyb} blocks (one per hybrid layer)"
    )
    return n_hyb, m * (q + 1) ** 2 + (blocks - m) * q**2


def read_zamba2(r: Reader) -> Spec:
    """The Spec of a Zamba2ForCausalLM config.

    Raises:
        ConfigError: a malformed size or layer list; n_mamba_heads not dividing mamba_expand x
            hidden_size, mamba_ngroups not dividing the heads, num_key_value_heads not dividing
            num_attention_heads, or attention adapters with grouped K/V heads or heads not dividing
            2 x hidden_size (each builds, but no forward runs); an odd attention head width
            (Zamba2Config refuses it).
    """
    n, n_hyb = _layers(r)
    d = r.size("hidden_size")
    tied = r.flag("tie_word_embeddings")
    d_inner = r.size("mamba_expand") * d
    heads, groups = r.size("n_mamba_heads"), r.size("mamba_ngroups")
    if d_inner % heads:
        raise ConfigError(f"n_mamba_heads ({heads}) must divide mamba_expand x hidden_size ({d_inner})")
    if heads % groups:
        raise ConfigError(f"mamba_ngroups ({groups}) must divide n_mamba_heads ({heads}): heads share B and C by group")
    head_width = r.cfg.get("mamba_headdim", d_inner // heads)
    if head_width != d_inner // heads:
        raise ConfigError(
            f"mamba_headdim {show(head_width)} is not d_inner / n_mamba_heads ({d_inner // heads}): no forward"
        )
    sizes: dict[str, int] = dict(d_model=d, V=r.size("vocab_size"), N=n, L_max=r.size("max_position_embeddings"))
    sizes.update(
        d_inner=d_inner,
        h_ssm=heads,
        g_ssm=groups,
        d_state=r.size("mamba_d_state"),
        d_conv=r.size("mamba_d_conv"),
        L_chunk=r.size("chunk_size"),
    )
    bias = r.flag("add_bias_linear", note=False)
    opts: dict[str, Any] = dict(ssm_bias=bias, ssm_conv_bias=True)
    mixers, rotary = "mamba2", False
    h = r.size("num_attention_heads")
    d_k = 2 * d // h
    if r.given("attention_head_dim"):  # set after __post_init__, so it wins (alias head_dim)
        d_k = r.size("attention_head_dim")
    if d_k % 2:  # Zamba2Config's validate_rope, whatever use_mem_rope says
        raise ConfigError(f"the attention head width {d_k} is odd: transformers refuses it (RoPE rotates pairs)")
    if n_hyb:
        h_kv = kv_heads(r, h)
        if h % h_kv:
            raise ConfigError(f"num_attention_heads ({h}) is not a multiple of num_key_value_heads ({h_kv})")
        if d_k == 0:
            raise ConfigError(f"num_attention_heads ({h}) exceeds 2 x hidden_size ({2 * d}): heads 0 wide")
        width = r.cfg.get("attention_hidden_size", 2 * d)
        if width != 2 * d:
            raise ConfigError(
                f"attention_hidden_size {show(width)} is not 2 x hidden_size ({2 * d}): the shared block reads the "
                "concatenation of the hidden state and the embeddings, so no forward runs"
            )
        adapt_attention = r.flag("use_shared_attention_adapter", note=False)
        if adapt_attention and (h_kv != h or h * d_k != 2 * d):
            raise ConfigError(
                "use_shared_attention_adapter with num_key_value_heads below num_attention_heads, or heads not "
                "dividing 2 x hidden_size: the adapters' 2 x hidden_size outputs cannot add to q, k, v (no forward)"
            )
        d_ff = r.size("intermediate_size", 4 * d, f"4 x hidden_size = {4 * d}", nullable=True)
        n_mem, n_adp = _stored(r, n_hyb, r.size("num_mem_blocks"), tied)
        sizes.update(h=h, d_k=d_k, d_ff=d_ff, N_mem=n_mem, N_adp=n_adp, r_adp=r.size("adapter_rank"))
        if h_kv != h:
            sizes["h_kv"] = h_kv
        if n_hyb < n:
            sizes["N_hyb"] = n_hyb
        mixers = "mamba2|zamba2_hybrid" if n_hyb < n else "zamba2_hybrid"
        rotary = r.flag("use_mem_rope", note=False)
        opts.update(shared_attention_adapter=adapt_attention)
        if bias:
            opts["ffn_bias"] = True
    return Spec(
        family="decoder-only",
        sizes=sizes,
        mixers=mixers,
        mixer_only=True,
        norm="rmsnorm",
        norm_position="pre",
        final_norm=True,
        bias=False,
        ffn=gated_ffn("hidden_act", r.cfg.get("hidden_act", "gelu")),  # Zamba2MLP: ACT2FN[hidden_act], gated
        positional="rotary" if rotary else "none",
        tie_output=tied,
        **opts,
    )


ZAMBA2 = ModelType(
    model_type="zamba2",
    config_class="Zamba2Config",
    model_class="Zamba2ForCausalLM",
    read=read_zamba2,
    defaults={
        "vocab_size": 32000,
        "max_position_embeddings": 4096,
        "hidden_size": 2560,
        "num_hidden_layers": 54,
        "mamba_d_state": 64,
        "mamba_d_conv": 4,
        "mamba_expand": 2,
        "mamba_ngroups": 1,
        "n_mamba_heads": 8,
        "chunk_size": 256,
        "add_bias_linear": False,
        "intermediate_size": None,
        "num_attention_heads": 32,
        "num_key_value_heads": None,
        "num_mem_blocks": 1,
        "use_shared_attention_adapter": False,
        "adapter_rank": 128,
        "use_mem_rope": False,
        "tie_word_embeddings": True,
    },
    config_keys=keys(
        "vocab_size max_position_embeddings hidden_size num_hidden_layers layers_block_type layer_types "
        "mamba_d_state mamba_d_conv mamba_expand mamba_ngroups time_step_min time_step_max time_step_floor "
        "n_mamba_heads use_mamba_kernels use_conv_bias chunk_size use_mem_eff_path add_bias_linear "
        "intermediate_size hidden_act num_attention_heads num_key_value_heads attention_dropout num_mem_blocks "
        "use_shared_attention_adapter adapter_rank use_mem_rope rope_parameters initializer_range rms_norm_eps "
        "use_cache num_logits_to_keep pad_token_id bos_token_id eos_token_id use_long_context tie_word_embeddings "
        "head_dim"
    ),
    no_param_effect=no_effect(
        positions="max_position_embeddings use_long_context",
        dropout="attention_dropout",
        token="bos_token_id eos_token_id pad_token_id",
        act="hidden_act",
        init="initializer_range time_step_floor time_step_max",
        clip="time_step_min",
        eps="rms_norm_eps",
        rope="rope_parameters use_mem_rope",
        cache="use_cache num_logits_to_keep",
        kernel="chunk_size use_mamba_kernels use_mem_eff_path",
        unread="use_conv_bias",
    ),
    aliases={"layer_types": "layers_block_type", "head_dim": "attention_head_dim"},
    # Zamba2's published files also carry values Zamba2Config.__post_init__ derives; transformers 5.24
    # sets such keys after it, so they win: attention_head_dim is read as d_k (alias head_dim),
    # attention_hidden_size and mamba_headdim are checked against the widths the forward needs,
    # kv_channels, num_query_groups and hybrid_layer_ids shape nothing (hybrid_layer_ids is recomputed).
    legacy_keys=keys(
        "attention_hidden_size attention_head_dim mamba_headdim kv_channels num_query_groups hybrid_layer_ids "
        "rope_theta"
    ),
    pad_default=0,
    family="hybrid",
)

RECORDS = (ZAMBA2,)
