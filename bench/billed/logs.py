"""`billed`'s totals of each log of a set, in the order that says which log a copied request is
counted in (bench/billed/totals.py: the log whose first timed line is the earliest; ties keep the
order the logs are given in), shared by `ctxbench billed` and the check that `fidelity --all-real` counts the
same requests per log (bench/fidelity/counts.py)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ctxbench.bench.billed.totals import BilledTotals, billed_totals, first_time

if TYPE_CHECKING:
    from ctxbench.bench.billed.fast import Read
    from ctxbench.bench.fidelity.discover import Log


@dataclass(frozen=True)
class LogTotals:
    """`log_totals`' answer: the log's billed sums and what the table says of it besides."""

    totals: BilledTotals
    model: str  # the main conversation's model, as the log (or its importer) names it
    conversations: int
    session: str = ""  # a Gemini CLI file's sessionId (ccusage groups its files by it)


class Seen(set[str]):
    """The request ids counted so far (`billed_totals`' and `fast_totals`' `seen`) and the log each
    was counted in (`log`: the one being read), so that the note on a log's copies names where they
    were counted: an earlier session it was forked or resumed from, or a sibling sub-agent file
    (Claude Code's compaction and side-question agents copy their session's requests with their
    requestId) whose session file is not in the folder. `copied_from()` gives, for the log being
    read, how many of its requests each earlier log counted."""

    def __init__(self) -> None:
        super().__init__()
        self.log = ""
        self._by: dict[str, str] = {}
        self._hits: Counter[str] = Counter()

    def start(self, log: str) -> None:
        self.log = log
        self._hits = Counter()

    def add(self, rid: str) -> None:
        super().add(rid)
        self._by.setdefault(rid, self.log)

    def __contains__(self, rid: object) -> bool:
        hit = super().__contains__(rid)
        if hit and isinstance(rid, str):
            self._hits[self._by.get(rid, "")] += 1
        return hit

    def copied_from(self) -> list[tuple[str, int]]:
        """(earlier log, requests of the log being read it counted), most first."""
        return self._hits.most_common()


def in_billing_order(logs: list[Log]) -> list[int]:
    """The indices of `logs`, the log that billed a copied request first (module docstring)."""
    return sorted(range(len(logs)), key=lambda k: first_time(logs[k].path))  # stable: ties keep order


def log_totals(
    log: Log,
    model: str | None,
    seen: set[str],
    mode: str = "auto",
    read: Callable[[Path], Read] | None = None,
) -> LogTotals:
    """One log's billed totals; a Claude Code request whose id is in `seen` is a copy counted in
    an earlier log (left out, `copied`), and the ids it counts are added. Raises the importer's
    ImportFailure for a log it cannot read. `read`: how a Claude Code log is read (default
    `read_requests`; bench/billed/read_ahead.py `ReadAhead` reads them ahead on other cores)."""
    from ctxbench.bench.billed.ccusage import format_notes
    from ctxbench.bench.billed.fast import fast_totals, read_requests
    from ctxbench.traces.importers import import_paths
    from ctxbench.traces.importers.base import normalize_model

    fast = None
    if log.format == "claude-code":
        fast = fast_totals(log.path, model, seen, mode, read or read_requests)
    if fast is not None:  # its usage lines only (bench/billed/fast.py)
        return LogTotals(fast.totals, normalize_model(fast.model), fast.conversations)
    res = import_paths([log.path], log.format)
    traces = list(res.traces)
    t = billed_totals(traces, model, seen if log.format == "claude-code" else None, mode)
    t = replace(t, notes=t.notes + format_notes(log.format, log.path, traces, t, model))
    session = str(res.main.header.meta.get("session", "")) if log.format == "gemini-cli" else ""
    return LogTotals(t, res.main.header.model, len(traces), session)


def requests_per_log(logs: list[Log]) -> Iterator[tuple[Log, int | None]]:
    """Each log (in billing order) and the requests `billed` counts in it (None: not imported)."""
    from ctxbench.traces.importers import ImportFailure

    seen: set[str] = set()
    for k in in_billing_order(logs):
        try:
            yield logs[k], log_totals(logs[k], None, seen).totals.requests
        except (ImportFailure, OSError):
            yield logs[k], None

