"""The oracles cannot be skipped silently in CI (conftest.require, SYMTRANS_REQUIRE_ORACLES).

Without torch, transformers or peft a cross-check skips on a developer's machine; under
``SYMTRANS_REQUIRE_ORACLES=1`` (set by .ci/run) it fails, naming the module and the variable.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REQUIRE_ORACLES_VAR, require

TESTS = Path(__file__).parent


def test_a_missing_oracle_skips_by_default_and_fails_when_required(monkeypatch):
    monkeypatch.delenv(REQUIRE_ORACLES_VAR, raising=False)
    with pytest.raises(pytest.skip.Exception, match="no_such_oracle_module is not installed"):
        require("no_such_oracle_module")
    monkeypatch.setenv(REQUIRE_ORACLES_VAR, "1")
    with pytest.raises(
        pytest.fail.Exception, match=f"no_such_oracle_module cannot be imported.*{REQUIRE_ORACLES_VAR}=1"
    ):
        require("no_such_oracle_module")
    monkeypatch.setenv(REQUIRE_ORACLES_VAR, "0")
    with pytest.raises(pytest.skip.Exception):
        require("no_such_oracle_module")


def test_require_returns_the_module():
    assert require("json").dumps([1]) == "[1]"


def test_no_test_module_skips_an_import_on_its_own():
    # One place decides skip or fail (conftest.require); pytest.importorskip would skip even in CI.
    offenders = [
        p.name
        for p in TESTS.rglob("*.py")
        if "importorskip(" in p.read_text(encoding="utf-8") and p.name not in ("conftest.py", Path(__file__).name)
    ]
    assert offenders == []


def _collect_without(blocked: list[str], require_oracles: str) -> subprocess.CompletedProcess:
    """pytest --collect-only of two cross-check modules in a fresh interpreter where ``blocked``
    cannot be imported (``sys.modules[name] = None`` makes ``import name`` raise ImportError)."""
    code = (
        "import sys\n"
        f"for name in {blocked!r}:\n"
        "    sys.modules[name] = None\n"
        "import pytest\n"
        "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '--collect-only', "
        f"{str(TESTS / 'test_flop_crosscheck.py')!r}, {str(TESTS / 'test_crosscheck_torch.py')!r}]))\n"
    )
    env = {**os.environ, REQUIRE_ORACLES_VAR: require_oracles}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=TESTS.parent, timeout=300
    )


def test_ci_without_torch_fails_loudly():
    run = _collect_without(["torch"], "1")
    out = run.stdout + run.stderr
    assert run.returncode not in (0, 5), out  # 5: nothing collected, which a skip would give
    assert "torch cannot be imported" in out and f"{REQUIRE_ORACLES_VAR}=1" in out
    # ... while on a developer's machine the same modules are skipped, with the reason.
    run = _collect_without(["torch"], "0")
    out = run.stdout + run.stderr
    assert run.returncode in (0, 5) and "error" not in out.lower(), out
