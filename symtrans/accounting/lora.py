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
from symtrans.engine.spec import Spec

# Projection names (PEFT's module names for Llama: q_proj, k_proj, v_proj, o_proj,
# gate_proj, up_proj, down_proj).  For a two-map ``mlp`` FFN, ``up`` is W_1 and ``down`` W_2.
PROJECTIONS = ("q", "k", "v", "o", "gate", "up", "down")
ALIASES = {"attention": ("q", "k", "v", "o"), "ffn": ("gate", "up", "down"), "all": PROJECTIONS}
VALID_NAMES = PROJECTIONS + tuple(ALIASES)
PLACEMENTS = ("houlsby", "pfeiffer")


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


def expand_targets(names: tuple[str, ...] | list[str], spec: Spec) -> tuple[str, ...]:
    """Projection names with aliases expanded, in canonical order.

    Raises:
        ValueError: naming the valid names, for an unknown name, for ``gate`` on a
            two-map FFN, or for an empty list.
    """
    if not names:
        raise InputError(f"LoRA needs at least one target; valid names: {', '.join(VALID_NAMES)}")
    out: set[str] = set()
    for n in names:
        if n in ALIASES:
            out |= set(ALIASES[n])
            if spec.ffn == "mlp" and n != "attention":
                out.discard("gate")
        elif n in PROJECTIONS:
            if n == "gate" and spec.ffn == "mlp":
                raise InputError(
                    "LoRA target 'gate' needs a gated FFN (swiglu or geglu); this model's FFN has "
                    "only up (W_1) and down (W_2)"
                )
            out.add(n)
        else:
            raise InputError(f"unknown LoRA target {n!r}; valid names: {', '.join(VALID_NAMES)}")
    return tuple(p for p in PROJECTIONS if p in out)


def _dims(spec: Spec):
    from symtrans.engine.components import dims

    return dims(spec)


def _blocks(spec: Spec) -> tuple[sp.Expr, sp.Expr]:
    """(attention blocks, FFN networks) of the whole model, counting each stored copy once.

    Attention: every self-attention (N per stack) and cross-attention (N_dec).  FFN:
    dense layers once, MoE layers E + n_shared_experts times (each expert is adapted).
    With ``share_layers`` a shared sublayer is one module per kind of layer (as the
    engine stores it), adapted once.
    """
    fam = spec.family
    moe_mult = (S.E + spec.n_shared_experts) if spec.is_moe else sp.Integer(1)
    share_att = spec.share_layers in ("all", "attention")
    share_ffn = spec.share_layers in ("all", "ffn")
    # each stack: attention blocks per layer, and its layer groups (layers, FFN networks per layer)
    if fam == "encoder-decoder":
        n_enc, n_dec = (S.N, S.N) if spec.has("N") else (S.N_enc, S.N_dec)
        stacks = [(1, [(n_enc, moe_mult)]), (2, _groups(spec, n_dec, moe_mult))]
    elif fam == "encoder-only":
        stacks = [(1, [(S.N, moe_mult)])]
    else:
        stacks = [(1, _groups(spec, S.N, moe_mult))]
    att = ffn = sp.Integer(0)
    for per_layer, groups in stacks:
        for n, mult in groups:
            att += per_layer * (1 if share_att else n)
            ffn += mult * (1 if share_ffn else n)
    return att, ffn


def _groups(spec: Spec, n: sp.Expr, moe_mult: sp.Expr) -> list[tuple[sp.Expr, sp.Expr]]:
    """Layer groups of a decoder stack as the engine builds them: (dense layers, 1), (MoE layers, E + shared)."""
    from symtrans.engine.architectures import _layer_counts

    dense, moe = _layer_counts(spec, n)
    out = []
    if dense != 0:
        out.append((dense, sp.Integer(1)))
    if moe != 0:
        out.append((moe, moe_mult))
    return out


def lora_terms(spec: Spec, targets: tuple[str, ...] | list[str]) -> list[Term]:
    """The adapted matrices of ``spec`` for LoRA ``targets``, each r*(d_in + d_out) per copy.

    Shapes (d_in x d_out): q d_model x h*d_k, k d_model x h_kv*d_k, v d_model x h_kv*d_v,
    o h*d_v x d_model, gate/up d_model x d_ff, down d_ff x d_model.

    Raises:
        ValueError: unknown target (listing the valid names), or FFN targets on a
            low-rank FFN (its rank would share the symbol r); multi-head latent attention
            or experts of their own width (not modelled yet).
    """
    names = expand_targets(tuple(targets), spec)
    if spec.has("r"):
        raise InputError("LoRA's rank and the low-rank FFN's rank share the symbol r; drop the spec's r to add LoRA")
    # --- types-moe: maps LoRA's q/k/v and FFN shapes do not describe
    if spec.mla:
        raise InputError("LoRA on multi-head latent attention (q_a/q_b, kv_a/kv_b maps) is not modelled yet")
    if spec.has("d_ff_e") or spec.has("d_ff_s") or spec.shared_expert_gate:
        raise InputError(
            "LoRA on experts whose width differs from the dense FFN's (d_ff_e, d_ff_s) is not modelled yet"
        )
    D = _dims(spec)
    att, ffn = _blocks(spec)
    shapes = {
        "q": (D.d_model, D.h * D.d_k),
        "k": (D.d_model, D.h_kv * D.d_k),
        "v": (D.d_model, D.h_kv * D.d_v),
        "o": (D.h * D.d_v, D.d_model),
        "gate": (D.d_model, D.d_ff),
        "up": (D.d_model, D.d_ff),
        "down": (D.d_ff, D.d_model),
    }
    src = "Hu et al. 2021 (LoRA) §4.1: W + BA, A d_in x r, B r x d_out"
    out = []
    for n in names:
        d_in, d_out = shapes[n]
        count = att if n in ALIASES["attention"] else ffn
        out.append(Term(n, d_in, d_out, count, count * S.r * (d_in + d_out), src))
    return out


def lora_params(spec: Spec, targets: tuple[str, ...] | list[str]) -> sp.Expr:
    """Trainable LoRA parameters: sum over adapted matrices of r*(d_in + d_out), closed form in r."""
    from symtrans.engine.simplify import closed_form

    return closed_form(sp.Add(*[t.params for t in lora_terms(spec, targets)]))


def adapter_params(spec: Spec, placement: str = "houlsby") -> sp.Expr:
    """Trainable bottleneck-adapter parameters, closed form in the bottleneck width r.

    Each adapter: d_model x r + r (down, with bias) and r x d_model + d_model (up, with
    bias) = 2*r*d_model + r + d_model (Houlsby et al. 2019 §2.1).  ``houlsby``: one per
    sublayer (2 per encoder or decoder-only layer, 3 per decoder layer with
    cross-attention); ``pfeiffer``: one per layer.

    Raises:
        ValueError: for an unknown placement.
    """
    if placement not in PLACEMENTS:
        raise InputError(f"adapter placement must be one of {', '.join(PLACEMENTS)}, not {placement!r}")
    each = 2 * S.r * S.d_model + S.r + S.d_model
    fam = spec.family
    if fam == "encoder-decoder":
        n_enc, n_dec = (S.N, S.N) if spec.has("N") else (S.N_enc, S.N_dec)
        count = (2 * n_enc + 3 * n_dec) if placement == "houlsby" else (n_enc + n_dec)
    else:
        count = (2 * S.N) if placement == "houlsby" else S.N
    return sp.expand(count * each)


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
