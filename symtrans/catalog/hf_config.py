"""Read a Hugging Face ``config.json`` into a validated :class:`~symtrans.spec.Spec`.

``load_config(path)`` reads and parses the file; ``spec_from_config(cfg, name)`` maps a
parsed dict.  Supported ``model_type`` values and the model each is counted as (the
class transformers 5.x builds for that config; ``AutoModel`` for the encoders):

==========  ==================================  =============================
model_type  counted as (transformers 5.x)       config class (defaults from)
==========  ==================================  =============================
bert        BertModel (with its pooler)         BertConfig
albert      AlbertModel (with its pooler)       AlbertConfig
roberta     RobertaModel (with its pooler)      RobertaConfig
gpt2        GPT2LMHeadModel                     GPT2Config
llama       LlamaForCausalLM                    LlamaConfig
mistral     MistralForCausalLM                  MistralConfig
mixtral     MixtralForCausalLM                  MixtralConfig
qwen2       Qwen2ForCausalLM                    Qwen2Config
qwen3       Qwen3ForCausalLM                    Qwen3Config
gemma       GemmaForCausalLM                    GemmaConfig
t5          T5ForConditionalGeneration          T5Config
bart        BartForConditionalGeneration        BartConfig
opt         OPTForCausalLM                      OPTConfig
granite     GraniteForCausalLM                  GraniteConfig
phi3        Phi3ForCausalLM                     Phi3Config
starcoder2  Starcoder2ForCausalLM               Starcoder2Config
gemma2      Gemma2ForCausalLM                   Gemma2Config
gemma3_text Gemma3ForCausalLM                   Gemma3TextConfig
olmo        OlmoForCausalLM                     OlmoConfig
olmo2       Olmo2ForCausalLM                    Olmo2Config
cohere      CohereForCausalLM                   CohereConfig
stablelm    StableLmForCausalLM                 StableLmConfig
phi         PhiForCausalLM                      PhiConfig
gpt_neox    GPTNeoXForCausalLM                  GPTNeoXConfig
gptj        GPTJForCausalLM                     GPTJConfig
falcon      FalconForCausalLM                   FalconConfig
gpt_neo     GPTNeoForCausalLM                   GPTNeoConfig
gpt_bigcode GPTBigCodeForCausalLM               GPTBigCodeConfig
bloom       BloomForCausalLM                    BloomConfig
mpt         MptForCausalLM                      MptConfig
llava       LlavaForConditionalGeneration (*)   LlavaConfig + its text config
qwen2_vl    Qwen2VLForConditionalGeneration (*) Qwen2VLConfig + Qwen2VLTextConfig
gemma3      Gemma3ForConditionalGeneration (*)  Gemma3Config + Gemma3TextConfig + SiglipVisionConfig
llava_next  LlavaNextForConditionalGeneration (*) LlavaNextConfig + its text config
mistral3    Mistral3ForConditionalGeneration (*) Mistral3Config + its text config + PixtralVisionConfig
qwen2_5_vl  Qwen2_5_VLForConditionalGeneration (*) Qwen2_5_VLConfig + Qwen2_5_VLTextConfig
paligemma   PaliGemmaForConditionalGeneration (*) PaliGemmaConfig + its text config + SiglipVisionConfig
idefics3    Idefics3ForConditionalGeneration (*) Idefics3Config + its text config + Idefics3VisionConfig
smolvlm     SmolVLMForConditionalGeneration (*) SmolVLMConfig + its text config + SmolVLMVisionConfig
qwen3_vl    Qwen3VLForConditionalGeneration (*) Qwen3VLConfig + Qwen3VLTextConfig + Qwen3VLVisionConfig
qwen3_vl_moe Qwen3VLMoeForConditionalGeneration (*) Qwen3VLMoeConfig + Qwen3VLMoeTextConfig + its vision config
kimi_k25    Kimi_K25ForConditionalGeneration (*) Kimi_K25Config + DeepseekV3Config + Kimi_K25VisionConfig
llama4      Llama4ForConditionalGeneration (*)  Llama4Config + Llama4TextConfig + Llama4VisionConfig
qwen3_5     Qwen3_5ForConditionalGeneration (*) Qwen3_5Config + Qwen3_5TextConfig + Qwen3_5VisionConfig
qwen3_5_moe Qwen3_5MoeForConditionalGeneration (*) Qwen3_5MoeConfig + Qwen3_5MoeTextConfig + its vision config
mbart       MBartForConditionalGeneration       MBartConfig
pegasus     PegasusForConditionalGeneration     PegasusConfig
marian      MarianMTModel                       MarianConfig
whisper     WhisperForConditionalGeneration     WhisperConfig
vit         ViTModel (with its pooler)          ViTConfig
==========  ==================================  =============================

(*) Multimodal wrappers (``WRAPPERS``): their ``text_config`` (Qwen2-VL: or the text keys at
the top level, as its Hub checkpoints are saved) is read as its own model_type, with the
wrapper's tie rule, and their ``vision_config`` as the vision tower and projector
(``catalog/models/vision.py``, ``engine/vision.py``): the total is the whole class; the
text-only figure (``params --part text``, JSON ``parts``) is the language model and lm_head.
Gemma-3 (multimodal) reads its SigLIP tower and projector beside gemma3_text.  GPT-Neo's global/local layer stacks count exactly; their FLOPs, KV
cache and time are refused (size ``N_w``: per-layer windows are not modelled yet).

Defaults.  A key the file does not give takes the default of the transformers 5.x
config class named above (the table ``DEFAULTS`` below, checked against the installed
library by ``tests/test_crosscheck_hf.py``), and a note says so
("key X missing: used the transformers default Y (Class)").  The defaults that are
derived rather than constant:

* ``num_key_value_heads`` missing: None -> ``num_attention_heads`` (LlamaConfig), 32
  (Qwen2Config, Qwen3Config), 8 (MistralConfig, MixtralConfig); null -> ``num_attention_heads``
  for Llama and Qwen2/Qwen3, whose field may be null (the others' strict int field refuses it).
* ``head_dim`` None -> ``hidden_size // num_attention_heads`` (LlamaConfig,
  MistralConfig, MixtralConfig; Qwen2Config has no such field but Qwen2Attention reads
  one when the file gives it); Qwen3Config defaults to 128, GemmaConfig to 256.
* GPT2Config ``n_inner`` None -> ``4 * n_embd``; T5Config ``num_decoder_layers`` None
  -> ``num_layers`` as given under that name (the alias ``num_hidden_layers`` is applied
  after T5Config derives it, so a file giving only ``num_hidden_layers`` gets the class
  default of 6 decoder layers); OPTConfig ``word_embed_proj_dim`` None -> ``hidden_size``.
* T5Config ``is_gated_act`` in the file wins over the one derived from ``feed_forward_proj``.
* ``tie_word_embeddings``: False for Llama, Mistral, Mixtral, Qwen2 and Qwen3; True for
  GPT-2, Gemma, T5, BART and OPT (BERT/RoBERTa base models have no head to tie).
* T5Config ``feed_forward_proj`` "relu" (two maps); "gated-ACT" is a gated FFN
  (three maps: ``geglu``, or ``swiglu`` for gated-silu).

Positions.  ``L_max`` is ``max_position_embeddings`` (GPT-2: ``n_positions``); the workload's
sequence length ``L`` is not a config fact (``resolve`` gives its default).  BART and
OPT allocate ``L + 2`` rows (``position_offset = 2``); RoBERTa's ``max_position_embeddings``
already includes its ``pad_token_id + 1`` offset rows (514 = 512 + 2), so ``L`` is the
rest and ``position_offset`` the offset.  T5's relative bias has
``relative_attention_num_buckets`` x h parameters per stack.

Aliases of ``attribute_map`` (GPT-2 ``hidden_size`` = ``n_embd``, T5 ``head_dim`` =
``d_kv``, BART ``num_hidden_layers`` = ``encoder_layers``, Mixtral ``num_experts`` =
``num_local_experts``, ...) are accepted; a key and its alias that disagree are an error.

Strictness.  The JSON must be strict (no NaN/Infinity, no duplicate keys, an object at
the top level).  Sizes are JSON integers in 1..2**53 (booleans, floats such as 4096.0,
strings and null are rejected, as transformers 5.x's strict config classes do); flags
are JSON booleans.  Every failure is a ``ValueError`` with one sentence that names the
field; the command line prints it and exits with status 2.

Parts of a config that change no parameter are listed per type, with the reason, in
``NO_PARAM_EFFECT`` (``tests/test_model_types.py`` changes every key of every config class
and checks that table).  Sliding windows change no parameter but the workload: Mistral's and
Mixtral's ``sliding_window``, and Qwen2/Qwen3's when ``use_sliding_window`` puts it on every
layer (``layer_types`` / ``max_window_layers``), become the Spec's window ``w``, as in the
``mistral-7b`` preset (a Qwen stack with some windowed and some full layers is refused).
Phi3's and Starcoder2's ``sliding_window`` is ``w`` on every layer; Gemma-2's and Gemma-3's
``layer_types`` (alternating, and 5 sliding layers in 6 by default) give ``w`` and ``N_w``,
the number of windowed layers (the Spec's per-layer attention pattern).
``pad_token_id`` must be a row of the token embedding where the model uses it as
``padding_idx`` (torch refuses otherwise).  A key unknown to the config class is an error
only when it is a near miss of a key that changes the count and is no real key of any
supported class (``REAL_KEYS``); otherwise a note says it was ignored.  Parts the engine cannot count
(ALBERT layer groups other than one shared layer or none shared, cross-attention added to
BERT/GPT-2, Marian's shared untied embeddings with a decoder_vocab_size of its own, ViT's
non-square patches) raise a
``ValueError`` saying so rather than giving a wrong count.

Encoder-decoders (BART, mBART, Pegasus, Marian, Whisper).  A decoder whose heads, FFN
width or vocabulary differ from the encoder's gets its own sizes (``h_dec``, ``d_ff_dec``,
``V_dec``).  Untied (``tie_word_embeddings`` false), the BART family keeps ``model.shared``
beside the encoder's and decoder's tables and the head, and no forward pass reads it;
symtrans counts it, as ``model.parameters()`` does (one convention for the family, noted).
Pegasus, Marian and Whisper's encoder store their sinusoidal positions as frozen
parameters, counted.  Whisper: a Conv1d front end over ``num_mel_bins`` (``C_in``), its
two position tables ``max_source_positions`` (``L_src_max``) and ``max_target_positions``
(``L_tgt_max``).  ViT: a patch front end (``C_in`` channels, patch side ``p``) and no
vocabulary; ``L_max`` is the patches + 1 (the CLS token).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from symtrans.catalog.models import RECORDS
from symtrans.catalog.models.encoders import read_bert as _bert
from symtrans.catalog.models.llama import QWEN_WINDOW_DEFAULT as _QWEN_WINDOW_DEFAULT
from symtrans.catalog.models.llama import heads as _heads
from symtrans.catalog.models.llama import window as _window
from symtrans.catalog.models.record import DECODER_NO_EFFECT, NO_PADDING, WHY, ModelType, no_effect
from symtrans.catalog.models.t5 import read_t5 as _t5
from symtrans.catalog.models.vision import (
    MISTRAL3_TEXT_DEFAULT,
    PALIGEMMA_TEXT_DEFAULT,
    gemma3_vision,
    idefics3_vision,
    kimi_k25_vision,
    llama4_vision,
    llava_vision,
    mistral3_vision,
    paligemma_vision,
    qwen2_5_vl_vision,
    qwen2_vl_vision,
    qwen3_5_vision,
    qwen3_vl_vision,
)
from symtrans.catalog.reader import (  # noqa: F401 (re-exported: LAYER_KEYS, MAX_LAYERS, MAX_SIZE)
    LAYER_KEYS,
    MAX_LAYERS,
    MAX_SIZE,
    MISSING,
    ConfigError,
    Huge,
    Reader,
    check_divides,
    check_rotary_head,
    check_size,
    show,
    window_size,
)
from symtrans.engine.spec import Spec

# The reader machinery lives in catalog/reader.py (shared with the model-type records); the
# names this module always had stay importable from here.
_MISSING, _Huge, _show = MISSING, Huge, show
_check_divides, _check_rotary_head = check_divides, check_rotary_head

# A config.json is a few kB; refuse to read anything absurdly large.
MAX_BYTES = 10 * 2**20

# The table of supported model types: (config class, model class counted) per model_type,
# transformers 5.x.  Everything else keyed by model_type (DEFAULTS, CONFIG_KEYS, the readers
# in _FAMILIES) must have exactly these keys; SUPPORTED, the refusal message and the
# ``symtrans model-types`` listing read this table.
CLASSES: dict[str, tuple[str, str]] = {
    "bert": ("BertConfig", "BertModel"),
    "roberta": ("RobertaConfig", "RobertaModel"),
    "albert": ("AlbertConfig", "AlbertModel"),
    "gpt2": ("GPT2Config", "GPT2LMHeadModel"),
    "t5": ("T5Config", "T5ForConditionalGeneration"),
    "bart": ("BartConfig", "BartForConditionalGeneration"),
    "opt": ("OPTConfig", "OPTForCausalLM"),
    # --- decoder types (types-dec: norms, parallel blocks, QK norms, per-layer windows)
    "granite": ("GraniteConfig", "GraniteForCausalLM"),
    "phi3": ("Phi3Config", "Phi3ForCausalLM"),
    "starcoder2": ("Starcoder2Config", "Starcoder2ForCausalLM"),
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM"),
    "gemma3_text": ("Gemma3TextConfig", "Gemma3ForCausalLM"),
    "olmo": ("OlmoConfig", "OlmoForCausalLM"),
    "olmo2": ("Olmo2Config", "Olmo2ForCausalLM"),
    "cohere": ("CohereConfig", "CohereForCausalLM"),
    "stablelm": ("StableLmConfig", "StableLmForCausalLM"),
    "phi": ("PhiConfig", "PhiForCausalLM"),
    "gpt_neox": ("GPTNeoXConfig", "GPTNeoXForCausalLM"),
    "gptj": ("GPTJConfig", "GPTJForCausalLM"),
    "falcon": ("FalconConfig", "FalconForCausalLM"),
    # --- types-moe (issue 11 §2.C): mixture of experts, multi-head latent attention
    "qwen2_moe": ("Qwen2MoeConfig", "Qwen2MoeForCausalLM"),
    "qwen3_moe": ("Qwen3MoeConfig", "Qwen3MoeForCausalLM"),
    "deepseek_v2": ("DeepseekV2Config", "DeepseekV2ForCausalLM"),
    "deepseek_v3": ("DeepseekV3Config", "DeepseekV3ForCausalLM"),
    "gpt_oss": ("GptOssConfig", "GptOssForCausalLM"),
    "llama4_text": ("Llama4TextConfig", "Llama4ForCausalLM"),
    # --- encoders (types-enc)
    "distilbert": ("DistilBertConfig", "DistilBertModel"),
    "xlm-roberta": ("XLMRobertaConfig", "XLMRobertaModel"),
    "electra": ("ElectraConfig", "ElectraModel"),
    "deberta-v2": ("DebertaV2Config", "DebertaV2Model"),
    # --- gpt2-like (learned positions / ALiBi) and multimodal wrappers
    "llava": ("LlavaConfig", "LlavaForConditionalGeneration"),
    "qwen2_vl": ("Qwen2VLConfig", "Qwen2VLForConditionalGeneration"),
    "gemma3": ("Gemma3Config", "Gemma3ForConditionalGeneration"),
    "llava_next": ("LlavaNextConfig", "LlavaNextForConditionalGeneration"),
    "mistral3": ("Mistral3Config", "Mistral3ForConditionalGeneration"),
    "qwen2_5_vl": ("Qwen2_5_VLConfig", "Qwen2_5_VLForConditionalGeneration"),
    "paligemma": ("PaliGemmaConfig", "PaliGemmaForConditionalGeneration"),
    "idefics3": ("Idefics3Config", "Idefics3ForConditionalGeneration"),
    "smolvlm": ("SmolVLMConfig", "SmolVLMForConditionalGeneration"),
    "qwen3_vl": ("Qwen3VLConfig", "Qwen3VLForConditionalGeneration"),
    "qwen3_vl_moe": ("Qwen3VLMoeConfig", "Qwen3VLMoeForConditionalGeneration"),
    "kimi_k25": ("Kimi_K25Config", "Kimi_K25ForConditionalGeneration"),
    "llama4": ("Llama4Config", "Llama4ForConditionalGeneration"),
    "qwen3_5": ("Qwen3_5Config", "Qwen3_5ForConditionalGeneration"),
    "qwen3_5_moe": ("Qwen3_5MoeConfig", "Qwen3_5MoeForConditionalGeneration"),
    # --- seq2seq
    "mbart": ("MBartConfig", "MBartForConditionalGeneration"),
    "pegasus": ("PegasusConfig", "PegasusForConditionalGeneration"),
    "marian": ("MarianConfig", "MarianMTModel"),
    "whisper": ("WhisperConfig", "WhisperForConditionalGeneration"),
    "vit": ("ViTConfig", "ViTModel"),
}

_BERT = {
    "vocab_size": 30522,
    "hidden_size": 768,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
    "add_cross_attention": False,
    "pad_token_id": 0,
}
_DECODER = {
    "vocab_size": 32000,
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "tie_word_embeddings": False,
}

# MBartConfig, PegasusConfig and MarianConfig share BartConfig's sizes.
_BART_DEFAULTS = {
    "vocab_size": 50265,
    "max_position_embeddings": 1024,
    "encoder_layers": 12,
    "encoder_ffn_dim": 4096,
    "encoder_attention_heads": 16,
    "decoder_layers": 12,
    "decoder_ffn_dim": 4096,
    "decoder_attention_heads": 16,
    "d_model": 1024,
    "tie_word_embeddings": True,
}

# The transformers 5.x class defaults symtrans reads (None: derived, see the module docstring).
DEFAULTS: dict[str, dict[str, Any]] = {
    "bert": dict(_BERT),
    "roberta": {**_BERT, "vocab_size": 50265, "pad_token_id": 1},
    "albert": {
        "vocab_size": 30000,
        "embedding_size": 128,
        "hidden_size": 4096,
        "num_hidden_layers": 12,
        "num_hidden_groups": 1,
        "num_attention_heads": 64,
        "intermediate_size": 16384,
        "inner_group_num": 1,
        "max_position_embeddings": 512,
        "type_vocab_size": 2,
    },
    "gpt2": {
        "vocab_size": 50257,
        "n_positions": 1024,
        "n_embd": 768,
        "n_layer": 12,
        "n_head": 12,
        "n_inner": None,
        "tie_word_embeddings": True,
        "add_cross_attention": False,
    },
    "t5": {
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
    },
    "bart": {
        "vocab_size": 50265,
        "max_position_embeddings": 1024,
        "encoder_layers": 12,
        "encoder_ffn_dim": 4096,
        "encoder_attention_heads": 16,
        "decoder_layers": 12,
        "decoder_ffn_dim": 4096,
        "decoder_attention_heads": 16,
        "d_model": 1024,
        "tie_word_embeddings": True,
    },
    "opt": {
        "vocab_size": 50272,
        "hidden_size": 768,
        "num_hidden_layers": 12,
        "ffn_dim": 3072,
        "max_position_embeddings": 2048,
        "do_layer_norm_before": True,
        "_remove_final_layer_norm": False,
        "word_embed_proj_dim": None,
        "num_attention_heads": 12,
        "enable_bias": True,
        "layer_norm_elementwise_affine": True,
        "tie_word_embeddings": True,
    },
    # --- decoder types (types-dec)
    "granite": {
        **_DECODER,
        "intermediate_size": 11008,
        "num_key_value_heads": None,
        "max_position_embeddings": 2048,
        "attention_bias": False,
        "mlp_bias": False,
    },
    "phi3": {
        **_DECODER,
        "vocab_size": 32064,
        "hidden_size": 3072,
        "intermediate_size": 8192,
        "num_key_value_heads": None,
        "max_position_embeddings": 4096,
        "sliding_window": None,
    },
    "starcoder2": {
        **_DECODER,
        "vocab_size": 49152,
        "hidden_size": 3072,
        "intermediate_size": 12288,
        "num_hidden_layers": 30,
        "num_attention_heads": 24,
        "num_key_value_heads": 2,
        "max_position_embeddings": 4096,
        "use_bias": True,
        "sliding_window": None,
        "tie_word_embeddings": True,
    },
    "gemma2": {
        **_DECODER,
        "vocab_size": 256000,
        "hidden_size": 2304,
        "intermediate_size": 9216,
        "num_hidden_layers": 26,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "max_position_embeddings": 8192,
        "attention_bias": False,
        "sliding_window": 4096,
        "tie_word_embeddings": True,
    },
    "gemma3_text": {
        **_DECODER,
        "vocab_size": 262208,
        "hidden_size": 2304,
        "intermediate_size": 9216,
        "num_hidden_layers": 26,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "max_position_embeddings": 131072,
        "attention_bias": False,
        "sliding_window": 4096,
        "tie_word_embeddings": True,
    },
    "olmo": {
        **_DECODER,
        "vocab_size": 50304,
        "intermediate_size": 11008,
        "num_key_value_heads": None,
        "max_position_embeddings": 2048,
        "attention_bias": False,
    },
    "olmo2": {
        **_DECODER,
        "vocab_size": 50304,
        "intermediate_size": 11008,
        "num_key_value_heads": None,
        "max_position_embeddings": 2048,
        "attention_bias": False,
    },
    "cohere": {
        **_DECODER,
        "vocab_size": 256000,
        "hidden_size": 8192,
        "intermediate_size": 22528,
        "num_hidden_layers": 40,
        "num_attention_heads": 64,
        "num_key_value_heads": None,
        "max_position_embeddings": 8192,
        "attention_bias": False,
        "use_qk_norm": False,
        "tie_word_embeddings": True,
    },
    "stablelm": {
        **_DECODER,
        "vocab_size": 50304,
        "hidden_size": 2560,
        "intermediate_size": 6912,
        "num_key_value_heads": 32,
        "max_position_embeddings": 4096,
        "use_qkv_bias": False,
        "qk_layernorm": False,
        "use_parallel_residual": False,
    },
    "phi": {
        **_DECODER,
        "vocab_size": 51200,
        "hidden_size": 2048,
        "intermediate_size": 8192,
        "num_hidden_layers": 24,
        "num_key_value_heads": None,
        "max_position_embeddings": 2048,
        "qk_layernorm": False,
    },
    "gpt_neox": {
        **_DECODER,
        "vocab_size": 50432,
        "hidden_size": 6144,
        "num_hidden_layers": 44,
        "num_attention_heads": 64,
        "intermediate_size": 24576,
        "max_position_embeddings": 2048,
        "attention_bias": True,
        "use_parallel_residual": True,
    },
    "gptj": {
        "vocab_size": 50400,
        "n_positions": 2048,
        "n_embd": 4096,
        "n_layer": 28,
        "n_head": 16,
        "n_inner": None,
        "tie_word_embeddings": False,
    },
    "falcon": {
        "vocab_size": 65024,
        "hidden_size": 4544,
        "num_hidden_layers": 32,
        "num_attention_heads": 71,
        "num_ln_in_parallel_attn": None,
        "num_kv_heads": None,
        "alibi": False,
        "new_decoder_architecture": False,
        "multi_query": True,
        "parallel_attn": True,
        "bias": False,
        "max_position_embeddings": 2048,
        "ffn_hidden_size": None,
        "tie_word_embeddings": True,
    },
    # --- types-moe
    "qwen2_moe": {
        **_DECODER,
        "vocab_size": 151936,
        "hidden_size": 2048,
        "intermediate_size": 5632,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "num_key_value_heads": 16,
        "max_position_embeddings": 32768,
        "qkv_bias": True,
        "num_experts": 60,
        "num_experts_per_tok": 4,
        "moe_intermediate_size": 1408,
        "shared_expert_intermediate_size": 5632,
        "decoder_sparse_step": 1,
        "mlp_only_layers": None,
        "use_sliding_window": False,
        "max_window_layers": 28,
    },
    "qwen3_moe": {
        **_DECODER,
        "vocab_size": 151936,
        "hidden_size": 2048,
        "intermediate_size": 6144,
        "num_hidden_layers": 24,
        "num_attention_heads": 32,
        "num_key_value_heads": 4,
        "max_position_embeddings": 32768,
        "attention_bias": False,
        "num_experts": 128,
        "num_experts_per_tok": 8,
        "moe_intermediate_size": 768,
        "decoder_sparse_step": 1,
        "mlp_only_layers": None,
        "use_sliding_window": False,
    },
    "deepseek_v2": {
        **_DECODER,
        "vocab_size": 102400,
        "intermediate_size": 11008,
        "num_key_value_heads": None,
        "max_position_embeddings": 2048,
        "attention_bias": False,
        "mlp_bias": False,
        "first_k_dense_replace": 0,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "n_routed_experts": 64,
        "n_shared_experts": 2,
        "num_experts_per_tok": None,
        "moe_intermediate_size": 1407,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
    },
    "deepseek_v3": {
        **_DECODER,
        "vocab_size": 129280,
        "hidden_size": 7168,
        "intermediate_size": 18432,
        "num_hidden_layers": 61,
        "num_attention_heads": 128,
        "num_key_value_heads": 128,
        "max_position_embeddings": 4096,
        "attention_bias": False,
        "first_k_dense_replace": 3,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "n_routed_experts": 256,
        "n_shared_experts": 1,
        "num_experts_per_tok": 8,
        "moe_intermediate_size": 2048,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
    },
    "gpt_oss": {
        **_DECODER,
        "vocab_size": 201088,
        "hidden_size": 2880,
        "intermediate_size": 2880,
        "num_hidden_layers": 36,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "head_dim": 64,
        "max_position_embeddings": 131072,
        "attention_bias": True,
        "num_local_experts": 128,
        "num_experts_per_tok": 4,
        "sliding_window": 128,
    },
    "llama4_text": {
        **_DECODER,
        "vocab_size": 202048,
        "hidden_size": 5120,
        "intermediate_size": 8192,
        "intermediate_size_mlp": 16384,
        "num_hidden_layers": 48,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "max_position_embeddings": 131072,
        "attention_bias": False,
        "num_local_experts": 16,
        "num_experts_per_tok": 1,
        "moe_layers": None,
        "interleave_moe_layer_step": 1,
        "attention_chunk_size": 8192,
    },
    # --- encoders (types-enc)
    "distilbert": {
        "vocab_size": 30522,
        "max_position_embeddings": 512,
        "sinusoidal_pos_embds": False,
        "n_layers": 6,
        "n_heads": 12,
        "dim": 768,
        "hidden_dim": 3072,  # 4 * 768 written out: not derived from dim
        "pad_token_id": 0,
    },
    "xlm-roberta": {**_BERT, "pad_token_id": 1},  # vocab_size 30522 like BERT, not XLM-R's 250002
    "electra": {
        **_BERT,
        "embedding_size": 128,
        "hidden_size": 256,
        "num_attention_heads": 4,
        "intermediate_size": 1024,
    },
    "deberta-v2": {
        "vocab_size": 128100,
        "hidden_size": 1536,
        "num_hidden_layers": 24,
        "num_attention_heads": 24,
        "intermediate_size": 6144,
        "max_position_embeddings": 512,
        "type_vocab_size": 0,
        "relative_attention": False,
        "max_relative_positions": -1,
        "position_biased_input": True,
        "pos_att_type": None,
        "pad_token_id": 0,
    },
    # --- gpt2-like (learned positions / ALiBi) and multimodal wrappers
    "llava": {"text_config": None, "tie_word_embeddings": False},
    "qwen2_vl": {"text_config": None, "tie_word_embeddings": False},
    "gemma3": {"text_config": None, "tie_word_embeddings": True, "mm_tokens_per_image": 256},
    "llava_next": {"text_config": None, "tie_word_embeddings": False},
    "mistral3": {"text_config": None, "tie_word_embeddings": True, "spatial_merge_size": 2},
    "qwen2_5_vl": {"text_config": None, "tie_word_embeddings": False},
    "paligemma": {"text_config": None, "tie_word_embeddings": True, "projection_dim": 2048},
    "idefics3": {"text_config": None, "tie_word_embeddings": False, "scale_factor": 2},
    "smolvlm": {"text_config": None, "tie_word_embeddings": False, "scale_factor": 2},
    "qwen3_vl": {"text_config": None, "tie_word_embeddings": False},
    "qwen3_vl_moe": {"text_config": None, "tie_word_embeddings": False},
    "kimi_k25": {"text_config": None, "tie_word_embeddings": True},
    "llama4": {"text_config": None, "tie_word_embeddings": False},
    "qwen3_5": {"text_config": None, "tie_word_embeddings": False},
    "qwen3_5_moe": {"text_config": None, "tie_word_embeddings": False},
    # --- seq2seq
    "mbart": {**_BART_DEFAULTS, "pad_token_id": 1},
    "pegasus": {**_BART_DEFAULTS, "pad_token_id": 0},
    "marian": {
        **_BART_DEFAULTS,
        "vocab_size": 58101,
        "decoder_vocab_size": None,
        "share_encoder_decoder_embeddings": True,
        "pad_token_id": 58100,
    },
    "whisper": {
        "vocab_size": 51865,
        "num_mel_bins": 80,
        "encoder_layers": 4,
        "encoder_attention_heads": 6,
        "decoder_layers": 4,
        "decoder_attention_heads": 6,
        "decoder_ffn_dim": 1536,
        "encoder_ffn_dim": 1536,
        "d_model": 384,
        "max_source_positions": 1500,
        "max_target_positions": 448,
        "pad_token_id": 50256,
        "tie_word_embeddings": True,
    },
    "vit": {
        "hidden_size": 768,
        "num_hidden_layers": 12,
        "num_attention_heads": 12,
        "intermediate_size": 3072,
        "image_size": 224,
        "patch_size": 16,
        "num_channels": 3,
        "qkv_bias": True,
        "pooler_output_size": None,
    },
}

# attribute_map aliases (alias -> canonical key), transformers 5.x.
ALIASES: dict[str, dict[str, str]] = {
    # Gemma3Config.attribute_map
    "gemma3": {
        "image_token_id": "image_token_index",
        "boi_token_id": "boi_token_index",
        "eoi_token_id": "eoi_token_index",
    },
    # Llama4Config.attribute_map
    "llama4": {
        "image_token_id": "image_token_index",
        "boi_token_id": "boi_token_index",
        "eoi_token_id": "eoi_token_index",
    },
    "gpt2": {
        "hidden_size": "n_embd",
        "max_position_embeddings": "n_positions",
        "num_attention_heads": "n_head",
        "num_hidden_layers": "n_layer",
    },
    "t5": {
        "hidden_size": "d_model",
        "num_attention_heads": "num_heads",
        "num_hidden_layers": "num_layers",
        "head_dim": "d_kv",
    },
    "bart": {
        "num_attention_heads": "encoder_attention_heads",
        "hidden_size": "d_model",
        "num_hidden_layers": "encoder_layers",
    },
    # --- decoder types (types-dec)
    "gptj": {
        "hidden_size": "n_embd",
        "max_position_embeddings": "n_positions",
        "num_attention_heads": "n_head",
        "num_hidden_layers": "n_layer",
    },
    # --- types-moe
    "qwen3_moe": {"num_local_experts": "num_experts"},  # Qwen3MoeConfig maps num_experts to num_local_experts
    "deepseek_v2": {"num_experts": "n_routed_experts"},
    "deepseek_v3": {"num_local_experts": "n_routed_experts", "num_mtp_layers": "num_nextn_predict_layers"},
    "gpt_oss": {"num_experts": "num_local_experts"},
    # --- encoders (types-enc)
    "distilbert": {"hidden_size": "dim", "num_attention_heads": "n_heads", "num_hidden_layers": "n_layers"},
    # --- gpt2-like (learned positions / ALiBi) and multimodal wrappers
    # --- seq2seq
    "mbart": {
        "num_attention_heads": "encoder_attention_heads",
        "hidden_size": "d_model",
        "num_hidden_layers": "encoder_layers",
    },
    "pegasus": {
        "num_attention_heads": "encoder_attention_heads",
        "hidden_size": "d_model",
        "num_hidden_layers": "encoder_layers",
    },
    "marian": {
        "num_attention_heads": "encoder_attention_heads",
        "hidden_size": "d_model",
        "num_hidden_layers": "encoder_layers",
    },
    "whisper": {
        "num_key_value_heads": "encoder_attention_heads",
        "num_attention_heads": "encoder_attention_heads",
        "hidden_size": "d_model",
        "num_hidden_layers": "encoder_layers",
    },
}

# The symtrans size of each PretrainedConfig key (the names every config class answers to,
# through its attribute_map: ALIASES), so that ``--set num_hidden_layers=16`` is N = 16
# (issue 25.15).  Only keys whose meaning is the same in every reader are listed.
SIZE_OF_KEY: dict[str, str] = {
    "hidden_size": "d_model",
    "intermediate_size": "d_ff",
    "num_attention_heads": "h",
    "num_key_value_heads": "h_kv",
    "head_dim": "d_k",
    "num_hidden_layers": "N",
    "vocab_size": "V",
    "max_position_embeddings": "L_max",
    "num_local_experts": "E",
    "num_experts": "E",
    "num_experts_per_tok": "k",
    "sliding_window": "w",
}


def size_of_key(key: str) -> tuple[str, str] | None:
    """(symtrans size, PretrainedConfig key) of a Hugging Face config key, or None.

    ``key`` is a PretrainedConfig name (``hidden_size``) or a model type's own name for
    it, found through the attribute_map tables ``ALIASES`` (``n_embd``, ``n_layer``,
    ``d_kv``, ``encoder_layers``, ...).
    """
    if key in SIZE_OF_KEY:
        return SIZE_OF_KEY[key], key
    for table in ALIASES.values():
        for canonical, own in table.items():
            if own == key and canonical in SIZE_OF_KEY:
                return SIZE_OF_KEY[canonical], canonical
    return None


# The keys of each config class (transformers 5.24: the ``__init__`` parameters, the
# ``to_dict()`` keys of a default instance and the ``attribute_map`` aliases, minus the
# PretrainedConfig ones in COMMON_KEYS).  A key of a config.json outside these, COMMON_KEYS
# and the keys symtrans reads is unknown: an error when it is a near miss of a known key
# (a typo such as num_key_value_head, which would silently fall back to a default), else
# a note.  ``tests/test_hf_config.py`` checks the table against the installed transformers.
# --- decoder types (types-dec): Gemma2Config and Gemma3TextConfig have the same keys
_GEMMA2_KEYS = (
    "attention_bias attention_dropout attn_logit_softcapping bos_token_id eos_token_id final_logit_softcapping "
    "head_dim hidden_activation hidden_size initializer_range intermediate_size layer_types max_position_embeddings "
    "num_attention_heads num_hidden_layers num_key_value_heads pad_token_id query_pre_attn_scalar rms_norm_eps "
    "rope_parameters sliding_window tie_word_embeddings use_bidirectional_attention use_cache vocab_size"
)
CONFIG_KEYS: dict[str, frozenset[str]] = {
    mt: frozenset(keys.split())
    for mt, keys in {
        "bert": "add_cross_attention attention_probs_dropout_prob bos_token_id classifier_dropout eos_token_id hidden_act "
        "hidden_dropout_prob hidden_size initializer_range intermediate_size is_decoder layer_norm_eps "
        "max_position_embeddings num_attention_heads num_hidden_layers pad_token_id tie_word_embeddings "
        "type_vocab_size use_cache vocab_size",
        "roberta": "add_cross_attention attention_probs_dropout_prob bos_token_id classifier_dropout eos_token_id "
        "hidden_act hidden_dropout_prob hidden_size initializer_range intermediate_size is_decoder "
        "layer_norm_eps max_position_embeddings num_attention_heads num_hidden_layers pad_token_id "
        "tie_word_embeddings type_vocab_size use_cache vocab_size",
        "albert": "attention_probs_dropout_prob bos_token_id classifier_dropout_prob embedding_size eos_token_id hidden_act "
        "hidden_dropout_prob hidden_size initializer_range inner_group_num intermediate_size layer_norm_eps "
        "max_position_embeddings num_attention_heads num_hidden_groups num_hidden_layers pad_token_id "
        "tie_word_embeddings type_vocab_size vocab_size",
        "gpt2": "activation_function add_cross_attention attn_pdrop bos_token_id embd_pdrop eos_token_id hidden_size "
        "initializer_range layer_norm_epsilon max_position_embeddings n_embd n_head n_inner n_layer n_positions "
        "num_attention_heads num_hidden_layers pad_token_id reorder_and_upcast_attn resid_pdrop "
        "scale_attn_by_inverse_layer_idx scale_attn_weights summary_activation summary_first_dropout "
        "summary_proj_to_labels summary_type summary_use_proj tie_word_embeddings use_cache vocab_size",
        "t5": "classifier_dropout d_ff d_kv d_model dense_act_fn dropout_rate eos_token_id feed_forward_proj head_dim "
        "hidden_size initializer_factor is_decoder is_gated_act layer_norm_epsilon num_attention_heads "
        "num_decoder_layers num_heads num_hidden_layers num_layers pad_token_id relative_attention_max_distance "
        "relative_attention_num_buckets scale_decoder_outputs tie_word_embeddings use_cache vocab_size",
        "bart": "activation_dropout activation_function attention_dropout bos_token_id classifier_dropout d_model "
        "decoder_attention_heads decoder_ffn_dim decoder_layerdrop decoder_layers decoder_start_token_id dropout "
        "encoder_attention_heads encoder_ffn_dim encoder_layerdrop encoder_layers eos_token_id "
        "forced_eos_token_id hidden_size init_std is_decoder max_position_embeddings num_attention_heads "
        "num_hidden_layers pad_token_id scale_embedding tie_word_embeddings use_cache vocab_size",
        "opt": "_remove_final_layer_norm activation_function attention_dropout bos_token_id do_layer_norm_before dropout "
        "enable_bias eos_token_id ffn_dim hidden_size init_std layer_norm_elementwise_affine layerdrop "
        "max_position_embeddings num_attention_heads num_hidden_layers pad_token_id tie_word_embeddings use_cache "
        "vocab_size word_embed_proj_dim",
        # --- decoder types (types-dec)
        "granite": "attention_bias attention_dropout attention_multiplier bos_token_id embedding_multiplier eos_token_id "
        "hidden_act hidden_size initializer_range intermediate_size logits_scaling max_position_embeddings mlp_bias "
        "num_attention_heads num_hidden_layers num_key_value_heads pad_token_id residual_multiplier rms_norm_eps "
        "rope_parameters tie_word_embeddings use_cache vocab_size",
        "phi3": "attention_dropout bos_token_id embd_pdrop eos_token_id hidden_act hidden_size initializer_range "
        "intermediate_size max_position_embeddings num_attention_heads num_hidden_layers num_key_value_heads "
        "original_max_position_embeddings pad_token_id resid_pdrop rms_norm_eps rope_parameters sliding_window "
        "tie_word_embeddings use_cache vocab_size",
        "starcoder2": "attention_dropout bos_token_id embedding_dropout eos_token_id hidden_act hidden_size "
        "initializer_range intermediate_size max_position_embeddings norm_epsilon num_attention_heads "
        "num_hidden_layers num_key_value_heads pad_token_id residual_dropout rope_parameters sliding_window "
        "tie_word_embeddings use_bias use_cache vocab_size",
        "gemma2": _GEMMA2_KEYS,
        "gemma3_text": _GEMMA2_KEYS,
        "olmo": "attention_bias attention_dropout bos_token_id clip_qkv eos_token_id hidden_act hidden_size "
        "initializer_range intermediate_size max_position_embeddings num_attention_heads num_hidden_layers "
        "num_key_value_heads pad_token_id rope_parameters tie_word_embeddings use_cache vocab_size",
        "olmo2": "attention_bias attention_dropout bos_token_id eos_token_id hidden_act hidden_size initializer_range "
        "intermediate_size max_position_embeddings num_attention_heads num_hidden_layers num_key_value_heads "
        "pad_token_id rms_norm_eps rope_parameters tie_word_embeddings use_cache vocab_size",
        "cohere": "attention_bias attention_dropout bos_token_id eos_token_id hidden_act hidden_size initializer_range "
        "intermediate_size layer_norm_eps logit_scale max_position_embeddings num_attention_heads "
        "num_hidden_layers num_key_value_heads pad_token_id rope_parameters tie_word_embeddings use_cache "
        "use_qk_norm vocab_size",
        "stablelm": "attention_dropout bos_token_id eos_token_id hidden_act hidden_dropout hidden_size "
        "initializer_range intermediate_size layer_norm_eps max_position_embeddings num_attention_heads "
        "num_hidden_layers num_key_value_heads pad_token_id qk_layernorm rope_parameters tie_word_embeddings "
        "use_cache use_parallel_residual use_qkv_bias vocab_size",
        "phi": "attention_dropout bos_token_id embd_pdrop eos_token_id hidden_act hidden_size initializer_range "
        "intermediate_size layer_norm_eps max_position_embeddings num_attention_heads num_hidden_layers "
        "num_key_value_heads pad_token_id qk_layernorm resid_pdrop rope_parameters tie_word_embeddings use_cache "
        "vocab_size",
        "gpt_neox": "attention_bias attention_dropout bos_token_id classifier_dropout eos_token_id hidden_act "
        "hidden_dropout hidden_size initializer_range intermediate_size is_decoder layer_norm_eps "
        "max_position_embeddings num_attention_heads num_hidden_layers pad_token_id rope_parameters "
        "tie_word_embeddings use_cache use_parallel_residual vocab_size",
        "gptj": "activation_function attn_pdrop bos_token_id embd_pdrop eos_token_id hidden_size initializer_range "
        "layer_norm_epsilon max_position_embeddings n_embd n_head n_inner n_layer n_positions num_attention_heads "
        "num_hidden_layers pad_token_id resid_pdrop rotary_dim tie_word_embeddings use_cache vocab_size",
        "falcon": "activation alibi attention_dropout bias bos_token_id eos_token_id ffn_hidden_size hidden_dropout "
        "hidden_size initializer_range layer_norm_epsilon max_position_embeddings multi_query "
        "new_decoder_architecture num_attention_heads num_hidden_layers num_kv_heads num_ln_in_parallel_attn "
        "pad_token_id parallel_attn rope_parameters tie_word_embeddings use_cache vocab_size",
        # --- types-moe
        "qwen2_moe": "attention_dropout bos_token_id decoder_sparse_step eos_token_id hidden_act hidden_size "
        "initializer_range intermediate_size layer_types max_position_embeddings max_window_layers mlp_only_layers "
        "moe_intermediate_size norm_topk_prob num_attention_heads num_experts num_experts_per_tok num_hidden_layers "
        "num_key_value_heads output_router_logits pad_token_id qkv_bias rms_norm_eps rope_parameters "
        "router_aux_loss_coef shared_expert_intermediate_size sliding_window tie_word_embeddings use_cache "
        "use_sliding_window vocab_size",
        "qwen3_moe": "attention_bias attention_dropout bos_token_id decoder_sparse_step eos_token_id hidden_act "
        "hidden_size initializer_range intermediate_size max_position_embeddings mlp_only_layers "
        "moe_intermediate_size norm_topk_prob num_attention_heads num_experts num_experts_per_tok num_hidden_layers "
        "num_key_value_heads num_local_experts output_router_logits pad_token_id rms_norm_eps rope_parameters "
        "router_aux_loss_coef sliding_window tie_word_embeddings use_cache use_sliding_window vocab_size",
        "deepseek_v2": "attention_bias attention_dropout bos_token_id eos_token_id first_k_dense_replace head_dim "
        "hidden_act hidden_size initializer_range intermediate_size kv_lora_rank max_position_embeddings mlp_bias "
        "moe_intermediate_size n_group n_routed_experts n_shared_experts norm_topk_prob num_attention_heads "
        "num_experts num_experts_per_tok num_hidden_layers num_key_value_heads output_router_logits pad_token_id "
        "pretraining_tp q_lora_rank qk_head_dim qk_nope_head_dim qk_rope_head_dim rms_norm_eps rope_parameters "
        "routed_scaling_factor tie_word_embeddings topk_group topk_method use_cache v_head_dim vocab_size",
        "deepseek_v3": "attention_bias attention_dropout bos_token_id eos_token_id first_k_dense_replace head_dim "
        "hidden_act hidden_size initializer_range intermediate_size kv_lora_rank max_position_embeddings "
        "moe_intermediate_size n_group n_routed_experts n_shared_experts norm_topk_prob num_attention_heads "
        "num_experts_per_tok num_hidden_layers num_key_value_heads num_local_experts num_mtp_layers "
        "num_nextn_predict_layers output_router_logits pad_token_id pretraining_tp q_lora_rank qk_head_dim "
        "qk_nope_head_dim qk_rope_head_dim rms_norm_eps rope_interleave rope_parameters routed_scaling_factor "
        "tie_word_embeddings topk_group use_cache v_head_dim vocab_size",
        "gpt_oss": "attention_bias attention_dropout bos_token_id eos_token_id head_dim hidden_act hidden_size "
        "initializer_range intermediate_size layer_types max_position_embeddings num_attention_heads num_experts "
        "num_experts_per_tok num_hidden_layers num_key_value_heads num_local_experts output_router_logits "
        "pad_token_id rms_norm_eps rope_parameters router_aux_loss_coef sliding_window swiglu_alpha swiglu_limit "
        "tie_word_embeddings use_cache vocab_size",
        "llama4_text": "attention_bias attention_chunk_size attention_dropout attn_scale attn_temperature_tuning "
        "bos_token_id eos_token_id floor_scale head_dim hidden_act hidden_size initializer_range "
        "interleave_moe_layer_step intermediate_size intermediate_size_mlp layer_types max_position_embeddings "
        "moe_layers no_rope_layer_interval no_rope_layers num_attention_heads num_experts_per_tok "
        "num_hidden_layers num_key_value_heads num_local_experts output_router_logits pad_token_id rms_norm_eps "
        "rope_parameters router_aux_loss_coef router_jitter_noise tie_word_embeddings use_cache use_qk_norm "
        "vocab_size",
        # --- encoders (types-enc)
        "distilbert": "activation attention_dropout bos_token_id dim dropout eos_token_id hidden_dim hidden_size "
        "initializer_range max_position_embeddings n_heads n_layers num_attention_heads num_hidden_layers "
        "pad_token_id qa_dropout seq_classif_dropout sinusoidal_pos_embds tie_word_embeddings vocab_size",
        "xlm-roberta": "add_cross_attention attention_probs_dropout_prob bos_token_id classifier_dropout "
        "eos_token_id hidden_act hidden_dropout_prob hidden_size initializer_range intermediate_size is_decoder "
        "layer_norm_eps max_position_embeddings num_attention_heads num_hidden_layers pad_token_id "
        "tie_word_embeddings type_vocab_size use_cache vocab_size",
        "electra": "add_cross_attention attention_probs_dropout_prob bos_token_id classifier_dropout "
        "embedding_size eos_token_id hidden_act hidden_dropout_prob hidden_size initializer_range "
        "intermediate_size is_decoder layer_norm_eps max_position_embeddings num_attention_heads "
        "num_hidden_layers pad_token_id summary_activation summary_last_dropout summary_type summary_use_proj "
        "tie_word_embeddings type_vocab_size use_cache vocab_size",
        "deberta-v2": "attention_probs_dropout_prob bos_token_id eos_token_id hidden_act hidden_dropout_prob "
        "hidden_size initializer_range intermediate_size layer_norm_eps legacy max_position_embeddings "
        "max_relative_positions num_attention_heads num_hidden_layers pad_token_id pooler_dropout "
        "pooler_hidden_act pos_att_type position_biased_input relative_attention tie_word_embeddings "
        "type_vocab_size vocab_size",
        # --- gpt2-like (learned positions / ALiBi) and multimodal wrappers
        # (GPTNeoConfig writes attention_layers, expanded from attention_types; a file's list wins)
        # (GPTBigCodeConfig writes num_key_value_heads, derived from multi_query; the model reads multi_query)
        "llava": "image_seq_length image_token_id image_token_index multimodal_projector_bias projector_hidden_act "
        "text_config tie_word_embeddings vision_config vision_feature_layer vision_feature_select_strategy",
        "qwen2_vl": "image_token_id text_config tie_word_embeddings video_token_id vision_config "
        "vision_end_token_id vision_start_token_id",
        "gemma3": "boi_token_id boi_token_index eoi_token_id eoi_token_index image_token_id image_token_index "
        "initializer_range mm_tokens_per_image text_config tie_word_embeddings vision_config",
        "llama4": "boi_token_id boi_token_index eoi_token_id eoi_token_index image_token_id image_token_index "
        "text_config tie_word_embeddings vision_config",
        "qwen3_vl": "image_token_id text_config tie_word_embeddings video_token_id vision_config "
        "vision_end_token_id vision_start_token_id",
        "qwen3_vl_moe": "image_token_id text_config tie_word_embeddings video_token_id vision_config "
        "vision_end_token_id vision_start_token_id",
        "kimi_k25": "image_token_id projection_hidden_size projection_layer_norm_eps text_config "
        "tie_word_embeddings video_token_id vision_config vision_end_token_id vision_start_token_id",
        "qwen2_5_vl": "image_token_id text_config tie_word_embeddings video_token_id vision_config "
        "vision_end_token_id vision_start_token_id",
        "paligemma": "hidden_size image_token_id image_token_index projection_dim text_config tie_word_embeddings "
        "vision_config vocab_size",
        "idefics3": "image_token_id scale_factor text_config tie_word_embeddings use_cache vision_config",
        "smolvlm": "image_token_id scale_factor text_config tie_word_embeddings use_cache vision_config",
        "qwen3_5": "image_token_id text_config tie_word_embeddings video_token_id vision_config "
        "vision_end_token_id vision_start_token_id",
        "qwen3_5_moe": "image_token_id text_config tie_word_embeddings video_token_id vision_config "
        "vision_end_token_id vision_start_token_id",
        "mistral3": "image_token_id image_token_index multimodal_projector_bias projector_hidden_act "
        "spatial_merge_size text_config tie_word_embeddings vision_config vision_feature_layer",
        "llava_next": "image_grid_pinpoints image_seq_length image_token_id image_token_index multimodal_projector_bias "
        "projector_hidden_act text_config tie_word_embeddings vision_config vision_feature_layer "
        "vision_feature_select_strategy",
        # --- seq2seq
        "mbart": "activation_dropout activation_function attention_dropout bos_token_id classifier_dropout d_model "
        "decoder_attention_heads decoder_ffn_dim decoder_layerdrop decoder_layers decoder_start_token_id dropout "
        "encoder_attention_heads encoder_ffn_dim encoder_layerdrop encoder_layers eos_token_id forced_eos_token_id "
        "hidden_size init_std is_decoder max_position_embeddings num_attention_heads num_hidden_layers pad_token_id "
        "scale_embedding tie_word_embeddings use_cache vocab_size",
        "pegasus": "activation_dropout activation_function attention_dropout d_model decoder_attention_heads "
        "decoder_ffn_dim decoder_layerdrop decoder_layers decoder_start_token_id dropout encoder_attention_heads "
        "encoder_ffn_dim encoder_layerdrop encoder_layers eos_token_id forced_eos_token_id hidden_size init_std "
        "is_decoder max_position_embeddings num_attention_heads num_hidden_layers pad_token_id scale_embedding "
        "tie_word_embeddings use_cache vocab_size",
        "marian": "activation_dropout activation_function attention_dropout bos_token_id d_model "
        "decoder_attention_heads decoder_ffn_dim decoder_layerdrop decoder_layers decoder_start_token_id "
        "decoder_vocab_size dropout encoder_attention_heads encoder_ffn_dim encoder_layerdrop encoder_layers "
        "eos_token_id forced_eos_token_id hidden_size init_std is_decoder max_position_embeddings "
        "num_attention_heads num_hidden_layers pad_token_id scale_embedding share_encoder_decoder_embeddings "
        "tie_word_embeddings use_cache vocab_size",
        "whisper": "activation_dropout activation_function apply_spec_augment attention_dropout begin_suppress_tokens "
        "bos_token_id classifier_proj_size d_model decoder_attention_heads decoder_ffn_dim decoder_layerdrop "
        "decoder_layers decoder_start_token_id dropout encoder_attention_heads encoder_ffn_dim encoder_layerdrop "
        "encoder_layers eos_token_id hidden_size init_std mask_feature_length mask_feature_min_masks "
        "mask_feature_prob mask_time_length mask_time_min_masks mask_time_prob max_source_positions "
        "max_target_positions median_filter_width num_attention_heads num_hidden_layers num_key_value_heads "
        "num_mel_bins pad_token_id scale_embedding suppress_tokens tie_word_embeddings use_cache "
        "use_weighted_layer_sum vocab_size",
        "vit": "attention_probs_dropout_prob encoder_stride hidden_act hidden_dropout_prob hidden_size image_size "
        "initializer_range intermediate_size layer_norm_eps num_attention_heads num_channels num_hidden_layers "
        "patch_size pooler_act pooler_output_size qkv_bias",
    }.items()
}

# Keys every config may carry: PretrainedConfig's in transformers 5.x, those of 4.x
# (generation settings, torch_dtype, ...), and keys published checkpoints still hold that
# the 5.x classes fold into others or drop (rope_theta and rope_scaling -> rope_parameters,
# GPT-2's n_ctx, T5's n_positions and output_past, BART's and ALBERT's legacy switches, DistilBERT's tie_weights_).
COMMON_KEYS = frozenset(
    """
    _name_or_path architectures chunk_size_feed_forward dtype id2label is_encoder_decoder label2id model_type
    output_attentions output_hidden_states problem_type return_dict transformers_version
    torchscript torch_dtype use_bfloat16 tf_legacy_loss pruned_heads tie_word_embeddings is_decoder
    cross_attention_hidden_size add_cross_attention tie_encoder_decoder max_length min_length do_sample
    early_stopping num_beams num_beam_groups diversity_penalty temperature top_k top_p typical_p
    repetition_penalty length_penalty no_repeat_ngram_size encoder_no_repeat_ngram_size bad_words_ids
    num_return_sequences output_scores return_dict_in_generate forced_bos_token_id forced_eos_token_id
    remove_invalid_values exponential_decay_length_penalty suppress_tokens begin_suppress_tokens
    finetuning_task num_labels tokenizer_class prefix bos_token_id pad_token_id eos_token_id sep_token_id
    decoder_start_token_id task_specific_params _commit_hash _attn_implementation _attn_implementation_autoset
    attn_implementation quantization_config auto_map gradient_checkpointing use_cache initializer_range
    rope_theta rope_scaling rope_parameters partial_rotary_factor pretraining_tp hidden_activation
    position_embedding_type n_ctx n_positions output_past
    add_bias_logits add_final_layer_norm classif_dropout extra_pos_embeddings force_bos_token_to_be_generated
    normalize_before normalize_embedding static_position_embeddings
    down_scale_factor gap_size net_structure_type num_memory_blocks activation_dropout
    tie_weights_
    n_embed
    forced_decoder_ids classifier_dropout
""".split()
)

# Keys of the config classes that change no parameter of the model counted, each with its
# reason.  tests/test_model_types.py changes every key of every config class in turn and
# requires that symtrans's count and transformers' move identically, or that neither moves
# and the key is listed here.  "*" holds PretrainedConfig's own fields (every type has them).
# Keys that shape the workload rather than the weights (sliding windows, layer types) are
# listed too: they change FLOPs and the KV cache, and the readers below carry them into the
# Spec as the window size ``w``.
_WHY = WHY  # the reasons live with the records (catalog/models/record.py)


def _no_effect(**groups: str) -> dict[str, str]:
    return no_effect(**groups)


_DECODER_NO_EFFECT = DECODER_NO_EFFECT
_BERT_NO_EFFECT = dict(
    dropout="attention_probs_dropout_prob hidden_dropout_prob classifier_dropout",
    act="hidden_act",
    init="initializer_range",
    eps="layer_norm_eps",
    token="bos_token_id eos_token_id pad_token_id",
    cache="use_cache",
    mask="is_decoder",
)
_QWEN_WINDOW = "sliding_window use_sliding_window max_window_layers layer_types"

# --- decoder types (types-dec)
_GEMMA2_NO_EFFECT = dict(
    positions="max_position_embeddings",
    dropout="attention_dropout",
    token="bos_token_id eos_token_id pad_token_id",
    act="hidden_activation",
    init="initializer_range",
    eps="rms_norm_eps",
    rope="rope_parameters",
    cache="use_cache",
    scale="attn_logit_softcapping final_logit_softcapping query_pre_attn_scalar",
    window="sliding_window layer_types",
    mask="use_bidirectional_attention",
)

NO_PARAM_EFFECT: dict[str, dict[str, str]] = {
    "*": _no_effect(
        meta="architectures chunk_size_feed_forward dtype id2label is_encoder_decoder label2id "
        "output_hidden_states problem_type return_dict transformers_version"
    ),
    "bert": _no_effect(**_BERT_NO_EFFECT, **{"no head": "tie_word_embeddings"}),
    "roberta": _no_effect(**_BERT_NO_EFFECT, **{"no head": "tie_word_embeddings"}),
    "albert": _no_effect(
        dropout="attention_probs_dropout_prob hidden_dropout_prob classifier_dropout_prob",
        act="hidden_act",
        init="initializer_range",
        eps="layer_norm_eps",
        token="bos_token_id eos_token_id pad_token_id",
        **{"no head": "tie_word_embeddings"},
    ),
    "gpt2": _no_effect(
        act="activation_function",
        dropout="attn_pdrop embd_pdrop resid_pdrop summary_first_dropout",
        token="bos_token_id eos_token_id pad_token_id",
        init="initializer_range",
        eps="layer_norm_epsilon",
        scale="reorder_and_upcast_attn scale_attn_by_inverse_layer_idx scale_attn_weights",
        cache="use_cache",
        **{"no head": "summary_activation summary_proj_to_labels summary_type summary_use_proj"},
    ),
    "t5": _no_effect(
        dropout="classifier_dropout dropout_rate",
        token="eos_token_id pad_token_id",
        init="initializer_factor",
        eps="layer_norm_epsilon",
        act="dense_act_fn",
        buckets="relative_attention_max_distance",
        scale="scale_decoder_outputs",
        cache="use_cache",
        mask="is_decoder",
    ),
    "bart": _no_effect(
        dropout="activation_dropout attention_dropout classifier_dropout decoder_layerdrop dropout encoder_layerdrop",
        act="activation_function",
        token="bos_token_id decoder_start_token_id eos_token_id forced_eos_token_id pad_token_id",
        init="init_std",
        scale="scale_embedding",
        cache="use_cache",
        mask="is_decoder",
    ),
    "opt": _no_effect(
        act="activation_function",
        dropout="attention_dropout dropout layerdrop",
        token="bos_token_id eos_token_id pad_token_id",
        init="init_std",
        cache="use_cache",
    ),
    # --- decoder types (types-dec)
    "granite": _no_effect(
        **_DECODER_NO_EFFECT,
        scale="attention_multiplier embedding_multiplier logits_scaling residual_multiplier",
    ),
    "phi3": _no_effect(
        **{
            **_DECODER_NO_EFFECT,
            "dropout": "attention_dropout embd_pdrop resid_pdrop",
            "rope": "rope_parameters original_max_position_embeddings",
        },
        window="sliding_window",
    ),
    "starcoder2": _no_effect(
        **{
            **_DECODER_NO_EFFECT,
            "eps": "norm_epsilon",
            "dropout": "attention_dropout embedding_dropout residual_dropout",
        },
        window="sliding_window",
    ),
    "gemma2": _no_effect(**_GEMMA2_NO_EFFECT),
    "gemma3_text": _no_effect(**_GEMMA2_NO_EFFECT),
    "olmo": _no_effect(**{k: v for k, v in _DECODER_NO_EFFECT.items() if k != "eps"}, clip="clip_qkv"),
    "olmo2": _no_effect(**_DECODER_NO_EFFECT),
    "cohere": _no_effect(**{**_DECODER_NO_EFFECT, "eps": "layer_norm_eps"}, scale="logit_scale"),
    "stablelm": _no_effect(
        **{**_DECODER_NO_EFFECT, "eps": "layer_norm_eps", "dropout": "attention_dropout hidden_dropout"}
    ),
    "phi": _no_effect(
        **{**_DECODER_NO_EFFECT, "eps": "layer_norm_eps", "dropout": "attention_dropout embd_pdrop resid_pdrop"}
    ),
    "gpt_neox": _no_effect(
        **{
            **_DECODER_NO_EFFECT,
            "eps": "layer_norm_eps",
            "dropout": "attention_dropout classifier_dropout hidden_dropout",
        },
        mask="is_decoder",
        parallel="use_parallel_residual",
    ),
    "gptj": _no_effect(
        positions="max_position_embeddings n_positions",
        dropout="attn_pdrop embd_pdrop resid_pdrop",
        token="bos_token_id eos_token_id pad_token_id",
        act="activation_function",
        init="initializer_range",
        eps="layer_norm_epsilon",
        rope="rotary_dim",
        cache="use_cache",
    ),
    "falcon": _no_effect(
        positions="max_position_embeddings",
        dropout="attention_dropout hidden_dropout",
        token="bos_token_id eos_token_id pad_token_id",
        act="activation",
        init="initializer_range",
        eps="layer_norm_epsilon",
        rope="rope_parameters",
        alibi="alibi",
        cache="use_cache",
    ),
    # --- types-moe
    "qwen2_moe": _no_effect(
        **{**_DECODER_NO_EFFECT, "cache": "use_cache output_router_logits"},
        window=_QWEN_WINDOW,
        loss="router_aux_loss_coef",
        routing="norm_topk_prob",
    ),
    "qwen3_moe": _no_effect(
        **{**_DECODER_NO_EFFECT, "cache": "use_cache output_router_logits"},
        window="sliding_window use_sliding_window",
        loss="router_aux_loss_coef",
        routing="norm_topk_prob",
    ),
    "deepseek_v2": _no_effect(
        **{**_DECODER_NO_EFFECT, "cache": "use_cache output_router_logits"},
        tp="pretraining_tp",
        routing="n_group topk_group topk_method routed_scaling_factor norm_topk_prob",
        **{"mla dims": "head_dim qk_head_dim", "kv heads": "num_key_value_heads"},
    ),
    "deepseek_v3": _no_effect(
        **{
            **_DECODER_NO_EFFECT,
            "cache": "use_cache output_router_logits",
            "rope": "rope_parameters rope_interleave",
        },
        tp="pretraining_tp",
        routing="n_group topk_group routed_scaling_factor norm_topk_prob",
        mtp="num_mtp_layers num_nextn_predict_layers",
        **{"mla dims": "head_dim qk_head_dim", "kv heads": "num_key_value_heads"},
    ),
    "gpt_oss": _no_effect(
        **{
            **_DECODER_NO_EFFECT,
            "cache": "use_cache output_router_logits",
            "act": "hidden_act swiglu_alpha swiglu_limit",
        },
        window="sliding_window layer_types",
        loss="router_aux_loss_coef",
    ),
    "llama4_text": _no_effect(
        **{**_DECODER_NO_EFFECT, "cache": "use_cache output_router_logits"},
        window="attention_chunk_size layer_types",
        loss="router_aux_loss_coef router_jitter_noise",
        scale="attn_temperature_tuning floor_scale attn_scale",
        **{"l2 norm": "use_qk_norm", "rope layers": "no_rope_layers no_rope_layer_interval"},
    ),
    # --- encoders (types-enc)
    "distilbert": _no_effect(
        dropout="attention_dropout dropout qa_dropout seq_classif_dropout",
        act="activation",
        init="initializer_range",
        token="bos_token_id eos_token_id pad_token_id",
        frozen="sinusoidal_pos_embds",
        **{"no head": "tie_word_embeddings"},
    ),
    "xlm-roberta": _no_effect(**_BERT_NO_EFFECT, **{"no head": "tie_word_embeddings"}),
    "electra": _no_effect(
        **{**_BERT_NO_EFFECT, "dropout": _BERT_NO_EFFECT["dropout"] + " summary_last_dropout"},
        **{"no head": "tie_word_embeddings summary_activation summary_type summary_use_proj"},
    ),
    "deberta-v2": _no_effect(
        dropout="attention_probs_dropout_prob hidden_dropout_prob",
        act="hidden_act",
        init="initializer_range",
        eps="layer_norm_eps",
        token="bos_token_id eos_token_id pad_token_id",
        **{"no head": "tie_word_embeddings legacy", "pooler head": "pooler_dropout pooler_hidden_act"},
    ),
    # --- gpt2-like (learned positions / ALiBi) and multimodal wrappers
    "llava": _no_effect(
        **{"image tokens": "image_seq_length image_token_id image_token_index vision_feature_select_strategy"},
        act="projector_hidden_act",
    ),
    "qwen2_vl": _no_effect(
        **{"image tokens": "image_token_id video_token_id vision_end_token_id vision_start_token_id"},
    ),
    "gemma3": _no_effect(
        **{
            "image tokens": "boi_token_id boi_token_index eoi_token_id eoi_token_index image_token_id "
            "image_token_index mm_tokens_per_image"
        },
        init="initializer_range",
    ),
    "mistral3": _no_effect(**{"image tokens": "image_token_id image_token_index"}, act="projector_hidden_act"),
    "llama4": _no_effect(
        **{
            "image tokens": "boi_token_id boi_token_index eoi_token_id eoi_token_index image_token_id "
            "image_token_index",
            "text ties": "tie_word_embeddings",
        },
    ),
    # PaliGemmaModel reads text_config's hidden_size and vocab_size; the top-level copies are unread
    "paligemma": _no_effect(
        **{
            "image tokens": "image_token_id image_token_index",
            "unread copy": "hidden_size vocab_size",
        },
    ),
    "idefics3": _no_effect(**{"image tokens": "image_token_id"}, cache="use_cache"),
    "smolvlm": _no_effect(**{"image tokens": "image_token_id"}, cache="use_cache"),
    "qwen3_vl": _no_effect(
        **{"image tokens": "image_token_id video_token_id vision_end_token_id vision_start_token_id"},
    ),
    "qwen3_vl_moe": _no_effect(
        **{"image tokens": "image_token_id video_token_id vision_end_token_id vision_start_token_id"},
    ),
    "kimi_k25": _no_effect(
        **{"image tokens": "image_token_id video_token_id vision_end_token_id vision_start_token_id"},
        eps="projection_layer_norm_eps",
    ),
    "qwen2_5_vl": _no_effect(
        **{"image tokens": "image_token_id video_token_id vision_end_token_id vision_start_token_id"},
    ),
    "qwen3_5": _no_effect(
        **{"image tokens": "image_token_id video_token_id vision_end_token_id vision_start_token_id"},
    ),
    "qwen3_5_moe": _no_effect(
        **{"image tokens": "image_token_id video_token_id vision_end_token_id vision_start_token_id"},
    ),
    "llava_next": _no_effect(
        **{
            "image tokens": "image_grid_pinpoints image_seq_length image_token_id image_token_index "
            "vision_feature_select_strategy"
        },
        act="projector_hidden_act",
    ),
    # --- seq2seq
    "mbart": _no_effect(
        dropout="activation_dropout attention_dropout classifier_dropout decoder_layerdrop dropout encoder_layerdrop",
        act="activation_function",
        token="bos_token_id decoder_start_token_id eos_token_id forced_eos_token_id pad_token_id",
        init="init_std",
        scale="scale_embedding",
        cache="use_cache",
        mask="is_decoder",
    ),
    "pegasus": _no_effect(
        dropout="activation_dropout attention_dropout decoder_layerdrop dropout encoder_layerdrop",
        act="activation_function",
        token="decoder_start_token_id eos_token_id forced_eos_token_id pad_token_id",
        init="init_std",
        scale="scale_embedding",
        cache="use_cache",
        mask="is_decoder",
    ),
    "marian": _no_effect(
        dropout="activation_dropout attention_dropout decoder_layerdrop dropout encoder_layerdrop",
        act="activation_function",
        token="bos_token_id decoder_start_token_id eos_token_id forced_eos_token_id pad_token_id",
        init="init_std",
        scale="scale_embedding",
        cache="use_cache",
        mask="is_decoder",
    ),
    "whisper": _no_effect(
        dropout="activation_dropout attention_dropout decoder_layerdrop dropout encoder_layerdrop",
        act="activation_function",
        token="bos_token_id decoder_start_token_id eos_token_id pad_token_id",
        init="init_std",
        scale="scale_embedding",
        cache="use_cache",
        augment="apply_spec_augment mask_feature_length mask_feature_min_masks mask_feature_prob mask_time_length "
        "mask_time_min_masks mask_time_prob",
        generation="begin_suppress_tokens suppress_tokens median_filter_width",
        **{"no head": "classifier_proj_size use_weighted_layer_sum"},
    ),
    "vit": _no_effect(
        dropout="attention_probs_dropout_prob hidden_dropout_prob",
        act="hidden_act pooler_act",
        init="initializer_range",
        eps="layer_norm_eps",
        **{"no head": "encoder_stride"},
    ),
}

# Keys that are not fields of the config class but that the modeling file reads with
# getattr, changing the parameter count when a config.json gives them (Qwen2Attention:
# ``getattr(config, "head_dim", hidden_size // num_attention_heads)``).  The key audit of
# tests/test_model_types.py changes these too.
GETATTR_KEYS: dict[str, tuple[str, ...]] = {"qwen2": ("head_dim",)}
# --- types-moe (Qwen2MoeAttention, Qwen3MoeAttention: getattr(config, "head_dim", d // h))
GETATTR_KEYS.update({"qwen2_moe": ("head_dim",), "qwen3_moe": ("head_dim",)})
# --- decoder types (types-dec): the attention reads getattr(config, "head_dim", d // h)
GETATTR_KEYS.update({mt: ("head_dim",) for mt in ("granite", "phi3", "starcoder2", "olmo", "olmo2", "cohere", "phi")})
GETATTR_KEYS["falcon"] = ("n_embed",)  # FalconConfig.__post_init__ pops the legacy n_embed over hidden_size
# Keys read with getattr that change no parameter but the workload (gemma3_text: the kwarg
# sliding_window_pattern builds layer_types; to_dict() writes it back as _sliding_window_pattern,
# which __post_init__ does not read); known, so never reported as unknown.
WORKLOAD_GETATTR_KEYS: dict[str, tuple[str, ...]] = {
    "gemma3_text": ("sliding_window_pattern", "_sliding_window_pattern")
}
GETATTR_KEYS.update(
    {
        # --- encoders (types-enc): DebertaV2Embeddings / DisentangledSelfAttention / DebertaV2Encoder
        "deberta-v2": (
            "embedding_size",
            "position_buckets",
            "norm_rel_ebd",
            "share_att_key",
            "conv_kernel_size",
            "conv_groups",
            "attention_head_size",
        ),
    }
)
# Keys a modeling file reads with getattr that change no parameter (known, so never typos).
GETATTR_QUIET: dict[str, tuple[str, ...]] = {
    # --- encoders (types-enc): ConvLayer's activation; the classification heads' pooler width
    "deberta-v2": ("conv_act", "pooler_hidden_size"),
}

# Keys that published checkpoints' config.json files carry and that the transformers 5.x
# config class neither declares nor passes to any modeling code (checked by grepping
# transformers 5.24's models/<type>/ for ``config.<key>``): they change nothing, and are
# known so that they are neither noted as unknown nor taken for a misspelling.  Records
# (catalog/models) carry theirs as ``ModelType.legacy_keys``.
LEGACY_KEYS: dict[str, frozenset[str]] = {
    # google/gemma-2-9b: 4.x's hidden_act (5.x reads hidden_activation), sliding_window_size
    # (5.x reads sliding_window) and generation's cache_implementation
    "gemma2": frozenset({"cache_implementation", "hidden_act", "sliding_window_size"}),
    # llava-hf/llava-1.5-7b-hf: the loss's ignore_index and a top-level vocab_size (the head
    # reads text_config.vocab_size)
    "llava": frozenset({"ignore_index", "vocab_size"}),
    # llava-hf/llava-v1.6-mistral-7b-hf: as llava's, and 4.x's use_image_newline_parameter (5.x always
    # builds image_newline; no modeling code reads the key)
    "llava_next": frozenset({"ignore_index", "vocab_size", "use_image_newline_parameter"}),
    # moonshotai/Kimi-K2.5: the loss's ignore_index and its remote code's media settings, none read by
    # transformers 5.24's models/kimi_k25 (grepped)
    "kimi_k25": frozenset(
        {"ignore_index", "media_placeholder_token_id", "use_unified_vision_chunk", "video_placeholder"}
    ),
    # vidore/colpali-v1.2-merged (a PaliGemma 448 px checkpoint): 4.x's loss ignore_index
    "paligemma": frozenset({"ignore_index"}),
    # SmolVLM-256M-Instruct and SmolVLM2-500M: a top-level vocab_size (the head reads text_config's),
    # the training switch use_reentrant_checkpointing and transformers.js's export settings; 5.x's
    # save_pretrained writes the pad_token_id that Idefics3Config pops as _pad_token_id
    **dict.fromkeys(
        ("idefics3", "smolvlm"),
        frozenset({"vocab_size", "use_reentrant_checkpointing", "transformers.js_config", "_pad_token_id"}),
    ),
    # Qwen/Qwen2-VL-7B-Instruct's text_config repeats the wrapper's vision_token_id
    "qwen2_vl_text": frozenset({"vision_token_id"}),
    # Qwen2.5-VL-7B-Instruct as 4.53 re-saves it: its text_config repeats the wrapper's token ids
    "qwen2_5_vl_text": frozenset(
        {"vision_token_id", "image_token_id", "video_token_id", "vision_start_token_id", "vision_end_token_id"}
    ),
}


def _assemble(records: tuple[ModelType, ...]) -> None:
    """Add the registered model-type records (catalog/models) to the tables above: each
    table stays the view every caller reads, and a record is its one home."""
    for rec in records:
        mt = rec.model_type
        if mt in CLASSES or mt in TEXT_ONLY:
            raise RuntimeError(f"model_type {mt} has a record and a table entry")
        (TEXT_ONLY if rec.text_only else CLASSES)[mt] = (rec.config_class, rec.model_class)
        (TEXT_ONLY_DEFAULTS if rec.text_only else DEFAULTS)[mt] = dict(rec.defaults)
        (TEXT_ONLY_CONFIG_KEYS if rec.text_only else CONFIG_KEYS)[mt] = rec.config_keys
        (TEXT_ONLY_NO_PARAM_EFFECT if rec.text_only else NO_PARAM_EFFECT)[mt] = dict(rec.no_param_effect)
        for table, value in (
            (ALIASES, dict(rec.aliases)),
            (GETATTR_KEYS, rec.getattr_keys),
            (WORKLOAD_GETATTR_KEYS, rec.workload_getattr_keys),
            (GETATTR_QUIET, rec.getattr_quiet),
            (LEGACY_KEYS, rec.legacy_keys),
        ):
            if value:
                table[mt] = value


# --- gpt2-like (learned positions / ALiBi) and multimodal wrappers
# Language models that exist only inside a multimodal wrapper (no ForCausalLM of their own in
# transformers 5.x): read from the wrapper's text_config, never as a top-level model_type.
# The same tables as the supported types, kept apart so that SUPPORTED lists only real
# top-level types.  Qwen2VLTextModel is Qwen2-shaped (q, k, v biased; o not) but requires
# num_attention_heads to divide hidden_size, reads no head_dim, and its multimodal rotary
# positions (mrope) have no parameters.
TEXT_ONLY: dict[str, tuple[str, str]] = {
    "qwen2_vl_text": ("Qwen2VLTextConfig", "Qwen2VLTextModel"),
    # Qwen2.5-VL's language model: Qwen2-VL's text model (the same fields, defaults and layers)
    "qwen2_5_vl_text": ("Qwen2_5_VLTextConfig", "Qwen2_5_VLTextModel"),
}
TEXT_ONLY_DEFAULTS: dict[str, dict[str, Any]] = {
    "qwen2_vl_text": {
        "vocab_size": 152064,
        "hidden_size": 8192,
        "intermediate_size": 29568,
        "num_hidden_layers": 80,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "max_position_embeddings": 32768,
        "max_window_layers": 80,
        "tie_word_embeddings": False,  # no such field: the wrapper decides (and passes it down)
    },
}
TEXT_ONLY_CONFIG_KEYS: dict[str, frozenset[str]] = {
    "qwen2_vl_text": frozenset(
        "attention_dropout bos_token_id eos_token_id hidden_act hidden_size initializer_range intermediate_size "
        "layer_types max_position_embeddings max_window_layers num_attention_heads num_hidden_layers "
        "num_key_value_heads pad_token_id rms_norm_eps rope_parameters sliding_window use_cache "
        "use_sliding_window vocab_size".split()
    ),
}
TEXT_ONLY_NO_PARAM_EFFECT: dict[str, dict[str, str]] = {
    "qwen2_vl_text": _no_effect(**_DECODER_NO_EFFECT, window=_QWEN_WINDOW),
}
TEXT_ONLY_DEFAULTS["qwen2_5_vl_text"] = dict(TEXT_ONLY_DEFAULTS["qwen2_vl_text"])
TEXT_ONLY_CONFIG_KEYS["qwen2_5_vl_text"] = TEXT_ONLY_CONFIG_KEYS["qwen2_vl_text"]
TEXT_ONLY_NO_PARAM_EFFECT["qwen2_5_vl_text"] = dict(TEXT_ONLY_NO_PARAM_EFFECT["qwen2_vl_text"])


_assemble(RECORDS)
SUPPORTED = tuple(CLASSES)

# Every key some supported config class (or PretrainedConfig, 4.x or a published checkpoint)
# has: such a key is never taken for a typo, whichever model_type it appears in.
REAL_KEYS = frozenset().union(
    *CONFIG_KEYS.values(), COMMON_KEYS, *NO_PARAM_EFFECT.values(), *GETATTR_KEYS.values(), *GETATTR_QUIET.values()
)


def _of(table: dict, text_table: dict, model_type: str):
    """``table[model_type]`` for a supported type, else the text-only table's entry."""
    return table[model_type] if model_type in table else text_table[model_type]


def param_keys(model_type: str) -> frozenset[str]:
    """The keys of ``model_type``'s config class (and their aliases) that change its
    parameter count: CONFIG_KEYS and the keys symtrans reads, less NO_PARAM_EFFECT."""
    quiet = set(NO_PARAM_EFFECT["*"]) | set(_of(NO_PARAM_EFFECT, TEXT_ONLY_NO_PARAM_EFFECT, model_type))
    keys = (
        _of(CONFIG_KEYS, TEXT_ONLY_CONFIG_KEYS, model_type)
        | frozenset(_of(DEFAULTS, TEXT_ONLY_DEFAULTS, model_type))
        | frozenset(ALIASES.get(model_type, {}))
    )
    keys |= frozenset(GETATTR_KEYS.get(model_type, ()))
    return frozenset(k for k in keys if k not in quiet)


# Unknown keys at least this similar to a known one (difflib ratio, 0..1) are taken as
# typos: num_key_value_head / num_key_value_heads is 0.97, intermediate_sise 0.94, while
# distinct real keys such as rope_theta / rope_parameters (0.56) stay well below.
TYPO_CUTOFF = 0.85
# At most this many unknown top-level keys.  Real config.json files have a few dozen keys
# and a handful of unknown ones (keys of newer transformers versions); each unknown key is
# compared with every known one for typos, so a file of 686,000 unknown keys took 440 s.
# More than this is not a model config: it is refused before any comparison.
MAX_UNKNOWN_KEYS = 1000

# --------------------------------------------------------------------------- parsing

_NONFINITE_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*(-?Infinity|NaN)\b')


def parse_json(text: str) -> dict[str, Any]:
    """Parse strict JSON text into the config dict.

    Rejects NaN/Infinity (which Python's json accepts by default), duplicate keys in any
    object, and a top level that is not an object.  Integers longer than 20 digits are
    kept as a marker so that using one as a size names its key.

    Raises:
        ConfigError: one sentence saying what is wrong.
    """

    def constant(name: str) -> Any:
        m = _NONFINITE_KEY.search(text)
        where = f"key {m.group(1)} is {m.group(2)}, which" if m else f"{name}"
        raise ConfigError(f"{where} is not valid JSON: only finite numbers are allowed")

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in items:
            if k in out:
                raise ConfigError(f"key {k} appears twice in the same JSON object")
            out[k] = v
        return out

    def integer(s: str) -> Any:
        return int(s) if len(s) <= 20 else _Huge(s)

    try:
        cfg = json.loads(text, parse_constant=constant, object_pairs_hook=pairs, parse_int=integer)
    except ConfigError:
        raise
    except json.JSONDecodeError as e:
        raise ConfigError(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise ConfigError("not valid JSON: objects are nested too deeply") from None
    except ValueError as e:  # e.g. a number the decoder cannot convert
        raise ConfigError(f"not valid JSON: {str(e).split('.')[0]}") from None
    if not isinstance(cfg, dict):
        raise ConfigError(f"the top level must be a JSON object, not {_show(cfg)}")
    return cfg


_SURROGATE = re.compile("[\ud800-\udfff]")


def _refuse_lone_surrogates(cfg: Any) -> None:
    """JSON's ``\\ud800`` escapes can spell half a UTF-16 pair, which is no character:
    refuse it, naming the key (shown escaped), before it reaches a message or an output.

    Raises:
        ConfigError: naming the key whose name or string value holds a lone surrogate.
    """
    stack: list[tuple[str, Any]] = [("", cfg)]
    while stack:
        where, v = stack.pop()
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        for k, x in items:
            name = f"{where}.{k}" if where else str(k)
            if isinstance(k, str) and _SURROGATE.search(k):
                raise ConfigError(f"key {ascii(name)} holds a lone surrogate, which is not a character")
            if isinstance(x, str) and _SURROGATE.search(x):
                raise ConfigError(f"the value of key {ascii(name)} holds a lone surrogate, which is not a character")
            stack.append((name, x))


def load_config(path: str | Path) -> tuple[Spec, str, tuple[str, ...]]:
    """Read a Hugging Face ``config.json`` (or a directory holding one).

    Returns:
        ``(spec, name, notes)``: the Spec, a display name (the file's stem, or its
        directory's name for a file called ``config.json``) and the notes on defaults
        and assumptions used.

    Raises:
        ValueError: one sentence starting with the path: unreadable file, invalid JSON,
            unsupported model_type, a bad or contradictory value (naming the key).
    """
    spec, name, notes, _ = load_config_checkpoint(path)
    return spec, name, notes


def load_config_checkpoint(path: str | Path):
    """``load_config`` plus how the checkpoint stores its weights: its ``torch_dtype``/
    ``dtype`` and ``quantization_config`` as a ``quantization.Checkpoint`` (read from the
    same parsed file; a problem there is recorded, not raised, so that parameter counts
    still work).

    Returns:
        ``(spec, name, notes, checkpoint)``.

    Raises:
        ValueError: as ``load_config``.
    """
    from symtrans.accounting.quantization import checkpoint_from_config

    p = Path(path)
    if p.is_dir():
        p = p / "config.json"
    cfg = read_config(p, str(path))
    name = p.stem
    if name == "config":
        name = p.resolve().parent.name or name
    spec, notes = spec_from_config(cfg, str(path))
    return spec, name, notes, checkpoint_from_config(cfg)


def read_config(p: Path, shown: str | None = None) -> dict[str, Any]:
    """The parsed JSON object of the config file ``p``: a regular file of at most
    MAX_BYTES, UTF-8 (with or without BOM) or UTF-16 with a BOM (``base/inputs.py``),
    strict JSON, no lone surrogates.  ``shown`` is how messages name the file.

    Raises:
        ConfigError: one sentence starting with the path.
    """
    from symtrans.base.inputs import InputError, read_text

    path = str(p) if shown is None else shown
    try:
        text = read_text(p, "a config.json", MAX_BYTES)
    except InputError as e:
        raise ConfigError(str(e)) from None
    try:
        cfg = parse_json(text)
        _refuse_lone_surrogates(cfg)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
    return cfg


# --------------------------------------------------------------------------- reading


class _Reader(Reader):
    """A :class:`Reader` of a supported or text-only type, its tables looked up here."""

    def __init__(self, cfg: dict[str, Any], model_type: str) -> None:
        super().__init__(
            cfg,
            model_type,
            _of(CLASSES, TEXT_ONLY, model_type),
            _of(DEFAULTS, TEXT_ONLY_DEFAULTS, model_type),
            ALIASES.get(model_type, {}),
        )


# pad_token_id class defaults of the types whose token embedding is an nn.Embedding with
# padding_idx = pad_token_id (every supported type but GPT-2 and T5, whose embeddings have
# no padding_idx).  torch requires -vocab_size <= padding_idx < vocab_size.
_PAD_DEFAULTS: dict[str, int | None] = {
    "bert": 0,
    "roberta": 1,
    "albert": 0,
    "bart": 1,
    "opt": 1,
    # --- decoder types (types-dec)
    "granite": None,
    "phi3": 32000,
    "starcoder2": None,
    "gemma2": 0,
    "gemma3_text": 0,
    "olmo": 1,
    "olmo2": 1,
    "cohere": 0,
    "stablelm": None,
    "phi": None,
    # --- types-moe
    "qwen2_moe": None,
    "qwen3_moe": None,
    "deepseek_v2": None,
    "deepseek_v3": None,
    "gpt_oss": None,
    "llama4_text": None,
    # --- encoders (types-enc)
    "distilbert": 0,
    "xlm-roberta": 1,
    "electra": 0,
    "deberta-v2": 0,
    "qwen2_vl_text": None,
    "qwen2_5_vl_text": None,
    # --- seq2seq
    "mbart": 1,
    "pegasus": 0,
    "marian": 58100,
    "whisper": 50256,
}
_PAD_DEFAULTS.update({rec.model_type: rec.pad_default for rec in RECORDS if rec.pad_default is not NO_PADDING})


def _check_padding_idx(r: _Reader) -> None:
    """pad_token_id must index a row of the token embedding, as nn.Embedding requires."""
    if r.mt not in _PAD_DEFAULTS:
        return
    pad = r.cfg["pad_token_id"] if "pad_token_id" in r.cfg else _PAD_DEFAULTS[r.mt]
    if pad is None:
        return
    if isinstance(pad, bool) or not isinstance(pad, int):
        raise ConfigError(f"pad_token_id must be an integer or null, not {_show(pad)}")
    key = r._lookup("vocab_size")[0] or "vocab_size"
    vocab = r.size("vocab_size")
    if not -vocab <= pad < vocab:
        given = "" if "pad_token_id" in r.cfg else f", the {r.cls} default"
        raise ConfigError(
            f"pad_token_id ({pad}{given}) is not a row of the {vocab}-row token embedding ({key}): "
            f"{r.model} uses it as the embedding's padding_idx, which must be below {key}"
        )


# --------------------------------------------------------------------------- families


def _albert(r: _Reader) -> Spec:
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    _check_divides("hidden_size", d, "num_attention_heads", h, "AlbertAttention's output map")
    r.head_dim_must_match("hidden_size", d, "num_attention_heads", h)
    n = r.size("num_hidden_layers")
    groups, inner = r.size("num_hidden_groups"), r.size("inner_group_num")
    if (groups, inner) == (1, 1):
        share = "all"
        r.notes.append(f"num_hidden_groups = inner_group_num = 1: one layer's weights serve all {n} layers")
    elif (groups, inner) == (n, 1):
        share = "none"
    else:
        raise ConfigError(
            f"num_hidden_groups ({groups}) with inner_group_num ({inner}) makes layer groups; symtrans "
            f"models ALBERT with one layer shared by all (1, 1) or none shared ({n}, 1)"
        )
    r.notes.append(f"{r.model} includes its pooler (add_pooling_layer=True, the default); no task head is counted")
    return Spec(
        family="encoder-only",
        sizes=dict(
            d_model=d,
            d_ff=r.size("intermediate_size"),
            h=h,
            N=n,
            V=r.size("vocab_size"),
            L_max=r.size("max_position_embeddings"),
            E_emb=r.size("embedding_size"),
        ),
        positional="learned",
        token_types=r.size("type_vocab_size", zero_ok=True),
        embedding_norm=True,
        pooler=True,
        norm="layernorm",
        bias=True,
        norm_position="post",
        final_norm=False,
        share_layers=share,
    )


def _gpt2(r: _Reader) -> Spec:
    d = r.size("n_embd")
    h = r.size("n_head")
    _check_divides("n_embd", d, "n_head", h, r.model)
    r.head_dim_must_match("n_embd", d, "n_head", h)
    if r.flag("add_cross_attention", note=False):
        raise ConfigError(
            f"add_cross_attention is true: cross-attention layers in {r.model} are not modelled by symtrans"
        )
    d_ff = r.size("n_inner", 4 * d, f"4 * n_embd = {4 * d}", nullable=True)
    return Spec(
        family="decoder-only",
        sizes=dict(d_model=d, d_ff=d_ff, h=h, N=r.size("n_layer"), V=r.size("vocab_size"), L_max=r.size("n_positions")),
        positional="learned",
        norm="layernorm",
        bias=True,
        norm_position="pre",
        final_norm=True,
        tie_output=r.flag("tie_word_embeddings"),
    )


# The BART family's layouts (transformers 5.x): positions, offset rows, embedding LayerNorm,
# final LayerNorm per stack, and where the layers put their norms.
_BART_FAMILY = {
    "bart": dict(positional="learned", position_offset=2, embedding_norm=True, final_norm=False, norm_position="post"),
    "mbart": dict(positional="learned", position_offset=2, embedding_norm=True, final_norm=True, norm_position="pre"),
    "pegasus": dict(positional="sinusoidal-table", embedding_norm=False, final_norm=True, norm_position="pre"),
    "marian": dict(positional="sinusoidal-table", embedding_norm=False, final_norm=False, norm_position="post"),
}


def _stack_sizes(r: _Reader, d: int, attention: str) -> dict[str, int]:
    """The encoder's and the decoder's heads, FFN widths and layers, the decoder's as its own
    sizes (h_dec, d_ff_dec; N_enc and N_dec) where they differ from the encoder's.  Each
    stack's heads must divide d_model (``attention`` names the class that requires it)."""
    h_enc, h_dec = r.size("encoder_attention_heads"), r.size("decoder_attention_heads")
    _check_divides("d_model", d, "encoder_attention_heads", h_enc, attention)
    _check_divides("d_model", d, "decoder_attention_heads", h_dec, attention)
    r.head_dim_must_match("d_model", d, "encoder_attention_heads", h_enc)
    ff_enc, ff_dec = r.size("encoder_ffn_dim"), r.size("decoder_ffn_dim")
    n_enc, n_dec = r.size("encoder_layers"), r.size("decoder_layers")
    sizes = dict(d_model=d, d_ff=ff_enc, h=h_enc)
    if h_dec != h_enc:
        sizes["h_dec"] = h_dec
    if ff_dec != ff_enc:
        sizes["d_ff_dec"] = ff_dec
    if n_enc == n_dec:
        sizes["N"] = n_enc
    else:
        sizes.update(N_enc=n_enc, N_dec=n_dec)
    if "scale_embedding" in r.cfg and not isinstance(r.cfg["scale_embedding"], bool):
        raise ConfigError(f"scale_embedding must be true or false, not {_show(r.cfg['scale_embedding'])}")
    return sizes


def _bart(r: _Reader) -> Spec:
    """BART, mBART, Pegasus and Marian (``_BART_FAMILY``).

    Untied (``tie_word_embeddings`` false), transformers 5.x unties every entry of the
    class's tie map and keeps ``model.shared``: four V x d_model matrices (shared, encoder
    and decoder inputs, LM head), the shared one read by no forward pass; symtrans counts
    all four, as ``model.parameters()`` does (``Spec.idle_shared_embedding``).  Marian
    with ``share_encoder_decoder_embeddings`` false has no shared table: the encoder reads
    V rows, the decoder and its head ``decoder_vocab_size`` rows (``V_dec``)."""
    layout = _BART_FAMILY[r.mt]
    d = r.size("d_model")
    sizes = _stack_sizes(r, d, f"{r.cls.removesuffix('Config')}Attention")
    if r.mt == "bart":
        r.ignored_flag("add_final_layer_norm", False, "without a final LayerNorm")
        r.ignored_flag("normalize_embedding", True, "with a LayerNorm after the embeddings")
        r.ignored_flag("normalize_before", False, "with post-norm layers (no parameter depends on it)")
    V = r.size("vocab_size")
    sizes.update(V=V, L_max=r.size("max_position_embeddings"))
    tie = r.flag("tie_word_embeddings")
    share = r.flag("share_encoder_decoder_embeddings", note=False) if r.mt == "marian" else True
    opts: dict[str, Any] = dict(share_embeddings=share and tie, tie_output=tie, idle_shared_embedding=share and not tie)
    if r.mt == "marian":
        v_dec = r.size("decoder_vocab_size", V, f"vocab_size = {V}", nullable=True)
        _check_pad_rows(r, v_dec, "decoder_vocab_size", "the decoder's embed_tokens")
        if share and v_dec != V:
            if tie:
                r.notes.append(
                    f"decoder_vocab_size ({v_dec}) differs from vocab_size ({V}), but with "
                    "share_encoder_decoder_embeddings the decoder reads the shared V-row table: ignored"
                )
            else:
                raise ConfigError(
                    f"decoder_vocab_size ({v_dec}) differs from vocab_size ({V}) with shared, untied embeddings: "
                    f"MarianMTModel then gives the decoder's table {v_dec} rows and its LM head {V}, "
                    "which symtrans does not model"
                )
        elif not share and v_dec != V:
            sizes["V_dec"] = v_dec
    if not tie:
        r.notes.append(
            "tie_word_embeddings is false: "
            + (
                "encoder input, decoder input and LM head are their own matrices, and transformers 5.x also "
                "keeps model.shared (V x d_model), which no forward pass reads: counted, as model.parameters() does"
                if share
                else "the LM head is its own matrix beside the decoder's table"
            )
        )
    if layout["positional"] == "sinusoidal-table":
        r.notes.append(
            f"{r.model} stores its sinusoidal positions as frozen max_position_embeddings x d_model parameters, "
            "one table per stack: counted (they are in model.parameters())"
        )
    return Spec(family="encoder-decoder", sizes=sizes, norm="layernorm", bias=True, **layout, **opts)


def _check_pad_rows(r: _Reader, rows: int, key: str, table: str) -> None:
    """pad_token_id must also index ``table`` (``rows`` rows), another padding_idx table."""
    pad = r.cfg["pad_token_id"] if "pad_token_id" in r.cfg else _PAD_DEFAULTS[r.mt]
    if isinstance(pad, int) and not isinstance(pad, bool) and not -rows <= pad < rows:
        given = "" if "pad_token_id" in r.cfg else f", the {r.cls} default"
        raise ConfigError(
            f"pad_token_id ({pad}{given}) is not a row of {table} ({key} = {rows}): "
            f"{r.model} uses it as that table's padding_idx, which must be below {key}"
        )


def _whisper(r: _Reader) -> Spec:
    """WhisperForConditionalGeneration: a Conv1d front end over num_mel_bins (C_in) mel
    channels, a frozen sinusoidal table of max_source_positions (L_src_max) rows in the
    encoder, a learned one of max_target_positions (L_tgt_max) rows and a V-row token table
    in the decoder, tied to ``proj_out`` by default; k_proj alone has no bias; pre-norm
    layers and a final LayerNorm per stack."""
    d = r.size("d_model")
    sizes = _stack_sizes(r, d, "WhisperAttention")
    src, tgt = r.size("max_source_positions"), r.size("max_target_positions")
    # The encoder always reads the whole window: L_src is fixed (the decoder's L_tgt is the workload's).
    sizes.update(V=r.size("vocab_size"), C_in=r.size("num_mel_bins"), L_src_max=src, L_tgt_max=tgt, L_src=src)
    r.notes.append(
        f"WhisperEncoder reads exactly 2 x max_source_positions = {2 * src} mel frames: the source length L_src "
        f"is {src} after the stride-2 convolution; its sinusoidal position table is a frozen parameter (counted)"
    )
    return Spec(
        family="encoder-decoder",
        sizes=sizes,
        frontend="conv1d",
        positional="sinusoidal-table",
        decoder_positional="learned",
        share_embeddings=False,
        tie_output=r.flag("tie_word_embeddings"),
        k_bias=False,
        bias=True,
        norm="layernorm",
        norm_position="pre",
        final_norm=True,
    )


def _pair(r: _Reader, key: str) -> tuple[int, int]:
    """ViTConfig's image_size or patch_size: one integer, or [height, width]."""
    k, v = r._lookup(key)
    if k is None:
        v = r._default(key, "missing", _MISSING, None)
    if isinstance(v, list) and len(v) == 2:
        return check_size(key, v[0]), check_size(key, v[1])
    if isinstance(v, list):
        raise ConfigError(f"{key} must be an integer or a list [height, width], not a list of {len(v)}")
    n = check_size(key, v)
    return n, n


def _vit(r: _Reader) -> Spec:
    """ViTModel with its pooler: a Conv2d patch embedding (num_channels -> hidden_size,
    kernel and stride patch_size), a CLS token, (patches + 1) learned positions, pre-norm
    BERT-shaped layers (Q, K, V biased by qkv_bias; the output map always), a final
    LayerNorm and the pooler (hidden_size -> pooler_output_size, tanh)."""
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    (ih, iw), (ph, pw) = _pair(r, "image_size"), _pair(r, "patch_size")
    if ph != pw:
        raise ConfigError(f"patch_size [{ph}, {pw}] is not square: symtrans models p x p patches")
    patches = (ih // ph) * (iw // pw)
    sizes = dict(
        d_model=d,
        d_ff=r.size("intermediate_size"),
        h=h,
        N=r.size("num_hidden_layers"),
        L_max=patches + 1,
        C_in=r.size("num_channels"),
        p=ph,
    )
    r.notes.append(
        f"image {ih} x {iw} in {ph} x {pw} patches: {patches} patches + the CLS token = {patches + 1} tokens "
        "per image (L_max, the rows of the position table)"
    )
    if r.given("head_dim"):  # ViTSelfAttention reads it with getattr
        sizes["d_k"] = r.size("head_dim")
    elif "head_dim" in r.cfg:
        raise ConfigError("head_dim must be a positive integer, not null (ViTSelfAttention reads it when present)")
    elif d % h:
        if d < h:
            raise ConfigError(f"num_attention_heads ({h}) exceeds hidden_size ({d}): the heads would be 0 wide")
        sizes["d_k"] = d // h
        r.notes.append(f"head_dim not given: ViTSelfAttention uses hidden_size // num_attention_heads = {d // h}")
    pool = r.size("pooler_output_size", d, f"hidden_size = {d}", nullable=True)
    if pool != d:
        sizes["d_pool"] = pool
    r.notes.append(f"{r.model} includes its pooler (add_pooling_layer=True, the default); no task head is counted")
    return Spec(
        family="encoder-only",
        sizes=sizes,
        frontend="patch",
        positional="learned",
        pooler=True,
        qkv_bias=r.flag("qkv_bias", note=False),
        bias=True,
        norm="layernorm",
        norm_position="pre",
        final_norm=True,
    )


def _opt(r: _Reader) -> Spec:
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    _check_divides("hidden_size", d, "num_attention_heads", h, "OPTAttention")
    r.head_dim_must_match("hidden_size", d, "num_attention_heads", h)
    proj = r.size("word_embed_proj_dim", d, f"hidden_size = {d}", nullable=True)
    before = r.flag("do_layer_norm_before")
    final = before and not r.flag("_remove_final_layer_norm", note=False)
    affine = r.flag("layer_norm_elementwise_affine")
    sizes = dict(
        d_model=d,
        d_ff=r.size("ffn_dim"),
        h=h,
        N=r.size("num_hidden_layers"),
        V=r.size("vocab_size"),
        L_max=r.size("max_position_embeddings"),
    )
    opts: dict[str, Any] = {}
    if proj != d:  # OPT-350m: token embedding and tied head word_embed_proj_dim wide
        sizes["E_emb"] = proj
        opts["token_projection"] = True
        r.notes.append(
            f"word_embed_proj_dim {proj} differs from hidden_size {d}: the token embedding (and the tied LM head) "
            f"is {proj} wide, with bias-free project_in ({proj} -> {d}) and project_out ({d} -> {proj}) maps"
        )
    # --- gpt2-like: OPT-350m's projections (token_projection) added above
    return Spec(
        family="decoder-only",
        sizes=sizes,
        **opts,
        positional="learned",
        position_offset=2,
        norm="layernorm" if affine else "none",
        bias=r.flag("enable_bias"),
        norm_position="pre" if before else "post",
        final_norm=final,
        tie_output=r.flag("tie_word_embeddings"),
    )


# --- decoder types (types-dec): granite, phi3, starcoder2, gemma2, gemma3_text, olmo, olmo2,
# cohere, stablelm, phi, gpt_neox, gptj, falcon

# Types whose num_key_value_heads field is ``int | None`` (null, or missing with a None
# default, means num_attention_heads); the others' strict int field refuses null.
_DEC_KV_NULLABLE = ("granite", "phi3", "olmo", "olmo2", "cohere", "phi")
# Types whose attention reads ``getattr(config, "head_dim", hidden_size // num_attention_heads)``:
# a null head_dim reaches nn.Linear as None (transformers fails); starcoder2 reads
# ``getattr(config, "head_dim", None) or hidden_size // num_attention_heads`` (null is d // h).
_DEC_HEAD_DIM_PLAIN = ("granite", "phi3", "olmo", "olmo2", "cohere", "phi")
_DEC_HEAD_DIM_OR = ("starcoder2",)
# Types whose attention (or config) refuses hidden_size not divisible by the heads.
_DEC_DIVIDES = ("gemma2", "gemma3_text", "stablelm", "gpt_neox", "gptj", "falcon")
# Types whose head width is always hidden_size // heads (head_dim, if given, is not read by the attention).
_DEC_NO_HEAD_DIM = ("stablelm", "gpt_neox", "gptj", "falcon")


def _dec_heads(r: _Reader, h: int) -> int:
    """num_key_value_heads of a decoder type, checked against h."""
    given_null = "num_key_value_heads" in r.cfg and r.cfg["num_key_value_heads"] is None
    if r.mt in _DEC_KV_NULLABLE and (given_null or r.defaults["num_key_value_heads"] is None):
        h_kv = r.size("num_key_value_heads", h, f"num_attention_heads = {h}", nullable=True)
    else:
        h_kv = r.size("num_key_value_heads")
    if h_kv > h:
        raise ConfigError(f"num_key_value_heads ({h_kv}) exceeds num_attention_heads ({h})")
    if h % h_kv:
        raise ConfigError(f"num_attention_heads ({h}) is not a multiple of num_key_value_heads ({h_kv})")
    return h_kv


def _dec_head_dim(r: _Reader, d: int, h: int) -> int | None:
    """The head width d_k when it is not d_model / h (None when it is): ``head_dim`` when
    the file gives it (read with getattr by the attention), else hidden_size // heads,
    rounded down (the output map is then h * (d // h) -> d)."""
    if r.mt in ("gemma2", "gemma3_text"):
        return r.size("head_dim")  # a field with a class default (256)
    if r.mt in _DEC_NO_HEAD_DIM:
        hd = r.cfg.get("head_dim")  # no field of these classes: any value is ignored, as transformers does
        if hd is not None and (isinstance(hd, bool) or not isinstance(hd, int) or hd * h != d):
            r.notes.append(
                f"head_dim {_show(r.cfg['head_dim'])} ignored: {r.model} always uses hidden_size // "
                f"num_attention_heads = {d // h}"
            )
        return None
    if r.given("head_dim"):
        return r.size("head_dim")
    if "head_dim" in r.cfg and r.mt in _DEC_HEAD_DIM_PLAIN:
        raise ConfigError(
            f"head_dim must be a positive integer, not null ({r.model}'s attention reads it with getattr "
            "and has no fallback for null)"
        )
    if d % h:
        r.notes.append(
            f"head_dim not given: {r.model} uses hidden_size // num_attention_heads = {d // h} "
            f"(rounded down: the query map is {d} x {h * (d // h)})"
        )
        return d // h
    return None


def _dec_window_all(r: _Reader) -> int | None:
    """``sliding_window`` on every layer (Phi3Config, Starcoder2Config: null, the default,
    means none): the Spec's window ``w`` (FLOPs and KV cache, no parameters)."""
    k, w = r._lookup("sliding_window")
    if k is None:
        return None
    w = window_size(r, "sliding_window", w)
    if w is None:
        return None
    r.notes.append(f"sliding_window {w}: every layer attends to the last {w} positions (FLOPs and KV cache)")
    return w


def _dec_layer_pattern(r: _Reader, n_layers: int) -> tuple[int, int] | None:
    """(w, N_w): the window and how many layers use it (Gemma2Config, Gemma3TextConfig), or None.

    ``layer_types`` (a list of "sliding_attention" / "full_attention", one per layer) or, when
    null, the class rule: gemma2 alternates (layer i slides iff i + 1 is odd), gemma3_text
    slides unless (i + 1) is a multiple of ``sliding_window_pattern`` (a kwarg, default 6:
    5 sliding layers in 6).  A null ``sliding_window`` means no window on any layer.
    ``use_bidirectional_attention`` (every layer attends both ways; Gemma-3 also halves the
    window) is refused: symtrans counts these as causal decoders.

    Raises:
        ConfigError: a malformed key, or use_bidirectional_attention true.
    """
    bidi = r.cfg.get("use_bidirectional_attention")
    if bidi is not None and not isinstance(bidi, bool):
        raise ConfigError(f"use_bidirectional_attention must be true, false or null, not {_show(bidi)}")
    if bidi:
        raise ConfigError(
            f"use_bidirectional_attention is true: {r.model} then attends both ways on every layer, which "
            "symtrans does not model for a decoder (its FLOPs, KV cache and window differ)"
        )
    k, w = r._lookup("sliding_window")
    if k is None:
        w = r.defaults["sliding_window"]
    types = r.cfg.get("layer_types")
    if types is None:
        if r.mt == "gemma2":
            types = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n_layers)]
        else:
            pattern = r.cfg.get("sliding_window_pattern", 6)
            if isinstance(pattern, bool) or not isinstance(pattern, int) or pattern <= 0:
                raise ConfigError(f"sliding_window_pattern must be a positive integer, not {_show(pattern)}")
            types = ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(n_layers)]
    elif not isinstance(types, list) or any(t not in ("full_attention", "sliding_attention") for t in types):
        raise ConfigError('layer_types must be a list of "full_attention" and "sliding_attention"')
    elif len(types) != n_layers:
        raise ConfigError(f"layer_types has {len(types)} entries for num_hidden_layers {n_layers}")
    w = window_size(r, "sliding_window", w)
    if w is None:
        return None
    n_w = sum(t == "sliding_attention" for t in types)
    if n_w == 0:
        return None
    r.notes.append(
        f"sliding_window {w} on {n_w} of the {n_layers} layers (layer_types), the others attend to every "
        "position: FLOPs and KV cache"
    )
    return w, n_w


def _dec_phi3_rope(r: _Reader, d: int, h: int) -> None:
    """Phi3Config.validate_rope: rope_type default or longrope ("su" and "yarn" are read as
    longrope), and short_factor / long_factor lists of (d // h * partial_rotary_factor) // 2
    numbers.  Rotary settings change no parameter; a config transformers refuses is refused."""
    rope = r.cfg.get("rope_parameters")
    if rope is None:
        rope = r.cfg.get("rope_scaling")
    if rope is None:
        return
    if not isinstance(rope, dict):
        raise ConfigError(f"rope_parameters must be an object, not {_show(rope)}")
    kind = rope.get("rope_type", rope.get("type", "default"))
    if kind in ("su", "yarn"):
        kind = "longrope"
    if kind not in ("default", "longrope"):
        raise ConfigError(f"rope_parameters rope_type must be default or longrope for Phi3Config, not {_show(kind)}")
    factor = rope.get("partial_rotary_factor", r.cfg.get("partial_rotary_factor", 1.0))
    if isinstance(factor, bool) or not isinstance(factor, (int, float)):
        raise ConfigError(f"partial_rotary_factor must be a number, not {_show(factor)}")
    half = int(d // h * factor) // 2
    for key in ("short_factor", "long_factor"):
        v = rope.get(key)
        if v is None:
            continue
        if not isinstance(v, list) or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in v):
            raise ConfigError(f"rope_parameters {key} must be a list of numbers")
        if len(v) != half:
            raise ConfigError(
                f"rope_parameters {key} has {len(v)} numbers; Phi3Config requires "
                f"(hidden_size // num_attention_heads * partial_rotary_factor) // 2 = {half}"
            )


def _dec_falcon(r: _Reader, d: int, h: int, opts: dict[str, Any]) -> int:
    """FalconForCausalLM's attention and layer layout; returns h_kv.

    query_key_value: new_decoder_architecture: (2 num_kv_heads + h) d_k (num_kv_heads
    null -> h); else multi_query: d + 2 d_k (one K/V head); else 3 d.  Norms: not
    parallel_attn: input and post-attention LayerNorms; parallel: ln_attn and ln_mlp when
    num_ln_in_parallel_attn is 2 (null becomes 2 with the new architecture, in
    FalconDecoderLayer) else one input_layernorm shared by both branches.  The new
    architecture always adds attention and MLP in parallel.
    """
    new = r.flag("new_decoder_architecture")
    mq = r.flag("multi_query")
    par = r.flag("parallel_attn")
    n_ln = r.cfg.get("num_ln_in_parallel_attn")
    if n_ln is not None and (isinstance(n_ln, bool) or not isinstance(n_ln, int)):
        raise ConfigError(f"num_ln_in_parallel_attn must be an integer or null, not {_show(n_ln)}")
    if n_ln is None and new:
        n_ln = 2
    if new:
        h_kv = r.size("num_kv_heads", h, f"num_attention_heads = {h}", nullable=True)
        if h_kv > h or h % h_kv:
            raise ConfigError(
                f"num_kv_heads ({h_kv}) does not divide num_attention_heads ({h}): FalconAttention splits the "
                "fused query_key_value into num_attention_heads // num_kv_heads query heads per K/V head"
            )
    else:
        h_kv = 1 if mq else h
    opts.update(norm="layernorm", bias=r.flag("bias"), ffn="mlp")
    opts["positional"] = "alibi" if r.flag("alibi") else "rotary"
    if par or new:
        opts.update(parallel_block=True, layer_norms="sublayer" if (not par or n_ln == 2) else "shared")
    return h_kv


def _decoder(r: _Reader) -> Spec:
    """The decoder types of transformers 5.24 that differ from Llama in norms, blocks, biases
    or attention pattern (each modeling file's shapes, checked on the meta device):

    * granite: LlamaForCausalLM's shapes (``attention_bias`` on q, k, v, o; ``mlp_bias`` on
      the three GLU maps); its multipliers are constants.
    * phi3: fused ``qkv_proj`` (d x (h + 2 h_kv) d_k) and ``gate_up_proj`` (d x 2 d_ff), the
      same parameters and FLOPs as separate maps; no biases.
    * starcoder2: ``use_bias`` on q, k, v, o and the two-map MLP; LayerNorm with β.
    * gemma2: four RMSNorms per layer (before and after attention and FFN: ``sandwich``),
      GeGLU, ``head_dim`` a field; sliding window on the layers ``layer_types`` marks.
    * gemma3_text: gemma2 plus q_norm, k_norm RMSNorm(head_dim) (``qk_norm=head``).
    * olmo: OlmoLayerNorm has no weights (norm none, final norm included).
    * olmo2: RMSNorms after attention and FFN (post-norm), q_norm RMSNorm(h d_k) and
      k_norm RMSNorm(h_kv d_k) (``qk_norm=full``).
    * cohere: parallel block, one weight-only LayerNorm; ``use_qk_norm``: weight-only
      LayerNorms of shape (heads, d_k) (``per_head``).
    * stablelm: LayerNorm with β; q, k, v biased by ``use_qkv_bias``, o never;
      ``use_parallel_residual``: one norm, parallel block; ``qk_layernorm``: a β-free
      LayerNorm(d_k) per head.
    * phi: parallel block with one LayerNorm; every Linear biased, the LM head too;
      ``qk_layernorm``: LayerNorm(d_k) with β for queries and keys (``head``).
    * gpt_neox: fused query_key_value (d x 3d) and dense biased by ``attention_bias``, MLP
      always biased, two LayerNorms per layer also when ``use_parallel_residual``.
    * gptj: parallel block with one LayerNorm (ln_1); q, k, v, out without bias; MLP biased
      (n_inner null -> 4d); the LM head has a bias.
    * falcon: see ``_dec_falcon``.
    """
    mt = r.mt
    gptj = mt == "gptj"
    if mt == "falcon" and r.cfg.get("n_embed") is not None:
        d = check_size("n_embed", r.cfg["n_embed"])
        r.notes.append(f"n_embed {d} read as hidden_size (FalconConfig's legacy name, which wins)")
    else:
        d = r.size("n_embd" if gptj else "hidden_size")
    h = r.size("n_head" if gptj else "num_attention_heads")
    if mt in _DEC_DIVIDES:  # Gemma2/3 configs check it; the others' attention raises
        _check_divides("hidden_size", d, "num_attention_heads", h, r.cls if mt.startswith("gemma") else r.model)
    if gptj:
        d_ff = r.size("n_inner", 4 * d, f"4 * n_embd = {4 * d}", nullable=True)
        if "rotary_dim" in r.cfg:  # a strict int field (rotary positions held in a buffer: no weights)
            check_size("rotary_dim", r.cfg["rotary_dim"], zero_ok=True)
    elif mt == "falcon":
        d_ff = r.size("ffn_hidden_size", 4 * d, f"4 * hidden_size = {4 * d}", nullable=True)
    else:
        d_ff = r.size("intermediate_size")
    sizes = dict(
        d_model=d,
        d_ff=d_ff,
        h=h,
        N=r.size("n_layer" if gptj else "num_hidden_layers"),
        V=r.size("vocab_size"),
        L_max=r.size("n_positions" if gptj else "max_position_embeddings"),
    )
    opts: dict[str, Any] = dict(
        norm="rmsnorm", bias=False, ffn="swiglu", positional="rotary", final_norm=True, norm_position="pre"
    )
    if mt == "falcon":
        h_kv = _dec_falcon(r, d, h, opts)
    elif mt in ("gpt_neox", "gptj"):
        h_kv = h
    else:
        h_kv = _dec_heads(r, h)
    if h_kv != h:
        sizes["h_kv"] = h_kv
    d_k = _dec_head_dim(r, d, h)
    if d_k is not None:
        sizes["d_k"] = d_k
    if mt == "granite":
        if r.flag("attention_bias"):
            opts["attention_bias"] = True
        if r.flag("mlp_bias"):
            opts["ffn_bias"] = True
    elif mt == "phi3":
        _dec_phi3_rope(r, d, h)
        r.notes.append(
            "Phi3Attention's fused qkv_proj and Phi3MLP's fused gate_up_proj are counted as their parts "
            "(the same parameters and FLOPs)"
        )
    elif mt == "starcoder2":
        opts.update(norm="layernorm", bias=r.flag("use_bias"), ffn="mlp")
    elif mt in ("gemma2", "gemma3_text"):
        opts.update(ffn="geglu", layer_norms="sandwich", attention_bias=r.flag("attention_bias"))
        if mt == "gemma3_text":
            opts["qk_norm"] = "head"
    elif mt == "olmo":
        opts.update(norm="none", attention_bias=r.flag("attention_bias"))
        r.notes.append("OlmoLayerNorm has no weights: the layer and final norms add no parameters")
    elif mt == "olmo2":
        opts.update(norm_position="post", qk_norm="full", attention_bias=r.flag("attention_bias"))
    elif mt == "cohere":
        opts.update(
            norm="layernorm",
            norm_bias=False,
            parallel_block=True,
            layer_norms="shared",
            attention_bias=r.flag("attention_bias"),
        )
        if r.flag("use_qk_norm"):
            opts["qk_norm"] = "per_head"
    elif mt == "stablelm":
        opts.update(norm="layernorm", qkv_bias=r.flag("use_qkv_bias"), out_bias=False)
        if r.flag("use_parallel_residual"):
            opts.update(parallel_block=True, layer_norms="shared")
        if r.flag("qk_layernorm"):
            opts.update(qk_norm="per_head", qk_norm_bias=False)
    elif mt == "phi":
        opts.update(norm="layernorm", bias=True, ffn="mlp", parallel_block=True, layer_norms="shared", head_bias=True)
        if r.flag("qk_layernorm"):
            opts["qk_norm"] = "head"
            if d_k is not None and d_k != d // h:
                raise ConfigError(
                    f"qk_layernorm with head_dim {d_k} unlike hidden_size // num_attention_heads = {d // h}: "
                    "PhiAttention builds its q/k LayerNorms at d // h, which its forward cannot apply"
                )
    elif mt == "gpt_neox":
        opts.update(norm="layernorm", attention_bias=r.flag("attention_bias"), ffn_bias=True, ffn="mlp")
        if r.flag("use_parallel_residual"):
            opts["parallel_block"] = True
    elif gptj:
        opts.update(
            norm="layernorm",
            attention_bias=False,
            ffn_bias=True,
            ffn="mlp",
            parallel_block=True,
            layer_norms="shared",
            head_bias=True,
        )
    if mt in ("phi3", "starcoder2"):
        w = _dec_window_all(r)
        if w is not None:
            sizes["w"] = w
    if mt in ("gemma2", "gemma3_text"):
        pattern = _dec_layer_pattern(r, sizes["N"])
        if pattern is not None:
            sizes["w"] = pattern[0]
            if pattern[1] != sizes["N"]:
                sizes["N_w"] = pattern[1]
    if opts.get("head_bias"):
        r.notes.append(f"{r.model}'s lm_head has a bias of V = {sizes['V']} entries (never tied)")
    return Spec(family="decoder-only", sizes=sizes, tie_output=r.flag("tie_word_embeddings"), **opts)


# --------------------------------------------------------------------------- types-moe


def _int_list(r: _Reader, key: str) -> list[int] | None:
    """A JSON list of integers (layer indices), or None when missing or null."""
    v = r.cfg.get(key)
    if v is None:
        return None
    if not isinstance(v, list) or any(isinstance(x, bool) or not isinstance(x, int) for x in v):
        raise ConfigError(f"{key} must be a list of integers (layer indices) or null, not {_show(v)}")
    return v


def _layer_types(r: _Reader, n_layers: int) -> list[str] | None:
    """``layer_types`` as given (None when missing or null), checked as PreTrainedConfig does:
    entries from ALLOWED_ATTN_LAYER_TYPES, one per layer."""
    types = r.cfg.get("layer_types")
    if types is None:
        return None
    if not isinstance(types, list) or any(t not in _ATTN_LAYER_TYPES for t in types):
        raise ConfigError(f"layer_types must be a list of {', '.join(_ATTN_LAYER_TYPES)}")
    if len(types) != n_layers:
        raise ConfigError(f"layer_types has {len(types)} entries for num_hidden_layers {n_layers}")
    return types


# transformers 5.x configuration_utils.ALLOWED_ATTN_LAYER_TYPES
_ATTN_LAYER_TYPES = (
    "full_attention",
    "sliding_attention",
    "chunked_attention",
    "window_attention",
    "indexed_attention",
    "compressed_sparse_attention",
    "heavily_compressed_attention",
    "minimax_m3_sparse",
    "conv",
    "moe",
    "hybrid",
    "hybrid_sliding",
    "reference_sliding_attention",
    "linear_attention",
)


def _moe_pattern(r: _Reader, n: int) -> tuple[int | None, str]:
    """(the window w every layer uses or None, the Spec's attention_pattern) of a MoE type.

    Qwen2MoeConfig: ``sliding_window`` only with ``use_sliding_window`` (else 0), on the
    layers ``layer_types`` marks sliding (default: even layers below ``max_window_layers``).
    Qwen3MoeConfig: ``sliding_window`` on every layer with ``use_sliding_window``.
    GptOssConfig: ``sliding_window`` (128) on the ``layer_types`` sliding layers (default: the
    even layers).  Llama4TextConfig: ``attention_chunk_size`` on the ``layer_types`` chunked
    layers (default: every layer with rotary positions, ``no_rope_layers``).  One window on
    every layer, or none, is the Spec's ``w``; any other mix is ``per-layer`` (parameters
    exact, FLOPs/KV cache/time refused), noted here with the key that makes it."""
    mt = r.mt
    window_key = "attention_chunk_size" if mt == "llama4_text" else "sliding_window"
    k, w = r._lookup(window_key)
    if k is None:  # Qwen2/3MoeConfig: 4096, used only with use_sliding_window (the instance nulls it)
        w = _QWEN_WINDOW_DEFAULT if mt in ("qwen2_moe", "qwen3_moe") else r.defaults[window_key]
    else:
        w = window_size(r, window_key, w)
    use = True
    if mt in ("qwen2_moe", "qwen3_moe"):
        use = r.flag("use_sliding_window", note=False)
        if not use:
            w = None
    if mt == "qwen3_moe":
        return (w, "uniform") if w is None else _note_window(r, w, n, n)
    types = _layer_types(r, n)
    if mt == "qwen2_moe" and types is None:
        first = r.cfg.get("max_window_layers", 28)
        if isinstance(first, bool) or not isinstance(first, int):
            raise ConfigError(f"max_window_layers must be an integer, not {_show(first)}")
        types = ["sliding_attention" if (i + 1) % 2 and i < first and use else "full_attention" for i in range(n)]
    elif mt == "gpt_oss" and types is None:
        types = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n)]
    elif mt == "llama4_text" and types is None:
        rope = r.cfg.get("no_rope_layers")
        if rope is not None and (
            not isinstance(rope, list) or any(isinstance(x, bool) or not isinstance(x, int) for x in rope)
        ):
            raise ConfigError(
                f"no_rope_layers must be a list of integers (1: the layer uses rotary positions) or null, not {_show(rope)}"
            )
        interval = r.cfg.get("no_rope_layer_interval", 4)
        if isinstance(interval, bool) or not isinstance(interval, int) or interval == 0:
            raise ConfigError(f"no_rope_layer_interval must be a non-zero integer, not {_show(interval)}")
        rope = rope or [int((i + 1) % interval != 0) for i in range(n)]
        types = ["chunked_attention" if x and w is not None else "full_attention" for x in rope]
    if mt == "llama4_text":
        chunked = sum(t == "chunked_attention" for t in types) if w is not None else 0
        others = sum(t not in ("full_attention", "chunked_attention") for t in types)
        if chunked == 0 and others == 0:
            return None, "uniform"
        r.notes.append(
            f"layer_types makes {chunked} of {n} layers attend in chunks of attention_chunk_size {w}: "
            "chunked attention is not modelled yet, so FLOPs, KV cache and time are refused (parameters are exact)"
        )
        return None, "per-layer"
    sliding = sum(t == "sliding_attention" for t in types)
    others = sum(t not in ("full_attention", "sliding_attention") for t in types)
    if others:
        r.notes.append(
            "layer_types holds attention kinds other than full and sliding: FLOPs, KV cache and time are refused "
            "(parameters are exact)"
        )
        return None, "per-layer"
    if sliding == 0 or w is None:
        return None, "uniform"
    if mt == "qwen2_moe" and w == 0:  # use_sliding_window false: Qwen2MoeConfig sets sliding_window to 0
        w = None
    if w is None:
        r.notes.append(
            "layer_types marks sliding layers but use_sliding_window is false (sliding_window 0): FLOPs, KV cache "
            "and time are refused (parameters are exact)"
        )
        return None, "per-layer"
    return _note_window(r, w, sliding, n)


def _note_window(r: _Reader, w: int, sliding: int, n: int) -> tuple[int | None, str]:
    """The window on ``sliding`` of ``n`` layers: all of them (``w``), or some (``w`` and the
    per-layer window count ``N_w``, read by ``_moe_decoder``: Spec's per-layer windows)."""
    if sliding == n:
        r.notes.append(
            f"sliding_window {w} on every layer: every layer attends to the last {w} positions (FLOPs and KV cache)"
        )
        return w, "uniform"
    r.notes.append(
        f"layer_types makes {sliding} of {n} layers sliding-window ({w}) and the rest full (N_w = {sliding})"
    )
    return w, f"N_w={sliding}"


def _moe_layout(
    r: _Reader, sizes: dict[str, int], opts: dict[str, Any], n_moe: int, E: int, k: int, dense_ff: int, expert_ff: int
) -> None:
    """Put the experts into ``sizes``/``opts``: E, k, and the layout of n_moe MoE layers among N.

    No MoE layer: a dense model (d_ff = dense_ff).  Every layer a MoE layer: d_ff is the
    expert width (the dense width is unused).  Otherwise d_ff is the dense width, d_ff_e
    the expert width when it differs, and N_moe the number of MoE layers."""
    n = sizes["N"]
    if n_moe == 0:
        sizes["d_ff"] = dense_ff
        r.notes.append(f"no layer is a mixture-of-experts layer: {r.model} is counted as a dense model")
        return
    if k > E:
        raise ConfigError(f"num_experts_per_tok ({k}) exceeds the {E} experts")
    sizes.update(E=E, k=k)
    if n_moe == n:
        sizes["d_ff"] = expert_ff
        return
    sizes["d_ff"] = dense_ff
    if expert_ff != dense_ff:
        sizes["d_ff_e"] = expert_ff
    sizes["N_moe"] = n_moe
    r.notes.append(
        f"{n_moe} of {n} layers are mixture-of-experts layers, the other {n - n_moe} dense (width {dense_ff})"
    )


def _moe_decoder(r: _Reader) -> Spec:
    """Qwen2-MoE, Qwen3-MoE, gpt-oss and Llama 4 (text): Llama-shaped attention, MoE layers.

    Formulas: arch-notes §2.C, checked against transformers 5.x on the meta device by
    tests/test_model_types.py.  Qwen2-MoE: q/k/v biases (``qkv_bias``), a shared expert of
    ``shared_expert_intermediate_size`` with its sigmoid gate; Qwen3-MoE: QK-norm of width
    head_dim; gpt-oss: biased router and experts, attention sinks; Llama 4: a shared expert of
    the expert width, dense layers of ``intermediate_size_mlp``, an L2 QK-norm (no weights).
    MoE layers: Qwen ``(i + 1) % decoder_sparse_step == 0`` and i not in ``mlp_only_layers``;
    Llama 4 ``moe_layers`` (default every ``interleave_moe_layer_step``-th); gpt-oss all.
    """
    mt = r.mt
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    n = r.size("num_hidden_layers")
    h_kv = _heads(r, h)
    sizes: dict[str, int] = dict(d_model=d, h=h, N=n, V=r.size("vocab_size"), L_max=r.size("max_position_embeddings"))
    if h_kv != h:
        sizes["h_kv"] = h_kv
    if mt in ("gpt_oss", "llama4_text") and r._lookup("head_dim")[0] is None:  # the class default (64, 128)
        hd = r.size("head_dim")
    elif mt in ("gpt_oss", "llama4_text"):  # a head_dim field: null -> hidden_size // heads
        hd = r.size("head_dim", d // h, f"hidden_size // num_attention_heads = {d // h}", nullable=True)
    elif r.given("head_dim"):  # Qwen2MoeAttention / Qwen3MoeAttention read it with getattr
        hd = r.size("head_dim")
    elif "head_dim" in r.cfg:
        raise ConfigError(
            f"head_dim must be a positive integer, not null ({r.model}'s attention reads it when present)"
        )
    else:
        hd = d // h
        if d % h:
            r.notes.append(f"head_dim not given: hidden_size // num_attention_heads = {hd} (rounded down)")
    if hd == 0:
        raise ConfigError(
            f"num_attention_heads ({h}) exceeds hidden_size ({d}): the heads would be 0 wide; give head_dim"
        )
    if hd * h != d or "head_dim" in r.cfg:
        sizes["d_k"] = hd
    if mt in ("gpt_oss", "llama4_text") or "head_dim" in r.cfg:  # validate_rope reads config.head_dim
        _check_rotary_head(r, "head_dim", hd)
    opts: dict[str, Any] = {}
    if mt == "qwen2_moe":
        if r.flag("qkv_bias"):
            opts["qkv_bias"] = True
            r.notes.append("Qwen2MoeAttention: q_proj, k_proj and v_proj have biases (qkv_bias), o_proj has none")
    elif r.flag("attention_bias"):
        opts["attention_bias"] = True
    if mt == "qwen3_moe":
        opts["qk_norm"] = True
    if mt == "llama4_text" and r.flag("use_qk_norm", True, note=False):
        r.notes.append("use_qk_norm: Llama 4's QK norm is an L2 norm without weights (no parameters)")
    # experts and their layers
    if mt in ("qwen2_moe", "qwen3_moe"):
        E = r.size("num_experts", zero_ok=True)
        k = r.size("num_experts_per_tok")
        step = r.size("decoder_sparse_step")
        dense_only = set(_int_list(r, "mlp_only_layers") or [])
        # every step-th layer, less the dense-only ones among them (no loop over the layers)
        n_moe = len(range(step - 1, n, step)) - sum(1 for i in dense_only if 0 <= i < n and (i + 1) % step == 0)
        n_moe = n_moe if E > 0 else 0
        dense_ff, expert_ff = r.size("intermediate_size"), r.size("moe_intermediate_size")
    elif mt == "gpt_oss":
        E, k = r.size("num_local_experts"), r.size("num_experts_per_tok")
        n_moe = n
        dense_ff = expert_ff = r.size("intermediate_size")
    else:  # llama4_text
        E, k = r.size("num_local_experts"), r.size("num_experts_per_tok")
        layers = _int_list(r, "moe_layers")
        if layers is None:
            step = r.size("interleave_moe_layer_step")
            n_moe = len(range(step - 1, n, step))
        else:
            n_moe = len({i for i in layers if 0 <= i < n})
        dense_ff, expert_ff = r.size("intermediate_size_mlp"), r.size("intermediate_size")
    _moe_layout(r, sizes, opts, n_moe, E, k, dense_ff, expert_ff)
    if "E" in sizes:
        if mt == "qwen2_moe":
            shared = r.size("shared_expert_intermediate_size")
            opts.update(n_shared_experts=1, shared_expert_gate=True)
            if shared != sizes.get("d_ff_e", sizes["d_ff"]):  # the routed experts' width
                sizes["d_ff_s"] = shared
            r.notes.append(
                "Qwen2MoeSparseMoeBlock: one shared expert with a sigmoid gate (Linear d_model -> 1, no bias)"
            )
        elif mt == "llama4_text":
            opts["n_shared_experts"] = 1
            r.notes.append("Llama4TextMoe: one shared expert of the routed experts' width (intermediate_size)")
        elif mt == "gpt_oss":
            opts.update(router_bias=True, expert_bias=True)
            r.notes.append("GptOssMLP: the router and every expert's maps have biases")
    if mt == "gpt_oss":
        opts["sinks"] = True
        r.notes.append("GptOssAttention: attention sinks, one learned logit per head and layer (h parameters)")
    w, pattern = _moe_pattern(r, n)
    if w is not None:
        sizes["w"] = w
    if pattern.startswith("N_w=") and "N_moe" not in sizes:  # some layers windowed, the rest full (Spec's N_w)
        sizes["N_w"] = int(pattern[4:])
    elif pattern.startswith("N_w="):  # windows over a dense + MoE stack: not modelled (Spec refuses N_w there)
        sizes.pop("w", None)
        opts["attention_pattern"] = "per-layer"
    elif pattern != "uniform":
        opts["attention_pattern"] = pattern
    return Spec(
        family="decoder-only",
        sizes=sizes,
        positional="rotary",
        norm="rmsnorm",
        bias=False,
        ffn="swiglu",
        final_norm=True,
        norm_position="pre",
        tie_output=r.flag("tie_word_embeddings"),
        **opts,
    )


def _deepseek(r: _Reader) -> Spec:
    """DeepSeek-V2 and -V3: multi-head latent attention (``engine.mla``) and DeepSeekMoE.

    Layers i < ``first_k_dense_replace`` are dense (``intermediate_size``); the rest have a
    router E x d_model (V3's ``e_score_correction_bias`` is a buffer: not counted), E routed
    experts of ``moe_intermediate_size`` and one shared MLP of ``n_shared_experts`` x that
    width (counted as n_shared_experts experts of the routed width: the same parameters and
    FLOPs).  transformers 5.x does not build V3's multi-token-prediction layer
    (``num_nextn_predict_layers``): the published 671B includes it, this count does not."""
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    n = r.size("num_hidden_layers")
    if r.mt == "deepseek_v2" and d % h:  # DeepseekV2Config.validate_architecture
        raise ConfigError(
            f"num_attention_heads ({h}) does not divide hidden_size ({d}), which DeepseekV2Config requires"
        )
    if "num_key_value_heads" in r.cfg and r.cfg["num_key_value_heads"] is not None:
        check_size("num_key_value_heads", r.cfg["num_key_value_heads"])  # a strict int field; MLA ignores it
    if "head_dim" in r.cfg and r.cfg["head_dim"] is not None:
        check_size("head_dim", r.cfg["head_dim"])
    sizes: dict[str, int] = dict(
        d_model=d,
        h=h,
        N=n,
        V=r.size("vocab_size"),
        L_max=r.size("max_position_embeddings"),
        r_kv=r.size("kv_lora_rank"),
        d_nope=r.size("qk_nope_head_dim"),
        d_rope=r.size("qk_rope_head_dim"),
        d_v=r.size("v_head_dim"),
    )
    _check_rotary_head(r, "qk_rope_head_dim", sizes["d_rope"])  # post-init: head_dim = qk_rope_head_dim
    if r.given("q_lora_rank") or ("q_lora_rank" not in r.cfg and r.defaults["q_lora_rank"] is not None):
        sizes["r_q"] = r.size("q_lora_rank")
    else:
        r.notes.append("q_lora_rank is null: queries use one q_proj (d_model x h*(d_nope + d_rope)), no compression")
    opts: dict[str, Any] = {"mla": True}
    if r.flag("attention_bias"):
        opts["attention_bias"] = True
    if r.mt == "deepseek_v2" and r.flag("mlp_bias"):
        opts.update(ffn_bias=True, expert_bias=False)  # dense and shared MLPs; the stacked experts have none
    E = r.size("n_routed_experts")
    k_key, k = r._lookup("num_experts_per_tok")
    if k_key is None:
        k = r.defaults["num_experts_per_tok"]
    if k is None:
        raise ConfigError(
            f"num_experts_per_tok is null ({r.cls}'s default): {r.model}'s router cannot pick experts "
            "(torch.topk needs k); give num_experts_per_tok"
        )
    k = check_size("num_experts_per_tok", k)
    first = r.size("first_k_dense_replace", zero_ok=True)
    _moe_layout(r, sizes, opts, max(n - first, 0), E, k, r.size("intermediate_size"), r.size("moe_intermediate_size"))
    if "E" in sizes:
        shared = r.size("n_shared_experts", zero_ok=True)
        if not shared and opts.get("ffn_bias"):
            raise ConfigError(
                "n_shared_experts is 0 with mlp_bias true: DeepseekV2MLP still builds a zero-width shared MLP "
                "whose down_proj keeps a d_model bias, which symtrans does not model"
            )
        if shared:  # one MLP of width n_shared_experts x moe_intermediate_size (one down_proj bias, if any)
            opts["n_shared_experts"] = 1
            width = shared * sizes.get("d_ff_e", sizes["d_ff"])
            if width != sizes.get("d_ff_e", sizes["d_ff"]):
                sizes["d_ff_s"] = width
            r.notes.append(
                f"shared_experts: one MLP of n_shared_experts x moe_intermediate_size = {shared} x "
                f"{sizes.get('d_ff_e', sizes['d_ff'])} = {width} wide, always active"
            )
    if r.mt == "deepseek_v3":
        r.notes.append(
            "DeepSeek-V3's multi-token-prediction layer (num_nextn_predict_layers) is in its checkpoints but "
            "not built by transformers 5.x: not counted (the published 671B includes it); the router's "
            "e_score_correction_bias is a buffer, not a parameter"
        )
    r.notes.append("multi-head latent attention: the KV cache holds r_kv + d_rope elements per token and layer")
    return Spec(
        family="decoder-only",
        sizes=sizes,
        positional="rotary",
        norm="rmsnorm",
        bias=False,
        ffn="swiglu",
        final_norm=True,
        norm_position="pre",
        tie_output=r.flag("tie_word_embeddings"),
        **opts,
    )


# --- encoders (types-enc)


def _absolute_positions_only(r: _Reader) -> None:
    """BERT-style 5.x models ignore position_embedding_type (4.x's relative_key variants)."""
    pet = r.cfg.get("position_embedding_type", "absolute")
    if pet != "absolute":
        if not isinstance(pet, str):
            raise ConfigError(f"position_embedding_type must be a string, not {_show(pet)}")
        r.notes.append(
            f"key position_embedding_type is {_show(pet)}, but {r.model} (transformers 5.x) ignores it: "
            "counted with absolute positions"
        )


def _distilbert(r: _Reader) -> Spec:
    """DistilBertModel (Sanh et al. 2019): BERT layers (q_lin, k_lin, v_lin, out_lin, lin1, lin2,
    all biased; sa_layer_norm and output_layer_norm after each sublayer), word and position
    embeddings with a LayerNorm; no token types, no pooler."""
    d = r.size("dim")
    h = r.size("n_heads")
    _check_divides("dim", d, "n_heads", h, "DistilBERT's MultiHeadSelfAttention")
    r.head_dim_must_match("dim", d, "n_heads", h)
    if r.flag("sinusoidal_pos_embds", note=False):
        r.notes.append(
            "sinusoidal_pos_embds is true: the max_position_embeddings x dim position table holds fixed "
            "sinusoids (requires_grad=False) but is still a parameter of DistilBertModel: counted"
        )
    r.notes.append(f"{r.model} has no pooler and no token-type embedding; no task head is counted")
    return Spec(
        family="encoder-only",
        sizes=dict(
            d_model=d,
            d_ff=r.size("hidden_dim"),
            h=h,
            N=r.size("n_layers"),
            V=r.size("vocab_size"),
            L_max=r.size("max_position_embeddings"),
        ),
        positional="learned",
        embedding_norm=True,
        norm="layernorm",
        bias=True,
        norm_position="post",
    )


def _electra(r: _Reader) -> Spec:
    """ElectraModel (Clark et al. 2020): embeddings embedding_size (E) wide with a LayerNorm of
    width E, then embeddings_project E -> hidden_size with bias when E != hidden_size; BERT
    layers; no pooler."""
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    if d % h:  # ElectraSelfAttention skips its check because ElectraConfig has embedding_size
        raise ConfigError(
            f"num_attention_heads ({h}) does not divide hidden_size ({d}): ElectraSelfAttention floors the "
            f"head width for Q, K, V ({h} x {d // h}) but keeps a {d} x {d} output map (its forward fails); "
            "symtrans does not model it"
        )
    r.head_dim_must_match("hidden_size", d, "num_attention_heads", h)
    if r.flag("add_cross_attention", note=False):
        raise ConfigError(
            f"add_cross_attention is true: cross-attention layers in {r.model} are not modelled by symtrans"
        )
    _absolute_positions_only(r)
    E = r.size("embedding_size")
    sizes = dict(
        d_model=d,
        d_ff=r.size("intermediate_size"),
        h=h,
        N=r.size("num_hidden_layers"),
        V=r.size("vocab_size"),
        L_max=r.size("max_position_embeddings"),
    )
    if E != d:
        sizes["E_emb"] = E
        r.notes.append(
            f"embedding_size {E} != hidden_size {d}: the embeddings are {E} wide and ElectraModel's "
            f"embeddings_project ({E} -> {d}, with bias) maps them to the layers"
        )
    r.notes.append(f"{r.model} has no pooler; no task head is counted")
    return Spec(
        family="encoder-only",
        sizes=sizes,
        positional="learned",
        token_types=r.size("type_vocab_size", zero_ok=True),
        embedding_norm=True,
        norm="layernorm",
        bias=True,
        norm_position="post",
    )


# Keys DebertaV2Model reads with getattr (not DebertaV2Config fields) and their defaults there.
_DEBERTA_GETATTR = {
    "position_buckets": -1,
    "norm_rel_ebd": "none",
    "share_att_key": False,
    "conv_kernel_size": 0,
    "conv_groups": 1,
}


def _getattr_int(r: _Reader, key: str) -> int:
    """An integer read with getattr (any sign: only its comparison with 0 matters)."""
    v = r.cfg.get(key, _DEBERTA_GETATTR[key])
    if isinstance(v, bool) or not isinstance(v, int) or isinstance(v, _Huge):
        raise ConfigError(f"{key} must be an integer, not {_show(v)}")
    return v


def _pos_att_type(r: _Reader) -> list[str]:
    """DebertaV2Config.pos_att_type: a string is lower-cased and split on "|"
    (``__post_init__``); a list is used as given; null means none."""
    v = r.cfg.get("pos_att_type")
    if v is None:
        return []
    if isinstance(v, str):
        return [x.strip() for x in v.lower().split("|")]
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return list(v)
    raise ConfigError(f'pos_att_type must be a string such as "p2c|c2p", a list of strings or null, not {_show(v)}')


def _deberta_v2(r: _Reader) -> Spec:
    """DebertaV2Model (He et al. 2021, 2023): see ``symtrans.engine.disentangled``."""
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    _check_divides("hidden_size", d, "num_attention_heads", h, "DisentangledSelfAttention")
    r.head_dim_must_match("hidden_size", d, "num_attention_heads", h)
    if "attention_head_size" in r.cfg:
        a = check_size("attention_head_size", r.cfg["attention_head_size"])
        if a != d // h:
            raise ConfigError(
                f"attention_head_size ({a}) differs from hidden_size / num_attention_heads ({d // h}): "
                f"the attention maps become {d} x {h * a} but the output map stays {d} x {d} (the forward "
                "fails); symtrans does not model it"
            )
    E = check_size("embedding_size", r.cfg["embedding_size"]) if "embedding_size" in r.cfg else d
    sizes = dict(
        d_model=d,
        d_ff=r.size("intermediate_size"),
        h=h,
        N=r.size("num_hidden_layers"),
        V=r.size("vocab_size"),
    )
    opts: dict[str, Any] = {}
    if E != d:
        sizes["E_emb"] = E
        opts["embedding_projection"] = "deberta"
        r.notes.append(
            f"embedding_size {E} != hidden_size {d}: embeddings {E} wide, then embed_proj {E} -> {d} "
            "(no bias) and the LayerNorm at hidden_size"
        )
    P = r.size("max_position_embeddings")
    if r.flag("position_biased_input"):
        sizes["L_max"] = P
        opts["positional"] = "learned"
    else:
        opts["positional"] = "none"
        r.notes.append("position_biased_input is false: no absolute position table")
    if r.flag("relative_attention"):
        buckets = _getattr_int(r, "position_buckets")
        k, span = r._lookup("max_relative_positions")
        if k is None:
            span = r.defaults["max_relative_positions"]
        elif isinstance(span, bool) or not isinstance(span, int) or isinstance(span, _Huge):
            raise ConfigError(f"max_relative_positions must be an integer, not {_show(span)}")
        span = span if span >= 1 else P
        sizes["L_rel"] = check_size(
            "position_buckets" if buckets > 0 else "max_relative_positions", buckets if buckets > 0 else span
        )
        terms = _pos_att_type(r)
        used = [t for t in ("c2p", "p2c") if t in terms]
        opts["disentangled"] = "|".join(used) if used else "none"
        unused = [t for t in terms if t not in ("c2p", "p2c")]
        if unused:
            r.notes.append(f"pos_att_type entries {', '.join(map(_show, unused))}: DebertaV2 uses only c2p and p2c")
        share = r.cfg.get("share_att_key", False)
        if not isinstance(share, bool):
            raise ConfigError(f"share_att_key must be true or false, not {_show(share)}")
        opts["share_att_key"] = share
        r.notes.append(
            f"relative attention: a {2 * sizes['L_rel']} x {d} relative position table "
            f"({'position_buckets' if buckets > 0 else 'max_relative_positions'} = {sizes['L_rel']}), "
            f"pos_att_type {opts['disentangled']}"
            + (", share_att_key (the content W_Q, W_K project the table)" if share else "")
        )
    rel_norm = r.cfg.get("norm_rel_ebd", "none")
    if not isinstance(rel_norm, str):
        raise ConfigError(f'norm_rel_ebd must be a string such as "layer_norm" or "none", not {_show(rel_norm)}')
    if "layer_norm" in [x.strip() for x in rel_norm.lower().split("|")]:
        opts["rel_norm"] = True
        if "L_rel" not in sizes:
            r.notes.append(
                "norm_rel_ebd layer_norm without relative_attention: DebertaV2Encoder creates the norm anyway"
            )
    kernel = _getattr_int(r, "conv_kernel_size")
    if kernel > 0:
        groups = _getattr_int(r, "conv_groups")
        if groups < 1 or d % groups:
            raise ConfigError(f"conv_groups ({groups}) must be a positive divisor of hidden_size ({d}) (torch Conv1d)")
        if kernel % 2 == 0:
            raise ConfigError(
                f"conv_kernel_size ({kernel}) is even: ConvLayer's output is one position short and its forward "
                "fails; symtrans counts odd kernels only"
            )
        opts.update(conv_kernel=kernel, conv_groups=groups)
        r.notes.append(f"conv_kernel_size {kernel}: a ConvLayer (Conv1d + LayerNorm) after the first layer")
    r.notes.append(f"{r.model} has no pooler (the ContextPooler belongs to the task heads); no task head is counted")
    return Spec(
        family="encoder-only",
        sizes=sizes,
        token_types=r.size("type_vocab_size", zero_ok=True),
        embedding_norm=True,
        norm="layernorm",
        bias=True,
        norm_position="post",
        **opts,
    )


# --- gpt2-like (learned positions / ALiBi) and multimodal wrappers


@dataclass(frozen=True)
class Wrapper:
    """A multimodal wrapper whose config nests a language model's config in ``text_config``.

    Attributes:
        text_type: the text model_type when text_config gives none (the config class's default).
        text_types: the text model_types symtrans reads for it.
        tie_or: True when the wrapper ties if its own tie_word_embeddings **or** the text
            config's is true (LlavaConfig, Qwen2VLConfig forward a true text value); False when
            the wrapper's value alone decides (Gemma3Config).
        flat: the wrapper also takes the text keys at its top level (Qwen2VLConfig.__post_init__
            moves them into text_config when there is none, as Hub checkpoints are saved).
        language_model: the language model, in transformers' module names.
        vision: the image side (vision tower and projector), counted beside it
            (``catalog/models/vision.py``, ``engine/vision.py``).
        text_default: the text config the wrapper builds without a text_config, where its
            ``sub_configs_defaults`` give one other than the text class's defaults (Mistral 3).
        tie_text: the text config's tie_word_embeddings alone decides and the wrapper's is never
            read (Llama 4: its language model is a whole Llama4ForCausalLM, tied by its own config).
        text_legacy: keys the wrapper's published text configs carry that neither the text
            config class nor any transformers 5.x modeling code reads (checked by grepping
            transformers 5.24's models/<type>/ and the text models'): left out before the text
            config is read, neither noted nor taken for misspellings.
    """

    text_type: str
    text_types: tuple[str, ...]
    tie_or: bool
    flat: bool
    language_model: str
    vision: str
    text_default: dict[str, Any] | None = None
    tie_text: bool = False
    text_legacy: frozenset[str] = frozenset()


# Idefics3 / SmolVLM checkpoints' text_config keys from HuggingFaceM4's training code (its
# VLlama3 model) and transformers.js's export settings (SmolVLM-256M-Instruct, SmolVLM2-500M).
_IDEFICS3_TEXT_LEGACY = frozenset(
    "_flash_attn_2_enabled is_llama_config neftune_noise_alpha perceiver_config pixel_shuffle_factor "
    "qk_layer_norms rope_interleaved transformers.js_config use_resampler".split()
)


# Text models a Llava wraps with AutoModel: types whose base model holds ``embed_tokens`` at its
# top level, which LlavaForConditionalGeneration's tie (lm_head <- language_model.embed_tokens)
# and its bias-free lm_head reproduce exactly.
_LLAVA_TEXT = ("llama", "mistral", "qwen2", "qwen3", "gemma")

WRAPPERS: dict[str, Wrapper] = {
    "llava": Wrapper(
        text_type="llama",
        text_types=_LLAVA_TEXT,
        tie_or=True,
        flat=False,
        language_model="model.language_model (the text_config's base model) and lm_head",
        vision="the CLIP vision tower (model.vision_tower, from vision_config) and the multi-modal projector "
        "(model.multi_modal_projector, two linear maps)",
    ),
    "qwen2_vl": Wrapper(
        text_type="qwen2_vl_text",
        text_types=("qwen2_vl_text",),
        tie_or=True,
        flat=True,
        language_model="model.language_model (Qwen2VLTextModel) and lm_head",
        vision="the vision tower (model.visual: Qwen2VisionTransformerPretrainedModel, from vision_config, "
        "with its patch merger)",
    ),
    "gemma3": Wrapper(
        text_type="gemma3_text",
        text_types=("gemma3_text",),
        tie_or=False,
        flat=False,
        language_model="model.language_model (Gemma3TextModel) and lm_head",
        vision="the SigLIP vision tower (model.vision_tower: SiglipVisionModel, from vision_config) and the "
        "multi-modal projector (model.multi_modal_projector: an RMSNorm and one bias-free map)",
    ),
    "qwen2_5_vl": Wrapper(
        text_type="qwen2_5_vl_text",
        text_types=("qwen2_5_vl_text",),
        tie_or=True,
        flat=True,
        language_model="model.language_model (Qwen2_5_VLTextModel) and lm_head",
        vision="the vision tower (model.visual: Qwen2_5_VisionTransformerPretrainedModel, from vision_config, "
        "with its patch merger)",
    ),
    "qwen3_5": Wrapper(
        text_type="qwen3_5_text",
        text_types=("qwen3_5_text",),
        tie_or=False,
        flat=False,
        language_model="model.language_model (Qwen3_5TextModel) and lm_head",
        vision="the vision tower (model.visual: Qwen3_5VisionModel, from vision_config, with its patch merger)",
    ),
    "qwen3_5_moe": Wrapper(
        text_type="qwen3_5_moe_text",
        text_types=("qwen3_5_moe_text",),
        tie_or=False,
        flat=False,
        language_model="model.language_model (Qwen3_5MoeTextModel) and lm_head",
        vision="the vision tower (model.visual: Qwen3_5MoeVisionModel, from vision_config, with its patch merger)",
    ),
    "mistral3": Wrapper(
        text_type="mistral",
        text_types=_LLAVA_TEXT,
        tie_or=False,
        flat=False,
        language_model="model.language_model (the text_config's base model) and lm_head",
        vision="the Pixtral vision tower (model.vision_tower: PixtralVisionModel, from vision_config) and the "
        "multi-modal projector (model.multi_modal_projector: RMSNorm, patch merger, two linear maps)",
        text_default=MISTRAL3_TEXT_DEFAULT,
    ),
    "paligemma": Wrapper(
        text_type="gemma",
        # PaliGemmaConfig sets text_config.use_bidirectional_attention, a field of the Gemma configs
        # only: transformers refuses any other text model
        text_types=("gemma", "gemma2", "gemma3_text"),
        tie_or=False,
        flat=False,
        language_model="model.language_model (the text_config's base model) and lm_head",
        vision="the SigLIP vision tower (model.vision_tower: SiglipVisionModel, from vision_config) and the "
        "multi-modal projector (model.multi_modal_projector: one biased map)",
        text_default=PALIGEMMA_TEXT_DEFAULT,
        # PaliGemmaConfig.__post_init__ writes num_image_tokens into the text config (no model reads it)
        text_legacy=frozenset({"num_image_tokens"}),
    ),
    **{
        mt: Wrapper(
            text_type="llama",
            text_types=_LLAVA_TEXT,
            tie_or=False,
            flat=False,
            language_model="model.text_model (the text_config's base model) and lm_head",
            vision=f"the vision tower (model.vision_model: {cls}VisionTransformer, from vision_config) and the "
            "connector (model.connector: pixel shuffle and one bias-free map)",
            text_legacy=_IDEFICS3_TEXT_LEGACY,
        )
        for mt, cls in (("idefics3", "Idefics3"), ("smolvlm", "SmolVLM"))
    },
    "qwen3_vl": Wrapper(
        text_type="qwen3_vl_text",
        text_types=("qwen3_vl_text",),
        tie_or=False,  # Qwen3VLTextConfig has no tie_word_embeddings: the wrapper's flag alone ties
        flat=False,
        language_model="model.language_model (Qwen3VLTextModel) and lm_head",
        vision="the vision model (model.visual: Qwen3VLVisionModel, from vision_config, with its patch merger "
        "and DeepStack mergers)",
    ),
    "qwen3_vl_moe": Wrapper(
        text_type="qwen3_vl_moe_text",
        text_types=("qwen3_vl_moe_text",),
        tie_or=False,  # Qwen3VLMoeConfig's own tie_word_embeddings alone ties (a text_config true is ignored)
        flat=False,
        language_model="model.language_model (Qwen3VLMoeTextModel) and lm_head",
        vision="the vision model (model.visual: Qwen3VLMoeVisionModel, from vision_config, with its patch merger "
        "and DeepStack mergers)",
    ),
    "kimi_k25": Wrapper(
        text_type="deepseek_v3",
        text_types=("deepseek_v3",),
        tie_or=False,  # Kimi_K25Config's own tie_word_embeddings (default true) alone ties, meta-checked
        flat=False,
        language_model="model.language_model (DeepseekV3Model) and lm_head",
        vision="the vision tower (model.vision_tower: Kimi_K25VisionModel, from vision_config) and the "
        "multi-modal projector (model.mm_projector: LayerNorm, two biased maps over merged patches)",
        # moonshotai/Kimi-K2.5's text_config: Moonshot's remote code's expert-parallel and routing
        # settings, which neither DeepseekV3Config declares nor models/deepseek_v3 reads (grepped, 5.24;
        # the modular file deletes topk_method)
        text_legacy=frozenset(
            {"aux_loss_alpha", "ep_size", "moe_layer_freq", "scoring_func", "seq_aux", "topk_method"}
        ),
    ),
    "llama4": Wrapper(
        text_type="llama4_text",
        text_types=("llama4_text",),
        tie_or=False,
        flat=False,
        language_model="language_model (Llama4ForCausalLM: its model and lm_head)",
        vision="the vision model (vision_model: Llama4VisionModel, from vision_config, with its pixel-shuffle "
        "adapter) and the multi-modal projector (multi_modal_projector: one bias-free map)",
        tie_text=True,
        # Meta's Llama-4-Scout text_config: a quantization tool's flag no 5.24 class or model reads (grepped)
        text_legacy=frozenset({"for_llm_compressor"}),
    ),
    "llava_next": Wrapper(
        text_type="llama",
        text_types=_LLAVA_TEXT,
        tie_or=False,
        flat=False,
        language_model="model.language_model (the text_config's base model) and lm_head",
        vision="the CLIP vision tower (model.vision_tower, from vision_config), the multi-modal projector "
        "(model.multi_modal_projector, two linear maps) and model.image_newline (d_model)",
    ),
}

# Keys of a flat Qwen2-VL config that Qwen2VLConfig.__post_init__ moves into text_config besides
# the text class's fields: the rotary settings of 4.x checkpoints.
_FLAT_ROPE_KEYS = frozenset({"rope_parameters", "rope_scaling", "rope_theta"})


def _flat_text_keys(cfg: dict[str, Any], mt: str) -> list[str]:
    """The top-level keys of a flat wrapper config that are its text model's (none unless
    the wrapper is ``flat`` and gives no text_config): every key that is not the wrapper's
    own, so that a typo of a text key is caught by the text reader."""
    w = WRAPPERS[mt]
    if not w.flat or cfg.get("text_config") is not None:
        return []
    own = CONFIG_KEYS[mt] | COMMON_KEYS | frozenset(DEFAULTS[mt])
    text = TEXT_ONLY_CONFIG_KEYS.get(w.text_type, frozenset()) | _FLAT_ROPE_KEYS
    return [k for k in cfg if k in text or (k not in own and k not in REAL_KEYS)]


def _wrapper_part(cfg: dict[str, Any], mt: str) -> dict[str, Any]:
    """``cfg`` without the text keys a flat wrapper config holds at its top level.

    Beside a text_config, a key of a flat wrapper's top level whose value equals text_config's
    is left out too: transformers 4.5x re-saves (Qwen2.5-VL-7B as 4.53 writes it) repeat the
    text keys at the top level, and 5.x's config reads text_config alone (a top-level
    hidden_size of 1234 beside it leaves text_config.hidden_size 3584 in 5.24).  The same
    re-save writes text_config's sliding_window as null when use_sliding_window is false (the
    Qwen2 text config drops an unused window) and keeps the top-level number: no news either.
    A top-level value that differs from text_config's otherwise is still noted as ignored."""
    text = set(_flat_text_keys(cfg, mt))
    tc = cfg.get("text_config")
    if WRAPPERS[mt].flat and isinstance(tc, dict):
        unused_window = tc.get("use_sliding_window") is False and tc.get("sliding_window") is None
        text |= {
            k
            for k, v in cfg.items()
            if k != "model_type" and k in tc and (tc[k] == v or (k == "sliding_window" and unused_window))
        }
    return {k: v for k, v in cfg.items() if k not in text}


def _wrapped(r: _Reader) -> Spec:
    """The language model of a multimodal wrapper (``WRAPPERS``): its text_config read as its
    own model_type, with the wrapper's tie rule; vision tower and projector left out (named
    in the notes).

    Raises:
        ConfigError: a text_config that is not an object, a text model_type symtrans does
            not read inside this wrapper, or anything the text reader refuses (prefixed
            ``text_config:``).
    """
    w = WRAPPERS[r.mt]
    text = r.cfg.get("text_config")
    if text is None:
        flat = _flat_text_keys(r.cfg, r.mt)
        text = {k: r.cfg[k] for k in flat}
        if flat:
            r.notes.append(f"no text_config: {r.cls} takes the text keys at the top level ({', '.join(flat)})")
        elif w.text_default is not None:  # the wrapper's own text default (its sub_configs_defaults)
            text = dict(w.text_default)
            r.notes.append(f"key text_config missing: used {r.cls}'s default text model ({_show(text)})")
        else:
            r._default("text_config", "missing", {}, f"{TEXT_ONLY.get(w.text_type, CLASSES.get(w.text_type))[0]}()")
    elif not isinstance(text, dict):
        raise ConfigError(f"text_config must be an object or null, not {_show(text)}")
    else:
        text = {k: v for k, v in text.items() if k not in w.text_legacy}
    if r.mt == "kimi_k25" and text.get("model_type") == "kimi_k2":  # Kimi_K25Config.__post_init__ renames it
        text["model_type"] = "deepseek_v3"
        r.notes.append('text_config model_type "kimi_k2": Kimi_K25Config reads it as "deepseek_v3"')
    text_mt = text.get("model_type", w.text_type)
    if "model_type" not in text and r.cfg.get("text_config") is not None:
        r.notes.append(f"text_config has no model_type: {r.cls} reads it as {_show(w.text_type)}")
    if text_mt not in w.text_types:
        raise ConfigError(
            f"text_config model_type {_show(text_mt)} is not supported inside {r.mt} "
            f"(its language model must be one of: {', '.join(w.text_types)})"
        )
    own = r.flag("tie_word_embeddings", note=False)
    text_tie = text.get("tie_word_embeddings", _of(DEFAULTS, TEXT_ONLY_DEFAULTS, text_mt).get("tie_word_embeddings"))
    if not isinstance(text_tie, bool):
        raise ConfigError(f"text_config.tie_word_embeddings must be true or false, not {_show(text_tie)}")
    tied = text_tie if w.tie_text else own or text_tie if w.tie_or else own
    if w.tie_text and own and not text_tie:
        r.notes.append(f"tie_word_embeddings true ignored: {r.cls}'s language model ties by its text_config alone")
    if tied != text_tie:
        why = "the wrapper's tie_word_embeddings" if not w.tie_or or own else "the text config's"
        r.notes.append(f"lm_head {'tied to' if tied else 'separate from'} the token embedding ({r.cls} follows {why})")
    text["model_type"] = text_mt
    text["tie_word_embeddings"] = tied
    try:
        spec, notes = _read(text, text_mt)
    except ConfigError as e:
        raise ConfigError(f"text_config: {e}") from None
    text_cls, _ = _of(CLASSES, TEXT_ONLY, text_mt)
    r.notes.insert(
        0,
        f"counted: transformers {r.model}, {w.language_model} and {w.vision} "
        f"(defaults from {r.cls} and {text_cls}, transformers 5.x); the text-only figure leaves out {w.vision}",
    )
    r.notes += [f"text_config: {n}" for n in notes[1:]]
    if spec.head_bias:  # the wrapper's lm_head is a bias-free Linear
        spec = spec.replace(head_bias=False)
    if r.mt in ("llava", "llava_next"):
        sizes, opts, notes = llava_vision(r)
        if r.mt == "llava_next":
            opts["image_newline"] = True
    elif r.mt == "gemma3":
        sizes, opts, notes = gemma3_vision(r)
    elif r.mt == "mistral3":
        sizes, opts, notes = mistral3_vision(r)
    elif r.mt == "qwen2_5_vl":
        sizes, opts, notes = qwen2_5_vl_vision(r, spec.size("d_model"))
    elif r.mt == "paligemma":
        sizes, opts, notes = paligemma_vision(r, spec.size("d_model"))
    elif r.mt in ("idefics3", "smolvlm"):
        sizes, opts, notes = idefics3_vision(r)
    elif r.mt in ("qwen3_vl", "qwen3_vl_moe"):
        sizes, opts, notes = qwen3_vl_vision(r, spec.size("d_model"))
    elif r.mt == "kimi_k25":
        sizes, opts, notes = kimi_k25_vision(r, spec.size("d_model"))
    elif r.mt == "llama4":
        sizes, opts, notes = llama4_vision(r)
    elif r.mt in ("qwen3_5", "qwen3_5_moe"):
        sizes, opts, notes = qwen3_5_vision(r, spec.size("d_model"))
    else:
        sizes, opts, notes = qwen2_vl_vision(r, spec.size("d_model"))
    r.notes += notes
    return spec.replace(sizes=sizes, **opts)


def _qwen2_vl_text(r: _Reader) -> Spec:
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    _check_divides("hidden_size", d, "num_attention_heads", h, "Qwen2VLAttention")
    r.head_dim_must_match("hidden_size", d, "num_attention_heads", h)
    h_kv = _heads(r, h)
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
    w = _window(r, sizes["N"])
    if w is not None:
        sizes["w"] = w
    r.notes.append(
        "Qwen2VLAttention: q_proj, k_proj and v_proj have biases, o_proj has none; "
        "multimodal rotary positions (mrope) have no parameters"
    )
    return Spec(
        family="decoder-only",
        sizes=sizes,
        positional="rotary",
        norm="rmsnorm",
        bias=False,
        qkv_bias=True,
        ffn="swiglu",
        final_norm=True,
        norm_position="pre",
        tie_output=r.flag("tie_word_embeddings"),
    )


_TEXT_ONLY_READERS = {"qwen2_vl_text": _qwen2_vl_text, "qwen2_5_vl_text": _qwen2_vl_text}
_TEXT_ONLY_READERS.update({rec.model_type: rec.read for rec in RECORDS if rec.text_only})


_FAMILIES = {
    "bert": _bert,
    "roberta": _bert,
    "albert": _albert,
    "gpt2": _gpt2,
    "t5": _t5,
    "bart": _bart,
    "opt": _opt,
    # --- decoder types (types-dec)
    "granite": _decoder,
    "phi3": _decoder,
    "starcoder2": _decoder,
    "gemma2": _decoder,
    "gemma3_text": _decoder,
    "olmo": _decoder,
    "olmo2": _decoder,
    "cohere": _decoder,
    "stablelm": _decoder,
    "phi": _decoder,
    "gpt_neox": _decoder,
    "gptj": _decoder,
    "falcon": _decoder,
    # --- types-moe
    "qwen2_moe": _moe_decoder,
    "qwen3_moe": _moe_decoder,
    "deepseek_v2": _deepseek,
    "deepseek_v3": _deepseek,
    "gpt_oss": _moe_decoder,
    "llama4_text": _moe_decoder,
    # --- encoders (types-enc)
    "distilbert": _distilbert,
    "xlm-roberta": _bert,
    "electra": _electra,
    "deberta-v2": _deberta_v2,
    # --- gpt2-like (learned positions / ALiBi) and multimodal wrappers
    "llava": _wrapped,
    "qwen2_vl": _wrapped,
    "gemma3": _wrapped,
    "llava_next": _wrapped,
    "mistral3": _wrapped,
    "qwen2_5_vl": _wrapped,
    "paligemma": _wrapped,
    "idefics3": _wrapped,
    "smolvlm": _wrapped,
    "qwen3_vl": _wrapped,
    "qwen3_vl_moe": _wrapped,
    "kimi_k25": _wrapped,
    "llama4": _wrapped,
    "qwen3_5": _wrapped,
    "qwen3_5_moe": _wrapped,
    # --- seq2seq (mbart, pegasus, marian, whisper, vit)
    "mbart": _bart,
    "pegasus": _bart,
    "marian": _bart,
    "whisper": _whisper,
    "vit": _vit,
}
_FAMILIES.update({rec.model_type: rec.read for rec in RECORDS if not rec.text_only})

# model_type -> why it cannot be counted yet (a supported type's part that is missing, never
# the type itself: tests/test_resave.py checks no entry names a supported type as unsupported)
_NOT_YET: dict[str, str] = {}


def spec_from_config(cfg: dict[str, Any], name: str = "config") -> tuple[Spec, tuple[str, ...]]:
    """Map a parsed Hugging Face config dict to a Spec.

    Args:
        cfg: the parsed ``config.json``.
        name: what to call the config in error messages (a path or a model name).

    Returns:
        ``(spec, notes)``: notes list every transformers default used (with its config
        class) and every assumption made.

    Raises:
        ValueError: one sentence, starting with ``name``, naming the offending key.
    """
    try:
        return _spec_from_config(cfg)
    except ValueError as e:
        raise ConfigError(f"{name}: {e}") from None


# How much of a refusal line the list of supported types may take: every error line is capped
# at escape.MESSAGE_CAP (1,000 characters), and 97 types already took 1,075 (issue 21 asks for 110).
SUPPORTED_LIST_CAP = 700


def supported_list() -> str:
    """The supported model types for a refusal line: as many as fit in SUPPORTED_LIST_CAP
    characters, in the table's order, then how many more there are and where all are listed."""
    shown: list[str] = []
    for mt in SUPPORTED:
        if len(", ".join([*shown, mt])) > SUPPORTED_LIST_CAP:
            break
        shown.append(mt)
    rest = len(SUPPORTED) - len(shown)
    more = f" and {rest} more ('symtrans model-types' lists all {len(SUPPORTED)})" if rest else ""
    return ", ".join(shown) + more


def _spec_from_config(cfg: Any) -> tuple[Spec, tuple[str, ...]]:
    if not isinstance(cfg, dict):
        raise ConfigError(f"the top level must be a JSON object, not {_show(cfg)}")
    bad_key = next((k for k in cfg if not isinstance(k, str)), None)
    if bad_key is not None:  # a dict from Python code; JSON keys are always strings
        raise ConfigError(f"config keys must be strings, as in JSON, not {bad_key!r} ({type(bad_key).__name__})")
    supported = supported_list()
    if "model_type" not in cfg:
        raise ConfigError(f"model_type is missing; supported model types: {supported}")
    mt = cfg["model_type"]
    if not isinstance(mt, str):
        raise ConfigError(f"model_type must be a string, not {_show(mt)}; supported model types: {supported}")
    if mt in _NOT_YET:
        raise ConfigError(
            f"model_type {_show(mt)} is not supported yet ({_NOT_YET[mt]}); supported model types: {supported}"
        )
    if mt not in _FAMILIES:  # the generic path (catalog/generic), or one line saying why not
        from symtrans.catalog.generic.route import route

        raise route(cfg, mt, supported)
    return _read(cfg, mt)


def _read(cfg: dict[str, Any], mt: str) -> tuple[Spec, tuple[str, ...]]:
    """The Spec and notes of ``cfg`` as ``mt`` (a supported or a text-only type)."""
    r = _Reader(cfg, mt)
    wrapper = WRAPPERS.get(mt)
    # typos are errors before any default hides them (a wrapper's text keys: its text reader's)
    unknown = unknown_keys(_wrapper_part(cfg, mt) if wrapper else cfg, mt)
    _check_padding_idx(r)
    spec = _of(_FAMILIES, _TEXT_ONLY_READERS, mt)(r)
    first = (
        r.notes.pop(0) if wrapper else f"counted as transformers {r.model} (defaults from {r.cls}, transformers 5.x)"
    )
    notes = [first]
    if unknown:
        notes.append(
            f"key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} not known to {r.cls} "
            f"(transformers 5.x): ignored"
        )
    seen: set[str] = set()
    for n in r.notes:  # aliases may be noted more than once
        if n not in seen:
            seen.add(n)
            notes.append(n)
    return spec, tuple(notes)


def known_keys(model_type: str) -> frozenset[str]:
    """The keys a config.json of ``model_type`` may hold: its config class's, COMMON_KEYS,
    and those symtrans reads (DEFAULTS and ALIASES)."""
    return (
        _of(CONFIG_KEYS, TEXT_ONLY_CONFIG_KEYS, model_type)
        | COMMON_KEYS
        | frozenset(_of(DEFAULTS, TEXT_ONLY_DEFAULTS, model_type))
        | frozenset(ALIASES.get(model_type, {}))
        | {"head_dim", "attention_bias", "mlp_bias", "scale_embedding"}
        | frozenset(GETATTR_KEYS.get(model_type, ()))
        | frozenset(WORKLOAD_GETATTR_KEYS.get(model_type, ()))
        | frozenset(GETATTR_QUIET.get(model_type, ()))
        | LEGACY_KEYS.get(model_type, frozenset())
    )


def unknown_keys(cfg: dict[str, Any], model_type: str) -> list[str]:
    """The keys of ``cfg`` unknown to ``model_type``'s config class, in file order.

    Raises:
        ConfigError: naming every unknown key that is a near miss (difflib ratio >=
            TYPO_CUTOFF, or equal ignoring case) of a key that changes the count
            (``param_keys``), with the key it resembles: such a typo would be ignored and
            the real key's default used, silently changing the count.  A key that is real
            elsewhere (REAL_KEYS: classifier_dropout, layer_norm_eps, use_sliding_window, ...)
            is never a typo, only unknown to this class.
            More than MAX_UNKNOWN_KEYS unknown keys are refused outright, so the work
            stays linear in the number of keys.
    """
    known = known_keys(model_type)
    targets = param_keys(model_type)
    unknown = [key for key in cfg if key not in known]  # one set lookup per key: linear
    if not unknown:
        return []
    import difflib  # only when there is a key to match: not at every start-up

    if len(unknown) > MAX_UNKNOWN_KEYS:
        raise ConfigError(
            f"{len(unknown):,} keys are unknown to {_of(CLASSES, TEXT_ONLY, model_type)[0]} (at most {MAX_UNKNOWN_KEYS:,} "
            f"are accepted); this is not a config.json of a {model_type} model"
        )
    by_lower = {k.lower(): k for k in targets}
    typos, others = [], []
    for key in unknown:
        if key in known:
            continue
        match = None
        if key not in REAL_KEYS:
            match = by_lower.get(key.lower()) or next(
                iter(difflib.get_close_matches(key, targets, 1, TYPO_CUTOFF)), None
            )
        if match:
            typos.append(f"{key} (did you mean {match}?)")
        else:
            others.append(key)
    if typos:
        cls = _of(CLASSES, TEXT_ONLY, model_type)[0]
        raise ConfigError(
            f"unknown key{'s' if len(typos) > 1 else ''} {', '.join(typos)}: {cls} has no such key, "
            "so it would be ignored and a default used instead; fix the spelling"
        )
    return others
