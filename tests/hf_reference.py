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
    # --- decoder types (types-dec)
    "granite": "GraniteForCausalLM",
    "phi3": "Phi3ForCausalLM",
    "starcoder2": "Starcoder2ForCausalLM",
    "gemma2": "Gemma2ForCausalLM",
    "gemma3_text": "Gemma3ForCausalLM",
    "olmo": "OlmoForCausalLM",
    "olmo2": "Olmo2ForCausalLM",
    "cohere": "CohereForCausalLM",
    "stablelm": "StableLmForCausalLM",
    "phi": "PhiForCausalLM",
    "gpt_neox": "GPTNeoXForCausalLM",
    "gptj": "GPTJForCausalLM",
    "falcon": "FalconForCausalLM",
    # --- types-moe
    "qwen2_moe": "Qwen2MoeForCausalLM",
    "qwen3_moe": "Qwen3MoeForCausalLM",
    "deepseek_v2": "DeepseekV2ForCausalLM",
    "deepseek_v3": "DeepseekV3ForCausalLM",
    "gpt_oss": "GptOssForCausalLM",
    "llama4_text": "Llama4ForCausalLM",
    # --- encoders (types-enc)
    "distilbert": "DistilBertModel",
    "xlm-roberta": "XLMRobertaModel",
    "electra": "ElectraModel",
    "deberta-v2": "DebertaV2Model",
    # --- gpt2-like (learned positions / ALiBi) and multimodal wrappers
    "gpt_neo": "GPTNeoForCausalLM",
    "gpt_bigcode": "GPTBigCodeForCausalLM",
    "bloom": "BloomForCausalLM",
    "mpt": "MptForCausalLM",
    "llava": "LlavaForConditionalGeneration",
    "qwen2_vl": "Qwen2VLForConditionalGeneration",
    "gemma3": "Gemma3ForConditionalGeneration",
    "llava_next": "LlavaNextForConditionalGeneration",
    "mistral3": "Mistral3ForConditionalGeneration",
    "qwen2_5_vl": "Qwen2_5_VLForConditionalGeneration",
    "paligemma": "PaliGemmaForConditionalGeneration",
    "idefics3": "Idefics3ForConditionalGeneration",
    "smolvlm": "SmolVLMForConditionalGeneration",
    "qwen3_vl": "Qwen3VLForConditionalGeneration",
    "qwen3_vl_moe": "Qwen3VLMoeForConditionalGeneration",
    "kimi_k25": "Kimi_K25ForConditionalGeneration",
    "gemma4": "Gemma4ForConditionalGeneration",
    "llama4": "Llama4ForConditionalGeneration",
    # --- seq2seq
    "mbart": "MBartForConditionalGeneration",
    "pegasus": "PegasusForConditionalGeneration",
    "marian": "MarianMTModel",
    "whisper": "WhisperForConditionalGeneration",
    "vit": "ViTModel",
    # --- dense decoders of catalog/models/dense.py (issue 21)
    "ministral": "MinistralForCausalLM",
    "helium": "HeliumForCausalLM",
    "arcee": "ArceeForCausalLM",
    "seed_oss": "SeedOssForCausalLM",
    "ernie4_5": "Ernie4_5ForCausalLM",
    "glm": "GlmForCausalLM",
    "glm4": "Glm4ForCausalLM",
    "nemotron": "NemotronForCausalLM",
    # --- state-space models of catalog/models/ssm.py (issue 21)
    "mamba": "MambaForCausalLM",
    "falcon_mamba": "FalconMambaForCausalLM",
    "mamba2": "Mamba2ForCausalLM",
    "jamba": "JambaForCausalLM",
    "qwen3_next": "Qwen3NextForCausalLM",
    "gemma4_text": "Gemma4ForCausalLM",
    "lfm2": "Lfm2ForCausalLM",
    # --- mixture-of-experts decoders of catalog/models/moe.py (issue 21)
    "olmoe": "OlmoeForCausalLM",
    "glm4_moe": "Glm4MoeForCausalLM",
    "dots1": "Dots1ForCausalLM",
    "minimax_m2": "MiniMaxM2ForCausalLM",
    "phimoe": "PhimoeForCausalLM",
    "granitemoe": "GraniteMoeForCausalLM",
    "granitemoeshared": "GraniteMoeSharedForCausalLM",
    "ernie4_5_moe": "Ernie4_5_MoeForCausalLM",
    "hunyuan_v1_moe": "HunYuanMoEV1ForCausalLM",
    "glm4_moe_lite": "Glm4MoeLiteForCausalLM",
    # --- the MLA family of issue 21 (catalog/models/dsa.py)
    "deepseek_v32": "DeepseekV32ForCausalLM",
    "glm_moe_dsa": "GlmMoeDsaForCausalLM",
    "mistral4": "Mistral4ForCausalLM",
    "deepseek_v4": "DeepseekV4ForCausalLM",
    "dbrx": "DbrxForCausalLM",
    # --- encoders and encoder-decoders of catalog/models/encoders.py and t5.py (issue 21)
    "camembert": "CamembertModel",
    "roberta-prelayernorm": "RobertaPreLayerNormModel",
    "mpnet": "MPNetModel",
    "modernbert": "ModernBertModel",
    "nomic_bert": "NomicBertModel",
    "mt5": "MT5ForConditionalGeneration",
    "umt5": "UMT5ForConditionalGeneration",
    # --- dense decoders and hybrids of issue 21 (dec21)
    "smollm3": "SmolLM3ForCausalLM",
    "olmo3": "Olmo3ForCausalLM",
    "exaone4": "Exaone4ForCausalLM",
    "cohere2": "Cohere2ForCausalLM",
    "hunyuan_v1_dense": "HunYuanDenseV1ForCausalLM",
    "apertus": "ApertusForCausalLM",
    "ministral3": "Ministral3ForCausalLM",
    "bamba": "BambaForCausalLM",
    "granitemoehybrid": "GraniteMoeHybridForCausalLM",
    "nemotron_h": "NemotronHForCausalLM",
    "falcon_h1": "FalconH1ForCausalLM",
    "zamba2": "Zamba2ForCausalLM",
    "qwen3_5_text": "Qwen3_5ForCausalLM",
    # --- audio encoders of catalog/models/audio.py (issue 21)
    "wav2vec2": "Wav2Vec2Model",
    "hubert": "HubertModel",
    "longt5": "LongT5ForConditionalGeneration",
    "led": "LEDForConditionalGeneration",
    # --- dual encoders of catalog/models/dual.py (issue 21)
    "clip": "CLIPModel",
    "siglip": "SiglipModel",
    "siglip2": "Siglip2Model",
    # --- Qwen3.5 and Qwen3.5-MoE, text models and multimodal wrappers (issue 21)
    "qwen3_5_moe_text": "Qwen3_5MoeForCausalLM",
    "qwen3_5": "Qwen3_5ForConditionalGeneration",
    "qwen3_5_moe": "Qwen3_5MoeForConditionalGeneration",
}

# T5 and its copies: transformers 5.x ties a fresh model's lm_head to ``shared`` whatever
# tie_word_embeddings says; from_pretrained of an untied checkpoint keeps its own head.
# The types whose checkpoints of a config with tie_word_embeddings false store their own lm_head, which
# from_pretrained keeps (T5 v1.1, mT5, UMT5).  Not LongT5: its checkpoints store only shared.weight
# (huggingface/transformers#47620: google/long-t5-local-base loads with lm_head.weight missing).
T5_UNTIED_HEAD = ("t5", "mt5", "umt5")

# Multimodal wrappers: symtrans counts the whole class; its text-only figure is
# language_model_count (model.model.language_model, or Idefics3's model.model.text_model, and lm_head).
WRAPPED = (
    "llava",
    "qwen2_vl",
    "gemma3",
    "llava_next",
    "mistral3",
    "qwen2_5_vl",
    "qwen3_vl",
    "qwen3_vl_moe",
    "kimi_k25",
    "gemma4",
    "qwen3_5",
    "qwen3_5_moe",
    "llama4",
    "paligemma",
    "idefics3",
    "smolvlm",
)


def reference_total(hf, model_type: str, cfg: dict, model) -> int:
    """The transformers count, with the one adjustment the module docstring explains (T5's
    untied head); the BART family's unused ``model.shared`` of an untied model is counted,
    as ``model.parameters()`` counts it; a multimodal wrapper is counted whole."""
    n = hf.count(model)  # a multimodal wrapper: the whole class, vision tower and projector included
    if model_type in T5_UNTIED_HEAD and cfg.get("tie_word_embeddings") is False:
        assert model.lm_head.weight is model.shared.weight  # 5.x ties a fresh model regardless
        n += model.lm_head.weight.numel()  # from_pretrained keeps it separate
    return n


def language_model_count(hf, model) -> int:
    """A multimodal wrapper's language model: ``model.model.language_model`` (the text
    config's base model; Idefics3's and SmolVLM's ``model.model.text_model``) plus
    ``model.lm_head``'s weight unless it is the token embedding (tied); ``model.model.vision_tower`` /
    ``model.model.visual`` / ``model.model.vision_model`` and ``model.model.multi_modal_projector``
    / ``model.model.connector`` (and LLaVA-NeXT's ``model.model.image_newline``) are left out.
    Llama4ForConditionalGeneration keeps a whole Llama4ForCausalLM as ``model.language_model`` (lm_head
    inside) beside ``model.vision_model`` and ``model.multi_modal_projector``: that submodule's count."""
    if type(model).__name__ == "Llama4ForConditionalGeneration":
        tops = {name.split(".")[0] for name, _ in model.named_parameters()}
        assert tops <= {"vision_model", "multi_modal_projector", "language_model"}, tops
        assert model.language_model.lm_head.bias is None
        return hf.count(model.language_model)
    lm = getattr(model.model, "language_model", None) or model.model.text_model
    n = hf.count(lm)
    assert model.lm_head.bias is None
    if model.lm_head.weight is not lm.embed_tokens.weight:
        n += model.lm_head.weight.numel()
    others = {name.split(".")[1] for name, _ in model.named_parameters() if name.startswith("model.")}
    assert others <= {
        "language_model",
        "text_model",
        "vision_tower",
        "visual",
        "vision_model",
        "multi_modal_projector",
        "connector",
        "image_newline",
    }, others
    return n


def reference_active(hf, model, E: int, k: int) -> int:
    """total - (E - k)/E x expert weights, from the shapes of the tensors under ``.experts.``."""
    idle, tensors = 0, 0
    for name, p in model.named_parameters():
        if ".experts." in name:
            # stacked experts: one slice per expert; DBRX's DbrxExpertGLU stacks E blocks of
            # ffn_hidden_size rows in one 2-D tensor (E x ffn) x d_model
            assert p.shape[0] == E or (_DBRX_EXPERTS in name and p.shape[0] % E == 0), name
            idle += (p.numel() // E) * (E - k)
            tensors += 1
    assert tensors > 0
    return hf.count(model) - idle


def experts_of(model) -> int | None:
    """E, read from the stacked expert tensors (dim 0 of every tensor under ``.experts.``), or
    None for a model without experts (whatever the config calls E: num_experts,
    num_local_experts, n_routed_experts)."""
    params = dict(model.named_parameters())
    if any(_DBRX_EXPERTS in name for name in params):  # 2-D expert blocks: E is the router's width
        sizes = {p.shape[0] for name, p in params.items() if name.endswith(".ffn.router.layer.weight")}
    else:
        sizes = {p.shape[0] for name, p in params.items() if ".experts." in name}
    assert len(sizes) <= 1, sizes
    return sizes.pop() if sizes else None


def top_k_of(model) -> int:
    """How many experts a token uses: ``num_experts_per_tok``, or DBRX's ``ffn_config.moe_top_k``
    (DbrxFFN.top_k, the value its router's torch.topk takes)."""
    for config in (model.config, getattr(model.config, "text_config", None)):  # a wrapper: its text model's
        if hasattr(config, "num_experts_per_tok"):
            return config.num_experts_per_tok
        if getattr(config, "top_k_experts", None) is not None:  # Gemma 4: Gemma4TextRouter's torch.topk k
            return config.top_k_experts
    return model.transformer.blocks[0].ffn.top_k


# DbrxExpertGLU's parameters (w1, v1, w2): transformers 5.24 models/dbrx/modeling_dbrx.py
_DBRX_EXPERTS = ".ffn.experts.mlp."


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
def t5(draw, mt: str = "t5") -> dict:
    cfg = dict(
        model_type=mt,
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
    if mt == "longt5":  # local or transient-global encoder attention; the block sizes shape no weight
        _maybe(draw, cfg, "encoder_attention_type", st.sampled_from(["local", "transient-global"]))
        _maybe(draw, cfg, "local_radius", st.integers(1, 9))
        _maybe(draw, cfg, "global_block_size", st.integers(1, 9))
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
    _maybe(draw, cfg, "word_embed_proj_dim", st.one_of(st.none(), st.just(d), SIZE))  # SIZE: project_in/out
    return cfg


# --- gpt2-like (learned positions / ALiBi) and multimodal wrappers


@st.composite
def gpt_neo(draw) -> dict:
    h = draw(st.integers(1, 4))
    n = draw(LAYERS)
    cfg = dict(
        model_type="gpt_neo",
        hidden_size=h * draw(st.integers(1, 6)),
        num_heads=h,
        num_layers=n,
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 40)),
    )
    # One kind on every layer (a global/local mix is refused: one window for the whole stack).
    kind = draw(st.sampled_from(["global", "local"]))
    if draw(st.booleans()):
        cfg["attention_types"] = [[[kind], n]]
    else:
        cfg["attention_layers"] = [kind] * n
    _maybe(draw, cfg, "window_size", st.integers(1, 40))
    _maybe(draw, cfg, "intermediate_size", st.one_of(st.none(), SIZE))
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    return cfg


@st.composite
def gpt_bigcode(draw) -> dict:
    h = draw(st.integers(1, 4))
    cfg = dict(
        model_type="gpt_bigcode",
        n_embd=h * draw(st.integers(1, 6)),
        n_head=h,
        n_layer=draw(LAYERS),
        vocab_size=draw(VOCAB),
        n_positions=draw(st.integers(1, 40)),
    )
    _maybe(draw, cfg, "n_inner", st.one_of(st.none(), SIZE))
    _maybe(draw, cfg, "multi_query", st.booleans())
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    return cfg


@st.composite
def bloom(draw) -> dict:
    h = draw(st.integers(1, 4))
    cfg = dict(model_type="bloom", n_head=h, n_layer=draw(LAYERS), vocab_size=draw(VOCAB))
    cfg[draw(st.sampled_from(["hidden_size", "n_embed"]))] = h * draw(st.integers(1, 6))  # n_embed: legacy name
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    return cfg


@st.composite
def mpt(draw) -> dict:
    h = draw(st.integers(1, 4))
    cfg = dict(
        model_type="mpt",
        d_model=h * draw(st.integers(1, 6)),
        n_heads=h,
        n_layers=draw(LAYERS),
        vocab_size=draw(VOCAB),
        max_seq_len=draw(st.integers(1, 40)),
    )
    # Keys MptForCausalLM ignores (MosaicML's code honoured them): they must move nothing.
    _maybe(draw, cfg, "expansion_ratio", st.integers(1, 6))
    _maybe(draw, cfg, "no_bias", st.booleans())
    _maybe(draw, cfg, "learned_pos_emb", st.booleans())
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    return cfg


# Small vision towers, so that a wrapper also builds on the CPU (FLOP checks); never counted.
LLAVA_VISION = dict(
    model_type="clip_vision_model",
    hidden_size=8,
    intermediate_size=8,
    num_hidden_layers=1,
    num_attention_heads=2,
    image_size=8,
    patch_size=4,
)
QWEN2_VL_VISION = dict(
    depth=1,
    embed_dim=8,
    hidden_size=16,
    num_heads=2,
    mlp_ratio=2,
    patch_size=2,
    temporal_patch_size=1,
    spatial_merge_size=1,
)
QWEN2_5_VL_VISION = dict(
    depth=1,
    hidden_size=8,
    intermediate_size=6,
    num_heads=2,
    out_hidden_size=16,
    patch_size=2,
    temporal_patch_size=1,
    spatial_merge_size=1,
)
QWEN3_5_VISION = dict(
    depth=1,
    hidden_size=8,
    intermediate_size=6,
    num_heads=2,
    out_hidden_size=16,
    num_position_embeddings=4,
    patch_size=2,
    temporal_patch_size=1,
    spatial_merge_size=1,
)
PIXTRAL_VISION = dict(
    model_type="pixtral",
    hidden_size=8,
    intermediate_size=6,
    num_hidden_layers=1,
    num_attention_heads=2,
    image_size=16,
    patch_size=4,
)
# Llama4VisionConfig: CLIP's tower keys and the adapter's and projector's widths
LLAMA4_VISION = dict(
    LLAVA_VISION,
    model_type="llama4_vision_model",
    projector_input_dim=6,
    projector_output_dim=6,
    vision_output_dim=6,
)
# Qwen3VLVisionConfig's keys are Qwen2.5-VL's (less window attention) plus the position grid and DeepStack
QWEN3_VL_VISION = dict(QWEN2_5_VL_VISION, num_position_embeddings=4, deepstack_visual_indexes=[0])
SIGLIP_VISION = dict(
    model_type="siglip_vision_model",
    hidden_size=8,
    intermediate_size=6,
    num_hidden_layers=1,
    num_attention_heads=2,
    image_size=8,
    patch_size=4,
    vision_use_head=False,
)
# Idefics3VisionConfig's (and SmolVLMVisionConfig's) keys, small: SigLIP's sizes without its
# model_type and head switch (2 x 2 patches of 4 px).
IDEFICS3_VISION = {k: v for k, v in SIGLIP_VISION.items() if k not in ("model_type", "vision_use_head")}

# Dual encoders' base towers (tests/test_model_types.AUDIT_BASE, tests/test_dual_encoders.py)
CLIP_TEXT = dict(
    model_type="clip_text_model",
    hidden_size=8,
    intermediate_size=6,
    num_hidden_layers=1,
    num_attention_heads=2,
    vocab_size=23,
    max_position_embeddings=11,
)
CLIP_VISION = dict(
    model_type="clip_vision_model",
    hidden_size=10,
    intermediate_size=9,
    num_hidden_layers=2,
    num_attention_heads=2,
    image_size=8,
    patch_size=4,
)
SIGLIP_TEXT = dict(CLIP_TEXT, model_type="siglip_text_model")  # the same sizes: SigLIP's own classes
SIGLIP_DUAL_VISION = dict(CLIP_VISION, model_type="siglip_vision_model")
SIGLIP2_TEXT = dict(CLIP_TEXT, model_type="siglip2_text_model")
SIGLIP2_VISION = {k: v for k, v in CLIP_VISION.items() if k != "image_size"}  # no image_size: num_patches
SIGLIP2_VISION.update(model_type="siglip2_vision_model", num_patches=4)


@st.composite
def llava(draw) -> dict:
    text = draw(llama_like(draw(st.sampled_from(["llama", "mistral", "qwen2", "qwen3", "gemma"]))))
    cfg = dict(model_type="llava", vision_config=LLAVA_VISION, image_token_index=0)
    if text["model_type"] == "llama" and draw(st.booleans()):
        del text["model_type"]  # LlavaConfig's default text model is a Llama
    cfg["text_config"] = text
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())  # tied iff this or the text config's
    return cfg


@st.composite
def qwen2_vl(draw) -> dict:
    text = draw(llama_like("qwen2"))
    del text["model_type"]
    text.pop("head_dim", None)  # Qwen2VLAttention reads none: hidden_size // heads, which must divide
    h = text["num_attention_heads"]
    text["hidden_size"] = h * 2 * draw(st.integers(1, 3))
    cfg = dict(model_type="qwen2_vl", vision_config=QWEN2_VL_VISION)
    if draw(st.booleans()):
        cfg["text_config"] = text
    else:
        cfg.update(text)  # flat, as Hub checkpoints are saved: Qwen2VLConfig moves the keys into text_config
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    return cfg


@st.composite
def gemma3(draw) -> dict:
    """Gemma3ForConditionalGeneration: a drawn gemma3_text language model beside a small SigLIP
    tower (tests/test_vision_siglip.py draws the tower's keys); the wrapper's tie alone decides."""
    text = draw(decoder_types("gemma3_text"))
    if draw(st.booleans()):
        del text["model_type"]  # Gemma3Config's default text model is gemma3_text
    cfg = dict(model_type="gemma3", text_config=text, vision_config=SIGLIP_VISION, mm_tokens_per_image=4)
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    return cfg


@st.composite
def llava_next(draw) -> dict:
    """LlavaNextForConditionalGeneration: llava's text models and CLIP tower; the wrapper's
    tie_word_embeddings alone decides (LlavaNextConfig forwards no text value)."""
    cfg = draw(llava())
    cfg["model_type"] = "llava_next"
    return cfg


@st.composite
def qwen2_5_vl(draw) -> dict:
    """Qwen2_5_VLForConditionalGeneration: Qwen2-VL's text strategy (flat or nested) beside a small
    Qwen2.5-VL tower (tests/test_vision_towers.py draws the tower's keys)."""
    cfg = draw(qwen2_vl())
    cfg["model_type"] = "qwen2_5_vl"
    cfg["vision_config"] = QWEN2_5_VL_VISION
    return cfg


def qwen3_vl_text(draw) -> dict:
    """A Qwen3VLTextConfig: Qwen3's drawn keys less the sliding-window ones it has no field for."""
    text = draw(llama_like("qwen3"))
    for key in ("use_sliding_window", "sliding_window", "max_window_layers"):
        text.pop(key, None)
    text["model_type"] = "qwen3_vl_text"
    if draw(st.booleans()):
        del text["model_type"]  # Qwen3VLConfig's text_config default
    return text


@st.composite
def qwen3_vl(draw) -> dict:
    """Qwen3VLForConditionalGeneration: a drawn Qwen3-shaped text model (always nested: Qwen3VLConfig
    moves no top-level keys) beside a small Qwen3-VL vision model (tests/test_vision_qwen3_vl.py
    draws the tower's keys); the wrapper's tie alone decides (a text_config tie is ignored)."""
    cfg = dict(model_type="qwen3_vl", vision_config=QWEN3_VL_VISION, text_config=qwen3_vl_text(draw))
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    return cfg


@st.composite
def llama4(draw) -> dict:
    """Llama4ForConditionalGeneration: a drawn llama4_text language model beside a small Llama 4 vision
    model (tests/test_vision_llama4.py draws the tower's keys); the text config's tie alone decides."""
    text = draw(llama4_text())
    if draw(st.booleans()):
        del text["model_type"]  # Llama4Config's default text model is llama4_text
    cfg = dict(model_type="llama4", text_config=text, vision_config=LLAMA4_VISION)
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    return cfg


@st.composite
def mistral3(draw) -> dict:
    """Mistral3ForConditionalGeneration: llava's text models beside a small Pixtral tower
    (tests/test_vision_mistral3.py draws the tower's keys); the wrapper's tie alone decides."""
    text = draw(llama_like(draw(st.sampled_from(["mistral", "llama", "qwen2"]))))
    cfg = dict(model_type="mistral3", vision_config=PIXTRAL_VISION, text_config=text)
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    _maybe(draw, cfg, "spatial_merge_size", st.integers(1, 3))
    _maybe(draw, cfg, "multimodal_projector_bias", st.booleans())
    _maybe(draw, cfg, "vision_feature_layer", st.sampled_from([-1, -2, [-2, -1]]))
    return cfg


@st.composite
def paligemma(draw) -> dict:
    """PaliGemmaForConditionalGeneration: a Gemma, Gemma 2 (PaliGemma 1 and 2) or Gemma 3 language model (
    sometimes without model_type: PaliGemmaConfig's default is gemma) beside a small SigLIP tower
    (tests/test_vision_paligemma.py draws the tower's keys); projection_dim is the text width or
    not (transformers builds either); the wrapper's tie alone decides."""
    mt = draw(st.sampled_from(["gemma", "gemma2", "gemma3_text"]))
    text = draw(llama_like("gemma")) if mt == "gemma" else draw(decoder_types(mt))
    if mt == "gemma" and draw(st.booleans()):
        del text["model_type"]
    cfg = dict(model_type="paligemma", vision_config=SIGLIP_VISION, text_config=text)
    cfg["projection_dim"] = text["hidden_size"] if draw(st.booleans()) else draw(SIZE)
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    return cfg


# --- dual encoders (issue 21): tiny towers, every size drawn (a tower builds in ~0.01 s on meta)
def _tower(draw, image: bool) -> dict:
    """A text or vision sub-config: hidden_size a multiple of the heads (CLIPTextConfig,
    SiglipVisionConfig ... validate_architecture refuse anything else)."""
    h = draw(st.integers(1, 3))
    cfg = dict(
        hidden_size=h * draw(st.integers(1, 4)),
        num_attention_heads=h,
        intermediate_size=draw(st.integers(1, 12)),
        num_hidden_layers=draw(LAYERS),
    )
    if image:
        patch = draw(st.integers(1, 4))
        cfg["patch_size"] = patch
        cfg["image_size"] = patch * draw(st.integers(1, 3)) + draw(st.integers(0, patch - 1))  # floor division
        _maybe(draw, cfg, "num_channels", st.integers(1, 4))
    else:
        cfg["vocab_size"] = draw(VOCAB)
        cfg["max_position_embeddings"] = draw(st.integers(1, 20))
    return cfg


@st.composite
def idefics3(draw, mt: str = "idefics3") -> dict:
    """Idefics3ForConditionalGeneration (and SmolVLMForConditionalGeneration, the same layout
    with its own config class): llava's text models (sometimes without model_type: the default
    is llama) beside a small SigLIP-shaped tower and a pixel-shuffle connector of scale_factor s
    (tests/test_vision_idefics3.py draws the tower's keys); the wrapper's tie alone decides."""
    text = draw(llama_like(draw(st.sampled_from(["llama", "mistral", "qwen2", "qwen3", "gemma"]))))
    if text["model_type"] == "llama" and draw(st.booleans()):
        del text["model_type"]
    cfg = dict(model_type=mt, vision_config=IDEFICS3_VISION, text_config=text)
    _maybe(draw, cfg, "scale_factor", st.integers(1, 3))
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    return cfg


@st.composite
def clip(draw) -> dict:
    """CLIPModel: a drawn text and vision tower, projection_dim drawn or the default 512; the
    sub-configs' own projection_dim is read by the *WithProjection classes only."""
    text, vision = _tower(draw, False), _tower(draw, True)
    _maybe(draw, text, "projection_dim", SIZE)
    _maybe(draw, vision, "projection_dim", SIZE)
    for sub, mt in ((text, "clip_text_model"), (vision, "clip_vision_model")):
        _maybe(draw, sub, "model_type", st.just(mt))
    cfg = dict(model_type="clip", text_config=text, vision_config=vision)
    _maybe(draw, cfg, "projection_dim", SIZE)
    return cfg


@st.composite
def siglip(draw) -> dict:
    """SiglipModel: a drawn text tower (projection_size drawn, null or left to hidden_size) and
    vision tower (vision_use_head drawn or left to its default, true)."""
    text, vision = _tower(draw, False), _tower(draw, True)
    _maybe(draw, text, "projection_size", st.one_of(st.none(), SIZE))
    _maybe(draw, vision, "vision_use_head", st.booleans())
    for sub, mt in ((text, "siglip_text_model"), (vision, "siglip_vision_model")):
        _maybe(draw, sub, "model_type", st.just(mt))
    return dict(model_type="siglip", text_config=text, vision_config=vision)


@st.composite
def siglip2(draw) -> dict:
    """Siglip2Model: SigLIP's text tower; a NaFlex vision tower of num_patches learned positions
    (no image_size), vision_use_head drawn or left to its default, true."""
    text, vision = _tower(draw, False), _tower(draw, True)
    del vision["image_size"]
    vision["num_patches"] = draw(st.integers(1, 16))
    _maybe(draw, text, "projection_size", st.one_of(st.none(), SIZE))
    _maybe(draw, vision, "vision_use_head", st.booleans())
    for sub, mt in ((text, "siglip2_text_model"), (vision, "siglip2_vision_model")):
        _maybe(draw, sub, "model_type", st.just(mt))
    return dict(model_type="siglip2", text_config=text, vision_config=vision)


# --- decoder types (types-dec)


# Types whose num_key_value_heads may be null (int | None), read with getattr head_dim, or
# that require hidden_size divisible by the heads (independent of symtrans's own tables).
_KV_NULLABLE = ("granite", "phi3", "olmo", "olmo2", "cohere", "phi")
_GETATTR_HEAD_DIM = ("granite", "phi3", "starcoder2", "olmo", "olmo2", "cohere", "phi")
_DIVIDES = ("gemma2", "gemma3_text", "stablelm", "gpt_neox", "gptj", "falcon")


@st.composite
def decoder_types(draw, mt: str) -> dict:
    """granite, phi3, starcoder2, gemma2, gemma3_text, olmo, olmo2, cohere, stablelm, phi,
    gpt_neox, gptj, falcon: GQA, head_dim (a field or read with getattr), biases, norm
    layouts, QK norms, parallel blocks, tying, sliding windows and layer types, the padding row."""
    h_kv = draw(st.integers(1, 3))
    h = h_kv * draw(st.integers(1, 3))
    n = draw(LAYERS)
    # a remainder exercises hidden_size // num_attention_heads rounding down where it is allowed
    rest = 0 if mt in _DIVIDES else draw(st.integers(0, h - 1))
    names = (
        dict(hidden_size="n_embd", num_attention_heads="n_head", num_hidden_layers="n_layer") if mt == "gptj" else {}
    )
    cfg = {
        "model_type": mt,
        names.get("num_attention_heads", "num_attention_heads"): h,
        names.get("num_hidden_layers", "num_hidden_layers"): n,
        "vocab_size": draw(VOCAB),
        names.get("hidden_size", "hidden_size"): h * 2 * draw(st.integers(1, 3)) + rest,
        "n_positions" if mt == "gptj" else "max_position_embeddings": draw(st.integers(1, 64)),
    }
    if mt == "gptj":
        _maybe(draw, cfg, "n_inner", st.one_of(st.none(), SIZE))
    elif mt == "falcon":
        _maybe(draw, cfg, "ffn_hidden_size", st.one_of(st.none(), SIZE))
    else:
        cfg["intermediate_size"] = draw(SIZE)
    if mt in _GETATTR_HEAD_DIM or mt in ("gemma2", "gemma3_text"):
        if mt in ("gemma2", "gemma3_text") or draw(st.booleans()):
            cfg["head_dim"] = 2 * draw(st.integers(1, 4))  # even: rotary pairs
    if mt == "falcon":
        cfg["new_decoder_architecture"] = draw(st.booleans())
        _maybe(draw, cfg, "multi_query", st.booleans())
        _maybe(draw, cfg, "parallel_attn", st.booleans())
        _maybe(draw, cfg, "num_ln_in_parallel_attn", st.sampled_from([None, 1, 2]))
        _maybe(draw, cfg, "num_kv_heads", st.sampled_from([None, h_kv]))
        _maybe(draw, cfg, "bias", st.booleans())
        _maybe(draw, cfg, "alibi", st.booleans())
    elif mt not in ("gpt_neox", "gptj"):
        if draw(st.booleans()) and h_kv == h and mt in _KV_NULLABLE:
            cfg["num_key_value_heads"] = draw(st.sampled_from([None, h]))
        else:
            cfg["num_key_value_heads"] = h_kv
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    flags = {
        "granite": ("attention_bias", "mlp_bias"),
        "starcoder2": ("use_bias",),
        "gemma2": ("attention_bias",),
        "gemma3_text": ("attention_bias",),
        "olmo": ("attention_bias",),
        "olmo2": ("attention_bias",),
        "cohere": ("attention_bias", "use_qk_norm"),
        "stablelm": ("use_qkv_bias", "qk_layernorm", "use_parallel_residual"),
        "phi": ("qk_layernorm",),
        "gpt_neox": ("attention_bias", "use_parallel_residual"),
    }
    for key in flags.get(mt, ()):
        _maybe(draw, cfg, key, st.booleans())
    if mt == "phi" and cfg.get("qk_layernorm") and "head_dim" in cfg:
        cfg["head_dim"] = cfg["hidden_size"] // h  # PhiAttention's q/k LayerNorms are d // h wide
    if mt in ("phi3", "starcoder2"):
        _maybe(draw, cfg, "sliding_window", st.one_of(st.none(), st.integers(1, 64)))
    if mt in ("gemma2", "gemma3_text"):
        _maybe(draw, cfg, "sliding_window", st.one_of(st.none(), st.integers(1, 64)))
        _maybe(
            draw,
            cfg,
            "layer_types",
            st.lists(st.sampled_from(["sliding_attention", "full_attention"]), min_size=n, max_size=n),
        )
    # a padding row anywhere in the vocabulary, or none (class defaults such as phi3's 32000 are too large)
    if mt in ("phi3", "olmo", "olmo2") or draw(st.booleans()):
        cfg["pad_token_id"] = draw(st.one_of(st.none(), st.integers(0, cfg["vocab_size"] - 1)))
    return cfg


# --- types-moe: strategies of qwen2_moe, qwen3_moe, deepseek_v2/v3, gpt_oss, llama4_text


def _heads(draw, cfg: dict, head_dim_key: str = "head_dim") -> None:
    """num_attention_heads, num_key_value_heads, hidden_size and (sometimes) head_dim."""
    h_kv = draw(st.integers(1, 3))
    h = h_kv * draw(st.integers(1, 3))
    cfg.update(num_attention_heads=h, num_key_value_heads=h_kv)
    cfg["hidden_size"] = h * 2 * draw(st.integers(1, 3)) + draw(st.integers(0, h - 1))
    if draw(st.booleans()):  # hidden_size // h is even too: rotary rotates pairs
        cfg[head_dim_key] = 2 * draw(st.integers(1, 4))


@st.composite
def qwen3_vl_moe(draw) -> dict:
    """Qwen3VLMoeForConditionalGeneration: a drawn Qwen3-MoE-shaped text model (E >= 1; no sliding
    window fields in Qwen3VLMoeTextConfig) beside the small Qwen3-VL vision model; the wrapper's tie
    alone decides, so a drawn text_config tie must not matter."""
    text = draw(qwen_moe("qwen3_moe"))
    for key in ("use_sliding_window", "sliding_window"):
        text.pop(key, None)
    text["model_type"] = "qwen3_vl_moe_text"
    if draw(st.booleans()):
        del text["model_type"]  # Qwen3VLMoeConfig's text_config default
    vision = dict(QWEN3_VL_VISION, model_type=draw(st.sampled_from(["qwen3_vl_moe", "qwen3_vl_moe_vision"])))
    cfg = dict(model_type="qwen3_vl_moe", vision_config=vision, text_config=text)
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    return cfg


# A small Kimi_K25VisionConfig (the tower's keys drawn by the kimi_k25 strategy)
KIMI_K25_VISION = dict(
    hidden_size=8, intermediate_size=6, num_hidden_layers=1, num_attention_heads=2, patch_size=2, pos_emb_height=3
)


@st.composite
def kimi_k25(draw) -> dict:
    """Kimi_K25ForConditionalGeneration: a drawn DeepSeek-V3 text model (as Moonshot's kimi_k2 or as
    deepseek_v3) beside a drawn small Kimi K2.5 tower; the wrapper's tie alone decides (default true)."""
    text = draw(deepseek("deepseek_v3"))
    text["model_type"] = draw(st.sampled_from(["deepseek_v3", "kimi_k2"]))
    d = draw(st.integers(1, 3)) * 4
    vision = dict(
        KIMI_K25_VISION,
        hidden_size=d,
        num_hidden_layers=draw(st.integers(1, 2)),
        patch_size=draw(st.integers(1, 3)),
        pos_emb_width=draw(st.integers(1, 4)),
        merge_kernel_size=[draw(st.integers(1, 3))] * 2,
    )
    cfg = dict(model_type="kimi_k25", vision_config=vision, text_config=text, projection_hidden_size=d)
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    return cfg


def _pad(draw, cfg: dict) -> None:
    if draw(st.booleans()):
        cfg["pad_token_id"] = draw(st.one_of(st.none(), st.integers(0, cfg["vocab_size"] - 1)))


@st.composite
def qwen_moe(draw, mt: str) -> dict:
    n = draw(st.integers(1, 4))
    cfg = dict(
        model_type=mt,
        num_hidden_layers=n,
        intermediate_size=draw(SIZE),
        moe_intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
    )
    _heads(draw, cfg)
    E = draw(st.integers(0 if mt == "qwen2_moe" else 1, 5))
    cfg.update(num_experts=E, num_experts_per_tok=draw(st.integers(1, max(E, 1))))
    _maybe(draw, cfg, "decoder_sparse_step", st.integers(1, 3))
    _maybe(draw, cfg, "mlp_only_layers", st.one_of(st.none(), st.lists(st.integers(0, n), max_size=n)))
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    if mt == "qwen2_moe":
        _maybe(draw, cfg, "shared_expert_intermediate_size", SIZE)
        _maybe(draw, cfg, "qkv_bias", st.booleans())
        _maybe(draw, cfg, "max_window_layers", st.integers(0, n))
    else:
        _maybe(draw, cfg, "attention_bias", st.booleans())
    _maybe(draw, cfg, "use_sliding_window", st.booleans())
    _maybe(draw, cfg, "sliding_window", st.integers(1, 64))
    _pad(draw, cfg)
    return cfg


@st.composite
def deepseek(draw, mt: str) -> dict:
    h = draw(st.integers(1, 4))
    cfg = dict(
        model_type=mt,
        num_attention_heads=h,
        hidden_size=h * draw(st.integers(1, 6)) + (0 if mt == "deepseek_v2" else draw(st.integers(0, h - 1))),
        num_hidden_layers=draw(st.integers(1, 3)),
        intermediate_size=draw(SIZE),
        moe_intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
        kv_lora_rank=draw(st.integers(1, 8)),
        q_lora_rank=draw(st.one_of(st.none(), st.integers(1, 8))),
        qk_rope_head_dim=2 * draw(st.integers(1, 3)),
        qk_nope_head_dim=draw(st.integers(1, 6)),
        v_head_dim=draw(st.integers(1, 6)),
        first_k_dense_replace=draw(st.integers(0, 3)),
        n_shared_experts=draw(st.integers(0, 2)),
    )
    E = draw(st.integers(1, 5))
    cfg.update(n_routed_experts=E, num_experts_per_tok=draw(st.integers(1, E)))
    _maybe(
        draw,
        cfg,
        "num_key_value_heads",
        st.one_of(st.none(), st.integers(1, 4)) if mt == "deepseek_v2" else st.integers(1, 4),
    )
    _maybe(draw, cfg, "attention_bias", st.booleans())
    if mt == "deepseek_v2" and cfg["n_shared_experts"]:  # mlp_bias without shared experts: refused
        _maybe(draw, cfg, "mlp_bias", st.booleans())
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    _pad(draw, cfg)
    return cfg


# --- encoders (types-enc)


@st.composite
def distilbert(draw) -> dict:
    h = draw(st.integers(1, 4))
    cfg = dict(
        model_type="distilbert",
        n_heads=h,
        n_layers=draw(LAYERS),
        hidden_dim=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 40)),
    )
    d = h * draw(st.integers(1, 6))
    if draw(st.booleans()):  # the attribute_map aliases
        cfg.update(hidden_size=d, num_attention_heads=cfg.pop("n_heads"), num_hidden_layers=cfg.pop("n_layers"))
    else:
        cfg["dim"] = d
    _maybe(draw, cfg, "sinusoidal_pos_embds", st.booleans())
    if draw(st.booleans()):
        cfg["pad_token_id"] = draw(st.one_of(st.none(), st.integers(0, cfg["vocab_size"] - 1)))
    return cfg


@st.composite
def gpt_oss(draw) -> dict:
    n = draw(st.integers(1, 3))
    cfg = dict(
        model_type="gpt_oss",
        num_hidden_layers=n,
        intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
    )
    _heads(draw, cfg)
    E = draw(st.integers(1, 5))
    cfg.update(num_local_experts=E, num_experts_per_tok=draw(st.integers(1, E)))
    _maybe(draw, cfg, "attention_bias", st.booleans())
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    _maybe(draw, cfg, "sliding_window", st.one_of(st.none(), st.integers(1, 64)))
    _maybe(
        draw,
        cfg,
        "layer_types",
        st.lists(st.sampled_from(["full_attention", "sliding_attention"]), min_size=n, max_size=n),
    )
    _pad(draw, cfg)
    return cfg


@st.composite
def electra(draw) -> dict:
    cfg = draw(encoder("electra"))
    _maybe(draw, cfg, "embedding_size", st.one_of(st.integers(1, 12), st.just(cfg["hidden_size"])))
    return cfg


@st.composite
def llama4_text(draw) -> dict:
    n = draw(st.integers(1, 4))
    cfg = dict(
        model_type="llama4_text",
        num_hidden_layers=n,
        intermediate_size=draw(SIZE),
        intermediate_size_mlp=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
    )
    _heads(draw, cfg)
    E = draw(st.integers(1, 5))
    cfg.update(num_local_experts=E, num_experts_per_tok=draw(st.integers(1, E)))
    _maybe(draw, cfg, "interleave_moe_layer_step", st.integers(1, 3))
    _maybe(draw, cfg, "moe_layers", st.one_of(st.none(), st.lists(st.integers(0, n), max_size=n, unique=True)))
    _maybe(draw, cfg, "attention_bias", st.booleans())
    _maybe(draw, cfg, "use_qk_norm", st.booleans())
    _maybe(draw, cfg, "attention_chunk_size", st.one_of(st.none(), st.integers(1, 64)))
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    _pad(draw, cfg)
    return cfg


@st.composite
def xlm_roberta(draw) -> dict:
    cfg = draw(encoder("xlm-roberta"))
    if draw(st.booleans()):  # a padding row inside the vocabulary and the position table
        cfg["pad_token_id"] = draw(st.integers(0, min(cfg["vocab_size"], cfg["max_position_embeddings"]) - 1))
    return cfg


@st.composite
def roberta_like(draw, mt: str) -> dict:
    """RoBERTa's copies (CamemBERT, RoBERTa-PreLayerNorm): positions numbered from pad_token_id + 1."""
    cfg = draw(encoder(mt))
    if draw(st.booleans()):  # a padding row inside the vocabulary and the position table
        cfg["pad_token_id"] = draw(st.integers(0, min(cfg["vocab_size"], cfg["max_position_embeddings"]) - 1))
    return cfg


@st.composite
def mpnet(draw) -> dict:
    """MPNet: RoBERTa's positions, no token types, a bucketed relative bias of its own width."""
    cfg = draw(encoder("mpnet"))
    cfg.pop("type_vocab_size", None)
    _maybe(draw, cfg, "relative_attention_num_buckets", st.integers(1, 8))
    _maybe(draw, cfg, "pad_token_id", st.integers(0, 50))  # MPNetEmbeddings' padding_idx is 1 regardless
    return cfg


@st.composite
def modernbert(draw) -> dict:
    """ModernBERT: GeGLU, rotary positions, bias and norm-bias switches, global and sliding layers."""
    h = draw(st.integers(1, 4))
    n = draw(st.integers(1, 3))
    cfg = dict(
        model_type="modernbert",
        hidden_size=h * draw(st.integers(1, 6)),
        num_attention_heads=h,
        num_hidden_layers=n,
        intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
    )
    cfg["pad_token_id"] = draw(st.integers(0, cfg["vocab_size"] - 1))  # the class default 50283: no such row
    for key in ("norm_bias", "attention_bias", "mlp_bias"):
        _maybe(draw, cfg, key, st.booleans())
    kinds = st.sampled_from(["full_attention", "sliding_attention"])
    _maybe(draw, cfg, "layer_types", st.lists(kinds, min_size=n, max_size=n))
    if "layer_types" not in cfg:
        _maybe(draw, cfg, "global_attn_every_n_layers", st.integers(1, 4))
    return cfg


@st.composite
def nomic_bert(draw) -> dict:
    """Nomic BERT: rotary positions, SwiGLU, a head width of its own (head_dim) or d // h."""
    h = draw(st.integers(1, 4))
    cfg = dict(
        model_type="nomic_bert",
        # even heads (rotary pairs), and a remainder below h that d // h floors away
        hidden_size=h * 2 * draw(st.integers(1, 3)) + draw(st.integers(0, h - 1)),
        num_attention_heads=h,
        num_hidden_layers=draw(LAYERS),
        intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
    )
    _maybe(draw, cfg, "type_vocab_size", st.integers(0, 3))
    _maybe(draw, cfg, "head_dim", st.integers(1, 4).map(lambda k: 2 * k))  # rotary pairs: even
    cfg["pad_token_id"] = draw(st.integers(0, cfg["vocab_size"] - 1))
    return cfg


@st.composite
def deberta_v2(draw) -> dict:
    cfg = draw(encoder("deberta-v2"))
    d = cfg["hidden_size"]
    _maybe(draw, cfg, "embedding_size", st.one_of(st.integers(1, 12), st.just(d)))
    _maybe(draw, cfg, "position_biased_input", st.booleans())
    _maybe(draw, cfg, "relative_attention", st.booleans())
    _maybe(draw, cfg, "max_relative_positions", st.integers(-1, 9))
    _maybe(draw, cfg, "position_buckets", st.integers(-1, 6))
    _maybe(
        draw,
        cfg,
        "pos_att_type",
        st.one_of(st.none(), st.sampled_from(["p2c|c2p", "c2p", "P2C", "none"]), st.just(["c2p", "p2c"])),
    )
    _maybe(draw, cfg, "share_att_key", st.booleans())
    _maybe(draw, cfg, "norm_rel_ebd", st.sampled_from(["layer_norm", "none"]))
    if draw(st.booleans()):
        cfg["conv_kernel_size"] = draw(st.sampled_from([0, 1, 3]))
        cfg["conv_groups"] = draw(st.sampled_from([g for g in (1, 2, 3) if d % g == 0]))
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
def led(draw) -> dict:
    """LEDForConditionalGeneration: BART's stacks, two position tables, even attention windows
    (one, or one per encoder layer)."""
    cfg = _stacks(draw, "led")
    cfg.update(
        max_encoder_position_embeddings=draw(st.integers(1, 40)),
        max_decoder_position_embeddings=draw(st.integers(1, 40)),
        pad_token_id=draw(st.integers(0, cfg["vocab_size"] - 1)),
    )
    window = st.integers(1, 8).map(lambda n: 2 * n)
    _maybe(
        draw,
        cfg,
        "attention_window",
        st.one_of(window, st.lists(window, min_size=cfg["encoder_layers"], max_size=cfg["encoder_layers"])),
    )
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


@st.composite
def wav2vec2(draw, mt: str) -> dict:
    """Wav2Vec2Model / HubertModel: a feature encoder of 1 to 4 convolutions (channels, kernels,
    strides drawn, biased or not, group or layer norms), heads and position-convolution groups
    that divide hidden_size, masking on or off, post- or pre-norm (stable) layers."""
    h = draw(st.integers(1, 3))
    g = draw(st.integers(1, 3))
    n_conv = draw(st.integers(1, 4))
    cfg = dict(
        model_type=mt,
        hidden_size=math.lcm(h, g) * draw(st.integers(1, 4)),
        num_attention_heads=h,
        num_conv_pos_embedding_groups=g,
        num_conv_pos_embeddings=draw(st.integers(1, 6)),
        num_hidden_layers=draw(LAYERS),
        intermediate_size=draw(SIZE),
        conv_dim=draw(st.lists(st.integers(1, 9), min_size=n_conv, max_size=n_conv)),
        conv_kernel=draw(st.lists(st.integers(1, 5), min_size=n_conv, max_size=n_conv)),
        conv_stride=draw(st.lists(st.integers(1, 5), min_size=n_conv, max_size=n_conv)),
    )
    _maybe(draw, cfg, "conv_bias", st.booleans())
    _maybe(draw, cfg, "feat_extract_norm", st.sampled_from(["group", "layer"]))
    _maybe(draw, cfg, "do_stable_layer_norm", st.booleans())
    _maybe(draw, cfg, "mask_time_prob", st.sampled_from([0.0, 0, 0.05, 0.5]))
    _maybe(draw, cfg, "mask_feature_prob", st.sampled_from([0.0, 0.1]))
    if draw(st.booleans()):  # 4.x files repeat len(conv_dim)
        cfg["num_feat_extract_layers"] = n_conv
    if mt == "hubert":
        _maybe(draw, cfg, "feat_proj_layer_norm", st.booleans())
        _maybe(draw, cfg, "conv_pos_batch_norm", st.booleans())
    if not cfg.get("do_stable_layer_norm"):  # adapters are built (and counted) only in stable layers
        _maybe(draw, cfg, "adapter_attn_dim", st.one_of(st.none(), st.integers(1, 5)))
    return cfg


# The bias keys of each dense decoder's config class (transformers 5.24), drawn or left to the default.
_DENSE_BIAS_KEYS = {
    "ministral": (),
    "helium": ("attention_bias", "mlp_bias"),
    "arcee": ("attention_bias", "mlp_bias"),
    "seed_oss": ("attention_bias", "attention_out_bias", "mlp_bias"),
    "ernie4_5": ("use_bias",),
    "glm": ("attention_bias",),
    "glm4": ("attention_bias",),
    "nemotron": ("attention_bias", "mlp_bias"),
    "smollm3": ("attention_bias", "mlp_bias"),
    "olmo3": ("attention_bias",),
    "exaone4": (),
    "cohere2": ("attention_bias",),
    "hunyuan_v1_dense": ("attention_bias",),
    "apertus": ("attention_bias",),
    "ministral3": (),
}


# Types whose config refuses a null head_dim / num_key_value_heads, and those whose hidden_size
# must be heads x head_dim (ArceeConfig's check; Helium's d x d o_proj).
_DENSE_STRICT_NULL = (
    "helium",
    "glm",
    "glm4",
    "ministral",
    "smollm3",
    "olmo3",
    "exaone4",
    "cohere2",
    "hunyuan_v1_dense",
    "apertus",
    "ministral3",
)
_DENSE_WHOLE_HEADS = ("helium", "arcee")


@st.composite
def dense(draw, mt: str) -> dict:
    """A small config of a dense decoder: heads, GQA, head_dim given or not (hidden_size may
    leave a remainder), biases, tying, and a padding row inside the vocabulary (the class
    defaults of pad_token_id, such as GLM's 151329, lie outside a small one)."""
    cfg = dict(
        model_type=mt,
        num_hidden_layers=draw(LAYERS),
        intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
    )
    _heads(draw, cfg)
    h = cfg["num_attention_heads"]
    if "head_dim" not in cfg or mt in _DENSE_WHOLE_HEADS:
        cfg["hidden_size"] = h * 2 * draw(st.integers(1, 3))  # d // h even: rotary pairs
        cfg.pop("head_dim", None)
        if mt == "helium":  # HeliumAttention's o_proj is d x d: only h * head_dim = d builds a runnable model
            cfg["head_dim"] = cfg["hidden_size"] // h
        elif mt not in _DENSE_STRICT_NULL and draw(st.booleans()):
            cfg["head_dim"] = None  # null -> hidden_size // num_attention_heads
    if mt in ("glm", "glm4", "ministral", "hunyuan_v1_dense") and "head_dim" not in cfg:
        cfg["head_dim"] = cfg["hidden_size"] // h  # their class default (128) is large: give one
    if (
        cfg["num_key_value_heads"] == h
        and mt not in _DENSE_STRICT_NULL + ("nemotron", "ministral3")
        and draw(st.booleans())
    ):
        cfg["num_key_value_heads"] = None
    for key in _DENSE_BIAS_KEYS[mt]:
        _maybe(draw, cfg, key, st.booleans())
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    cfg["pad_token_id"] = draw(st.one_of(st.none(), st.integers(0, cfg["vocab_size"] - 1)))
    if mt == "ministral":  # a window on every layer, none, or the layers layer_types marks
        _maybe(draw, cfg, "sliding_window", st.one_of(st.none(), st.integers(1, 64)))
        if draw(st.booleans()):
            n = cfg["num_hidden_layers"]
            cfg["layer_types"] = draw(
                st.lists(st.sampled_from(["full_attention", "sliding_attention"]), min_size=n, max_size=n)
            )
    if mt == "smollm3":
        _smollm3_windows(draw, cfg)
    if mt == "exaone4":  # its pattern rule (needs a window), or a list with or without a window
        if draw(st.booleans()):
            cfg["layer_types"] = _layer_list(draw, cfg["num_hidden_layers"], ["full_attention", "sliding_attention"])
            _maybe(draw, cfg, "sliding_window", st.one_of(st.none(), st.integers(1, 64)))
        else:
            _maybe(draw, cfg, "sliding_window", st.integers(1, 64))
            _maybe(draw, cfg, "sliding_window_pattern", st.integers(1, 4))
    if mt == "ministral3":  # a window on every layer or none
        _maybe(draw, cfg, "sliding_window", st.one_of(st.none(), st.integers(1, 64)))
    if mt == "apertus":  # xIELU (two learned scalars an MLP) or a fixed activation
        _maybe(draw, cfg, "hidden_act", st.sampled_from(["xielu", "relu2", "silu", "gelu"]))
    if mt == "cohere2":  # the legacy pattern or a list
        _maybe(draw, cfg, "sliding_window", st.one_of(st.none(), st.integers(1, 64)))
        pick = draw(st.sampled_from(["types", "pattern", "none"]))
        if pick == "types":
            cfg["layer_types"] = _layer_list(draw, cfg["num_hidden_layers"], ["full_attention", "sliding_attention"])
        elif pick == "pattern":
            cfg["sliding_window_pattern"] = draw(st.integers(1, 4))
    if mt == "olmo3":  # OLMo 3's rule (3 sliding, 1 full), a list, or no window
        _maybe(draw, cfg, "sliding_window", st.one_of(st.none(), st.integers(1, 64)))
        if draw(st.booleans()):
            cfg["layer_types"] = _layer_list(draw, cfg["num_hidden_layers"], ["full_attention", "sliding_attention"])
    return cfg


def _layer_list(draw, n: int, kinds: list) -> list:
    return draw(st.lists(st.sampled_from(kinds), min_size=n, max_size=n))


def _smollm3_windows(draw, cfg: dict) -> None:
    """NoPE layers by list (longer than the stack is fine) or interval; the window switch, the
    window and layer_types given or derived (SmolLM3Config: the NoPE layers slide)."""
    n = cfg["num_hidden_layers"]
    if draw(st.booleans()):
        cfg["no_rope_layers"] = _layer_list(draw, n + draw(st.integers(0, 1)), [0, 1])
    else:
        _maybe(draw, cfg, "no_rope_layer_interval", st.integers(1, 3))
    _maybe(draw, cfg, "use_sliding_window", st.booleans())
    _maybe(draw, cfg, "sliding_window", st.one_of(st.none(), st.integers(1, 64)))
    if draw(st.booleans()):
        cfg["layer_types"] = _layer_list(draw, n, ["full_attention", "sliding_attention"])


@st.composite
def mamba(draw, mt: str) -> dict:
    """A small Mamba 1 / Falcon Mamba config: expand or an explicit intermediate_size (which
    the config class keeps over expand x hidden_size), time_step_rank given or "auto", biases,
    tying and the pad row inside the vocabulary."""
    cfg = dict(
        model_type=mt,
        hidden_size=draw(st.integers(1, 24)),
        num_hidden_layers=draw(LAYERS),
        vocab_size=draw(VOCAB),
        state_size=draw(st.integers(1, 6)),
        conv_kernel=draw(st.integers(1, 5)),
    )
    _maybe(draw, cfg, "expand", st.integers(1, 3))
    _maybe(draw, cfg, "intermediate_size", st.integers(1, 40))
    _maybe(draw, cfg, "time_step_rank", st.one_of(st.just("auto"), st.integers(1, 6)))
    for key in ("use_bias", "use_conv_bias", "tie_word_embeddings"):
        _maybe(draw, cfg, key, st.booleans())
    cfg["pad_token_id"] = draw(st.integers(0, cfg["vocab_size"] - 1))
    return cfg


@st.composite
def mamba2(draw) -> dict:
    """A small Mamba 2 config: num_heads x head_dim = expand x hidden_size (Mamba2Config's
    check), n_groups dividing the heads."""
    groups = draw(st.integers(1, 3))
    heads = groups * draw(st.integers(1, 3))
    expand = draw(st.sampled_from([1, 2]))
    d = draw(st.integers(1, 6))
    head_dim = expand * d * draw(st.integers(1, 2))
    d = head_dim * heads // expand
    cfg = dict(
        model_type="mamba2",
        hidden_size=d,
        expand=expand,
        num_heads=heads,
        head_dim=head_dim,
        n_groups=groups,
        num_hidden_layers=draw(LAYERS),
        vocab_size=draw(VOCAB),
        state_size=draw(st.integers(1, 6)),
        conv_kernel=draw(st.integers(1, 5)),
        chunk_size=draw(st.integers(1, 16)),
    )
    for key in ("use_bias", "use_conv_bias", "tie_word_embeddings"):
        _maybe(draw, cfg, key, st.booleans())
    cfg["pad_token_id"] = draw(st.integers(0, cfg["vocab_size"] - 1))
    return cfg


@st.composite
def jamba(draw) -> dict:
    """A small Jamba config: attention and expert layer periods and offsets (offset < period, as
    JambaConfig requires), GQA heads, head_dim given or not (getattr), experts or none (1)."""
    h_kv = draw(st.integers(1, 3))
    h = h_kv * draw(st.integers(1, 2))
    a_period, e_period = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    experts = draw(st.integers(1, 4))
    cfg = dict(
        model_type="jamba",
        hidden_size=h * draw(st.integers(1, 4)),
        num_attention_heads=h,
        num_key_value_heads=h_kv,
        num_hidden_layers=draw(st.integers(1, 6)),
        intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        attn_layer_period=a_period,
        attn_layer_offset=draw(st.integers(0, a_period - 1)),
        expert_layer_period=e_period,
        expert_layer_offset=draw(st.integers(0, e_period - 1)),
        num_experts=experts,
        num_experts_per_tok=draw(st.integers(1, experts)),
        mamba_d_state=draw(st.integers(1, 5)),
        mamba_d_conv=draw(st.integers(1, 4)),
        mamba_expand=draw(st.integers(1, 3)),
    )
    _maybe(draw, cfg, "mamba_dt_rank", st.one_of(st.just("auto"), st.integers(1, 5)))
    _maybe(draw, cfg, "head_dim", st.integers(1, 6))
    for key in ("mamba_conv_bias", "mamba_proj_bias", "tie_word_embeddings"):
        _maybe(draw, cfg, key, st.booleans())
    cfg["pad_token_id"] = draw(st.integers(0, cfg["vocab_size"] - 1))
    return cfg


@st.composite
def qwen3_next(draw) -> dict:
    """A small Qwen3-Next config: layer_types drawn (or left to full_attention_interval),
    mlp_only_layers and decoder_sparse_step choosing the MoE layers, experts or none (0)."""
    h_kv = draw(st.integers(1, 3))
    h = h_kv * draw(st.integers(1, 2))
    n = draw(st.integers(1, 5))
    experts = draw(st.integers(0, 4))
    cfg = dict(
        model_type="qwen3_next",
        hidden_size=2 * h * draw(st.integers(1, 3)),
        num_attention_heads=h,
        num_key_value_heads=h_kv,
        head_dim=2 * draw(st.integers(1, 4)),
        num_hidden_layers=n,
        intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
        linear_num_key_heads=(hk := draw(st.integers(1, 2))),
        linear_num_value_heads=hk * draw(st.integers(1, 2)),
        linear_key_head_dim=draw(st.integers(1, 6)),
        linear_value_head_dim=draw(st.integers(1, 6)),
        linear_conv_kernel_dim=draw(st.integers(1, 4)),
        num_experts=experts,
        num_experts_per_tok=draw(st.integers(1, max(experts, 1))),
        moe_intermediate_size=draw(SIZE),
        shared_expert_intermediate_size=draw(SIZE),
        decoder_sparse_step=draw(st.integers(1, 3)),
        mlp_only_layers=draw(st.lists(st.integers(0, n - 1), max_size=n, unique=True)),
    )
    if draw(st.booleans()):
        cfg["layer_types"] = draw(
            st.lists(st.sampled_from(["linear_attention", "full_attention"]), min_size=n, max_size=n)
        )
    else:
        cfg["full_attention_interval"] = draw(st.integers(1, 4))
    for key in ("attention_bias", "tie_word_embeddings"):
        _maybe(draw, cfg, key, st.booleans())
    return cfg


@st.composite
def gemma4_text(draw) -> dict:
    """A small Gemma 4 text config: sliding and full layers (layer_types drawn or left to the
    class's 5-in-6 rule), the full layers' own head width (global_head_dim) and, with K = V, key/value
    heads (num_global_key_value_heads), KV sharing over the last layers (only counts whose layer types
    all occur earlier, as Gemma4TextConfig requires), the double-wide MLP, per-layer inputs (or 0:
    none) and the mixture of experts beside the MLP, each on or off."""
    h_kv = draw(st.integers(1, 3))
    h = h_kv * draw(st.integers(1, 2))
    n = draw(st.integers(1, 6))
    cfg = dict(
        model_type="gemma4_text",
        hidden_size=draw(st.integers(2, 24)),
        num_attention_heads=h,
        num_key_value_heads=h_kv,
        head_dim=4 * draw(st.integers(1, 3)),
        global_head_dim=4 * draw(st.integers(1, 4)),
        num_hidden_layers=n,
        intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
        sliding_window=draw(st.integers(1, 16)),
        hidden_size_per_layer_input=draw(st.integers(0, 5)),
        vocab_size_per_layer_input=draw(VOCAB),
    )
    types = None
    if draw(st.booleans()):
        types = draw(st.lists(st.sampled_from(["sliding_attention", "full_attention"]), min_size=n, max_size=n))
        cfg["layer_types"] = types
    final = list(types) if types else ["sliding_attention" if (i + 1) % 6 else "full_attention" for i in range(n)]
    final[-1] = "full_attention"
    shared = draw(st.integers(0, n))
    if 0 < shared < n and set(final[: n - shared]) != set(final):
        shared = 0  # Gemma4TextConfig raises when a shared layer's type has no earlier producer
    cfg["num_kv_shared_layers"] = shared
    if draw(st.booleans()):
        cfg["attention_k_eq_v"] = True
        # a divisor of h: other counts build but cannot run (symtrans refuses them, tests/test_gemma4.py)
        _maybe(draw, cfg, "num_global_key_value_heads", st.sampled_from([d for d in range(1, h + 1) if h % d == 0]))
    if draw(st.booleans()):
        experts = draw(st.integers(1, 4))
        cfg.update(
            enable_moe_block=True,
            num_experts=experts,
            top_k_experts=draw(st.integers(1, experts)),
            moe_intermediate_size=draw(SIZE),
        )
    for key in ("attention_bias", "tie_word_embeddings", "use_double_wide_mlp"):
        _maybe(draw, cfg, key, st.booleans())
    cfg["pad_token_id"] = draw(st.integers(0, min(cfg["vocab_size"], cfg["vocab_size_per_layer_input"]) - 1))
    return cfg


# A small Gemma4VisionConfig (the tower's keys drawn by the gemma4 strategy)
# A small Gemma 4 audio tower (Gemma4AudioConfig keys; the others its defaults).
GEMMA4_AUDIO = dict(
    model_type="gemma4_audio",
    hidden_size=8,
    num_attention_heads=2,
    num_hidden_layers=1,
    conv_kernel_size=3,
    output_proj_dims=6,
    subsampling_conv_channels=[8, 3],
)
GEMMA4_VISION = dict(
    hidden_size=8,
    intermediate_size=6,
    num_hidden_layers=1,
    num_attention_heads=2,
    num_key_value_heads=1,
    head_dim=4,
    patch_size=2,
    position_embedding_size=5,
)


@st.composite
def gemma4(draw) -> dict:
    """Gemma4ForConditionalGeneration: a drawn Gemma 4 text model beside a drawn small Gemma 4
    vision tower (or none: vision_config null or missing), beside a vision tower a drawn small
    Gemma 4 audio tower (or none), the wrapper's tie flag drawn (it alone ties).  An audio tower
    without a vision tower is refused (no published config has one), so never drawn."""
    text = draw(gemma4_text())
    cfg = dict(model_type="gemma4", text_config=text)
    if draw(st.integers(0, 4)):
        h_kv = draw(st.integers(1, 3))
        vision = dict(
            model_type="gemma4_vision",
            hidden_size=draw(st.integers(1, 12)),
            intermediate_size=draw(st.integers(1, 9)),
            num_hidden_layers=draw(st.integers(1, 2)),
            num_attention_heads=h_kv * draw(st.integers(1, 2)),
            num_key_value_heads=h_kv,
            head_dim=4 * draw(st.integers(1, 3)),
            patch_size=draw(st.integers(1, 3)),
            position_embedding_size=draw(st.integers(1, 6)),
        )
        for key, strategy in (
            ("pooling_kernel_size", st.integers(1, 3)),
            ("standardize", st.booleans()),
            ("use_clipped_linears", st.booleans()),
        ):
            _maybe(draw, vision, key, strategy)
        cfg["vision_config"] = vision
        if draw(st.integers(0, 2)):
            h = draw(st.integers(1, 3))
            audio = dict(
                model_type="gemma4_audio",
                hidden_size=h * draw(st.integers(1, 3)),
                num_attention_heads=h,
                num_hidden_layers=draw(st.integers(1, 2)),
                conv_kernel_size=draw(st.integers(1, 5)),
                output_proj_dims=draw(st.integers(1, 9)),
                # c1 below 4: input_proj_linear takes (c1 // 4) c2 = 0 features
                subsampling_conv_channels=[draw(st.integers(1, 9)), draw(st.integers(1, 4))],
            )
            for key, strategy in (
                ("use_clipped_linears", st.booleans()),
                ("attention_chunk_size", st.integers(1, 6)),
                ("attention_context_left", st.integers(1, 6)),
                ("attention_context_right", st.integers(0, 3)),
                ("residual_weight", st.floats(0.1, 1.0)),
            ):
                _maybe(draw, audio, key, strategy)
            cfg["audio_config"] = audio
    elif draw(st.booleans()):
        cfg["vision_config"] = None
    if "audio_config" not in cfg and draw(st.booleans()):
        cfg["audio_config"] = None
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    return cfg


@st.composite
def lfm2(draw) -> dict:
    """A small LFM2 config: layer_types, full_attn_idxs or neither (all attention), the MLP width
    adjustment (2/3, multiplier, rounding) on or off, Liquid's block_ff_dim / tie_embedding names."""
    h_kv = draw(st.integers(1, 3))
    h = h_kv * draw(st.integers(1, 2))
    n = draw(st.integers(1, 5))
    cfg = dict(
        model_type="lfm2",
        hidden_size=2 * h * draw(st.integers(1, 3)),
        num_attention_heads=h,
        num_key_value_heads=h_kv,
        num_hidden_layers=n,
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
        conv_L_cache=draw(st.integers(1, 4)),
        block_multiple_of=draw(st.integers(1, 8)),
    )
    cfg["block_ff_dim" if draw(st.booleans()) else "intermediate_size"] = draw(
        st.integers(6, 40)
    )  # a width adjusted to 0 is refused
    _maybe(draw, cfg, "block_auto_adjust_ff_dim", st.booleans())
    _maybe(draw, cfg, "block_ffn_dim_multiplier", st.sampled_from([0.5, 1.0, 1.5, 2]))
    pick = draw(st.sampled_from(["types", "idxs", "none"]))
    if pick == "types":
        cfg["layer_types"] = draw(st.lists(st.sampled_from(["conv", "full_attention"]), min_size=n, max_size=n))
    elif pick == "idxs":
        cfg["full_attn_idxs"] = draw(st.lists(st.integers(0, n - 1), max_size=n, unique=True))
    _maybe(draw, cfg, "conv_bias", st.booleans())
    _maybe(draw, cfg, "tie_embedding" if draw(st.booleans()) else "tie_word_embeddings", st.booleans())
    cfg["pad_token_id"] = draw(st.integers(0, cfg["vocab_size"] - 1))
    return cfg


# --- mixture-of-experts decoders of catalog/models/moe.py (issue 21)


def _moe_heads(draw, cfg: dict, whole: bool = False) -> None:
    """Heads, hidden_size (h x an even head width, plus a remainder unless ``whole``), and
    sometimes an explicit even head_dim (hidden_size // h stays even: rotary pairs)."""
    h_kv = draw(st.integers(1, 3))
    h = h_kv * draw(st.integers(1, 2))
    cfg.update(num_attention_heads=h, num_key_value_heads=h_kv)
    cfg["hidden_size"] = h * 2 * draw(st.integers(1, 3)) + (0 if whole else draw(st.integers(0, h - 1)))
    if not whole and draw(st.booleans()):
        cfg["head_dim"] = 2 * draw(st.integers(1, 4))


@st.composite
def olmoe(draw) -> dict:
    """A small OLMoE: h x head_dim = hidden_size (its q_norm is hidden_size wide)."""
    E = draw(st.integers(1, 5))
    cfg = dict(
        model_type="olmoe",
        num_hidden_layers=draw(LAYERS),
        intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
        num_experts=E,
        num_experts_per_tok=draw(st.integers(1, E)),
    )
    _moe_heads(draw, cfg, whole=True)
    if cfg["num_key_value_heads"] == cfg["num_attention_heads"] and draw(st.booleans()):
        del cfg["num_key_value_heads"]  # None: num_attention_heads (OlmoeConfig.__post_init__)
    for key in ("attention_bias", "tie_word_embeddings"):
        _maybe(draw, cfg, key, st.booleans())
    _pad(draw, cfg)
    return cfg


@st.composite
def dbrx(draw) -> dict:
    """A small DBRX: d_model = n_heads x head_dim (head_dim even above 4: rotary pairs),
    kv_n_heads dividing n_heads; attn_config always gives rope_theta (DbrxAttention reads it,
    DbrxAttentionConfig has no default); kv_n_heads 1, moe_top_k 1 and ffn_hidden_size are
    sometimes left to DbrxAttentionConfig's / DbrxFFNConfig's defaults (1, 1, 3584)."""
    h_kv = draw(st.integers(1, 3))
    h = h_kv * draw(st.integers(1, 3))
    d_k = draw(st.one_of(st.integers(1, 4), st.sampled_from([6, 8])))
    attn: dict = {"rope_theta": draw(st.sampled_from([10000.0, 500000]))}
    if h_kv > 1 or draw(st.booleans()):  # else DbrxAttentionConfig's default, 1
        attn["kv_n_heads"] = h_kv
    _maybe(draw, attn, "clip_qkv", st.sampled_from([None, 8]))
    E = draw(st.integers(1, 5))
    ffn: dict = {"moe_num_experts": E, "moe_top_k": draw(st.integers(1, E))}
    if draw(st.booleans()):
        ffn["ffn_hidden_size"] = draw(SIZE)
    if ffn["moe_top_k"] == 1 and draw(st.booleans()):
        del ffn["moe_top_k"]
    _maybe(draw, ffn, "ffn_act_fn", st.sampled_from([None, {"name": "silu"}, {"name": "gelu"}]))
    cfg = dict(
        model_type="dbrx",
        d_model=h * d_k,
        n_heads=h,
        n_layers=draw(LAYERS),
        vocab_size=draw(VOCAB),
        max_seq_len=draw(st.integers(1, 64)),
        attn_config=attn,
        ffn_config=ffn,
    )
    _pad(draw, cfg)
    return cfg


@st.composite
def deepseek_moe(draw, mt: str) -> dict:
    """A small GLM-4.5 (glm4_moe) or dots.llm1 (dots1): first_k_dense_replace dense layers, then
    MoE layers of n_routed_experts and a shared MLP n_shared_experts x moe_intermediate_size
    wide (0: none); head_dim read by getattr; GLM's use_qk_norm, dots1's sliding window."""
    n = draw(st.integers(1, 3))
    E = draw(st.integers(1, 4))
    cfg = dict(
        model_type=mt,
        num_hidden_layers=n,
        intermediate_size=draw(SIZE),
        moe_intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
        n_routed_experts=E,
        num_experts_per_tok=draw(st.integers(1, E)),
        n_shared_experts=draw(st.integers(0, 2)),
        first_k_dense_replace=draw(st.integers(0, n + 1)),
    )
    _moe_heads(draw, cfg)
    for key in ("attention_bias", "tie_word_embeddings"):
        _maybe(draw, cfg, key, st.booleans())
    if mt == "glm4_moe":
        _maybe(draw, cfg, "use_qk_norm", st.booleans())
    else:
        _maybe(draw, cfg, "sliding_window", st.one_of(st.none(), st.integers(1, 64)))
        _maybe(draw, cfg, "max_window_layers", st.integers(0, n))
    _pad(draw, cfg)
    return cfg


@st.composite
def minimax_m2(draw) -> dict:
    """A small MiniMax-M2: every layer a MoE, QK norms over all heads, an explicit head_dim."""
    E = draw(st.integers(1, 5))
    cfg = dict(
        model_type="minimax_m2",
        num_hidden_layers=draw(LAYERS),
        intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
        num_local_experts=E,
        num_experts_per_tok=draw(st.integers(1, E)),
    )
    _moe_heads(draw, cfg)
    cfg.setdefault("head_dim", 2 * draw(st.integers(1, 4)))  # the class default 128 is large
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    _pad(draw, cfg)
    return cfg


@st.composite
def mixtral_like(draw, mt: str) -> dict:
    """A small Phi-3.5-MoE, Granite MoE (with a shared MLP or none) or Hunyuan-A13B: every layer a MoE
    of num_local_experts (Hunyuan: num_experts, moe_topk an int or one equal k per layer)."""
    n = draw(LAYERS)
    E = draw(st.integers(1, 5))
    k = draw(st.integers(1, E))
    cfg = dict(
        model_type=mt,
        num_hidden_layers=n,
        intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
    )
    if mt == "hunyuan_v1_moe":
        cfg.update(num_experts=E, moe_topk=draw(st.sampled_from([k, [k] * n])))
    else:
        cfg.update(num_local_experts=E, num_experts_per_tok=k)
    _moe_heads(draw, cfg)
    if mt == "hunyuan_v1_moe":
        cfg.setdefault("head_dim", 2 * draw(st.integers(1, 4)))  # required: its None default cannot build
    for key in ("attention_bias", "tie_word_embeddings"):
        _maybe(draw, cfg, key, st.booleans())
    if mt == "phimoe":
        _maybe(draw, cfg, "lm_head_bias", st.booleans())
        _maybe(draw, cfg, "sliding_window", st.one_of(st.none(), st.integers(1, 64)))
    if mt == "granitemoeshared":
        _maybe(draw, cfg, "shared_intermediate_size", st.integers(0, 24))
    _pad(draw, cfg)
    return cfg


@st.composite
def ernie4_5_moe(draw) -> dict:
    """A small ERNIE 4.5 MoE: MoE layers every moe_layer_interval-th between the start and end
    indices (end -1: the last layer), a shared MLP of 0-2 x the expert width, use_bias."""
    n = draw(st.integers(1, 4))
    E = draw(st.integers(1, 4))
    cfg = dict(
        model_type="ernie4_5_moe",
        num_hidden_layers=n,
        intermediate_size=draw(SIZE),
        moe_intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
        moe_num_experts=E,
        moe_k=draw(st.integers(1, E)),
        moe_num_shared_experts=draw(st.integers(0, 2)),
        moe_layer_start_index=draw(st.integers(0, n)),
        moe_layer_end_index=draw(st.integers(-1, n)),
        moe_layer_interval=draw(st.integers(1, 3)),
    )
    _moe_heads(draw, cfg)
    for key in ("use_bias", "tie_word_embeddings"):
        _maybe(draw, cfg, key, st.booleans())
    _pad(draw, cfg)
    return cfg


_NULL_Q = ("mistral4", "glm4_moe_lite")  # their attention builds one q_proj when q_lora_rank is null


@st.composite
def mla_moe(draw, mt: str) -> dict:
    """A small DeepSeek-V3.2 (deepseek_v32), GLM-5 (glm_moe_dsa), Mistral 4 or GLM-4.7-Flash
    (glm4_moe_lite): DeepSeek-V3's latent attention (q_lora_rank may be null but in the DSA types),
    MoE layers by mlp_layer_types or first_k_dense_replace (GLM-4.7-Flash has none: its first
    layer is dense), shared MLPs of 0-2 x the expert width; the DSA types draw the lightning
    indexer (index_head_dim at least qk_rope_head_dim, which it rotates) and GLM its indexer_types
    (layer 0 full: a shared layer reuses an earlier full layer's top-k)."""
    n = draw(st.integers(1, 3))
    h = draw(st.integers(1, 4))
    E = draw(st.integers(1, 4))
    rope = 2 * draw(st.integers(1, 3))
    cfg = dict(
        model_type=mt,
        num_attention_heads=h,
        num_key_value_heads=h,
        hidden_size=h * draw(st.integers(1, 6)) + draw(st.integers(0, h - 1)),
        num_hidden_layers=n,
        intermediate_size=draw(SIZE),
        moe_intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
        kv_lora_rank=draw(st.integers(1, 8)),
        q_lora_rank=draw(st.one_of(st.none(), st.integers(1, 8)) if mt in _NULL_Q else st.integers(1, 8)),
        qk_rope_head_dim=rope,
        qk_nope_head_dim=draw(st.integers(1, 6)),
        v_head_dim=draw(st.integers(1, 6)),
        n_routed_experts=E,
        num_experts_per_tok=draw(st.integers(1, E)),
        n_shared_experts=draw(st.integers(0, 2)),
    )
    if mt != "glm4_moe_lite":
        cfg["first_k_dense_replace"] = draw(st.integers(0, n + 1))
    if mt != "mistral4":
        _maybe(draw, cfg, "mlp_layer_types", st.lists(st.sampled_from(["dense", "sparse"]), min_size=n, max_size=n))
    if mt in ("deepseek_v32", "glm_moe_dsa"):
        cfg.update(
            index_n_heads=draw(st.integers(1, 4)),
            index_head_dim=rope + draw(st.integers(0, 4)),
            index_topk=draw(st.integers(1, 64)),
        )
    if mt == "glm_moe_dsa" and draw(st.booleans()):
        rest = draw(st.lists(st.sampled_from(["full", "shared"]), min_size=n - 1, max_size=n - 1))
        cfg["indexer_types"] = ["full", *rest]
    elif mt == "glm_moe_dsa":
        _maybe(draw, cfg, "index_topk_freq", st.integers(1, 3))
        _maybe(draw, cfg, "index_skip_topk_offset", st.integers(1, 3))
    for key in ("attention_bias", "tie_word_embeddings"):
        _maybe(draw, cfg, key, st.booleans())
    if mt == "mistral4":  # Mistral4Config's pad_token_id 11 is a row only of a vocabulary above 11
        cfg["pad_token_id"] = draw(st.one_of(st.none(), st.integers(0, cfg["vocab_size"] - 1)))
    else:
        _pad(draw, cfg)
    return cfg


_V4_TYPES = ("sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention")


@st.composite
def deepseek_v4(draw) -> dict:
    """A small DeepSeek-V4 (transformers 5.24 DeepseekV4Config): heads of an even width (the rotary
    part pairs features), o_groups dividing h x head_dim (the grouped output projection), the
    attention schedule as layer_types, the legacy compress_ratios (0/4/128 per layer, maybe one
    entry more, as the published file's MTP slot) or the class default; compress rates as the
    compress_rates dict or the legacy scalars; hash-routed layers; 1-3 hyper-connection streams."""
    n = draw(st.integers(1, 3))
    h = draw(st.integers(1, 4))
    head_dim = 2 * draw(st.integers(1, 4))
    g_o = draw(st.sampled_from([g for g in range(1, 5) if (h * head_dim) % g == 0]))
    E = draw(st.integers(1, 4))
    factor = 0.5 if head_dim % 4 == 0 else 1.0
    rotary = int(head_dim * factor)
    cfg = dict(
        model_type="deepseek_v4",
        vocab_size=draw(VOCAB),
        hidden_size=draw(SIZE),
        moe_intermediate_size=draw(SIZE),
        num_hidden_layers=n,
        num_attention_heads=h,
        head_dim=head_dim,
        q_lora_rank=draw(st.integers(1, 8)),
        o_groups=g_o,
        o_lora_rank=draw(st.integers(1, 6)),
        n_routed_experts=E,
        num_experts_per_tok=draw(st.integers(1, E)),
        hc_mult=draw(st.integers(1, 3)),
        index_n_heads=draw(st.integers(1, 4)),
        # at least the rotary part (head_dim x partial_rotary_factor): a narrower index head builds but
        # cannot run (symtrans refuses it, tests/test_deepseek_v4.py)
        index_head_dim=2 * draw(st.integers(max(1, rotary // 2), 4)),
        index_topk=draw(st.integers(1, 16)),
        max_position_embeddings=draw(st.integers(1, 64)),
        partial_rotary_factor=factor,
    )
    schedule = draw(st.sampled_from(["layer_types", "compress_ratios", "default"]))
    if schedule == "layer_types":
        cfg["layer_types"] = draw(st.lists(st.sampled_from(_V4_TYPES), min_size=n, max_size=n + 1))
    elif schedule == "compress_ratios":
        cfg["compress_ratios"] = draw(st.lists(st.sampled_from([0, 4, 128]), min_size=n, max_size=n + 1))
    rates = st.integers(1, 6)
    if draw(st.booleans()):
        cfg["compress_rates"] = {_V4_TYPES[1]: draw(rates), _V4_TYPES[2]: draw(rates)}
    else:
        _maybe(draw, cfg, "compress_rate_csa", rates)
        _maybe(draw, cfg, "compress_rate_hca", rates)
    _maybe(draw, cfg, "num_hash_layers", st.integers(0, n))
    _maybe(draw, cfg, "n_shared_experts", st.integers(0, 2))
    for key in ("mlp_bias", "attention_bias", "tie_word_embeddings"):
        _maybe(draw, cfg, key, st.booleans())
    _pad(draw, cfg)
    return cfg


@st.composite
def qwen3_5_text(draw) -> dict:
    """A small Qwen3.5 text config: qwen3_next's draw without the experts (a dense MLP a layer)."""
    cfg = draw(qwen3_next())
    for key in ("num_experts", "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size"):
        cfg.pop(key)
    for key in ("decoder_sparse_step", "mlp_only_layers"):
        cfg.pop(key)
    cfg["model_type"] = "qwen3_5_text"
    return cfg


@st.composite
def qwen3_5_moe_text(draw) -> dict:
    """A small Qwen3.5-MoE text config: qwen3_next's draw with experts on every layer (at least
    one expert) and no dense MLP (Qwen3_5MoeTextConfig has no intermediate_size)."""
    cfg = draw(qwen3_next())
    for key in ("intermediate_size", "decoder_sparse_step", "mlp_only_layers"):
        cfg.pop(key)
    cfg["num_experts"] = experts = draw(st.integers(1, 4))
    cfg["num_experts_per_tok"] = draw(st.integers(1, experts))
    cfg["model_type"] = "qwen3_5_moe_text"
    return cfg


@st.composite
def qwen3_5_vision(draw) -> dict:
    """A small Qwen3.5 vision tower: every key that shapes a weight drawn, or left to the
    class default where that default is small (in_channels 3, the 2 x 2 merger)."""
    heads = draw(st.integers(1, 2))
    side = draw(st.integers(1, 3))
    cfg = dict(
        depth=draw(st.integers(1, 2)),
        hidden_size=heads * 4 * draw(st.integers(1, 2)),  # even rotary halves per head
        intermediate_size=draw(SIZE),
        num_heads=heads,
        out_hidden_size=draw(SIZE),
        num_position_embeddings=side * side,
        patch_size=draw(st.integers(1, 3)),
        temporal_patch_size=draw(st.integers(1, 2)),
    )
    _maybe(draw, cfg, "spatial_merge_size", st.integers(1, 2))
    _maybe(draw, cfg, "in_channels", st.integers(1, 3))
    _maybe(draw, cfg, "deepstack_visual_indexes", st.sampled_from([[], [0]]))  # no such field: ignored
    return cfg


@st.composite
def qwen3_5(draw, mt: str = "qwen3_5") -> dict:
    """Qwen3_5ForConditionalGeneration (Qwen3_5MoeForConditionalGeneration): a drawn text model
    nested in text_config beside a drawn tower; the wrapper's tie_word_embeddings alone decides."""
    text = draw(qwen3_5_moe_text() if mt == "qwen3_5_moe" else qwen3_5_text())
    if draw(st.booleans()):
        del text["model_type"]  # the config class's own text model
    cfg = dict(model_type=mt, text_config=text, vision_config=draw(qwen3_5_vision()))
    if draw(st.booleans()):
        cfg["vision_config"]["model_type"] = draw(st.sampled_from([mt, f"{mt}_vision"]))
    _maybe(draw, cfg, "tie_word_embeddings", st.booleans())
    return cfg


def _bamba_mixers(draw, model_type: str) -> dict:
    """The parts Bamba and Granite 4.0-H share: GQA heads, head_dim given or not, Mamba 2 heads
    x head width = expand x hidden_size (their configs' check; head width given or "auto"),
    groups dividing the heads, the mixer's biases, a tied head or not."""
    h_kv = draw(st.integers(1, 3))
    h = h_kv * draw(st.integers(1, 2))
    groups = draw(st.integers(1, 2))
    heads = groups * draw(st.integers(1, 3))
    expand = draw(st.integers(1, 2))
    d = heads * draw(st.integers(1, 3))  # expand x d divisible by the heads
    d = d * h // math.gcd(d, h) if draw(st.booleans()) else d
    cfg = dict(
        model_type=model_type,
        hidden_size=d,
        num_attention_heads=h,
        num_key_value_heads=h_kv,
        num_hidden_layers=draw(st.integers(1, 5)),
        intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
        mamba_n_heads=heads,
        mamba_n_groups=groups,
        mamba_expand=expand,
        mamba_d_state=draw(st.integers(1, 5)),
        mamba_d_conv=draw(st.integers(1, 4)),
        mamba_chunk_size=draw(st.integers(1, 16)),
        time_step_limit=(0.0, 100.0),
    )
    if draw(st.booleans()):
        cfg["mamba_d_head"] = expand * d // heads
    if draw(st.booleans()):
        cfg["head_dim"] = 2 * draw(st.integers(1, 4))
    elif (d // h) % 2 or d < h:
        cfg["head_dim"] = 2 * max(1, d // h // 2)  # rotary rotates pairs; d < h would leave none
    for key in ("attention_bias", "mamba_conv_bias", "mamba_proj_bias", "tie_word_embeddings"):
        _maybe(draw, cfg, key, st.booleans())
    cfg["pad_token_id"] = draw(st.integers(0, cfg["vocab_size"] - 1))
    return cfg


@st.composite
def bamba(draw) -> dict:
    """A small Bamba config: attention layers by index (out-of-range indices ignored, none: all
    Mamba 2), an MLP bias or not, and the parts of ``_bamba_mixers``."""
    cfg = _bamba_mixers(draw, "bamba")
    n = cfg["num_hidden_layers"]
    cfg["attn_layer_indices"] = draw(st.lists(st.integers(0, n), max_size=n, unique=True))
    _maybe(draw, cfg, "mlp_bias", st.booleans())
    return cfg


@st.composite
def granitemoehybrid(draw) -> dict:
    """A small Granite 4.0-H config: layer_types in the published ("mamba"/"attention") or the
    5.x ("linear_attention"/"full_attention") spelling, or none (all Mamba 2); 0 to 4 experts with
    top-k up to E and a shared MLP (0 wide with experts: none), or the dense shared MLP alone;
    rope or no positions; and the parts of ``_bamba_mixers``."""
    cfg = _bamba_mixers(draw, "granitemoehybrid")
    n = cfg["num_hidden_layers"]
    experts = draw(st.integers(0, 4))
    cfg.update(
        num_local_experts=experts,
        num_experts_per_tok=draw(st.integers(1, experts)) if experts else 0,
        shared_intermediate_size=draw(st.integers(0 if experts else 1, 24)),
    )
    spelling = draw(st.sampled_from([("mamba", "attention"), ("linear_attention", "full_attention"), None]))
    if spelling is not None:
        cfg["layer_types"] = draw(st.lists(st.sampled_from(spelling), min_size=n, max_size=n))
    _maybe(draw, cfg, "position_embedding_type", st.sampled_from(["rope", "nope", None]))
    return cfg


@st.composite
def nemotron_h(draw) -> dict:
    """A small Nemotron-H config: 1 to 5 layers of Mamba 2, attention, MLP and MoE as the published
    hybrid_override_pattern (M * - E) or as layers_block_type (5.x or 4.x names); GQA heads of any
    head_dim (no rotary); Mamba 2 heads in groups (n_groups or its 4.x name mamba_n_groups); MLP
    and expert widths, a shared expert 0 wide (then intermediate_size) or not; biases."""
    n = draw(st.integers(1, 5))
    pattern = "".join(draw(st.lists(st.sampled_from("M*-E"), min_size=n, max_size=n)))
    if set(pattern) == {"*"}:  # attention alone is refused (symtrans models no FFN-less attention stack)
        pattern = pattern[:-1] + draw(st.sampled_from("M-E"))
    h_kv = draw(st.integers(1, 3))
    groups = draw(st.integers(1, 2))
    experts = draw(st.integers(1, 4))
    cfg = dict(
        model_type="nemotron_h",
        hidden_size=draw(st.integers(1, 16)),
        vocab_size=draw(VOCAB),
        num_attention_heads=h_kv * draw(st.integers(1, 2)),
        num_key_value_heads=h_kv,
        head_dim=draw(st.integers(1, 8)),
        max_position_embeddings=draw(st.integers(1, 64)),
        intermediate_size=draw(SIZE),
        mamba_num_heads=groups * draw(st.integers(1, 3)),
        mamba_head_dim=draw(st.integers(1, 4)),
        ssm_state_size=draw(st.integers(1, 5)),
        conv_kernel=draw(st.integers(1, 4)),
        chunk_size=draw(st.integers(1, 16)),
        n_routed_experts=experts,
        num_experts_per_tok=draw(st.integers(1, experts)),
        moe_intermediate_size=draw(SIZE),
        moe_shared_expert_intermediate_size=draw(st.integers(0, 24)),
    )
    cfg["mamba_n_groups" if draw(st.booleans()) else "n_groups"] = groups
    form = draw(st.sampled_from(["pattern", "types", "legacy"]))
    if form == "pattern":
        cfg["hybrid_override_pattern"] = pattern
    else:
        names = {"M": "linear_attention", "*": "full_attention", "-": "mlp", "E": "moe"}
        if form == "legacy":
            names |= {"M": "mamba", "*": "attention"}
        cfg["layers_block_type"] = [names[c] for c in pattern]
    for key in ("use_bias", "use_conv_bias", "mlp_bias", "tie_word_embeddings"):
        _maybe(draw, cfg, key, st.booleans())
    return cfg


@st.composite
def falcon_h1(draw) -> dict:
    """A small Falcon-H1 config: GQA heads (head_dim given even, or hidden_size // heads made even),
    a Mamba 2 width given (mamba_d_ssm = heads x head width, the head width given or "auto") or
    null (mamba_expand x hidden_size), groups dividing the heads, every bias switch, the gated
    norm on or off, drawn muP multipliers (no count changes), a tied head or not."""
    h_kv = draw(st.integers(1, 3))
    h = h_kv * draw(st.integers(1, 2))
    groups = draw(st.integers(1, 2))
    heads = groups * draw(st.integers(1, 3))
    d = 2 * h * draw(st.integers(1, 3))
    cfg = dict(
        model_type="falcon_h1",
        hidden_size=d,
        num_attention_heads=h,
        num_key_value_heads=h_kv,
        num_hidden_layers=draw(st.integers(1, 3)),
        intermediate_size=draw(SIZE),
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
        mamba_n_heads=heads,
        mamba_n_groups=groups,
        mamba_d_state=draw(st.integers(1, 5)),
        mamba_d_conv=draw(st.integers(1, 4)),
        mamba_chunk_size=draw(st.integers(1, 16)),
        time_step_limit=(0.0, 100.0),
        ssm_in_multiplier=draw(st.sampled_from([0.5, 1.0, 1.25])),
        mlp_multipliers=[draw(st.sampled_from([0.5, 1.0])), 1.0],
    )
    if draw(st.booleans()):
        width = draw(st.integers(1, 4))
        cfg["mamba_d_ssm"] = heads * width
        cfg["mamba_d_head"] = width if draw(st.booleans()) else "auto"
    else:  # null: the width is mamba_expand x hidden_size, a multiple of the heads
        cfg.update(mamba_d_ssm=None, mamba_expand=heads * draw(st.integers(1, 2)))
    if draw(st.booleans()):
        cfg["head_dim"] = 2 * draw(st.integers(1, 4))
    for key in (
        "attention_bias", "mlp_bias", "mamba_conv_bias", "mamba_proj_bias", "projectors_bias", "mamba_rms_norm",
        "mamba_norm_before_gate", "tie_word_embeddings",
    ):  # fmt: skip
        _maybe(draw, cfg, key, st.booleans())
    cfg["pad_token_id"] = draw(st.integers(0, cfg["vocab_size"] - 1))
    return cfg


@st.composite
def zamba2(draw) -> dict:
    """A small Zamba2 config: 1 to 6 layers of "hybrid" and Mamba 2 ("mamba" or "linear_attention"),
    or none given (the class's 54 layers); 1 to 3 shared blocks (num_mem_blocks) with LoRA adapters
    of rank 1 to 4, on q, k, v too or not (then MHA and heads dividing 2 x hidden_size, as a
    forward needs), else GQA heads of any width; Mamba 2 heads dividing expand x hidden_size in
    groups; intermediate_size given or null (4 x hidden_size); add_bias_linear, a tied head or
    not (untied: every hybrid layer keeps its own block), rotary or not."""
    adapt = draw(st.booleans())
    h_kv = draw(st.integers(1, 3))
    h = h_kv if adapt else h_kv * draw(st.integers(1, 2))
    groups = draw(st.integers(1, 2))
    heads = groups * draw(st.integers(1, 3))
    expand = draw(st.integers(1, 2))
    d = heads * draw(st.integers(1, 3))
    d = d * h // math.gcd(d, h)  # h divides d: heads of 2 x d / h, even (Zamba2Config's RoPE check refuses odd)
    cfg = dict(
        model_type="zamba2",
        hidden_size=d,
        num_attention_heads=h,
        num_key_value_heads=h_kv,
        vocab_size=draw(VOCAB),
        max_position_embeddings=draw(st.integers(1, 64)),
        n_mamba_heads=heads,
        mamba_ngroups=groups,
        mamba_expand=expand,
        mamba_d_state=draw(st.integers(1, 5)),
        mamba_d_conv=draw(st.integers(1, 4)),
        chunk_size=draw(st.integers(1, 16)),
        num_mem_blocks=draw(st.integers(1, 3)),
        adapter_rank=draw(st.integers(1, 4)),
        use_shared_attention_adapter=adapt,
        intermediate_size=draw(st.one_of(st.none(), SIZE)),
    )
    if d * expand % heads:
        cfg["hidden_size"] = d = heads * h  # keeps h | d and heads | expand x d
    if draw(st.integers(0, 9)):  # mostly a small layer list; sometimes the class's 54 layers
        n = draw(st.integers(1, 6))
        spelling = draw(st.sampled_from(["mamba", "linear_attention"]))
        cfg["layers_block_type"] = draw(st.lists(st.sampled_from(["hybrid", spelling]), min_size=n, max_size=n))
        cfg["num_hidden_layers"] = n
    else:
        cfg.update(hidden_size=heads * h, vocab_size=4)  # keep the 54-layer draw small
    for key in ("add_bias_linear", "tie_word_embeddings", "use_mem_rope"):
        _maybe(draw, cfg, key, st.booleans())
    cfg["pad_token_id"] = draw(st.integers(0, cfg["vocab_size"] - 1))
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
    # --- decoder types (types-dec)
    "granite": decoder_types("granite"),
    "phi3": decoder_types("phi3"),
    "starcoder2": decoder_types("starcoder2"),
    "gemma2": decoder_types("gemma2"),
    "gemma3_text": decoder_types("gemma3_text"),
    "olmo": decoder_types("olmo"),
    "olmo2": decoder_types("olmo2"),
    "cohere": decoder_types("cohere"),
    "stablelm": decoder_types("stablelm"),
    "phi": decoder_types("phi"),
    "gpt_neox": decoder_types("gpt_neox"),
    "gptj": decoder_types("gptj"),
    "falcon": decoder_types("falcon"),
    # --- types-moe
    "qwen2_moe": qwen_moe("qwen2_moe"),
    "qwen3_moe": qwen_moe("qwen3_moe"),
    "deepseek_v2": deepseek("deepseek_v2"),
    "deepseek_v3": deepseek("deepseek_v3"),
    "gpt_oss": gpt_oss(),
    "llama4_text": llama4_text(),
    # --- encoders (types-enc)
    "distilbert": distilbert(),
    "xlm-roberta": xlm_roberta(),
    "electra": electra(),
    "deberta-v2": deberta_v2(),
    # --- gpt2-like (learned positions / ALiBi) and multimodal wrappers
    "gpt_neo": gpt_neo(),
    "gpt_bigcode": gpt_bigcode(),
    "bloom": bloom(),
    "mpt": mpt(),
    "llava": llava(),
    "qwen2_vl": qwen2_vl(),
    "gemma3": gemma3(),
    "llava_next": llava_next(),
    "mistral3": mistral3(),
    "qwen2_5_vl": qwen2_5_vl(),
    "paligemma": paligemma(),
    "idefics3": idefics3(),
    "smolvlm": idefics3("smolvlm"),
    "qwen3_vl": qwen3_vl(),
    "qwen3_vl_moe": qwen3_vl_moe(),
    "kimi_k25": kimi_k25(),
    "llama4": llama4(),
    # --- seq2seq
    "mbart": bart_family("mbart"),
    "pegasus": bart_family("pegasus"),
    "marian": bart_family("marian"),
    "whisper": whisper(),
    "vit": vit(),
    **{mt: dense(mt) for mt in _DENSE_BIAS_KEYS},
    "mamba": mamba("mamba"),
    "falcon_mamba": mamba("falcon_mamba"),
    "mamba2": mamba2(),
    "jamba": jamba(),
    "qwen3_next": qwen3_next(),
    "gemma4_text": gemma4_text(),
    "gemma4": gemma4(),
    "lfm2": lfm2(),
    "bamba": bamba(),
    "granitemoehybrid": granitemoehybrid(),
    "nemotron_h": nemotron_h(),
    "falcon_h1": falcon_h1(),
    "zamba2": zamba2(),
    "qwen3_5_text": qwen3_5_text(),
    "qwen3_5_moe_text": qwen3_5_moe_text(),
    "qwen3_5": qwen3_5(),
    "qwen3_5_moe": qwen3_5("qwen3_5_moe"),
    "olmoe": olmoe(),
    "glm4_moe": deepseek_moe("glm4_moe"),
    "dots1": deepseek_moe("dots1"),
    "minimax_m2": minimax_m2(),
    **{mt: mixtral_like(mt) for mt in ("phimoe", "granitemoe", "granitemoeshared", "hunyuan_v1_moe")},
    "ernie4_5_moe": ernie4_5_moe(),
    **{mt: mla_moe(mt) for mt in ("glm4_moe_lite", "deepseek_v32", "glm_moe_dsa", "mistral4")},
    "deepseek_v4": deepseek_v4(),
    "dbrx": dbrx(),
    "camembert": roberta_like("camembert"),
    "roberta-prelayernorm": roberta_like("roberta-prelayernorm"),
    "mpnet": mpnet(),
    "modernbert": modernbert(),
    "nomic_bert": nomic_bert(),
    "mt5": t5("mt5"),
    "umt5": t5("umt5"),
    "wav2vec2": wav2vec2("wav2vec2"),
    "hubert": wav2vec2("hubert"),
    "longt5": t5("longt5"),
    "led": led(),
    "clip": clip(),
    "siglip": siglip(),
    "siglip2": siglip2(),
}


# Published files that transformers 5.24 cannot load as written, and the one value it needs: Meta's
# Llama 4 configs write attn_temperature_tuning 4 (4.x read it as true; 5.24's strict Llama4TextConfig
# wants a bool).  It scales attention scores, no weight: the file with true is built instead
# (tests/test_resave.py, tests/test_crosscheck_hf.py).
UNLOADABLE = {"llama-4-scout-17b-16e": ("text_config", "attn_temperature_tuning", True)}
