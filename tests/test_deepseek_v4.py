"""DeepSeek-V4 (deepseek_v4): the published DeepSeek-V4-Flash config (tests/fixtures/configs,
source in SOURCES.md) against transformers 5.24's DeepseekV4ForCausalLM built on the meta device,
the same figure by hand from the tensor shapes of modeling_deepseek_v4.py, the one-line
refusals of other FLOPs, of a KV cache per token and of deploy, and the cache per sequence
(memory.kv_cache_bytes) against the tensors transformers' own cache holds after real forwards of
tiny configs, and by hand for DeepSeek-V4-Flash.  FLOPs against FlopCounterMode on transformers
5.24's eager model: forwards, training steps (loss.backward(): the indexer gets no gradient),
prefills and decode steps with the cache; and by hand for DeepSeek-V4-Flash.

The random draws (hypothesis), the key audit and the FLOPs refusal of the audit base are in
tests/test_model_types.py; the re-save in tests/test_resave.py.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symtrans.accounting.flops import flops_expr
from symtrans.accounting.memory import kv_cache_bytes, kv_cache_per_token
from symtrans.base.errors import InputError
from symtrans.catalog.hf_config import spec_from_config
from symtrans.cli import main as cli
from symtrans.engine.architectures import build
from symtrans.engine.evaluate import exact

FLASH = "deepseek-v4-flash-shaped"
FLASH_TOTAL = 284_332_230_231


def test_flash_matches_transformers(hf, read_fixture):
    """DeepseekV4ForCausalLM from the published file on the meta device: 284,332,230,231."""
    cfg = read_fixture(FLASH)
    model = hf.build(cfg["model_type"], cfg)
    assert type(model).__name__ == "DeepseekV4ForCausalLM"
    assert hf.count(model) == FLASH_TOTAL
    spec, _ = spec_from_config(cfg, FLASH)
    assert exact(build(spec).params, spec.values) == FLASH_TOTAL


def test_flash_by_hand(read_fixture):
    """The tensors of modeling_deepseek_v4.py (transformers 5.24) at DeepSeek-V4-Flash's sizes: d 4096,
    h 64 heads of 512, q_lora_rank 1024, o_groups 8 of o_lora_rank 1024, hc_mult 4, 256 experts of
    2048, indexer 64 heads of 128; compress_ratios [0, 0, 4, 128, ...] cut to 43 layers: 2 sliding,
    21 CSA (rate 4), 20 HCA (rate 128)."""
    d, h, hd, rq, g, ro, n, E, f, V = 4096, 64, 512, 1024, 8, 1024, 4, 256, 2048, 129280
    attention = (
        d * rq + rq  # q_a_proj, q_a_norm
        + rq * h * hd  # q_b_proj
        + d * hd + hd  # kv_proj, kv_norm
        + (g * ro) * (h * hd // g)  # o_a_proj (DeepseekV4GroupedLinear weight)
        + g * ro * d  # o_b_proj
        + h  # sinks
    )  # fmt: skip
    csa = 2 * d * 2 * hd + 4 * 2 * hd + hd  # kv_proj, gate_proj, position_bias, kv_norm (two series)
    indexer = 2 * d * 2 * 128 + 4 * 2 * 128 + 128 + rq * 64 * 128 + d * 64  # + q_b_proj, weights_proj
    hca = 2 * d * hd + 128 * hd + hd
    moe = E * d + E * 2 * f * d + E * d * f + 3 * d * f  # router, gate_up_proj, down_proj, shared MLP
    hc = (2 + n) * n * n * d + (2 + n) * n + 3  # fn, base, scale
    layer = attention + moe + 2 * hc + 2 * d  # attn_hc, ffn_hc, input and post-attention norms
    head = n * n * d + n + 1  # hc_head
    total = 43 * layer + 21 * (csa + indexer) + 20 * hca + 2 * V * d + d + head  # embeddings, lm_head, norm
    assert total == FLASH_TOTAL
    # per token: 6 of 256 experts (gate_up_proj and down_proj 3 x 4096 x 2048 each)
    active = total - 43 * (E - 6) * 3 * d * f
    spec, _ = spec_from_config(read_fixture(FLASH), FLASH)
    assert exact(build(spec).active_params, spec.values) == active == 13_799_622_231


def test_kv_per_token_is_refused_in_one_line(read_fixture):
    """A KV cache per token does not exist for this cache: one line, not a guess."""
    spec, _ = spec_from_config(read_fixture(FLASH), FLASH)
    with pytest.raises(
        InputError,
        match=r"not modelled \(its FLOPs are: .*; its cache per sequence is, .*: memory.kv_cache_bytes\); parameters are exact",
    ) as refused:
        kv_cache_per_token(spec)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    "mode, convention, mask, recompute",
    [("training", "flops", "causal", "none"), ("training", "flops", "full", "full"),
     ("training", "macs", "full", "selective"), ("forward", "flops", "causal", "none"),
     ("forward", "flops", "half", "none"), ("forward", "chinchilla", "full", "none"),
     ("backward", "all-ops", "full", "none")],
)  # fmt: skip
def test_unverified_flops_are_refused_in_one_line(read_fixture, mode, convention, mask, recompute):
    """Only what FlopCounterMode checks below: flops/macs, the full mask, no recomputation."""
    spec, _ = spec_from_config(read_fixture(FLASH), FLASH)
    with pytest.raises(InputError, match="DeepSeek-V4's (training )?FLOPs are modelled") as refused:
        flops_expr(spec, mode, convention, mask, recompute)
    assert "\n" not in str(refused.value)


def test_decode_without_a_window_is_refused_in_one_line(read_fixture):
    from symtrans.accounting.flops import decode_expr

    spec, _ = spec_from_config({**_tiny(TINY[0][0], 6, 4, 8), "sliding_window": None}, "tiny deepseek_v4")
    with pytest.raises(InputError, match="decode FLOPs need its sliding_window") as refused:
        decode_expr(spec)
    assert "\n" not in str(refused.value)
    with pytest.raises(InputError, match="modelled for forward, backward, training, prefill, decode"):
        decode_expr(spec_from_config(read_fixture(FLASH), FLASH)[0], "chinchilla")


@pytest.mark.parametrize(
    "args", [["--mode", "training", "--recompute", "full"], ["--mask", "causal"], ["--convention", "chinchilla"]]
)
def test_cli_refuses_unverified_flops_with_exit_2(config_dir, capsys, args):
    assert cli.main(["flops", str(config_dir / f"{FLASH}.json"), *args]) == 2
    out, err = capsys.readouterr()
    assert not out and err.count("\n") == 1 and "FLOPs are modelled" in err


def test_cli_refuses_time_and_deploy_with_exit_2(config_dir, capsys):
    """time needs a KV cache per token; deploy sizes vLLM's paged cache in tokens: one line each."""
    for args, says in (
        (["time", "--accelerator", "h100-sxm"], "not modelled"),
        (["deploy", "--accelerator", "h100-sxm"], "vLLM's layout of it is not modelled"),
    ):
        assert cli.main([args[0], str(config_dir / f"{FLASH}.json"), *args[1:]]) == 2, args
        out, err = capsys.readouterr()
        assert not out and err.count("\n") == 1 and says in err, args


def test_flash_cache_by_hand(read_fixture):
    """DeepSeek-V4-Flash's cache per sequence at bf16, from the shapes of DeepseekV4CSACache,
    DeepseekV4HCACache and DynamicSlidingWindowLayer (modeling_deepseek_v4.py, cache_utils.py,
    transformers 5.24): 2 sliding layers keep keys and values of d_k 512 for min(T, w - 1 = 127)
    positions; 21 CSA layers (m 4) keep one shared K=V window, floor(T/4) entries of 512 + 128
    (compressor, indexer), T mod 4 open tokens' kv and gate of 2 x (2 x 512 + 2 x 128), and from
    T >= 4 on the overlap (4 x 640 at bf16, its gate at fp32); 20 HCA layers (m 128) one window,
    floor(T/128) entries of 512 and T mod 128 open tokens' kv and gate of 512."""
    spec, _ = spec_from_config(read_fixture(FLASH), FLASH)
    b = 2

    def by_hand(t: int) -> int:
        window = min(t, 127)
        swa = 2 * (2 * 512 * window * b)
        csa = 21 * (512 * window * b + 640 * (t // 4) * b + 2 * 2 * 640 * (t % 4) * b + (t >= 4) * 4 * 640 * (b + 4))
        hca = 20 * (512 * window * b + 512 * (t // 128) * b + 2 * 512 * (t % 128) * b)
        return swa + csa + hca

    # 1M tokens (max_position_embeddings): 520,192 + 7,049,484,288 + 170,373,120 bytes
    assert by_hand(1_048_576) == 7_220_377_600
    for t in (1, 3, 4, 127, 128, 1000, 4099, 1_048_576):
        assert exact(kv_cache_bytes(spec, 1, t, "bf16"), spec.values) == by_hand(t), t
    assert exact(kv_cache_bytes(spec, 3, 1000, "bf16"), spec.values) == 3 * by_hand(1000)


def _tiny(layer_types, w, m_csa, m_hca) -> dict:
    """A DeepSeek-V4 small enough to run on CPU, with one layer of each kind listed."""
    return {
        "model_type": "deepseek_v4", "vocab_size": 97, "hidden_size": 32, "moe_intermediate_size": 16,
        "num_hidden_layers": len(layer_types), "layer_types": list(layer_types), "num_attention_heads": 4,
        "head_dim": 16, "qk_rope_head_dim": 4, "q_lora_rank": 24, "n_routed_experts": 4, "num_experts_per_tok": 2,
        "hc_mult": 2, "o_groups": 2, "o_lora_rank": 8, "index_n_heads": 2, "index_head_dim": 8, "index_topk": 3,
        "sliding_window": w, "max_position_embeddings": 256,
        "compress_rates": {"compressed_sparse_attention": m_csa, "heavily_compressed_attention": m_hca},
    }  # fmt: skip


def _real_cache_bytes(cache) -> int:
    """Bytes of every tensor transformers' cache holds, each storage once: a CSA or HCA layer's
    values are its keys' tensor; its compressor and indexer states are dicts of tensors."""
    seen: dict[tuple, int] = {}
    for layer in cache.layers:
        tensors = [getattr(layer, "keys", None), getattr(layer, "values", None)]
        for name in ("buffer_kv", "buffer_gate", "compressed_kv", "overlap_kv", "overlap_gate"):
            tensors += list(getattr(layer, name, {}).values())
        for t in tensors:
            if t is not None and t.numel():
                seen[(t.data_ptr(), tuple(t.shape), t.dtype)] = t.numel() * t.element_size()
    return sum(seen.values())


TINY = (
    (("sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"), 6, 4, 8),
    (("heavily_compressed_attention", "compressed_sparse_attention", "compressed_sparse_attention"), 3, 3, 5),
)


@pytest.mark.parametrize("dtype", ["bf16", "fp32", "fp16"])
@pytest.mark.parametrize("tiny", range(len(TINY)))
def test_cache_equals_transformers_cache(dtype, tiny):
    """Prefills of T tokens, T below, at and past the window and the rates and not a multiple of
    them, then decode steps: the bytes of the cache's tensors equal kv_cache_bytes at every T."""
    from conftest import require

    require("transformers")
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = _tiny(*TINY[tiny])
    spec, _ = spec_from_config(cfg, "tiny deepseek_v4")
    torch_dtype = {"bf16": torch.bfloat16, "fp32": torch.float32, "fp16": torch.float16}[dtype]
    config = AutoConfig.for_model(**cfg)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, attn_implementation="eager", dtype=torch_dtype).eval()
    batch = 2
    for t in (1, 2, 4, 5, 8, 9, 15, 17, 30):
        with torch.no_grad():
            out = model(torch.randint(0, 97, (batch, t)), use_cache=True)
        expected = exact(kv_cache_bytes(spec, batch, t, dtype), spec.values)
        assert _real_cache_bytes(out.past_key_values) == expected, (dtype, tiny, t)
    cache = out.past_key_values
    for step in range(1, 12):  # a state that depends on T only, whether it came in one prefill or not
        with torch.no_grad():
            cache = model(torch.randint(0, 97, (batch, 1)), cache=cache, use_cache=True).past_key_values
        assert _real_cache_bytes(cache) == exact(kv_cache_bytes(spec, batch, 30 + step, dtype), spec.values), step


@settings(max_examples=25, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"]),
                   min_size=1, max_size=4),
    w=st.integers(2, 12), m_csa=st.integers(1, 7), m_hca=st.integers(1, 9), t=st.integers(1, 40),
)  # fmt: skip
def test_cache_equals_transformers_cache_drawn(kinds, w, m_csa, m_hca, t):
    """Random layer patterns, windows, rates and lengths, fp32: the real cache's bytes."""
    from conftest import require

    require("transformers")
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = _tiny(kinds, w, m_csa, m_hca)
    spec, _ = spec_from_config(cfg, "tiny deepseek_v4")
    model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**cfg), attn_implementation="eager").eval()
    with torch.no_grad():
        out = model(torch.randint(0, 97, (1, t)), use_cache=True)
    assert _real_cache_bytes(out.past_key_values) == exact(kv_cache_bytes(spec, 1, t, "fp32"), spec.values)


@pytest.mark.parametrize(
    "keys",
    [
        {"head_dim": 6, "partial_rotary_factor": 1.0, "index_head_dim": 2},  # CI's draw: 6 rotary features, 2
        {"head_dim": 16, "qk_rope_head_dim": 12, "index_head_dim": 8},  # the legacy key: 12 against 8
    ],
)
def test_an_index_head_narrower_than_the_rotary_part_is_refused(keys):
    """transformers builds such a model but its forward fails where the indexer rotates the trailing
    rotary features of its heads (a CI draw of stop 32's successor found it); symtrans refuses in one line."""
    from conftest import require

    require("transformers")
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from symtrans.catalog.hf_config import ConfigError

    cfg = {**_tiny(["compressed_sparse_attention"], 6, 2, 4), **keys}
    if "partial_rotary_factor" in keys:
        del cfg["qk_rope_head_dim"]  # the explicit factor alone
    model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**cfg), attn_implementation="eager")
    with pytest.raises(RuntimeError), torch.no_grad():
        model(input_ids=torch.ones(1, 5, dtype=torch.long), use_cache=False)
    with pytest.raises(ConfigError, match=r"index_head_dim \(\d+\) is narrower than the rotary part") as refused:
        spec_from_config(cfg, "tiny deepseek_v4")
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("bad", [{"sliding_window": None}, {"sliding_window": 1}])
def test_cache_needs_a_window(bad):
    cfg = {**_tiny(TINY[0][0], 6, 4, 8), **bad}
    spec, _ = spec_from_config(cfg, "tiny deepseek_v4")
    with pytest.raises(InputError, match="sliding_window of 2 or more"):
        kv_cache_bytes(spec, 1, 10, "bf16")


def test_cache_refuses_a_quantized_dtype(read_fixture):
    spec, _ = spec_from_config(read_fixture(FLASH), FLASH)
    with pytest.raises(InputError, match="model's dtype") as refused:
        kv_cache_bytes(spec, 1, 10, "fp8")
    assert "\n" not in str(refused.value)


# --- forward FLOPs: FlopCounterMode on an eager forward (torch.utils.flop_counter; matrix products
# only, 2 per multiply-accumulate), the convention symtrans's flops/full counts.


def _counted_forward(cfg: dict, batch: int, t: int, use_cache: bool) -> int:
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.manual_seed(0)
    config = AutoConfig.for_model(**cfg)
    model = AutoModelForCausalLM.from_config(config, attn_implementation="eager", experts_implementation="eager")
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        model.eval()(torch.randint(0, cfg["vocab_size"], (batch, t)), use_cache=use_cache)
    return counter.get_total_flops()


def _symtrans_forward(cfg: dict, batch: int, t: int, convention: str = "flops") -> int:
    spec, _ = spec_from_config(cfg, "tiny deepseek_v4")
    return exact(flops_expr(spec, "forward", convention, "full"), {**spec.values, "B": batch, "L": t})


@pytest.mark.parametrize("use_cache", [False, True])
@pytest.mark.parametrize("tiny", range(len(TINY)))
def test_forward_flops_equal_flop_counter(tiny, use_cache):
    """Eager forwards of the tiny configs (rates 4/8 and 3/5) at T below, at and past the rates and
    the window, multiples of them or not, with and without a cache: FlopCounterMode = symtrans."""
    from conftest import require

    require("transformers")
    cfg = _tiny(*TINY[tiny])
    for batch, t in ((1, 1), (2, 3), (2, 5), (1, 8), (1, 9), (2, 17), (1, 30)):
        assert _counted_forward(cfg, batch, t, use_cache) == _symtrans_forward(cfg, batch, t), (batch, t)
    assert 2 * _symtrans_forward(cfg, 2, 17, "macs") == _symtrans_forward(cfg, 2, 17)


@settings(max_examples=25, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"]),
                   min_size=1, max_size=3),
    m_csa=st.integers(1, 7), m_hca=st.integers(1, 9), t=st.integers(1, 24), batch=st.integers(1, 2),
    hc=st.integers(1, 3), heads=st.sampled_from([(2, 1), (4, 2), (4, 4)]), experts=st.sampled_from([(4, 1), (3, 3)]),
)  # fmt: skip
def test_forward_flops_equal_flop_counter_drawn(kinds, m_csa, m_hca, t, batch, hc, heads, experts):
    """Random layer patterns, rates, lengths, streams, heads/output groups and experts: FlopCounterMode."""
    from conftest import require

    require("transformers")
    cfg = {**_tiny(kinds, 4, m_csa, m_hca), "hc_mult": hc, "num_attention_heads": heads[0], "o_groups": heads[1]}
    cfg.update(n_routed_experts=experts[0], num_experts_per_tok=experts[1])
    assert _counted_forward(cfg, batch, t, False) == _symtrans_forward(cfg, batch, t)


def test_flash_forward_flops_by_hand(read_fixture):
    """DeepSeek-V4-Flash's forward at B = 1, T = 4097 (not a multiple of 4 or 128: 1024 CSA entries,
    32 HCA entries), written out from the matrix products of modeling_deepseek_v4.py (transformers
    5.24) as eager computes them: every query scores all T window keys plus the compressed entries."""
    d, h, dk, rq, g, ro, n, E, k, f, V = 4096, 64, 512, 1024, 8, 1024, 4, 256, 6, 2048, 129280
    hi, di, t = 64, 128, 4097
    hc = 2 * t * (2 + n) * n * n * d + 2 * t * n * n * d  # fn (F.linear), comb^T @ streams
    attention = 2 * t * (d * rq + rq * h * dk + d * dk + h * dk * ro + g * ro * d)  # q_a, q_b, kv, o_a, o_b
    moe = 2 * t * d * E + 2 * t * k * 3 * d * f + 2 * t * 3 * d * f  # router, 6 experts, shared MLP
    layer = 2 * hc + attention + moe

    def scores(entries: int) -> int:  # Q K^T and scores V over T + entries keys
        return 2 * 2 * h * t * (t + entries) * dk

    csa = 2 * 2 * t * d * 2 * dk + 2 * 2 * t * d * 2 * di + 2 * t * rq * hi * di + 2 * t * d * hi
    csa += 2 * t * hi * di * (t // 4) + scores(t // 4)  # compressor, indexer maps, index scores
    hca = 2 * 2 * t * d * dk + scores(t // 128)
    total = 43 * layer + 2 * scores(0) + 21 * csa + 20 * hca + 2 * t * n * n * d + 2 * t * d * V  # hc_head, lm_head
    spec, _ = spec_from_config(read_fixture(FLASH), FLASH)
    assert exact(flops_expr(spec, "forward"), {**spec.values, "B": 1, "L": t}) == total


# --- training, prefill and decode: FlopCounterMode on transformers 5.24's eager DeepseekV4ForCausalLM.
# A training step is model(ids, labels=ids).loss.backward() in train mode; its backward differentiates
# every product the loss reaches (2 x its forward) but the lightning indexer (DeepseekV4Indexer returns
# integer top-k indices) and, before their first window of m tokens closes, the CSA/HCA compressors'
# kv_proj and gate_proj (their forward returns new_zeros, cut from the maps).


def _model(cfg: dict):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.manual_seed(0)
    config = AutoConfig.for_model(**cfg)
    return AutoModelForCausalLM.from_config(config, attn_implementation="eager", experts_implementation="eager")


def _counted(run) -> tuple[int, object]:
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with counter:
        out = run()
    return counter.get_total_flops(), out


def _counted_training(cfg: dict, batch: int, t: int, use_cache: bool) -> tuple[int, int]:
    """(forward, backward) FLOPs of one training step: the loss's forward, then loss.backward()."""
    import torch

    model = _model(cfg).train()
    ids = torch.randint(0, cfg["vocab_size"], (batch, t))
    forward, loss = _counted(lambda: model(ids, labels=ids, use_cache=use_cache).loss)
    backward, _ = _counted(loss.backward)
    return forward, backward


def _symtrans(cfg: dict, mode: str, **values) -> int:
    from symtrans.accounting.flops import decode_expr, evaluate, prefill_expr

    spec, _ = spec_from_config(cfg, "tiny deepseek_v4")
    expr = {"prefill": prefill_expr, "decode": decode_expr}.get(mode) or (lambda s: flops_expr(s, mode))
    return int(evaluate(expr(spec), {**spec.values, **values}))


@pytest.mark.parametrize("use_cache", [False, True])
@pytest.mark.parametrize("tiny", range(len(TINY)))
def test_training_flops_equal_flop_counter(tiny, use_cache):
    """Training steps of the tiny configs (rates 4/8 and 3/5) at T below, at and past the rates and
    the window, multiples of them or not: forward, backward and training = FlopCounterMode."""
    from conftest import require

    require("transformers")
    cfg = _tiny(*TINY[tiny])
    for batch, t in ((1, 1), (2, 3), (2, 4), (1, 5), (2, 7), (1, 8), (2, 9), (2, 17), (1, 30)):
        forward, backward = _counted_training(cfg, batch, t, use_cache)
        assert forward == _symtrans(cfg, "forward", B=batch, L=t), (batch, t)
        assert backward == _symtrans(cfg, "backward", B=batch, L=t), (batch, t)
        assert forward + backward == _symtrans(cfg, "training", B=batch, L=t), (batch, t)


def test_training_is_not_three_forwards_by_hand():
    """One CSA layer (TINY's sizes: d 32, head_dim 16, rate 4; indexer 2 heads of 8 from r_q 24), B 2:
    FlopCounterMode's training step falls short of 3 x forward by twice what gets no gradient.
    T = 3 (no window closed): the CSA compressor's kv_proj and gate_proj (d -> 2 x 16), the indexer's
    (d -> 2 x 8), its q_b_proj (24 -> 2 x 8) and weights_proj (d -> 2); T = 9: the indexer alone, its
    scores against floor(9/4) = 2 entries included."""
    from conftest import require

    require("transformers")
    cfg = _tiny(("compressed_sparse_attention",), 6, 4, 8)
    d, hd, di, hi, rq, b = 32, 16, 8, 2, 24, 2

    def indexer(t: int) -> int:
        return (
            2 * 2 * b * t * d * 2 * di + 2 * b * t * rq * hi * di + 2 * b * t * d * hi + 2 * b * hi * t * (t // 4) * di
        )

    compressor = 2 * 2 * b * 3 * d * 2 * hd
    assert 2 * (compressor + indexer(3)) == 84_480 and 2 * indexer(9) == 108_288
    for t, short in ((3, 84_480), (9, 108_288)):
        forward, backward = _counted_training(cfg, b, t, False)
        assert 3 * forward - (forward + backward) == short, t
        assert _symtrans(cfg, "training", B=b, L=t) == forward + backward


def _counted_generation(cfg: dict, batch: int, prompt: int, steps: int) -> tuple[int, list[int]]:
    """FLOPs of a prefill of ``prompt`` tokens with the cache (logits of the last one, as generate
    asks: logits_to_keep=1), then of each of ``steps`` one-token decode steps against that cache."""
    import torch

    model = _model(cfg).eval()
    with torch.no_grad():
        ids = torch.randint(0, cfg["vocab_size"], (batch, prompt))
        prefill, out = _counted(lambda: model(ids, use_cache=True, logits_to_keep=1))
        decode = []
        for _ in range(steps):
            new = torch.randint(0, cfg["vocab_size"], (batch, 1))
            flops, out = _counted(lambda: model(new, cache=out.past_key_values, use_cache=True))
            decode.append(flops)
    return prefill, decode


@pytest.mark.parametrize("tiny", range(len(TINY)))
def test_prefill_and_decode_flops_equal_flop_counter(tiny):
    """Prefills of P tokens around the rates (4/8, 3/5) and the window (6, 3), then 4 decode steps:
    prefill_expr = the prefill's count, decode_expr at T_gen = g = the first g steps' counts."""
    from conftest import require

    require("transformers")
    cfg = _tiny(*TINY[tiny])
    for prompt in (1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17):
        prefill, decode = _counted_generation(cfg, 2, prompt, 4)
        assert prefill == _symtrans(cfg, "prefill", B=2, L_pre=prompt), prompt
        for g in range(1, 5):
            assert sum(decode[:g]) == _symtrans(cfg, "decode", B=2, L_pre=prompt, T_gen=g), (prompt, g)


@settings(max_examples=25, deadline=None)
@given(data=st.data(), t=st.integers(1, 12), batch=st.integers(1, 2), steps=st.integers(1, 3))
def test_training_and_decode_flops_drawn(data, t, batch, steps):
    """hf_reference.deepseek_v4's draws (layer schedules, rates 1-6, hash layers, shared experts,
    biases, tying, streams) with a window of 2-9: a training step of T tokens, then a prefill of T
    and decode steps, each = FlopCounterMode."""
    from conftest import require

    require("transformers")
    from hf_reference import STRATEGIES

    cfg = {**data.draw(STRATEGIES["deepseek_v4"], label="config"), "sliding_window": data.draw(st.integers(2, 9))}
    cfg["max_position_embeddings"] = 64
    forward, backward = _counted_training(cfg, batch, t, False)
    assert forward + backward == _symtrans(cfg, "training", B=batch, L=t)
    prefill, decode = _counted_generation(cfg, batch, t, steps)
    assert prefill == _symtrans(cfg, "prefill", B=batch, L_pre=t)
    assert sum(decode) == _symtrans(cfg, "decode", B=batch, L_pre=t, T_gen=steps)


def _flash_pass(t: int, keys: int, c: int) -> dict[str, int]:
    """DeepSeek-V4-Flash at B = 1: t new tokens whose queries each score ``keys`` window keys and the
    floor(c/m) compressed entries of c tokens (m 4 for the 21 CSA layers, 128 for the 20 HCA), from
    the matrix products of modeling_deepseek_v4.py (transformers 5.24), split into the products a
    training step differentiates (body, head), the compressors' maps and the lightning indexer."""
    d, h, dk, rq, g, ro, n, E, k, f, V = 4096, 64, 512, 1024, 8, 1024, 4, 256, 6, 2048, 129280
    hi, di = 64, 128
    hc = 2 * t * (2 + n) * n * n * d + 2 * t * n * n * d  # fn (F.linear), comb^T @ streams
    attention = 2 * t * (d * rq + rq * h * dk + d * dk + h * dk * ro + g * ro * d)  # q_a, q_b, kv, o_a, o_b
    moe = 2 * t * d * E + 2 * t * k * 3 * d * f + 2 * t * 3 * d * f  # router, 6 experts, shared MLP

    def scores(entries: int) -> int:  # Q K^T and scores V
        return 2 * 2 * h * t * (keys + entries) * dk

    body = 43 * (2 * hc + attention + moe) + 2 * scores(0) + 21 * scores(c // 4) + 20 * scores(c // 128)
    body += 2 * t * n * n * d  # hc_head
    indexer = 2 * 2 * t * d * 2 * di + 2 * t * rq * hi * di + 2 * t * d * hi + 2 * t * hi * di * (c // 4)
    return dict(
        body=body,
        head=2 * t * d * V,
        csa=21 * 2 * 2 * t * d * 2 * dk,
        hca=20 * 2 * 2 * t * d * dk,
        indexer=21 * indexer,
    )


def test_flash_training_flops_by_hand(read_fixture):
    """DeepSeek-V4-Flash's training step at B = 1: forward + 2 x (what gets a gradient): at T = 3 no
    compressor window has closed, at T = 100 the CSA windows (m 4) have and the HCA ones (m 128) not,
    at T = 4097 both; the indexer never."""
    spec, _ = spec_from_config(read_fixture(FLASH), FLASH)
    for t in (3, 100, 4097):
        p = _flash_pass(t, t, t)
        forward = sum(p.values())
        graded = p["body"] + p["head"] + (t >= 4) * p["csa"] + (t >= 128) * p["hca"]
        assert exact(flops_expr(spec, "forward"), {**spec.values, "B": 1, "L": t}) == forward, t
        assert exact(flops_expr(spec, "training"), {**spec.values, "B": 1, "L": t}) == forward + 2 * graded, t
    p = _flash_pass(4097, 4097, 4097)
    assert (
        3 * sum(p.values()) - exact(flops_expr(spec, "training"), {**spec.values, "B": 1, "L": 4097})
        == 2 * p["indexer"]
    )


def test_flash_prefill_and_decode_flops_by_hand(read_fixture):
    """DeepSeek-V4-Flash at B = 1 after a prompt of P = 4095, 4096, 4097 tokens (around a multiple of 4
    and of 128): the prefill with logits for its last token, and the decode step at context c = P + 1,
    whose query scores min(c, w = 128) window keys and floor(c/m) entries; three steps summed."""
    from symtrans.accounting.flops import decode_expr, prefill_expr

    spec, _ = spec_from_config(read_fixture(FLASH), FLASH)

    def pass_flops(t: int, keys: int, c: int, logits: int) -> int:
        p = _flash_pass(t, keys, c)
        return p["body"] + p["csa"] + p["hca"] + p["indexer"] + 2 * logits * 4096 * 129280

    for prompt in (4095, 4096, 4097):
        v = {**spec.values, "B": 1, "L_pre": prompt}
        assert exact(prefill_expr(spec), v) == pass_flops(prompt, prompt, prompt, 1), prompt
        steps = [pass_flops(1, min(c, 128), c, 1) for c in range(prompt + 1, prompt + 4)]
        assert exact(decode_expr(spec), {**v, "T_gen": 1}) == steps[0], prompt
        assert exact(decode_expr(spec), {**v, "T_gen": 3}) == sum(steps), prompt
    assert pass_flops(1, 128, 4098, 1) == 30_523_916_288  # symtrans flops --mode decode --prefill 4097
