"""A synthetic Codex-CLI-shaped request log: Responses API bodies, tool calls, and a compaction
request sent without tools (its "CONTEXT CHECKPOINT COMPACTION" instruction appended), after which
the chain restarts from the first items plus the summary (research: Codex CLI 0.171 against
`ctxbench serve`)."""

from __future__ import annotations

from typing import Any

TOOLS = [
    {
        "type": "function",
        "name": "shell",
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
    },
    {"type": "function", "name": "apply_patch", "parameters": {"type": "object"}},
]
HEAD = [
    {"role": "developer", "content": [{"type": "input_text", "text": "<permissions>sandbox</permissions>"}]},
    {
        "role": "user",
        "content": [{"type": "input_text", "text": "<environment_context>cwd=/w</environment_context>"}],
    },
    {"role": "user", "content": [{"type": "input_text", "text": "fix the failing test"}]},
]
COMPACT = "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary."


def _turn(n: int) -> list[dict[str, Any]]:
    return [
        {"type": "function_call", "name": "shell", "call_id": f"c{n}", "arguments": f'{{"cmd":"step {n}"}}'},
        {"type": "function_call_output", "call_id": f"c{n}", "output": f"output of step {n} " * 8},
    ]


def body(items: list[dict[str, Any]], tools: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"model": "gpt-5-codex", "instructions": "You are Codex.", "input": list(items)}
    if tools:
        out["tools"] = TOOLS
    out["prompt_cache_key"] = "session-1"
    return out


def codex_log(compactions: int = 3, turns: int = 4) -> list[dict[str, Any]]:
    """Request bodies: `turns` tool turns, then a compaction request and a restart, `compactions`
    times; the last restart goes on for two turns."""
    out = []
    base = list(HEAD)
    n = 0
    for c in range(compactions + 1):
        items = list(base)
        out.append(body(items))
        for _ in range(turns if c < compactions else 2):
            items += _turn(n)
            n += 1
            out.append(body(items))
        if c < compactions:
            msg = {"role": "user", "content": [{"type": "input_text", "text": COMPACT}]}
            out.append(body([*items, msg], tools=False))
            summary = f"summary {c}: steps done so far " * 4
            base = [*HEAD, {"role": "user", "content": [{"type": "input_text", "text": summary}]}]
    return out
