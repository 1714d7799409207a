"""Accelerator peaks, step time, MFU and roofline verdicts.

``ACCELERATORS`` is a small table of vendor peaks (dense, i.e. without 2:4 sparsity),
each with its source.  From it:

* ``step_time``: seconds for a step of F FLOPs on n devices at a model-FLOPs
  utilisation u: F / (n x peak x u);
* ``mfu``: model FLOPs utilisation by the PaLM definition (Chowdhery et al. 2022
  App. B): observed tokens per second x model FLOPs per token (training, without
  recomputation) / (n x peak);
* ``roofline``: arithmetic intensity (FLOPs per byte moved) against the ridge point
  peak / bandwidth (Williams et al. 2009): a phase above the ridge is compute-bound,
  below it memory-bound.  Prefill moves the weights once for B x L_pre tokens and is
  compute-bound; decode moves the weights and the whole KV cache for one token per
  sequence and is memory-bound.  ``roofline`` on n devices assumes they split one
  request perfectly (ideal tensor parallelism); ``symtrans time`` places prefill and
  decode on one device (a data-parallel replica), because adding replicas raises the
  throughput but does not shorten a request.

Peaks are per precision: bf16, fp16 and fp8 where the device has tensor units for it
(the V100 has no bf16, the TPUs no fp16); ``Accelerator.default_precision`` is bf16,
or fp16 on a device without bf16.

Units: FLOP/s, bytes/s, bytes, seconds.  Peaks are exact integers; times and
utilisations are exact Rationals until printed.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - SymPy is imported where a Rational is built
    import sympy as sp

T = 10**12
G = 10**9


PRECISIONS = ("bf16", "fp16", "fp8")


@dataclass(frozen=True)
class Accelerator:
    """Peak rates of one device.

    Attributes:
        name: CLI name (``--accelerator``).
        bf16: dense bf16 tensor FLOP/s, or None where the device has no bf16 units (V100).
        fp16: dense fp16 tensor FLOP/s, or None where the device has no fp16 matrix
            units (TPU v4 and v5e compute in bf16).
        fp8: dense fp8 FLOP/s, or None where the device has no fp8 units.
        bandwidth: memory bandwidth, bytes/s.
        memory: memory capacity, bytes.
        source: vendor datasheet the figures come from.
    """

    name: str
    bf16: int | None
    fp16: int | None
    fp8: int | None
    bandwidth: int
    memory: int
    source: str

    @property
    def default_precision(self) -> str:
        """The 16-bit precision used when none is given: bf16, or fp16 where there is no bf16."""
        return "bf16" if self.bf16 is not None else "fp16"

    def peak(self, precision: str | None = None) -> int:
        """Peak FLOP/s at ``precision`` (``bf16``, ``fp16`` or ``fp8``; None: ``default_precision``).

        Raises:
            ValueError: unknown precision, or a precision the device has no units for.
        """
        precision = self.default_precision if precision is None else precision
        if precision not in PRECISIONS:
            raise ValueError(f"unknown precision {precision!r}; valid precisions: {', '.join(PRECISIONS)}")
        value = getattr(self, precision)
        if value is None:
            have = [p for p in PRECISIONS if getattr(self, p) is not None]
            raise ValueError(f"{self.name} has no {precision} tensor units; use --precision {' or '.join(have)}")
        return value


ACCELERATORS: dict[str, Accelerator] = {
    a.name: a
    for a in (
        Accelerator(
            "v100-sxm2",
            None,
            125 * T,
            None,
            900 * G,
            32 * G,
            "NVIDIA V100 datasheet: 125 TFLOPS fp16 tensor (no bf16, no fp8), 900 GB/s HBM2, 32 GB",
        ),
        Accelerator(
            "a100-40gb",
            312 * T,
            312 * T,
            None,
            1555 * G,
            40 * G,
            "NVIDIA A100 datasheet: 312 TFLOPS bf16 and fp16 dense, 1,555 GB/s HBM2 (40 GB SXM)",
        ),
        Accelerator(
            "a100-80gb",
            312 * T,
            312 * T,
            None,
            2039 * G,
            80 * G,
            "NVIDIA A100 datasheet: 312 TFLOPS bf16 and fp16 dense, 2,039 GB/s HBM2e (80 GB SXM)",
        ),
        Accelerator(
            "h100-sxm",
            989_500 * G,
            989_500 * G,
            1_979 * T,
            3350 * G,
            80 * G,
            "NVIDIA H100 datasheet (SXM): bf16 and fp16 1,979 and fp8 3,958 TFLOPS with sparsity, half of each "
            "dense; 3.35 TB/s HBM3, 80 GB",
        ),
        Accelerator(
            "h100-pcie",
            756_500 * G,
            756_500 * G,
            1_513 * T,
            2000 * G,
            80 * G,
            "NVIDIA H100 datasheet (PCIe): bf16 and fp16 1,513 and fp8 3,026 TFLOPS with sparsity, half of each "
            "dense; 2 TB/s, 80 GB",
        ),
        Accelerator(
            "h200",
            989_500 * G,
            989_500 * G,
            1_979 * T,
            4800 * G,
            141 * G,
            "NVIDIA H200 datasheet: H100 SXM compute; 4.8 TB/s HBM3e, 141 GB",
        ),
        Accelerator(
            "mi300x",
            1_307_400 * G,
            1_307_400 * G,
            2_614_900 * G,
            5300 * G,
            192 * G,
            "AMD Instinct MI300X datasheet: 1,307.4 TFLOPS bf16 and fp16 and 2,614.9 TFLOPS fp8 dense, "
            "5.3 TB/s, 192 GB",
        ),
        Accelerator(
            "tpu-v4",
            275 * T,
            None,
            None,
            1200 * G,
            32 * 2**30,
            "Google Cloud TPU v4 documentation: 275 TFLOPS bf16 (no fp16 or fp8 matrix units), 1,200 GB/s, "
            "32 GiB HBM (the peak PaLM App. B uses)",
        ),
        Accelerator(
            "tpu-v5e",
            197 * T,
            None,
            None,
            819 * G,
            16 * 2**30,
            "Google Cloud TPU v5e documentation: 197 TFLOPS bf16 (no fp16 or fp8 matrix units), 819 GB/s, 16 GiB HBM",
        ),
    )
}


def accelerator(name: str) -> Accelerator:
    """The accelerator called ``name``.

    Raises:
        ValueError: one sentence listing the valid names.
    """
    try:
        return ACCELERATORS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown accelerator {name!r}; valid accelerators: {', '.join(ACCELERATORS)}") from None


def fraction(
    text: str | int | float | Fraction, what: str, upper: int | None = 1, allow_zero: bool = False
) -> sp.Rational:
    """Parse a utilisation, margin or rate ('0.4', '40%', '2/5') into an exact Rational:
    in (0, upper] ([0, upper] with ``allow_zero``); any positive value when ``upper`` is None.

    Raises:
        ValueError: not a number, or out of range (one sentence naming the range).
    """
    raw = str(text).strip()
    if len(raw) > 64:
        raise ValueError(f"{what} is too long to be a number")
    try:  # fractions.Fraction parses decimals and p/q strictly; user text is never evaluated
        f = Fraction(raw[:-1]) / 100 if raw.endswith("%") else Fraction(raw)
    except (TypeError, ValueError, ZeroDivisionError):
        raise ValueError(f"{what} must be a number such as 0.4 or 40%, not {text!r}") from None
    import sympy as sp

    value = sp.Rational(f.numerator, f.denominator)
    low_ok = value >= 0 if allow_zero else value > 0
    if not low_ok or (upper is not None and value > upper):
        if upper is None:
            wanted = "zero or a positive number" if allow_zero else "a positive number"
        else:
            wanted = f"in {'[' if allow_zero else '('}0, {upper}]"
        raise ValueError(f"{what} must be {wanted}, not {text}")
    return value


def _positive_int(n, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise ValueError(f"{what} must be a positive integer, not {n!r}")
    return n


def step_time(
    flops: int | sp.Rational, acc: Accelerator | str, devices: int = 1, utilisation=1, precision: str | None = None
) -> sp.Rational:
    """Seconds for ``flops`` FLOPs on ``devices`` devices at model-FLOPs utilisation
    ``utilisation``: flops / (devices x peak x utilisation) (Narayanan et al. 2021 §5.1 eq. 4).

    Raises:
        ValueError: unknown accelerator or precision; non-positive devices or utilisation.
    """
    acc = accelerator(acc) if isinstance(acc, str) else acc
    u = fraction(utilisation, "the utilisation (MFU)")
    n = _positive_int(devices, "the number of devices")
    import sympy as sp

    return sp.Rational(flops) / (n * acc.peak(precision) * u)


def mfu(
    tokens_per_second, flops_per_token, acc: Accelerator | str, devices: int = 1, precision: str | None = None
) -> sp.Rational:
    """Model FLOPs utilisation (PaLM App. B): tokens/s x model FLOPs per token / (devices x peak).

    ``flops_per_token`` must be the training FLOPs per token without recomputation
    (the PaLM definition excludes rematerialisation; with it the ratio is HFU).  A
    measured throughput cannot do more work than the devices' peak allows, so an MFU
    above 1 (100%) is refused.

    Raises:
        ValueError: unknown accelerator/precision, non-positive throughput or devices,
            or a throughput that would need more than 100% of the peak.
    """
    acc = accelerator(acc) if isinstance(acc, str) else acc
    tps = fraction(tokens_per_second, "the throughput (tokens per second)", upper=None)
    n = _positive_int(devices, "the number of devices")
    prec = acc.default_precision if precision is None else precision
    import sympy as sp

    u = tps * sp.Rational(flops_per_token) / (n * acc.peak(prec))
    if u > 1:
        raise ValueError(
            f"{tokens_per_second} tokens/s would be {float(u) * 100:,.0f}% MFU, more than the peak of "
            f"{n} x {acc.name} at {prec} allows; check the throughput, --devices and --precision"
        )
    return u


@dataclass(frozen=True)
class Roofline:
    """One phase on the roofline (exact numbers; seconds, FLOPs, bytes)."""

    phase: str
    flops: sp.Rational
    bytes: sp.Rational
    intensity: sp.Rational  # FLOPs per byte
    ridge: sp.Rational  # peak / bandwidth, FLOPs per byte
    compute_time: sp.Rational  # flops / (devices x peak)
    memory_time: sp.Rational  # bytes / (devices x bandwidth)

    @property
    def bound(self) -> str:
        """``compute-bound`` when intensity >= ridge, else ``memory-bound``."""
        return "compute-bound" if self.intensity >= self.ridge else "memory-bound"

    @property
    def time(self) -> sp.Rational:
        """The roofline time: max(compute time, memory time), seconds."""
        return max(self.compute_time, self.memory_time)


def roofline(
    phase: str, flops, bytes_moved, acc: Accelerator | str, devices: int = 1, precision: str | None = None
) -> Roofline:
    """Place a phase of ``flops`` FLOPs moving ``bytes_moved`` bytes on the roofline
    (Williams et al. 2009; Pope et al. 2022 §2 for prefill vs decode).

    Raises:
        ValueError: unknown accelerator/precision, non-positive devices or bytes.
    """
    acc = accelerator(acc) if isinstance(acc, str) else acc
    n = _positive_int(devices, "the number of devices")
    import sympy as sp

    f, b = sp.Rational(flops), sp.Rational(bytes_moved)
    if b <= 0:
        raise ValueError("a phase must move a positive number of bytes")
    peak = acc.peak(precision)
    return Roofline(phase, f, b, f / b, sp.Rational(peak, acc.bandwidth), f / (n * peak), b / (n * acc.bandwidth))


PF_DAY = 10**15 * 86400


def pf_days(flops) -> sp.Rational:
    """FLOPs in petaflop/s-days (1 PF-day = 10^15 FLOP/s x 86,400 s = 8.64e19 FLOPs;
    Brown et al. 2020 §2.1 / Table D.1)."""
    import sympy as sp

    return sp.Rational(flops) / PF_DAY
