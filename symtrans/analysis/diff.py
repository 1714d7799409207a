"""Compare two models (or one model under two conventions) term by term.

``diff(a, b)`` walks both Cost trees, pairs their derivation Steps by component path
and label, and reports for each pair the formula on each side, both values and the
difference B - A, symbolically and as a number.  The difference of a Step splits
exactly into

* a *structural* part: B's formula minus A's formula, both at B's sizes (a bias that
  only B has, a gated FFN against a plain one), a closed form in the symbols; and
* a *size* part: A's formula at B's sizes minus at A's sizes (V = 30522 against 30000);
  a symbol only A has keeps A's value,

so that the rows add up exactly to the difference of the totals.  Rows are grouped into
named terms (``category``: attention biases, token embedding, ...), which is how a
hand count's gap to the real implementation is explained.

Quantities: ``params`` (parameters), ``active_params``, ``flops`` (forward, or training
= forward + backward, under a convention of ``symtrans.conventions`` and a mask).

Example (Devlin et al. 2019; article 003's hand count): BERT-base counted with
V = 30000, without attention biases, token types, embedding LayerNorm or pooler bias
gives 109,040,640; ``transformers`` BertModel has 109,482,240; the five terms of the
diff add up to 441,600.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Mapping

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.engine.cost import ATTENTION, Cost, Node
from symtrans.engine.evaluate import exact_rational
from symtrans.engine.roles import HEADS, Role
from symtrans.engine.simplify import closed_form
from symtrans.engine.spec import Spec

QUANTITIES = ("params", "active_params", "flops")


@dataclass(frozen=True)
class Side:
    """One side of a diff: a label, the Spec, and how to count.

    Attributes:
        label: what the user typed (a preset, a variant ``PRESET:NAME=VALUE,...``, a file).
        spec: the model.
        convention: FLOP convention name (``conventions.CONVENTIONS``); FLOPs only.
        mask: ``full`` | ``causal`` | ``half`` (FLOPs only).
        mode: ``forward`` | ``training`` (FLOPs only; training = 3 x forward).
    """

    label: str
    spec: Spec
    convention: str = "flops"
    mask: str = "full"
    mode: str = "forward"


@dataclass(frozen=True)
class DiffRow:
    """One derivation Step compared (A or B may lack it).

    ``a_expr``/``b_expr`` include the Step's multiplicity (e.g. N for a layer); values
    are exact (int, or Fraction for MACs of odd counts).
    """

    path: tuple[str, ...]
    label: str
    category: str
    a_expr: sp.Expr | None
    b_expr: sp.Expr | None
    a_value: int | Fraction
    b_value: int | Fraction
    structural: sp.Expr
    structural_value: int | Fraction
    size_value: int | Fraction

    @property
    def delta(self) -> int | Fraction:
        """B - A, in the quantity's unit (= structural_value + size_value)."""
        return self.b_value - self.a_value


@dataclass(frozen=True)
class DiffResult:
    """The comparison of two sides (see the module docstring).

    Attributes:
        a, b: the sides; quantity and unit.
        a_total, b_total: exact totals; ``symbolic``: closed form of B's total minus A's.
        rows: the Steps whose values differ (B - A != 0).
        size_changes: size name -> (A's value, B's value) where they differ.
    """

    a: Side
    b: Side
    quantity: str
    unit: str
    a_total: int | Fraction
    b_total: int | Fraction
    symbolic: sp.Expr
    rows: tuple[DiffRow, ...]
    size_changes: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)
    structural_total: int | Fraction = 0

    @property
    def delta(self) -> int | Fraction:
        return self.b_total - self.a_total

    def by_category(self) -> list[tuple[str, int | Fraction, sp.Expr]]:
        """(term, B - A, structural closed form) per category, largest first; sums to ``delta``."""
        sums: dict[str, list] = {}
        for r in self.rows:
            s = sums.setdefault(r.category, [0, sp.Integer(0)])
            s[0] += r.delta
            s[1] += r.structural
        out = [(c, v, closed_form(e)) for c, (v, e) in sums.items() if v != 0]
        return sorted(out, key=lambda t: -abs(t[1]))

    def term_splits(self) -> list[tuple[str, int | Fraction, sp.Expr, int | Fraction, int | Fraction]]:
        """(term, B - A, structural closed form, its value, size effect) per category.

        The structural closed form is B's formula minus A's at *equal* sizes, so its
        value is taken at the split's middle point (B's sizes, A's for symbols only A
        has); the size effect is the rest, so ``value + size effect == B - A``.  A
        formula is never printed beside a number it does not evaluate to (issue 25.1).
        """
        sums: dict[str, list] = {}
        for r in self.rows:
            s = sums.setdefault(r.category, [0, 0, 0])
            s[0] += r.delta
            s[1] += r.structural_value
            s[2] += r.size_value
        closed = {c: e for c, _, e in self.by_category()}
        out = [(c, v, closed[c], sv, zv) for c, (v, sv, zv) in sums.items() if v != 0]
        return sorted(out, key=lambda t: -abs(t[1]))

    @property
    def symbolic_value(self) -> int | Fraction:
        """``symbolic`` evaluated at the split's middle point (B's sizes, A's for symbols only A has)."""
        return self.structural_total

    def by_component(self, depth: int = 1) -> list[tuple[str, int | Fraction]]:
        """(component path to ``depth`` levels below the model, B - A), in tree order."""
        sums: dict[str, int | Fraction] = {}
        for r in self.rows:
            key = " / ".join(r.path[1 : 1 + depth]) or r.path[0]
            sums[key] = sums.get(key, 0) + r.delta
        return [(k, v) for k, v in sums.items() if v != 0]

    def to_dict(self) -> dict:
        """JSON-ready: exact integers (fractions as strings), expressions as SymPy strings."""

        def num(v):
            return v if isinstance(v, int) else str(v)

        return {
            "a": self.a.label,
            "b": self.b.label,
            "quantity": self.quantity,
            "unit": self.unit,
            "a_total": num(self.a_total),
            "b_total": num(self.b_total),
            "difference": num(self.delta),
            "symbolic_difference": sp.sstr(self.symbolic),
            "size_changes": {k: list(v) for k, v in self.size_changes.items()},
            "symbolic_difference_value": num(self.symbolic_value),
            "terms": [
                {
                    "term": c,
                    "difference": num(v),
                    "symbolic": sp.sstr(e),
                    "symbolic_value": num(sv),
                    "size_effect": num(zv),
                }
                for c, v, e, sv, zv in self.term_splits()
            ],
            "rows": [
                {
                    "component": " / ".join(r.path[1:]),
                    "step": r.label,
                    "term": r.category,
                    "a": None if r.a_expr is None else sp.sstr(r.a_expr),
                    "b": None if r.b_expr is None else sp.sstr(r.b_expr),
                    "a_value": num(r.a_value),
                    "b_value": num(r.b_value),
                    "difference": num(r.delta),
                    "structural": sp.sstr(r.structural),
                    "structural_value": num(r.structural_value),
                    "size_effect": num(r.size_value),
                }
                for r in self.rows
            ],
        }

    def text(self) -> str:
        """A plain-text report: totals, the terms, then every differing Step."""
        g = _fmt_value
        lines = [
            f"A: {self.a.label}{_side_note(self.a, self.quantity)}: {g(self.a_total)} {self.unit}",
            f"B: {self.b.label}{_side_note(self.b, self.quantity)}: {g(self.b_total)} {self.unit}",
            f"B - A: {g(self.delta)} {self.unit}",
            f"  symbolic (same sizes): {sp.sstr(self.symbolic)} = {g(self.symbolic_value)} at B's sizes",
        ]
        if self.size_changes:
            lines.append(
                "  sizes: " + ", ".join(f"{k} {_opt(a)} -> {_opt(b)}" for k, (a, b) in self.size_changes.items())
            )
        if not self.rows:
            lines.append("  no component differs")
            return "\n".join(lines)
        # Each term splits into the formula's change at equal sizes (printed with its value
        # at B's sizes) and the effect of the sizes that changed (issue 25.1).
        lines.append("terms (B - A = at equal sizes + from sizes):")
        splits = self.term_splits()
        width = max(len(c) for c, *_ in splits) if splits else 10
        for c, v, e, sv, zv in splits:
            parts = []
            if e != 0:
                parts.append(f"{sp.sstr(e)} = {g(sv)} at B's sizes")
            if zv != 0:
                parts.append(f"{g(zv)} from sizes" if not parts or zv > 0 else f"- {g(-zv)} from sizes")
            lines.append(
                f"  {c:<{width}}  {g(v):>22}   "
                + " ".join(p if i == 0 or p.startswith("- ") else "+ " + p for i, p in enumerate(parts))
            )
        lines.append("components (A -> B, each formula at its own side's sizes):")
        for r in self.rows:
            where = " / ".join(r.path[1:]) or r.path[0]
            a = "-" if r.a_expr is None else f"{sp.sstr(r.a_expr)} = {g(r.a_value)}"
            b = "-" if r.b_expr is None else f"{sp.sstr(r.b_expr)} = {g(r.b_value)}"
            lines.append(f"  {where}: {r.label}: {a} -> {b}: {g(r.delta)}")
        return "\n".join(lines)

    def markdown(self) -> str:
        """A Markdown table of the terms and the differing Steps (labels escaped: they are user text)."""
        from symtrans.base.escape import markdown_escape as md

        g = _fmt_value
        out = [
            f"**{md(self.b.label)}** − **{md(self.a.label)}** ({self.quantity}): {g(self.b_total)} − {g(self.a_total)} "
            f"= **{g(self.delta)}** {self.unit}",
            "",
            f"Symbolic difference at equal sizes: ${sp.latex(self.symbolic)}$ = {g(self.symbolic_value)} at B's sizes",
            "",
        ]
        if self.size_changes:
            out += [
                "Sizes: " + ", ".join(f"`{k}` {_opt(a)} → {_opt(b)}" for k, (a, b) in self.size_changes.items()),
                "",
            ]
        out += [
            "| term | B − A | closed form at equal sizes | its value at B's sizes | from sizes |",
            "|---|---:|---|---:|---:|",
        ]
        out += [f"| {md(c)} | {g(v)} | ${sp.latex(e)}$ | {g(sv)} | {g(zv)} |" for c, v, e, sv, zv in self.term_splits()]
        out += ["", "| component | step | A | B | B − A |", "|---|---|---|---|---:|"]
        for r in self.rows:
            a = "—" if r.a_expr is None else f"${sp.latex(r.a_expr)}$ = {g(r.a_value)}"
            b = "—" if r.b_expr is None else f"${sp.latex(r.b_expr)}$ = {g(r.b_value)}"
            out.append(f"| {md(' / '.join(r.path[1:]))} | {md(r.label)} | {a} | {b} | {g(r.delta)} |")
        return "\n".join(out)

    _repr_markdown_ = markdown


def _opt(v) -> str:
    return "absent" if v is None else f"{v:,}"


def _fmt_value(v) -> str:
    return f"{v:,}" if isinstance(v, int) else str(v)


def _side_note(s: Side, quantity: str) -> str:
    if quantity != "flops":
        return ""
    return f" [{s.mode}, convention {s.convention}, mask {s.mask}]"


def category(node: Node) -> str:
    """The named term a step belongs to (``handcounts.category``; attention-score matmuls
    and the softmax apart)."""
    from symtrans.catalog.handcounts import category as hand_category

    if node.step.kind == ATTENTION:
        return "attention score matmuls"
    if node.step.role == Role.SOFTMAX:
        return "softmax"
    return hand_category(node)


def _step_quantity(quantity: str, side: Side):
    """A function (node) -> the step's per-instance count under ``side``'s convention."""
    if quantity == "params":
        return lambda node: node.step.params
    if quantity == "active_params":
        return lambda node: node.step.active_params
    from symtrans.accounting.flops import _step_cost
    from symtrans.engine.conventions import BACKWARD_MULTIPLIER, convention

    conv = convention(side.convention)
    factor = 1 + BACKWARD_MULTIPLIER if side.mode == "training" else 1

    def q(node):
        if not conv.logits and node.within(*HEADS):
            return sp.Integer(0)
        return factor * _step_cost(node.step, conv)

    return q


def _total(quantity: str, side: Side) -> sp.Expr:
    from symtrans.engine.architectures import build

    if quantity == "params":
        return build(side.spec).params
    if quantity == "active_params":
        return build(side.spec).active_params
    from symtrans.accounting.flops import flops_expr

    return flops_expr(side.spec, side.mode, side.convention, side.mask)


def _values(spec: Spec, workload: Mapping[str, int]) -> dict[str, int]:
    """The sizes of one side: the model's, and for FLOPs (``workload`` has B) the lengths
    of ``engine.workload.resolve_workload`` (the rule every command uses); L_src/L_tgt
    given in ``workload`` win."""
    v = {**workload, **spec.values}
    if "B" not in workload or "L" not in v:
        return v  # parameters, or FLOPs without a length (refused where the count needs one)
    from symtrans.engine.workload import resolve_workload

    v.update(resolve_workload(spec, workload["B"], workload.get("L")).values(spec))
    v.update({k: x for k, x in workload.items() if k in ("L_src", "L_tgt")})
    # a one-stack side still gives L_src = L_tgt = L: the split's middle point evaluates an
    # encoder-decoder's terms at the other side's one length
    v.setdefault("L_src", v["L"])
    v.setdefault("L_tgt", v["L"])
    return v


def _num(e: sp.Expr, values: Mapping[str, int]) -> int | Fraction:
    r = exact_rational(e, values)
    return int(r) if r.q == 1 else Fraction(int(r.p), int(r.q))


def diff(a: Side, b: Side, quantity: str = "params", workload: Mapping[str, int] | None = None) -> DiffResult:
    """Compare side ``a`` with side ``b`` Step by Step (B - A).

    Args:
        a, b: the two sides (``Side``; ``parse_side`` builds one from user text).
        quantity: ``params``, ``active_params`` or ``flops``.
        workload: B and L for FLOPs (B defaults to 1, L to each model's L); L_src and
            L_tgt default to L.

    Returns:
        A ``DiffResult`` whose rows add up exactly to ``b_total - a_total``.

    Raises:
        ValueError: an unknown quantity, convention, mask or mode, or a FLOP count
            without a sequence length.
    """
    from symtrans.engine.architectures import Workload, build

    if quantity not in QUANTITIES:
        raise InputError(f"quantity must be one of {', '.join(QUANTITIES)}, not {quantity!r}")
    for s in (a, b):
        if s.mode not in ("forward", "training"):
            raise InputError(f"mode must be forward or training, not {s.mode!r}")
    wl_values = dict(workload or {})
    if quantity == "flops":
        wl_values.setdefault("B", 1)
    va, vb = _values(a.spec, wl_values), _values(b.spec, wl_values)
    vab = {**va, **vb}  # B's sizes, and A's for symbols only A has (the split's middle point)
    steps: dict[tuple, list] = {}
    for side_i, side in enumerate((a, b)):
        tree: Cost = build(side.spec, Workload(mask=side.mask)) if quantity == "flops" else build(side.spec)
        q = _step_quantity(quantity, side)
        seen: dict[tuple, int] = {}
        # Steps pair up by what they are (blocks, role, bias, factor), never by label;
        # the k-th step of the same kind on each side pairs with the k-th.
        for (path, _, _), node in zip(tree.walk(), tree.nodes()):
            s = node.step
            key0 = (node.blocks, s.role, s.bias, s.factor)
            seen[key0] = seen.get(key0, 0) + 1
            entry = steps.setdefault((*key0, seen[key0]), [None, None, node, path])
            entry[side_i] = node.multiplicity * q(node)
            # Shown under the smaller of the two sides' (path, label), so that diff(a, b)
            # and diff(b, a) name every pair alike.
            if (path, s.label) < (entry[3], entry[2].step.label):
                entry[2], entry[3] = node, path
    rows: list[DiffRow] = []
    zero = sp.Integer(0)
    for ea, eb, node, path in steps.values():
        label = node.step.label
        xa, xb = (ea if ea is not None else zero), (eb if eb is not None else zero)
        a_val, b_val = _num(xa, va), _num(xb, vb)
        if xa == 0 and xb == 0:
            continue
        structural = closed_form(xb - xa)
        s_val = _num(structural, vab) if structural != 0 else 0
        size_val = (_num(xa, vab) - a_val) if xa != 0 else 0
        if a_val == b_val and structural == 0:
            continue
        rows.append(DiffRow(path, label, category(node), ea, eb, a_val, b_val, structural, s_val, size_val))
    ta, tb = _total(quantity, a), _total(quantity, b)
    a_total, b_total = _num(ta, va), _num(tb, vb)
    residual = (b_total - a_total) - sum((r.delta for r in rows), 0)
    if residual != 0:
        # Convention-level terms outside the Steps (e.g. Chinchilla's one-hot embedding matmul).
        ra = closed_form(ta - sp.Add(*[e[0] for e in steps.values() if e[0] is not None]))
        rb = closed_form(tb - sp.Add(*[e[1] for e in steps.values() if e[1] is not None]))
        label = "terms outside the components"
        if quantity == "flops":
            from symtrans.engine.conventions import convention

            if convention(a.convention).embedding_matmul or convention(b.convention).embedding_matmul:
                label = "embedding lookups as one-hot matmuls (Chinchilla App. F)"
        ra_v, rb_v = _num(ra, va), _num(rb, vb)
        rows.append(
            DiffRow(
                ("model",),
                label,
                label,
                ra if ra != 0 else None,
                rb if rb != 0 else None,
                ra_v,
                rb_v,
                closed_form(rb - ra),
                _num(closed_form(rb - ra), vab),
                ra_v and (_num(ra, vab) - ra_v),
            )
        )
    unit = "parameters" if quantity != "flops" else " vs ".join(dict.fromkeys([_unit(a), _unit(b)]))
    symbolic = closed_form(tb - ta)
    # Every size a printed formula uses is listed, also one a side only takes at the middle
    # point: bart-base -> albert-base-v2 evaluates bart's L_src/L_tgt at ALBERT's L = 512,
    # and the sizes line must say so for "= X at B's sizes" to be checkable (issue 25.1).
    used = {str(s) for s in (ta.free_symbols | tb.free_symbols)}
    names = sorted(set(a.spec.values) | set(b.spec.values) | (set(wl_values) if quantity == "flops" else set()) | used)
    changes = {n: (va.get(n), vb.get(n)) for n in names if va.get(n) != vb.get(n)}
    return DiffResult(
        a,
        b,
        quantity,
        unit,
        a_total,
        b_total,
        symbolic,
        tuple(rows),
        changes,
        _num(symbolic, vab) if symbolic != 0 else 0,
    )


def _unit(side: Side) -> str:
    from symtrans.engine.conventions import convention

    return "MACs" if convention(side.convention).unit == "MAC" else "FLOPs"


def parse_side(text: str, settings: list[str] | None = None, **counting) -> Side:
    """A Side from user text: a preset, a config.json path, or ``PRESET:NAME=VALUE,NAME=VALUE``.

    ``settings`` are further ``NAME=VALUE`` overrides (``--set-a``/``--set-b``);
    ``counting`` sets ``convention``, ``mask`` and ``mode``.  Values are parsed by
    ``resolve.parse_setting`` (typed, never evaluated).

    Raises:
        ValueError: an unknown preset, a bad setting, or an invalid resulting Spec.
    """
    from symtrans.catalog.resolve import resolve

    model, extra = text, []
    head, sep, tail = text.partition(":")
    if sep and "=" in tail and "/" not in head and not head.endswith(".json"):
        model = head
        extra = [s for s in tail.split(",") if s.strip()]
        if not extra:
            raise InputError(f"no NAME=VALUE settings after ':' in {text!r}")
    res = resolve(model, extra + list(settings or []))
    label = text + "".join(f" --set {s}" for s in settings or [])
    return Side(label=label, spec=res.spec, **{k: v for k, v in counting.items() if v is not None})
