"""Replay of a recorded harness's own behaviour on an imported trace (traces/importers/).

- `RecordedMarks` ("recorded" marks): the cache marks the recorded harness placed. claude-trace logs
  show Claude Code's scheme exactly (traces-real/FORMATS.md §2.2): `cache_control` on every system
  block and on the last block of the last two messages (Claude Code <= 2.1.68; from 2.1.69 on the
  last message only, cli.js `tengu_api_cache_breakpoints`); the importers store each mark's ttl on
  the block (`Content.cache`), taken from the request's own `cache_control` (claude-trace) or from
  the 5m/1h split of its billed cache writes (Claude Code transcripts, FORMATS.md §2.1).
- `RecordedCompaction` ("recorded" compaction): never decides to compact on its own; applies each
  CompactionEvent of the trace (the summary replaces every earlier message, Claude Code's
  `compact_boundary` + `isCompactSummary`, policies.md §1 "/compact and the summary prompt"), but
  for the messages it kept (`kept_from`: Claude Code 2.1.x "Recent messages are preserved
  verbatim", its boundary's `compactMetadata.preservedMessages`), which follow the summary.
- `TurnScopedBlocks` and `drop_turn_blocks`: the edit with which a harness replaying a trace
  drops the blocks it marks `turn` when a new turn starts (`starts_turn`): Claude Code <= 2.0.29
  sends a turn's attachments with that turn only (bench/claude_code_wire.md §1). The recorded
  harness and the coding-agent harness (the `claude-code` preset) both do: a preset that kept
  them compacted a 2.0.8 session at requests 22 and 32 instead of 44, its context tens of
  thousands of tokens larger than any request the log bills (bench/preset_fidelity.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ctxbench.policies.contracts import Action, CompactionDefaults
from ctxbench.policies.view import Edit, View
from ctxbench.sim.core.content import Block, Message
from ctxbench.sim.core.names import Breakpoints, Ttl, is_ttl, ttl_of
from ctxbench.sim.core.registry import register

if TYPE_CHECKING:
    from ctxbench.sim.core.transcript import Transcript


@register("marks", "recorded")
@dataclass(frozen=True)
class RecordedMarks:
    """System blocks, then the last block of each of the last `messages` messages (FORMATS.md §2.2:
    "cache_control on the last block of the last two messages"); a block's recorded ttl wins,
    else the ttl recorded on the newest message, else `ttl`. When the newest message's last block
    carries a recorded mark, the trace records every message mark its harness placed, so an older
    message is marked only where it carries one (an imported Claude Code >= 2.1.69 session marks
    the last message only). At most `max_marks` (providers.md §1.2: 4 per request), the newest
    kept first. A summariser's instruction (the newest message, tagged "summary") without a mark of
    its own after a message that has one was sent marked one API message back: the message marks
    are placed from the message before the run of user messages it ends (Claude Code's
    `skipCacheWrite`, policies/condensers.py `ClaudeCodeMarks`; a trace recorded by `serve`)."""

    ttl: Ttl = "5m"  # providers.md §1.5 default ttl
    messages: int = 2  # FORMATS.md §2.2
    system: bool = True  # FORMATS.md §2.2: "system (list of text blocks, both with cache_control)"
    max_marks: int = 4  # providers.md §1.2
    # one message mark, on the newest message block that carries a recorded one, and no system or
    # tools mark: a harness that marks the user's latest prompt only (Cline CLI 3.x on the
    # Anthropic API, traces/importers/cline.py; trace meta `message_mark` "user prompt")
    prompt_only: bool = False

    def place(self, view: View) -> Breakpoints:
        tr = view.tr
        n = len(tr)
        if n == 0:
            return ()
        if self.prompt_only:
            marked = tr.block_index(_has_recorded_mark)
            last = marked[-1] if marked else -1
            return ((last, ttl_of(tr.blocks[last].cache, self.ttl)),) if last >= tr.system_end else ()
        msg_marks: list[tuple[int, Ttl | Literal[""]]] = []
        last = _marked_from(tr)
        newest_ttl: Ttl | Literal[""] = ""
        recorded = False  # the trace records where its harness put the message marks
        for m in range(last, max(-1, last - self.messages), -1):
            end = tr.message_end(m) - 1
            if end < tr.msg_starts[m]:
                continue
            own = tr.blocks[end].cache
            if m == last:
                recorded = is_ttl(own)
            elif recorded and not is_ttl(own):
                continue  # the recorded request had no mark here (Claude Code >= 2.1.69: last message only)
            ttl = own if is_ttl(own) else newest_ttl
            newest_ttl = newest_ttl or ttl
            msg_marks.append((end, ttl))
        default: Ttl = newest_ttl or self.ttl
        marks = [(p, t or default) for p, t in msg_marks]
        if self.system:
            sys_marks = [
                (p, ttl_of(tr.blocks[p].cache, default))
                for p in range(tr.tools_end, tr.system_end)
                if tr.blocks[p].cache or p == tr.system_end - 1
            ]
            room = max(0, self.max_marks - len(marks))
            marks += sys_marks[:room]
        seen: dict[int, Ttl] = {}
        for p, t in marks[: self.max_marks]:
            seen.setdefault(p, t)
        return tuple(sorted(seen.items()))


@register("compaction", "recorded")
@dataclass(frozen=True)
class RecordedCompaction(CompactionDefaults):
    """Compacts only where the recorded harness did: `recorded` turns a CompactionEvent's summary
    into an Edit (cause "compaction") that replaces every message after the pinned ones by the
    summary and the conversation's last `keep` messages (the ones the harness kept), unchanged."""

    replays_recorded = True

    def decide(self, view: View, estimate: int, mode: str | None = None) -> Action | None:
        return None

    def recorded(self, view: View, summary: Message | None, keep: int = 0) -> Edit:
        first = max(0, view.preparation_messages)
        kept, own_last = kept_messages(view.tr.messages, first, keep)
        opening = (summary,) if summary is not None else ()
        return Edit(first, (*opening, *kept), "compaction", kept=own_last)


def kept_messages(messages: list[Message], first: int, keep: int) -> tuple[tuple[Message, ...], int]:
    """The messages a recorded compaction kept: the last `keep` after `first`, but for the
    summariser's own request (its instruction and reply, tagged "summary"); and how many of them
    are the conversation's own last messages (`Edit.kept`: all of them, or 0)."""
    keep = min(max(0, keep), len(messages) - first)
    tail = messages[len(messages) - keep :] if keep else []
    kept = tuple(m for m in tail if m.tag != "summary")
    return kept, len(kept) if len(kept) == len(tail) else 0


def _marked_from(tr: Transcript) -> int:
    """The message the message marks are placed from (RecordedMarks): the newest, but for a
    summariser's instruction sent marked one API message back."""
    msgs = tr.messages
    last = len(msgs) - 1
    if last < 1 or msgs[last].tag != "summary" or msgs[last].role != "user":
        return last
    if not msgs[last].blocks or not msgs[last - 1].blocks:
        return last
    own, before = (tr.blocks[tr.message_end(m) - 1].cache for m in (last, last - 1))
    if is_ttl(own) or not is_ttl(before):
        return last
    i = last
    while i >= 0 and msgs[i].role == "user":
        i -= 1
    return i


def starts_turn(msg: Message) -> bool:
    """A user message with content other than tool results (and the images that follow one):
    a new prompt or its attachments (providers.md §1.6)."""
    after_result = False
    for b in msg.blocks:
        if b.kind == "tool_result":
            after_result = True
        elif not b.is_image or not after_result:
            return True
    return False


@dataclass
class TurnScopedBlocks:
    """Whether blocks a trace marks `turn` were appended since the last drop, and the drop: the
    edit to apply before the first user message of a new turn (module docstring)."""

    pending: bool = False

    def edit_before(self, messages: list[Message], keep: int, msg: Message) -> Edit | None:
        """The edit that drops the earlier turns' `turn` blocks from messages[keep:] before `msg`
        is appended, when `msg` starts a turn after a reply; else None."""
        after_reply = bool(messages) and messages[-1].role == "assistant"
        if not (self.pending and msg.role == "user" and after_reply and starts_turn(msg)):
            return None
        self.pending = False
        return drop_turn_blocks(messages, keep)

    def appended(self, msg: Message) -> None:
        """Note a message appended to the prompt."""
        self.pending = self.pending or any(b.turn for b in msg.blocks)


def drop_turn_blocks(messages: list[Message], keep: int = 0) -> Edit | None:
    """The edit that removes every `turn` block from messages[keep:], from the first message
    holding one; None when there is none."""
    first = next((m for m in range(keep, len(messages)) if any(b.turn for b in messages[m].blocks)), None)
    if first is None:
        return None
    out: list[Message] = []
    dropped = 0
    for msg in messages[first:]:
        blocks = tuple(b for b in msg.blocks if not b.turn)
        if len(blocks) == len(msg.blocks):
            out.append(msg)
            continue
        dropped += len(msg.blocks) - len(blocks)
        if blocks:
            out.append(Message.of(msg.role, blocks, msg.tag, msg.pinned))
    return Edit(first, tuple(out), "turn_scoped", detail=dropped)


def _has_recorded_mark(b: Block) -> bool:
    """A block that carries the cache mark its recorded request put there (`RecordedMarks`)."""
    return is_ttl(b.cache)
