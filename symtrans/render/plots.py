"""Charts of the closed forms (matplotlib, the optional extra ``plots``).

* ``component_shares``: each component's share of the parameters and of the forward
  FLOPs (two horizontal bar panels);
* ``scaling``: parameters or FLOPs against d_model, N or L (exact values from
  ``sweep``), with the published presets of the same family marked.

Figures are built with ``matplotlib.figure.Figure`` and the Agg canvas, never pyplot,
so nothing global (the backend, open figures) changes in the caller's process.  Without
matplotlib every function raises ``PlotsUnavailable`` naming the install command;
``add_chart_section`` turns that into a report section saying how to get the charts.

Units: parameters; FLOPs (2 per multiply-accumulate, matrix products only).
"""

from __future__ import annotations

import io
import os
import re
from typing import Mapping, Sequence

import sympy as sp

from symtrans.base.errors import InputError
from symtrans.engine import symbols as S
from symtrans.engine.spec import Spec

INSTALL_HINT = "pip install 'symtrans[plots]'"
FORMATS = ("png", "svg", "pdf")
# The resolution figures are built and saved at: one resolution, so the text a chart measures
# while it is built (its labels' boxes) is the text matplotlib lays out when saving it
# (its layout cache hits); a figure built at 100 dpi and saved at 150 laid out every text twice.
DPI = 150


class PlotsUnavailable(ImportError):
    """matplotlib is not installed; the message names the install command."""


def available() -> bool:
    """True when matplotlib can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _figure(width: float, height: float):
    """An Agg figure of ``width`` x ``height`` inches with a fixed layout: each chart places
    its axes itself (``_place``), so saving runs no layout solver (constrained layout took
    most of a chart's time)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise PlotsUnavailable(f"charts need matplotlib; install it with {INSTALL_HINT}") from None
    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


# Approximate width of one character of the default 10-point tick labels, in inches.
_CHAR_IN = 0.075


def _place(fig, left: float, right: float, bottom: float, top: float, wspace_in: float = 0.0, n: int = 1):
    """``n`` axes side by side with margins given in inches (fixed layout); ``wspace_in``
    is the gap between two axes.  Returns the axes."""
    w, h = fig.get_size_inches()
    panel = (w - left - right - wspace_in * (n - 1)) / n
    axes = []
    for i in range(n):
        x0 = left + i * (panel + wspace_in)
        axes.append(fig.add_axes((x0 / w, bottom / h, panel / w, (h - bottom - top) / h)))
    return axes


_COVERED: set[int] = set()


def _plain(text: str) -> str:
    """User text (a model or file name) as a chart label drawn literally: ``$`` escaped so
    matplotlib's mathtext never parses it (``x$\\frac$y.json`` was a ParseSyntaxException),
    control characters escaped as in messages, and a character the chart font (matplotlib's
    default) has no glyph for shown as its ``\\uXXXX`` escape, so no "Glyph missing"
    warning reaches stderr."""
    from symtrans.base.escape import terminal_escape

    if not _COVERED:
        from matplotlib.font_manager import FontProperties, findfont
        from matplotlib.ft2font import FT2Font

        _COVERED.update(FT2Font(findfont(FontProperties())).get_charmap())
    s = terminal_escape(text)
    s = "".join(c if ord(c) in _COVERED or c in " " else f"\\u{ord(c):04x}" for c in s)
    return s.replace("$", r"\$")


def to_bytes(fig, fmt: str = "png") -> bytes:
    """The figure rendered as ``png`` (150 dpi), ``svg`` or ``pdf`` bytes (reproducible: no dates).

    Raises:
        ValueError: an unknown format.
    """
    if fmt not in FORMATS:
        raise InputError(f"chart format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    import matplotlib

    buf = io.BytesIO()
    meta = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[fmt]
    with matplotlib.rc_context({"svg.hashsalt": "symtrans"}):  # fixed SVG ids; restored afterwards
        fig.savefig(buf, format=fmt, dpi=DPI, metadata=meta)
    return buf.getvalue()


# ---------------------------------------------------------------------------------
# component shares


def _group(path: tuple[str, ...], node) -> str:
    """The chart group of a step: the top-level component outside the stacks, and inside
    them attention, attention scores, feed-forward or norms (by role and block; ``path``
    only supplies the display name of anything else)."""
    from symtrans.engine.cost import ATTENTION
    from symtrans.engine.roles import ATTENTION_BLOCKS, STACKS, Block, Role

    if not node.within(*STACKS):
        return path[1] if len(path) > 1 else path[0]
    step = node.step
    if step.kind == ATTENTION:
        return "attention scores"
    if step.role in (Role.NORM, Role.Q_NORM, Role.K_NORM):
        return "norms"
    if node.within(Block.CROSS_ATTENTION):
        return "cross-attention"
    if node.within(*ATTENTION_BLOCKS):
        return "attention"
    if node.within(Block.FFN, Block.MOE):
        return "feed-forward"
    return path[-1]


def shares(spec: Spec, values: Mapping[str, int], attr: str = "params", mask: str = "full") -> list[tuple[str, int]]:
    """(group, exact total) of ``attr`` (``params`` or ``flops``, forward) per chart group, largest first.

    ``values`` must hold B and L (L_src, L_tgt for an encoder-decoder) for FLOPs.
    The groups add up to the model's total.
    """
    from symtrans.engine.architectures import Workload, build
    from symtrans.engine.evaluate import exact

    spec.check_sizes(dict(values), workload=True)  # the option ranges at this workload (global_tokens)
    model = build(spec, Workload(mask=mask))
    sums: dict[str, sp.Expr] = {}
    for (path, _, _), node in zip(model.walk(), model.nodes()):
        q = node.step.params if attr == "params" else node.step.flops
        if q != 0:
            g = _group(path, node)
            sums[g] = sums.get(g, sp.Integer(0)) + node.multiplicity * q
    out = [(g, exact(e, values)) for g, e in sums.items()]
    return sorted([o for o in out if o[1]], key=lambda t: -t[1])


def component_shares(
    spec: Spec, name: str = "", batch: int = 1, seq_len: int | None = None, mask: str = "full", workload=None
):
    """A figure: each component group's share of parameters (left) and forward FLOPs (right).

    FLOPs are at ``workload`` (``engine.workload.Workload``; the report passes its own),
    else at ``batch`` sequences of ``seq_len`` tokens (default the model's L) resolved by
    ``engine.workload.resolve_workload``; the FLOPs panel is left out when the model has
    no L and none is given.

    Raises:
        PlotsUnavailable: matplotlib is not installed.
    """
    from symtrans.base.numbers import count, si
    from symtrans.engine.workload import resolve_workload

    if workload is None and (seq_len or spec.has("L")):
        workload = resolve_workload(spec, batch, seq_len, mask=mask)
    panels = [("parameters", shares(spec, dict(spec.values), "params"), count)]
    if workload is not None:
        data = shares(spec, workload.values(spec), "flops", workload.mask)
        # the total the report's headline and `symtrans flops` print, at the same workload
        title = f"forward FLOPs: {si(sum(v for _, v in data))} at {workload.describe()}"
        panels.append((title, data, si))
    fig = _figure(5.2 * len(panels), 0.45 * max(len(p[1]) for p in panels) + 1.6)
    label_in = 0.2 + _CHAR_IN * max(len(g) for _, data, _ in panels for g, _ in data)  # the longest group name
    top = 0.75 if name else 0.4  # the panel titles, and the suptitle above them
    axes = _place(fig, label_in, 0.2, 0.55, top, wspace_in=label_in + 0.2, n=len(panels))
    for ax, (title, data, fmt) in zip(axes, panels):
        total = sum(v for _, v in data)
        labels = [g for g, _ in data][::-1]
        pct = [100 * v / total for _, v in data][::-1]
        bars = ax.barh(labels, pct, color="#4878a8")
        for bar, (_, v) in zip(bars, data[::-1]):
            ax.text(
                bar.get_width(),
                bar.get_y() + bar.get_height() / 2,
                f" {bar.get_width():.1f}% ({fmt(v)})",
                va="center",
                fontsize=8,
            )
        ax.set_xlim(0, max(pct) * 1.45)
        ax.set_xlabel("share (%)")
        ax.set_title(f"{title}: {fmt(total)}", fontsize=10)
    if name:
        fig.suptitle(_plain(name), fontsize=11, y=1 - 0.12 / fig.get_size_inches()[1], va="top")
    return fig


# ---------------------------------------------------------------------------------
# scaling

SCALING_QUANTITIES = ("params", "flops")


def scaling_points(
    spec: Spec,
    over: str,
    values: Sequence[int],
    quantity: str = "params",
    rules: Sequence = (),
    defaults: Mapping[str, int] | None = None,
) -> list[tuple[int, int]]:
    """(x, exact quantity) for ``over`` = each of ``values`` (invalid values are skipped).

    Raises:
        ValueError: an unknown quantity or size, or no valid value.
    """
    import numpy as np

    from symtrans.analysis.sweep import _column, sweep

    if quantity not in SCALING_QUANTITIES:
        raise InputError(f"quantity must be one of {', '.join(SCALING_QUANTITIES)}, not {quantity!r}")
    if over not in S.SYMBOLS:
        raise InputError(f"unknown size {over!r}; known: {', '.join(S.SYMBOLS)}")
    res = sweep(spec, {over: _column(list(values))}, [quantity], rules=rules, defaults=defaults, invalid="skip")
    col = "params" if quantity == "params" else "flops_forward"
    return list(zip(np.asarray(res.columns[over]).tolist(), np.asarray(res.columns[col]).tolist()))


def default_rules(spec: Spec, over: str) -> list:
    """Keep the model's shape while d_model varies: d_ff in its ratio to d_model, h·d_k = d_model at fixed d_k."""
    from symtrans.analysis.solve import Rule

    rules = []
    if over == "d_model" and spec.has("d_ff"):
        ratio = sp.Rational(spec.size("d_ff"), spec.size("d_model"))
        rules.append(
            Rule("d_ff", sp.floor(ratio * S.d_model), ratio * S.d_model, source="the model's d_ff/d_model ratio")
        )
    return rules


def scaling(
    spec: Spec,
    over: str = "d_model",
    quantity: str = "params",
    name: str = "",
    values: Sequence[int] | None = None,
    mark_presets: bool = True,
    batch: int = 1,
    seq_len: int | None = None,
):
    """A figure: ``quantity`` against ``over`` (log-log), the model marked, and presets of its family.

    Along the curve only ``over`` changes (d_ff keeps its ratio to d_model when d_model
    varies); the presets are placed at their own exact counts, named by labels that do
    not overlap (``_label_points``).

    Raises:
        PlotsUnavailable: matplotlib is not installed.
        ValueError: an unknown quantity or size.
    """
    from symtrans.catalog.presets import PRESETS
    from symtrans.engine.architectures import build
    from symtrans.engine.evaluate import exact

    fig = _figure(6.4, 4.4)
    if values is None:
        here = spec.values.get(over) or (seq_len if over == "L" else None) or 1024
        lo, hi = max(1, here // 16), here * 16
        step = spec.size("h") if over == "d_model" and spec.has("h") and not spec.has("d_k") else 1
        import numpy as np

        raw = np.unique(np.geomspace(lo, hi, 60).astype(np.int64) // step * step)
        values = [int(v) for v in raw if v > 0]
    defaults = {"B": batch, **({"L": seq_len} if seq_len else {})}
    pts = scaling_points(spec, over, values, quantity, default_rules(spec, over), defaults)
    (ax,) = _place(fig, 0.85, 0.2, 0.6, 0.4)
    ax.plot(
        [p[0] for p in pts], [p[1] for p in pts], color="#4878a8", label=f"{_plain(name or 'model')} ({over} varies)"
    )
    unit = "parameters" if quantity == "params" else f"forward FLOPs (B={batch})"

    def q(s: Spec) -> int | None:
        v = dict(s.values)
        if quantity == "params":
            return exact(build(s).params, v)
        if not (seq_len or s.has("L")):
            return None
        from symtrans.engine.workload import resolve_workload

        return exact(build(s).flops, resolve_workload(s, batch, seq_len).values(s))

    if over in spec.values or (over == "L" and seq_len):
        x0 = spec.values.get(over, seq_len)
        ax.scatter([x0], [q(spec)], color="#c44e52", zorder=3, label=_plain(name or "this model"))
    if mark_presets:
        xs, ys, names = [], [], []
        for p in PRESETS.values():
            if p.spec.family != spec.family or getattr(p, "kind", "model") != "model" or over not in p.spec.values:
                continue
            try:
                y = q(p.spec)
            except ValueError:  # a preset whose options do not fit this workload stays unmarked
                continue
            if y is None:
                continue
            xs.append(p.spec.size(over))
            ys.append(y)
            names.append(p.name)
        if xs:
            ax.scatter(xs, ys, marker="x", color="#555555", zorder=2, label=f"presets ({spec.family})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    from matplotlib.ticker import FuncFormatter, LogLocator

    # Minor ticks (and their grid lines) at 2 and 5 of each decade, not 2..9: each tick is
    # a set of artists, and the 2..9 ticks were about a third of the chart's time.
    ax.xaxis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))
    ax.yaxis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(_power_of_ten))
    ax.yaxis.set_major_formatter(FuncFormatter(_power_of_ten))
    ax.set_xlabel(over)
    ax.set_ylabel(unit)
    ax.grid(True, which="both", alpha=0.3)
    # A fixed corner, not "best": the labels are placed around the legend's final box, and
    # every curve here rises, so the upper left stays clear of it.
    legend = ax.legend(fontsize=7, loc="upper left")
    # An explicit y skips matplotlib's title placement, which lays out the tick labels at each draw.
    ax.set_title(f"{unit} against {over}", fontsize=10, y=1.0)
    if mark_presets and xs:
        _label_points(ax, xs, ys, names, avoid=[legend])
    return fig


_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def _power_of_ten(value: float, _pos=None) -> str:
    """A log axis' major tick as plain text, ``10`` and a superscript exponent: the same
    look as matplotlib's default, without its mathtext parser (a third of a chart's save)."""
    import math

    if value <= 0:
        return ""
    e = round(math.log10(value))
    return "10" + str(e).translate(_SUPERSCRIPT) if abs(math.log10(value) - e) < 1e-9 else ""


def _label_points(ax, xs: Sequence[float], ys: Sequence[float], names: Sequence[str], avoid: Sequence = ()) -> None:
    """Name each point (x, y) of ``ax`` with labels that overlap neither each other, the
    points, nor ``avoid`` (artists such as the legend), all inside the axes.

    Presets of one family crowd together (gpt2, gpt3-small and opt-125m sit at one
    d_model), so each label takes the first free box by a fixed rule, in display space
    once the axes' limits are frozen: rings of growing radius around its point, eight
    directions each (right, left, above, below, then the diagonals), then the free spot
    of a 4-pixel grid over the axes nearest its point.  A label moved off its point gets
    a thin leader line.  One text layout per label and NumPy box tests: no iterations
    and no draw (adjustText's iterations were most of a report's chart time, 3.5 s), and
    the same chart gives the same bytes.  Sizes in pixels at 100 dpi, scaled to the
    figure's dpi (``DPI``, the dpi it is saved at, so the labels are laid out once).
    """
    import numpy as np
    from matplotlib.collections import LineCollection

    if not names:
        return
    renderer = ax.figure.canvas.get_renderer()
    ax.set_xlim(ax.get_xlim())  # autoscale resolved now, so data maps to display as when saved
    ax.set_ylim(ax.get_ylim())
    frame = ax.get_window_extent(renderer)
    to_axes = ax.transAxes.inverted()
    pts = ax.transData.transform(np.column_stack([np.asarray(xs, float), np.asarray(ys, float)]))
    px = ax.figure.dpi / 100  # the rule's sizes are pixels at 100 dpi
    gap = 2.0 * px  # kept free around every box (rounding at another dpi, hinting)
    mark = 5.0 * px  # half the side of the box a point's marker (6 points) occupies
    taken = [(x - mark, y - mark, x + mark, y + mark) for x, y in pts]
    for artist in avoid:
        b = artist.get_window_extent(renderer)
        taken.append((b.x0, b.y0, b.x1, b.y1))
    # The grid of fallback spots (box centres), inside the frame; shared by all labels.
    gx, gy = np.meshgrid(np.arange(frame.x0, frame.x1, 4.0 * px), np.arange(frame.y0, frame.y1, 4.0 * px))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    angles = np.radians([0, 180, 90, 270, 45, 135, 315, 225])
    rings = tuple(r * px for r in (4.0, 10.0, 18.0, 30.0, 46.0, 66.0))
    # Each ring spot's direction and radius, one row per spot (rings outer, directions inner).
    ring_cos = np.array([np.cos(a) for _ in rings for a in angles])
    ring_sin = np.array([np.sin(a) for _ in rings for a in angles])
    ring_r = np.array([r for r in rings for _ in angles])

    def first_free(cand, hw, hh, t):
        """Index of the first candidate centre whose box is inside the frame and clear of ``t``, or -1."""
        inside = (
            (cand[:, 0] - hw >= frame.x0)
            & (cand[:, 0] + hw <= frame.x1)
            & (cand[:, 1] - hh >= frame.y0)
            & (cand[:, 1] + hh <= frame.y1)
        )
        clash = (
            (cand[:, None, 0] - hw < t[None, :, 2])
            & (cand[:, None, 0] + hw > t[None, :, 0])
            & (cand[:, None, 1] - hh < t[None, :, 3])
            & (cand[:, None, 1] + hh > t[None, :, 1])
        ).any(axis=1)
        free = np.flatnonzero(inside & ~clash)
        return int(free[0]) if len(free) else -1

    segments = []
    for i in np.lexsort((pts[:, 1], pts[:, 0])):  # left to right, then bottom to top: a fixed order
        px, py = pts[i]
        text = ax.text(0, 0, names[i], fontsize=6, ha="center", va="center", transform=ax.transAxes)
        ext = text.get_window_extent(renderer)
        hw, hh = ext.width / 2 + gap, ext.height / 2 + gap
        t = np.asarray(taken)
        # The rings first; the grid (sorted by distance: most of the rule's cost) only when
        # every ring spot is taken.  The same first free spot as one list of rings then grid.
        ring = np.column_stack([px + ring_cos * (ring_r + hw), py + ring_sin * (ring_r + hh)])
        k, g = first_free(ring, hw, hh, t), -1
        if k >= 0:
            cx, cy = ring[k]
        else:
            near = grid[np.argsort(np.hypot(grid[:, 0] - px, grid[:, 1] - py), kind="stable")]
            g = first_free(near, hw, hh, t)
            cx, cy = near[g] if g >= 0 else (px, py)  # nowhere free: on its point (tests catch it)
        text.set_position(to_axes.transform((cx, cy)))
        taken.append((cx - hw, cy - hh, cx + hw, cy + hh))
        if k >= len(angles) or g >= 0:  # off the first ring: a leader line to the box's edge
            ex = min(max(px, cx - hw + gap), cx + hw - gap)
            ey = min(max(py, cy - hh + gap), cy + hh - gap)
            segments.append(to_axes.transform([(px, py), (ex, ey)]))
    if segments:
        ax.add_collection(
            LineCollection(segments, colors="#999999", linewidths=0.4, transform=ax.transAxes, zorder=1),
            autolim=False,
        )


# ---------------------------------------------------------------------------------
# reports


def chart_files(
    resolved, stem: str, fmt: str = "png", batch: int = 1, seq_len: int | None = None, workload=None
) -> dict[str, bytes]:
    """The report's charts as files ``{relative path: bytes}`` (shares and parameters against d_model).

    ``workload``: the report's ``engine.workload.Workload`` (else ``batch``, ``seq_len``).

    Raises:
        PlotsUnavailable: matplotlib is not installed.
    """
    spec = resolved.spec
    shares, *rest = chart_names(spec, stem, fmt)
    out = {shares: to_bytes(component_shares(spec, resolved.name, batch, seq_len, workload=workload), fmt)}
    for name in rest:  # the scaling chart
        out[name] = to_bytes(scaling(spec, "d_model", "params", resolved.name), fmt)
    return out


def chart_names(spec, stem: str, fmt: str) -> list[str]:
    """The file names of a report's charts: the shares chart, and the scaling chart when
    the model has a ``d_model`` (no chart is drawn to know them)."""
    return [f"{stem}-shares.{fmt}"] + ([f"{stem}-scaling.{fmt}"] if spec.has("d_model") else [])


def chart_stem(output: str) -> str:
    """The stem the chart files of the report ``output`` are named after: characters
    symtrans makes itself (the writers check them: ``[A-Za-z0-9.-]`` only)."""
    return re.sub(r"[^A-Za-z0-9.-]", "-", os.path.splitext(os.path.basename(output))[0]).lstrip(".-") or "report"


def chart_paths(spec, output: str, report_format: str) -> list[str]:
    """The paths the charts of a report written to ``output`` go to: beside it for
    Markdown and LaTeX, none for HTML (inlined) or PDF (embedded).  Known before any chart
    is drawn, so that an unwritable one fails the command before seconds of drawing."""
    if report_format not in ("markdown", "latex"):
        return []
    directory = os.path.dirname(output)
    return [os.path.join(directory, n) for n in chart_names(spec, chart_stem(output), CHART_FORMATS[report_format])]


CHART_TITLES = {
    "shares": "Share of parameters and forward FLOPs per component",
    "scaling": "Parameters against d_model, with the published models of the family",
}
# The chart files of each report format: PNG beside Markdown, PDF for LaTeX, SVG inlined in HTML.
CHART_FORMATS = {"markdown": "png", "latex": "pdf", "html": "svg"}


def add_chart_section(
    report,
    resolved,
    output: str | None,
    report_format: str,
    batch: int = 1,
    seq_len: int | None = None,
    workload=None,
    asked: bool = True,
) -> dict[str, bytes] | None:
    """Add a "Charts" section to a report (``report.doc.Report``); return the chart files.

    ``output`` is the report's path: the charts are named after it and referenced
    relative to it (Markdown, LaTeX), or inlined as SVG (HTML: no files).  Without an
    output path, or without matplotlib, the section says how to get the charts and no
    files are returned; but without matplotlib and charts not ``asked`` for (a report's
    default), no section is added and None is returned, so that the report ends with its
    last section, not an install hint (issue 25.12): the caller says it on stderr.
    """
    from symtrans.render.report import doc
    from symtrans.render.report.doc import Section, msg

    title = msg("Charts")
    if not output:
        doc.add_section(
            report,
            Section(
                "charts",
                title,
                [doc.Para(msg("Charts are written next to the report: give an output file with -o PATH."))],
            ),
        )
        return {}
    fmt = CHART_FORMATS[report_format]
    try:  # matplotlib is imported here, when a chart is written, and only then
        files = chart_files(resolved, chart_stem(output), fmt, batch, seq_len, workload)
    except PlotsUnavailable:
        if not asked:
            return None
        doc.add_section(
            report,
            Section(
                "charts",
                title,
                [doc.Para(msg("Charts need matplotlib; install it with {command}", command=doc.Code(INSTALL_HINT)))],
            ),
        )
        return {}
    charts = []
    for path, data in files.items():
        caption = msg(CHART_TITLES[path.rsplit("-", 1)[1].split(".")[0]])
        if fmt == "svg":
            charts.append(doc.Chart(caption, svg=data.decode("utf-8")))
        else:
            charts.append(doc.Chart(caption, path=path))
    doc.add_section(report, Section("charts", title, charts))
    return {} if fmt == "svg" else files


def render_report(
    resolved,
    fmt: str,
    output: str | None,
    title: str | None = None,
    batch: int = 1,
    seq_len: int | None = None,
    lang: str | None = "en",
) -> tuple[str, dict[str, bytes]]:
    """The derivation report (``markdown``, ``latex`` or ``html``) with its Charts section,
    and the chart files (none for HTML, whose charts are inlined).

    The files are ``{file name: bytes}`` to be written next to ``output`` (Markdown,
    LaTeX) or handed to ``report.build_pdf(..., files=...)`` (PDF).

    Raises:
        ValueError: as ``report.render``.
    """
    from symtrans.engine.workload import resolve_workload
    from symtrans.render.report import build_context, render_context

    wl = None  # one workload for the report and its charts
    if seq_len or resolved.spec.has("L"):
        wl = resolve_workload(resolved.spec, batch, seq_len, seq_len_source=resolved.seq_len_source)
    report = build_context(resolved, title=title, workload=wl)
    files = add_chart_section(report, resolved, output, fmt, workload=wl)
    return render_context(report, fmt, lang=lang), files


def beside(output: str, files: Mapping[str, bytes]) -> dict[str, bytes]:
    """``{path: bytes}``: each chart file in the directory of ``output``."""
    directory = os.path.dirname(output)  # as the user gave it: messages name the path they know
    return {os.path.join(directory, name): data for name, data in files.items()}


def write_beside(output: str, files: Mapping[str, bytes], inputs: Sequence[str] = ()) -> None:
    """Write the chart files into the directory of ``output``: all of them, or none
    (one ``atomic.Transaction``); none may be one of ``inputs``."""
    from symtrans.base.atomic import Transaction

    t = Transaction(inputs)
    for path, data in beside(output, files).items():
        t.add(path, data)
    t.commit()
