"""Fixtures shared by the tests of sim/."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty user cache folder for one test (sim/core/yamltext.py `cache_dir`)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("CTXBENCH_CACHE_DIR", str(folder))
    return folder
