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

Stricter than `check-prefix` by default: only `side_request` is allowed, so a history wiped without a
declaration fails as `new_conversation` unless allowed explicitly (`allow=`, or
`pytest --prefix-allow new_conversation`). Accepted breaks: `baseline=` (a `check-prefix
--write-baseline` file, keyed by content) or `pytest --prefix-baseline FILE`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

# the classes that never fail by default (module docstring): a subset of check-prefix's
# (bench/prefix/breaks.py DEFAULT_ALLOWED; a test keeps it one; not imported here, so that the
# plugin loads nothing of ctxbench until used)
DEFAULT_ALLOWED = ("side_request",)


class PrefixBreakError(AssertionError):
    """A request did not start with its parent; the message says where and shows a short diff."""


def _entries(requests: Iterable[Any] | str | Path) -> list[Any]:
    if isinstance(requests, str | Path):
        return [json.loads(x) for x in Path(requests).read_text(encoding="utf-8").splitlines() if x.strip()]
    return [json.loads(r) if isinstance(r, str | bytes) else r for r in requests]


def assert_prefix_stable(
    requests: Iterable[Any] | str | Path,
    allow: Sequence[str] | None = None,
    limit: int = 10,
    baseline: str | Path | dict[str, Any] | None = None,
) -> None:
    """Fail with a readable message if any request does not start with its parent (outside a
    declared compaction/eviction, an allowed class or the baseline); `requests` may also be a
    JSONL path. Every failing break is listed, each with the field that changed and its price."""
    from ctxbench.bench.prefix.check import find_breaks
    from ctxbench.bench.prefix.report import apply_baseline, format_text
    from ctxbench.bench.prefix.request_log import parse_line

    reqs = [parse_line(e, i + 1, f"request {i}") for i, e in enumerate(_entries(requests))]
    report = find_breaks(reqs, tuple(DEFAULT_ALLOWED if allow is None else allow))
    if baseline is not None:
        where = "<baseline>" if isinstance(baseline, dict) else str(baseline)
        base = baseline if isinstance(baseline, dict) else json.loads(Path(baseline).read_text("utf-8"))
        report = apply_baseline(report, base, where)
    if not report.ok:
        report.source = "prefix stability"
        raise PrefixBreakError(format_text(report, max(limit, len(report.failing))))


class PrefixLog:
    """Collects request bodies during a test; `assert_stable()` checks them (with the `--allow`
    classes and baseline given to the fixture's pytest options unless given here)."""

    def __init__(self, allow: Sequence[str] | None = None, baseline: str | Path | None = None) -> None:
        self.requests: list[Any] = []
        self.allow, self.baseline = allow, baseline

    def record(self, body: Any, declared: str = "", session_id: str | None = None) -> None:
        if declared or session_id:
            entry: dict[str, Any] = {"body": body, "declared": declared}
            if session_id:
                entry["session_id"] = session_id
            self.requests.append(entry)
        else:
            self.requests.append(body)

    def assert_stable(
        self, allow: Sequence[str] | None = None, baseline: str | Path | dict[str, Any] | None = None
    ) -> None:
        assert_prefix_stable(
            self.requests,
            self.allow if allow is None else allow,
            baseline=self.baseline if baseline is None else baseline,
        )

    def __len__(self) -> int:
        return len(self.requests)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ctxbench", "prefix stability (ctxbench)")
    group.addoption(
        "--prefix-allow",
        action="append",
        default=None,
        metavar="CLASS",
        help="break class that never fails the prefix_log fixture (repeat; default side_request)",
    )
    group.addoption(
        "--prefix-baseline",
        default=None,
        metavar="FILE",
        help="accepted breaks (check-prefix --write-baseline)",
    )


@pytest.fixture
def prefix_log(request: pytest.FixtureRequest) -> PrefixLog:
    """A PrefixLog for this test: record each request body, then call `assert_stable()`."""
    allow = request.config.getoption("--prefix-allow", None)
    return PrefixLog(allow, request.config.getoption("--prefix-baseline", None))
