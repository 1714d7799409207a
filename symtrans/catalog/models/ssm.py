"""State-space language models without attention: Mamba (Gu & Dao 2023), Falcon Mamba and
Mamba 2 (Dao & Gu 2024), read onto the engine's ``mamba`` / ``mamba2`` layer kinds.

Read off transformers 5.24's ``models/mamba``, ``models/falcon_mamba`` and ``models/mamba2``
(config classes and modeling files); checked on the meta device and by the key audit in
tests/test_model_types.py.  Every layer is RMSNorm -> mixer -> residual (no feed-forward
network: ``mixer_only``), then a final RMSNorm and the LM head; no positions.

What the config classes derive (their ``__post_init__``), and so what is read here:

* ``intermediate_size`` (d_inner) is ``int(expand * hidden_size)`` unless the file gives it:
  MambaConfig derives it, then sets the file's own value over it (falcon-mamba-7b's file says
  expand 16 and intermediate_size 8192; the model is 8192 wide).  Mamba 2's mixer always
  computes ``int(expand * hidden_size)``;
* ``time_step_rank`` ``"auto"`` is ``ceil(hidden_size / 16)`` (Mamba 1's dt_proj rank).
"""

from __future__ import annotations

import math

from symtrans.catalog.models.record import ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_size, show
from symtrans.engine.spec import Spec

_PRE = dict(family="decoder-only", norm="rmsnorm", norm_position="pre", final_norm=True, bias=False, positional="none")


def _d_inner(r: Reader, d: int, given_wins: bool) -> int:
    """d_inner: for Mamba 1 a given ``intermediate_size`` (the config class passes it on as an
    attribute after its ``__post_init__`` derives one, so the file's value is what the mixer
    reads); otherwise ``int(expand * hidden_size)``, as the config class computes it."""
    if given_wins and r.given("intermediate_size"):
        d_inner = r.size("intermediate_size")
        if "expand" in r.cfg and r.cfg["expand"] * d != d_inner:
            r.notes.append(f"key expand {show(r.cfg['expand'])} ignored: {r.model} reads intermediate_size {d_inner}")
        return d_inner
    k, v = r.lookup("expand")
    if k is None:
        expand = r.defaults["expand"]
        r.notes.append(f"key expand missing: used the transformers default {expand} ({r.cls})")
    elif isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 or not math.isfinite(v):
        raise ConfigError(f"expand must be a positive number, not {show(v)}")
    else:
        expand = v
    d_inner = int(expand * d)
    if d_inner < 1:
        raise ConfigError(f"expand x hidden_size = {expand} x {d} leaves no inner channel")
    return d_inner


def _dt_rank(r: Reader, d: int) -> int:
    k, v = r.lookup("time_step_rank")
    if k is None or v == "auto":
        rank = math.ceil(d / 16)
        how = "missing" if k is None else '"auto"'
        r.notes.append(f"time_step_rank {how}: ceil(hidden_size / 16) = {rank} ({r.cls})")
        return rank
    return check_size(k, v)


def read_mamba(r: Reader) -> Spec:
    """A MambaForCausalLM / FalconMambaForCausalLM config (Falcon Mamba's extra RMSNorms on
    dt, B and C have no weights, so both count alike).

    Per layer (d = hidden_size, d_inner = expand x d, r = time_step_rank, s = state_size,
    c = conv_kernel): in_proj d x 2 d_inner, depthwise conv d_inner x c, x_proj
    d_inner x (r + 2 s), dt_proj r x d_inner + d_inner, A_log d_inner x s, D d_inner,
    out_proj d_inner x d, RMSNorm d; ``use_bias`` biases in_proj and out_proj,
    ``use_conv_bias`` the conv.

    Raises:
        ConfigError: a malformed size, expand or time_step_rank.
    """
    d = r.size("hidden_size")
    sizes = dict(
        d_model=d,
        V=r.size("vocab_size"),
        N=r.size("num_hidden_layers"),
        d_inner=_d_inner(r, d, True),
        d_state=r.size("state_size"),
        d_conv=r.size("conv_kernel"),
        dt_rank=_dt_rank(r, d),
    )
    return Spec(
        sizes=sizes,
        mixers="mamba",
        mixer_only=True,
        tie_output=r.flag("tie_word_embeddings"),
        ssm_bias=r.flag("use_bias", note=False),
        ssm_conv_bias=r.flag("use_conv_bias", note=False),
        **_PRE,
    )


def read_mamba2(r: Reader) -> Spec:
    """A Mamba2ForCausalLM config.

    Per layer (d_inner = expand x hidden_size = num_heads x head_dim, which Mamba2Config
    requires; g = n_groups, s = state_size, c = conv_kernel, conv channels
    d_inner + 2 g s): in_proj d x (2 d_inner + 2 g s + num_heads), the conv, dt_bias, A_log
    and D (num_heads each), the gated RMSNorm d_inner, out_proj d_inner x d, RMSNorm d.

    Raises:
        ConfigError: a malformed size; num_heads x head_dim != expand x hidden_size (as
            Mamba2Config refuses); n_groups not dividing num_heads (heads share B and C by
            group: the forward needs it, the engine requires it).
    """
    d = r.size("hidden_size")
    d_inner = _d_inner(r, d, False)
    heads, head_dim = r.size("num_heads"), r.size("head_dim")
    if heads * head_dim != d_inner:
        raise ConfigError(
            f"num_heads x head_dim = {heads} x {head_dim} must equal expand x hidden_size = {d_inner} ({r.cls} requires it)"
        )
    groups = r.size("n_groups")
    if heads % groups:
        raise ConfigError(f"n_groups ({groups}) must divide num_heads ({heads}): heads share B and C by group")
    sizes = dict(
        d_model=d,
        V=r.size("vocab_size"),
        N=r.size("num_hidden_layers"),
        d_inner=d_inner,
        d_state=r.size("state_size"),
        d_conv=r.size("conv_kernel"),
        h_ssm=heads,
        g_ssm=groups,
        L_chunk=r.size("chunk_size"),
    )
    _dt_rank(r, d)  # validated as the config class does; Mamba 2 has no dt_proj, so no weight depends on it
    return Spec(
        sizes=sizes,
        mixers="mamba2",
        mixer_only=True,
        tie_output=r.flag("tie_word_embeddings"),
        ssm_bias=r.flag("use_bias", note=False),
        ssm_conv_bias=r.flag("use_conv_bias", note=False),
        **_PRE,
    )


_MAMBA_DEFAULTS = {
    "vocab_size": 50280,
    "hidden_size": 768,
    "state_size": 16,
    "num_hidden_layers": 32,
    "expand": 2,
    "conv_kernel": 4,
    "use_bias": False,
    "use_conv_bias": True,
    "time_step_rank": "auto",
    "tie_word_embeddings": True,
}
_MAMBA_KEYS = (
    "bos_token_id conv_kernel eos_token_id expand hidden_act hidden_size initializer_range layer_norm_epsilon "
    "num_hidden_layers pad_token_id rescale_prenorm_residual residual_in_fp32 state_size tie_word_embeddings "
    "time_step_floor time_step_init_scheme time_step_max time_step_min time_step_rank time_step_scale "
    "use_associative_scan use_bias use_cache use_conv_bias use_mambapy vocab_size intermediate_size"
)
# The time-step keys set dt_proj's initial values; residual_in_fp32 and the scan switches choose
# a precision or a kernel path; rescale_prenorm_residual rescales out_proj's initial weights.
_MAMBA_QUIET = dict(
    token="bos_token_id eos_token_id pad_token_id",
    act="hidden_act",
    init="initializer_range time_step_floor time_step_init_scheme time_step_max time_step_min time_step_scale "
    "rescale_prenorm_residual",
    eps="layer_norm_epsilon",
    precision="residual_in_fp32",
    cache="use_cache",
)

MAMBA = ModelType(
    model_type="mamba",
    config_class="MambaConfig",
    model_class="MambaForCausalLM",
    read=read_mamba,
    defaults=_MAMBA_DEFAULTS,
    config_keys=keys(_MAMBA_KEYS),
    no_param_effect={**no_effect(**_MAMBA_QUIET), **no_effect(kernel="use_mambapy use_associative_scan")},
    # state-spaces/mamba-130m-hf keeps mamba_ssm's own names beside transformers'
    legacy_keys=keys("d_inner d_model fused_add_norm n_layer pad_vocab_size_multiple rms_norm ssm_cfg"),
    pad_default=0,
    family="ssm",
)

# Falcon Mamba: Mamba 1 with weightless RMSNorms on dt, B and C (mixer_rms_eps their epsilon).
FALCON_MAMBA = ModelType(
    model_type="falcon_mamba",
    config_class="FalconMambaConfig",
    model_class="FalconMambaForCausalLM",
    read=read_mamba,
    defaults=_MAMBA_DEFAULTS,
    config_keys=keys(_MAMBA_KEYS + " mixer_rms_eps"),
    no_param_effect={
        **no_effect(**{**_MAMBA_QUIET, "eps": "layer_norm_epsilon mixer_rms_eps"}),
        **no_effect(kernel="use_mambapy use_associative_scan"),
    },
    pad_default=0,
    family="ssm",
)

MAMBA2 = ModelType(
    model_type="mamba2",
    config_class="Mamba2Config",
    model_class="Mamba2ForCausalLM",
    read=read_mamba2,
    defaults={
        "vocab_size": 32768,
        "hidden_size": 4096,
        "state_size": 128,
        "num_hidden_layers": 64,
        "expand": 2,
        "conv_kernel": 4,
        "num_heads": 128,
        "head_dim": 64,
        "n_groups": 8,
        "chunk_size": 256,
        "use_bias": False,
        "use_conv_bias": True,
        "time_step_rank": "auto",
        "tie_word_embeddings": False,
    },
    config_keys=keys(
        "bos_token_id chunk_size conv_kernel eos_token_id expand head_dim hidden_act hidden_size initializer_range "
        "layer_norm_epsilon n_groups num_heads num_hidden_layers pad_token_id rescale_prenorm_residual "
        "residual_in_fp32 state_size tie_word_embeddings time_step_floor time_step_limit time_step_max "
        "time_step_min time_step_rank use_bias use_cache use_conv_bias vocab_size"
    ),
    no_param_effect={
        **no_effect(
            token="bos_token_id eos_token_id pad_token_id",
            act="hidden_act",
            init="initializer_range time_step_floor time_step_max time_step_min rescale_prenorm_residual",
            eps="layer_norm_epsilon",
            precision="residual_in_fp32",
            cache="use_cache",
            clip="time_step_limit",
            kernel="chunk_size",
            **{"no dt_proj": "time_step_rank"},
        ),
    },
    pad_default=1,
    family="ssm",
)

RECORDS = (MAMBA, FALCON_MAMBA, MAMBA2)
