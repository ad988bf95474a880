"""Per-session fidelity figures (bench/fidelity_report.md), so that a change that loses a matched
request or widens a session's cost error fails: requests, requests within tolerance (cache read,
cache write and uncached input each within max(1 %, 128) tokens), and the cost error bound. Issue
#11's targets are >= 99 % within and |cost error| <= 1 % on every session; the sessions below
that miss them carry causes the logs cannot show (the report names each, with its cost)."""

from __future__ import annotations

from functools import cache

import pytest

from ctxbench.bench.fidelity import SessionFidelity, compare
from ctxbench.traces.importers import import_paths
from tests.real import REAL, needs_real

pytestmark = needs_real

CC_LOG = "claude-code-log/"
# (recorded file, conversation, requests, at least this many within tolerance, |cost error| %)
FIGURES = [
    ("spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl", "main", 153, 151, 11.5),  # 2 server-side
    ("spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl", "main", 144, 144, 0.05),
    (CC_LOG + "-Users-dain-workspace-claude-code-log-sample/37f83ec9-f2ea-42a9-925e-0d5c105cb6e8.jsonl",
     "main", 105, 104, 8.0),  # 1 server-side lookup miss
    (CC_LOG + "-Users-dain-workspace-coderabbit-review-helper/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl",
     "main", 80, 75, 3.0),  # unlogged IDE diagnostics (3), keep-warm (2)
    (CC_LOG + "-Users-dain-workspace-danieldemmel-me-next/9e953218-585f-4692-89df-9e0747a31c68.jsonl",
     "main", 101, 86, 13.6),  # unlogged 2.0.5 attachments
    (CC_LOG + "-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl", "main", 17, 14, 17.3),
    (CC_LOG + "-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
     "agent-a4ca7529859c158c2", 20, 17, 9.2),
    (CC_LOG + "-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
     "agent-a52886dc180afb356", 15, 13, 6.6),
    ("cua-sandbox-apps/pgadmin/session.jsonl", "main", 119, 118, 6.1),  # 1 server-side lookup miss
    ("cua-sandbox-apps/pycharm/session.jsonl", "main", 102, 102, 0.05),
    ("sniffly/d3ad4cdc-5657-435d-98fa-0035d53e383d.jsonl", "main", 62, 62, 0.05),
    ("claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", "main", 9, 9, 0.05),
    ("claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", "sidechain-60dade70", 34, 34, 0.05),
    ("claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", "sidechain-6690d10e", 9, 9, 0.05),
    ("claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", "sidechain-f4546a51", 40, 40, 0.05),
    ("claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", "sidechain-0d692b0f", 25, 25, 0.05),
    ("claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", "sidechain-f4ab2bf6", 53, 53, 0.05),
    ("claude-trace/test-traffic.jsonl", "main", 16, 16, 0.05),
]  # fmt: skip


@cache
def _session(rel: str, name: str) -> SessionFidelity:
    res = import_paths([REAL / rel])
    return compare(res.traces[res.names.index(name)], name)


@pytest.mark.parametrize(("rel", "name", "n", "within", "cost_pct"), FIGURES)
def test_session_figures_do_not_regress(rel: str, name: str, n: int, within: int, cost_pct: float) -> None:
    sf = _session(rel, name)
    assert sf.n == n
    assert sum(r.within for r in sf.requests) >= within
    assert abs(sf.cost_predicted - sf.cost_billed) <= cost_pct / 100 * sf.cost_billed


def test_sessions_that_meet_the_target_meet_it() -> None:
    """Issue #11: >= 99 % within and cost within 1 % (the sessions whose logs show every cause)."""
    met = [(rel, name) for rel, name, n, within, pct in FIGURES if within / n >= 0.99 and pct <= 1.0]
    assert len(met) == 10
    for rel, name in met:
        sf = _session(rel, name)
        assert sf.share_within >= 0.99
        assert abs(sf.cost_predicted - sf.cost_billed) <= 0.01 * sf.cost_billed
