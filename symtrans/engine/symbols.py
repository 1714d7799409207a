"""The symbols of symtrans: the only module that creates them.

Every size is a positive integer SymPy symbol, so that closed forms simplify under
the right assumptions (e.g. ``sqrt(d_model**2) == d_model``) and substitution of
integers gives exact integers.  Names follow Vaswani et al. 2017 (d_model, d_ff, h, N)
and the usual extensions (d_k, h_kv, E, ...).  Kaplan et al. 2020 use N for parameters
and L for layers; symtrans never does: translate at the boundary (see ``conventions``).
"""

from __future__ import annotations

import sympy as sp

from symtrans.base.errors import UnknownNameError
from symtrans.engine.legend import _LEGEND, ASSUMPTIONS, LEGEND, SymbolInfo, symbols_json  # noqa: F401 (re-exported)

# One SymPy symbol per legend entry, positive integers (used by simplification).
SYMBOLS: dict[str, sp.Symbol] = {s.name: sp.Symbol(s.name, **ASSUMPTIONS) for s in _LEGEND}

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
N_w = SYMBOLS["N_w"]
b_loc = SYMBOLS["b_loc"]
b_glob = SYMBOLS["b_glob"]
w_att = SYMBOLS["w_att"]
L_pre = SYMBOLS["L_pre"]
T_gen = SYMBOLS["T_gen"]
D = SYMBOLS["D"]
t = SYMBOLS["t"]
N_d = SYMBOLS["N_d"]
d_ff_e = SYMBOLS["d_ff_e"]
d_ff_s = SYMBOLS["d_ff_s"]
N_moe = SYMBOLS["N_moe"]
r_q = SYMBOLS["r_q"]
r_kv = SYMBOLS["r_kv"]
d_nope = SYMBOLS["d_nope"]
d_rope = SYMBOLS["d_rope"]
L_rel = SYMBOLS["L_rel"]
h_dec = SYMBOLS["h_dec"]
d_ff_dec = SYMBOLS["d_ff_dec"]
V_dec = SYMBOLS["V_dec"]
L_src_max = SYMBOLS["L_src_max"]
L_tgt_max = SYMBOLS["L_tgt_max"]
C_in = SYMBOLS["C_in"]
p = SYMBOLS["p"]
d_pool = SYMBOLS["d_pool"]
P_fe = SYMBOLS["P_fe"]
M_fe1 = SYMBOLS["M_fe1"]
M_fe = SYMBOLS["M_fe"]
K_pos = SYMBOLS["K_pos"]
G_pos = SYMBOLS["G_pos"]
d_vis = SYMBOLS["d_vis"]
d_ff_vis = SYMBOLS["d_ff_vis"]
N_vis = SYMBOLS["N_vis"]
C_vis = SYMBOLS["C_vis"]
p_vis = SYMBOLS["p_vis"]
P_vis = SYMBOLS["P_vis"]
t_vis = SYMBOLS["t_vis"]
m_vis = SYMBOLS["m_vis"]
h_vis = SYMBOLS["h_vis"]
h_kv_vis = SYMBOLS["h_kv_vis"]
d_k_vis = SYMBOLS["d_k_vis"]
d_aud = SYMBOLS["d_aud"]
N_aud = SYMBOLS["N_aud"]
h_aud = SYMBOLS["h_aud"]
K_aud = SYMBOLS["K_aud"]
d_out_aud = SYMBOLS["d_out_aud"]
c1_aud = SYMBOLS["c1_aud"]
c2_aud = SYMBOLS["c2_aud"]
n_feat = SYMBOLS["n_feat"]
d_proj = SYMBOLS["d_proj"]
n_ds = SYMBOLS["n_ds"]
d_ad_in = SYMBOLS["d_ad_in"]
d_ad_out = SYMBOLS["d_ad_out"]
d_vout = SYMBOLS["d_vout"]
# --- layer kinds (issue 20)
N_attn = SYMBOLS["N_attn"]
N_ssm = SYMBOLS["N_ssm"]
N_lin = SYMBOLS["N_lin"]
N_conv = SYMBOLS["N_conv"]
N_mlp = SYMBOLS["N_mlp"]
N_par = SYMBOLS["N_par"]
d_inner = SYMBOLS["d_inner"]
d_state = SYMBOLS["d_state"]
d_conv = SYMBOLS["d_conv"]
dt_rank = SYMBOLS["dt_rank"]
h_ssm = SYMBOLS["h_ssm"]
g_ssm = SYMBOLS["g_ssm"]
h_lk = SYMBOLS["h_lk"]
h_lv = SYMBOLS["h_lv"]
d_lk = SYMBOLS["d_lk"]
d_lv = SYMBOLS["d_lv"]
L_chunk = SYMBOLS["L_chunk"]
# --- DeepSeek Sparse Attention (engine/dsa.py)
N_dsa = SYMBOLS["N_dsa"]
h_idx = SYMBOLS["h_idx"]
d_idx = SYMBOLS["d_idx"]
k_idx = SYMBOLS["k_idx"]
# --- Gemma 4 (engine/gemma4.py)
N_g = SYMBOLS["N_g"]
N_xs = SYMBOLS["N_xs"]
N_xg = SYMBOLS["N_xg"]
d_kg = SYMBOLS["d_kg"]
h_kvg = SYMBOLS["h_kvg"]
d_ple = SYMBOLS["d_ple"]
V_ple = SYMBOLS["V_ple"]
# --- DeepSeek-V4 (engine/deepseek_v4.py)
N_csa = SYMBOLS["N_csa"]
N_hca = SYMBOLS["N_hca"]
m_csa = SYMBOLS["m_csa"]
m_hca = SYMBOLS["m_hca"]
n_hc = SYMBOLS["n_hc"]
g_o = SYMBOLS["g_o"]
r_o = SYMBOLS["r_o"]
# --- Zamba2's shared blocks (engine/zamba2.py)
N_hyb = SYMBOLS["N_hyb"]
N_mem = SYMBOLS["N_mem"]
N_adp = SYMBOLS["N_adp"]
r_adp = SYMBOLS["r_adp"]

LATEX_NAMES: dict[sp.Symbol, str] = {SYMBOLS[n]: LEGEND[n].latex for n in LEGEND}


def symbol(name: str) -> sp.Symbol:
    """Return the symbol called ``name``.

    Raises:
        KeyError: with the list of known names, if ``name`` is not a symtrans symbol.
    """
    try:
        return SYMBOLS[name]
    except KeyError:
        raise UnknownNameError(f"unknown symbol {name!r}; known: {', '.join(SYMBOLS)}") from None


def legend_for(*exprs: sp.Expr) -> list[SymbolInfo]:
    """Legend entries of the symbols that occur in ``exprs``, in legend order."""
    used: set[sp.Symbol] = set()
    for e in exprs:
        used |= getattr(e, "free_symbols", set())
    return [s for s in _LEGEND if SYMBOLS[s.name] in used]


# A name in a printed closed form (sympy.sstr): an identifier, not part of a longer word or
# number, and not a function name (``Min(``, ``Max(``).
