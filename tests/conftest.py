"""Shared test setup: the oracles, the hypothesis profiles, fixture paths, exact engine
counts, and real models on the meta device.

The reference side (``hf``, ``torch_meta``) never uses symtrans code: the model class
for each ``model_type`` is written out here, independently of ``symtrans.catalog.hf_config``.

Oracles.  torch, transformers and peft are the independent references the cross-checks
compare with.  ``require(name)`` imports one: without it a test skips, except under
``SYMTRANS_REQUIRE_ORACLES=1`` (set by .ci/run), where a missing oracle is a failure, so a
CI machine without torch cannot pass by skipping every cross-check.  Every test module
that needs an optional package gets it through ``require`` (never ``pytest.importorskip``).

Hypothesis profiles, defined once here for every property test: ``ci`` (when ``CI=true``)
runs 200 random examples per property, randomly seeded on every run (derandomize off, so
CI explores new inputs; a failure prints the seed and the example to reproduce it), with
no deadline (the meta-device models take variable time on a shared machine); ``dev``
(otherwise) runs 20.  A test may lower its count only for a reason written beside it.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# -- oracles -------------------------------------------------------------------------------

REQUIRE_ORACLES_VAR = "SYMTRANS_REQUIRE_ORACLES"


def oracles_required() -> bool:
    """Whether ``SYMTRANS_REQUIRE_ORACLES`` is set to anything but empty or 0."""
    return os.environ.get(REQUIRE_ORACLES_VAR, "").strip() not in ("", "0")


def require(module_name: str) -> ModuleType:
    """The module ``module_name`` (an oracle such as torch, transformers or peft), imported.

    Missing: skip the test (or the whole module, when called at import time); under
    ``SYMTRANS_REQUIRE_ORACLES=1`` fail instead, naming the module and the variable.
    """
    try:
        return importlib.import_module(module_name)
    except ImportError as e:
        error = str(e)
    if oracles_required():
        pytest.fail(
            f"{module_name} cannot be imported ({error}) and {REQUIRE_ORACLES_VAR}=1 makes every "
            f"oracle mandatory: install it (pip install -e '.[test,crosscheck,plots]')",
            pytrace=False,
        )
    pytest.skip(
        f"{module_name} is not installed (with {REQUIRE_ORACLES_VAR}=1 this is a failure)",
        allow_module_level=True,
    )


def pytest_collectstart(collector):
    """Before a test module is imported, point the name ``conftest`` at its own directory's conftest.

    Every conftest.py outside a package is imported under the one name ``conftest``, so the
    last one loaded (tests/adversarial/conftest.py) would shadow this one and
    ``from conftest import require`` in tests/*.py would fail.
    """
    if isinstance(collector, pytest.Module):
        own = collector.config.pluginmanager.get_plugin(str(collector.path.parent / "conftest.py"))
        if own is not None:
            sys.modules["conftest"] = own


# -- hypothesis profiles ---------------------------------------------------------------------

settings.register_profile(
    "ci",
    max_examples=200,
    derandomize=False,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    max_examples=20,
    derandomize=False,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("ci" if os.environ.get("CI", "").lower() == "true" else "dev")

# The reference implementations the cross-checks compare with.  With SYMTRANS_REQUIRE_ORACLES=1
# (.ci/run sets it) a missing one fails the run instead of skipping those tests silently.
ORACLES = ("torch", "transformers", "hypothesis", "peft")
REQUIRE_ORACLES = os.environ.get("SYMTRANS_REQUIRE_ORACLES") == "1"


def pytest_configure(config) -> None:
    if not REQUIRE_ORACLES:
        return
    for name in ORACLES:
        try:
            importlib.import_module(name)
        except Exception as e:  # any failure to import: the oracle is unusable
            raise pytest.UsageError(
                f"SYMTRANS_REQUIRE_ORACLES=1 but {name} cannot be imported ({type(e).__name__}: {e})"
            ) from None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """With SYMTRANS_REQUIRE_ORACLES=1, an importorskip of an oracle fails the test."""
    outcome = yield
    report = outcome.get_result()
    if REQUIRE_ORACLES and report.skipped and call.excinfo is not None:
        text = str(call.excinfo.value)
        if any(f"could not import '{name}'" in text for name in ORACLES):
            report.outcome = "failed"
            report.longrepr = f"SYMTRANS_REQUIRE_ORACLES=1: {text}"


FIXTURES = Path(__file__).parent / "fixtures"
CONFIG_DIR = FIXTURES / "configs"

from hf_reference import HF_CLASSES  # noqa: E402,F401 (one table, importable from any test directory)


def _engine_params(spec) -> int:
    from symtrans.engine.architectures import build
    from symtrans.engine.evaluate import exact

    return exact(build(spec).params, spec.values)


def _engine_active(spec) -> int:
    from symtrans.engine.architectures import build
    from symtrans.engine.evaluate import exact

    return exact(build(spec).active_params, spec.values)


def _engine_child(spec, *names: str) -> int:
    """Exact parameters of the named top-level components of the built model, summed."""
    from symtrans.engine.architectures import build
    from symtrans.engine.evaluate import exact

    cost = build(spec)
    return sum(exact(cost.child(n).params, spec.values) for n in names)


@pytest.fixture(scope="session")
def config_dir() -> Path:
    return CONFIG_DIR


@pytest.fixture(scope="session")
def read_fixture():
    """``read_fixture(name)`` -> the parsed dict of tests/fixtures/configs/<name>.json."""

    def read(name: str) -> dict[str, Any]:
        return json.loads((CONFIG_DIR / f"{name}.json").read_text())

    return read


@pytest.fixture(scope="session")
def engine() -> SimpleNamespace:
    """Exact engine counts of a Spec: ``params``, ``active`` and ``child(spec, *names)``."""
    return SimpleNamespace(params=_engine_params, active=_engine_active, child=_engine_child)


@pytest.fixture(scope="session")
def torch_meta() -> SimpleNamespace:
    """torch on the meta device: ``count(module)``, ``build(factory)`` (``require("torch")``)."""
    torch = require("torch")

    def build(factory, *args, **kwargs):
        with torch.device("meta"):
            return factory(*args, **kwargs)

    def count(module) -> int:
        return sum(p.numel() for p in module.parameters())  # shared tensors once

    return SimpleNamespace(torch=torch, build=build, count=count)


@pytest.fixture(scope="session")
def hf(torch_meta) -> SimpleNamespace:
    """transformers on the meta device (``require("transformers")``).

    ``build(model_type, cfg, **model_kwargs)`` instantiates ``HF_CLASSES[model_type]``
    from a config.json-style dict exactly as a user would (``ConfigClass(**cfg)``), with no
    weights downloaded or allocated; ``count(model)`` is
    ``sum(p.numel() for p in model.parameters())`` (tied tensors once).
    """
    transformers = require("transformers")
    transformers.logging.set_verbosity_error()

    def model_class(model_type: str):
        return getattr(transformers, HF_CLASSES[model_type])

    def config(model_type: str, cfg: dict[str, Any]):
        cls = model_class(model_type)
        return cls.config_class(**{k: v for k, v in cfg.items() if k != "torch_dtype"})

    def build(model_type: str, cfg: dict[str, Any], **model_kwargs):
        return torch_meta.build(model_class(model_type), config(model_type, cfg), **model_kwargs)

    return SimpleNamespace(
        transformers=transformers,
        torch=torch_meta.torch,
        model_class=model_class,
        config=config,
        build=build,
        count=torch_meta.count,
        version=transformers.__version__,
    )
