"""LoRA and bottleneck adapters: trainable against frozen parameters, and what it saves
in training memory.

LoRA (Hu et al. 2021, §4.1): a frozen d_in x d_out matrix W gets a trainable update
B A with A: d_in x r and B: r x d_out, i.e. r*(d_in + d_out) trainable parameters per
adapted matrix (no bias; PEFT ``LoraConfig(r=..., target_modules=[...])``).

Bottleneck adapters (Houlsby et al. 2019 §2.1): a down projection d_model x r and an up
projection r x d_model, each with a bias: 2*r*d_model + r + d_model per adapter.  The
``houlsby`` placement puts one after every sublayer (attention, cross-attention, FFN);
``pfeiffer`` (Pfeiffer et al. 2021) one per layer, after the FFN.  Houlsby et al. also
train the LayerNorms; that is not counted here.

Which matrices are adapted, and how many sublayers take an adapter, is read off the Cost
tree by role (``TARGET_ROLES``, the attention and FFN blocks), never rebuilt from Spec
options: a hybrid stack adapts its attention layers only, shared and tied weights once.

The rank symbol is ``r`` (the bottleneck width for adapters).  With LoRA and adapters
together at different ranks one symbol cannot stand for both, so the combined trainable
closed form has the two ranks substituted (it stays in d_model, N, ...); each term's own
closed form keeps ``r`` and is printed with its rank.  Counts are parameters;
memory is bytes.  Nothing here evaluates user text: ``parse_peft`` matches fixed patterns.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.engine import symbols as S
from symtrans.engine.cost import Cost, Matrix
from symtrans.engine.roles import (
    ATTENTION_BLOCKS,
    ATTENTION_PROJECTIONS,
    AUDIO_BLOCKS,
    MIXER_BLOCKS,
    VISION_BLOCKS,
    Block,
    Role,
)
from symtrans.engine.spec import Spec

# Projection names (PEFT's module names for Llama: q_proj, k_proj, v_proj, o_proj,
# gate_proj, up_proj, down_proj).  For a two-map ``mlp`` FFN, ``up`` is W_1 and ``down`` W_2.
PROJECTIONS = ("q", "k", "v", "o", "gate", "up", "down")
ALIASES = {"attention": ("q", "k", "v", "o"), "ffn": ("gate", "up", "down"), "all": PROJECTIONS}
VALID_NAMES = PROJECTIONS + tuple(ALIASES)
PLACEMENTS = ("houlsby", "pfeiffer")
# The role of the matrix each name adapts: LoRA's targets are read off the Cost tree by role.
TARGET_ROLES = dict(zip(PROJECTIONS, (*ATTENTION_PROJECTIONS, Role.FFN_GATE, Role.FFN_UP, Role.FFN_DOWN), strict=True))
# Maps whose steps say LoRA's q/k/v and FFN shapes do not describe them: refused.
_MLA_ROLES = frozenset({Role.Q_DOWN, Role.Q_UP, Role.KV_DOWN, Role.KV_UP})
# Sublayers a bottleneck adapter follows (Houlsby placement), and mixers it is not defined for.
_FFN_BLOCKS = (Block.FFN, Block.MOE)


@dataclass(frozen=True)
class Term:
    """One kind of adapted matrix: ``count`` copies of a d_in x d_out matrix.

    ``params`` is the trainable count of all copies (parameters), a closed form in r.
    """

    name: str
    d_in: sp.Expr
    d_out: sp.Expr
    count: sp.Expr
    params: sp.Expr
    source: str


@dataclass(frozen=True)
class Peft:
    """What the user asked for: LoRA (rank, targets) and/or adapters (width, placement)."""

    lora_r: int | None = None
    targets: tuple[str, ...] = ()
    adapter_r: int | None = None
    placement: str = "houlsby"


def _tree(spec: Spec) -> Cost:
    from symtrans.engine.architectures import build

    return build(spec)


def _adaptable(cost: Cost) -> dict[str, list[tuple[sp.Expr, Matrix]]]:
    """The stored matrices of ``cost`` each LoRA name adapts: (copies, matrix) per name.

    A matrix is a target when its step's role is the name's (``TARGET_ROLES``), whatever
    block holds it: self- and cross-attention, dense FFNs and shared experts.  The routed
    experts are one ``EXPERTS`` step, no target: transformers 5.x stores them as fused 3-D
    parameters (``experts.gate_up_proj``, ``experts.down_proj``), not ``nn.Linear`` modules
    (``lora_terms`` refuses FFN targets beside them).  Tied and shared copies hold no matrix
    and are adapted once, where the weight is stored (PEFT wraps the module once).
    """
    by_role = {role: name for name, role in TARGET_ROLES.items()}
    out: dict[str, list[tuple[sp.Expr, Matrix]]] = {n: [] for n in PROJECTIONS}
    for node in cost.nodes():
        st = node.step
        if st.bias or st.role not in by_role:
            continue
        for m in st.matrices:
            out[by_role[st.role]].append((node.multiplicity * m.count, m))
    return out


def _refuse_unmodelled(cost: Cost, ffn: bool) -> None:
    """Refuse trees whose LoRA targets the roles cannot state (see ``lora_terms``); ``ffn``:
    FFN targets are asked for."""
    if S.r in cost.params.free_symbols:
        raise InputError("LoRA's rank and the low-rank FFN's rank share the symbol r; drop the spec's r to add LoRA")
    roles = {n.step.role for n in cost.nodes()}
    # --- types-moe: maps LoRA's q/k/v and FFN shapes do not describe
    if roles & _MLA_ROLES:
        raise InputError("LoRA on multi-head latent attention (q_a/q_b, kv_a/kv_b maps) is not modelled yet")
    if Role.VISION in roles:
        raise InputError(
            "LoRA on a vision-language model is not modelled: PEFT's module names also reach the vision "
            "tower's projections, which symtrans counts as one vision part, not by projection"
        )
    if ffn and Role.EXPERTS in roles:
        raise InputError(
            "LoRA on the FFN of a mixture-of-experts model is not modelled: transformers 5.x stores the routed "
            "experts as fused 3-D parameters, which PEFT adapts (or not) by rules of its own per model type; "
            "attention targets (q, k, v, o) are counted"
        )
    for c in cost.blocks_of(Block.SHARED_EXPERT):
        if c.multiplicity != 1:
            raise InputError(
                f"LoRA with {c.multiplicity} shared experts is not modelled: transformers builds them as one "
                "MLP of the summed width, not as separate experts"
            )


def expand_targets(names: tuple[str, ...] | list[str], spec: Spec) -> tuple[str, ...]:
    """Projection names with aliases expanded, in canonical order, keeping of an alias
    only the names with a matrix in ``spec``'s Cost tree (``ffn`` on a two-map FFN is up
    and down).

    Raises:
        InputError: naming the valid names, for an unknown name, for a name (or an alias)
            no matrix of the model has (``gate`` on a two-map FFN, ``q`` on a state-space
            model), for an empty list, or for a tree ``lora_terms`` does not model.
    """
    if not names:
        raise InputError(f"LoRA needs at least one target; valid names: {', '.join(VALID_NAMES)}")
    cost = _tree(spec)
    _refuse_unmodelled(cost, any(n in ("ffn", "all", *ALIASES["ffn"]) for n in names))
    present = {n for n, ms in _adaptable(cost).items() if ms}
    out: set[str] = set()
    for n in names:
        if n in ALIASES:
            found = set(ALIASES[n]) & present
            if not found:
                raise InputError(f"LoRA target {n!r} matches no matrix of this model: {_missing(n)}")
            out |= found
        elif n in PROJECTIONS:
            if n not in present:
                raise InputError(f"LoRA target {n!r} matches no matrix of this model: {_missing(n)}")
            out.add(n)
        else:
            raise InputError(f"unknown LoRA target {n!r}; valid names: {', '.join(VALID_NAMES)}")
    return tuple(p for p in PROJECTIONS if p in out)


def _missing(name: str) -> str:
    if name == "gate":
        return "'gate' needs a gated FFN (swiglu, geglu or reglu); this model's FFN has only up (W_1) and down (W_2)"
    if name in ("ffn", "up", "down"):
        return "it has no feed-forward network"
    return "it has no attention projection of that role (a state-space or convolution stack)"


def lora_terms(spec: Spec, targets: tuple[str, ...] | list[str]) -> list[Term]:
    """The adapted matrices of ``spec`` for LoRA ``targets``, each r*(d_in + d_out) per copy.

    Read off the Cost tree by role (``TARGET_ROLES``): one Term per name and shape, with
    every stored copy (``Cost.nodes`` multiplicity times the matrix count), so a hybrid
    stack adapts its attention layers only and cross-attention is counted with the rest.
    Shapes come from the matrices (``Matrix`` rows = d_out, cols = d_in).

    Raises:
        InputError: unknown target (listing the valid names) or one without a matrix
            (``expand_targets``); any target on a low-rank FFN (its rank would share the
            symbol r); FFN targets beside routed experts, multi-head latent attention,
            vision towers and several shared experts (not modelled).
    """
    cost = _tree(spec)
    names = expand_targets(tuple(targets), spec)
    src = "Hu et al. 2021 (LoRA) §4.1: W + BA, A d_in x r, B r x d_out"
    adaptable = _adaptable(cost)
    out = []
    for n in names:
        counts: dict[tuple[sp.Expr, sp.Expr], sp.Expr] = {}
        for copies, m in adaptable[n]:  # one Term per shape: h_dec != h, d_ff_dec != d_ff keep theirs
            counts[m.cols, m.rows] = counts.get((m.cols, m.rows), sp.Integer(0)) + copies
        for (d_in, d_out), count in counts.items():
            out.append(Term(n, d_in, d_out, count, count * S.r * (d_in + d_out), src))
    return out


def lora_params(spec: Spec, targets: tuple[str, ...] | list[str]) -> sp.Expr:
    """Trainable LoRA parameters: sum over adapted matrices of r*(d_in + d_out), closed form in r."""
    from symtrans.engine.simplify import closed_form

    return closed_form(sp.Add(*[t.params for t in lora_terms(spec, targets)]))


def _sublayers(cost: Cost) -> tuple[sp.Expr, sp.Expr]:
    """(layers, sublayers) of ``cost``'s stacks, from the tree: a sublayer is an attention
    block (self or cross) or an FFN (dense or MoE) at a layer position; the weights a shared
    stack stores once (``SHARED_LAYER_WEIGHTS``) and the vision part are no positions.

    Raises:
        InputError: for a stack with state-space, linear-attention or convolution mixers.
    """
    layers = subs = sp.Integer(0)

    def visit(c: Cost, outer: sp.Expr) -> None:
        nonlocal layers, subs
        mult = outer * c.multiplicity
        if c.block in MIXER_BLOCKS:
            raise InputError(
                "bottleneck adapters are placed after attention and FFN sublayers (Houlsby et al. 2019 §2.1); "
                "this stack has state-space or linear-attention mixers, where no placement is defined"
            )
        if c.block in (Block.SHARED_LAYER_WEIGHTS, *VISION_BLOCKS, *AUDIO_BLOCKS):
            return
        if c.block in ATTENTION_BLOCKS or c.block in _FFN_BLOCKS:
            subs += mult
            return
        if c.block == Block.LAYER:
            layers += mult
        for ch in c.children:
            visit(ch, mult)

    visit(cost, sp.Integer(1))
    return layers, subs


def adapter_params(spec: Spec, placement: str = "houlsby") -> sp.Expr:
    """Trainable bottleneck-adapter parameters, closed form in the bottleneck width r.

    Each adapter: d_model x r + r (down, with bias) and r x d_model + d_model (up, with
    bias) = 2*r*d_model + r + d_model (Houlsby et al. 2019 §2.1).  ``houlsby``: one per
    sublayer (2 per encoder or decoder-only layer, 3 per decoder layer with
    cross-attention), counted from the Cost tree's attention and FFN blocks;
    ``pfeiffer``: one per layer (its ``LAYER`` blocks).

    Raises:
        InputError: for an unknown placement, or a stack with non-attention mixers.
    """
    if placement not in PLACEMENTS:
        raise InputError(f"adapter placement must be one of {', '.join(PLACEMENTS)}, not {placement!r}")
    each = 2 * S.r * S.d_model + S.r + S.d_model
    layers, subs = _sublayers(_tree(spec))
    return sp.expand((subs if placement == "houlsby" else layers) * each)


_KEY = {"r": "r", "rank": "r", "targets": "targets", "target": "targets", "placement": "placement"}


def parse_options(text: str, what: str) -> dict[str, object]:
    """Parse ``r=8,targets=q,v`` (LoRA) or ``r=64,placement=houlsby`` (adapter).

    Items without ``=`` continue the list of the previous key (``targets=q,v``).

    Raises:
        ValueError: a missing or non-positive r, an unknown key, or a malformed item.
    """
    from symtrans.base.numbers import parse_int

    out: dict[str, object] = {}
    key = None
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        if "=" in item:
            k, _, val = item.partition("=")
            k, val = k.strip(), val.strip()
            if k not in _KEY:
                raise InputError(
                    f"unknown {what} option {k!r}; give r=RANK"
                    + (",targets=q,v" if what == "--lora" else ",placement=houlsby|pfeiffer")
                )
            key = _KEY[k]
            if key == "targets":
                out["targets"] = [val] if val else []
            elif key == "r":
                r = parse_int(val, f"{what} r")
                if r <= 0:
                    raise InputError(f"{what} rank r must be a positive integer, not {val}")
                out["r"] = r
            else:
                out[key] = val
        elif key == "targets":
            out["targets"].append(item)  # type: ignore[union-attr]
        else:
            raise InputError(f"{what} takes NAME=VALUE items separated by commas, not {item!r}")
    if "r" not in out:
        raise InputError(f"{what} needs a rank, e.g. r=8")
    return out


def parse_peft(lora: str | None, adapter: str | None) -> Peft:
    """The CLI's ``--lora r=8,targets=q,v`` and ``--adapter r=64,placement=houlsby`` as a Peft.

    Raises:
        ValueError: see ``parse_options``; also LoRA without targets or a placement for LoRA.
    """
    kw: dict[str, object] = {}
    if lora:
        o = parse_options(lora, "--lora")
        if "placement" in o:
            raise InputError("--lora takes r and targets; placement belongs to --adapter")
        if not o.get("targets"):
            raise InputError(f"--lora needs targets, e.g. targets=q,v; valid names: {', '.join(VALID_NAMES)}")
        kw.update(lora_r=o["r"], targets=tuple(o["targets"]))  # type: ignore[arg-type]
    if adapter:
        o = parse_options(adapter, "--adapter")
        if "targets" in o:
            raise InputError("--adapter takes r and placement; targets belong to --lora")
        kw.update(adapter_r=o["r"], placement=o.get("placement", "houlsby"))
    return Peft(**kw)  # type: ignore[arg-type]


def training_state_bytes(frozen: int, trainable: int, dtype: str = "bf16", optimizer: str = "adam-mixed") -> int:
    """Bytes of weights, gradients and optimizer state when only ``trainable`` parameters train.

    A frozen parameter keeps only its weight; a trainable one also has a gradient and
    the optimizer's state (``memory.model_state_bytes``).  With the defaults, mixed-precision
    Adam (Rajbhandari et al. 2020, ZeRO §3.1): 2 bytes per frozen parameter and
    2 + 2 + 12 = 16 per trainable one.  Activations are excluded.

    Raises:
        ValueError: unknown dtype or optimizer (see ``memory``).
    """
    from symtrans.accounting.memory import model_state_bytes

    frozen_b = model_state_bytes(frozen, dtype, optimizer)["weights_bytes"] if frozen else 0
    train_b = sum(model_state_bytes(trainable, dtype, optimizer).values()) if trainable else 0
    return int(frozen_b + train_b)


def peft_result(spec: Spec, peft: Peft) -> dict:
    """Trainable against frozen parameters of ``spec`` under ``peft``, exact, with closed forms.

    Returns a JSON-ready dict: ``frozen`` (the base model), ``trainable``, ``total``,
    ``trainable_share``, per-matrix ``terms``, the closed forms, the training-state
    bytes of full fine-tuning and of this method, and ``warnings`` (rank that saves nothing).

    Raises:
        ValueError: see ``lora_terms`` and ``adapter_params``.
    """
    from symtrans.accounting.spec_warnings import rank_warning
    from symtrans.engine.architectures import build
    from symtrans.engine.evaluate import exact

    values = spec.values
    frozen = exact(build(spec).params, values)
    out: dict = {"frozen": frozen, "terms": [], "warnings": []}
    trainable = 0
    closed = sp.Integer(0)
    if peft.lora_r is not None:
        vals = {**values, "r": peft.lora_r}
        targets = expand_targets(peft.targets, spec)
        for t in lora_terms(spec, targets):
            n = exact(t.params, vals)
            d_in, d_out = exact(t.d_in, vals), exact(t.d_out, vals)
            out["terms"].append(
                {
                    "method": "lora",
                    "name": t.name,
                    "d_in": d_in,
                    "d_out": d_out,
                    "count": exact(t.count, vals),
                    "each": peft.lora_r * (d_in + d_out),
                    "total": n,
                    "r": peft.lora_r,
                    "closed_form": sp.sstr(t.params),
                }
            )
            w = rank_warning(peft.lora_r, d_in, d_out, f"LoRA on {t.name}")
            if w:
                out["warnings"].append(w)
            trainable += n
        closed += lora_params(spec, targets)
        out["lora"] = {"r": peft.lora_r, "targets": list(targets)}
    if peft.adapter_r is not None:
        expr = adapter_params(spec, peft.placement)
        n = exact(expr, {**values, "r": peft.adapter_r})
        out["terms"].append(
            {
                "method": "adapter",
                "name": f"bottleneck adapters ({peft.placement})",
                "total": n,
                "r": peft.adapter_r,
                "closed_form": sp.sstr(expr),
            }
        )
        out["adapter"] = {"r": peft.adapter_r, "placement": peft.placement}
        trainable += n
        closed += expr
        if peft.adapter_r >= values["d_model"]:
            out["warnings"].append(
                f"adapter bottleneck r={peft.adapter_r} is not below d_model={values['d_model']}: it is no bottleneck"
            )
    out["trainable"] = trainable
    out["total"] = frozen + trainable
    out["trainable_share"] = trainable / (frozen + trainable) if frozen + trainable else 0.0
    if peft.lora_r is not None and peft.adapter_r is not None and peft.lora_r != peft.adapter_r:
        # One symbol r cannot be both ranks: substitute each in its own part.
        closed = lora_params(spec, expand_targets(peft.targets, spec)).xreplace(
            {S.r: sp.Integer(peft.lora_r)}
        ) + adapter_params(spec, peft.placement).xreplace({S.r: sp.Integer(peft.adapter_r)})
        out["trainable_closed_form_note"] = f"ranks substituted: LoRA r = {peft.lora_r}, adapters r = {peft.adapter_r}"
    out["trainable_closed_form"] = sp.sstr(sp.expand(closed))
    out["training_state_bytes"] = {
        "full_fine_tune": training_state_bytes(0, frozen),
        "peft": training_state_bytes(frozen, trainable),
        "convention": "bf16 weights, mixed-precision Adam: 16 bytes per trainable "
        "parameter, 2 per frozen one (ZeRO §3.1); activations excluded",
    }
    return out
