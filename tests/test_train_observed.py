"""``symtrans train``'s activations per layer against what PyTorch saves for backward.

The oracle is a real training forward of Hugging Face's GPT2Block (transformers 5.x, eager
attention, dropout on, bf16 on CPU): every tensor autograd saves for the backward pass is
caught with ``torch.autograd.graph.saved_tensors_hooks`` and counted once per storage
(parameters excluded).  symtrans counts Korthikanti et al. 2022's tensors (§4.1:
s·b·h·(34 + 5·a·s/h) bytes for this layer).  The observed total differs by two named
terms, written out below: CPU dropout keeps its mask in the activation dtype (2 bytes per
element; the CUDA kernel Korthikanti assumes keeps 1 byte), and LayerNorm saves its mean
and reciprocal standard deviation per token.
"""

from __future__ import annotations

import json

from conftest import require

from symtrans.cli.main import main

D, HEADS, S, B, FF = 64, 4, 16, 2, 256


def _observed_layer_bytes() -> int:
    torch = require("torch")
    require("transformers")
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Block

    torch.manual_seed(0)
    cfg = GPT2Config(
        n_embd=D, n_head=HEADS, n_inner=FF, n_positions=S, n_layer=1, activation_function="gelu",
        resid_pdrop=0.1, attn_pdrop=0.1, embd_pdrop=0.1,
    )  # fmt: skip
    cfg._attn_implementation = "eager"
    block = GPT2Block(cfg, layer_idx=0).to(torch.bfloat16).train()
    params = {p.untyped_storage().data_ptr() for p in block.parameters()}
    saved: dict[int, int] = {}

    def pack(t):
        st = t.untyped_storage()
        if st.data_ptr() not in params:
            saved[st.data_ptr()] = st.nbytes()
        return t

    x = torch.randn(B, S, D, dtype=torch.bfloat16, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        block(x)
    return sum(saved.values())


def test_layer_activations_match_saved_tensors(capsys):
    argv = ["train", "gpt2", "--set", f"d_model={D}", "--set", f"h={HEADS}", "--set", "N=1", "--set", f"d_ff={FF}"]
    argv += ["--set", f"L={S}", "--micro-batch", str(B), "--seq-len", str(S), "--format", "json"]
    assert main(argv) == 0
    r = json.loads(capsys.readouterr().out)
    ours = {t["name"]: t["value"] for t in r["memory"][0]["terms"]}["activations: layers"]
    t = S * B
    korthikanti = t * D * 34 + 5 * HEADS * S * S * B  # §4.1 eq. (1), 16-bit activations, 1-byte masks
    assert ours == korthikanti == 79_872
    cpu_masks = HEADS * S * S * B + 2 * t * D  # attention and two residual dropout masks: 1 byte more each
    norm_stats = 2 * 2 * t * 2  # two LayerNorms x (mean, rstd) x tokens x 2 bytes (bf16 on CPU)
    assert _observed_layer_bytes() == ours + cpu_masks + norm_stats
