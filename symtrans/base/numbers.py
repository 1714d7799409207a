"""Printing exact numbers with their units: thousands separators and SI prefixes.

SI prefixes are decimal (k = 1e3, M = 1e6, G = 1e9, T = 1e12, P = 1e15, E = 1e18,
Z = 1e21, Y = 1e24), used for parameters and FLOPs; bytes are also shown in binary
units (KiB = 2^10, MiB = 2^20, GiB = 2^30, TiB = 2^40, ... YiB = 2^80), never mixed with
decimal ones.  The digits shown are exact (rounded from the exact value, never from a
float); past a thousand of the largest unit a value is shown as 3.9e33.
"""

from __future__ import annotations

import re
from fractions import Fraction

from symtrans.base.errors import InputError

_SI = [
    (10**24, "Y"),
    (10**21, "Z"),
    (10**18, "E"),
    (10**15, "P"),
    (10**12, "T"),
    (10**9, "G"),
    (10**6, "M"),
    (10**3, "k"),
]
_BIN = [
    (2**80, "YiB"),
    (2**70, "ZiB"),
    (2**60, "EiB"),
    (2**50, "PiB"),
    (2**40, "TiB"),
    (2**30, "GiB"),
    (2**20, "MiB"),
    (2**10, "KiB"),
]
# Parameter counts are conventionally written 124.4M, 6.7B (B for billion, not the SI G).
_COUNT = [(10**12, "T"), (10**9, "B"), (10**6, "M"), (10**3, "k")]


def grouped(n: int) -> str:
    """An exact integer with thousands separators: 124439808 -> '124,439,808'."""
    return f"{int(n):,}"


def exact_decimal(x: int | Fraction, max_places: int = 6) -> str:
    """A non-negative exact number as decimal digits with thousands separators, never p/q
    alone: an integer as ``grouped``; a fraction whose decimal ends within ``max_places``
    places as all its digits (53187028992/125 -> '425,496,231.936', exact); any other as
    'about' its value to two places with the fraction beside it
    (413535934464/1001 -> 'about 413,122,811.65 (exactly 413535934464/1001)')."""
    f = Fraction(x)
    if f.denominator == 1:
        return grouped(f.numerator)
    q, twos, fives = f.denominator, 0, 0
    while q % 2 == 0:
        q, twos = q // 2, twos + 1
    while q % 5 == 0:
        q, fives = q // 5, fives + 1
    places = max(twos, fives)
    if q == 1 and places <= max_places:  # a terminating decimal: every digit is exact
        whole, frac = divmod(f.numerator * 10**places // f.denominator, 10**places)
        return f"{whole:,}.{frac:0{places}d}"
    whole, _, frac = fixed(f, 2).partition(".")
    return f"about {int(whole):,}.{frac} (exactly {f.numerator}/{f.denominator})"


def _half_up(f: Fraction) -> int:
    """``f`` rounded to an integer, ties away from zero (12.345k shows as 12.35k, as a
    reader rounds), exactly."""
    q = (abs(f.numerator) * 2 + f.denominator) // (2 * f.denominator)
    return -q if f < 0 else q


def fixed(x: int | float | Fraction, digits: int = 1) -> str:
    """``x`` rounded to ``digits`` decimals (ties away from zero) by exact arithmetic:
    every printed digit is a digit of ``x``, whatever its size (a float shows noise past
    its 17 significant digits: 3894222643902247600128.0)."""
    f = Fraction(x)
    q = _half_up(f * 10**digits)
    sign, q = ("-" if q < 0 else ""), abs(q)
    if digits == 0:
        return f"{sign}{q}"
    whole, frac = divmod(q, 10**digits)
    return f"{sign}{whole}.{frac:0{digits}d}"


def scientific(x: int | Fraction, digits: int = 1) -> str:
    """``x`` as mantissa e exponent with ``digits`` decimals, exactly: 3.9e33."""
    f = abs(Fraction(x))
    if f == 0:
        return fixed(0, digits)
    e = len(str(f.numerator // f.denominator)) - 1 if f >= 1 else -len(str(f.denominator // f.numerator))
    m = round(f / Fraction(10) ** e * 10**digits)
    while m >= 10 ** (digits + 1):  # 9.96 rounds to 10.0: one more power of ten
        e += 1
        m = round(f / Fraction(10) ** e * 10**digits)
    while 0 < m < 10**digits:
        e -= 1
        m = round(f / Fraction(10) ** e * 10**digits)
    mant = fixed(Fraction(m, 10**digits), digits)
    return f"{'-' if x < 0 else ''}{mant}e{e}"


def _scaled(
    x: int | float | Fraction,
    table,
    unit: str,
    digits: int,
    sci_unit: str | None = None,
    significant: int | None = None,
) -> str:
    """``x`` in the largest unit of ``table`` it reaches, exactly rounded (``fixed``) to
    ``digits`` decimals, or to ``significant`` digits with trailing zeros dropped (the
    reports' style: 6.738B, 1B); a value that rounds up to 1000 of a unit moves to the
    next (999,960,000 is 1.0B, not 1000.0M).  Beyond a thousand of the largest unit, in
    scientific notation (``scientific``) and ``sci_unit`` (default ``unit``)."""
    v = abs(Fraction(x))
    if v >= 1000 * table[0][0]:
        return f"{scientific(x, digits)} {unit if sci_unit is None else sci_unit}".rstrip()
    for i, (base, prefix) in enumerate(table):
        if v >= base:
            text = _decimals(Fraction(x) / base, digits, significant)
            if abs(Fraction(text)) >= 1000 and i > 0:  # rounded up to a thousand: the next unit
                base, prefix = table[i - 1]
                text = _decimals(Fraction(x) / base, digits, significant)
            return f"{text} {prefix}{unit}".rstrip()
    if significant is not None and not isinstance(x, float):
        return f"{x} {unit}".rstrip()
    return f"{fixed(x, digits)} {unit}".rstrip() if isinstance(x, float) else f"{x} {unit}".rstrip()


def _decimals(f: Fraction, digits: int, significant: int | None) -> str:
    """``f`` (at least 1 in magnitude) to ``digits`` decimals, or to ``significant``
    digits without trailing zeros."""
    if significant is None:
        return fixed(f, digits)
    whole = len(str(abs(f.numerator) // f.denominator))
    text = fixed(f, max(significant - whole, 0))
    if len(text.lstrip("-").split(".")[0]) > whole:  # 99.996 -> 100.0: one digit fewer
        text = fixed(f, max(significant - whole - 1, 0))
    return text.rstrip("0").rstrip(".") if "." in text else text


def si(x: int | float | Fraction, unit: str = "FLOP", digits: int = 1) -> str:
    """``x`` with a decimal SI prefix: si(7.946e10) -> '79.5 GFLOP' (never TFLOP)."""
    return _scaled(x, _SI, unit, digits)


def count(x: int, digits: int = 1, significant: int | None = None) -> str:
    """A parameter count in the field's shorthand: 124439808 -> '124.4M', 6.7e9 -> '6.7B'
    (``significant=4``: '6.738B', the reports' style)."""
    return _scaled(x, _COUNT, "", digits, significant=significant).replace(" ", "")


def si_prefixed(x: int | Fraction, significant: int = 4) -> str:
    """``x`` to ``significant`` digits with a bare SI prefix and no unit: '124.4M', '46.7G',
    '1G' (the reports' shorthand beside an exact count)."""
    return _scaled(x, _SI, "", 1, significant=significant).replace(" ", "")


def seconds(x: int | float | Fraction) -> str:
    """A duration in s, ms or µs to 4 significant digits, with days past one day:
    '1.234 ms', '9.000e+04 s (1.04 days)'.  The one formatter of times (CLI, reports)."""
    f = float(x)
    if f >= 86400:
        return f"{f:.4g} s ({f / 86400:.3g} days)"
    if f >= 1:
        return f"{f:.4g} s"
    if f >= 1e-3:
        return f"{f * 1e3:.4g} ms"
    return f"{f * 1e6:.4g} µs"


def byte_size(x: int | Fraction, labels: bool = True) -> str:
    """Bytes exactly, then in binary and decimal units: '85,899,345,920 bytes = 80.00 GiB
    (binary) = 85.90 GB (decimal)' (``labels=False`` leaves out the two words in
    parentheses); below 1 KiB the exact bytes only.  A fraction (a margin of 10 %) is a
    whole number of bytes rounded up, with the exact value after it.  The one formatter of
    byte amounts."""
    f = Fraction(x)
    whole = -(-f.numerator // f.denominator)
    exact = "" if f.denominator == 1 else f" (exactly {f.numerator}/{f.denominator}, rounded up)"
    if abs(f) < 1024:
        return f"{grouped(whole)} bytes{exact}"
    b, d = (" (binary)", " (decimal)") if labels else ("", "")
    return f"{grouped(whole)} bytes = {binary_bytes(f)}{b} = {si(f, 'B', 2)}{d}{exact}"


def binary_bytes(x: int | float | Fraction, digits: int = 2) -> str:
    """Bytes in binary units: 2**30 -> '1.00 GiB'."""
    return _scaled(x, _BIN, "", digits, "B") if abs(x) >= 1024 else f"{x} B"


_INT = re.compile(r"[+-]?[0-9][0-9_]*")
# The count shorthand every output prints (``count``): 1.5B, 70B, 124.4M, 32k, 2T, in
# either case as model names write it (llama-7b, 125m).  Counts only: bytes go through
# ``parse_bytes``, where b and B differ and m would be milli.
_SHORTHAND = re.compile(r"([0-9][0-9_]*)(?:\.([0-9]+))?([kKmMbBtT])")
_SHORTHAND_SCALE = {"k": 3, "m": 6, "b": 9, "t": 12}
_SCI = re.compile(r"([0-9]+)(?:\.([0-9]+))?[eE]\+?([0-9]{1,3})")


def parse_int(text: str, what: str) -> int:
    """Parse an exact integer ("4096", "4_096", "7e9", "1.5B", "7b", "125m", "32k");
    raise ValueError naming ``what``.

    Integers beyond 10**40 in magnitude (no size, budget or workload is that large;
    such values overflow the floats of the printed summaries) raise ValueError too.
    """
    t = text.strip()
    short = _SHORTHAND.fullmatch(t)
    if short:  # 1.5B = 1.5e9: the same digits in scientific notation
        t = f"{short.group(1).replace('_', '')}{'.' + short.group(2) if short.group(2) else ''}e{_SHORTHAND_SCALE[short.group(3).lower()]}"
    if _INT.fullmatch(t):
        body = t.replace("_", "").lstrip("+-").lstrip("0") or "0"  # leading zeros are no digits
        digits = len(body)
        if digits > MAX_INT_DIGITS:
            raise InputError(f"{what} has {digits} digits, implausibly large (the limit is 10**40)")
        value = -int(body) if t.startswith("-") else int(body)
    else:
        m = _SCI.fullmatch(t)
        if not m:
            raise InputError(f"{what} must be an integer, not {text!r}")
        whole, frac, exp = m.group(1), m.group(2) or "", int(m.group(3))
        if len(frac.rstrip("0")) > exp:
            raise InputError(f"{what} must be an integer, not {text!r}")
        if len(whole.lstrip("0")) + exp > MAX_INT_DIGITS:
            raise InputError(f"{what} = {t} is implausibly large (the limit is 10**40)")
        whole = whole.lstrip("0") or "0"  # int() refuses strings past 4300 digits, zeros included
        value = int(whole + frac.ljust(exp, "0")[:exp]) if frac else int(whole) * 10**exp
    if abs(value) > 10**40:
        raise InputError(f"{what} = {t} is implausibly large (the limit is 10**40)")
    return value


MAX_INT_DIGITS = 41  # 10**40 has 41 digits


_NUMBER = re.compile(r"([0-9][0-9_]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]{1,3}))?")
_BYTE_UNITS = {
    "B": 1,
    "kB": 10**3,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "PB": 10**15,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
    "PiB": 2**50,
}


def parse_number(text: str, what: str) -> Fraction:
    """An exact non-negative decimal ("65e12", "362.05e12", "0.9", "4_096") as a Fraction.

    The text is matched against a fixed pattern, never evaluated.

    Raises:
        ValueError: naming ``what``, for anything else or a value beyond 10**40.
    """
    t = text.strip()
    m = _NUMBER.fullmatch(t)
    if not m or len(t) > 64:
        raise InputError(f"{what} must be a number such as 65e12 or 2.5, not {text!r}")
    whole, frac, exp = m.group(1).replace("_", ""), m.group(2) or "", int(m.group(3) or 0)
    value = Fraction(int(whole + frac), 10 ** len(frac)) * Fraction(10) ** exp
    if value > 10**40:
        raise InputError(f"{what} = {t} is implausibly large (the limit is 10**40)")
    return value


def parse_bytes(text: str, what: str) -> int:
    """Bytes written as a number and an optional unit: "85899345920", "16GiB", "80 GB",
    "1.5GiB" (decimal kB/MB/GB/TB = 10^3.., binary KiB/MiB/GiB/TiB = 2^10..); exact, and
    a whole number of bytes.

    Raises:
        ValueError: naming ``what``: an unknown unit, a fraction of a byte.
    """
    t = text.strip()
    unit = next((u for u in sorted(_BYTE_UNITS, key=len, reverse=True) if t.endswith(u)), "")
    number = t[: len(t) - len(unit)].strip() if unit else t
    if not number or not _NUMBER.fullmatch(number) or len(number) > 64:
        raise InputError(
            f"{what} must be bytes such as 16GiB, 80GB or 85899345920 (units: {', '.join(_BYTE_UNITS)}), not {text!r}"
        )
    value = parse_number(number, what) * _BYTE_UNITS.get(unit, 1)
    if value.denominator != 1:
        raise InputError(f"{what} = {t} is not a whole number of bytes")
    return int(value)
