"""Fidelity of the replay on real sessions (issue #6 targets) and the naive baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.fidelity import compare, tolerance
from traces.importers import import_paths

REAL = Path(__file__).resolve().parents[3] / "shared" / "traces-real"
pytestmark = pytest.mark.skipif(not REAL.is_dir(), reason="traces-real not present")


def test_tolerance() -> None:
    assert tolerance(0) == 128 and tolerance(100_000) == 1000


@pytest.mark.parametrize(
    "rel",
    [
        "spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
        "sniffly/d3ad4cdc-5657-435d-98fa-0035d53e383d.jsonl",
        "cua-sandbox-apps/pycharm/session.jsonl",  # Haiku 4.5: needs the §1.6 thinking stripping
    ],
)
def test_replay_meets_target_and_beats_naive(rel: str) -> None:
    sf = compare(import_paths([REAL / rel]).main)
    assert sf.share_ok >= 0.98
    assert sf.share_ok >= sf.share_naive_ok
    assert abs(sf.total("predicted") - sf.total("billed")) <= 0.02 * sf.total("billed")
    assert abs(sf.cost_predicted - sf.cost_billed) <= 0.02 * sf.cost_billed


def test_claude_trace_main_loop_exact() -> None:
    sf = compare(import_paths([REAL / "claude-trace/test-traffic.jsonl"]).main)
    assert sf.n == 16 and sf.share_ok == 1.0


def test_without_warm_cache_first_request_misses() -> None:
    tr = import_paths([REAL / "spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"]).main
    assert not compare(tr, warm=False).requests[0].ok


def test_keep_warm_explains_reads_of_the_static_prefix_after_long_gaps() -> None:
    tr = import_paths(
        [
            REAL / "claude-code-log/-Users-dain-workspace-coderabbit-review-helper/"
            "cb2e607c-c758-415a-8b45-c49e4631906a.jsonl"
        ]
    ).main
    cold, warm = compare(tr), compare(tr, keep_warm=True)
    assert not cold.requests[23].ok and "kept warm" in cold.requests[23].cause
    assert warm.requests[23].ok and warm.share_ok > cold.share_ok
