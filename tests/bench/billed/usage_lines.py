"""A Claude Code `assistant` line carrying usage, as the billed tests write their logs."""

from __future__ import annotations

import json


def usage_line(
    k: int, usage: dict[str, object], mid: str = "msg_1", model: str = "claude-sonnet-4-5", uuid: str = ""
) -> str:
    """The `k`-th second's line of message `mid` (its requestId `req_<mid>`); its uuid `u<k>`
    unless given."""
    return json.dumps({
        "type": "assistant", "uuid": uuid or f"u{k}", "sessionId": "s", "requestId": f"req_{mid}",
        "timestamp": f"2025-10-01T00:00:0{k}Z",
        "message": {"id": mid, "model": model, "role": "assistant", "content": [], "usage": usage},
    })  # fmt: skip
