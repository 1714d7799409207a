"""Communication per step and step time of a training layout (``parallel.Layout``).

Bytes are what one device sends in a step, per collective, with ring algorithms
(Patarasuk & Yuan 2009; NCCL's bus bandwidth): an all-reduce of S bytes over n ranks sends
2(n - 1)/n x S per rank, a reduce-scatter or an all-gather (n - 1)/n x S, an all-to-all
(n - 1)/n of its buffer under balanced routing.  Per step, m = B / (b x dp) micro-batches:

* TP: per micro-batch and layer, one all-reduce of the b x (s/cp) x d_model 16-bit output
  of each block a row-parallel map reduces (attention, FFN or MoE: counted from the layer's
  Cost tree), forward and backward, and once more under full recomputation (Shoeybi et
  al. 2019 §3, Figure 4); with SP each becomes a reduce-scatter plus an all-gather of the
  same bytes (Korthikanti et al. 2022 §4.2.2);
* PP: per micro-batch the b x (s/cp) x d_model 16-bit activation to the next stage and its
  gradient back, v times with interleaving, / tp with SP (Narayanan et al. 2021 §4.1,
  scatter/gather); a device sends m(2v - 1) of them;
* DP: the gradients all-reduced over dp x cp (experts over dp x cp / ep); ZeRO-1/2 and the
  distributed optimizer reduce-scatter the gradients and all-gather the 16-bit weights;
  ZeRO-3 all-gathers the weights twice (forward and backward) and reduce-scatters the
  gradients: 1.5 x the all-reduce (Rajbhandari et al. 2020 §7);
* EP: per MoE layer and micro-batch, dispatch and combine all-to-alls of k copies of each
  token's d_model 16-bit vector, forward and backward (4 in all) (Lepikhin et al. 2021 §2;
  Megatron-Core's alltoall token dispatcher);
* CP: per attention layer and micro-batch, the ring passes each rank's K and V chunk cp - 1
  times forward, and K, V and their gradients backward (3 (cp - 1) chunks in all) (Liu et
  al. 2023, Ring Attention; Megatron-Core context parallelism).

Time per step (seconds), with the assumptions stated in ``assumptions``:
busy = F_hw / (devices x peak x MFU), F_hw the training FLOPs with recomputation;
bubble = busy x (p - 1)/(v m) (Narayanan et al. 2021 §2.2.1-2.2.2: bubble fraction of the
step (p - 1)/(v m + p - 1)); TP, CP, EP and PP transfers are exposed (on the critical
path); DP/ZeRO transfers overlap the backward pass (2/3 of busy) and only their excess
is exposed.  step = busy + bubble + exposed.  A group whose ranks fit in one node (the
rank order tp, cp, dp, pp, tp innermost) uses the intra-node bandwidth, else inter-node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy as sp

from symtrans.accounting import parallel as P
from symtrans.accounting.hardware import Accelerator
from symtrans.base.errors import InputError
from symtrans.engine import symbols as S
from symtrans.engine.simplify import closed_form


@dataclass(frozen=True)
class Cluster:
    """GPUs per node and per-GPU unidirectional bandwidths (bytes/s) inside and between nodes."""

    name: str
    gpus_per_node: int
    intra: int
    inter: int
    source: str


CLUSTERS = {
    c.name: c
    for c in (
        Cluster(
            "dgx-h100",
            8,
            450 * 10**9,
            50 * 10**9,
            "NVIDIA DGX H100: NVLink 4 900 GB/s bidirectional per GPU; 8 x ConnectX-7 400 Gb/s, one per GPU",
        ),
        Cluster(
            "dgx-a100",
            8,
            300 * 10**9,
            25 * 10**9,
            "NVIDIA DGX A100: NVLink 3 600 GB/s bidirectional per GPU; 8 x HDR InfiniBand 200 Gb/s, one per GPU",
        ),
    )
}


def parse_cluster(text: str) -> Cluster:
    """A named cluster (``CLUSTERS``) or ``gpus_per_node=8,intra=450e9,inter=50e9`` (bytes/s).

    Raises:
        InputError: unknown name, missing or non-positive field.
    """
    if text in CLUSTERS:
        return CLUSTERS[text]
    fields = {}
    for part in text.split(","):
        k, eq, val = part.partition("=")
        if not eq or k.strip() not in ("gpus_per_node", "intra", "inter"):
            raise InputError(
                f"--cluster takes {', '.join(CLUSTERS)} or gpus_per_node=N,intra=BYTES_PER_S,inter=BYTES_PER_S, not {text!r}"
            )
        if not re.fullmatch(r"[0-9]+(\.[0-9]+)?(e[0-9]{1,2})?", val.strip()):
            raise InputError(f"--cluster {k.strip()} must be a positive number, not {val!r}")
        num = sp.Rational(val.strip())
        if num <= 0 or not num.is_Integer:
            raise InputError(f"--cluster {k.strip()} must be a positive whole number, not {val!r}")
        fields[k.strip()] = int(num)
    missing = [k for k in ("gpus_per_node", "intra", "inter") if k not in fields]
    if missing:
        raise InputError(f"--cluster needs {', '.join(missing)}")
    return Cluster("custom", fields["gpus_per_node"], fields["intra"], fields["inter"], "given with --cluster")


@dataclass
class Collective:
    """One collective of a step: bytes one device sends, the group, the ring factor."""

    axis: str
    kind: str
    group: int
    count: sp.Expr  # how many per step
    size: sp.Expr  # bytes of one buffer
    factor: sp.Rational  # ring factor: 2(n-1)/n, (n-1)/n
    formula: str
    source: str
    exposed: bool = True

    def bytes(self, values: dict) -> sp.Rational:
        return P.evaluate(self.count * self.size * self.factor, values)

    def json(self, values: dict, seconds) -> dict:
        return {
            "axis": self.axis,
            "collective": self.kind,
            "group": self.group,
            "per_step": int(P.evaluate(self.count, values)),
            "buffer_bytes": _num(P.evaluate(self.size, values)),
            "ring_factor": str(self.factor),
            "bytes_per_step": _num(self.bytes(values)),
            "closed_form": str(closed_form(self.count * self.size * self.factor)),
            "formula": self.formula,
            "seconds": float(seconds),
            "exposed": self.exposed,
            "source": self.source,
        }


def _num(v: sp.Rational):
    return int(v) if v.is_Integer else float(v)


def ring(kind: str, n: int) -> sp.Rational:
    if n <= 1:
        return sp.Integer(0)
    return sp.Rational(2 * (n - 1), n) if kind == "all-reduce" else sp.Rational(n - 1, n)


def collectives(spec, values: dict, lay: P.Layout, params: P.StageParams) -> list[Collective]:
    """Every collective one device of the first stage runs in a step."""
    m, p, v, t = lay.micro_batches, lay.pp, lay.vpp, lay.tp
    tokens = sp.Rational(lay.micro_batch * lay.seq_len, lay.cp)
    act = 2 * tokens * S.d_model  # one 16-bit b x (s/cp) x d_model tensor
    out: list[Collective] = []
    layers_stage = sp.Add(*[mu * P.reduced_blocks_per_layer(c) for c, mu in P._layer_groups(spec)]) / p
    if t > 1:
        passes = 3 if lay.recompute == "full" else 2
        if lay.sequence_parallel:
            for kind in ("reduce-scatter", "all-gather"):
                out.append(
                    Collective(
                        "tp",
                        kind,
                        t,
                        m * passes * layers_stage,
                        act,
                        ring(kind, t),
                        f"m x {passes} passes x blocks of the stage x 2·b·(s/cp)·d_model x (t-1)/t",
                        "Korthikanti et al. 2022 §4.2.2 (SP: all-reduce = reduce-scatter + all-gather)",
                    )
                )
        else:
            out.append(
                Collective(
                    "tp",
                    "all-reduce",
                    t,
                    m * passes * layers_stage,
                    act,
                    ring("all-reduce", t),
                    f"m x {passes} passes x blocks of the stage x 2·b·(s/cp)·d_model x 2(t-1)/t",
                    "Shoeybi et al. 2019 §3, Figure 4 (f and g operators)",
                )
            )
    if p > 1:
        out.append(
            Collective(
                "pp",
                "send/recv",
                2,
                m * (2 * v - 1),
                act / (t if lay.sequence_parallel else 1),
                sp.Integer(1),
                "m x (2v - 1) x 2·b·(s/cp)·d_model (/ tp with SP)",
                "Narayanan et al. 2021 §2.2, §4.1 (scatter/gather optimisation)",
            )
        )
    g = P.GRAD_DTYPES[lay.grad_dtype]
    for part, n, count in (
        ("dense", lay.dp * lay.cp, params.dense),
        ("experts", lay.dp * lay.cp // lay.ep, params.experts),
    ):
        if n <= 1 or count == 0:
            continue
        axis = f"dp ({part})"
        if lay.zero >= 3:
            out.append(
                Collective(
                    axis, "all-gather", n, 2, 2 * count, ring("all-gather", n), "2 x 2·Ψ x (n-1)/n", "ZeRO-3 §7", False
                )
            )
            out.append(
                Collective(
                    axis,
                    "reduce-scatter",
                    n,
                    1,
                    g * count,
                    ring("reduce-scatter", n),
                    f"{g}·Ψ x (n-1)/n",
                    "ZeRO §7",
                    False,
                )
            )
        elif lay.zero >= 1 or lay.distributed_optimizer:
            out.append(
                Collective(
                    axis,
                    "reduce-scatter",
                    n,
                    1,
                    g * count,
                    ring("reduce-scatter", n),
                    f"{g}·Ψ x (n-1)/n",
                    "ZeRO §7",
                    False,
                )
            )
            out.append(
                Collective(
                    axis,
                    "all-gather",
                    n,
                    1,
                    2 * count,
                    ring("all-gather", n),
                    "2·Ψ x (n-1)/n (updated 16-bit weights)",
                    "ZeRO §7; Megatron-LM distributed optimizer",
                    False,
                )
            )
        else:
            out.append(
                Collective(
                    axis,
                    "all-reduce",
                    n,
                    1,
                    g * count,
                    ring("all-reduce", n),
                    f"{g}·Ψ x 2(n-1)/n",
                    "ring all-reduce",
                    False,
                )
            )
    if lay.ep > 1:
        moe_stage = P.moe_layer_count(spec) / p
        ep_tokens = tokens / (t if lay.sequence_parallel else 1)
        out.append(
            Collective(
                "ep",
                "all-to-all",
                lay.ep,
                m * 4 * moe_stage,
                2 * ep_tokens * S.k * S.d_model,
                ring("all-to-all", lay.ep),
                "m x 4 (dispatch, combine; forward, backward) x MoE layers of the stage x 2·T·k·d_model x (ep-1)/ep",
                "Lepikhin et al. 2021 (GShard) §2; Megatron-Core MoEAlltoAllTokenDispatcher",
            )
        )
    if lay.cp > 1:
        kv = P.kv_width(spec)
        attn_stage = P.attention_layers(spec) / p
        chunk = 2 * tokens * kv / t
        out.append(
            Collective(
                "cp",
                "ring send/recv",
                lay.cp,
                m * 3 * (lay.cp - 1) * attn_stage,
                chunk,
                sp.Integer(1),
                "m x 3(cp-1) x attention layers of the stage x 2·b·(s/cp)·(K + V width)/tp",
                "Liu et al. 2023 (Ring Attention); Megatron-Core context parallelism",
            )
        )
    return out


def _span(lay: P.Layout, axis: str) -> int:
    """Consecutive ranks a group of ``axis`` spans (rank order tp, cp, dp, pp, tp innermost)."""
    base = axis.split(" ")[0]
    return {
        "tp": lay.tp,
        "cp": lay.tp * lay.cp,
        "ep": lay.tp * lay.cp * lay.ep,
        "dp": lay.tp * lay.cp * lay.dp,
        "pp": lay.devices,
    }[base]


@dataclass
class StepTime:
    busy: sp.Rational
    bubble: sp.Rational
    bubble_fraction: sp.Rational
    exposed: sp.Rational
    overlapped: sp.Rational
    step: sp.Rational
    tokens_per_second: sp.Rational
    per_collective: list[sp.Rational]
    flops_hw: int
    flops_model: int
    peak: int
    assumptions: list[str]


def step_time(
    spec, values: dict, lay: P.Layout, colls: list[Collective], acc: Accelerator, cluster: Cluster, mfu: sp.Rational
) -> StepTime:
    """Seconds per step (see the module docstring for the model and its assumptions)."""
    from symtrans.accounting.flops import flops_expr

    v = dict(values, B=lay.global_batch, L=lay.seq_len)
    f_hw = int(P.evaluate(flops_expr(spec, "training", recompute=lay.recompute), v))
    f_model = int(P.evaluate(flops_expr(spec, "training"), v))
    precision = "fp8" if lay.fp8 else None
    peak = acc.peak(precision)
    busy = sp.Rational(f_hw) / (lay.devices * peak * mfu)
    m, p, vv = lay.micro_batches, lay.pp, lay.vpp
    bubble = busy * sp.Rational(p - 1, vv * m)
    secs, exposed, dp_time = [], sp.Integer(0), sp.Integer(0)
    for c in colls:
        bw = cluster.intra if _span(lay, c.axis) <= cluster.gpus_per_node else cluster.inter
        t = c.bytes(values) / bw
        secs.append(t)
        if c.exposed:
            exposed += t
        else:
            dp_time += t
    backward = busy * sp.Rational(2, 3)
    dp_exposed = max(sp.Integer(0), dp_time - backward)
    total = busy + bubble + exposed + dp_exposed
    tokens = lay.global_batch * lay.seq_len
    assumptions = [
        f"compute: {f_hw:,} training FLOPs per step (recompute {lay.recompute}) / ({lay.devices} devices x "
        f"{peak:,} FLOP/s x MFU {mfu}); MFU is the utilisation of the busy time, bubble and exposed "
        "communication come on top",
        f"pipeline bubble: busy x (p-1)/(v·m) = busy x {p - 1}/({vv}·{m}), "
        f"{float(sp.Rational(p - 1, vv * m + p - 1)) * 100:.2f}% of the pipeline's time "
        "(Narayanan et al. 2021 §2.2.1-2.2.2)",
        "TP, CP, EP all-to-all and PP transfers are exposed (not overlapped with compute)",
        "DP/ZeRO collectives overlap the backward pass (2/3 of the busy time); only their excess is exposed",
        f"bandwidths per GPU, unidirectional: {cluster.intra:,} B/s inside a node of {cluster.gpus_per_node} GPUs, "
        f"{cluster.inter:,} B/s between nodes ({cluster.source}); a group inside one node (ranks ordered tp, cp, "
        "dp, pp) uses the first",
        "ring algorithms: all-reduce 2(n-1)/n x S per rank, reduce-scatter and all-gather (n-1)/n x S, "
        "all-to-all (n-1)/n under balanced routing",
    ]
    return StepTime(
        busy=busy,
        bubble=bubble,
        bubble_fraction=sp.Rational(p - 1, vv * m + p - 1),
        exposed=exposed + dp_exposed,
        overlapped=dp_time - dp_exposed,
        step=total,
        tokens_per_second=tokens / total,
        per_collective=secs,
        flops_hw=f_hw,
        flops_model=f_model,
        peak=peak,
        assumptions=assumptions,
    )
