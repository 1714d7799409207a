"""Serving capacity of a model on accelerators: memory per device, the concurrency
that fits (the way vLLM computes it), time to first token, time per output token,
throughput, devices for a target, host memory and storage.

Every figure is exact (SymPy Rationals) and comes from the other accounting modules:
weight bytes from ``quantization`` (the dtype, or the quantized layout with its scales
and zeros), the KV cache from ``memory.kv_cache_per_token``/``kv_cache_bytes``, the
activation reserve from ``memory.memory_terms``, times from ``roofline.inference_roofline``.

Memory, per device (a replica is ``tensor_parallel`` devices; ``devices`` / tp replicas):

* weights W: the matrices (with their quantization data) split over tp devices, the
  vectors (norms, biases) on each (Megatron-LM tensor parallelism, Shoeybi et al. 2019
  §3); rounded up to a whole byte;
* KV cache per token k: the Cost tree's caching steps (``Step.cache``), each with the KV
  heads of one device, max(1, h_kv / tp) of its ``Step.cache_heads`` (vLLM replicates KV
  heads when tp exceeds them; an MLA latent is one head every device keeps whole);
* activation reserve R: given, or one layer's activations for a prefill of the prompt at
  batch 1 with FlashAttention plus the fp32 logits (``memory --inference``'s term);
* the token budget, as vLLM sizes its KV cache: floor((u·M − W − R) / k) tokens for
  ``--gpu-memory-utilization`` u of the device memory M, rounded down to whole blocks
  of ``block_size`` tokens; the maximum concurrency is the budget // tokens per request
  ("Maximum concurrency for N tokens per request"); under ``--engine vllm`` a model with
  sliding-window or state layers follows vLLM's layer groups (``vllm_hybrid``).

Time, per replica, on the roofline with the efficiencies stated:

* TTFT: the prefill of one request's prompt (batch 1) on an idle replica;
* TPOT: the decode of T_gen tokens at batch B (the weights read once per step plus
  every cached position, against the bandwidth; the FLOPs against the peak), per token;
* throughput: a wave of B requests prefilled together and decoded together;
  requests/s = replicas · B / (prefill(B) + decode(B)), output tokens/s = that · T_gen,
  and decode tokens/s = replicas · B / TPOT.

Units: bytes, seconds, FLOPs.  Bad input raises ValueError (one sentence); a model that
does not fit raises ``DoesNotFit`` (a ValueError) with the shortfall in bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

import sympy as sp

from symtrans.accounting.hardware import MIN_UTILISATION, Accelerator, fraction
from symtrans.base.errors import InputError
from symtrans.engine.architectures import build
from symtrans.engine.cost import Cost
from symtrans.engine.evaluate import exact
from symtrans.engine.roles import VISION_BLOCKS, Block, Role

if TYPE_CHECKING:  # pragma: no cover
    from symtrans.accounting.quantization import Quantization


# the most devices a --target-throughput may ask for: ten times the largest GPU clusters
# announced (about 10^5 accelerators), so that a plan beyond it is refused, not printed
MAX_DEVICES = 10**6


class DoesNotFit(InputError):
    """The model (or the asked concurrency) does not fit; ``shortfall`` in bytes;
    ``figures``: the memory terms per device that were compared (weights, reserve, the
    engine's terms, usable, device memory, token budget), for ``symtrans reconcile``."""

    def __init__(self, message: str, shortfall: int, figures: dict | None = None) -> None:
        super().__init__(message)
        self.shortfall = shortfall
        self.figures = figures or {}


@dataclass(frozen=True)
class DeployOptions:
    """What ``symtrans deploy`` was asked (see the module docstring for the model).

    Attributes:
        devices, tensor_parallel: devices in all; devices per replica (must divide).
        pipeline_parallel: stages a replica's layers are split over (``vllm_pipeline``); a
            replica is tensor_parallel x pipeline_parallel devices.
        shared_prefix: prompt tokens every request shares; their whole blocks are held once
            (vLLM's automatic prefix caching hashes whole blocks, each by its tokens and its
            prefix: docs/design/prefix_caching.md, vllm/v1/core/kv_cache_utils.py
            hash_block_tokens), and a hit stops before the prompt's last token (vLLM v1
            recomputes it: kv_cache_manager.py, get_computed_blocks), so with n =
            floor(min(s, P − 1) / b) a request needs cdiv(L, b) − n blocks of its own and n are held once.
        dtype, kv_dtype, quantization, precision: weight dtype (of the tensors a
            quantization leaves alone), KV cache dtype, ``quantization.Quantization``,
            the peak used (None: the weights' 16-bit dtype where the device has it).
        concurrency: requests in flight in all (None: as many as fit).
        prompt, generate: tokens per request (prompt None: the context length L minus
            ``generate`` for a decoder-only model, L for an encoder-decoder's source).
        utilisation: vLLM's gpu_memory_utilization, in (0, 1] (None: 0.9, or the vLLM
            release's default under ``engine="vllm"``).
        activation_reserve: bytes (None: the default above, or the vLLM profile's peak).
        compute_efficiency, bandwidth_efficiency: fractions of peak and bandwidth achieved.
        block_size: KV cache block (tokens); None: 1 (counts tokens), 16 under vLLM.
        target_latency: seconds a request may take (prefill + decode of its wave).
        target_throughput: generated tokens per second wanted in all.
        disk_allowance, host_allowance: bytes added to the checkpoint for files beside
            it (tokenizer, config) and for the serving process (runtime, buffers).
        engine: "vllm" applies ``vllm_profile``'s start-up rules (CUDA-visible memory,
            the profiling run's activation peak, memory outside PyTorch, blocks of 16,
            the release's utilisation); "none" the bare formula above.
        engine_version: the vLLM release line (``vllm_profile.version``).
        non_torch, cuda_graphs: bytes outside PyTorch and of captured CUDA graphs
            (None: the release's logged figure; 0).
        max_num_batched_tokens, max_num_seqs: the profiling run's size (None: vLLM's default).
        max_model_len: tokens of one request, prompt + generated (vLLM's flag; sets
            ``prompt`` to max_model_len − generate).
        serving_context: vLLM's derived context where rope scaling stretches the
            positions (``vllm_profile.derived_max_model_len``); used under ``engine="vllm"``.
        mla: multi-head latent attention decoded ``absorbed`` (vLLM, SGLang; the default
            under ``engine="vllm"``) or ``expanded`` (transformers' eager; ``mla_decode``).
        prefix_caching: vLLM's ``--enable-prefix-caching`` (True), ``--no-enable-prefix-caching``
            (False) or None: the release's default (``vllm_profile.VersionRules.prefix_caching``;
            off under ``engine="none"``).  ``shared_prefix`` needs it on.
        config_positions: the config.json's max_position_embeddings, the context (vLLM's
            default max_model_len) of a model whose Spec has no ``L_max``.
        length_source: where the Spec's ``L`` came from (``Resolved.seq_len_source``), said
            when it is the context.
    """

    devices: int = 1
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    shared_prefix: int = 0
    dtype: str = "bf16"
    kv_dtype: str | None = None
    quantization: Quantization | None = None
    precision: str | None = None
    concurrency: int | None = None
    prompt: int | None = None
    generate: int = 1
    utilisation: sp.Rational | None = None
    activation_reserve: int | None = None
    compute_efficiency: sp.Rational = sp.Integer(1)
    bandwidth_efficiency: sp.Rational = sp.Integer(1)
    block_size: int | None = None
    target_latency: sp.Rational | None = None
    target_throughput: sp.Rational | None = None
    disk_allowance: int = 0
    host_allowance: int = 0
    engine: str = "none"
    engine_version: str | None = None
    non_torch: int | None = None
    cuda_graphs: int | None = None
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    max_model_len: int | None = None
    serving_context: int | None = None
    mla: str | None = None
    prefix_caching: bool | None = None
    config_positions: int | None = None
    length_source: str = ""


@dataclass(frozen=True)
class Formula:
    """One output: its closed form, the closed form with the numbers put in, the value."""

    name: str
    formula: str
    substituted: str
    value: sp.Rational
    unit: str


@dataclass
class Plan:
    """The answer of ``plan`` (exact numbers; see the module docstring)."""

    accelerator: Accelerator
    options: DeployOptions
    precision: str
    kv_dtype: str
    replicas: int
    prompt: int
    generate: int
    tokens_per_request: int
    weights_total: int
    weight_terms: dict[str, int]
    weights_per_device: int
    kv_bytes_per_token: int
    kv_heads_per_device: int  # of kv_total heads; layers of different head counts: the share's numerator
    kv_bytes_per_request: int
    kv_blocks: int  # blocks of the KV cache pool vLLM allocates (of every layer group)
    kv_cache_allocated: int  # bytes of that pool per device: what the KV cache takes, whatever the batch
    kv_cache_at_batch: int  # bytes of the pool the running batch holds (a shared prefix's blocks once)
    activation_reserve: int
    reserve_is_default: bool
    usable: sp.Rational
    token_budget: int
    max_concurrency: int
    batch: int
    concurrency: int
    ttft: object
    decode: object
    wave_prefill: object
    tpot: sp.Rational
    wave_seconds: sp.Rational
    requests_per_second: sp.Rational
    output_tokens_per_second: sp.Rational
    decode_tokens_per_second: sp.Rational
    checkpoint_bytes: int
    disk_bytes: int
    host_bytes: int
    device_memory: int = 0
    engine_terms: dict = field(default_factory=dict)
    mla: str | None = None
    hybrid: object = None  # vllm_hybrid.HybridLayout of a hybrid model under --engine vllm
    window: object = None  # vllm_hybrid.WindowLayout of a model with sliding-window layers under --engine vllm
    vllm_concurrency: Fraction | None = None  # vLLM's 'Maximum concurrency' where it is not budget / request
    stages: list = field(default_factory=list)  # vllm_pipeline.Stage of each pipeline stage (pipeline parallelism)
    # what bounds the running batch: "KV cache", "max_num_seqs" (vLLM runs at most that many) or "--concurrency"
    batch_bound: str = "KV cache"
    targets: dict = field(default_factory=dict)
    defaults: list[str] = field(default_factory=list)  # each default the plan picked, with its source
    formulas: list[Formula] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)


def _g(n) -> str:
    """An exact number for a substitution: 13,476,831,232 or 9/10."""
    r = sp.Rational(n)
    return f"{int(r):,}" if r.q == 1 else f"{r.p}/{r.q}"


def _substitute(formula: str, values: dict[str, int]) -> str:
    """``formula`` (a closed form symtrans printed) with each size name replaced by its value."""
    import re

    names = sorted((n for n in values if re.search(rf"\b{n}\b", formula)), key=len, reverse=True)
    for n in names:
        formula = re.sub(rf"\b{n}\b", str(values[n]), formula)
    return formula.replace("*", " × ")


def _precision(acc: Accelerator, dtype: str, asked: str | None, notes: list[str]) -> str:
    if asked is not None:
        acc.peak(asked)  # refuses a precision the device lacks
        return asked
    if dtype in ("bf16", "fp16", "fp8") and getattr(acc, dtype) is not None:
        return dtype
    chosen = acc.default_precision
    if dtype in ("bf16", "fp16", "fp8"):
        notes.append(
            f"{acc.name} has no {dtype} tensor units: the {chosen} peak is used (vLLM casts the weights to a dtype "
            "the device runs, as for a bf16 checkpoint on a T4)"
        )
    else:
        notes.append(f"{dtype} weights compute in {chosen} (the matmuls run on dequantized or 16-bit operands)")
    acc.peak(chosen)
    return chosen


def _heads_per_device(heads: int, tp: int) -> int:
    """KV heads one of ``tp`` tensor-parallel devices keeps of ``heads``."""
    if heads % tp == 0:
        return heads // tp
    if tp % heads == 0:
        return 1  # vLLM replicates each KV head over tp / h_kv devices
    raise InputError(f"--tensor-parallel {tp} must divide the {heads} key/value heads or be a multiple of them")


def moe_layers(tree: Cost) -> sp.Expr:
    """MoE layers of a model: its ``Block.MOE`` blocks, each times the multiplicity of the
    layers that hold it (the first ``moe_first_dense`` dense layers, N_moe of a hybrid stack
    and every other layer are the tree's own: engine/architectures.py, engine/stack.py)."""

    def count(c: Cost, outer: sp.Expr) -> sp.Expr:
        m = outer * c.multiplicity
        if c.block == Block.MOE:
            return m
        return sp.Add(*[count(ch, m) for ch in c.children])

    return count(tree, sp.Integer(1))


def _cache_per_device(spec, values: dict, tp: int, kv_dtype: str) -> tuple[int, int, int]:
    """(cache bytes per token on one of ``tp`` devices, KV heads per device, KV heads), summed
    over the Cost tree's caching steps: each keeps ``Step.cache`` elements per token split into
    ``Step.cache_heads`` heads (h_kv for K and V, h_dec's for an encoder-decoder's decoder; 1 for
    an MLA latent, which every device keeps whole), of which a device keeps max(1, heads / tp).

    Raises:
        InputError: tp divides neither the query heads nor the KV heads; a model that caches
            no K/V per token (state-space layers only) or a cache per sequence (``Step.held``:
            DeepSeek-V4); caching steps of different head counts that
            ``tp`` splits in different shares.
    """
    from symtrans.accounting.memory import get_dtype

    nodes = list(build(spec).nodes())
    if any(n.step.held != 0 or n.step.held_fp32 != 0 for n in nodes):  # deepseek_v4.cache_steps
        raise InputError(
            "deploy sizes the paged KV cache in tokens, as vLLM does, and this model's cache (DeepSeek-V4: a "
            "window of w - 1 keys, compressed entries every m_csa or m_hca tokens, open windows) is not so many "
            "bytes per token, and vLLM's layout of it is not modelled; its cache per sequence: symtrans memory "
            "--inference"
        )
    caching = [n for n in nodes if n.step.cache != 0]
    if not caching:
        raise InputError(
            "deploy sizes the paged KV cache in tokens, as vLLM does, and this model caches no keys or values "
            "per token (only a constant state per sequence): not modelled; see symtrans memory --inference"
        )
    for h in {values.get("h"), values.get("h_dec", values.get("h"))} - {None}:  # the query heads split too
        if h % tp:
            raise InputError(f"--tensor-parallel {tp} must divide the {h} attention heads")
    heads = {int(exact(n.step.cache_heads, values)) for n in caching}
    # Layers of different KV head counts (Gemma 4's sliding and global layers) each keep
    # max(1, heads / tp) of their heads per device: one share for all when tp divides every count.
    shares = {Fraction(_heads_per_device(h, tp), h) for h in heads}
    if len(shares) != 1:
        raise InputError(
            f"--tensor-parallel {tp} keeps a different share of the layers caching "
            f"{', '.join(map(str, sorted(heads)))} KV heads (some replicated): not modelled; "
            "use a tensor-parallel size that divides every KV head count"
        )
    (share,) = shares
    if len(heads) == 1:
        (total,) = heads
        dev = _heads_per_device(total, tp)
    else:  # no one head count: the share per device, as a fraction
        dev, total = share.numerator, share.denominator
    per_token = exact(sp.Add(*[n.multiplicity * n.step.cache for n in caching]), values) * get_dtype(kv_dtype).bytes
    return int(per_token * share), dev, total


def plan(spec, acc: Accelerator, o: DeployOptions) -> Plan:
    """Plan the deployment of ``spec`` on ``o.devices`` x ``acc`` (see the module docstring).

    Raises:
        DoesNotFit: the model does not fit even at concurrency 1, or not at ``o.concurrency``;
            the message names the shortfall in bytes.
        ValueError: a model that does not generate, bad lengths, parallelism or options.
    """
    from symtrans.accounting.flops import evaluate
    from symtrans.accounting.memory import get_dtype, kv_cache_bytes, kv_cache_per_token, memory_terms
    from symtrans.accounting.quantization import WeightFormat, matrix_share, weight_terms
    from symtrans.accounting.roofline import default_kv_dtype, inference_roofline

    if spec.family == "encoder-only" or (spec.family == "decoder-only" and not spec.lm_head):
        raise InputError("deploy plans text generation, and this model has no language-model head")
    if acc.memory is None or acc.bandwidth is None:
        missing = " and ".join(f"{k}=" for k in ("memory", "bandwidth") if getattr(acc, k) is None)
        raise InputError(
            f"deploy needs the accelerator's memory= (bytes) and bandwidth= (bytes/s); {acc.name} has no {missing}"
        )
    from dataclasses import replace

    from symtrans.accounting import vllm_profile as vp

    if o.engine not in vp.ENGINES:
        raise InputError(f"--engine must be one of {', '.join(vp.ENGINES)}, not {str(o.engine)[:40]!r}")
    vllm = o.engine == "vllm"
    asked = o  # the options as given: what the plan defaults is said with its source (_defaults)
    rules = vp.version(o.engine_version) if vllm else None
    o = replace(
        o,
        utilisation=o.utilisation if o.utilisation is not None else (rules.utilisation if vllm else sp.Rational(9, 10)),
        block_size=o.block_size if o.block_size is not None else (vp.BLOCK_SIZE if vllm else 1),
    )
    _check_prefix_caching(o, rules)
    for what, n in (("--devices", o.devices), ("--tensor-parallel", o.tensor_parallel), ("--block-size", o.block_size)):
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise InputError(f"{what} must be a positive integer, not {n!r}")
    pp = o.pipeline_parallel
    if isinstance(pp, bool) or not isinstance(pp, int) or pp < 1:
        raise InputError(f"--pipeline-parallel-size must be a positive integer, not {pp!r}")
    if o.devices % (o.tensor_parallel * pp):
        raise InputError(
            f"--tensor-parallel {o.tensor_parallel}"
            + (f" x --pipeline-parallel-size {pp}" if pp > 1 else "")
            + f" must divide --devices {o.devices}"
        )
    u = fraction(o.utilisation, "--gpu-memory-utilization")
    for flag, eff in (
        ("--compute-efficiency", o.compute_efficiency),
        ("--bandwidth-efficiency", o.bandwidth_efficiency),
    ):
        # the same floor as an MFU (hardware.MIN_UTILISATION): smaller values only give times of
        # astronomical length, past what a float can print (1e-320 overflowed)
        if fraction(eff, flag) < MIN_UTILISATION:
            raise InputError(
                f"{flag} = {float(eff):g} is implausibly small: the fraction of the peak a deployment achieves "
                f"is 0.2 to 0.8 in practice; the smallest accepted is {float(MIN_UTILISATION):g}"
            )
    notes: list[str] = []
    kv_dtype = o.kv_dtype or default_kv_dtype(o.dtype)
    get_dtype(kv_dtype)
    fmt = WeightFormat(o.dtype, o.quantization)
    precision = _precision(acc, o.dtype, o.precision, notes)

    values = dict(spec.values)
    if "L" not in values and "L_max" not in values:
        raise InputError("the model has no context length L; give --set L=N")
    # the position limit (max_position_embeddings) is vLLM's default max_model_len
    # (vllm/config/model.py, _get_and_verify_max_len); else the config's own key; else the workload's L
    if "L_max" in values:
        context, context_source = values["L_max"], "the model's maximum positions L_max (max_position_embeddings)"
    elif o.config_positions:
        context, context_source = o.config_positions, "the config's max_position_embeddings"
    else:
        context, context_source = values["L"], f"L, {o.length_source or '--set L'}"
    if vllm and o.serving_context:
        notes.append(
            f"vLLM's max_model_len {o.serving_context:,}: the config's {context:,} positions times its rope-scaling "
            "factor (vllm/config.py, _get_and_verify_max_len)"
        )
        context = o.serving_context
        context_source = "vLLM's derived max_model_len (rope scaling)"
    gen = o.generate
    if isinstance(gen, bool) or not isinstance(gen, int) or gen < 1:
        raise InputError(f"--generate must be a positive integer, not {gen!r}")
    if o.max_model_len is not None:
        mml = o.max_model_len
        if isinstance(mml, bool) or not isinstance(mml, int) or mml < 1:
            raise InputError(f"--max-model-len must be a positive integer, not {mml!r}")
        if o.prompt is not None:
            raise InputError("give --max-model-len or --prompt, not both (max_model_len = prompt + generate)")
        if mml > context:
            raise InputError(
                f"--max-model-len {mml:,} exceeds the model's {context:,} positions (max_position_embeddings); "
                "vLLM refuses it too (give --set L_max=N for a model with rope scaling)"
            )
        if mml <= gen:
            raise InputError(f"--max-model-len {mml:,} leaves no room for a prompt beside --generate {gen:,}")
        o = replace(o, prompt=mml - gen)
    if o.prompt is None:
        prompt = context - gen if spec.family == "decoder-only" else context
        if prompt < 1:
            raise InputError(f"--generate {gen} leaves no room for a prompt in the context of {context:,} tokens")
    else:
        prompt = o.prompt
        if isinstance(prompt, bool) or not isinstance(prompt, int) or prompt < 1:
            raise InputError(f"--prompt must be a positive integer, not {prompt!r}")
    if spec.family == "decoder-only" and prompt + gen > context:
        raise InputError(
            f"--prompt {prompt:,} + --generate {gen:,} = {prompt + gen:,} tokens exceed the model's context of "
            f"{context:,} (L); vLLM refuses such a request (give --set L=N for a longer context)"
        )
    if spec.family == "encoder-decoder" and (prompt > context or gen > context):
        raise InputError(f"--prompt and --generate must each be at most the model's {context:,} positions (L)")
    fmt.check(spec, values)

    tp = o.tensor_parallel
    replicas = o.devices // (tp * pp)
    kv_tok, kv_dev, kv_total = _cache_per_device(spec, values, tp, kv_dtype)
    kv_tok_expr = kv_cache_per_token(spec, kv_dtype)
    if spec.family == "encoder-decoder":
        req_expr = kv_cache_bytes(spec, sp.Integer(1), sp.Integer(gen), kv_dtype, sp.Integer(prompt))
    else:
        req_expr = kv_cache_bytes(spec, sp.Integer(1), sp.Integer(prompt + gen), kv_dtype)
    kv_req_total = evaluate(req_expr, values)
    tokens_per_request = int(kv_req_total / evaluate(kv_tok_expr, values))
    kv_req = tokens_per_request * kv_tok

    terms = {k: evaluate(v, values) for k, v in weight_terms(spec, fmt).items()}
    weights_total = int(sp.ceiling(sum(terms.values())))
    mat_expr, vec_expr = matrix_share(spec, fmt)
    mat, vec = evaluate(mat_expr, values), evaluate(vec_expr, values)
    weights_dev = int(sp.ceiling(mat / tp + vec))

    engine_terms: dict[str, int] = {}
    logits = 0
    window = None  # vllm_hybrid.WindowLayout of a model with sliding-window layers under --engine vllm
    M = acc.memory
    seqs = None
    if vllm:
        M, m_source = vp.cuda_visible(acc)
        notes.append(f"CUDA-visible memory {M:,} bytes per device ({m_source}); datasheet {acc.memory:,}")
        mnbt = o.max_num_batched_tokens or vp.max_num_batched_tokens(rules, M, acc.name, prompt + gen)
        seqs = o.max_num_seqs or vp.max_num_seqs(rules, M, acc.name)
        for flag, n in (("--max-num-batched-tokens", mnbt), ("--max-num-seqs", seqs)):
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise InputError(f"{flag} must be a positive integer, not {n!r}")
        if spec.family == "decoder-only" and rules.v1:  # V0 prints tokens / max_model_len (executor_base.py)
            from symtrans.accounting import vllm_hybrid

            # vLLM keeps min(w - 1 + max_num_batched_tokens, max_model_len) + one block per windowed layer
            # (vllm/v1/kv_cache_interface.py, SlidingWindowSpec.max_memory_usage_bytes), not w, and groups
            # the layers by kind (vllm_hybrid.WindowLayout)
            window = vllm_hybrid.window_layout(
                spec, values, Fraction(kv_dev, kv_total), get_dtype(kv_dtype).bytes, o.block_size, mnbt
            )
        if window is not None:
            if pp > 1:
                raise InputError(
                    "--pipeline-parallel-size: how vLLM splits sliding-window layers over the stages (each group of "
                    "layers in turn) is not modelled; plan it with --tensor-parallel-size instead"
                )
            kv_req = window.request_bytes(prompt + gen)
            tokens_per_request = -(-kv_req // kv_tok)
        act_bytes = 4 if o.dtype == "fp32" else 2
        if o.activation_reserve is None:
            # the sampler's part of that peak, held by the last pipeline stage only (vllm_profile.activation_peak)
            engine_terms["activation peak"], logits = vp.activation_peak(
                values, mnbt, seqs, tp, act_bytes, rules, moe_layers=exact(moe_layers(build(spec)), values)
            )
        # the larger figure is the tensor-parallel group's all-reduce buffers (NCCL, custom all-reduce): vLLM 0.19.0
        # logs 2.07 to 2.13 GiB at TP 2 and 4 but 0.07 GiB at PP 2 and PP 4 (vllm_profile.VERSIONS["0.19"])
        engine_terms["non-torch memory"] = (
            o.non_torch if o.non_torch is not None else rules.non_torch[1 if tp > 1 else 0]
        )
        engine_terms["CUDA graphs"] = o.cuda_graphs or 0
        notes.append(
            f"vLLM {rules.name} profile: gpu_memory_utilization {_g(o.utilisation)} ({rules.utilisation_source}); "
            f"profiling run of {mnbt:,} tokens (max_num_batched_tokens) and the sampler on {seqs:,} sequences' logits "
            f"(max_num_seqs); memory outside PyTorch {engine_terms['non-torch memory']:,} bytes "
            f"({rules.non_torch_source if o.non_torch is None else '--non-torch'}); CUDA graphs "
            f"{engine_terms['CUDA graphs']:,} bytes (V1 captures them after sizing the KV cache, in the headroom)"
        )
        measured = vp.peak_measurement(o.engine_version)
        if measured is not None and o.activation_reserve is None:
            notes.append(
                f"vLLM {o.engine_version} subtracts as its profiling peak {measured}: PyTorch's cached-but-free blocks "
                + ("and the all-reduce inputs held for the NCCL stream " if tp > 1 else "")
                + "count there, by amounts no log states, so this token budget is an upper bound for that release"
            )
    if o.activation_reserve is None and vllm:
        reserve = sum(engine_terms.values())
    elif o.activation_reserve is None:
        act_dtype = o.dtype if o.dtype in ("fp32", "bf16", "fp16") else "bf16"
        m = memory_terms(
            spec,
            dtype=act_dtype,
            mode="inference",
            batch=1,
            seq_len=prompt,
            flash_attention=True,
            kv_dtype=kv_dtype,
            src_len=prompt if spec.family == "encoder-decoder" else None,
        )
        reserve = int(evaluate(m["activations_bytes"], values))
    else:
        reserve = o.activation_reserve
        if isinstance(reserve, bool) or not isinstance(reserve, int) or reserve < 0:
            raise InputError(f"--activation-reserve must be zero or a positive number of bytes, not {reserve!r}")
        reserve += sum(engine_terms.values())

    if o.activation_reserve is None and any(c.block in VISION_BLOCKS for c in build(spec).children):
        # vLLM's profiling run also encodes dummy images of the processor's largest feature size
        # (vllm/v1/worker/gpu_model_runner.py, profile_run: 'Encoder cache will be initialized with a budget of
        # ... tokens, and profiled with N image items'); that size is the image processor's, not config.json's
        notes.append(
            "activation reserve: the language model's only; the vision encoder's profiling peak (vLLM encodes its "
            "largest dummy images at start-up, gpu_model_runner.profile_run) is not included: give --activation-reserve"
        )
    # a byte count is an integer: the usable memory is rounded down to a whole byte
    usable = sp.Integer(int(sp.floor(u * M)))
    stages = []
    if pp > 1:
        weights_dev, kv_tok, reserve, stages = _pipeline(
            spec, values, o, mat, vec, kv_tok, reserve, usable, engine_terms, logits, notes
        )
        kv_req = tokens_per_request * kv_tok
    free = usable - weights_dev - reserve
    hybrid = None
    if vllm and spec.family == "decoder-only":
        from symtrans.accounting import vllm_hybrid

        # attention beside state layers: one page size for both, groups of layers (vllm_hybrid)
        hybrid = vllm_hybrid.layout(spec, values, tp, kv_tok, default_kv_dtype(o.dtype), o.block_size, acc.name)
    if hybrid is not None:
        if o.shared_prefix:
            raise InputError(
                "--shared-prefix on a hybrid model is not modelled: with prefix caching vLLM keeps state pages per "
                "block ('align' mamba cache mode)"
            )
        o = replace(o, block_size=hybrid.block_size)
        tokens_per_request = prompt + gen
        kv_req = tokens_per_request * kv_tok + hybrid.state_groups * hybrid.group_size * hybrid.page
        blocks = hybrid.blocks(int(free)) if free > 0 else 0
        allocated = (
            blocks * hybrid.page * hybrid.group_size
        )  # g tensors of blocks x page (get_kv_cache_config_from_groups)
        budget = hybrid.token_budget(blocks)
        vllm_concurrency = hybrid.concurrency(blocks, prompt + gen)
        max_conc = int(vllm_concurrency)
        notes.append(
            f"vLLM's hybrid layout ({vllm_hybrid.SOURCE}): {hybrid.attention_layers} attention and "
            f"{hybrid.state_layers} state layers; state page {hybrid.state_bytes:,} bytes per layer (conv state of "
            f"d_conv − 1 inputs, {default_kv_dtype(o.dtype)}); attention block raised to {hybrid.block_size} tokens "
            f"(a multiple of 16, or 32 on compute capability 10.x at head size 256), page {hybrid.page:,} bytes, the "
            f"state padded by {float(hybrid.padding) * 100:.2f}%; groups of {hybrid.group_size} layers: "
            f"{hybrid.attention_groups} attention + {hybrid.state_groups} state; prefix caching off (mamba_cache_mode "
            "'none')"
        )
        if hybrid.start_bytes(prompt + gen) > free:
            max_conc = 0
    elif window is not None:
        if o.shared_prefix:
            raise InputError("--shared-prefix is planned for decoder-only models without windowed layers only")
        blocks = window.blocks(int(free)) if free > 0 else 0
        allocated = blocks * window.page * window.group_size
        budget = window.token_budget(blocks)
        vllm_concurrency = window.concurrency(blocks, prompt + gen)
        # vLLM refuses to start when one request's blocks over every group exceed the memory
        max_conc = int(vllm_concurrency) if window.request_bytes(prompt + gen) <= free else 0
        notes.append(
            "vLLM's sliding-window layout (vllm/v1/core/kv_cache_utils.py, get_kv_cache_groups, "
            "get_max_concurrency_for_kv_cache_config; vllm/v1/kv_cache_interface.py, max_memory_usage_bytes): "
            + ", ".join(f"{c} {'full-attention' if w is None else f'window-{w:,}'} layers" for w, c in window.kinds)
            + f"; {len(window.groups)} group{'s' if len(window.groups) > 1 else ''} of {window.group_size} layers; "
            f"a request of {prompt + gen:,} tokens takes "
            + (
                " + ".join(
                    (f"{window.groups.count(w)} × " if window.groups.count(w) > 1 else "")
                    + f"{window.group_blocks(w, prompt + gen):,}"
                    for w, _ in window.kinds
                )
                + " = "
                if len(window.groups) > 1
                else ""
            )
            + f"{window.blocks_per_request(prompt + gen):,} blocks of {window.block_size} (a window: "
            f"cdiv(min(w − 1 + {window.max_num_batched_tokens:,} max_num_batched_tokens, max_model_len), "
            f"{window.block_size}) + 1)"
        )
    else:
        b = o.block_size
        blocks = int(sp.floor(free / (b * kv_tok))) if free > 0 else 0
        allocated = blocks * b * kv_tok
        budget = blocks * b
        max_conc = budget // tokens_per_request
        vllm_concurrency = None
        max_conc = _with_shared_prefix(o, spec, prompt, tokens_per_request, blocks, b, max_conc, notes)
    b = o.block_size
    if max_conc == 0:
        need = (
            hybrid.start_bytes(prompt + gen)
            if hybrid is not None
            else window.request_bytes(prompt + gen)
            if window is not None
            else kv_tok * b * sp.ceiling(sp.Rational(tokens_per_request, b))
        )
        short = int(sp.ceiling(weights_dev + reserve + need - usable))
        raise DoesNotFit(
            f"{'one replica of ' + str(tp) + ' x ' if tp > 1 else 'one '}{acc.name} cannot hold the model and one request "
            f"of {prompt + gen:,} tokens"
            + (
                f" (a KV cache the size of {tokens_per_request:,} tokens in every layer: windowed layers hold their "
                "window)"
                if tokens_per_request != prompt + gen
                else ""
            )
            + f" at --gpu-memory-utilization {float(u):g}: the KV cache holds {budget:,} tokens"
            f"{' (vLLM refuses to start)' if vllm else ''}; it needs {short:,} bytes more "
            f"(weights {weights_dev:,} + activation reserve {reserve:,} + KV cache "
            f"{int(need):,} > {int(usable):,} usable)",
            short,
            {
                "weights_per_device": weights_dev,
                "activation_reserve": reserve,
                "engine_terms": engine_terms,
                "usable": int(usable),
                "device_memory": M,
                "token_budget": budget,
                "kv_bytes_per_token": kv_tok,
                "utilisation": u,
            },
        )
    if o.concurrency is not None:
        if isinstance(o.concurrency, bool) or not isinstance(o.concurrency, int) or o.concurrency < 1:
            raise InputError(f"--concurrency must be a positive integer, not {o.concurrency!r}")
        batch = -(-o.concurrency // replicas)
        if batch > max_conc:
            need_tokens = batch * tokens_per_request
            need = (
                batch * window.request_bytes(prompt + gen)
                if window is not None
                else kv_tok * b * sp.ceiling(sp.Rational(need_tokens, b))
            )
            short = int(sp.ceiling(weights_dev + reserve + need - usable))
            raise DoesNotFit(
                f"--concurrency {o.concurrency} puts {batch} requests on each of {replicas} replica"
                f"{'s' if replicas > 1 else ''}, but at most {max_conc} of {tokens_per_request:,} tokens fit: short by "
                f"{short:,} bytes per device (add --devices, or lower --prompt/--generate)",
                short,
            )
        concurrency = o.concurrency
        bound = "--concurrency"
    else:
        batch = max_conc
        concurrency = max_conc * replicas
        bound = "KV cache"
    if seqs is not None and batch > seqs:
        # vLLM's scheduler runs at most max_num_seqs sequences at once (vllm/v1/core/sched/scheduler.py,
        # schedule: len(self.running) == self.max_num_running_reqs stops admitting); the rest wait
        batch, bound = seqs, "max_num_seqs"
        concurrency = min(concurrency, seqs * replicas)
    if o.shared_prefix and hybrid is None and window is None:
        # the prefix's whole blocks once, then each request's own blocks (_with_shared_prefix)
        shared = _shared_blocks(o.shared_prefix, prompt, b)
        in_use = (shared + batch * (-(-tokens_per_request // b) - shared)) * b * kv_tok
    else:
        in_use = batch * kv_req

    v = {**values, "B": 1, "L_pre": prompt, "T_gen": gen, "L_src": prompt, "L_tgt": gen}
    eff = dict(
        precision=precision,
        dtype=o.dtype,
        kv_dtype=kv_dtype,
        quantization=o.quantization,
        devices=tp,
        compute_efficiency=o.compute_efficiency,
        bandwidth_efficiency=o.bandwidth_efficiency,
    )

    from symtrans.accounting import mla_decode

    # a multi-head latent attention model (its cache is the MLA latent of W_DKV): the decode form applies
    latent = any(n.step.cache != 0 and n.step.role == Role.KV_DOWN for n in build(spec).nodes())
    mla = mla_decode.check_form(o.mla or ("absorbed" if vllm else "expanded")) if latent else None

    def phases(batch_size: int) -> dict:
        out = inference_roofline(spec, {**v, "B": batch_size}, acc, **eff)
        if mla == "absorbed":  # vLLM decodes MLA absorbed (mla_decode): fewer FLOPs, the same bytes
            d = out["decode"]
            flops = d.flops - mla_decode.saving(values, batch_size, prompt, gen)
            out["decode"] = replace(
                d, flops=flops, intensity=flops / d.bytes, compute_time=d.compute_time * flops / d.flops
            )
        return out

    one = phases(1)
    at = phases(batch)
    ttft = one["prefill"]
    tpot = at["decode"].time / gen
    wave = at["prefill"].time + at["decode"].time
    rps = replicas * sp.Rational(batch) / wave
    out_tps = rps * gen
    dec_tps = replicas * batch / tpot

    ckpt = weights_total
    p = Plan(
        accelerator=acc,
        options=o,
        precision=precision,
        kv_dtype=kv_dtype,
        replicas=replicas,
        prompt=prompt,
        generate=gen,
        tokens_per_request=tokens_per_request,
        weights_total=weights_total,
        weight_terms={k: terms[k] for k in terms if terms[k]},
        weights_per_device=weights_dev,
        kv_bytes_per_token=kv_tok,
        kv_heads_per_device=kv_dev,
        kv_bytes_per_request=kv_req,
        kv_blocks=blocks,
        kv_cache_allocated=allocated,
        kv_cache_at_batch=in_use,
        activation_reserve=reserve,
        reserve_is_default=o.activation_reserve is None,
        usable=usable,
        token_budget=budget,
        max_concurrency=max_conc,
        batch=batch,
        concurrency=concurrency,
        ttft=ttft,
        decode=at["decode"],
        wave_prefill=at["prefill"],
        tpot=tpot,
        wave_seconds=wave,
        requests_per_second=rps,
        output_tokens_per_second=out_tps,
        decode_tokens_per_second=dec_tps,
        checkpoint_bytes=ckpt,
        disk_bytes=ckpt + o.disk_allowance,
        host_bytes=ckpt + o.host_allowance,
        device_memory=M,
        engine_terms=engine_terms,
        mla=mla,
        hybrid=hybrid,
        window=window,
        vllm_concurrency=vllm_concurrency,
        stages=stages,
        batch_bound=bound,
    )
    p.targets = _targets(p, phases, max_conc if seqs is None else min(max_conc, seqs))
    p.defaults = _defaults(asked, p, rules, context, context_source, mnbt if vllm else None, seqs, latent)
    p.formulas = _formulas(p, spec, kv_tok_expr, kv_total, mat, vec)
    p.assumptions = notes + _assumptions(p, spec)
    return p


def _defaults(asked: DeployOptions, p: Plan, rules, context: int, context_source: str, mnbt, seqs, latent) -> list[str]:
    """Each value the plan picked because ``asked`` left it out, with its source and the option
    that sets it (one line each)."""
    from symtrans.accounting import vllm_profile as vp

    o, out = p.options, []
    if asked.prompt is None and asked.max_model_len is None:
        what = "max_model_len" if rules is not None else "request"
        out.append(
            f"{what} {p.prompt + p.generate:,} tokens = the context {context:,} ({context_source})"
            + (f" less --generate {p.generate:,} for the prompt" if p.prompt + p.generate != context else "")
            + "; set --max-model-len or --prompt"
        )
    if rules is not None and asked.engine_version is None:
        out.append(f"vLLM release {vp.DEFAULT_VERSION}: the rules of vLLM main (set --engine-version)")
    if asked.utilisation is None:
        out.append(
            f"gpu_memory_utilization {_g(o.utilisation)}: "
            + (rules.utilisation_source if rules is not None else "vLLM's 0.90 before 0.19")
            + " (set --gpu-memory-utilization)"
        )
    if asked.block_size is None:
        out.append(
            f"block size {o.block_size} tokens: "
            + (
                "vLLM's CacheConfig.DEFAULT_BLOCK_SIZE (vllm/config/cache.py)"
                + (", raised to the hybrid page (vllm_hybrid)" if p.hybrid is not None else "")
                if rules is not None
                else "tokens counted one by one under --engine none"
            )
            + " (set --block-size)"
        )
    if asked.kv_dtype is None:
        out.append(
            f"KV cache {p.kv_dtype}: "
            + (f"the weights' dtype {o.dtype}" if p.kv_dtype == o.dtype else f"bf16 beside {o.dtype} weights")
            + " (vLLM's kv_cache_dtype auto; set --kv-cache-dtype)"
        )
    if rules is not None and asked.max_num_batched_tokens is None:
        out.append(
            f"max_num_batched_tokens {mnbt:,}: vLLM {rules.name}'s default for this device and length "
            "(vllm/engine/arg_utils.py; set --max-num-batched-tokens)"
        )
    if rules is not None and asked.max_num_seqs is None:
        out.append(f"max_num_seqs {seqs:,}: vLLM {rules.name}'s default for this device (set --max-num-seqs)")
    if latent and asked.mla is None:
        out.append(
            f"MLA decode {p.mla}: "
            + ("vLLM's (weights absorbed)" if rules is not None else "transformers' eager")
            + " (set --mla)"
        )
    return out


def _check_prefix_caching(o: DeployOptions, rules) -> None:
    """Refuse a ``shared_prefix`` the engine would not share: prefix caching off, by the flag or by
    the release's default (V0: ``enable_prefix_caching`` False, vllm/engine/arg_utils.py; V1 on)."""
    s = o.shared_prefix
    if isinstance(s, bool) or not isinstance(s, int) or s <= 0:
        return  # no prefix, or a bad one _with_shared_prefix names
    if o.prefix_caching is False:
        raise InputError("--shared-prefix needs prefix caching, and --no-enable-prefix-caching turns it off")
    if o.prefix_caching is None and rules is None:
        raise InputError(
            "--shared-prefix under --engine none needs --enable-prefix-caching (no engine shares blocks by default)"
        )
    if o.prefix_caching is None and not rules.prefix_caching:
        raise InputError(
            f"--shared-prefix needs prefix caching, which vLLM {rules.name} leaves off by default "
            f"({rules.prefix_caching_source}): add --enable-prefix-caching"
        )


def _with_shared_prefix(o, spec, prompt, tokens_per_request, blocks, b, max_conc, notes) -> int:
    """Whole requests that fit when every request shares ``o.shared_prefix`` prompt tokens: the
    prefix's full blocks are held once, each request's other blocks its own (``DeployOptions``).

    Raises:
        InputError: a prefix longer than the prompt, or beside windowed layers (whose blocks
            outside the window vLLM frees).
    """
    s = o.shared_prefix
    if isinstance(s, bool) or not isinstance(s, int) or s < 0:
        raise InputError(f"--shared-prefix must be zero or a positive number of tokens, not {s!r}")
    if not s:
        return max_conc
    if s > prompt:
        raise InputError(f"--shared-prefix {s:,} exceeds the prompt of {prompt:,} tokens")
    if tokens_per_request != prompt + o.generate or spec.family != "decoder-only":
        raise InputError("--shared-prefix is planned for decoder-only models without windowed layers only")
    shared = _shared_blocks(s, prompt, b)
    own = -(-tokens_per_request // b) - shared
    conc = (blocks - shared) // own if blocks > shared else 0
    notes.append(
        f"prefix caching on ({'--enable-prefix-caching' if o.prefix_caching else 'the vLLM release default'}); "
        f"shared prefix of {s:,} tokens: {shared:,} whole blocks of {b} held once, {own:,} blocks a request: "
        f"({blocks:,} − {shared:,}) // {own:,} = {conc:,} requests (vLLM caches full blocks only, and a hit stops "
        "before the prompt's last token, which is always recomputed)"
    )
    return conc


def _shared_blocks(s: int, prompt: int, b: int) -> int:
    """Whole blocks of a shared prefix of ``s`` tokens a request of ``prompt`` prompt tokens reads from
    the prefix cache: floor(min(s, prompt − 1) / b).  vLLM v1 caps a hit at prompt − 1 tokens, since the
    last prompt token is recomputed for its logits (vllm/v1/core/kv_cache_manager.py, get_computed_blocks:
    max_cache_hit_length = request.num_tokens - 1), so that block is each request's own."""
    return min(s, prompt - 1) // b


def _pipeline(spec, values, o, mat, vec, kv_tok, reserve, usable, engine_terms, logits, notes):
    """The most loaded of ``o.pipeline_parallel`` stages (``vllm_pipeline``): the stage with the
    fewest KV blocks, whose weights, cache per token and reserve the budget is then sized from
    (vLLM keeps the smallest block count of all workers).  The sampler's ``logits`` (bytes, in
    ``reserve``) are reserved on the last stage only.

    Returns:
        (weights, KV bytes per token, reserve) of that stage, per device, and the stages.
    """
    from symtrans.accounting import vllm_pipeline as vpp
    from symtrans.accounting.memory import get_dtype

    if o.quantization is not None:
        raise InputError(
            "--pipeline-parallel-size: splitting a quantized checkpoint's layers over stages is not modelled yet; "
            "plan it with --tensor-parallel-size instead"
        )
    st = vpp.stages(spec, values, get_dtype(o.dtype).bytes, mat, vec, o.tensor_parallel, o.pipeline_parallel, kv_tok)
    b = o.block_size

    def blocks(s) -> int:
        free = usable - s.weights - (reserve - (0 if s.logits else logits))
        return int(sp.floor(free / (b * s.kv_bytes_per_token))) if free > 0 else 0

    worst = min(st, key=blocks)
    r = reserve - (0 if worst.logits else logits)
    if logits and not worst.logits:
        engine_terms["activation peak"] -= logits
    notes.append(
        f"pipeline parallelism ({vpp.SOURCE}): layers per stage {', '.join(str(s.layers) for s in st)}; weights per "
        f"device {', '.join(f'{s.weights:,}' for s in st)} bytes (the embedding on the first stage, the final norm and "
        f"the head on the last); the KV budget is stage {worst.index}'s, the fewest blocks; times as one pass through "
        "the stages in turn (the overlap of batches over stages is not modelled)"
    )
    return worst.weights, worst.kv_bytes_per_token, r, st


def _targets(p: Plan, phases, max_conc: int) -> dict:
    """Devices for ``--target-latency`` and ``--target-throughput`` (empty without them)."""
    o = p.options
    out: dict = {}
    tp = o.tensor_parallel
    batch = p.batch
    if o.target_latency is not None:
        target = sp.Rational(o.target_latency)

        def latency(b: int) -> sp.Rational:
            ph = phases(b)
            return ph["prefill"].time + ph["decode"].time

        lo_lat = latency(1)
        if lo_lat > target:
            out["latency"] = {"target": target, "reachable": False, "minimum": lo_lat}
            batch = None
        else:
            lo, hi = 1, max_conc  # the largest batch whose wave meets the target (latency grows with the batch)
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if latency(mid) <= target:
                    lo = mid
                else:
                    hi = mid - 1
            batch = lo
            entry = {"target": target, "reachable": True, "batch": lo, "latency": latency(lo)}
            if o.concurrency is not None:
                entry["devices"] = tp * -(-o.concurrency // lo)
            out["latency"] = entry
    if o.target_throughput is not None and batch is not None:
        ph = phases(batch)
        per_replica = sp.Rational(batch * p.generate) / (ph["prefill"].time + ph["decode"].time)
        replicas = int(sp.ceiling(sp.Rational(o.target_throughput) / per_replica))
        if replicas * tp > MAX_DEVICES:
            raise InputError(
                f"--target-throughput {float(o.target_throughput):.4g} tokens/s needs {replicas * tp:.3g} devices at "
                f"{float(per_replica):,.1f} tokens/s per replica of {tp}: more than {MAX_DEVICES:,}, past any "
                "serving cluster (the largest GPU clusters hold about 10^5 devices); give a smaller target"
            )
        out["throughput"] = {
            "target": sp.Rational(o.target_throughput),
            "batch": batch,
            "per_replica": per_replica,
            "replicas": replicas,
            "devices": replicas * tp,
        }
    return out


def _budget_formulas(p: Plan, b: int) -> list[Formula]:
    """The token budget and the concurrency of one page size for every layer."""
    o = p.options
    return [
        Formula(
            "token budget",
            "floor((u·M − W − R) / k)" if b == 1 else f"floor((u·M − W − R) / ({b}·k)) · {b}",
            f"floor(({_g(o.utilisation)} × {p.device_memory:,} − {p.weights_per_device:,} − {p.activation_reserve:,}) / "
            + (f"{p.kv_bytes_per_token:,})" if b == 1 else f"({b} × {p.kv_bytes_per_token:,})) × {b}"),
            sp.Integer(p.token_budget),
            "tokens",
        ),
        Formula(
            "maximum concurrency per replica",
            "budget // tokens per request",
            f"{p.token_budget:,} // {p.tokens_per_request:,}",
            sp.Integer(p.max_concurrency),
            "requests",
        )
        if not o.shared_prefix
        else Formula(
            "maximum concurrency per replica (shared prefix s)",
            "(budget / b − floor(min(s, P − 1) / b)) // (cdiv(L, b) − floor(min(s, P − 1) / b))",
            f"({p.token_budget // b:,} − {_shared_blocks(o.shared_prefix, p.prompt, b):,}) // "
            f"({-(-p.tokens_per_request // b):,} − {_shared_blocks(o.shared_prefix, p.prompt, b):,})",
            sp.Integer(p.max_concurrency),
            "requests",
        ),
    ]


def _hybrid_formulas(p: Plan) -> list[Formula]:
    """vLLM's hybrid layout (``vllm_hybrid``): the block, the blocks, the budget and the concurrency."""
    h, o = p.hybrid, p.options
    free = int(p.usable) - p.weights_per_device - p.activation_reserve
    blocks = h.blocks(free) if free > 0 else 0
    L = p.prompt + p.generate
    per_request = h.blocks_per_request(L)
    return [
        Formula(
            "attention block (hybrid)",
            f"b = {h.alignment} · cdiv(s, {h.alignment} · a), s the state page of a layer, a one token of one "
            "attention layer",
            f"{h.alignment} × cdiv({h.state_bytes:,}, {h.alignment} × {h.attention_bytes:,})",
            sp.Integer(h.block_size),
            "tokens",
        ),
        Formula(
            "KV cache blocks (hybrid)",
            "n = floor((u·M − W − R) / (b·a) / g), g layers per group",
            f"floor(({_g(o.utilisation)} × {p.device_memory:,} − {p.weights_per_device:,} − {p.activation_reserve:,}) "
            f"/ {h.page:,} / {h.group_size})",
            sp.Integer(blocks),
            "blocks",
        ),
        Formula(
            "token budget",
            "n // (attention groups + state groups) · b",
            f"{blocks:,} // ({h.attention_groups} + {h.state_groups}) × {h.block_size}",
            sp.Integer(p.token_budget),
            "tokens",
        ),
        Formula(
            "maximum concurrency per replica",
            "floor(n / (attention groups · cdiv(L, b) + state groups))",
            f"floor({blocks:,} / ({h.attention_groups} × cdiv({L:,}, {h.block_size}) + {h.state_groups}))",
            sp.Integer(blocks // per_request),
            "requests",
        ),
    ]


def _window_formulas(p: Plan) -> list[Formula]:
    """vLLM's sliding-window layout (``vllm_hybrid.WindowLayout``): the blocks, the budget and the concurrency."""
    w, o = p.window, p.options
    L = p.prompt + p.generate
    free = int(p.usable) - p.weights_per_device - p.activation_reserve
    blocks = w.blocks(free) if free > 0 else 0
    need = " + ".join(
        (f"{w.groups.count(g)} × " if w.groups.count(g) > 1 else "")
        + (
            f"cdiv({L:,}, {w.block_size})"
            if g is None
            else f"(cdiv(min({g:,} − 1 + {w.max_num_batched_tokens:,}, {L:,}), {w.block_size}) + 1)"
        )
        for g, _ in w.kinds
    )
    return [
        Formula(
            "KV cache blocks (sliding window)",
            "n = floor((u·M − W − R) / (b·a) / g), a one token of one layer, g layers per group",
            f"floor(({_g(o.utilisation)} × {p.device_memory:,} − {p.weights_per_device:,} − {p.activation_reserve:,}) "
            f"/ {w.page:,} / {w.group_size})",
            sp.Integer(blocks),
            "blocks",
        ),
        Formula(
            "token budget",
            "n // groups · b",
            f"{blocks:,} // {len(w.groups)} × {w.block_size}",
            sp.Integer(p.token_budget),
            "tokens",
        ),
        Formula(
            "maximum concurrency per replica",
            "floor(n / Σ_groups blocks of a request: cdiv(L, b) full, cdiv(min(w − 1 + T_batch, L), b) + 1 windowed)",
            f"floor({blocks:,} / ({need}))",
            sp.Integer(p.max_concurrency),
            "requests",
        ),
    ]


def _formulas(p: Plan, spec, kv_tok_expr, kv_total: int, mat, vec) -> list[Formula]:
    o, acc = p.options, p.accelerator
    tp = o.tensor_parallel
    b = o.block_size
    worst = next((s for s in p.stages if s.weights == p.weights_per_device), None) if p.stages else None
    n_layers = sum(s.layers for s in p.stages)  # the stages partition every layer (vllm_pipeline)
    stage = f" x {worst.layers}/{n_layers} (layers on pipeline stage {worst.index})" if worst is not None else ""
    out = [
        Formula(
            "weights per device",
            "W = ceil(matrices / tp + vectors)" if tp > 1 else "W = matrices + vectors",
            f"ceil({_g(mat)} / {tp} + {_g(vec)})" if tp > 1 else f"{_g(mat)} + {_g(vec)}",
            sp.Integer(p.weights_per_device),
            "bytes",
        )
        if worst is None
        else Formula(
            "weights per device (the pipeline stage with the fewest KV blocks)",
            "W = ceil((n · layer matrices + embedding on the first stage + head on the last) / tp + n · layer "
            "vectors + final norm on the last)",
            f"n = {worst.layers} of {n_layers} layers on stage {worst.index} (stages "
            f"{', '.join(str(s.layers) for s in p.stages)})",
            sp.Integer(p.weights_per_device),
            "bytes",
        ),
        Formula(
            "KV cache per token per device",
            f"k = {sp.sstr(kv_tok_expr)}"
            + (f" x {p.kv_heads_per_device}/{kv_total} (the share of the KV heads a device keeps)" if tp > 1 else ""),
            _substitute(sp.sstr(kv_tok_expr), spec.values)
            + (f" x {p.kv_heads_per_device}/{kv_total}" if tp > 1 else "")
            + stage,
            sp.Integer(p.kv_bytes_per_token),
            "bytes",
        ),
        *(_hybrid_formulas(p) if p.hybrid is not None else []),
    ]
    if p.window is not None:
        out += _window_formulas(p)
    elif p.hybrid is None:
        out += _budget_formulas(p, b)
    out += [
        Formula(
            "time to first token",
            "max(F_prefill / (tp·P·η_c), bytes_prefill / (tp·BW·η_b)) at batch 1",
            f"max({_g(p.ttft.flops)} / ({tp} × {acc.peak(p.precision):,} × {_g(o.compute_efficiency)}), "
            f"{_g(p.ttft.bytes)} / ({tp} × {acc.bandwidth:,} × {_g(o.bandwidth_efficiency)}))",
            p.ttft.time,
            "s",
        ),
        Formula(
            "time per output token",
            "max(F_decode / (tp·P·η_c), bytes_decode / (tp·BW·η_b)) / T_gen at batch B",
            f"max({_g(p.decode.flops)} / ({tp} × {acc.peak(p.precision):,} × {_g(o.compute_efficiency)}), "
            f"{_g(p.decode.bytes)} / ({tp} × {acc.bandwidth:,} × {_g(o.bandwidth_efficiency)})) / {p.generate}",
            p.tpot,
            "s",
        ),
        Formula(
            "throughput",
            "replicas · B · T_gen / (prefill(B) + decode(B))",
            f"{p.replicas} × {p.batch} × {p.generate} / {float(p.wave_seconds):.6g} s",
            p.output_tokens_per_second,
            "tokens/s",
        ),
    ]
    return out


def _assumptions(p: Plan, spec) -> list[str]:
    o = p.options
    out = [
        f"vLLM's KV budget: {_g(o.utilisation)} of the device memory, rounded down to a whole byte, less the "
        "weights and the activation reserve"
        + (
            " (the reserve: "
            + " + ".join(f"{k} {v:,}" for k, v in p.engine_terms.items())
            + " bytes: vllm/v1/worker/gpu_worker.py, determine_available_memory)"
            if p.engine_terms and p.reserve_is_default
            else " (the reserve: one layer's activations for a prefill of the prompt at batch 1 with FlashAttention, "
            "plus the fp32 logits)"
            if p.reserve_is_default
            else ""
        ),
        f"KV cache blocks of {o.block_size} token{'s' if o.block_size > 1 else ''}"
        + (" (vLLM's paged blocks are 16)" if o.block_size == 1 else ""),
        f"efficiencies: {_g(o.compute_efficiency)} of the peak and {_g(o.bandwidth_efficiency)} of the bandwidth"
        + (" (1: the ideal roofline bound)" if o.compute_efficiency == 1 and o.bandwidth_efficiency == 1 else ""),
        "TTFT: one request's prompt on an idle replica; TPOT: the mean decode step at the batch; throughput: waves "
        "of the batch prefilled and decoded together",
    ]
    if o.tensor_parallel > 1:
        out.append(
            f"tensor parallelism over {o.tensor_parallel} devices: matrices split, vectors copied, the work of each "
            "step split evenly with no communication time"
        )
    out.append(
        f"host memory: the checkpoint staged once ({p.checkpoint_bytes:,} bytes) + {o.host_allowance:,} bytes of "
        "allowance (runtime, tokenizer, buffers); storage: the checkpoint's tensor bytes + "
        f"{o.disk_allowance:,} bytes of allowance (tokenizer, config; the safetensors header is not counted)"
    )
    return out
