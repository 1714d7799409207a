"""Derivation reports: Markdown, LaTeX and PDF.

Public API::

    render(resolved, fmt, title=None, batch=1, seq_len=None) -> str   # fmt: markdown | latex
    build_pdf(latex_source, timeout=120) -> bytes
    build_context(resolved, title=None, batch=1, seq_len=None) -> dict  # plain data
    render_context(context, fmt) -> str
    make_environment(fmt) -> jinja2.Environment                          # a new one per call
    latex_escape(text) -> str, markdown_escape(text) -> str, Math (trusted LaTeX marker)

Write the results with ``symtrans.atomic.write_atomic``.  ``build_pdf`` raises
``TeXNotFoundError`` (no TeX installed) or ``PDFBuildError`` (TeX failed or timed out),
both ``RuntimeError``; ``render`` raises ``ValueError`` for a bad format, batch or length.
"""

from __future__ import annotations

from typing import Any

from symtrans.base.escape import Math, latex_escape, markdown_escape

from .context import FLOP_CONVENTION, add_section, build_context
from .environment import FORMATS, make_environment, template_name
from .pdf import PDFBuildError, TeXNotFoundError, build_pdf, tex_available

__all__ = [
    "FLOP_CONVENTION",
    "FORMATS",
    "Math",
    "PDFBuildError",
    "TeXNotFoundError",
    "add_section",
    "build_context",
    "build_pdf",
    "latex_escape",
    "make_environment",
    "markdown_escape",
    "render",
    "render_context",
    "tex_available",
]


def render_context(context: dict, fmt: str, env: Any = None) -> str:
    """Render a context from ``build_context`` (possibly with added sections) as ``fmt``.

    ``env`` reuses an environment from ``make_environment(fmt)`` (its templates stay
    compiled); by default a new one is made.

    Raises:
        ValueError: for an unknown format.
        jinja2.UndefinedError: when the context lacks a variable a template uses.
    """
    if fmt not in FORMATS:
        raise ValueError(f"report format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    env = env if env is not None else make_environment(fmt)
    text = env.get_template(template_name(fmt, "report")).render(**context)
    return text.rstrip("\n") + "\n"


def render(resolved: Any, fmt: str, title: str | None = None, batch: int = 1, seq_len: int | None = None) -> str:
    """The derivation report of ``resolved`` (a ``resolve.Resolved``) as Markdown or LaTeX.

    Args:
        fmt: ``"markdown"`` or ``"latex"`` (compile the latter with ``build_pdf``).
        title: the title; user text, escaped for the format.
        batch, seq_len: the workload of the FLOPs section (B, and L; ``L_src = L_tgt``
            for encoder-decoders); ``seq_len`` defaults to the model's L.

    Raises:
        ValueError: unknown format, non-positive batch or seq_len.
    """
    if fmt not in FORMATS:
        raise ValueError(f"report format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    return render_context(build_context(resolved, title=title, batch=batch, seq_len=seq_len), fmt)
