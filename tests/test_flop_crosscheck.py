"""Forward and training FLOPs against torch.utils.flop_counter.FlopCounterMode.

Small Hugging Face models with eager attention (CPU SDPA is invisible to the counter)
run real forward and backward passes on the meta device (no weights are allocated; the
MoE model, whose routing the meta device cannot run, on the CPU at toy sizes).
FlopCounterMode counts matrix products only (mm, addmm, bmm: 2 per multiply-accumulate,
bias adds ignored), which is the engine's ``flops`` convention with the full-square
mask: forward must match exactly, and forward + backward must be 3 x forward (the
backward of every matmul is two matmuls of its size).  The reference numbers are the
counter's, not the engine's.
"""

from __future__ import annotations

from conftest import require

from symtrans.accounting.flops import evaluate, flops_expr
from symtrans.catalog import presets

torch = require("torch")  # the references; missing ones fail under SYMTRANS_REQUIRE_ORACLES=1 (conftest.py)
transformers = require("transformers")
FlopCounterMode = require("torch.utils.flop_counter").FlopCounterMode

B, T = 2, 16


def _count(model, inputs, loss_of=None) -> int:
    counter = FlopCounterMode(display=False)
    with counter:
        out = model(**inputs)
        if loss_of is not None:
            loss_of(out).backward()
    return counter.get_total_flops()


def _meta(cls, config):
    with torch.device("meta"):
        return cls(config)


def _ids():
    return {"input_ids": torch.zeros(B, T, dtype=torch.long, device="meta")}


def _engine(spec, mode: str) -> int:
    return int(evaluate(flops_expr(spec, mode), {**spec.values, "B": B, "L": T}))


def test_gpt2_forward_and_training():
    cfg = transformers.GPT2Config(
        n_embd=64,
        n_layer=2,
        n_head=4,
        vocab_size=100,
        n_positions=32,
        bos_token_id=0,
        eos_token_id=0,
        attn_implementation="eager",
    )
    model = _meta(transformers.GPT2LMHeadModel, cfg)
    spec = presets.get("gpt2").spec.replace(sizes=dict(d_model=64, d_ff=256, h=4, N=2, V=100, L_max=32, L=32))
    fwd = _count(model, _ids())
    train = _count(model, _ids(), lambda o: o.logits.sum())
    assert fwd == _engine(spec, "forward")
    assert train == _engine(spec, "training") == 3 * fwd


def test_bert_forward_and_training_with_pooler():
    cfg = transformers.BertConfig(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        vocab_size=100,
        max_position_embeddings=32,
        type_vocab_size=2,
        attn_implementation="eager",
    )
    model = _meta(transformers.BertModel, cfg)
    spec = presets.get("bert-base").spec.replace(sizes=dict(d_model=64, d_ff=128, h=4, N=2, V=100, L_max=32, L=32))
    fwd = _count(model, _ids())
    train = _count(model, _ids(), lambda o: o.last_hidden_state.sum() + o.pooler_output.sum())
    assert fwd == _engine(spec, "forward")
    assert train == _engine(spec, "training") == 3 * fwd


def test_llama_with_grouped_query_attention():
    cfg = transformers.LlamaConfig(
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=100,
        max_position_embeddings=64,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=0,
        attn_implementation="eager",
    )
    model = _meta(transformers.LlamaForCausalLM, cfg)
    spec = presets.get("llama-2-70b").spec.replace(
        sizes=dict(d_model=64, d_ff=96, h=4, h_kv=2, N=2, V=100, L_max=64, L=64)
    )
    fwd = _count(model, _ids())
    train = _count(model, _ids(), lambda o: o.logits.sum())
    assert fwd == _engine(spec, "forward")
    assert train == _engine(spec, "training") == 3 * fwd


def test_macs_convention_is_half_the_counter():
    cfg = transformers.GPT2Config(
        n_embd=32,
        n_layer=1,
        n_head=2,
        vocab_size=50,
        n_positions=16,
        bos_token_id=0,
        eos_token_id=0,
        attn_implementation="eager",
    )
    model = _meta(transformers.GPT2LMHeadModel, cfg)
    spec = presets.get("gpt2").spec.replace(sizes=dict(d_model=32, d_ff=128, h=2, N=1, V=50, L_max=16, L=16))
    counted = _count(model, _ids())
    assert 2 * int(evaluate(flops_expr(spec, "forward", "macs"), {**spec.values, "B": B, "L": T})) == counted


def test_t5_encoder_decoder_forward_and_training():
    # Encoder and decoder with relative position buckets, teacher-forced: L_src = L_tgt = T.
    cfg = transformers.T5Config(
        d_model=64, d_kv=16, d_ff=96, num_layers=2, num_heads=4, vocab_size=100, attn_implementation="eager"
    )
    model = _meta(transformers.T5ForConditionalGeneration, cfg)
    spec = presets.get("t5-small").spec.replace(sizes=dict(d_model=64, d_ff=96, h=4, d_k=16, N=2, V=100))
    ids = {**_ids(), "decoder_input_ids": torch.zeros(B, T, dtype=torch.long, device="meta")}
    fwd = _count(model, ids)
    train = _count(model, ids, lambda o: o.logits.sum())
    v = {**spec.values, "B": B, "L": T, "L_src": T, "L_tgt": T}
    assert fwd == int(evaluate(flops_expr(spec, "forward"), v))
    assert train == int(evaluate(flops_expr(spec, "training"), v)) == 3 * fwd


def test_mixtral_routed_experts_forward_and_training():
    # Eager experts route with torch.nonzero, which the meta device cannot run: a seeded tiny model on the
    # CPU instead.  Whatever the routing, the experts see B*T*k token rows in all, so the count is fixed.
    torch.manual_seed(0)
    cfg = transformers.MixtralConfig(
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_local_experts=4,
        num_experts_per_tok=2,
        vocab_size=100,
        max_position_embeddings=64,
        attn_implementation="eager",
        experts_implementation="eager",
    )
    model = transformers.MixtralForCausalLM(cfg)
    ids = {"input_ids": torch.randint(0, 100, (B, T))}
    spec = presets.get("mixtral-8x7b").spec.replace(sizes=dict(d_model=64, d_ff=96, h=4, h_kv=2, N=2, V=100, E=4, k=2))
    fwd = _count(model, ids)
    train = _count(model, ids, lambda o: o.logits.sum())
    assert fwd == _engine(spec, "forward")
    assert train == _engine(spec, "training") == 3 * fwd
