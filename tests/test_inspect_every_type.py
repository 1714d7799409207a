"""``symtrans inspect`` explains a checkpoint that transformers' own ``save_pretrained`` wrote,
for every supported model type (issue 27, item 4).

Per type: the class symtrans counts (``hf_reference.HF_CLASSES``, the one ``symtrans
model-types`` names; and the masked-LM classes of ``task_heads.MASKED_LM``) is built on the CPU from the type's tiny audit config
(``test_model_types.AUDIT_BASE``), saved with ``save_pretrained`` (safetensors) and inspected.
The types come from the registry (``hf_config.SUPPORTED``: the records of
``catalog/models`` and the table types), so a type added there is checked here at once; one
whose tensor names have no naming family fails (it is never skipped).

Every expected figure comes from the saved transformers model, never from symtrans:

* ``parameters()``: ``sum(p.numel() for p in model.parameters())`` (tied tensors once);
* the buffers in the file: ``model.named_buffers()`` that ``model.state_dict()`` keeps
  (persistent ones: BART's ``final_logits_bias``, DeepSeek-V3's ``e_score_correction_bias``);
* the parameters the file leaves out: ``model._keys_to_ignore_on_save`` (MarianMTModel's two
  sinusoidal position tables, recomputed at load: why its stored logical count, 173,824 in
  the issue, was below ``parameters()``, 190,208).

Asserted: the naming family comes from config.json's model_type (not guessed from the names);
every stored tensor is a parameter with a role or a buffer (no "names not in the table", no
component ``None``); the only terms of stored - formula are those buffers and, negative, the
parameters the file leaves out, which add up exactly; the logical count is ``parameters()``
less the ones left out; the formula is ``parameters()``.
"""

from __future__ import annotations

import pytest
from conftest import require

torch = require("torch")
transformers = require("transformers")

from hf_reference import HF_CLASSES  # noqa: E402
from test_model_types import _cfg  # noqa: E402

from symtrans.analysis.checkpoint import inspect  # noqa: E402
from symtrans.catalog.checkpoint.names import MODEL_TYPES  # noqa: E402
from symtrans.catalog.checkpoint.read import read_checkpoint  # noqa: E402
from symtrans.catalog.hf_config import SUPPORTED  # noqa: E402
from symtrans.catalog.models import BY_TYPE  # noqa: E402
from symtrans.catalog.task_heads import MASKED_LM  # noqa: E402

# Terms a checkpoint saved by transformers may carry: its persistent buffers, and the
# parameters its class does not save (``missing``, checked against _keys_to_ignore_on_save).
ALLOWED_TERMS = {"buffers", "missing"}


def _saved(model_type: str, root, class_name: str | None = None) -> dict:
    """Build, save and inspect one type (its counted class, or ``class_name``); the oracle's
    figures beside symtrans's result."""
    transformers.logging.set_verbosity_error()
    cfg = {k: v for k, v in _cfg(model_type).items() if k not in ("model_type", "architectures")}
    cls = getattr(transformers, class_name or HF_CLASSES[model_type])
    torch.manual_seed(0)
    model = cls(cls.config_class(**cfg))  # on the CPU: save_pretrained needs real tensors
    folder = root / (class_name or model_type)
    model.save_pretrained(folder)  # safetensors, transformers' own tensor names
    params = dict(model.named_parameters())
    state = model.state_dict()
    ignored = set(getattr(model, "_keys_to_ignore_on_save", None) or ())
    return {
        "parameters": sum(p.numel() for p in params.values()),
        "unsaved": sum(p.numel() for name, p in params.items() if name in ignored),
        "buffers": sum(b.numel() for name, b in model.named_buffers() if name in state and name not in ignored),
        "file_elements": sum(t.elements for t in read_checkpoint(str(folder)).tensors),
        "inspection": inspect(str(folder)),
    }


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict:
    """Every supported type, built and saved once (one tiny model each, shared by the tests)."""
    root = tmp_path_factory.mktemp("saved")
    return {mt: _saved(mt, root) for mt in SUPPORTED} | {cls: _saved(mt, root, cls) for mt, cls in MASKED_LM.items()}


def test_every_supported_type_has_a_naming_family():
    """A type registered without a naming family would be guessed from its tensor names (the
    issue's GPTNeoX: "llama (matched by tensor names)"): it must fail here, not skip."""
    # the records are part of the registry iterated below; a text-only record (qwen3_vl_text) is
    # read inside its wrapper's text_config, never a config.json's model_type, so it has no checkpoint
    assert {mt for mt, rec in BY_TYPE.items() if not rec.text_only} <= set(SUPPORTED)
    lacking = sorted(set(SUPPORTED) - set(MODEL_TYPES))
    assert not lacking, f"no naming family in catalog/checkpoint/names.MODEL_TYPES for {lacking}"


# Every supported type's counted class, and the masked-LM classes inspect counts when
# config.json's architectures names them (catalog/task_heads.MASKED_LM).
CASES = [(mt, mt) for mt in SUPPORTED] + [(mt, cls) for mt, cls in MASKED_LM.items()]


@pytest.mark.parametrize(("model_type", "key"), CASES, ids=[key for _, key in CASES])
def test_save_pretrained_checkpoint_is_explained(saved, model_type, key):
    ref = saved[key]
    ins = ref["inspection"]
    assert model_type in MODEL_TYPES
    assert ins.naming == MODEL_TYPES[model_type]  # chosen by config.json's model_type
    assert ins.spec_source == "config.json"
    # every tensor mapped: a parameter with a role, or a buffer; no component named None
    unmapped = [e.name for e in ins.entries if e.kind.value == "parameter" and (e.role is None or e.why)]
    assert not unmapped, unmapped
    assert {e.kind.value for e in ins.entries} <= {"parameter", "buffer"}
    assert all(row["role"] is not None and row["block"] is not None for row in ins.by_component())
    # the counts
    assert ins.stored_elements == ref["file_elements"]
    assert ins.formula == ref["parameters"]
    assert ins.logical_parameters == ref["parameters"] - ref["unsaved"]
    terms = {}
    for t in ins.terms:
        terms[t.key] = terms.get(t.key, 0) + t.elements
    assert set(terms) <= ALLOWED_TERMS, [(t.key, t.detail, t.tensors[:4]) for t in ins.terms]
    assert terms.get("buffers", 0) == ref["buffers"]
    assert terms.get("missing", 0) == -ref["unsaved"]
    assert ins.stored_elements - ins.formula == ref["buffers"] - ref["unsaved"]


def test_marian_leaves_its_sinusoids_out_of_the_file(saved):
    """The issue's marian mismatch: MarianMTModel's _keys_to_ignore_on_save names both
    sinusoidal tables, so the file lacks 2 x max_position_embeddings x d_model (2 x 17 x 12)."""
    ref = saved["marian"]
    assert ref["unsaved"] == 2 * 17 * 12
    (term,) = [t for t in ref["inspection"].terms if t.key == "missing"]
    assert term.elements == -2 * 17 * 12 and "_keys_to_ignore_on_save" in term.detail


def test_stacked_expert_tensors_are_the_experts(saved):
    """gpt-oss and Llama 4 store each layer's experts as one (E, d_in, d_out) tensor named by
    its leaf (``mlp.experts.gate_up_proj``), beside per-expert names elsewhere (DeepSeek)."""
    for mt, E in (("gpt_oss", 3), ("llama4_text", 3)):
        experts = [e for e in saved[mt]["inspection"].entries if e.role is not None and e.role.value == "experts"]
        stacked = [e for e in experts if len(e.tensor.shape) == 3]
        assert stacked and all(e.tensor.shape[0] == E for e in stacked)
