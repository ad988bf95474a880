"""Turn importer items into traces whose true token sizes reproduce the billed usage.

Why: the simulator predicts cache reads from block sizes, so a replay can only match a bill if the
prompt of every request has the billed size. Where the source has per-request Anthropic usage, the
cached part of request k is C_k = cache_read + cache_write (the 1-10 `input_tokens` after the last
mark belong to no block, providers.md §1.9). Between two requests the prompt grows by the previous
reply and the new user messages, so those blocks get C_k - C_{k-1} tokens, split in proportion to
their bytes (images keep their provider-rule tokens). After a compaction the prompt restarts at the
system prompt: the summary and what follows get C_k - S.

System prompt + tools size S (not in Claude Code transcripts, FORMATS.md §2.1), in this order:
0. given: a conversation that opens on another conversation's history (Gemini CLI after a model
   switch, `meta.system_of`) has that conversation's S (`_known_system`): its first prompt is
   mostly history, so a read inside it is no evidence of where the system ends;
1. the cache read of the first request after a recorded compaction (only system + tools survive it:
   ≈21.4k in spotter);
2. else the smallest non-zero cache read that is at most C_1 (a read that falls back to the shared
   static prefix: 21,217 in cua, 12,317 in coderabbit);
3. else C_1 minus the first prompt's messages at the calibrated byte rate (sim/core/tokens.py).
The first request's own cache read W (> 0 when an earlier session left the prefix cached) is kept
as `meta.warm_tokens`; when W < S the system is two blocks (W tokens of static prefix, S - W of
session-specific prompt), matching Claude Code's separately marked system blocks (FORMATS.md §2.2).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import accumulate
from typing import Any

from ctxbench.sim.core.catalog import CatalogError, model_info
from ctxbench.sim.core.tokens import RateCounter
from ctxbench.traces.importers.base import (
    ImportFailure,
    ImportReport,
    ImportResult,
    allocate,
    normalize_model,
)
from ctxbench.traces.importers.sizing import (
    ASSUMED_BYTES_PER_TOKEN,
    real_user_content,
    size_events,
    system_size,
)
from ctxbench.traces.model import (
    CompactionEvent,
    Content,
    Event,
    Header,
    MessageEvent,
    ModelSwitchEvent,
    SystemEvent,
    ToolDef,
    ToolsEvent,
    Trace,
    Usage,
)


@dataclass
class Item:
    """One importer-level thing in time order: a user message, a model reply (one request), a
    compaction boundary, the summary message that follows it, or a new tool list."""

    kind: str  # user | reply | summary | compact | tools
    contents: list[Content] = field(default_factory=list)
    tools: tuple[ToolDef, ...] = ()  # kind "tools": the tool list from the next request on
    t: float | None = None
    t_end: float | None = None
    where: str = ""
    request_id: str = ""
    model: str = ""
    usage: Usage | None = None
    tag: str = ""
    trigger: str = "auto"
    pre_tokens: Any = None
    alone: bool = False  # a user item sent as its own message (not merged with its neighbours)
    uuids: list[str] = field(default_factory=list)  # the log lines it holds (Claude Code `uuid`)
    kept: list[str] = field(default_factory=list)  # kind "compact": the lines of the messages it kept


def _summary_text(c: Content) -> Content:
    if c.kind == "text":
        return c
    return Content("text", text=c.text if c.text is not None else f"[{c.kind}]")


def _events(items: list[Item], report: ImportReport, name: str, model: str = "") -> list[Event]:
    """Items → trace events: consecutive user items merge into one message; a compact boundary
    becomes a CompactionEvent carrying the summary message that follows it, and `kept_from` the
    message holding the first of its `kept` lines when the harness kept the latest messages. A reply
    on another model than the one before (`/model` in Claude Code, a fast-mode request) follows a
    `model_switch` event: the bill prices it as that model and its cache is that model's own
    (providers.md §1.6, "Speed setting"; sim/runner.py keeps one provider per model)."""
    events: list[Event] = []
    pending: list[Content] = []
    pending_t: float | None = None
    pending_tag = ""
    last_t = 0.0
    tool_ids: set[str] = set()
    compaction: CompactionEvent | None = None
    tools: tuple[ToolDef, ...] | None = None  # a new tool list for the next request
    message_of: dict[str, int] = {}  # log line (uuid) -> index of the message event holding it
    pending_uuids: list[str] = []
    messages = 0
    t0 = min((i.t for i in items if i.t is not None), default=0.0)
    current = model  # the model the conversation is on (the trace header's)
    last_id = ""  # the id the last reply recorded (resolved through the catalog only when it changes)

    def rel(t: float | None) -> float:
        nonlocal last_t
        if t is not None:
            last_t = max(last_t, round(t - t0, 3))
        return last_t

    def fix_results(cs: list[Content]) -> list[Content]:
        out = []
        for c in cs:
            if c.kind == "tool_result" and c.tool_id not in tool_ids:
                report.skip("tool_result without an earlier tool_use (kept as text)", name)
                c = Content("text", text=c.text or "")
            out.append(c)
        return out

    def flush() -> None:
        nonlocal pending, pending_tag, pending_uuids, messages
        if pending:
            events.append(MessageEvent("user", tuple(fix_results(pending)), tag=pending_tag, t=pending_t))
            message_of.update((u, messages) for u in pending_uuids)
            messages += 1
        pending, pending_tag, pending_uuids = [], "", []

    for it in items:
        if it.kind == "user" and it.alone:
            flush()
            pending, pending_t, pending_uuids = list(it.contents), rel(it.t), list(it.uuids)
            flush()
        elif it.kind == "user" or (it.kind == "summary" and compaction is None):
            pending += it.contents
            pending_uuids += it.uuids
            pending_t = rel(it.t)
            pending_tag = it.tag or pending_tag
        elif it.kind == "summary" and compaction is not None:
            summary = tuple(_summary_text(c) for c in it.contents)
            events[events.index(compaction)] = replace(compaction, summary=compaction.summary + summary)
            compaction = next(e for e in reversed(events) if isinstance(e, CompactionEvent))
        elif it.kind == "tools":  # the tools of the next request (traces/FORMAT.md `tools`)
            tools = it.tools
        elif it.kind == "compact":
            flush()
            compaction = _compaction(it, message_of, messages, report, name, rel(it.t))
            events.append(compaction)
        elif it.kind == "reply":
            start = pending_t if pending else None
            flush()
            if tools is not None:
                events.append(ToolsEvent(tools, t=start if start is not None else last_t))
                tools = None
            compaction = None
            contents = _reply_contents(it, tool_ids, report, name)
            if it.usage is None:
                report.skip("response without usage (kept, no ground truth)", it.where)
            t = start if start is not None else rel(it.t)
            if it.model and it.model != last_id:
                last_id, switched = it.model, normalize_model(it.model)
                if switched != current:
                    events.append(ModelSwitchEvent(switched, t=t))
                    report.counts["model switches"] += 1
                    current = switched
            events.append(
                MessageEvent(
                    "assistant",
                    tuple(contents),
                    tag=it.tag,
                    t=t,
                    output_tokens=it.usage.output_tokens if it.usage else None,
                    usage=it.usage,
                    request_id=it.request_id,
                )
            )
            message_of.update((u, messages) for u in it.uuids)
            messages += 1
            rel(it.t_end)
    flush()
    return events


def _compaction(
    it: Item, message_of: dict[str, int], messages: int, report: ImportReport, name: str, t: float
) -> CompactionEvent:
    """A compact boundary item as a CompactionEvent at `t`, `kept_from` the message holding the
    first of its `kept` lines (`message_of`: log line -> message index; `messages` so far)."""
    pre = it.pre_tokens if isinstance(it.pre_tokens, int) and it.pre_tokens >= 0 else None
    trig = it.trigger if it.trigger in ("auto", "manual") else "auto"
    kept_from = message_of.get(it.kept[0]) if it.kept else None
    if it.kept and kept_from is None:
        report.skip("compaction keeps messages from a line not in the log (none kept)", it.where)
    elif kept_from is not None and len(it.kept) > 1:
        listed = {message_of.get(u) for u in it.kept}
        if listed != set(range(kept_from, messages)):
            report.note(
                f"{name}: a compaction kept messages other than the latest ones; replayed as "
                "keeping every message from the first it kept on"
            )
    return CompactionEvent(trigger=trig, pre_tokens=pre, t=t, kept_from=kept_from)


def _reply_contents(it: Item, tool_ids: set[str], report: ImportReport, name: str) -> list[Content]:
    """A reply item's contents, every tool_use with an id unique in the conversation (a missing
    one named after the conversation, a repeated one renamed `id#k`), added to `tool_ids`; an
    empty reply is one empty text."""
    contents: list[Content] = []
    for c in it.contents:
        if c.kind == "tool_use":
            tid = c.tool_id or f"{name}-tool-{len(tool_ids)}"
            if tid in tool_ids:
                report.skip("repeated tool_use id (renamed)", it.where)
                k = 2
                while f"{tid}#{k}" in tool_ids:
                    k += 1
                tid = f"{tid}#{k}"
            tool_ids.add(tid)
            c = replace(c, tool_id=tid)
        contents.append(c)
    if not contents:
        contents = [Content("text", text="")]
    return contents


def split_at(blocks: tuple[Content, ...], w: int) -> tuple[Content, ...]:
    """The recorded system prompt's blocks, sized, with a block boundary at `w` tokens: the static
    prefix W an earlier session cached (`meta.warm_tokens`) ends inside a recorded block when the
    rest of the prompt is the session's own (Codex's instructions, then the session's environment:
    on the development part 34 Codex first requests read 1-2 units of 128 tokens short of the
    system prompt); that block is cut there, its text in proportion, so the replay can write and
    read W. Unchanged when W is 0, at least S, or already a boundary."""
    end = 0
    for k, c in enumerate(blocks):
        n = c.tokens or 0
        if end < w < end + n and c.text is not None:
            cut = len(c.text) * (w - end) // n
            head = replace(c, text=c.text[:cut], tokens=w - end)
            return (*blocks[:k], head, replace(c, text=c.text[cut:], tokens=end + n - w), *blocks[k + 1 :])
        end += n
    return blocks


def _known_system(meta: dict[str, Any], systems: dict[str, int]) -> tuple[int, str] | None:
    """S of a conversation that opens on another one's history (`meta.system_of`: that conversation,
    sized before it, whose system prompt and tools it shares): that conversation's S, since the
    reads inside its own first prompt end anywhere in the history, not at the system's end."""
    of = str(meta.get("system_of", "") or "")
    if not of or systems.get(of, 0) <= 0:
        return None
    return systems[of], f"the system prompt and tools of conversation {of!r} (its history opens this one)"


def build_traces(
    convs: list[tuple[str, list[Item], str, str, dict[str, Any]]],
    source: str,
    harness: str,
    report: ImportReport,
    whole: bool = False,
    system: dict[str, SystemEvent] | None = None,
) -> ImportResult:
    """One trace per conversation (name, items, catalog model, recorded model, meta)."""
    traces: list[Trace] = []
    names: list[str] = []
    systems: dict[str, int] = {}  # conversation -> the S its bill gave
    for name, items, model, recorded, meta in convs:
        if not any(i.kind == "reply" for i in items):
            report.skip("conversation without any model response", name)
            continue
        events = _events(items, report, name, model)
        marks = int(meta.get("marked_messages", 2))  # the recorded harness's message marks per request
        whole_here = whole or meta.get("usage_counts") == "whole prompt"  # per conversation (opencode)
        user_prompt = meta.get("message_mark") == "user prompt"  # Cline CLI 3.x on the Anthropic API
        known = _known_system(meta, systems)
        sized, extra = size_events(events, model, report, name, whole_here, marks, user_prompt, known)
        systems[name] = int(extra.get("system_tokens", 0))
        if system and name in system:  # the format records the system prompt: it gets the size S
            rec = system[name].content
            s = int(extra.get("system_tokens", 0))
            if s <= 0:
                s = sum(RateCounter().count_bytes(c.size, c.lang) for c in rec)
            shares = allocate(s, [max(1, c.size) for c in rec])
            rec = tuple(replace(c, tokens=n) for c, n in zip(rec, shares, strict=True))
            w = int(extra.get("warm_tokens", 0) or 0)
            rec = split_at(rec, w)
            ends = set(accumulate(c.tokens or 0 for c in rec))
            extra["warm_tokens"] = w if w in ends else 0  # a read the replay can place, else none
            sized = sized[1:] if sized and isinstance(sized[0], SystemEvent) else sized  # the sizes' own
            sized.insert(0, SystemEvent(rec, t=0.0))
        try:
            window = model_info(model).window
        except CatalogError:
            window = 200_000  # policies.md §1: Claude Code MODEL_CONTEXT_WINDOW_DEFAULT
            unknown = f"model {recorded!r} is not in sim/data/models.yaml"
            report.note(f"{unknown if recorded else 'the log names no model'}: window assumed 200,000")
        replies = sum(1 for e in sized if isinstance(e, MessageEvent) and e.role == "assistant")
        report.counts[f"requests ({name})"] = replies
        header = Header(
            source=source,
            harness=harness,
            model=model,
            window=window,
            meta={**meta, **extra, "conversation": name, "model_recorded": recorded},
        )
        traces.append(Trace(header, tuple(sized)))
        names.append(name)
    if not traces:
        raise ImportFailure(source, "no model responses found (nothing to import)")
    return ImportResult(traces, names, report)


__all__ = [
    "ASSUMED_BYTES_PER_TOKEN",
    "Item",
    "build_traces",
    "real_user_content",
    "size_events",
    "system_size",
]
