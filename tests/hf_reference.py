"""The reference side of the model-type cross-checks: how a transformers model's count is
read (with T5's documented adjustment) and hypothesis strategies of valid small configs
per model_type.  Used by tests/test_crosscheck_hf.py and tests/test_model_types.py.

Nothing here imports symtrans: the references stay independent of the code under test.
A new model_type in hf_config needs a strategy in STRATEGIES (tests/test_model_types.py
fails until it has one), a base config in tests/test_model_types.AUDIT_BASE and its
transformers class in HF_CLASSES below.
"""

from __future__ import annotations

import math

from hypothesis import strategies as st

# model_type -> the transformers class whose parameters a config's count must equal
# (AutoModel for the encoders, the LM-head model for the generative ones).
HF_CLASSES = {
    "bert": "BertModel",
    "roberta": "RobertaModel",
    "gpt2": "GPT2LMHeadModel",
    "llama": "LlamaForCausalLM",
    "mistral": "MistralForCausalLM",
    "mixtral": "MixtralForCausalLM",
    "qwen2": "Qwen2ForCausalLM",
    "qwen3": "Qwen3ForCausalLM",
    "gemma": "GemmaForCausalLM",
    "t5": "T5ForConditionalGeneration",
    "bart": "BartForConditionalGeneration",
    "opt": "OPTForCausalLM",
    "albert": "AlbertModel",
    # --- seq2seq
    "mbart": "MBartForConditionalGeneration",
    "pegasus": "PegasusForConditionalGeneration",
    "marian": "MarianMTModel",
    "whisper": "WhisperForConditionalGeneration",
    "vit": "ViTModel",
}


def reference_total(hf, model_type: str, cfg: dict, model) -> int:
    """The transformers count, with the one adjustment the module docstring explains (T5's
    untied head).  The BART family's unused ``model.shared`` of an untied model is counted,
    as ``model.parameters()`` counts it."""
    n = hf.count(model)
    if model_type == "t5" and cfg.get("tie_word_embeddings") is False:
        assert model.lm_head.weight is model.shared.weight  # 5.x ties a fresh model regardless
        n += model.lm_head.weight.numel()  # from_pretrained keeps it separate
    return n


def reference_active(hf, model, E: int, k: int) -> int:
    """total - (E - k)/E x expert weights, from the shapes of the tensors under ``.experts.``."""
    idle, tensors = 0, 0
    for name, p in model.named_parameters():
        if ".experts." in name:
            assert p.shape[0] == E, name  # stacked experts: one slice per expert
            idle += (p.numel() // E) * (E - k)
            tensors += 1
    assert tensors > 0
    return hf.count(model) - idle


SIZE = st.integers(1, 24)
VOCAB = st.integers(4, 40)
LAYERS = st.integers(1, 2)


def _maybe(draw, cfg: dict, key: str, strategy) -> None:
    """Give ``key`` a drawn value, or leave it out so the class default applies."""
    if draw(st.booleans()):
        cfg[key] = draw(strategy)


@st.composite
def llama_like(draw, mt: str) -> dict:
    h_kv = draw(st.integers(1, 3))
    h = h_kv * draw(st.integers(1, 3))
    cfg = dict(
        model_type=mt,
        num_attention_heads=h,
        num_hidden_layers=draw(LAYERS),
        intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
    )
    explicit = draw(st.booleans())
    if explicit or mt in ("qwen3", "gemma"):  # their class defaults (128, 256) are large: usually give one
        if explicit or draw(st.booleans()):
            cfg["head_dim"] = 2 * draw(st.integers(1, 4))
    # Head widths are even (transformers 5.x rejects an odd fully-rotary head_dim > 4).  LlamaConfig
    # requires h | hidden_size; the others floor hidden_size // h, so add a remainder to exercise that.
    rest = 0 if mt == "llama" else draw(st.integers(0, h - 1))
    cfg["hidden_size"] = h * 2 * draw(st.integers(1, 3)) + rest
    if mt == "llama" and h_kv == h and draw(st.booleans()):
        pass  # num_key_value_heads missing -> num_attention_heads (LlamaConfig)
    else:
        cfg["num_key_value_heads"] = h_kv
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    if mt in ("llama", "qwen3", "gemma"):
        _maybe(draw, cfg, "attention_bias", st.booleans())
    if mt == "llama":
        _maybe(draw, cfg, "mlp_bias", st.booleans())
    if mt == "mixtral":
        E = draw(st.integers(1, 5))
        cfg.update(num_local_experts=E, num_experts_per_tok=draw(st.integers(1, E)))
    if mt in ("qwen2", "qwen3") and h_kv == h and draw(st.booleans()):
        cfg["num_key_value_heads"] = None  # null -> num_attention_heads (Qwen2Config, Qwen3Config)
    if mt in ("mistral", "mixtral"):
        _maybe(draw, cfg, "sliding_window", st.one_of(st.none(), st.integers(1, 64)))
    if mt in ("qwen2", "qwen3"):  # a window on every layer or on none (mixed stacks are refused)
        _maybe(draw, cfg, "use_sliding_window", st.booleans())
        _maybe(draw, cfg, "sliding_window", st.integers(1, 64))
        _maybe(draw, cfg, "max_window_layers", st.sampled_from([0, cfg["num_hidden_layers"], 28]))
    if draw(st.booleans()):  # a padding row anywhere in the vocabulary, or none
        cfg["pad_token_id"] = draw(st.one_of(st.none(), st.integers(0, cfg["vocab_size"] - 1)))
    return cfg


@st.composite
def encoder(draw, mt: str) -> dict:
    h = draw(st.integers(1, 4))
    cfg = dict(
        model_type=mt,
        hidden_size=h * draw(st.integers(1, 6)),
        num_attention_heads=h,
        num_hidden_layers=draw(LAYERS),
        intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(2, 40)),
    )
    _maybe(draw, cfg, "type_vocab_size", st.integers(0, 3))
    return cfg


@st.composite
def albert(draw) -> dict:
    h = draw(st.integers(1, 4))
    n = draw(st.integers(1, 3))
    cfg = dict(
        model_type="albert",
        hidden_size=h * draw(st.integers(1, 6)),
        num_attention_heads=h,
        num_hidden_layers=n,
        num_hidden_groups=draw(st.sampled_from([1, n])),
        intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 40)),
        embedding_size=draw(st.integers(1, 12)),
    )
    _maybe(draw, cfg, "type_vocab_size", st.integers(0, 3))
    return cfg


@st.composite
def gpt2(draw) -> dict:
    h = draw(st.integers(1, 4))
    cfg = dict(
        model_type="gpt2",
        n_embd=h * draw(st.integers(1, 6)),
        n_head=h,
        n_layer=draw(LAYERS),
        vocab_size=draw(VOCAB),
        n_positions=draw(st.integers(1, 40)),
        bos_token_id=0,
        eos_token_id=0,
    )
    _maybe(draw, cfg, "n_inner", st.one_of(st.none(), SIZE))
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    return cfg


@st.composite
def t5(draw) -> dict:
    cfg = dict(
        model_type="t5",
        d_model=draw(SIZE),
        d_kv=draw(st.integers(1, 6)),
        num_heads=draw(st.integers(1, 4)),
        d_ff=draw(SIZE),
        num_layers=draw(LAYERS),
        vocab_size=draw(VOCAB),
        relative_attention_num_buckets=draw(st.integers(1, 8)),
    )
    _maybe(draw, cfg, "num_decoder_layers", st.one_of(st.none(), st.integers(1, 3)))
    _maybe(draw, cfg, "feed_forward_proj", st.sampled_from(["relu", "gelu", "gated-gelu", "gated-silu"]))
    _maybe(draw, cfg, "is_gated_act", st.booleans())  # overrides feed_forward_proj in T5Config
    if "num_decoder_layers" not in cfg and draw(st.booleans()):  # the alias: decoder keeps the class default 6
        cfg["num_hidden_layers"] = cfg.pop("num_layers")
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    return cfg


@st.composite
def opt(draw) -> dict:
    h = draw(st.integers(1, 4))
    d = h * draw(st.integers(1, 6))
    cfg = dict(
        model_type="opt",
        hidden_size=d,
        num_attention_heads=h,
        ffn_dim=draw(SIZE),
        num_hidden_layers=draw(LAYERS),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 40)),
    )
    for key in (
        "do_layer_norm_before",
        "_remove_final_layer_norm",
        "enable_bias",
        "layer_norm_elementwise_affine",
        "tie_word_embeddings",
    ):
        _maybe(draw, cfg, key, st.booleans())
    _maybe(draw, cfg, "word_embed_proj_dim", st.one_of(st.none(), st.just(d)))
    return cfg


# --- seq2seq


def _stacks(draw, mt: str) -> dict:
    """d_model, heads, FFN widths and layers of an encoder-decoder: each stack's own heads
    (both divide d_model) and widths, equal about half the time."""
    h_enc = draw(st.integers(1, 4))
    h_dec = draw(st.one_of(st.just(h_enc), st.integers(1, 4)))
    ff = draw(SIZE)
    return dict(
        model_type=mt,
        d_model=math.lcm(h_enc, h_dec) * draw(st.integers(1, 3)),
        encoder_attention_heads=h_enc,
        decoder_attention_heads=h_dec,
        encoder_ffn_dim=ff,
        decoder_ffn_dim=draw(st.one_of(st.just(ff), SIZE)),
        encoder_layers=draw(LAYERS),
        decoder_layers=draw(st.integers(1, 3)),
        vocab_size=draw(VOCAB),
    )


@st.composite
def bart_family(draw, mt: str) -> dict:
    """BART, mBART, Pegasus, Marian: tied or not, Marian's shared or separate vocabularies."""
    cfg = _stacks(draw, mt)
    cfg["max_position_embeddings"] = draw(st.integers(1, 40))
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    _maybe(draw, cfg, "scale_embedding", st.booleans())
    rows = cfg["vocab_size"]
    if mt == "marian":
        _maybe(draw, cfg, "share_encoder_decoder_embeddings", st.booleans())
        shared = cfg.get("share_encoder_decoder_embeddings", True)
        if not shared or cfg.get("tie_word_embeddings", True):  # shared + untied: the decoder keeps V rows
            _maybe(draw, cfg, "decoder_vocab_size", st.one_of(st.none(), VOCAB))
        rows = min(rows, cfg.get("decoder_vocab_size") or rows)
    if mt == "marian" or draw(st.booleans()):  # MarianConfig's pad_token_id 58100 needs a large vocabulary
        cfg["pad_token_id"] = draw(st.integers(0, rows - 1))
    return cfg


@st.composite
def whisper(draw) -> dict:
    cfg = _stacks(draw, "whisper")
    cfg.update(
        num_mel_bins=draw(st.integers(1, 9)),
        max_source_positions=draw(st.integers(1, 20)),
        max_target_positions=draw(st.integers(1, 20)),
        pad_token_id=draw(st.integers(0, cfg["vocab_size"] - 1)),
        bos_token_id=0,
        eos_token_id=0,
        decoder_start_token_id=0,
    )
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    return cfg


@st.composite
def vit(draw) -> dict:
    h = draw(st.integers(1, 4))
    patch = draw(st.integers(1, 5))
    cfg = dict(
        model_type="vit",
        hidden_size=h * draw(st.integers(1, 5)) + draw(st.sampled_from([0, 0, 1])),  # ViT floors d // h
        num_attention_heads=h,
        num_hidden_layers=draw(LAYERS),
        intermediate_size=draw(SIZE),
        image_size=draw(st.one_of(st.integers(1, 16), st.lists(st.integers(1, 16), min_size=2, max_size=2))),
        patch_size=draw(st.one_of(st.just(patch), st.just([patch, patch]))),
        num_channels=draw(st.integers(1, 4)),
    )
    _maybe(draw, cfg, "qkv_bias", st.booleans())
    _maybe(draw, cfg, "pooler_output_size", st.one_of(st.none(), SIZE))
    _maybe(draw, cfg, "head_dim", st.integers(1, 6))  # read with getattr by ViTSelfAttention
    return cfg


STRATEGIES = {
    "bert": encoder("bert"),
    "roberta": encoder("roberta"),
    "albert": albert(),
    "gpt2": gpt2(),
    "llama": llama_like("llama"),
    "mistral": llama_like("mistral"),
    "mixtral": llama_like("mixtral"),
    "qwen2": llama_like("qwen2"),
    "qwen3": llama_like("qwen3"),
    "gemma": llama_like("gemma"),
    "t5": t5(),
    "bart": bart_family("bart"),
    "opt": opt(),
    # --- seq2seq
    "mbart": bart_family("mbart"),
    "pegasus": bart_family("pegasus"),
    "marian": bart_family("marian"),
    "whisper": whisper(),
    "vit": vit(),
}
