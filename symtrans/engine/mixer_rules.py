"""The rules of a stack of layer kinds (``Spec.mixers``: attention, Mamba 1 and 2, Gated DeltaNet,
short convolution, FFN-only layers, DeepSeek Sparse Attention, Falcon-H1's parallel attention and
Mamba 2) that ``spec.Spec`` checks: the known kinds, each kind's count symbol and the sizes its mixer
needs, and the options that apply to each.  Plain checks on a spec's fields, importing nothing of
the engine, so ``spec.py`` calls them without a cycle; ``kinds.LayerKind`` registers each kind's
steps (Gu & Dao 2023; Dao & Gu 2024; Yang et al. 2024; Liquid AI's LFM2; DeepSeek-V3.2 §2.1).
"""

from __future__ import annotations

from typing import Any

from symtrans.base.errors import InputError

MIXER_KINDS = ("attention", "mamba", "mamba2", "gated_deltanet", "short_conv", "mlp", "moe", "dsa", "attention_mamba2")
# Gemma 4 (engine/gemma4.py): full-attention layers of their own head shape, and the layers that
# reuse an earlier layer's keys and values (sliding and full), beside the sliding ``attention``.
GEMMA4_KINDS = ("global_attention", "shared_attention", "shared_global_attention")
MIXER_KINDS += GEMMA4_KINDS
GEMMA4_SIZES = ("N_g", "N_xs", "N_xg", "d_kg", "h_kvg", "d_ple", "V_ple")
MIXER_KINDS += ("v4_swa", "v4_csa", "v4_hca")  # DeepSeek-V4's attention layers (engine/deepseek_v4.py)
MIXER_KINDS += ("zamba2_hybrid",)


def mixer_kinds(spec: Any) -> tuple[str, ...]:
    """The kinds of ``spec.mixers``, in order (``("mamba", "attention")`` for ``mamba|attention``)."""
    return tuple(spec.mixers.split("|"))


# Each kind's count symbol (``kinds.LayerKind.count``) and the sizes its mixer needs.
MIXER_COUNTS = {
    "attention": "N_attn",
    "mamba": "N_ssm",
    "mamba2": "N_ssm",
    "gated_deltanet": "N_lin",
    "short_conv": "N_conv",
    "mlp": "N_mlp",
    "moe": "N_moe",
    "attention_mamba2": "N_par",
    "dsa": "N_dsa",
    "global_attention": "N_g",
    "shared_attention": "N_xs",
    "shared_global_attention": "N_xg",
    "v4_swa": "N_attn",
    "v4_csa": "N_csa",
    "v4_hca": "N_hca",
    "zamba2_hybrid": "N_hyb",
}
_V4 = ("r_q", "d_k", "g_o", "r_o", "n_hc")
MIXER_SIZES = {
    "attention": (),
    "mamba": ("d_inner", "d_state", "d_conv", "dt_rank"),
    "mamba2": ("d_inner", "d_state", "d_conv", "h_ssm", "g_ssm", "L_chunk"),
    "gated_deltanet": ("h_lk", "h_lv", "d_lk", "d_lv", "d_conv"),
    "short_conv": ("d_conv",),
    "mlp": ("d_ff",),
    "moe": ("d_ff", "E", "k"),
    "attention_mamba2": ("d_inner", "d_state", "d_conv", "h_ssm", "g_ssm", "L_chunk"),
    "dsa": ("h_idx", "d_idx", "k_idx"),
    "global_attention": ("d_kg", "h_kvg"),
    "shared_attention": ("w",),
    "shared_global_attention": ("d_kg",),
    "v4_swa": _V4,
    "v4_csa": (*_V4, "m_csa", "h_idx", "d_idx", "k_idx"),
    "v4_hca": (*_V4, "m_hca"),
    # Zamba2: Mamba 2 plus a use of the shared block (MLP d_ff) and its adapters (rank r_adp), stored N_mem / N_adp times
    "zamba2_hybrid": ("d_inner", "d_state", "d_conv", "h_ssm", "g_ssm", "L_chunk", "d_ff", "N_mem", "N_adp", "r_adp"),
}
LAYER_KIND_SIZES = ("N_attn", "N_ssm", "N_lin", "N_conv", "N_mlp", "N_par", "d_inner", "d_state", "d_conv", "dt_rank")
LAYER_KIND_SIZES += ("h_ssm", "g_ssm", "h_lk", "h_lv", "d_lk", "d_lv", "L_chunk")
LAYER_KIND_SIZES += ("N_dsa", "h_idx", "d_idx", "k_idx", "N_g", "N_xs", "N_xg", "d_kg", "h_kvg")
LAYER_KIND_SIZES += ("N_csa", "N_hca", "m_csa", "m_hca", "g_o", "r_o", "n_hc")
LAYER_KIND_SIZES += ("N_hyb", "N_mem", "N_adp", "r_adp")
V4_KINDS = ("v4_swa", "v4_csa", "v4_hca")
# Kinds whose layers are attention (they need h): plain attention, DeepSeek Sparse Attention,
# Falcon-H1's attention beside Mamba 2, Gemma 4's and DeepSeek-V4's attention layers.
ATTENTION_KINDS = ("attention", "dsa", "attention_mamba2", *GEMMA4_KINDS, *V4_KINDS, "zamba2_hybrid")
# Kinds that hold a Mamba 2 mixer (its options and its heads' checks apply).
MAMBA2_KINDS = {"mamba2", "attention_mamba2", "zamba2_hybrid"}
# Memory and time of DeepSeek-V4's attention (Spec.check_workload)
V4_WORKLOAD_REFUSAL = (
    "time and a KV cache per token of DeepSeek-V4's attention (a sliding window of keys that are "
    "also the values, compressed entries every m_csa or m_hca tokens, the lightning indexer's top-k) are "
    "not modelled (its FLOPs are: symtrans flops --mask full, any mode; its cache per sequence "
    "is, given a sliding_window of 2 or more: memory.kv_cache_bytes); parameters are exact"
)

# The DeepSeek-V4 counts checked (tests/test_deepseek_v4.py, FlopCounterMode on transformers 5.24's
# eager model): forward, backward and training as one training step computes them, prefill and
# decode with the cache; every query scores all the keys eager attention is given.
V4_FLOPS = (("forward", "backward", "training", "prefill", "decode"), ("flops", "macs"), "full")


def v4_flops(spec: Any, mode: str, convention: str, mask: str, recompute: str = "none") -> bool:
    """True for a DeepSeek-V4 spec asked for FLOPs it models (``V4_FLOPS``: a mode of them
    under ``flops`` or ``macs`` with the full mask, no recomputation); False for any other spec.

    Raises:
        InputError: a DeepSeek-V4 spec with another mode, convention or mask, with activation
            recomputation, or asked for decode without a sliding window w (one line each).
    """
    if not set(mixer_kinds(spec)) & set(V4_KINDS):
        return False
    if mode not in V4_FLOPS[0] or convention not in V4_FLOPS[1] or mask != V4_FLOPS[2]:
        raise InputError(
            f"DeepSeek-V4's FLOPs are modelled for {', '.join(V4_FLOPS[0])} under the flops or macs convention "
            f"with --mask full (as its eager attention computes them), not mode {mode}, convention {convention}, "
            f"mask {mask}"
        )
    if recompute != "none":
        raise InputError(
            f"DeepSeek-V4's training FLOPs are modelled without activation recomputation, not --recompute "
            f"{recompute} (transformers' checkpointing does not recompute all of a layer's forward)"
        )
    if mode == "decode" and not spec.has("w"):
        raise InputError(
            "DeepSeek-V4's decode FLOPs need its sliding_window (2 or more): a decode step scores the keys "
            "its window cache keeps"
        )
    return True


def mixer_free(spec: Any) -> tuple[str, ...]:
    free = ("d_ff",) if spec.mixer_only else ()
    return free + (("h",) if not set(ATTENTION_KINDS) & set(mixer_kinds(spec)) else ())


def check_mixers(spec: Any) -> None:
    """--- layer kinds: ``mixers`` names known kinds, each once, with distinct count symbols."""
    if not isinstance(spec.mixers, str):
        raise InputError(f"mixers must be kinds joined by '|', not {spec.mixers!r}")
    names = mixer_kinds(spec)
    for name in names:
        if name not in MIXER_KINDS:
            raise InputError(f"mixers names unknown kind {name!r}; known kinds: {', '.join(MIXER_KINDS)}")
    counts = [MIXER_COUNTS[n] for n in names[1:]]
    if len(set(names)) != len(names) or len(set(counts)) != len(counts) or MIXER_COUNTS[names[0]] in counts:
        raise InputError(f"mixers={spec.mixers!r} repeats a kind or a count symbol; name each kind once")
    if names != ("attention",) and spec.family != "decoder-only":
        raise InputError(f"mixers other than attention apply to decoder-only stacks, not to a {spec.family} model")
    if spec.mixer_only and names == ("attention",):
        raise InputError("mixer_only drops the feed-forward networks of a state-space stack: set mixers too")
    if {"mlp", "moe"} & set(names) and not spec.mixer_only:
        raise InputError("mlp and moe layers are a norm and an FFN alone (Nemotron-H): set mixer_only")
    uses = set(names)
    for name in ("ssm_inner_norms", "ssm_bias"):
        if getattr(spec, name) and not uses & ({"mamba"} | MAMBA2_KINDS):
            raise InputError(f"{name} applies to Mamba mixers; mixers is {spec.mixers}")
    if (spec.ssm_out_bias is not None or not spec.ssm_gated_norm) and not uses & MAMBA2_KINDS:
        raise InputError("ssm_out_bias and ssm_gated_norm apply to Mamba 2 mixers; mixers is " + spec.mixers)
    if spec.ssm_inner_norms and "mamba" not in uses:
        raise InputError("ssm_inner_norms are Jamba's norms inside a Mamba 1 mixer: set mixers to include mamba")
    if names != ("attention",) and (spec.moe_first_dense or spec.moe_every != 1 or spec.share_layers != "none"):
        raise InputError(
            "a stack of layer kinds counts its MoE layers with N_moe (moe_first_dense, moe_every and "
            "share_layers are not modelled for it): give N_moe"
        )
    if uses & set(V4_KINDS) and (spec.mla or not uses <= set(V4_KINDS)):
        raise InputError(
            "DeepSeek-V4's attention kinds (v4_swa, v4_csa, v4_hca) make a stack of their own, without mla"
        )
    if "dsa" in uses and not spec.mla:
        raise InputError("dsa (DeepSeek Sparse Attention) indexes multi-head latent attention: set mla=true")
    if spec.attention_gate and ("attention" not in uses or spec.mla):
        raise InputError("attention_gate gates the output of (non-latent) attention layers")
    gemma4 = bool(uses & set(GEMMA4_KINDS))
    if spec.k_eq_v and "global_attention" not in uses:
        raise InputError(
            "k_eq_v drops the value map of Gemma 4's full-attention layers: mixers has no global_attention"
        )
    if spec.shared_ffn_double and not uses & {"shared_attention", "shared_global_attention"}:
        raise InputError("shared_ffn_double widens the FFN of layers that reuse keys and values: mixers has none")
    if gemma4 and (spec.mixer_only or spec.mla or spec.n_shared_experts or spec.layer_norms != "sandwich"):
        raise InputError(
            "Gemma 4's layer kinds are pre-norm layers with four norms (layer_norms=sandwich), an FFN and no MLA "
            "or shared experts"
        )
    if spec.shared_attention_adapter and "zamba2_hybrid" not in uses:
        raise InputError("shared_attention_adapter adapts the attention of Zamba2's shared block: set zamba2_hybrid")
    if spec.ffn_act_params and (spec.ffn != "mlp" or spec.mixer_only):
        raise InputError("ffn_act_params are learned scalars of a two-map MLP's activation (xIELU): set ffn=mlp")


def check_mixer_sizes(spec: Any, v: dict[str, int]) -> None:
    names = mixer_kinds(spec)
    need = {s for n in names for s in MIXER_SIZES[n]} | {MIXER_COUNTS[n] for n in names[1:]}
    # Gated DeltaNet's chunk length is optional: transformers' and fla's chunked kernels use 64
    allowed = need | ({"L_chunk"} if "gated_deltanet" in names else set())
    for name in LAYER_KIND_SIZES:
        if name in v and name not in allowed:
            raise InputError(f"{name} is a size of other layer kinds; this stack's mixers are {spec.mixers}")
    for name in sorted(need):
        if name not in v:
            raise InputError(f"mixers={spec.mixers} needs size {name}")
    if "N" in v and len(names) > 1:
        rest = sum(v.get(MIXER_COUNTS[n], 0) for n in names[1:])
        if rest >= v["N"]:
            raise InputError(
                f"the {' + '.join(MIXER_COUNTS[n] for n in names[1:])} = {rest} layers of {', '.join(names[1:])} "
                f"leave no {names[0]} layer of the N = {v['N']}"
            )
    if "dsa" in names and "r_q" not in v:  # DeepseekV32Indexer.wq_b reads the query latent (q_lora_rank)
        raise InputError("dsa needs r_q: the lightning indexer's queries are read from the query latent")
    if "dsa" in names and "d_idx" in v and "d_rope" in v and v["d_idx"] < v["d_rope"]:
        raise InputError(f"d_idx={v['d_idx']} is below d_rope={v['d_rope']}: the indexer rotates d_rope of its d_idx")
    ple = [n for n in ("d_ple", "V_ple") if n in v]
    if ple and not set(names) & set(GEMMA4_KINDS):
        raise InputError("d_ple and V_ple size Gemma 4's per-layer inputs: set mixers to Gemma 4's kinds")
    if len(ple) == 1:
        raise InputError("per-layer inputs need both d_ple (their width) and V_ple (their table's rows)")
    if set(V4_KINDS) & set(names) and "g_o" in v and "h" in v and "d_k" in v and (v["h"] * v["d_k"]) % v["g_o"]:
        raise InputError(
            f"g_o={v['g_o']} must divide h*d_k={v['h'] * v['d_k']}: the grouped output projection splits the "
            "heads' outputs into g_o equal groups"
        )
    mamba2 = bool(MAMBA2_KINDS & set(names))
    if mamba2 and "d_inner" in v and "h_ssm" in v and v["d_inner"] % v["h_ssm"]:
        raise InputError(f"h_ssm={v['h_ssm']} must divide d_inner={v['d_inner']} (Mamba 2 heads of equal width)")
    if mamba2 and "h_ssm" in v and "g_ssm" in v and v["h_ssm"] % v["g_ssm"]:
        raise InputError(f"g_ssm={v['g_ssm']} must divide h_ssm={v['h_ssm']} (heads share B and C by group)")
    if "gated_deltanet" in names and "h_lk" in v and "h_lv" in v and v["h_lv"] % v["h_lk"]:
        raise InputError(f"h_lk={v['h_lk']} must divide h_lv={v['h_lv']} (value heads share key heads)")
