"""What a checkpoint stores, as read from its headers: tensors, files, metadata.

``StoredTensor`` is one tensor as the file describes it (name, dtype, shape, bytes) and
``Checkpoint`` the whole of a checkpoint (one file, the shards of an index, or a GGUF
file) with its ``config.json`` if there is one.  Nothing here reads tensor data.

Units: ``elements`` are stored scalars (an int32 that packs eight 4-bit weights is one
element); ``nbytes`` are bytes on disk.  Shapes are in PyTorch order (a linear map
``d_in -> d_out`` is ``(d_out, d_in)``, a GPT-2 ``Conv1D`` ``(d_in, d_out)``); GGUF's
``ne`` order is reversed into this order by the GGUF reader.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from symtrans.base.errors import InputError

# Bits per element of every safetensors dtype (the safetensors 0.8 format: BOOL and the
# 8-bit floats take a byte; F4 and the F6 formats are packed below a byte).
SAFETENSORS_BITS: dict[str, int] = {
    "BOOL": 8,
    "U8": 8,
    "I8": 8,
    "F8_E5M2": 8,
    "F8_E4M3": 8,
    "F8_E8M0": 8,
    "F8_E4M3FNUZ": 8,
    "F8_E5M2FNUZ": 8,
    "I16": 16,
    "U16": 16,
    "F16": 16,
    "BF16": 16,
    "I32": 32,
    "U32": 32,
    "F32": 32,
    "C64": 64,
    "F64": 64,
    "I64": 64,
    "U64": 64,
    "F4": 4,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
}

# Pickle-based PyTorch formats: never opened (unpickling runs code).
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
PICKLE_ADVICE = (
    "symtrans never unpickles weights (loading a pickle can run arbitrary code); convert it to "
    "safetensors (safetensors.torch.save_file, or save_pretrained(..., safe_serialization=True)) "
    "and inspect that"
)


class CheckpointError(InputError):
    """A checkpoint that cannot be read; the message is one sentence starting with the path."""


# The most tensors one checkpoint may hold.  The largest real ones stay far below it:
# DeepSeek-V3 in FP8 stores about 91,000 tensors (58 MoE layers x 256 experts x 3 maps,
# each with its scale), Kimi K2 about 138,000.  Past it, reading and explaining every
# tensor would take more than the 10 s and 1 GiB one command may use.
MAX_TENSORS = 200_000


def regular_file(path: str, what: str = "a checkpoint file") -> int:
    """The size of ``path``, which must be a regular file (checked before it is opened:
    opening a FIFO blocks until a writer comes, a character device never ends).

    Raises:
        CheckpointError: "PATH: no such file", "PATH: is a FIFO (named pipe), not a
            regular file; ...", or "PATH: cannot be read (...)".
    """
    import os
    import stat

    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no such file") from None
    except OSError as e:
        raise CheckpointError(f"{path}: cannot be read ({e.strerror or e})") from None
    if not stat.S_ISREG(st.st_mode):
        kind = next(
            (
                name
                for test, name in (
                    (stat.S_ISFIFO, "a FIFO (named pipe)"),
                    (stat.S_ISCHR, "a character device"),
                    (stat.S_ISBLK, "a block device"),
                    (stat.S_ISSOCK, "a socket"),
                    (stat.S_ISDIR, "a directory"),
                )
                if test(st.st_mode)
            ),
            "not a regular file",
        )
        raise CheckpointError(f"{path}: is {kind}, not a regular file; {what} must be a regular file")
    return st.st_size


def too_many_tensors(path: str, n: int) -> CheckpointError:
    """The refusal of a header that claims more than ``MAX_TENSORS`` tensors."""
    return CheckpointError(
        f"{path}: {n:,} tensors, more than symtrans reads from one checkpoint (at most {MAX_TENSORS:,}; "
        "the largest real models hold about 140,000)"
    )


def need(module: str):
    """Import ``module`` (``safetensors``, ``gguf``), or say how to install it.

    Raises:
        CheckpointError: the package is not installed (``pip install 'symtrans[checkpoint]'``).
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.split(".")[0]
        raise CheckpointError(
            f"reading checkpoints needs the {top} package: pip install 'symtrans[checkpoint]' (or pip install {top})"
        ) from None


@dataclass(frozen=True, slots=True)
class StoredTensor:
    """One stored tensor, from its header entry.

    Attributes:
        name: the key in the file.
        dtype: the safetensors dtype (``F32``, ``BF16``, ``I32``, ...) or the GGML type
            name (``F16``, ``Q8_0``, ``Q4_K``, ...).
        shape: PyTorch order (see the module docstring); for a GGUF block-quantized
            tensor, the shape of the values it represents.
        nbytes: bytes on disk.
        file: the file (shard) that holds it.
        elements: stored elements; for GGUF block-quantized tensors the values the
            blocks encode (the file has no element of its own for them).
    """

    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int
    file: str
    elements: int

    @staticmethod
    def make(name: str, dtype: str, shape: tuple[int, ...], file: str, nbytes: int | None = None) -> "StoredTensor":
        n = math.prod(shape)
        if nbytes is None:
            nbytes = n * SAFETENSORS_BITS[dtype] // 8
        return StoredTensor(name=name, dtype=dtype, shape=tuple(shape), nbytes=nbytes, file=file, elements=n)


@dataclass(frozen=True)
class StoredFile:
    """A file of the checkpoint: its path, size in bytes and header size in bytes."""

    path: str
    size: int
    header_bytes: int


@dataclass(frozen=True)
class Checkpoint:
    """Everything the headers of a checkpoint say.

    Attributes:
        path: what the user named.
        format: ``safetensors`` or ``gguf``.
        files: the files read (one, or every shard).
        tensors: all stored tensors, in file order.
        config: the parsed ``config.json`` beside the weights, or None.
        config_path: its path, or None.
        metadata: safetensors ``__metadata__`` (str -> str), or GGUF scalar key-values
            (arrays are given by their length, under ``KEY.length``).
        notes: what the reader noticed (an index that disagrees with its shards, ...).
    """

    path: str
    format: str
    files: tuple[StoredFile, ...]
    tensors: tuple[StoredTensor, ...]
    config: dict[str, Any] | None = None
    config_path: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def file_bytes(self) -> int:
        return sum(f.size for f in self.files)
