"""The symbols of symtrans: the only module that creates them.

Every size is a positive integer SymPy symbol, so that closed forms simplify under
the right assumptions (e.g. ``sqrt(d_model**2) == d_model``) and substitution of
integers gives exact integers.  Names follow Vaswani et al. 2017 (d_model, d_ff, h, N)
and the usual extensions (d_k, h_kv, E, ...).  Kaplan et al. 2020 use N for parameters
and L for layers; symtrans never does: translate at the boundary (see ``conventions``).
"""

from __future__ import annotations

from dataclasses import dataclass

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
    # --- seq2seq and front ends (issue 11: mbart, pegasus, marian, whisper, vit)
    SymbolInfo(
        "h_dec", r"h_{\mathrm{dec}}", "decoder attention heads, where they differ from the encoder's h", "heads"
    ),
    SymbolInfo(
        "d_ff_dec",
        r"d_{\mathrm{ff,dec}}",
        "decoder feed-forward width, where it differs from the encoder's d_ff",
        "features",
    ),
    SymbolInfo(
        "V_dec", r"V_{\mathrm{dec}}", "decoder (target) vocabulary, where it differs from the source V", "tokens"
    ),
    SymbolInfo(
        "L_src_max",
        r"L_{\mathrm{src,max}}",
        "maximum source positions: rows of the encoder's position table (max_source_positions)",
        "tokens",
    ),
    SymbolInfo(
        "L_tgt_max",
        r"L_{\mathrm{tgt,max}}",
        "maximum target positions: rows of the decoder's position table (max_target_positions)",
        "tokens",
    ),
    SymbolInfo(
        "C_in", r"C_{\mathrm{in}}", "input channels of a convolutional front end (image channels, mel bins)", "channels"
    ),
    SymbolInfo("p", "p", "patch side of a vision front end (patch_size): p x p pixels per token", "pixels"),
    SymbolInfo("d_pool", r"d_{\mathrm{pool}}", "pooler output width, where it differs from d_model", "features"),
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
h_dec = SYMBOLS["h_dec"]
d_ff_dec = SYMBOLS["d_ff_dec"]
V_dec = SYMBOLS["V_dec"]
L_src_max = SYMBOLS["L_src_max"]
L_tgt_max = SYMBOLS["L_tgt_max"]
C_in = SYMBOLS["C_in"]
p = SYMBOLS["p"]
d_pool = SYMBOLS["d_pool"]

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
