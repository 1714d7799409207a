"""BERT-shaped encoders: the reader of BERT, RoBERTa and XLM-RoBERTa (their rows stay in
``catalog/hf_config.py``'s tables) and the records of the RoBERTa copies transformers 5.x
keeps as types of their own: CamemBERT, RoBERTa-PreLayerNorm, MPNet, and Nomic BERT
(``nomic_bert``: rotary positions and a SwiGLU MLP, see ``read_nomic_bert``).

Read off transformers 5.24's ``models/<type>/modeling_<type>.py``; checked on the meta device,
by the key audit and against FlopCounterMode in tests/test_model_types.py:

* ``camembert``: CamembertModel is RobertaModel under another name (``# Copied from``): the
  same embeddings (positions numbered from padding_idx + 1), post-norm layers and pooler;
  CamembertConfig's defaults are BERT's sizes with pad_token_id 1.
* ``roberta-prelayernorm``: RobertaPreLayerNormModel (Xu et al. / fairseq's
  ``--encoder-normalize-before``): RoBERTa's embeddings (with their LayerNorm), then pre-norm
  layers (``attention.LayerNorm`` before self-attention, ``intermediate.LayerNorm`` before the
  FFN) and one LayerNorm after the last layer (``RobertaPreLayerNormModel.LayerNorm``).
* ``mpnet``: MPNetModel (Song et al. 2020): RoBERTa-style learned positions numbered from
  padding_idx + 1, padding_idx fixed at 1 whatever pad_token_id says (no token types), post-norm layers with biased q, k, v, o maps, a pooler,
  and one T5-style bucketed relative attention bias (``MPNetEncoder.relative_attention_bias``,
  relative_attention_num_buckets x h, shared by all layers).
"""

from __future__ import annotations

from symtrans.catalog.models.record import ModelType, keys, no_effect
from symtrans.catalog.reader import ConfigError, Reader, check_divides, check_rotary_head, show
from symtrans.engine.spec import Spec

# Types whose position ids start at padding_idx + 1 (RobertaEmbeddings and its copies).
ROBERTA_POSITIONS = ("roberta", "xlm-roberta", "camembert", "roberta-prelayernorm")
# Pre-norm layers and a LayerNorm after the last one (RobertaPreLayerNormModel).
PRE_NORM = ("roberta-prelayernorm",)


def _position_rows(r: Reader) -> tuple[int, int]:
    """(L_max, position_offset) of a learned table of max_position_embeddings rows.

    Raises:
        ConfigError: a pad_token_id outside the position table (its padding_idx).
    """
    rows = r.size("max_position_embeddings")
    if r.mt not in ROBERTA_POSITIONS:
        return rows, 0
    pad = r.cfg["pad_token_id"] if "pad_token_id" in r.cfg else r.defaults["pad_token_id"]
    if not isinstance(pad, int) or isinstance(pad, bool):
        return rows, 0
    if not -rows <= pad < rows:
        raise ConfigError(
            f"pad_token_id ({pad}) is not a row of the {rows}-row position table (max_position_embeddings): "
            f"{r.model}'s position embedding uses it as padding_idx, which must be below max_position_embeddings"
        )
    if 0 <= pad and pad + 1 < rows:
        offset = pad + 1
        r.notes.append(
            f"{r.model} numbers positions from padding_idx + 1 = {offset}: "
            f"the {rows} position rows are L_max = {rows - offset} positions + {offset} offset rows"
        )
        return rows - offset, offset
    return rows, 0


def read_bert(r: Reader) -> Spec:
    """BertModel, RobertaModel, XLMRobertaModel, CamembertModel and RobertaPreLayerNormModel,
    each with its pooler (add_pooling_layer=True, the default).

    Raises:
        ConfigError: num_attention_heads not dividing hidden_size, a contradicting head_dim,
            add_cross_attention (not modelled), a pad_token_id outside the position table.
    """
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    check_divides("hidden_size", d, "num_attention_heads", h, r.model)
    r.head_dim_must_match("hidden_size", d, "num_attention_heads", h)
    if r.flag("add_cross_attention", note=False):
        raise ConfigError(
            f"add_cross_attention is true: cross-attention layers in {r.model} are not modelled by symtrans"
        )
    pet = r.cfg.get("position_embedding_type", "absolute")
    if pet != "absolute":
        if not isinstance(pet, str):
            raise ConfigError(f"position_embedding_type must be a string, not {show(pet)}")
        r.notes.append(
            f"key position_embedding_type is {show(pet)}, but {r.model} (transformers 5.x) ignores it: "
            "counted with absolute positions (transformers 4.x added a (2L-1) x d_k distance "
            "embedding per layer)"
        )
    L_max, offset = _position_rows(r)
    r.notes.append(f"{r.model} includes its pooler (add_pooling_layer=True, the default); no task head is counted")
    pre = r.mt in PRE_NORM
    if pre:
        r.notes.append(f"{r.model}: pre-norm layers and one LayerNorm after the last layer")
    return Spec(
        family="encoder-only",
        sizes=dict(
            d_model=d,
            d_ff=r.size("intermediate_size"),
            h=h,
            N=r.size("num_hidden_layers"),
            V=r.size("vocab_size"),
            L_max=L_max,
        ),
        positional="learned",
        position_offset=offset,
        token_types=r.size("type_vocab_size", zero_ok=True),
        embedding_norm=True,
        pooler=True,
        norm="layernorm",
        bias=True,
        norm_position="pre" if pre else "post",
        final_norm=pre,
    )


def read_mpnet(r: Reader) -> Spec:
    """MPNetModel with its pooler: RoBERTa-style embeddings without token types, post-norm
    layers, and one bucketed relative attention bias shared by all layers (Song et al. 2020).

    Raises:
        ConfigError: num_attention_heads not dividing hidden_size (MPNetSelfAttention refuses
            it), a pad_token_id outside the position table.
    """
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    check_divides("hidden_size", d, "num_attention_heads", h, "MPNetSelfAttention")
    r.head_dim_must_match("hidden_size", d, "num_attention_heads", h)
    # MPNetEmbeddings fixes padding_idx = 1 for both tables, whatever pad_token_id says
    rows, V = r.size("max_position_embeddings"), r.size("vocab_size")
    for key, n in (("vocab_size", V), ("max_position_embeddings", rows)):
        if n < 2:
            raise ConfigError(f"{key} is {n}: MPNetEmbeddings uses row 1 as its padding_idx, so it needs 2 rows")
    offset = 2 if rows > 2 else 0
    if offset:
        r.notes.append(
            f"{r.model} numbers positions from its fixed padding_idx 1 + 1 = 2: the {rows} position rows are "
            f"L_max = {rows - 2} positions + 2 offset rows"
        )
    L_max = rows - offset
    buckets = r.size("relative_attention_num_buckets")
    if buckets != 32:  # MPNetEncoder.compute_position_bias(num_buckets=32) ignores the config
        r.notes.append(
            f"relative_attention_num_buckets is {buckets}: {r.model} builds a {buckets}-row bias table (counted), "
            "but MPNetEncoder.compute_position_bias always buckets into 32 (fewer rows fail in the forward pass, "
            "more stay unused)"
        )
    r.notes.append(f"{r.model} includes its pooler (add_pooling_layer=True, the default); no task head is counted")
    return Spec(
        family="encoder-only",
        sizes=dict(
            d_model=d,
            d_ff=r.size("intermediate_size"),
            h=h,
            N=r.size("num_hidden_layers"),
            V=V,
            L_max=L_max,
        ),
        positional="learned",
        position_offset=offset,
        relative_bias="stack",
        relative_buckets=buckets,
        embedding_norm=True,
        pooler=True,
        norm="layernorm",
        bias=True,
        norm_position="post",
        final_norm=False,
    )


_NOMIC_OWN_KEYS = ("n_embd", "n_layer", "n_head", "n_inner", "n_positions", "rotary_emb_fraction", "prenorm")


def read_nomic_bert(r: Reader) -> Spec:
    """NomicBertModel (Nussbaum et al. 2024, nomic-embed-text): BERT's token and token-type
    embeddings and their LayerNorm, no position table (rotary positions), post-norm layers with
    bias-free q, k, v, o maps (``head_dim`` wide heads, hidden_size // num_attention_heads when
    missing) and a bias-free SwiGLU MLP; no pooler (``add_pooling_layer=False`` by default).

    Raises:
        ConfigError: a malformed size, head_dim 0 from hidden_size < num_attention_heads, or the
            GPT-2-style keys of Nomic's own modeling code (n_embd, n_layer, ...), which
            NomicBertConfig does not read.
    """
    # nomic-ai's published nomic-embed checkpoints are configs of their own code (auto_map, GPT-2-style
    # keys); NomicBertConfig reads none of these keys and would build its defaults instead
    theirs = [k for k in _NOMIC_OWN_KEYS if k in r.cfg]
    if theirs:
        raise ConfigError(
            f"keys {', '.join(theirs)} are Nomic's own code's (trust_remote_code): transformers 5.x's NomicBertConfig "
            "ignores them and builds its defaults; rename them to hidden_size, num_hidden_layers, "
            "num_attention_heads, intermediate_size to count NomicBertModel"
        )
    if "pad_token_id" in r.cfg and r.cfg["pad_token_id"] is None:  # a strict int field of NomicBertConfig
        raise ConfigError("pad_token_id must be an integer (NomicBertConfig), not null")
    d = r.size("hidden_size")
    h = r.size("num_attention_heads")
    if r.given("head_dim"):
        d_k = r.size("head_dim")
    elif d < h:
        raise ConfigError(f"num_attention_heads ({h}) exceeds hidden_size ({d}): the heads would be 0 wide")
    else:
        d_k = d // h
    check_rotary_head(r, "head_dim", d_k)
    sizes = dict(
        d_model=d,
        d_ff=r.size("intermediate_size"),
        h=h,
        N=r.size("num_hidden_layers"),
        V=r.size("vocab_size"),
        L_max=r.size("max_position_embeddings"),
    )
    if d_k * h != d:
        sizes["d_k"] = d_k
    r.notes.append(f"{r.model} has no pooler (add_pooling_layer=False, its default) and no task head")
    return Spec(
        family="encoder-only",
        sizes=sizes,
        positional="rotary",
        token_types=r.size("type_vocab_size", zero_ok=True),
        embedding_norm=True,
        norm="layernorm",
        bias=False,
        norm_bias=True,
        norm_position="post",
        final_norm=False,
        ffn="swiglu",
    )


# The BERT-shaped config classes' defaults (BertConfig's sizes; RoBERTa's vocabulary where
# the class has it) and their keys (identical field lists in transformers 5.24).
_BERT_SIZES = {
    "vocab_size": 30522,
    "hidden_size": 768,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
    "add_cross_attention": False,
    "pad_token_id": 1,
}
_ROBERTA_KEYS = keys(
    "add_cross_attention attention_probs_dropout_prob bos_token_id classifier_dropout eos_token_id hidden_act "
    "hidden_dropout_prob hidden_size initializer_range intermediate_size is_decoder layer_norm_eps "
    "max_position_embeddings num_attention_heads num_hidden_layers pad_token_id tie_word_embeddings "
    "type_vocab_size use_cache vocab_size"
)
_ROBERTA_NO_EFFECT = no_effect(
    dropout="attention_probs_dropout_prob hidden_dropout_prob classifier_dropout",
    act="hidden_act",
    init="initializer_range",
    eps="layer_norm_eps",
    token="bos_token_id eos_token_id pad_token_id",
    cache="use_cache",
    mask="is_decoder",
    **{"no head": "tie_word_embeddings"},
)

CAMEMBERT = ModelType(
    model_type="camembert",
    config_class="CamembertConfig",
    model_class="CamembertModel",
    read=read_bert,
    defaults=dict(_BERT_SIZES),  # CamembertConfig: BERT's 30522 rows, pad_token_id 1
    config_keys=_ROBERTA_KEYS,
    no_param_effect=_ROBERTA_NO_EFFECT,
    pad_default=1,
    family="encoder",
)

ROBERTA_PRELAYERNORM = ModelType(
    model_type="roberta-prelayernorm",
    config_class="RobertaPreLayerNormConfig",
    model_class="RobertaPreLayerNormModel",
    read=read_bert,
    defaults={**_BERT_SIZES, "vocab_size": 50265},
    config_keys=_ROBERTA_KEYS,
    no_param_effect=_ROBERTA_NO_EFFECT,
    pad_default=1,
    family="encoder",
)

MPNET = ModelType(
    model_type="mpnet",
    config_class="MPNetConfig",
    model_class="MPNetModel",
    read=read_mpnet,
    defaults={
        "vocab_size": 30527,
        "hidden_size": 768,
        "num_hidden_layers": 12,
        "num_attention_heads": 12,
        "intermediate_size": 3072,
        "max_position_embeddings": 512,
        "relative_attention_num_buckets": 32,
    },
    config_keys=keys(
        "attention_probs_dropout_prob bos_token_id eos_token_id hidden_act hidden_dropout_prob hidden_size "
        "initializer_range intermediate_size layer_norm_eps max_position_embeddings num_attention_heads "
        "num_hidden_layers pad_token_id relative_attention_num_buckets tie_word_embeddings vocab_size"
    ),
    no_param_effect=no_effect(
        dropout="attention_probs_dropout_prob hidden_dropout_prob",
        act="hidden_act",
        init="initializer_range",
        eps="layer_norm_eps",
        token="bos_token_id eos_token_id pad_token_id",
        **{"no head": "tie_word_embeddings"},
    ),
    family="encoder",  # no pad_default: the embeddings' padding_idx is 1, not pad_token_id
)

NOMIC_BERT = ModelType(
    model_type="nomic_bert",
    config_class="NomicBertConfig",
    model_class="NomicBertModel",
    read=read_nomic_bert,
    defaults={
        "vocab_size": 30528,
        "hidden_size": 768,
        "num_hidden_layers": 12,
        "num_attention_heads": 12,
        "intermediate_size": 3072,
        "max_position_embeddings": 2048,
        "type_vocab_size": 2,
        "head_dim": None,
        "pad_token_id": 0,
    },
    config_keys=keys(
        "attention_probs_dropout_prob bos_token_id classifier_dropout eos_token_id head_dim hidden_act "
        "hidden_dropout_prob hidden_size initializer_range intermediate_size layer_norm_eps max_position_embeddings "
        "num_attention_heads num_hidden_layers pad_token_id rope_parameters type_vocab_size vocab_size"
    ),
    no_param_effect=no_effect(
        positions="max_position_embeddings",
        dropout="attention_probs_dropout_prob hidden_dropout_prob classifier_dropout",
        act="hidden_act",
        init="initializer_range",
        eps="layer_norm_eps",
        token="bos_token_id eos_token_id pad_token_id",
        rope="rope_parameters",
    ),
    pad_default=0,
    family="encoder",
)

RECORDS = (CAMEMBERT, ROBERTA_PRELAYERNORM, MPNET, NOMIC_BERT)
