"""Closed forms of the parameter-efficient and long-context variants (tracker issue 7).

The variants themselves are built by the engine from Spec options and sizes:

* cross-layer sharing, ``share_layers`` = ``all`` | ``attention`` | ``ffn`` (ALBERT,
  Lan et al. 2020 §3.1): the shared weights are stored once, the FLOPs stay N-fold;
* factorized embedding, size ``E_emb`` (Lan et al. 2020 §3.1): V x E_emb + E_emb x d_model;
* low-rank FFN, size ``r``: every d_in x d_out map of the FFN becomes d_in x r + r x d_out;
* local / sliding-window attention, size ``w`` (Longformer, Beltagy et al. 2020 §3.1;
  Mistral, Jiang et al. 2023 §2), optionally with Longformer's ``global_tokens``.

This module gives the closed-form savings, the break-even rank and the two regimes of
the window (L <= w and L >= w), plus the warnings the CLI prints.  The KV cache's cap at
w tokens lives with the rest of the memory model (``memory.kv_cache_bytes``).
All counts are in parameters, FLOPs or tokens as stated; no function evaluates user text.
"""

from __future__ import annotations

import sympy as sp

from symtrans.accounting.spec_warnings import rank_warning, spec_warnings  # noqa: F401 (re-exported)
from symtrans.base.errors import InputError
from symtrans.engine import symbols as S
from symtrans.engine.spec import Spec


def factorized_embedding_saving() -> sp.Expr:
    """Parameters saved by ALBERT's factorized embedding: V*d_model - (V*E_emb + E_emb*d_model).

    The token table shrinks from V x d_model to V x E_emb, and an E_emb x d_model
    projection is added (its d_model bias, the width change of the position/type
    tables and their norm are not part of this classic formula; ``build`` counts
    them).  Source: Lan et al. 2020 §3.1, "O(V x H) to O(V x E + E x H)".
    """
    return S.V * S.d_model - (S.V * S.E_emb + S.E_emb * S.d_model)


def low_rank_saving(d_in: sp.Expr = S.d_model, d_out: sp.Expr = S.d_ff) -> sp.Expr:
    """Parameters saved by one rank-r factorisation of a d_in x d_out matrix:
    d_in*d_out - r*(d_in + d_out) (weights only; the bias is unchanged).

    Positive only for r below ``low_rank_break_even(d_in, d_out)``.
    """
    return d_in * d_out - S.r * (d_in + d_out)


def low_rank_break_even(d_in: sp.Expr = S.d_model, d_out: sp.Expr = S.d_ff) -> sp.Expr:
    """The rank at which the factorisation saves nothing: r* = d_in*d_out/(d_in + d_out).

    Below r* the factorisation saves parameters; r* is always below min(d_in, d_out)
    (e.g. d_model = 768, d_ff = 3072 gives r* = 614.4).
    """
    return d_in * d_out / (d_in + d_out)


def low_rank_ffn_saving(spec: Spec) -> sp.Expr:
    """Parameters the low-rank FFN of ``spec`` saves over the same model with full maps.

    The difference of the two built models' parameter counts, in closed form (so it
    includes every FFN map of every layer and expert).

    Raises:
        ValueError: if ``spec`` has no rank ``r``.
    """
    from symtrans.engine.architectures import build
    from symtrans.engine.simplify import closed_form

    if not spec.has("r"):
        raise InputError("the spec has no low-rank FFN; give the rank with --set r=VALUE")
    full = Spec(**{**_fields(spec), "sizes": tuple((n, v) for n, v in spec.sizes if n != "r")})
    return closed_form(build(full).params - build(spec).params)


def sharing_saving(spec: Spec) -> sp.Expr:
    """Parameters cross-layer sharing saves: (unshared model) - (``spec``), in closed form.

    For ``share_layers = all`` this is (N - 1) times one layer's parameters.
    """
    from symtrans.engine.architectures import build
    from symtrans.engine.simplify import closed_form

    return closed_form(build(spec.replace(share_layers="none")).params - build(spec).params)


def window_regimes(expr: sp.Expr, length: sp.Expr = S.L) -> tuple[sp.Expr, sp.Expr]:
    """``expr`` (built with a window ``w``) in its two regimes: (L <= w, L >= w).

    Replaces Min(L, w) by L, resp. w (and Min(L - 1, floor(w/2)) by L - 1, resp.
    floor(w/2) for bidirectional windows, whose crossover is L = floor(w/2) + 1).  The
    two causal forms agree at the crossover L = w.
    """
    small = expr.replace(sp.Min, lambda *a: _pick(a, length, small=True))
    large = expr.replace(sp.Min, lambda *a: _pick(a, length, small=False))
    return sp.expand(small), sp.expand(large)


def _pick(args, length, small):
    # Min(x, c): x is the argument holding the length symbol.
    with_l = [a for a in args if length in a.free_symbols]
    other = [a for a in args if length not in a.free_symbols]
    if len(with_l) != 1 or len(other) != 1:
        return sp.Min(*args)
    return with_l[0] if small else other[0]


def _fields(spec: Spec) -> dict:
    from dataclasses import fields

    return {f.name: getattr(spec, f.name) for f in fields(Spec)}
