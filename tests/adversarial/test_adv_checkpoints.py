"""Adversarial checkpoints for ``symtrans inspect`` (issue 14, "Bad input").

Each hostile file is derived from a real one written by the format's own writer
(``safetensors.numpy.save``, ``gguf.GGUFWriter``, ``torch.save``) and then corrupted
where the case says: its header length, its JSON, its offsets, its dtype, its magic,
its version, a truncation.  The contract is the ``reject`` fixture's (conftest.py):
exit 2, one line on stderr naming the problem, no traceback, nothing on stdout, no file
written.  Every case is decided from the header: the readers never touch tensor data
(``tests/test_inspect.py::test_sparse_file_reads_nothing_past_the_header``).
"""

from __future__ import annotations

import io
import json
import struct

# numpy is symtrans's own dependency; safetensors and gguf are in the test extra (.ci/run installs
# them): a missing one fails collection loudly rather than skipping.
import gguf  # noqa: E402
import numpy as np  # noqa: E402
import pytest
import safetensors.numpy as st_numpy  # noqa: E402


def real_safetensors() -> bytes:
    return st_numpy.save(
        {
            "model.embed_tokens.weight": np.zeros((8, 4), np.float32),
            "model.norm.weight": np.ones(4, np.float32),
        }
    )


def with_header(blob: bytes, edit) -> bytes:
    """``blob`` (a safetensors file) with its JSON header replaced by ``edit(header)``."""
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n])
    raw = json.dumps(edit(header)).encode()
    return struct.pack("<Q", len(raw)) + raw + blob[8 + n :]


def _overlap(h):
    a, b = h["model.embed_tokens.weight"], h["model.norm.weight"]
    b["data_offsets"] = [a["data_offsets"][1] - 8, a["data_offsets"][1] + 8]
    return h


def _beyond(h):
    h["model.norm.weight"]["data_offsets"][1] += 4096
    h["model.norm.weight"]["shape"] = [4 + 1024]
    return h


def _dtype(h):
    h["model.norm.weight"]["dtype"] = "F17"
    return h


def _shape(h):
    h["model.norm.weight"]["shape"] = [5]
    return h


def real_gguf(tmp_path_factory=None) -> bytes:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.gguf"
        w = gguf.GGUFWriter(str(p), "llama")
        w.add_block_count(1)
        w.add_token_list([f"t{i}" for i in range(8)])
        w.add_tensor("token_embd.weight", np.zeros((8, 32), np.float16))
        w.add_tensor("output_norm.weight", np.ones(32, np.float32))
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        return p.read_bytes()


ST = real_safetensors()
GG = real_gguf()
_TOKENS = GG.find(b"tokenizer.ggml.tokens") + len(b"tokenizer.ggml.tokens") + 8  # after the value and element types

# (id, file name, bytes, needle)
CASES = [
    ("header-length-beyond-file", "m.safetensors", struct.pack("<Q", 10**6) + ST[8:], "only"),
    ("header-over-100MB", "m.safetensors", struct.pack("<Q", 200_000_000) + ST[8:], "limit"),
    ("header-not-json", "m.safetensors", struct.pack("<Q", 16) + b"this is not json" + b"\0" * 8, "not valid"),
    ("overlapping-offsets", "m.safetensors", with_header(ST, _overlap), "offsets"),
    ("offsets-out-of-range", "m.safetensors", with_header(ST, _beyond), "offsets"),
    ("unknown-dtype", "m.safetensors", with_header(ST, _dtype), "unknown dtype 'F17'"),
    ("shape-does-not-match-bytes", "m.safetensors", with_header(ST, _shape), "shape"),
    ("truncated-safetensors", "m.safetensors", ST[:-10], "offsets"),
    ("three-bytes", "m.safetensors", b"abc", "too short"),
    ("gguf-truncated-in-header", "m.gguf", GG[:100], "truncated"),
    ("gguf-truncated-in-data", "m.gguf", GG[:-16], "truncated"),
    ("gguf-truncated-preamble", "m.gguf", GG[:10], "truncated"),
    ("gguf-wrong-magic", "m.gguf", b"GGML" + GG[4:], "magic"),
    ("gguf-version-99", "m.gguf", GG[:4] + struct.pack("<I", 99) + GG[8:], "version 99"),
    ("gguf-version-1", "m.gguf", GG[:4] + struct.pack("<I", 1) + GG[8:], "version 1"),
    ("gguf-2**60-tensors", "m.gguf", GG[:8] + struct.pack("<Q", 2**60) + GG[16:], "tensors"),
    ("gguf-2**50-metadata", "m.gguf", GG[:16] + struct.pack("<Q", 2**50) + GG[24:], "metadata"),
    (
        "gguf-2**40-tokens",
        "m.gguf",
        GG[:_TOKENS] + struct.pack("<Q", 2**40) + GG[_TOKENS + 8 :],
        "tokenizer.ggml.tokens",
    ),
    ("gguf-2**62-byte-key", "m.gguf", GG[:24] + struct.pack("<Q", 2**62) + GG[32:], "key"),
    ("safetensors-named-gguf", "m.gguf", ST, "magic"),
]


@pytest.mark.parametrize("name,fname,content,needle", CASES, ids=[c[0] for c in CASES])
def test_hostile_checkpoint_is_rejected_cleanly(reject, name, fname, content, needle):
    reject(["inspect", fname, "-o", "out.txt"], files={fname: content}, needle=needle)


def test_directory_without_weights(reject):
    reject(["inspect", "empty"], files={"empty/": None}, needle="no weights")


def test_nonexistent_path(reject):
    reject(["inspect", "nowhere.safetensors"], needle="no such file")


def test_config_json_alone(reject):
    reject(["inspect", "config.json"], files={"config.json": '{"model_type": "llama"}'}, needle="no tensors")


def _pickle() -> bytes:
    import torch  # an oracle .ci/run installs: missing, the test fails

    buf = io.BytesIO()
    torch.save({"w": torch.zeros(2, 2)}, buf)
    return buf.getvalue()


@pytest.mark.parametrize("fname", ["pytorch_model.bin", "model.pt", "model.pth"])
def test_pickle_is_refused_with_advice(reject, fname):
    o = reject(["inspect", fname], files={fname: _pickle()}, needle="pickle")
    assert "safetensors" in o.err


def test_pickle_only_directory(reject):
    reject(["inspect", "m"], files={"m/": None, "m/pytorch_model.bin": _pickle()}, needle="pickle")


def test_zip_archive_named_safetensors(reject):
    reject(["inspect", "m.safetensors"], files={"m.safetensors": _pickle()}, needle="zip archive")


def _index(weight_map: dict) -> str:
    return json.dumps({"metadata": {"total_size": 1}, "weight_map": weight_map})


@pytest.mark.parametrize(
    "name,files,needle",
    [
        (
            "shard-outside-the-directory",
            {
                "m/": None,
                "m/model.safetensors.index.json": _index({"model.norm.weight": "../existing_file.safetensors"}),
            },
            "plain file name",
        ),
        (
            "missing-shard",
            {"m/": None, "m/model.safetensors.index.json": _index({"model.norm.weight": "model-1.safetensors"})},
            "missing",
        ),
        (
            "tensor-not-in-its-shard",
            {
                "m/": None,
                "m/model.safetensors.index.json": _index({"lm_head.weight": "model-1.safetensors"}),
                "m/model-1.safetensors": ST,
            },
            "not in it",
        ),
        ("index-not-json", {"m/": None, "m/model.safetensors.index.json": "{nope"}, "not a safetensors index"),
        ("index-without-weight-map", {"m/": None, "m/model.safetensors.index.json": "{}"}, "weight_map"),
    ],
    ids=lambda x: x if isinstance(x, str) and "/" not in x and len(x) < 40 else "",
)
def test_hostile_index_is_rejected_cleanly(reject, name, files, needle):
    reject(["inspect", "m"], files=files, needle=needle)


def test_rejected_in_a_real_process(reject):
    """The same contract through ``python -m symtrans`` (no in-process shortcuts)."""
    reject(["inspect", "m.gguf"], files={"m.gguf": GG[:100]}, needle="truncated", inprocess=False)


def test_output_onto_a_shard_is_refused(reject):
    """-o naming a file of the checkpoint would replace the weights with the report."""
    reject(["inspect", "m", "-o", "m/model.safetensors"], files={"m/": None, "m/model.safetensors": ST}, needle="-o")
