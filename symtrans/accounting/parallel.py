"""Training memory per device under tensor, pipeline, data, expert and context parallelism.

A layout (``Layout``) places a model on tp x pp x dp x cp devices (Megatron-LM's order,
tensor parallelism innermost; expert parallelism ep is carved out of the dp x cp ranks).
Every term below is summed from the model's Cost tree (``architectures.build``) by the
typed roles and blocks of its steps: a step inside a ``Block.LAYER`` belongs to the layer
stack, split evenly over the pp stages; the embeddings sit on the first stage; the rest
(final norm, LM head, pooler) on the last.  Per step, its 2-D tensors (``Step.matrices``)
are split over tp (Shoeybi et al. 2019 §3; a vocabulary-parallel embedding and head too),
its vectors are replicated except the biases of column-parallel maps (Q, K, V, up, gate);
the router of a MoE layer is replicated (Megatron-Core's TopKRouter); the routed experts
(``Role.EXPERTS``) are split over ep x tp (expert tensor parallelism = tp, Megatron-Core's
default).

Memory of one device (bytes):

* weights: 16-bit parameters of the stage, /dp_shard under ZeRO-3 (Rajbhandari et al. 2020
  §5); ZeRO-3 adds the working set of the largest tensor gathered whole with its gradient;
  ``fp8`` adds TransformerEngine's FP8 copy of each layer's weight matrix (1 byte per element) and
  its delayed-scaling amax history (1,024 fp32 values for each of the input, weight and
  output-gradient of every linear: ``recipe.DelayedScaling(amax_history_len=1024)``);
* gradients: the grad dtype's bytes per parameter, /dp_shard under ZeRO-2/3;
* optimizer: the fp32 master copy and the optimizer's states (``TRAIN_OPTIMIZERS``),
  /dp_shard under ZeRO-1/2/3 or Megatron's distributed optimizer;
  dp_shard = dp x cp for dense parameters (Megatron shards over the data-parallel group
  with context parallelism) and dp x cp / ep for the routed experts (expert data parallelism);
* activations: per layer ``engine.saved.layer_saved_bytes`` on one tensor-parallel rank
  (Korthikanti et al. 2022 Table 2: with GPT's shapes sbh(10 + 24/t + 5as/(ht)) under
  TP, sbh(34/t + 5as/(ht)) with SP, the a·s² terms dropped under selective recomputation,
  the layer input 2sbh (/t with SP) under full recomputation), at s/cp tokens under
  context parallelism, times the layers in flight: 1F1B holds min(m, p) micro-batches of
  the first stage's L/p layers (Narayanan et al. 2021 §2.2.1), the interleaved schedule
  L(1 + (p - 1)/(p v)) layer-micro-batches (Korthikanti et al. 2022 §4.2.3; Megatron-LM
  megatron/training/theoretical_memory_usage.py, compute_activation_memory's
  interleaved_schedule_memory_penalty); the first stage adds the embedding's input ids
  (int64) and dropout mask for p micro-batches, with the same factor (as that function
  does), the last stage the head's input and fp32 logits of one micro-batch.

Units: bytes.  Every term is a SymPy closed form in the model's size symbols with the
layout's integers put in; ``evaluate.exact_rational`` gives its value.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.engine import symbols as S
from symtrans.engine.architectures import build, decoder_symbols
from symtrans.engine.cost import Cost, Node, Step
from symtrans.engine.evaluate import exact_rational
from symtrans.engine.roles import ATTENTION_BLOCKS, Block, Role
from symtrans.engine.saved import layer_saved_bytes
from symtrans.engine.simplify import closed_form
from symtrans.engine.spec import Spec

RECOMPUTE_CHOICES = ("none", "selective", "full")
GRAD_DTYPES = {"bf16": 2, "fp32": 4}
EMBEDDING_BLOCKS = (Block.EMBEDDINGS, Block.ENCODER_EMBEDDINGS, Block.DECODER_EMBEDDINGS)
# column-parallel maps: their output (and bias) is split over tp (Shoeybi et al. 2019 §3)
COLUMN_PARALLEL = (Role.Q_PROJ, Role.K_PROJ, Role.V_PROJ, Role.FFN_UP, Role.FFN_GATE, Role.Q_UP, Role.KV_UP)
# blocks whose output a row-parallel map reduces over tp: one all-reduce each, forward and backward
REDUCED_BLOCKS = (*ATTENTION_BLOCKS, Block.FFN, Block.MOE)
# replicated on every tensor-parallel rank: Megatron-Core's TopKRouter weight, its learned
# position table (a plain nn.Embedding, not vocabulary-parallel) and MLA's down-projections
# (linear_q_down_proj and linear_kv_down_proj are TELinear, duplicated, in its MLA layer specs)
REPLICATED = (Role.ROUTER, Role.POSITION_EMBEDDING, Role.TYPE_EMBEDDING, Role.Q_DOWN, Role.KV_DOWN)
AMAX_HISTORY = 1024  # TransformerEngine recipe.DelayedScaling amax_history_len default


@dataclass(frozen=True)
class TrainOptimizer:
    """Bytes of optimizer state per parameter, beside the fp32 master copy (4 bytes).

    ``matrix_state`` applies to the hidden 2-D weights, ``other_state`` to the rest
    (embeddings, head, vectors); ``factored`` stores (rows + cols) fp32 values per matrix
    instead (Adafactor's factored second moment)."""

    name: str
    matrix_state: int
    other_state: int
    factored: bool
    description: str
    source: str


TRAIN_OPTIMIZERS: dict[str, TrainOptimizer] = {
    o.name: o
    for o in (
        TrainOptimizer(
            "adamw", 8, 8, False, "m and v in fp32", "Loshchilov & Hutter 2019; ZeRO §3.1 (K = 12 with the master)"
        ),
        TrainOptimizer(
            "adam8bit",
            2,
            2,
            False,
            "m and v block-wise quantised to 1 byte each (per-block scales not counted)",
            "Dettmers et al. 2022; bitsandbytes AdamW8bit",
        ),
        TrainOptimizer(
            "sgd", 4, 4, False, "one fp32 momentum buffer", "torch.optim.SGD(momentum>0); Megatron-LM --optimizer sgd"
        ),
        TrainOptimizer(
            "adafactor",
            0,
            4,
            True,
            "no first moment (beta1 = None); the second moment factored into row and column fp32 vectors for "
            "each matrix, a full fp32 vector for the other parameters",
            "Shazeer & Stern 2018 §3-4; transformers.optimization.Adafactor defaults",
        ),
        TrainOptimizer(
            "muon",
            4,
            8,
            False,
            "one fp32 momentum buffer for the hidden matrices; AdamW (m, v) for embeddings, head and vectors",
            "Jordan et al. 2024 (Muon); Liu et al. 2025 (Moonlight §2)",
        ),
    )
}


@dataclass(frozen=True)
class Layout:
    """How one training step is placed on devices (every size a positive int).

    tp, pp, vpp, dp, ep, cp: tensor, pipeline (with vpp model chunks per device for the
    interleaved schedule; 1 = plain 1F1B), data, expert and context parallel sizes.
    zero: ZeRO stage 0-3; distributed_optimizer: Megatron's (optimizer states and master
    weights sharded over dp, gradients kept whole).  micro_batch b, global_batch B
    (sequences per step), seq_len s.  recompute: none | selective | full;
    recompute_layers: layers per stage recomputed under full (None: all).
    """

    tp: int = 1
    pp: int = 1
    vpp: int = 1
    dp: int = 1
    ep: int = 1
    cp: int = 1
    sequence_parallel: bool = False
    zero: int = 0
    distributed_optimizer: bool = False
    micro_batch: int = 1
    global_batch: int = 1
    seq_len: int = 2048
    recompute: str = "none"
    recompute_layers: int | None = None
    grad_dtype: str = "bf16"
    optimizer: str = "adamw"
    fp8: bool = False
    dropout: bool = True

    @property
    def devices(self) -> int:
        return self.tp * self.pp * self.dp * self.cp

    @property
    def micro_batches(self) -> int:
        """m: micro-batches each pipeline runs per step, B / (b x dp)."""
        return self.global_batch // (self.micro_batch * self.dp)


@dataclass
class Term:
    """One figure: its closed form (bytes, with the layout's integers put in), value, source."""

    name: str
    expr: sp.Expr
    value: sp.Rational
    source: str
    note: str = ""

    def json(self) -> dict:
        v = self.value
        return {
            "name": self.name,
            "closed_form": str(closed_form(self.expr)),  # the project's one simplification policy
            "value": int(v) if v.is_Integer else float(v),
            "exact": str(v),
            "source": self.source,
            **({"note": self.note} if self.note else {}),
        }


@dataclass
class StageParams:
    """Parameters one device of a stage holds (after tp and ep), as closed forms."""

    dense: sp.Expr = sp.Integer(0)  # everything but the routed experts
    experts: sp.Expr = sp.Integer(0)  # routed experts (split over ep x tp)
    matrices: sp.Expr = sp.Integer(0)  # 2-D elements among dense + experts (for fp8, Adafactor, Muon)
    hidden_matrices: sp.Expr = sp.Integer(0)  # 2-D elements inside the layers (Muon's share)
    factored: sp.Expr = sp.Integer(0)  # (rows + cols) of every matrix split as held (Adafactor)
    linears: sp.Expr = sp.Integer(0)  # linear maps (fp8 amax histories)
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> sp.Expr:
        return self.dense + self.experts


def _positive(n, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"{what} must be a positive integer, not {n!r}")
    return n


def _size(spec: Spec, values: dict, name: str) -> int | None:
    v = values.get(name)
    return int(v) if v is not None else None


def check_layout(spec: Spec, values: dict, lay: Layout, devices: int | None = None) -> None:
    """Refuse a layout the frameworks refuse, in one sentence naming the rule.

    Raises:
        InputError: tp not dividing the heads or KV heads, pp (x vpp) not dividing the
            layers, ep not dividing the experts or dp x cp, dp x tp x pp x cp not equal to
            ``devices``, a global batch not a multiple of micro-batch x dp, an interleaved
            schedule whose micro-batches are not a multiple of pp (Megatron-LM's rule),
            a sequence not divisible by 2 cp (context parallelism's load-balanced chunks)
            or by tp under SP, or unknown options.
    """
    for what, n in (
        ("--tp", lay.tp),
        ("--pp", lay.pp),
        ("--vpp", lay.vpp),
        ("--dp", lay.dp),
        ("--ep", lay.ep),
        ("--cp", lay.cp),
        ("--micro-batch", lay.micro_batch),
        ("--global-batch", lay.global_batch),
        ("--seq-len", lay.seq_len),
    ):
        _positive(n, what)
    if lay.recompute not in RECOMPUTE_CHOICES:
        raise InputError(f"unknown --recompute {lay.recompute!r}; valid: {', '.join(RECOMPUTE_CHOICES)}")
    if lay.grad_dtype not in GRAD_DTYPES:
        raise InputError(f"unknown --grad-dtype {lay.grad_dtype!r}; valid: {', '.join(GRAD_DTYPES)}")
    if lay.optimizer not in TRAIN_OPTIMIZERS:
        raise InputError(f"unknown --optimizer {lay.optimizer!r}; valid: {', '.join(TRAIN_OPTIMIZERS)}")
    if lay.zero not in (0, 1, 2, 3):
        raise InputError(f"--zero must be 0, 1, 2 or 3, not {lay.zero}")
    if lay.zero and lay.distributed_optimizer:
        raise InputError("give --zero or --distributed-optimizer, not both (the distributed optimizer is ZeRO-1)")
    if spec.family != "decoder-only":
        raise InputError(f"symtrans train lays out decoder-only models; this one is {spec.family}")
    spec.check_workload()  # a per-layer attention pattern is refused, as memory does
    spec.check_sizes(dict(values, B=lay.micro_batch, L=lay.seq_len), workload=True)  # e.g. L within a learned table
    if devices is not None and devices != lay.devices:
        raise InputError(
            f"dp x tp x pp x cp = {lay.dp} x {lay.tp} x {lay.pp} x {lay.cp} = {lay.devices} devices, "
            f"not the {devices} given"
        )
    h, h_kv, n = _size(spec, values, "h"), _size(spec, values, "h_kv") or _size(spec, values, "h"), values.get("N")
    if h is not None and h % lay.tp:
        raise InputError(f"--tp {lay.tp} must divide the {h} attention heads")
    if h_kv is not None and h_kv % lay.tp:
        raise InputError(f"--tp {lay.tp} must divide the {h_kv} key/value heads (Megatron-LM's num_query_groups rule)")
    if n is not None and n % (lay.pp * lay.vpp):
        raise InputError(
            f"--pp {lay.pp} x --vpp {lay.vpp} = {lay.pp * lay.vpp} model chunks must divide the {n} layers"
        )
    if lay.vpp > 1 and lay.pp == 1:
        raise InputError("--vpp (interleaved model chunks) needs --pp > 1")
    if lay.ep > 1:
        if not spec.is_moe:
            raise InputError("--ep splits routed experts; this model has none")
        e = int(values["E"])
        if e % lay.ep:
            raise InputError(f"--ep {lay.ep} must divide the {e} routed experts")
        if (lay.dp * lay.cp) % lay.ep:
            raise InputError(f"--ep {lay.ep} must divide dp x cp = {lay.dp * lay.cp} (experts are sharded over them)")
    if lay.zero >= 2 and lay.pp > 1:  # deepspeed/runtime/pipe/engine.py, PipelineEngine.__init__'s assertion
        raise InputError(f"ZeRO-{lay.zero} shards gradients, which DeepSpeed's pipeline engine refuses; use --zero 0-1")
    if spec.is_moe and lay.tp > 1 and not lay.sequence_parallel:  # Megatron-LM arguments.py, validate_args
        raise InputError("Megatron-LM runs MoE with tensor parallelism only with --sequence-parallel")
    if lay.global_batch % (lay.micro_batch * lay.dp):
        raise InputError(
            f"--global-batch {lay.global_batch} must be a multiple of --micro-batch x --dp = {lay.micro_batch * lay.dp}"
        )
    if lay.vpp > 1 and lay.micro_batches % lay.pp:
        raise InputError(
            f"the interleaved schedule needs micro-batches per step ({lay.micro_batches}) to be a multiple of --pp {lay.pp}"
        )
    if lay.cp > 1 and lay.seq_len % (2 * lay.cp):
        raise InputError(f"--seq-len {lay.seq_len} must be divisible by 2 x --cp = {2 * lay.cp} (load-balanced chunks)")
    if lay.sequence_parallel and (lay.seq_len // lay.cp) % lay.tp:
        raise InputError(f"sequence parallelism splits the {lay.seq_len // lay.cp} tokens of a rank over --tp {lay.tp}")
    if lay.recompute_layers is not None:
        if lay.recompute != "full":
            raise InputError("--recompute-layers applies to --recompute full")
        per_stage = (n or 0) // lay.pp
        if not 0 <= lay.recompute_layers <= per_stage:
            raise InputError(f"--recompute-layers must be between 0 and the {per_stage} layers of a stage")
    if lay.optimizer == "adafactor" and lay.tp > 1:
        raise InputError(
            "Adafactor's factored state of a tensor-parallel shard is not counted (Megatron-LM has no Adafactor); use --tp 1"
        )
    if lay.cp > 1 and spec.mla:
        raise InputError("context parallelism of multi-head latent attention is not counted")


def _stage_of(node: Node) -> str:
    """``layers`` (split over the pp stages), ``first`` (embeddings) or ``last`` (the rest)."""
    if node.within(Block.LAYER):
        return "layers"
    if node.within(*EMBEDDING_BLOCKS):
        return "first"
    return "last"


def _split(step: Step, lay: Layout) -> tuple[sp.Expr, sp.Expr, sp.Expr, sp.Expr]:
    """(parameters, 2-D elements, (rows + cols) of the held matrices, linear maps) of one
    step on one device."""
    mat = sp.Add(*[m.count * m.rows * m.cols for m in step.matrices])
    vec = step.params - mat
    if step.role in REPLICATED:  # replicated on every tensor-parallel rank
        return step.params, mat, sp.Add(*[m.count * (m.rows + m.cols) for m in step.matrices]), 1
    shard = lay.tp * (lay.ep if step.role == Role.EXPERTS else 1)
    vec_shard = lay.tp if (step.bias and step.role in COLUMN_PARALLEL) else 1
    factored = sp.Add(*[m.count * (m.rows + m.cols) for m in step.matrices]) / shard
    linears = sp.Add(*[m.count for m in step.matrices if not m.lookup]) / (lay.ep if step.role == Role.EXPERTS else 1)
    return mat / shard + vec / vec_shard, mat / shard, factored, linears


def stage_params(spec: Spec, lay: Layout) -> dict[str, StageParams]:
    """Parameters on one device of the first and of the last pipeline stage (one stage when
    pp = 1), summed from the Cost tree; the layer stack split evenly over pp.

    A tied LM head (``Step.tied_to``) with pp > 1 keeps a copy of the token embedding on
    the last stage, whose gradient is all-reduced with the first's (Megatron-LM's shared
    word embeddings; Narayanan et al. 2021 §4).
    """
    tree = build(spec)
    out = {"first": StageParams(), "last": StageParams()}
    tied_copy = False
    for node in tree.nodes():
        step = node.step
        if step.tied_to is not None and lay.pp > 1:
            tied_copy = True
        if step.params == 0:
            continue
        where = _stage_of(node)
        params, mat, factored, linears = _split(step, lay)
        mult = node.multiplicity / lay.pp if where == "layers" else node.multiplicity
        stages = ("first", "last") if where == "layers" else (where,)
        if lay.pp == 1:
            stages = ("first", "last")
        for st in dict.fromkeys(stages):
            sp_ = out[st]
            if step.role == Role.EXPERTS:
                sp_.experts += mult * params
            else:
                sp_.dense += mult * params
            sp_.matrices += mult * mat
            if where == "layers" and step.role not in REPLICATED:  # the layers' linear maps (TransformerEngine's)
                sp_.hidden_matrices += mult * mat
                sp_.linears += mult * linears
            sp_.factored += mult * factored
    if tied_copy:
        emb = [n.step for n in tree.nodes() if n.step.role == Role.TOKEN_EMBEDDING and n.step.params != 0]
        for step in emb:
            params, mat, factored, _ = _split(step, lay)
            last = out["last"]
            last.dense += params
            last.matrices += mat
            last.factored += factored
        out["last"].notes.append(
            "the tied LM head keeps a copy of the token embedding on the last stage (Megatron-LM's shared embedding)"
        )
    return out


def _largest_tensor(spec: Spec) -> sp.Expr:
    """The largest weight of one step of the tree, in parameters, for ZeRO-3's working set:
    a closed form; its value is the max over the steps' values at the model's sizes."""
    return sp.Max(*[n.step.params for n in build(spec).nodes() if n.step.params != 0])


def _evaluate(expr: sp.Expr, values: dict) -> sp.Rational:
    # a number (int, Fraction) becomes a Rational exactly; nothing here is ever parsed as code
    return exact_rational(expr if isinstance(expr, sp.Basic) else sp.Rational(expr), values)


def model_state_terms(spec: Spec, values: dict, lay: Layout, stage: str, params: StageParams) -> list[Term]:
    """Weights, gradients, optimizer state (and fp8 / ZeRO-3 extras) of one device of ``stage``."""
    opt = TRAIN_OPTIMIZERS[lay.optimizer]
    g = GRAD_DTYPES[lay.grad_dtype]
    dense_shard = lay.dp * lay.cp
    expert_shard = sp.Rational(lay.dp * lay.cp, lay.ep)
    opt_sharded = lay.zero >= 1 or lay.distributed_optimizer

    def shard(dense, experts, on: bool):
        return (dense / dense_shard + experts / expert_shard) if on else dense + experts

    zero_src = "Rajbhandari et al. 2020 (ZeRO) §5, Figure 1"
    terms = []
    w = 2 * shard(params.dense, params.experts, lay.zero >= 3)
    terms.append(
        Term(
            "weights",
            w,
            _evaluate(w, values),
            "16-bit parameters of the stage, matrices / tp (/ ep for experts)"
            + (f", / dp_shard under ZeRO-3: {zero_src}" if lay.zero >= 3 else ""),
        )
    )
    gr = g * shard(params.dense, params.experts, lay.zero >= 2)
    terms.append(
        Term(
            "gradients",
            gr,
            _evaluate(gr, values),
            f"{lay.grad_dtype} gradients, {g} bytes each"
            + (f", / dp_shard under ZeRO-2/3: {zero_src}" if lay.zero >= 2 else ""),
        )
    )
    master = 4 * shard(params.dense, params.experts, opt_sharded)
    terms.append(
        Term(
            "optimizer master weights",
            master,
            _evaluate(master, values),
            "fp32 master copy of the 16-bit weights (Micikevicius et al. 2018)"
            + (", sharded over dp_shard (ZeRO-1+, or Megatron's distributed optimizer)" if opt_sharded else ""),
        )
    )
    if opt.factored:
        mat_params = params.matrices
        state_full = 4 * params.factored + opt.other_state * (params.total - mat_params)
    else:
        other = params.total - params.hidden_matrices
        state_full = opt.matrix_state * params.hidden_matrices + opt.other_state * other
    # the state shards like the parameters it belongs to: the experts' share over dp x cp / ep
    frac_exp = params.experts / params.total if params.total != 0 else 0
    state = state_full * ((1 - frac_exp) / dense_shard + frac_exp / expert_shard) if opt_sharded else state_full
    terms.append(
        Term(
            "optimizer states",
            state,
            _evaluate(state, values),
            f"{opt.name}: {opt.description} ({opt.source})",
        )
    )
    if lay.zero >= 3:
        big = _largest_tensor(spec)
        live = 4 * big  # 16-bit weights and 16-bit gradients; an fp32 gradient lives only in its shard
        terms.append(
            Term(
                "ZeRO-3 gathered working set",
                live,
                _evaluate(live, values),
                "the largest tensor gathered whole with its gradient, both 16-bit, while its layer runs "
                "(DeepSpeed stage3's allgather of one module at a time; prefetch buckets not counted)",
            )
        )
    if lay.fp8:
        fp8 = params.hidden_matrices + 3 * AMAX_HISTORY * 4 * params.linears
        terms.append(
            Term(
                "fp8 weight copies and amax history",
                fp8,
                _evaluate(fp8, values),
                "TransformerEngine: an FP8 cast (1 byte) of each layer's weight matrix held (embedding, head and "
                "router stay 16-bit), and per linear map "
                "1,024-entry fp32 amax histories for input, weight and output gradient (recipe.DelayedScaling)",
            )
        )
    return terms


def _layer_groups(spec: Spec) -> list[tuple[Cost, sp.Expr]]:
    """The layer Costs of the decoder stack with their multiplicities (dense and MoE layers)."""
    out = []

    def walk(c: Cost, mult: sp.Expr):
        m = mult * c.multiplicity
        if c.block == Block.LAYER:
            out.append((c, m))
            return
        for ch in c.children:
            walk(ch, m)

    walk(build(spec), sp.Integer(1))
    return out


def _is_moe_layer(layer: Cost) -> bool:
    return any(True for _ in layer.blocks_of(Block.MOE))


def in_flight(lay: Layout, stage: str) -> tuple[sp.Rational, str]:
    """Micro-batches whose activations a device of ``stage`` holds at the peak, in units of a
    stage's L/p layers (a Rational under interleaving), and the sentence saying why.

    1F1B: min(m, p) on the first stage, 1 on the last (Narayanan et al. 2021 §2.2.1).
    Interleaved (v chunks): the first device warms up 2(p - 1) + (v - 1)p + 1 chunks of
    L/(pv) layers, (pv + p - 1)/v stage-equivalents = p(1 + (p - 1)/(pv)) (Korthikanti et
    al. 2022 §4.2.3); the last (v - 1)p + 1 chunks (Megatron-LM's interleaved warm-up count);
    at most the m·v chunks of the step.
    """
    p, v, m = lay.pp, lay.vpp, lay.micro_batches
    if v > 1:
        chunks = 2 * (p - 1) + (v - 1) * p + 1 if stage == "first" else (v - 1) * p + 1
        chunks = min(chunks, m * v)  # no more chunks than the step runs (m = p: Megatron's warm-up is capped so)
        return sp.Rational(chunks, v), (
            "interleaved 1F1B: the first device warms up 2(p-1) + (v-1)p + 1 model chunks of L/(pv) layers, "
            "L(1 + (p-1)/(pv)) layer-micro-batches (Korthikanti et al. 2022 §4.2.3; Megatron-LM "
            "megatron/training/theoretical_memory_usage.py, compute_activation_memory); the last (v-1)p + 1"
        )
    return sp.Integer(min(m, p) if stage == "first" else 1), (
        "1F1B: the first stage holds min(m, p) micro-batches in flight, the last one (Narayanan et al. 2021 §2.2.1)"
    )


def activation_terms(spec: Spec, values: dict, lay: Layout, stage: str) -> list[Term]:
    """Activation bytes one device of ``stage`` holds at the peak of the schedule."""
    p, v, m = lay.pp, lay.vpp, lay.micro_batches
    b, s = sp.Integer(lay.micro_batch), sp.Rational(lay.seq_len, lay.cp)
    t = lay.tp
    sp_on = lay.sequence_parallel
    keep_scores = lay.recompute == "none" and lay.cp == 1
    src = "Korthikanti et al. 2022 §4.1-4.2, Table 2 (per tensor, re-derived from the model's options)"
    per_layer = []
    for layer, mult in _layer_groups(spec):
        moe = _is_moe_layer(layer)
        full = layer_saved_bytes(spec, b, s, sp.Integer(2), lay.dropout, keep_scores, moe=moe, tp=t, sp_on=sp_on)
        per_layer.append((mult, full))
    n_layers = sp.Add(*[mu for mu, _ in per_layer])
    if lay.recompute == "full":
        inp = 2 * b * s * S.d_model / (t if sp_on else 1)
        k = lay.recompute_layers
        if k is None:
            layer_sum = n_layers * inp / p
        else:  # k layers of each stage keep their input only, the rest everything (Megatron's block method)
            stored = sp.Add(*[mu * f for mu, f in per_layer]) / n_layers
            layer_sum = k * inp + (n_layers / p - k) * stored
    else:
        layer_sum = sp.Add(*[mu * f for mu, f in per_layer]) / p
    flight, flight_src = in_flight(lay, stage)
    layers = layer_sum * flight
    terms = [
        Term(
            "activations: layers",
            layers,
            _evaluate(layers, values),
            src,
            f"{flight_src}; recompute {lay.recompute}, tp {t}, sp {'on' if sp_on else 'off'}, cp {lay.cp}"
            + (
                "; context parallelism runs fused attention (no score matrices)"
                if lay.cp > 1 and lay.recompute == "none"
                else ""
            ),
        )
    ]
    if stage == "first":
        # Megatron-LM's count (compute_activation_memory): int64 input ids and the embedding
        # dropout mask for p micro-batches, with the interleaving factor, / tp
        pen = sp.Integer(1) + sp.Rational(p - 1, p * v) if v > 1 else sp.Integer(min(m, p)) / p
        mask = (1 if lay.dropout else 0) * b * s * S.d_model
        emb = (8 * b * s + mask) * p * pen / t
        terms.append(
            Term(
                "activations: embedding",
                emb,
                _evaluate(emb, values),
                "input ids (int64) and the embedding's dropout mask per micro-batch in flight, / tp (Megatron-LM "
                "megatron/training/theoretical_memory_usage.py, compute_activation_memory)",
            )
        )
    if stage == "last" and spec.lm_head:
        head = (2 * b * s * S.d_model / (t if sp_on else 1) + 4 * b * s * S.V / t).xreplace(decoder_symbols(spec))
        terms.append(
            Term(
                "activations: head",
                head,
                _evaluate(head, values),
                "the head's 16-bit input (/ tp with SP) and the fp32 logits of the vocabulary-parallel "
                "cross-entropy (/ tp), one micro-batch",
            )
        )
    return terms


@dataclass
class StageMemory:
    stage: str
    params: StageParams
    terms: list[Term]

    @property
    def total(self) -> sp.Rational:
        return sp.Add(*[t.value for t in self.terms])


def memory(spec: Spec, values: dict, lay: Layout) -> list[StageMemory]:
    """Memory of one device of the first and of the last stage (one entry when pp = 1)."""
    params = stage_params(spec, lay)
    stages = ("first", "last") if lay.pp > 1 else ("first",)
    out = []
    for st in stages:
        terms = model_state_terms(spec, values, lay, st, params[st])
        if lay.pp == 1:  # the one stage holds the head too
            terms += [t for t in activation_terms(spec, values, lay, "first")]
            terms += [t for t in activation_terms(spec, values, lay, "last") if t.name == "activations: head"]
        else:
            terms += activation_terms(spec, values, lay, st)
        out.append(StageMemory(st, params[st], terms))
    return out


def moe_layer_count(spec: Spec) -> sp.Expr:
    """MoE layers of the model: the multiplicity of its ``Role.EXPERTS`` steps."""
    return sp.Add(*[n.multiplicity for n in build(spec).nodes() if n.step.role == Role.EXPERTS])


def reduced_blocks_per_layer(layer: Cost) -> int:
    """Blocks of one layer whose output a row-parallel map reduces over tp."""
    return sum(1 for c in layer.children if c.block in REDUCED_BLOCKS)


def kv_width(spec: Spec) -> sp.Expr:
    """Key and value elements per token of one attention layer: the output rows of the
    K and V projections (``Role.K_PROJ``, ``Role.V_PROJ``) of the first layer."""
    layer, _ = _layer_groups(spec)[0]
    return sp.Add(
        *[
            mt.count * mt.rows
            for n in layer.nodes()
            if n.step.role in (Role.K_PROJ, Role.V_PROJ) and not n.step.bias
            for mt in n.step.matrices
        ]
    )


def attention_layers(spec: Spec) -> sp.Expr:
    return sp.Add(
        *[mu * sum(1 for c in layer.children if c.block in ATTENTION_BLOCKS) for layer, mu in _layer_groups(spec)]
    )


def evaluate(expr, values: dict) -> sp.Rational:
    """``expr`` at the model's sizes, exact."""
    return _evaluate(expr, values)
