"""The public Python API of ctxbench: what the CLI verbs do, as functions, without reading the tree.

    from ctxbench.bench.api import load_policy, read_trace, run

    result = run(read_trace("traces/samples/game-60.jsonl"), load_policy("h-direct"))
    print(result.summary.cost, len(result.records))

Every function here is the one the matching verb calls (`run` -> `ctxbench run`, `compare` ->
`ctxbench compare`, `fidelity` -> `ctxbench fidelity`, `check_prefix` -> `ctxbench check-prefix`,
`import_logs` -> `ctxbench import`), so the same inputs give the same figures. Names outside
`__all__` may move between versions; these stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from ctxbench.bench.compare import PolicyRow, compare_runs
from ctxbench.bench.fidelity.results import SessionFidelity
from ctxbench.bench.prefix.check import DEFAULT_ALLOWED, Report
from ctxbench.bench.runs import RunOptions, run_single
from ctxbench.policies.preset import Policy, policy_assignments
from ctxbench.policies.preset import load_policy as _load_preset
from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.harness.conversation import RunOutcome
from ctxbench.sim.summary import Summary
from ctxbench.traces.format import read_trace as _read_trace
from ctxbench.traces.format import write_trace as _write_trace
from ctxbench.traces.importers import ImportResult, import_paths
from ctxbench.traces.model import Trace

__all__ = [
    "Policy",
    "RequestRecord",
    "RunResult",
    "SessionFidelity",
    "Summary",
    "Trace",
    "check_prefix",
    "compare",
    "fidelity",
    "import_logs",
    "load_policy",
    "read_trace",
    "run",
    "write_trace",
]

TraceSource = str | PathLike[str] | Trace


@dataclass(frozen=True)
class RunResult:
    """One simulated run: every request's record (time order), the summary `ctxbench run` prints,
    each conversation's outcome, and the policy, provider profile, model and seed it ran with.

        r = run("traces/samples/coding-short.jsonl", "c-default")
        r.summary.cache_read_share, r.records[0].miss_cause
    """

    records: list[RequestRecord]
    summary: Summary
    outcomes: list[RunOutcome]
    policy: str
    provider: str
    model: str
    seed: int


def read_trace(path: str | PathLike[str]) -> Trace:
    """A ctxbench trace file (JSONL, format v1; `.gz`/`.zst` read as well); TraceError names the
    file, line and field of bad input.

        trace = read_trace("traces/samples/game-60.jsonl")
        len(trace.events)
    """
    return _read_trace(path)


def write_trace(trace: Trace, dest: str | PathLike[str]) -> None:
    """Write `trace` as a ctxbench trace file (the bytes `ctxbench import -o` writes).

    write_trace(read_trace("traces/samples/game-60.jsonl"), "/tmp/copy.jsonl")
    """
    _write_trace(trace, dest)


def import_logs(
    paths: str | PathLike[str] | Sequence[str | PathLike[str]], fmt: str | None = None
) -> ImportResult:
    """Logs a harness wrote (Claude Code, Codex, opencode, Gemini CLI... one format at a time,
    detected from the first file unless `fmt` names it) as traces: `.main` the main conversation,
    `.traces[1:]` its sub-agents named by `.names`, `.report` what was kept and dropped.

        res = import_logs("session.jsonl")
        write_trace(res.main, "session-trace.jsonl")
    """
    items = [paths] if isinstance(paths, (str, PathLike)) else list(paths)
    return import_paths([Path(p) for p in items], fmt)


def load_policy(spec: str, budget: int | None = None, **params: Any) -> Policy:
    """A preset by name (`ctxbench presets`) or a preset YAML path, with `budget` (tokens; what it
    means is the preset's budget_means) and scalar fields changed as `--policy-set` does.

        pol = load_policy("claude-code", budget=120_000, retries=3)
    """
    pol = _load_preset(spec)
    if params:
        pol = _replace_policy(pol, [f"{k}={v}" for k, v in params.items()])
    return pol.with_budget(budget)


def _replace_policy(pol: Policy, items: list[str]) -> Policy:
    import dataclasses

    return dataclasses.replace(pol, **policy_assignments(items))


def _policy(policy: str | Policy) -> Policy:
    return policy if isinstance(policy, Policy) else _load_preset(policy)


def run(
    trace: TraceSource,
    policy: str | Policy,
    budget: int | None = None,
    seed: int = 0,
    model: str | None = None,
    provider: str | None = None,
    provider_params: dict[str, Any] | None = None,
    tokenizer: str = "rate",
) -> RunResult:
    """Replay `trace` (a path, a generator spec such as `gen:game?turns=80`, or a Trace) under
    `policy` (a preset name, a YAML path or a Policy) as `ctxbench run` does: the provider profile
    is `provider`, else the log's (for an imported trace), else the preset's; `model` runs every
    request as that model.

        r = run("traces/samples/game-60.jsonl", "h-direct", seed=1)
        print(f"${r.summary.cost:.4f}", r.summary.misses)
    """
    pol = _policy(policy).with_budget(budget)
    source: str | Trace = trace if isinstance(trace, Trace) else str(trace)
    one = run_single(source, pol, seed, provider, model, provider_params, tokenizer)
    res = one.result
    return RunResult(
        res.records, one.summary, res.outcomes, pol.name, one.serving.profile, one.serving.model, seed
    )


def compare(
    traces: Sequence[str | PathLike[str]],
    policies: Sequence[str],
    seeds: int = 1,
    budget: int | None = None,
    provider: str | None = None,
    jobs: int | None = 1,
) -> list[PolicyRow]:
    """Several presets on the same trace files (or generator specs) and `seeds` seeds each, as
    `ctxbench compare` does: one row per policy, its figures as mean and 95 % interval (`.stats`),
    ranked by cost; `jobs` worker processes (None: all cores for 8 runs or more).

        rows = compare(["traces/samples/game-60.jsonl"], ["h-direct", "h-keep-last-2"], seeds=2)
        [(r.policy, r.stats["cost"].mean) for r in rows]
    """
    _rows, prs = compare_runs([str(t) for t in traces], list(policies), list(range(seeds)), budget, provider,
                              RunOptions(), jobs)  # fmt: skip
    return prs


def fidelity(
    source: TraceSource,
    policy: str | Policy = "recorded",
    provider: str | None = None,
    model: str | None = None,
    warm: bool = True,
) -> list[SessionFidelity]:
    """Replay a recorded session (a ctxbench trace with billed usage, or a log a harness wrote:
    imported first, one result per conversation, sub-agents included) and score every request's
    predicted usage against its bill, as `ctxbench fidelity` does.

        for s in fidelity("session.jsonl"):
            print(s.name, s.cost_billed, s.cost_predicted)
    """
    from ctxbench.bench.fidelity.compare import compare as score
    from ctxbench.bench.fidelity.logs import traces_of

    pairs = [("trace", source)] if isinstance(source, Trace) else traces_of(str(source))
    out = []
    for path, tr in pairs:
        name = Path(path.split("#")[0]).stem + (f"#{path.split('#', 1)[1]}" if "#" in path else "")
        out.append(score(tr, name, policy, provider, warm=warm, model=model))
    return out


def check_prefix(
    log: str | PathLike[str],
    policy: str | None = None,
    budget: int | None = None,
    provider: str | None = None,
    seed: int = 0,
    allowed: tuple[str, ...] = DEFAULT_ALLOWED,
) -> Report:
    """Check that every request of a request log (proxy/serve ledger, raw request bodies, a records
    file or a ctxbench trace; with `policy`, the requests a simulated run of it sends on that
    trace) starts with its parent request, as `ctxbench check-prefix` does; `.ok` is its verdict,
    `.failing` the breaks outside `allowed`.

        rep = check_prefix("traces/samples/game-300.jsonl", policy="h-direct")
        assert rep.ok, rep.failing
    """
    from ctxbench.bench.cli.check_prefix import build_report

    return build_report(str(log), allowed, policy, budget, provider, seed)
