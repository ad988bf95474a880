"""What Claude Code puts on the wire that its session transcript does not say (FORMATS.md §2.1),
read from its npm package `@anthropic-ai/claude-code` (cli.js of 2.1.39, 2.1.68, 2.1.69, 2.1.97 and
the cli.js inside the 2.1.114 binary): which attachments it sends and how many messages it marks
with cache_control. Used by the transcript importer (traces/importers/claude_code.py).
"""

from __future__ import annotations

import re
from typing import Any

from ctxbench.traces.importers.tokens import Item

# Attachment types Claude Code's normalizeAttachmentForAPI turns into no message at all (cli.js
# 2.1.39, 2.1.97, 2.1.114: `case ...: return []` and the final `[...].includes(type) return []`).
NOT_SENT = frozenset(
    {
        "already_read_file", "autocheckpointing", "background_task_status", "command_permissions",
        "companion_intro", "context_efficiency", "dynamic_skill", "edited_image_file",
        "hook_cancelled", "hook_deferred_tool", "hook_error_during_execution",
        "hook_non_blocking_error", "hook_permission_decision", "hook_system_message",
        "pen_mode_enter", "pen_mode_exit", "structured_output", "task_progress", "todo",
        "ultramemory",
    }
)  # fmt: skip
# hook_success is sent only for these hook events and with content (cli.js, all three versions)
HOOK_SUCCESS_SENT = ("SessionStart", "UserPromptSubmit")
# From this version on, Claude Code marks only the last message (cli.js 2.1.68 `J>A.length-3`,
# 2.1.69 `M===$` with `$=A.length-1`, function logging `tengu_api_cache_breakpoints`).
ONE_MESSAGE_MARK_FROM = (2, 1, 69)


# Requests Claude Code sends besides the conversation's own and logs only by a `system` line of this
# subtype when they end: the away summary ("recap") after the user was idle (cli.js 2.1.114: a
# forked query, `querySource:"away_summary"`, `skipCacheWrite:!0`: the mark on the last
# conversation message, the recap instruction after it unmarked). Its cache marks get the 1h ttl
# only for the query sources of `tengu_prompt_cache_1h_config`, default allowlist
# ["repl_main_thread*","sdk","auto_mode"] (cli.js 2.1.114 `dd7`): the recap's are 5m.
FORKED_QUERY_LINES = {"away_summary": "away_summary"}  # system subtype -> querySource
ONE_HOUR_QUERY_SOURCES = ("repl_main_thread*", "sdk", "auto_mode")
# Claude Code's prompt suggestion (bench/claude_code_wire.md §6): when a turn of an interactive
# main thread ends, a forked query (`querySource:"prompt_suggestion"`, no transcript line) over the
# conversation with a mark on the response that ended the turn (cli.js 2.1.50+ `skipCacheWrite:!0`;
# before, the last two messages are marked anyway), so the next turn can read the previous prompt
# and that response. cli.js 2.0.55-2.0.65 carry it but never turn it on; from 2.0.67 (npm has no
# 2.0.66) `CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION` does, else a server-side flag
# (`tengu_prompt_suggestion` to 2.1.7, none in 2.1.14-2.1.30, `tengu_chomp_inflection` from 2.1.40:
# default on up to 2.1.80, off from 2.1.88) and the `promptSuggestionEnabled` setting.
PROMPT_SUGGESTIONS_FROM = (2, 0, 67)


# Claude Code up to 2.0.29 run as the IDE extension runs it (SDK mode, `--input-format stream-json`)
# sends the attachments a turn computes (@-mentioned files, todo reminders, IDE diagnostics, changed
# files) with that turn's requests only: its SDK loop (cli.js 2.0.5 `u4Q`) keeps only the input's
# `user` messages for later turns, and the transcript has none of them. Observed against
# `ctxbench serve` (research note bench/claude_code_wire.md §1, with the commands):
# 1.0.51, 2.0.0, 2.0.5, 2.0.20 and 2.0.29 drop the first turn's @-mentioned file from the second
# turn's request, 2.0.30-2.0.33 and 2.0.37 keep it.
TURN_SCOPED_ATTACHMENTS_BEFORE = (2, 0, 30)
# What a prompt @-mentions (cli.js 2.0.5 `sP6`): `@"quoted path"` and `@path` after a line start or
# white space, up to a word boundary; each mentioned file becomes an attachment (its Read result).
_MENTION_QUOTED = re.compile(r'(?:^|\s)@"([^"]+)"')
_MENTION = re.compile(r"(?:^|\s)@([^\s]+)\b")


def at_mentions(text: str) -> list[str]:
    """The paths a prompt text @-mentions, first mention first, each once (cli.js 2.0.5 `sP6`)."""
    plain = [m for m in _MENTION.findall(text) if not m.startswith('"')]
    found = [*_MENTION_QUOTED.findall(text), *plain]
    return list(dict.fromkeys(found))


def mention_call(path: str) -> str:
    """The fake Read call Claude Code sends for an @-mentioned file, before its result (cli.js 2.0.5:
    "Called the Read tool with the following input", bench/claude_code_wire.md §1)."""
    return f'Called the Read tool with the following input: {{"file_path":"{path}"}}'


def turn_scoped_attachments(version: str) -> bool:
    """Whether this version, run as the IDE extension runs it, sends a turn's attachments with
    that turn's requests only (TURN_SCOPED_ATTACHMENTS_BEFORE); False when not recorded."""
    v = version_tuple(version)
    return len(v) == 3 and v < TURN_SCOPED_ATTACHMENTS_BEFORE


def query_ttl(source: str) -> str:
    """The ttl Claude Code puts on the cache marks of a query from `source` when the account gets
    1h marks at all (cli.js 2.1.114 `dd7`: its allowlist, `*` a prefix match); else 5m."""
    for pattern in ONE_HOUR_QUERY_SOURCES:
        if source == pattern or (pattern.endswith("*") and source.startswith(pattern[:-1])):
            return "1h"
    return "5m"


def forked_requests(forks: list[tuple[float, str]], items: list[Item]) -> list[list[Any]]:
    """Each forked query (`forks`: its time, its querySource; `FORKED_QUERY_LINES`) as [seconds
    before the next request, that request's index, ttl]: the next request is the first reply of
    `items` whose request (its last user item, else itself) starts after the fork; a fork after the
    last request is never replayed (nothing reads what it did)."""
    out: list[list[Any]] = []
    for tf, source in forks:
        index, start = -1, None
        for it in items:
            if it.kind == "reply":
                index += 1
                begin = start if start is not None else it.t
                if begin is not None and begin >= tf:
                    out.append([round(begin - tf, 3), index, query_ttl(source)])
                    break
                start = None
            elif it.kind == "user" and it.t is not None:
                start = it.t
    return out


# Lines Claude Code 2.1.332 writes that are no message: the request log it keeps beside the
# transcript (`api-request-shape`: system + tools by hash; `api-request-blob`: a message by hash;
# `api-request`: params, the base request, kept and new messages, cache mark paths), the tools a
# turn used, the session's cost, an empty `atis-latch` (bench/claude_code_wire.md §3, 2.1.332
# against `ctxbench serve`: none of them is in any request body of the ledger).
LOG_LINES = ("api-request", "api-request-blob", "api-request-shape", "atis-latch", "cost-state", "tools-used")


def rendered_texts(line: dict[str, Any]) -> list[str] | None:
    """The texts an attachment line says Claude Code sent (its `rendered` list, 2.1.332: each
    entry's `content` is byte-equal to a text block of the request, bench/claude_code_wire.md §3),
    or None when the line has no `rendered` list (older versions: not recorded)."""
    rendered = line.get("rendered")
    if not isinstance(rendered, list):
        return None
    out = []
    for entry in rendered:
        content = entry.get("content") if isinstance(entry, dict) else None
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):  # blocks: their text parts
            out += [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return out


def sent_to_model(att: Any) -> bool:
    """Whether Claude Code sends this attachment to the model (cli.js normalizeAttachmentForAPI)."""
    if not isinstance(att, dict):
        return True
    kind = att.get("type")
    if kind in NOT_SENT:
        return False
    if kind == "hook_success":
        return att.get("hookEvent") in HOOK_SUCCESS_SENT and bool(att.get("content"))
    if kind == "hook_additional_context":
        return bool(att.get("content"))
    return True


def version_tuple(version: str) -> tuple[int, ...]:
    """The numbers of a Claude Code version (`2.1.114` -> (2, 1, 114)), the first three at most;
    fewer when fewer are recorded."""
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


def suggestion_forks(items: list[Item]) -> list[list[Any]]:
    """The prompt suggestions this conversation could have sent (PROMPT_SUGGESTIONS_FROM), as
    `forked_requests` rows: one when each turn ends that a prompt (a user item with content other
    than tool results) follows, once two replies or more are in the context (cli.js 2.1.63
    `early_conversation`; a compaction starts the count again). Whether they were sent is not in
    the log (bench/claude_code_wire.md §6): the replay sends them only when told to."""
    sent: list[tuple[float, str]] = []
    replies, end = 0, None
    for it in items:
        if it.kind == "compact":
            replies = 0
        elif it.kind == "reply":
            replies, end = replies + 1, it.t_end if it.t_end is not None else it.t
        elif it.kind == "user" and replies >= 2 and end is not None:
            if any(c.kind != "tool_result" for c in it.contents):
                sent.append((end, "prompt_suggestion"))
            end = None
    return forked_requests(sent, items)


def may_suggest_prompts(version: str) -> bool:
    """Whether this Claude Code version can send prompt suggestions (PROMPT_SUGGESTIONS_FROM);
    False when not recorded."""
    v = version_tuple(version)
    return len(v) == 3 and v >= PROMPT_SUGGESTIONS_FROM


def marked_messages(version: str) -> int:
    """How many trailing messages this Claude Code version marks with cache_control (2 when the
    version is not recorded: FORMATS.md §2.2)."""
    v = version_tuple(version)
    if len(v) < 3:
        return 2
    return 1 if v >= ONE_MESSAGE_MARK_FROM else 2


def folds_reminders(block: Any) -> bool:
    """Whether text Claude Code sends after this last block of a user message is folded into it:
    a tool result whose content is a string (cli.js 2.0.37-2.1.114, `y2z`/`gPY`; a server-side
    gate folds into any tool result, but the cua sessions show it off: their reminders strip
    Haiku's thinking as separate user text would, providers.md §1.6)."""
    return (
        isinstance(block, dict)
        and block.get("type") == "tool_result"
        and isinstance(block.get("content"), str)
    )


def loaded_tools(content: Any) -> list[str]:
    """Names of the tools a ToolSearch result in this user message content loads: `tool_reference`
    parts of its tool results (cli.js 2.1.39-2.1.114 `iQ`: the deferred tools a request sends)."""
    out: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        parts = block.get("content")
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, dict) and part.get("type") == "tool_reference" and part.get("tool_name"):
                out.append(str(part["tool_name"]))
    return out


def kept_lines(meta: Any) -> list[str]:
    """The lines (uuids) of the messages a compaction kept after its summary, first to last (Claude
    Code 2.1.x: "Recent messages are preserved verbatim", policies.md §1): the boundary's
    `compactMetadata.preservedMessages.uuids`, else `preservedSegment.headUuid` alone (the first of
    them; the rest follow it up to the boundary); [] when it kept none. On resuming, Claude Code
    (2.1.197 cli.js) relinks the first to the summary (`anchorUuid`) and what followed the summary to
    the last. It re-logs the kept lines before the boundary with the same uuids (skipped as
    duplicates)."""
    if not isinstance(meta, dict):
        return []
    kept = meta.get("preservedMessages")
    uuids = kept.get("uuids") if isinstance(kept, dict) else None
    if isinstance(uuids, list) and uuids and all(isinstance(u, str) for u in uuids):
        return list(uuids)
    seg = meta.get("preservedSegment")
    head = seg.get("headUuid") if isinstance(seg, dict) else None
    return [head] if isinstance(head, str) and head else []
