"""Claude Code session transcripts (`~/.claude/projects/<dir>/<session>.jsonl`, FORMATS.md §2.1).

- One API response is spread over several lines (one per content block): lines are grouped by
  `requestId` (or `message.id` where absent, Agent SDK files); usage input/cache fields are the
  same on every line, `output_tokens` is taken from the LAST line (FORMATS.md "Pitfalls").
- `<synthetic>` responses (no API call) and bookkeeping lines are skipped and counted.
- Sub-agents become their own traces: inline sidechains (1.0.x, grouped by the root of their
  `parentUuid` chain), `agent-<id>.jsonl` files next to the session, `<session>/subagents/`.
  Sub-agent usage echoed into `progress` lines is never counted (the sub-agent's own file is).
- The compaction summariser (`agent-acompact-*.jsonl`) is merged into the main trace as the summary
  request (its last user message = the instruction, and its reply), followed by a CompactionEvent
  whose summary is the `isCompactSummary` message after the `compact_boundary`. A boundary whose
  `compactMetadata.preservedSegment` names kept messages (2.1.x: "Recent messages are preserved
  verbatim") gives the CompactionEvent `kept_from`: those messages follow the summary (their lines,
  re-logged before the boundary with the same uuids, are skipped as duplicates). Read without its
  session, the summariser's file ends with its request and a compaction (summariser_file.py).
- `attachment` lines and `isMeta` messages are sent by Claude Code as `<system-reminder>` text; they
  are imported as user text (their exact rendering is not recorded: sizes come from usage), as
  Claude Code's `normalizeAttachmentForAPI` renders them (cli.js 2.1.39-2.1.114): the types it
  never sends are dropped (`NOT_SENT`, `sent_to_model`), and text that follows a tool result whose
  content is a string is folded into that result, as one block (cli.js `y2z`: the string and the
  reminder texts, trimmed, joined by blank lines). From 2.1.332 an attachment line carries the
  text sent (`rendered`): it is imported as is, and a line without it (`prompt_snapshot`) was not
  sent (bench/claude_code_wire.md §3).
- Deferred tools: a ToolSearch result (tool_result parts of type `tool_reference`) loads tools that
  Claude Code 2.1.x sends in `tools` with `defer_loading` from the next request on, none before the
  first result (cli.js 2.1.39-2.1.114: the deferred tools kept are those named by tool_reference
  blocks in the messages, `iQ`); each load becomes a `tools` event listing every tool loaded so far
  (sizes unknown: 0 bytes; their tokens are billed inside the tool result, where the sizer puts them).
- Forked queries it logs only by their result line (`system` `away_summary`, claude_code_wire.py
  `FORKED_QUERY_LINES`): `meta.forked_requests` lists each as (seconds before the next request,
  that request's index, the ttl of its marks); the fidelity replay sends them
  (bench/fidelity/forks.py). The prompt suggestions a main thread could have sent, which no line
  records (claude_code_wire.py `suggestion_forks`), go to `meta.suggestion_forks`, the same rows,
  sent only by `fidelity --assume-prompt-suggestions`.
- @-mentioned files of Claude Code up to 2.0.29 run by the IDE extension (claude_code_wire.py
  `turn_scoped_attachments`): sent in their own turn only and not logged; added before the prompt as
  a Read call (a message of its own for the first) and a result given as a size, marked `turn`
  (bench/claude_code_wire.md §1); the sizer sizes them from the bill (traces/importers/sizing.py).
- Cache marks: Claude Code <= 2.1.68 marks the last block of the last two messages, 2.1.69 and later
  the last message only (cli.js `tengu_api_cache_breakpoints`); `meta.marked_messages` says which,
  and the sizer records the marks on the blocks (traces/importers/sizing.py).

Its lines are read here (grouped into conversations and requests); their message content and usage
by traces/importers/anthropic_blocks.py, what the recorded version sends beyond the transcript by
traces/importers/claude_code_wire.py.

True tokens (see `tokens.py`): the transcript has no system prompt nor tool schemas, and the exact
rendering of reminders is not logged, so block sizes are derived from the billed usage.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ctxbench.sim.core.registry import register
from ctxbench.traces.importers.anthropic_blocks import (
    anthropic_usage,
    assistant_contents,
    billed_model,
    user_contents,
)
from ctxbench.traces.importers.backend import backend_meta, drop_unrecorded, relay_meta
from ctxbench.traces.importers.base import (
    ImportReport,
    ImportResult,
    canonical,
    cost,
    jsonl_objects,
    normalize_model,
    other_price_terms,
    parse_time,
)
from ctxbench.traces.importers.claude_code_files import AGENT_FILE, related_files
from ctxbench.traces.importers.claude_code_wire import (
    FORKED_QUERY_LINES,
    LOG_LINES,
    at_mentions,
    folds_reminders,
    forked_requests,
    kept_lines,
    loaded_tools,
    marked_messages,
    may_suggest_prompts,
    mention_call,
    rendered_texts,
    sent_to_model,
    suggestion_forks,
    turn_scoped_attachments,
)
from ctxbench.traces.importers.summariser_file import close_compaction, merge_compaction_request
from ctxbench.traces.importers.tokens import Item, build_traces
from ctxbench.traces.model import Content, ToolDef, Usage

BOOKKEEPING = (
    "summary",
    "file-history-snapshot",
    "progress",
    "queue-operation",
    "last-prompt",
    "permission-mode",
    "custom-title",
    "tag",
    *LOG_LINES,  # 2.1.332's request log and counters (claude_code_wire.py)
)
CANNOT = [
    "system prompt and tool schemas (sizes inferred from billed usage, see traces/importers/tokens.py)",
    "the exact text of injected reminders/attachments (sizes come from billed usage)",
    "the uncached 1-10 tokens after the last cache mark (input_tokens): not part of any block",
    "final output_tokens in some versions (a streaming snapshot: FORMATS.md §2.1 caveat)",
]


@dataclass
class _Conv:
    key: str
    name: str
    items: list[Item] = field(default_factory=list)
    replies: dict[str, Item] = field(default_factory=dict)
    model: str = ""
    version: str = ""
    session: str = ""
    fold: bool = False  # the last item ends with a tool result whose content was a string
    loaded: list[str] = field(default_factory=list)  # deferred tools ToolSearch results loaded
    tools_pending: bool = False  # `loaded` grew since the last request
    forks: list[tuple[float, str]] = field(default_factory=list)  # (time, querySource) of forked queries


def _last_result(contents: list[Content]) -> int:
    """Index of the last tool result (the images after it belong to it), -1 if none."""
    return next((k for k in range(len(contents) - 1, -1, -1) if contents[k].kind == "tool_result"), -1)


class _Reader:
    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self.convs: dict[str, _Conv] = {}
        self.seen: set[str] = set()
        self.parents: dict[str, tuple[str | None, bool]] = {}
        self.main_session = ""
        self.renders = False  # the file's attachment lines say what was sent (`rendered`, 2.1.332)

    def conv(self, key: str, name: str) -> _Conv:
        c = self.convs.get(key)
        if c is None:
            c = self.convs[key] = _Conv(key, name)
        return c

    def side_root(self, uuid: str) -> str:
        cur, hops = uuid, 0
        while hops < 100_000:
            parent, _ = self.parents.get(cur, (None, False))
            if parent is None or not self.parents.get(parent, (None, False))[1]:
                return cur
            cur, hops = parent, hops + 1
        return cur

    def read(self, path: Path, agent: str | None) -> None:
        lines = jsonl_objects(path, self.report)
        self.renders = any(o.get("type") == "attachment" and "rendered" in o for _, o in lines)
        for _, o in lines:
            u = o.get("uuid")
            if isinstance(u, str):
                p = o.get("parentUuid")
                self.parents[u] = (p if isinstance(p, str) else None, bool(o.get("isSidechain")))
        for n, o in lines:
            self.line(o, f"{path.name}:{n}", agent)

    def key_of(self, o: dict[str, Any], agent: str | None) -> tuple[str, str]:
        if agent is not None:
            return f"agent:{agent}", f"agent-{agent}"
        sid = str(o.get("sessionId", ""))
        if o.get("isSidechain"):
            if o.get("agentId"):
                return f"agent:{o['agentId']}", f"agent-{o['agentId']}"
            root = self.side_root(str(o.get("uuid", "")))
            return f"side:{root}", f"sidechain-{root[:8]}"
        if not self.main_session:
            self.main_session = sid
        if sid != self.main_session:
            self.report.note("the file mixes sessions: each other sessionId is imported as its own trace")
            return f"main:{sid}", f"session-{sid[:8]}"
        return "main", "main"

    def attachment(self, c: _Conv, o: dict[str, Any], t: float | None, where: str) -> None:
        """An attachment as Claude Code sends it: nothing, text folded into the string tool result
        just before it, or reminder text of its own (module docstring). Where the file's attachment
        lines carry what was sent (`rendered`, 2.1.332), that text is imported, and a line without
        it was not sent (claude_code_wire.py `rendered_texts`)."""
        rep = self.report
        att = o.get("attachment")
        texts = rendered_texts(o) if self.renders else None
        if (texts is None and (self.renders or not sent_to_model(att))) or texts == []:
            rep.counts["attachments Claude Code does not send (dropped)"] += 1
            return
        text = "\n\n".join(texts) if texts else f"<system-reminder>{canonical(att)}</system-reminder>"
        last = c.items[-1] if c.items else None
        at = _last_result(last.contents) if c.fold and last is not None and last.kind == "user" else -1
        if last is not None and at >= 0:
            r = last.contents[at]
            joined = "\n\n".join(x.strip() for x in (r.text or "", text) if x.strip())
            last.contents[at] = Content("tool_result", text=joined, tool_id=r.tool_id, is_error=r.is_error)
            last.uuids += _uuid(o)
            rep.counts["attachments folded into a tool result"] += 1
            return
        blocks = [Content("text", text=x) for x in texts] if texts else [Content("text", text=text)]
        c.items.append(Item("user", blocks, t=t, where=where, uuids=_uuid(o)))
        c.fold = False
        rep.counts["attachments (imported as reminder text)"] += 1

    def mentions(self, c: _Conv, contents: list[Content], t: float | None, where: str) -> list[Content]:
        """A prompt's @-mentioned files as Claude Code up to 2.0.29 sends them, in that turn's
        requests only (claude_code_wire.py `turn_scoped_attachments`, bench/claude_code_wire.md §1):
        the first file's Read call as a message of its own, then in the prompt's message each
        result (and the next call) before the prompt, all marked `turn`. The results' text is not
        logged: they are given as sizes, which the sizer takes from the bill (sizing.py)."""
        paths = [m for x in contents if x.kind == "text" and x.text for m in at_mentions(x.text)]
        if not paths:
            return contents
        self.report.counts["@-mentioned files (turn-scoped attachments added)"] += len(paths)
        call = [Content("text", text=mention_call(p), turn=True) for p in paths]
        c.items.append(Item("user", [call[0]], t=t, where=where, alone=True))
        added: list[Content] = []
        for i, p in enumerate(paths):
            if i:
                added.append(call[i])
            added.append(Content("text", nbytes=0, key=f"{c.name}:mention:{len(c.items)}.{i}:{p}", turn=True))
        return [*added, *contents]

    def line(self, o: dict[str, Any], where: str, agent: str | None) -> None:
        typ = o.get("type")
        rep = self.report
        if typ in BOOKKEEPING:
            rep.counts["bookkeeping lines (never sent)"] += 1
            return
        if typ not in ("user", "assistant", "system", "attachment"):
            rep.skip(f"unknown line type {typ!r}", where)
            return
        uuid = o.get("uuid")
        if isinstance(uuid, str):
            if uuid in self.seen:
                rep.skip("duplicate line (same uuid)", where)
                return
            self.seen.add(uuid)
        key, name = self.key_of(o, agent)
        c = self.conv(key, name)
        c.version = c.version or str(o.get("version", ""))
        c.session = c.session or str(o.get("sessionId", ""))
        t = parse_time(o.get("timestamp"))
        if typ == "system":
            if o.get("subtype") == "compact_boundary":
                c.fold = False
                meta = o.get("compactMetadata") or {}
                trig = meta.get("trigger", "auto") if isinstance(meta, dict) else "auto"
                pre = meta.get("preTokens") if isinstance(meta, dict) else None
                kept = kept_lines(meta)
                c.items.append(Item("compact", t=t, trigger=str(trig), pre_tokens=pre, where=where))
                c.items[-1].kept = kept
                if kept:
                    rep.counts["compactions that kept the latest messages (preservedSegment)"] += 1
            elif o.get("subtype") in FORKED_QUERY_LINES and t is not None:
                c.forks.append((t, FORKED_QUERY_LINES[str(o["subtype"])]))
                rep.counts["forked queries logged by their result line (away summary)"] += 1
            else:
                rep.counts["system lines (not sent)"] += 1
            return
        if typ == "attachment":
            self.attachment(c, o, t, where)
            return
        msg = o.get("message")
        if not isinstance(msg, dict):
            rep.skip(f"{typ} line without a message object", where)
            return
        if typ == "user":
            contents = user_contents(msg.get("content"), rep, where)
            if not contents:
                rep.skip("empty user message", where)
                return
            kind = "summary" if o.get("isCompactSummary") else "user"
            # a prompt the user typed (a sub-agent's is the Task tool's prompt: no @-mentions read)
            typed = kind == "user" and not o.get("isMeta") and c.key.startswith("main")
            if typed and turn_scoped_attachments(c.version):
                contents = self.mentions(c, contents, t, where)
            c.items.append(Item(kind, contents, t=t, where=where, uuids=_uuid(o)))
            raw = msg.get("content")
            c.fold = folds_reminders(raw[-1] if isinstance(raw, list) and raw else None)
            new = [n for n in loaded_tools(raw) if n not in c.loaded]
            if new:
                c.loaded += new
                c.tools_pending = True
            return
        model = str(msg.get("model", ""))
        if model == "<synthetic>":
            rep.skip("synthetic response (no API call)", where)
            return
        model = billed_model(model, msg.get("usage"))
        c.fold = False
        rid = str(o.get("requestId") or msg.get("id") or where)
        item = c.replies.get(rid)
        if item is None:
            if c.tools_pending:  # Claude Code 2.1.x sends the loaded tools from now on, deferred
                tools = tuple(ToolDef(n, nbytes=0, deferred=True) for n in c.loaded)
                c.items.append(Item("tools", tools=tools, t=t, where=where))
                c.tools_pending = False
                rep.counts["tool lists changed by ToolSearch results (deferred tools)"] += 1
            item = Item("reply", [], t=t, where=where, request_id=rid, model=model)
            c.replies[rid] = item
            c.items.append(item)
            c.model = c.model or model
        item.contents += assistant_contents(msg.get("content"), rep)
        item.uuids += _uuid(o)
        usage = anthropic_usage(msg.get("usage"), where, "message.usage")
        if usage is not None:
            if item.usage is None:  # with the cost the line records (`costUSD`, Claude Code 1.0.x)
                for term in other_price_terms(msg.get("usage")):
                    rep.counts[f"requests billed on {term} (priced at list prices: no rates for it)"] += 1
                item.usage = replace(usage, cost=cost(o, "costUSD", where))
            elif _total(usage) > _total(item.usage):  # of a message's lines, the largest, as ccusage
                # reads them (bench/billed/fast.py): Anthropic direct repeats message_start's prompt
                # counts on every line and the last holds the whole output; a backend other than its
                # API may log 0, or its estimate, on every line but the last (the request's own counts)
                if usage.total_input != item.usage.total_input:
                    rep.counts["messages whose lines log different prompt counts (the largest taken)"] += 1
                item.usage = replace(usage, cost=item.usage.cost)
        item.t_end = t if t is not None else item.t_end


def _total(u: Usage) -> int:
    return u.total_input + u.output_tokens


@register("importer", "claude-code")
def import_claude_code(paths: list[Path], report: ImportReport | None = None) -> ImportResult:
    """Import one session (its sub-agent files are found next to it) or explicit files."""
    first = paths[0]
    report = report or ImportReport(str(first), "claude-code")
    report.cannot_provide = list(CANNOT)
    files: list[Path] = []
    for p in paths:
        files += [f for f in related_files(p) if f not in files]
    r = _Reader(report)
    for f in files:
        m = AGENT_FILE.search(f.name)
        r.read(f, m.group(1) if m else None)
    convs = list(r.convs.values())
    main = r.convs.get("main") or next((c for c in convs if c.key.startswith("main")), None)
    compacts = [c for c in convs if c.key.startswith("agent:acompact")]
    for ac in compacts:  # the summariser's file: into its session, else closed on its own
        if main is not None:
            merge_compaction_request(main.items, ac.items, ac.name, report)
            convs.remove(ac)
        else:
            close_compaction(ac.items, ac.name, report)
    convs.sort(key=lambda c: (c is not main, c.items[0].t or 0.0 if c.items else 0.0, c.key))
    meta_common = {"format": "claude-code", "version": (main or convs[0]).version if convs else ""}
    backend = {  # dropped usage first: the relay and backend checks read the recorded usage only
        c.key: {
            **drop_unrecorded(c.items, c.name, report),
            **backend_meta(c.items, c.name, report),
            **relay_meta(c.items, c.name, report),
        }
        for c in convs
    }
    return build_traces(
        [
            (
                c.name,
                c.items,
                normalize_model(c.model),
                c.model,
                {
                    **meta_common,
                    "session": c.session,
                    "marked_messages": marked_messages(c.version),
                    **({"forked_requests": forked_requests(c.forks, c.items)} if c.forks else {}),
                    **({"suggestion_forks": suggestion_forks(c.items)} if suggests(c, main) else {}),
                    **backend[c.key],
                },
            )
            for c in convs
        ],
        str(first),
        "claude-code",
        report,
    )


def suggests(c: _Conv, main: _Conv | None) -> bool:
    """Whether conversation `c` is a main thread of a Claude Code that can send prompt suggestions."""
    return c is main and may_suggest_prompts(c.version)


def _uuid(o: dict[str, Any]) -> list[str]:
    u = o.get("uuid")
    return [u] if isinstance(u, str) else []
