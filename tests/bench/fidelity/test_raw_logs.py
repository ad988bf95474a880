"""The counts over raw Claude Code logs (bench/fidelity/raw_logs.py and its users: compact_count,
thinking_kept, suggestion_forks) never raise on any line: each is counted or named."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from ctxbench.bench.fidelity import compact_count, suggestion_forks, thinking_kept
from ctxbench.bench.fidelity.raw_logs import Counts
from tests.bench.fidelity.log_lines import LOG_LINES

COUNTS: list[Callable[[Iterable[Path]], Counts]] = [
    compact_count.count, thinking_kept.count, suggestion_forks.count,
]  # fmt: skip


@pytest.mark.parametrize("count", COUNTS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=LOG_LINES)
def test_any_lines_are_counted_or_named_never_a_traceback(
    tmp_path: Path, count: Callable[[Iterable[Path]], Counts], lines: list[str]
) -> None:
    (tmp_path / "f.jsonl").write_text("\n".join(lines), encoding="utf-8")
    acc = count([tmp_path])
    assert isinstance(acc.json(), dict) and acc.lines()
