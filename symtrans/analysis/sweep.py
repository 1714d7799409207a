"""Evaluate closed forms over many configurations at once, exactly.

Each quantity's closed form is compiled once with ``sympy.lambdify`` to NumPy and
evaluated on whole columns of sizes.  Exactness is kept by construction:

* the expression is put over one denominator, ``num / den``, with *integer*
  coefficients (floors become an exact integer floor division), so NumPy never
  divides in floating point;
* a magnitude bound (the same polynomial with every coefficient made positive,
  evaluated in float64) is an upper bound of every intermediate value.  Rows whose
  bound reaches 2^62 (a factor-2 margin under int64's 2^63) are evaluated on NumPy
  ``object`` arrays of Python integers, which cannot overflow; the others in int64;
* ``Min``/``Max`` (sliding windows: min(L, w)) become exact ``numpy.minimum`` /
  ``numpy.maximum`` of integer forms over one positive denominator; their bound is
  the sum of their operands' bounds;
* the division ``num // den`` is checked to leave no remainder (a remainder means the
  sizes break a divisibility the formula assumes, e.g. h not dividing d_model).

A column holds int64 values when every row fits, else Python ints (``object`` dtype).
The result equals ``evaluate.exact`` row by row.

Units: parameters; FLOPs (2 per multiply-accumulate); bytes.
"""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

import sympy as sp

from symtrans.engine import symbols as S
from symtrans.engine.evaluate import as_expr
from symtrans.engine.spec import MODEL_SIZES, Spec

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

INT64_SAFE = 2**62
MAX_ROWS = 20_000_000
# A CSV of configurations: a few bytes a value, so 64 MiB holds millions of rows.
MAX_CSV_BYTES = 64 * 2**20
CHUNK = 65_536


class FloorDiv(sp.Function):
    """Exact integer floor division ``floor(p / q)`` of two integer-valued expressions.

    Printed by ``lambdify`` as a call to ``numpy.floor_divide``, which is exact on int64
    and on object arrays of Python ints.
    """


class IntMin(sp.Function):
    """Exact ``min(a, b)`` of two integer-valued expressions (``numpy.minimum``: exact on
    int64 and on object arrays of Python ints).  Always binary: ``numpy.minimum``'s third
    positional argument is its output array."""


class IntMax(sp.Function):
    """Exact ``max(a, b)`` of two integer-valued expressions (``numpy.maximum``)."""


def _positive_den(q: sp.Expr) -> bool:
    """Whether the denominator ``q`` is positive at every configuration: a polynomial in
    sizes (all >= 1) with positive coefficients (1, 2, 2*h, ...)."""
    q = sp.expand(q)
    if q.has(FloorDiv, IntMin, IntMax):
        return False
    terms = sp.Add.make_args(q)
    return all(
        t.as_coeff_Mul()[0] > 0
        and all(
            f.is_Symbol or (f.is_Pow and f.base.is_Symbol and f.exp.is_Integer and f.exp > 0)
            for f in sp.Mul.make_args(t.as_coeff_Mul()[1])
            if not f.is_Number
        )
        for t in terms
    )


def _lower_minmax(e: sp.Expr) -> sp.Expr:
    """``Min``/``Max`` of rational expressions as an exact integer form over one positive
    denominator: min(p1/q1, p2/q2) = IntMin(p1*q2, p2*q1) / (q1*q2) when q1, q2 > 0."""
    pairs = [_int_form(a) for a in e.args]
    for _, q in pairs:
        if not _positive_den(q):
            raise ValueError(f"cannot evaluate {e} exactly: its arguments' denominators may change sign")
    den = sp.Mul(*[q for _, q in pairs])
    scaled = [sp.expand(p * sp.Mul(*[q for j, (_, q) in enumerate(pairs) if j != i])) for i, (p, _) in enumerate(pairs)]
    f = IntMin if isinstance(e, sp.Min) else IntMax
    out = scaled[0]
    for a in scaled[1:]:
        out = f(out, a)
    return out / den


def _int_form(expr: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """``expr`` as (num, den): integer-coefficient polynomials (in symbols and FloorDiv,
    IntMin, IntMax terms)."""

    def lower(e: sp.Expr) -> sp.Expr:
        if isinstance(e, (sp.floor, sp.ceiling)):
            p, q = _int_form(e.args[0])
            return FloorDiv(p, q) if isinstance(e, sp.floor) else -FloorDiv(-p, q)
        if isinstance(e, (sp.Min, sp.Max)):
            return _lower_minmax(e)
        if e.args:
            return e.func(*[lower(a) for a in e.args])
        return e

    e = lower(as_expr(expr))
    num, den = sp.fraction(sp.together(sp.expand(e)))
    num, den = sp.expand(num), sp.expand(den)
    # Make every coefficient an integer (together may leave a rational in front).
    c_num = sp.lcm_list([sp.Rational(t.as_coeff_Mul()[0]).q for t in sp.Add.make_args(num)] or [1])
    c_den = sp.lcm_list([sp.Rational(t.as_coeff_Mul()[0]).q for t in sp.Add.make_args(den)] or [1])
    c = sp.lcm(c_num, c_den)
    return sp.expand(num * c), sp.expand(den * c)


def _bound(e: sp.Expr) -> sp.Expr:
    """An upper bound of |e| and of every intermediate of its evaluation (sizes >= 1)."""
    if e.is_Number:
        return abs(e)
    if e.is_Symbol:
        return e
    if isinstance(e, (FloorDiv, IntMin, IntMax)):
        # both operands are evaluated; |min(a, b)|, |max(a, b)| <= |a| + |b|
        return _bound(e.args[0]) + _bound(e.args[1])
    if e.is_Add:
        return sp.Add(*[_bound(a) for a in e.args])
    if e.is_Mul:
        return sp.Mul(*[_bound(a) for a in e.args])
    if e.is_Pow:
        return _bound(e.base) ** e.exp
    raise ValueError(f"cannot bound {e}")


@dataclass
class Compiled:
    """One closed form compiled for exact vectorised evaluation (see the module docstring)."""

    name: str
    expr: sp.Expr
    args: tuple[str, ...]
    num: Callable
    den: Callable
    bound: Callable
    unit_den: bool = False  # den == 1: no division, no remainder check

    @classmethod
    def build(cls, name: str, expr: sp.Expr) -> "Compiled":
        import numpy as np

        num, den = _int_form(expr)
        syms = sorted((num.free_symbols | den.free_symbols), key=lambda s: s.name)
        mods = [{"FloorDiv": np.floor_divide, "IntMin": np.minimum, "IntMax": np.maximum}, "numpy"]
        f_num = sp.lambdify(syms, num, modules=mods)
        f_den = sp.lambdify(syms, den, modules=mods)
        bnd = sp.Max(_bound(num), _bound(den)) if den != 1 else _bound(num)
        f_bound = sp.lambdify(syms, bnd, modules="numpy")
        return cls(name, expr, tuple(s.name for s in syms), f_num, f_den, f_bound, unit_den=(den == 1))

    def __call__(self, cols: Mapping[str, "np.ndarray"], n: int):
        """Exact values on ``n`` rows of ``cols`` (name -> int64 or object array).

        Raises:
            ValueError: a row where the value is not an integer, naming its sizes.
        """
        import numpy as np

        out, ok = self.evaluate(cols, n)
        bad = np.nonzero(~ok)[0]
        if bad.size:
            i = int(bad[0])
            vals = ", ".join(f"{a}={cols[a][i]}" for a in self.args)
            raise ValueError(f"{self.name} is not an integer at {vals}; check that the divisibility assumptions hold")
        return out

    def evaluate(self, cols: Mapping[str, "np.ndarray"], n: int) -> tuple["np.ndarray", "np.ndarray"]:
        """(values, ok) on ``n`` rows: ``ok[i]`` says the value of row i is an integer
        (``values[i]`` is then exact; elsewhere it is the floor, to be discarded)."""
        import numpy as np

        missing = [a for a in self.args if a not in cols]
        if missing:
            raise ValueError(f"{self.name} needs {', '.join(missing)}; give it in the grid, the CSV or with --set")
        ins = [cols[a] for a in self.args]
        if all(x.dtype != object for x in ins):
            # Fast path: the bound has non-negative coefficients, so it is non-decreasing
            # in every |size| >= 1; at the columns' largest magnitudes (at least 1) it
            # bounds every row and every intermediate: one scalar evaluation.
            tops = [float(max(abs(int(x.max())), abs(int(x.min())), 1)) if x.size else 1.0 for x in ins]
            with np.errstate(over="ignore", invalid="ignore"):
                top = float(self.bound(*tops))
            if top < INT64_SAFE:
                return self._eval([np.asarray(x, dtype=np.int64) for x in ins], n, np.int64)
        with np.errstate(over="ignore", invalid="ignore"):
            b = np.broadcast_to(np.asarray(self.bound(*[_as_float(x) for x in ins]), dtype=np.float64), (n,))
        big = ~(b < INT64_SAFE)  # also catches inf and nan
        if not big.any():
            return self._eval([x.astype(np.int64) for x in ins], n, np.int64)
        out = np.empty(n, dtype=object)
        ok = np.ones(n, dtype=bool)
        small = ~big
        if small.any():
            v, k = self._eval([x[small].astype(np.int64) for x in ins], int(small.sum()), np.int64)
            out[small], ok[small] = v.astype(object), k
        v, k = self._eval([np.array([int(v) for v in x[big]], dtype=object) for x in ins], int(big.sum()), object)
        out[big], ok[big] = v, k
        return out, ok

    def _eval(self, ins, n, dtype):
        import numpy as np

        if self.unit_den:  # no division: a fresh (n,) array, never an input column itself
            num = np.asarray(self.num(*ins), dtype=dtype)
            if not (num.shape == (n,) and not any(num is x for x in ins)):
                num = np.broadcast_to(num, (n,)).copy()
            return num, np.ones(n, dtype=bool)
        num = np.broadcast_to(np.asarray(self.num(*ins), dtype=dtype), (n,))
        den = np.broadcast_to(np.asarray(self.den(*ins), dtype=dtype), (n,))
        rem = num % den
        return num // den, np.asarray(rem == 0, dtype=bool).reshape(n)


@lru_cache(maxsize=256)
def _compiled(name: str, expr: sp.Expr) -> Compiled:
    """``Compiled.build``, cached per closed form (the closed forms are per structural spec)."""
    return Compiled.build(name, expr)


# ---------------------------------------------------------------------------------
# inputs: grids and CSV files


def parse_grid(text: str) -> tuple[str, list[int]]:
    """Parse one ``--grid``: ``NAME=START:STOP:STEP`` (STOP included), ``NAME=A,B,C`` or ``NAME=A``.

    Raises:
        ValueError: no '=', an unknown size name, a non-integer or non-positive value,
            a non-positive step, or a range with no values (an empty grid).
    """
    from symtrans.base.numbers import parse_int

    if "=" not in text:
        raise ValueError(f"--grid takes NAME=START:STOP:STEP or NAME=A,B,C, not {text!r}")
    name, _, spec = text.partition("=")
    name, spec = name.strip(), spec.strip()
    if name not in S.SYMBOLS:
        raise ValueError(f"unknown size {name!r} in --grid; known: {', '.join(S.SYMBOLS)}")
    if not spec:
        raise ValueError(f"--grid {name} has no values (an empty grid)")
    if ":" in spec:
        parts = spec.split(":")
        if len(parts) not in (2, 3):
            raise ValueError(f"--grid {name}: a range is START:STOP or START:STOP:STEP, not {spec!r}")
        start, stop = parse_int(parts[0], f"{name} start"), parse_int(parts[1], f"{name} stop")
        step = parse_int(parts[2], f"{name} step") if len(parts) == 3 else 1
        if step <= 0:
            raise ValueError(f"--grid {name}: the step must be positive, not {step}")
        if stop < start:
            raise ValueError(f"--grid {name}={spec} is empty: STOP is below START")
        if (stop - start) // step + 1 > MAX_ROWS:
            raise ValueError(f"--grid {name}={spec} has more than {MAX_ROWS:,} values")
        values = list(range(start, stop + 1, step))
    else:
        values = [parse_int(v, name) for v in spec.split(",") if v.strip()]
    if not values:
        raise ValueError(f"--grid {name} has no values (an empty grid)")
    bad = [v for v in values if v <= 0]
    if bad:
        raise ValueError(f"--grid {name}: sizes must be positive integers, not {bad[0]}")
    return name, values


def grid(axes: Sequence[tuple[str, Sequence[int]]]) -> dict[str, "np.ndarray"]:
    """The Cartesian product of the axes, as columns (name -> int64 or object array).

    Raises:
        ValueError: a name given twice, an empty axis, or more than MAX_ROWS rows.
    """
    names = [a for a, _ in axes]
    dup = {a for a in names if names.count(a) > 1}
    if dup:
        raise ValueError(f"--grid names {', '.join(sorted(dup))} more than once")
    total = 1
    for name, vals in axes:
        if not vals:
            raise ValueError(f"--grid {name} has no values (an empty grid)")
        total *= len(vals)
    if total > MAX_ROWS:
        raise ValueError(f"the grid has {total:,} configurations; at most {MAX_ROWS:,} are allowed")
    import numpy as np

    if not axes:
        return {}
    arrays = [_column(list(v)) for _, v in axes]
    mesh = np.meshgrid(*arrays, indexing="ij")
    return {name: m.reshape(-1) for name, m in zip(names, mesh)}


def _as_float(x: "np.ndarray") -> "np.ndarray":
    """float64 copy of an int column; Python ints too large for a float become inf."""
    import numpy as np

    if x.dtype != object:
        return x.astype(np.float64)
    return np.array([float(v) if abs(v) < 2**1000 else float("inf") for v in x.tolist()], dtype=np.float64)


def _column(values: list[int]) -> "np.ndarray":
    import numpy as np

    if all(-INT64_SAFE < v < INT64_SAFE for v in values):
        return np.array(values, dtype=np.int64)
    return np.array(values, dtype=object)


def read_csv(text: str) -> dict[str, "np.ndarray"]:
    """Columns from CSV text whose header names sizes (``d_model,N,...``), one configuration a row.

    Raises:
        ValueError: no header or no rows, an unknown column, a duplicate column, a short
            row, or a value that is not a positive integer (naming its line).
    """
    from symtrans.base.numbers import parse_int

    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff")))  # a byte-order mark is no column name
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise ValueError(
            "the CSV file is empty (it needs a header of size names and one row per configuration)"
        ) from None
    for h in header:
        if h not in S.SYMBOLS:
            raise ValueError(f"unknown CSV column {h!r}; columns must be size names: {', '.join(S.SYMBOLS)}")
    if len(set(header)) != len(header):
        raise ValueError("the CSV header names a column twice")
    cols: list[list[int]] = [[] for _ in header]
    for line, row in enumerate(reader, start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise ValueError(f"CSV line {line} has {len(row)} values for {len(header)} columns")
        for j, c in enumerate(row):
            v = parse_int(c, f"{header[j]} on CSV line {line}")
            if v <= 0:
                raise ValueError(f"{header[j]} on CSV line {line} must be a positive integer, not {c.strip()}")
            cols[j].append(v)
    if not cols or not cols[0]:
        raise ValueError("the CSV file has no configurations (only a header)")
    if len(cols[0]) > MAX_ROWS:
        raise ValueError(f"the CSV file has more than {MAX_ROWS:,} configurations")
    return {h: _column(c) for h, c in zip(header, cols)}


def read_csv_file(path: str) -> dict[str, "np.ndarray"]:
    """``read_csv`` of the file ``path``: a regular file of at most ``MAX_CSV_BYTES``, in
    UTF-8 (with or without a byte-order mark) or UTF-16 with one (``base.inputs``).

    Raises:
        ValueError: the reader's one sentence naming the file, or ``read_csv``'s, prefixed
            with the file name.
    """
    from symtrans.base.inputs import read_text

    text = read_text(path, "a CSV file", MAX_CSV_BYTES)
    try:
        return read_csv(text)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


# ---------------------------------------------------------------------------------
# the sweep


@dataclass
class SweepResult:
    """Columns of inputs and results, all the same length.

    Attributes:
        columns: name -> array (int64, or object holding Python ints), in output order.
        inputs: the names of the input and derived size columns.
        quantities: the names of the result columns.
        notes: conventions and anything skipped.
    """

    columns: dict[str, "np.ndarray"]
    inputs: list[str]
    quantities: list[str]
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def rows(self) -> Iterable[dict[str, int]]:
        """Each configuration as a dict of Python ints."""
        names = list(self.columns)
        lists = [self.columns[n].tolist() for n in names]
        for vals in zip(*lists):
            yield dict(zip(names, vals))

    def to_csv(self, progress: bool | None = None) -> str:
        """CSV text: a header, then one row per configuration (exact integers)."""
        names = list(self.columns)
        out = io.StringIO()
        out.write(",".join(names) + "\n")
        n = len(self)
        bar = _progress(n, progress, "writing")
        try:
            for lo in range(0, n, CHUNK):
                lists = [self.columns[k][lo : lo + CHUNK].tolist() for k in names]
                out.write("".join(",".join(map(str, vals)) + "\n" for vals in zip(*lists)))
                if bar is not None:
                    bar.update(len(lists[0]))
        finally:
            if bar is not None:
                bar.close()
        return out.getvalue()

    def to_json(self, model: str = "") -> str:
        """JSON text: the model, the column names, the notes and one object per configuration."""
        return json.dumps(
            {"model": model, "columns": list(self.columns), "notes": self.notes, "rows": list(self.rows())}, indent=1
        )


COLUMN_NAMES = {
    "params": "params",
    "active_params": "active_params",
    "flops": "flops_forward",
    "training_flops": "flops_training",
    "memory": "memory_bytes",
}


def _quantity_exprs(
    spec: Spec, quantities: Sequence[str], mask: str, convention: str, memory_options: Mapping | None
) -> dict[str, sp.Expr]:
    from symtrans.analysis.solve import QUANTITIES, quantity_expr

    for q in quantities:
        if q not in QUANTITIES:
            raise ValueError(f"unknown quantity {q!r}; valid: {', '.join(QUANTITIES)}")
    return {COLUMN_NAMES[q]: quantity_expr(spec, q, mask, convention, memory_options) for q in quantities}


def _progress(total: int, enabled: bool | None, desc: str = "evaluating"):
    """A progress bar on stderr when it is a terminal (tqdm), else a no-op."""
    if enabled is None:
        enabled = total > CHUNK and sys.stderr.isatty()
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(
        total=total, unit="config", unit_scale=True, file=sys.stderr, leave=False, desc=f"symtrans sweep: {desc}"
    )


def sweep(
    spec: Spec,
    columns: Mapping[str, "np.ndarray"],
    quantities: Sequence[str] | None = None,
    *,
    rules: Sequence = (),
    defaults: Mapping[str, int] | None = None,
    mask: str = "full",
    convention: str = "flops",
    memory_options: Mapping | None = None,
    invalid: str = "error",
    progress: bool | None = None,
) -> SweepResult:
    """Evaluate quantities over configurations.

    Args:
        spec: the model (its options; its sizes are the defaults for columns not given).
        columns: name -> array of sizes, one entry per configuration (``grid``, ``read_csv``).
        quantities: of ``solve.QUANTITIES``; default params (and active_params for
            MoE), forward and training FLOPs, and training memory in bytes.
        rules: sizes derived from others (``solve.keep_rule``/``llama_rule``), evaluated
            exactly per row (a non-integer result is an error).
        defaults: further fixed values (B, L for FLOPs: B defaults to 1, L to the spec's L).
            An encoder-decoder reads L_src source and L_tgt target tokens: each one no
            column, rule, --set value or default gives equals L (``solve.length_ties``).
        mask: how causal attention scores count (``full``, ``causal``, ``half``).
        convention: FLOP convention (``symtrans.conventions``).
        memory_options: passed to ``memory.memory_terms`` (dtype, optimizer, mode, ...);
            the memory column is training memory in whole bytes by default.
        invalid: ``error`` (default) or ``skip`` rows whose sizes the Spec rejects
            (h not dividing d_model, k > E, ...).
        progress: show a progress bar (default: on a terminal, for long runs).

    Returns:
        A ``SweepResult`` whose values equal ``evaluate.exact`` row by row.

    Raises:
        ValueError: no configurations, an invalid row (with ``invalid="error"``; a row
            where a rule is not a positive integer is invalid, as in ``solve``), a
            quantity that needs a size no column gives, a non-integer count, L_src /
            L_tgt for a model that is not an encoder-decoder, or SymPy work past its
            CPU-time budget (``base.budget``).
    """
    import numpy as np

    from symtrans.analysis.solve import _order, _tie_note, _tie_rule, check_lengths, length_ties

    if invalid not in ("error", "skip"):
        raise ValueError(f"invalid must be error or skip, not {invalid!r}")
    cols = {k: np.asarray(v) for k, v in columns.items()}
    lengths = {len(v) for v in cols.values()}
    if len(lengths) > 1:
        raise ValueError("the columns have different lengths")
    n = lengths.pop() if lengths else 0
    if n == 0:
        raise ValueError("no configurations to sweep (an empty grid)")
    rules = list(rules)
    _order(rules)  # duplicate and cyclic constraints are reported as the user wrote them
    for r in rules:
        if r.name in cols:
            raise ValueError(f"{r.name} is both a column and a constraint")
    # An encoder-decoder's L_src and L_tgt equal L unless a column, a rule or a fixed value gives them.
    check_lengths(spec, list(cols) + [r.name for r in rules] + list(defaults or {}))
    tie = length_ties(spec, set(cols) | {r.name for r in rules} | set(spec.values) | set(defaults or {}))
    rules = _order([_tie_rule(r, tie) for r in rules])
    if quantities is None:
        quantities = ["params"] + (["active_params"] if spec.is_moe else []) + ["flops", "training_flops", "memory"]
    inputs = list(cols)
    notes: list[str] = []
    # Sizes the spec lacks but a column or rule gives change the closed form's structure
    # (h_kv brings grouped-query attention, d_k an explicit head width): add them.
    # Their values here only mark presence (1 satisfies every divisibility); rows are checked below.
    extra = {k: 1 for k in list(cols) + [r.name for r in rules] if k in MODEL_SIZES and not spec.has(k)}
    if extra:
        try:
            spec = spec.replace(sizes=extra)
        except ValueError as e:
            raise ValueError(f"these columns do not fit the model: {e}") from None
    # Fixed sizes: the spec's and the defaults, where no column or rule gives them.
    fixed = dict(spec.values)
    if any(q in ("flops", "training_flops", "memory") for q in quantities):
        fixed.setdefault("B", 1)
    fixed.update(defaults or {})
    for name, v in fixed.items():
        if name not in cols and name not in {r.name for r in rules}:
            cols[name] = np.full(n, v, dtype=np.int64 if v < INT64_SAFE else object)
    # Derived sizes, exactly, in dependency order.  A row where a rule does not give a
    # positive integer is an invalid configuration, as a candidate of ``solve`` is.
    keep = np.ones(n, dtype=bool)
    first_error = None
    for r in rules:
        vals, ok = _rule_values(r, cols, n)
        if not ok.all():
            i = int(np.nonzero(~ok)[0][0])
            args = sorted(str(x) for x in r.expr.free_symbols)
            where = {a: int(cols[a][i]) for a in args if a in cols}
            first_error = first_error or (
                where,
                f"the constraint {r.text()} gives {_rule_text(r, where)}, not a positive integer",
            )
            keep &= ok
            vals = vals.copy()
            vals[~ok] = 1  # a placeholder: these rows are dropped or refused below
        cols[r.name] = vals
        inputs.append(r.name)
    # Validate each distinct combination of the sizes the Spec checks (the option ranges
    # too: the MoE layout within N, the global tokens within L).
    names = ["d_model", "h", "h_kv", "d_k", "k", "E"]
    names += ["N", "N_dec"] if "E" in cols else []
    names += ["L", "L_src"] if spec.global_tokens else []
    keys = [k for k in names if k in cols]
    if keys:
        uniq, inverse = _unique_rows([cols[k] for k in keys])
        ok = np.ones(len(uniq), dtype=bool)
        for i, row in enumerate(uniq):
            sizes = {k: int(v) for k, v in zip(keys, row)}
            try:
                spec.check_sizes(sizes, workload=True)  # the Spec's own size checks, without building one
            except ValueError as e:
                ok[i] = False
                first_error = first_error or (sizes, str(e))
        keep &= ok[inverse]
    if not keep.all():
        bad = int((~keep).sum())
        sizes, msg = first_error
        where = ", ".join(f"{k}={v}" for k, v in sizes.items())
        if invalid == "error":
            raise ValueError(f"invalid configuration ({where}): {msg}")
        if not keep.any():
            raise ValueError(f"every configuration is invalid (e.g. {where}: {msg})")
        notes.append(
            f"skipped {bad:,} of {n:,} configurations that the model rejects "
            f"(e.g. {where}: {msg}); invalid='error' (--strict) makes this an error"
        )
        cols = {k: v[keep] for k, v in cols.items()}
        n = int(keep.sum())
    from symtrans.base.budget import time_budget

    with time_budget("compiling the sweep's closed forms"):  # SymPy's work has no a-priori bound
        exprs = _quantity_exprs(spec, quantities, mask, convention, memory_options)
        compiled = [_compiled(name, e.xreplace(tie)) for name, e in exprs.items()]
    results: dict[str, list] = {c.name: [] for c in compiled}
    bar = _progress(n, progress)
    try:
        for lo in range(0, n, CHUNK):
            hi = min(n, lo + CHUNK)
            part = {k: v[lo:hi] for k, v in cols.items()}
            for c in compiled:
                results[c.name].append(c(part, hi - lo))
            if bar is not None:
                bar.update(hi - lo)
    finally:
        if bar is not None:
            bar.close()
    out: dict[str, np.ndarray] = {}
    for name in inputs:
        out[name] = cols[name]
    for name, parts in results.items():
        out[name] = (
            parts[0]
            if len(parts) == 1
            else (
                np.concatenate(parts)
                if all(p.dtype != object for p in parts)
                else np.concatenate([p.astype(object) for p in parts])
            )
        )
    if "flops_forward" in out or "flops_training" in out:
        shown = ("B", "L", "L_src", "L_tgt") if (tie or spec.family != "encoder-decoder") else ("B", "L_src", "L_tgt")
        notes.append(
            f"convention {convention}; mask {mask}; workload "
            + ", ".join(f"{k}={fixed[k]}" for k in shown if k in fixed and k not in inputs)
        )
    if tie and any(q in ("flops", "training_flops", "memory") for q in quantities):
        notes.append(_tie_note(tie))
    return SweepResult(out, inputs, list(results), notes)


def _has_root(e: sp.Expr) -> bool:
    """Whether ``e`` holds a power with a non-integer exponent (d_model**0.5): such a rule
    has no exact integer form for NumPy, so it is evaluated with SymPy."""
    return any(isinstance(p, sp.Pow) and not p.exp.is_Integer for p in sp.preorder_traversal(e))


def _rule_values(rule, cols: Mapping[str, "np.ndarray"], n: int) -> tuple["np.ndarray", "np.ndarray"]:
    """(values, ok) of a rule on ``n`` rows: ``ok`` where the value is a positive integer.

    Rational rules (floors, divisions) are compiled (``Compiled.evaluate``, exact); a rule
    with a root is evaluated exactly by SymPy (``Rule.value``) once per distinct
    combination of its inputs, under the SymPy time budget.
    """
    import numpy as np

    from symtrans.base.budget import time_budget

    if not _has_root(rule.expr):
        with time_budget(f"compiling the constraint {rule.text()}"):
            c = Compiled.build(rule.name, rule.expr)
        vals, ok = c.evaluate(cols, n)
        return vals, ok & (vals > 0)

    args = sorted(str(x) for x in rule.expr.free_symbols)
    missing = [a for a in args if a not in cols]
    if missing:
        raise ValueError(f"{rule.name} needs {', '.join(missing)}; give it in the grid, the CSV or with --set")
    if args:
        uniq, inverse = _unique_rows([cols[a] for a in args])
    else:
        uniq, inverse = [()], np.zeros(n, dtype=np.int64)
    with time_budget(f"evaluating the constraint {rule.text()}"):
        got = [rule.value(dict(zip(args, (int(x) for x in row)))) for row in uniq]
    ok = np.array([g is not None for g in got], dtype=bool)[inverse]
    vals = _column([g if g is not None else 1 for g in got])[inverse]
    return vals, ok


def _rule_text(rule, where: Mapping[str, int]) -> str:
    """The rule's exact value at ``where`` for a message (``16*sqrt(3)``, ``256/3``), shortened."""
    text = sp.sstr(rule.expr.xreplace({S.SYMBOLS[k]: sp.Integer(v) for k, v in where.items()}))
    return text if len(text) <= 60 else text[:57] + "..."


def _unique_rows(columns: list) -> tuple[list[tuple], "np.ndarray"]:
    """Distinct rows of equal-length columns and, per row, the index of its distinct row.

    Constant columns are set aside; the varying int64 columns are packed into one int64
    key when their ranges allow (a fast 1-D ``np.unique``), else rows are hashed.
    """
    import numpy as np

    n = len(columns[0])
    ranges = [(c.min(), c.max()) if n else (0, 0) for c in columns]
    varying = [j for j, (lo, hi) in enumerate(ranges) if lo != hi]
    first = [int(c[0]) for c in columns] if n else []

    def full(row_values: tuple) -> tuple:
        out = list(first)
        for j, v in zip(varying, row_values):
            out[j] = int(v)
        return tuple(out)

    if not varying:
        return [tuple(first)], np.zeros(n, dtype=np.int64)
    cols = [columns[j] for j in varying]
    if all(c.dtype != object for c in cols):
        lows = [int(ranges[j][0]) for j in varying]  # keys count from each column's minimum
        spans = [int(ranges[j][1]) - lo + 1 for j, lo in zip(varying, lows)]
        if math.prod(spans) < 2**62:
            key = np.zeros(n, dtype=np.int64)
            for c, lo, span in zip(cols, lows, spans):
                key *= span
                key += np.asarray(c, dtype=np.int64)
                key -= lo
            size = math.prod(spans)
            if size <= max(4 * n, 1 << 20):  # a dense table: O(n), no sort
                present = np.zeros(size, dtype=bool)
                present[key] = True
                uniq_keys = np.flatnonzero(present)
                slot = np.zeros(size, dtype=np.int64)
                slot[uniq_keys] = np.arange(len(uniq_keys))
                inverse = slot[key]
            else:
                uniq_keys, inverse = np.unique(key, return_inverse=True)
            rows = []
            for kv in uniq_keys.tolist():
                vals = []
                for lo, span in zip(reversed(lows), reversed(spans)):
                    kv, r = divmod(kv, span)
                    vals.append(r + lo)
                rows.append(full(tuple(reversed(vals))))
            return rows, np.asarray(inverse).reshape(-1)
    index: dict[tuple, int] = {}
    inverse = np.empty(n, dtype=np.int64)
    for i, row in enumerate(zip(*(c.tolist() for c in cols))):
        inverse[i] = index.setdefault(row, len(index))
    return [full(r) for r in index], inverse
