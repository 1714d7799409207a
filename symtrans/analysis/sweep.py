"""Evaluate closed forms over many configurations at once, exactly.

Each quantity's closed form is compiled once into exact integer NumPy code
(``kernel``: integer polynomials in factored Horner form, common subexpressions
shared) and evaluated in cache-sized chunks (``CHUNK`` rows) into preallocated
columns: no temporary is bigger than a chunk.  Exactness is kept by construction:

* the closed form is ``num / den`` with *integer* coefficients (floors become exact
  integer floor divisions, ``Min``/``Max`` exact ``numpy.minimum``/``maximum`` over one
  positive denominator), so NumPy never divides in floating point;
* a magnitude bound (the factored form with every constant made positive, evaluated in
  float64 at the chunk's largest sizes) bounds every intermediate value.  Below 2^62
  (a factor-2 margin under int64's 2^63) the chunk runs in int64; otherwise each row's
  own bound decides, and rows at or above 2^62 run on NumPy ``object`` arrays of Python
  integers, which cannot overflow;
* the division ``num // den`` is checked to leave no remainder (a remainder means the
  sizes break a divisibility the formula assumes, e.g. h not dividing d_model).

Every row is validated with the Spec's own size rules (``spec.ROW_RULES``, one array
operation per rule and chunk), every size must be positive, and the option ranges that
depend on sizes (the MoE layout within N, the global tokens within L) are checked once
per distinct value (``Spec.check_sizes(..., workload=True)``).  A derived size (a rule
such as ``d_ff = 4*d_model``) is computed exactly per row; a row where it is not a
positive integer (``d_model/7``, ``d_model**0.5`` at 768) is an invalid configuration,
as a candidate of ``solve`` is.  Rules with integer powers run as kernels (numerator
and denominator, the remainder checked row by row); any other rule (a root) is
evaluated exactly by SymPy once per distinct combination of its inputs.  SymPy's work
(building and compiling the closed forms and rules) runs under the CPU-time budget
(``base.budget``).

A column holds int64 values when every row fits, else Python ints (``object`` dtype).
The result equals ``evaluate.exact`` row by row.  ``Sweeper`` evaluates batches one
after another (the CLI streams a grid or a CSV file through it, so memory does not
grow with the number of rows); ``sweep`` is one batch.

Units: parameters; FLOPs (2 per multiply-accumulate); bytes.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.engine import symbols as S
from symtrans.engine.evaluate import as_expr
from symtrans.engine.spec import MAX_USER_SIZE, MODEL_SIZES, ROW_RULES, Spec, user_size

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

INT64_SAFE = 2**62
MAX_ROWS = 20_000_000
# A CSV of configurations: a few bytes a value, so 64 MiB holds millions of rows.
MAX_CSV_BYTES = 64 * 2**20
CHUNK = 32_768  # rows per evaluation chunk: 256 KiB per int64 temporary (measured against 16 Ki and 64 Ki rows)
BATCH = 262_144  # rows per batch when the CLI streams a grid or a CSV file
PROGRESS_MIN_ROWS = 65_536  # a progress bar (on a terminal) only for longer sweeps
WRITE_ROWS = 32_768  # rows formatted as text at a time (the Python ints and strings of a slice)


@dataclass
class Compiled:
    """One closed form compiled for exact vectorised evaluation (``kernel.Kernel``),
    called on whole columns: ``Compiled.build(name, expr)(columns, n)``."""

    name: str
    expr: sp.Expr
    args: tuple[str, ...]
    kernel: object = field(repr=False)

    @classmethod
    def build(cls, name: str, expr: sp.Expr) -> "Compiled":
        """Raises ValueError when ``expr`` cannot be evaluated exactly with integers."""
        k = _compiled(name, as_expr(expr), frozenset())
        return cls(name, expr, k.args, k)

    def __call__(self, cols: Mapping[str, "np.ndarray"], n: int):
        """Exact values on ``n`` rows of ``cols`` (name -> int64 or object array): a new array.

        Raises:
            ValueError: a size the form needs is missing, or a division leaves a remainder.
        """
        import numpy as np

        missing = [a for a in self.args if a not in cols]
        if missing:
            raise InputError(f"{self.name} needs {', '.join(missing)}; give it in the grid, the CSV or with --set")
        out = np.empty(n, dtype=np.int64)
        step = _chunk_rows()
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            ins = {a: np.asarray(cols[a][lo:hi]) for a in self.args}
            tops = {a: _top(x) for a, x in ins.items()}
            if not self.kernel.run(ins, hi - lo, out, lo, tops):
                out = out.astype(object)
                self.kernel.run(ins, hi - lo, out, lo, tops)
        return out


@lru_cache(maxsize=256)
def _compiled(name: str, expr: sp.Expr, scalars: frozenset[str]):
    """The kernel of ``expr`` (``kernel.compile_kernel``), cached per closed form and per
    set of sizes given as scalars (the closed forms are per structural spec)."""
    from symtrans.analysis import kernel as K

    try:
        node = K.tree(expr)
    except K.NotExact as e:
        raise InputError(str(e)) from None
    return K.compile_kernel(name, node, sorted(scalars))


class _RuleValues:
    """A derived size (``solve.Rule``) on the rows of a chunk, exactly, with the rows
    where it is not a positive integer (an invalid configuration, as in ``solve``).

    A rule with integer powers runs as kernels: its numerator and its positive
    denominator (``kernel.lower``), the remainder checked row by row.  Any other rule (a
    root such as ``d_model**0.5``, a denominator that may change sign) is evaluated
    exactly by SymPy (``Rule.value``) once per distinct combination of its inputs,
    under the CPU-time budget.
    """

    def __init__(self, rule, scalars: frozenset[str]) -> None:
        from symtrans.base.budget import time_budget

        self.rule = rule
        self.args = sorted(str(x) for x in rule.expr.free_symbols)
        with time_budget(f"compiling the constraint {rule.text()}"):
            self.kernels = _rule_kernels(rule.name, as_expr(rule.expr), scalars)

    def values(self, ins: Mapping, m: int, pool: list | None = None) -> tuple["np.ndarray", "np.ndarray | None"]:
        """(values, None) when every row's value is a positive integer, else (values,
        mask of those rows); elsewhere ``values`` holds a floor or 1, to be discarded."""
        import numpy as np

        if not self.kernels:
            return self._by_sympy(ins, m)
        num = _run_kernel(self.kernels[0], ins, m, pool)
        if len(self.kernels) == 1:
            vals, good = num, num > 0
        else:
            den = _run_kernel(self.kernels[1], ins, m, pool)
            positive = den > 0  # always, for sizes >= 1; a size <= 0 (refused below) must not divide by zero
            if not positive.all():
                den = np.where(positive, den, 1)
            vals = num // den
            good = (num % den == 0) & (vals > 0) & positive
        good = np.asarray(good, dtype=bool)
        return vals, (None if good.all() else good)

    def _by_sympy(self, ins: Mapping, m: int):
        import numpy as np

        from symtrans.base.budget import time_budget

        arrays = [a for a in self.args if not isinstance(ins[a], int)]
        if arrays:
            uniq, inverse = _unique_rows([np.asarray(ins[a]) for a in arrays])
        else:
            uniq, inverse = [()], np.zeros(m, dtype=np.int64)
        fixed = {a: ins[a] for a in self.args if isinstance(ins[a], int)}
        with time_budget(f"evaluating the constraint {self.rule.text()}"):
            got = [self.rule.value({**fixed, **dict(zip(arrays, row))}) for row in uniq]
        good = np.array([g is not None for g in got], dtype=bool)[inverse]
        vals = _column([g if g is not None else 1 for g in got])[inverse]
        return vals, (None if good.all() else good)


@lru_cache(maxsize=256)
def _rule_kernels(name: str, expr: sp.Expr, scalars: frozenset[str]) -> tuple:
    """(numerator kernel,) or (numerator kernel, denominator kernel) of a rule whose
    denominator is positive at every configuration; () when it has no such integer form."""
    from symtrans.analysis import kernel as K

    try:
        r = K.lower(expr).reduced()
    except K.NotExact:
        return ()
    if r.den == K.p_const(1):
        return (K.compile_kernel(name, K.horner(r.num), sorted(scalars)),)
    if not K._positive(r.den):
        return ()
    return (
        K.compile_kernel(name, K.horner(r.num), sorted(scalars)),
        K.compile_kernel(name, K.horner(r.den), sorted(scalars)),
    )


def _run_kernel(k, ins: Mapping, m: int, pool: list | None) -> "np.ndarray":
    """A kernel on the ``m`` rows of a chunk, into a new column (int64, or Python ints)."""
    import numpy as np

    buf = np.empty(m, dtype=np.int64)
    if not k.run(ins, m, buf, 0, None, pool):
        buf = buf.astype(object)
        k.run(ins, m, buf, 0)
    return buf


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


def _chunk_rows() -> int:
    """Rows per evaluation chunk (``CHUNK``, read at call time)."""
    return CHUNK


def _top(x) -> float:
    """The largest magnitude in ``x`` (a Python int or an array), as a float."""
    from symtrans.analysis.kernel import _magnitude

    return _magnitude(x)


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
        raise InputError(f"--grid takes NAME=START:STOP:STEP or NAME=A,B,C, not {text!r}")
    name, _, spec = text.partition("=")
    name, spec = name.strip(), spec.strip()
    if name not in S.SYMBOLS:
        raise InputError(f"unknown size {name!r} in --grid; known: {', '.join(S.SYMBOLS)}")
    if not spec:
        raise InputError(f"--grid {name} has no values (an empty grid)")
    if ":" in spec:
        parts = spec.split(":")
        if len(parts) not in (2, 3):
            raise InputError(f"--grid {name}: a range is START:STOP or START:STOP:STEP, not {spec!r}")
        start, stop = parse_int(parts[0], f"{name} start"), parse_int(parts[1], f"{name} stop")
        step = parse_int(parts[2], f"{name} step") if len(parts) == 3 else 1
        if step <= 0:
            raise InputError(f"--grid {name}: the step must be positive, not {step}")
        if stop < start:
            raise InputError(f"--grid {name}={spec} is empty: STOP is below START")
        if (stop - start) // step + 1 > MAX_ROWS:
            raise InputError(f"--grid {name}={spec} has more than {MAX_ROWS:,} values")
        values = list(range(start, stop + 1, step))
    else:
        values = [parse_int(v, name) for v in spec.split(",") if v.strip()]
    if not values:
        raise InputError(f"--grid {name} has no values (an empty grid)")
    bad = [v for v in values if v <= 0]
    if bad:
        raise InputError(f"--grid {name}: sizes must be positive integers, not {bad[0]}")
    user_size(f"--grid {name}", max(values))  # the limit --set, config.json and the API put on a size
    return name, values


def grid(axes: Sequence[tuple[str, Sequence[int]]]) -> dict[str, "np.ndarray"]:
    """The Cartesian product of the axes, as columns (name -> int64 or object array).

    Raises:
        ValueError: a name given twice, an empty axis, or more than MAX_ROWS rows.
    """
    total, batches = grid_batches(axes, batch=None)
    return next(batches, {})


def grid_batches(axes: Sequence[tuple[str, Sequence[int]]], batch: int | None = BATCH):
    """The Cartesian product of the axes (the last axis varies fastest), ``batch`` rows at
    a time (all at once for None): returns (rows, an iterator of column dicts).  Only
    the axes and one batch are ever in memory.

    Raises:
        ValueError: a name given twice, an empty axis, or more than MAX_ROWS rows.
    """
    names = [a for a, _ in axes]
    dup = {a for a in names if names.count(a) > 1}
    if dup:
        raise InputError(f"--grid names {', '.join(sorted(dup))} more than once")
    total = 1
    for name, vals in axes:
        if not vals:
            raise InputError(f"--grid {name} has no values (an empty grid)")
        total *= len(vals)
    if total > MAX_ROWS:
        raise InputError(f"the grid has {total:,} configurations; at most {MAX_ROWS:,} are allowed")
    if not axes:
        return 0, iter(())
    arrays = [_column(list(v)) for _, v in axes]
    strides = []
    step = 1
    for arr in reversed(arrays):
        strides.append(step)
        step *= len(arr)
    strides.reverse()
    size = total if batch is None else batch

    def gen():
        import numpy as np

        for lo in range(0, total, size):
            idx = np.arange(lo, min(total, lo + size), dtype=np.int64)
            yield {name: arr[(idx // st) % len(arr)] for name, arr, st in zip(names, arrays, strides)}

    return total, gen()


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
    import numpy as np

    header, batches = csv_batches(
        io.StringIO(text.removeprefix("\ufeff")), batch=None
    )  # a byte-order mark is no column name
    parts = list(batches)
    if not parts:
        raise InputError("the CSV file has no configurations (only a header)")
    if len(parts) == 1:
        return parts[0]
    return {
        h: np.concatenate([p[h] for p in parts])
        if all(p[h].dtype != object for p in parts)
        else np.concatenate([p[h].astype(object) for p in parts])
        for h in header
    }


_PLAIN = re.compile(r"[0-9]{1,18}")


def csv_batches(f, batch: int | None = BATCH):
    """Configurations from a CSV file object ``f`` whose header names sizes, ``batch``
    rows at a time (all at once for None): returns (the header, an iterator of column
    dicts).  The header is read and checked at once; each row is checked as it is
    read, with its line number.  Plain decimal columns are parsed by NumPy, anything
    else (4_096, 7e9, spaces) by ``numbers.parse_int``.

    Raises:
        ValueError: no header, an unknown or duplicate column (at once); a short row, a
            value that is not a positive integer, or more than MAX_ROWS rows (while
            iterating).
    """
    reader = csv.reader(f)
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise InputError(
            "the CSV file is empty (it needs a header of size names and one row per configuration)"
        ) from None
    for h in header:
        if h not in S.SYMBOLS:
            raise InputError(f"unknown CSV column {h!r}; columns must be size names: {', '.join(S.SYMBOLS)}")
    if len(set(header)) != len(header):
        raise InputError("the CSV header names a column twice")
    size = batch or MAX_ROWS + 1

    def gen():
        rows_read = 0
        line = 1
        while True:
            cells: list[list[str]] = [[] for _ in header]
            lines: list[int] = []
            for row in reader:
                line += 1
                if not any(c.strip() for c in row):
                    continue
                if len(row) != len(header):
                    _parse_batch(cells, header, lines)  # a bad value on an earlier line is reported first
                    raise InputError(f"CSV line {line} has {len(row)} values for {len(header)} columns")
                for j, c in enumerate(row):
                    cells[j].append(c)
                lines.append(line)
                if len(lines) >= size:
                    break
            if not lines:
                return
            rows_read += len(lines)
            if rows_read > MAX_ROWS:
                raise InputError(f"the CSV file has more than {MAX_ROWS:,} configurations")
            yield _parse_batch(cells, header, lines)
            if len(lines) < size:
                return

    return header, gen()


def _parse_batch(cells: list[list[str]], header: list[str], lines: list[int]) -> dict[str, "np.ndarray"]:
    """The columns of a batch; the first bad value in reading order raises (naming its line)."""
    from symtrans.base.numbers import parse_int

    try:
        return {h: _parse_cells(cells[j], h, lines) for j, h in enumerate(header)}
    except ValueError:
        for i, line in enumerate(lines):  # row by row, as a reader sees the file
            for j, h in enumerate(header):
                c = cells[j][i]
                v = parse_int(c, f"{h} on CSV line {line}")
                if v <= 0:
                    raise InputError(f"{h} on CSV line {line} must be a positive integer, not {c.strip()}") from None
        raise


def _parse_cells(cells: list[str], name: str, lines: list[int]) -> "np.ndarray":
    """One CSV column of a batch as exact positive integers (naming the line of a bad value)."""
    import numpy as np

    from symtrans.base.numbers import parse_int

    if all(_PLAIN.fullmatch(c) for c in cells):  # plain decimals below 10**18: NumPy parses them
        arr = np.array(cells, dtype=np.int64)
        bad = np.flatnonzero((arr <= 0) | (arr > MAX_USER_SIZE))
        if bad.size:
            i = int(bad[0])
            user_size(f"{name} on CSV line {lines[i]}", int(arr[i]))
        return arr
    values = []
    for c, line in zip(cells, lines):
        values.append(user_size(f"{name} on CSV line {line}", parse_int(c, f"{name} on CSV line {line}")))
    return _column(values)


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
        raise InputError(f"{path}: {e}") from None


def csv_file_batches(path: str, batch: int | None = BATCH):
    """``csv_batches`` of the file ``path``, read as ``read_csv_file`` reads it (a regular
    file of at most ``MAX_CSV_BYTES``, UTF-8 or UTF-16): returns (the header, an iterator
    of column dicts).  The text is held (at most the cap); the columns are built one
    batch at a time.

    Raises:
        ValueError: as ``read_csv_file``, each message prefixed with the file name (the
            header's problems at once; a row's, or no row at all, while iterating).
    """
    from symtrans.base.inputs import read_text

    text = read_text(path, "a CSV file", MAX_CSV_BYTES)
    try:
        header, batches = csv_batches(io.StringIO(text.removeprefix("\ufeff")), batch)
    except ValueError as e:
        raise InputError(f"{path}: {e}") from None
    del text  # the reader holds the only reference: the text goes when the batches are read

    def gen():
        seen = False
        try:
            for b in batches:
                seen = True
                yield b
        except ValueError as e:
            raise InputError(f"{path}: {e}") from None
        if not seen:
            raise InputError(f"{path}: the CSV file has no configurations (only a header)")

    return header, gen()


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
        out = io.StringIO()
        out.write(",".join(self.columns) + "\n")
        bar = _progress(len(self), progress, "writing")
        try:
            self.write_csv_rows(out.write, bar)
        finally:
            if bar is not None:
                bar.close()
        return out.getvalue()

    def write_csv_rows(self, write: Callable[[str], object], bar=None) -> None:
        """Pass the CSV rows (no header) to ``write`` as text, ``WRITE_ROWS`` rows at a time."""
        names = list(self.columns)
        fmt = ",".join(["%d"] * len(names)) + "\n"  # exact: the values are Python ints
        for lo in range(0, len(self), WRITE_ROWS):
            lists = [self.columns[k][lo : lo + WRITE_ROWS].tolist() for k in names]
            write("".join(map(fmt.__mod__, zip(*lists))))
            if bar is not None:
                bar.update(len(lists[0]))

    def to_json(self, model: str = "") -> str:
        """JSON text: the model, the column names, the notes and one object per configuration."""
        return json.dumps(
            {"model": model, "columns": list(self.columns), "notes": self.notes, "rows": list(self.rows())}, indent=1
        )

    def write_json_rows(self, write: Callable[[str], object], first: bool) -> None:
        """Pass the rows of ``to_json``'s "rows" list to ``write``, as ``to_json`` prints
        them (``first``: no separating comma before the first row)."""
        names = list(self.columns)
        keys = [json.dumps(k) for k in names]
        fmt = "  {\n" + ",\n".join(f"   {k}: %d" for k in keys) + "\n  }"
        for lo in range(0, len(self), WRITE_ROWS):
            lists = [self.columns[k][lo : lo + WRITE_ROWS].tolist() for k in names]
            text = ",\n".join(map(fmt.__mod__, zip(*lists)))
            if text:
                write(text if first else ",\n" + text)
                first = False


def stream(
    sweeper: "Sweeper",
    batches: Iterable[Mapping[str, "np.ndarray"]],
    out,
    fmt: str = "csv",
    model: str = "",
    total: int | None = None,
    progress: bool | None = None,
) -> list[str]:
    """Sweep ``batches`` one after another and write the result to the binary file
    ``out`` as CSV or JSON (the text of ``SweepResult.to_csv``/``to_json``): memory holds
    one batch, whatever the number of rows.  Returns the notes.

    Raises:
        ValueError: as ``sweep`` (no configurations, every configuration invalid, ...).
    """
    import tempfile

    bar = _progress(total or 0, progress)

    def write_to(f):
        return lambda text: f.write(text.encode("utf-8"))

    try:
        if fmt == "csv":
            write = write_to(out)
            header = False
            for batch in batches:
                result = sweeper.run(batch, bar)
                if not header:
                    write(",".join(result.columns) + "\n")
                    header = True
                result.write_csv_rows(write)
        else:  # JSON: the notes come before the rows, and are known after them
            with tempfile.TemporaryFile() as rows:
                write = write_to(rows)
                names = None
                for batch in batches:
                    result = sweeper.run(batch, bar)
                    result.write_json_rows(write, first=names is None)
                    names = list(result.columns)
                if names is not None and sweeper.rows_kept:
                    head = json.dumps(
                        {"model": model, "columns": names, "notes": sweeper.notes(), "rows": []}, indent=1
                    )
                    assert head.endswith('"rows": []\n}')
                    out.write(head[: -len("]\n}")].encode("utf-8") + b"\n")
                    rows.seek(0)
                    while True:
                        block = rows.read(1 << 20)
                        if not block:
                            break
                        out.write(block)
                    out.write(b"\n ]\n}\n")
    finally:
        if bar is not None:
            bar.close()
    if sweeper.rows_seen == 0:
        raise InputError("no configurations to sweep (an empty grid)")
    if sweeper.rows_kept == 0:
        sizes, msg = sweeper.first_error
        where = ", ".join(f"{k}={v}" for k, v in sizes.items())
        raise InputError(f"every configuration is invalid (e.g. {where}: {msg})")
    return sweeper.notes()


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
            raise InputError(f"unknown quantity {q!r}; valid: {', '.join(QUANTITIES)}")
    # Only evaluated, never shown: the unsimplified sums (equal in value) spare the simplification.
    return {
        COLUMN_NAMES[q]: quantity_expr(spec, q, mask, convention, memory_options, simplified=False) for q in quantities
    }


def _progress(total: int, enabled: bool | None, desc: str = "evaluating"):
    """A progress bar on stderr when it is a terminal (tqdm), else a no-op."""
    if enabled is None:
        enabled = total > PROGRESS_MIN_ROWS and sys.stderr.isatty()
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(
        total=total, unit="config", unit_scale=True, file=sys.stderr, leave=False, desc=f"symtrans sweep: {desc}"
    )


class Sweeper:
    """Exact evaluation of quantities over batches of configurations (see ``sweep``).

    Built once for a model, the names of the columns the batches will carry and the
    options; ``run(batch)`` evaluates one batch (a dict of equal-length columns) and
    returns its ``SweepResult``; ``notes()`` says what all the batches skipped.  The CLI
    streams a grid or a CSV file through one Sweeper, batch by batch.

    Raises (on construction): ValueError as ``sweep`` for the options.
    """

    def __init__(
        self,
        spec: Spec,
        names: Sequence[str],
        quantities: Sequence[str] | None = None,
        *,
        rules: Sequence = (),
        defaults: Mapping[str, int] | None = None,
        mask: str = "full",
        convention: str = "flops",
        memory_options: Mapping | None = None,
        invalid: str = "error",
    ) -> None:
        from symtrans.analysis.solve import _order, _tie_note, _tie_rule, check_lengths, length_ties

        if invalid not in ("error", "skip"):
            raise InputError(f"invalid must be error or skip, not {invalid!r}")
        names = list(names)
        rules = list(rules)
        _order(rules)  # duplicate and cyclic constraints are reported as the user wrote them
        for r in rules:
            if r.name in names:
                raise InputError(f"{r.name} is both a column and a constraint")
        # An encoder-decoder's L_src and L_tgt equal L unless a column, a rule or a fixed value gives them.
        check_lengths(spec, names + [r.name for r in rules] + list(defaults or {}))
        tie = length_ties(spec, set(names) | {r.name for r in rules} | set(spec.values) | set(defaults or {}))
        rules = _order([_tie_rule(r, tie) for r in rules])
        by_default = quantities is None
        if quantities is None:
            quantities = ["params"] + (["active_params"] if spec.is_moe else []) + ["flops", "training_flops", "memory"]
        # Sizes the spec lacks but a column or rule gives change the closed form's structure
        # (h_kv brings grouped-query attention, d_k an explicit head width): add them.
        # Their values here only mark presence (1 satisfies every divisibility); rows are checked below.
        extra = {k: 1 for k in names + [r.name for r in rules] if k in MODEL_SIZES and not spec.has(k)}
        if extra:
            try:
                spec = spec.replace(sizes=extra)
            except ValueError as e:
                raise InputError(f"these columns do not fit the model: {e}") from None
        # Fixed sizes: the spec's and the defaults, where no column or rule gives them (Python ints).
        fixed = dict(spec.values)
        if any(q in ("flops", "training_flops", "memory") for q in quantities):
            fixed.setdefault("B", 1)
        fixed.update(defaults or {})
        derived = {r.name for r in rules}
        self.fixed = {k: v for k, v in fixed.items() if k not in names and k not in derived}
        self.spec = spec
        self.names = names
        self.invalid = invalid
        self.rules = rules
        self.inputs = names + [r.name for r in rules]
        scalars = frozenset(self.fixed)
        from symtrans.base.budget import time_budget

        self.rule_values = [_RuleValues(r, scalars) for r in rules]
        self.dropped_note = None
        with time_budget("compiling the sweep's closed forms"):  # SymPy's work has no a-priori bound
            try:
                exprs = _quantity_exprs(spec, quantities, mask, convention, memory_options)
            except InputError as e:
                if not by_default or "memory" not in quantities:
                    raise
                # the default columns: memory refused for this model (LED's chunked window, LongT5's
                # blocks) leaves the other columns exact, so they are swept and the note says why
                quantities = [q for q in quantities if q != "memory"]
                exprs = _quantity_exprs(spec, quantities, mask, convention, memory_options)
                self.dropped_note = f"memory_bytes column left out: {e}"
            self.kernels = [_compiled(name, e.xreplace(tie), scalars) for name, e in exprs.items()]
        known = set(self.inputs) | set(self.fixed)
        for name, args in [(rv.rule.name, rv.args) for rv in self.rule_values] + [
            (k.name, k.args) for k in self.kernels
        ]:
            missing = [a for a in args if a not in known]
            if missing:
                raise InputError(f"{name} needs {', '.join(missing)}; give it in the grid, the CSV or with --set")
        # The Spec's row rules that these columns can break (the fixed sizes alone satisfy them).
        self.row_rules = [rr for rr in ROW_RULES if rr.applies(known) and any(n in self.inputs for n in rr.needs)]
        self.keys = [k for k in ("d_model", "h", "h_kv", "d_k", "k", "E") if k in known]
        # Sizes whose range depends on the options (``spec._validate_ranges``): the MoE layout
        # within N (N_dec), the global tokens within the encoder's L (L_src); checked once per
        # distinct value with the Spec's own check, the fixed ones with the given columns.
        ranged = (["N", "N_dec"] if "E" in known else []) + (["L", "L_src"] if spec.global_tokens else [])
        self.range_keys = [k for k in ranged if k in self.inputs]
        self.range_fixed = {k: self.fixed[k] for k in ranged if k in self.fixed}
        self.quantities = [k.name for k in self.kernels]
        self.kernel_args = {a for k in self.kernels for a in k.args}
        self.rows_seen = 0
        self.rows_kept = 0
        self.first_error: tuple[dict, str] | None = None
        self.workload_note = None
        if any(k.name in ("flops_forward", "flops_training") for k in self.kernels):
            shown = (
                ("B", "L", "L_src", "L_tgt") if (tie or spec.family != "encoder-decoder") else ("B", "L_src", "L_tgt")
            )
            self.workload_note = f"convention {convention}; mask {mask}; workload " + ", ".join(
                f"{k}={fixed[k]}" for k in shown if k in fixed and k not in self.inputs
            )
        self.tie_note = (
            _tie_note(tie) if tie and any(q in ("flops", "training_flops", "memory") for q in quantities) else None
        )

    def notes(self) -> list[str]:
        """The conventions used and the rows skipped over every batch so far."""
        out = [self.dropped_note] if self.dropped_note else []
        if self.first_error is not None and self.rows_kept < self.rows_seen:
            sizes, msg = self.first_error
            where = ", ".join(f"{k}={v}" for k, v in sizes.items())
            out.append(
                f"skipped {self.rows_seen - self.rows_kept:,} of {self.rows_seen:,} configurations that the "
                f"model rejects (e.g. {where}: {msg}); invalid='error' (--strict) makes this an error"
            )
        if self.workload_note:
            out.append(self.workload_note)
        if self.tie_note:
            out.append(self.tie_note)
        return out

    def run(self, columns: Mapping[str, "np.ndarray"], progress=None) -> SweepResult:
        """Evaluate one batch: ``columns`` maps each name given at construction to an
        equal-length array of sizes.  Returns its columns (inputs, derived sizes, then the
        quantities), without the notes.  ``progress``: a tqdm bar to advance, or None.

        Raises:
            ValueError: as ``sweep``.
        """
        import numpy as np

        cols = {k: _int_column(np.asarray(columns[k]), k) for k in self.names}
        lengths = {len(v) for v in cols.values()}
        if len(lengths) > 1:
            raise InputError("the columns have different lengths")
        n = lengths.pop() if lengths else 0
        step = _chunk_rows()
        outs = {k.name: np.empty(n, dtype=np.int64) for k in self.kernels}
        outs.update({r.name: np.empty(n, dtype=np.int64) for r in self.rules})
        width = max(
            [k.n_buffers for k in self.kernels] + [k.n_buffers for rv in self.rule_values for k in rv.kernels] + [0]
        )
        pool = [np.empty(min(step, n), dtype=np.int64) for _ in range(width)]  # temporaries, one chunk each
        fixed_tops = {k: _top(v) for k, v in self.fixed.items()}
        compact: dict[str, np.ndarray] | None = None  # the given columns without skipped rows
        w = 0  # rows written
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            m = hi - lo
            ins: dict = dict(self.fixed)
            for k, v in cols.items():
                ins[k] = v[lo:hi]
            # derived sizes first (the validation reads them), exactly; a row where a rule is
            # not a positive integer is an invalid configuration (as a candidate of ``solve``)
            rule_ok = None
            for rv in self.rule_values:
                buf, good = rv.values(ins, m, pool)
                if good is not None:
                    i = int(np.flatnonzero(~good)[0])
                    where = {a: int(ins[a]) if isinstance(ins[a], int) else int(ins[a][i]) for a in rv.args}
                    msg = f"the constraint {rv.rule.text()} gives {_rule_text(rv.rule, where)}, not a positive integer"
                    if self.invalid == "error":
                        raise InputError(f"invalid configuration ({_where(where)}): {msg}")
                    if self.first_error is None:
                        self.first_error = (where, msg)
                    rule_ok = good if rule_ok is None else rule_ok & good
                    buf[~good] = 1  # a placeholder: these rows are dropped below
                ins[rv.rule.name] = buf
            # the largest size of each column in the chunk (for the kernels' int64 check) and the
            # smallest (every size must be positive), one pass each
            tops = dict(fixed_tops)
            positive = True
            for k in self.inputs:
                x = ins[k]
                if not x.min() > 0:
                    positive = False
                if k in self.kernel_args:  # the kernels' int64 check reads the largest size
                    tops[k] = float(x.max()) if x.dtype != object else _top(x)
            ok = self._valid_rows(ins, m, positive, pool[0] if pool else None)
            if rule_ok is not None:
                ok = rule_ok if ok is None else ok & rule_ok
            self.rows_seen += m
            if ok is not None:
                if compact is None:  # the first skipped row: the given columns are copied from here on
                    compact = {k: _empty_like(cols[k], n) for k in self.names}
                    for k in self.names:
                        compact[k][:w] = cols[k][:w]
                idx = np.flatnonzero(ok)
                ins = {k: (v[idx] if k in self.inputs else v) for k, v in ins.items()}
                m = len(idx)
                tops = {k: _top(v) for k, v in ins.items()} if m else tops
            if compact is not None:
                for k in self.names:
                    if compact[k].dtype != object and ins[k].dtype == object:
                        compact[k] = compact[k].astype(object)
                    compact[k][w : w + m] = ins[k]
            for r in self.rules:  # derived columns, kept rows only
                if outs[r.name].dtype != object and ins[r.name].dtype == object:
                    outs[r.name] = outs[r.name].astype(object)
                outs[r.name][w : w + m] = ins[r.name]
            if m:
                for k in self.kernels:
                    if not k.run(ins, m, outs[k.name], w, tops, pool):
                        outs[k.name] = outs[k.name].astype(object)
                        k.run(ins, m, outs[k.name], w, tops)
            w += m
            self.rows_kept += m
            if progress is not None:
                progress.update(hi - lo)
        out: dict[str, np.ndarray] = {}
        for k in self.names:
            out[k] = cols[k] if compact is None else compact[k][:w]
        for r in self.rules:
            out[r.name] = outs[r.name][:w]
        for k in self.kernels:
            out[k.name] = outs[k.name][:w]
        return SweepResult(out, list(self.inputs), list(self.quantities), [])

    def _valid_rows(self, ins: dict, m: int, positive: bool, buf=None):
        """None when every row of the chunk is valid, else the boolean mask of valid rows
        (with ``invalid="error"``, the first invalid row raises instead).  ``positive``:
        every size of the chunk is known to be positive."""
        import numpy as np

        ok = None
        if not positive:
            for k in self.inputs:
                x = ins[k]
                if not (x > 0).all():
                    ok = (x > 0) if ok is None else ok & (x > 0)
        for rr in self.row_rules:
            # one array operation for the common case (int64 columns, no row breaking the rule)
            int64 = all(not isinstance(ins[n], np.ndarray) or ins[n].dtype.kind != "O" for n in (rr.a, rr.b))
            if int64 and buf is not None and not rr.broken(ins, buf[:m]):
                continue
            held = np.broadcast_to(np.asarray(rr.holds(ins), dtype=bool), (m,))
            if not held.all():
                ok = held.copy() if ok is None else ok & held
        if self.range_keys or self.range_fixed:
            held = self._in_range(ins, m)
            if held is not None:
                ok = held if ok is None else ok & held
        if ok is None:
            return None
        i = int(np.flatnonzero(~ok)[0])
        bad = {k: int(ins[k]) if isinstance(ins[k], int) else int(ins[k][i]) for k in self.keys}
        for k in self.range_keys:
            bad[k] = int(ins[k][i])
        bad.update(self.range_fixed)
        for k in self.inputs:
            if not int(ins[k][i]) > 0:
                bad[k] = int(ins[k][i])
        try:
            self.spec.check_sizes(bad, workload=True)  # the Spec's own message for the first invalid row
            msg = "the sizes break one of the model's size rules"  # pragma: no cover - the rules are the Spec's
        except ValueError as e:
            msg = str(e)
        if self.invalid == "error":
            raise InputError(f"invalid configuration ({_where(bad)}): {msg}")
        if self.first_error is None:
            self.first_error = (bad, msg)
        return ok

    def _in_range(self, ins: dict, m: int):
        """None when the option ranges hold on every row of the chunk (``range_keys``),
        else the mask of the rows where they do: ``Spec.check_sizes(workload=True)`` once
        per distinct combination of those sizes (a few distinct layer counts or lengths)."""
        import numpy as np

        if self.range_keys:
            uniq, inverse = _unique_rows([np.asarray(ins[k]) for k in self.range_keys])
        else:
            uniq, inverse = [()], np.zeros(m, dtype=np.int64)
        good = np.ones(len(uniq), dtype=bool)
        for j, row in enumerate(uniq):
            sizes = dict(zip(self.range_keys, row))
            if any(v <= 0 for v in sizes.values()):
                continue  # not positive: refused by the positivity check, with its own message
            sizes.update(self.range_fixed)
            try:
                self.spec.check_sizes(sizes, workload=True)
            except ValueError:
                good[j] = False
        return None if good.all() else good[inverse]


def _where(sizes: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def _tops(ins: Mapping, args: Sequence[str], memo: dict | None = None) -> dict[str, float]:
    """Each arg's largest magnitude in the chunk (shared by the kernels of one chunk)."""
    out = {}
    for a in args:
        if memo is not None and a in memo:
            out[a] = memo[a]
            continue
        out[a] = _top(ins[a])
        if memo is not None:
            memo[a] = out[a]
    return out


def _int_column(x: "np.ndarray", name: str) -> "np.ndarray":
    """A column of sizes as int64 (or Python ints past int64), refusing non-integers."""
    import numpy as np

    if x.dtype == np.int64 or x.dtype == object:
        return x
    if x.dtype.kind in "iu":
        if x.dtype.kind == "u" and x.size and int(x.max()) >= 2**63:
            return np.array([int(v) for v in x.tolist()], dtype=object)
        return x.astype(np.int64)
    if x.dtype == bool or x.dtype.kind not in "O":
        raise InputError(f"the column {name} must hold integers, not {x.dtype}")
    return x


def _empty_like(x: "np.ndarray", n: int) -> "np.ndarray":
    import numpy as np

    return np.empty(n, dtype=object if x.dtype == object else np.int64)


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
            MoE), forward and training FLOPs, and training memory in bytes (left out, with a
            note saying why, for a model whose memory is refused: LED, LongT5).
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
            (h not dividing d_model, k > E, a size that is not positive, ...).
        progress: show a progress bar (default: on a terminal, for long runs).

    Returns:
        A ``SweepResult`` whose values equal ``evaluate.exact`` row by row.

    Raises:
        ValueError: no configurations, an invalid row (with ``invalid="error"``), a
            quantity that needs a size no column gives, a non-integer count, or L_src /
            L_tgt for a model that is not an encoder-decoder.
    """
    import numpy as np

    cols = {k: np.asarray(v) for k, v in columns.items()}
    lengths = {len(v) for v in cols.values()}
    if len(lengths) > 1:
        raise InputError("the columns have different lengths")
    n = lengths.pop() if lengths else 0
    if n == 0:
        raise InputError("no configurations to sweep (an empty grid)")
    sweeper = Sweeper(
        spec,
        list(cols),
        quantities,
        rules=rules,
        defaults=defaults,
        mask=mask,
        convention=convention,
        memory_options=memory_options,
        invalid=invalid,
    )
    bar = _progress(n, progress)
    try:
        result = sweeper.run(cols, bar)
    finally:
        if bar is not None:
            bar.close()
    if sweeper.rows_kept == 0:
        sizes, msg = sweeper.first_error
        where = ", ".join(f"{k}={v}" for k, v in sizes.items())
        raise InputError(f"every configuration is invalid (e.g. {where}: {msg})")
    result.notes = sweeper.notes()
    return result
