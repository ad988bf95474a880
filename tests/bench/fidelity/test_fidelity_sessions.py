"""Per-session fidelity figures (bench/fidelity_report.md), so that a change that loses a matched
request or widens a session's cost error fails: requests, requests within tolerance (cache read,
cache write and uncached input each within max(1 %, 128) tokens) and the cost error bound, with
the outside events taken from the bill replayed as observed (conditioned) and without them
(unconditioned), and the number of each kind of outside event (bench/fidelity/outside.py). Issue
#11's targets are >= 99 % within and |cost error| <= 1 % on every session; the sessions below that
miss them carry causes the logs cannot show (the report names each, with its cost)."""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

import pytest

from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.fidelity.results import SessionFidelity
from ctxbench.traces.importers import import_paths
from tests.real import REAL, needs_real

pytestmark = needs_real

CC_LOG = "claude-code-log/"
EF = CC_LOG + "-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
VIEWER = "claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
SAMPLE = CC_LOG + "-Users-dain-workspace-claude-code-log-sample/37f83ec9-f2ea-42a9-925e-0d5c105cb6e8.jsonl"
RABBIT = CC_LOG + "-Users-dain-workspace-coderabbit-review-helper/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl"
NEXT = CC_LOG + "-Users-dain-workspace-danieldemmel-me-next/9e953218-585f-4692-89df-9e0747a31c68.jsonl"


class Figures(NamedTuple):
    rel: str
    name: str
    n: int
    within: int  # at least this many within tolerance, conditioned
    cost_pct: float  # |cost error| at most this, conditioned
    within_plain: int  # the same, unconditioned
    cost_pct_plain: float
    lookup_failures: int = 0
    outside_warming: int = 0
    unlogged_turn_content: int = 0


FIGURES = [
    Figures("spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl", "main", 153, 153, 0.05, 151, 11.5, 2),
    Figures("spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl", "main", 144, 144, 0.05, 144, 0.05),
    Figures(SAMPLE, "main", 105, 105, 0.05, 104, 8.0, 1),
    Figures(RABBIT, "main", 80, 80, 0.05, 75, 3.0, 0, 2, 3),  # unlogged IDE diagnostics (3)
    Figures(NEXT, "main", 101, 95, 1.3, 92, 6.3, 1, 2),  # unlogged 2.0.5 attachments (6)
    # ef958aa1 (Opus 4.7): one request in each missed the previous request's entry 2.2-2.8 s after
    # it started, and the first request with deferred tools read 0 in main and a4ca; the rules once
    # modelled for both did not hold on the corpus's development sessions (replay.py "Removed")
    Figures(EF, "main", 17, 15, 15.5, 15, 15.5),  # away-summary fork
    Figures(EF, "agent-a4ca7529859c158c2", 20, 17, 9.2, 17, 9.2),
    Figures(EF, "agent-a52886dc180afb356", 15, 14, 0.3, 13, 6.6, 1),  # #3: a lookup miss, as replayed
    Figures("cua-sandbox-apps/pgadmin/session.jsonl", "main", 119, 119, 0.05, 118, 6.1, 1),
    Figures("cua-sandbox-apps/pycharm/session.jsonl", "main", 102, 102, 0.05, 102, 0.05),
    Figures("sniffly/d3ad4cdc-5657-435d-98fa-0035d53e383d.jsonl", "main", 62, 62, 0.05, 62, 0.05),
    Figures(VIEWER, "main", 9, 9, 0.05, 9, 0.05),
    Figures(VIEWER, "sidechain-60dade70", 34, 34, 0.05, 34, 0.05),
    Figures(VIEWER, "sidechain-6690d10e", 9, 9, 0.05, 9, 0.05),
    Figures(VIEWER, "sidechain-f4546a51", 40, 40, 0.05, 40, 0.05),
    Figures(VIEWER, "sidechain-0d692b0f", 25, 25, 0.05, 25, 0.05),
    Figures(VIEWER, "sidechain-f4ab2bf6", 53, 53, 0.05, 53, 0.05),
    Figures("claude-trace/test-traffic.jsonl", "main", 16, 16, 0.05, 16, 0.05),
]  # fmt: skip


@cache
def _session(rel: str, name: str) -> SessionFidelity:
    res = import_paths([REAL / rel])
    return compare(res.traces[res.names.index(name)], name)


def _cost_error(sf: SessionFidelity) -> float:
    return abs(sf.cost_predicted - sf.cost_billed) / sf.cost_billed * 100


@pytest.mark.parametrize("f", FIGURES, ids=[f"{f.rel.split('/')[-1][:8]}-{f.name}" for f in FIGURES])
def test_session_figures_do_not_regress(f: Figures) -> None:
    sf = _session(f.rel, f.name)
    base = sf.baseline
    assert sf.n == base.n == f.n
    assert sum(r.within for r in sf.requests) >= f.within and _cost_error(sf) <= f.cost_pct
    assert sum(r.within for r in base.requests) >= f.within_plain and _cost_error(base) <= f.cost_pct_plain
    assert (len(sf.outside.lookup_failures), len(sf.outside.outside_warming)) == (
        f.lookup_failures, f.outside_warming,
    )  # fmt: skip
    assert len(sf.outside.unlogged_turn_content) == f.unlogged_turn_content
    for i in sf.outside.lookup_failures:  # replayed: the read falls back to the system + tools prefix
        assert sf.request(i).ok and sf.request(i).miss_cause == "server_lookup_failure"
        assert not base.request(i).ok


def test_sessions_that_meet_the_target_meet_it() -> None:
    """Issue #11: >= 99 % within and cost within 1 % (14 of 18 with the outside events replayed as
    observed, 10 of 18 without them; 17 and 12 while the replay carried a rule fitted to ef958aa1,
    removed as it did not hold elsewhere: bench/fidelity/replay.py)."""
    met = [f for f in FIGURES if f.within / f.n >= 0.99 and f.cost_pct <= 1.0]
    met_plain = [f for f in FIGURES if f.within_plain / f.n >= 0.99 and f.cost_pct_plain <= 1.0]
    assert (len(met), len(met_plain)) == (14, 10)
    for f in met:
        sf = _session(f.rel, f.name)
        assert sf.share_within >= 0.99 and _cost_error(sf) <= 1.0
