"""``symtrans inspect`` on a checkpoint whose config.json has a model_type without a curated
record (counted by the generic path).  A new-user trial found a tiny BitNet explained
with a guessed llama layout: formula 100,160, its real ``attn_sub_norm``/``ffn_sub_norm``
weights called "+320 unexpected tensors" and h inferred as 2 where config.json says 4,
while ``symtrans params`` gave 100,480.  The expected figures are the saved model's own
``sum(p.numel() for p in model.parameters())`` (transformers), never symtrans's.
"""

from __future__ import annotations

import pytest
from conftest import require  # noqa: E402

torch = require("torch")
transformers = require("transformers")

from symtrans.analysis.checkpoint import inspect  # noqa: E402
from symtrans.render.checkpoint import text  # noqa: E402

CASES = {
    # BitNet: llama-like names plus attn_sub_norm / ffn_sub_norm in every layer
    "bitnet": (
        "BitNetConfig",
        "BitNetForCausalLM",
        dict(
            vocab_size=128,
            hidden_size=64,
            intermediate_size=96,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
        ),
    ),
    # Persimmon: fused query_key_value, q/k layernorms, a partial rotary
    "persimmon": (
        "PersimmonConfig",
        "PersimmonForCausalLM",
        dict(vocab_size=96, hidden_size=32, intermediate_size=40, num_hidden_layers=2, num_attention_heads=4),
    ),
}


@pytest.mark.parametrize("mt", sorted(CASES))
def test_no_curated_record_is_explained_by_the_generic_count(tmp_path, mt):
    from symtrans.catalog.hf_config import SUPPORTED

    assert mt not in SUPPORTED, f"{mt} got a curated record: pick another type for this test"
    config_cls, model_cls, cfg = CASES[mt]
    torch.manual_seed(0)
    model = getattr(transformers, model_cls)(getattr(transformers, config_cls)(**cfg))
    model.save_pretrained(tmp_path)
    expected = sum(p.numel() for p in model.parameters())
    ins = inspect(str(tmp_path))
    assert ins.formula == expected
    assert ins.stored_elements - ins.formula == 0
    assert not [t for t in ins.terms if t.key in ("unexpected", "missing", "other")]
    j = ins.to_json()
    assert j["difference"] == 0
    assert j["sizes"].get("h") == cfg["num_attention_heads"]  # from config.json, not guessed from shapes
    out = text(ins)
    assert "stored - formula = 0 elements" in out
    assert "unexpected" not in out


def test_without_transformers_the_explanation_is_refused_in_one_line(tmp_path, monkeypatch):
    from symtrans.catalog.generic import build as B

    config_cls, model_cls, cfg = CASES["bitnet"]
    model = getattr(transformers, model_cls)(getattr(transformers, config_cls)(**cfg))
    model.save_pretrained(tmp_path)

    def missing():
        raise B.GenericUnavailable(f"transformers is not installed ({B.EXTRA})")

    monkeypatch.setattr(B, "modules", missing)
    ins = inspect(str(tmp_path))
    assert ins.formula is None and ins.terms == []
    assert "\n" not in ins.spec_error and "transformers is not installed" in ins.spec_error
    # the stored count stays: the saved model's own parameter count (no tied or buffer tensors saved)
    assert ins.stored_elements == sum(p.numel() for p in model.parameters())
    assert "unexpected" not in text(ins)
