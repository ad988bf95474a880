"""One run loop: the runner, fidelity's replay, `validate`'s simulated side and `context` run the
same trace, policy and seed through `run_prepared`, so their records are byte-identical."""

from __future__ import annotations

import io

import pytest

from ctxbench.bench.cli.context import snapshot
from ctxbench.bench.fidelity.replay import replay
from ctxbench.bench.live.validate import run_conversation
from ctxbench.policies.preset import load_policy
from ctxbench.sim.core.provider import Provider
from ctxbench.sim.core.records import RequestRecord, write_jsonl
from ctxbench.sim.providers.registry import make_provider
from ctxbench.sim.runner import DEFAULT_MODEL, run_trace
from ctxbench.traces.format import read_trace


def _bytes(records: list[RequestRecord]) -> str:
    out = io.StringIO()
    write_jsonl(records, out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("sample", "preset", "seed"),
    [("game-short", "h-direct", 3), ("coding-short", "c-default", 5), ("coding-short", "gemini-cli", 0)],
)
def test_every_path_gives_the_same_records(sample: str, preset: str, seed: int) -> None:
    trace = read_trace(f"traces/samples/{sample}.jsonl")
    policy = load_policy(preset)
    model = trace.header.model or DEFAULT_MODEL
    runner = run_trace(trace, policy, policy.provider, seed).records
    assert runner, "the sample makes requests"
    fidelity = replay(
        trace, policy, policy.provider, warm=False, seed=seed, zero_latency=False, observed=False
    )

    def provider_for(m: str) -> Provider:
        return make_provider(policy.provider, m, seed)

    validate = run_conversation(trace, policy, provider_for, model, seed)
    assert _bytes(fidelity) == _bytes(runner)
    assert _bytes(validate) == _bytes(runner)
    if policy.harness == "C":  # `context` snapshots the request the runner recorded
        at = len(runner) // 2
        snap = snapshot(trace, policy, at, seed)
        assert snap is not None
        rec = next(r for r in runner if r.index == at)
        assert (snap.index, snap.kind, snap.true_input) == (rec.index, rec.kind, rec.true_input)
