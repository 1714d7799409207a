"""Solve a closed form for a size: what d_model gives 7B parameters?

The model's closed form (parameters, forward or training FLOPs, or memory in bytes) is
a polynomial in its sizes.  ``solve`` fixes every size but one, ties other sizes to it
with *rules* (``d_ff=4*d_model`` typed by the user, or Llama's d_ff rule), and

1. solves the *relaxed* equation (floors and ceilings dropped) symbolically with SymPy,
   giving the symbolic solution and its real root;
2. walks the valid integers around that root and evaluates the exact closed form at
   each, returning the nearest valid configurations on both sides of the target
   (``below``: the largest valid value whose count is at most the target, ``above``:
   the smallest whose count is at least the target; both are the same when a value
   hits the target exactly).

A value is *valid* when it is a multiple of the step (``multiple_of``, or by default h
for d_model when the head width is d_model/h, 2h with rotary positions, times the
denominators of the rules), every rule gives a positive integer, the resulting Spec
validates (h divides d_model, h_kv divides h, ...), and with rotary positions the
head width is even (RoPE rotates pairs of features).  Counts are assumed to grow with the size solved for,
which holds for every closed form symtrans builds (all its coefficients are positive).

``chinchilla`` is the compute-optimal planner of Hoffmann et al. 2022.

Units: parameters; FLOPs (2 per multiply-accumulate); bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Callable, Mapping

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.engine import symbols as S
from symtrans.engine.evaluate import exact
from symtrans.engine.spec import Spec

QUANTITIES = ("params", "active_params", "flops", "training_flops", "memory")
UNITS = {
    "params": "parameters",
    "active_params": "parameters",
    "flops": "FLOPs",
    "training_flops": "FLOPs",
    "memory": "bytes",
}
MAX_SCAN = 20_000

LLAMA_SOURCE = (
    "Meta llama/model.py FeedForward.__init__ (Touvron et al. 2023): hidden = int(2*4*dim/3); "
    "hidden = int(ffn_dim_multiplier*hidden) if given; rounded up to a multiple of multiple_of"
)


# ---------------------------------------------------------------------------------
# Llama's d_ff rule


def llama_ffn_dim(d_model: int, multiple_of: int = 256, ffn_dim_multiplier: float | None = None) -> int:
    """The feed-forward width Llama derives from d_model (features).

    Follows Meta's ``llama/model.py`` (``FeedForward.__init__``, Llama 1/2/3) step by
    step: ``hidden = int(2 * (4 * d_model) / 3)``; if ``ffn_dim_multiplier`` is given,
    ``hidden = int(ffn_dim_multiplier * hidden)`` (in floating point, as Meta does);
    then ``hidden`` is rounded up to a multiple of ``multiple_of``.
    Llama-2-7B (4096, 256) -> 11008; 13B (5120, 256) -> 13824; 70B (8192, 4096, 1.3)
    -> 28672; Llama-3-8B (4096, 1024, 1.3) -> 14336.

    Raises:
        ValueError: if d_model or multiple_of is not a positive integer, or the
            multiplier is not positive.
    """
    for name, v in (("d_model", d_model), ("multiple_of", multiple_of)):
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise InputError(f"{name} must be a positive integer, not {v!r}")
    hidden = (8 * d_model) // 3  # int(2 * 4 * d_model / 3) for positive d_model, without float error
    if ffn_dim_multiplier is not None:
        if not ffn_dim_multiplier > 0:
            raise InputError(f"ffn_dim_multiplier must be positive, not {ffn_dim_multiplier!r}")
        hidden = int(float(ffn_dim_multiplier) * hidden)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


def llama_ffn_expr(d_model: sp.Expr, multiple_of: int = 256, ffn_dim_multiplier: float | None = None) -> sp.Expr:
    """``llama_ffn_dim`` as a SymPy expression (floor/ceiling; the multiplier as an exact decimal)."""
    hidden = sp.floor(sp.Rational(8, 3) * d_model)
    if ffn_dim_multiplier is not None:
        hidden = sp.floor(sp.Rational(Fraction(str(ffn_dim_multiplier))) * hidden)
    return multiple_of * sp.ceiling(hidden / multiple_of)


# ---------------------------------------------------------------------------------
# rules: sizes derived from other sizes


@dataclass(frozen=True)
class Rule:
    """A size computed from other sizes while solving (e.g. ``d_ff = 4*d_model``).

    Attributes:
        name: the size it sets.
        expr: its exact SymPy expression (may hold floor/ceiling), for display.
        relaxed: the expression without floors and ceilings, for the symbolic solve.
        compute: exact evaluator from the other sizes' values; ``None`` evaluates
            ``expr`` exactly and requires an integer.
        source: where the rule comes from.
    """

    name: str
    expr: sp.Expr
    relaxed: sp.Expr
    compute: Callable[[Mapping[str, int]], int] | None = None
    source: str = "user constraint"

    def value(self, values: Mapping[str, int]) -> int | None:
        """The rule's integer value at ``values``, or None when it is not a positive integer."""
        if self.compute is not None:
            v = self.compute(values)
        else:
            fast = self._integer_form
            if fast is not None:
                args, num, den = fast
                try:
                    xs = [values[a] for a in args]
                except KeyError:
                    return None
                n, d = num(*xs), den(*xs)
                if d == 0 or n % d:
                    return None
                v = n // d
            else:
                e = self.expr.xreplace({S.SYMBOLS[n]: sp.Integer(x) for n, x in values.items() if n in S.SYMBOLS})
                if e.free_symbols or not e.is_Integer:
                    return None
                v = int(e)
        return v if v > 0 else None

    @cached_property
    def _integer_form(self):
        """(argument names, numerator, denominator): the rule as two Python functions with
        integer coefficients (floors as exact floor divisions; ``kernel.integer_functions``),
        so that ``value`` is exact integer arithmetic, thousands of times faster than SymPy
        substitution.  None for a rule with a root (d_model**0.5) or a denominator that
        may change sign, which SymPy evaluates."""
        from symtrans.analysis import kernel as K

        try:
            return K.integer_functions(self.expr)
        except K.NotExact:
            return None

    def text(self) -> str:
        return f"{self.name} = {sp.sstr(self.expr)}"


def _relax(e: sp.Expr) -> sp.Expr:
    return e.replace(lambda x: isinstance(x, (sp.floor, sp.ceiling)), lambda x: x.args[0])


def keep_rule(text: str) -> Rule:
    """A rule from user text ``NAME=EXPRESSION`` (parsed by ``safe_parse``, never evaluated).

    Raises:
        ValueError: bad syntax, an unknown symbol, or anything but arithmetic on symbols.
    """
    from symtrans.base.safe_parse import parse_assignment

    name, expr = parse_assignment(text, S.SYMBOLS)
    return Rule(name, expr, _relax(expr))


def llama_rule(multiple_of: int = 256, ffn_dim_multiplier: float | None = None) -> Rule:
    """d_ff by Llama's rule (``llama_ffn_dim``); relaxed to (8/3)·multiplier·d_model.

    Raises:
        ValueError: a multiplier that is not a finite number in (0, 1000].
    """
    if ffn_dim_multiplier is not None and not (math.isfinite(ffn_dim_multiplier) and 0 < ffn_dim_multiplier <= 1000):
        raise InputError(f"ffn_dim_multiplier must be a number in (0, 1000], not {ffn_dim_multiplier!r}")
    expr = llama_ffn_expr(S.d_model, multiple_of, ffn_dim_multiplier)
    mult = sp.Rational(Fraction(str(ffn_dim_multiplier))) if ffn_dim_multiplier is not None else sp.Integer(1)
    return Rule(
        "d_ff",
        expr,
        sp.Rational(8, 3) * mult * S.d_model,
        lambda v: llama_ffn_dim(v["d_model"], multiple_of, ffn_dim_multiplier),
        LLAMA_SOURCE,
    )


def _order(rules: list[Rule]) -> list[Rule]:
    names = [r.name for r in rules]
    if len(set(names)) != len(names):
        raise InputError(f"more than one constraint sets {', '.join(sorted({n for n in names if names.count(n) > 1}))}")
    done: list[Rule] = []
    pending = list(rules)
    while pending:
        ready = [r for r in pending if not ({str(s) for s in r.expr.free_symbols} & {p.name for p in pending})]
        if not ready:
            raise InputError(f"the constraints on {', '.join(r.name for r in pending)} depend on each other in a cycle")
        done += ready
        pending = [r for r in pending if r not in ready]
    return done


# ---------------------------------------------------------------------------------
# quantities


def quantity_expr(
    spec: Spec,
    quantity: str,
    mask: str = "full",
    convention: str = "flops",
    memory_options: Mapping | None = None,
    simplified: bool = True,
) -> sp.Expr:
    """The closed form of ``quantity`` for ``spec``'s structure.

    ``params``/``active_params``: parameters.  ``flops``: forward FLOPs at batch B and
    L tokens; ``training_flops``: forward + backward (``symtrans.flops.flops_expr``,
    backward = 2 x forward, Kaplan et al. 2020 §2.1).  An encoder-decoder reads
    L_src source and L_tgt target tokens: its FLOPs and memory keep the symbols
    L_src and L_tgt (``length_ties`` ties the ones not given to L, as ``symtrans
    flops`` does).  ``memory``: ``total_bytes`` of ``symtrans.memory.memory_terms``
    at B sequences of L tokens (L_tgt target and L_src source tokens for an
    encoder-decoder; ``memory_options`` are passed on: dtype, optimizer, mode, ...),
    rounded up to whole bytes when the formula has fractions (4-bit weights, an
    inference margin).  ``simplified=False`` returns FLOPs as the unsimplified sum over
    the steps (``flops.flops_sum``, equal in value): for code that only evaluates it.

    Raises:
        ValueError: an unknown quantity, convention, mask or memory option.
    """
    from symtrans.engine.architectures import build

    if quantity not in QUANTITIES:
        raise InputError(f"quantity must be one of {', '.join(QUANTITIES)}, not {quantity!r}")
    if quantity in ("params", "active_params"):
        m = build(spec)
        return m.params if quantity == "params" else m.active_params
    if quantity == "memory":
        from symtrans.accounting.memory import memory_terms

        opts = dict(memory_options or {})
        if spec.family == "encoder-decoder":
            opts.setdefault("src_len", S.L_src)
            seq = S.L_tgt
        else:
            seq = S.L
        e = memory_terms(spec, batch=S.B, seq_len=seq, **opts)["total_bytes"]
        _, den = sp.fraction(sp.together(e))
        return sp.ceiling(e) if den != 1 else e
    from symtrans.accounting.flops import flops_expr, flops_sum

    mode = "training" if quantity == "training_flops" else "forward"
    return (flops_expr if simplified else flops_sum)(spec, mode, convention, mask)


LENGTHS = ("L_src", "L_tgt")


def length_ties(spec: Spec, given) -> dict[sp.Symbol, sp.Symbol]:
    """Substitutions that tie the encoder-decoder lengths not in ``given`` to L.

    An encoder-decoder reads L_src source and L_tgt target tokens; each one the user
    does not give (as a value, a sweep column, a rule or the unknown solved for)
    equals L, the default of ``symtrans flops`` (``cli.flops_values``).  Other
    families have no L_src or L_tgt: the result is empty.  Units: tokens.
    """
    if spec.family != "encoder-decoder":
        return {}
    given = set(given)
    return {S.SYMBOLS[n]: S.L for n in LENGTHS if n not in given}


def check_lengths(spec: Spec, names) -> None:
    """Reject L_src or L_tgt among ``names`` for a model that is not an encoder-decoder.

    Raises:
        ValueError: naming the first such length (only encoder-decoders read a source
            and a target sequence; the others read L tokens).
    """
    for n in names:
        if n in LENGTHS and spec.family != "encoder-decoder":
            raise InputError(
                f"{n} is a length of encoder-decoder models; this {spec.family} model reads L tokens: use L"
            )


def _tie_rule(r: "Rule", tie: Mapping) -> "Rule":
    from dataclasses import replace

    return replace(r, expr=r.expr.xreplace(tie), relaxed=r.relaxed.xreplace(tie)) if tie else r


def _tie_note(tie: Mapping) -> str | None:
    names = [str(k) for k in tie]
    if not names:
        return None
    return f"{' and '.join(names)} not given: {'both equal' if len(names) == 2 else 'equals'} L"


# ---------------------------------------------------------------------------------
# solving


@dataclass(frozen=True)
class Candidate:
    """One valid configuration: the value of the unknown, the exact count, all sizes."""

    value: int
    count: int
    sizes: dict[str, int]


@dataclass(frozen=True)
class SolveResult:
    """The answer of ``solve`` (see the module docstring).

    Attributes:
        unknown, quantity, unit, target: what was solved, for which budget.
        closed_form: the quantity's closed form with the rules substituted.
        equation: the relaxed univariate equation (an ``sp.Eq``).
        solutions: its real positive symbolic solutions.
        root: the real root, as a Float of 30 digits (None when no positive root); for
            walking and tests, never printed: the output shows ``root_located``.
        root_located: the same root exactly: rational value (if it is rational) and the
            integers around it (``Root``).
        below, above: the nearest valid configurations on both sides (Candidate or None).
        step: the spacing of valid values walked.
        rules: the rules applied, as text.
        notes: what was assumed (relaxations, defaults).
        context: when the unknown is a sequence length whose nearest value below the
            target passes the model's maximum positions (``L_max``, max_position_embeddings):
            (that limit, what it is, the Candidate at the limit or None); else None.
    """

    unknown: str
    quantity: str
    unit: str
    target: int
    closed_form: sp.Expr
    equation: sp.Eq
    solutions: tuple[sp.Expr, ...]
    root: sp.Float | None
    below: Candidate | None
    above: Candidate | None
    step: int
    rules: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    root_located: Root | None = None
    context: tuple[int, str, Candidate | None] | None = None

    @property
    def exact(self) -> int | None:
        """The value of the unknown that hits the target exactly, if one does."""
        if self.below is not None and self.below.count == self.target:
            return self.below.value
        return None

    def to_dict(self) -> dict:
        """JSON-ready: exact integers, expressions as SymPy strings."""

        def cand(c: Candidate | None):
            return (
                None
                if c is None
                else {"value": c.value, "count": c.count, "difference": c.count - self.target, "sizes": c.sizes}
            )

        return {
            "unknown": self.unknown,
            "quantity": self.quantity,
            "unit": self.unit,
            "target": self.target,
            "closed_form": sp.sstr(self.closed_form),
            "equation": f"{sp.sstr(self.equation.lhs)} = {sp.sstr(self.equation.rhs)}",
            "solutions": [sp.sstr(s) for s in self.solutions],
            # the root exactly: its rational value (int or "p/q") when it has one, and the
            # integers around it; never a float with decimals it does not have
            "root": None
            if self.root_located is None or self.root_located.exact is None
            else _exact_text(self.root_located.exact),
            "root_between": None if self.root_located is None else [self.root_located.floor, self.root_located.ceiling],
            "exact": self.exact,
            "below": cand(self.below),
            "above": cand(self.above),
            "step": self.step,
            "rules": list(self.rules),
            "notes": list(self.notes),
            "context": None
            if self.context is None
            else {"limit": self.context[0], "what": self.context[1], "at_limit": cand(self.context[2])},
        }

    def _repr_markdown_(self) -> str:
        from symtrans.base.numbers import grouped

        lines = [
            f"**Solve for `{self.unknown}`** with {self.quantity} = {grouped(self.target)} {self.unit}",
            "",
            f"- equation: ${sp.latex(self.equation)}$",
        ]
        if self.solutions:
            lines.append(f"- symbolic solution: ${sp.latex(S.SYMBOLS[self.unknown])} = {sp.latex(self.solutions[0])}$")
        if self.root_located is not None:
            lines.append(f"- real root: {self.root_located.text()}")
        for label, c in (("below", self.below), ("above", self.above)):
            if c is not None:
                lines.append(f"- {label}: `{self.unknown}` = {c.value}: {grouped(c.count)} {self.unit}")
        return "\n".join(lines)


def _positive_real(s: sp.Expr) -> bool:
    """Whether the closed-form root ``s`` is a positive real number.

    Cubic and quartic formulas write real roots with complex radicals (casus irreducibilis),
    whose numeric value carries a vanishing imaginary part (0.e-44*I): that part is
    compared with the real part, never the complex number with zero.
    """
    v = sp.N(s, 30)
    re, im = (sp.re(v), sp.im(v))
    if not (re.is_Number and im.is_Number):
        return False
    return abs(im) <= sp.Float("1e-25") * max(abs(re), 1) and re > 0


@dataclass(frozen=True)
class Root:
    """A positive real root of the relaxed equation, exactly located.

    Attributes:
        approx: its value to 30 significant digits (for walking; never printed as a count).
        exact: the root itself when it is rational (an Integer or Rational), else None.
        floor, ceiling: the integers around it (equal when the root is an integer),
            established by exact sign changes of the polynomial.
    """

    approx: sp.Float
    exact: sp.Rational | None
    floor: int
    ceiling: int

    def text(self) -> str:
        """'4096', '12288/5 (between 2457 and 2458)' or 'between 2457 and 2458 (irrational)'."""
        if self.exact is not None and self.exact.q == 1:
            return str(self.exact)
        if self.exact is not None:
            return f"{self.exact.p}/{self.exact.q} (between {self.floor} and {self.ceiling})"
        return f"between {self.floor} and {self.ceiling} (irrational)"


def _locate(poly: sp.Poly, approx: sp.Float, rational: set) -> Root:
    """The exact floor and ceiling of the root of ``poly`` near ``approx``.

    ``poly`` has rational coefficients; its sign at integers is exact.  The candidate
    floor comes from ``approx`` and is moved until the sign changes across it.
    """
    a = int(sp.floor(approx))
    exact = next((q for q in rational if q.p // q.q == a), None)
    if exact is not None:
        return Root(approx, exact, a, a if exact.q == 1 else a + 1)
    sign = lambda n: sp.sign(poly.eval(sp.Integer(n)))  # noqa: E731 - exact integer evaluation
    for lo in (a, a - 1, a + 1):  # the 30-digit approximation is off by at most one
        if lo >= 0 and sign(lo) * sign(lo + 1) < 0:
            return Root(approx, None, lo, lo + 1)
    return Root(approx, None, a, a + 1)  # a double root (no sign change): the approximation decides


def _positive_roots(f: sp.Expr, x: sp.Symbol) -> tuple[list[sp.Expr], list[Root]]:
    """Symbolic and exactly located positive real roots of f(x) = 0 (f rational in x)."""
    num, den = sp.fraction(sp.together(f))
    x_real = sp.Symbol(x.name, positive=True)  # solve over the reals; integrality comes later
    g = sp.expand(num.xreplace({x: x_real}))
    sols: list[sp.Expr] = []
    try:
        poly = sp.Poly(g, x_real)
    except sp.PolynomialError:
        poly = None
    if poly is not None and not poly.domain.is_QQ and not poly.domain.is_ZZ:
        poly = None  # irrational coefficients (a rule with a root): no exact polynomial
    if poly is not None and poly.degree() <= 4:
        try:
            sols = [s for s in sp.solve(g, x_real) if _positive_real(s)]
        except NotImplementedError:
            sols = []
    roots: list[Root] = []
    if poly is not None and poly.degree() >= 1:
        from mpmath.libmp.libhyper import NoConvergence

        try:
            found = poly.nroots(n=30, maxsteps=200)
        except NoConvergence:  # huge coefficients (budgets near 1e30) need more working digits
            try:
                found = poly.nroots(n=80, maxsteps=400)
            except NoConvergence:
                raise InputError("the equation's roots could not be found numerically; try a smaller budget") from None
        # Rational roots exactly: the linear factors over the rationals.
        rational = {
            -sp.Rational(fac.all_coeffs()[1], fac.all_coeffs()[0])
            for fac, _ in poly.factor_list()[1]
            if fac.degree() == 1
        }
        for r in found:
            re, im = sp.re(r), sp.im(r)
            if abs(im) <= sp.Float("1e-20") * max(abs(re), 1) and re > 0:
                approx = sp.Float(re, 30)
                if den.xreplace({x: approx}) != 0:
                    roots.append(_locate(poly, approx, {q for q in rational if q > 0}))
    sols = [s.xreplace({x_real: x}) for s in sols]
    return sols, sorted(roots, key=lambda r: r.approx)


def _exact_text(q: sp.Rational):
    return int(q) if q.q == 1 else f"{q.p}/{q.q}"


def _rotary_ok(spec: Spec, vals: Mapping[str, int]) -> bool:
    """Rotary positions rotate pairs of features: the head width d_k must be even
    (Su et al. 2021 §3.2; transformers' RoPE validation rejects an odd head_dim)."""
    if spec.positional != "rotary":
        return True
    if "d_k" in vals:
        return vals["d_k"] % 2 == 0
    return vals["d_model"] % (2 * vals["h"]) == 0


def _auto_step(spec: Spec, unknown: str, rules: list[Rule]) -> int:
    step = 1
    x = S.SYMBOLS[unknown]
    if unknown == "d_model" and not spec.has("d_k") and "h" not in {r.name for r in rules}:
        step = spec.size("h") if spec.has("h") else 1
        if spec.positional == "rotary":
            step *= 2
    for r in rules:
        if r.compute is None:
            for term in sp.Add.make_args(sp.expand(r.expr)):
                c, _ = term.as_coeff_Mul()
                if x in term.free_symbols and isinstance(c, sp.Rational):
                    step = math.lcm(step, int(c.q))
    return step


def solve(
    spec: Spec,
    unknown: str,
    target: int,
    quantity: str = "params",
    *,
    rules: list[Rule] | None = None,
    multiple_of: int | None = None,
    workload: Mapping[str, int] | None = None,
    mask: str = "full",
    convention: str = "flops",
    memory_options: Mapping | None = None,
    max_scan: int = MAX_SCAN,
) -> SolveResult:
    """Solve ``quantity(spec with unknown = x) = target`` for the integer x.

    Args:
        spec: the model; its value of ``unknown`` (if any) is ignored.
        unknown: a size symbol, e.g. ``"d_model"``, ``"N"`` or ``"L"``.
        target: the budget, in the quantity's unit (parameters, FLOPs or bytes).
        quantity: one of ``QUANTITIES`` (see ``quantity_expr``).
        rules: sizes tied to others (``keep_rule``, ``llama_rule``).
        multiple_of: valid values are multiples of this (default: see the module docstring).
        workload: values of B and L (and others) for FLOPs and memory budgets (ignored
            for parameters); B defaults to 1, L to the spec's L.
        mask: how causal attention scores count (``full``, ``causal``, ``half``).
        convention: FLOP convention (``symtrans.conventions``), for FLOP budgets.
        memory_options: passed to ``memory.memory_terms`` for memory budgets.

    Returns:
        A ``SolveResult`` with the symbolic solution, the real root and the nearest
        valid configurations on both sides.

    Raises:
        ValueError: unknown symbol or quantity, a non-positive target, a quantity that
            does not depend on the unknown, a rule for the unknown itself, or an
            unsatisfiable target (no valid value gives at most the target).
        BudgetExceeded: (a ValueError) the work ran past ``base.budget.SECONDS`` of CPU time.
    """
    from symtrans.base.budget import time_budget

    with time_budget(f"solving for {unknown}"):  # SymPy's work has no useful a-priori bound
        return _solve(
            spec,
            unknown,
            target,
            quantity,
            rules=rules,
            multiple_of=multiple_of,
            workload=workload,
            mask=mask,
            convention=convention,
            memory_options=memory_options,
            max_scan=max_scan,
        )


def _solve(
    spec: Spec,
    unknown: str,
    target: int,
    quantity: str = "params",
    *,
    rules: list[Rule] | None = None,
    multiple_of: int | None = None,
    workload: Mapping[str, int] | None = None,
    mask: str = "full",
    convention: str = "flops",
    memory_options: Mapping | None = None,
    max_scan: int = MAX_SCAN,
) -> SolveResult:
    """``solve`` without the time budget."""
    if unknown not in S.SYMBOLS:
        raise InputError(f"unknown symbol {unknown!r}; known: {', '.join(S.SYMBOLS)}")
    if isinstance(target, bool) or not isinstance(target, int) or target <= 0:
        raise InputError(f"the target must be a positive integer, not {target!r}")
    if multiple_of is not None and (
        isinstance(multiple_of, bool) or not isinstance(multiple_of, int) or multiple_of <= 0
    ):
        raise InputError(f"multiple_of must be a positive integer, not {multiple_of!r}")
    rules = list(rules or [])
    _order(rules)  # duplicate and cyclic constraints are reported as the user wrote them
    if unknown in {r.name for r in rules}:
        raise InputError(f"{unknown} is the unknown; it cannot also be set by a constraint")
    x = S.SYMBOLS[unknown]
    unit = UNITS.get(quantity, "")
    expr = quantity_expr(spec, quantity, mask, convention, memory_options)

    # Fixed values: the spec's sizes and the workload, minus the unknown and the ruled sizes.
    ruled = {r.name for r in rules}
    fixed = {n: v for n, v in spec.values.items() if n != unknown and n not in ruled}
    if quantity in ("flops", "training_flops", "memory"):
        if unknown != "B" and "B" not in ruled:  # B = 1 unless it is what is solved for
            fixed.setdefault("B", 1)
        fixed.update({n: v for n, v in (workload or {}).items() if n != unknown and n not in ruled})
    # An encoder-decoder's L_src and L_tgt equal L unless given (fixed, ruled or the unknown).
    check_lengths(spec, [unknown, *ruled])
    tie = length_ties(spec, set(fixed) | ruled | {unknown})
    expr = expr.xreplace(tie)
    rules = _order([_tie_rule(r, tie) for r in rules])

    # Exact closed form with the rules substituted (display), and the relaxed one (solve).
    exact_sub = {S.SYMBOLS[r.name]: r.expr for r in rules}
    relax_sub = {S.SYMBOLS[r.name]: r.relaxed for r in rules}
    closed = expr
    relaxed = expr
    for _ in range(len(rules) + 1):
        closed = closed.xreplace(exact_sub)
        relaxed = relaxed.xreplace(relax_sub)
    fixed_sub = {S.SYMBOLS[n]: sp.Integer(v) for n, v in fixed.items()}
    missing = relaxed.xreplace(fixed_sub).free_symbols - {x}  # before any expansion: it is cheap
    if missing:
        raise InputError(f"no value for {', '.join(sorted(map(str, missing)))}; give it with --set NAME=VALUE")
    f = sp.expand(_relax(relaxed.xreplace(fixed_sub)))
    if x not in f.free_symbols:
        raise InputError(f"{quantity} of this model does not depend on {unknown}")
    from symtrans.engine.simplify import closed_form

    closed = closed_form(closed)
    sols, roots = _positive_roots(f - target, x)
    located = roots[-1] if roots else None
    root = located.approx if located else None

    step = multiple_of or _auto_step(spec, unknown, rules)
    univariate = expr.xreplace(fixed_sub)

    def evaluate(value: int) -> Candidate | None:
        vals = dict(fixed)
        vals[unknown] = value
        for r in rules:
            v = r.value(vals)
            if v is None:
                return None
            vals[r.name] = v
        try:  # the Spec's checks at this workload (divisibility, MoE layout, global tokens)
            spec.check_sizes(vals, workload=True)
        except ValueError:
            return None
        if not _rotary_ok(spec, vals):
            return None
        try:
            count = exact(univariate, vals)
        except ValueError:
            return None
        return Candidate(value, count, {n: vals[n] for n in sorted(vals)})

    start = step * max(1, int(sp.floor(root / step))) if root is not None else step
    below = above = None
    # Walk down from the root to a valid value at or under the target.
    v, scanned = start, 0
    while v >= step and scanned < max_scan:
        c = evaluate(v)
        scanned += 1
        if c is not None and c.count <= target:
            below = c
            break
        v -= step
    # Walk up from there to the first valid value at or over the target.
    v = below.value + step if below is not None else step
    if below is not None and below.count == target:
        above = below
    scanned = 0
    while above is None and scanned < max_scan:
        c = evaluate(v)
        scanned += 1
        if c is not None:
            if c.count <= target:
                below = c
            if c.count >= target:
                above = c
        v += step
    if below is None:
        from symtrans.base.numbers import grouped

        if above is not None:
            raise InputError(
                f"no valid {unknown} gives at most {grouped(target)} {unit}: the smallest valid "
                f"{unknown}, {above.value}, already gives {grouped(above.count)}"
            )
        raise InputError(
            f"no valid {unknown} found within {max_scan} candidates (step {step}); "
            "check the constraints and --multiple-of"
        )
    if above is None:
        raise InputError(f"no valid {unknown} above {below.value} reaches the target within {max_scan} candidates")
    notes = []
    if any(isinstance(a, (sp.floor, sp.ceiling)) for a in sp.preorder_traversal(closed)):
        notes.append(
            "the symbolic solution drops floors and ceilings (rounding rules); the candidates use exact values"
        )
    if quantity in ("flops", "training_flops", "memory"):
        notes.append("workload: " + ", ".join(f"{n}={fixed[n]}" for n in ("B", "L", "L_src", "L_tgt") if n in fixed))
        if _tie_note(tie):
            notes.append(_tie_note(tie))
    context = _context(spec, unknown, below.value, evaluate)
    if context is not None:
        notes.append(context_warning(unknown, below.value, context[0], context[1]))
    return SolveResult(
        unknown=unknown,
        quantity=quantity,
        unit=unit,
        target=target,
        closed_form=closed,
        equation=sp.Eq(f, target, evaluate=False),  # an integer unknown can make SymPy decide it False
        solutions=tuple(sols),
        root=root,
        root_located=located,
        below=below,
        above=above,
        step=step,
        rules=tuple(r.text() + ("" if r.source == "user constraint" else f"  ({r.source})") for r in rules),
        notes=tuple(notes),
        context=context,
    )


# The table of positions each length reads (an encoder-decoder's own stacks first).
_POSITION_ROWS = {"L": ("L_max",), "L_src": ("L_src_max", "L_max"), "L_tgt": ("L_tgt_max", "L_max")}


def _context(spec: Spec, unknown: str, value: int, evaluate) -> tuple[int, str, Candidate | None] | None:
    """(limit, what it is, candidate at the limit) when a solved length passes the model's
    maximum positions, else None.  A learned or stored table has no row past ``L_max``
    (the model cannot run longer, as ``flops`` warns and ``deploy`` refuses); a rotary,
    relative or ALiBi model was trained up to ``L_max`` (max_position_embeddings) and
    needs context extension beyond it (issue 25.2)."""
    rows = next((r for r in _POSITION_ROWS.get(unknown, ()) if r in spec.values), None)
    if rows is None or value <= spec.values[rows]:
        return None
    limit = spec.values[rows]
    kind = spec.decoder_positions if unknown == "L_tgt" and spec.family == "encoder-decoder" else spec.positional
    if kind in ("learned", "sinusoidal-table"):
        what = f"the {'learned' if kind == 'learned' else 'stored sinusoidal'} position table's {rows} rows"
        what += ": the model cannot run past it"
    else:
        what = f"the model's maximum positions {rows} (max_position_embeddings): longer needs context extension"
    return limit, what, evaluate(limit)


def context_warning(unknown: str, value: int, limit: int, what: str) -> str:
    """One sentence: the solved length passes the model's context (``SolveResult.context``)."""
    return f"{unknown} = {value:,} exceeds {limit:,}, {what}"


# ---------------------------------------------------------------------------------
# compute-optimal planning

CHINCHILLA_SOURCE = (
    "Hoffmann et al. 2022, 'Training Compute-Optimal Large Language Models' (Chinchilla): "
    "parameters and tokens should grow in equal proportion, about 20 tokens per parameter "
    "(Table 3; Chinchilla itself: 70B parameters, 1.4T tokens); C = 6ND from Kaplan et al. 2020 §2.1"
)
CHINCHILLA_CAVEATS = (
    "20 tokens per parameter is a rounded reading of the paper's fits; its three approaches disagree "
    "(Approach 3's exponents 0.46/0.54 give more parameters at large C), and Besiroglu et al. 2024 "
    "found errors in the Approach 3 fit.",
    "C = 6ND counts only the weight matmuls (2 forward + 4 backward FLOPs per parameter per token): "
    "the attention score matmuls (12·d_model·L per layer per token in training, PaLM App. B) and "
    "element-wise work are left out.",
    "Chinchilla's N counts all parameters including embeddings; Kaplan et al. 2020 exclude them.",
    "Compute-optimal means cheapest to train, not to serve: models meant for heavy inference are "
    "usually trained on far more tokens (Llama 2 7B: 2T tokens, about 300 per parameter).",
)


@dataclass(frozen=True)
class Plan:
    """A compute-optimal split of a training budget.

    Attributes:
        compute: the budget C (FLOPs).
        tokens_per_param: the ratio r = D/N used.
        params: N = sqrt(C / (6 r)) (parameters), exact as a SymPy expression.
        tokens: D = r N (tokens).
    """

    compute: int
    tokens_per_param: sp.Rational
    params: sp.Expr
    tokens: sp.Expr
    source: str = CHINCHILLA_SOURCE
    caveats: tuple[str, ...] = CHINCHILLA_CAVEATS

    def to_dict(self) -> dict:
        """JSON-ready: the exact expressions, the nearest integers and the integers around
        each value (exact integer square roots; no float)."""
        n_sq = self.params**2  # C / (6 r), an exact rational
        d_sq = self.tokens**2
        return {
            "compute": self.compute,
            "tokens_per_param": str(self.tokens_per_param),
            "params": sp.sstr(self.params),
            "params_between": _sqrt_between(n_sq),
            "params_rounded": _sqrt_rounded(n_sq),
            "tokens": sp.sstr(self.tokens),
            "tokens_between": _sqrt_between(d_sq),
            "tokens_rounded": _sqrt_rounded(d_sq),
            "source": self.source,
            "caveats": list(self.caveats),
        }


def _sqrt_floor(x: sp.Rational) -> int:
    """floor(sqrt(x)) of a non-negative rational, exactly: isqrt(floor(x))."""
    return math.isqrt(int(x.p // x.q))


def _sqrt_between(x: sp.Rational) -> list[int]:
    """[floor, ceiling] of sqrt(x) (equal when x is a perfect square)."""
    lo = _sqrt_floor(x)
    return [lo, lo if lo * lo == x else lo + 1]


def _sqrt_rounded(x: sp.Rational) -> int:
    """sqrt(x) rounded to the nearest integer (halves up), exactly: n + 1 when (n + 1/2)^2 <= x."""
    n = _sqrt_floor(x)
    return n + 1 if (n + sp.Rational(1, 2)) ** 2 <= x else n


def chinchilla(compute: int, tokens_per_param: int | str | Fraction = 20) -> Plan:
    """Compute-optimal parameters N and tokens D for a budget C under C = 6ND and D = r N.

    From C = 6 N (r N): N = sqrt(C / (6 r)), D = r N (Hoffmann et al. 2022; 6ND from
    Kaplan et al. 2020 §2.1).  At C = 5.88e23 and r = 20, N = 7e10 and D = 1.4e12
    (Chinchilla).  Units: FLOPs in, parameters and tokens out (exact expressions).

    Raises:
        ValueError: a non-positive budget or ratio, or a split that leaves less than one
            parameter or one token (a budget too small for the ratio).
    """
    if isinstance(compute, bool) or not isinstance(compute, int) or compute <= 0:
        raise InputError(f"the compute budget must be a positive integer number of FLOPs, not {compute!r}")
    text = str(tokens_per_param).strip()
    if len(text) > 64:
        raise InputError(f"tokens per parameter must be a number such as 20, not a {len(text)}-character text")
    try:
        r = sp.Rational(Fraction(text))
    except (TypeError, ValueError, ZeroDivisionError):
        raise InputError(f"tokens per parameter must be a positive number, not {tokens_per_param!r}") from None
    if r <= 0:
        raise InputError(f"tokens per parameter must be positive, not {tokens_per_param}")
    n_sq = sp.Integer(compute) / (6 * r)  # N**2; D**2 = r**2 N**2
    if _sqrt_rounded(n_sq) < 1 or _sqrt_rounded(r**2 * n_sq) < 1:
        few_params = _sqrt_rounded(n_sq) < 1
        if few_params:
            fix = "raise --compute" + (" or lower --tokens-per-param" if r > 20 else "")
        else:
            fix = "raise --compute" + (" or raise --tokens-per-param" if r < 20 else "")
        raise InputError(
            f"C = {compute:,} FLOPs at {text} tokens per parameter leaves less than one "
            f"{'parameter' if few_params else 'training token'} (N = sqrt(C / (6 r)), D = r N): {fix}"
        )
    n = sp.sqrt(n_sq)
    return Plan(compute=compute, tokens_per_param=r, params=n, tokens=r * n)
