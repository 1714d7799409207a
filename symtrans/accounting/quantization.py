"""Weight formats: the bytes a checkpoint's tensors take, exact from each format's
documented layout.  ``memory``, ``time`` and ``deploy`` all count weights here.

A ``WeightFormat`` is a dtype for the tensors kept as they are (``memory.DTYPES``) and,
optionally, a ``Quantization`` for the matrices a quantizer replaces.  The Cost tree's
``Step.matrices`` name the 2-D tensors (``engine.cost.Matrix``: rows x cols in
PyTorch's layout, a linear map's weight being (d_out, d_in)); everything else a step
stores is a vector (norms, biases).  Per matrix of N = rows output features and
K = cols input features, with b bits and group size g:

* **GPTQ** (``quant_method: gptq``; AutoGPTQ ``QuantLinear`` buffers, the layout
  transformers and vLLM load): ``qweight`` int32 (K/32·b, N) = K·N·b/8 bytes,
  ``qzeros`` int32 (ceil(K/g), N/32·b) = ceil(K/g)·N·b/8, ``scales`` fp16 (ceil(K/g), N)
  = 2·ceil(K/g)·N, ``g_idx`` int32 (K) = 4·K.  group_size -1 is one group (g = K).
  K and N must be multiples of 32 (32/b values are packed per int32 along both).
* **AWQ** GEMM (``quant_method: awq``, ``version: gemm``; AutoAWQ ``WQLinear_GEMM``):
  ``qweight`` int32 (K, N·b/32) = K·N·b/8, ``qzeros`` int32 (K/g, N·b/32) = (K/g)·N·b/8,
  ``scales`` fp16 (K/g, N) = 2·(K/g)·N; no ``g_idx``.  K must be a multiple of g.
* **bitsandbytes 4-bit** nf4/fp4 (``bitsandbytes.functional.quantize_4bit``, blocksize
  64): the packed data ceil(n/2) bytes for n = K·N values, one fp32 absmax per block of
  64 (4·ceil(n/64)); with double quantization (``compress_statistics``, Dettmers et al.
  2023 QLoRA §3) the absmax are themselves quantized to uint8 in blocks of 256:
  ceil(n/64) bytes, plus one fp32 absmax per 256 of them and one fp32 offset.
  QLoRA's bits per parameter: 4 + 32/64 = 4.5, and 4 + 8/64 + 32/(64·256) = 4.127 with
  double quantization.  Each tensor's QuantState also holds the 16-entry code (nf4 or
  fp4, fp32: 64 bytes) and, nested, the 256-entry dynamic map (fp32: 1,024 bytes), as
  ``QuantState.as_dict`` saves them; its packed JSON of shapes and names is not counted.
* **bitsandbytes 8-bit** (LLM.int8(), Dettmers et al. 2022 §3; ``Int8Params``): int8
  weights K·N bytes plus one fp32 scale per output row (``SCB``): 4·N.
* **GGUF** (llama.cpp ``ggml-common.h`` block structs): Q8_0 is 34 bytes per 32
  weights (fp16 d + 32 int8), Q4_0 18 per 32 (fp16 d + 16 bytes of nibbles), Q4_K 144
  per 256 (fp16 d and dmin + 12 bytes of 6-bit scales + 128 of nibbles), Q6_K 210 per
  256 (128 low nibbles + 64 high bits + 16 int8 scales + fp16 d): 8.5, 4.5, 4.5 and
  6.5625 bits per weight.  K must be a multiple of the block.

* **FP8** (``quant_method: fp8``; vLLM ``quantization/fp8.py``, transformers'
  ``finegrained_fp8``): e4m3 weights K·N bytes; block-wise (``weight_block_size``
  [bn, bk], DeepSeek-V3, Qwen3-FP8) one fp32 ``weight_scale_inv`` per bn x bk block:
  4·ceil(N/bn)·ceil(K/bk); per-tensor one fp32 ``weight_scale`` (4 bytes) and, with
  ``activation_scheme: static``, one fp32 ``input_scale``.
* **compressed-tensors** (``quant_method: compressed-tensors``; the
  ``compressed_tensors`` library, ``initialize_qparams``): weights of ``num_bits`` (int
  or float) K·N·b/8 bytes; the ``weight_scale`` in the checkpoint's dtype (2 bytes for
  bf16/fp16; fp8 e4m3, 1 byte, for 4-bit floats: NVFP4) with one element per tensor
  (``tensor``), output row (``channel``), row and group of g inputs (``group``,
  ``tensor_group``: N·ceil(K/g)) or block (``block``); NVFP4's ``tensor_group`` adds an
  fp32 ``weight_global_scale`` (4 bytes) and, with 4-bit float activations, an fp32
  ``input_global_scale``; 4-bit integers packed eight per int32 (``pack-quantized``)
  add the int64 ``weight_shape`` (16 bytes); static activations add their scale;
  asymmetric int8 adds int8 zero points of the scale's shape.
* **MXFP4** (``quant_method: mxfp4``; gpt-oss; OCP Microscaling spec v1.0: blocks of 32
  fp4 values sharing one E8M0 scale; transformers ``integrations/mxfp4.py``'s
  ``_blocks``/``_scales`` tensors): the routed experts only, K·N/2 bytes of packed
  values + K·N/32 bytes of scales; everything else (attention, router, embeddings, head,
  expert biases) stays in the base dtype.

Which tensors each method replaces (the rest stay in the base dtype):

* GPTQ and AWQ: the linear maps of the model except the output head (unless the
  config says ``lm_head: true``), the MoE routers and Qwen2-MoE's shared-expert gate
  (AutoGPTQ's and AutoAWQ's module lists; vLLM's ``qwen2_moe.py`` and ``qwen3_next.py``
  build ``gate`` and ``shared_expert_gate`` as ``ReplicatedLinear(..., quant_config=None)``);
  embeddings stay.  FP8 and compressed-tensors the same (vLLM builds the routers, the
  shared-expert gate and the head unquantized; compressed-tensors' ``ignore`` names ``lm_head``).
* MXFP4: the routed experts only.
* bitsandbytes: every linear map except the output head (transformers keeps the output
  embedding in full precision) and the MoE routers (a bare weight in transformers 5.x,
  not an ``nn.Linear``); the shared-expert gate is an ``nn.Linear`` and is replaced;
  embeddings stay.  The routed experts stay in the base dtype: transformers 5.x stores
  them as fused 3-D parameters of an ``*Experts`` module, and ``replace_with_bnb_linear``
  converts ``nn.Linear`` (and GPT-2's ``Conv1D``) modules only.
* GGUF as ``llama-quantize --pure`` writes it: every linear map, the output head and the
  token embedding in the one type; T5's relative bias as llama.cpp leaves it (base
  dtype); the MoE routers (``ffn_gate_inp``), the shared-expert gate
  (``ffn_gate_inp_shexp``), position and token-type tables in F32, as llama.cpp's
  ``convert_hf_to_gguf.py`` writes them ("some tensor types are always in float32") and
  ``llama-quantize`` leaves them; every vector (norms, biases) in F32, as the converter
  stores 1-D tensors.

Every decision is made by the role the Cost tree gives the matrix's step
(``engine.roles.Role``), never by its shape: the output head is the ``LM_HEAD`` step
(whatever its row count: a Marian decoder's own ``decoder_vocab_size``, a tied head
holds no matrix), a router the ``ROUTER`` step, the token table a ``TOKEN_EMBEDDING``
(or the BART family's idle ``UNUSED_EMBEDDING``) lookup.  Units: bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

# The Checkpoint a config.json describes (checkpoint_config.py: an unquantized config's count reads
# it without this module), re-exported where commands pick the weights' format.
from symtrans.accounting import checkpoint_config
from symtrans.accounting.checkpoint_config import Checkpoint
from symtrans.base.errors import InputError
from symtrans.engine.roles import Role

if TYPE_CHECKING:  # pragma: no cover - SymPy is imported where bytes are counted, not to parse a format
    import sympy as sp

    from symtrans.engine.cost import Matrix

# --------------------------------------------------------------------------------- formats


@dataclass(frozen=True)
class GGUFType:
    """A ggml block type: ``block`` weights in ``type_size`` bytes (``ggml-common.h``)."""

    name: str
    block: int
    type_size: int
    layout: str


GGUF_TYPES: dict[str, GGUFType] = {
    t.name: t
    for t in (
        GGUFType("q8_0", 32, 34, "block_q8_0: ggml_half d; int8_t qs[32]"),
        GGUFType("q4_0", 32, 18, "block_q4_0: ggml_half d; uint8_t qs[16]"),
        GGUFType("q4_k", 256, 144, "block_q4_K: ggml_half d, dmin; uint8_t scales[12]; uint8_t qs[128]"),
        GGUFType("q6_k", 256, 210, "block_q6_K: uint8_t ql[128]; uint8_t qh[64]; int8_t scales[16]; ggml_half d"),
    )
}
GGUF_SOURCE = "llama.cpp ggml/src/ggml-common.h (block structs and their static_assert sizes)"

METHODS = ("gptq", "awq", "nf4", "fp4", "bnb-int8", *GGUF_TYPES)
BNB_BLOCK = 64  # bitsandbytes Linear4bit / transformers' default blocksize
BNB_NESTED_BLOCK = 256  # quantize_blockwise(absmax, blocksize=256) for double quantization
BNB_CODE_BYTES = 16 * 4  # the 16-entry nf4/fp4 code, fp32
BNB_NESTED_CODE_BYTES = 256 * 4  # the 256-entry dynamic map of the nested quantization, fp32
GGUF_VECTOR_BYTES = 4  # llama.cpp keeps 1-D tensors (norms, biases) in F32
# Linear maps every method leaves unquantized: the MoE routers (AutoGPTQ's and AutoAWQ's module
# lists skip them, vLLM builds them unquantized, llama-quantize skips ffn_gate_inp, transformers
# 5.x stores them as bare weights).
KEPT_LINEAR_ROLES = frozenset({Role.ROUTER})
# Linear maps the formats vLLM loads leave unquantized too (ReplicatedLinear with quant_config=None),
# while bitsandbytes, through transformers' nn.Linear, replaces them.
VLLM_KEPT_ROLES = frozenset({Role.SHARED_EXPERT_GATE})
BNB_METHODS = ("nf4", "fp4", "bnb-int8")
# Matrices llama.cpp's convert_hf_to_gguf.py always writes in F32 (FFN_GATE_INP,
# FFN_GATE_INP_SHEXP, POS_EMBD, TOKEN_TYPES) and llama-quantize leaves as they are.
GGUF_F32_ROLES = frozenset({Role.ROUTER, Role.SHARED_EXPERT_GATE, Role.POSITION_EMBEDDING, Role.TYPE_EMBEDDING})
# Lookup tables llama-quantize --pure writes in the one type: the token embedding (and the
# BART family's idle untied copy of it); position, token-type and relative tables stay.
TOKEN_TABLES = frozenset({Role.TOKEN_EMBEDDING, Role.UNUSED_EMBEDDING})


@dataclass(frozen=True)
class Quantization:
    """How a quantizer stores the matrices it replaces (see the module docstring).

    Attributes:
        method: ``gptq``, ``awq``, ``nf4``, ``fp4``, ``bnb-int8``, ``fp8``,
            ``compressed-tensors``, ``mxfp4`` or a GGUF type (``q8_0``, ``q4_0``,
            ``q4_k``, ``q6_k``).
        bits: bits per quantized weight (GPTQ 2/3/4/8, AWQ 4, bitsandbytes 4 or 8; for
            GGUF the nominal bits of the type).
        group_size: GPTQ/AWQ input features per scale; None for one group over all of
            them (GPTQ's group_size -1).
        double_quant: bitsandbytes 4-bit double quantization of the absmax.
        lm_head: GPTQ quantizes the output head too.
        origin: where it came from (a config.json's quantization_config, or --quantization).
        block: FP8 / compressed-tensors block (rows, cols) per scale.
        strategy: compressed-tensors' weight strategy (tensor, channel, group,
            tensor_group, block); FP8: "block" or "tensor".
        float_weights: compressed-tensors' weights are floats (FP8, NVFP4), not ints.
        scale_bytes: bytes of one weight scale (compressed-tensors: the checkpoint dtype's;
            fp8 for 4-bit floats).
        static_input: activation scales are stored (static activation quantization).
        symmetric: no zero points (compressed-tensors).
        fp4_activations: NVFP4 W4A4: an fp32 input_global_scale per matrix.
    """

    method: str
    bits: int
    group_size: int | None = None
    double_quant: bool = False
    lm_head: bool = False
    origin: str = "--quantization"
    block: tuple[int, int] | None = None
    strategy: str = ""
    float_weights: bool = False
    scale_bytes: int = 4
    static_input: bool = False
    symmetric: bool = True
    fp4_activations: bool = False

    @property
    def name(self) -> str:
        """A short label, e.g. ``gptq int4 g128`` or ``nf4 + double quant``."""
        if self.method in ("gptq", "awq"):
            return f"{self.method} int{self.bits} g{self.group_size or -1}"
        if self.method in ("nf4", "fp4"):
            return self.method + (" + double quant" if self.double_quant else "")
        if self.method == "bnb-int8":
            return "bitsandbytes int8 (LLM.int8)"
        if self.method == "fp8":
            return "fp8 " + (f"block {self.block[0]}x{self.block[1]}" if self.block else "per-tensor")
        if self.method == "compressed-tensors":
            kind = ("nvfp4" if self.bits == 4 else "fp8") if self.float_weights else f"int{self.bits}"
            return f"compressed-tensors {kind} {self.strategy}" + (f" g{self.group_size}" if self.group_size else "")
        if self.method == "mxfp4":
            return "mxfp4 experts"
        return f"GGUF {self.method.upper()}"

    def describe(self) -> str:
        """One sentence: the layout counted and its source."""
        m = self.method
        if m == "gptq":
            g = "ceil(K/g)" if self.group_size else "1"
            return (
                f"GPTQ {self.bits}-bit, group size {self.group_size or -1}: per K x N matrix qweight K·N·{self.bits}/8 "
                f"+ qzeros {g}·N·{self.bits}/8 + fp16 scales 2·{g}·N + int32 g_idx 4·K bytes "
                "(AutoGPTQ QuantLinear buffers)"
            )
        if m == "awq":
            return (
                f"AWQ GEMM {self.bits}-bit, group size {self.group_size}: per K x N matrix qweight K·N·{self.bits}/8 "
                f"+ qzeros (K/g)·N·{self.bits}/8 + fp16 scales 2·(K/g)·N bytes (AutoAWQ WQLinear_GEMM)"
            )
        if m in ("nf4", "fp4"):
            stats = (
                "uint8 absmax per 64 + fp32 absmax per 256 blocks + fp32 offset + 1,024-byte nested map"
                if self.double_quant
                else "fp32 absmax per 64"
            )
            return (
                f"bitsandbytes {m}: ceil(n/2) bytes of packed values + {stats} + 64-byte code per tensor "
                "(bitsandbytes quantize_4bit; QLoRA, Dettmers et al. 2023 §3)"
            )
        if m == "bnb-int8":
            return "bitsandbytes LLM.int8(): int8 K·N + fp32 row scale 4·N bytes per matrix (Dettmers et al. 2022 §3)"
        if m == "fp8":
            if self.block:
                bn, bk = self.block
                return (
                    f"FP8 e4m3 K·N bytes + fp32 weight_scale_inv 4·ceil(N/{bn})·ceil(K/{bk}) per matrix "
                    "(vLLM quantization/fp8.py, block-wise); router, head and embeddings in the base dtype"
                )
            return (
                "FP8 e4m3 K·N bytes + one fp32 weight_scale"
                + (" and input_scale" if self.static_input else "")
                + " per matrix (vLLM quantization/fp8.py, per-tensor); router, head and embeddings in the base dtype"
            )
        if m == "compressed-tensors":
            return (
                f"compressed-tensors: {self.bits}-bit {'float' if self.float_weights else 'int'} weights K·N·{self.bits}/8 "
                f"+ {self.scale_bytes}-byte scales per {self.strategy}"
                + (f" of {self.group_size}" if self.group_size else "")
                + (" + fp32 global scale" if self.strategy == "tensor_group" else "")
                + (" + int8 zero points" if not self.symmetric else "")
                + " (compressed_tensors initialize_qparams); head and router in the base dtype"
            )
        if m == "mxfp4":
            return (
                "MXFP4 experts: K·N/2 bytes of fp4 blocks + K·N/32 bytes of E8M0 scales per expert matrix (OCP MX v1.0, "
                "blocks of 32); attention, router, embeddings, head in the base dtype"
            )
        t = GGUF_TYPES[m]
        import sympy as sp

        return (
            f"GGUF {m.upper()}: {t.type_size} bytes per block of {t.block} weights "
            f"({sp.Rational(8 * t.type_size, t.block)} bits per weight; {t.layout}; {GGUF_SOURCE}); vectors F32"
        )

    def replaces(self, m: Matrix, role: Role) -> bool:
        """Whether this method quantizes matrix ``m`` of a step of ``role`` (see the module
        docstring): decided by ``role`` and whether ``m`` is a lookup table, never by its shape."""
        if self.method == "mxfp4":
            return role == Role.EXPERTS and not m.lookup
        if m.lookup:  # embedding tables: only llama-quantize --pure rewrites the token table
            return self.method in GGUF_TYPES and role in TOKEN_TABLES
        if role in KEPT_LINEAR_ROLES or (role in GGUF_F32_ROLES and self.method in GGUF_TYPES):
            return False
        if role in VLLM_KEPT_ROLES:
            return self.method in BNB_METHODS
        if role == Role.EXPERTS and self.method in BNB_METHODS:
            return False
        if role == Role.LM_HEAD:
            return self.method in GGUF_TYPES or (self.method == "gptq" and self.lm_head)
        return True

    def matrix_terms(self, rows: sp.Expr, cols: sp.Expr) -> dict[str, sp.Expr]:
        """Bytes of one quantized rows x cols matrix (N = rows outputs, K = cols inputs), by term."""
        import sympy as sp

        N, K, b = rows, cols, self.bits
        m = self.method
        if m in ("gptq", "awq"):
            groups = (sp.ceiling(K / self.group_size) if m == "gptq" else K / self.group_size) if self.group_size else 1
            out = {"packed": K * N * b / 8, "zeros": groups * N * b / 8, "scales": 2 * groups * N}
            if m == "gptq":
                out["g_idx"] = 4 * K
            return out
        if m in ("nf4", "fp4"):
            n = N * K
            blocks = sp.ceiling(n / BNB_BLOCK)
            if self.double_quant:
                stats = blocks + 4 * sp.ceiling(blocks / BNB_NESTED_BLOCK) + 4
                maps = BNB_CODE_BYTES + BNB_NESTED_CODE_BYTES
            else:
                stats, maps = 4 * blocks, BNB_CODE_BYTES
            return {"packed": sp.ceiling(n / 2), "absmax": stats, "maps": sp.Integer(maps)}
        if m == "bnb-int8":
            return {"packed": N * K, "scales": 4 * N}
        if m == "fp8":
            if self.block:
                bn, bk = self.block
                return {"packed": N * K, "scales": 4 * sp.ceiling(N / bn) * sp.ceiling(K / bk)}
            return {"packed": N * K, "scales": sp.Integer(8 if self.static_input else 4)}
        if m == "mxfp4":
            return {"packed": N * K / 2, "scales": N * K / 32}
        if m == "compressed-tensors":
            st = self.strategy
            if st == "tensor":
                elems = sp.Integer(1)
            elif st == "channel":
                elems = N
            elif st in ("group", "tensor_group"):
                elems = N * sp.ceiling(K / self.group_size)
            else:  # block
                bn, bk = self.block
                elems = sp.ceiling(N / bn) * sp.ceiling(K / bk)
            out = {"packed": N * K * b / 8, "scales": elems * self.scale_bytes}
            if st == "tensor_group":
                out["scales"] += 4  # weight_global_scale, fp32
            if self.bits == 4 and not self.float_weights:
                out["packed"] += 16  # pack-quantized's int64 weight_shape (2,)
            if self.static_input:
                out["scales"] += self.scale_bytes
            if self.fp4_activations:
                out["scales"] += 4  # input_global_scale, fp32
            if not self.symmetric:
                out["zeros"] = elems
            return out
        t = GGUF_TYPES[m]
        return {"packed": N * K * t.type_size / t.block}

    def check(self, rows: int, cols: int, what: str) -> None:
        """Refuse a matrix the format cannot hold (one sentence naming the rule).

        Raises:
            ValueError: K or N not a multiple of what the layout packs.
        """
        m = self.method
        if m == "gptq":
            for size, axis in ((cols, "input"), (rows, "output")):
                if size % 32:
                    raise InputError(
                        f"GPTQ packs 32/{self.bits} weights per int32 along both axes, but {what} has {size} "
                        f"{axis} features, not a multiple of 32"
                    )
        elif m == "awq":
            if cols % (self.group_size or cols) or rows % (32 // self.bits):
                raise InputError(
                    f"AWQ needs the input features to be a multiple of the group size {self.group_size} and the "
                    f"outputs a multiple of {32 // self.bits}; {what} is {rows} x {cols}"
                )
        elif m == "mxfp4" and cols % 32:
            raise InputError(f"MXFP4 stores blocks of 32 weights along each row, but {what} has rows of {cols}")
        elif m == "compressed-tensors" and self.bits == 4 and (cols * rows) % 8:
            raise InputError(f"compressed-tensors packs 4-bit weights eight per int32, but {what} is {rows} x {cols}")
        elif m in GGUF_TYPES:
            block = GGUF_TYPES[m].block
            if cols % block:
                raise InputError(
                    f"GGUF {m.upper()} stores rows in blocks of {block} weights, but {what} has rows of {cols}; "
                    "llama-quantize would fall back to another type there, which symtrans does not model"
                )


# --------------------------------------------------------------------------------- parsing


def _int(text: str, what: str) -> int:
    from symtrans.base.numbers import parse_int

    return parse_int(text, what)


def _bool(text: str, what: str) -> bool:
    low = text.strip().lower()
    if low in ("true", "yes", "1"):
        return True
    if low in ("false", "no", "0"):
        return False
    raise InputError(f"{what} must be true or false, not {text!r}")


_OPTIONS = {
    "gptq": ("bits", "group_size", "lm_head"),
    "awq": ("bits", "group_size"),
    "nf4": ("double_quant",),
    "fp4": ("double_quant",),
    "bnb-int8": (),
    **{t: () for t in GGUF_TYPES},
}


def _build(method: str, opts: dict[str, object], origin: str) -> Quantization:
    if method == "gptq":
        bits = opts.get("bits", 4)
        if bits not in (2, 3, 4, 8):
            raise InputError(f"GPTQ bits must be 2, 3, 4 or 8, not {bits}")
        g = opts.get("group_size", 128)
        if g != -1 and (not isinstance(g, int) or g <= 0):
            raise InputError(f"GPTQ group_size must be a positive integer or -1, not {g}")
        return Quantization(
            "gptq", bits, None if g == -1 else g, lm_head=bool(opts.get("lm_head", False)), origin=origin
        )
    if method == "awq":
        bits = opts.get("bits", 4)
        if bits != 4:
            raise InputError(f"AWQ GEMM stores 4-bit weights, not {bits}-bit")
        g = opts.get("group_size", 128)
        if not isinstance(g, int) or g <= 0:
            raise InputError(f"AWQ group_size must be a positive integer, not {g}")
        return Quantization("awq", 4, g, origin=origin)
    if method in ("nf4", "fp4"):
        return Quantization(method, 4, double_quant=bool(opts.get("double_quant", False)), origin=origin)
    if method == "bnb-int8":
        return Quantization("bnb-int8", 8, origin=origin)
    return Quantization(method, int(method[1]), origin=origin)  # nominal bits: q8_0 -> 8, q4_k -> 4


def parse_quantization(text: str) -> Quantization | None:
    """Parse ``--quantization``: ``none``, or ``METHOD[:key=value,...]`` with METHOD one
    of ``METHODS`` (``gptq:bits=4,group_size=128``, ``awq``, ``nf4:double_quant=true``,
    ``bnb-int8``, ``q4_k``).  The text is matched, never evaluated.

    Raises:
        ValueError: one sentence: unknown method or key, repeated key, bad value.
    """
    raw = text.strip()
    if len(raw) > 200:
        raise InputError("--quantization is too long")
    if raw.lower() == "none":
        return None
    method, _, rest = raw.partition(":")
    method = method.strip().lower()
    if method not in _OPTIONS:
        raise InputError(f"unknown quantization {method!r}; valid: none, {', '.join(METHODS)}")
    opts: dict[str, object] = {}
    if rest.strip():
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            key = key.strip()
            if not eq or not value.strip():
                raise InputError(f"--quantization {method} takes key=value options, not {item.strip()!r}")
            if key not in _OPTIONS[method]:
                allowed = ", ".join(_OPTIONS[method]) or "no options"
                raise InputError(f"--quantization {method} has no option {key!r} (it takes {allowed})")
            if key in opts:
                raise InputError(f"--quantization option {key} is given twice")
            opts[key] = _bool(value, key) if key in ("lm_head", "double_quant") else _int(value, key)
    return _build(method, opts, "--quantization")


def _show(v) -> str:
    import json

    return json.dumps(v) if isinstance(v, (str, bool, int, type(None))) else type(v).__name__


def from_config(qc, dtype: str | None = None) -> Quantization:
    """A Hugging Face ``quantization_config`` as a Quantization (gptq, awq gemm,
    bitsandbytes 4-bit/8-bit, fp8, compressed-tensors, mxfp4); ``dtype`` is the
    checkpoint's (compressed-tensors stores its scales in it).

    Raises:
        ValueError: one sentence naming the key: another quant_method, a layout other
            than the ones counted (GPTQ's marlin format, AWQ's gemv), skipped modules.
    """
    origin = "the config's quantization_config"
    if not isinstance(qc, dict):
        raise InputError(f"quantization_config must be an object, not {_show(qc)}")
    method = qc.get("quant_method")

    def integer(key: str, default):
        v = qc.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int):
            raise InputError(f"quantization_config {key} must be an integer, not {_show(v)}")
        return v

    def flag(key: str, default: bool) -> bool:
        v = qc.get(key, default)
        if v is None:
            return default
        if not isinstance(v, bool):
            raise InputError(f"quantization_config {key} must be true or false, not {_show(v)}")
        return v

    def no_skipped(key: str, allowed: tuple[str, ...] = ()) -> None:
        v = qc.get(key)
        if v in (None, []) or (isinstance(v, list) and all(x in allowed for x in v)):
            return
        raise InputError(
            f"quantization_config {key} = {_show(v) if not isinstance(v, list) else v} leaves modules unquantized "
            "by name, which symtrans does not map; only null or [] is counted"
        )

    if method == "gptq":
        fmt = qc.get("checkpoint_format", "gptq")
        if fmt not in ("gptq", "gptq_v2", None):
            raise InputError(f"GPTQ checkpoint_format {_show(fmt)} has another layout; only gptq is counted")
        return _build(
            "gptq",
            {"bits": integer("bits", 4), "group_size": integer("group_size", 128), "lm_head": flag("lm_head", False)},
            origin,
        )
    if method == "awq":
        version = str(qc.get("version", "gemm")).lower()
        if version != "gemm":
            raise InputError(f"AWQ version {_show(qc.get('version'))} has another layout; only gemm is counted")
        if not flag("zero_point", True):
            raise InputError("AWQ zero_point false is not counted (WQLinear_GEMM stores zeros)")
        no_skipped("modules_to_not_convert", ("gate",))  # the router, never quantized here anyway
        return _build("awq", {"bits": integer("bits", 4), "group_size": integer("group_size", 128)}, origin)
    if method == "bitsandbytes":
        four, eight = flag("load_in_4bit", False), flag("load_in_8bit", False)
        no_skipped("llm_int8_skip_modules", ("lm_head",))
        if four == eight:
            raise InputError("quantization_config must set exactly one of load_in_4bit and load_in_8bit")
        if eight:
            return _build("bnb-int8", {}, origin)
        storage = qc.get("bnb_4bit_quant_storage", "uint8")
        if storage not in ("uint8", None):
            raise InputError(f"bnb_4bit_quant_storage {_show(storage)} is not counted; only uint8")
        kind = qc.get("bnb_4bit_quant_type", "fp4")
        if kind not in ("nf4", "fp4"):
            raise InputError(f"bnb_4bit_quant_type must be nf4 or fp4, not {_show(kind)}")
        return _build(kind, {"double_quant": flag("bnb_4bit_use_double_quant", False)}, origin)
    if method == "fp8":
        return _fp8_config(qc, origin)
    if method == "compressed-tensors":
        return _compressed_tensors_config(qc, origin, dtype)
    if method == "mxfp4":
        # gpt-oss lists what MXFP4 leaves alone anyway (attention, router, embeddings, head)
        skipped = qc.get("modules_to_not_convert") or []
        kept = ("self_attn", "router", "embed_tokens", "lm_head", "gate")
        if not isinstance(skipped, list) or not all(isinstance(x, str) and x.split(".")[-1] in kept for x in skipped):
            raise InputError(
                "quantization_config modules_to_not_convert names modules other than attention, routers, embeddings "
                "and the head, which symtrans does not map"
            )
        return Quantization("mxfp4", 4, 32, origin=origin)
    raise InputError(
        f"quantization_config quant_method {_show(method)} is not counted; symtrans counts gptq, awq, bitsandbytes, "
        "fp8, compressed-tensors and mxfp4 (give --quantization or --dtype to override)"
    )


def _fp8_leaves_alone(name: str) -> bool:
    """True for a module name fp8 checkpoints keep in the model dtype anyway: the head, a router, a norm."""
    return name in ("lm_head", "gate") or name.endswith("norm")


def _fp8_config(qc: dict, origin: str) -> Quantization:
    """``quant_method: fp8`` (see the module docstring)."""
    fmt = qc.get("fmt", "e4m3")
    if fmt not in ("e4m3", None):
        raise InputError(f"quantization_config fmt {_show(fmt)} is not counted; only e4m3 fp8 weights")
    scheme = qc.get("activation_scheme", "dynamic")
    if scheme not in ("dynamic", "static"):
        raise InputError(f"quantization_config activation_scheme must be dynamic or static, not {_show(scheme)}")
    # Qwen/Qwen3-235B-A22B-FP8's published config lists the head, every router (mlp.gate) and every
    # layer's input_layernorm / post_attention_layernorm. Norms are not Linear layers, so fp8 never
    # touches them and naming them changes no byte; the head and routers stay bf16 here anyway.
    skipped = qc.get("modules_to_not_convert", qc.get("ignored_layers"))
    if skipped not in (None, []) and not (
        isinstance(skipped, list) and all(isinstance(x, str) and _fp8_leaves_alone(x.split(".")[-1]) for x in skipped)
    ):
        raise InputError(
            "quantization_config modules_to_not_convert leaves modules other than the head, routers and norms unquantized "
            "by name, which symtrans does not map"
        )
    block = qc.get("weight_block_size")
    if block is None:
        return Quantization("fp8", 8, origin=origin, strategy="tensor", static_input=scheme == "static")
    if (
        not isinstance(block, list)
        or len(block) != 2
        or not all(isinstance(x, int) and not isinstance(x, bool) and 0 < x <= 65536 for x in block)
    ):
        raise InputError(f"quantization_config weight_block_size must be two positive integers, not {_show(block)}")
    if scheme == "static":
        raise InputError("block-wise fp8 with activation_scheme static is not a layout vLLM loads")
    return Quantization("fp8", 8, origin=origin, block=(block[0], block[1]), strategy="block")


_CT_FORMATS = ("float-quantized", "int-quantized", "pack-quantized", "nvfp4-pack-quantized", "naive-quantized")


def _compressed_tensors_config(qc: dict, origin: str, dtype: str | None) -> Quantization:
    """``quant_method: compressed-tensors`` with one config group (see the module docstring)."""
    groups = qc.get("config_groups")
    if not isinstance(groups, dict) or len(groups) != 1:
        raise InputError("compressed-tensors config_groups must hold exactly one group to be counted")
    (group,) = groups.values()
    if not isinstance(group, dict) or not isinstance(group.get("weights"), dict):
        raise InputError("compressed-tensors config group has no weights arguments")
    w = group["weights"]
    bits, kind, strategy = w.get("num_bits"), w.get("type", "int"), w.get("strategy")
    if bits not in (4, 8) or kind not in ("int", "float"):
        raise InputError(f"compressed-tensors weights of {_show(bits)}-bit {_show(kind)} are not counted (4 or 8 bits)")
    if strategy not in ("tensor", "channel", "group", "tensor_group", "block"):
        raise InputError(f"compressed-tensors weight strategy {_show(strategy)} is not counted")
    fmt = qc.get("format")
    if fmt not in _CT_FORMATS:
        raise InputError(f"compressed-tensors format {_show(fmt)} is not counted; known: {', '.join(_CT_FORMATS)}")
    g = w.get("group_size")
    if strategy in ("group", "tensor_group") and (isinstance(g, bool) or not isinstance(g, int) or g < 1):
        raise InputError(f"compressed-tensors group strategy needs a positive group_size, not {_show(g)}")
    block = w.get("block_structure")
    if strategy == "block" and (
        not isinstance(block, list) or len(block) != 2 or not all(isinstance(x, int) and x > 0 for x in block)
    ):
        raise InputError(f"compressed-tensors block strategy needs block_structure [rows, cols], not {_show(block)}")
    symmetric = w.get("symmetric", True)
    if not symmetric and (bits != 8 or kind != "int"):
        raise InputError("asymmetric compressed-tensors weights are counted for int8 only")
    ignore = qc.get("ignore") or []
    if not isinstance(ignore, list) or not all(
        isinstance(x, str) and (x.split(".")[-1] in ("lm_head", "gate") or x in ("re:.*mlp.gate$", "re:.*lm_head"))
        for x in ignore
    ):
        raise InputError(
            "compressed-tensors ignore lists modules other than the head and routers, which symtrans does not map"
        )
    act = group.get("input_activations")
    static = isinstance(act, dict) and act.get("dynamic") is False
    fp4_act = isinstance(act, dict) and act.get("num_bits") == 4 and act.get("type") == "float"
    float4 = kind == "float" and bits == 4
    return Quantization(
        "compressed-tensors",
        bits,
        g if strategy in ("group", "tensor_group") else None,
        origin=origin,
        block=(block[0], block[1]) if strategy == "block" else None,
        strategy=strategy,
        float_weights=kind == "float",
        # initialize_qparams: scales in the weights' dtype, fp8 e4m3 for 4-bit floats
        scale_bytes=1 if float4 else (4 if dtype == "fp32" else 2),
        static_input=static and not fp4_act,
        symmetric=bool(symmetric),
        fp4_activations=fp4_act,
    )


# --------------------------------------------------------------------------------- checkpoints


def checkpoint_from_config(cfg: dict) -> Checkpoint:
    """The Checkpoint of a parsed config.json, its ``quantization_config`` read by ``from_config``
    (never raises: problems are recorded; ``checkpoint_config.checkpoint_from_config``)."""
    return checkpoint_config.checkpoint_from_config(cfg, from_config)


def weight_format(checkpoint: Checkpoint | None, dtype: str | None, quantization: str | None):
    """The weights' format for a command: ``--dtype`` and ``--quantization`` when given,
    else the checkpoint's (a config.json's torch_dtype and quantization_config), else
    bf16 unquantized.  Returns ``(WeightFormat, notes)``, the notes saying where each
    part came from.

    Raises:
        ValueError: a bad --dtype/--quantization, or a checkpoint whose dtype or
            quantization_config cannot be counted and is not overridden.
    """
    ck = checkpoint or Checkpoint()
    notes: list[str] = []
    if dtype is None:
        if ck.dtype_problem:
            raise InputError(f"the config's {ck.dtype_problem}; give --dtype")
        dtype = ck.dtype or "bf16"
        if ck.dtype:
            notes.append(next(n for n in ck.notes if n.startswith("weights in")))
    if quantization is None:
        if ck.quantization_problem:
            raise InputError(f"{ck.quantization_problem}")
        q = ck.quantization
        if q is not None:
            notes.append(f"{q.name} from the config's quantization_config: {q.describe()}")
    else:
        q = parse_quantization(quantization)
        if q is not None:
            notes.append(f"{q.name} (--quantization): {q.describe()}")
    return WeightFormat(dtype, q), notes


# --------------------------------------------------------------------------------- counting

TERMS = ("packed", "scales", "zeros", "g_idx", "absmax", "maps", "unquantized", "vectors")
TERM_LABELS = {
    "packed": "quantized weights",
    "scales": "scales",
    "zeros": "zeros",
    "g_idx": "g_idx (group index)",
    "absmax": "block absmax",
    "maps": "quantization maps",
    "unquantized": "matrices kept unquantized",
    "vectors": "vectors (norms, biases)",
}


@dataclass(frozen=True)
class WeightFormat:
    """The dtype of the tensors kept as they are, and the quantization of the rest.

    Raises (on construction):
        ValueError: an unknown dtype, or a quantization over an integer base dtype.
    """

    dtype: str = "bf16"
    quantization: Quantization | None = None

    def __post_init__(self) -> None:
        from symtrans.accounting.dtypes import get_dtype

        get_dtype(self.dtype)
        if self.quantization is not None and self.dtype in ("int8", "int4"):
            raise InputError(
                f"--dtype {self.dtype} is the plain {self.dtype} count (no scales); with the quantization "
                f"{self.quantization.name} give the dtype of the tensors it leaves alone (fp16, bf16 or fp32), or "
                "drop the quantization with --quantization none"
            )

    @property
    def base_bytes(self) -> sp.Rational:
        from symtrans.accounting.dtypes import get_dtype

        return get_dtype(self.dtype).bytes

    @property
    def vector_bytes(self) -> sp.Rational:
        import sympy as sp

        q = self.quantization
        return sp.Integer(GGUF_VECTOR_BYTES) if q is not None and q.method in GGUF_TYPES else self.base_bytes

    def _kept_bytes(self, role: Role) -> sp.Rational:
        """Bytes per element of an unquantized matrix of ``role``: the base dtype's, or F32
        for the matrices llama.cpp's converter writes in F32 (``GGUF_F32_ROLES``)."""
        import sympy as sp

        q = self.quantization
        if q is not None and q.method in GGUF_TYPES and role in GGUF_F32_ROLES:
            return sp.Integer(GGUF_VECTOR_BYTES)
        return self.base_bytes

    def step_terms(self, step) -> dict[str, sp.Expr]:
        """Bytes of one instance of ``step``'s tensors, by term (``TERMS``)."""
        import sympy as sp

        out = dict.fromkeys(TERMS, sp.Integer(0))
        q = self.quantization
        in_matrices = sp.Integer(0)
        for m in step.matrices:
            in_matrices += m.count * m.rows * m.cols
            if q is not None and q.replaces(m, step.role):
                for k, v in q.matrix_terms(m.rows, m.cols).items():
                    out[k] += m.count * v
            else:
                out["unquantized"] += m.count * m.rows * m.cols * self._kept_bytes(step.role)
        out["vectors"] = (step.params - in_matrices) * self.vector_bytes
        return out

    def step_bytes(self, step) -> sp.Expr:
        """Total bytes of one instance of ``step``'s tensors."""
        import sympy as sp

        return sp.Add(*self.step_terms(step).values())

    def check(self, spec, values: dict[str, int]) -> None:
        """Refuse a model whose matrices the quantized layout cannot hold.

        Raises:
            ValueError: naming the matrix and the rule.
        """
        q = self.quantization
        if q is None:
            return
        from symtrans.engine.architectures import build
        from symtrans.engine.evaluate import exact

        seen = set()
        for _, _, step in build(spec).walk():
            for m in step.matrices:
                if not q.replaces(m, step.role):
                    continue
                rows, cols = exact(m.rows, values), exact(m.cols, values)
                if (rows, cols) not in seen:
                    seen.add((rows, cols))
                    q.check(rows, cols, f"the {rows} x {cols} matrix of {step.label}")


def weight_terms(spec, fmt: WeightFormat) -> dict[str, sp.Expr]:
    """Bytes of every stored tensor of ``spec`` in ``fmt``, by term (``TERMS``), as
    exact expressions; their sum is the weight bytes.  Tied tensors count once."""
    import sympy as sp

    from symtrans.engine.architectures import build

    out = dict.fromkeys(TERMS, sp.Integer(0))
    for _, mult, step in build(spec).walk():
        for k, v in fmt.step_terms(step).items():
            out[k] += mult * v
    return out


def matrix_share(spec, fmt: WeightFormat) -> tuple[sp.Expr, sp.Expr]:
    """(bytes of the matrices with their quantization data, bytes of the vectors):
    tensor parallelism splits the first and copies the second to every device."""
    import sympy as sp

    t = weight_terms(spec, fmt)
    return sp.Add(*[v for k, v in t.items() if k != "vectors"]), t["vectors"]
