"""Quantized tensors: the parameters they represent, and what is only metadata.

Packed integer layouts (one stored int32 holds 32/b weights of b bits):

* GPTQ (AutoGPTQ / GPTQModel; transformers' ``GPTQConfig``), for a linear map with
  K inputs and N outputs and groups of g inputs: ``qweight`` int32 (K*b/32, N),
  ``qzeros`` int32 (K/g, N*b/32), ``scales`` fp16 (K/g, N), ``g_idx`` int32 (K).
* AWQ (AutoAWQ, GEMM version): ``qweight`` int32 (K, N*b/32), ``qzeros`` int32
  (K/g, N*b/32), ``scales`` fp16 (K/g, N).
* compressed-tensors ``pack-quantized``: ``weight_packed`` int32 (N, K*b/32).
* bitsandbytes 4-bit (nf4/fp4): ``weight`` uint8 holding two values per byte, with
  ``weight.absmax``, ``weight.quant_map``, ``weight.quant_state.*`` as metadata.

``qweight`` (etc.) represents K*N parameters; ``qzeros``, ``scales``, ``g_idx``, FP8
``weight_scale``/``input_scale`` and bitsandbytes' ``SCB``/``absmax`` are quantization
metadata, not parameters.  GGUF block types (Q4_0, Q8_0, Q4_K, ...) store the number
of values in the tensor info already; what a block holds beyond its b-bit values (its
fp16 scale, and min for the _1/_K types) is metadata in bytes: ``gguf_payload_bits``
gives b for the types whose nominal width is exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from symtrans.catalog.checkpoint.formats import SAFETENSORS_BITS, StoredTensor

# Nominal bits per value of GGML block types whose values have a fixed width (the
# rest of a block is scales/mins).  I-quants (IQ2_XXS, ...) encode values through
# lattice codebooks and have no such width: their metadata is not separated.
GGUF_PAYLOAD_BITS = {
    "Q4_0": 4,
    "Q4_1": 4,
    "Q5_0": 5,
    "Q5_1": 5,
    "Q8_0": 8,
    "Q8_1": 8,
    "Q2_K": 2,
    "Q3_K": 3,
    "Q4_K": 4,
    "Q5_K": 5,
    "Q6_K": 6,
    "Q8_K": 8,
    "IQ4_NL": 4,
    "IQ4_XS": 4,
    "MXFP4": 4,
    "TQ2_0": 2,
    "Q1_0": 1,
}
# Unquantized GGML types: their bytes are all values.
GGUF_PLAIN = ("F32", "F16", "BF16", "F64", "I8", "I16", "I32", "I64")


@dataclass(frozen=True)
class Scheme:
    """A checkpoint's quantization, from ``config.json``'s ``quantization_config``.

    ``method`` is e.g. ``gptq``, ``awq``, ``bitsandbytes``, ``compressed-tensors``,
    ``fp8``; ``bits`` and ``group_size`` are None when the config does not say.
    """

    method: str | None = None
    bits: int | None = None
    group_size: int | None = None


def scheme_from_config(cfg: dict[str, Any] | None) -> Scheme:
    """The quantization scheme a config.json declares (an empty Scheme if none)."""
    qc = cfg.get("quantization_config") if isinstance(cfg, dict) else None
    if not isinstance(qc, dict):
        return Scheme()
    method = qc.get("quant_method") if isinstance(qc.get("quant_method"), str) else None
    bits = qc.get("bits") if isinstance(qc.get("bits"), int) and not isinstance(qc.get("bits"), bool) else None
    if bits is None:  # compressed-tensors: config_groups.*.weights.num_bits
        for group in (qc.get("config_groups") or {}).values() if isinstance(qc.get("config_groups"), dict) else ():
            w = group.get("weights") if isinstance(group, dict) else None
            if isinstance(w, dict) and isinstance(w.get("num_bits"), int):
                bits = w["num_bits"]
                break
    if bits is None and qc.get("load_in_4bit") is True:
        bits = 4
    gs = qc.get("group_size") if isinstance(qc.get("group_size"), int) else None
    return Scheme(method=method, bits=bits, group_size=gs)


@dataclass(frozen=True)
class Unpacked:
    """A packed tensor unpacked: the (d_out, d_in) shape it represents, its method and bits."""

    shape: tuple[int, ...]
    method: str
    bits: int
    note: str = ""


def unpack(packed: StoredTensor, leaf: str, siblings: dict[str, StoredTensor], scheme: Scheme) -> Unpacked | None:
    """The logical shape (N, K) of a packed ``qweight`` / ``weight_packed``, or None if the
    layout cannot be told (then it is counted as stored, with a note by the caller).

    ``siblings`` are the other tensors of the same module, by leaf (``scales``,
    ``g_idx``, ``qzeros``).  Bits: the config's, else from ``g_idx`` (GPTQ: K = len(g_idx)),
    else 4 (the common case; the note says so).
    """
    if len(packed.shape) != 2:
        return None
    word = SAFETENSORS_BITS.get(packed.dtype, 0)
    if word not in (32, 64) or not packed.dtype.startswith(("I", "U")):
        return None
    rows, cols = packed.shape
    scales, g_idx = siblings.get("scales"), siblings.get("g_idx")
    bits, note = scheme.bits, ""
    if leaf == "weight_packed":  # compressed-tensors: (N, K*b/32)
        if bits is None:
            bits, note = 4, "bits not declared: assumed 4"
        return Unpacked((rows, cols * word // bits), "compressed-tensors", bits, note)
    method = scheme.method if scheme.method in ("gptq", "awq") else None
    if method is None:
        if g_idx is not None:
            method = "gptq"
        elif scales is not None and len(scales.shape) == 2:
            method = "gptq" if scales.shape[1] == cols else "awq"
        else:
            return None
    if bits is None:
        if method == "gptq" and g_idx is not None and len(g_idx.shape) == 1 and g_idx.shape[0]:
            k = g_idx.shape[0]
            if (rows * word) % k == 0:
                bits = rows * word // k
        if bits is None:
            bits, note = 4, "bits not declared: assumed 4"
    if (word % bits) and bits not in (3,):  # 3-bit GPTQ packs across word boundaries, still K*3/32 rows
        return None
    if method == "gptq":
        k, n = rows * word // bits, cols
    else:
        k, n = rows, cols * word // bits
    if scales is not None and len(scales.shape) == 2 and scales.shape[1] != n:
        note = (note + "; " if note else "") + f"scales have {scales.shape[1]} columns, not {n}: layout unsure"
    return Unpacked((n, k), method, bits, note)


def gguf_payload_bytes(t: StoredTensor) -> int | None:
    """Bytes of a GGUF tensor that are values (elements x nominal bits / 8), or None when
    the type has no fixed value width; all bytes for unquantized types."""
    if t.dtype in GGUF_PLAIN:
        return t.nbytes
    bits = GGUF_PAYLOAD_BITS.get(t.dtype)
    if bits is None:
        return None
    return t.elements * bits // 8
