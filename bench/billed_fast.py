"""The billed totals of a Claude Code session read straight from its usage lines (issue 28:
`ctxbench billed FOLDER` as fast as ccusage): no import of the conversation, only the lines that
carry `usage` decoded (msgspec, typed: fields not needed are skipped in C), each model's prices
resolved once per model id, not per line.

Counted as the importer counts them (traces/importers/claude_code.py, so `billed` gives the same
figures either way): a request per `requestId` (else `message.id`) of an `assistant` line of the
session file and its sub-agent files; its uncached input and cache fields from its first line,
its output from its last (Claude Code 1.0.x logs streaming snapshots); a line repeating an earlier
line's uuid, `<synthetic>` replies and bookkeeping lines are not requests. Cache writes are
`cache_creation_input_tokens` (as ccusage counts them); the 5m/1h split only prices them (a total
without a split is priced as 5m). A line the typed decoder cannot read sends the file back to the
importer (`None`), which names the line and field.

`conversations` counts the conversations with billed requests: the session file's main one, each
inline sidechain (1.0.x `isSidechain` lines, grouped by the line their `parentUuid` chain starts
at) and each sub-agent file but the compaction agent's (`agent-acompact-*`, its request is the
main conversation's compaction, as the importer merges it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from ctxbench.bench.billed import BilledTotals, ModelTotals
from ctxbench.sim.core.catalog import CatalogError, Prices, prices
from ctxbench.traces.compressed import open_log
from ctxbench.traces.importers.base import normalize_model
from ctxbench.traces.importers.claude_code import related_files

MAX_COST = 1e6


class _Split(msgspec.Struct):
    ephemeral_1h_input_tokens: int | None = None


class _Usage(msgspec.Struct):
    input_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation: _Split | None = None
    speed: str | None = None


class _Message(msgspec.Struct):
    id: str | None = None
    model: str | None = None
    usage: _Usage | None = None


class _Line(msgspec.Struct):
    type: str | None = None
    uuid: str | None = None
    requestId: str | None = None  # the log's field names
    agentId: str | None = None
    isSidechain: bool | None = None
    parentUuid: str | None = None
    message: _Message | msgspec.Raw | None = None
    costUSD: float | None = None


_DECODER = msgspec.json.Decoder(_Line)


@dataclass
class _Request:
    model: str
    input: int
    read: int
    write_5m: int
    write_1h: int
    output: int
    cost: float | None


@dataclass
class FastSession:
    totals: BilledTotals
    model: str  # the first request's model id as recorded
    conversations: int
    requests: dict[str, _Request] = field(default_factory=dict)


def _n(v: int | None) -> int:
    if v is None:
        return 0
    if v < 0:
        raise ValueError("negative count")
    return v


def read_requests(path: Path) -> tuple[dict[str, _Request], int] | None:
    """The requests of one session (module docstring), in order, and its conversations; None
    when a line is not of the shape the typed reader knows (the importer reads that file)."""
    reqs: dict[str, _Request] = {}
    uuids: set[str] = set()
    convs: set[tuple[int, str]] = set()
    roots: dict[str, str] = {}  # inline sidechain line uuid -> the uuid its sidechain starts at
    try:
        for k, f in enumerate(related_files(path)):
            with open_log(f) as fh:
                data = fh.read()
            for raw in data.split(b"\n"):
                side = b'"isSidechain":true' in raw and k == 0
                if b'"usage"' not in raw and not side:
                    continue
                o = _DECODER.decode(raw)
                conv = "main"
                if side and o.uuid is not None:  # a sidechain starts where its parent is none of one
                    conv = roots[o.uuid] = roots.get(o.parentUuid or "", o.uuid)
                if o.type != "assistant" or not isinstance(o.message, _Message):
                    continue
                if o.uuid is not None:
                    if o.uuid in uuids:
                        continue
                    uuids.add(o.uuid)
                m = o.message
                model = m.model or ""
                if model == "<synthetic>" or m.usage is None or m.usage.input_tokens is None:
                    continue
                u = m.usage
                rid = o.requestId or m.id
                if rid is None:
                    return None  # the importer names such a line by where it is
                convs.add((0 if "acompact" in f.name else k, conv))  # a compaction agent: main's
                prev = reqs.get(rid)
                if prev is not None:
                    prev.output = _n(u.output_tokens)
                    continue
                write = _n(u.cache_creation_input_tokens)
                w1 = min(_n(u.cache_creation.ephemeral_1h_input_tokens) if u.cache_creation else 0, write)
                if u.speed == "fast" and model and not model.endswith("-fast"):
                    model = f"{model}-fast"
                c = o.costUSD
                if c is not None and not (math.isfinite(c) and 0 <= c <= MAX_COST):
                    return None
                reqs[rid] = _Request(
                    model, _n(u.input_tokens), _n(u.cache_read_input_tokens), write - w1, w1,
                    _n(u.output_tokens), c,
                )  # fmt: skip
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError, UnicodeDecodeError):
        return None
    return reqs, max(1, len(convs))


def fast_totals(
    path: Path, model: str | None = None, seen: set[str] | None = None, mode: str = "auto"
) -> FastSession | None:
    """bench/billed.py `billed_totals` of one Claude Code session, read by `read_requests`."""
    got = read_requests(path)
    if got is None:
        return None
    reqs, convs = got
    n = i = o = w = w1 = r = copied = 0
    cost = 0.0
    unpriced: list[str] = []
    priced: dict[str, Prices | None] = {}
    logged = mode == "auto" and model is None
    per: dict[str, ModelTotals] = {}
    for rid, q in reqs.items():
        if seen is not None:
            if rid in seen:
                copied += 1
                continue
            seen.add(rid)
        n += 1
        i += q.input
        o += q.output
        w += q.write_5m + q.write_1h
        w1 += q.write_1h
        r += q.read
        name = model or q.model
        key = model or normalize_model(q.model) or "unknown"
        m = per.setdefault(key, ModelTotals(key))
        m.requests += 1
        m.input += q.input
        m.output += q.output
        m.cache_write += q.write_5m + q.write_1h
        m.cache_read += q.read
        if logged and q.cost is not None:
            cost += q.cost
            m.cost += q.cost
            continue
        if name not in priced:
            try:
                priced[name] = prices(name)
            except CatalogError as e:
                priced[name] = None
                unpriced.append(str(e))
        pr = priced[name]
        if pr is None:
            m.priced = False
        else:
            c = pr.cost(q.input, q.read, q.write_5m, q.write_1h, q.output)
            cost += c
            m.cost += c
    first = next(iter(reqs.values())).model if reqs else ""
    totals = BilledTotals(
        n, i, o, w, w1, r, cost, tuple(dict.fromkeys(unpriced)), copied, tuple(per.values())
    )
    return FastSession(totals, first, convs, reqs)
