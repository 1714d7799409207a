"""The vLLM engine profile of ``symtrans deploy``: the rules vLLM applies when it sizes its
KV cache at start-up, each with the vLLM source file it comes from, and the numbers vLLM
itself measures (CUDA-visible memory, memory outside PyTorch) with the public log they
were read from.

vLLM sizes its KV cache once, at start-up (``vllm/v1/worker/gpu_worker.py``,
``determine_available_memory``; V0: ``vllm/worker/worker.py``,
``determine_num_available_blocks``)::

    available = u · M_cuda − (weights + activation peak + non-torch memory [+ CUDA graphs])
    blocks    = floor(available / (page · layers))        (vllm/v1/core/kv_cache_utils.py)
    tokens    = blocks · block_size                        ("GPU KV cache size: N tokens")
    concurrency = tokens / max_model_len, printed with two decimals
                                                           ("Maximum concurrency for ...: x.xx")
                  (V1 with sliding-window or state layers: blocks / a request's blocks over the
                  layer groups, ``vllm_hybrid``)

where ``M_cuda`` is what ``torch.cuda.mem_get_info`` reports as the device total (less than
the datasheet's figure: the driver and ECC keep part), ``u`` is ``gpu_memory_utilization``,
the page is ``2 · block_size · kv_heads · head_size · dtype bytes`` per layer
(``vllm/v1/kv_cache_interface.py``, ``AttentionSpec.page_size_bytes``), and vLLM refuses
to start when one request of ``max_model_len`` tokens does not fit
(``_check_enough_kv_cache_memory`` in ``kv_cache_utils.py``; V0:
``raise_if_cache_size_invalid`` in ``vllm/worker/worker.py``).

The activation peak is what vLLM's profiling run (``profile_run``: a forward pass of
``max_num_batched_tokens`` dummy tokens, then the sampler on ``max_num_seqs`` rows of
logits) adds to the allocator's peak.  symtrans estimates it from the largest live
tensors of that pass (see ``activation_peak``); it is an estimate, stated as one, and
``--activation-reserve`` replaces it.

Units: bytes.  Exact numbers (SymPy Rationals) where a figure is a fraction of GiB.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from symtrans.base.errors import InputError

GiB = 2**30

ENGINES = ("vllm", "none")

# CUDA-visible memory per device: torch.cuda.mem_get_info()[1] as vLLM or PyTorch printed it
# (two decimals of GiB).  The datasheet's nominal capacity stays in hardware.ACCELERATORS.
CUDA_VISIBLE: dict[str, tuple[Fraction, str]] = {
    "t4": (
        Fraction(1458, 100),
        "PyTorch's OOM message on a Tesla T4, 'GPU 0 has a total capacty of 14.58 GiB' "
        "(github.com/datawhalechina/self-llm/issues/162)",
    ),
    "rtx-3090": (
        Fraction(2358, 100),
        "vLLM 0.6 log on an RTX 3090, 'total_gpu_memory=23.58GiB' (github.com/vllm-project/vllm/issues/10517)",
    ),
    "rtx-4090": (
        Fraction(2355, 100),
        "vLLM log 'total_gpu_memory (23.55GiB)' on an RTX 4090 (github.com/vllm-project/vllm/issues/13061: "
        "23.08 GiB usable at --gpu-memory-utilization 0.98)",
    ),
    "h100-sxm": (
        Fraction(7922, 100),
        "vLLM log on an H100 80GB, 'total_gpu_memory 79.22GiB' (github.com/vllm-project/vllm/pull/10511)",
    ),
}


@dataclass(frozen=True)
class VersionRules:
    """What one vLLM release line does at start-up.

    Attributes:
        name: the release line (``--engine-version``).
        v1: True for the V1 engine (chunked prefill always on, profiling at
            ``max_num_batched_tokens``); False for V0.
        utilisation: the default ``gpu_memory_utilization``.
        utilisation_source: where that default is stated.
        non_torch: bytes outside PyTorch (CUDA context, NCCL, custom all-reduce) at tensor
            parallelism 1 and above 1, as vLLM logged them for the release line.
        non_torch_source: the logs.
        long_context_chunking: V0 turns chunked prefill on by itself above 32K tokens
            (0.5 and later); before, a step holds a whole max_model_len prompt.
        sampler_bytes: bytes per logit the profiling run's sampler keeps beside the logits in
            the model's dtype (float32 copy, probabilities, exponential noise: 12), the forward
            pass's peak and the sampler's being apart (``activation_peak``); 0: the fp32 logits
            alone, added to the forward pass's peak (the rule before 0.19, not re-derived).
        prefix_caching: automatic prefix caching is on by default (V1) or off (V0), with
            ``prefix_caching_source``.
    """

    name: str
    v1: bool
    utilisation: Fraction
    utilisation_source: str
    non_torch: tuple[int, int]
    non_torch_source: str
    long_context_chunking: bool = True
    sampler_bytes: int = 0

    @property
    def prefix_caching(self) -> bool:
        return self.v1

    @property
    def prefix_caching_source(self) -> str:
        if self.v1:
            return "V1 turns automatic prefix caching on by default: vllm/engine/arg_utils.py, enable_prefix_caching"
        return "V0's EngineArgs.enable_prefix_caching: bool = False, vllm/engine/arg_utils.py"


_U90 = "vllm/engine/arg_utils.py and vllm/config.py of the release: gpu_memory_utilization: float = 0.90"
VERSIONS: dict[str, VersionRules] = {
    "0.4": VersionRules(
        "0.4",
        False,
        Fraction(9, 10),
        _U90,
        (int(Fraction(35, 100) * GiB), int(Fraction(35, 100) * GiB)),
        "as 0.6 (0.4 logs print no breakdown)",
        long_context_chunking=False,
    ),
    "0.6": VersionRules(
        "0.6",
        False,
        Fraction(9, 10),
        _U90,
        (int(Fraction(35, 100) * GiB), int(Fraction(35, 100) * GiB)),
        "vLLM 0.6 log 'non_torch_memory=0.35GiB' (github.com/vllm-project/vllm/issues/10517)",
    ),
    "0.7": VersionRules(
        "0.7",
        False,
        Fraction(9, 10),
        _U90,
        (int(Fraction(16, 100) * GiB), int(Fraction(25, 100) * GiB)),
        "vLLM 0.7 logs 'non_torch_memory takes 0.16GiB' at TP 1 (github.com/vllm-project/vllm/pull/12126) and "
        "'0.25GiB' at TP 2 (github.com/vllm-project/vllm/issues/13061)",
    ),
    "0.8": VersionRules(
        "0.8",
        True,
        Fraction(9, 10),
        "0.9 up to 0.18: a 0.18 log says 'In v0.19, CUDA graph memory profiling will be enabled by default ... "
        "increase --gpu-memory-utilization from 0.9000' (github.com/vllm-project/vllm/pull/39559)",
        (int(Fraction(16, 100) * GiB), int(Fraction(25, 100) * GiB)),
        "as 0.7 (V1 logs no longer print it)",
    ),
    "0.19": VersionRules(
        "0.19",
        True,
        Fraction(9, 10),
        "vllm/config/cache.py: 0.9 up to 0.20 (0.9 at v0.19.0: ai-dynamo/aiconfigurator, "
        "sdk/backends/vllm_backend.py, VLLM_GPU_MEMORY_UTILIZATION_BY_VERSION); 0.19.0 does not yet subtract its "
        "CUDA-graph estimate (github.com/vllm-project/vllm/pull/38284 turned that on and raised the default to "
        "0.92 in one change; logs of later releases print 'CUDA graph memory profiling is enabled (default since "
        "v0.21.0)')",
        (int(Fraction(25, 100) * GiB), int(Fraction(209, 100) * GiB)),
        "vLLM 0.19.0 logs on an H100, 'Actual usage is ... GiB for non-torch memory': 0.25 GiB at TP 1 "
        "(ibm-granite/granite-vision-3.3-2b), 2.09 GiB at TP 2 (Qwen/Qwen2.5-72B-Instruct), 0.07 GiB at PP 2 "
        "(github.com/llm-d-incubation/llm-d-planner/pull/205, accuracy/results/v0.19.0/logs; models outside the "
        "tests/vllm_logs corpus, whose 0.19.0 cases check the figures)",
        sampler_bytes=12,
    ),
    "latest": VersionRules(
        "latest",
        True,
        Fraction(92, 100),
        "vllm/config/cache.py: gpu_memory_utilization = Field(default=0.92) from 0.21.0, where "
        "github.com/vllm-project/vllm/pull/38284 ('Enable CUDAGraph memory profiling by default ... correspondingly "
        "increases the default --gpu-memory-utilization to 0.92') shipped: its logs print 'CUDA graph memory "
        "profiling is enabled (default since v0.21.0)'; 0.9 up to 0.20. From 0.21 vLLM also subtracts its "
        "CUDA-graph estimate (give --cuda-graphs)",
        (int(Fraction(25, 100) * GiB), int(Fraction(209, 100) * GiB)),
        "as 0.19.0, the newest release whose logs print it: 0.25 GiB at TP 1, 2.09 GiB at TP 2 (vLLM 0.19.0 "
        "logs on an H100, github.com/llm-d-incubation/llm-d-planner/pull/205, accuracy/results/v0.19.0/logs)",
    ),
}
DEFAULT_VERSION = "latest"
BLOCK_SIZE = 16  # vllm/config/cache.py: CacheConfig.DEFAULT_BLOCK_SIZE


def version(name: str | None) -> VersionRules:
    """The rules of ``--engine-version NAME`` (None: the latest); ``InputError`` for others.
    A patch release (0.6.4) takes its line's rules."""
    if name is None:
        return VERSIONS[DEFAULT_VERSION]
    text = str(name).strip().lower().removeprefix("v")
    if text in VERSIONS:
        return VERSIONS[text]
    parts = text.split(".")
    if len(text) <= 24 and len(parts) >= 2 and all(p.isdigit() for p in parts[:2]) and parts[0] == "0":
        minor = int(parts[1])
        if minor <= 4:
            return VERSIONS["0.4"]
        if minor <= 6:
            return VERSIONS["0.6"]
        if minor == 7:
            return VERSIONS["0.7"]
        if minor <= 18:
            return VERSIONS["0.8"]
        return VERSIONS["0.19"] if minor <= 20 else VERSIONS["latest"]
    raise InputError(
        f"--engine-version {str(name)[:40]!r} is not a vLLM release (0.4, 0.6, 0.7, 0.8, 0.19, latest, or 0.x.y)"
    )


# What the V0 worker subtracted as the profiling run's peak, where it was more than PyTorch's live tensors
# (vllm/worker/worker.py, profile_num_available_blocks, later determine_num_available_blocks).  Up to 0.2.4:
# torch.cuda.max_memory_allocated(), PyTorch's allocations only, the rule symtrans models.  From 0.6.4
# (vllm PR 9352, 'Use torch.cuda.memory_stats() to profile peak memory usage'): PyTorch's peak plus the
# memory outside PyTorch measured after empty_cache(), which VersionRules.non_torch stands for.
PEAK_MEASUREMENTS: tuple[tuple[tuple[int, int, int], tuple[int, int, int], str], ...] = (
    (
        (0, 2, 5),
        (0, 3, 2),
        "total - free from torch.cuda.mem_get_info() right after profile_run(), with no empty_cache() between "
        "(vllm PR 2031 'Fix peak memory profiling', which shipped in 0.2.5: its own Llama-2-70B TP 4 figures went "
        "from 31,615 to 20,865 blocks)",
    ),
    (
        (0, 3, 2),
        (0, 6, 4),
        "the free memory at start-up less the free memory right after profile_run(), with no empty_cache() between "
        "(vllm PR 2863, 0.3.2, until PR 9352 in 0.6.4)",
    ),
)


def peak_measurement(name: str | None) -> str | None:
    """How vLLM release ``name`` measured the profiling run's peak, where that counts memory symtrans
    cannot predict: PyTorch's cached-but-free blocks, and at tensor parallelism above 1 the all-reduce
    inputs torch.distributed keeps until the NCCL stream catches up (later vLLM sets
    ``TORCH_NCCL_AVOID_RECORD_STREAMS=1`` in ``init_device`` for this), whose amount depends on timing.
    None for other releases, for ``latest`` and for a name that is not ``0.x.y``."""
    if name is None:
        return None
    parts = str(name).strip().lower().removeprefix("v").split(".")
    if len(parts) < 2 or not all(p.isdigit() and len(p) <= 4 for p in parts[:3]):
        return None
    release = tuple(int(p) for p in (parts + ["0"])[:3])
    for first, stop, text in PEAK_MEASUREMENTS:
        if first <= release < stop:
            return text
    return None


def cuda_visible(acc) -> tuple[int, str]:
    """Bytes CUDA reports for ``acc`` and the source; the datasheet's capacity (with that
    said) for a device with no measured figure."""
    if acc.name in CUDA_VISIBLE:
        frac, src = CUDA_VISIBLE[acc.name]
        return int(frac * GiB), src
    return acc.memory, f"no measured CUDA total for {acc.name}: its datasheet capacity is used"


def max_num_batched_tokens(rules: VersionRules, cuda_bytes: int, acc_name: str, max_model_len: int) -> int:
    """vLLM's default tokens of one scheduler step (the profiling run's size).

    V1 (``EngineArgs.get_batch_defaults`` in vllm/engine/arg_utils.py, ``vllm serve``): 8,192 on
    a device of 70 GiB or more that is not an A100, else 2,048.  V0 (vllm/config.py,
    ``SchedulerConfig``): a step holds a whole ``max_model_len`` prompt (at least 2,048
    tokens) unless chunked prefill is on, which 0.5 and later do by themselves above 32K
    tokens, with 512 (0.6's default)."""
    if rules.v1:
        return 8192 if cuda_bytes >= 70 * GiB and "a100" not in acc_name else 2048
    if rules.long_context_chunking and max_model_len > 32768:
        return 512
    return max(max_model_len, 2048)


def max_num_seqs(rules: VersionRules, cuda_bytes: int, acc_name: str) -> int:
    """vLLM's default requests per step (``get_batch_defaults``; V0: 256)."""
    if rules.v1 and cuda_bytes >= 70 * GiB and "a100" not in acc_name:
        return 1024
    return 256


def activation_peak(
    values: dict,
    tokens: int,
    seqs: int,
    tp: int,
    act_bytes: int,
    rules: VersionRules | None = None,
    moe_layers: int | None = None,
) -> tuple[int, int]:
    """Estimated peak of vLLM's profiling run, bytes per device, and the part of it that only
    the last pipeline stage (the one that samples) holds.

    The forward pass: ``tokens`` through one layer at a time, the largest live tensors being
    the residual stream and the normed input (2·d_model), and the MLP's gate-up output with
    its activated half (3·d_ff/tp; an MoE layer's fused kernel keeps k·(3·d_ff/tp + d_model)
    per token, vllm/model_executor/layers/fused_moe/fused_moe.py's intermediate caches), at
    the model's activation dtype.  ``moe_layers``: the model's MoE layers (the Cost tree's
    ``Block.MOE`` blocks times their multiplicity); fewer than N means dense layers too, and the
    peak is the wider layer's.  ``None``: all N layers are MoE layers when ``k`` is set.

    The sampler (``_dummy_sampler_run`` in vllm/v1/worker/gpu_model_runner.py) on ``seqs`` rows
    of V logits.  Up to 0.18 symtrans counts the fp32 logits alone (4 bytes a logit).  From
    0.19 (``rules.sampler_bytes``) it counts what the code keeps alive at once: the logits
    ``compute_logits`` returns in the model's dtype (held by ``_dummy_sampler_run``), the
    float32 copy (vllm/v1/sample/sampler.py, ``logits.to(torch.float32)``; the temperature
    divides it in place and 0.19's Triton top-k/top-p masks it in place,
    vllm/v1/sample/ops/topk_topp_triton.py; 0.19.0 itself logs 'FlashInfer top-p/top-k sampling is
    available but disabled by default', llm-d-planner's v0.19.0 logs), the softmax probabilities in float32 and the
    exponential noise ``q = torch.empty_like(probs)`` (topk_topp_sampler.py, ``forward_native``
    and ``random_sample``): act_bytes + 12 bytes a logit.  The forward's intermediates are freed
    before the sampler runs, so the peak PyTorch records is the larger of the two, the
    sampler's beside the hidden states [tokens, d_model] ``profile_run`` still holds.

    Returns:
        (peak, sampler's excess over the forward pass), bytes."""
    d, dff, V = values["d_model"], values.get("d_ff", 4 * values["d_model"]), values["V"]
    k = values.get("k")
    dense = 2 * d + 3 * dff // tp  # a dense layer (all of them without experts)
    if not k:
        per_token = dense
    else:  # the experts' width is d_ff_e where the model also has dense layers (DeepSeek), else d_ff
        moe = 2 * d + k * (3 * values.get("d_ff_e", dff) // tp + d)
        has_dense = (values["N"] if moe_layers is None else moe_layers) < values["N"]
        per_token = max(moe, dense) if has_dense else moe
    forward = tokens * act_bytes * per_token
    if rules is None or not rules.sampler_bytes:
        return forward + seqs * V * 4, seqs * V * 4
    sampler = seqs * V * (act_bytes + rules.sampler_bytes) + tokens * d * act_bytes
    return max(forward, sampler), max(sampler - forward, 0)


def derived_max_model_len(cfg: dict) -> int | None:
    """vLLM's default max_model_len for a config.json where it differs from
    ``max_position_embeddings``: with ``rope_scaling`` (or transformers 5's
    ``rope_parameters``) of a type other than su, longrope and llama3, vLLM multiplies the
    positions by the scaling ``factor`` (yarn: ``original_max_position_embeddings`` x
    factor); Gemma 3 is skipped (vllm/config.py, later vllm/config/model.py,
    ``_get_and_verify_max_len``).  None when no such scaling applies or the keys are not
    plain numbers."""
    if not isinstance(cfg, dict):
        return None
    pos = cfg.get("max_position_embeddings")
    rope = cfg.get("rope_scaling") or cfg.get("rope_parameters")
    if not isinstance(rope, dict) or "gemma3" in str(cfg.get("model_type", "")):
        return None
    kind = rope.get("rope_type", rope.get("type"))
    if kind in (None, "su", "longrope", "llama3", "default"):
        return None
    factor = rope.get("factor", 1)
    base = rope.get("original_max_position_embeddings") if kind == "yarn" else pos
    ok = (int, float)
    if not isinstance(factor, ok) or isinstance(factor, bool) or not isinstance(base, int) or isinstance(base, bool):
        return None
    if not (0 < factor <= 1024 and 0 < base <= 10**8):
        return None
    derived = int(base * factor)
    return None if derived == pos else derived


def concurrency_line(tokens: int, max_model_len: int) -> str:
    """vLLM's line, as ``kv_cache_utils.py`` prints it (two decimals)."""
    return f"Maximum concurrency for {max_model_len:,} tokens per request: {tokens / max_model_len:.2f}x"
