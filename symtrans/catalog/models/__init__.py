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
   new module ``models/<type>.py`` added to ``_MODULES`` below.  A record states
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

from symtrans.catalog.models import (
    audio,
    dbrx,
    dense,
    dsa,
    dual,
    encoders,
    falcon_h1,
    gemma4,
    gpt2_like,
    hybrids,
    jamba,
    led,
    lfm2,
    llama,
    modernbert,
    moe,
    nemotron_h,
    qwen3_next,
    ssm,
    t5,
)
from symtrans.catalog.models.record import ModelType

_MODULES = (
    llama,
    gpt2_like,
    dense,
    ssm,
    jamba,
    qwen3_next,
    lfm2,
    encoders,
    t5,
    moe,
    modernbert,
    hybrids,
    dbrx,
    dual,
    nemotron_h,
    dsa,
    audio,
    falcon_h1,
    led,
    gemma4,
)

RECORDS: tuple[ModelType, ...] = tuple(rec for module in _MODULES for rec in module.RECORDS)
BY_TYPE: dict[str, ModelType] = {rec.model_type: rec for rec in RECORDS}
if len(BY_TYPE) != len(RECORDS):  # two records of one model_type: a registry error
    raise RuntimeError("two model-type records share a model_type")
