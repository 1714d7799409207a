"""The registry of model-type records: one record per ``model_type`` of a Hugging Face
``config.json``, one module per type or family (the style of transformers' ``models/<type>/``).

Each module defines :class:`~symtrans.catalog.models.record.ModelType` records and lists them
in its ``RECORDS``; this package registers every module's records in :data:`RECORDS` (the
one place), and ``catalog/hf_config.py`` assembles its tables (``CLASSES``, ``DEFAULTS``,
``CONFIG_KEYS``, ``NO_PARAM_EFFECT``, ``ALIASES``, ``GETATTR_KEYS``, the readers) from them,
so every caller of hf_config sees a registered type like any other.

Imports run one way: a record module imports ``catalog/reader.py`` (``Reader``,
``ConfigError``, ``check_size``, the common checks), ``models/record.py`` (the record type, the
reasons ``WHY``) and the engine's ``Spec``, never ``hf_config`` or this package's ``__init__``.

How to add a type (a new dense decoder type is one new record plus its fixture):

1. Write its record in the module of its family: for a Llama-shaped decoder, a ``ModelType`` in
   ``models/dense.py`` whose ``read`` is a ``DenseLayout(...).read`` naming the keys that switch
   its biases and its fixed options (norms, QK norms, an MLP without gate); for a new family, a
   new module ``models/<type>.py``.  List its ``model_type`` in ``INDEX`` below (the module to
   import for it; ``load`` refuses a module whose RECORDS and INDEX differ).  A record states
   ``model_type``, ``config_class`` and ``model_class`` (transformers 5.x names), ``defaults``
   (the config class's defaults of the keys read), ``config_keys`` (every field of the config
   class), ``no_param_effect`` (each key that changes no parameter, with its reason from
   ``record.WHY``), ``aliases`` (its ``attribute_map``) and ``pad_default``; add it to the
   module's ``RECORDS``.
2. Add its fixture: the transformers class in ``tests/hf_reference.HF_CLASSES``, a strategy in
   ``hf_reference.STRATEGIES`` (``dense(mt)`` for a dense decoder) and a base config in
   ``tests/test_model_types.AUDIT_BASE``: the meta-device cross-checks, the key audit,
   FlopCounterMode and the re-save test (tests/test_resave.py) then cover the type; their
   coverage tests fail until it has them.
   Name its tensor-naming family in ``catalog/checkpoint/names.MODEL_TYPES`` (and add rules for
   any module name the family's table lacks): ``tests/test_inspect_every_type.py`` saves the
   class with ``save_pretrained`` and fails until ``inspect`` maps every tensor to a role.
3. Paste ``python -m symtrans model-types --format markdown`` into the README's table
   (``tests/test_model_types_table.py`` checks it).

The commits that added helium, arcee, seed_oss, ernie4_5, glm, glm4, nemotron and ministral touched
exactly these: ``catalog/models/dense.py``, ``tests/hf_reference.py``,
``tests/test_model_types.py`` and ``README.md`` (and registered ``dense`` here once).

Nothing else changes: ``symtrans model-types``, the refusal message's list, typo detection and
``--set`` all read the tables assembled from the records.
"""

from __future__ import annotations

import importlib

from symtrans.catalog.models.record import ModelType

# model_type -> the module (of this package) whose RECORDS hold its record, in registration
# order: the modules in the order they were registered, each module's RECORDS in order.  A
# module is imported only when one of its types is read (a config.json of one type loads one
# record module, not all 19: about 10 % of a cold ``symtrans params config.json``, issue 26);
# ``load`` checks a module's RECORDS against this index, and tests/test_model_records.py
# the whole index against the modules.
INDEX: dict[str, str] = {
    **dict.fromkeys(("llama", "mistral", "mixtral", "qwen2", "qwen3", "gemma", "qwen3_vl_text"), "llama"),
    **dict.fromkeys(("gpt_neo", "gpt_bigcode", "bloom", "mpt"), "gpt2_like"),
    **dict.fromkeys(
        (
            "ministral3",
            "apertus",
            "hunyuan_v1_dense",
            "cohere2",
            "exaone4",
            "olmo3",
            "smollm3",
            "ministral",
            "helium",
            "arcee",
            "seed_oss",
            "ernie4_5",
            "glm",
            "glm4",
            "nemotron",
        ),
        "dense",
    ),
    **dict.fromkeys(("mamba", "falcon_mamba", "mamba2"), "ssm"),
    "jamba": "jamba",
    **dict.fromkeys(("qwen3_next", "qwen3_5_text", "qwen3_5_moe_text"), "qwen3_next"),
    "lfm2": "lfm2",
    **dict.fromkeys(("camembert", "roberta-prelayernorm", "mpnet", "nomic_bert"), "encoders"),
    **dict.fromkeys(("mt5", "umt5", "longt5"), "t5"),
    **dict.fromkeys(
        (
            "olmoe",
            "glm4_moe",
            "dots1",
            "minimax_m2",
            "phimoe",
            "granitemoe",
            "granitemoeshared",
            "ernie4_5_moe",
            "hunyuan_v1_moe",
            "glm4_moe_lite",
            "qwen3_vl_moe_text",
        ),
        "moe",
    ),
    "modernbert": "modernbert",
    **dict.fromkeys(("bamba", "granitemoehybrid"), "hybrids"),
    "dbrx": "dbrx",
    **dict.fromkeys(("clip", "siglip", "siglip2"), "dual"),
    "nemotron_h": "nemotron_h",
    **dict.fromkeys(("deepseek_v32", "glm_moe_dsa", "mistral4"), "dsa"),
    "deepseek_v4": "deepseek_v4",
    **dict.fromkeys(("wav2vec2", "hubert"), "audio"),
    "falcon_h1": "falcon_h1",
    "led": "led",
    "gemma4_text": "gemma4",
    "zamba2": "zamba2",
}
# The indexed types that are a wrapper's language model only (``ModelType.text_only``).
TEXT_ONLY_TYPES = frozenset({"qwen3_vl_text", "qwen3_vl_moe_text"})
MODULE_NAMES: tuple[str, ...] = tuple(dict.fromkeys(INDEX.values()))


def load(module_name: str) -> tuple[ModelType, ...]:
    """The records of ``catalog/models/<module_name>.py``, imported on first use.

    Raises:
        RuntimeError: the module's RECORDS are not the types INDEX gives it, in its order
            (a registry error: a record added without its INDEX entry, or the reverse).
    """
    records = importlib.import_module(f"{__name__}.{module_name}").RECORDS
    listed = [mt for mt, name in INDEX.items() if name == module_name]
    if [r.model_type for r in records] != listed or any(
        r.text_only != (r.model_type in TEXT_ONLY_TYPES) for r in records
    ):
        raise RuntimeError(f"catalog/models/{module_name}.py's RECORDS differ from catalog.models.INDEX")
    return records


_ALL: dict[str, tuple] = {}


def __getattr__(name: str):
    """``RECORDS`` (every record, in INDEX order) and ``BY_TYPE`` (model_type -> record): all
    record modules imported on first use."""
    if name not in ("RECORDS", "BY_TYPE"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if not _ALL:
        records = tuple(rec for module in MODULE_NAMES for rec in load(module))
        by_type = {rec.model_type: rec for rec in records}
        if len(by_type) != len(records):  # two records of one model_type: a registry error
            raise RuntimeError("two model-type records share a model_type")
        _ALL.update(RECORDS=records, BY_TYPE=by_type)
    return _ALL[name]
