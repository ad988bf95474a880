"""Fidelity of the replay on real sessions (issue #6 targets) and the naive baseline."""

from __future__ import annotations

import pytest

from ctxbench.bench.fidelity import compare, tolerance
from ctxbench.traces.importers import import_paths
from tests.real import REAL, needs_real

pytestmark = needs_real


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


CC_LOG = REAL / "claude-code-log"


def test_first_tool_search_result_is_named_as_the_cause() -> None:
    """ef958aa1 (Claude Code 2.1.114, Opus 4.7): the request after the conversation's first
    ToolSearch result misses down to the tools/system prefix in the main thread and both agents;
    later ToolSearch results (main #12) keep the prefix (providers.md §1.6 escape hatch)."""
    res = import_paths([CC_LOG / "-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"])
    firsts = []
    for tr, name in zip(res.traces, res.names, strict=True):
        sf = compare(tr, name)
        first = [r for r in sf.requests if r.tool_ref == "first"]
        assert len(first) == 1
        firsts.append(first[0])
        if name == "main":
            later = [r for r in sf.requests if r.tool_ref == "later"]
            assert later and any(r.ok for r in later)
    assert all(not r.ok and "first deferred tools sent" in r.cause for r in firsts)


def test_read_mismatches_carry_the_cost_gap() -> None:
    """37f83ec9: one request reads only system + tools (billed 10,671 vs 76,154): the whole
    session's cost gap is that request's write premium."""
    tr = import_paths(
        [CC_LOG / "-Users-dain-workspace-claude-code-log-sample/37f83ec9-f2ea-42a9-925e-0d5c105cb6e8.jsonl"]
    ).main
    sf = compare(tr)
    assert len(sf.mismatches) == 1
    assert sf.cost_gap() == pytest.approx(sf.cost_predicted - sf.cost_billed)
    assert sf.cost_gap() < -0.05 * sf.cost_billed
    assert abs(sf.cost_gap() - sf.cost_gap(only_mismatches=True)) <= 0.002 * sf.cost_billed


def test_a_fallback_to_the_turn_start_starts_a_new_turn() -> None:
    """cb2e607c (Claude Code 2.0.37, Sonnet 4.5, thinking logged): #22, #29 and #34 follow Edit
    results whose unlogged IDE diagnostics made the API strip the turn's thinking (§1.6); #34 falls
    back to #29's prompt, the turn start that #29's own hidden content opened."""
    tr = import_paths(
        [CC_LOG / "-Users-dain-workspace-coderabbit-review-helper/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl"]
    ).main
    sf = compare(tr)
    for i in (22, 29, 34):
        assert not sf.requests[i].ok and "start of the turn" in sf.requests[i].cause
