"""One found log replayed conversation by conversation, for `fidelity --all-real` (the report and
`--json`), whatever its format.

A conversation that cannot be compared is kept with the reason, never counted as a match and never
left out: the log has no per-request usage (totals only), or its model is not in the catalog (H-20:
no substitute model is guessed; `--prices FILE` adds one). Claude Code conversations are replayed
a second time with `--keep-warm` for the report's read table.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.fidelity.discover import Log
from ctxbench.bench.fidelity.results import SessionFidelity
from ctxbench.sim.core.catalog import CatalogError, prices
from ctxbench.sim.providers.choice import NoModelError
from ctxbench.traces.format import TraceError, read_trace
from ctxbench.traces.importers import ImportFailure, detect, import_paths
from ctxbench.traces.model import MessageEvent, Trace

UNKNOWN_MODEL = "model not in sim/data/models.yaml (not replayed; --prices FILE adds it)"
NO_USAGE = "the log has no per-request usage (totals only): nothing to compare"


@dataclass(frozen=True)
class Replayed:
    """One conversation of a log: its replay (`fidelity`, None when its model is unknown) and, when
    asked for, the unconditioned replay with --keep-warm."""

    log: Log
    name: str
    trace: Trace
    fidelity: SessionFidelity | None
    keep_warm: SessionFidelity | None = None
    reason: str = ""  # why it is not replayed, when it is not for another reason than its model

    @property
    def compared(self) -> bool:
        return self.fidelity is not None and self.fidelity.has_usage

    @property
    def why_not(self) -> str:
        """Why this conversation is not compared ("" when it is)."""
        if self.fidelity is None:
            return self.reason or UNKNOWN_MODEL
        return "" if self.fidelity.has_usage else NO_USAGE

    def billed_requests(self) -> int:
        return sum(1 for e in self.trace.events if isinstance(e, MessageEvent) and e.usage is not None)

    def recorded_model(self) -> str:
        return str(self.trace.header.meta.get("model_recorded", self.trace.header.model))


def replay_log(log: Log, keep_warm: bool = False) -> list[Replayed]:
    """Every conversation of `log`, replayed (module docstring)."""
    out = []
    res = import_paths([log.path], log.format)
    for tr, name in zip(res.traces, res.names, strict=True):
        try:
            sf = compare(tr, name)
            if sf.has_usage:
                prices(sf.model)
        except CatalogError:
            out.append(Replayed(log, name, tr, None))
            continue
        except NoModelError as e:  # named, and the other conversations and logs still scored
            out.append(Replayed(log, name, tr, None, reason=f"{e.args[0]} (not replayed)"))
            continue
        # the keep-warm replay is read unconditioned only (fidelity_tables.reads)
        kw = compare(tr, name, keep_warm=True, condition=False) if keep_warm and sf.has_usage else None
        out.append(Replayed(log, name, tr, sf, kw))
    return out


def not_compared_json(r: Replayed, session: str) -> dict[str, Any]:
    """The `--json` object of a conversation that is not compared: null figures and why."""
    n = r.billed_requests()
    return {
        "session": session, "log": r.log.rel, "format": r.log.format, "model": r.recorded_model(),
        "requests": n, "per_request_usage": n > 0, "within_tolerance": None, "billed": None,
        "predicted": None, "note": r.why_not,
    }  # fmt: skip


def traces_of(path: str) -> list[tuple[str, Trace]]:
    """The traces in `path`: a ctxbench trace as it is; a log a harness wrote (a format `ctxbench
    import` detects: a Claude Code session, a Codex rollout, ...) imported first, its main
    conversation under `path` and each other one (sub-agents) as `path#name`. A user hands over the
    log they have (issue 11); a file that is neither is reported as the trace reader found it."""
    try:
        if Path(path).is_dir():
            raise TraceError(path, 0, None, "a folder")
        return [(path, read_trace(path))]
    except TraceError as e:
        try:
            fmt = detect(Path(path))
        except ImportFailure:
            raise e from None
    res = import_paths([Path(path)], fmt)
    print(f"note: {path}: imported as {fmt} ({len(res.traces)} conversation(s))", file=sys.stderr)
    pairs = zip(res.names, res.traces, strict=True)
    return [(path if i == 0 else f"{path}#{n}", tr) for i, (n, tr) in enumerate(pairs)]
