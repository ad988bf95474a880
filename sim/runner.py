"""Run traces through a policy on a provider model: one simpy environment, one process per
conversation, and the flat records they produce."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import simpy

from ctxbench.policies.preset import Policy
from ctxbench.policies.registry import lookup
from ctxbench.sim.catalog import model_info
from ctxbench.sim.harness import RunOutcome
from ctxbench.sim.prepared import PreparedTrace, prepare
from ctxbench.sim.providers.base import Outcome, Provider, Request
from ctxbench.sim.providers.registry import make_provider
from ctxbench.sim.records import RequestRecord
from ctxbench.sim.tokens import BlockFactory, make_counter
from ctxbench.traces.model import Trace

DEFAULT_MODEL = "claude-sonnet-4-6"


@dataclass
class RunResult:
    records: list[RequestRecord]
    outcomes: list[RunOutcome]
    policy: str
    provider: str
    seed: int


def factory_for(model: str, tokenizer: str = "rate") -> BlockFactory:
    info = model_info(model)
    return BlockFactory(make_counter(tokenizer, scale=info.tokenizer_scale), info.image_rule)


def prepare_for(trace: Trace, model: str | None = None, tokenizer: str = "rate") -> PreparedTrace:
    m = model or trace.header.model or DEFAULT_MODEL
    prep = prepare(trace, factory_for(m, tokenizer))
    if prep.model != m:
        from dataclasses import replace

        prep = replace(prep, model=m)
    return prep


def run_prepared(
    traces: Sequence[PreparedTrace],
    policy: Policy,
    provider: str = "anthropic",
    seed: int = 0,
    provider_params: dict[str, Any] | None = None,
    on_call: Callable[[Request, Outcome], None] | None = None,
    tokenizer: str = "rate",
) -> RunResult:
    """Replay prepared traces concurrently, sharing one provider (and so one cache) per model.

    `on_call(request, outcome)`, when given, sees every provider call as it happens (request logs,
    prefix checks, live validation); the request's transcript is only valid during the call.
    """
    env = simpy.Environment()
    records: list[RequestRecord] = []
    providers: dict[str, Provider] = {}
    params = dict(provider_params or {})

    def provider_for(model: str) -> Provider:
        p = providers.get(model)
        if p is None:
            p = make_provider(provider, model, seed, **params)
            providers[model] = p if on_call is None else _Observed(p, on_call)
        return providers[model]

    convs = []
    for i, tr in enumerate(traces):
        name = f"c{i}" if len(traces) > 1 else "c0"
        factory = factory_for(tr.model, tokenizer)
        conv_seed = zlib.crc32(f"{seed}:{name}".encode())
        cls = lookup("harness", policy.harness)
        c = cls(env, name, tr, policy, provider_for, factory, records, conv_seed)
        convs.append(c)
        env.process(c.run())
    env.run()
    records.sort(key=lambda r: (r.time, r.conversation, r.index))
    return RunResult(records, [c.outcome for c in convs], policy.name, provider, seed)


class _Observed:
    """A provider wrapper that reports every call to an observer."""

    def __init__(self, inner: Provider, on_call: Callable[[Request, Outcome], None]) -> None:
        self.inner = inner
        self.on_call = on_call
        self.name = inner.name
        self.model = inner.model

    def call(self, req: Request, now: float) -> Outcome:
        out = self.inner.call(req, now)
        self.on_call(req, out)
        return out

    def diagnose(self, req: Request, pos: int, now: float) -> str:
        return self.inner.diagnose(req, pos, now)


def run_trace(
    trace: Trace,
    policy: Policy,
    provider: str = "anthropic",
    seed: int = 0,
    model: str | None = None,
    provider_params: dict[str, Any] | None = None,
    on_call: Callable[[Request, Outcome], None] | None = None,
    tokenizer: str = "rate",
) -> RunResult:
    """Replay one trace; `tokenizer` (`rate`, `o200k`, `cl100k`) gives the true token counts of
    text blocks (size-only synthetic blocks always use the calibrated rate)."""
    prep = prepare_for(trace, model, tokenizer)
    return run_prepared([prep], policy, provider, seed, provider_params, on_call, tokenizer)
