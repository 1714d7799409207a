"""Which symbol stands for a config key: symtrans's own where its tables know the key
(hidden_size -> d_model, the aliases of ``hf_config.ALIASES``), else the key's own name
as a new positive-integer SymPy symbol (``vision_config.hidden_size`` -> ``vision_hidden_size``)."""

from __future__ import annotations

import re

import sympy as sp

from symtrans.engine.legend import ASSUMPTIONS
from symtrans.engine.symbols import SYMBOLS

# transformers' standard attribute names -> symtrans's symbols (engine/legend.py).
STANDARD = {
    "hidden_size": "d_model",
    "intermediate_size": "d_ff",
    "num_attention_heads": "h",
    "num_key_value_heads": "h_kv",
    "head_dim": "d_k",
    "num_hidden_layers": "N",
    "vocab_size": "V",
    "max_position_embeddings": "L_max",
    "num_local_experts": "E",
    "num_experts": "E",
    "n_routed_experts": "E",
    "num_experts_per_tok": "k",
    "moe_intermediate_size": "d_ff_e",
    "shared_expert_intermediate_size": "d_ff_s",
    "q_lora_rank": "r_q",
    "kv_lora_rank": "r_kv",
    "qk_nope_head_dim": "d_nope",
    "qk_rope_head_dim": "d_rope",
    "v_head_dim": "d_v",
    "num_channels": "C_in",
    "patch_size": "p",
    "sliding_window": "w",
}
# Keys named as symtrans names them, not in any curated ALIASES table.
OWN_ALIASES = {"d_ff": "intermediate_size", "num_layers": "num_hidden_layers", "n_embd": "hidden_size"}
# Sub-configs whose keys are the language model's (a wrapper's text stack).
TEXT_PARTS = ("text_config", "language_config", "llm_config", "text_model_config")


def _aliases() -> dict[str, str]:
    """Own key -> standard name, from every curated type's ALIASES (the first wins)."""
    from symtrans.catalog.hf_config import ALIASES

    out: dict[str, str] = dict(OWN_ALIASES)
    for table in ALIASES.values():
        for standard, own in table.items():
            out.setdefault(own, standard)
    return out


def key_symbols(paths: list[str]) -> dict[str, sp.Symbol]:
    """A distinct symbol for every key path (``a.b`` for nested sub-configs), in order:
    top-level keys first take symtrans's names, then the text sub-config's."""
    aliases = _aliases()
    taken: set[str] = set()
    out: dict[str, sp.Symbol] = {}

    def standard(key: str) -> str | None:
        std = key if key in STANDARD else aliases.get(key)
        return STANDARD.get(std) if std else None

    order = sorted(paths, key=lambda p: (p.count("."), not p.startswith(TEXT_PARTS)))
    for path in order:
        parts = path.split(".")
        name = None
        if len(parts) == 1 or (len(parts) == 2 and parts[0] in TEXT_PARTS):
            name = standard(parts[-1])
        if name is None or name in taken:
            name = _own_name(parts)
        base, i = name, 2
        while name in taken or (name in SYMBOLS and name != standard(parts[-1])):
            name, i = f"{base}_{i}", i + 1
        taken.add(name)
        out[path] = SYMBOLS[name] if name in SYMBOLS else sp.Symbol(name, **ASSUMPTIONS)
    return out


def _own_name(parts: list[str]) -> str:
    words = [re.sub(r"_config$", "", p) for p in parts[:-1]] + [parts[-1]]
    name = re.sub(r"\W", "_", "_".join(w for w in words if w))
    return name if name[:1].isalpha() else f"k_{name}"


def count_symbol(label: str, taken: set[str]) -> sp.Symbol:
    """``N_<label>``: the count of one kind of layer where no config key gives it."""
    base = "N_" + re.sub(r"\W", "_", label).strip("_")
    name, i = base, 2
    while name in taken or name in SYMBOLS:
        name, i = f"{base}_{i}", i + 1
    taken.add(name)
    return sp.Symbol(name, **ASSUMPTIONS)
