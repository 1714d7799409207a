"""What is really in a checkpoint, against the closed form of the same model (issue 14).

``inspect(path, settings)`` reads the headers (``symtrans.catalog.checkpoint``), maps
every stored tensor to the engine's ``Role``/``Block``, counts the *logical parameters*
(packed and block-quantized tensors unpacked to the parameters they represent; copies,
buffers and quantization metadata left out), builds the Spec (config.json, else GGUF
metadata and the shapes) and explains ``stored elements - formula parameters`` as named
terms, which always add up:

=====================  ================================================================
term                   elements it adds to the stored count
=====================  ================================================================
tied_copy              a tied matrix stored a second time (llama2.c's output.weight)
buffers                non-parameter buffers: rotary inv_freq, masks, position ids
quant_metadata         scales, zeros, g_idx of quantized matrices
packing                packed int4/int8 words vs the parameters they hold (negative)
padded_vocab           embedding/head rows beyond the config's V
unexpected             tensors the counted model does not have (task heads, extra biases,
                       unknown names, layers beyond N)
missing                parameters the formula has and no tensor holds (negative), priced
                       by the engine (the formula without that component) or by a
                       sibling layer's shapes
other                  the rest: shapes that differ from the config's sizes
=====================  ================================================================

So ``logical = formula + padded_vocab + unexpected + missing + other``, and
``stored = logical + tied_copy + buffers + quant_metadata + packing``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from symtrans.analysis.checkpoint_terms import TERM_LABELS, Term  # re-exported: the API names them here
from symtrans.catalog.checkpoint.formats import Checkpoint, CheckpointError
from symtrans.catalog.checkpoint.infer import Inference, InferenceError, gguf_hints, infer_spec, io_dims
from symtrans.catalog.checkpoint.inventory import Entry, classify
from symtrans.catalog.checkpoint.names import FAMILIES, MODEL_TYPES, Family, Kind, best_family, gguf_family
from symtrans.catalog.checkpoint.quant import gguf_payload_bytes, scheme_from_config
from symtrans.catalog.checkpoint.read import read_checkpoint
from symtrans.engine.roles import ATTENTION_BLOCKS, MIXER_BLOCKS, Block, Role
from symtrans.engine.spec import Spec

# Positional kinds whose positions are a stored table (engine/spec.py).
_TABLES = ("learned", "sinusoidal-table")

# Sizes a user's --set passes to the shape inference (the rest are applied after it).
_HINT_SIZES = ("h", "h_kv", "d_k", "k", "V", "L_max")


@dataclass
class Inspection:
    """The result of ``inspect``; ``to_json()`` is the JSON output.

    ``formula`` (parameters of the closed form at ``spec``) and ``terms`` are None / []
    when no Spec could be built (``spec_error`` says why).
    """

    checkpoint: Checkpoint
    naming: str
    entries: list[Entry]
    spec: Spec | None
    spec_source: str
    spec_notes: tuple[str, ...] = ()
    inference: Inference | None = None
    spec_error: str = ""
    formula: int | None = None
    closed_form: str = ""
    terms: list[Term] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # the generic path's model (a config.json type without a curated record), else None
    generic: Any = None

    # -- totals --------------------------------------------------------------
    @property
    def stored_elements(self) -> int:
        return sum(e.tensor.elements for e in self.entries)

    @property
    def stored_bytes(self) -> int:
        return sum(e.tensor.nbytes for e in self.entries)

    @property
    def logical_parameters(self) -> int:
        return sum(e.logical for e in self.entries if e.kind == Kind.PARAMETER)

    def by_dtype(self) -> list[dict[str, Any]]:
        rows: dict[str, dict[str, Any]] = {}
        for e in self.entries:
            r = rows.setdefault(e.tensor.dtype, {"dtype": e.tensor.dtype, "tensors": 0, "elements": 0, "bytes": 0})
            r["tensors"] += 1
            r["elements"] += e.tensor.elements
            r["bytes"] += e.tensor.nbytes
        return sorted(rows.values(), key=lambda r: -r["bytes"])

    def by_kind(self) -> list[dict[str, Any]]:
        rows: dict[str, dict[str, Any]] = {}
        for e in self.entries:  # keyed by the member (a str enum: as its value); _value_ is an attribute
            r = rows.get(e.kind)
            if r is None:
                r = rows[e.kind] = {"kind": e.kind._value_, "tensors": 0, "elements": 0, "bytes": 0}
            r["tensors"] += 1
            r["elements"] += e.tensor.elements
            r["bytes"] += e.tensor.nbytes
        return list(rows.values())

    def by_component(self) -> list[dict[str, Any]]:
        """Logical parameters per (stack, block, role) in file order; copies show 0."""
        rows: dict[tuple, dict[str, Any]] = {}
        counted = (Kind.PARAMETER, Kind.TIED_COPY)
        if self.generic is not None:  # no roles on the generic path: the model's names, layers as *
            for e in self.entries:
                if e.kind in counted:
                    key = re.sub(r"\.\d+\.", ".*.", e.name)
                    r = rows.setdefault(key, {"stack": None, "block": None, "role": key, "tensors": 0, "parameters": 0})
                    r["tensors"] += 1
                    r["parameters"] += e.logical
            return list(rows.values())
        for e in self.entries:
            if e.kind not in counted:
                continue
            # a fused matrix (GPT-2's c_attn, gate_up_proj) is the roles it holds, not its first
            f = e.fused  # keyed by the members, which name the roles as their "+"-joined values do
            key = (e.stack, e.block, f if len(f) > 1 else (f[0] if f else e.role))
            r = rows.get(key)
            if r is None:
                roles = "+".join(r.value for r in e.fused) if e.fused else (e.role.value if e.role else None)
                r = rows[key] = {
                    "stack": e.stack.value if e.stack else None,
                    "block": e.block.value if e.block else None,
                    "role": roles,
                    "tensors": 0,
                    "parameters": 0,
                }
            r["tensors"] += 1
            r["parameters"] += e.logical
        return list(rows.values())

    def quantization(self) -> dict[str, Any] | None:
        """Packed/quantized tensors, metadata and the overhead in bytes (None if none)."""
        packed = [e for e in self.entries if e.kind == Kind.PARAMETER and e.quant]
        meta = [e for e in self.entries if e.kind == Kind.QUANT_META]
        if not packed and not meta:
            return None
        methods = sorted({e.quant for e in packed})
        out: dict[str, Any] = {
            "methods": methods,
            "quantized_tensors": len(packed),
            "quantized_parameters": sum(e.logical for e in packed),
            "quantized_bytes": sum(e.tensor.nbytes for e in packed),
            "metadata_tensors": len(meta),
            "metadata_elements": sum(e.tensor.elements for e in meta),
            "metadata_bytes": sum(e.tensor.nbytes for e in meta),
        }
        if self.checkpoint.format == "gguf":
            block_meta, unknown = 0, []
            for e in packed:
                payload = gguf_payload_bytes(e.tensor)
                if payload is None:
                    unknown.append(e.tensor.dtype)
                else:
                    block_meta += e.tensor.nbytes - payload
            out["block_metadata_bytes"] = block_meta  # scales/mins inside the blocks
            if unknown:
                out["block_metadata_unknown_types"] = sorted(set(unknown))
            out["overhead_bytes"] = block_meta + out["metadata_bytes"]
        else:
            out["overhead_bytes"] = out["metadata_bytes"]
        q = out["quantized_parameters"]
        if q:
            out["bits_per_quantized_parameter"] = round(8 * (out["quantized_bytes"] + out["metadata_bytes"]) / q, 4)
        return out

    def to_json(self, tensor_list: bool = True) -> dict[str, Any]:
        """The JSON output; ``tensor_list=False`` leaves out the per-tensor list (an empty
        list), which only ``--format json`` and ``--tensors`` print."""
        ck = self.checkpoint
        stored = self.stored_elements  # a sum over every tensor: once
        out: dict[str, Any] = {
            "path": ck.path,
            "format": ck.format,
            "files": [{"path": f.path, "bytes": f.size, "header_bytes": f.header_bytes} for f in ck.files],
            "file_bytes": ck.file_bytes,
            "config": ck.config_path,
            "naming": self.naming,
            "tensors": len(self.entries),
            "stored_elements": stored,
            "stored_bytes": self.stored_bytes,
            "by_dtype": self.by_dtype(),
            "by_kind": self.by_kind(),
            "logical_parameters": self.logical_parameters,
            "quantization": self.quantization(),
            "spec_source": self.spec_source,
        }
        if self.spec is not None or self.generic is not None:
            g = self.generic
            out["family"] = self.spec.family if g is None else f"generic: {g.counted_class}"
            out["sizes"] = self.spec.values if g is None else dict(g.sizes)
            out["formula"] = {"parameters": self.formula, "closed_form": self.closed_form}
            out["difference"] = stored - (self.formula or 0)
            out["terms"] = [
                {
                    "term": t.key,
                    "label": t.label,
                    "elements": t.elements,
                    "tensors": list(t.tensors),
                    "detail": t.detail,
                }
                for t in self.terms
            ]
        else:
            out["formula"] = None
            out["spec_error"] = self.spec_error
        if self.inference is not None:
            out["inferred"] = dict(self.inference.found)
            out["not_inferred"] = list(self.inference.not_inferred)
        out["components"] = self.by_component()
        out["tensor_list"] = _tensor_rows(self.entries) if tensor_list else []
        out["notes"] = list(self.spec_notes) + list(self.notes) + list(ck.notes)
        return out


def _tensor_rows(entries: list[Entry]) -> list[dict[str, Any]]:
    """One flat dict per entry, ``name`` first (cli/inspect.py cuts the list's JSON at
    ``}, {"name": ``).  A plain loop reading ``_value_`` (an attribute) instead of the
    enums' ``value`` (a descriptor, 0.4 s for 90,000 tensors) and no dict merges."""
    rows = []
    append = rows.append
    for e in entries:
        t = e.tensor
        role, block, stack = e.role, e.block, e.stack
        row = {
            "name": t.name,
            "file": t.file,
            "dtype": t.dtype,
            "shape": list(t.shape),
            "bytes": t.nbytes,
            "kind": e.kind._value_,
            "role": role._value_ if role else None,
            "block": block._value_ if block else None,
            "stack": stack._value_ if stack else None,
            "layer": e.layer,
            "bias": e.bias,
            "parameters": e.logical,
        }
        if e.shape != t.shape:
            row["represents"] = list(e.shape)
        if e.quant:
            row["quantization"] = e.quant
        if e.why:
            row["why"] = e.why
        append(row)
    return rows


# ------------------------------------------------------------------------------ spec


def _family(ck: Checkpoint, matched: dict | None = None) -> tuple[Family, str]:
    """(naming family, how it was chosen); ``matched`` as in ``names.best_family``."""
    if ck.format == "gguf":
        arch = ck.metadata.get("general.architecture")
        return gguf_family(arch if isinstance(arch, str) else None), f"gguf ({arch})"
    mt = ck.config.get("model_type") if ck.config else None
    if isinstance(mt, str) and mt in MODEL_TYPES:
        return FAMILIES[MODEL_TYPES[mt]], MODEL_TYPES[mt]
    fam = best_family([t.name for t in ck.tensors], matched)
    return fam, f"{fam.name} (matched by tensor names)"


def _parse_settings(settings: list[str]) -> tuple[dict[str, int], dict[str, Any]]:
    from symtrans.catalog.resolve import parse_setting
    from symtrans.engine.symbols import SYMBOLS

    sizes: dict[str, int] = {}
    options: dict[str, Any] = {}
    for item in settings:
        name, value = parse_setting(item)
        (sizes if name in SYMBOLS else options)[name] = value
    return sizes, options


def _spec(ck: Checkpoint, fam: Family, entries: list[Entry], settings: list[str]):
    """(spec or None, source, notes, inference or None, error)."""
    from symtrans.catalog.hf_config import CLASSES, SUPPORTED, spec_from_config
    from symtrans.catalog.task_heads import follow_architectures

    sizes, options = _parse_settings(settings)
    notes: list[str] = []
    mt = ck.config.get("model_type") if ck.config else None
    if ck.config is not None and mt in SUPPORTED:
        spec, cfg_notes = spec_from_config(ck.config, ck.config_path or "config.json")
        if mt in CLASSES:  # count the class that saved the weights (architectures), where symtrans models it
            spec, cfg_notes = follow_architectures(ck.config, spec, cfg_notes, CLASSES[mt][1])
        if sizes or options:
            spec = spec.replace(sizes=sizes, **options)
            notes += [f"--set {k}={v}" for k, v in {**sizes, **options}.items()]
        return spec, "config.json", tuple(cfg_notes) + tuple(notes), None, ""
    if ck.config is not None:
        notes.append(f"config.json has model_type {mt!r}, which symtrans cannot count: sizes inferred from the shapes")
    hints: dict[str, Any] = gguf_hints(ck.metadata) if ck.format == "gguf" else {}
    given = tuple(k for k in sizes if k in _HINT_SIZES)
    hints.update({k: sizes.pop(k) for k in given})
    if "tie_output" in options:
        hints["tie_output"] = options.pop("tie_output")
        given += ("tie_output",)
    hints["_given"] = given
    try:
        inf = infer_spec(entries, fam, hints)
    except InferenceError as e:
        return None, "tensor shapes", tuple(notes), None, str(e)
    spec = inf.spec
    if sizes or options:
        spec = spec.replace(sizes=sizes, **options)
    notes += [f"--set {k}={v}" for k, v in {**sizes, **options}.items()]
    source = "GGUF metadata and tensor shapes" if ck.format == "gguf" else "tensor shapes"
    return spec, source, tuple(notes) + tuple(inf.notes), inf, ""


# ------------------------------------------------------------------------------ terms


def _params(spec: Spec) -> int:
    from symtrans.engine.architectures import build
    from symtrans.engine.evaluate import exact

    return exact(build(spec).params, spec.values)


def _mark_copies(entries: list[Entry], spec: Spec) -> list[Entry]:
    """Tied matrices stored again become TIED_COPY (the engine counts them once)."""
    embs = [e for e in entries if e.kind == Kind.PARAMETER and e.role == Role.TOKEN_EMBEDDING and not e.bias]
    primary = next((e for e in embs if not e.alias), embs[0] if embs else None)
    if primary is None:
        return entries
    out = []
    for e in entries:
        if e is primary or e.kind != Kind.PARAMETER or e.bias:
            out.append(e)
            continue
        if (
            e.role == Role.TOKEN_EMBEDDING
            and spec.family == "encoder-decoder"
            and spec.share_embeddings
            and e.shape == primary.shape
        ):
            out.append(e.as_kind(Kind.TIED_COPY, f"a copy of the shared embedding {primary.name}"))
        elif e.role == Role.LM_HEAD and spec.tie_output and e.shape == primary.shape:
            out.append(e.as_kind(Kind.TIED_COPY, f"a second copy of the tied matrix {primary.name}"))
        else:
            out.append(e)
    return out


@dataclass(frozen=True)
class _Component:
    """An optional component: which stored tensors are it, whether the spec has it, and
    the spec without it (the engine prices a missing one as the difference)."""

    label: str
    stored: Callable[[Entry], bool]
    in_spec: Callable[[Spec], bool]
    without: Callable[[Spec], Spec]
    absent_why: Callable[[Spec], str] = lambda s: ""


def _unsaved_sinusoids(s: Spec) -> str:
    if "sinusoidal-table" not in (s.positional, s.decoder_positions):
        return ""
    return (
        " (frozen sinusoids, which a model may recompute at load instead of saving: transformers' MarianMTModel "
        "lists them in _keys_to_ignore_on_save, so its files never hold them)"
    )


# The maps whose biases Spec.qkv_bias switches: Q, K, V, and multi-head latent attention's
# down and up maps (DeepSeek-V2's attention_bias biases q_a_proj and kv_a_proj_with_mqa).
_QKV_ROLES = (Role.Q_PROJ, Role.K_PROJ, Role.V_PROJ, Role.Q_DOWN, Role.Q_UP, Role.KV_DOWN, Role.KV_UP)


def _in_attention(e: Entry) -> bool:
    return e.block in ATTENTION_BLOCKS


_COMPONENTS = (
    _Component(
        "LM head",
        lambda e: e.role == Role.LM_HEAD and not e.bias and e.block == Block.LM_HEAD,
        lambda s: s.lm_head and not s.tie_output,
        lambda s: s.replace(tie_output=True),
    ),
    _Component(
        "LM head bias",
        lambda e: e.role == Role.LM_HEAD and e.bias and e.block == Block.LM_HEAD,
        lambda s: s.lm_head and s.head_bias,
        lambda s: s.replace(head_bias=False),
    ),
    _Component("pooler", lambda e: e.role == Role.POOLER, lambda s: s.pooler, lambda s: s.replace(pooler=False)),
    _Component(
        "MLM head", lambda e: e.block == Block.MLM_HEAD, lambda s: s.mlm_head, lambda s: s.replace(mlm_head=False)
    ),
    # wav2vec 2.0's encoder.layer_norm is one tensor whether it runs before the layers (embedding_norm)
    # or after them (do_stable_layer_norm: final_norm): its name cannot tell, so it is the final norm
    _Component(
        "final norm",
        lambda e: e.role == Role.NORM and e.layer is None and e.block == Block.NORM,
        lambda s: (s.final_norm or (s.embedding_norm and s.frontend == "wav2vec2")) and s.norm != "none",
        lambda s: s.replace(final_norm=False, embedding_norm=s.embedding_norm and s.frontend != "wav2vec2"),
    ),
    _Component(
        "embedding norm",
        lambda e: e.role == Role.NORM and e.block == Block.EMBEDDINGS,
        lambda s: s.embedding_norm and s.norm != "none" and s.frontend != "wav2vec2",
        lambda s: s.replace(embedding_norm=False),
    ),
    _Component(
        "position tables (learned, or frozen sinusoids stored as a parameter)",
        lambda e: e.role == Role.POSITION_EMBEDDING,
        lambda s: s.positional in _TABLES or s.decoder_positions in _TABLES,
        lambda s: s.replace(
            positional="none", position_offset=0, decoder_positional=None if s.decoder_positional is None else "none"
        ),
        _unsaved_sinusoids,
    ),
    _Component(
        "token-type table",
        lambda e: e.role == Role.TYPE_EMBEDDING,
        lambda s: s.token_types > 0,
        lambda s: s.replace(token_types=0),
    ),
    _Component(
        "relative position bias",
        lambda e: e.role == Role.RELATIVE_BIAS,
        # T5's (positional relative), MPNet's beside learned positions, UMT5's per layer
        lambda s: s.positional == "relative" or s.relative_bias in ("stack", "layer"),
        lambda s: s.replace(positional="none"),
    ),
    _Component(
        "Q/K/V biases",
        lambda e: e.bias and _in_attention(e) and e.role in _QKV_ROLES,
        lambda s: s.qkv_bias_on,
        lambda s: s.replace(qkv_bias=False),
    ),
    _Component(
        "output projection biases",
        lambda e: e.bias and _in_attention(e) and e.role == Role.O_PROJ,
        lambda s: s.out_bias_on,
        lambda s: s.replace(out_bias=False),
    ),
    _Component(
        "FFN biases",
        lambda e: (
            e.bias
            and e.block in (Block.FFN, Block.MOE, Block.SHARED_EXPERT)
            and e.role not in (Role.ROUTER, Role.EXPERTS)
        ),
        lambda s: s.ffn_bias_on,
        lambda s: s.replace(ffn_bias=False),
    ),
    _Component(  # gpt-oss: expert biases without dense FFN biases (Spec.expert_bias)
        "expert biases",
        lambda e: e.bias and e.role == Role.EXPERTS,
        lambda s: s.is_moe and (s.ffn_bias_on if s.expert_bias is None else s.expert_bias),
        lambda s: s.replace(expert_bias=False),
    ),
    _Component(
        "norm shifts (beta)",
        lambda e: e.bias and e.role == Role.NORM and e.block != Block.MLM_HEAD,
        lambda s: s.norm == "layernorm" and s.norm_bias,
        lambda s: s.replace(norm_bias=False),
    ),
    _Component(
        "query/key norms",
        lambda e: e.role in (Role.Q_NORM, Role.K_NORM),
        lambda s: s.qk_norm != "none",
        lambda s: s.replace(qk_norm="none", qk_norm_bias=None),
    ),
)


def _stack_layers(spec: Spec) -> dict[Block | None, int]:
    v = spec.values
    if spec.family == "encoder-decoder":
        n_enc, n_dec = (v["N"], v["N"]) if "N" in v else (v["N_enc"], v["N_dec"])
        return {Block.ENCODER: n_enc, Block.DECODER: n_dec}
    return {None: v["N"]}


def _structure_terms(entries: list[Entry], spec: Spec, formula: int) -> tuple[list[Term], list[Term]]:
    """(unexpected, missing) terms: components, layers and per-layer tensors."""
    unexpected: list[Term] = []
    missing: list[Term] = []
    params = [e for e in entries if e.kind == Kind.PARAMETER]
    claimed: set[int] = set()

    unknown = [e for e in params if e.role is None]
    if unknown:
        unexpected.append(
            Term(
                "unexpected", sum(e.logical for e in unknown), tuple(e.name for e in unknown), "names not in the table"
            )
        )
        claimed.update(id(e) for e in unknown)

    # A component's test reads only role, block, bias and whether a layer is given: it is
    # asked once per distinct such signature (a few dozen), not once per tensor (15 tests
    # x 90,000 tensors took 1.9 s), and a component no signature passes skips the pass.
    sigs = [(e.role, e.block, e.bias, e.layer is None) for e in params]
    first: dict[tuple, Entry] = {}
    for sig, e in zip(sigs, params):
        first.setdefault(sig, e)
    for c in _COMPONENTS:
        hit = {sig for sig, e in first.items() if c.stored(e)}
        stored = [e for sig, e in zip(sigs, params) if sig in hit and id(e) not in claimed] if hit else []
        has = c.in_spec(spec)
        if stored and not has and not any(e.logical for e in stored):
            continue  # an empty table (type_vocab_size 0 saves a 0 x d tensor): nothing to explain
        if stored and not has:
            unexpected.append(
                Term(
                    "unexpected",
                    sum(e.logical for e in stored),
                    tuple(e.name for e in stored),
                    f"{c.label}: stored, but the counted model has none",
                )
            )
            claimed.update(id(e) for e in stored)
        elif has and not stored:
            try:
                price = formula - _params(c.without(spec))
            except ValueError:
                price = 0
            if price:
                missing.append(
                    Term("missing", -price, (), f"{c.label}: in the formula, not stored{c.absent_why(spec)}")
                )

    # layers beyond N, missing layers, and tensors a layer lacks that its siblings have
    n_of = _stack_layers(spec)
    kinds: set[str] | None = None  # the layer kinds of the Cost tree's stack, read at first need
    layered = [e for e in params if e.layer is not None and id(e) not in claimed]
    for stack, n in n_of.items():
        mine = [e for e in layered if e.stack == stack]
        extra = [e for e in mine if e.layer >= n]
        if extra:
            unexpected.append(
                Term(
                    "unexpected",
                    sum(e.logical for e in extra),
                    tuple(e.name for e in extra),
                    f"layers at index {n} or beyond{_of(stack)}: the model has {n}",
                )
            )
        mine = [e for e in mine if e.layer < n]
        if not mine or spec.share_layers != "none":
            continue  # ALBERT stores one group of layers that all N layers share: no gaps
        if kinds is None:  # Cost.kind of the tree's Block.LAYER nodes: ("mamba", "attention") for Jamba
            from symtrans.analysis.walk import layer_kinds
            from symtrans.engine.architectures import build

            kinds = set(layer_kinds(build(spec)))
        if "zamba2_hybrid" in kinds:  # Zamba2: hybrid layers hold more than Mamba 2 layers, and a
            continue  # shared block (and its adapters) is stored at its first use only: no gaps read
        per: dict[int, dict[tuple, Entry]] = {}
        # the spec's answers, read once (is_moe builds the sizes' dict: per tensor it cost 0.3 s)
        first_attention_norm = spec.first_attention_norm
        ffn_layers = {"mlp", "moe"} & kinds  # Nemotron-H: layers of an FFN alone
        by_design = spec.is_moe or bool(ffn_layers)
        hybrid = len(kinds) > 1  # a stack of more than one kind of layer
        for e in mine:
            if e.role == Role.RELATIVE_BIAS:  # stored once per stack, in its first layer
                continue
            if e.role == Role.NORM and not first_attention_norm:
                continue  # ModernBERT: layer 0 has no attention norm (an Identity), the others do
            if by_design and e.block in (Block.FFN, Block.MOE, Block.SHARED_EXPERT):
                continue  # dense and MoE layers (or layers with and without an FFN) differ by design
            if hybrid and (e.block in ATTENTION_BLOCKS or e.block in MIXER_BLOCKS):
                continue  # a hybrid stack: attention layers and mixer layers differ by design
            per.setdefault(e.layer, {})[_layer_free(e)] = e
        if not per:
            continue
        union: dict[tuple, Entry] = {}
        for layer in sorted(per):
            for sig, e in per[layer].items():
                union.setdefault(sig, e)
        template = min(per)
        size = sum(e.logical for e in per[template].values())
        # Runs of absent layers are one term each: work and output grow with the layers
        # stored, not with N (--set N=10000000 on a 2-layer checkpoint took 1.4 GiB).
        stored_layers = sorted(per)
        gaps, start = [], 0
        for layer in [*stored_layers, n]:
            if layer > start:
                gaps.append((start, layer - 1))
            start = layer + 1
        for first, last in gaps:
            if first == last:
                what = f"layer {first}{_of(stack)} is not stored (priced as layer {template})"
            else:
                what = (
                    f"layers {first} to {last}{_of(stack)} ({last - first + 1:,} layers) are not stored "
                    f"(priced as layer {template} each)"
                )
            missing.append(Term("missing", -size * (last - first + 1), (), what))
        for layer in stored_layers:
            for sig, e in union.items():
                if sig not in per[layer]:
                    missing.append(
                        Term(
                            "missing",
                            -e.logical,
                            (),
                            f"layer {layer}{_of(stack)} lacks the {_what(e)} (priced as {e.name})",
                        )
                    )
    return unexpected, missing


def _layer_free(e: Entry) -> str:
    """The tensor's name with its layer index taken out: the same for the same tensor of
    every layer (two norms of one layer stay apart, as their roles would not)."""
    return re.sub(rf"(^|\.){e.layer}\.", r"\1#.", e.name, count=1)


def _of(stack: Block | None) -> str:
    return f" of the {stack.value}" if stack else ""


def _what(e: Entry) -> str:
    return f"{e.role.value if e.role else 'tensor'}{' bias' if e.bias else ''}"


def _padded_vocab(entries: list[Entry], spec: Spec) -> list[Term]:
    values = spec.values  # a dict built per read: once here, not twice per tensor (0.3 s for 90,000)
    if "V" not in values:  # no vocabulary (ViT reads patches): no rows to pad
        return []
    out = []
    vocab_roles = (Role.TOKEN_EMBEDDING, Role.LM_HEAD)
    for e in entries:
        if e.role not in vocab_roles or e.kind != Kind.PARAMETER or e.bias or len(e.shape) != 2:
            continue  # only these two roles can have vocabulary rows (the tests below)
        # Marian's decoder and its LM head have their own vocabulary (decoder_vocab_size: V_dec)
        decoder_side = e.stack == Block.DECODER or (e.role == Role.LM_HEAD and e.block == Block.LM_HEAD)
        V = values.get("V_dec", values["V"]) if decoder_side else values["V"]
        if e.role == Role.TOKEN_EMBEDDING:
            rows, width = e.shape
        elif e.role == Role.LM_HEAD and e.block in (Block.LM_HEAD, Block.MLM_HEAD):
            width, rows = io_dims(e)
        else:
            continue
        if rows != V:
            extra = (rows - V) * width
            what = "padded vocabulary rows" if rows > V else "fewer rows than V"
            out.append(
                Term("padded_vocab", extra, (e.name,), f"{e.name} has {rows:,} rows, V = {V:,}: {what} x {width}")
            )
    return out


def _differences(entries: list[Entry], spec: Spec, fam: Family, hints: dict) -> list[str]:
    """Sizes the shapes imply that differ from the Spec's (config.json) sizes."""
    try:
        shaped = infer_spec(entries, fam, hints)
    except InferenceError:
        return []
    out = []
    for k, v in shaped.spec.values.items():
        if k in ("V", "h", "N", "N_enc", "N_dec") or k not in spec.values:  # V, N: their own terms
            continue
        if spec.values[k] != v:
            out.append(f"{k}: {spec.values[k]:,} in the config, {v:,} in the stored shapes")
    return out


def explain(entries: list[Entry], spec: Spec, fam: Family, formula: int) -> list[Term]:
    """The named terms of ``stored elements - formula`` (see the module docstring)."""
    terms: list[Term] = []
    copies = [e for e in entries if e.kind == Kind.TIED_COPY]
    if copies:
        terms.append(
            Term(
                "tied_copy",
                sum(e.tensor.elements for e in copies),
                tuple(e.name for e in copies),
                "; ".join(f"{e.name}: {e.why}" for e in copies) + _v_times_d(copies, spec),
            )
        )
    buffers = [e for e in entries if e.kind == Kind.BUFFER]
    if buffers:
        kinds = sorted({e.why for e in buffers})
        terms.append(
            Term("buffers", sum(e.tensor.elements for e in buffers), tuple(e.name for e in buffers), "; ".join(kinds))
        )
    meta = [e for e in entries if e.kind == Kind.QUANT_META]
    if meta:
        leaves = sorted({e.why for e in meta})
        terms.append(
            Term(
                "quant_metadata",
                sum(e.tensor.elements for e in meta),
                tuple(e.name for e in meta),
                f"{sum(e.tensor.nbytes for e in meta):,} bytes: " + ", ".join(leaves),
            )
        )
    packed = [e for e in entries if e.kind == Kind.PARAMETER and e.logical != e.tensor.elements]
    if packed:
        terms.append(
            Term(
                "packing",
                sum(e.tensor.elements - e.logical for e in packed),
                tuple(e.name for e in packed),
                f"{len(packed)} packed tensors hold {sum(e.logical for e in packed):,} parameters in "
                f"{sum(e.tensor.elements for e in packed):,} stored elements",
            )
        )
    terms += _padded_vocab(entries, spec)
    unexpected, missing = _structure_terms(entries, spec, formula)
    terms += unexpected + missing
    return terms


def _v_times_d(copies: list[Entry], spec: Spec) -> str:
    v = spec.values
    n = sum(e.tensor.elements for e in copies)
    if len(copies) == 1 and n == v["V"] * v["d_model"]:
        return f" (V x d_model = {v['V']:,} x {v['d_model']:,})"
    return ""


# ------------------------------------------------------------------------------ entry point


def inspect(path: str, settings: list[str] | None = None) -> Inspection:
    """Inspect the checkpoint at ``path`` (headers only) and compare it with the formula.

    Args:
        path: a .safetensors file, a *.safetensors.index.json, a model directory, or a
            .gguf file.
        settings: ``NAME=VALUE`` overrides, as ``--set``: sizes the shapes cannot show
            (h, k), ``tie_output=true`` for a checkpoint that stores a tied matrix twice.

    Raises:
        CheckpointError (a ValueError): one sentence naming the path and what is wrong.
        ValueError: a bad ``--set`` or a config.json symtrans cannot read.
    """
    ck = read_checkpoint(path)
    if not ck.tensors:
        raise CheckpointError(f"{path}: the checkpoint holds no tensors")
    matched: dict = {}
    fam, naming = _family(ck, matched)
    entries = classify(ck, fam, scheme_from_config(ck.config), matched.get(fam.name))
    if _generic_type(ck):
        return _inspect_generic(ck, naming, entries, list(settings or []))
    spec, source, spec_notes, inf, error = _spec(ck, fam, entries, list(settings or []))
    result = Inspection(
        checkpoint=ck,
        naming=naming,
        entries=entries,
        spec=spec,
        spec_source=source,
        spec_notes=spec_notes,
        inference=inf,
        spec_error=error,
    )
    if spec is None:
        return result
    import sympy as sp

    from symtrans.engine.architectures import build
    from symtrans.engine.simplify import closed_form

    entries = _mark_copies(entries, spec)
    result.entries = entries
    result.formula = _params(spec)
    result.closed_form = sp.sstr(closed_form(build(spec).params))
    terms = explain(entries, spec, fam, result.formula)
    rest = result.stored_elements - result.formula - sum(t.elements for t in terms)
    if rest:
        # sizes no shape stores come from the config (k: experts per token changes no shape)
        hints = {"_given": (), **{k: spec.values[k] for k in ("h", "k") if k in spec.values}}
        diffs = _differences(entries, spec, fam, hints) if inf is None else []  # config.json vs the shapes
        terms.append(Term("other", rest, (), "; ".join(diffs) if diffs else "no single tensor accounts for it"))
    result.terms = terms
    for e in entries:
        if e.why and e.kind == Kind.PARAMETER:
            result.notes.append(f"{e.name}: {e.why}")
    return result


def _generic_type(ck: Checkpoint) -> bool:
    """A config.json whose model_type has no curated record (counted by the generic path)."""
    from symtrans.catalog.hf_config import SUPPORTED

    mt = ck.config.get("model_type") if ck.config else None
    return ck.format != "gguf" and isinstance(mt, str) and mt not in SUPPORTED


def _inspect_generic(ck: Checkpoint, naming: str, entries: list[Entry], settings: list[str]) -> Inspection:
    """``inspect`` for a model_type without a curated record: the formula is the generic
    path's exact count and tensors are matched by the meta model's names (no guessed
    layout: a guessed llama layout called BitNet's sub-norms unexpected)."""
    from symtrans.analysis.checkpoint_generic import NoGenericExplanation, explain_generic

    mt = ck.config.get("model_type") if ck.config else None
    result = Inspection(
        checkpoint=ck,
        naming=f"{mt} (names of transformers' model)",
        entries=entries,
        spec=None,
        spec_source="config.json (generic path)",
    )
    if settings:
        result.spec_error = (
            f"--set is not applied to model_type {mt!r} (no curated record; counted by the generic path)"
        )
        return result
    try:
        g, entries, terms = explain_generic(ck, entries)
    except NoGenericExplanation as e:
        result.spec_error = str(e)
        return result
    import sympy as sp

    result.generic = g
    result.entries = entries
    result.formula = g.total
    result.closed_form = sp.sstr(g.closed_form)
    rest = result.stored_elements - g.total - sum(t.elements for t in terms)
    if rest:
        terms.append(Term("other", rest, (), "stored shapes that differ from the config's model"))
    result.terms = terms
    result.spec_notes = tuple(g.notes)
    return result


__all__ = ["TERM_LABELS", "Inspection", "Term", "explain", "inspect"]
