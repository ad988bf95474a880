"""One found log replayed conversation by conversation, for `fidelity --all-real` (the report and
`--json`), whatever its format.

A conversation that cannot be compared is kept with the reason, never counted as a match and never
left out: the log has no per-request usage (totals only), or its model is not in the catalog (H-20:
no substitute model is guessed; `--prices FILE` adds one). Claude Code conversations are replayed
a second time with `--keep-warm` for the report's read table.

A conversation whose replay raises one of `DATA_ERRORS` (a simulated provider's "Negative delay"
from a clock that runs backwards, an arithmetic guard, a lookup of a field the log lacks), or a log
whose import raises one, is kept as "not replayed" with the error's class and message (`NotReplayed`):
the report, the text and `--json` name it, and the other conversations and logs are scored (issue 28:
nothing dropped or stopped silently; a conversation that could not be replayed is a result, so the
run still exits 0).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.fidelity.discover import Log
from ctxbench.bench.fidelity.results import COPIED, NO_USAGE, SessionFidelity
from ctxbench.sim.core.catalog import CatalogError, closest, prices
from ctxbench.sim.providers.choice import NoModelError
from ctxbench.traces.format import TraceError, read_trace
from ctxbench.traces.importers import ImportFailure, detect, import_paths
from ctxbench.traces.model import Header, MessageEvent, ModelSwitchEvent, Trace

UNKNOWN_MODEL = "model not in sim/data/models.yaml (not replayed; --prices FILE adds it)"
# What the replay of one conversation raises for a problem in its data, caught per conversation (and
# per log on import). ValueError covers the readers' and importers' errors (TraceError, ImportFailure,
# CatalogError, NoModelError are its subclasses) and simpy's "Negative delay"; KeyError a lookup of a
# field or id the log lacks; ArithmeticError (ZeroDivisionError, OverflowError) a guard a degenerate
# log trips; RecursionError content nested deeper than a reader's stack. Not `Exception`: a
# TypeError, AttributeError, IndexError or AssertionError is a bug in ctxbench, and a bug that made
# every conversation "not replayed" would read as a result; it still ends the run with the CLI's
# one-line "internal error" (bench/cli/__init__.py). simpy raises nothing else for data (its own
# exceptions, Interrupt and StopSimulation, are control flow the engine handles).
DATA_ERRORS: tuple[type[Exception], ...] = (ValueError, KeyError, ArithmeticError, RecursionError)
IMPORT_ERRORS: tuple[type[Exception], ...] = (*DATA_ERRORS, OSError)  # and a log that cannot be read
IMPORT = "(import)"  # the conversation name of a log whose import failed (it has no conversations)
UNRECORDED = "its {n} billed request(s) record 0 tokens in and out (bill unknown): nothing to compare"


@dataclass(frozen=True)
class NotReplayed:
    """Why a conversation (or a whole log, at import) was not replayed: the exception's class and
    message, and the stage it was raised in ("import" or "replay")."""

    kind: str
    message: str
    stage: str = "replay"

    @classmethod
    def of(cls, exc: BaseException, stage: str = "replay") -> NotReplayed:
        msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        return cls(type(exc).__name__, " ".join(msg.split())[:300], stage)

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


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
    error: NotReplayed | None = field(default=None)  # the data error its replay or import raised
    # of a conversation not compared: the ids of its requests that are copies of requests counted
    # in an earlier conversation or log (report.py `billed_once`; a compared one: `fidelity.copied`)
    copies: frozenset[str] = frozenset()

    @property
    def compared(self) -> bool:
        return self.fidelity is not None and self.fidelity.has_usage

    @property
    def why_not(self) -> str:
        """Why this conversation is not compared ("" when it is)."""
        if self.error is not None:
            stage = "not imported" if self.error.stage == "import" else "not replayed"
            return f"{stage}: {self.error}"
        if self.fidelity is None:
            return self.reason or UNKNOWN_MODEL
        if self.fidelity.has_usage:
            return ""
        if self.fidelity.copied:
            return COPIED.format(n=self.fidelity.copied)
        n = self.trace.header.meta.get("usage_unrecorded")
        return UNRECORDED.format(n=n) if n else NO_USAGE

    def billed_requests(self) -> int:
        """Its requests with usage, copies of earlier ones included."""
        return sum(1 for e in self.trace.events if isinstance(e, MessageEvent) and e.usage is not None)

    @property
    def copied(self) -> int:
        """Its requests that are copies of requests counted in another conversation (same
        requestId): counted, scored or named there, as `billed` counts them (bench/billed/totals.py)."""
        if self.fidelity is not None and self.fidelity.copied:  # replayed, its copies left out
            return self.fidelity.copied
        return sum(
            1
            for e in self.trace.events
            if isinstance(e, MessageEvent) and e.usage is not None and e.request_id in self.copies
        )

    @property
    def unrecorded(self) -> int:
        """Its billed requests whose log records 0 tokens in and out (traces/importers/backend.py
        `drop_unrecorded`: their events have no usage), counted by `billed` ($0); not those that
        are copies of requests counted elsewhere."""
        n = int(str(self.trace.header.meta.get("usage_unrecorded", 0) or 0))
        return n - len(unrecorded_ids(self.trace) & self.copies) if n and self.copies else n

    def counted(self) -> int:
        """The billed requests this conversation accounts for, as `billed` counts them in its log:
        scored, not scored (the replay stopped), not compared or not replayed, and the unrecorded
        ones; not its copies of requests counted elsewhere (bench/fidelity/counts.py)."""
        if self.fidelity is not None and (self.fidelity.has_usage or self.fidelity.copied):
            own = self.fidelity.n + len(self.fidelity.not_scored)
        else:
            own = self.billed_requests() - self.copied
        return own + self.unrecorded

    def recorded_model(self) -> str:
        return str(self.trace.header.meta.get("model_recorded", self.trace.header.model))

    def shown_model(self) -> str:
        """The model as the report and `--json` name it: the catalog's name when the conversation was
        replayed (as for its compared siblings: `claude-opus-4-5`, not the log's dated id), else the
        id the log recorded (a model the catalog does not know has no other name)."""
        return self.fidelity.model if self.fidelity is not None else self.recorded_model()


def replay_log(log: Log, keep_warm: bool = False) -> list[Replayed]:
    """Every conversation of `log`, replayed (module docstring). A log whose import raises one of
    `DATA_ERRORS` (or cannot be read: OSError) is one `Replayed` named `IMPORT` with an empty
    trace and the error; a conversation whose replay raises one is kept with its error."""
    out = []
    try:
        res = import_paths([log.path], log.format)
    except IMPORT_ERRORS as e:
        empty = Trace(Header(source=log.format, harness=log.format), ())
        return [Replayed(log, IMPORT, empty, None, error=NotReplayed.of(e, "import"))]
    for tr, name in zip(res.traces, res.names, strict=True):
        try:
            sf = compare(tr, name)
            if sf.has_usage:
                prices(sf.model)
            # the keep-warm replay is read unconditioned only (fidelity_tables.reads)
            kw = compare(tr, name, keep_warm=True, condition=False) if keep_warm and sf.has_usage else None
        except CatalogError:
            out.append(Replayed(log, name, tr, None, reason=unknown_models(tr)))
            continue
        except NoModelError as e:  # named, and the other conversations and logs still scored
            out.append(Replayed(log, name, tr, None, reason=f"{e.args[0]} (not replayed)"))
            continue
        except DATA_ERRORS as e:  # named with its class and message; the others still scored
            out.append(Replayed(log, name, tr, None, error=NotReplayed.of(e)))
            continue
        out.append(Replayed(log, name, tr, sf, kw))
    return out


def unrecorded_ids(trace: Trace) -> set[str]:
    """The request ids of a conversation's replies whose usage records 0 tokens in and out (the
    importer keeps them without usage and counts them in `usage_unrecorded`): billed, so a copy of
    one in a later log is a copy (bench/billed/totals.py counts the first)."""
    if not trace.header.meta.get("usage_unrecorded"):
        return set()
    return {
        e.request_id
        for e in trace.events
        if isinstance(e, MessageEvent) and e.role != "user" and e.usage is None and e.request_id
    }


def billed_indices(trace: Trace, copies: frozenset[str] = frozenset()) -> list[int]:
    """The indices (as `compare` numbers requests: every assistant message) of the billed requests,
    but `copies` (ids of requests counted in another conversation)."""
    replies = (e for e in trace.events if isinstance(e, MessageEvent) and e.role != "user")
    return [i for i, e in enumerate(replies) if e.usage is not None and e.request_id not in copies]


def not_replayed(convs: list[Replayed], heading: str = "## Not replayed") -> list[str]:
    """The report's section naming each conversation (or log) whose replay (or import) raised a data
    error: log, conversation, error class and message; none when every one was replayed."""
    failed = [r for r in convs if r.error is not None]
    if not failed:
        return []
    lines = [
        "", heading, "",
        "Not in the figures above: their replay (or their log's import) raised an error on their data; "
        "the other conversations are scored.",
        "", "| log | conversation | billed requests | error | message |", "|---|---|---:|---|---|",
    ]  # fmt: skip
    for r in failed:
        assert r.error is not None
        msg = r.error.message.replace("|", "\\|")
        n = "—" if r.error.stage == "import" else r.billed_requests()  # unknown: the log was not read
        lines.append(f"| {r.log.rel} | {r.name} | {n} | {r.error.kind} | {msg} |")
    return lines


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
    near = [x for m in missing for x in closest(m.removesuffix(" (switched to)"))]
    hint = f"closest known: {', '.join(dict.fromkeys(near))}" if near else "no known id near it"
    return (
        f"model {', '.join(missing)} not in sim/data/models.yaml ({hint}; not replayed: no mapping is "
        "guessed; `ctxbench fidelity LOG --model NAME` runs it as a known model, --prices FILE adds it)"
    )


def conversation_json(r: Replayed, session: str, requests: bool = False) -> dict[str, Any]:
    """`fidelity --all-real --json`'s object of a conversation: its figures (bench/fidelity/fields.py)
    where it is compared, else `not_compared_json`; its log and format."""
    from ctxbench.bench.fidelity.fields import session_json

    if r.fidelity is None or not r.compared:
        return not_compared_json(r, session)
    doc = {**session_json(r.fidelity, requests), "session": session}
    if r.unrecorded:  # not those that are copies of requests counted elsewhere
        doc["usage_unrecorded"] = r.unrecorded
    else:
        doc.pop("usage_unrecorded", None)
    return doc | {"log": r.log.rel, "format": r.log.format}


def not_compared_json(r: Replayed, session: str) -> dict[str, Any]:
    """The `--json` object of a conversation that is not compared: null figures and why."""
    n = r.billed_requests() - r.copied
    out: dict[str, Any] = {
        "session": session, "log": r.log.rel, "format": r.log.format, "model": r.shown_model(),
        "requests": n, "per_request_usage": n + r.copied > 0, "within_tolerance": None, "billed": None,
        "predicted": None, "note": r.why_not,
    }  # fmt: skip
    if r.copied:  # copies of requests counted in an earlier log or conversation: counted there
        out["copied_requests"] = r.copied
    if r.unrecorded:  # billed with 0 tokens recorded: `billed` counts them, nothing to compare
        out["usage_unrecorded"] = r.unrecorded
    if r.error is not None:  # not replayed: the error, and its billed requests counted as not scored
        out["error"] = {"class": r.error.kind, "message": r.error.message, "stage": r.error.stage}
        if r.error.stage == "import":  # the log was not read: its requests are unknown
            out["per_request_usage"] = None
        else:
            out["not_scored"] = {"count": n, "requests": billed_indices(r.trace, r.copies), "why": r.why_not}
    return out


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
