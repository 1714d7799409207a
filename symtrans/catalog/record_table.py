"""The tables keyed by ``model_type`` that the model-type records fill (``CLASSES``,
``DEFAULTS``, ``CONFIG_KEYS``, ... in ``type_tables.py``, ``type_keys.py`` and
``hf_config.py``), filled on first use (issue 26): a config.json of one type imports the one
record module ``catalog.models.INDEX`` names for it, not all of them.

A :class:`RecordTable` is a dict that, asked for a type it lacks (``[]``, ``in``, ``get``),
first has ``hf_config`` assemble that type's record module, and, asked for all of itself
(iteration, ``len``, ``keys``/``values``/``items``, ``==``, ``repr``), first has every record
assembled, in the registry's order.  So every reader sees what assembling every record at
import gave.  ``hf_config`` registers the two loaders when it is imported; before that a
table holds its own entries only (as before: the records were added by hf_config's import).
"""

from __future__ import annotations

from typing import Callable

from symtrans.base.errors import UnknownNameError

# (load one type's record module, load every record), registered by hf_config
_LOADERS: list[Callable] = []


def register(load_type: Callable[[str], None], load_all: Callable[[], None]) -> None:
    _LOADERS[:] = [load_type, load_all]


def _load_type(mt) -> None:
    if _LOADERS:
        _LOADERS[0](mt)


def _load_all() -> None:
    if _LOADERS:
        _LOADERS[1]()


class RecordTable(dict):
    """A table keyed by model_type whose record entries are assembled on first use;
    ``static`` holds the keys it was made with (its own, not the records')."""

    def __init__(self, table: dict) -> None:
        dict.__init__(self, table)
        self.static = frozenset(dict.keys(self))

    def __missing__(self, mt):
        _load_type(mt)
        if dict.__contains__(self, mt):
            return dict.__getitem__(self, mt)
        # a dict's KeyError, as the library's own class (tests/test_errors.py)
        raise UnknownNameError(f"model_type {mt!r} has no entry in this table")

    def __contains__(self, mt) -> bool:
        if not dict.__contains__(self, mt):
            _load_type(mt)
        return dict.__contains__(self, mt)

    def get(self, mt, default=None):
        if not dict.__contains__(self, mt):
            _load_type(mt)
        return dict.get(self, mt, default)

    # Whole-table reads: every record first.
    def __iter__(self):
        _load_all()
        return dict.__iter__(self)

    def __len__(self) -> int:
        _load_all()
        return dict.__len__(self)

    def __eq__(self, other) -> bool:
        _load_all()
        return dict.__eq__(self, other)

    __hash__ = None  # a dict's

    def __repr__(self) -> str:
        _load_all()
        return dict.__repr__(self)

    def __reversed__(self):
        _load_all()
        return dict.__reversed__(self)

    def keys(self):
        _load_all()
        return dict.keys(self)

    def values(self):
        _load_all()
        return dict.values(self)

    def items(self):
        _load_all()
        return dict.items(self)

    def copy(self) -> dict:
        _load_all()
        return dict(self)
