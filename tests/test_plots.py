"""Charts and the reports that embed them (tracker issue 5, "Plots").

Counts: GPT-2 124,439,808 parameters (transformers GPT2LMHeadModel), forward FLOPs at
L = 1024 291,648,307,200 (arithmetic in tests/test_cli.py); components written out below.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import require

from symtrans.cli.main import main
from symtrans.engine.spec import Spec

GPT2 = Spec(
    family="decoder-only",
    sizes=dict(d_model=768, d_ff=3072, h=12, N=12, V=50257, L_max=1024, L=1024),
    positional="learned",
    norm_position="pre",
    final_norm=True,
    tie_output=True,
)


def test_shares_group_and_add_up_exactly():
    from symtrans.render.plots import shares

    p = dict(shares(GPT2, GPT2.values, "params"))
    d, ff = 768, 3072
    assert p["embeddings"] == 50257 * d + 1024 * d  # wte + wpe
    assert p["attention"] == 12 * (4 * d * d + 4 * d)  # c_attn + c_proj with biases
    assert p["feed-forward"] == 12 * (2 * d * ff + ff + d)  # c_fc + c_proj with biases
    assert p["norms"] == 12 * 4 * d + 2 * d  # ln_1, ln_2, ln_f
    assert sum(p.values()) == 124_439_808
    v = {**GPT2.values, "B": 1, "L": 1024}
    f = dict(shares(GPT2, v, "flops"))
    assert f["attention scores"] == 12 * 4 * 1024 * 1024 * d  # QK^T and scores V, full square
    assert f["LM head"] == 2 * 1024 * d * 50257
    assert sum(f.values()) == 291_648_307_200


def test_charts_render_without_touching_pyplot():
    require("matplotlib")
    import sys

    from symtrans.render.plots import component_shares, default_rules, scaling, scaling_points, to_bytes

    fig = component_shares(GPT2, "gpt2")
    assert len(fig.axes) == 2
    png = to_bytes(fig, "png")
    assert png.startswith(b"\x89PNG")
    assert to_bytes(component_shares(GPT2), "svg") == to_bytes(component_shares(GPT2), "svg")  # reproducible
    assert to_bytes(scaling(GPT2, "d_model", "params", "gpt2"), "pdf").startswith(b"%PDF")
    # Nothing may use pyplot (a backend and global figures): no figure opened.
    assert "matplotlib.pyplot" not in sys.modules or sys.modules["matplotlib.pyplot"].get_fignums() == []
    # The curve's points are exact counts: GPT-2 with d_ff = 4 d_model at each width.
    pts = dict(scaling_points(GPT2, "d_model", [768, 1536], "params", default_rules(GPT2, "d_model")))
    assert pts == {d: 50257 * d + 1024 * d + 12 * (12 * d * d + 13 * d) + 2 * d for d in (768, 1536)}


def test_without_matplotlib_the_message_says_how_to_get_charts(monkeypatch):
    import symtrans.render.plots as plots

    real_import = __builtins__["__import__"] if isinstance(__builtins__, dict) else __builtins__.__import__

    def no_mpl(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr("builtins.__import__", no_mpl)
    assert not plots.available()
    with pytest.raises(plots.PlotsUnavailable, match=r"pip install 'symtrans\[plots\]'"):
        plots.component_shares(GPT2)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_plot(capsys, tmp_path):
    require("matplotlib")
    out = tmp_path / "c.svg"
    code, _, err = run(capsys, "plot", "gpt2", "--kind", "scaling", "--over", "N", "-o", str(out))
    assert code == 0, err
    assert out.read_bytes().lstrip().startswith(b"<?xml")
    code, _, err = run(capsys, "plot", "gpt2", "-o", str(tmp_path / "c.gif"))
    assert code == 2 and ".png" in err
    assert not (tmp_path / "c.gif").exists()


def test_markdown_report_embeds_charts(capsys, tmp_path):
    require("matplotlib")
    out = tmp_path / "gpt2.md"
    code, _, err = run(capsys, "report", "gpt2", "-o", str(out))
    assert code == 0, err
    text = out.read_text()
    assert "![Share of parameters and forward FLOPs per component](gpt2-shares.png)" in text
    assert "](gpt2-scaling.png)" in text
    assert (tmp_path / "gpt2-shares.png").read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "gpt2-scaling.png").exists()


def test_report_without_matplotlib_says_how_to_get_the_charts(capsys, tmp_path, monkeypatch):
    import symtrans.render.plots as plots

    def no_matplotlib(*args, **kwargs):  # what _figure raises when matplotlib cannot be imported
        raise plots.PlotsUnavailable(f"charts need matplotlib; install it with {plots.INSTALL_HINT}")

    monkeypatch.setattr(plots, "_figure", no_matplotlib)
    out = tmp_path / "r.md"
    # Asked for with --charts: the report says how to get them (by default it leaves them
    # out and says so on stderr, tests/test_user_trips.py: issue 25.12).
    assert run(capsys, "report", "gpt2", "--charts", "-o", str(out))[0] == 0
    assert "Charts need matplotlib; install it with `pip install 'symtrans[plots]'`" in out.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.md"]
    tex = tmp_path / "r.tex"
    assert run(capsys, "report", "gpt2", "--charts", "--format", "latex", "-o", str(tex))[0] == 0
    assert (
        r"Charts need matplotlib; install it with \symtranscode{pip install \texttt{\char13}symtrans[plots]"
        in tex.read_text()
    )


def test_report_to_stdout_is_unchanged(capsys):
    from symtrans.catalog.resolve import resolve
    from symtrans.render.report import render

    code, out, _ = run(capsys, "report", "gpt2")
    assert code == 0 and out == render(resolve("gpt2"), "markdown")


def test_latex_report_names_files_safely(capsys, tmp_path):
    require("matplotlib")
    out = tmp_path / "my report_1.tex"
    assert run(capsys, "report", "gpt2", "--format", "latex", "-o", str(out))[0] == 0
    text = out.read_text()
    assert r"\includegraphics[width=0.9\linewidth]{my-report-1-shares.pdf}" in text
    assert (tmp_path / "my-report-1-shares.pdf").read_bytes().startswith(b"%PDF")


def test_html_report_inlines_the_charts_as_svg(capsys, tmp_path):
    require("matplotlib")
    out = tmp_path / "gpt2.html"
    code, _, err = run(capsys, "report", "gpt2", "-o", str(out))
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    import base64
    import re

    images = re.findall(r'<img alt="([^"]*)" src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)">', text)
    assert [alt for alt, _ in images] == [
        "Share of parameters and forward FLOPs per component",
        "Parameters against d_model, with the published models of the family",
    ]
    assert all(b"<svg" in base64.b64decode(data) for _, data in images)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpt2.html"]  # nothing beside it: one file


@pytest.mark.skipif(not (shutil.which("pdflatex") and shutil.which("pdftotext")), reason="needs TeX and poppler")
def test_pdf_report_embeds_the_charts(capsys, tmp_path):
    require("matplotlib")
    out = tmp_path / "gpt2.pdf"
    code, _, err = run(capsys, "report", "gpt2", "--format", "pdf", "-o", str(out))
    assert code == 0, err
    text = subprocess.run(["pdftotext", str(out), "-"], capture_output=True, text=True, check=True).stdout
    assert "Share of parameters and forward FLOPs per component" in text
    assert "feed-forward" in text and "share (%)" in text  # text inside the embedded vector chart
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpt2.pdf"]  # charts only inside the PDF


def test_charts_have_a_fixed_layout():
    # No layout engine runs at savefig (constrained layout took most of a chart's time):
    # the axes are placed once, inside the figure.
    require("matplotlib")
    from symtrans.render.plots import component_shares, scaling

    for fig in (component_shares(GPT2, "gpt2"), scaling(GPT2, "d_model", "params", "gpt2")):
        assert fig.get_layout_engine() is None
        for ax in fig.axes:
            x0, y0, x1, y1 = ax.get_position().extents
            assert 0 < x0 < x1 < 1 and 0 < y0 < y1 < 1


def test_matplotlib_is_imported_only_when_a_chart_is_written(tmp_path):
    import json as _json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    code = (
        "import sys, json, io, contextlib\n"
        "from symtrans.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    a = main(['report', 'gpt2'])\n"
        "before = 'matplotlib' in sys.modules\n"
        f"b = main(['report', 'gpt2', '--no-charts', '-o', {str(tmp_path / 'r.md')!r}])\n"
        "print(json.dumps([a, b, before, 'matplotlib' in sys.modules]))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert _json.loads(p.stdout.strip().splitlines()[-1]) == [0, 0, False, False]


def _label_overlaps(fig) -> list[str]:
    """Every pair of a chart's labels (texts placed on its axes) whose boxes overlap, each
    label outside the figure, and each label over a legend, as measured by matplotlib's
    renderer after the figure is drawn as it is saved."""
    import itertools

    from symtrans.render.plots import to_bytes

    to_bytes(fig, "png")  # lays the figure out and draws it exactly as the report's file
    renderer = fig.canvas.get_renderer()
    page = fig.get_window_extent(renderer)
    found = []
    for ax in fig.axes:
        labels = [(t.get_text(), t.get_window_extent(renderer)) for t in ax.texts if t.get_text().strip()]
        for (a, box_a), (b, box_b) in itertools.combinations(labels, 2):
            if box_a.overlaps(box_b):
                found.append(f"{a!r} overlaps {b!r}")
        legend = ax.get_legend()
        for name, box in labels:
            if legend is not None and box.overlaps(legend.get_window_extent(renderer)):
                found.append(f"{name!r} overlaps the legend")
            if not (page.contains(box.x0, box.y0) and page.contains(box.x1, box.y1)):
                found.append(f"{name!r} is outside the figure")
    return found


@pytest.mark.parametrize("preset", ["gpt2", "llama-2-7b", "bert-base", "t5-small"])
def test_chart_labels_do_not_overlap(preset):
    """The charts a report embeds (chart_files: the shares and the scaling chart), with
    every label's box from the renderer.  Without a placement rule, gpt2, gpt3-small and opt-125m
    (d_model 768) collided, and so did llama-2-7b, mistral-7b and gpt3-6.7b (d_model 4096)."""
    require("matplotlib")
    from symtrans.catalog.presets import PRESETS, get
    from symtrans.render.plots import component_shares, scaling

    spec = get(preset).spec
    shares_fig = component_shares(spec, preset)
    scaling_fig = scaling(spec, "d_model", "params", preset)
    family = {p.name for p in PRESETS.values() if p.spec.family == spec.family and p.kind == "model"}
    assert {t.get_text() for t in scaling_fig.axes[0].texts} == family  # every preset of the family named
    assert _label_overlaps(shares_fig) == []
    assert _label_overlaps(scaling_fig) == []


def test_scaling_chart_with_labels_is_reproducible():
    require("matplotlib")
    from symtrans.render.plots import scaling, to_bytes

    assert to_bytes(scaling(GPT2, "d_model", "params", "gpt2"), "svg") == to_bytes(
        scaling(GPT2, "d_model", "params", "gpt2"), "svg"
    )


def test_the_overlap_check_catches_labels_left_on_their_points(monkeypatch):
    """The check above can fail: with each name written on its own point (no placement
    rule), gpt2, gpt3-small and opt-125m (all at d_model 768, 124-125 M parameters) collide."""
    require("matplotlib")
    import symtrans.render.plots as plots

    def on_the_points(ax, xs, ys, names, avoid=()):
        for x, y, n in zip(xs, ys, names):
            ax.text(x, y, n, fontsize=6)

    monkeypatch.setattr(plots, "_label_points", on_the_points)
    found = _label_overlaps(plots.scaling(GPT2, "d_model", "params", "gpt2"))
    assert any("'gpt3-small'" in f and "'opt-125m'" in f for f in found), found
