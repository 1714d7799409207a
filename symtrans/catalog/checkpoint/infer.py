"""A Spec from the stored shapes, for checkpoints without a config.json (and GGUF).

What the shapes show (parameters of the classified entries, ``inventory.Entry``):

* ``V`` and ``d_model``: the token embedding's (rows, width);
* ``N`` (or ``N_enc``/``N_dec``): one more than the largest layer index of each stack;
* ``h*d_k``, ``h_kv*d_k``, ``h_kv*d_v``: the widths of W_Q, W_K, W_V;
* ``d_ff``: the width of the FFN's up (or gate) map; ``E``: the experts per layer;
* ``L``: the rows of a learned position table (minus the family's offset rows);
* ``token_types``, ``relative_buckets`` (and T5's ``h``: the relative bias's columns);
* options: which biases, norms and heads are stored.

What they cannot show: ``h`` apart from ``d_k`` (only h*d_k is a shape), ``k`` (experts
per token), whether a stored LM head is tied to the embedding (both are stored then),
and which activation a gated FFN uses.  Those come from ``hints`` (GGUF metadata,
``--set``) or take a value that leaves the parameter count unchanged, with a note.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from symtrans.base.errors import InputError
from symtrans.catalog.checkpoint.inventory import Entry
from symtrans.catalog.checkpoint.names import IN_OUT, Family, Kind
from symtrans.engine.roles import ATTENTION_BLOCKS, Block, Role
from symtrans.engine.spec import Spec


class InferenceError(InputError):
    """The shapes do not determine a Spec; the message says what is missing."""


@dataclass
class Inference:
    """A Spec inferred from shapes, with how each size was found.

    ``found`` maps a size or option to the phrase saying where it came from;
    ``not_inferred`` names what the shapes cannot show and what was used instead.
    """

    spec: Spec
    found: dict[str, str] = field(default_factory=dict)
    not_inferred: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def io_dims(e: Entry) -> tuple[int, int]:
    """(d_in, d_out) of a matrix entry (last two dimensions for stacked experts)."""
    if len(e.shape) < 2:
        raise InferenceError(f"{e.name}: expected a matrix, found shape {e.shape}")
    a, b = e.shape[-2], e.shape[-1]
    return (a, b) if e.layout == IN_OUT else (b, a)


def _first(entries: list[Entry], role: Role, bias: bool = False, **where: Any) -> Entry | None:
    for e in entries:
        if e.role == role and e.bias == bias and all(getattr(e, k) == v for k, v in where.items()):
            return e
    return None


def _heads(q: int, kv: int, v: int, hints: dict[str, Any], found: dict, missing: list) -> dict[str, int]:
    """h, h_kv, d_k, d_v from the widths h*d_k (q), h_kv*d_k (kv), h_kv*d_v (v)."""
    h = hints.get("h")
    if h is not None:
        if q % h:
            raise InferenceError(f"h = {h} does not divide the query width h*d_k = {q}")
        d_k = hints.get("d_k") or q // h
        if q != h * d_k or kv % d_k:
            raise InferenceError(f"h = {h}, d_k = {d_k} do not fit the query and key widths {q} and {kv}")
        h_kv = kv // d_k
        found.setdefault("h", "given" if "h" in hints.get("_given", ()) else "metadata")
    else:
        d_k = math.gcd(q, kv)
        h, h_kv = q // d_k, kv // d_k
        if h % h_kv:  # widths with no common head size that GQA allows: one key head
            h_kv, d_k, h = 1, kv, q // kv if q % kv == 0 else 0
            if not h:
                raise InferenceError(f"query width {q} and key width {kv} fit no head layout; give --set h=...")
        missing.append(
            f"h: only h*d_k = {q} and h_kv*d_k = {kv} are stored; counted with h = {h}, h_kv = {h_kv}, "
            f"d_k = {d_k}, which gives the same parameters (give --set h=N for the real heads)"
        )
    if h % h_kv:
        raise InferenceError(f"h = {h} is not a multiple of the key/value heads {h_kv} (key width {kv})")
    if v % h_kv:
        raise InferenceError(f"the value width {v} is not a multiple of the key/value heads {h_kv}")
    return {"h": h, "h_kv": h_kv, "d_k": d_k, "d_v": v // h_kv}


def infer_spec(entries: list[Entry], fam: Family, hints: dict[str, Any] | None = None) -> Inference:
    """The Spec the stored shapes imply (see the module docstring).

    ``hints``: sizes and options known from elsewhere (``h``, ``h_kv``, ``d_k``, ``k``,
    ``V``, ``L``, ``tie_output``; ``_given`` lists the ones the user gave).

    Raises:
        InferenceError: one sentence naming what the shapes lack (no token embedding
            and no LM head, no attention, widths that fit no Spec).
    """
    hints = dict(hints or {})
    found: dict[str, str] = {}
    missing: list[str] = []
    notes: list[str] = []
    params = [e for e in entries if e.kind == Kind.PARAMETER and e.role is not None]
    emb = _first([e for e in params if not e.alias], Role.TOKEN_EMBEDDING) or _first(params, Role.TOKEN_EMBEDDING)
    head = next((e for e in params if e.role == Role.LM_HEAD and not e.bias and e.block == Block.LM_HEAD), None)
    sizes: dict[str, int] = {}
    if emb is not None:
        rows, width = emb.shape[0], emb.shape[-1]
        found["V"] = f"rows of {emb.name}"
        found["d_model"] = f"width of {emb.name}"
    elif head is not None:
        width, rows = io_dims(head)
        found["V"] = f"outputs of {head.name}"
        found["d_model"] = f"inputs of {head.name}"
    else:
        raise InferenceError("no token embedding and no LM head is stored, so V and d_model cannot be inferred")
    sizes["d_model"] = width
    sizes["V"] = hints.get("V", rows)
    if "V" in hints:
        found["V"] = "metadata" if hints["V"] != rows else found["V"]

    # layers per stack
    stacks: dict[Block | None, set[int]] = {}
    for e in params:
        if e.layer is not None:
            stacks.setdefault(e.stack, set()).add(e.layer)
    if not stacks:
        raise InferenceError("no layer is stored (no tensor name carries a layer index)")
    if fam.family == "encoder-decoder":
        n_enc = max(stacks.get(Block.ENCODER, {-1})) + 1
        n_dec = max(stacks.get(Block.DECODER, {-1})) + 1
        if not n_enc or not n_dec:
            raise InferenceError("an encoder-decoder model needs layers in both stacks")
        if n_enc == n_dec:
            sizes["N"] = n_enc
        else:
            sizes.update(N_enc=n_enc, N_dec=n_dec)
        found["N"] = "largest layer index + 1 of each stack"
    else:
        sizes["N"] = max(max(s) for s in stacks.values()) + 1
        found["N"] = "largest layer index + 1"

    # attention widths (the first layer's self-attention)
    att = [e for e in params if e.block in ATTENTION_BLOCKS and e.block != Block.CROSS_ATTENTION]
    q = _first(att, Role.Q_PROJ)
    if q is None:
        raise InferenceError("no attention query map is stored, so the heads cannot be inferred")
    if q.fused:
        _, out3 = io_dims(q)
        if "h" in hints and "h_kv" in hints and "d_k" in hints:
            qw, kw = hints["h"] * hints["d_k"], hints["h_kv"] * hints["d_k"]
        else:
            qw, kw = width, (out3 - width) // 2
            notes.append(f"{q.name} holds Q, K and V fused ({out3} outputs): split as d_model + 2 x {kw}")
        vw = kw
        found["h*d_k"] = f"outputs of {q.name}"
    else:
        qw = io_dims(q)[1]
        k, v = _first(att, Role.K_PROJ), _first(att, Role.V_PROJ)
        kw = io_dims(k)[1] if k else qw
        vw = io_dims(v)[1] if v else kw
        found["h*d_k"] = f"outputs of {q.name}"
        if k:
            found["h_kv*d_k"] = f"outputs of {k.name}"
    qn = _first(att, Role.Q_NORM)
    if qn is not None and "h" not in hints and qw % qn.shape[0] == 0:  # a per-head norm: its width is d_k
        hints["h"], hints["d_k"] = qw // qn.shape[0], qn.shape[0]
        hints.setdefault("_given", ())
        found["h"] = f"h*d_k over the width of {qn.name}"
    rel = _first(params, Role.RELATIVE_BIAS)
    if rel is not None and "h" not in hints:
        hints["h"] = rel.shape[1]
        hints.setdefault("_given", ())
        found["h"] = f"columns of {rel.name}"
    heads = _heads(qw, kw, vw, hints, found, missing)
    sizes["h"] = heads["h"]
    if heads["h_kv"] != heads["h"]:
        sizes["h_kv"] = heads["h_kv"]
    if heads["d_k"] * heads["h"] != width:
        sizes["d_k"] = heads["d_k"]
    if heads["d_v"] != heads["d_k"]:
        sizes["d_v"] = heads["d_v"]

    # feed-forward width, experts
    # the dense FFN's maps (a shared expert's, Block.SHARED_EXPERT, have their own width d_ff_s)
    ffn_up = _first(params, Role.FFN_UP, block=Block.FFN) or _first(params, Role.FFN_GATE, block=Block.FFN)
    experts = [e for e in params if e.role == Role.EXPERTS and not e.bias]
    gated = _first(params, Role.FFN_GATE) is not None or any(e.part == Role.FFN_GATE for e in experts)
    if ffn_up is not None:
        d_ff = io_dims(ffn_up)[1] // (2 if ffn_up.fused else 1)
        found["d_ff"] = f"outputs of {ffn_up.name}"
    elif experts:
        up = next((e for e in experts if e.part in (Role.FFN_UP, Role.FFN_GATE)), experts[0])
        d_ff = io_dims(up)[1] if up.part != Role.FFN_DOWN else io_dims(up)[0]
        found["d_ff"] = f"expert width of {up.name}"
    else:
        down = _first(params, Role.FFN_DOWN, block=Block.FFN)
        if down is None:
            raise InferenceError("no feed-forward map is stored, so d_ff cannot be inferred")
        d_ff = io_dims(down)[0]
        found["d_ff"] = f"inputs of {down.name}"
    sizes["d_ff"] = d_ff
    opts: dict[str, Any] = {}
    if experts:
        if any(len(e.shape) == 3 for e in experts):
            n_exp = max(e.shape[0] for e in experts if len(e.shape) == 3)
        else:
            n_exp = max(e.expert for e in experts if e.expert is not None) + 1
        sizes["E"] = n_exp
        found["E"] = "experts stored per layer"
        if "k" in hints:
            sizes["k"] = hints["k"]
            found["k"] = "metadata" if "k" not in hints.get("_given", ()) else "given"
        else:
            sizes["k"] = 1
            missing.append("k (experts per token) is not stored; counted with k = 1 (it changes no parameter count)")
        moe_layers = {e.layer for e in experts}
        dense_layers = {e.layer for e in params if e.block == Block.FFN and e.layer is not None}
        if dense_layers:
            first = min(moe_layers)
            if dense_layers == set(range(first)):
                opts["moe_first_dense"] = first
            else:
                notes.append("dense and MoE layers interleave in a pattern symtrans does not model: counted as all MoE")

    # positions
    pos = _first(params, Role.POSITION_EMBEDDING)
    if pos is not None:
        opts["positional"] = "learned"
        opts["position_offset"] = fam.position_offset
        sizes["L_max"] = pos.shape[0] - fam.position_offset
        found["L_max"] = f"rows of {pos.name}" + (f" minus {fam.position_offset}" if fam.position_offset else "")
    elif rel is not None:
        opts["positional"] = "relative"
        opts["relative_buckets"] = rel.shape[0]
        found["relative_buckets"] = f"rows of {rel.name}"
    else:
        opts["positional"] = fam.positional
        if "L_max" in hints:
            sizes["L_max"] = hints["L_max"]
            found["L_max"] = "metadata"
    types = _first(params, Role.TYPE_EMBEDDING)
    if types is not None:
        opts["token_types"] = types.shape[0]
        found["token_types"] = f"rows of {types.name}"

    # norms, biases, heads
    norms = [e for e in params if e.role == Role.NORM]
    layer_norms = [e for e in norms if e.layer is not None]
    if not norms:
        opts["norm"] = "none"
    else:
        opts["norm"] = fam.norm
        if fam.norm == "layernorm":
            opts["norm_bias"] = any(e.bias for e in norms)
    opts["final_norm"] = any(e.layer is None and e.block == Block.NORM for e in norms)
    opts["embedding_norm"] = any(e.block == Block.EMBEDDINGS for e in norms)
    # Gemma-2/3 put a norm before and after each sublayer (Gemma2DecoderLayer: input,
    # post_attention, pre_feedforward and post_feedforward layernorms): four norm vectors in
    # one layer of a one-stack model, where every other family stores one per sublayer.
    if fam.family != "encoder-decoder":
        first = [e for e in layer_norms if not e.bias and e.block == Block.NORM and e.layer == 0]
        if len(first) == 4:
            opts["layer_norms"] = "sandwich"
            found["layer_norms"] = "sandwich: four norms stored in layer 0 (before and after each sublayer)"
    del layer_norms
    biased = {e.role for e in params if e.bias}  # one pass: a pass per role took 5.5 M steps at 90,000 tensors
    has_bias = {r: r in biased for r in Role}
    opts["bias"] = False
    opts["qkv_bias"] = has_bias[Role.Q_PROJ] or has_bias[Role.K_PROJ] or has_bias[Role.V_PROJ]
    opts["out_bias"] = has_bias[Role.O_PROJ]
    opts["ffn_bias"] = (
        has_bias[Role.FFN_UP] or has_bias[Role.FFN_DOWN] or has_bias[Role.FFN_GATE] or any(e.bias for e in experts)
    )
    opts["qk_norm"] = _first(params, Role.Q_NORM) is not None
    opts["ffn"] = fam.gated if gated else "mlp"
    if gated:
        missing.append(f"the gated FFN's activation is not stored: taken as {fam.gated} (same parameters as the other)")
    opts["norm_position"] = fam.norm_position
    if fam.family == "encoder-only":
        opts["lm_head"] = False
        opts["pooler"] = _first(params, Role.POOLER) is not None
        opts["pooler_bias"] = _first(params, Role.POOLER, bias=True) is not None
        mlm = [e for e in params if e.block == Block.MLM_HEAD]
        opts["mlm_head"] = bool(mlm)
        decoder = next((e for e in mlm if e.role == Role.LM_HEAD and not e.bias), None)
        if "tie_output" in hints:
            opts["tie_output"] = bool(hints["tie_output"])
            found["tie_output"] = "given"
        else:  # save_pretrained leaves a tied decoder out: one that is stored is taken as untied
            opts["tie_output"] = decoder is None
            if decoder is not None:
                missing.append(
                    f"tied or not: {decoder.name} is stored beside the embedding; counted as its own matrix "
                    "(if the model ties them, it is a copy: give --set tie_output=true)"
                )
    else:
        if head is None:
            opts["tie_output"] = True
            found["tie_output"] = "no LM head stored: tied to the token embedding"
        elif "tie_output" in hints:
            opts["tie_output"] = bool(hints["tie_output"])
            found["tie_output"] = "given"
        else:
            opts["tie_output"] = False
            missing.append(
                f"tied or not: {head.name} and {emb.name if emb else 'the embedding'} are both stored; counted as "
                "two matrices (if the model ties them, one is a copy: give --set tie_output=true)"
            )
        opts["head_bias"] = _first(params, Role.LM_HEAD, bias=True, block=Block.LM_HEAD) is not None
    if fam.family == "encoder-decoder":
        opts["share_embeddings"] = True
    try:
        spec = Spec(family=fam.family, sizes=tuple(sizes.items()), **opts)
    except ValueError as e:
        raise InferenceError(f"the stored shapes give no valid model: {e}") from None
    return Inference(spec=spec, found=found, not_inferred=missing, notes=notes)


def gguf_hints(meta: dict[str, Any]) -> dict[str, Any]:
    """Sizes a GGUF file's metadata states (``{arch}.attention.head_count`` etc.)."""
    arch = meta.get("general.architecture")
    if not isinstance(arch, str):
        return {}
    out: dict[str, Any] = {}
    for key, name in (
        ("attention.head_count", "h"),
        ("attention.head_count_kv", "h_kv"),
        ("attention.key_length", "d_k"),
        ("expert_used_count", "k"),
        ("context_length", "L_max"),
        ("vocab_size", "V"),
    ):
        v = meta.get(f"{arch}.{key}")
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            out[name] = v
    if "V" not in out:
        n = meta.get("tokenizer.ggml.tokens.length")
        if isinstance(n, int) and n > 0:
            out["V"] = n
    return out
