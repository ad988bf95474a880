"""What the provider billed, summed from the recorded usage of an imported log: per session (a
main conversation and its sub-agents, as ccusage's `session` view groups them) the uncached
input, output, cache writes (5m + 1h), cache reads and their cost at the catalog's prices
(sim/core/catalog.py; per request, so long-context tiers apply where a prompt exceeds them).

A request is counted once however many logs hold it: Claude Code copies the earlier turns of a
session it forks or resumes into the new session's file, with their `requestId` and timestamps, only
`sessionId` changed (checked with `claude --resume ID --fork-session` 2.1.197 against `ctxbench
serve`; CodexBar #1002, orca #8023); ccusage counts such a copy once (its `messageId:requestId`
dedup across sessions, ccusage #1762/#1765). `billed` gives it to the session that billed it: the
log whose first timed line is the earliest (`first_time`: a fork's file starts with its own
process's lines, later than the copies), and leaves it out of the later ones (`seen`). Claude Code
2.1.x's compaction and side-question sub-agents (`subagents/agent-acompact-*`, `agent-aside_question-*`)
copy their session's requests too: where the session file is in the folder they are one session with
it; where it is not (a snapshot that kept only the sub-agent files), each file is read alone and
the requests are counted in the earliest that holds them, as ccusage, which reads every `.jsonl`
file under `projects/`, counts them once. `billed` names the log(s) that counted a log's copies
(bench/billed/logs.py `Seen`); `fidelity --all-real` names them as copies and scores them there
(bench/fidelity/counts.py checks the two count the same requests in every log)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ctxbench.sim.core.catalog import CatalogError, prices
from ctxbench.traces.compressed import open_log, read_errors
from ctxbench.traces.importers import import_paths
from ctxbench.traces.importers.base import parse_time

if TYPE_CHECKING:
    from ctxbench.traces.model import Trace


NO_MODEL = (
    "the log records no model (a Codex rollout before `turn_context` named one, e.g. 0.34); "
    "price it as the model it ran on with --model NAME"
)


@dataclass(frozen=True)
class BilledTotals:
    """The billed sums of a log's (or a session's) requests (module docstring), as `billed` prints
    them."""

    requests: int
    input: int  # uncached input (Anthropic `input_tokens`)
    output: int
    cache_write: int  # 5m + 1h
    cache_write_1h: int
    cache_read: int
    cost: float  # of the priced requests only
    unpriced: tuple[str, ...] = ()  # why some requests have no cost: unknown models (H-20)
    copied: int = 0  # requests left out: counted already in an earlier log (`seen`)
    # per model the requests ran on, in order of first request (a session that switched models)
    models: tuple[ModelTotals, ...] = ()
    notes: tuple[ReadingNote, ...] = ()  # where these figures differ from the importer's reading


@dataclass(frozen=True)
class ReadingNote:
    """Requests whose figures `billed` reads one way and another reader otherwise: how many, each
    figure both ways, and why. `versus` names the other reader: "importer" (`import`, `fidelity`,
    where `billed` reads a Claude Code log as ccusage does: bench/billed/fast.py), "ccusage" (where
    ccusage 20.x reads another harness's log otherwise: bench/billed/ccusage.py) or "log" (a figure the
    log records that is not a bill, e.g. a Cline cost of 0 at a default price of 0)."""

    what: str
    requests: int
    figures: dict[str, tuple[int, int]]  # ccusage's field name -> (billed, the other reader's)
    why: str
    versus: str = "importer"

    def as_dict(self) -> dict[str, object]:
        """`billed --json`'s `readingNotes` entries."""
        return {
            "what": self.what, "requests": self.requests, "versus": self.versus,
            "figures": {k: {"billed": a, self.versus: b} for k, (a, b) in self.figures.items()},
            "why": self.why,
        }  # fmt: skip

    def text(self) -> str:
        """The note `billed` prints on stderr."""
        both = "; ".join(f"{k} {a:,} ({self.versus} {b:,})" for k, (a, b) in self.figures.items())
        return f"{self.requests} request(s): {both + ': ' if both else ''}{self.why}"


@dataclass
class ModelTotals:
    """One model's share of a session (ccusage's `modelBreakdowns`): its requests, tokens, cost."""

    model: str
    requests: int = 0
    input: int = 0
    output: int = 0
    cache_write: int = 0
    cache_read: int = 0
    cost: float = 0.0
    priced: bool = True  # False: the catalog has no prices for it and the log records no cost

    def count(self, uncached: int, output: int, write: int, read: int) -> None:
        """One more request of this model, with its billed tokens."""
        self.requests += 1
        self.input += uncached
        self.output += output
        self.cache_write += write
        self.cache_read += read

    def as_dict(self) -> dict[str, object]:
        """ccusage's `modelBreakdowns` field names (`billed --json`)."""
        return {
            "modelName": self.model, "requests": self.requests, "inputTokens": self.input,
            "outputTokens": self.output, "cacheCreationTokens": self.cache_write,
            "cacheReadTokens": self.cache_read, "cost": round(self.cost, 6) if self.priced else None,
        }  # fmt: skip


def billed_totals(
    traces: list[Trace], model: str | None = None, seen: set[str] | None = None, mode: str = "auto"
) -> BilledTotals:
    """The sums of every billed request of `traces`, each priced as the model it ran on (the trace's,
    then each `model_switch`'s: a `/model` or fast-mode request), or all as `model`.
    The tokens of a conversation on a model without prices are counted; its cost is not guessed:
    the catalog's error (closest known ids, the options that add one) goes to `unpriced`. With
    `seen`, a request whose id is in it is left out (a copy: module docstring) and each id counted
    is added to it. `mode` "auto" takes a request's cost from the log where it records one
    (Claude Code 1.0.x `costUSD`), as ccusage's default mode does; "calculate" always prices it."""
    from ctxbench.traces.model import MessageEvent, ModelSwitchEvent  # not for the fast path's start-up

    n = i = o = w = w1 = r = copied = 0
    cost = 0.0
    unpriced: list[str] = []
    unpriced_models: set[str] = set()
    logged = mode == "auto" and model is None
    per: dict[str, ModelTotals] = {}
    for tr in traces:
        current = model or tr.header.model
        # requests whose log records 0 tokens in and out: billed, their counts unknown (counted, $0;
        # traces/importers/backend.py `drop_unrecorded`)
        n += int(str(tr.header.meta.get("usage_unrecorded", 0) or 0))
        for ev in tr.events:
            if isinstance(ev, ModelSwitchEvent) and model is None:  # `/model`, fast mode: its prices
                current = ev.model
            if not isinstance(ev, MessageEvent) or ev.usage is None:
                continue
            if seen is not None and ev.request_id:
                if ev.request_id in seen:
                    copied += 1
                    continue
                seen.add(ev.request_id)
            u = ev.usage
            m = per.setdefault(current or "unknown", ModelTotals(current or "unknown"))
            n += 1
            i += u.input_tokens
            o += u.output_tokens
            w += u.cache_write_5m + u.cache_write_1h
            w1 += u.cache_write_1h
            r += u.cache_read
            m.count(u.input_tokens, u.output_tokens, u.cache_write_5m + u.cache_write_1h, u.cache_read)
            if logged and u.cost is not None:  # the cost the log records needs no price
                cost += u.cost
                m.cost += u.cost
                continue
            if current in unpriced_models:
                m.priced = False
                continue
            try:
                pr = prices(current)
            except CatalogError as e:
                unpriced_models.add(current)
                unpriced.append(str(e) if current else NO_MODEL)
                m.priced = False
                continue
            c = pr.cost(u.input_tokens, u.cache_read, u.cache_write_5m, u.cache_write_1h, u.output_tokens)
            cost += c
            m.cost += c
    return BilledTotals(n, i, o, w, w1, r, cost, tuple(dict.fromkeys(unpriced)), copied, tuple(per.values()))


def first_time(path: Path, lines: int = 1000) -> float:
    """The time of a log's first line that has one (epoch seconds; among its first `lines`), which
    orders logs to say which one billed a copied request (module docstring); 0 when none has."""
    try:
        with open_log(path) as f:
            for _, raw in zip(range(lines), f, strict=False):
                try:
                    o = json.loads(raw) if raw.strip() else None
                except (ValueError, RecursionError):
                    continue
                t = parse_time(o.get("timestamp")) if isinstance(o, dict) else None
                if t is not None:
                    return t
    except read_errors():
        pass
    return 0.0


def session_totals(path: Path) -> BilledTotals:
    """Billed totals of one Claude Code session file with its sub-agents."""
    return billed_totals(list(import_paths([path]).traces))
