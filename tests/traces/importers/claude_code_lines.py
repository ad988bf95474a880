"""Synthetic Claude Code log lines for the tests: a user turn (a prompt first, then a tool result)
and the assistant reply that carries the request's usage, in the shape Claude Code 2.x writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def turn(
    k: int,
    model: str,
    usage: dict[str, Any],
    *,
    asked: str,
    answered: str,
    message_id: str,
    request_id: str | None = None,
    text_bytes: int = 480,
    result_bytes: int = 600,
) -> list[dict[str, Any]]:
    """Request `k`: the user line at ISO time `asked` (the first request's prompt, or the
    previous request's tool result) and its reply at `answered`, calling a tool `t<k>`."""
    content = (
        [{"type": "text", "text": "x" * text_bytes}]
        if k == 0
        else [{"type": "tool_result", "tool_use_id": f"t{k - 1}", "content": "y" * result_bytes}]
    )
    user = {"type": "user", "uuid": f"u{k}", "sessionId": "s", "timestamp": asked}
    user["message"] = {"role": "user", "content": content}
    reply: dict[str, Any] = {
        "type": "assistant",
        "uuid": f"a{k}",
        "sessionId": "s",
        "timestamp": answered,
        "message": {
            "id": message_id,
            "model": model,
            "role": "assistant",
            "content": [{"type": "tool_use", "id": f"t{k}", "name": "Bash", "input": {}}],
            "usage": usage,
        },
    }
    if request_id is not None:
        reply["requestId"] = request_id
    return [user, reply]


def write_log(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path
