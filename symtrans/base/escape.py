"""Escaping of report text, and the one marker for text that passes through raw.

Every value a template prints is escaped for its format unless it is a ``Math``: a
LaTeX string printed by SymPy (``sympy.latex`` with ``symbols.LATEX_NAMES``) or by the
number formatter.  Nothing else is ever trusted.

LaTeX: every character TeX treats specially becomes a command that prints it, so
``\\input{...}``, ``\\write18``, ``\\catcode``, ``^^5c`` and unbalanced braces print
literally.  No ``^`` survives (the ``^^`` notation needs one), no ``\\``, ``{``, ``}``,
``$``, ``&``, ``#``, ``_``, ``%`` or ``~`` either, and control characters become spaces.
Characters that an OT1 font lacks or would print differently (``_ ~ ^ "``, the backtick
and the straight quote) are taken from the typewriter font (cmtt); a line
may break after ``/``.  Characters pdflatex cannot set without extra packages (CJK,
for instance) print as ``[U+XXXX]``; ``needs_unicode_tex`` tells when a text has such a
character, and ``latex_escape(text, unicode=True)`` passes them through for XeLaTeX with
fontspec (the font must then have them: the PDF build checks).
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["Math", "latex_escape", "markdown_escape", "needs_unicode_tex", "terminal_escape"]


class Math(str):
    """LaTeX math printed by SymPy or the number formatter: passes through unescaped.

    Marking a string ``Math`` is the only way to put raw LaTeX into a report.  Any
    string operation on it (``+``, ``format``, Jinja filters) returns a plain ``str``,
    which is escaped again: the safe failure.
    """

    __slots__ = ()


def _tt(code: int) -> str:
    return "\\texttt{\\char%d}" % code


_LATEX_ASCII = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "%": r"\%",
    "_": _tt(95),
    "^": _tt(94),
    "~": _tt(126),
    '"': _tt(34),
    "`": _tt(18),  # cmtt's grave, not the curly quote at 96
    "'": _tt(13),  # cmtt's straight quote, not the curly one at 39
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "/": r"/\allowbreak{}",
}

# Non-ASCII characters that OT1 pdflatex cannot print as they are.
_LATEX_UNICODE = {
    "§": r"\S{}",
    "¶": r"\P{}",
    "©": r"\copyright{}",
    "£": r"\pounds{}",
    "–": "--",
    "—": "---",
    "‘": "`",
    "’": "'",
    "“": "``",
    "”": "''",
    "…": r"\ldots{}",
    "•": r"\ensuremath{\bullet}",
    "·": r"\ensuremath{\cdot}",
    "×": r"\ensuremath{\times}",
    "÷": r"\ensuremath{\div}",
    "±": r"\ensuremath{\pm}",
    "−": r"\ensuremath{-}",
    "≈": r"\ensuremath{\approx}",
    "≤": r"\ensuremath{\le}",
    "≥": r"\ensuremath{\ge}",
    "≠": r"\ensuremath{\ne}",
    "→": r"\ensuremath{\to}",
    "←": r"\ensuremath{\leftarrow}",
    "↔": r"\ensuremath{\leftrightarrow}",
    "⇒": r"\ensuremath{\Rightarrow}",
    "∞": r"\ensuremath{\infty}",
    "√": r"\ensuremath{\surd}",
    "∑": r"\ensuremath{\sum}",
    "∏": r"\ensuremath{\prod}",
    "°": r"\ensuremath{^\circ}",
    "µ": r"\ensuremath{\mu}",
    "²": r"\ensuremath{^2}",
    "³": r"\ensuremath{^3}",
    "¹": r"\ensuremath{^1}",
    "½": r"\ensuremath{\tfrac12}",
    # Guillemets (« » ‹ ›) are not here: OT1 has no glyph for them, and the math symbols that
    # look alike (\ll, \gg, \langle, \rangle) are other characters, so text holding them is
    # set by XeLaTeX from the Unicode font (needs_unicode_tex).
    "ß": r"\ss{}",
    "æ": r"\ae{}",
    "Æ": r"\AE{}",
    "ø": r"\o{}",
    "Ø": r"\O{}",
    "å": r"\aa{}",
    "Å": r"\AA{}",
    "œ": r"\oe{}",
    "Œ": r"\OE{}",
    "ł": r"\l{}",
    "Ł": r"\L{}",
    "ı": r"\i{}",
    "\u00a0": "~",
    "\u2009": r"\,",
    "\u202f": r"\,",
}
_GREEK = {
    "α": "alpha",
    "β": "beta",
    "γ": "gamma",
    "δ": "delta",
    "ε": "epsilon",
    "ζ": "zeta",
    "η": "eta",
    "θ": "theta",
    "ι": "iota",
    "κ": "kappa",
    "λ": "lambda",
    "μ": "mu",
    "ν": "nu",
    "ξ": "xi",
    "π": "pi",
    "ρ": "rho",
    "σ": "sigma",
    "τ": "tau",
    "υ": "upsilon",
    "φ": "phi",
    "χ": "chi",
    "ψ": "psi",
    "ω": "omega",
    "Γ": "Gamma",
    "Δ": "Delta",
    "Θ": "Theta",
    "Λ": "Lambda",
    "Ξ": "Xi",
    "Π": "Pi",
    "Σ": "Sigma",
    "Υ": "Upsilon",
    "Φ": "Phi",
    "Ψ": "Psi",
    "Ω": "Omega",
}
_LATEX_UNICODE.update({c: r"\ensuremath{\%s}" % n for c, n in _GREEK.items()})
# Combining accents -> the LaTeX accent command that prints them on a letter.
_ACCENTS = {
    "\u0300": "`",
    "\u0301": "'",
    "\u0302": "^",
    "\u0303": "~",
    "\u0308": '"',
    "\u0304": "=",
    "\u0307": ".",
    "\u030a": "r",
    "\u030c": "v",
    "\u0306": "u",
    "\u030b": "H",
    "\u0327": "c",
    "\u0328": "k",
}


# Accents the OT1 encoding of plain pdflatex lacks (the ogonek needs T1).
_T1_ONLY_ACCENTS = frozenset({"\u0328"})


def _accented(c: str) -> str | None:
    """``c`` as an accent command on an ASCII letter (``é`` -> ``\\'{e}``) that OT1
    pdflatex can set, else None."""
    decomposed = unicodedata.normalize("NFD", c)
    base, marks = decomposed[0], decomposed[1:]
    if not (base.isascii() and base.isalpha() and marks and all(m in _ACCENTS for m in marks)):
        return None
    if any(m in _T1_ONLY_ACCENTS for m in marks):
        return None
    out = base if base not in "ij" else "\\" + base
    for m in marks:
        out = "\\%s{%s}" % (_ACCENTS[m], out)
    return out


# The typewriter quote and grave sit at their ASCII codes in a Unicode font (XeLaTeX),
# not at cmtt's 13 and 18.
_LATEX_ASCII_UNICODE = {**_LATEX_ASCII, "`": _tt(96), "'": _tt(39)}


def _latex_char(c: str, unicode: bool = False) -> str:
    if c in _LATEX_ASCII:
        return (_LATEX_ASCII_UNICODE if unicode else _LATEX_ASCII)[c]
    o = ord(c)
    if o < 0x20 or o == 0x7F:
        return " "
    if o < 0x80:
        return c
    if c in _LATEX_UNICODE:
        mapped = _LATEX_UNICODE[c]
        # math symbols and Greek print in math mode in any engine; letters and
        # punctuation come from the Unicode font under XeLaTeX
        if not unicode or mapped.startswith("\\ensuremath") or not c.isprintable() or c.isspace():
            return mapped
        return c
    if unicode:
        return c
    accented = _accented(c)
    if accented is not None:
        return accented
    return "[U+%04X]\\allowbreak{}" % o


def needs_unicode_tex(text: object) -> bool:
    """True when ``latex_escape(text)`` cannot set some character with plain pdflatex
    (OT1): CJK, an ogonek, any letter outside the tables above.  ``Math`` is never
    checked (SymPy prints ASCII LaTeX)."""
    if isinstance(text, Math):
        return False
    for c in str(text):
        if ord(c) < 0x80 or c in _LATEX_UNICODE:
            continue
        if _accented(c) is None:
            return True
    return False


def latex_escape(text: object, unicode: bool = False) -> str:
    """``text`` as LaTeX that prints it literally in text mode.

    ``Math`` values are returned unchanged (they are trusted LaTeX); every other value
    is converted with ``str`` and escaped character by character.  TeX ligatures that
    would change the text (``--``, ``''``, ``!```, ``<<``) are broken with ``{}``.
    With ``unicode`` (XeLaTeX and fontspec) non-ASCII letters and punctuation pass
    through as they are; math symbols and Greek still print in math mode.
    """
    if isinstance(text, Math):
        return text
    s = str(text)
    out: list[str] = []
    for i, c in enumerate(s):
        out.append(_latex_char(c, unicode))
        if c == "-" and i + 1 < len(s) and s[i + 1] == "-":
            out.append("{}")
    return "".join(out)


_MD_SPECIAL = re.compile(r"([\\`*\[\]|$~<>])")
_MD_WORD_EDGE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def markdown_escape(text: object) -> str:
    """``text`` as Markdown (GitHub flavour) that renders it literally.

    Escapes backslash, backtick, ``*``, brackets, ``|`` (tables), ``$`` (math), ``~``
    and ``<``/``>`` (no raw HTML), and ``_`` where it could start or end emphasis
    (``d_model`` stays readable).  Line breaks become spaces so text cannot leave its
    heading or table cell.  ``Math`` values are returned unchanged.
    """
    if isinstance(text, Math):
        return text
    s = re.sub(r"[\x00-\x1f\x7f]+", " ", str(text))
    s = _MD_SPECIAL.sub(r"\\\1", s)
    s = _MD_WORD_EDGE_UNDERSCORE.sub(r"\\_", s)
    return s


# Characters a terminal acts on rather than prints: C0 and C1 controls and DEL (ESC starts
# colour and cursor sequences), lone surrogates (no character: they cannot even be
# encoded) and the bidirectional embeddings, overrides and isolates (they reorder what
# follows on the line).
_UNSAFE_RANGES = ((0x00, 0x1F), (0x7F, 0x9F), (0xD800, 0xDFFF), (0x202A, 0x202E), (0x2066, 0x2069))
_TERMINAL_UNSAFE = re.compile("[" + "".join(f"{chr(a)}-{chr(b)}" for a, b in _UNSAFE_RANGES) + "]")


@functools.lru_cache(maxsize=16)
def _unsafe_except(keep: str) -> re.Pattern:
    """The unsafe characters other than ``keep`` as one class: the kept ones are never
    matched, rather than matched and put back by a call per match (one per line of a
    90,000-line output, 0.9 s)."""
    codes = sorted({c for a, b in _UNSAFE_RANGES for c in range(a, b + 1)} - {ord(k) for k in keep})
    runs: list[list[int]] = []
    for c in codes:
        if runs and runs[-1][1] == c - 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return re.compile("[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in runs) + "]")


def _escaped(m: re.Match) -> str:
    o = ord(m.group())
    return "\\x%02x" % o if o < 0x100 else "\\u%04x" % o


def terminal_escape(text: object, keep: str = "") -> str:
    """``text`` with every character a terminal would act on shown as a Python-style
    escape (ESC becomes ``\\x1b``, a lone surrogate ``\\ud800``); characters in ``keep``
    (e.g. ``"\\n\\t"`` for multi-line output) stay as they are.

    For messages and plain-text output that name paths, keys or model names the user
    chose: they reach the terminal as text, never as control sequences.
    """
    s = str(text)
    if not keep:
        return _TERMINAL_UNSAFE.sub(_escaped, s)
    return _unsafe_except(keep).sub(_escaped, s)


# What one error line may quote: a run of text without spaces (a path, an expression, a
# key) is shown up to QUOTE_CAP characters, a whole message up to MESSAGE_CAP.
QUOTE_CAP = 80
MESSAGE_CAP = 1000
_LONG_RUN = re.compile(r"\S{%d,}" % (QUOTE_CAP + 1))


def _cap_run(m: re.Match) -> str:
    run = m.group()
    return f"{run[:QUOTE_CAP]} … ({len(run):,} characters)"  # applied twice, the same


def one_line(text: object) -> str:
    """The message formatter of every error and warning line: ``text`` on one line
    (whitespace runs become one space), each space-free run longer than ``QUOTE_CAP``
    characters cut to its first ``QUOTE_CAP`` and its length, the whole cut at
    ``MESSAGE_CAP`` with its length, and every character a terminal would act on
    escaped (``terminal_escape``).  A 4,096-character path gave an 8,552-character line,
    a config with 200,000 unknown keys a 2,089,045-character one.
    """
    s = " ".join(str(text).split())
    s = _LONG_RUN.sub(_cap_run, s)
    if len(s) > MESSAGE_CAP + 64:  # the margin keeps a capped message as it is when capped again
        s = f"{s[:MESSAGE_CAP]} … ({len(s):,} characters in all)"
    return terminal_escape(s)
