"""Test-wide settings: hypothesis never fails a property on timing (the machine is shared), and
under CI (CI=true) explores a fixed, reproducible set of examples; a parsed-YAML cache of the
session's own."""

from __future__ import annotations

import os
import tempfile

import pytest
from hypothesis import settings

from ctxbench.sim.core.native import NATIVE_DIR_ENV, builds_folder

# The compiled hot path, if the user built it (sim/core/native.py), stays where it is for the tests and the
# CLI subprocesses they start; the other caches move to a folder of this session's.
os.environ.setdefault(NATIVE_DIR_ENV, str(builds_folder() or ""))

# The parsed-YAML cache (sim/core/yamltext.py) of this test session in a folder of its own (inherited by
# the CLI subprocesses tests start), so a run of the tests neither reads nor writes the user's.
os.environ["CTXBENCH_CACHE_DIR"] = tempfile.mkdtemp(prefix="ctxbench-test-cache-")

settings.register_profile("ctxbench", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "ctxbench")


EXHAUSTIVE_ENV = "CTXBENCH_EXHAUSTIVE"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`exhaustive` tests (every preset × every trace and seed: minutes on 2 cores) run when
    CTXBENCH_EXHAUSTIVE=1 (.ci/run runs them once); otherwise they skip, saying how to run them."""
    if os.environ.get(EXHAUSTIVE_ENV, "") not in ("", "0"):
        return
    skip = pytest.mark.skip(reason=f"exhaustive sweep: set {EXHAUSTIVE_ENV}=1 to run it (CI does)")
    for item in items:
        if "exhaustive" in item.keywords:
            item.add_marker(skip)
