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

1. Write its record in the module of its family (a new module ``models/<type>.py`` for a new
   family, added to ``_MODULES`` below): ``model_type``, ``config_class`` and ``model_class``
   (transformers 5.x names), ``read`` (the family's reader function, ``Reader -> Spec``),
   ``defaults`` (the config class's defaults of the keys read), ``config_keys`` (every field
   of the config class), ``no_param_effect`` (each key that changes no parameter, with its
   reason from ``record.WHY``), ``aliases`` (its ``attribute_map``) and ``pad_default``.  Add
   it to the module's ``RECORDS``.
2. Add its fixture: a published ``config.json`` under ``tests/fixtures/configs/`` with the
   count transformers builds on the meta device, and its strategy and audit base in the
   tests (tests/test_model_types.py checks every registered type; its coverage tests fail
   until the type has them).
3. Paste ``python -m symtrans model-types --format markdown`` into the README's table
   (``tests/test_model_types_table.py`` checks it).

Nothing else changes: ``symtrans model-types``, the refusal message's list, typo detection and
``--set`` all read the tables assembled from the records.
"""

from __future__ import annotations

from symtrans.catalog.models import gpt2_like, llama
from symtrans.catalog.models.record import ModelType

_MODULES = (llama, gpt2_like)

RECORDS: tuple[ModelType, ...] = tuple(rec for module in _MODULES for rec in module.RECORDS)
BY_TYPE: dict[str, ModelType] = {rec.model_type: rec for rec in RECORDS}
if len(BY_TYPE) != len(RECORDS):  # two records of one model_type: a registry error
    raise ValueError("two model-type records share a model_type")
