"""The model-type registry (catalog/models): one record per type, the tables hf_config reads
assembled from it, and full-size configs of the dense decoder records against transformers.

Oracles: transformers 5.24's classes built on the meta device (``sum(p.numel())``); the
records' keys against the installed config classes are checked by tests/test_model_types.py.
The full-size configs below carry the sizes of the named checkpoints' config.json files
(transformers' own class defaults where the class was written for that checkpoint); the
count is transformers', never a remembered figure.
"""

from __future__ import annotations

import pytest
from conftest import require

from symtrans.catalog import hf_config
from symtrans.catalog.models import BY_TYPE, RECORDS
from symtrans.catalog.models.record import WHY
from symtrans.engine.architectures import build
from symtrans.engine.evaluate import exact


def test_registry_is_the_one_home_of_its_types():
    """Every record's facts reach hf_config's tables unchanged, and no type has both."""
    for rec in RECORDS:
        mt = rec.model_type
        h = hf_config
        # a text-only record (a wrapper's language model, read only inside its text_config) fills the
        # TEXT_ONLY tables, every other record the top-level ones; never both
        classes, defaults, keys, quiet = (
            (h.TEXT_ONLY, h.TEXT_ONLY_DEFAULTS, h.TEXT_ONLY_CONFIG_KEYS, h.TEXT_ONLY_NO_PARAM_EFFECT)
            if rec.text_only
            else (h.CLASSES, h.DEFAULTS, h.CONFIG_KEYS, h.NO_PARAM_EFFECT)
        )
        assert (mt in h.CLASSES) != (mt in h.TEXT_ONLY)
        assert classes[mt] == (rec.config_class, rec.model_class)
        assert defaults[mt] == dict(rec.defaults)
        assert keys[mt] == rec.config_keys
        assert quiet[mt] == dict(rec.no_param_effect)
        # a text-only record is read through its wrapper's text_config, never as a top-level family
        assert hf_config._FAMILIES.get(mt) == (None if rec.text_only else rec.read)
        assert set(rec.no_param_effect.values()) <= set(WHY.values())
    assert len(BY_TYPE) == len(RECORDS)


def test_index_names_every_record_module_and_type_in_order():
    """catalog.models.INDEX (what a config.json's type imports) is the records' own list: every
    module of the package with RECORDS is indexed, with its types in its RECORDS order."""
    import ast
    from pathlib import Path

    from symtrans.catalog import models

    package = Path(models.__file__).parent
    with_records = sorted(
        f.stem
        for f in package.glob("*.py")
        if any(
            isinstance(node, (ast.Assign, ast.AnnAssign))
            and any(
                getattr(t, "id", None) == "RECORDS" for t in getattr(node, "targets", [getattr(node, "target", None)])
            )
            for node in ast.parse(f.read_text()).body
        )
    )
    assert sorted(models.MODULE_NAMES) == with_records
    assert list(models.INDEX) == [rec.model_type for rec in RECORDS]
    assert models.TEXT_ONLY_TYPES == {rec.model_type for rec in RECORDS if rec.text_only}
    for rec in RECORDS:
        module = __import__(f"symtrans.catalog.models.{models.INDEX[rec.model_type]}", fromlist=["RECORDS"])
        assert rec in module.RECORDS


def test_a_config_imports_only_its_record_module():
    """Reading a llama config.json imports catalog/models/llama.py and none of the other record
    modules (issue 26); a table read whole (SUPPORTED's listing, REAL_KEYS) then sees every record."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    code = (
        "import json, sys\n"
        "from symtrans.catalog import hf_config as h\n"
        "h.spec_from_config(json.loads(sys.argv[1]))\n"
        "loaded = sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('symtrans.catalog.models.'))\n"
        "print(json.dumps({'loaded': loaded, 'classes': len(h.CLASSES), 'supported': len(h.SUPPORTED)}))\n"
    )
    cfg = json.loads((root / "tests" / "fixtures" / "configs" / "llama-2-13b.json").read_text())
    p = subprocess.run(
        [sys.executable, "-c", code, json.dumps(cfg)], capture_output=True, text=True, cwd=root, timeout=120
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    # record (the type), llama (its record); encoders, t5 and vision hold readers hf_config imports
    assert out["loaded"] == ["encoders", "llama", "record", "t5", "vision"]
    assert out["classes"] == out["supported"] == len(hf_config.SUPPORTED)


def test_no_import_cycle_through_the_records():
    """catalog/reader.py and the record modules import neither hf_config nor each other back."""
    grimp = require("grimp")
    graph = grimp.build_graph("symtrans")
    for module in ("symtrans.catalog.reader", "symtrans.catalog.models.record", "symtrans.catalog.models.dense"):
        chain = graph.find_shortest_chain(importer=module, imported="symtrans.catalog.hf_config")
        assert chain is None, chain


_DENSE = {"num_hidden_layers": 2}  # two layers of the real widths: every shape, a quick meta build
CHECKPOINT_WIDTHS = [
    # helium-1-2b (kyutai): HeliumConfig with the checkpoint's sizes
    dict(model_type="helium", vocab_size=64000, hidden_size=2560, intermediate_size=7040, num_attention_heads=20,
         num_key_value_heads=20, head_dim=128, max_position_embeddings=4096, pad_token_id=3),
    # AFM-4.5B (arcee-ai)
    dict(model_type="arcee", vocab_size=128004, hidden_size=2560, intermediate_size=18432, num_attention_heads=20,
         num_key_value_heads=4, head_dim=128, max_position_embeddings=65536),
    # Seed-OSS-36B (ByteDance-Seed)
    dict(model_type="seed_oss", vocab_size=155136, hidden_size=5120, intermediate_size=27648, num_attention_heads=80,
         num_key_value_heads=8, head_dim=128, max_position_embeddings=524288, attention_bias=True,
         attention_out_bias=False, pad_token_id=1),
    # ERNIE-4.5-0.3B (baidu): Ernie4_5Config's defaults are this checkpoint's
    dict(model_type="ernie4_5"),
    # glm-4-9b-chat-hf and GLM-4-9B-0414 (THUDM): GlmConfig's / Glm4Config's defaults
    dict(model_type="glm"),
    dict(model_type="glm4"),
    # Nemotron-Mini-4B (nvidia)
    dict(model_type="nemotron", vocab_size=256000, hidden_size=3072, intermediate_size=9216, num_attention_heads=24,
         num_key_value_heads=8, head_dim=128, max_position_embeddings=4096),
]  # fmt: skip


@pytest.mark.parametrize("cfg", CHECKPOINT_WIDTHS, ids=[c["model_type"] for c in CHECKPOINT_WIDTHS])
def test_checkpoint_widths_of_dense_records_match_transformers(hf, cfg):
    cfg = {**cfg, **_DENSE}
    spec, _ = hf_config.spec_from_config(cfg, cfg["model_type"])
    model = hf.build(cfg["model_type"], {k: v for k, v in cfg.items() if k != "model_type"})
    assert exact(build(spec).params, spec.values) == hf.count(model)
