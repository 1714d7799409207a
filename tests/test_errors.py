"""Only symtrans's own errors become one line and exit 2; anything else is a bug and shows
its traceback (issue 10: main turns only symtrans's own error classes into exit 2)."""

import ast
from pathlib import Path

import pytest

from symtrans.base.errors import InputError, SymtransError, UnknownNameError
from symtrans.cli import main as cli

PACKAGE = Path(__file__).resolve().parents[1] / "symtrans"


def _failing_command(monkeypatch, exc):
    def boom(args):
        raise exc

    real = cli.build_parser

    def parser(*a, **k):
        p = real(*a, **k)
        p.set_defaults(func=boom)
        for action in p._subparsers._group_actions if p._subparsers else ():
            for sub in action.choices.values():
                sub.set_defaults(func=boom)
        return p

    monkeypatch.setattr(cli, "build_parser", parser)


@pytest.mark.parametrize("exc", [InputError("bad size d_model=-1"), UnknownNameError("unknown preset 'x'")])
def test_own_errors_are_one_line_and_exit_2(monkeypatch, capsys, exc):
    _failing_command(monkeypatch, exc)
    assert cli.main(["params", "gpt2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(exc) in err and "Traceback" not in err


@pytest.mark.parametrize("exc", [ValueError("a bug in SymPy"), KeyError("a bug"), RuntimeError("a bug")])
def test_other_errors_are_bugs_and_propagate(monkeypatch, exc):
    _failing_command(monkeypatch, exc)
    with pytest.raises(type(exc)):
        cli.main(["params", "gpt2"])


def test_the_library_raises_its_own_classes():
    """No bare ValueError or KeyError is raised by the library: each is an InputError or an
    UnknownNameError (so the CLI can tell bad input from a bug).  TypeError stays a
    programming error."""
    bare = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                name = getattr(node.exc.func, "id", None)
                if name in ("ValueError", "KeyError"):
                    bare.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert bare == []


def test_the_classes_keep_their_builtin_bases():
    assert issubclass(InputError, ValueError) and issubclass(UnknownNameError, KeyError)
    assert issubclass(InputError, SymtransError) and str(UnknownNameError("x y")) == "x y"
