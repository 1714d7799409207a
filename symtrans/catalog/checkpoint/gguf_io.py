"""Read a GGUF header: metadata, tensor infos and quantization types.

The reading itself is ``gguf.GGUFReader`` (the llama.cpp project's package).  Before it
runs, ``check_header`` walks the header's *bounds* on its own, without building any
value, and refuses the file if a length or count cannot be right.  Why: GGUFReader
memory-maps the file and trusts every length it reads.  An array that claims 2**60
elements makes it loop for ever; a string or a tensor that runs past the end of the
file is silently cut short by numpy slicing and then fails as an IndexError or a
reshape error deep inside the library, or worse, yields wrong offsets; a truncated file
gives the same.  The walk checks each field against the bytes that remain, caps the
header at ``MAX_HEADER_BYTES``, and checks that every tensor's data lies inside the file
and that no two tensors overlap.  It touches only header pages of the mapping.

GGUF layout (ggml docs/gguf.md, versions 2 and 3): magic ``GGUF``, u32 version, u64
tensor count, u64 key-value count; key-values (u64-length string key, u32 type, value);
tensor infos (name, u32 n_dims, u64 dims[n_dims], u32 ggml type, u64 offset); padding
to ``general.alignment`` (default 32); tensor data.
"""

from __future__ import annotations

import mmap
import os
import struct
from typing import Any

from symtrans.catalog.checkpoint.formats import Checkpoint, CheckpointError, StoredFile, StoredTensor

# A GGUF header holds the tokenizer too: the largest vocabularies (256k tokens, with
# scores, types and merges) take about 20 MB.  Beyond this a header is not plausible.
MAX_HEADER_BYTES = 100_000_000
MAX_KEY_BYTES = 65_536
MAX_DIMS = 4  # GGML_MAX_DIMS
MAX_NESTING = 3  # arrays of arrays: the format allows them, real files do not go deeper than 2
SUPPORTED_VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
MAGIC = b"GGUF"

# GGUF value types -> size in bytes (None: string, array).
_SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9


class _Walk:
    """Bounds checks over a read-only mapping of the file (little or big endian)."""

    def __init__(self, path: str, buf: mmap.mmap, size: int, endian: str) -> None:
        self.path, self.buf, self.size, self.e = path, buf, size, endian
        self.limit = min(size, MAX_HEADER_BYTES)
        self.pos = 0

    def fail(self, what: str) -> CheckpointError:
        return CheckpointError(f"{self.path}: {what}")

    def need(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > self.limit:
            if self.pos + n > self.size:
                raise self.fail(
                    f"truncated GGUF: {what} at byte {self.pos:,} runs past the end of the file ({self.size:,} bytes)"
                )
            raise self.fail(
                f"the GGUF header runs past {MAX_HEADER_BYTES:,} bytes ({what} at byte {self.pos:,}): not plausible"
            )

    def u32(self, what: str) -> int:
        self.need(4, what)
        (v,) = struct.unpack_from(self.e + "I", self.buf, self.pos)
        self.pos += 4
        return v

    def u64(self, what: str) -> int:
        self.need(8, what)
        (v,) = struct.unpack_from(self.e + "Q", self.buf, self.pos)
        self.pos += 8
        return v

    def string(self, what: str, cap: int | None = None) -> bytes:
        n = self.u64(f"the length of {what}")
        if cap is not None and n > cap:
            raise self.fail(f"{what} claims {n:,} bytes (limit {cap:,})")
        self.need(n, what)
        s = self.buf[self.pos : self.pos + n]
        self.pos += n
        return s

    def skip(self, n: int, what: str) -> None:
        self.need(n, what)
        self.pos += n

    def value(self, vtype: int, key: str, depth: int = 0) -> None:
        if vtype in _SCALAR:
            self.skip(_SCALAR[vtype], f"the value of {key}")
        elif vtype == _STRING:
            n = self.u64(f"the length of {key}")
            self.skip(n, f"the string value of {key}")
        elif vtype == _ARRAY:
            if depth >= MAX_NESTING:
                raise self.fail(f"metadata {key}: arrays nested deeper than {MAX_NESTING}")
            itype = self.u32(f"the element type of {key}")
            count = self.u64(f"the length of {key}")
            if itype in _SCALAR:
                self.skip(count * _SCALAR[itype], f"the {count:,} elements of {key}")
            elif itype in (_STRING, _ARRAY):
                # every element takes at least 8 bytes (a string length or an array header)
                if count * (8 if itype == _STRING else 12) > self.limit - self.pos:
                    raise self.fail(f"metadata {key} claims {count:,} elements, more than the header can hold")
                for _ in range(count):
                    self.value(itype, key, depth + 1)
            else:
                raise self.fail(f"metadata {key}: unknown array element type {itype}")
        else:
            raise self.fail(f"metadata {key}: unknown value type {vtype}")


def check_header(path: str) -> tuple[int, int]:
    """Walk a GGUF header's bounds (see the module docstring); nothing is built.

    Returns:
        (file size, header bytes up to the start of the tensor data).

    Raises:
        CheckpointError: wrong magic or version, truncated file, a length or count the
            file cannot hold, an unknown type, a tensor outside the file or overlapping
            another, or a header over ``MAX_HEADER_BYTES``.
    """
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    try:
        size = os.stat(path).st_size
        with open(path, "rb") as fh:
            if size < 24:
                head = fh.read(4)
                if not MAGIC.startswith(head):
                    raise CheckpointError(f"{path}: not a GGUF file (it does not start with the magic 'GGUF')")
                raise CheckpointError(f"{path}: truncated GGUF ({size} bytes, less than the 24-byte preamble)")
            buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no such file") from None
    except OSError as e:
        raise CheckpointError(f"{path}: cannot be read ({e.strerror or e})") from None
    try:
        if buf[:4] != MAGIC:
            raise CheckpointError(f"{path}: not a GGUF file (it starts with {bytes(buf[:4])!r}, not the magic 'GGUF')")
        (v,) = struct.unpack_from("<I", buf, 4)
        endian = "<"
        if v & 0xFFFF == 0 and v:  # a big-endian file read on a little-endian host (as GGUFReader checks)
            endian = ">"
            (v,) = struct.unpack_from(">I", buf, 4)
        if v not in SUPPORTED_VERSIONS:
            raise CheckpointError(f"{path}: GGUF version {v} is not supported (versions 2 and 3 are)")
        w = _Walk(path, buf, size, endian)
        w.pos = 8
        n_tensors = w.u64("the tensor count")
        n_kv = w.u64("the key-value count")
        # smallest key-value: 8-byte key length, 1-byte key, 4-byte type, 1-byte value;
        # smallest tensor info: 8 + 1 name, 4 n_dims, 8 one dim, 4 type, 8 offset.
        left = w.limit - w.pos
        if n_kv * 14 > left:
            raise w.fail(
                f"truncated or corrupt GGUF: the header claims {n_kv:,} metadata entries, "
                f"more than the {left:,} bytes after the preamble can hold"
            )
        if n_tensors * 33 > left:
            raise w.fail(
                f"truncated or corrupt GGUF: the header claims {n_tensors:,} tensors, "
                f"more than the {left:,} bytes after the preamble can hold"
            )
        alignment = DEFAULT_ALIGNMENT
        for _ in range(n_kv):
            raw_key = w.string("a metadata key", MAX_KEY_BYTES)
            key = raw_key.decode("utf-8", "replace")
            vtype = w.u32(f"the type of {key}")
            start = w.pos
            w.value(vtype, key)
            if key == "general.alignment":
                if vtype != 4:
                    raise w.fail("general.alignment must be a uint32")
                (alignment,) = struct.unpack_from(endian + "I", buf, start)
                if alignment == 0 or alignment & (alignment - 1):
                    raise w.fail(f"general.alignment {alignment} is not a power of two")
        infos = []
        for i in range(n_tensors):
            name = w.string(f"the name of tensor {i}", MAX_KEY_BYTES).decode("utf-8", "replace")
            n_dims = w.u32(f"the rank of tensor {name}")
            if not 1 <= n_dims <= MAX_DIMS:
                raise w.fail(f"tensor {name} has {n_dims} dimensions (GGUF allows 1 to {MAX_DIMS})")
            dims = [w.u64(f"a dimension of tensor {name}") for _ in range(n_dims)]
            gtype = w.u32(f"the type of tensor {name}")
            offset = w.u64(f"the data offset of tensor {name}")
            try:
                qtype = GGMLQuantizationType(gtype)
                block, type_size = GGML_QUANT_SIZES[qtype]
            except (ValueError, KeyError):
                raise w.fail(f"tensor {name} has unknown ggml type {gtype}") from None
            n = 1
            for d in dims:
                n *= d
            if n > 2**62:
                raise w.fail(f"tensor {name} claims {n:,} elements: not a real tensor")
            if dims[0] % block:
                raise w.fail(f"tensor {name}: {qtype.name} needs rows that are a multiple of {block}, not {dims[0]}")
            infos.append((name, offset, n // block * type_size))
        data_start = w.pos + (-w.pos) % alignment
        spans = []
        for name, offset, nbytes in infos:
            if offset % alignment:
                raise w.fail(f"tensor {name}: data offset {offset:,} is not a multiple of the alignment {alignment}")
            if data_start + offset + nbytes > size:
                raise w.fail(
                    f"truncated GGUF: tensor {name} ends at byte {data_start + offset + nbytes:,}, "
                    f"past the end of the file ({size:,} bytes)"
                )
            spans.append((offset, offset + nbytes, name))
        spans.sort()
        for (_, end, a), (start, _, b) in zip(spans, spans[1:]):
            if start < end:
                raise w.fail(f"tensors {a} and {b} overlap in the data area")
        return size, data_start
    finally:
        buf.close()


def _scalar(field: Any) -> Any:
    """A GGUF metadata value for the Checkpoint: scalars and strings as is, arrays by length."""
    from gguf.constants import GGUFValueType

    if not field.types:
        return None
    if field.types[0] == GGUFValueType.ARRAY:
        return None
    v = field.contents()
    return v


def read_checkpoint(path: str) -> Checkpoint:
    """The tensors and metadata of a ``.gguf`` file, from its header only.

    Raises:
        CheckpointError: see ``check_header``; also anything GGUFReader itself refuses.
    """
    size, data_start = check_header(path)
    from gguf import GGUFReader
    from gguf.constants import GGUFValueType

    try:
        r = GGUFReader(path)  # memory-maps; after check_header no field can run out of bounds
    except (ValueError, KeyError, IndexError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{path}: not a readable GGUF file ({e})") from None
    meta: dict[str, Any] = {}
    for key, field in r.fields.items():
        if key.startswith("GGUF."):
            continue
        if field.types and field.types[0] == GGUFValueType.ARRAY:
            meta[f"{key}.length"] = len(field.data)
        else:
            meta[key] = _scalar(field)
    tensors = []
    for t in r.tensors:
        shape = tuple(int(x) for x in reversed(t.shape.tolist()))  # ggml ne -> PyTorch order
        tensors.append(
            StoredTensor(
                name=t.name,
                dtype=t.tensor_type.name,
                shape=shape,
                nbytes=int(t.n_bytes),
                file=path,
                elements=int(t.n_elements),
            )
        )
    return Checkpoint(
        path=path,
        format="gguf",
        files=(StoredFile(path=path, size=size, header_bytes=data_start),),
        tensors=tuple(tensors),
        metadata=meta,
    )
