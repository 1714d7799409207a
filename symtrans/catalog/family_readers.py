"""The readers of the first-round encoder, encoder-decoder and GPT-2/OPT families: each maps a
config dict (through a :class:`~symtrans.catalog.reader.Reader`) to a
:class:`~symtrans.engine.spec.Spec` as transformers 5.x builds the class counted (ALBERT, GPT-2,
BART and its seq2seq kin, Whisper, ViT, OPT, DistilBERT, ELECTRA, DeBERTa-v2).  Each raises
``ConfigError`` in one sentence naming the key at fault.  ``catalog/hf_config.py`` dispatches to
them by ``model_type``.
"""

from __future__ import annotations

from typing import Any

from symtrans.catalog.reader import (
    MISSING,
    ConfigError,
    Huge,
    Reader,
    check_divides,
    check_rotary_head,
    check_size,
    show,
)
from symtrans.catalog.type_tables import PAD_DEFAULTS
from symtrans.engine.spec import Spec

# Short names of catalog/reader.py's helpers, as the readers were written with them.
_MISSING, _Huge, _show = MISSING, Huge, show
_check_divides, _check_rotary_head = check_divides, check_rotary_head


# --------------------------------------------------------------------------- families


def _albert(r: Reader) -> Spec:
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


def _gpt2(r: Reader) -> Spec:
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


def _stack_sizes(r: Reader, d: int, attention: str) -> dict[str, int]:
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


def _bart(r: Reader) -> Spec:
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


def _check_pad_rows(r: Reader, rows: int, key: str, table: str) -> None:
    """pad_token_id must also index ``table`` (``rows`` rows), another padding_idx table."""
    pad = r.cfg["pad_token_id"] if "pad_token_id" in r.cfg else PAD_DEFAULTS[r.mt]
    if isinstance(pad, int) and not isinstance(pad, bool) and not -rows <= pad < rows:
        given = "" if "pad_token_id" in r.cfg else f", the {r.cls} default"
        raise ConfigError(
            f"pad_token_id ({pad}{given}) is not a row of {table} ({key} = {rows}): "
            f"{r.model} uses it as that table's padding_idx, which must be below {key}"
        )


def _whisper(r: Reader) -> Spec:
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


def _pair(r: Reader, key: str) -> tuple[int, int]:
    """ViTConfig's image_size or patch_size: one integer, or [height, width]."""
    k, v = r.lookup(key)
    if k is None:
        v = r.default(key, "missing", _MISSING, None)
    if isinstance(v, list) and len(v) == 2:
        return check_size(key, v[0]), check_size(key, v[1])
    if isinstance(v, list):
        raise ConfigError(f"{key} must be an integer or a list [height, width], not a list of {len(v)}")
    n = check_size(key, v)
    return n, n


def _vit(r: Reader) -> Spec:
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


def _opt(r: Reader) -> Spec:
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


# --- encoders (types-enc)


def _absolute_positions_only(r: Reader) -> None:
    """BERT-style 5.x models ignore position_embedding_type (4.x's relative_key variants)."""
    pet = r.cfg.get("position_embedding_type", "absolute")
    if pet != "absolute":
        if not isinstance(pet, str):
            raise ConfigError(f"position_embedding_type must be a string, not {_show(pet)}")
        r.notes.append(
            f"key position_embedding_type is {_show(pet)}, but {r.model} (transformers 5.x) ignores it: "
            "counted with absolute positions"
        )


def _distilbert(r: Reader) -> Spec:
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


def _electra(r: Reader) -> Spec:
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


def _getattr_int(r: Reader, key: str) -> int:
    """An integer read with getattr (any sign: only its comparison with 0 matters)."""
    v = r.cfg.get(key, _DEBERTA_GETATTR[key])
    if isinstance(v, bool) or not isinstance(v, int) or isinstance(v, _Huge):
        raise ConfigError(f"{key} must be an integer, not {_show(v)}")
    return v


def _pos_att_type(r: Reader) -> list[str]:
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


def _deberta_v2(r: Reader) -> Spec:
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
        k, span = r.lookup("max_relative_positions")
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
