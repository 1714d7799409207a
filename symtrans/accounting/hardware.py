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
(the V100 and T4 have no bf16, the TPUs no fp16); ``Accelerator.default_precision`` is
bf16, or fp16 on a device without bf16.  Memory capacities are binary: a datasheet's
"80 GB" of HBM or GDDR is 80 GiB (an A100 80GB reports 81,920 MiB), so ``memory`` is
the figure times 2^30.  ``parse_accelerator`` also takes a custom device written as
``peak=65e12,bandwidth=320e9,memory=16GiB[,fp8=...][,name=...]``.

Units: FLOP/s, bytes/s, bytes, seconds.  Peaks are exact integers; times and
utilisations are exact Rationals until printed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from symtrans.base.errors import InputError

if TYPE_CHECKING:  # pragma: no cover - SymPy is imported where a Rational is built
    import sympy as sp

T = 10**12
G = 10**9
GiB = 2**30


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
        bandwidth: memory bandwidth, bytes/s (None: not given, for a custom device).
        memory: memory capacity, bytes (None: not given, for a custom device).
        source: vendor datasheet the figures come from.
    """

    name: str
    bf16: int | None
    fp16: int | None
    fp8: int | None
    bandwidth: int | None
    memory: int | None
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
            raise InputError(f"unknown precision {precision!r}; valid precisions: {', '.join(PRECISIONS)}")
        value = getattr(self, precision)
        if value is None:
            have = [p for p in PRECISIONS if getattr(self, p) is not None]
            raise InputError(f"{self.name} has no {precision} tensor units; use --precision {' or '.join(have)}")
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
            32 * GiB,
            "NVIDIA V100 datasheet: 125 TFLOPS fp16 tensor (no bf16, no fp8), 900 GB/s HBM2, 32 GB",
        ),
        Accelerator(
            "a100-40gb",
            312 * T,
            312 * T,
            None,
            1555 * G,
            40 * GiB,
            "NVIDIA A100 datasheet: 312 TFLOPS bf16 and fp16 dense, 1,555 GB/s HBM2 (40 GB SXM)",
        ),
        Accelerator(
            "a100-80gb",
            312 * T,
            312 * T,
            None,
            2039 * G,
            80 * GiB,
            "NVIDIA A100 datasheet: 312 TFLOPS bf16 and fp16 dense, 2,039 GB/s HBM2e (80 GB SXM)",
        ),
        Accelerator(
            "h100-sxm",
            989_500 * G,
            989_500 * G,
            1_979 * T,
            3350 * G,
            80 * GiB,
            "NVIDIA H100 datasheet (SXM): bf16 and fp16 1,979 and fp8 3,958 TFLOPS with sparsity, half of each "
            "dense; 3.35 TB/s HBM3, 80 GB",
        ),
        Accelerator(
            "h100-pcie",
            756_500 * G,
            756_500 * G,
            1_513 * T,
            2000 * G,
            80 * GiB,
            "NVIDIA H100 datasheet (PCIe): bf16 and fp16 1,513 and fp8 3,026 TFLOPS with sparsity, half of each "
            "dense; 2 TB/s, 80 GB",
        ),
        Accelerator(
            "h200",
            989_500 * G,
            989_500 * G,
            1_979 * T,
            4800 * G,
            141 * GiB,
            "NVIDIA H200 datasheet: H100 SXM compute; 4.8 TB/s HBM3e, 141 GB",
        ),
        Accelerator(
            "mi300x",
            1_307_400 * G,
            1_307_400 * G,
            2_614_900 * G,
            5300 * G,
            192 * GiB,
            "AMD Instinct MI300X datasheet: 1,307.4 TFLOPS bf16 and fp16 and 2,614.9 TFLOPS fp8 dense, "
            "5.3 TB/s, 192 GB",
        ),
        Accelerator(
            "tpu-v4",
            275 * T,
            None,
            None,
            1200 * G,
            32 * GiB,
            "Google Cloud TPU v4 documentation: 275 TFLOPS bf16 (no fp16 or fp8 matrix units), 1,200 GB/s, "
            "32 GiB HBM (the peak PaLM App. B uses)",
        ),
        Accelerator(
            "tpu-v5e",
            197 * T,
            None,
            None,
            819 * G,
            16 * GiB,
            "Google Cloud TPU v5e documentation: 197 TFLOPS bf16 (no fp16 or fp8 matrix units), 819 GB/s, 16 GiB HBM",
        ),
        Accelerator(
            "t4",
            None,
            65 * T,
            None,
            320 * G,
            16 * GiB,
            "NVIDIA T4 datasheet: 65 TFLOPS mixed-precision fp16 tensor (Turing: no bf16, no fp8), 16 GB GDDR6, "
            "320+ GB/s",
        ),
        Accelerator(
            "l4",
            121 * T,
            121 * T,
            242_500 * G,
            300 * G,
            24 * GiB,
            "NVIDIA L4 datasheet: bf16 and fp16 242 and fp8 485 TFLOPS with sparsity, half of each dense; 24 GB "
            "GDDR6, 300 GB/s",
        ),
        Accelerator(
            "a10g",
            70 * T,
            70 * T,
            None,
            600 * G,
            24 * GiB,
            "NVIDIA A10G (AWS G5; no public NVIDIA datasheet, figures as Baseten's 'A10 vs A10G' spec table gives "
            "them): 70 TFLOPS bf16 and fp16 tensor dense (140 with sparsity), no fp8; 24 GB GDDR6, 600 GB/s",
        ),
        Accelerator(
            "l40s",
            362_050 * G,
            362_050 * G,
            733 * T,
            864 * G,
            48 * GiB,
            "NVIDIA L40S datasheet: bf16 and fp16 362.05 and fp8 733 TFLOPS dense (733 and 1,466 with sparsity); "
            "48 GB GDDR6, 864 GB/s",
        ),
        Accelerator(
            "rtx-3090",
            71 * T,
            71 * T,
            None,
            936 * G,
            24 * GiB,
            "NVIDIA Ampere GA102 GPU architecture whitepaper, GeForce RTX 3090: bf16 and fp16 tensor 71 TFLOPS dense "
            "(fp16 accumulate; 35.6 with fp32 accumulate), no fp8; 24 GB GDDR6X, 936 GB/s",
        ),
        Accelerator(
            "rtx-4090",
            165_200 * G,
            165_200 * G,
            330_300 * G,
            1008 * G,
            24 * GiB,
            "NVIDIA Ada Lovelace architecture whitepaper, GeForce RTX 4090: bf16 and fp16 tensor with fp32 "
            "accumulate 165.2 and fp8 330.3 TFLOPS dense (fp16 accumulate doubles them); 24 GB GDDR6X, 1,008 GB/s",
        ),
        Accelerator(
            "b200",
            2_250 * T,
            2_250 * T,
            4_500 * T,
            7_700 * G,
            180 * GiB,
            "NVIDIA HGX B200 datasheet, per GPU: fp16/bf16 4.5 and fp8 9 PFLOPS with sparsity, half of each dense; "
            "180 GB HBM3e, 7.7 TB/s",
        ),
        Accelerator(
            "mi250x",
            383 * T,
            383 * T,
            None,
            3200 * G,
            128 * GiB,
            "AMD Instinct MI250X datasheet: 383 TFLOPS fp16 and bf16 matrix (no fp8), 128 GB HBM2e, 3.2 TB/s "
            "(two GCDs in one package, counted as one device)",
        ),
        Accelerator(
            "gaudi2",
            432 * T,
            None,
            865 * T,
            2450 * G,
            96 * GiB,
            "Intel Gaudi 2 (Gaudi 3 white paper's comparison table): 432 TFLOPS bf16 and 865 TFLOPS fp8 matrix "
            "(no fp16 figure given), 96 GB HBM2e, 2.45 TB/s",
        ),
        Accelerator(
            "tpu-v5p",
            459 * T,
            None,
            None,
            2765 * G,
            95 * GiB,
            "Google Cloud TPU v5p documentation: 459 TFLOPS bf16 (no fp16 or fp8 matrix units), 95 GB HBM2e, "
            "2,765 GB/s",
        ),
        Accelerator(
            "ascend-910b",
            353_894_400 * 10**6,
            353_894_400 * 10**6,
            None,
            1600 * G,
            64 * GiB,
            "Huawei Ascend 910B2 (CANN platform_config for Atlas A2: 24 AI cores at 1,800 MHz, a 16x16x16 fp16 "
            "cube each, 24 x 1,800,000,000 x 4,096 x 2 = 353.9 TFLOPS bf16 and fp16; 64 GB HBM2e, 1.6 TB/s, as CANN's "
            "cross-platform migration guide lists them; no fp8)",
        ),
    )
}


def _squash(name: str) -> str:
    """``name`` without case, spaces, '-' or '_' (H100_SXM, "H100 SXM" and h100-sxm agree)."""
    return re.sub(r"[\s_-]+", "", name.lower())


def accelerator(name: str) -> Accelerator:
    """The accelerator called ``name``: a name of the table in any case and with any of
    ' ', '-', '_' between its parts (H100-SXM, h100_sxm), or the leading parts of exactly one
    name (v100 for v100-sxm2, ascend for ascend-910b).

    Raises:
        ValueError: one sentence: an ambiguous name (h100: h100-sxm or h100-pcie, whose
            compute and bandwidth differ; the table has no default between them) listing
            its choices, or an unknown one listing the valid names.
    """
    if isinstance(name, str):
        if name in ACCELERATORS:
            return ACCELERATORS[name]
        want = _squash(name)
        exact = [k for k in ACCELERATORS if _squash(k) == want]
        if want and len(exact) == 1:
            return ACCELERATORS[exact[0]]
        parts = [k for k in ACCELERATORS if want and any(_squash(k[:i]) == want for i in _bounds(k))]
        if len(parts) == 1:
            return ACCELERATORS[parts[0]]
        if len(parts) > 1:
            raise InputError(f"accelerator {name!r} is ambiguous: give one of {', '.join(parts)}")
    raise InputError(f"unknown accelerator {name!r}; valid accelerators: {', '.join(ACCELERATORS)}")


def _bounds(name: str) -> list[int]:
    """The ends of ``name``'s leading parts (before each '-')."""
    return [i for i, c in enumerate(name) if c == "-"]


CUSTOM_KEYS = ("name", "peak", "fp8", "bandwidth", "memory")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")


def parse_accelerator(text: str) -> Accelerator:
    """An accelerator of the table by name, or a custom one written as
    ``peak=65e12,bandwidth=320e9,memory=16GiB[,fp8=130e12][,name=t4-like]``.

    ``peak`` is the dense 16-bit tensor FLOP/s (used for bf16 and fp16), ``fp8`` the
    fp8 one if any; ``bandwidth`` bytes/s (a number, or with GB/s, TB/s); ``memory``
    bytes (a number, or with GB, GiB, ...).  Every value must be a positive whole
    number.  ``bandwidth`` and ``memory`` may be left out where only compute is needed
    (``deploy`` refuses a device without them).  The text is matched, never evaluated.

    Raises:
        ValueError: one sentence: unknown name, unknown or repeated key, missing peak,
            a value that is not a positive whole number.
    """
    from symtrans.base.numbers import parse_bytes, parse_number

    raw = text.strip()
    if "=" not in raw:
        return accelerator(raw)
    if len(raw) > 300:
        raise InputError("--accelerator spec is too long")
    got: dict[str, str] = {}
    for item in raw.split(","):
        key, eq, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key or not value:
            raise InputError(f"--accelerator spec takes key=value items separated by commas, not {item.strip()!r}")
        if key not in CUSTOM_KEYS:
            raise InputError(f"--accelerator spec has no key {key!r}; keys: {', '.join(CUSTOM_KEYS)}")
        if key in got:
            raise InputError(f"--accelerator spec gives {key} twice")
        got[key] = value
    if "peak" not in got:
        raise InputError("--accelerator spec needs peak= (dense 16-bit FLOP/s, e.g. peak=65e12)")

    def whole(key: str, parse) -> int | None:
        if key not in got:
            return None
        v = parse(got[key])
        if v <= 0 or (isinstance(v, Fraction) and v.denominator != 1):
            raise InputError(f"--accelerator {key} must be a positive whole number, not {got[key]}")
        return int(v)

    peak = whole("peak", lambda t: parse_number(t, "--accelerator peak"))
    fp8 = whole("fp8", lambda t: parse_number(t, "--accelerator fp8"))
    bw = whole("bandwidth", lambda t: parse_bytes(t[:-2] if t.endswith("/s") else t, "--accelerator bandwidth"))
    mem = whole("memory", lambda t: parse_bytes(t, "--accelerator memory"))
    name = got.get("name", "custom")
    if not _NAME.fullmatch(name):
        raise InputError(f"--accelerator name must be letters, digits, '.', '_' or '-' (at most 40), not {name!r}")
    return Accelerator(name, peak, peak, fp8, bw, mem, f"custom accelerator: {raw}")


def fraction(
    text: str | int | float | Fraction, what: str, upper: int | None = 1, allow_zero: bool = False
) -> sp.Rational:
    """Parse a utilisation, margin or rate ('0.4', '40%', '2/5') into an exact Rational:
    in (0, upper] ([0, upper] with ``allow_zero``); any positive value when ``upper`` is None.

    Raises:
        ValueError: not a number, or out of range (one sentence naming the range).
    """
    import sympy as sp

    if isinstance(text, (int, Fraction, sp.Rational)) and not isinstance(text, bool):
        # an exact number already (e.g. a value this module parsed before): taken as it is,
        # never re-read from its text, whose p/q form can be long (1/10**300)
        f = Fraction(int(sp.Rational(text).p), int(sp.Rational(text).q))
    else:
        raw = str(text).strip()
        if len(raw) > 64:
            raise InputError(f"{what} must be a number such as 0.4 or 40%, not a {len(raw)}-character text")
        try:  # fractions.Fraction parses decimals and p/q strictly; user text is never evaluated
            f = Fraction(raw[:-1]) / 100 if raw.endswith("%") else Fraction(raw)
        except (TypeError, ValueError, ZeroDivisionError):
            raise InputError(f"{what} must be a number such as 0.4 or 40%, not {text!r}") from None
    value = sp.Rational(f.numerator, f.denominator)
    low_ok = value >= 0 if allow_zero else value > 0
    if not low_ok or (upper is not None and value > upper):
        if upper is None:
            wanted = "zero or a positive number" if allow_zero else "a positive number"
        else:
            wanted = f"in {'[' if allow_zero else '('}0, {upper}]"
        raise InputError(f"{what} must be {wanted}, not {text}")
    return value


# The smallest model FLOPs utilisation accepted.  Real runs reach 0.2-0.6 (PaLM App. B,
# Table 3: 46.2%); a millionth of the peak is far below any measured run, and much smaller
# values only produce step times of astronomical length (1e-300 gives 10^290 s and more).
MIN_UTILISATION = Fraction(1, 10**6)  # a Fraction: this module imports SymPy only where a Rational is built


def parse_utilisation(text, what: str = "the utilisation (MFU)") -> sp.Rational:
    """A model FLOPs utilisation in [1e-6, 1] from text ('0.4', '40%') or an exact number.

    Raises:
        ValueError: not a number, above 1, or below MIN_UTILISATION (naming the range).
    """
    u = fraction(text, what)
    if u < MIN_UTILISATION:
        raise InputError(
            f"{what} = {text} is implausibly small: MFU is the fraction of the peak FLOP/s a run achieves "
            f"(0.2 to 0.6 in practice); the smallest accepted is {float(MIN_UTILISATION):g}"
        )
    return u


def _positive_int(n, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise InputError(f"{what} must be a positive integer, not {n!r}")
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
    u = parse_utilisation(utilisation)
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
        raise InputError(
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
    phase: str,
    flops,
    bytes_moved,
    acc: Accelerator | str,
    devices: int = 1,
    precision: str | None = None,
    compute_efficiency=1,
    bandwidth_efficiency=1,
) -> Roofline:
    """Place a phase of ``flops`` FLOPs moving ``bytes_moved`` bytes on the roofline
    (Williams et al. 2009; Pope et al. 2022 §2 for prefill vs decode).

    ``compute_efficiency`` and ``bandwidth_efficiency`` (in (0, 1], default 1: the
    ideal bound) scale the peak and the bandwidth the phase achieves; the ridge is then
    the achieved peak over the achieved bandwidth.

    Raises:
        ValueError: unknown accelerator/precision, non-positive devices or bytes, an
            efficiency outside (0, 1], a device without a bandwidth.
    """
    acc = accelerator(acc) if isinstance(acc, str) else acc
    n = _positive_int(devices, "the number of devices")
    import sympy as sp

    f, b = sp.Rational(flops), sp.Rational(bytes_moved)
    if b <= 0:
        raise InputError("a phase must move a positive number of bytes")
    if acc.bandwidth is None:
        raise InputError(f"the accelerator {acc.name} has no bandwidth=; the roofline needs it (bytes/s)")
    peak = acc.peak(precision) * fraction(compute_efficiency, "the compute efficiency")
    bw = acc.bandwidth * fraction(bandwidth_efficiency, "the bandwidth efficiency")
    return Roofline(phase, f, b, f / b, sp.Rational(peak) / bw, f / (n * peak), b / (n * bw))


PF_DAY = 10**15 * 86400


def pf_days(flops) -> sp.Rational:
    """FLOPs in petaflop/s-days (1 PF-day = 10^15 FLOP/s x 86,400 s = 8.64e19 FLOPs;
    Brown et al. 2020 §2.1 / Table D.1)."""
    import sympy as sp

    return sp.Rational(flops) / PF_DAY
