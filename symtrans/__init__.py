"""symtrans: exact, symbolic parameter counts, FLOPs and memory of Transformer models.

``import symtrans`` stays light: everything loads on first use.

    >>> import symtrans
    >>> m = symtrans.model("gpt2")          # displays as rendered LaTeX/Markdown in Jupyter
    >>> m.params, m.closed_form, m.sizes
    >>> m.subs(m.closed_form, N=24)         # exact substitution by size name
    >>> symtrans.parse_closed_form("N*d_model**2")   # a JSON closed form read back (never sympify)
"""


def model(name_or_spec, settings=None, **changes):
    """A ``notebook.Model`` (exact counts, closed forms, Jupyter display) for a preset name,
    a config.json path or a Spec, with ``--set``-style ``settings`` or keyword changes.

    Raises:
        ValueError: an unknown preset, a bad setting, or an invalid Spec.
    """
    from symtrans.render.notebook import model as _model

    return _model(name_or_spec, settings, **changes)


def parse_closed_form(text, symbols=None):
    """The SymPy expression of a printed closed form (the JSON ``closed_form``), in
    symtrans's own symbols (positive integers), parsed without evaluating anything.

    Pass the same JSON's ``symbols`` map as ``symbols=`` to also admit the names it lists
    beyond the legend (closed forms of the generic transformers path use config keys such as
    ``num_shared_experts``); names in neither are still refused.

    Never use ``sympy.sympify`` on such text: it evaluates it as Python and reads ``N`` as
    SymPy's ``N()`` and ``E`` as Euler's number.  See ``symtrans.engine.parse``.

    Raises:
        ValueError: one line naming what is not allowed (unknown names, a malformed
            ``symbols`` map, calls other than
            Min/Max/floor/ceiling, attributes, exponents past 64, text past 20,000 characters).
    """
    from symtrans.engine.parse import parse_closed_form as _parse

    return _parse(text, symbols)


def __getattr__(name):
    if name == "assert_identity":
        from symtrans.accounting.formulas import assert_identity

        return assert_identity
    raise AttributeError(f"module 'symtrans' has no attribute {name!r}")
