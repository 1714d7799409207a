"""The T5 family: the reader of T5 (its row stays in ``catalog/hf_config.py``'s tables) and
the records of mT5 and UMT5, which transformers 5.x keeps as types of their own.

Read off transformers 5.24's ``models/{t5,mt5,umt5}``; checked on the meta device, by the key
audit and against FlopCounterMode in tests/test_model_types.py:

* ``mt5``: MT5ForConditionalGeneration is T5ForConditionalGeneration under another name
  (Xue et al. 2021: T5 v1.1's gated-GELU FFN, an untied LM head in the published checkpoints);
  MT5Config's defaults are mT5-small's (250,112 rows, d_model 512, 8 + 8 layers, 6 heads).
* ``umt5``: UMT5ForConditionalGeneration (Chung et al. 2023, "UniMax") differs from mT5 in one
  count: every self-attention layer, in the encoder and the decoder, has its own
  relative_attention_num_buckets x h relative bias (``UMT5Attention(config,
  has_relative_attention_bias=True)`` in every ``UMT5LayerSelfAttention``), where T5 keeps one
  per stack in its first layer; cross-attention has none.
* ``longt5``: LongT5ForConditionalGeneration (Guo et al. 2022 §3.1) is T5 v1.1 with the encoder's
  self-attention replaced: ``encoder_attention_type`` "local" (LongT5LocalAttention: T5's weights
  exactly) or "transient-global" (LongT5TransientGlobalAttention: also a global relative bias table in
  the first encoder layer and a global-input RMSNorm in every encoder layer, engine/transient_global.py).
  ``local_radius`` and ``global_block_size`` shape no weight; they size the FLOPs as b_loc =
  local_radius + 1 (tokens per local block) and b_glob = global_block_size (engine/transient_global.py).

The LM head: transformers 5.x ties a freshly built model's head to the shared table whatever
``tie_word_embeddings`` says, but ``from_pretrained`` of a checkpoint saved untied (the published
mT5 and UMT5 files say ``tie_word_embeddings: false``) keeps its own lm_head: symtrans counts
that head, as it does for T5 (tests/hf_reference.reference_total adds it to the meta count).
"""

from __future__ import annotations

from symtrans.catalog.models.record import ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_size, gated_ffn, show
from symtrans.engine.spec import Spec

# One relative bias table per self-attention layer (not one per stack).
PER_LAYER_BIAS = ("umt5",)


def read_t5(r: Reader) -> Spec:
    """T5ForConditionalGeneration, MT5ForConditionalGeneration and UMT5ForConditionalGeneration.

    Raises:
        ConfigError: a malformed size, a feed_forward_proj other than "ACT" / "gated-ACT",
            a non-boolean is_gated_act.
    """
    d = r.size("d_model")
    h = r.size("num_heads")
    n_enc = r.size("num_layers")
    # T5Config.__post_init__ sets num_decoder_layers from num_layers *before* the alias
    # num_hidden_layers is applied: a file giving only num_hidden_layers gets the class
    # default of decoder layers.
    if "num_layers" in r.cfg:
        n_layers = check_size("num_layers", r.cfg["num_layers"])
        shown = f"num_layers = {n_layers}"
    else:
        n_layers = r.defaults["num_layers"]
        shown = f"num_layers' class default {n_layers} (num_hidden_layers, an alias, is applied after it)"
    n_dec = r.size("num_decoder_layers", n_layers, shown, nullable=True)
    proj = r.text("feed_forward_proj")
    parts = proj.split("-")
    if len(parts) > 2 or (len(parts) == 2 and parts[0] != "gated") or not parts[-1]:
        raise ConfigError(
            f'feed_forward_proj must be "ACT" or "gated-ACT" (e.g. "relu", "gated-gelu"), not {show(proj)}'
        )
    gated = len(parts) == 2
    if "is_gated_act" in r.cfg:  # applied after __post_init__ derives it: the file's value wins
        given = r.cfg["is_gated_act"]
        if not isinstance(given, bool):
            raise ConfigError(f"is_gated_act must be true or false, not {show(given)}")
        if given != gated:
            r.notes.append(
                f"is_gated_act is {show(given)}, which {r.model} follows over feed_forward_proj {show(proj)}: "
                f"{'three' if given else 'two'} maps per feed-forward network"
            )
        gated = given
    # T5DenseGatedActDense applies ACT2FN[act] to the gate: the kind names that activation
    ffn = gated_ffn(f"feed_forward_proj {show(proj)}'s activation", parts[-1]) if gated else "mlp"
    tie = r.flag("tie_word_embeddings")
    if not tie and r.mt == "longt5":
        # LongT5's checkpoints store only shared.weight (google/long-t5-local-base and -tglobal-base load
        # with lm_head.weight missing: huggingface/transformers#47620), so from_pretrained ties the head
        # to it as a fresh model does; the flag false only means no decoder output scaling
        # (LongT5Config.scale_decoder_outputs).
        tie = True
        r.notes.append(
            "tie_word_embeddings is false: for LongT5 that means no decoder output scaling, and the head is "
            "the token embedding (LongT5Config forces tying; the official checkpoints store only shared.weight, "
            "transformers#47620); a fine-tune that stores its own lm_head has d_model x V more"
        )
    if not tie:
        r.notes.append(
            "tie_word_embeddings is false: the LM head is its own d_model x V matrix, as in the "
            f"T5 v1.1 / mT5 checkpoints (transformers 5.x's {r.cls} ties a fresh model's head regardless, but "
            "from_pretrained keeps the checkpoint's separate lm_head)"
        )
    elif str(r.cfg.get("transformers_version", "")).startswith("5."):
        r.notes.append(
            f"tie_word_embeddings is true, as transformers 5.x's {r.cls} writes it for every checkpoint (it forces "
            "tying on load and on save); if the checkpoint stores its own lm_head (T5 v1.1, mT5 and UMT5 do), "
            "from_pretrained keeps it: add d_model x V, or count the config as published (tie_word_embeddings false)"
        )
    sizes = dict(d_model=d, d_ff=r.size("d_ff"), h=h, d_k=r.size("d_kv"), V=r.size("vocab_size"))
    if n_enc == n_dec:
        sizes["N"] = n_enc
    else:
        sizes.update(N_enc=n_enc, N_dec=n_dec)
    if "n_positions" in r.cfg and r.cfg["n_positions"] is not None:
        sizes["L_max"] = check_size("n_positions", r.cfg["n_positions"])
    per_layer = r.mt in PER_LAYER_BIAS
    attention = "full"
    if r.mt == "longt5":
        attention = r.text("encoder_attention_type")
        if attention not in ("local", "transient-global"):
            raise ConfigError(f'encoder_attention_type must be "local" or "transient-global", not {show(attention)}')
        radius = r.cfg.get("local_radius", 127)  # LongT5Config's default
        sizes["b_loc"] = (
            check_size("local_radius", 127 if radius is None else radius, zero_ok=True) + 1
        )  # LongT5LocalAttention.block_len
        if attention == "transient-global":
            sizes["b_glob"] = check_size("global_block_size", r.cfg.get("global_block_size", 16))
        r.notes.append(
            f"{r.model}: {attention} encoder self-attention"
            + (
                ": a global relative bias table (relative_attention_num_buckets x h) and a global-input RMSNorm "
                "per encoder layer beside T5's weights"
                if attention == "transient-global"
                else ": T5's weights exactly"
            )
        )
    if per_layer:
        r.notes.append(
            f"{r.model}: every self-attention layer has its own relative_attention_num_buckets x h relative bias"
        )
    return Spec(
        family="encoder-decoder",
        sizes=sizes,
        positional="relative",
        relative_bias="layer" if per_layer else "auto",
        encoder_attention=attention,
        relative_buckets=r.size("relative_attention_num_buckets"),
        norm="rmsnorm",
        bias=False,
        ffn=ffn,
        final_norm=True,
        norm_position="pre",
        share_embeddings=True,
        tie_output=tie,
    )


# MT5Config's and UMT5Config's defaults (transformers 5.24): mT5-small's sizes.
_MT5_DEFAULTS = {
    "vocab_size": 250112,
    "d_model": 512,
    "d_kv": 64,
    "d_ff": 1024,
    "num_layers": 8,
    "num_decoder_layers": None,
    "num_heads": 6,
    "relative_attention_num_buckets": 32,
    "feed_forward_proj": "gated-gelu",
    "tie_word_embeddings": True,
}
_T5_KEYS = (
    "classifier_dropout d_ff d_kv d_model decoder_start_token_id dense_act_fn dropout_rate eos_token_id "
    "feed_forward_proj head_dim hidden_size initializer_factor is_decoder is_gated_act layer_norm_epsilon "
    "num_attention_heads num_decoder_layers num_heads num_hidden_layers num_layers pad_token_id "
    "relative_attention_max_distance relative_attention_num_buckets tie_word_embeddings use_cache vocab_size"
)
_T5_ALIASES = {
    "hidden_size": "d_model",
    "num_attention_heads": "num_heads",
    "num_hidden_layers": "num_layers",
    "head_dim": "d_kv",
}
_T5_NO_EFFECT = dict(
    dropout="classifier_dropout dropout_rate",
    init="initializer_factor",
    eps="layer_norm_epsilon",
    act="dense_act_fn",
    buckets="relative_attention_max_distance",
    cache="use_cache",
    mask="is_decoder",
)

MT5 = ModelType(
    model_type="mt5",
    config_class="MT5Config",
    model_class="MT5ForConditionalGeneration",
    read=read_t5,
    defaults=_MT5_DEFAULTS,
    config_keys=keys(_T5_KEYS + " bos_token_id"),
    no_param_effect=no_effect(**_T5_NO_EFFECT, token="bos_token_id decoder_start_token_id eos_token_id pad_token_id"),
    aliases=_T5_ALIASES,
    family="encoder-decoder",
)

UMT5 = ModelType(
    model_type="umt5",
    config_class="UMT5Config",
    model_class="UMT5ForConditionalGeneration",
    read=read_t5,
    defaults=_MT5_DEFAULTS,
    config_keys=keys(_T5_KEYS + " scale_decoder_outputs"),
    no_param_effect=no_effect(
        **_T5_NO_EFFECT,
        token="decoder_start_token_id eos_token_id pad_token_id",
        scale="scale_decoder_outputs",
    ),
    aliases=_T5_ALIASES,
    family="encoder-decoder",
)

LONGT5 = ModelType(
    model_type="longt5",
    config_class="LongT5Config",
    model_class="LongT5ForConditionalGeneration",
    read=read_t5,
    defaults={
        "vocab_size": 32128,
        "d_model": 512,
        "d_kv": 64,
        "d_ff": 2048,
        "num_layers": 6,
        "num_decoder_layers": None,
        "num_heads": 8,
        "relative_attention_num_buckets": 32,
        "feed_forward_proj": "relu",
        "tie_word_embeddings": True,
        "encoder_attention_type": "local",
    },
    config_keys=keys(
        "bos_token_id d_ff d_kv d_model dropout_rate encoder_attention_type eos_token_id feed_forward_proj "
        "global_block_size head_dim hidden_size initializer_factor is_decoder layer_norm_epsilon local_radius "
        "num_attention_heads num_decoder_layers num_heads num_hidden_layers num_layers pad_token_id "
        "relative_attention_max_distance relative_attention_num_buckets scale_decoder_outputs tie_word_embeddings "
        "use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        dropout="dropout_rate",
        init="initializer_factor",
        eps="layer_norm_epsilon",
        buckets="relative_attention_max_distance",
        cache="use_cache",
        mask="is_decoder",
        token="bos_token_id eos_token_id pad_token_id",
        blocks="global_block_size local_radius",
        # LongT5Config sets it to tie_word_embeddings: the decoder output times d_model**-0.5 before lm_head
        scale="scale_decoder_outputs",
        longt5_tie="tie_word_embeddings",
    ),
    aliases=_T5_ALIASES,
    # LongT5Config derives it in __post_init__ (no field); a file's value is set after and wins, as in T5
    getattr_keys=("is_gated_act",),
    getattr_quiet=("dense_act_fn",),  # derived from feed_forward_proj the same way; an activation, no weights
    family="encoder-decoder",
)

RECORDS = (MT5, UMT5, LONGT5)
