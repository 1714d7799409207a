"""Open what the user named: a ``.safetensors`` file, a ``*.safetensors.index.json``, a
model directory, or a ``.gguf`` file; refuse pickles.  Headers only.

A directory is read as Hugging Face lays one out: ``model.safetensors.index.json`` if
there is one, else ``model.safetensors``, else every ``*.safetensors`` file in it, else
a single ``*.gguf`` file.  A ``config.json`` beside the weights (in the directory, or
beside a file or index) is read too.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from symtrans.catalog.checkpoint.formats import (
    PICKLE_ADVICE,
    PICKLE_SUFFIXES,
    Checkpoint,
    CheckpointError,
    regular_file,
)


def _config_beside(p: Path) -> tuple[dict[str, Any] | None, str | None]:
    from symtrans.catalog.hf_config import ConfigError, read_config

    cfg_path = p / "config.json"
    if not cfg_path.is_file():
        return None, None
    try:
        return read_config(cfg_path), str(cfg_path)
    except ConfigError as e:
        raise CheckpointError(str(e)) from None


def _refuse_pickle(path: str) -> None:
    suffix = os.path.splitext(path)[1].lower()
    raise CheckpointError(f"{path}: a PyTorch pickle checkpoint ({suffix}); {PICKLE_ADVICE}")


def _from_directory(d: Path) -> str:
    """The weights file (or index) to read in directory ``d``."""
    try:
        names = sorted(os.listdir(d))
    except OSError as e:
        raise CheckpointError(f"{d}: cannot be listed ({e.strerror or e})") from None
    indexes = [n for n in names if n.endswith(".safetensors.index.json")]
    if len(indexes) == 1:
        return str(d / indexes[0])
    if len(indexes) > 1:
        raise CheckpointError(f"{d}: several safetensors indexes ({', '.join(indexes)}); name the one to inspect")
    if "model.safetensors" in names:
        return str(d / "model.safetensors")
    shards = [n for n in names if n.endswith(".safetensors")]
    if shards:
        return str(d)  # read every shard (no index): read_checkpoint handles the directory
    ggufs = [n for n in names if n.endswith(".gguf")]
    if len(ggufs) == 1:
        return str(d / ggufs[0])
    if len(ggufs) > 1:
        raise CheckpointError(f"{d}: several GGUF files ({', '.join(ggufs)}); name the one to inspect")
    pickles = [n for n in names if n.lower().endswith(PICKLE_SUFFIXES)]
    if pickles:
        raise CheckpointError(f"{d}: holds only PyTorch pickle weights ({pickles[0]}); {PICKLE_ADVICE}")
    raise CheckpointError(f"{d}: no weights in the directory (no .safetensors, safetensors index or .gguf file)")


def read_checkpoint(path: str) -> Checkpoint:
    """Read the headers of the checkpoint at ``path`` (see the module docstring).

    Raises:
        CheckpointError: one sentence starting with the path: missing, a pickle, a
            directory without weights, or a header that is wrong (see the readers).
    """
    p = Path(path)
    if not p.exists():
        raise CheckpointError(f"{path}: no such file or directory")
    target = _from_directory(p) if p.is_dir() else path
    low = target.lower()
    if low.endswith(PICKLE_SUFFIXES):
        _refuse_pickle(target)
    if not os.path.isdir(target):
        regular_file(target)  # before anything opens it: a FIFO would block the read forever
    if low.endswith(".gguf"):
        from symtrans.catalog.checkpoint import gguf_io

        return gguf_io.read_checkpoint(target)
    if p.name == "config.json":
        raise CheckpointError(
            f"{path}: a config.json alone has no tensors; give the model directory (or use 'symtrans params')"
        )
    if not os.path.isdir(target) and not low.endswith((".json", ".safetensors")):
        # any other name: decide by content (a GGUF magic, else safetensors' header rules)
        try:
            with open(target, "rb") as f:
                magic = f.read(4)
        except OSError as e:
            raise CheckpointError(f"{path}: cannot be read ({e.strerror or e})") from None
        if magic == b"GGUF":
            from symtrans.catalog.checkpoint import gguf_io

            return gguf_io.read_checkpoint(target)
    from symtrans.catalog.checkpoint import safetensors_io

    # the config.json beside safetensors weights (GGUF files carry their own metadata)
    config, config_path = _config_beside(p if p.is_dir() else p.parent)
    if os.path.isdir(target):  # shards without an index
        return safetensors_io.read_shards(target, config, config_path)
    ck = safetensors_io.read_checkpoint(target, config, config_path)
    shard_of = _index_naming(target) if not low.endswith(".json") else None
    if shard_of is not None:
        index, n_shards = shard_of
        note = (
            f"{os.path.basename(target)} is one shard of {n_shards} that {index} names: the tensors of the other "
            f"shards are not in it, so the terms below miss them; inspect {index} (or its directory) for the whole model"
        )
        ck = dataclasses.replace(ck, notes=(note, *ck.notes))
    return ck


def _index_naming(shard: str) -> tuple[str, int] | None:
    """(index path, number of shards) of a ``*.safetensors.index.json`` beside ``shard``
    whose weight map names it among two or more shards; None otherwise (or when no index
    beside it can be read: the note is a help, never a reason to fail)."""
    from symtrans.catalog.checkpoint.safetensors_io import MAX_INDEX_BYTES
    from symtrans.catalog.hf_config import ConfigError, parse_json

    directory, name = os.path.split(shard)
    try:
        names = sorted(n for n in os.listdir(directory or ".") if n.endswith(".safetensors.index.json"))
    except OSError:
        return None
    for n in names:
        path = os.path.join(directory, n)
        try:
            if not os.path.isfile(path) or os.path.getsize(path) > MAX_INDEX_BYTES:
                continue
            with open(path, "rb") as f:
                wm = parse_json(f.read().decode("utf-8-sig")).get("weight_map")
        except (OSError, UnicodeDecodeError, ConfigError, AttributeError):
            continue
        if isinstance(wm, dict):
            shards = {v for v in wm.values() if isinstance(v, str)}
            if name in shards and len(shards) > 1:
                return path, len(shards)
    return None
