"""The checked-in gallery (reports/) matches a fresh rendering of every preset.

Markdown and LaTeX are compared as text; PDFs only need to exist (their bytes depend on the
TeX installation).  A stale report fails in one of two ways:

* a number changed (a count, a FLOP or byte figure, a size): the failure lists each number
  that moved, old -> new, with its line.  It does not say "regenerate": a moved count is a
  question of which figure is right, and regenerating would record the new one unchecked.
  The independent reference of every preset's count is in tests/reference_counts.py.
* only prose changed (every number is the same): regenerate with
  ``python -m symtrans.render.gallery`` and commit reports/.
"""

from __future__ import annotations

import difflib
import re

import pytest

from symtrans.catalog import presets
from symtrans.render import gallery

REPORTS = gallery.default_dir()
REGENERATE = "regenerate with 'python -m symtrans.render.gallery' and commit reports/"
MISSING = f"the gallery is incomplete: {REGENERATE}"
# A number as the reports print it: 124,439,808 (Markdown), 124{,}439{,}808 (LaTeX), 0.5, 7.
NUMBER = re.compile(r"\d+(?:(?:,|\{,\})\d{3})*(?:\.\d+)?")


def numbers(text: str) -> list[tuple[str, int]]:
    """Every number in ``text`` with its line (1-based), digit groups normalised to 1,234."""
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        out += [(m.group().replace("{,}", ","), i) for m in NUMBER.finditer(line)]
    return out


def stale_message(path, current: str, fresh: str, limit: int = 20) -> str:
    """Why ``current`` (checked in) differs from ``fresh``: the numbers that moved, or, when every
    number is the same, that only prose changed and regenerating is safe."""
    old, new = numbers(current), numbers(fresh)
    changes = []
    matcher = difflib.SequenceMatcher(None, [n for n, _ in old], [n for n, _ in new], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 - i1 == j2 - j1:  # one for one: each number with its own line
            changes += [f"  line {o[1]}: {o[0]} -> {n[0]}" for o, n in zip(old[i1:i2], new[j1:j2])]
            continue
        a = ", ".join(n for n, _ in old[i1:i2]) or "(none)"
        b = ", ".join(n for n, _ in new[j1:j2]) or "(none)"
        where = f"line {old[i1][1]}" if i1 < i2 else f"after line {old[i1 - 1][1] if i1 else 0}"
        changes.append(f"  {where}: {a} -> {b}")
    if changes:
        shown = "\n".join(changes[:limit]) + (
            f"\n  ... and {len(changes) - limit} more" if len(changes) > limit else ""
        )
        return (
            f"{path}: {len(changes)} number(s) differ from a fresh rendering (checked in -> fresh):\n{shown}\n"
            "A figure moved: do not regenerate to make this pass. Decide which figure is right first; every "
            "preset's parameter count has an independent reference in tests/reference_counts.py."
        )
    diff = "".join(
        list(difflib.unified_diff(current.splitlines(True), fresh.splitlines(True), str(path), "fresh", n=1))[:40]
    )
    return f"{path}: only prose differs from a fresh rendering (every number is the same); {REGENERATE}\n{diff}"


@pytest.fixture(scope="module")
def envs():
    return gallery.environments()


@pytest.mark.parametrize("name", list(presets.PRESETS))
def test_gallery_text_is_fresh(name, envs):
    for ext, text in gallery.expected(name, envs).items():
        path = REPORTS / f"{name}.{ext}"
        assert path.exists(), f"{path} is missing; {MISSING}"
        current = path.read_text(encoding="utf-8")
        if current != text:
            pytest.fail(stale_message(path, current, text))


def test_stale_message_names_the_moved_number_and_never_advises_regenerating():
    current = "| total | 494,032,768 |\nprose\n$P = 494{,}032{,}768$\n"
    fresh = "| total | 495,064,960 |\nprose\n$P = 495{,}064{,}960$\n"
    msg = stale_message("reports/x.md", current, fresh)
    assert "line 1: 494,032,768 -> 495,064,960" in msg and "line 3: 494,032,768 -> 495,064,960" in msg
    assert "regenerate with" not in msg and "do not regenerate" in msg
    prose = stale_message("reports/x.md", current, current.replace("prose", "better prose"))
    assert "only prose differs" in prose and REGENERATE in prose


@pytest.mark.parametrize("name", list(presets.PRESETS))
def test_gallery_pdf_exists(name):
    assert (REPORTS / f"{name}.pdf").exists(), f"{name}.pdf is missing; {MISSING}"


def test_gallery_matches_the_render_api():
    # gallery.expected renders through the same path as report.render (one context, two formats)
    from symtrans.catalog.resolve import resolve
    from symtrans.render.report import render

    texts = gallery.expected("gpt2")
    assert texts["md"] == render(resolve("gpt2"), "markdown")
    assert texts["tex"] == render(resolve("gpt2"), "latex")


def test_check_reports_stale_files_and_regeneration_fixes_them(tmp_path, capsys):
    assert gallery.main(["--check", "--dir", str(tmp_path), "--no-pdf", "gpt2"]) == 1
    assert "gpt2.md" in capsys.readouterr().out
    assert gallery.main(["--dir", str(tmp_path), "--no-pdf", "gpt2"]) == 0
    assert gallery.main(["--check", "--dir", str(tmp_path), "--no-pdf", "gpt2"]) == 0
    (tmp_path / "gpt2.tex").write_text("edited by hand\n")
    capsys.readouterr()
    assert gallery.main(["--check", "--dir", str(tmp_path), "--no-pdf", "gpt2"]) == 1
    out = capsys.readouterr().out
    assert "gpt2.tex" in out and "gpt2.md" not in out
    # with PDFs checked, a missing PDF is stale too
    assert gallery.main(["--check", "--dir", str(tmp_path), "gpt2"]) == 1


def test_unknown_preset_is_a_usage_error(tmp_path):
    assert gallery.main(["--check", "--dir", str(tmp_path), "no-such-model"]) == 2
