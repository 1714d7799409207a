"""Gemma 4 (issue 21): ``gemma4_text`` (Gemma4ForCausalLM), read onto the engine's Gemma 4
layer kinds (``engine/gemma4.py``: sliding ``attention``, ``global_attention``,
``shared_attention``, ``shared_global_attention``; one count symbol per kind).

Read off transformers 5.24's ``models/gemma4`` (Gemma4TextConfig, modeling_gemma4.py); checked
on the meta device, by the key audit and FlopCounterMode in tests/test_model_types.py and against
a real forward's cache in tests/test_kv_cache_real.py:

* ``layer_types``: "sliding_attention" / "full_attention" per layer; missing, the config writes
  5 sliding layers in 6 ((i + 1) % 6); the last layer is always made full attention;
* full-attention layers take their own head shape (``Gemma4TextConfig.__post_init__`` writes it
  into ``per_layer_config``): head_dim = ``global_head_dim`` (a kwarg, default 512) and, when
  ``attention_k_eq_v``, num_key_value_heads = ``num_global_key_value_heads`` where given; a
  config re-saved by 5.x carries that ``per_layer_config`` instead, read the same way;
* ``attention_k_eq_v``: full-attention layers build no ``v_proj`` (keys are the values);
* ``num_kv_shared_layers``: the last ones reuse an earlier layer's keys and values
  (``kv_sharing_modes``: no k_proj, v_proj, k_norm); every layer type they have must occur
  before them (else the config raises); ``use_double_wide_mlp`` doubles their MLP;
* ``hidden_size_per_layer_input`` > 0: per-layer inputs (a ``vocab_size_per_layer_input`` x
  N·d_ple table, padding row ``pad_token_id``, its projection and norms);
* ``enable_moe_block``: a router and ``num_experts`` GeGLU experts of ``moe_intermediate_size``
  (``top_k_experts`` per token) beside every layer's MLP;
* ``use_bidirectional_attention`` "vision" (image tokens attend both ways) counts as causal
  text; "all" (every token, and a window halved) is refused.
"""

from __future__ import annotations

from typing import Any

from symtrans.catalog.models.record import ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_size, show, window_size
from symtrans.engine.spec import Spec

_TYPES = ("sliding_attention", "full_attention")


def _layer_types(r: Reader, n: int) -> list[str]:
    types = r.cfg.get("layer_types")
    if types is None:
        types = ["sliding_attention" if (i + 1) % 6 else "full_attention" for i in range(n)]
    elif not isinstance(types, list) or any(t not in _TYPES for t in types):
        raise ConfigError(f"layer_types must be a list of {' / '.join(_TYPES)}, not {show(types)}")
    elif len(types) != n:
        raise ConfigError(f"layer_types has {len(types)} entries for num_hidden_layers {n}")
    types = list(types)
    if types and types[-1] != "full_attention":
        r.notes.append("layer_types ends with a sliding layer: Gemma4TextConfig makes the last layer full attention")
        types[-1] = "full_attention"
    return types


def _heads_divide(h: int, h_kv: int, what: str) -> None:
    """Refuse key/value heads that do not divide the query heads: Gemma4TextAttention builds such a
    layer (its parameter count is defined) but its forward cannot run (``repeat_kv`` repeats each
    key/value head h // h_kv times), so no FLOPs or cache exist to count."""
    if h % h_kv:
        raise ConfigError(
            f"num_attention_heads ({h}) is not a multiple of {what} ({h_kv}): Gemma4TextAttention builds but cannot run"
        )


def _global_shape(r: Reader, types: list[str], d_k: int, h_kv: int) -> tuple[int, int]:
    """(d_kg, h_kvg): the head width and key/value heads of the full-attention layers."""
    plc = r.cfg.get("per_layer_config")
    if plc is None:
        d_kg = check_size("global_head_dim", r.cfg.get("global_head_dim", 512))
        if "global_head_dim" not in r.cfg:
            r.notes.append("key global_head_dim missing: used the transformers default 512 (Gemma4TextConfig)")
        h_kvg = r.cfg.get("num_global_key_value_heads")
        if h_kvg is not None and r.flag("attention_k_eq_v", note=False):
            return d_kg, check_size("num_global_key_value_heads", h_kvg)
        return d_kg, h_kv
    if not isinstance(plc, dict):
        raise ConfigError(f"per_layer_config must be an object of layer overrides, not {show(plc)}")
    shapes = set()
    for key, over in plc.items():
        try:
            i = int(key)
        except (TypeError, ValueError):
            raise ConfigError(f"per_layer_config has a key {show(key)} that is no layer index") from None
        if not 0 <= i < len(types) or not isinstance(over, dict) or set(over) - {"head_dim", "num_key_value_heads"}:
            raise ConfigError(
                f"per_layer_config entry {show(key)} is not a head_dim / num_key_value_heads override of a layer: "
                "symtrans reads Gemma 4's two attention shapes only"
            )
        if types[i] != "full_attention":
            raise ConfigError(f"per_layer_config overrides sliding layer {i}: symtrans reads Gemma 4's two shapes only")
        shapes.add(
            (
                check_size("per_layer_config head_dim", over.get("head_dim", d_k)),
                check_size("per_layer_config num_key_value_heads", over.get("num_key_value_heads", h_kv)),
            )
        )
    full = types.count("full_attention")
    if len(shapes) > 1 or (shapes and len(plc) != full):
        raise ConfigError("per_layer_config gives the full-attention layers different shapes: not modelled")
    r.notes.append("per_layer_config read: the full-attention layers' head_dim and num_key_value_heads")
    return shapes.pop() if shapes else (d_k, h_kv)


def _kind_counts(r: Reader, types: list[str], n: int) -> tuple[int, int, int]:
    """(N_g, N_xs, N_xg): full layers with their own keys, and the KV-sharing sliding and full layers."""
    n_x = r.size("num_kv_shared_layers", zero_ok=True)
    if n_x > n:
        raise ConfigError(f"num_kv_shared_layers ({n_x}) exceeds num_hidden_layers ({n})")
    first = n - n_x
    own, shared = types[:first], types[first:]
    if 0 < n_x < n and set(own) != set(types):
        raise ConfigError(
            "the layers sharing keys and values (num_kv_shared_layers) have a layer type no earlier layer has: "
            "Gemma4TextConfig refuses it"
        )
    return own.count("full_attention"), shared.count("sliding_attention"), shared.count("full_attention")


def read_gemma4_text(r: Reader) -> Spec:
    """The Spec of a Gemma4ForCausalLM config (module docstring).

    Raises:
        ConfigError: a malformed size or layer list; use_bidirectional_attention "all";
            num_kv_shared_layers above num_hidden_layers or sharing a layer type no earlier
            layer has; enable_moe_block without num_experts, top_k_experts or
            moe_intermediate_size; pad_token_id outside the per-layer table.
    """
    bidi = r.cfg.get("use_bidirectional_attention")
    if bidi not in (None, "vision", "all"):
        raise ConfigError(f'use_bidirectional_attention must be "vision", "all" or null, not {show(bidi)}')
    if bidi == "all":
        raise ConfigError(
            'use_bidirectional_attention is "all": every token then attends both ways (and the window is '
            "halved), which symtrans does not model for a decoder"
        )
    d = r.size("hidden_size")
    n = r.size("num_hidden_layers")
    types = _layer_types(r, n)
    rope = r.cfg.get("rope_parameters")
    if rope is not None and (not isinstance(rope, dict) or any(t not in rope for t in set(types))):
        raise ConfigError(
            "rope_parameters must map each layer type of layer_types (sliding_attention, full_attention) to its "
            f"rotary settings, not {show(rope)}: Gemma4TextRotaryEmbedding reads one per type"
        )
    h, h_kv, d_k = r.size("num_attention_heads"), r.size("num_key_value_heads"), r.size("head_dim")
    _heads_divide(h, h_kv, "num_key_value_heads")
    n_g, n_xs, n_xg = _kind_counts(r, types, n)
    n_s = n - n_g - n_xs - n_xg
    sizes: dict[str, int] = dict(d_model=d, d_ff=r.size("intermediate_size"), h=h, h_kv=h_kv, d_k=d_k)
    sizes.update(V=r.size("vocab_size"), N=n, L_max=r.size("max_position_embeddings"))
    kinds = [
        (name, count)
        for name, count in (
            ("attention", n_s),
            ("global_attention", n_g),
            ("shared_attention", n_xs),
            ("shared_global_attention", n_xg),
        )
        if count
    ]
    counts = {"global_attention": "N_g", "shared_attention": "N_xs", "shared_global_attention": "N_xg"}
    for name, count in kinds[1:]:
        sizes[counts[name]] = count
    if n_g or n_xg:
        d_kg, h_kvg = _global_shape(r, types, d_k, h_kv)
        _heads_divide(
            h, h_kvg, "the full-attention layers' key/value heads (num_global_key_value_heads or per_layer_config)"
        )
        sizes["d_kg"] = d_kg
        if n_g:
            sizes["h_kvg"] = h_kvg
    if n_s or n_xs:
        k, w = r.lookup("sliding_window")
        w = window_size(r, "sliding_window", 512 if k is None else w)
        if w is None:
            raise ConfigError("sliding_window is null or 0, but Gemma 4's sliding layers need a window")
        sizes["w"] = w
    opts: dict[str, Any] = {}
    if n_g and r.flag("attention_k_eq_v", note=False):
        opts["k_eq_v"] = True
    if (n_xs or n_xg) and r.flag("use_double_wide_mlp", note=False):
        opts["shared_ffn_double"] = True
    d_ple = r.size("hidden_size_per_layer_input", zero_ok=True)
    if d_ple:
        v_ple = r.size("vocab_size_per_layer_input")
        pad = r.cfg.get("pad_token_id", 0)
        if isinstance(pad, int) and not isinstance(pad, bool) and not -v_ple <= pad < v_ple:
            raise ConfigError(
                f"pad_token_id ({pad}) is not a row of the per-layer table (vocab_size_per_layer_input = {v_ple}): "
                "Gemma4TextModel uses it as that table's padding_idx"
            )
        sizes.update(d_ple=d_ple, V_ple=v_ple)
    if r.flag("enable_moe_block", note=False):
        for key in ("num_experts", "top_k_experts", "moe_intermediate_size"):
            if r.cfg.get(key) is None:
                raise ConfigError(f"enable_moe_block is true but {key} is null or missing: Gemma4TextExperts needs it")
        experts, top = r.size("num_experts"), r.size("top_k_experts")
        if top > experts:
            raise ConfigError(f"top_k_experts ({top}) exceeds num_experts ({experts})")
        sizes.update(E=experts, k=top, d_ff_e=r.size("moe_intermediate_size"))
    if r.flag("attention_bias", note=False):
        opts["attention_bias"] = True
    return Spec(
        family="decoder-only",
        sizes=sizes,
        mixers="|".join(name for name, _ in kinds),
        norm="rmsnorm",
        norm_position="pre",
        layer_norms="sandwich",
        final_norm=True,
        bias=False,
        ffn="geglu",
        positional="rotary",
        qk_norm="head",
        tie_output=r.flag("tie_word_embeddings"),
        **opts,
    )


GEMMA4_TEXT = ModelType(
    model_type="gemma4_text",
    config_class="Gemma4TextConfig",
    model_class="Gemma4ForCausalLM",
    read=read_gemma4_text,
    defaults={
        "vocab_size": 262144,
        "hidden_size": 2304,
        "intermediate_size": 9216,
        "num_hidden_layers": 30,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": True,
        "attention_bias": False,
        "sliding_window": 512,
        "vocab_size_per_layer_input": 262144,
        "hidden_size_per_layer_input": 256,
        "attention_k_eq_v": False,
        "num_kv_shared_layers": 0,
        "enable_moe_block": False,
        "use_double_wide_mlp": False,
        "num_experts": None,
        "top_k_experts": None,
        "moe_intermediate_size": None,
    },
    config_keys=keys(
        "attention_bias attention_dropout attention_k_eq_v bos_token_id enable_moe_block eos_token_id "
        "final_logit_softcapping head_dim hidden_activation hidden_size hidden_size_per_layer_input "
        "initializer_range intermediate_size layer_types max_position_embeddings moe_intermediate_size "
        "num_attention_heads num_experts num_hidden_layers num_key_value_heads num_kv_shared_layers pad_token_id "
        "rms_norm_eps rope_parameters sliding_window tie_word_embeddings top_k_experts use_bidirectional_attention "
        "use_cache use_double_wide_mlp vocab_size vocab_size_per_layer_input"
    ),
    no_param_effect=no_effect(
        positions="max_position_embeddings",
        dropout="attention_dropout",
        token="bos_token_id eos_token_id pad_token_id",
        act="hidden_activation",
        init="initializer_range",
        eps="rms_norm_eps",
        rope="rope_parameters",
        cache="use_cache",
        scale="final_logit_softcapping",
        window="sliding_window",
        mask="use_bidirectional_attention",
    ),
    # kwargs Gemma4TextConfig pops into per_layer_config (read above); expert_intermediate_size: an
    # older name written by transformers 5.5-5.7, read by no 5.24 code
    legacy_keys=keys("global_head_dim num_global_key_value_heads per_layer_config expert_intermediate_size"),
    pad_default=0,
    family="decoder",
)

RECORDS = (GEMMA4_TEXT,)
