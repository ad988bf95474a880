"""What Claude Code puts on the wire that its session transcript does not say (FORMATS.md §2.1),
read from its npm package `@anthropic-ai/claude-code` (cli.js of 2.1.39, 2.1.68, 2.1.69, 2.1.97 and
the cli.js inside the 2.1.114 binary): which attachments it sends and how many messages it marks
with cache_control. Used by the transcript importer (traces/importers/claude_code.py).
"""

from __future__ import annotations

import re
from typing import Any

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
