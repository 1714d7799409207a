"""Hypothesis strategies for random valid Specs (shared by the property tests)."""

from hypothesis import strategies as st

from symtrans.engine.spec import Spec

FAMILIES = ("encoder-decoder", "encoder-only", "decoder-only")


@st.composite
def specs(draw, family=None, moe=None):
    """A random valid Spec across families and options (small sizes, exact arithmetic)."""
    fam = family or draw(st.sampled_from(FAMILIES))
    h = draw(st.integers(1, 8))
    d_k = draw(st.integers(1, 16))
    explicit_dk = draw(st.booleans())
    d_model = h * d_k if not explicit_dk else draw(st.integers(1, 128))
    sizes = dict(
        d_model=d_model,
        d_ff=draw(st.integers(1, 256)),
        h=h,
        V=draw(st.integers(1, 1000)),
        L_max=draw(st.integers(1, 512)),
        L=draw(st.integers(1, 512)),
    )
    if explicit_dk:
        sizes["d_k"] = d_k
    if fam == "encoder-decoder" and draw(st.booleans()):
        sizes["N_enc"] = draw(st.integers(1, 6))
        sizes["N_dec"] = draw(st.integers(1, 6))
    else:
        sizes["N"] = draw(st.integers(1, 6))
    if draw(st.booleans()):
        sizes["h_kv"] = draw(st.sampled_from([x for x in range(1, h + 1) if h % x == 0]))
    use_moe = draw(st.booleans()) if moe is None else moe
    if use_moe:
        e = draw(st.integers(1, 8))
        sizes["E"] = e
        sizes["k"] = draw(st.integers(1, e))
    positional = draw(st.sampled_from(("sinusoidal", "learned", "none", "rotary", "alibi", "relative")))
    return Spec(
        family=fam,
        sizes=sizes,
        bias=draw(st.booleans()),
        attention_bias=draw(st.sampled_from((None, True, False))),
        ffn_bias=draw(st.sampled_from((None, True, False))),
        norm=draw(st.sampled_from(("layernorm", "rmsnorm", "none"))),
        norm_bias=draw(st.booleans()),
        norm_position=draw(st.sampled_from(("pre", "post"))),
        final_norm=draw(st.booleans()),
        embedding_norm=draw(st.booleans()),
        positional=positional,
        position_offset=draw(st.integers(0, 2)),
        tie_output=draw(st.booleans()),
        head_bias=draw(st.booleans()),
        share_embeddings=draw(st.booleans()),
        token_types=draw(st.integers(0, 3)),
        pooler=fam == "encoder-only" and draw(st.booleans()),  # BERT's heads: encoder-only (spec._validate)
        mlm_head=fam == "encoder-only" and draw(st.booleans()),
        ffn=draw(st.sampled_from(("mlp", "swiglu", "geglu"))),
        qk_norm=draw(st.booleans()),
    )


@st.composite
def variant_specs(draw, family=None):
    """A random valid Spec from ``specs`` with the variant options drawn on top: a local
    window w, global tokens (encoders only, at most L), cross-layer sharing, the MoE layout
    (first dense layers, MoE every k-th, shared experts) and a low-rank FFN."""
    spec = draw(specs(family=family))
    v = spec.values
    sizes, options = {}, {}
    if draw(st.booleans()):
        sizes["w"] = draw(st.integers(1, 64))
        if spec.family != "decoder-only" and draw(st.booleans()):
            options["global_tokens"] = draw(st.integers(0, v["L"]))
    options["share_layers"] = draw(st.sampled_from(("none", "all", "attention", "ffn")))
    if spec.is_moe:
        if spec.family != "encoder-only":  # the layout lays out decoder layers
            n = v.get("N", v.get("N_dec"))
            first = draw(st.integers(0, n - 1))
            options["moe_first_dense"] = first
            options["moe_every"] = draw(st.integers(1, n - first))
        options["n_shared_experts"] = draw(st.integers(0, 2))
    if draw(st.integers(0, 3)) == 0:
        sizes["r"] = draw(st.integers(1, 32))
    return spec.replace(sizes=sizes, **options)
