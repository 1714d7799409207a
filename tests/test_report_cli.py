"""``symtrans report`` for a person at a terminal (tracker issue 13, item 4).

Without ``-o`` on a terminal it prints a short readable summary, not the raw Markdown
with its ``$$`` blocks; the README's quick start, ``symtrans report llama-2-7b -o
llama-2-7b.html``, writes one HTML file and prints the summary and the path.  Piped
output is unchanged (the whole Markdown report), and scripts get no chatter.
"""

from __future__ import annotations

import sys

import pytest

from symtrans.cli.main import main

# Llama-2-7B (LlamaForCausalLM): 6,738,415,616 parameters (meta-llama/Llama-2-7b-hf).
LLAMA_2_7B = 6_738_415_616


@pytest.fixture
def terminal(monkeypatch, capsys):
    """Standard output is a terminal (captured): ``terminal.on()`` inside the test, when
    pytest has put its capturing stream in place."""

    class Terminal:
        def on(self):
            monkeypatch.setattr(sys.stdout, "isatty", lambda: True)

        def readouterr(self):
            return capsys.readouterr()

    return Terminal()


def test_report_on_a_terminal_is_a_short_summary(terminal):
    terminal.on()
    assert main(["report", "llama-2-7b"]) == 0
    out = terminal.readouterr().out
    lines = out.strip().splitlines()
    assert len(lines) <= 8 and "$" not in out and "|" not in out
    assert lines[0] == f"llama-2-7b: {LLAMA_2_7B:,} parameters (6.7B)"
    assert "forward FLOPs at B = 1, L = 4,096" in out
    assert "symtrans report llama-2-7b -o llama-2-7b.html" in out  # how to get the whole derivation


def test_quick_start_writes_html_and_prints_the_summary_and_path(terminal, tmp_path):
    out = tmp_path / "llama-2-7b.html"
    terminal.on()
    assert main(["report", "llama-2-7b", "-o", str(out)]) == 0
    printed = terminal.readouterr().out
    assert printed.splitlines()[0] == f"llama-2-7b: {LLAMA_2_7B:,} parameters (6.7B)"
    assert f"report: {out} (HTML, " in printed and "open it in a browser" in printed
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["llama-2-7b.html"]  # charts inlined: one file


def test_piped_output_is_the_markdown_report_and_files_are_written_silently(capsys, tmp_path):
    assert main(["report", "gpt2"]) == 0
    assert capsys.readouterr().out.startswith("# gpt2: parameters and forward FLOPs")
    assert main(["report", "gpt2", "--no-charts", "-o", str(tmp_path / "g.html")]) == 0
    assert capsys.readouterr().out == ""


def test_an_explicit_format_on_a_terminal_prints_that_format(terminal):
    terminal.on()
    assert main(["report", "gpt2", "--format", "markdown"]) == 0
    assert terminal.readouterr().out.startswith("# gpt2:")


def test_the_html_extension_and_format_agree(capsys, tmp_path):
    assert main(["report", "gpt2", "--no-charts", "--format", "html", "-o", str(tmp_path / "g.htm")]) == 0
    assert main(["report", "gpt2", "--format", "html", "-o", str(tmp_path / "g.md")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "contradicts" in err
    assert not (tmp_path / "g.md").exists()
