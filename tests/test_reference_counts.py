"""Every preset's parameter count against its independent reference (tests/reference_counts.py).

Three checks per preset:

1. symtrans's count equals the table's reference figure (no torch needed): a preset whose
   sizes or options drift from the real model fails here, naming the reference.
2. The implementation built live on the meta device from the *preset's own sizes* (the
   adapter in reference_counts.py) has exactly symtrans's count and the reference figure.
3. The reference figure is what the real checkpoint's config.json builds (where one exists),
   so the table's numbers are themselves measured, not typed from memory.

Hand-count presets have no implementation: their reference is the arithmetic written out
in the table.
"""

from __future__ import annotations

import pytest
from conftest import require
from reference_counts import (
    REFERENCES,
    Reference,
    active_count,
    build_reference,
    checkpoint_config,
    count,
    reference_kwargs,
)

from symtrans.catalog.presets import PRESETS
from symtrans.engine.architectures import build
from symtrans.engine.evaluate import exact

pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True:UserWarning")

LIVE = sorted(n for n, r in REFERENCES.items() if r.implementation)
CHECKPOINTS = sorted(n for n, r in REFERENCES.items() if r.checkpoint)


def _engine(name: str) -> tuple[int, int]:
    spec = PRESETS[name].spec
    cost = build(spec)
    return exact(cost.params, spec.values), exact(cost.active_params, spec.values)


def _names_the_reference(name: str, ref: Reference, what: str, got: int, want: int) -> str:
    return (
        f"{name}: {what} {got:,} parameters, but the independent reference has {want:,} "
        f"(difference {got - want:+,}); reference: {ref.source}"
    )


def test_every_preset_has_a_reference():
    assert set(REFERENCES) == set(PRESETS), "add the new preset to tests/reference_counts.py with its source"


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_preset_count_equals_its_reference(name):
    ref = REFERENCES[name]
    total, active = _engine(name)
    assert total == ref.total, _names_the_reference(name, ref, "symtrans counts", total, ref.total)
    expected_active = ref.total if ref.active is None else ref.active
    assert active == expected_active, _names_the_reference(
        name, ref, "symtrans counts as active per token", active, expected_active
    )


@pytest.mark.parametrize("name", LIVE)
def test_preset_sizes_built_live_on_the_meta_device(name):
    """The implementation at the preset's own sizes: symtrans's count exactly, and the reference's."""
    require("torch")
    if REFERENCES[name].implementation != "torch.nn.Transformer":
        require("transformers").logging.set_verbosity_error()
    ref = REFERENCES[name]
    spec = PRESETS[name].spec
    model = build_reference(ref, spec.values)
    live = count(model)
    total, active = _engine(name)
    assert total == live, (
        f"{name}: symtrans counts {total:,} parameters, {ref.implementation} built on the meta device from the "
        f"preset's sizes {spec.values} has {live:,} (difference {total - live:+,})"
    )
    assert live == ref.total, _names_the_reference(
        name, ref, f"{ref.implementation} at the preset's sizes has", live, ref.total
    )
    if spec.is_moe:
        live_active = active_count(model, spec.size("E"), spec.size("k"))
        assert active == live_active == ref.active, (name, active, live_active, ref.active)


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_reference_figure_is_the_checkpoint_config_count(name):
    """The table's figure is measured: the class built from the checkpoint's config.json."""
    require("torch")
    require("transformers").logging.set_verbosity_error()
    ref = REFERENCES[name]
    cfg = {k: v for k, v in checkpoint_config(ref.checkpoint).items() if k != "torch_dtype"}
    model = build_reference(ref, {}, kwargs=cfg)
    assert count(model) == ref.total, (name, count(model), ref.source)
    if ref.active is not None:
        assert active_count(model, cfg["num_local_experts"], cfg["num_experts_per_tok"]) == ref.active


@pytest.mark.parametrize(
    "name, N, d",
    [
        ("gpt3-small", 12, 768),
        ("gpt3-medium", 24, 1024),
        ("gpt3-large", 24, 1536),
        ("gpt3-xl", 24, 2048),
        ("gpt3-2.7b", 32, 2560),
        ("gpt3-6.7b", 32, 4096),
        ("gpt3-13b", 40, 5120),
        ("gpt3-175b", 96, 12288),
    ],
)
def test_gpt3_references_written_out(name, N, d):
    # Brown et al. 2020 Table 2.1 sizes in GPT-2's layout (GPT2Block): token table V d and position table
    # 2048 d; per layer c_attn 3 d^2 + 3 d, attention c_proj d^2 + d, c_fc 4 d^2 + 4 d, mlp c_proj 4 d^2 + d,
    # two LayerNorms 4 d: 12 d^2 + 13 d; a final LayerNorm 2 d; the head tied to the token table.
    assert REFERENCES[name].total == 50257 * d + 2048 * d + N * (12 * d * d + 13 * d) + 2 * d


def test_nn_transformer_references_written_out():
    # torch.nn.Transformer: per encoder layer MHA 4 (d^2 + d), FFN 2 d d_ff + d_ff + d, 2 LayerNorms 4 d;
    # per decoder layer one more MHA and LayerNorm; one final LayerNorm per stack; + one V x d embedding.
    for name, d, ff in (("transformer-base", 512, 2048), ("transformer-big", 1024, 4096)):
        enc = 4 * (d * d + d) + 2 * d * ff + ff + d + 4 * d
        dec = enc + 4 * (d * d + d) + 2 * d
        assert REFERENCES[name].total == 6 * enc + 6 * dec + 2 * 2 * d + 37_000 * d


def test_the_adapter_refuses_a_size_it_cannot_place():
    # A Llama has no sliding window: the adapter raises rather than build a model without it.
    with pytest.raises(ValueError, match="LlamaForCausalLM has no config field for the preset's size w=4096"):
        reference_kwargs(REFERENCES["llama-2-7b"], {**PRESETS["llama-2-7b"].spec.values, "w": 4096})
