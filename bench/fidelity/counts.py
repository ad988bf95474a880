"""Every billed request scored or named (issue 28): `fidelity --all-real` accounts, per log, for
the requests `ctxbench billed` counts in it.

`billed` counts a request once over a folder, as ccusage does (bench/billed/totals.py): in the log whose
first timed line is the earliest, and once per session (a sub-agent's copy of its main
conversation's request is the same request), with the requests whose usage records 0 tokens in and
out ($0). `fidelity` replays every conversation (copies included: they build its prompt) and
accounts for each request of a log as one of: scored; not scored (the replay stopped, `not_scored`);
in a conversation not compared or not replayed (its model unknown, an error on its data: `requests`
of its `--json` object); unrecorded (`usage_unrecorded`). Copies of requests counted in another
conversation or an earlier log are named (`copied_requests`), not counted again
(bench/fidelity/report.py `billed_once`). `agree` checks the two counts match log by log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ctxbench.bench.billed.logs import requests_per_log
from ctxbench.bench.fidelity.discover import Log
from ctxbench.bench.fidelity.logs import Replayed


def per_log(convs: Iterable[Replayed], key: Callable[[Log], str] = lambda lg: lg.rel) -> dict[str, int]:
    """The billed requests `fidelity` accounts for in each log (by its path under the folder)."""
    out: dict[str, int] = {}
    for r in convs:
        if r.error is not None and r.error.stage == "import":
            continue  # the log was not read: `billed` leaves it out too (it names it)
        out[key(r.log)] = out.get(key(r.log), 0) + r.counted()
    return out


def per_log_json(objects: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """The same from `fidelity --all-real --json`'s objects: scored (`requests` of a compared
    conversation) + `not_scored` + not compared (`requests` of one with null figures) +
    `usage_unrecorded`; `copied_requests` are counted where they were first billed."""
    out: dict[str, int] = {}
    for o in objects:
        error = o.get("error") or {}
        if error.get("stage") == "import":
            continue
        n = int(o.get("requests") or 0)
        if o.get("billed") is not None:  # compared: its stopped requests are not in `requests`
            n += int((o.get("not_scored") or {}).get("count", 0))
        out[str(o["log"])] = out.get(str(o["log"]), 0) + n + int(o.get("usage_unrecorded") or 0)
    return out


def agree(fidelity: Mapping[str, int], billed: Mapping[str, int | None]) -> list[str]:
    """One line per log the two count differently (none when they agree): its path, both counts.
    A log `billed` could not read (None) or `fidelity` has no conversation of is left out only when
    the other counts nothing in it."""
    lines = []
    for log in sorted(set(fidelity) | set(billed)):
        f, b = fidelity.get(log, 0), billed.get(log)
        if b is None and log in billed:
            continue  # not imported: both name it (billed's error line, fidelity's "Not replayed")
        if f != (b or 0):
            lines.append(f"{log}: billed counts {b or 0} request(s), fidelity {f}")
    return lines


def accounted(convs: list[Replayed]) -> list[str]:
    """The report's lines: the billed requests of the logs replayed, as `billed` counts them over
    them all, and how they are accounted for here; each log counted differently (none expected)."""
    logs = sorted({r.log: None for r in convs}, key=lambda lg: lg.rel)  # billed_once's order on a tie
    billed = {str(lg.path): n for lg, n in requests_per_log(logs)}
    diff = agree(per_log(convs, key=lambda lg: str(lg.path)), billed)
    compared = [r.fidelity for r in convs if r.fidelity is not None and r.compared]
    scored, stopped = sum(sf.n for sf in compared), sum(len(sf.not_scored) for sf in compared)
    unrecorded = sum(r.unrecorded for r in convs)
    total = sum(n or 0 for n in billed.values())
    other = sum(r.counted() - r.unrecorded for r in convs if not r.compared)
    line = (
        f"Billed requests (as `ctxbench billed` counts them: once over these logs): {total:,}; scored "
        f"{scored:,}, not scored {stopped:,}, in conversations not compared or not replayed "
        f"{other:,}, recording 0 tokens "
        f"{unrecorded:,}; {sum(r.copied for r in convs):,} copies of requests counted in another "
        "conversation or log are named there, not counted again. "
    )
    if not diff:
        return [line + "Every log counts the requests `billed` counts in it.", ""]
    head = line + f"Counted otherwise than `billed` in {len(diff)} log(s):"
    return [head, "", *(f"- {d}" for d in diff), ""]
