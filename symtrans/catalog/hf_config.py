"""Read a Hugging Face ``config.json`` into a validated :class:`~symtrans.spec.Spec`.

``load_config(path)`` reads and parses the file; ``spec_from_config(cfg, name)`` maps a
parsed dict.  This module reads, dispatches by ``model_type`` and assembles the tables; the
rest lives beside it, one job per module: the first-round types' tables in ``type_tables.py``
(classes, defaults, aliases) and ``type_keys.py`` (config keys, keys with no parameter effect),
their readers in ``family_readers.py`` (encoders, encoder-decoders, GPT-2, OPT) and
``decoder_readers.py`` (decoders, MoE, MLA), the later types as records in ``catalog/models``,
and the multimodal wrappers (``WRAPPERS``) here, since they read their text model through
this module's dispatch.  Supported ``model_type`` values and the model each is counted as (the
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
gemma4      Gemma4ForConditionalGeneration (*)  Gemma4Config + Gemma4TextConfig + Gemma4VisionConfig + Gemma4AudioConfig
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

from symtrans.catalog import models as _models
from symtrans.catalog import record_table
from symtrans.catalog.decoder_readers import read_decoder, read_deepseek, read_moe_decoder, read_qwen2_vl_text
from symtrans.catalog.family_readers import (
    _albert,
    _bart,
    _deberta_v2,
    _distilbert,
    _electra,
    _gpt2,
    _opt,
    _vit,
    _whisper,
)
from symtrans.catalog.models.encoders import read_bert as _bert
from symtrans.catalog.models.record import NO_PADDING, ModelType
from symtrans.catalog.models.t5 import read_t5 as _t5
from symtrans.catalog.models.vision import (
    MISTRAL3_TEXT_DEFAULT,
    PALIGEMMA_TEXT_DEFAULT,
    gemma3_vision,
    gemma4_audio,
    gemma4_vision,
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
    typo_refusal,
    window_size,
)
from symtrans.catalog.type_keys import (
    COMMON_KEYS,
    CONFIG_KEYS,
    GETATTR_KEYS,
    GETATTR_QUIET,
    LEGACY_KEYS,
    NO_PARAM_EFFECT,
    TEXT_ONLY,
    TEXT_ONLY_CONFIG_KEYS,
    TEXT_ONLY_DEFAULTS,
    TEXT_ONLY_NO_PARAM_EFFECT,
    TYPO_CUTOFF,
    WORKLOAD_GETATTR_KEYS,
)
from symtrans.catalog.type_keys import real_keys as _real_keys
from symtrans.catalog.type_tables import (  # noqa: F401 (re-exported: SIZE_OF_KEY, size_of_key)
    ALIASES,
    CLASSES,
    DEFAULTS,
    PAD_DEFAULTS,
    SIZE_OF_KEY,
    size_of_key,
)
from symtrans.engine.spec import Spec

# The reader machinery lives in catalog/reader.py (shared with the model-type records); the
# names this module always had stay importable from here.
_MISSING, _Huge, _show = MISSING, Huge, show
_check_divides, _check_rotary_head = check_divides, check_rotary_head

# A config.json is a few kB; refuse to read anything absurdly large.
MAX_BYTES = 10 * 2**20


def _assemble(records: tuple[ModelType, ...]) -> None:
    """Add the registered model-type records (catalog/models) to the tables above: each
    table stays the view every caller reads, and a record is its one home."""
    for rec in records:
        mt = rec.model_type
        if dict.__contains__(CLASSES, mt) or dict.__contains__(TEXT_ONLY, mt):
            raise RuntimeError(f"model_type {mt} has a record and a table entry")
        if rec.pad_default is not NO_PADDING:
            _PAD_DEFAULTS[mt] = rec.pad_default
        (_TEXT_ONLY_READERS if rec.text_only else _FAMILIES)[mt] = rec.read
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


# The records are assembled into the tables on first use (record_table.py; issue 26): a
# config.json of one type imports the one record module catalog.models.INDEX names for it.
_LOADED: set[str] = set()  # record modules assembled (catalog.models.MODULE_NAMES); "*": all


def _load_type(mt) -> None:
    """Assemble the record module of ``mt`` if catalog.models.INDEX has it and it is not yet."""
    name = _models.INDEX.get(mt) if isinstance(mt, str) else None
    if name is not None and name not in _LOADED:
        _LOADED.add(name)
        _assemble(_models.load(name))


def _load_all() -> None:
    """Assemble every record, in the registry's order (a record's entries assembled one module
    at a time before are taken out first, so each table's order is the one assembling every
    record at import gave)."""
    if "*" in _LOADED:
        return
    records = _models.RECORDS
    _LOADED.update(("*", *_models.MODULE_NAMES))
    for table in _RECORD_TABLES:
        for mt in _models.INDEX:
            if mt not in table.static:
                dict.pop(table, mt, None)
    _assemble(records)


# The table's types, then the records' (the order of CLASSES), without importing a record module.
SUPPORTED = (*dict.keys(CLASSES), *(mt for mt in _models.INDEX if mt not in _models.TEXT_ONLY_TYPES))


def __getattr__(name: str):
    if name == "REAL_KEYS":
        return _real_keys()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


# At most this many unknown top-level keys.  Real config.json files have a few dozen keys
# and a handful of unknown ones (keys of newer transformers versions); each unknown key is
# compared with every known one for typos, so a file of 686,000 unknown keys took 440 s.
# More than this is not a model config: it is refused before any comparison.
MAX_UNKNOWN_KEYS = 1000

# --------------------------------------------------------------------------- parsing

_NONFINITE_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*(-?Infinity|NaN)\b')
# the same inside a flat list of numbers ("time_step_limit": [0.0, Infinity], as json.dump writes
# Mamba 2's default (0.0, inf) from a config's to_dict())
_NONFINITE_IN_LIST = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*\[[-+.0-9eE\s,]*?(-?Infinity|NaN)\b')


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
        listed = None if m else _NONFINITE_IN_LIST.search(text)
        if m:
            where = f"key {m.group(1)} is {m.group(2)}, which"
        elif listed:
            where = f"key {listed.group(1)} holds {listed.group(2)}, which"
        else:
            where = name
        raise ConfigError(
            f"{where} is not valid JSON: only finite numbers are allowed "
            '(transformers writes an infinite float as {"__float__": "Infinity"})'
        )

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
    from symtrans.accounting.checkpoint_config import checkpoint_from_config

    p = Path(path)
    if p.is_dir():
        p = p / "config.json"
    cfg = read_config(p, str(path))
    name = p.stem
    if name == "config":
        name = p.resolve().parent.name or name
    spec, notes = spec_from_config(cfg, str(path))
    parse = None
    if cfg.get("quantization_config") is not None:  # the weight formats only for a quantized config
        from symtrans.accounting.quantization import from_config as parse
    return spec, name, notes, checkpoint_from_config(cfg, parse)


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


_PAD_DEFAULTS = PAD_DEFAULTS  # the records' defaults are added here


def _check_padding_idx(r: Reader) -> None:
    """pad_token_id must index a row of the token embedding, as nn.Embedding requires."""
    if r.mt not in _PAD_DEFAULTS:
        return
    pad = r.cfg["pad_token_id"] if "pad_token_id" in r.cfg else _PAD_DEFAULTS[r.mt]
    if pad is None:
        return
    if isinstance(pad, bool) or not isinstance(pad, int):
        raise ConfigError(f"pad_token_id must be an integer or null, not {_show(pad)}")
    key = r.lookup("vocab_size")[0] or "vocab_size"
    vocab = r.size("vocab_size")
    if not -vocab <= pad < vocab:
        given = "" if "pad_token_id" in r.cfg else f", the {r.cls} default"
        raise ConfigError(
            f"pad_token_id ({pad}{given}) is not a row of the {vocab}-row token embedding ({key}): "
            f"{r.model} uses it as the embedding's padding_idx, which must be below {key}"
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
    "gemma4": Wrapper(
        text_type="gemma4_text",
        text_types=("gemma4_text",),
        tie_or=False,  # Gemma4Config's own tie_word_embeddings (default true) alone ties, meta-checked
        flat=False,
        language_model="model.language_model (Gemma4TextModel) and lm_head",
        vision="the vision tower (model.vision_tower: Gemma4VisionModel, from vision_config) and "
        "model.embed_vision (an RMSNorm without scale and one bias-free map); the audio tower "
        "(model.audio_tower: Gemma4AudioModel, from audio_config) and model.embed_audio are the audio part",
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
    return [k for k in cfg if k in text or (k not in own and k not in _real_keys())]


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


def _wrapped(r: Reader) -> Spec:
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
            r.default("text_config", "missing", {}, f"{TEXT_ONLY.get(w.text_type, CLASSES.get(w.text_type))[0]}()")
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
    elif r.mt == "gemma4":
        sizes, opts, notes = gemma4_vision(r)
        audio, audio_notes = gemma4_audio(r)
        if audio and not sizes:
            raise ConfigError(
                "audio_config is set but vision_config is null: symtrans counts Gemma 4's audio tower beside its "
                "vision tower only (no published config has one without the other)"
            )
        sizes, notes = {**sizes, **audio}, notes + audio_notes
    elif r.mt == "llama4":
        sizes, opts, notes = llama4_vision(r)
    elif r.mt in ("qwen3_5", "qwen3_5_moe"):
        sizes, opts, notes = qwen3_5_vision(r, spec.size("d_model"))
    else:
        sizes, opts, notes = qwen2_vl_vision(r, spec.size("d_model"))
    r.notes += notes
    return spec.replace(sizes=sizes, **opts)


_TEXT_ONLY_READERS = {"qwen2_vl_text": read_qwen2_vl_text, "qwen2_5_vl_text": read_qwen2_vl_text}
_TEXT_ONLY_READERS = record_table.RecordTable(_TEXT_ONLY_READERS)  # the text-only records' readers: on first use


_FAMILIES = {
    "bert": _bert,
    "roberta": _bert,
    "albert": _albert,
    "gpt2": _gpt2,
    "t5": _t5,
    "bart": _bart,
    "opt": _opt,
    # --- decoder types (types-dec)
    "granite": read_decoder,
    "phi3": read_decoder,
    "starcoder2": read_decoder,
    "gemma2": read_decoder,
    "gemma3_text": read_decoder,
    "olmo": read_decoder,
    "olmo2": read_decoder,
    "cohere": read_decoder,
    "stablelm": read_decoder,
    "phi": read_decoder,
    "gpt_neox": read_decoder,
    "gptj": read_decoder,
    "falcon": read_decoder,
    # --- types-moe
    "qwen2_moe": read_moe_decoder,
    "qwen3_moe": read_moe_decoder,
    "deepseek_v2": read_deepseek,
    "deepseek_v3": read_deepseek,
    "gpt_oss": read_moe_decoder,
    "llama4_text": read_moe_decoder,
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
    "gemma4": _wrapped,
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
_FAMILIES = record_table.RecordTable(_FAMILIES)  # the records' readers: on first use
_RECORD_TABLES = (
    CLASSES,
    DEFAULTS,
    CONFIG_KEYS,
    NO_PARAM_EFFECT,
    ALIASES,
    GETATTR_KEYS,
    WORKLOAD_GETATTR_KEYS,
    GETATTR_QUIET,
    LEGACY_KEYS,
    TEXT_ONLY,
    TEXT_ONLY_DEFAULTS,
    TEXT_ONLY_CONFIG_KEYS,
    TEXT_ONLY_NO_PARAM_EFFECT,
    _PAD_DEFAULTS,
    _TEXT_ONLY_READERS,
    _FAMILIES,
)
record_table.register(_load_type, _load_all)

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
    if isinstance(cfg.get("auto_map"), dict) and cfg["auto_map"]:
        # the Hub's remote code (trust_remote_code) may define other layers under the same
        # model_type: symtrans counts transformers' own class and never runs that code
        notes.append(
            f"auto_map names remote code ({', '.join(sorted(map(str, cfg['auto_map'])))}); counted as transformers' "
            f"own {r.model}, which that code may not match (symtrans never runs remote code)"
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
        if key not in _real_keys():
            match = by_lower.get(key.lower()) or next(
                iter(difflib.get_close_matches(key, targets, 1, TYPO_CUTOFF)), None
            )
        if match:
            typos.append((key, match))
        else:
            others.append(key)
    if typos:
        raise ConfigError(typo_refusal(typos, cfg, _of(CLASSES, TEXT_ONLY, model_type)[0]))
    return others
