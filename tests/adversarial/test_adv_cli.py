"""Adversarial command lines (issue 6, item 3, "CLI").

Unknown flags, presets, conventions, modes, dtypes and accelerators; ``--set`` and the
constraint options (``--keep``, ``--grid``, ``--for``, variant strings of ``diff``) fed
``__import__('os')``, lambdas, attribute access, statements and very long expressions;
``-o`` pointing to a directory, to a path under a regular file, into /proc, or at an
existing file that a failing run must keep intact.

Every case is checked by the ``reject`` fixture (conftest.py) against the contract of
DESIGN.md §6 and issue 6: exit status 2, exactly one line on stderr, no traceback,
nothing on stdout, no file written, every earlier file byte-identical, and no
``canary`` file (the injected payloads would ``touch canary`` in the working directory).
The needle is the part of the one-line message that names the problem.
"""

from __future__ import annotations

import pytest
from conftest import INJECT  # noqa: E402  (tests/adversarial/conftest.py)

LONG_SUM = "+".join(["d_model"] * 2000)  # 16 kB: far past the 500-character limit of safe_parse
SOLVE = ["solve", "gpt2", "--for", "d_model", "--params", "1e9"]
SWEEP = ["sweep", "gpt2", "--grid", "d_model=768"]
TIME = ["time", "gpt2", "--accelerator", "h100-sxm"]

# (id, argv, needle)
CASES = [
    # --- unknown flags, commands, presets and choices
    ("unknown-flag", ["params", "gpt2", "--frobnicate", "-o", "out.md"], "unrecognized arguments"),
    ("unknown-command", ["frobnicate", "gpt2"], "invalid choice"),
    ("no-command", [], "required"),
    ("unknown-preset", ["params", "gpt-7", "-o", "out.md"], "unknown preset"),
    ("preset-typo", ["report", "lama-2-7b", "-o", "out.md"], "did you mean"),
    ("empty-model", ["params", "", "-o", "out.md"], "unknown preset"),
    ("unknown-format", ["params", "gpt2", "--format", "yaml", "-o", "out.md"], "invalid choice"),
    ("report-format-docx", ["report", "gpt2", "--format", "docx", "-o", "out.md"], "invalid choice"),
    ("unknown-convention", ["flops", "gpt2", "--convention", "kaplan2", "-o", "out.md"], "unknown convention"),
    ("unknown-mode", ["flops", "gpt2", "--mode", "sideways", "-o", "out.md"], "unknown mode"),
    ("unknown-mask", ["flops", "gpt2", "--mask", "diagonal", "-o", "out.md"], "unknown mask"),
    ("unknown-recompute", ["flops", "gpt2", "--mode", "training", "--recompute", "some"], "recompute"),
    ("unknown-dtype", ["memory", "gpt2", "--dtype", "fp7", "-o", "out.md"], "unknown dtype"),
    ("unknown-kv-dtype", ["memory", "gpt2", "--kv-dtype", "fp7"], "unknown dtype"),
    ("unknown-optimizer", ["memory", "gpt2", "--optimizer", "sgd-magic"], "unknown optimizer"),
    ("zero-stage-4", ["memory", "gpt2", "--zero", "4"], "zero stage"),
    ("unknown-accelerator", ["time", "gpt2", "--accelerator", "tpu-v99", "-o", "out.md"], "unknown accelerator"),
    ("missing-accelerator", ["time", "gpt2"], "--accelerator"),
    ("unknown-precision", TIME + ["--precision", "fp3"], "unknown precision"),
    ("unknown-identity", ["identities", "nonexistent", "-o", "out.md"], "unknown identity"),
    ("diff-unknown-convention", ["diff", "gpt2", "--convention-b", "nope"], "invalid choice"),
    ("diff-unknown-mode", ["diff", "gpt2", "--mode-a", "sideways"], "invalid choice"),
    ("plot-unknown-kind", ["plot", "gpt2", "--kind", "pie", "-o", "c.png"], "invalid choice"),
    ("plot-bad-extension", ["plot", "gpt2", "-o", "chart.txt"], "chart file must end in"),
    ("sweep-unknown-quantity", SWEEP + ["--quantity", "joules"], "unknown quantity"),
    ("solve-two-budgets", SOLVE + ["--flops", "1e12"], "exactly one budget"),
    ("pdf-without-output", ["report", "gpt2", "--format", "pdf"], "needs -o"),
    # --- numbers out of range where a size or a fraction belongs
    ("batch-zero", ["flops", "gpt2", "--batch", "0"], "--batch"),
    ("batch-negative", ["flops", "gpt2", "--batch", "-1"], "--batch"),
    ("seq-len-fraction", ["flops", "gpt2", "--seq-len", "1.5"], "--seq-len"),
    ("batch-1e400", ["flops", "gpt2", "--batch", "1e400"], "implausibly large"),
    ("seq-len-400-digits", ["report", "gpt2", "--seq-len", "1" + "0" * 400], "implausibly large"),
    ("params-budget-1e400", ["solve", "gpt2", "--for", "d_model", "--params", "1e400"], "implausibly large"),
    ("compute-1e400", ["plan", "--compute", "1e400"], "implausibly large"),
    ("mfu-above-one", TIME + ["--mfu", "1.5"], "--mfu"),
    ("mfu-nan", TIME + ["--mfu", "nan"], "--mfu"),
    ("margin-nan", ["memory", "gpt2", "--inference", "--margin", "nan"], "margin"),
    ("tokens-per-param-zero", ["plan", "--compute", "1e21", "--tokens-per-param", "0"], "tokens per parameter"),
    ("ffn-multiplier-1e308", SOLVE + ["--llama-ffn", "--ffn-dim-multiplier", "1e308"], "ffn_dim_multiplier"),
    ("ffn-multiplier-nan", SOLVE + ["--llama-ffn", "--ffn-dim-multiplier", "nan"], "ffn_dim_multiplier"),
    ("walk-step-out-of-range", ["walk", "gpt2", "--step", "100000"], "--step"),
    ("grid-step-zero", ["sweep", "gpt2", "--grid", "d_model=768:1536:0"], "step"),
    ("grid-too-many-values", ["sweep", "gpt2", "--grid", "d_model=1:1000000000000:1"], "more than"),
    # --- --set: injection, lambdas, attribute access, long text, bad values
    ("set-name-injection", ["params", "gpt2", "--set", INJECT + "=1", "-o", "out.md"], "unknown --set name"),
    ("set-value-injection", ["params", "gpt2", "--set", "d_model=" + INJECT, "-o", "out.md"], "d_model"),
    ("set-lambda", ["params", "gpt2", "--set", "d_model=lambda: 768"], "d_model"),
    ("set-attribute-access", ["params", "gpt2", "--set", "d_model=().__class__.__bases__[0]"], "d_model"),
    ("set-statement", ["params", "gpt2", "--set", "d_model=768;import os"], "d_model"),
    ("set-long-expression", ["params", "gpt2", "--set", "d_model=" + LONG_SUM], "d_model"),
    ("set-100000-digits", ["params", "gpt2", "--set", "d_model=" + "9" * 100_000], "d_model"),
    ("set-1e400", ["report", "gpt2", "--set", "N=1e400", "-o", "out.md"], "N"),
    ("set-above-2-to-the-53", ["params", "gpt2", "--set", "V=9007199254740993"], "implausibly large"),
    ("set-option-injection", ["params", "gpt2", "--set", "bias=" + INJECT], "bias"),
    ("set-choice-dunder", ["params", "gpt2", "--set", "norm=__class__"], "norm"),
    ("set-float", ["params", "gpt2", "--set", "d_model=768.5"], "d_model"),
    ("set-nan", ["params", "gpt2", "--set", "d_model=NaN"], "d_model"),
    ("set-infinity", ["params", "gpt2", "--set", "d_model=inf"], "d_model"),
    ("set-negative", ["params", "gpt2", "--set", "d_model=-768"], "d_model"),
    ("set-boolean-size", ["params", "gpt2", "--set", "N=true"], "N"),
    ("set-no-equals", ["params", "gpt2", "--set", "d_model"], "NAME=VALUE"),
    ("set-h_kv-above-h", ["params", "gpt2", "--set", "h_kv=24", "-o", "out.md"], "h_kv"),
    ("set-h-not-dividing", ["report", "gpt2", "--set", "h=5", "-o", "out.md"], "does not divide"),
    ("set-huge-name", ["params", "gpt2", "--set", "x" * 100_000 + "=1"], "unknown --set name"),
    # --- constraint expressions (--keep of solve/sweep) and other expression-like options
    ("keep-call", SOLVE + ["--keep", "d_ff=" + INJECT, "-o", "out.md"], "not Call"),
    ("keep-lambda", SOLVE + ["--keep", "d_ff=(lambda: 1)()"], "not Call"),
    ("keep-attribute", SOLVE + ["--keep", "d_ff=d_model.__class__"], "not Attribute"),
    ("keep-subscript", SOLVE + ["--keep", "d_ff=d_model[0]"], "not Subscript"),
    ("keep-string", SOLVE + ["--keep", "d_ff='abc'"], "not 'abc'"),
    ("keep-fstring", SOLVE + ["--keep", "d_ff=f'{d_model}'"], "not JoinedStr"),
    ("keep-walrus", SOLVE + ["--keep", "d_ff=(x:=4)*d_model"], "NAME=EXPRESSION"),
    ("keep-comprehension", SOLVE + ["--keep", "d_ff=[i for i in ()]"], "ListComp"),
    ("keep-conditional", SOLVE + ["--keep", "d_ff=d_model if 1 else 0"], "not IfExp"),
    ("keep-comparison", SOLVE + ["--keep", "d_ff=d_model>1"], "not Compare"),
    ("keep-floor-division", SOLVE + ["--keep", "d_ff=d_model//2"], "not FloorDiv"),
    ("keep-statement", SOLVE + ["--keep", "d_ff=d_model;import os"], "cannot parse"),
    ("keep-long", SOLVE + ["--keep", "d_ff=" + LONG_SUM], "longer than 500"),
    ("keep-huge-exponent", SOLVE + ["--keep", "d_ff=d_model**100000"], "exponent"),
    ("keep-power-tower", SOLVE + ["--keep", "d_ff=9**9**9**9"], "exponent"),
    ("keep-deep-unary", SOLVE + ["--keep", "d_ff=" + "-" * 300 + "d_model"], "nested"),
    ("keep-division-by-zero", SOLVE + ["--keep", "d_ff=d_model/0"], "division by zero"),
    ("keep-self-reference", SOLVE + ["--keep", "d_ff=2*d_ff"], "refers to d_ff itself"),
    ("keep-injected-name", SOLVE + ["--keep", INJECT + "=1"], "unknown symbol"),
    ("keep-unknown-name", SOLVE + ["--keep", "d_ff=os"], "unknown symbol 'os'"),
    ("sweep-keep-injection", SWEEP + ["--keep", "d_ff=" + INJECT, "-o", "out.csv"], "not Call"),
    ("sweep-grid-value-injection", ["sweep", "gpt2", "--grid", "d_model=" + INJECT], "d_model"),
    ("sweep-grid-name-injection", ["sweep", "gpt2", "--grid", INJECT + "=1"], "unknown size"),
    ("solve-for-injection", ["solve", "gpt2", "--for", INJECT, "--params", "1e9"], "unknown symbol"),
    ("solve-budget-injection", ["solve", "gpt2", "--for", "d_model", "--params", INJECT], "--params"),
    ("plan-ratio-lambda", ["plan", "--compute", "1e21", "--tokens-per-param", "lambda: 20"], "tokens per parameter"),
    ("plot-over-injection", ["plot", "gpt2", "--kind", "scaling", "--over", INJECT, "-o", "c.png"], "unknown size"),
    ("diff-variant-injection", ["diff", "gpt2:d_model=" + INJECT], "d_model"),
    ("diff-variant-name-injection", ["diff", "gpt2:" + INJECT + "=1"], "unknown --set name"),
    ("diff-set-b-injection", ["diff", "gpt2", "--set-b", "d_model=" + INJECT, "-o", "out.md"], "d_model"),
    ("lora-injection", ["params", "gpt2", "--lora", INJECT], "--lora"),
    ("adapter-placement-injection", ["params", "gpt2", "--adapter", "r=8,placement=" + INJECT], "placement"),
    ("mfu-injection", TIME + ["--mfu", INJECT], "--mfu"),
    (
        "memory-dtype-injection",
        ["solve", "gpt2", "--for", "d_model", "--memory", "80GiB", "--dtype", INJECT],
        "unknown dtype",
    ),
    # --- -o: directories, paths under a regular file, /proc, the empty path
    ("output-is-cwd", ["params", "gpt2", "--format", "json", "-o", "."], "directory"),
    ("output-trailing-slash", ["params", "gpt2", "-o", "newdir/"], "directory"),
    ("output-under-file-params", ["params", "gpt2", "-o", "existing_file/out.md"], "not a directory"),
    ("output-under-file-flops", ["flops", "gpt2", "--format", "json", "-o", "existing_file/f.json"], "not a directory"),
    ("output-under-file-memory", ["memory", "gpt2", "-o", "existing_file/m.txt"], "not a directory"),
    ("output-under-file-time", TIME + ["-o", "existing_file/t.txt"], "not a directory"),
    ("output-under-file-walk", ["walk", "gpt2", "-o", "existing_file/w.txt"], "not a directory"),
    ("output-under-file-presets", ["presets", "-o", "existing_file/p.txt"], "not a directory"),
    ("output-under-file-identities", ["identities", "-o", "existing_file/i.txt"], "not a directory"),
    ("output-under-file-plan", ["plan", "--compute", "1e21", "-o", "existing_file/p.txt"], "not a directory"),
    ("output-under-file-sweep", SWEEP + ["-o", "existing_file/s.csv"], "not a directory"),
    ("output-under-file-diff", ["diff", "gpt2", "bert-base", "-o", "existing_file/d.txt"], "not a directory"),
    ("output-under-file-solve", SOLVE + ["-o", "existing_file/s.txt"], "not a directory"),
    (
        "output-under-file-report-latex",
        ["report", "gpt2", "--format", "latex", "--no-charts", "-o", "existing_file/r.tex"],
        "not a directory",
    ),
    ("output-in-missing-directory", ["params", "gpt2", "-o", "no/such/dir/out.md"], "does not exist"),
    ("output-in-proc", ["params", "gpt2", "-o", "/proc/version"], "cannot write"),
    ("output-under-proc-missing", ["params", "gpt2", "-o", "/proc/nonexistent/out.md"], "does not exist"),
    ("output-empty-path", ["params", "gpt2", "-o", ""], "empty"),
]

# A representative subset also runs as a real process (python -m symtrans).
_SUBPROCESS = {
    "unknown-flag",
    "unknown-preset",
    "set-value-injection",
    "keep-call",
    "set-1e400",
    "output-under-file-params",
    "sweep-keep-injection",
}


@pytest.mark.parametrize("name,argv,needle", CASES, ids=[c[0] for c in CASES])
def test_hostile_command_line_is_rejected_cleanly(reject, name, argv, needle):
    reject(argv, needle=needle, inprocess=name not in _SUBPROCESS)


def test_report_into_an_existing_directory_writes_no_chart(reject):
    # The report's charts go beside its file; when the file cannot be written (here: the
    # target is a directory), no chart may be left behind either.
    reject(["report", "gpt2", "-o", "out.md"], files={"out.md/": None}, needle="directory")


def test_report_with_charts_under_a_regular_file(reject):
    reject(["report", "gpt2", "-o", "existing_file/out.md"], needle="not a directory", inprocess=False)


def test_failing_run_keeps_the_earlier_output_byte_for_byte(reject):
    # out.md is pre-created with sentinel bytes by the fixture; the run fails after parsing.
    reject(["report", "gpt2", "--set", "h=7", "-o", "out.md"], needle="does not divide")


def test_a_warning_does_not_add_a_second_line_to_an_error(reject):
    # r = 5000 (a low-rank FFN wider than the maps) draws a warning on success; when the
    # run then fails, the only line is the error.
    reject(["params", "gpt2", "--set", "r=5000", "-o", "existing_file/x.txt"], needle="not a directory")


def test_nothing_is_written_outside_the_working_directory(reject, tmp_path):
    # The fixture checks the working directory ("work"); the directory around it holds nothing else.
    reject(["report", "gpt2", "-o", "../escape/out.md"], needle="does not exist")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]
