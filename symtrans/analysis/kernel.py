"""Exact integer kernels generated from closed forms, for evaluating many configurations.

A closed form (parameters, FLOPs, bytes: a polynomial in the sizes with rational
coefficients, possibly with ``floor``/``ceiling`` and ``Min``/``Max``) becomes a Python
function of NumPy arrays that computes it exactly, in three steps:

1. **Lowering** (``lower``): the expression as ``num / den``, two polynomials with
   *integer* coefficients, computed by plain dictionary arithmetic on monomials (no
   ``sympy.expand``, ``together`` or ``simplify``: the closed form is only evaluated,
   never shown).  ``floor(p/q)`` becomes an exact floor division, ``ceiling(x)`` is
   ``-floor(-x)``, ``Min``/``Max`` of fractions compare numerators over one positive
   denominator: min(p1/q1, p2/q2) = min(p1*q2, p2*q1) / (q1*q2).
2. **Factoring** (``horner``): each polynomial in greedy multivariate Horner form: the
   integer content and the size common to every term are factored out, then the size
   that occurs in most terms is (x * (...) + (...)), recursively.  Llama's parameter
   count ``N*(3*d_ff*d + 4*d^2 + 2*d) + 2*V*d + d`` becomes ``d*(N*(4*d + 3*d_ff + 2) +
   2*V + 1)``: 9 array operations.  Equal subtrees are computed once (common
   subexpressions).
3. **Code generation** (``Kernel``): straight-line NumPy code with every temporary in a
   preallocated buffer of one chunk (rows the caller chooses, sized for the CPU cache), operations
   in place where a temporary dies; the last operation writes into the output column.
   Fixed sizes stay Python integers (no column is built for them).

Exactness:

* the *bound* (the factored form with every constant made positive, evaluated in
  float64 at the largest magnitude of each input, sizes >= 1) bounds every intermediate
  value; below 2^62 (a factor-2 margin under int64's 2^63, which also absorbs the float
  rounding) the chunk runs in int64;
* otherwise each row's own bound decides: rows at or above 2^62 run on NumPy ``object``
  arrays of Python integers, which cannot overflow (the column then holds Python ints);
* a division ``num / den`` must leave no remainder (a remainder means the sizes break a
  divisibility the formula assumes), and only denominators that are positive at every
  configuration are accepted (a polynomial in the sizes with positive coefficients).

Units: whatever the closed form counts (parameters, FLOPs, bytes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from symtrans.base.errors import InputError

INT64_SAFE = 2**62

# ---------------------------------------------------------------------------------
# polynomials: {monomial: int coefficient}; a monomial is a sorted tuple of (atom, exponent)
# where an atom is a size name (str) or an exact integer operation (a tuple node, below).

Poly = dict
ONE_MONO: tuple = ()


def _mono_mul(a: tuple, b: tuple) -> tuple:
    if not a:
        return b
    if not b:
        return a
    d = dict(a)
    for k, e in b:
        d[k] = d.get(k, 0) + e
    return tuple(sorted(((k, e) for k, e in d.items() if e), key=_atom_key))


def _atom_key(item) -> str:
    return repr(item[0])


def p_const(c: int) -> Poly:
    return {ONE_MONO: c} if c else {}


def p_atom(a) -> Poly:
    return {((a, 1),): 1}


def p_add(a: Poly, b: Poly) -> Poly:
    out = dict(a)
    for m, c in b.items():
        v = out.get(m, 0) + c
        if v:
            out[m] = v
        else:
            out.pop(m, None)
    return out


def p_scale(a: Poly, c: int) -> Poly:
    return {m: v * c for m, v in a.items()} if c else {}


def p_mul(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            m = _mono_mul(ma, mb)
            v = out.get(m, 0) + ca * cb
            if v:
                out[m] = v
            else:
                out.pop(m, None)
    return out


def _is_monomial(p: Poly) -> bool:
    return len(p) == 1


def _positive(p: Poly) -> bool:
    """Positive at every configuration: non-empty, positive coefficients, and only sizes
    (>= 1) as atoms with positive exponents."""
    return bool(p) and all(c > 0 and all(isinstance(a, str) and e > 0 for a, e in m) for m, c in p.items())


class Rat:
    """A rational function num/den of two integer polynomials; den positive."""

    __slots__ = ("num", "den")

    def __init__(self, num: Poly, den: Poly | None = None) -> None:
        self.num = num
        self.den = den if den is not None else p_const(1)

    def __add__(self, other: "Rat") -> "Rat":
        if self.den == other.den:
            return Rat(p_add(self.num, other.num), self.den)
        if _is_monomial(self.den) and _is_monomial(other.den):
            # the least common multiple of two monomials: lcm of the coefficients, max exponents
            (ma, ca), (mb, cb) = next(iter(self.den.items())), next(iter(other.den.items()))
            da, db = dict(ma), dict(mb)
            lcm_m = tuple(sorted(((k, max(da.get(k, 0), db.get(k, 0))) for k in set(da) | set(db)), key=_atom_key))
            lcm_c = ca * cb // math.gcd(ca, cb)
            fa = {_mono_div(lcm_m, ma): lcm_c // ca}
            fb = {_mono_div(lcm_m, mb): lcm_c // cb}
            return Rat(p_add(p_mul(self.num, fa), p_mul(other.num, fb)), {lcm_m: lcm_c})
        return Rat(p_add(p_mul(self.num, other.den), p_mul(other.num, self.den)), p_mul(self.den, other.den))

    def __mul__(self, other: "Rat") -> "Rat":
        return Rat(p_mul(self.num, other.num), p_mul(self.den, other.den))

    def reduced(self) -> "Rat":
        """Divide out the integer content shared by num and den, and a monomial den's
        atoms that divide every term of num (d_model*h_kv*h/h -> d_model*h_kv)."""
        if not self.num:
            return Rat({}, p_const(1))
        g = 0
        for c in list(self.num.values()) + list(self.den.values()):
            g = math.gcd(g, c)
        num, den = self.num, self.den
        if g > 1:
            num = {m: c // g for m, c in num.items()}
            den = {m: c // g for m, c in den.items()}
        if _is_monomial(den):
            (md, cd) = next(iter(den.items()))
            common = dict(md)
            for m in num:
                dm = dict(m)
                common = {k: min(e, dm.get(k, 0)) for k, e in common.items() if dm.get(k, 0) > 0}
            if common:
                cm = tuple(sorted(common.items(), key=_atom_key))
                num = {_mono_div(m, cm): c for m, c in num.items()}
                den = {_mono_div(md, cm): cd}
        return Rat(num, den)


def _mono_div(a: tuple, b: tuple) -> tuple:
    d = dict(a)
    for k, e in b:
        d[k] = d.get(k, 0) - e
    return tuple(sorted(((k, e) for k, e in d.items() if e), key=_atom_key))


# ---------------------------------------------------------------------------------
# lowering a SymPy expression


class NotExact(InputError):
    """The expression cannot be evaluated exactly with integer operations."""


def lower(expr) -> Rat:
    """``expr`` (a SymPy expression in the size symbols) as an exact ratio of integer
    polynomials.  Atoms are size names and exact integer operations on polynomials:
    ``("floordiv", p, q)``, ``("min", a, b)``, ``("max", a, b)`` (nodes of ``horner``).

    Raises:
        NotExact: a function other than floor, ceiling, Min and Max, a non-integer
            power, or a division by something that may change sign.
    """
    import sympy as sp

    memo: dict = {}

    def go(e) -> Rat:
        hit = memo.get(e)
        if hit is not None:
            return hit
        out = _go(e)
        memo[e] = out
        return out

    def _go(e) -> Rat:
        if e.is_Integer:
            return Rat(p_const(int(e)))
        if e.is_Rational:
            return Rat(p_const(int(e.p)), p_const(int(e.q)))
        if e.is_Symbol:
            return Rat(p_atom(e.name))
        if e.is_Add:
            acc = None
            for a in e.args:
                r = go(a)
                acc = r if acc is None else acc + r
            return acc.reduced()
        if e.is_Mul:
            acc = None
            for a in e.args:
                r = go(a)
                acc = r if acc is None else acc * r
            return acc.reduced()
        if e.is_Pow:
            if not (e.exp.is_Integer):
                raise NotExact(f"cannot evaluate {e} exactly: a non-integer power")
            base = go(e.base)
            k = int(e.exp)
            if k < 0:
                if not _positive(base.num):
                    raise NotExact(f"cannot evaluate {e} exactly: its denominator may change sign")
                base = Rat(base.den, base.num)
                k = -k
            acc = Rat(p_const(1))
            for _ in range(k):
                acc = acc * base
            return acc.reduced()
        if isinstance(e, (sp.floor, sp.ceiling)):
            r = go(e.args[0] if isinstance(e, sp.floor) else -e.args[0])
            if not _positive(r.den):
                raise NotExact(f"cannot evaluate {e} exactly: its denominator may change sign")
            fd = r.num if r.den == p_const(1) else {((("floordiv", horner(r.num), horner(r.den)), 1),): 1}
            return Rat(fd if isinstance(e, sp.floor) else p_scale(fd, -1))
        if isinstance(e, (sp.Min, sp.Max)):
            parts = [go(a) for a in e.args]
            for r in parts:
                if not _positive(r.den):
                    raise NotExact(f"cannot evaluate {e} exactly: its arguments' denominators may change sign")
            den = p_const(1)
            for r in parts:
                den = p_mul(den, r.den)
            scaled = []
            for i, r in enumerate(parts):
                f = p_const(1)
                for j, s in enumerate(parts):
                    if j != i:
                        f = p_mul(f, s.den)
                scaled.append(p_mul(r.num, f))
            op = "min" if isinstance(e, sp.Min) else "max"
            node = horner(scaled[0])
            for s in scaled[1:]:
                node = (op, node, horner(s))
            return Rat(p_atom(node), den).reduced()
        raise NotExact(f"cannot evaluate {e} exactly with integer operations")

    return go(expr)


# ---------------------------------------------------------------------------------
# greedy multivariate Horner form; nodes are hashable tuples (equal subtrees are shared)
#   ("var", name) | ("const", int) | ("add", a, b) | ("mul", a, b)
#   ("floordiv", p, q) | ("min", a, b) | ("max", a, b) | ("exactdiv", p, q)


def _leaf(atom) -> tuple:
    return ("var", atom) if isinstance(atom, str) else atom


def _mul(a: tuple, b: tuple) -> tuple:
    if a == ("const", 1):
        return b
    if b == ("const", 1):
        return a
    return ("mul", a, b)


def _add(a: tuple, b: tuple) -> tuple:
    if a == ("const", 0):
        return b
    if b == ("const", 0):
        return a
    return ("add", a, b)


def _power(node: tuple, e: int) -> tuple:
    out = node
    for _ in range(e - 1):
        out = ("mul", out, node)
    return out


def horner(p: Poly) -> tuple:
    """An evaluation tree of the integer polynomial ``p`` (greedy multivariate Horner)."""
    if not p:
        return ("const", 0)
    if len(p) == 1 and ONE_MONO in p:
        return ("const", p[ONE_MONO])
    g = 0
    for c in p.values():
        g = math.gcd(g, c)
    if all(c < 0 for c in p.values()):
        g = -g
    if g not in (0, 1):
        return _mul(("const", g), horner({m: c // g for m, c in p.items()}))
    # an atom common to every term, to its smallest power, comes out as a factor
    counts: dict = {}
    for m in p:
        for a, e in m:
            counts[a] = counts.get(a, 0) + 1
    common = [a for a, k in counts.items() if k == len(p)]
    if common:
        a = min(common, key=repr)
        e = min(dict(m)[a] for m in p)
        rest = {_mono_div(m, ((a, e),)): c for m, c in p.items()}
        return _mul(_power(_leaf(a), e), horner(rest))
    # the atom in most terms: a * (its terms / a) + (the others)
    a = max(counts, key=lambda k: (counts[k], _not_str(k), repr(k)))
    inner = {_mono_div(m, ((a, 1),)): c for m, c in p.items() if dict(m).get(a, 0) > 0}
    others = {m: c for m, c in p.items() if not dict(m).get(a, 0)}
    return _add(_mul(_leaf(a), horner(inner)), horner(others))


def _not_str(k) -> int:
    # ties: a size before an operation node (cheap factor first)
    return 1 if isinstance(k, str) else 0


def tree(expr) -> tuple:
    """The evaluation tree of a closed form: ``horner(num)``, divided exactly by
    ``horner(den)`` when the denominator is not 1."""
    r = lower(expr).reduced()
    if r.den == p_const(1):
        return horner(r.num)
    if not _positive(r.den):
        raise NotExact(f"cannot evaluate {expr} exactly: its denominator may change sign")
    return ("exactdiv", horner(r.num), horner(r.den))


def variables(node: tuple) -> set[str]:
    """The size names a tree reads."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n[0] == "var":
            out.add(n[1])
        elif n[0] != "const":
            stack.extend(n[1:])
    return out


def integer_functions(expr) -> tuple[tuple[str, ...], Callable, Callable]:
    """``expr`` as (argument names, num, den): two functions of Python ints, in exact
    integer arithmetic (floors as ``//``, ``min``, ``max``), with num / den = ``expr``
    and den > 0 at every configuration.  For one configuration at a time
    (``solve.Rule.value``), where a kernel's arrays would only cost.

    Raises:
        NotExact: as ``lower``, or a denominator that may change sign.
    """
    r = lower(expr).reduced()
    if not _positive(r.den):
        raise NotExact(f"cannot evaluate {expr} exactly: its denominator may change sign")
    num, den = horner(r.num), horner(r.den)
    args = tuple(sorted(variables(num) | variables(den)))
    names = {a: f"a{i}" for i, a in enumerate(args)}
    return args, _py_function(num, names), _py_function(den, names)


_PY_OPS = {"add": "{} + {}", "mul": "{} * {}", "floordiv": "{} // {}", "min": "min({}, {})", "max": "max({}, {})"}


def _py_function(node: tuple, names: Mapping[str, str]) -> Callable:
    """Straight-line Python code of a tree (one assignment per distinct node, so no depth
    limit of the parser applies), compiled: a function of the args in ``names``' order."""
    refs: dict = {}
    lines: list[str] = []
    stack = [(node, False)]
    while stack:  # post-order without recursion
        n, done = stack.pop()
        if n in refs:
            continue
        if n[0] == "var":
            refs[n] = names[n[1]]
        elif n[0] == "const":
            refs[n] = f"({n[1]!r})"
        elif not done:
            stack.append((n, True))
            stack.extend((c, False) for c in n[1:])
        else:
            refs[n] = f"t{len(lines)}"
            lines.append(f"    {refs[n]} = " + _PY_OPS[n[0]].format(refs[n[1]], refs[n[2]]))
    src = f"def f({', '.join(names.values())}):\n" + "\n".join(lines) + f"\n    return {refs[node]}\n"
    glb: dict = {}
    exec(compile(src, "<symtrans rule>", "exec"), glb)  # noqa: S102 - our own generated code
    return glb["f"]


# ---------------------------------------------------------------------------------
# code generation


def _bound_expr(node: tuple, names: Mapping[str, str], memo: dict) -> str:
    """Python source of an upper bound of |every intermediate| of ``node`` (floats)."""
    hit = memo.get(node)
    if hit is not None:
        return hit
    kind = node[0]
    if kind == "var":
        s = names[node[1]]
    elif kind == "const":
        s = repr(float(abs(node[1])))
    elif kind == "mul":
        s = f"({_bound_expr(node[1], names, memo)} * {_bound_expr(node[2], names, memo)})"
    else:  # add; and both operands of floordiv, min, max, exactdiv are evaluated: |result| <= |a| + |b|
        s = f"({_bound_expr(node[1], names, memo)} + {_bound_expr(node[2], names, memo)})"
    memo[node] = s
    return s


@dataclass
class Kernel:
    """A closed form compiled to exact NumPy code (see the module docstring).

    Attributes:
        name: the quantity's name (for messages).
        args: the size names it reads, in the order ``fn`` takes them.
        scalars: the names passed as Python ints (fixed sizes), not arrays.
        source: the generated Python source (for inspection and tests).
    """

    name: str
    args: tuple[str, ...]
    scalars: frozenset[str]
    source: str
    fn: Callable = field(repr=False)
    bound: Callable = field(repr=False)
    n_buffers: int = 0

    def run(
        self,
        ins: Mapping[str, object],
        n: int,
        out,
        lo: int = 0,
        tops: Mapping[str, float] | None = None,
        pool: list | None = None,
    ) -> bool:
        """Evaluate rows ``lo .. lo + n`` into ``out[lo : lo + n]`` (an int64 or object
        array); ``ins`` maps each arg to a length-``n`` array (the chunk) or a Python int;
        ``tops`` (optional) each arg's largest magnitude in the chunk, as a float; ``pool``
        (optional) int64 arrays of at least ``n`` values to use as temporaries.

        Returns False when some row needs Python integers and ``out`` is int64: nothing
        is written then, and the caller retries with an object array.

        Raises:
            ValueError: a division that leaves a remainder (naming the row's sizes).
        """
        import numpy as np

        xs = [ins[a] for a in self.args]
        top_list = [_magnitude(x) for x in xs] if tops is None else [tops[a] for a in self.args]
        if self.bound(*top_list) < INT64_SAFE:  # Python floats: an overflow is inf, never an error
            self._call(xs, n, out, lo, np.int64, pool)
            return True
        with np.errstate(over="ignore", invalid="ignore"):
            rows = np.broadcast_to(np.asarray(self.bound(*[_as_float(x) for x in xs]), dtype=np.float64), (n,))
        big = ~(rows < INT64_SAFE)  # also catches inf and nan
        if not big.any():
            self._call(xs, n, out, lo, np.int64)
            return True
        if out.dtype != object:
            return False
        small = ~big
        if small.any():
            idx = np.flatnonzero(small)
            tmp = np.empty(len(idx), dtype=np.int64)
            self._call([x if isinstance(x, int) else x[idx] for x in xs], len(idx), tmp, 0, np.int64)
            out[lo + idx] = tmp.astype(object)
        idx = np.flatnonzero(big)
        tmp = np.empty(len(idx), dtype=object)
        self._call(
            [x if isinstance(x, int) else np.array([int(v) for v in x[idx]], dtype=object) for x in xs],
            len(idx),
            tmp,
            0,
            object,
        )
        out[lo + idx] = tmp
        return True

    def _call(self, xs: list, n: int, out, lo: int, dtype, pool: list | None = None) -> None:
        import numpy as np

        if pool is not None and dtype is np.int64 and len(pool) >= self.n_buffers:
            bufs = [b[:n] for b in pool[: self.n_buffers]]
        else:
            bufs = [np.empty(n, dtype=dtype) for _ in range(self.n_buffers)]
        target = out[lo : lo + n]
        if target.dtype != dtype:
            tmp = np.empty(n, dtype=dtype)
            self.fn(*xs, tmp, bufs)
            target[...] = tmp.astype(target.dtype) if target.dtype == object else tmp
        else:
            self.fn(*xs, target, bufs)


def _magnitude(x) -> float:
    """The largest |value| of a Python int or an array, as a float (inf past float range)."""
    v = abs(x) if isinstance(x, int) else (max(abs(int(x.max())), abs(int(x.min()))) if x.size else 1)
    return float(v) if v < 2**1000 else float("inf")


def _as_float(x):
    import numpy as np

    if isinstance(x, int):
        return _magnitude(x)
    if x.dtype != object:
        return x.astype(np.float64)
    return np.array([float(v) if abs(v) < 2**1000 else float("inf") for v in x.tolist()], dtype=np.float64)


def compile_kernel(name: str, node: tuple, scalars: Sequence[str] = ()) -> Kernel:
    """Generate and compile the NumPy code of ``node`` (a ``tree``).

    ``scalars`` are the sizes given as Python ints (fixed for every row): operations on
    them alone run once per call in Python integers.
    """
    args = tuple(sorted(variables(node)))
    scalar_set = frozenset(a for a in args if a in set(scalars))
    names = {a: f"a{i}" for i, a in enumerate(args)}
    gen = _Gen(names, scalar_set)
    gen.plan(node)
    lines = gen.emit_root(node)
    bound_src = _bound_expr(node, names, {})
    params = ", ".join([names[a] for a in args] + ["out", "bufs"])
    src = [f"def kernel({params}):"]
    for i in range(gen.n_bufs):
        src.append(f"    b{i} = bufs[{i}]")
    src += ["    " + ln for ln in lines] or ["    pass"]
    src.append("")
    src.append(f"def bound({', '.join(names[a] for a in args)}):")
    src.append(f"    return {bound_src}")
    source = "\n".join(src) + "\n"
    import numpy as np

    glb: dict = {"np": np, "_remainder_error": _remainder_error, "_ARGS": args, "_NAME": name}
    exec(compile(source, f"<symtrans kernel {name}>", "exec"), glb)  # noqa: S102 - our own generated code
    return Kernel(
        name,
        args,
        scalar_set,
        source,
        glb["kernel"],
        glb["bound"],
        gen.n_bufs,
    )


def _remainder_error(name: str, args: tuple, xs: list, rem) -> None:
    import numpy as np

    i = int(np.flatnonzero(rem != 0)[0])
    vals = ", ".join(f"{a}={x if isinstance(x, int) else x[i]}" for a, x in zip(args, xs))
    raise InputError(f"{name} is not an integer at {vals}; check that the divisibility assumptions hold")


class _Gen:
    """Straight-line code for a tree: post-order, shared subtrees once, buffers reused
    when their value dies, in-place operations where possible."""

    def __init__(self, names: Mapping[str, str], scalars: frozenset[str]) -> None:
        self.names = names
        self.scalars = scalars
        self.uses: dict = {}
        self.order: list = []
        self.n_bufs = 0
        self._scalar_memo: dict = {}

    def plan(self, node: tuple) -> None:
        seen: set = set()

        def visit(n):
            self.uses[n] = self.uses.get(n, 0) + 1
            if n in seen:
                return
            seen.add(n)
            if n[0] not in ("var", "const"):
                for c in n[1:]:
                    visit(c)
                self.order.append(n)

        visit(node)

    def _is_scalar(self, n) -> bool:
        hit = self._scalar_memo.get(n)
        if hit is None:
            if n[0] == "const":
                hit = True
            elif n[0] == "var":
                hit = n[1] in self.scalars
            else:
                hit = all(self._is_scalar(c) for c in n[1:])
            self._scalar_memo[n] = hit
        return hit

    def emit_root(self, root: tuple) -> list[str]:
        lines: list[str] = []
        where: dict = {}  # node -> expression text (an arg, a constant, a scalar local or a buffer)
        free: list[int] = []
        left = dict(self.uses)
        scalar_locals = 0
        arglist = ", ".join(self.names.values())  # the arguments, in the order of _ARGS

        def ref(n) -> str:
            if n[0] == "var":
                return self.names[n[1]]
            if n[0] == "const":
                return repr(n[1])
            return where[n]

        def release(n) -> None:
            left[n] -= 1
            if left[n] == 0 and n in where and where[n].startswith("b") and n[0] not in ("var", "const"):
                free.append(int(where[n][1:]))

        def take() -> str:
            if free:
                return f"b{free.pop()}"
            self.n_bufs += 1
            return f"b{self.n_bufs - 1}"

        op_fn = {"add": "np.add", "mul": "np.multiply", "min": "np.minimum", "max": "np.maximum"}
        py_op = {"add": "{} + {}", "mul": "{} * {}", "min": "min({}, {})", "max": "max({}, {})", "floordiv": "{} // {}"}
        for n in self.order:
            kind, a, b = n
            is_root = n == root
            if self._is_scalar(n):
                if kind == "exactdiv":
                    lines.append(f"if ({ref(a)}) % ({ref(b)}): _remainder_error(_NAME, _ARGS, [{arglist}], np.ones(1))")
                    expr = f"{ref(a)} // {ref(b)}"
                else:
                    expr = py_op[kind].format(ref(a), ref(b))
                local = f"s{scalar_locals}"
                scalar_locals += 1
                lines.append(f"{local} = {expr}")
                where[n] = local
                release(a)
                release(b)
                if is_root:
                    lines.append(f"out[...] = {local}")
                continue
            if kind == "exactdiv":
                rem = take()
                lines.append(f"np.remainder({ref(a)}, {ref(b)}, out={rem})")
                lines.append(f"if {rem}.any(): _remainder_error(_NAME, _ARGS, [{arglist}], {rem})")
                free.append(int(rem[1:]))
                dest = "out" if is_root else None
                if dest is None:
                    dest = self._inplace(a, b, left, where) or take()
                lines.append(f"np.floor_divide({ref(a)}, {ref(b)}, out={dest})")
            else:
                fn = "np.floor_divide" if kind == "floordiv" else op_fn[kind]
                commutative = kind in ("add", "mul", "min", "max")
                if is_root:
                    dest = "out"
                else:
                    dest = self._inplace(a, b, left, where, commutative) or take()
                x, y = ref(a), ref(b)
                if dest == x and kind in ("add", "mul"):
                    lines.append(f"{dest} {'+' if kind == 'add' else '*'}= {y}")
                elif dest == y and kind in ("add", "mul"):
                    lines.append(f"{dest} {'+' if kind == 'add' else '*'}= {x}")
                else:
                    lines.append(f"{fn}({x}, {y}, out={dest})")
            where[n] = dest
            # release the operands (a buffer reused in place is now the result's)
            for c in (a, b):
                left[c] -= 1
                if left[c] == 0 and c in where and where[c] != dest and where[c].startswith("b"):
                    free.append(int(where[c][1:]))
        if root[0] in ("var", "const"):
            lines.append(f"out[...] = {ref(root)}")
        return lines

    def _inplace(self, a, b, left, where, commutative: bool = False) -> str | None:
        """A buffer of an operand whose value dies here (it can hold the result)."""
        for c in (a, b) if commutative else (a,):
            if c in where and where[c].startswith("b") and left[c] == 1:
                return where[c]
        return None
