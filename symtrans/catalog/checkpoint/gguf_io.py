"""Read a GGUF header: metadata, tensor infos and quantization types; never tensor data.

Why not ``gguf.GGUFReader`` (the llama.cpp project's reader) on this path: it
memory-maps the file and trusts every length it reads, and it builds a numpy view per
array element.  A hostile array that claims 2**60 elements makes it loop for ever; a
string or a tensor running past the end of the file is silently cut short by numpy
slicing and fails later as an IndexError or a reshape error, or yields wrong offsets;
and a real tokenizer array costs it seconds (6 s for Llama's 32,000 tokens on the
project's machine, benchmarks/inspect_checkpoint.py), against the "well under a second"
goal of issue 14.  So this module walks the header itself, checking every length and
count against the bytes that remain before it reads anything (``MAX_HEADER_BYTES`` caps
the header), skipping arrays by their length, and checking that every tensor's data
lies inside the file and that no two tensors overlap.  It touches only the header pages
of a read-only mapping.  The format's facts come from the ``gguf`` package: the value
type numbering (``GGUFValueType``), the ggml types and their block sizes
(``GGMLQuantizationType``, ``GGML_QUANT_SIZES``).  ``tests/test_inspect.py`` checks this
reader against ``GGUFReader`` on the files the tests write.

GGUF layout (ggml docs/gguf.md, versions 2 and 3): magic ``GGUF``, u32 version, u64
tensor count, u64 key-value count; key-values (u64-length string key, u32 type, value);
tensor infos (name, u32 n_dims, u64 dims[n_dims], u32 ggml type, u64 offset); padding
to ``general.alignment`` (default 32); tensor data.
"""

from __future__ import annotations

import mmap
import struct
from typing import Any

from symtrans.catalog.checkpoint.formats import (
    MAX_TENSORS,
    Checkpoint,
    CheckpointError,
    StoredFile,
    StoredTensor,
    need,
    regular_file,
    too_many_tensors,
)

# A GGUF header holds the tokenizer too: the largest vocabularies (256k tokens, with
# scores, types and merges) take about 20 MB.  Beyond this a header is not plausible.
MAX_HEADER_BYTES = 100_000_000
MAX_KEY_BYTES = 65_536
MAX_KEPT_STRING = 4096  # longer string values (chat templates) are kept as their length only
MAX_DIMS = 4  # GGML_MAX_DIMS
MAX_NESTING = 3  # arrays of arrays: the format allows them, real files do not go deeper than 2
# Elements walked one by one (strings, arrays): the largest tokenizer arrays hold 262,144
# tokens (Gemma 3); an array of arrays holds a few hundred pairs.  Walking is Python work
# per element, so these caps keep a hostile header under a second or two.
MAX_STRING_ELEMENTS = 2**20
MAX_NESTED_ELEMENTS = 65_536
SUPPORTED_VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
MAGIC = b"GGUF"


def _value_formats() -> dict[int, str]:
    """GGUF value type -> struct format, numbered by ``gguf.constants.GGUFValueType``."""
    T = need("gguf.constants").GGUFValueType
    return {
        T.UINT8: "B",
        T.INT8: "b",
        T.UINT16: "H",
        T.INT16: "h",
        T.UINT32: "I",
        T.INT32: "i",
        T.FLOAT32: "f",
        T.BOOL: "?",
        T.UINT64: "Q",
        T.INT64: "q",
        T.FLOAT64: "d",
    }


class _Walk:
    """Bounds-checked reads over a read-only mapping of the file (little or big endian)."""

    def __init__(self, path: str, buf: mmap.mmap, size: int, endian: str) -> None:
        T = need("gguf.constants").GGUFValueType
        self.path, self.buf, self.size, self.e = path, buf, size, endian
        self.limit = min(size, MAX_HEADER_BYTES)
        self.walked = 0  # string and array elements walked so far (each costs Python work)
        self.pos = 0
        self.formats = {int(k): (endian + f, struct.calcsize(f)) for k, f in _value_formats().items()}
        self.STRING, self.ARRAY = int(T.STRING), int(T.ARRAY)

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

    def _unpack(self, fmt: str, n: int, what: str):
        self.need(n, what)
        (v,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += n
        return v

    def u32(self, what: str) -> int:
        return self._unpack(self.e + "I", 4, what)

    def u64(self, what: str) -> int:
        return self._unpack(self.e + "Q", 8, what)

    def string(self, what: str, cap: int | None = None, keep: bool = True) -> str | None:
        n = self.u64(f"the length of {what}")
        if cap is not None and n > cap:
            raise self.fail(f"{what} claims {n:,} bytes (limit {cap:,})")
        self.need(n, what)
        s = self.buf[self.pos : self.pos + n] if keep and n <= MAX_KEPT_STRING else None
        self.pos += n
        return None if s is None else s.decode("utf-8", "replace")

    def value(self, vtype: int, key: str, depth: int = 0) -> Any:
        """Read (scalars, short strings) or skip (arrays: their length is returned as
        ``("array", count)``) one value, checking its bounds first."""
        if vtype in self.formats:
            fmt, n = self.formats[vtype]
            return self._unpack(fmt, n, f"the value of {key}")
        if vtype == self.STRING:
            return self.string(f"the string value of {key}")
        if vtype == self.ARRAY:
            if depth >= MAX_NESTING:
                raise self.fail(f"metadata {key}: arrays nested deeper than {MAX_NESTING}")
            itype = self.u32(f"the element type of {key}")
            count = self.u64(f"the length of {key}")
            if itype in self.formats:
                self.need(count * self.formats[itype][1], f"the {count:,} elements of {key}")
                self.pos += count * self.formats[itype][1]
            elif itype in (self.STRING, self.ARRAY):
                cap = MAX_STRING_ELEMENTS if itype == self.STRING else MAX_NESTED_ELEMENTS
                self.walked += count
                if count > cap or self.walked > 4 * MAX_STRING_ELEMENTS:
                    kind = "strings" if itype == self.STRING else "arrays"
                    raise self.fail(
                        f"metadata {key}: an array of {count:,} {kind}, more than symtrans walks "
                        f"(at most {cap:,}; at most {4 * MAX_STRING_ELEMENTS:,} elements in all)"
                    )
                # every element takes at least 8 bytes (a string length) or 12 (an array header)
                if count * (8 if itype == self.STRING else 12) > self.limit - self.pos:
                    raise self.fail(f"metadata {key} claims {count:,} elements, more than the header can hold")
                for _ in range(count):
                    if itype == self.STRING:
                        n = self.u64(f"the length of an element of {key}")
                        self.need(n, f"an element of {key}")
                        self.pos += n
                    else:
                        self.value(itype, key, depth + 1)
            else:
                raise self.fail(f"metadata {key}: unknown array element type {itype}")
            return ("array", count)
        raise self.fail(f"metadata {key}: unknown value type {vtype}")


def read_header(path: str) -> tuple[int, int, dict[str, Any], list[tuple[str, tuple[int, ...], str, int, int]]]:
    """Walk a GGUF header, checking every bound (see the module docstring).

    Returns:
        (file size, bytes before the tensor data, metadata, tensor infos).  Metadata maps
        a key to its scalar or string value (a string over ``MAX_KEPT_STRING`` bytes to
        None); an array is given by its length under ``KEY.length``.  A tensor info is
        (name, ggml ``ne`` dims, ggml type name, elements, bytes).

    Raises:
        CheckpointError: wrong magic or version, truncated file, a length or count the
            file cannot hold, an unknown type, a tensor outside the file or overlapping
            another, or a header over ``MAX_HEADER_BYTES``.
    """
    constants = need("gguf.constants")
    GGML_QUANT_SIZES, GGMLQuantizationType = constants.GGML_QUANT_SIZES, constants.GGMLQuantizationType
    size = regular_file(path)  # before opening: a FIFO would block
    try:
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
        if n_tensors > MAX_TENSORS:
            raise too_many_tensors(path, n_tensors)
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
        meta: dict[str, Any] = {}
        for _ in range(n_kv):
            key = w.string("a metadata key", MAX_KEY_BYTES) or ""
            vtype = w.u32(f"the type of {key}")
            value = w.value(vtype, key)
            if key in meta or f"{key}.length" in meta:
                raise w.fail(f"metadata key {key} appears twice")
            if isinstance(value, tuple):
                meta[f"{key}.length"] = value[1]
            else:
                meta[key] = value
        alignment = meta.get("general.alignment", DEFAULT_ALIGNMENT)
        if (
            not isinstance(alignment, int)
            or isinstance(alignment, bool)
            or alignment <= 0
            or alignment & (alignment - 1)
        ):
            raise w.fail(f"general.alignment {alignment!r} is not a power of two")
        infos, names = [], set()
        for i in range(n_tensors):
            name = w.string(f"the name of tensor {i}", MAX_KEY_BYTES) or ""
            if name in names:
                raise w.fail(f"tensor {name} appears twice")
            names.add(name)
            n_dims = w.u32(f"the rank of tensor {name}")
            if not 1 <= n_dims <= MAX_DIMS:
                raise w.fail(f"tensor {name} has {n_dims} dimensions (GGUF allows 1 to {MAX_DIMS})")
            dims = tuple(w.u64(f"a dimension of tensor {name}") for _ in range(n_dims))
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
            infos.append((name, dims, qtype.name, n, n // block * type_size, offset))
        data_start = w.pos + (-w.pos) % alignment
        spans = []
        for name, _, _, _, nbytes, offset in infos:
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
        return size, data_start, meta, [i[:5] for i in infos]
    finally:
        buf.close()


def read_checkpoint(path: str) -> Checkpoint:
    """The tensors and metadata of a ``.gguf`` file, from its header only.

    Raises:
        CheckpointError: see ``read_header``.
    """
    size, data_start, meta, infos = read_header(path)
    tensors = [
        StoredTensor(
            name=name,
            dtype=dtype,
            shape=tuple(reversed(dims)),  # ggml ne -> PyTorch order
            nbytes=nbytes,
            file=path,
            elements=n,
        )
        for name, dims, dtype, n, nbytes in infos
    ]
    return Checkpoint(
        path=path,
        format="gguf",
        files=(StoredFile(path=path, size=size, header_bytes=data_start),),
        tensors=tuple(tensors),
        metadata=meta,
    )
