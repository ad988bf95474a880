"""pytest plugin: assert prefix stability over the requests a harness's own tests recorded.

Registered through the `pytest11` entry point
(`ctxbench = "ctxbench.bench.prefix.pytest_plugin"`), so it loads in
any test suite where ctxbench is installed; it imports nothing heavy until used.

    def test_my_harness_keeps_its_prefix(prefix_log):
        for body in run_my_agent():          # each request body the harness sent
            prefix_log.record(body)
        prefix_log.assert_stable()

or directly:
`from ctxbench.bench.prefix.pytest_plugin import assert_prefix_stable; assert_prefix_stable(bodies)`.
Bodies are Anthropic Messages / OpenAI Chat Completions / Responses request dicts, JSON strings,
or wrapped `{"body": ..., "declared": "compaction"}` entries (a declared edit explains a break).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

# the classes that never fail by default: bench/prefix/check.py DEFAULT_ALLOWED (a test keeps them
# equal; not imported here, so that the plugin loads nothing of ctxbench until used)
DEFAULT_ALLOWED = ("side_request", "new_conversation")


class PrefixBreakError(AssertionError):
    """A request did not start with its parent; the message says where and shows a short diff."""


def _entries(requests: Iterable[Any] | str | Path) -> list[Any]:
    if isinstance(requests, str | Path):
        return [json.loads(x) for x in Path(requests).read_text(encoding="utf-8").splitlines() if x.strip()]
    return [json.loads(r) if isinstance(r, str | bytes) else r for r in requests]


def assert_prefix_stable(
    requests: Iterable[Any] | str | Path, allow: Sequence[str] = DEFAULT_ALLOWED, limit: int = 10
) -> None:
    """Fail with a readable message if any request does not start with its parent (outside a
    declared compaction/eviction or an allowed class); `requests` may also be a JSONL path."""
    from ctxbench.bench.prefix.check import find_breaks
    from ctxbench.bench.prefix.report import format_text
    from ctxbench.bench.prefix.request_log import parse_line

    reqs = [parse_line(e, i + 1, f"request {i}") for i, e in enumerate(_entries(requests))]
    report = find_breaks(reqs, tuple(allow))
    if not report.ok:
        report.source = "prefix stability"
        raise PrefixBreakError(format_text(report, limit))


class PrefixLog:
    """Collects request bodies during a test; `assert_stable()` checks them."""

    def __init__(self) -> None:
        self.requests: list[Any] = []

    def record(self, body: Any, declared: str = "", session_id: str | None = None) -> None:
        if declared or session_id:
            entry: dict[str, Any] = {"body": body, "declared": declared}
            if session_id:
                entry["session_id"] = session_id
            self.requests.append(entry)
        else:
            self.requests.append(body)

    def assert_stable(self, allow: Sequence[str] = DEFAULT_ALLOWED) -> None:
        assert_prefix_stable(self.requests, allow)

    def __len__(self) -> int:
        return len(self.requests)


@pytest.fixture
def prefix_log() -> PrefixLog:
    """A PrefixLog for this test: record each request body, then call `assert_stable()`."""
    return PrefixLog()
