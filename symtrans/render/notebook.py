"""Models and Cost trees that display themselves in Jupyter.

``symtrans.model("llama-2-7b")`` returns a ``Model``: the exact parameter count, the
closed form, FLOPs on demand, and ``_repr_latex_`` / ``_repr_markdown_`` so that a
notebook cell shows the formula rendered, with the component table and the legend.
``Cost`` objects (``architectures.build``) display through ``cost_markdown`` and
``cost_latex``.

Units: parameters; FLOPs (2 per multiply-accumulate, matrix products only).
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.engine import symbols as S
from symtrans.engine.display import _latex, _tex_text, cost_latex, cost_markdown  # noqa: E402,F401 (re-exported)


class Model:
    """A resolved model with exact counts and notebook display.

    Attributes:
        name: preset name (or the config file's stem, or ``"spec"``).
        spec: the validated Spec.
        preset: the Preset it came from, if any.
    """

    def __init__(self, name: str, spec, preset=None, notes: tuple[str, ...] = ()):
        self.name = name
        self.spec = spec
        self.preset = preset
        self.notes = notes

    # -- the tree and its counts ------------------------------------------------
    @property
    def sizes(self) -> dict[str, int]:
        """The model's sizes, ``{"d_model": 4096, "N": 32, ...}`` (a copy; the JSON ``sizes``)."""
        return dict(self.spec.values)

    def subs(self, expr: sp.Expr | str, **sizes: int) -> int | sp.Rational:
        """``expr`` with the model's sizes substituted, exactly.

        Args:
            expr: a SymPy expression in symtrans's symbols (``closed_form``,
                ``flops_closed_form()``), or a printed closed form such as the JSON
                ``closed_form``, read by ``symtrans.parse_closed_form`` (never sympify).
            sizes: values for symbols the model has no size for (``B=8``) or that
                replace its own here (``N=48``); positive integers.  Substitution only:
                ``set`` changes the model itself (and validates it).

        Returns:
            A Python ``int`` when the value is an integer (counts are), else the exact
            SymPy number (a Rational such as a per-token mean); never a float.

        Raises:
            ValueError: text ``parse_closed_form`` refuses; an unknown size name or a size
                that is not a positive integer; a symbol left without a value.
        """
        from symtrans.engine.evaluate import as_expr, substitution

        if isinstance(expr, str):
            from symtrans.engine.parse import parse_closed_form

            expr = parse_closed_form(expr)
        from symtrans.engine.spec import user_size

        unknown = [k for k in sizes if k not in S.SYMBOLS]
        if unknown:
            raise InputError(f"unknown size {unknown[0]!r}; known: {', '.join(S.SYMBOLS)}")
        sizes = {k: user_size(k, v) for k, v in sizes.items()}  # as --set checks them
        e = as_expr(expr)
        from sympy.core.function import AppliedUndef

        undefined = sorted({str(f.func) for f in e.atoms(AppliedUndef)})
        if undefined:  # f(12) is no count: parse_closed_form refuses it in text too
            raise InputError(
                f"the expression calls {', '.join(undefined)}, which symtrans does not define "
                "(closed forms use only Min, Max, floor and ceiling)"
            )
        e = e.xreplace(substitution({**self.spec.values, **sizes}))
        if e.free_symbols:
            missing = ", ".join(sorted(str(s) for s in e.free_symbols))
            raise InputError(f"no value for {missing}; give it as a keyword, e.g. subs(expr, B=1)")
        return int(e) if e.is_Integer else e

    @property
    def cost(self):
        """The model's Cost tree (``architectures.build``)."""
        from symtrans.engine.architectures import build

        return build(self.spec)

    @property
    def closed_form(self) -> sp.Expr:
        """The parameter count as a closed form in the size symbols (parameters)."""
        from symtrans.engine.simplify import closed_form

        return closed_form(self.cost.params)

    @property
    def params(self) -> int:
        """The exact parameter count (parameters)."""
        from symtrans.engine.evaluate import exact

        return exact(self.cost.params, self.spec.values)

    @property
    def active_params(self) -> int:
        """Parameters used per token (differs from ``params`` for mixture-of-experts models)."""
        from symtrans.engine.evaluate import exact

        return exact(self.cost.active_params, self.spec.values)

    def flops_closed_form(self, mode: str = "forward", convention: str = "flops", mask: str = "full") -> sp.Expr:
        """FLOPs of one step as a closed form in B and L (see ``symtrans.flops.flops_expr``)."""
        from symtrans.accounting.flops import flops_expr

        return flops_expr(self.spec, mode, convention, mask)

    def flops(
        self,
        batch: int = 1,
        seq_len: int | None = None,
        mode: str = "forward",
        convention: str = "flops",
        mask: str = "full",
    ) -> int:
        """Exact FLOPs of one step on ``batch`` sequences of ``seq_len`` tokens (default the model's L).

        Raises:
            ValueError: no sequence length; a batch or length that is not a positive int
                (floats and bools included) or is above 2**53, as ``--set`` refuses it; an
                unknown mode, convention or mask.
        """
        from symtrans.engine.evaluate import exact
        from symtrans.engine.spec import user_size
        from symtrans.engine.workload import resolve_workload

        if seq_len is None and not self.spec.has("L"):
            raise InputError("give seq_len (the model has no L)")
        batch = user_size("B", batch)
        seq_len = None if seq_len is None else user_size("L", seq_len)
        wl = resolve_workload(self.spec, batch, seq_len, mask=mask)  # the CLI's and the report's rule
        return exact(self.flops_closed_form(mode, convention, mask), wl.values(self.spec))

    def set(self, **changes: Any) -> "Model":
        """A copy with sizes (``d_model=1024``) or options (``bias=False``) changed.

        Raises:
            ValueError: an unknown name or an invalid result.
        """
        from symtrans.engine.spec import OPTION_NAMES, user_size

        sizes = {k: user_size(k, v) for k, v in changes.items() if k in S.SYMBOLS}  # as --set checks them
        options = {k: v for k, v in changes.items() if k not in S.SYMBOLS}

        bad = [k for k in options if k not in OPTION_NAMES]
        if bad:
            raise InputError(f"unknown size or option {bad[0]!r}")
        return Model(self.name, self.spec.replace(sizes=sizes, **options), self.preset, self.notes)

    # -- display -----------------------------------------------------------------
    def __repr__(self) -> str:
        return f"<symtrans.Model {self.name}: {self.params:,} parameters>"

    def _repr_latex_(self) -> str:
        from symtrans.base.numbers import grouped

        sub = ", ".join(f"{_latex(S.SYMBOLS[k])}={v}" for k, v in self.spec.values.items())
        total = grouped(self.params).replace(",", "{,}")
        return (
            rf"$$ P_{{\text{{{_tex_text(self.name)}}}}} = {_latex(self.closed_form)} = {total}"
            rf"\quad ({sub}) $$"
        )

    def _repr_markdown_(self) -> str:
        """Markdown for Jupyter; every name is escaped (``markdown_escape``): a model named
        after a file such as ``<img src=x onerror=...>.json`` renders as that text."""
        from symtrans.base.escape import markdown_escape as md
        from symtrans.base.numbers import count, grouped
        from symtrans.render.summary import rows

        lines = [f"### {md(self.name)}: {grouped(self.params)} parameters ({count(self.params)})", ""]
        if self.preset is not None and self.preset.published:
            lines += [f"Published: {md(self.preset.published)} ({md(self.preset.source)})", ""]
        lines += [
            f"$$ {_latex(self.closed_form)} $$",
            "",
            "| component | count | parameters | share |",
            "|---|---:|---:|---:|",
        ]
        for r in rows(self.cost, self.spec.values):
            lines.append(
                f"| {'&nbsp;&nbsp;' * r.depth}{md(r.name)} | {r.multiplicity} | {grouped(r.total)} | "
                f"{float(r.share) * 100:.2f}% |"
            )
        legend = S.legend_for(self.closed_form)
        if legend:
            lines += ["", "| symbol | meaning | value |", "|---|---|---:|"]
            for info in legend:
                lines.append(f"| ${info.latex}$ | {md(info.meaning)} | {self.spec.values.get(info.name, '')} |")
        return "\n".join(lines)


def model(name_or_spec, settings: list[str] | None = None, **changes: Any):
    """A ``Model`` from a preset name, a config.json path or a Spec; for a config.json whose
    model_type has no curated record, a ``catalog.generic.model.GenericModel`` (``params``,
    ``closed_form``, ``cost``, ``sizes``, ``counted_class``, ``notes``).

    Args:
        name_or_spec: ``"gpt2"``, ``"path/config.json"`` or a ``Spec``.
        settings: ``--set`` style ``NAME=VALUE`` strings (parsed, never evaluated).
        changes: sizes or options as keyword arguments (``d_model=1024, bias=False``).

    Raises:
        ValueError: an unknown preset, a bad setting, or an invalid Spec.
    """
    from symtrans.engine.spec import Spec

    if isinstance(name_or_spec, Spec):
        from symtrans.catalog.resolve import apply_settings

        spec, notes = apply_settings(name_or_spec, list(settings or []))
        m = Model("spec", spec, None, notes)
    else:
        from symtrans.catalog.resolve import resolve

        res = resolve(str(name_or_spec), list(settings or []), generic_ok=True)
        if res.generic is not None:  # a type without a curated record: transformers' modeling code
            if changes:
                raise InputError("keyword changes work with curated model types only; edit the config.json instead")
            from symtrans.catalog.generic.model import count_input

            return count_input(res.generic, res.name)
        m = Model(res.name, res.spec, res.preset, res.notes)
    return m.set(**changes) if changes else m
