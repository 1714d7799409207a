"""The table of supported config.json model types, as Markdown (the README's table).

Read from ``catalog.hf_config.CLASSES``, the one table of supported types, so the README
cannot list a type symtrans does not read (``tests/test_model_types_table.py``).
"""

from __future__ import annotations

from symtrans.base.escape import markdown_escape
from symtrans.catalog.hf_config import CLASSES


def markdown_table() -> str:
    """A Markdown table: one row per ``model_type``, with the transformers class counted
    (its ``parameters()``) and the config class whose defaults fill missing keys."""
    lines = [
        f"{len(CLASSES)} model types, each counted exactly as transformers 5.x builds the class named:",
        "",
        "| model_type | class counted | defaults from |",
        "|---|---|---|",
    ]
    for mt, (config_class, model_class) in CLASSES.items():
        lines.append(f"| `{mt}` | {markdown_escape(model_class)} | {markdown_escape(config_class)} |")
    return "\n".join(lines) + "\n"
