"""Why a request is not within tolerance, as its bill shows it: the report's "not within" table.

A request is within tolerance when its cache read, cache write and uncached input are each within
max(1 %, 128) tokens of the bill (results.py `RequestCompare.within`). One that is not falls in
one of four kinds, read off the bill against the prediction:
- **read less**: the bill read less than predicted, beyond the read's tolerance. The replay
  expected a live entry that the provider did not read: a server-side lookup miss or eviction, or
  a change to the prompt the log does not show. The log holds no trace of either, so the interval
  draws them as chances (bench/fidelity/interval.py, misses.py);
- **read more**: the bill read more than predicted. An entry the replay expected gone was read:
  kept past its ttl, warmed by another session (warming.py), or a break the replay invented;
- **size off**: the read is within its tolerance and the prompt's total (read, write and uncached
  input) is not: the replay sized what the request added wrongly (the tokens of content the log
  holds, or content it does not);
- **split off**: the read and the total are each within their tolerance, and the read is still off
  by more than the smaller write's or uncached input's: a cache point a few hundred tokens from
  the predicted one (a relay that reads the previous prompt less its last tokens or a storage
  unit less, a breakpoint on a neighbouring block).

The naive replay (each request reads all the previous one cached; its uncached input is the
billed one, so its total is always the bill's) is classed the same way beside it. The split says
where the remaining error lies: the first two kinds are events a log does not record, the third
is the replay's own model of the prompt, the fourth where the provider puts its cache points.
Counted over the scored requests of each family, on each part of the report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ctxbench.bench.fidelity.results import RequestCompare, SessionFidelity, tolerance

READ_LESS = "read less"
READ_MORE = "read more"
SIZE = "size off"
SPLIT = "split off"
KINDS = (READ_LESS, READ_MORE, SIZE, SPLIT)


def kind(read: int, total: int, q: RequestCompare) -> str:
    """The kind (module docstring) of a prediction not within tolerance at `q` that read `read`
    tokens of a `total`-token prompt."""
    b = q.billed
    if abs(read - b.cache_read) > tolerance(b.cache_read):
        return READ_LESS if b.cache_read < read else READ_MORE
    return SIZE if abs(total - b.total_input) > tolerance(b.total_input) else SPLIT


def replay_kind(q: RequestCompare) -> str:
    """The kind of the prediction's error at `q`, "" when it is within."""
    p = q.predicted
    total = p.cache_read + p.cache_write_5m + p.cache_write_1h + q.input_predicted
    return "" if q.within else kind(p.cache_read, total, q)


def naive_kind(q: RequestCompare) -> str:
    """The kind of the naive replay's error at `q`, "" when it is within (its total is the bill's)."""
    return "" if q.naive_within else kind(q.naive_read, q.billed.total_input, q)


def count_kinds(sessions: Iterable[SessionFidelity]) -> tuple[int, Counter[str], Counter[str]]:
    """Over the scored requests of `sessions`: how many, and the replay's and the naive replay's
    requests not within tolerance by kind."""
    n, replay, naive = 0, Counter[str](), Counter[str]()
    for sf in sessions:
        for q in sf.baseline.requests:
            n += 1
            replay[replay_kind(q)] += 1
        for q in sf.requests:
            naive[naive_kind(q)] += 1
    del replay[""], naive[""]
    return n, replay, naive


def by_kind(kinds: Iterable[str]) -> dict[str, int]:
    """How many of `kinds` (one per request, "" when within) are of each kind, in `KINDS` order."""
    counts = Counter(kinds)
    return {k: counts[k] for k in KINDS}


def table(by_family: dict[str, list[SessionFidelity]]) -> list[str]:
    """The report's table: per family, the requests not within tolerance by kind, the naive
    replay's beside each, as shares of the family's scored requests."""
    out = [
        "Requests not within tolerance, by what the bill shows (bench/fidelity/not_within.py): read "
        "less than predicted (a lookup miss or an unlogged prompt change), read more (an entry kept "
        "or warmed, or an invented break), the read right and the prompt's size off (the replay's "
        "sizing), or both right and the read a cache point away (split off); share of the family's "
        "scored requests, the naive replay's in brackets.",
        "",
        "| family | requests | not within (naive) | read less (naive) | read more (naive) "
        "| size off (naive) | split off (naive) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for fam, sessions in sorted(by_family.items()):
        n, replay, naive = count_kinds(sessions)
        if not n:
            continue
        cells = [
            f"{sum(replay.values()) / n:.1%} ({sum(naive.values()) / n:.1%})",
            *(f"{replay[k] / n:.1%} ({naive[k] / n:.1%})" for k in KINDS),
        ]
        out.append(f"| {fam} | {n} | " + " | ".join(cells) + " |")
    return out
