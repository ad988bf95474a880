"""ctxbench traces from live traffic: each conversation's requests linearized into one trace.

- A request that extends the conversation (its messages start with the previous request's, the
  reply the server gave in between included) appends its new messages, then its reply with the
  billed usage.
- A request that re-sends an earlier prompt of the conversation with its last user message
  extended (a summariser forked from the conversation: Claude Code 2.1.x adds its compaction
  instruction as text to the last user message of the prompt before the messages it keeps,
  bench/claude_code_wire.md §3) is recorded as the added blocks, a user message tagged "summary",
  and its reply tagged "summary", as the importers record a summariser request
  (traces/importers/claude_code.py); the conversation goes on from where it was. (A harness that
  retries a request that way would be recorded the same.)
- A request whose tools or system prompt differ from the last one's records them first, as
  `tools` / `system` events (a tool-less summariser, as Codex's compaction request, and then the
  next request's own again).
- Any other request starts a new conversation: a `compaction` event, then its messages. When they
  open with user messages and then repeat the previous conversation's latest messages (found by the
  ids of the tool calls in them: Claude Code 2.1.x keeps them verbatim after its summary, its
  `preservedSegment`), the opening is the event's summary and the repeated messages are kept
  (`kept_from`, traces/FORMAT.md), not sent anew: an assistant message of the trace is a request.
- Each block keeps the ttl of the cache mark its request put on it; the header says the trace is a
  recording of live traffic (`format: live`: replayed on the profile that serves its model, as an
  imported log is) whose blocks hold whole prompts (`sized_on: prompt`).
"""

from __future__ import annotations

import dataclasses
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.sim.core.content import IMAGE, TOOL_DEF, TOOL_USE, Block, Message
from ctxbench.sim.core.provider import Usage
from ctxbench.sim.serve.record import Redactor
from ctxbench.sim.serve.wire import Parsed, lang_of
from ctxbench.traces.format import TraceAppender, TraceError, write_trace
from ctxbench.traces.model import (
    CompactionEvent,
    Content,
    Header,
    MessageEvent,
    SystemEvent,
    ToolDef,
    ToolsEvent,
    Trace,
)
from ctxbench.traces.model import Usage as TraceUsage

SUMMARY_TAG = "summary"  # a summariser's request and reply (policies/recorded.py keeps them out)


def _content(b: Block, cache: str = "") -> Content:
    """A block as trace content; `cache`: the ttl of the cache mark the request put on it, if any."""
    if b.kind == IMAGE:
        return Content(
            "image", nbytes=max(1, b.nbytes), width=b.width, height=b.height, key=f"img{b.digest:016x}",
            cache=cache,
        )  # fmt: skip
    text = b.text or ""
    lang = "json" if b.kind == "tool_use" else lang_of(text)
    if b.kind == "tool_use":
        return Content(
            "tool_use", text=text, lang=lang, tool_id=b.tool_id or f"t{b.digest:x}", name=b.name or "tool",
            cache=cache,
        )  # fmt: skip
    if b.kind == "tool_result":
        return Content("tool_result", text=text, lang=lang, tool_id=b.tool_id or "", cache=cache)
    return Content(b.kind if b.kind in ("text", "thinking") else "text", text=text, lang=lang, cache=cache)


def _scrubbed(ev: Any, red: Redactor) -> Any:
    """An event with every secret removed from its texts (a key a user pasted into a message)."""
    fields = [n for n in ("content", "summary") if hasattr(ev, n)]
    changes = {
        n: tuple(
            dataclasses.replace(c, text=red.value(c.text)) if c.text is not None else c
            for c in getattr(ev, n)
        )
        for n in fields
    }
    return dataclasses.replace(ev, **changes) if changes else ev


@dataclass
class _Conv:
    head: tuple[tuple[int, ...], tuple[int, ...]] | None = None  # the tools' and system's digests sent last
    events: list[Any] = field(default_factory=list)
    # the conversation as the server last saw it: each message's key (chained digests; -1 for the
    # last reply, which only the next request shows), role and block digests
    cur: list[int] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    digests: list[tuple[int, ...]] = field(default_factory=list)
    model: str = ""
    seen_ids: set[str] = field(default_factory=set)
    messages: int = 0  # message events in the trace
    start: int = 0  # the trace's message index where the current conversation starts
    tags: list[str] = field(default_factory=list)  # of each message event
    event_roles: list[str] = field(default_factory=list)  # of each message event
    call_at: dict[str, int] = field(default_factory=dict)  # tool call id -> its message event

    def seen(self, keys: list[int], msgs: list[Message], upto: int) -> None:
        """The conversation is now `msgs[:upto]` (their keys `keys`)."""
        self.cur = keys[:upto]
        self.roles = [m.role for m in msgs[:upto]]
        self.digests = [tuple(b.digest for b in m.blocks) for m in msgs[:upto]]


def _msg_key(m: Message) -> int:
    h = 0
    for b in m.blocks:
        h = hash((h, b.digest))
    return h


def _fork(c: _Conv, msgs: list[Message], keys: list[int]) -> tuple[Block, ...] | None:
    """What a request forked from an earlier prompt of the conversation adds to it (module
    docstring), or None when it is not one: all its messages but the last are the conversation's
    first ones, and its last is the conversation's user message there with more blocks."""
    n = len(msgs) - 1
    if n < 1 or n >= len(c.cur) or msgs[n].role != "user":
        return None
    if any(ck not in (k, -1) for k, ck in zip(keys[:n], c.cur[:n], strict=True)):
        return None
    last = msgs[n].blocks
    had = c.digests[n]
    if c.roles[n] == "user" and len(last) > len(had) and tuple(b.digest for b in last[: len(had)]) == had:
        return last[len(had) :]
    return None


def _kept(c: _Conv, msgs: list[Message]) -> tuple[int, int, int] | None:
    """(opening, kept, kept_from) when a new conversation's messages are user messages (`opening`
    of them) followed by the previous conversation's latest messages (`kept` of them, the first at
    trace message `kept_from`), found by the tool calls of the first assistant message; else None."""
    a = next((i for i, m in enumerate(msgs) if m.role != "user"), len(msgs))
    if a == 0 or a == len(msgs) or msgs[a].role != "assistant":
        return None
    ids = [b.tool_id for b in msgs[a].blocks if b.kind == TOOL_USE]
    at = {c.call_at.get(i, -1) for i in ids}
    if len(at) != 1 or (j := at.pop()) < c.start:
        return None
    held = [i for i in range(j, c.messages) if c.tags[i] != SUMMARY_TAG]
    roles = [m.role for m in msgs[a : a + len(held)]]
    if roles != [c.event_roles[i] for i in held]:
        return None
    if any(b.kind != "text" for m in msgs[:a] for b in m.blocks):
        return None  # an opening the trace's summary (text items) cannot hold
    return a, len(held), j


class TraceRecorder:
    """Builds one trace per conversation from parsed requests and their replies (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._marks: dict[int, str] = {}  # the request being added: its marked blocks (by id) -> ttl
        self.convs: dict[str, _Conv] = {}
        self.failed: list[str] = []  # conversations `write` could not write, with the reason
        self.secrets: set[str] = set()
        self._live: Path | None = None  # `stream_to`: traces appended as requests are answered
        self._source = "ctxbench-serve"
        self._files: dict[str, tuple[TraceAppender | None, int]] = {}  # conversation -> file, events written

    def stream_to(self, folder: str | Path, source: str = "ctxbench-serve") -> None:
        """Write each conversation's trace as it grows (issue 32): `conv-NNN.jsonl` numbered in
        the order conversations begin, one line per event appended and flushed when its request
        is answered, so a server killed at any moment leaves every trace covering every answered
        request, and stopping (`finish`) only closes files. Texts are scrubbed of the values sent
        as keys so far and of credential-shaped values (sim/serve/record.py)."""
        self._live = Path(folder)
        self._live.mkdir(parents=True, exist_ok=True)
        self._source = source

    def _sync(self, name: str, c: _Conv) -> None:
        """Append the conversation's events not yet written to its trace (opened at its first)."""
        assert self._live is not None
        appender, done = self._files.get(name, (None, 0))
        if done < 0:  # this conversation could not be written: the others still are
            return
        items: list[Any] = []
        if appender is None:
            shown = name.encode("utf-8", "backslashreplace").decode("utf-8")
            meta = {"conversation": shown, "format": "live", "sized_on": "prompt"}
            path = self._live / f"conv-{len(self._files):03d}.jsonl"
            try:
                appender = TraceAppender(path)
            except OSError as e:
                self.failed.append(f"{path}: {e}")
                self._files[name] = (None, -1)
                return
            items.append(Header(self._source, "live", c.model, 0, meta=meta))
        red = Redactor({}, "")
        red.secrets = sorted(self.secrets, key=len, reverse=True)
        items += [_scrubbed(ev, red) for ev in c.events[done:]]
        try:
            appender.append(items)
            self._files[name] = (appender, len(c.events))
        except (TraceError, OSError) as e:
            self.failed.append(f"{appender.path}: {e}")
            self._files[name] = (appender, -1)

    def finish(self) -> list[Path]:
        """Close the traces `stream_to` writes; their paths (constant work per conversation)."""
        with self._lock:
            for appender, _ in self._files.values():
                if appender is not None:
                    appender.close()
            return [Path(a.path) for a, done in self._files.values() if a is not None and done >= 0]

    def add(
        self,
        p: Parsed,
        reply_blocks: tuple[dict[str, Any], ...],
        usage: Usage,
        out_tokens: int,
        t: float,
        secrets: list[str] | tuple[str, ...] = (),
    ) -> None:
        """Add one answered request; `secrets` (values sent as keys) are scrubbed when written."""
        with self._lock:
            self.secrets.update(secrets)
            c = self.convs.setdefault(p.session, _Conv())
            self._head(c, p, t)
            msgs = list(p.messages)
            keys = [_msg_key(m) for m in msgs]
            self._marks = {id(p.tr.blocks[i]): ttl for i, ttl in p.breakpoints if i < len(p.tr.blocks)}
            tag = ""
            extends = (
                bool(c.cur)
                and len(keys) >= len(c.cur)
                and all(ck in (k, -1) for k, ck in zip(keys, c.cur, strict=False))
            )
            added = _fork(c, msgs, keys) if c.cur and not extends else None
            if extends:
                for m in msgs[len(c.cur) :]:
                    self._message(c, m.role, m.blocks, t)
                c.seen(keys, msgs, len(msgs))
            elif added is not None:  # the conversation stays where it was
                tag = SUMMARY_TAG
                self._message(c, "user", added, t, tag)
            else:
                self._reset(c, msgs, keys, t)
            self._reply(c, reply_blocks, usage, out_tokens, t, tag)
            if self._live is not None:
                self._sync(p.session, c)

    def _head(self, c: _Conv, p: Parsed, t: float) -> None:
        """The request's tools and system prompt: recorded at the conversation's start, and again
        where a request sends others (a tool-less summariser, as Codex's compaction request; the
        next request's own then come back), as `tools` and `system` events (traces/FORMAT.md)."""
        tr = p.tr
        tool_blocks = [b for b in tr.blocks[: tr.tools_end] if b.kind == TOOL_DEF]
        system = [i for i in range(tr.tools_end, tr.system_end) if tr.blocks[i].text]
        head = (tuple(b.digest for b in tool_blocks), tuple(tr.blocks[i].digest for i in system))
        if c.head == head:
            return
        old = c.head
        if old is None:
            c.model = p.model
        if old is None or old[0] != head[0]:
            tools = tuple(
                ToolDef(b.name or f"tool{i}", nbytes=max(1, b.nbytes)) for i, b in enumerate(tool_blocks)
            )
            if tools or old is not None:
                c.events.append(ToolsEvent(tools, t))
        if old is None or old[1] != head[1]:
            marks = dict(p.breakpoints)
            sysc = tuple(_content(tr.blocks[i], marks.get(i, "")) for i in system)
            if sysc:  # (a request without one leaves the last: the format has no empty system)
                c.events.append(SystemEvent(sysc, t))
        c.head = head

    def _reset(self, c: _Conv, msgs: list[Message], keys: list[int], t: float) -> None:
        """A new conversation (module docstring): its opening as the summary of a compaction that
        keeps the previous conversation's latest messages it repeats, else all of it sent anew."""
        kept = _kept(c, msgs) if c.cur else None
        first = 0
        if kept is not None:
            opening, held, kept_from = kept
            summary = tuple(_content(b) for m in msgs[:opening] for b in m.blocks)
            c.events.append(CompactionEvent(summary, kept_from=kept_from, trigger="auto", t=t))
            first = opening + held
        elif c.cur:
            c.events.append(CompactionEvent(trigger="auto", t=t))
        c.start = kept[2] if kept is not None else c.messages
        for m in msgs[first:]:
            self._message(c, m.role, m.blocks, t)
        c.seen(keys, msgs, len(msgs))

    def _reply(
        self, c: _Conv, blocks: tuple[dict[str, Any], ...], usage: Usage, out: int, t: float, tag: str
    ) -> None:
        u = TraceUsage(usage.uncached, usage.cache_read, usage.cache_write_5m, usage.cache_write_1h, out)
        reply = [
            Content("text", text=b["text"])
            if b["type"] == "text"
            else Content(
                "tool_use",
                text=json.dumps(b["input"], separators=(",", ":")),
                lang="json",
                tool_id=b["id"],
                name=b["name"],
            )
            for b in blocks
        ]
        content = tuple(reply) or (Content("text", text="ok"),)
        ev = MessageEvent("assistant", content, tag or "reply", t=t, output_tokens=out, usage=u)
        self._append(c, self._fix(c, ev), [x.tool_id for x in reply if x.kind == "tool_use"])
        if not tag:  # the next request's copy of it is matched by position only
            c.cur.append(-1)
            c.roles.append("assistant")
            c.digests.append(())

    def _append(self, c: _Conv, ev: MessageEvent, calls: list[str]) -> None:
        """Append a message event; `calls`: the ids the wire gives its tool calls."""
        for tid in calls:
            c.call_at.setdefault(tid, c.messages)
        c.events.append(ev)
        c.tags.append(ev.tag)
        c.event_roles.append(ev.role)
        c.messages += 1

    def _message(self, c: _Conv, role: str, blocks: tuple[Block, ...], t: float, tag: str = "") -> None:
        """A message of the current request, with the cache marks it put on its blocks."""
        ev = MessageEvent(role, tuple(_content(b, self._marks.get(id(b), "")) for b in blocks), tag, t=t)
        self._append(c, self._fix(c, ev), [b.tool_id for b in blocks if b.kind == TOOL_USE])

    @staticmethod
    def _fix(c: _Conv, ev: MessageEvent) -> MessageEvent:
        """Keep the trace valid: tool_use ids unique, tool_results answering an earlier tool_use."""
        content = []
        for x in ev.content:
            if x.kind == "tool_use":
                tid = x.tool_id
                while tid in c.seen_ids:
                    tid += "'"
                c.seen_ids.add(tid)
                x = Content("tool_use", text=x.text, lang="json", tool_id=tid, name=x.name, cache=x.cache)
            elif x.kind == "tool_result" and x.tool_id not in c.seen_ids:
                x = Content("text", text=x.text, lang=x.lang, cache=x.cache)
            if ev.role == "assistant" and x.kind in ("image", "tool_result"):
                x = Content("text", text=x.text or "", lang=x.lang, cache=x.cache)
            if ev.role == "user" and x.kind in ("tool_use", "thinking"):
                x = Content("text", text=x.text or "", lang=x.lang, cache=x.cache)
            content.append(x)
        return MessageEvent(
            ev.role, tuple(content), ev.tag, t=ev.t, output_tokens=ev.output_tokens, usage=ev.usage
        )

    def write(self, folder: str | Path, source: str = "ctxbench-serve") -> list[Path]:
        """Write one trace per conversation; returns the paths written. Each conversation is
        written on its own: one that cannot be (its reason is kept in `failed`) never stops the
        others, and a conversation name that is not valid Unicode is recorded escaped."""
        out = []
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        with self._lock:
            for i, (name, c) in enumerate(sorted(self.convs.items())):
                shown = name.encode("utf-8", "backslashreplace").decode("utf-8")
                # a recording of real traffic: replayed on the profile that serves its model, as an
                # imported log is (sim/providers/choice.py), its blocks whole prompts (bench/fidelity/)
                meta = {"conversation": shown, "format": "live", "sized_on": "prompt"}
                header = Header(source, "live", c.model, 0, meta=meta)
                path = folder / f"conv-{i:03d}.jsonl"
                events = tuple(c.events)
                red = Redactor({}, "")  # values sent as keys, and credential-shaped values
                red.secrets = sorted(self.secrets, key=len, reverse=True)
                events = tuple(_scrubbed(ev, red) for ev in events)
                try:
                    write_trace(Trace(header, events), path)
                except (TraceError, OSError) as e:
                    self.failed.append(f"{path}: {e}")
                    continue
                out.append(path)
        return out
