"""Run traces through a policy on a provider model: one simpy environment, one process per
conversation, and the flat records they produce."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import simpy

from ctxbench.policies.preset import Policy
from ctxbench.sim.core.catalog import model_info
from ctxbench.sim.core.provider import Outcome, Provider, Request
from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.core.registry import lookup
from ctxbench.sim.core.tokens import BlockFactory, make_counter
from ctxbench.sim.harness.conversation import Conversation, RunOutcome
from ctxbench.sim.prepared import PreparedTrace, prepare
from ctxbench.sim.providers.registry import make_provider
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


ProviderFor = Callable[[str], Provider]


@dataclass(frozen=True)
class RunHooks:
    """What a caller adds to the one run loop (`run_prepared`), which fidelity, `context`,
    `validate`, request logs and sweeps all use, so the same trace, policy and seed give the
    same records whichever path runs them.

    - `on_call(request, outcome)`: sees every provider call as it happens (the request's
      transcript is only valid during the call);
    - `provider_for`: the providers to call, by model (default: one of the run's profile per
      model, shared by every conversation);
    - `before(env, provider_for)`: runs once before the conversations start (warm-ups, extra
      simpy processes that run beside them);
    - `snapshot_at`: request indexes each conversation snapshots (C-2, `ctxbench context`);
    - `on_conversation`: each conversation process once made (to read its state afterwards).
    """

    on_call: Callable[[Request, Outcome], None] | None = None
    provider_for: ProviderFor | None = None
    before: Callable[[simpy.Environment, ProviderFor], None] | None = None
    snapshot_at: tuple[int, ...] = ()
    on_conversation: Callable[[Conversation], None] | None = None


def conversation_seed(seed: int, name: str) -> int:
    """The seed of conversation `name`'s own random choices in a run seeded `seed`."""
    return zlib.crc32(f"{seed}:{name}".encode())


def run_prepared(
    traces: Sequence[PreparedTrace],
    policy: Policy,
    provider: str = "anthropic",
    seed: int = 0,
    provider_params: dict[str, Any] | None = None,
    on_call: Callable[[Request, Outcome], None] | None = None,
    tokenizer: str = "rate",
    hooks: RunHooks | None = None,
) -> RunResult:
    """Replay prepared traces concurrently under the policy's harness, sharing one provider (and
    so one cache) per model; `hooks` add observers, providers, extra processes and snapshots.
    `tokenizer` counts the true tokens of the blocks the harness makes (as `prepare_for`'s)."""
    hooks = hooks or RunHooks()
    observer = on_call or hooks.on_call
    env = simpy.Environment()
    records: list[RequestRecord] = []
    providers: dict[str, Provider] = {}
    params = dict(provider_params or {})
    make: ProviderFor = hooks.provider_for or (lambda model: make_provider(provider, model, seed, **params))

    def provider_for(model: str) -> Provider:
        p = providers.get(model)
        if p is None:
            p = make(model)
            providers[model] = p if observer is None else _Observed(p, observer)
        return providers[model]

    if hooks.before is not None:
        hooks.before(env, provider_for)
    harness = lookup("harness", policy.harness)
    convs: list[Conversation] = []
    procs = []
    for i, tr in enumerate(traces):
        name = f"c{i}" if len(traces) > 1 else "c0"
        c = harness(env, name, tr, policy, provider_for, factory_for(tr.model, tokenizer), records,
                    conversation_seed(seed, name), hooks.snapshot_at)  # fmt: skip
        if hooks.on_conversation is not None:
            hooks.on_conversation(c)
        convs.append(c)
        procs.append(env.process(c.run()))
    env.run(until=env.all_of(procs))  # extra processes (`before`) may run for ever
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
