"""The symbols of symtrans: the only module that creates them.

Every size is a positive integer SymPy symbol, so that closed forms simplify under
the right assumptions (e.g. ``sqrt(d_model**2) == d_model``) and substitution of
integers gives exact integers.  Names follow Vaswani et al. 2017 (d_model, d_ff, h, N)
and the usual extensions (d_k, h_kv, E, ...).  Kaplan et al. 2020 use N for parameters
and L for layers; symtrans never does: translate at the boundary (see ``conventions``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import sympy as sp


@dataclass(frozen=True)
class SymbolInfo:
    """Legend entry: the symbol, its LaTeX name, meaning and unit."""

    name: str
    latex: str
    meaning: str
    unit: str


_LEGEND = [
    SymbolInfo("d_model", r"d_{\mathrm{model}}", "model (residual stream) width", "features"),
    SymbolInfo("d_ff", r"d_{\mathrm{ff}}", "inner width of the feed-forward network", "features"),
    SymbolInfo("h", "h", "attention (query) heads", "heads"),
    SymbolInfo("h_kv", r"h_{\mathrm{kv}}", "key/value heads (GQA/MQA)", "heads"),
    SymbolInfo("d_k", "d_k", "per-head query/key width", "features"),
    SymbolInfo("d_v", "d_v", "per-head value width", "features"),
    SymbolInfo("N", "N", "layers in a stack", "layers"),
    SymbolInfo("N_enc", r"N_{\mathrm{enc}}", "encoder layers", "layers"),
    SymbolInfo("N_dec", r"N_{\mathrm{dec}}", "decoder layers", "layers"),
    SymbolInfo("V", "V", "vocabulary size", "tokens"),
    SymbolInfo("L", "L", "sequence length: tokens per sequence in the workload", "tokens"),
    SymbolInfo(
        "L_max",
        r"L_{\mathrm{max}}",
        "maximum positions: rows of a learned position table (max_position_embeddings)",
        "tokens",
    ),
    SymbolInfo("L_src", r"L_{\mathrm{src}}", "source (encoder) sequence length", "tokens"),
    SymbolInfo("L_tgt", r"L_{\mathrm{tgt}}", "target (decoder) sequence length", "tokens"),
    SymbolInfo("B", "B", "batch size", "sequences"),
    SymbolInfo("E", "E", "experts per mixture-of-experts layer", "experts"),
    SymbolInfo("k", "k", "experts active per token", "experts"),
    SymbolInfo("E_emb", r"E_{\mathrm{emb}}", "factorized embedding width (ALBERT's E)", "features"),
    SymbolInfo("r", "r", "rank of a low-rank factorisation or LoRA", "features"),
    SymbolInfo("w", "w", "local attention window", "tokens"),
    SymbolInfo("L_pre", r"L_{\mathrm{pre}}", "prompt tokens in prefill", "tokens"),
    SymbolInfo("T_gen", r"T_{\mathrm{gen}}", "tokens generated in decode", "tokens"),
    SymbolInfo("D", "D", "training tokens", "tokens"),
    SymbolInfo("t", "t", "position of a generated token in decode (summation index, 1..T_gen)", "tokens"),
    SymbolInfo("N_d", "N_d", "data-parallel ranks (ZeRO's N_d)", "ranks"),
]

LEGEND: dict[str, SymbolInfo] = {s.name: s for s in _LEGEND}

# One SymPy symbol per legend entry, positive integers (used by simplification).
SYMBOLS: dict[str, sp.Symbol] = {s.name: sp.Symbol(s.name, integer=True, positive=True) for s in _LEGEND}

d_model = SYMBOLS["d_model"]
d_ff = SYMBOLS["d_ff"]
h = SYMBOLS["h"]
h_kv = SYMBOLS["h_kv"]
d_k = SYMBOLS["d_k"]
d_v = SYMBOLS["d_v"]
N = SYMBOLS["N"]
N_enc = SYMBOLS["N_enc"]
N_dec = SYMBOLS["N_dec"]
V = SYMBOLS["V"]
L = SYMBOLS["L"]
L_max = SYMBOLS["L_max"]
L_src = SYMBOLS["L_src"]
L_tgt = SYMBOLS["L_tgt"]
B = SYMBOLS["B"]
E = SYMBOLS["E"]
k = SYMBOLS["k"]
E_emb = SYMBOLS["E_emb"]
r = SYMBOLS["r"]
w = SYMBOLS["w"]
L_pre = SYMBOLS["L_pre"]
T_gen = SYMBOLS["T_gen"]
D = SYMBOLS["D"]
t = SYMBOLS["t"]
N_d = SYMBOLS["N_d"]

LATEX_NAMES: dict[sp.Symbol, str] = {SYMBOLS[n]: LEGEND[n].latex for n in LEGEND}


def symbol(name: str) -> sp.Symbol:
    """Return the symbol called ``name``.

    Raises:
        KeyError: with the list of known names, if ``name`` is not a symtrans symbol.
    """
    try:
        return SYMBOLS[name]
    except KeyError:
        raise KeyError(f"unknown symbol {name!r}; known: {', '.join(SYMBOLS)}") from None


def legend_for(*exprs: sp.Expr) -> list[SymbolInfo]:
    """Legend entries of the symbols that occur in ``exprs``, in legend order."""
    used: set[sp.Symbol] = set()
    for e in exprs:
        used |= getattr(e, "free_symbols", set())
    return [s for s in _LEGEND if SYMBOLS[s.name] in used]


# A name in a printed closed form (sympy.sstr): an identifier, not part of a longer word or
# number, and not a function name (``Min(``, ``Max(``).
_NAME_IN_TEXT = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?!\w|\s*\()")


def symbols_json(*closed_forms: str) -> dict[str, dict[str, Any]]:
    """The ``symbols`` map of the JSON output: each symbol name that occurs in the printed
    closed forms -> its SymPy assumptions, meaning and unit (the legend), in legend order.

    ``{"d_model": {"assumptions": {"integer": true, "positive": true},
    "meaning": "model (residual stream) width", "unit": "features"}, ...}``.  The
    assumptions are read from the symbol itself (every symbol is a positive integer), so
    a reader knows ``N`` is a layer count, not SymPy's ``N()``, and ``E`` an expert count,
    not Euler's number.  ``symtrans.parse_closed_form`` reads the same names back.

    Raises:
        RuntimeError: a name that is not a symtrans symbol (a closed form is built from
            ``SYMBOLS`` only, so this is a bug).
    """
    names: set[str] = set()
    for text in closed_forms:
        names.update(_NAME_IN_TEXT.findall(text))
    unknown = sorted(names - set(LEGEND))
    if unknown:
        raise RuntimeError(f"closed form names {', '.join(unknown)}, not symtrans symbols")
    out: dict[str, dict[str, Any]] = {}
    for info in _LEGEND:
        if info.name in names:
            sym = SYMBOLS[info.name]
            out[info.name] = {
                "assumptions": {"integer": bool(sym.is_integer), "positive": bool(sym.is_positive)},
                "meaning": info.meaning,
                "unit": info.unit,
            }
    return out
