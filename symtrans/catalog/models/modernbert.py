"""ModernBERT (Warner et al. 2024, "Smarter, Better, Faster, Longer"): a pre-norm encoder with
rotary positions, GeGLU feed-forward networks, no biases by default, and layers alternating
global attention with a bidirectional sliding window.

Read off transformers 5.24's ``models/modernbert`` (ModernBertConfig, modeling_modernbert.py);
checked on the meta device, by the key audit and against FlopCounterMode in
tests/test_model_types.py.  ModernBertModel (no pooler, no task head):

* embeddings: ``tok_embeddings`` (vocab_size x hidden_size, padding_idx pad_token_id) and a
  LayerNorm (``norm_bias`` switches its beta); no position table (rotary positions);
* each layer: ``attn_norm`` (``nn.Identity`` in layer 0, whose input is the normed embeddings),
  ``Wqkv`` (d -> 3 d) and ``Wo`` (d -> d), biased by ``attention_bias``; ``mlp_norm``; ``Wi``
  (d -> 2 f, the GeGLU's input and gate halves) and ``Wo`` (f -> d), biased by ``mlp_bias``;
  hidden_size must be a multiple of num_attention_heads (ModernBertAttention refuses otherwise);
* ``final_norm`` after the last layer.

Windows: ``layer_types`` (or, missing, the legacy ``global_attn_every_n_layers``, default 3:
layer i is global when i is a multiple of it) says which layers attend within ``local_attention``
(a total window: |i − j| <= local_attention // 2, transformers'
``sliding_window_bidirectional_overlay``).  Windows change no parameter.  They are sizes ``w``
(local_attention) and ``N_w`` (the sliding layers; ``w`` alone when every layer slides) with
``window_mask``: the eager forward masks the full L x L score square, which ``--mask full``
counts (as FlopCounterMode does), and ``--mask window`` counts each sliding layer's band.
"""

from __future__ import annotations

from typing import Any

from symtrans.catalog.models.record import ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_divides, check_size, show
from symtrans.engine.spec import Spec

_KINDS = ("full_attention", "sliding_attention")


def _layer_types(r: Reader, n: int) -> list[str]:
    """ModernBertConfig.__post_init__: the file's layer_types, else every
    global_attn_every_n_layers-th layer global (from layer 0), the others sliding."""
    types = r.cfg.get("layer_types")
    if types is None:
        every = r.cfg.get("global_attn_every_n_layers", 3)
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ConfigError(f"global_attn_every_n_layers must be a positive integer, not {show(every)}")
        return ["sliding_attention" if i % every else "full_attention" for i in range(n)]
    if not isinstance(types, list) or any(t not in _KINDS for t in types):
        raise ConfigError(f"layer_types must be a list of {' / '.join(_KINDS)}, not {show(types)}")
    if len(types) != n:
        raise ConfigError(f"layer_types has {len(types)} entries for num_hidden_layers {n}")
    return types


def read_modernbert(r: Reader) -> Spec:
    """The Spec of a ModernBertModel config.

    Raises:
        ConfigError: num_attention_heads not dividing hidden_size, a malformed size, flag or
            layer list, a local_attention that is no positive size.
    """
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    check_divides("hidden_size", d, "num_attention_heads", h, "ModernBertAttention")
    r.head_dim_must_match("hidden_size", d, "num_attention_heads", h)
    n = r.size("num_hidden_layers")
    types = _layer_types(r, n)
    check_size("local_attention", r.cfg.get("local_attention", 128))
    rope = r.cfg.get("rope_parameters")
    if rope is not None and (
        not isinstance(rope, dict) or any(k not in _KINDS or not isinstance(v, dict) for k, v in rope.items())
    ):  # ModernBertConfig's field: one rotary setting per layer type (or null), not a flat one
        raise ConfigError(
            "rope_parameters must map full_attention / sliding_attention to their rotary settings (ModernBertConfig), "
            f"not {show(rope)}"
        )
    sliding = types.count("sliding_attention")
    opts: dict[str, Any] = {}
    windows: dict[str, int] = {}
    if sliding:
        local = r.cfg.get("local_attention", 128)
        windows = {"w": local} if sliding == n else {"w": local, "N_w": sliding}
        opts["window_mask"] = True
        r.notes.append(
            f"{sliding} of {n} layers attend within a bidirectional window of local_attention {local} "
            f"(|i − j| <= {local // 2}), the others globally: --mask full counts the whole square the eager forward "
            "computes, --mask window the band"
        )
    attention_bias = r.flag("attention_bias", note=False)
    r.notes.append(f"{r.model}: no pooler and no task head; layer 0 has no attention norm (nn.Identity)")
    return Spec(
        family="encoder-only",
        sizes=dict(
            d_model=d,
            d_ff=r.size("intermediate_size"),
            h=h,
            N=n,
            V=r.size("vocab_size"),
            L_max=r.size("max_position_embeddings"),
            **windows,
        ),
        positional="rotary",
        embedding_norm=True,
        norm="layernorm",
        norm_bias=r.flag("norm_bias", note=False),
        norm_position="pre",
        final_norm=True,
        first_attention_norm=False,
        ffn="geglu",
        bias=False,
        qkv_bias=attention_bias,
        out_bias=attention_bias,
        ffn_bias=r.flag("mlp_bias", note=False),
        **opts,
    )


MODERNBERT = ModelType(
    model_type="modernbert",
    config_class="ModernBertConfig",
    model_class="ModernBertModel",
    read=read_modernbert,
    defaults={
        "vocab_size": 50368,
        "hidden_size": 768,
        "intermediate_size": 1152,
        "num_hidden_layers": 22,
        "num_attention_heads": 12,
        "max_position_embeddings": 8192,
        "norm_bias": False,
        "attention_bias": False,
        "mlp_bias": False,
        "pad_token_id": 50283,
    },
    config_keys=keys(
        "attention_bias attention_dropout bos_token_id classifier_activation classifier_bias classifier_dropout "
        "classifier_pooling cls_token_id decoder_bias deterministic_flash_attn embedding_dropout eos_token_id "
        "hidden_activation hidden_size initializer_cutoff_factor initializer_range intermediate_size layer_types "
        "local_attention max_position_embeddings mlp_bias mlp_dropout norm_bias norm_eps num_attention_heads "
        "num_hidden_layers pad_token_id rope_parameters sep_token_id sparse_pred_ignore_index sparse_prediction "
        "tie_word_embeddings vocab_size"
    ),
    no_param_effect=no_effect(
        positions="max_position_embeddings",
        dropout="attention_dropout embedding_dropout mlp_dropout classifier_dropout",
        token="bos_token_id eos_token_id pad_token_id cls_token_id sep_token_id sparse_pred_ignore_index",
        act="hidden_activation classifier_activation",
        init="initializer_range initializer_cutoff_factor",
        eps="norm_eps",
        rope="rope_parameters",
        window="layer_types local_attention",
        kernel="deterministic_flash_attn",
        **{"no head": "tie_word_embeddings decoder_bias classifier_bias classifier_pooling sparse_prediction"},
    ),
    # keys of answerdotai/ModernBERT-base that ModernBertConfig.__post_init__ pops (the window pattern, the
    # rotary bases of global and sliding layers) or that no 5.x code reads (compile and padding switches)
    legacy_keys=keys(
        "global_attn_every_n_layers global_rope_theta layer_norm_eps local_rope_theta reference_compile "
        "repad_logits_with_grad position_embedding_type"
    ),
    getattr_quiet=(),
    pad_default=50283,
    family="encoder",
)

RECORDS = (MODERNBERT,)
