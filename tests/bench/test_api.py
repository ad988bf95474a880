"""The public API (bench/api.py): every name of `__all__` resolves, and each function gives what
its CLI verb computes on the sample traces."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxbench.bench import api
from tests.real import REAL, needs_real

ROOT = Path(__file__).resolve().parents[2]
GAME = ROOT / "traces/samples/game-60.jsonl"
CODING = ROOT / "traces/samples/coding-short.jsonl"


def test_every_name_of_all_resolves() -> None:
    assert sorted(api.__all__) == sorted(
        ["read_trace", "write_trace", "import_logs", "load_policy", "run", "compare", "fidelity",
         "check_prefix", "Trace", "Policy", "RequestRecord", "RunResult", "Summary", "SessionFidelity"]
    )  # fmt: skip
    from ctxbench.sim.core.native import is_compiled

    for name in api.__all__:
        obj = getattr(api, name)
        assert obj is not None, name
        # a class mypyc compiled keeps no docstring (`ctxbench compile`); its source has one
        assert obj.__doc__ or (isinstance(obj, type) and is_compiled(obj)), name


def test_read_and_write_trace_round_trip(tmp_path: Path) -> None:
    trace = api.read_trace(GAME)
    assert isinstance(trace, api.Trace) and trace.events
    api.write_trace(trace, tmp_path / "t.jsonl")
    assert (tmp_path / "t.jsonl").read_bytes() == GAME.read_bytes()


def test_load_policy_budget_and_params() -> None:
    pol = api.load_policy("claude-code", budget=120_000, retries=3)
    assert isinstance(pol, api.Policy)
    assert pol.budget == 120_000 and pol.retries == 3
    with pytest.raises(ValueError):
        api.load_policy("claude-code", no_such_field=1)


def _cli(*args: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-m", "ctxbench.bench.cli", *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout)


@pytest.mark.parametrize(("trace", "policy"), [(GAME, "h-direct"), (CODING, "c-default")])
def test_run_is_what_ctxbench_run_prints(trace: Path, policy: str) -> None:
    r = api.run(trace, policy, seed=1)
    assert isinstance(r, api.RunResult) and isinstance(r.summary, api.Summary)
    assert r.records and all(isinstance(x, api.RequestRecord) for x in r.records)
    assert r.summary.requests == len(r.records)
    cli = _cli("run", str(trace), "--policy", policy, "--seed", "1", "--json")
    assert cli["provider"] == r.provider and cli["model"] == r.model and cli["policy"] == r.policy
    assert cli["cost"] == pytest.approx(r.summary.cost, rel=1e-12)
    assert cli["requests"] == r.summary.requests
    # a Trace already read, a Policy object: the same run
    again = api.run(api.read_trace(trace), api.load_policy(policy), seed=1)
    assert again.records == r.records


def test_compare_rows_one_per_policy_ranked_by_cost() -> None:
    rows = api.compare([GAME], ["h-direct", "h-keep-last-2"], seeds=2)
    assert sorted(r.policy for r in rows) == ["h-direct", "h-keep-last-2"]
    assert all(r.runs == 2 and r.seeds == 2 for r in rows)
    best = min(rows, key=lambda r: r.stats["cost"].mean)
    assert best.rel_best == 1.0
    costs = [api.run(GAME, "h-direct", seed=s).summary.cost for s in (0, 1)]
    mine = next(r for r in rows if r.policy == "h-direct")
    assert mine.stats["cost"].mean == pytest.approx(sum(costs) / 2, rel=1e-9)


def test_check_prefix_of_a_simulated_run() -> None:
    rep = api.check_prefix(ROOT / "traces/samples/game-300.jsonl", policy="h-direct")
    assert rep.requests > 0 and rep.ok == (not rep.failing)
    plain = api.check_prefix(GAME)
    assert plain.requests > 0


def test_fidelity_of_a_trace_without_usage_compares_nothing() -> None:
    (sf,) = api.fidelity(api.read_trace(GAME))
    assert isinstance(sf, api.SessionFidelity)
    assert sf.cost_billed == 0


@needs_real
def test_fidelity_and_import_logs_on_a_real_session() -> None:
    log = REAL / "spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
    res = api.import_logs(log)
    assert res.main.events and res.names
    (first, *_rest) = api.fidelity(log)
    assert first.share_ok >= 0.98
    assert first.cost_predicted == pytest.approx(api.fidelity(res.main)[0].cost_predicted)
