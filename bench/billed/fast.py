"""The billed totals of a Claude Code session read straight from its usage lines (issue 28:
`ctxbench billed FOLDER` as fast as ccusage): no import of the conversation, only the lines that
carry `usage` decoded (msgspec, typed: fields not needed are skipped in C), each model's prices
resolved once per model id, not per line.

Counted as ccusage 20.x counts them (ryoppippi/ccusage v20.0.11,
rust/crates/ccusage/src/adapter/claude/mod.rs `push_deduped_entry`, src/types.rs
`cache_creation_token_count`), which is also how the importer counts an ordinary log
(traces/importers/claude_code.py; a test keeps the two equal on the shared sessions): a request
per `requestId` (else `message.id`) of an `assistant` line of the session file and its sub-agent
files; of the lines one request is logged on (one per content block, or 1.0.x's streaming
snapshots), the one with the largest token total, on a tie the one that gives its `speed`; its
cache writes are the 5m + 1h of its `cache_creation` split where the line has one, else
`cache_creation_input_tokens` (priced as 5m writes). A line repeating an earlier line's uuid,
`<synthetic>` replies and bookkeeping lines are not requests. The importer keeps the line of the
largest total too (a backend other than Anthropic's API may log its estimate on a message's first
lines and the request's own counts on the last). Where the two readings differ (a write total its
split does not sum to: a relay), `reading_notes` says how many requests, both figures and why
(`billed` prints them, `--json` `readingNotes`).
Only the lines holding `"usage"` (or an inline sidechain's marker) are split out and decoded.
A line the typed decoder cannot read sends the file back to the importer (`None`), which names
the line and field.

`conversations` counts the conversations with billed requests: the session file's main one, each
inline sidechain (1.0.x `isSidechain` lines, grouped by the line their `parentUuid` chain starts
at) and each sub-agent file but the compaction agent's (`agent-acompact-*`, its request is the
main conversation's compaction, as the importer merges it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from ctxbench.bench.billed.totals import BilledTotals, ModelTotals, ReadingNote
from ctxbench.sim.core.catalog import CatalogError, Prices, prices
from ctxbench.traces.compressed import open_log
from ctxbench.traces.importers.base import normalize_model
from ctxbench.traces.importers.claude_code_files import related_files

if TYPE_CHECKING:
    from collections.abc import Callable

MAX_COST = 1e6


class _Split(msgspec.Struct):
    ephemeral_5m_input_tokens: int | None = None
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
    """One request as ccusage counts it: the tokens of the line it keeps (the importer keeps the same
    line), and the cache-write total the importer reads beside its split (`reading_notes`)."""

    model: str
    input: int
    read: int
    write_5m: int
    write_1h: int
    output: int
    cost: float | None
    speed: bool = False  # the kept line says its speed (ccusage prefers it on a tie)
    total_write: int = 0  # `cache_creation_input_tokens` of the kept line

    @property
    def total(self) -> int:
        return self.input + self.read + self.write_5m + self.write_1h + self.output


Read = tuple[dict[str, _Request], int] | None  # `read_requests`' answer
# a _Request's fields as a plain tuple, which `marshal` carries between processes
_Row = tuple[str, int, int, int, int, int, float | None, bool, int]
Wire = tuple[list[tuple[str, _Row]], int] | None  # `Read` so carried


def to_wire(got: Read) -> Wire:
    """`got` in builtin types only, for `marshal` (bench/billed/read_ahead.py `ReadAhead` reads logs in
    forked processes; marshal needs no import and is faster than pickle); `from_wire` undoes it."""
    if got is None:
        return None
    reqs, convs = got
    rows = [
        (rid, (q.model, q.input, q.read, q.write_5m, q.write_1h, q.output, q.cost, q.speed, q.total_write))
        for rid, q in reqs.items()
    ]  # fmt: skip
    return rows, convs


def from_wire(wire: Wire) -> Read:
    """The `Read` that `to_wire` gave `wire` for: equal requests in the same order."""
    if wire is None:
        return None
    rows, convs = wire
    return {rid: _Request(*row) for rid, row in rows}, convs


@dataclass
class FastSession:
    """`fast_totals`' answer: a session's billed sums and its requests as read."""

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


def lines_with(data: bytes, *markers: bytes) -> list[bytes]:
    """The lines of `data` holding any of `markers`, in order: found by the bytes' own search (C),
    so the lines without one (most of a log's bytes) are never split out nor looked at in Python."""
    spans: dict[int, int] = {}
    for marker in markers:
        at = data.find(marker)
        while at != -1:
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            end = len(data) if end == -1 else end
            spans[start] = end
            at = data.find(marker, end)
    return [data[a : spans[a]] for a in sorted(spans)]


def _request(o: _Line, u: _Usage, model: str) -> _Request:
    """One line's usage as ccusage reads it (module docstring)."""
    total = _n(u.cache_creation_input_tokens)
    split = u.cache_creation
    if split is None:  # no split: the total, priced as 5m writes
        w5, w1 = total, 0
    else:
        w5, w1 = _n(split.ephemeral_5m_input_tokens), _n(split.ephemeral_1h_input_tokens)
    if u.speed == "fast" and model and not model.endswith("-fast"):
        model = f"{model}-fast"
    c = o.costUSD
    if c is not None and not (math.isfinite(c) and 0 <= c <= MAX_COST):
        raise ValueError("costUSD out of range")
    inp, read = _n(u.input_tokens), _n(u.cache_read_input_tokens)
    return _Request(model, inp, read, w5, w1, _n(u.output_tokens), c, u.speed is not None, total)


def read_requests(path: Path) -> Read:
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
            part = 0 if "acompact" in f.name else k  # a compaction agent: the main conversation's
            lines = lines_with(data, b'"usage"')
            if k == 0 and any(b'"isSidechain":true' in raw for raw in lines):  # 1.0.x inline sidechains
                lines = lines_with(data, b'"usage"', b'"isSidechain":true')
            for raw in lines:
                o = _DECODER.decode(raw)
                conv = "main"
                if k == 0 and o.isSidechain and o.uuid is not None:  # a sidechain starts at a parent of none
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
                rid = o.requestId or m.id
                if rid is None:
                    return None  # the importer names such a line by where it is
                convs.add((part, conv))
                q = _request(o, m.usage, model)
                prev = reqs.get(rid)
                if prev is None:
                    reqs[rid] = q
                    continue
                # ccusage keeps the line of the largest total, on a tie the one that gives its speed
                if q.total > prev.total or (q.total == prev.total and q.speed and not prev.speed):
                    reqs[rid] = q
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError, UnicodeDecodeError):
        return None
    return reqs, max(1, len(convs))


def fast_totals(
    path: Path,
    model: str | None = None,
    seen: set[str] | None = None,
    mode: str = "auto",
    read: Callable[[Path], Read] = read_requests,
) -> FastSession | None:
    """bench/billed/totals.py `billed_totals` of one Claude Code session, read by `read` (`read_requests`,
    or the same reading done ahead in another process: bench/billed/read_ahead.py `ReadAhead`)."""
    got = read(path)
    if got is None:
        return None
    reqs, convs = got
    n = i = o = w = w1 = r = copied = 0
    cost = 0.0
    unpriced: list[str] = []
    priced: dict[str, Prices | None] = {}
    logged = mode == "auto" and model is None
    per: dict[str, ModelTotals] = {}
    keys: dict[str, str] = {}  # model id as recorded -> its catalog name (resolved once)
    counted: list[_Request] = []
    for rid, q in reqs.items():
        if seen is not None:
            if rid in seen:
                copied += 1
                continue
            seen.add(rid)
        counted.append(q)
        n += 1
        i += q.input
        o += q.output
        w += q.write_5m + q.write_1h
        w1 += q.write_1h
        r += q.read
        name = model or q.model
        key = keys.get(q.model) or keys.setdefault(q.model, normalize_model(q.model) or "unknown")
        key = model or key
        m = per.setdefault(key, ModelTotals(key))
        m.count(q.input, q.output, q.write_5m + q.write_1h, q.read)
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
        n, i, o, w, w1, r, cost, tuple(dict.fromkeys(unpriced)), copied, tuple(per.values()),
        reading_notes(counted),
    )
    return FastSession(totals, first, convs, reqs)


def reading_notes(reqs: list[_Request]) -> tuple[ReadingNote, ...]:
    """Where the figures read as ccusage reads them (module docstring) differ from the importer's
    reading (`ctxbench import`, `fidelity`: the cache-write total, with the split only pricing it),
    and why."""
    notes: list[ReadingNote] = []
    unsplit = [q for q in reqs if q.write_5m + q.write_1h != q.total_write]
    if unsplit:
        notes.append(ReadingNote(
            "cache-write-without-split", len(unsplit),
            {"cacheCreationTokens": (
                sum(q.write_5m + q.write_1h for q in unsplit), sum(q.total_write for q in unsplit)
            )},
            "cache_creation_input_tokens is not the sum of its 5m/1h split (a relay that leaves the "
            "split 0); counted as ccusage does, the split; `import` and `fidelity` take the total "
            "(priced as 5m writes)",
        ))  # fmt: skip
    return tuple(notes)
