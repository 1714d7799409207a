"""Read safetensors headers: one file, a sharded ``*.safetensors.index.json``, a directory.

Names, dtypes and shapes come from the ``safetensors`` library's ``safe_open``, which
maps the file and parses only its header (``get_slice(name)`` gives dtype and shape
without touching the data).  The library validates the header fully (header length
against the file size and its 100 MB limit, strict JSON, known dtypes, data offsets
that tile the data area exactly); its errors are translated into one sentence here.

Before ``safe_open`` this module reads the first 8 bytes itself, only to say *what* is
wrong in the user's terms (a pickle or zip archive, a header length larger than the
file, a header over the format's limit) instead of the library's terse variant names.
"""

from __future__ import annotations

import json
import os
import re
import struct
from pathlib import Path
from typing import Any

from symtrans.catalog.checkpoint.formats import (
    MAX_TENSORS,
    PICKLE_ADVICE,
    SAFETENSORS_BITS,
    Checkpoint,
    CheckpointError,
    StoredFile,
    StoredTensor,
    need,
    regular_file,
    too_many_tensors,
)

# The safetensors format's own limit on the JSON header (safetensors' MAX_HEADER_SIZE).
MAX_HEADER_BYTES = 100_000_000
# An index.json maps tensor names to shard files: a few hundred kB for the largest models.
MAX_INDEX_BYTES = 64 * 2**20

_ZIP_MAGIC = b"PK\x03\x04"  # torch.save's default format since PyTorch 1.6 (a zip of pickles)
_PICKLE_MAGIC = (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")  # a bare pickle, protocols 2-5


def _refuse_archive(path: str, head: bytes) -> None:
    if head.startswith(_ZIP_MAGIC):
        raise CheckpointError(f"{path}: a zip archive (torch.save's format), not safetensors; {PICKLE_ADVICE}")
    if head[:2] in _PICKLE_MAGIC:
        raise CheckpointError(f"{path}: a Python pickle, not safetensors; {PICKLE_ADVICE}")


def header_length(path: str) -> tuple[int, int]:
    """(file size, header length) of a safetensors file, checked against the file.

    Reads 8 bytes.  Raises CheckpointError for a file shorter than 8 bytes, a pickle or
    zip archive, a header length beyond the file or beyond the 100 MB format limit.
    """
    size = regular_file(path)
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no such file") from None
    except OSError as e:
        raise CheckpointError(f"{path}: cannot be read ({e.strerror or e})") from None
    if len(head) < 8:
        raise CheckpointError(
            f"{path}: {len(head)} bytes, too short for safetensors (a file starts with an 8-byte header length)"
        )
    (n,) = struct.unpack("<Q", head)
    if n > MAX_HEADER_BYTES or 8 + n > size:
        # Only a length that cannot be right is explained by the magic: a valid header
        # length (640 is b"\x80\x02...") may begin like a pickle.
        _refuse_archive(path, head)
    if n > MAX_HEADER_BYTES:
        raise CheckpointError(
            f"{path}: the header length field says {n:,} bytes, over the safetensors limit of "
            f"{MAX_HEADER_BYTES:,} bytes (not a safetensors file, or a hostile one)"
        )
    if 8 + n > size:
        raise CheckpointError(
            f"{path}: the header length field says {n:,} bytes but the file has only {size:,} bytes "
            "(truncated, or not a safetensors file)"
        )
    return size, n


_UNKNOWN_DTYPE = re.compile(r"unknown variant `([^`]*)`")
_TENSOR = re.compile(r"tensor `([^`]*)`")


def _explain(path: str, message: str) -> str:
    """One sentence for a SafetensorError (its messages name Rust error variants)."""
    text = message.split("Error while deserializing header: ", 1)[-1]
    m = _UNKNOWN_DTYPE.search(text)
    if m:
        return f"{path}: unknown dtype {m.group(1)!r} in the header (known: {', '.join(SAFETENSORS_BITS)})"
    if "invalid JSON" in text or "InvalidHeaderDeserialization" in text:
        return f"{path}: the header is not valid safetensors JSON ({text.split(': ', 1)[-1][:160]})"
    if "invalid offset" in text or "InvalidOffset" in text:
        m = _TENSOR.search(text)
        who = f"tensor {m.group(1)!r}" if m else "a tensor"
        return f"{path}: the data offsets of {who} overlap another tensor, leave a gap or run out of range"
    if "not fully covered" in text or "MetadataIncompleteBuffer" in text:
        return f"{path}: the tensors' data offsets do not cover the data area exactly (out of range, or truncated)"
    if "invalid shape" in text or "TensorInvalidInfo" in text:
        return f"{path}: a tensor's shape and dtype do not match the length of its data offsets"
    if "overflow" in text.lower():
        return f"{path}: a tensor's shape is too large to be real (its byte size overflows)"
    if "header too small" in text.lower():
        return f"{path}: too short for safetensors (no complete header)"
    return f"{path}: not a valid safetensors file ({' '.join(text.split())[:200]})"


def _count_tensors(path: str, n: int) -> None:
    """Refuse a header of more than ``MAX_TENSORS`` tensors before the library parses it
    (a 10^6-tensor header took 20 s and 992 MiB): every tensor entry has one
    ``data_offsets`` key, so counting that word bounds the count from above.  The header is
    read in pieces; the word is found across piece boundaries too."""
    word, count, tail = b'"data_offsets"', 0, b""
    with open(path, "rb") as f:
        f.seek(8)
        left = n
        while left > 0:
            piece = f.read(min(left, 1 << 22))
            if not piece:
                break
            left -= len(piece)
            chunk = tail + piece
            count += chunk.count(word)
            tail = chunk[-(len(word) - 1) :]
            if count > MAX_TENSORS:
                raise too_many_tensors(path, count)


def read_file(path: str) -> tuple[StoredFile, list[StoredTensor], dict[str, str]]:
    """The tensors of one ``.safetensors`` file, from its header only.

    Returns:
        (file, tensors in offset order, ``__metadata__``).

    Raises:
        CheckpointError: one sentence naming the file and what is wrong.
    """
    size, n = header_length(path)
    _count_tensors(path, n)
    st = need("safetensors")
    SafetensorError, safe_open = st.SafetensorError, st.safe_open
    try:
        # The library validates the whole header (strict JSON, known dtypes, offsets that
        # tile the data area); framework="numpy" so torch need not be imported.
        with safe_open(path, framework="numpy") as f:
            meta = f.metadata() or {}
        # Then names, dtypes and shapes come from the same validated bytes in one C-level
        # JSON parse: a get_slice per tensor cost 20 us each (2 s for 90,000 tensors).
        with open(path, "rb") as fh:
            fh.seek(8)
            header = json.loads(fh.read(n))
    except SafetensorError as e:
        raise CheckpointError(_explain(path, str(e))) from None
    except OSError as e:
        raise CheckpointError(f"{path}: cannot be read ({e.strerror or e})") from None
    header.pop("__metadata__", None)
    # File order, as the library's offset_keys gives it; the name settles zero-byte ties.
    # (Keys of (offsets, name) pairs, no key function: a call per tensor cost 0.1 s.)
    order = sorted([(e["data_offsets"], k) for k, e in header.items()])
    tensors = []
    for _, name in order:
        entry = header.pop(name)  # each entry freed once read: the parsed header is not held beside the tensors
        dtype = entry["dtype"]
        if dtype not in SAFETENSORS_BITS:  # a dtype newer than this table
            raise CheckpointError(f"{path}: tensor {name!r} has dtype {dtype}, which symtrans does not know")
        tensors.append(StoredTensor.make(name, dtype, tuple(entry["shape"]), path))
    return StoredFile(path=path, size=size, header_bytes=8 + n), tensors, dict(meta)


def read_index(path: str) -> tuple[list[StoredFile], list[StoredTensor], list[str]]:
    """The tensors of every shard a ``model.safetensors.index.json`` names.

    Checks that each shard is a plain file name in the index's directory (no path
    separators, no ``..``), that every tensor of the weight map is in the shard it
    names, and that no tensor is in two shards.

    Returns:
        (shard files, tensors, notes).

    Raises:
        CheckpointError: one sentence naming the index and what is wrong.
    """
    from symtrans.catalog.hf_config import ConfigError, parse_json

    p = Path(path)
    try:
        size = regular_file(path, "a safetensors index")
        if size > MAX_INDEX_BYTES:
            raise CheckpointError(
                f"{path}: {size:,} bytes, too large for a safetensors index (limit {MAX_INDEX_BYTES:,})"
            )
        raw = p.read_bytes()
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no such file") from None
    except OSError as e:
        raise CheckpointError(f"{path}: cannot be read ({e.strerror or e})") from None
    try:
        index = parse_json(raw.decode("utf-8-sig"))
    except (ConfigError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{path}: not a safetensors index ({e})") from None
    wm = index.get("weight_map")
    if not isinstance(wm, dict) or not wm:
        raise CheckpointError(f"{path}: not a safetensors index (no weight_map object naming the shards)")
    if len(wm) > MAX_TENSORS:
        raise too_many_tensors(path, len(wm))
    shards: dict[str, list[str]] = {}
    for name, shard in wm.items():
        if not isinstance(shard, str) or not shard.endswith(".safetensors"):
            raise CheckpointError(f"{path}: weight_map[{name!r}] must name a .safetensors shard, not {shard!r}")
        if os.path.basename(shard) != shard or shard in (".", ".."):
            raise CheckpointError(f"{path}: shard {shard!r} is not a plain file name beside the index")
        shards.setdefault(shard, []).append(name)
    files, tensors, notes = [], [], []
    seen: dict[str, str] = {}
    for shard, names in shards.items():
        spath = str(p.parent / shard)
        if not os.path.exists(spath):
            raise CheckpointError(f"{path}: shard {shard} is missing ({len(names)} tensors are mapped to it)")
        f, ts, _ = read_file(spath)
        files.append(f)
        have = {t.name for t in ts}
        absent = [n for n in names if n not in have]
        if absent:
            raise CheckpointError(
                f"{path}: {len(absent)} tensor(s) mapped to {shard} are not in it (first: {absent[0]!r})"
            )
        extra = sorted(have - set(names))
        if extra:
            notes.append(f"{shard} holds {len(extra)} tensor(s) the index does not map (first: {extra[0]}); counted")
        for t in ts:
            if t.name in seen:
                raise CheckpointError(f"{path}: tensor {t.name!r} is stored in both {seen[t.name]} and {shard}")
            seen[t.name] = shard
        tensors += ts
        if len(tensors) > MAX_TENSORS:
            raise too_many_tensors(path, len(tensors))
    total = index.get("metadata", {}).get("total_size") if isinstance(index.get("metadata"), dict) else None
    if isinstance(total, int) and not isinstance(total, bool):
        data = sum(t.nbytes for t in tensors)
        if total != data:
            notes.append(f"the index's metadata.total_size is {total:,} bytes; the shards' tensors hold {data:,}")
    return files, tensors, notes


def read_shards(directory: str, config: dict[str, Any] | None, config_path: str | None) -> Checkpoint:
    """Every ``*.safetensors`` file of a directory that has no index, as one checkpoint.

    Raises:
        CheckpointError: a bad file, or one tensor name in two files.
    """
    names = sorted(n for n in os.listdir(directory) if n.endswith(".safetensors"))
    files, tensors, seen = [], [], {}
    for n in names:
        f, ts, _ = read_file(os.path.join(directory, n))
        files.append(f)
        for t in ts:
            if t.name in seen:
                raise CheckpointError(f"{directory}: tensor {t.name!r} is stored in both {seen[t.name]} and {n}")
            seen[t.name] = n
        tensors += ts
        if len(tensors) > MAX_TENSORS:
            raise too_many_tensors(directory, len(tensors))
    notes = (
        [f"no safetensors index: read all {len(names)} .safetensors files in the directory"] if len(names) > 1 else []
    )
    return Checkpoint(
        path=directory,
        format="safetensors",
        files=tuple(files),
        tensors=tuple(tensors),
        config=config,
        config_path=config_path,
        notes=tuple(notes),
    )


def read_checkpoint(path: str, config: dict[str, Any] | None, config_path: str | None) -> Checkpoint:
    """A ``.safetensors`` file or an ``.index.json`` (dispatch on the name)."""
    if path.endswith(".json"):
        files, tensors, notes = read_index(path)
        meta: dict[str, Any] = {}
    else:
        f, tensors, meta = read_file(path)
        files, notes = [f], []
    return Checkpoint(
        path=path,
        format="safetensors",
        files=tuple(files),
        tensors=tuple(tensors),
        config=config,
        config_path=config_path,
        metadata=meta,
        notes=tuple(notes),
    )
