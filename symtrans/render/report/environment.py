"""Jinja2 environments for the report formats, made by a factory (no global state).

Both environments load the templates shipped in ``symtrans/render/report/templates`` (package
data), use ``StrictUndefined`` (a missing variable raises, never prints blank) and
escape *every* printed value for their format through ``finalize``; only ``Math``
values (SymPy-printed LaTeX) pass through raw.

The LaTeX environment uses delimiters that cannot clash with TeX:
``\\VAR{expr}``, ``\\BLOCK{statement}``, ``\\#{comment}`` and ``%#`` line comments.
"""

from __future__ import annotations

from typing import Callable

import jinja2

from symtrans.base.escape import Math, latex_escape, markdown_escape

from . import mathfmt

FORMATS = ("markdown", "latex")
_EXT = {"markdown": "md", "latex": "tex"}


def _finalizer(escape: Callable[[object], str]) -> Callable[[object], str]:
    """Escape every printed value for the format; only ``Math`` passes through raw.

    Jinja's ``autoescape`` stays off: with it on, Jinja would HTML-escape constants and
    trust any ``Markup``.  Here one rule holds: ``{{ x }}`` / ``\\VAR{x}`` prints
    ``escape(x)`` unless ``x`` is ``Math``.  Templates reuse pieces with ``{% include %}``
    (whose output is written directly), not macros (whose output would be escaped).
    """

    def finalize(value: object) -> str:
        if isinstance(value, jinja2.Undefined):
            str(value)  # StrictUndefined raises here
        if isinstance(value, Math):
            return value
        return escape(value)

    return finalize


def _math_join(items: object, sep: str = " ") -> Math:
    """Join ``Math`` lines into one ``Math`` (``join`` would return escaped text)."""
    items = list(items)  # type: ignore[call-overload]
    if not all(isinstance(i, Math) for i in items):
        raise TypeError("mathjoin joins Math values only")
    if sep not in (" ", ""):
        raise ValueError("mathjoin separators are ' ' and ''")
    return Math(sep.join(items))


def _common_filters(env: jinja2.Environment) -> None:
    env.filters.update(
        {
            "mathjoin": _math_join,  # [Math, Math] -> Math
            "num": mathfmt.thousands,  # 124,439,808 (text)
            "count": mathfmt.count,  # 124,439,808 (124.4M) (text)
            "si": mathfmt.si,  # 124.4M (text)
            "mathnum": mathfmt.math_number,  # 124{,}439{,}808 (math, trusted)
        }
    )


class _MemoryBytecodeCache(jinja2.BytecodeCache):
    """Compiled templates kept in memory, shared by the environments of one process.

    Jinja's own mechanism (``jinja2.BytecodeCache``): a template is compiled once and
    reloaded from its bytecode while its source checksum is unchanged, so a new
    environment per report (no shared environment state) does not recompile
    every template; an edited template is recompiled.  Jinja's cache key is the
    template's name, not the environment's options: hence one cache per format.
    """

    def __init__(self) -> None:
        self._store: dict[str, bytes] = {}

    def load_bytecode(self, bucket: "jinja2.bccache.Bucket") -> None:
        data = self._store.get(bucket.key)
        if data is not None:
            bucket.bytecode_from_string(data)

    def dump_bytecode(self, bucket: "jinja2.bccache.Bucket") -> None:
        self._store[bucket.key] = bucket.bytecode_to_string()


_BYTECODE = {fmt: _MemoryBytecodeCache() for fmt in FORMATS}


def make_environment(fmt: str) -> jinja2.Environment:
    """A new Jinja2 environment for ``fmt`` (``"markdown"`` or ``"latex"``).

    Raises:
        ValueError: for another format.
    """
    if fmt not in FORMATS:
        raise ValueError(f"report format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    loader = jinja2.PackageLoader("symtrans.render.report", "templates")
    common = dict(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        bytecode_cache=_BYTECODE[fmt],
    )
    if fmt == "latex":
        env = jinja2.Environment(
            block_start_string=r"\BLOCK{",
            block_end_string="}",
            variable_start_string=r"\VAR{",
            variable_end_string="}",
            comment_start_string=r"\#{",
            comment_end_string="}",
            line_comment_prefix="%#",
            finalize=_finalizer(latex_escape),
            **common,
        )
    else:
        env = jinja2.Environment(finalize=_finalizer(markdown_escape), **common)
    _common_filters(env)
    env.globals["ext"] = _EXT[fmt]
    return env


def template_name(fmt: str, template: str) -> str:
    """The file of ``template`` for ``fmt``: ``<template>.md.j2`` or ``<template>.tex.j2``."""
    return f"{template}.{_EXT[fmt]}.j2"
