"""opencode sessions: `opencode export <sessionID>` JSON, or opencode's own database (`opencode.db`,
`~/.local/share/opencode/`: every session, sub-agent sessions of the task tool named `agent-…`), one
trace per session and model.

What the session records (opencode 1.18.33 run against `ctxbench serve`, the server's ledger beside
it, tests/traces/importers/data): messages with parts. A user message holds `text` parts (`synthetic`
ones too: opencode sends them) and `file` parts; an assistant message holds one or more *steps*,
each one request: `step-start`, then `reasoning`, `text` and `tool` parts (a tool part carries the
call and its result: `state.input`, `state.output` or `state.error`), then `step-finish` with the
request's usage. opencode normalises that usage across providers (`Session.getUsage`, in every
version read): `tokens.input` is the input neither read from nor written to the cache,
`tokens.cache.read` / `.write` the cached parts, and `tokens.total` the provider's total, so the
billed output is `total - input - read - write` (1.18.33 logs `output` without the `reasoning`
tokens; older versions included them); `cost` is opencode's price of the step. On the ledger every
step's counts equal what the server billed.

Compaction: a user message with a `compaction` part (`auto`, and from 1.x `tail_start_id`: the
first message it keeps) and then an assistant message with `summary: true` (the compaction agent's
request). That request is not part of the conversation's prompt: opencode sends its own system
prompt (~140 tokens in 1.18.33, below every model's cache minimum) and one user message holding
the conversation serialised as text, with no tools. So each summariser request is a conversation of
its own (`compaction-1`, `compaction-2`, …: a prompt no other request shares, so a replay reads
nothing of it, as the ledger's bills did; one trace holding them all would have to split a system
size out of their usage, and would then read it back at every later one). The main conversation
goes on with the summary (opencode sends it after the user turn "What did we do so far?") and the
kept messages, then the synthetic "Continue…".

An agent switch (`--agent`, or Tab in the TUI: each assistant message records its `agent`, `mode`
before 1.x): each agent sends its own tool definitions, so the provider's cache breaks from the
tools on. Against `ctxbench serve`, opencode 1.0.98's plan agent sent 9 tools and its build agent
11 (edit and write); 1.18.33 sends the same names, but the `task` tool's description lists the
sub-agents the agent may call; each switch read 0, and a switch back read the first agent's entries
(tests/traces/importers/data/opencode-1.18.33-agents.*). The import puts a tool list named after
the agent before the first request of each switch (the first agent's is the trace's own, so that a
read of another session's prefix stays one).

Not in the session: the system prompt and tool schemas (sized from the usage, traces/importers/
sizing.py), the serialised conversation a summariser request sends (sized from its usage), the
title request (another model, unbilled in the session), tool outputs opencode cleared later
(`state.time.compacted`, "prune": the replay sends them in full; counted in the report).
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.sim.core.registry import register
from ctxbench.traces.compressed import is_compressed, open_log, read_errors, read_failure
from ctxbench.traces.importers import opencode_storage
from ctxbench.traces.importers.base import (
    ImportFailure,
    ImportReport,
    ImportResult,
    b64_image,
    cost,
    count,
    json_document,
    normalize_model,
    parse_time,
    read_bytes,
    tool_use,
)
from ctxbench.traces.importers.tokens import Item, build_traces
from ctxbench.traces.model import Content, ToolDef, Usage

CANNOT = [
    "the system prompt and tool schemas (sized from the usage)",
    "what a compaction request sends (the conversation serialised as text; sized from its usage)",
    "the title request",
]
SQLITE_MAGIC = b"SQLite format 3\x00"
# What opencode sends for the compaction's user message (session/message-v2.ts toModelMessages).
COMPACTION_QUESTION = "What did we do so far?"
SERIALISED = "[the conversation so far, serialised by opencode's compaction agent: not in the session]"


@dataclass
class _Conversation:
    name: str
    model: str
    meta: dict[str, Any]
    items: list[Item] = field(default_factory=list)
    first_agent: str = ""  # the agent of its first request: its tools are the trace's own
    agent: str = ""  # the agent of its latest request


def _obj(value: Any) -> dict[str, Any]:
    """A JSON object of the session, or {} where it holds anything else."""
    return value if isinstance(value, dict) else {}


def _contents(part: dict[str, Any], report: ImportReport, where: str) -> list[Content]:
    """A user part as content: text (synthetic text too), an inline image; other files are sent as
    the synthetic text parts opencode adds for them."""
    kind = part.get("type")
    if kind == "text" and not part.get("ignored"):
        return [Content("text", text=str(part.get("text", "")))]
    if kind == "file":
        url, mime = str(part.get("url", "")), str(part.get("mime", ""))
        if mime.startswith("image/") and url.startswith("data:") and "," in url:
            w, h, n = b64_image(url.split(",", 1)[1])
            if w and h and n:
                return [Content("image", nbytes=n, key=f"img-{part.get('id', where)}", width=w, height=h)]
            report.skip("image whose size cannot be read (left out)", where)
        return []
    if kind not in ("text", "compaction", "agent", "subtask", "patch", "snapshot"):
        report.skip(f"user part of type {kind!r} (left out)", where)
    return []


def _at(part: dict[str, Any], at: str, i: int) -> str:
    """Where a part is: its own file (the file storage), else its place in its message."""
    return str(part.get("__file__") or f"{at}.parts[{i}]")


def _result(part: dict[str, Any]) -> Content:
    """What the model is sent of a finished call: its output, or its error."""
    state = _obj(part.get("state"))
    text = state.get("output") if state.get("status") == "completed" else state.get("error")
    return Content("tool_result", text=str(text or ""), tool_id=str(part.get("callID", "")))


def _usage(finish: dict[str, Any], where: str) -> Usage:
    tokens = _obj(finish.get("tokens"))
    cached = _obj(tokens.get("cache"))
    uncached, output = count(tokens, "input", where, "tokens"), count(tokens, "output", where, "tokens")
    read, write = count(cached, "read", where, "tokens.cache"), count(cached, "write", where, "tokens.cache")
    total = count(tokens, "total", where, "tokens")
    if total >= uncached + read + write + output:
        output = total - uncached - read - write  # the provider's own output count (module docstring)
    usd = cost(finish, "cost", where)
    if usd == 0 and uncached + read + write + output > 0:
        usd = None  # opencode records 0 for a model it has no prices for (a custom provider's)
    return Usage(uncached, read, write, 0, output, usd)


class _Session:
    """The conversations of one session, built message by message."""

    def __init__(self, sid: str, report: ImportReport, where: str) -> None:
        self.sid, self.report, self.where = sid, report, where
        self.convs: dict[str, _Conversation] = {}
        self.pending: list[Item] = []  # what the next request of the conversation sends
        self.compaction: dict[str, Any] | None = None  # a compaction part waiting for its summary
        self.current = ""
        self.summaries = 0  # compaction requests so far

    def conversation(self, info: dict[str, Any], summary: bool) -> _Conversation:
        model = str(info.get("modelID", "")) or self.current
        self.summaries += summary
        key = f"compaction:{self.summaries}" if summary else model
        conv = self.convs.get(key)
        if conv is None:
            mains = [k for k in self.convs if not k.startswith("compaction:")]
            name = "main" if not mains else model.rsplit("/", 1)[-1]
            name = f"compaction-{self.summaries}" if summary else name
            gateway = str(info.get("providerID", ""))
            meta = {"format": "opencode", "session": self.sid, "gateway": gateway}
            if not _marks_messages(model):
                meta["usage_counts"] = "whole prompt"  # no marks: input + read is the whole prompt
            conv = self.convs[key] = _Conversation(name, model, meta)
        if not summary:
            self.current = model
        return conv

    def user(self, msg: dict[str, Any], parts: list[dict[str, Any]], at: str) -> None:
        t = parse_time((msg.get("time") or {}).get("created"))
        for p in parts:
            if p.get("type") == "compaction":
                self.compaction = p
        contents = [c for i, p in enumerate(parts) for c in _contents(p, self.report, _at(p, at, i))]
        if contents:
            self.pending.append(Item("user", contents, t=t, uuids=[str(msg.get("id", ""))]))

    def assistant(self, msg: dict[str, Any], parts: list[dict[str, Any]], at: str) -> None:
        summary = bool(msg.get("summary")) or msg.get("mode") == "compaction"
        conv = self.conversation(msg, summary)
        times = _obj(msg.get("time"))
        created, completed = parse_time(times.get("created")), parse_time(times.get("completed"))
        reply: list[Content] = []
        results: list[Content] = []
        ran = created  # when this step's calls had all finished: the next request's earliest start
        first = True
        for i, p in enumerate(parts):
            kind = p.get("type")
            if kind == "reasoning":
                reply.append(Content("thinking", text=str(p.get("text", ""))))
            elif kind == "text":
                reply.append(Content("text", text=str(p.get("text", ""))))
            elif kind == "tool":
                state = _obj(p.get("state"))
                name = str(p.get("tool", "tool"))
                reply.append(tool_use(state.get("input", {}), p.get("callID", ""), name))
                results.append(_result(p))
                ran_at = _obj(state.get("time"))
                ended = parse_time(ran_at.get("end"))
                ran = max(ran or 0.0, ended) if ended is not None else ran
                if ran_at.get("compacted"):
                    self.report.counts["tool outputs opencode cleared later (sent in full here)"] += 1
            elif kind == "step-finish":
                usage = _usage(p, str(p.get("__file__") or f"{self.where}: {at}.parts[{i}]"))
                uuids = [str(msg.get("id", ""))] if first else []
                item = Item("reply", reply or [Content("text", text="")], t=created, usage=usage, uuids=uuids)
                item.where, item.t_end = _at(p, at, i), completed
                if summary:
                    self._summariser(conv, item, created)
                else:
                    conv.items += [*self._agent_tools(conv, msg, created), *self.pending, item]
                    self.pending = [Item("user", results, t=ran or completed)] if results else []
                reply, results, first = [], [], False
            elif kind not in ("step-start", "patch", "snapshot", "agent", "subtask", "retry", "file"):
                self.report.skip(f"assistant part of type {kind!r} (left out)", _at(p, at, i))
        if reply or results:
            self.report.skip("step without step-finish (no usage: left out)", at)

    def _agent_tools(self, conv: _Conversation, msg: dict[str, Any], t: float | None) -> list[Item]:
        """A new tool list where the request's agent (`agent`, or `mode` before 1.x) is not the
        previous request's: each agent sends its own tool definitions (module docstring), so the
        cache breaks from the tools on. The first agent's tools are the trace's own (an earlier
        session of that agent may have cached them: `meta.warm_tokens`); another's are named by it."""
        agent = str(msg.get("agent") or msg.get("mode") or "")
        if not agent or agent == conv.agent:
            return []
        first, conv.agent = not conv.first_agent, agent
        if first:
            conv.first_agent = agent
            return []
        self.report.counts["agent switches (another agent's tool definitions: a cache break)"] += 1
        own = () if agent == conv.first_agent else (ToolDef(f"opencode agent {agent}: its tools"),)
        return [Item("tools", tools=own, t=t)]

    def _summariser(self, conv: _Conversation, item: Item, t: float | None) -> None:
        """A compaction agent's request: a conversation of its own (module docstring); the main
        conversation is compacted to the summary and the messages the compaction kept."""
        conv.items += [Item("user", [Content("text", text=SERIALISED)], t=t), item]
        main = self.convs.get(self.current)
        part = self.compaction or {}
        if main is None:
            self.report.skip("compaction before any request of the session (left out)", item.where)
            return
        tail = part.get("tail_start_id")
        main.items += self.pending
        trigger = "auto" if part.get("auto", True) else "manual"
        main.items.append(Item("compact", t=t, trigger=trigger, kept=[str(tail)] if tail else []))
        text = [c for c in item.contents if c.kind == "text"]
        main.items.append(Item("summary", [Content("text", text=COMPACTION_QUESTION), *text], t=t))
        self.pending, self.compaction = [], None


def _marks_messages(model: str) -> bool:
    """opencode marks the system prompt and the last two messages of a Claude model's requests
    (provider/transform.ts applyCaching), so its billed input is only what follows the last mark
    (traces/importers/tokens.py); every other model is billed on its whole prompt (input + read)."""
    from ctxbench.sim.core.catalog import CatalogError, model_info

    try:
        return model_info(model).provider == "anthropic"
    except CatalogError:
        return "claude" in model.lower()


def _documents(path: Path) -> list[dict[str, Any]]:
    """The sessions of `path` as `opencode export` documents (`info`, `messages`: `info` + `parts`)."""
    if path.is_dir() or opencode_storage.is_session_file(path):  # the file storage (opencode_storage.py)
        return opencode_storage.documents(path)
    try:
        with open_log(path) as f:
            head = f.read(len(SQLITE_MAGIC))
    except read_errors() as e:
        raise ImportFailure(str(path), f"cannot read: {read_failure(e)}") from None
    if head != SQLITE_MAGIC:
        doc = json_document(path)
        if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
            raise ImportFailure(str(path), "not an opencode export: no 'messages' list")
        return [doc]
    if is_compressed(path):  # sqlite reads files: the database decompressed to a temporary one
        with tempfile.TemporaryDirectory() as tmp:
            plain = Path(tmp) / "opencode.db"
            plain.write_bytes(read_bytes(path))
            return _database(plain, str(path))
    return _database(path, str(path))


def _read_only_uri(path: Path) -> str:
    """The database opened without writing beside it: read-only, and immutable (no `-shm`/`-wal`
    file made in the user's folder) unless a write-ahead log already exists there, whose
    not yet checkpointed sessions only a non-immutable reader sees (sqlite.org/uri.html)."""
    wal = path.with_name(path.name + "-wal")
    return f"{path.absolute().as_uri()}?mode=ro" + ("" if wal.exists() else "&immutable=1")


def _database(path: Path, shown: str) -> list[dict[str, Any]]:
    try:
        db = sqlite3.connect(_read_only_uri(path), uri=True)
        try:
            sessions = db.execute(
                "SELECT id, slug, parent_id FROM session ORDER BY time_created, id"
            ).fetchall()
            messages = db.execute("SELECT id, session_id, data FROM message ORDER BY id").fetchall()
            parts = db.execute("SELECT id, message_id, data FROM part ORDER BY id").fetchall()
        finally:
            db.close()
    except sqlite3.Error as e:
        raise ImportFailure(shown, f"not an opencode database ({e})") from None
    by_message: dict[str, list[dict[str, Any]]] = {}
    for pid, mid, data in parts:
        by_message.setdefault(mid, []).append({"id": pid, **_row(data, shown, f"part {pid}")})
    listed: dict[str, list[dict[str, Any]]] = {sid: [] for sid, _slug, _parent in sessions}
    for mid, sid, data in messages:
        info = {"id": mid, **_row(data, shown, f"message {mid}")}
        if sid in listed:
            listed[sid].append({"info": info, "parts": by_message.get(mid, [])})
    return [
        {"info": {"id": sid, "slug": slug, "parentID": parent}, "messages": listed[sid]}
        for sid, slug, parent in sessions
    ]


def _row(data: Any, shown: str, what: str) -> dict[str, Any]:
    try:
        row = json.loads(data)
    except (TypeError, ValueError, RecursionError):
        raise ImportFailure(shown, f"{what}: its data is not JSON") from None
    if not isinstance(row, dict):
        raise ImportFailure(shown, f"{what}: its data is not an object")
    return row


@register("importer", "opencode")
def import_opencode(paths: list[Path], report: ImportReport | None = None) -> ImportResult:
    """One trace per session and model (a provider cache is per model), plus each session's
    compaction requests (module docstring)."""
    path = paths[0]
    report = report or ImportReport(str(path), "opencode")
    report.cannot_provide = list(CANNOT)
    docs = _documents(path)
    one_session = not path.is_dir() and opencode_storage.is_session_file(path)
    convs: list[tuple[str, list[Item], str, str, dict[str, Any]]] = []
    for d_i, doc in enumerate(docs):
        info = _obj(doc.get("info"))
        sid = str(info.get("id", f"session-{d_i}"))
        session = _Session(sid, report, str(path))
        for m_i, m in enumerate(doc.get("messages") or []):
            at = str(_obj(_obj(m).get("info")).get("__file__") or f"messages[{m_i}]")  # a storage file
            if not isinstance(m, dict) or not isinstance(m.get("info"), dict):
                report.skip("message without 'info' (left out)", at)
                continue
            parts = [p for p in m.get("parts") or [] if isinstance(p, dict)]
            role = m["info"].get("role")
            if role == "user":
                session.user(m["info"], parts, at)
            elif role == "assistant":
                session.assistant(m["info"], parts, at)
            else:
                report.skip(f"message with role {role!r}", at)
        # several sessions (a database): each by its slug; a sub-agent's (the task tool's) says so
        agent = "agent-" if info.get("parentID") else ""
        own = len(docs) == 1 or (d_i == 0 and one_session)  # a session file: its sub-agents named
        prefix = "" if own else f"{agent}{info.get('slug') or sid}/"
        for c in session.convs.values():
            convs.append((prefix + c.name, c.items, normalize_model(c.model), c.model, c.meta))
    return build_traces(convs, str(path), "opencode", report)
