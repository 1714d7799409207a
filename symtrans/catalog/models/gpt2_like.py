"""GPT-2-like decoders with learned positions or ALiBi: gpt_neo (global and local layers),
gpt_bigcode (multi-query attention), bloom and mpt (ALiBi, no position table), as transformers
5.x builds them.  Checked on the meta device by tests/test_model_types.py.
"""

from __future__ import annotations

from symtrans.catalog.models.record import ModelType, keys, no_effect
from symtrans.catalog.reader import MISSING, ConfigError, Reader, check_divides, check_size, show
from symtrans.engine.spec import Spec

_NEO_KINDS = ("global", "local")


def _gpt_neo_layers(r: Reader, n_layers: int) -> tuple[str, list[str]]:
    """GPT-Neo's per-layer attention kinds ("global" or "local"), as GPTNeoConfig makes them, and
    the key they come from:
    ``attention_layers`` when the file gives it (set after ``__post_init__``, so it wins),
    else ``attention_types`` expanded (``[[kinds, repeat], ...]``: kinds repeated in turn).

    Raises:
        ConfigError: a malformed list, a kind other than global/local (GPTNeoBlock refuses
            it), or a number of entries other than num_layers (GPTNeoConfig refuses it).
    """
    if "attention_layers" in r.cfg:
        key, layers = "attention_layers", r.cfg["attention_layers"]
        if not isinstance(layers, list) or any(not isinstance(k, str) for k in layers):
            raise ConfigError('attention_layers must be a list of "global" and "local"')
    else:
        key, types = "attention_types", r.cfg.get("attention_types")
        if types is None:
            types = r.default("attention_types", "missing", MISSING, '[[["global", "local"], 12]]')
        shape = 'attention_types must be a list of [["global" | "local", ...], repeat] pairs'
        if not isinstance(types, list):
            raise ConfigError(f"{shape}, not {show(types)}")
        layers = []
        for item in types:
            ok = isinstance(item, list) and len(item) == 2 and isinstance(item[0], list)
            if not ok or isinstance(item[1], bool) or not isinstance(item[1], int) or item[1] < 0:
                raise ConfigError(shape)
            if any(not isinstance(k, str) for k in item[0]):
                raise ConfigError(shape)
            layers += item[0] * item[1]
    bad = next((k for k in layers if k not in _NEO_KINDS), None)
    if bad is not None:
        raise ConfigError(f'{key} holds {show(bad)}: GPTNeoBlock builds only "global" and "local" attention layers')
    if len(layers) != n_layers:
        raise ConfigError(
            f"{key} makes {len(layers)} attention layers for num_layers {n_layers}, which GPTNeoConfig refuses"
        )
    return key, layers


def _gpt_neo(r: Reader) -> Spec:
    d = r.size("hidden_size")
    h = r.size("num_heads")
    check_divides("hidden_size", d, "num_heads", h, "GPTNeoSelfAttention")
    r.head_dim_must_match("hidden_size", d, "num_heads", h)
    n = r.size("num_layers")
    sizes = dict(
        d_model=d,
        d_ff=r.size("intermediate_size", 4 * d, f"4 * hidden_size = {4 * d}", nullable=True),
        h=h,
        N=n,
        V=r.size("vocab_size"),
        L_max=r.size("max_position_embeddings"),
    )
    key, layers = _gpt_neo_layers(r, n)
    local = layers.count("local")
    if "window_size" in r.cfg and not local:  # a strict int field, used by no layer here
        check_size("window_size", r.cfg["window_size"], zero_ok=True)
    if local:
        w = r.size("window_size")
        sizes["w"] = w
        if local != n:
            sizes["N_w"] = local
            r.notes.append(
                f"{key} makes {local} of {n} layers local (window_size {w}) and the rest global (N_w = {local}): "
                "FLOPs and the KV cache count the window on the local layers (transformers' GPTNeo masks a full "
                "score square and keeps every position in its cache)"
            )
        else:
            r.notes.append(
                f"{key} makes every layer local: each query attends to the last {w} positions "
                "(window_size), counted as a sliding window in FLOPs and the KV cache (transformers' GPTNeo "
                "masks a full score square and keeps every position in its cache)"
            )
    r.notes.append("GPTNeoSelfAttention: q_proj, k_proj and v_proj have no bias, out_proj has one")
    return Spec(
        family="decoder-only",
        sizes=sizes,
        positional="learned",
        norm="layernorm",
        bias=True,
        qkv_bias=False,
        norm_position="pre",
        final_norm=True,
        tie_output=r.flag("tie_word_embeddings"),
    )


def _gpt_bigcode(r: Reader) -> Spec:
    d = r.size("n_embd")
    h = r.size("n_head")
    check_divides("n_embd", d, "n_head", h, "GPTBigCodeAttention")
    r.head_dim_must_match("n_embd", d, "n_head", h)
    mq = r.flag("multi_query")
    if r.flag("add_cross_attention", note=False):
        if mq:
            raise ConfigError("add_cross_attention with multi_query: GPTBigCode has no multi-query cross-attention")
        raise ConfigError(
            f"add_cross_attention is true: cross-attention layers in {r.model} are not modelled by symtrans"
        )
    sizes = dict(
        d_model=d,
        d_ff=r.size("n_inner", 4 * d, f"4 * n_embd = {4 * d}", nullable=True),
        h=h,
        N=r.size("n_layer"),
        V=r.size("vocab_size"),
        L_max=r.size("n_positions"),
    )
    if mq:
        r.notes.append("multi_query: one key and one value head shared by all heads (c_attn is d x (d + 2 d_k))")
        if h > 1:
            sizes["h_kv"] = 1
    return Spec(
        family="decoder-only",
        sizes=sizes,
        positional="learned",
        norm="layernorm",
        bias=True,
        norm_position="pre",
        final_norm=True,
        tie_output=r.flag("tie_word_embeddings"),
    )


def _bloom(r: Reader) -> Spec:
    if "n_embed" in r.cfg:  # BloomConfig.__post_init__ pops the legacy n_embed over hidden_size
        d = check_size("n_embed", r.cfg["n_embed"])
        if "hidden_size" in r.cfg:
            other = check_size("hidden_size", r.cfg["hidden_size"])
            if other != d:
                r.notes.append(f"n_embed ({d}) overrides hidden_size ({other}), as BloomConfig does")
        d_key = "n_embed"
    else:
        d, d_key = r.size("hidden_size"), "hidden_size"
    h = r.size("n_head")
    check_divides(d_key, d, "n_head", h, "BloomAttention")
    r.head_dim_must_match(d_key, d, "n_head", h)
    r.notes.append("BloomMLP is 4 x hidden_size wide (BloomConfig has no intermediate size)")
    return Spec(
        family="decoder-only",
        sizes=dict(d_model=d, d_ff=4 * d, h=h, N=r.size("n_layer"), V=r.size("vocab_size")),
        positional="alibi",
        embedding_norm=True,
        norm="layernorm",
        bias=True,
        norm_position="pre",
        final_norm=True,
        tie_output=r.flag("tie_word_embeddings"),
    )


def _mpt(r: Reader) -> Spec:
    d = r.size("d_model")
    h = r.size("n_heads")
    check_divides("d_model", d, "n_heads", h, "MptAttention")
    r.head_dim_must_match("d_model", d, "n_heads", h)
    if "expansion_ratio" in r.cfg and r.cfg["expansion_ratio"] != 4:
        r.notes.append(
            f"key expansion_ratio is {show(r.cfg['expansion_ratio'])}, but {r.model} (transformers 5.x) ignores it: "
            "counted as implemented, a 4 x d_model MLP"
        )
    r.ignored_flag("no_bias", True, "without biases")
    r.ignored_flag("learned_pos_emb", False, "with ALiBi and no position table")
    attn = r.cfg.get("attn_config")
    if attn is not None and not isinstance(attn, dict):
        raise ConfigError(f"attn_config must be an object or null, not {show(attn)}")
    if isinstance(attn, dict) and attn.get("qk_ln"):
        r.notes.append(f"attn_config.qk_ln is true, but {r.model} (transformers 5.x) ignores it: no QK norms counted")
    r.notes.append("MptForCausalLM: bias-free linear maps, LayerNorms without a bias, ALiBi (no position table)")
    return Spec(
        family="decoder-only",
        sizes=dict(
            d_model=d, d_ff=4 * d, h=h, N=r.size("n_layers"), V=r.size("vocab_size"), L_max=r.size("max_seq_len")
        ),
        positional="alibi",
        norm="layernorm",
        norm_bias=False,
        bias=False,
        norm_position="pre",
        final_norm=True,
        tie_output=r.flag("tie_word_embeddings"),
    )


GPT_NEO = ModelType(
    model_type="gpt_neo",
    config_class="GPTNeoConfig",
    model_class="GPTNeoForCausalLM",
    read=_gpt_neo,
    defaults={
        "vocab_size": 50257,
        "max_position_embeddings": 2048,
        "hidden_size": 2048,
        "num_layers": 24,
        "num_heads": 16,
        "intermediate_size": None,
        "attention_types": [[["global", "local"], 12]],
        "window_size": 256,
        "tie_word_embeddings": True,
    },
    config_keys=keys(
        "activation_function attention_dropout attention_layers attention_types bos_token_id "
        "classifier_dropout embed_dropout eos_token_id hidden_size initializer_range intermediate_size "
        "layer_norm_epsilon max_position_embeddings num_attention_heads num_heads num_hidden_layers num_layers "
        "pad_token_id resid_dropout tie_word_embeddings use_cache vocab_size window_size"
    ),
    no_param_effect=no_effect(
        act="activation_function",
        dropout="attention_dropout classifier_dropout embed_dropout resid_dropout",
        token="bos_token_id eos_token_id pad_token_id",
        init="initializer_range",
        eps="layer_norm_epsilon",
        cache="use_cache",
        window="attention_layers attention_types window_size",
    ),
    aliases={"num_attention_heads": "num_heads", "num_hidden_layers": "num_layers"},
    family="gpt2_like",
)


GPT_BIGCODE = ModelType(
    model_type="gpt_bigcode",
    config_class="GPTBigCodeConfig",
    model_class="GPTBigCodeForCausalLM",
    read=_gpt_bigcode,
    defaults={
        "vocab_size": 50257,
        "n_positions": 1024,
        "n_embd": 768,
        "n_layer": 12,
        "n_head": 12,
        "n_inner": None,
        "multi_query": True,
        "add_cross_attention": False,
        "tie_word_embeddings": True,
    },
    config_keys=keys(
        "activation_function add_cross_attention attention_softmax_in_fp32 attn_pdrop bos_token_id "
        "embd_pdrop eos_token_id hidden_size initializer_range layer_norm_epsilon max_position_embeddings "
        "multi_query n_embd n_head n_inner n_layer n_positions num_attention_heads num_hidden_layers "
        "num_key_value_heads pad_token_id "
        "resid_pdrop scale_attention_softmax_in_fp32 scale_attn_weights tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        act="activation_function",
        dropout="attn_pdrop embd_pdrop resid_pdrop",
        token="bos_token_id eos_token_id pad_token_id",
        init="initializer_range",
        eps="layer_norm_epsilon",
        scale="scale_attn_weights",
        precision="attention_softmax_in_fp32 scale_attention_softmax_in_fp32",
        cache="use_cache",
        derived="num_key_value_heads",
    ),
    aliases={
        "hidden_size": "n_embd",
        "max_position_embeddings": "n_positions",
        "num_attention_heads": "n_head",
        "num_hidden_layers": "n_layer",
    },
    family="gpt2_like",
)


BLOOM = ModelType(
    model_type="bloom",
    config_class="BloomConfig",
    model_class="BloomForCausalLM",
    read=_bloom,
    defaults={
        "vocab_size": 250880,
        "hidden_size": 64,
        "n_layer": 2,
        "n_head": 8,
        "tie_word_embeddings": True,
    },
    config_keys=keys(
        "apply_residual_connection_post_layernorm attention_dropout bos_token_id eos_token_id "
        "hidden_dropout hidden_size initializer_range layer_norm_epsilon n_head n_layer num_attention_heads "
        "num_hidden_layers pad_token_id pretraining_tp slow_but_exact tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        dropout="attention_dropout hidden_dropout",
        token="bos_token_id eos_token_id pad_token_id",
        init="initializer_range",
        eps="layer_norm_epsilon",
        residual="apply_residual_connection_post_layernorm",
        tp="pretraining_tp slow_but_exact",
        cache="use_cache",
    ),
    aliases={"num_hidden_layers": "n_layer", "num_attention_heads": "n_head"},
    family="gpt2_like",
)


MPT = ModelType(
    model_type="mpt",
    config_class="MptConfig",
    model_class="MptForCausalLM",
    read=_mpt,
    defaults={
        "vocab_size": 50368,
        "d_model": 2048,
        "n_heads": 16,
        "n_layers": 24,
        "max_seq_len": 2048,
        "tie_word_embeddings": True,
    },
    config_keys=keys(
        "attn_config bos_token_id d_model emb_pdrop embedding_fraction eos_token_id expansion_ratio "
        "hidden_size init_device initializer_range layer_norm_epsilon learned_pos_emb logit_scale max_seq_len "
        "n_heads n_layers no_bias norm_type num_attention_heads num_hidden_layers pad_token_id resid_pdrop "
        "tie_word_embeddings use_cache vocab_size"
    ),
    no_param_effect=no_effect(
        dropout="emb_pdrop resid_pdrop",
        token="bos_token_id eos_token_id pad_token_id",
        init="initializer_range init_device",
        eps="layer_norm_epsilon",
        cache="use_cache",
        alibi="max_seq_len",
        **{
            "mpt ignores": "attn_config embedding_fraction expansion_ratio learned_pos_emb logit_scale no_bias "
            "norm_type"
        },
    ),
    aliases={"num_attention_heads": "n_heads", "hidden_size": "d_model", "num_hidden_layers": "n_layers"},
    family="gpt2_like",
)


RECORDS = (
    GPT_NEO,
    GPT_BIGCODE,
    BLOOM,
    MPT,
)
