"""Classify every stored tensor: its kind, role, block, layer and logical parameters.

``classify(checkpoint, family, scheme)`` gives one ``Entry`` per stored tensor.  This
step depends only on the names, shapes and the quantization scheme; what depends on a
Spec (a second copy of a tied matrix, a tensor the counted model does not have) is
decided by ``symtrans.analysis.checkpoint``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from symtrans.catalog.checkpoint.formats import Checkpoint, StoredTensor
from symtrans.catalog.checkpoint.names import (
    BUFFER_LEAVES,
    FP8_META_LEAVES,
    GPTQ_LEAVES,
    OUT_IN,
    PARAM_LEAVES,
    Family,
    Kind,
    Match,
    match,
)
from symtrans.catalog.checkpoint.quant import Scheme, unpack
from symtrans.engine.roles import Block, Role


@dataclass(frozen=True, slots=True)
class Entry:
    """One stored tensor, classified.

    Attributes:
        tensor: the stored tensor.
        kind: ``Kind`` (parameter, tied copy, buffer, quantization metadata).
        role, block: the engine's component (None when the name is not in the table).
        stack: ``Block.ENCODER``/``DECODER`` in encoder-decoder models, else None.
        layer, expert: indices from the name, or None.
        bias: the tensor is the bias vector of ``role`` (not its matrix).
        layout: how the stored array is laid out (``names.OUT_IN``, ...).
        fused, part, alias: from the naming rule (``names.Rule``).
        shape: the shape of the parameter it represents (unpacked for packed tensors).
        logical: parameters it represents (0 unless ``kind`` is PARAMETER).
        quant: how it is quantized (``gptq``, ``awq``, a GGML type, ...), or "".
        why: for non-parameters and notes, a short phrase.
    """

    tensor: StoredTensor
    kind: Kind
    role: Role | None = None
    block: Block | None = None
    stack: Block | None = None
    layer: int | None = None
    expert: int | None = None
    bias: bool = False
    layout: str = OUT_IN
    fused: tuple[Role, ...] = ()
    part: Role | None = None
    alias: bool = False
    shape: tuple[int, ...] = ()
    logical: int = 0
    quant: str = ""
    why: str = ""

    @property
    def name(self) -> str:
        return self.tensor.name

    def as_kind(self, kind: Kind, why: str) -> "Entry":
        return replace(self, kind=kind, logical=0, why=why)


def classify(ck: Checkpoint, family: Family, scheme: Scheme, matches: list[Match] | None = None) -> list[Entry]:
    """One Entry per tensor of ``ck`` (file order), named by ``family``'s table.

    ``matches``: ``names.match`` of each tensor against ``family`` when already made
    (``names.best_family``); else matched here.
    """
    if matches is None or len(matches) != len(ck.tensors):
        matches = [match(t.name, family) for t in ck.tensors]
    by_module: dict[str, dict[str, StoredTensor]] = {}
    for t, m in zip(ck.tensors, matches):
        by_module.setdefault(m.module, {})[m.leaf] = t
    # modules with bitsandbytes 4-bit state, found once (a scan of each weight's siblings per weight)
    bnb4 = {m.module for m in matches if m.leaf.startswith("weight.quant_state")}
    out = []
    append = out.append
    gguf = ck.format == "gguf"
    for t, m in zip(ck.tensors, matches):
        rule = m.rule
        leaf = m.leaf
        if (  # the usual tensor, a named module's weight or bias: built positionally (Entry's field
            # order), without the keyword dict below (0.3 s for 90,000 tensors); else the cases below
            rule is not None
            and rule.leaf is None
            and not rule.buffer
            and leaf in PARAM_LEAVES
            and leaf not in BUFFER_LEAVES
            and not (leaf == "weight" and m.module in bnb4)
            and not gguf
        ):
            append(
                Entry(
                    t,
                    Kind.PARAMETER,
                    rule.role,
                    rule.block,
                    rule.stack,
                    m.layer,
                    m.expert,
                    PARAM_LEAVES[leaf],
                    rule.layout,
                    rule.fused,
                    rule.part,
                    rule.alias,
                    t.shape,
                    t.elements,
                    "",
                    "",
                )
            )
            continue
        base = dict(
            tensor=t,
            role=rule.role if rule else None,
            block=rule.block if rule else None,
            stack=rule.stack if rule else None,
            layer=m.layer,
            expert=m.expert,
            layout=rule.layout if rule else OUT_IN,
            fused=rule.fused if rule else (),
            part=rule.part if rule else None,
            alias=rule.alias if rule else False,
            shape=t.shape,
        )
        quantized = ck.format == "gguf" and t.dtype not in ("F32", "F16", "BF16", "F64", "I8", "I16", "I32", "I64")
        q = t.dtype if quantized else ""
        if rule is not None and rule.leaf is not None:  # a full-name rule: the parameter itself
            kind = Kind.BUFFER if rule.buffer else Kind.PARAMETER
            logical = t.elements if kind == Kind.PARAMETER else 0
            out.append(Entry(kind=kind, bias=rule.bias, logical=logical, quant=q, **base))
        elif leaf in BUFFER_LEAVES or (rule is not None and rule.buffer):
            out.append(Entry(kind=Kind.BUFFER, why=_buffer_why(leaf, m.module), **base))
        elif leaf in PARAM_LEAVES:
            if leaf == "weight" and m.module in bnb4:
                # bitsandbytes 4-bit: two values per stored byte
                out.append(
                    Entry(kind=Kind.PARAMETER, bias=False, logical=2 * t.elements, quant="bitsandbytes-4bit", **base)
                )
            else:
                out.append(Entry(kind=Kind.PARAMETER, bias=PARAM_LEAVES[leaf], logical=t.elements, quant=q, **base))
        elif leaf in ("qweight", "weight_packed"):
            u = unpack(t, leaf, by_module.get(m.module, {}), scheme)
            if u is None:
                out.append(
                    Entry(
                        kind=Kind.PARAMETER,
                        logical=t.elements,
                        quant="packed?",
                        why="a packed tensor whose layout could not be told: counted as stored",
                        **base,
                    )
                )
            else:
                base.update(layout=OUT_IN, shape=u.shape)
                n = u.shape[0] * u.shape[1]
                out.append(Entry(kind=Kind.PARAMETER, logical=n, quant=f"{u.method} {u.bits}-bit", why=u.note, **base))
        elif (
            leaf in GPTQ_LEAVES
            or leaf in FP8_META_LEAVES
            or leaf.startswith("weight.")
            or leaf
            in (
                "weight_format",
                "weight_shape",
            )
        ):
            out.append(Entry(kind=Kind.QUANT_META, why=f"quantization metadata ({leaf})", **base))
        else:  # a leaf no table knows (an adapter's lora_A, ...): not the role's own tensor
            base.update(role=None, block=None)
            out.append(
                Entry(kind=Kind.PARAMETER, logical=t.elements, quant=q, why=f"unknown tensor kind {leaf!r}", **base)
            )
    return out


def _buffer_why(leaf: str, module: str) -> str:
    if leaf in ("inv_freq", "freqs", "freqs_cos", "freqs_sin", "cos_cached", "sin_cached") or "rope" in module:
        return "rotary frequencies (a buffer)"
    if leaf in ("position_ids", "token_type_ids"):
        return f"{leaf} (a buffer of indices)"
    if leaf in ("bias", "masked_bias"):
        return "attention mask (a buffer)"
    if leaf == "final_logits_bias":
        return "final_logits_bias (a registered buffer)"
    return f"{leaf} (a buffer)"
