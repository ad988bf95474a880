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
from ctxbench.traces.model import MessageEvent, ModelSwitchEvent, Trace

UNKNOWN_MODEL = "model not in sim/data/models.yaml (not replayed; --prices FILE adds it)"
NO_USAGE = "the log has no per-request usage (totals only): nothing to compare"
UNRECORDED = "its {n} billed request(s) record 0 tokens in and out (bill unknown): nothing to compare"


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
        if self.fidelity.has_usage:
            return ""
        n = self.trace.header.meta.get("usage_unrecorded")
        return UNRECORDED.format(n=n) if n else NO_USAGE

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
            out.append(Replayed(log, name, tr, None, reason=unknown_models(tr)))
            continue
        except NoModelError as e:  # named, and the other conversations and logs still scored
            out.append(Replayed(log, name, tr, None, reason=f"{e.args[0]} (not replayed)"))
            continue
        # the keep-warm replay is read unconditioned only (fidelity_tables.reads)
        kw = compare(tr, name, keep_warm=True, condition=False) if keep_warm and sf.has_usage else None
        out.append(Replayed(log, name, tr, sf, kw))
    return out


def unknown_models(trace: Trace) -> str:
    """Why a conversation is not replayed for its models: the ones the catalog cannot price, the
    recorded one or one it switched to (a Claude Code log that mixes a Claude model with another
    backend's), named."""
    named = [trace.header.model] + [e.model for e in trace.events if isinstance(e, ModelSwitchEvent)]
    missing = []
    for m in dict.fromkeys(x for x in named if x):
        try:
            prices(m)
        except CatalogError:
            missing.append(m if m == trace.header.model else f"{m} (switched to)")
    if not missing:
        return UNKNOWN_MODEL
    return f"model {', '.join(missing)} not in sim/data/models.yaml (not replayed; --prices FILE adds it)"


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
