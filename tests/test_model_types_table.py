"""The README's table of supported model types is the code's table (hf_config.CLASSES)."""

import re
from pathlib import Path

from symtrans.catalog.hf_config import CLASSES
from symtrans.render.model_types import markdown_table

README = Path(__file__).resolve().parents[1] / "README.md"
BEGIN, END = "<!-- model-types:begin -->", "<!-- model-types:end -->"


def _readme_table() -> str:
    text = README.read_text(encoding="utf-8")
    m = re.search(re.escape(BEGIN) + r"\n(.*?)" + re.escape(END), text, re.S)
    assert m, f"README.md has no {BEGIN} ... {END} section"
    return m.group(1)


def test_readme_lists_exactly_the_supported_types():
    # Independent of the renderer: the backticked model_type of each table row.
    listed = re.findall(r"^\| `([^`]+)` \|", _readme_table(), re.M)
    assert listed == list(CLASSES), (
        "the README's table of model types differs from hf_config.CLASSES: "
        "paste the output of 'symtrans model-types --format markdown' between the markers"
    )


def test_readme_table_is_the_generated_one():
    assert _readme_table() == markdown_table(), "paste 'symtrans model-types --format markdown' into README.md"
