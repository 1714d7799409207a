"""Typed layer kinds (issue 20): hybrid stacks of attention, Mamba 1, Mamba 2 and Gated
DeltaNet layers, against transformers 5.x.

Oracles, all independent of symtrans:
* parameters: ``sum(p.numel() for p in model.parameters())`` of transformers'
  ``MambaForCausalLM``, ``Mamba2ForCausalLM``, ``JambaForCausalLM`` (Jamba-like: Mamba 1 +
  attention layers, MoE every other layer) and ``Qwen3NextForCausalLM`` (3 Gated DeltaNet :
  1 full-attention, MoE with a gated shared expert), built on the meta device;
* FLOPs: ``torch.utils.flop_counter.FlopCounterMode`` on an eager CPU forward
  (``use_cache=False``; eager attention and experts; no mamba_ssm / causal_conv1d / fla
  kernels installed, so transformers runs its reference PyTorch scans).  What it counts of
  the recurrences is stated in ``engine/ssm.py`` and ``engine/deltanet.py``: Mamba 1's
  per-token read-out matmul, Mamba 2's chunked-SSD einsums, the chunked delta rule's
  matmuls (not its triangular solves);
* cache: the tensors transformers' cache keeps after a real prefill with
  ``use_cache=True``: key/value tensors of the attention layers (bytes per token x tokens)
  and the convolution and recurrent states of the others (bytes per sequence).

Configs are random tiny draws (hypothesis; 20 in dev, 200 under CI=true for the
parameter checks, fewer for the forwards, which run real weights) plus one fixed example
per type written out.
"""

from __future__ import annotations

import pytest
from conftest import require

require("transformers")
require("hypothesis")
import torch  # noqa: E402
import transformers  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from symtrans.accounting.memory import kv_cache_bytes, memory_terms  # noqa: E402
from symtrans.analysis.walk import walk  # noqa: E402
from symtrans.engine.architectures import FORWARD, build  # noqa: E402
from symtrans.engine.evaluate import exact  # noqa: E402
from symtrans.engine.kinds import LayerKind  # noqa: E402
from symtrans.engine.roles import Block  # noqa: E402
from symtrans.engine.spec import MIXER_KINDS, Spec  # noqa: E402
from symtrans.engine.symbols import symbol  # noqa: E402

transformers.logging.set_verbosity_error()
# Meta-device builds cost ~0.1 s each: the profile's count (20 dev, 200 CI), at most 60 per type
# (issue 21 asks 50) to keep the file near a minute under CI; real-weight forwards: 10 per type.
PARAMS = settings(max_examples=min(settings.default.max_examples, 60))
FORWARDS = settings(max_examples=10)
PRE = dict(family="decoder-only", norm="rmsnorm", norm_position="pre", final_norm=True, bias=False)


def _meta_params(model_cls, config) -> int:
    with torch.device("meta"):
        model = model_cls(config)
    return sum(p.numel() for p in model.parameters())


def _real(model_cls, config):
    torch.manual_seed(0)
    return model_cls(config).eval()


def _flops(model, batch: int, seq: int) -> int:
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        model(input_ids=torch.ones(batch, seq, dtype=torch.long), use_cache=False)
    return counter.get_total_flops()


def _cache_bytes(model, batch: int, seq: int) -> tuple[int, int]:
    """(key/value bytes, state bytes) of the cache a real prefill of ``seq`` tokens keeps."""
    with torch.no_grad():
        out = model(input_ids=torch.ones(batch, seq, dtype=torch.long), use_cache=True)
    cache = out.past_key_values
    kv = state = 0
    for layer in cache.layers:
        for t in (getattr(layer, "keys", None), getattr(layer, "values", None)):
            if t is not None and t.numel():
                kv += t.numel() * t.element_size()
        for states in (getattr(layer, "conv_states", {}), getattr(layer, "recurrent_states", {})):
            state += sum(t.numel() * t.element_size() for t in states.values() if t is not None)
    return kv, state


def _check(model_cls, config, spec: Spec, batch: int, seq: int, forward: bool = True) -> None:
    tree = build(spec, FORWARD)
    assert exact(tree.params, spec.values) == _meta_params(model_cls, config)
    if not forward:
        return
    model = _real(model_cls, config)
    at = {**spec.values, "B": batch, "L": seq}
    counted = _flops(model, batch, seq)
    assert exact(tree.flops, at) == counted
    kv, state = _cache_bytes(model, batch, seq)
    fp32 = 4  # bytes per element of the float32 model's cache
    assert batch * seq * exact(tree.cache, spec.values) * fp32 == kv
    assert batch * exact(tree.state, spec.values) * fp32 == state
    # memory's cache bytes sum the same tree: K/V of B x L tokens plus B constant states
    assert exact(kv_cache_bytes(spec, batch, seq, "fp32"), spec.values) == kv + state
    # memory --inference: the constant state per sequence on its own line, from the same cache tensors
    terms = memory_terms(spec, dtype="fp32", kv_dtype="fp32", batch=batch, seq_len=seq, mode="inference")
    assert batch * exact(terms["state_bytes_per_sequence"], spec.values) == state
    # the shape walk (analysis/walk_hybrid.py, written from the same forwards): its FLOPs against the
    # counter, its cache and state steps against the same tensors (issue 21 Build 3)
    w = walk(spec)
    assert exact(w.flops, at) == counted
    if spec.mixers != "attention":  # a draw of attention layers only walks as before, without kept steps
        assert batch * seq * exact(w.kept("cache"), spec.values) * fp32 == kv
        assert batch * exact(w.kept("state"), spec.values) * fp32 == state


def _mixers(counts: dict[str, int]) -> tuple[str, dict[str, int]]:
    """``Spec.mixers`` and the count sizes for layer counts by kind (first kind: the rest)."""
    present = [k for k, n in counts.items() if n]
    names = {"attention": "N_attn", "mamba": "N_ssm", "gated_deltanet": "N_lin", "short_conv": "N_conv"}
    return "|".join(present), {names[k]: counts[k] for k in present[1:]}


# --- Mamba 1 (Gu & Dao 2023) -------------------------------------------------------------


def _mamba(d, ds, dc, r, expand, n, v, bias, conv_bias, tie):
    config = transformers.MambaConfig(
        vocab_size=v, hidden_size=d, state_size=ds, num_hidden_layers=n, expand=expand, conv_kernel=dc,
        time_step_rank=r, use_bias=bias, use_conv_bias=conv_bias, tie_word_embeddings=tie,
    )  # fmt: skip
    sizes = {"d_model": d, "V": v, "N": n, "d_inner": expand * d, "d_state": ds, "d_conv": dc, "dt_rank": r}
    spec = Spec(
        sizes=sizes, mixers="mamba", mixer_only=True, positional="none", tie_output=tie, ssm_bias=bias,
        ssm_conv_bias=conv_bias, **PRE,
    )  # fmt: skip
    return transformers.MambaForCausalLM, config, spec


def test_mamba_fixed_example():
    # d_model 16, d_inner 32, d_state 4, d_conv 3, dt_rank 3, N 2, V 50, biases on, tied head.
    # Per layer: in_proj 16*64 + 64, conv 32*3 + 32, x_proj 32*(3 + 8), dt_proj 3*32 + 32,
    # A_log 32*4, D 32, out_proj 32*16 + 16, norm 16 = 2,400; x 2 + embedding 800 + norm_f 16.
    cls, config, spec = _mamba(16, 4, 3, 3, 2, 2, 50, True, True, True)
    assert exact(build(spec).params, spec.values) == 2 * 2400 + 50 * 16 + 16 == 5616
    _check(cls, config, spec, 2, 7)


SMALL = st.integers(2, 12)


@PARAMS
@given(d=SMALL, ds=st.integers(1, 6), dc=st.integers(1, 4), r=st.integers(1, 5), expand=st.integers(1, 3),
       n=st.integers(1, 3), v=st.integers(8, 40), bias=st.booleans(), conv_bias=st.booleans(), tie=st.booleans())  # fmt: skip
def test_mamba_random_params(d, ds, dc, r, expand, n, v, bias, conv_bias, tie):
    _check(*_mamba(d, ds, dc, r, expand, n, v, bias, conv_bias, tie), 1, 1, forward=False)


@FORWARDS
@given(d=SMALL, ds=st.integers(1, 4), dc=st.integers(1, 4), r=st.integers(1, 4), n=st.integers(1, 2),
       seq=st.integers(1, 9), batch=st.integers(1, 2), bias=st.booleans())  # fmt: skip
def test_mamba_random_flops_and_cache(d, ds, dc, r, n, seq, batch, bias):
    _check(*_mamba(d, ds, dc, r, 2, n, 30, bias, True, False), batch, seq)


# --- Mamba 2 (Dao & Gu 2024) -------------------------------------------------------------


def _mamba2(heads, head_dim, expand, groups, ds, dc, chunk, n, v, bias, conv_bias, tie):
    d = heads * head_dim // expand
    config = transformers.Mamba2Config(
        vocab_size=v, hidden_size=d, state_size=ds, num_hidden_layers=n, expand=expand, conv_kernel=dc,
        num_heads=heads, head_dim=head_dim, n_groups=groups, chunk_size=chunk, use_bias=bias,
        use_conv_bias=conv_bias, tie_word_embeddings=tie,
    )  # fmt: skip
    sizes = {"d_model": d, "V": v, "N": n, "d_inner": heads * head_dim, "d_state": ds, "d_conv": dc}
    sizes |= {"h_ssm": heads, "g_ssm": groups, "L_chunk": chunk}
    spec = Spec(
        sizes=sizes, mixers="mamba2", mixer_only=True, positional="none", tie_output=tie, ssm_bias=bias,
        ssm_conv_bias=conv_bias, **PRE,
    )  # fmt: skip
    return transformers.Mamba2ForCausalLM, config, spec


def test_mamba2_fixed_example():
    # 4 heads of 8 (d_inner 32, expand 2, d_model 16), 2 groups, d_state 4, d_conv 3, N 2, V 50,
    # untied.  Per layer: in_proj 16*(64 + 16 + 4), conv (32 + 16)*3 + 48, dt_bias, A_log, D
    # 4 each, gated norm 32, out_proj 32*16, norm 16 = 2,108; x 2 + 2 x 800 + norm_f 16.
    cls, config, spec = _mamba2(4, 8, 2, 2, 4, 3, 8, 2, 50, False, True, False)
    assert exact(build(spec).params, spec.values) == 2 * 2108 + 2 * 800 + 16 == 5832
    _check(cls, config, spec, 2, 20)  # 3 chunks of 8, the last padded


@st.composite
def _mamba2_draw(draw, forward=False):
    groups = draw(st.integers(1, 3))
    heads = groups * draw(st.integers(1, 3))
    head_dim = 2 * draw(st.integers(1, 4))
    expand = draw(st.sampled_from([1, 2]))
    # d_state >= 2 in the forwards: torch.einsum computes a contraction over a dimension of size 1 as
    # an element-wise product, which FlopCounterMode does not count (the engine counts the products)
    return (heads, head_dim, expand, groups, draw(st.integers(2 if forward else 1, 5)), draw(st.integers(1, 4)),
            draw(st.integers(2, 8)), draw(st.integers(1, 2 if forward else 3)), draw(st.integers(8, 40)),
            draw(st.booleans()), draw(st.booleans()), draw(st.booleans()))  # fmt: skip


@PARAMS
@given(args=_mamba2_draw())
def test_mamba2_random_params(args):
    _check(*_mamba2(*args), 1, 1, forward=False)


@FORWARDS
@given(args=_mamba2_draw(forward=True), seq=st.integers(1, 19), batch=st.integers(1, 2))
def test_mamba2_random_flops_and_cache(args, seq, batch):
    _check(*_mamba2(*args), batch, seq)


# --- Jamba-like: Mamba 1 + attention, MoE every other layer (Lieber et al. 2024) ---------


def _jamba(d, ff, h, kv_heads, n, a_period, a_offset, e_period, e_offset, experts, k, ds, dc, r, v, tie):
    config = transformers.JambaConfig(
        vocab_size=v, hidden_size=d, intermediate_size=ff, num_hidden_layers=n, num_attention_heads=h,
        num_key_value_heads=kv_heads, attn_layer_period=a_period, attn_layer_offset=a_offset,
        expert_layer_period=e_period, expert_layer_offset=e_offset, num_experts=experts, num_experts_per_tok=k,
        mamba_d_state=ds, mamba_d_conv=dc, mamba_expand=2, mamba_dt_rank=r, mamba_conv_bias=True,
        mamba_proj_bias=False, use_mamba_kernels=False, tie_word_embeddings=tie, attn_implementation="eager",
        experts_implementation="eager",
    )  # fmt: skip
    n_attn = sum(i % a_period == a_offset for i in range(n))
    n_moe = sum(i % e_period == e_offset for i in range(n)) if experts > 1 else 0
    mixers, counts = _mixers({"mamba": n - n_attn, "attention": n_attn})
    sizes = {"d_model": d, "d_ff": ff, "h": h, "h_kv": kv_heads, "V": v, "N": n} | counts
    if n_attn < n:
        sizes |= {"d_inner": 2 * d, "d_state": ds, "d_conv": dc, "dt_rank": r}
    if n_moe:
        sizes |= {"E": experts, "k": k} | ({"N_moe": n_moe} if n_moe < n else {})
    spec = Spec(
        sizes=sizes, mixers=mixers, positional="none", tie_output=tie, ffn="swiglu",
        ssm_inner_norms=n_attn < n, **PRE,
    )  # fmt: skip
    return transformers.JambaForCausalLM, config, spec


def test_jamba_like_fixed_example():
    # 4 layers: Mamba, attention, Mamba, attention (period 2, offset 1); MoE on layers 0 and 2
    # (period 2, offset 0), so 2 Mamba + 2 attention layers and 2 MoE + 2 dense FFNs.
    cls, config, spec = _jamba(16, 24, 4, 2, 4, 2, 1, 2, 0, 4, 2, 4, 3, 3, 50, False)
    assert spec.mixers == "mamba|attention" and spec.values["N_attn"] == 2 and spec.values["N_moe"] == 2
    tree = build(spec)
    layers = {c.name: c.multiplicity for c in tree.child("decoder").children if c.block == Block.LAYER}
    assert layers == {"Mamba layer": symbol("N") - symbol("N_attn"), "attention layer": symbol("N_attn")}
    _check(cls, config, spec, 2, 9)


@st.composite
def _jamba_draw(draw, forward=False):
    h = draw(st.integers(1, 4))
    kv = draw(st.sampled_from([x for x in range(1, h + 1) if h % x == 0]))
    d = h * 2 * draw(st.integers(1, 3))
    a_period, e_period = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    experts = draw(st.integers(1, 4))
    n = draw(st.integers(1, 3 if forward else 6))
    # a forward with a cache needs an attention layer: transformers' Jamba asks one for the length
    a_offset = draw(st.integers(0, min(a_period, n) - 1 if forward else a_period - 1))
    return (d, draw(st.integers(2, 16)), h, kv, n, a_period, a_offset, e_period, draw(st.integers(0, e_period - 1)), experts,
            draw(st.integers(1, experts)), draw(st.integers(1, 4)), draw(st.integers(1, 4)),
            draw(st.integers(1, 4)), draw(st.integers(8, 40)), draw(st.booleans()))  # fmt: skip


@PARAMS
@given(args=_jamba_draw())
def test_jamba_random_params(args):
    _check(*_jamba(*args), 1, 1, forward=False)


@FORWARDS
@given(args=_jamba_draw(forward=True), seq=st.integers(1, 8), batch=st.integers(1, 2))
def test_jamba_random_flops_and_cache(args, seq, batch):
    _check(*_jamba(*args), batch, seq)


# --- Qwen3-Next-like: 3 Gated DeltaNet : 1 gated attention, MoE with a shared expert ------


def _qwen3_next(d, ff, h, kv_heads, d_k, types, mlp_only, hk, hv_per_k, dk, dv, dc, experts, k, ff_e, ff_s, v, tie):
    n = len(types)
    config = transformers.Qwen3NextConfig(
        vocab_size=v, hidden_size=d, intermediate_size=ff, num_hidden_layers=n, num_attention_heads=h,
        num_key_value_heads=kv_heads, head_dim=d_k, layer_types=types, mlp_only_layers=mlp_only,
        decoder_sparse_step=1, linear_num_key_heads=hk, linear_num_value_heads=hk * hv_per_k,
        linear_key_head_dim=dk, linear_value_head_dim=dv, linear_conv_kernel_dim=dc, num_experts=experts,
        num_experts_per_tok=k, moe_intermediate_size=ff_e, shared_expert_intermediate_size=ff_s,
        tie_word_embeddings=tie, attn_implementation="eager", experts_implementation="eager",
    )  # fmt: skip
    n_attn = types.count("full_attention")
    n_moe = n - len(set(mlp_only))
    mixers, counts = _mixers({"gated_deltanet": n - n_attn, "attention": n_attn})
    sizes = {"d_model": d, "d_ff": ff, "h": h, "h_kv": kv_heads, "d_k": d_k, "V": v, "N": n} | counts
    if n_attn < n:
        sizes |= {"h_lk": hk, "h_lv": hk * hv_per_k, "d_lk": dk, "d_lv": dv, "d_conv": dc}
    moe = {}
    if n_moe:
        sizes |= {"E": experts, "k": k, "d_ff_e": ff_e, "d_ff_s": ff_s} | ({"N_moe": n_moe} if n_moe < n else {})
        moe = dict(n_shared_experts=1, shared_expert_gate=True)
    spec = Spec(
        sizes=sizes, mixers=mixers, positional="rotary", tie_output=tie, ffn="swiglu", qk_norm="head",
        attention_gate=n_attn > 0, **moe, **PRE,
    )  # fmt: skip
    return transformers.Qwen3NextForCausalLM, config, spec


def test_qwen3_next_like_fixed_example():
    # Qwen3-Next's pattern, 3 linear-attention layers then 1 full-attention layer, all MoE.
    types = ["linear_attention"] * 3 + ["full_attention"]
    cls, config, spec = _qwen3_next(16, 24, 4, 2, 8, types, [], 2, 2, 6, 5, 3, 4, 2, 12, 20, 50, False)
    assert spec.mixers == "gated_deltanet|attention" and spec.values["N_attn"] == 1
    _check(cls, config, spec, 2, 70)  # two chunks of 64, the second padded


@st.composite
def _qwen3_next_draw(draw, forward=False):
    h = draw(st.integers(1, 4))
    kv = draw(st.sampled_from([x for x in range(1, h + 1) if h % x == 0]))
    n = draw(st.integers(1, 3 if forward else 5))
    types = draw(st.lists(st.sampled_from(["linear_attention", "full_attention"]), min_size=n, max_size=n))
    if forward and "full_attention" not in types:  # a cached forward needs one (transformers asks it the length)
        types[-1] = "full_attention"
    mlp_only = draw(st.lists(st.integers(0, n - 1), max_size=n, unique=True))
    experts = draw(st.integers(1, 4))
    return (2 * h * draw(st.integers(1, 3)), draw(st.integers(2, 16)), h, kv, 2 * draw(st.integers(1, 4)), types,
            mlp_only, draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 6)),
            draw(st.integers(1, 6)), draw(st.integers(1, 4)), experts, draw(st.integers(1, experts)),
            draw(st.integers(1, 12)), draw(st.integers(1, 12)), draw(st.integers(8, 40)), draw(st.booleans()))  # fmt: skip


@PARAMS
@given(args=_qwen3_next_draw())
def test_qwen3_next_random_params(args):
    _check(*_qwen3_next(*args), 1, 1, forward=False)


@FORWARDS
@given(args=_qwen3_next_draw(forward=True), seq=st.integers(1, 9), batch=st.integers(1, 2))
def test_qwen3_next_random_flops_and_cache(args, seq, batch):
    _check(*_qwen3_next(*args), batch, seq)


# --- LFM2-like: gated short convolutions + attention (Liquid AI 2025) ------------------------


def _lfm2(d, ff, h, kv_heads, types, dc, bias, v, tie):
    n = len(types)
    config = transformers.Lfm2Config(
        vocab_size=v, hidden_size=d, intermediate_size=ff, num_hidden_layers=n, num_attention_heads=h,
        num_key_value_heads=kv_heads, layer_types=types, conv_L_cache=dc, conv_bias=bias,
        block_auto_adjust_ff_dim=False, tie_word_embeddings=tie, attn_implementation="eager",
    )  # fmt: skip
    n_attn = types.count("full_attention")
    mixers, counts = _mixers({"short_conv": n - n_attn, "attention": n_attn})
    sizes = {"d_model": d, "d_ff": ff, "h": h, "h_kv": kv_heads, "V": v, "N": n} | counts
    if n_attn < n:
        sizes |= {"d_conv": dc}
    spec = Spec(
        sizes=sizes, mixers=mixers, positional="rotary", tie_output=tie, ffn="swiglu", qk_norm="head",
        ssm_conv_bias=bias, **PRE,
    )  # fmt: skip
    return transformers.Lfm2ForCausalLM, config, spec


def test_lfm2_like_fixed_example():
    # conv, conv, attention, conv: 3 short convolutions (in_proj 16 x 48, conv 16 x 3, out_proj
    # 16 x 16: 1,072 each without biases) and one attention layer.
    types = ["conv", "conv", "full_attention", "conv"]
    cls, config, spec = _lfm2(16, 24, 4, 2, types, 3, False, 50, True)
    assert spec.mixers == "short_conv|attention" and spec.values["N_attn"] == 1
    mixer = build(spec).child("decoder").children[0].children[1]
    assert exact(mixer.params, spec.values) == 16 * 48 + 16 * 3 + 16 * 16 == 1072
    _check(cls, config, spec, 2, 9)


@st.composite
def _lfm2_draw(draw, forward=False):
    h = draw(st.integers(1, 4))
    kv = draw(st.sampled_from([x for x in range(1, h + 1) if h % x == 0]))
    n = draw(st.integers(1, 3 if forward else 5))
    types = draw(st.lists(st.sampled_from(["conv", "full_attention"]), min_size=n, max_size=n))
    if forward and "full_attention" not in types:  # a cached forward needs one (transformers asks it the length)
        types[-1] = "full_attention"
    return (2 * h * draw(st.integers(1, 3)), draw(st.integers(2, 16)), h, kv, types, draw(st.integers(1, 4)),
            draw(st.booleans()), draw(st.integers(8, 40)), draw(st.booleans()))  # fmt: skip


@PARAMS
@given(args=_lfm2_draw())
def test_lfm2_random_params(args):
    _check(*_lfm2(*args), 1, 1, forward=False)


@FORWARDS
@given(args=_lfm2_draw(forward=True), seq=st.integers(1, 9), batch=st.integers(1, 2))
def test_lfm2_random_flops_and_cache(args, seq, batch):
    _check(*_lfm2(*args), batch, seq)


# --- the registry and the closed forms ---------------------------------------------------


def test_every_spec_kind_is_registered_once():
    import symtrans.engine.stack  # noqa: F401  (imports every kind module)

    assert tuple(sorted(LayerKind.REGISTRY)) == tuple(sorted(MIXER_KINDS))


def test_a_pattern_closes_with_one_count_per_kind():
    """The closed form is in N, N_attn and N_moe (no loop over layers): at N = 1000 it equals
    transformers' count at N = 4 plus 498 times the growth per 2 layers that transformers
    shows from N = 4 to N = 6 (period 2: one Mamba + one attention layer, one MoE + one dense)."""
    args = (16, 24, 4, 2, 4, 2, 1, 2, 0, 4, 2, 4, 3, 3, 50, False)
    cls, config4, spec = _jamba(*args)
    _, config6, _ = _jamba(*args[:4], 6, *args[5:])
    p4, p6 = _meta_params(cls, config4), _meta_params(cls, config6)
    tree = build(spec)
    assert {"N", "N_attn", "N_moe"} <= {str(s) for s in tree.params.free_symbols}
    big = spec.replace(sizes={"N": 1000, "N_attn": 500, "N_moe": 500})
    assert exact(tree.params, big.values) == p4 + 498 * (p6 - p4)


def test_refusals_name_the_problem():
    from symtrans.base.errors import InputError

    base = {"d_model": 8, "V": 10, "N": 2, "d_inner": 16, "d_state": 2, "d_conv": 2, "dt_rank": 1}
    with pytest.raises(InputError, match="unknown kind 'mamba3'"):
        Spec(sizes=base, mixers="mamba3", mixer_only=True)
    with pytest.raises(InputError, match="needs size d_state"):
        Spec(sizes={k: v for k, v in base.items() if k != "d_state"}, mixers="mamba", mixer_only=True)
    with pytest.raises(InputError, match="leave no mamba layer"):
        Spec(sizes=base | {"N_attn": 2, "h": 2, "d_ff": 8}, mixers="mamba|attention")
    with pytest.raises(InputError, match="give N_moe"):
        Spec(sizes=base | {"N_attn": 1, "h": 2, "d_ff": 8, "E": 2, "k": 1}, mixers="mamba|attention", moe_every=2)
    with pytest.raises(InputError, match="h_ssm"):
        Spec(sizes=base | {"h_ssm": 2}, mixers="mamba", mixer_only=True)


def test_walk_traces_a_stack_of_layer_kinds_and_refuses_its_decode_step():
    """Issue 21 Build 3: the shape walk traces a Jamba draw (analysis/walk_hybrid.py, from
    transformers' forwards); its FLOPs sum to the Cost tree's forward under the full and the causal
    mask (tests/test_kv_cache_real.py checks what it keeps against the real cache).  A decode step
    of a stack of layer kinds is not traced: refused in one line."""
    from symtrans.analysis.walk import walk
    from symtrans.base.errors import InputError
    from symtrans.engine.architectures import Workload, build
    from symtrans.engine.evaluate import exact

    _, _, spec = _jamba(16, 24, 4, 2, 4, 2, 1, 2, 0, 4, 2, 4, 3, 3, 50, False)
    v = {**spec.values, "B": 2, "L": 5}
    for mask in ("full", "causal"):
        wl = Workload(mask=mask)
        assert exact(walk(spec, wl).flops, v) == exact(build(spec, wl).flops, v)
    with pytest.raises(InputError, match="not a decode step") as refused:
        walk(spec, Workload(seq=1, context=5))
    assert "\n" not in str(refused.value)
