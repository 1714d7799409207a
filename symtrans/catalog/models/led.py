"""LED (Beltagy et al. 2020 §4, the Longformer-Encoder-Decoder): LEDForConditionalGeneration as
transformers 5.24 builds it (``models/led/modeling_led.py``), BART's layout with Longformer
self-attention in the encoder:

* a shared V x d_model token table (the encoder's and decoder's ``embed_tokens`` and the LM head,
  tied); learned positions without offset, ``max_encoder_position_embeddings`` rows in the
  encoder and ``max_decoder_position_embeddings`` in the decoder; a LayerNorm after each stack's
  embeddings (``layernorm_embedding``); ``final_logits_bias`` is a buffer, not a parameter;
* encoder layers: ``LEDEncoderSelfAttention`` (query, key, value and the global tokens' own
  query_global, key_global, value_global, all biased d_model x d_model) and ``output`` (biased),
  a LayerNorm, fc1/fc2 (biased), a LayerNorm: post-norm; decoder layers are BART's.

``attention_window`` (one even positive window, or one per encoder layer) shapes no weight; it sizes
the FLOPs (engine/transient_global.py: the encoder runs on the input padded to a multiple of the
largest window, w_att, and each layer computes its own window in overlapping chunks; no global
tokens).  A list of different windows is ``Spec.encoder_windows``, each layer's, in order.
Refused: ``tie_word_embeddings`` false (transformers 5.x then unties the tables, not modelled);
FLOPs of windows that do not divide the largest (transformers' forward then fails on most lengths),
and memory (``long_rules.check_workload``).  Checked on the
meta device, by the key audit and the re-save test in tests/test_model_types.py; FLOPs and cache in
tests/test_long_flops.py.
"""

from __future__ import annotations

from symtrans.catalog.models.record import ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_divides, show
from symtrans.engine.spec import Spec


def _windows(r: Reader, layers: int) -> list[int]:
    """attention_window: an even positive integer, or a list of one per encoder layer
    (LEDEncoder and LEDEncoderSelfAttention refuse anything else); the window of each layer."""
    w = r.cfg.get("attention_window", 512)
    given = w if isinstance(w, list) else [w]
    if isinstance(w, list) and len(w) != layers:
        raise ConfigError(
            f"attention_window lists {len(w)} windows for {layers} encoder layers: LEDEncoder needs one each"
        )
    for v in given:
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0 or v % 2:
            raise ConfigError(
                f"attention_window must be even positive integers (LEDEncoderSelfAttention), not {show(v)}"
            )
    return given * layers if len(given) == 1 else given


def read_led(r: Reader) -> Spec:
    """LEDForConditionalGeneration (see the module docstring).

    Raises:
        ConfigError: a malformed size, heads not dividing d_model (LEDEncoderSelfAttention,
            LEDDecoderAttention), a bad attention_window, pad_token_id outside the vocabulary,
            tie_word_embeddings false.
    """
    d = r.size("d_model")
    h, h_dec = r.size("encoder_attention_heads"), r.size("decoder_attention_heads")
    check_divides("d_model", d, "encoder_attention_heads", h, "LEDEncoderSelfAttention")
    check_divides("d_model", d, "decoder_attention_heads", h_dec, "LEDDecoderAttention")
    n_enc, n_dec = r.size("encoder_layers"), r.size("decoder_layers")
    windows = _windows(r, n_enc)
    V = r.size("vocab_size")
    pad = r.cfg.get("pad_token_id", 1)
    if isinstance(pad, int) and not isinstance(pad, bool) and not -V <= pad < V:
        raise ConfigError(f"pad_token_id ({pad}) is not a row of the {V}-row token table, which uses it as padding_idx")
    if not r.flag("tie_word_embeddings", note=False):
        raise ConfigError(
            f"tie_word_embeddings is false: {r.model} then keeps untied token tables and LM head, "
            "which symtrans does not model for LED"
        )
    ff, ff_dec = r.size("encoder_ffn_dim"), r.size("decoder_ffn_dim")
    sizes = dict(
        d_model=d,
        d_ff=ff,
        h=h,
        V=V,
        L_src_max=r.size("max_encoder_position_embeddings"),
        L_tgt_max=r.size("max_decoder_position_embeddings"),
    )
    sizes.update(dict(N=n_enc) if n_enc == n_dec else dict(N_enc=n_enc, N_dec=n_dec))
    per_layer = ""
    if any(max(windows) % w for w in windows):
        r.notes.append(
            f"{r.model}: attention_window {windows} has windows that do not divide the largest: LEDEncoder pads to a "
            "multiple of the largest and the other layers' chunks then fail on most lengths, so FLOPs are refused"
        )
    else:
        sizes["w_att"] = max(windows)
        if len(set(windows)) > 1:
            per_layer = "|".join(map(str, windows))
            r.notes.append(
                f"{r.model}: attention_window differs between encoder layers (encoder_windows {per_layer}): the "
                f"encoder pads to a multiple of the largest, w_att = {max(windows)}, and each layer's window sets "
                "its attention FLOPs"
            )
    if h_dec != h:
        sizes["h_dec"] = h_dec
    if ff_dec != ff:
        sizes["d_ff_dec"] = ff_dec
    r.notes.append(
        f"{r.model}: Longformer self-attention in the encoder, with the global tokens' own query, key and value "
        "maps (3 d_model^2 + 3 d_model per encoder layer); attention_window shapes no weight"
    )
    return Spec(
        family="encoder-decoder",
        sizes=sizes,
        positional="learned",
        embedding_norm=True,
        encoder_attention="longformer",
        encoder_windows=per_layer,
        norm="layernorm",
        bias=True,
        norm_position="post",
        share_embeddings=True,
        tie_output=True,
    )


LED = ModelType(
    model_type="led",
    config_class="LEDConfig",
    model_class="LEDForConditionalGeneration",
    read=read_led,
    defaults={
        "vocab_size": 50265,
        "max_encoder_position_embeddings": 16384,
        "max_decoder_position_embeddings": 1024,
        "encoder_layers": 12,
        "encoder_ffn_dim": 4096,
        "encoder_attention_heads": 16,
        "decoder_layers": 12,
        "decoder_ffn_dim": 4096,
        "decoder_attention_heads": 16,
        "d_model": 1024,
        "tie_word_embeddings": True,
    },
    config_keys=keys(
        "activation_dropout activation_function attention_dropout attention_probs_dropout_prob attention_window "
        "bos_token_id classifier_dropout d_model decoder_attention_heads decoder_ffn_dim decoder_layerdrop "
        "decoder_layers decoder_start_token_id dropout encoder_attention_heads encoder_ffn_dim encoder_layerdrop "
        "encoder_layers eos_token_id hidden_size init_std initializer_range max_decoder_position_embeddings "
        "max_encoder_position_embeddings num_attention_heads num_hidden_layers pad_token_id tie_word_embeddings "
        "use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        dropout="activation_dropout attention_dropout attention_probs_dropout_prob classifier_dropout "
        "decoder_layerdrop dropout encoder_layerdrop",
        act="activation_function",
        init="init_std initializer_range",
        token="bos_token_id decoder_start_token_id eos_token_id pad_token_id",
        cache="use_cache",
        **{"longformer window": "attention_window"},
    ),
    aliases={
        "num_attention_heads": "encoder_attention_heads",
        "hidden_size": "d_model",
        "attention_probs_dropout_prob": "attention_dropout",
        "initializer_range": "init_std",
        "num_hidden_layers": "encoder_layers",
    },
    family="encoder-decoder",
)

RECORDS = (LED,)
