"""The central prediction on an automatic-prefix cache keeps the profile's idle lifetime
(bench/fidelity/auto.py `CENTRAL`): on Gemini's implicit cache (240 s, the development part's
retention by idle gap) a request sent after a longer idle gap is predicted to read nothing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ctxbench.bench.fidelity.compare import compare
from ctxbench.traces.importers import import_paths
from ctxbench.traces.model import MessageEvent, Trace

PLAIN = Path(__file__).parents[2] / "traces" / "importers" / "data" / "gemini-cli-0.61.0.session.jsonl.xz"


def _idle_before(trace: Trace, request: int, seconds: float) -> Trace:
    """`trace` with every event from the reply before `request` on moved `seconds` later."""
    replies = [i for i, e in enumerate(trace.events) if isinstance(e, MessageEvent) and e.role == "assistant"]
    cut = replies[request - 1] + 1
    moved = [replace(e, t=e.t + seconds) if i >= cut else e for i, e in enumerate(trace.events)]
    return replace(trace, events=tuple(moved))


@pytest.mark.parametrize(("idle", "expired"), [(100.0, False), (600.0, True)])
def test_a_gemini_entry_expires_after_the_profiles_lifetime(idle: float, expired: bool) -> None:
    trace = import_paths([PLAIN]).main
    r = compare(_idle_before(trace, 2, idle)).baseline.request(2)
    assert r.gap >= idle
    if expired:
        assert r.miss_cause == "ttl_expiry" and r.predicted.cache_read == 0 < r.naive_read
    else:
        assert r.miss_cause == "" and r.predicted.cache_read == r.naive_read > 0
