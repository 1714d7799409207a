"""Read the figures of a vLLM start-up log, for ``symtrans reconcile``.

The log is text: each known line is matched by a regular expression and its numbers read
as decimals (``fractions.Fraction``); nothing in it is evaluated.  The lines known, across
vLLM 0.2 to today's V1 engine (the formats quoted in tests/vllm_logs/):

* weights: ``Loading model weights took 14.9888 GB`` (0.4-0.7, GiB despite the unit),
  ``Model loading took 14.9889 GiB`` (V1), ``model weights take 21.21GiB``;
* memory outside PyTorch: ``non_torch_memory takes 0.20GiB``, ``non_torch_memory=0.35GiB``,
  ``non_torch_memory     1.79GiB``;
* the activation peak: ``PyTorch activation peak memory takes 0.37GiB``;
  ``peak_torch_memory=17.06GiB`` (0.6: weights included);
* device memory and utilisation: ``total_gpu_memory (23.58GiB) x gpu_memory_utilization
  (0.99)``, ``total_gpu_memory=23.58GiB``, ``gpu_memory_utilization=0.90``;
* KV cache memory: ``Available KV cache memory: 8.11 GiB``, ``the rest of the memory
  reserved for KV Cache is 1.57GiB``, ``kv_cache_size=3.81GiB``,
  ``available_kv_cache_memory    53.29GiB``;
* the budget: ``GPU KV cache size: 178,880 tokens``, ``# GPU blocks: 1952`` (x the block
  size), ``Maximum concurrency for 20000 tokens per request: 1.56x``, and the refusal
  ``max seq len (29000) is larger than the maximum number of tokens that can be stored in
  KV cache (23648)`` or ``To serve at least one request ... (4.54 GiB KV cache is needed,
  ... available KV cache memory (1.71 GiB)``;
* 0.19's summary: ``Free memory on device (78.68/79.19 GiB) on startup. Desired GPU memory
  utilization is (0.95, 75.23 GiB). Actual usage is 14.99 GiB for weight, 1.89 GiB for peak
  activation, 0.25 GiB for non-torch memory, and 0.91 GiB for CUDAGraph memory``;
* settings the log states: ``tensor_parallel_size=2``, ``--tensor-parallel-size 4``,
  ``max_seq_len=131072``, ``version 0.8.1`` / ``(v0.5.4)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction

MAX_BYTES = 4 * 2**20  # a start-up log is kilobytes; a longer file is cut, not read whole

_NUM = r"(\d[\d,]{0,24}(?:\.\d{1,12})?)(?![\d.])"
_GIB = _NUM + r"\s*Gi?B"

# (key, pattern, unit): unit "GiB" (bytes = value x 2^30), "tokens", "blocks", "x", "fraction", "int", "version"
PATTERNS: tuple[tuple[str, str, str], ...] = (
    ("weights", r"(?:Loading model weights took|Model loading took|model weights take)\s+" + _GIB, "GiB"),
    # 0.19's summary line: 'Actual usage is 14.99 GiB for weight, 1.89 GiB for peak activation, 0.25 GiB for
    # non-torch memory, and 0.91 GiB for CUDAGraph memory' (vllm/v1/worker/gpu_worker.py)
    ("weights", r"Actual usage is " + _GIB + r" for weight", "GiB"),
    ("activation_peak", _GIB + r" for peak activation", "GiB"),
    ("non_torch", _GIB + r" for non-torch memory", "GiB"),
    ("cuda_graphs", _GIB + r" for CUDAGraph memory", "GiB"),
    ("total_gpu_memory", r"Free memory on device \(\d{1,6}(?:\.\d{1,6})?/" + _GIB, "GiB"),
    ("utilisation", r"Desired GPU memory utilization is \((\d(?:\.\d+)?)", "fraction"),
    ("non_torch", r"non_torch_memory(?:\s+takes\s+|=|\s+)" + _GIB, "GiB"),
    ("activation_peak", r"(?:PyTorch activation peak memory(?:\s+takes)?)\s+" + _GIB, "GiB"),
    ("peak_torch", r"peak_torch_memory=" + _GIB, "GiB"),
    ("total_gpu_memory", r"total_gpu_memory(?:\s*\(|=|\s+)" + _GIB, "GiB"),
    ("utilisation", r"gpu_memory_utilization(?:\s*\(|=|\s+)(\d(?:\.\d+)?)", "fraction"),
    ("utilisation", r"--gpu[-_]memory[-_]utilization[= ](\d(?:\.\d+)?)", "fraction"),
    (
        "kv_memory",
        r"(?:Available KV cache memory:|reserved for KV Cache is|kv_cache_size=|available_kv_cache_memory)\s*" + _GIB,
        "GiB",
    ),
    ("kv_tokens", r"GPU KV cache size:\s*" + _NUM + r"\s*tokens", "tokens"),
    ("gpu_blocks", r"(?:#\s*)?(?:GPU|CUDA) blocks:\s*\**" + _NUM, "blocks"),
    ("concurrency", r"Maximum concurrency for " + _NUM + r" tokens per request:\s*" + _NUM + r"x", "x"),
    ("refused_tokens", r"stored in KV cache \(" + _NUM + r"\)", "tokens"),
    ("max_model_len", r"max seq len \(" + _NUM + r"\)", "int"),
    ("needed_kv", r"\(" + _GIB + r" KV cache is needed", "GiB"),
    ("refused_available", r"available KV cache memory \(" + _GIB + r"\)", "GiB"),
    ("tensor_parallel", r"(?:tensor_parallel_size=|--tensor[-_]parallel[-_]size[= ]|-tp )(\d+)", "int"),
    ("max_model_len", r"max_seq_len=(\d+)", "int"),
    ("max_model_len", r"--max[-_]model[-_]len[= ](\d+)", "int"),
    # only vLLM's own start-up lines: "NCCL version 2.21.5" or "CUDA version 12.4" are not vLLM's
    ("version", r"(?:vLLM API server version |vLLM version |LLM engine \(v)v?(\d+\.\d+(?:\.\d+)?)", "version"),
)
_COMPILED = tuple((key, re.compile(pat), unit) for key, pat, unit in PATTERNS)


@dataclass
class Figure:
    """One figure read from the log: its value (bytes, tokens, a fraction or text), the
    1-based line number and the line itself (cut to 160 characters)."""

    key: str
    value: object
    line_no: int
    line: str
    extra: object = None


@dataclass
class LogFigures:
    """The last occurrence of each figure in a log (a TP log repeats them per worker; a
    quoted before/after comparison ends with the after)."""

    figures: dict[str, Figure] = field(default_factory=dict)

    def get(self, key: str):
        f = self.figures.get(key)
        return None if f is None else f.value


def _number(text: str) -> Fraction:
    return Fraction(text.replace(",", ""))


def parse(text: str) -> LogFigures:
    """The figures of a vLLM log's ``text`` (see the module docstring); an empty result
    when no line is known."""
    out = LogFigures()
    for no, line in enumerate(text.splitlines(), 1):
        if len(line) > 20_000:  # a pathological line: skip it, do not scan megabytes
            continue
        for key, rx, unit in _COMPILED:
            if key in out.figures and out.figures[key].line_no == no:
                continue  # two patterns of one key on one line: the first
            m = rx.search(line)
            if not m:
                continue
            shown = line.strip()[:160]
            if unit == "GiB":
                value: object = int(_number(m.group(1)) * 2**30)
            elif unit in ("tokens", "int"):
                value = int(_number(m.group(1)))
            elif unit == "blocks":
                value = int(_number(m.group(1)))
            elif unit == "fraction":
                value = _number(m.group(1))
            elif unit == "x":
                value = int(_number(m.group(1)))
                out.figures[key] = Figure(key, value, no, shown, _number(m.group(2)))
                continue
            else:
                value = m.group(1)
            out.figures[key] = Figure(key, value, no, shown)
    return out
