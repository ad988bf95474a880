"""Run traces through a policy on a provider model: one simpy environment, one process per
conversation, and the flat records they produce."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import simpy

from policies.preset import Policy
from sim.catalog import model_info
from sim.harness import Conversation, RunOutcome
from sim.prepared import PreparedTrace, prepare
from sim.providers.base import Provider
from sim.providers.registry import make_provider
from sim.records import RequestRecord
from sim.tokens import BlockFactory, make_counter
from traces.model import Trace

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
) -> RunResult:
    """Replay prepared traces concurrently, sharing one provider (and so one cache) per model."""
    env = simpy.Environment()
    records: list[RequestRecord] = []
    providers: dict[str, Provider] = {}
    params = dict(provider_params or {})

    def provider_for(model: str) -> Provider:
        p = providers.get(model)
        if p is None:
            p = providers[model] = make_provider(provider, model, seed, **params)
        return p

    convs = []
    for i, tr in enumerate(traces):
        name = f"c{i}" if len(traces) > 1 else "c0"
        factory = factory_for(tr.model)
        conv_seed = zlib.crc32(f"{seed}:{name}".encode())
        c = Conversation(env, name, tr, policy, provider_for, factory, records, conv_seed)
        convs.append(c)
        env.process(c.run())
    env.run()
    records.sort(key=lambda r: (r.time, r.conversation, r.index))
    return RunResult(records, [c.outcome for c in convs], policy.name, provider, seed)


def run_trace(
    trace: Trace,
    policy: Policy,
    provider: str = "anthropic",
    seed: int = 0,
    model: str | None = None,
    provider_params: dict[str, Any] | None = None,
) -> RunResult:
    return run_prepared([prepare_for(trace, model)], policy, provider, seed, provider_params)
