"""Dense decoders that map onto the engine's existing parts: one record each, read by a
:class:`DenseLayout` (what the type's config keys switch), never by ``model_type`` branches.

A new Llama-shaped decoder type is one record here (its layout, defaults, keys and the keys
that change no parameter) plus its fixture; see ``catalog/models/__init__.py``.  Each layout
was read off the transformers 5.24 modeling file and is checked on the meta device (and by
FlopCounterMode) in tests/test_model_types.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from symtrans.catalog.models.record import DECODER_NO_EFFECT, ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_rotary_head, show, window_size
from symtrans.engine.spec import Spec


@dataclass(frozen=True)
class DenseLayout:
    """How one dense decoder type's config becomes a Spec (RMSNorm before each sublayer,
    rotary positions, grouped-query attention, an untied or tied LM head unless ``options``
    say otherwise).

    Attributes:
        ffn: ``swiglu`` (gate, up, down; a fused gate_up_proj counts the same) or ``mlp``
            (up, down: ReLU^2 in Arcee and Nemotron).
        attention_bias_key: the key that biases q, k, v and o together.
        qkv_bias_key: the key that biases q, k and v only.
        out_bias_key: the key that biases o alone.
        mlp_bias_key: the key that biases the feed-forward maps.
        options: further Spec options, fixed for the type (norms, QK norms).
        kv_null, head_dim_null: a null ``num_key_value_heads`` / ``head_dim`` in the file
            means num_attention_heads / hidden_size // num_attention_heads (the config's
            ``__post_init__``); False where transformers refuses null (a strict int field, or
            an attention that reads the None).
        divides: the config class requires num_attention_heads to divide hidden_size.
        square_out: the attention's o_proj is hidden_size x hidden_size whatever the heads
            (HeliumAttention): counted only when h * head_dim = hidden_size.
        default_layer_types: the config class's rule for ``layer_types`` when the file gives
            none, ``(reader, n_layers, sliding_window) -> list``; None for a type without
            windows.  The windowed layers become the Spec's ``w`` and ``N_w`` (FLOPs and KV cache).
        window_switch: a key that must be true for any layer to slide (SmolLM3's
            ``use_sliding_window``: its attention ignores layer_types without it).
        layer_types_ignored: the attention reads ``sliding_window`` on every layer and never
            ``layer_types`` (Ministral3Attention): the class's rule applies whatever the file says.
        head_dim_required: the attention reads ``config.head_dim`` and fails on its None
            default (MinistralAttention): a config without one is refused.
    """

    ffn: str = "swiglu"
    attention_bias_key: str | None = None
    qkv_bias_key: str | None = None
    out_bias_key: str | None = None
    mlp_bias_key: str | None = None
    options: tuple[tuple[str, Any], ...] = ()
    kv_null: bool = True
    head_dim_null: bool = True
    divides: bool = False
    square_out: bool = False
    default_layer_types: Callable[[Reader, int, int | None], list[str]] | None = None
    window_switch: str | None = None
    layer_types_ignored: bool = False
    head_dim_required: bool = False
    kv_required: bool = False

    def read(self, r: Reader) -> Spec:
        """The Spec of ``r.cfg``.

        ``num_key_value_heads`` null (or a None class default) is num_attention_heads;
        ``head_dim`` null (or a None default) is hidden_size // num_attention_heads, rounded
        down as the attention's q_proj is (h * (d // h) outputs).

        Raises:
            ConfigError: a malformed size, heads that do not divide, an odd rotary head.
        """
        d = r.size("hidden_size")
        h = r.size("num_attention_heads")
        if self.divides and d % h:
            raise ConfigError(f"num_attention_heads ({h}) does not divide hidden_size ({d}), which {r.cls} requires")
        if self.kv_required and not r.given("num_key_value_heads"):
            raise ConfigError(
                f"num_key_value_heads must be given: {r.model} reads it and cannot build with the default null"
            )
        h_kv = self._derived(r, "num_key_value_heads", h, f"num_attention_heads = {h}", self.kv_null)
        if h_kv > h:
            raise ConfigError(f"num_key_value_heads ({h_kv}) exceeds num_attention_heads ({h})")
        if h % h_kv:
            raise ConfigError(f"num_attention_heads ({h}) is not a multiple of num_key_value_heads ({h_kv})")
        if self.head_dim_required and not r.given("head_dim"):
            raise ConfigError(f"head_dim must be given: {r.model} reads it and cannot build with the default null")
        d_k = self._derived(r, "head_dim", d // h, f"hidden_size // num_attention_heads = {d // h}", self.head_dim_null)
        if self.square_out and d_k * h != d:
            raise ConfigError(
                f"num_attention_heads x head_dim = {h} x {d_k} is not hidden_size ({d}): {r.model}'s o_proj is "
                "hidden_size x hidden_size whatever the heads, which symtrans does not model (nor can the model run)"
            )
        check_rotary_head(r, "head_dim", d_k)
        sizes = dict(
            d_model=d,
            d_ff=r.size("intermediate_size"),
            h=h,
            N=r.size("num_hidden_layers"),
            V=r.size("vocab_size"),
            L_max=r.size("max_position_embeddings"),
        )
        if h_kv != h:
            sizes["h_kv"] = h_kv
        if d_k * h != d:
            sizes["d_k"] = d_k
        if self.default_layer_types is not None:
            sizes.update(self._windows(r, sizes["N"]))
        opts: dict[str, Any] = dict(
            norm="rmsnorm", bias=False, ffn=self.ffn, positional="rotary", final_norm=True, norm_position="pre"
        )
        if self.attention_bias_key and r.flag(self.attention_bias_key):
            opts["attention_bias"] = True
        if self.qkv_bias_key:
            opts["qkv_bias"] = r.flag(self.qkv_bias_key)
        if self.out_bias_key:
            opts["out_bias"] = r.flag(self.out_bias_key)
        if self.mlp_bias_key and r.flag(self.mlp_bias_key):
            opts["ffn_bias"] = True
        opts.update(self.options)
        for key in ("attention_bias", "mlp_bias"):  # a Llama key this class has not: transformers ignores it
            if key in r.cfg and key not in r.defaults:
                v = r.cfg[key]
                if not isinstance(v, bool):
                    raise ConfigError(f"{key} must be true or false, not {show(v)}")
                if v:
                    r.notes.append(f"key {key} is true, but {r.model} (transformers 5.x) has no such setting: ignored")
        return Spec(family="decoder-only", sizes=sizes, tie_output=r.flag("tie_word_embeddings"), **opts)

    def _windows(self, r: Reader, n: int) -> dict[str, int]:
        """``w`` (and ``N_w`` when only some layers slide) from ``sliding_window`` and
        ``layer_types`` (or the class's rule for it); {} without a window."""
        k, w = r.lookup("sliding_window")
        w = r.defaults.get("sliding_window") if k is None else window_size(r, "sliding_window", w)
        types = None if self.layer_types_ignored else r.cfg.get("layer_types")
        if types is None:
            assert self.default_layer_types is not None
            types = self.default_layer_types(r, n, w)
        elif not isinstance(types, list) or any(t not in ("full_attention", "sliding_attention") for t in types):
            raise ConfigError('layer_types must be a list of "full_attention" and "sliding_attention"')
        elif len(types) != n:
            raise ConfigError(f"layer_types has {len(types)} entries for num_hidden_layers {n}")
        n_w = sum(t == "sliding_attention" for t in types)
        if self.window_switch is not None and not r.flag(self.window_switch, note=False):
            n_w = 0
        if w is None or n_w == 0:
            return {}
        r.notes.append(f"sliding_window {w} on {n_w} of the {n} layers (layer_types): FLOPs and KV cache")
        return {"w": w} if n_w == n else {"w": w, "N_w": n_w}

    @staticmethod
    def _derived(r: Reader, key: str, derived: int, shown: str, null_ok: bool) -> int:
        """``key`` as a size; missing with a None class default, or null where allowed, is
        ``derived`` (noted)."""
        k, v = r.lookup(key)
        if k is not None and v is None:
            if not null_ok:
                raise ConfigError(f"{k} must be a positive integer, not null ({r.model} has no fallback for null)")
            return r.size(key, derived, shown, nullable=True)
        if k is None and r.defaults.get(key) is None:
            return r.size(key, derived, shown)
        return r.size(key)


# Kyutai's Helium: Llama-shaped; attention_bias biases q, k, v (not o), mlp_bias the three GLU maps.
HELIUM = ModelType(
    model_type="helium",
    config_class="HeliumConfig",
    model_class="HeliumForCausalLM",
    read=DenseLayout(
        qkv_bias_key="attention_bias", mlp_bias_key="mlp_bias", kv_null=False, head_dim_null=False, square_out=True
    ).read,
    defaults={
        "vocab_size": 48000,
        "hidden_size": 2560,
        "intermediate_size": 7040,
        "num_hidden_layers": 24,
        "num_attention_heads": 20,
        "num_key_value_heads": 20,
        "head_dim": 128,
        "max_position_embeddings": 4096,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "mlp_bias": False,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size initializer_range intermediate_size max_position_embeddings mlp_bias num_attention_heads num_hidden_layers num_key_value_heads pad_token_id rms_norm_eps rope_parameters tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(**DECODER_NO_EFFECT),
    pad_default=3,
    family="dense",
)


# Arcee (AFM): Llama-shaped with a two-map ReLU^2 MLP (up, down; no gate).
ARCEE = ModelType(
    model_type="arcee",
    config_class="ArceeConfig",
    model_class="ArceeForCausalLM",
    read=DenseLayout(ffn="mlp", attention_bias_key="attention_bias", mlp_bias_key="mlp_bias", divides=True).read,
    defaults={
        "vocab_size": 32000,
        "hidden_size": 2560,
        "intermediate_size": 18432,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": None,
        "max_position_embeddings": 4096,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "mlp_bias": False,
        "head_dim": None,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size initializer_range intermediate_size max_position_embeddings mlp_bias num_attention_heads num_hidden_layers num_key_value_heads pad_token_id rms_norm_eps rope_parameters tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(**DECODER_NO_EFFECT),
    pad_default=None,
    family="dense",
)


# ByteDance Seed-OSS: attention_bias on q, k, v, attention_out_bias on o, mlp_bias on the GLU.
SEED_OSS = ModelType(
    model_type="seed_oss",
    config_class="SeedOssConfig",
    model_class="SeedOssForCausalLM",
    read=DenseLayout(qkv_bias_key="attention_bias", out_bias_key="attention_out_bias", mlp_bias_key="mlp_bias").read,
    defaults={
        "vocab_size": 155136,
        "hidden_size": 4096,
        "intermediate_size": 27648,
        "num_hidden_layers": 64,
        "num_attention_heads": 80,
        "num_key_value_heads": 8,
        "max_position_embeddings": 524288,
        "tie_word_embeddings": False,
        "attention_bias": True,
        "attention_out_bias": False,
        "mlp_bias": False,
        "head_dim": 128,
    },
    config_keys=keys(
        "attention_bias attention_dropout attention_out_bias bos_token_id eos_token_id head_dim hidden_act hidden_size initializer_range intermediate_size max_position_embeddings mlp_bias num_attention_heads num_hidden_layers num_key_value_heads pad_token_id pretraining_tp residual_dropout rms_norm_eps rope_parameters tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        **{**DECODER_NO_EFFECT, "dropout": "attention_dropout residual_dropout"}, tp="pretraining_tp"
    ),
    pad_default=1,
    family="dense",
)


# Baidu ERNIE 4.5 (dense): use_bias biases every linear map (q, k, v, o and the GLU).
ERNIE4_5 = ModelType(
    model_type="ernie4_5",
    config_class="Ernie4_5Config",
    model_class="Ernie4_5ForCausalLM",
    read=DenseLayout(attention_bias_key="use_bias", mlp_bias_key="use_bias").read,
    defaults={
        "vocab_size": 103424,
        "hidden_size": 1024,
        "intermediate_size": 3072,
        "num_hidden_layers": 18,
        "num_attention_heads": 16,
        "num_key_value_heads": 2,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": True,
        "use_bias": False,
        "head_dim": 128,
    },
    config_keys=keys(
        "bos_token_id eos_token_id head_dim hidden_act hidden_size initializer_range intermediate_size max_position_embeddings num_attention_heads num_hidden_layers num_key_value_heads pad_token_id rms_norm_eps rope_parameters tie_word_embeddings use_bias use_cache vocab_size"
    ),
    no_param_effect=no_effect(**{k: v for k, v in DECODER_NO_EFFECT.items() if k != "dropout"}),
    pad_default=0,
    family="dense",
)


# GLM-4 (glm): fused gate_up_proj (counted as its two maps), attention_bias on q, k, v; partial rotary (no weights).
GLM = ModelType(
    model_type="glm",
    config_class="GlmConfig",
    model_class="GlmForCausalLM",
    read=DenseLayout(qkv_bias_key="attention_bias", kv_null=False, head_dim_null=False).read,
    defaults={
        "vocab_size": 151552,
        "hidden_size": 4096,
        "intermediate_size": 13696,
        "num_hidden_layers": 40,
        "num_attention_heads": 32,
        "num_key_value_heads": 2,
        "head_dim": 128,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": False,
        "attention_bias": True,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size initializer_range intermediate_size max_position_embeddings num_attention_heads num_hidden_layers num_key_value_heads pad_token_id rms_norm_eps rope_parameters tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(**DECODER_NO_EFFECT),
    pad_default=151329,
    family="dense",
)


# GLM-4-0414 (glm4): glm with four RMSNorms per layer (before and after attention and MLP).
GLM4 = ModelType(
    model_type="glm4",
    config_class="Glm4Config",
    model_class="Glm4ForCausalLM",
    read=DenseLayout(
        qkv_bias_key="attention_bias", options=(("layer_norms", "sandwich"),), kv_null=False, head_dim_null=False
    ).read,
    defaults={
        "vocab_size": 151552,
        "hidden_size": 4096,
        "intermediate_size": 13696,
        "num_hidden_layers": 40,
        "num_attention_heads": 32,
        "num_key_value_heads": 2,
        "head_dim": 128,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": False,
        "attention_bias": True,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size initializer_range intermediate_size max_position_embeddings num_attention_heads num_hidden_layers num_key_value_heads pad_token_id rms_norm_eps rope_parameters tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(**DECODER_NO_EFFECT),
    pad_default=151329,
    family="dense",
)


# NVIDIA Nemotron(-4, Minitron): LayerNorm1P (weight and bias), a two-map ReLU^2 MLP, attention_bias on q, k, v, o, mlp_bias on up and down.
NEMOTRON = ModelType(
    model_type="nemotron",
    config_class="NemotronConfig",
    model_class="NemotronForCausalLM",
    read=DenseLayout(
        ffn="mlp",
        attention_bias_key="attention_bias",
        mlp_bias_key="mlp_bias",
        options=(("norm", "layernorm"),),
        kv_null=False,
        kv_required=True,
    ).read,
    defaults={
        "vocab_size": 256000,
        "hidden_size": 6144,
        "intermediate_size": 24576,
        "num_hidden_layers": 32,
        "num_attention_heads": 48,
        "head_dim": None,
        "num_key_value_heads": None,
        "max_position_embeddings": 4096,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "mlp_bias": False,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size initializer_range intermediate_size max_position_embeddings mlp_bias norm_eps num_attention_heads num_hidden_layers num_key_value_heads pad_token_id rope_parameters tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(**{k: v for k, v in DECODER_NO_EFFECT.items() if k != "eps"}, eps="norm_eps"),
    pad_default=None,
    family="dense",
)


def _ministral_layer_types(r: Reader, n: int, w: int | None) -> list[str]:
    """MinistralConfig.__post_init__: every layer slides when sliding_window is set."""
    return ["sliding_attention" if w is not None else "full_attention"] * n


# Mistral's Ministral-8B: Llama-shaped; its sliding window on the layers layer_types marks (all by default).
MINISTRAL = ModelType(
    model_type="ministral",
    config_class="MinistralConfig",
    model_class="MinistralForCausalLM",
    read=DenseLayout(
        kv_null=False, head_dim_null=False, head_dim_required=True, default_layer_types=_ministral_layer_types
    ).read,
    defaults={
        "vocab_size": 32000,
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": None,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": False,
        "sliding_window": 4096,
    },
    config_keys=keys(
        "attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size initializer_range intermediate_size layer_types max_position_embeddings num_attention_heads num_hidden_layers num_key_value_heads pad_token_id rms_norm_eps rope_parameters sliding_window tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(**DECODER_NO_EFFECT, window="sliding_window layer_types"),
    pad_default=None,
    family="dense",
)


def _smollm3_rope_layers(r: Reader, n: int) -> list[int]:
    """SmolLM3Config.__post_init__'s ``no_rope_layers``: the file's list (1 rotates, 0 is a
    NoPE layer; SmolLM3Attention indexes it per layer, so it needs an entry for each), else
    a NoPE layer every ``no_rope_layer_interval`` layers."""
    flags = r.cfg.get("no_rope_layers")
    if flags is None:
        k = r.size("no_rope_layer_interval", r.defaults["no_rope_layer_interval"])
        return [int((i + 1) % k != 0) for i in range(n)]
    if not isinstance(flags, list) or any(isinstance(f, bool) or not isinstance(f, int) for f in flags):
        raise ConfigError(f"no_rope_layers must be a list of 0 / 1 flags, not {show(flags)}")
    if len(flags) < n:
        raise ConfigError(f"no_rope_layers has {len(flags)} entries for num_hidden_layers {n}")
    return flags


def _smollm3_layer_types(r: Reader, n: int, w: int | None) -> list[str]:
    """SmolLM3Config's rule: the NoPE layers slide when use_sliding_window and a window are set.
    Only the first ``n`` flags count: the config loops over range(num_hidden_layers), so a
    longer no_rope_layers list adds no layer (hypothesis found [0, 0] with one layer)."""
    on = r.flag("use_sliding_window", note=False) and w is not None
    flags = _smollm3_rope_layers(r, n)[:n]
    return ["sliding_attention" if on and not rope else "full_attention" for rope in flags]


_SMOLLM3 = DenseLayout(
    attention_bias_key="attention_bias",
    mlp_bias_key="mlp_bias",
    head_dim_null=False,
    default_layer_types=_smollm3_layer_types,
    window_switch="use_sliding_window",
)


def read_smollm3(r: Reader) -> Spec:
    """SmolLM3: a Llama layout whose NoPE layers skip the rotation (no weights either way);
    ``no_rope_layers`` is checked here because the attention indexes it even when the file
    gives ``layer_types``."""
    _smollm3_rope_layers(r, r.size("num_hidden_layers"))
    return _SMOLLM3.read(r)


# Hugging Face SmolLM3: Llama-shaped, NoPE every 4th layer (no_rope_layers), head_dim read with
# getattr; attention_bias on q, k, v, o; its window only with use_sliding_window.
SMOLLM3 = ModelType(
    model_type="smollm3",
    config_class="SmolLM3Config",
    model_class="SmolLM3ForCausalLM",
    read=read_smollm3,
    defaults={
        "vocab_size": 128256,
        "hidden_size": 2048,
        "intermediate_size": 11008,
        "num_hidden_layers": 36,
        "num_attention_heads": 16,
        "num_key_value_heads": 4,
        "max_position_embeddings": 32768,
        "tie_word_embeddings": True,
        "attention_bias": False,
        "mlp_bias": False,
        "sliding_window": None,
        "use_sliding_window": False,
        "no_rope_layer_interval": 4,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id hidden_act hidden_size initializer_range "
        "intermediate_size layer_types max_position_embeddings mlp_bias no_rope_layer_interval no_rope_layers "
        "num_attention_heads num_hidden_layers num_key_value_heads pad_token_id rms_norm_eps rope_parameters "
        "sliding_window tie_word_embeddings use_cache use_sliding_window vocab_size"
    ),
    no_param_effect=no_effect(
        **DECODER_NO_EFFECT,
        window="sliding_window use_sliding_window layer_types",
        **{"rope layers": "no_rope_layers no_rope_layer_interval"},
    ),
    getattr_keys=("head_dim",),
    pad_default=128004,
    family="dense",
)


def _olmo3_layer_types(r: Reader, n: int, w: int | None) -> list[str]:
    """Olmo3Config.__post_init__: three sliding layers, then one full, repeating."""
    return ["sliding_attention" if (i + 1) % 4 else "full_attention" for i in range(n)]


# AI2's OLMo 3: OLMo 2's layer (RMSNorm after attention and after the MLP, RMSNorms on the whole
# q and k projections), head_dim read with getattr, sliding windows on 3 of every 4 layers.
OLMO3 = ModelType(
    model_type="olmo3",
    config_class="Olmo3Config",
    model_class="Olmo3ForCausalLM",
    read=DenseLayout(
        attention_bias_key="attention_bias",
        options=(("norm_position", "post"), ("qk_norm", "full")),
        head_dim_null=False,
        default_layer_types=_olmo3_layer_types,
    ).read,
    defaults={
        "vocab_size": 50304,
        "hidden_size": 4096,
        "intermediate_size": 11008,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": None,
        "max_position_embeddings": 2048,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "sliding_window": 4096,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id hidden_act hidden_size initializer_range "
        "intermediate_size layer_types max_position_embeddings num_attention_heads num_hidden_layers "
        "num_key_value_heads pad_token_id rms_norm_eps rope_parameters sliding_window tie_word_embeddings "
        "use_cache vocab_size"
    ),
    no_param_effect=no_effect(**DECODER_NO_EFFECT, window="sliding_window layer_types"),
    getattr_keys=("head_dim",),
    pad_default=1,
    family="dense",
)


def _exaone4_layer_types(r: Reader, n: int, w: int | None) -> list[str]:
    """Exaone4Config.__post_init__: every ``sliding_window_pattern``-th layer full, the rest
    sliding; without a window the pattern becomes 0 and the rule divides by it (refused)."""
    if w is None:
        raise ConfigError(
            "sliding_window is null and layer_types is missing: Exaone4Config then derives layer_types "
            "modulo a pattern of 0 and fails; give layer_types"
        )
    k = r.size("sliding_window_pattern")  # a str such as "LLLG" or null fails the same rule
    return ["sliding_attention" if (i + 1) % k else "full_attention" for i in range(n)]


# LG AI EXAONE 4.0: OLMo 2's post-norm layer (RMSNorms after attention and MLP) with per-head
# RMSNorms on q and k, no biases, head_dim read with getattr; 3 sliding layers per full one.
EXAONE4 = ModelType(
    model_type="exaone4",
    config_class="Exaone4Config",
    model_class="Exaone4ForCausalLM",
    read=DenseLayout(
        options=(("norm_position", "post"), ("qk_norm", "head")),
        kv_null=False,
        head_dim_null=False,
        default_layer_types=_exaone4_layer_types,
    ).read,
    defaults={
        "vocab_size": 102400,
        "hidden_size": 4096,
        "intermediate_size": 16384,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 32,
        "max_position_embeddings": 2048,
        "tie_word_embeddings": False,
        "sliding_window": 4096,
        "sliding_window_pattern": 4,
    },
    config_keys=keys(
        "attention_dropout bos_token_id eos_token_id hidden_act hidden_size initializer_range intermediate_size "
        "layer_types max_position_embeddings num_attention_heads num_hidden_layers num_key_value_heads "
        "pad_token_id rms_norm_eps rope_parameters sliding_window sliding_window_pattern tie_word_embeddings "
        "use_cache vocab_size"
    ),
    no_param_effect=no_effect(**DECODER_NO_EFFECT, window="sliding_window sliding_window_pattern layer_types"),
    getattr_keys=("head_dim",),
    pad_default=None,
    family="dense",
)


def _cohere2_layer_types(r: Reader, n: int, w: int | None) -> list[str]:
    """Cohere2Config.__post_init__: every ``sliding_window_pattern``-th layer full (the legacy
    key it pops; 4 without it), the rest sliding."""
    k = r.size("sliding_window_pattern", 4) if "sliding_window_pattern" in r.cfg else 4
    return ["sliding_attention" if (i + 1) % k else "full_attention" for i in range(n)]


# Cohere Command R7B / A (cohere2): Cohere's parallel block (one bias-free LayerNorm a layer),
# attention_bias on q, k, v, o; 3 sliding layers per full one.  Cohere2Config.__post_init__ sets
# head_dim = hidden_size // heads, but a head_dim in the file is set after it and read (getattr).
COHERE2 = ModelType(
    model_type="cohere2",
    config_class="Cohere2Config",
    model_class="Cohere2ForCausalLM",
    read=DenseLayout(
        attention_bias_key="attention_bias",
        options=(
            ("norm", "layernorm"),
            ("norm_bias", False),
            ("parallel_block", True),
            ("layer_norms", "shared"),
        ),
        head_dim_null=False,
        default_layer_types=_cohere2_layer_types,
    ).read,
    defaults={
        "vocab_size": 256000,
        "hidden_size": 8192,
        "intermediate_size": 22528,
        "num_hidden_layers": 40,
        "num_attention_heads": 64,
        "num_key_value_heads": None,
        "max_position_embeddings": 8192,
        "tie_word_embeddings": True,
        "attention_bias": False,
        "sliding_window": 4096,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id hidden_act hidden_size "
        "initializer_range intermediate_size layer_norm_eps layer_types logit_scale max_position_embeddings "
        "num_attention_heads num_hidden_layers num_key_value_heads pad_token_id rope_parameters sliding_window "
        "tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        **{k: v for k, v in DECODER_NO_EFFECT.items() if k != "eps"},
        eps="layer_norm_eps",
        scale="logit_scale",
        window="sliding_window layer_types",
    ),
    getattr_keys=("head_dim",),
    # CohereForAI/c4ai-command-r7b-12-2024: the pattern Cohere2Config pops when layer_types is missing
    legacy_keys=keys("sliding_window_pattern"),
    pad_default=0,
    family="dense",
)


# Tencent Hunyuan (dense, v1): Llama-shaped with per-head RMSNorms on q and k
# (query_layernorm, key_layernorm), attention_bias on q, k, v, o; its head_dim None default
# reaches the attention (head_dim ** -0.5 fails), so a config must give head_dim.
HUNYUAN_V1_DENSE = ModelType(
    model_type="hunyuan_v1_dense",
    config_class="HunYuanDenseV1Config",
    model_class="HunYuanDenseV1ForCausalLM",
    read=DenseLayout(
        attention_bias_key="attention_bias",
        options=(("qk_norm", "head"),),
        head_dim_null=False,
        head_dim_required=True,
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
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eod_token_id eos_token_id head_dim hidden_act hidden_size "
        "initializer_range intermediate_size max_position_embeddings num_attention_heads num_hidden_layers "
        "num_key_value_heads pad_token_id pretraining_tp rms_norm_eps rope_parameters tie_word_embeddings "
        "use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        **{**DECODER_NO_EFFECT, "token": "bos_token_id eod_token_id eos_token_id pad_token_id"}, tp="pretraining_tp"
    ),
    # Tencent's own switches in published Hunyuan configs (use_qk_norm true, use_cla false): no code of
    # transformers 5.24's models/hunyuan_v1_dense reads them; its attention always has the q/k norms.
    # The rest are the training and tokenizer keys of the published tencent/Hy-MT2-7B config.json
    # (tests/fixtures/configs/hy-mt2-7b.json), none of them in that code either
    legacy_keys=keys(
        "use_qk_norm use_cla add_classification_head attention_head_dim cla_share_factor class_num dense_list "
        "im_end_id im_newline_id im_start_id mask_init_id norm_type org_vocab_size pad_id pool_type "
        "text_end_id text_start_id use_rotary_pos_emb"
    ),
    pad_default=0,
    family="dense",
)


_APERTUS = {
    act_params: DenseLayout(
        ffn="mlp",
        attention_bias_key="attention_bias",
        options=(("qk_norm", "head"), ("ffn_act_params", act_params)),
        head_dim_null=False,
    )
    for act_params in (0, 2)
}


def read_apertus(r: Reader) -> Spec:
    """Apertus: ApertusMLP builds transformers' XIELUActivation when ``hidden_act`` is
    "xielu" (its default), whose alpha_p and alpha_n are parameters (one element each, in
    every layer's MLP); any other activation has none."""
    return _APERTUS[2 if r.text("hidden_act") == "xielu" else 0].read(r)


# Swiss AI Apertus: a two-map MLP (up, down) with the xIELU activation, per-head RMSNorms on q and
# k, attention_bias on q, k, v, o, head_dim read with getattr.
APERTUS = ModelType(
    model_type="apertus",
    config_class="ApertusConfig",
    model_class="ApertusForCausalLM",
    read=read_apertus,
    defaults={
        "vocab_size": 131072,
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": None,
        "max_position_embeddings": 65536,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "hidden_act": "xielu",
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id eos_token_id hidden_act hidden_size initializer_range "
        "intermediate_size max_position_embeddings num_attention_heads num_hidden_layers num_key_value_heads "
        "pad_token_id rms_norm_eps rope_parameters tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(**{k: v for k, v in DECODER_NO_EFFECT.items() if k != "act"}),
    getattr_keys=("head_dim",),
    # swiss-ai's own switches in Apertus-8B's config.json (qk_norm true, post_norm false, mlp_bias false):
    # no code of transformers 5.24's models/apertus reads them (q/k norms always, pre-norm, bias-free MLP)
    legacy_keys=keys("qk_norm post_norm mlp_bias"),
    pad_default=3,
    family="dense",
)


# Mistral's Ministral 3 (the text model of Mistral3ForConditionalGeneration, also a CausalLM on its
# own): Llama-shaped, no biases; a null head_dim or num_key_value_heads is refused (strict int fields);
# its window (if any) on every layer, layer_types never read (Ministral3Config warns about it).
MINISTRAL3 = ModelType(
    model_type="ministral3",
    config_class="Ministral3Config",
    model_class="Ministral3ForCausalLM",
    read=DenseLayout(
        kv_null=False, head_dim_null=False, default_layer_types=_ministral_layer_types, layer_types_ignored=True
    ).read,
    defaults={
        "vocab_size": 131072,
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 34,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "max_position_embeddings": 262144,
        "tie_word_embeddings": False,
        "sliding_window": None,
    },
    config_keys=keys(
        "attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size initializer_range "
        "intermediate_size max_position_embeddings num_attention_heads num_hidden_layers num_key_value_heads "
        "pad_token_id rms_norm_eps rope_parameters sliding_window tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(**DECODER_NO_EFFECT, window="sliding_window"),
    # a Mistral-style layer_types: Ministral3Config only warns, Ministral3Attention never reads it
    legacy_keys=keys("layer_types"),
    pad_default=11,
    family="dense",
)


RECORDS = (
    MINISTRAL3,
    APERTUS,
    HUNYUAN_V1_DENSE,
    COHERE2,
    EXAONE4,
    OLMO3,
    SMOLLM3,
    MINISTRAL,
    HELIUM,
    ARCEE,
    SEED_OSS,
    ERNIE4_5,
    GLM,
    GLM4,
    NEMOTRON,
)
