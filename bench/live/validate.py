"""`ctxbench validate`: the simulation and a live drive of the same trace must bill the same.

Both runs use the same harness model and policy; the simulation calls the provider model
directly, the drive goes through the official SDK to `ctxbench serve` (header clock, so both runs
share one timeline). Compared request by request:
- the prefix: number of blocks, true tokens per block, breakpoint positions, and prefix identity
  (every chained prefix hash of the simulation maps to exactly one of the server's and back, so
  "request j starts with request i's first k blocks" holds on one side iff on the other);
- the usage: uncached, cache read, cache write 5m / 1h, output, status.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxbench.bench.live.drive import live_provider_for, materialize
from ctxbench.policies.preset import Policy
from ctxbench.sim.core.catalog import canonical, prices
from ctxbench.sim.core.provider import Outcome, Provider, Request, Usage
from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.providers.registry import make_provider
from ctxbench.sim.runner import DEFAULT_MODEL, RunHooks, prepare_for, run_prepared
from ctxbench.sim.serve.server import Observation, ServeConfig, start_background, stop
from ctxbench.sim.serve.wire import ANTHROPIC
from ctxbench.traces.model import Trace


@dataclass
class _Recording:
    """Wraps a provider model and keeps what each call saw (the simulation's side)."""

    inner: Provider
    seen: list[Observation]

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> Any:
        return self.inner.model

    def call(self, req: Request, now: float) -> Outcome:
        out = self.inner.call(req, now)
        tr = req.tr
        self.seen.append(
            Observation(
                req.conversation,
                req.index,
                "sim",
                req.n,
                [b.tokens for b in tr.blocks[: req.n]],
                tr.hashes[: req.n],
                req.breakpoints,
                out.usage if out.error is None or out.error.billed else None,
                out.error.kind if out.error else "",
            )
        )
        return out

    def diagnose(self, req: Request, pos: int, now: float) -> str:
        return self.inner.diagnose(req, pos, now)


@dataclass
class Comparison:
    trace: str
    policy: str
    api: str
    requests: int
    mismatches: list[str] = field(default_factory=list)
    rows: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not self.mismatches


def run_conversation(
    trace: Trace, policy: Policy, provider_for: Any, model: str, seed: int = 0
) -> list[RequestRecord]:
    """One conversation of `trace` under the policy's own harness, through the one run loop, with
    `provider_for` as its providers (the provider models, or the live server)."""
    prep = prepare_for(trace, model)
    return run_prepared([prep], policy, seed=seed, hooks=RunHooks(provider_for=provider_for)).records


def _u(u: Usage | None) -> tuple[int, ...]:
    return (u.uncached, u.cache_read, u.cache_write_5m, u.cache_write_1h, u.output) if u else ()


def validate(
    trace: Trace,
    policy: Policy,
    profile: str | None = None,
    api: str = ANTHROPIC,
    stream: bool = True,
    seed: int = 0,
    model: str | None = None,
) -> Comparison:
    """Simulate and drive `trace` under `policy`; compare request by request."""
    profile = profile or policy.provider
    model = model or trace.header.model or DEFAULT_MODEL
    prices(canonical(model))  # an unknown model stops before either run (H-20), never a stand-in
    mt = materialize(trace, api)
    sim_seen: list[Observation] = []
    providers: dict[str, _Recording] = {}

    def sim_for(m: str) -> _Recording:
        if m not in providers:
            providers[m] = _Recording(make_provider(profile, m, seed), sim_seen)
        return providers[m]

    sim_records = run_conversation(mt, policy, sim_for, model, seed)
    srv, _th = start_background(
        ServeConfig(
            profile=profile, model=model, seed=seed, clock="header", latency="profile", keep_observations=True
        )
    )
    try:
        live = live_provider_for(srv.url, api, stream, "c0")
        live_records = run_conversation(mt, policy, live, model, seed)
        live_seen = list(srv.state.observations)
    finally:
        stop(srv)
    return compare(
        trace.path or trace.header.source, policy.name, api, sim_records, live_records, sim_seen, live_seen
    )


def compare(
    name: str,
    policy: str,
    api: str,
    sim_r: list[RequestRecord],
    live_r: list[RequestRecord],
    sim_o: list[Observation],
    live_o: list[Observation],
) -> Comparison:
    c = Comparison(name, policy, api, len(sim_r))
    if len(sim_r) != len(live_r) or len(sim_o) != len(live_o):
        c.mismatches.append(
            f"request count: simulation {len(sim_r)} records / {len(sim_o)} calls, "
            f"live {len(live_r)} records / {len(live_o)} calls"
        )
    fwd: dict[int, int] = {}
    back: dict[int, int] = {}
    for i, (a, b) in enumerate(zip(sim_o, live_o, strict=False)):
        problems = []
        if a.n != b.n:
            problems.append(f"blocks {a.n} vs {b.n}")
        elif a.tokens != b.tokens:
            k = next(j for j in range(a.n) if a.tokens[j] != b.tokens[j])
            problems.append(f"tokens differ first at block {k}: {a.tokens[k]} vs {b.tokens[k]}")
        if a.breakpoints != b.breakpoints:
            problems.append(f"breakpoints {a.breakpoints} vs {b.breakpoints}")
        for j, (ha, hb) in enumerate(zip(a.hashes, b.hashes, strict=False)):
            if fwd.setdefault(ha, hb) != hb or back.setdefault(hb, ha) != ha:
                problems.append(f"prefix identity differs at block {j}")
                break
        if _u(a.usage) != _u(b.usage) or a.error != b.error:
            problems.append(f"usage {_u(a.usage)} {a.error} vs {_u(b.usage)} {b.error}")
        row = f"{i:4d} blocks {a.n:5d} in {sum(a.tokens):7d} sim {_u(a.usage)} live {_u(b.usage)}"
        c.rows.append(row + ("  MISMATCH: " + "; ".join(problems) if problems else ""))
        if problems:
            c.mismatches.append(f"request {i}: " + "; ".join(problems))
    for i, (x, y) in enumerate(zip(sim_r, live_r, strict=False)):
        if (x.kind, x.true_input, x.status) != (y.kind, y.true_input, y.status):
            sim, live = f"{x.kind}/{x.true_input}/{x.status}", f"{y.kind}/{y.true_input}/{y.status}"
            c.mismatches.append(f"record {i}: sim {sim} vs live {live}")
    return c


def format_comparison(c: Comparison, verbose: bool = False) -> str:
    head = f"{c.trace} · policy {c.policy} · api {c.api}: {c.requests} requests, " + (
        "prefixes and usage identical" if c.identical else f"{len(c.mismatches)} mismatches"
    )
    lines = [head]
    if verbose or not c.identical:
        lines += c.rows
        lines += c.mismatches[:50]
    return "\n".join(lines)
