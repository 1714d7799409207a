"""The checked-in gallery (reports/) matches a fresh rendering of every preset.

When this fails, regenerate the gallery with ``python -m symtrans.render.gallery`` and commit
reports/.  Markdown and LaTeX are compared as text; PDFs only need to exist (their
bytes depend on the TeX installation).
"""

from __future__ import annotations

import difflib

import pytest

from symtrans.catalog import presets
from symtrans.render import gallery

REPORTS = gallery.default_dir()
HINT = "the gallery is stale: run 'python -m symtrans.render.gallery' and commit reports/"


@pytest.fixture(scope="module")
def envs():
    return gallery.environments()


@pytest.mark.parametrize("name", list(presets.PRESETS))
def test_gallery_text_is_fresh(name, envs):
    for ext, text in gallery.expected(name, envs).items():
        path = REPORTS / f"{name}.{ext}"
        assert path.exists(), f"{path} is missing; {HINT}"
        current = path.read_text(encoding="utf-8")
        if current != text:
            diff = "".join(
                list(
                    difflib.unified_diff(
                        current.splitlines(True), text.splitlines(True), str(path), "fresh rendering", n=1
                    )
                )[:40]
            )
            pytest.fail(f"{path} differs from a fresh rendering; {HINT}\n{diff}")


@pytest.mark.parametrize("name", list(presets.PRESETS))
def test_gallery_pdf_exists(name):
    assert (REPORTS / f"{name}.pdf").exists(), f"{name}.pdf is missing; {HINT}"


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
