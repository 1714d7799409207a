"""Warnings for a valid but wasteful spec, printed by the CLI after a successful command.

Plain integer arithmetic, without SymPy: ``symtrans params`` calls ``spec_warnings`` on
every model it resolves, also when it answers from generated code.  The closed forms of
the savings are in ``variants``.
"""

from __future__ import annotations

from symtrans.engine.spec import Spec


def rank_warning(r: int, d_in: int, d_out: int, what: str) -> str | None:
    """One sentence when a rank-r factorisation of a d_in x d_out matrix saves nothing.

    That is when r*(d_in + d_out) >= d_in*d_out, which includes every r > min(d_in, d_out);
    ``None`` when it saves parameters.
    """
    if r * (d_in + d_out) < d_in * d_out:
        return None
    beyond = f" and exceeds min(d_in, d_out) = {min(d_in, d_out)}" if r > min(d_in, d_out) else ""
    return (
        f"rank r={r} of {what} ({d_in} x {d_out}) is at or above the break-even "
        f"{d_in * d_out}/{d_in + d_out} = {d_in * d_out / (d_in + d_out):.1f}{beyond}: "
        f"the factorisation saves nothing"
    )


def spec_warnings(spec: Spec) -> list[str]:
    """Warnings for a valid but wasteful spec: a low-rank FFN whose r saves nothing."""
    if not spec.has("r"):
        return []
    v = spec.values
    msg = rank_warning(v["r"], v["d_model"], v["d_ff"], "the FFN maps")
    return [msg] if msg else []
