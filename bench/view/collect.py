"""One run of a trace under a policy, observed request by request for the session view: the
records, the prompt of every call as block ids (each prompt encoded against the previous prompt
of its conversation: how many blocks it keeps, then the blocks it adds, so a 5,000-request session
stays a few MB), the budget and the thresholds the harness planned against.

The run is the same one `ctxbench run` makes (`run_prepared`, the same serving choice), with an
`on_call` hook reading each request's blocks while its call runs; records are unchanged by it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ctxbench.policies.preset import Policy
from ctxbench.sim.core.provider import Outcome, Request
from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.harness.conversation import Conversation
from ctxbench.sim.prepared_cache import for_model, open_prepared
from ctxbench.sim.providers.choice import Serving, choose
from ctxbench.sim.runner import RunHooks, prepare_for, run_prepared
from ctxbench.sim.summary import Summary, summarize
from ctxbench.traces.model import Trace


@dataclass
class Blocks:
    """Every distinct block the view shows, once: kind, role, true tokens, digest, name."""

    index: dict[tuple[int, int], int] = field(default_factory=dict)  # (digest, tokens) -> id
    kind: list[str] = field(default_factory=list)
    role: list[str] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    digest: list[str] = field(default_factory=list)
    name: list[str] = field(default_factory=list)

    def id_of(self, kind: str, role: str, tokens: int, digest: int, name: str) -> int:
        key = (digest, tokens)
        got = self.index.get(key)
        if got is None:
            got = self.index[key] = len(self.kind)
            self.kind.append(kind)
            self.role.append(role)
            self.tokens.append(tokens)
            self.digest.append(f"{digest & 0xFFFFFFFFFFFF:012x}")  # 48 bits: enough to tell blocks apart
            self.name.append(name)
        return got


@dataclass
class Prompts:
    """Each call's prompt: `base` (the record index of the previous call of its conversation, -1
    for none), `keep` (how many of that prompt's first blocks it starts with) and `add` (the block
    ids after them)."""

    base: list[int] = field(default_factory=list)
    keep: list[int] = field(default_factory=list)
    add: list[list[int]] = field(default_factory=list)


@dataclass
class Observed:
    policy: Policy
    serving: Serving
    records: list[RequestRecord]
    summary: Summary
    prompts: Prompts
    thresholds: list[tuple[str, int]]  # (name, tokens), the budget first
    window: int


def _common(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def thresholds_of(conv: Conversation) -> tuple[list[tuple[str, int]], int]:
    """The budget the harness planned against and the compaction thresholds drawn beside it (the
    auto-compact threshold and C's tier-2 level when the component has them), and the window."""
    view = conv.view()
    comp = conv.policy.compaction
    means = conv.policy.budget_means  # what the budget is (policies/budget.py): none plans on the window
    out = [("window" if means == "none" else "budget", int(view.budget))]
    thr = int(comp.threshold(view))
    if 0 < thr != view.budget:
        out.append(("auto-compact", thr))
    rules = comp.rules()
    if rules.trigger < 1.0:  # H-14: a handoff when the estimate passes trigger x budget
        out.append((f"compaction trigger ({rules.trigger:.0%})", int(rules.trigger * view.budget)))
    tier2 = rules.tier2
    if tier2 < 1.0:
        out.append((f"tier 2 ({tier2:.0%})", int(tier2 * view.budget)))
    return out, int(view.window)


def observe(
    trace: str | Trace,
    policy: Policy,
    blocks: Blocks,
    seed: int = 0,
    provider: str | None = None,
    model: str | None = None,
    provider_params: dict[str, Any] | None = None,
    tokenizer: str = "rate",
) -> Observed:
    """Run `trace` (a file or `gen:` spec) under `policy` as `ctxbench run` does, reading every
    call's prompt into `blocks` (shared by the runs of one page)."""
    if isinstance(trace, str):  # a file or spec, through the prepared-trace cache as `run` reads it
        pf = open_prepared(trace, model, tokenizer)
        serving = choose(pf.facts, policy.provider, provider, model)
        prep = for_model(trace, pf.prepared, serving.model, tokenizer)
    else:  # a trace in memory (a log imported for the view)
        serving = choose(trace, policy.provider, provider, model)
        prep = prepare_for(trace, serving.model, tokenizer)
    if model:  # every request as this model, as `run --model`
        prep = dataclasses.replace(prep, steps=tuple(s for s in prep.steps if s.kind != "switch"))
    calls: dict[tuple[str, int], tuple[int, int, list[int]]] = {}
    last: dict[str, tuple[int, list[int]]] = {}  # conversation -> (call number, its prompt)
    convs: list[Conversation] = []

    def on_call(req: Request, _out: Outcome) -> None:
        ids = [blocks.id_of(b.kind, b.role, b.tokens, b.digest, b.name) for b in req.tr.blocks[: req.n]]
        prev = last.get(req.conversation)
        base, keep = (prev[0], _common(prev[1], ids)) if prev else (-1, 0)
        calls[(req.conversation, req.index)] = (base, keep, ids[keep:])
        last[req.conversation] = (len(calls) - 1, ids)

    hooks = RunHooks(on_call=on_call, on_conversation=convs.append)
    res = run_prepared(
        [prep], policy, serving.profile, seed, provider_params, tokenizer=tokenizer, hooks=hooks
    )
    keys = list(calls)  # call number -> (conversation, index)
    position = {(r.conversation, r.index): i for i, r in enumerate(res.records)}
    prompts = Prompts()
    for r in res.records:
        base, keep, add = calls.get((r.conversation, r.index), (-1, 0, []))
        prompts.base.append(position.get(keys[base], -1) if base >= 0 else -1)
        prompts.keep.append(keep)
        prompts.add.append(add)
    thresholds, window = thresholds_of(convs[0]) if convs else ([], 0)
    return Observed(
        policy, serving, res.records, summarize(res.records, res.outcomes), prompts, thresholds, window
    )
