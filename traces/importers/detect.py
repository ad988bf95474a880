"""Which importer reads a file: decided from its name and its first bytes (never from a guess
that could silently misread: an unknown format is an error listing the known ones)."""

from __future__ import annotations

import json
from pathlib import Path

from ctxbench.traces.compressed import open_log, plain
from ctxbench.traces.importers.base import ImportFailure


def _first_object(head: bytes) -> dict[str, object] | None:
    for raw in head.split(b"\n")[:20]:
        try:
            obj = json.loads(raw.decode("utf-8", "replace"))
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's stack
            continue
        if isinstance(obj, dict):
            return obj
    return None


def detect(path: Path) -> str:
    """The format name of `path` (a registered importer); a compressed file by its contents and
    its name without the compression suffix (traces/compressed.py). Raises ImportFailure for a file
    no importer reads, DamagedFile (a ValueError) for a damaged compressed one."""
    name = plain(path)
    if name.suffix == ".traj":
        return "swe-agent"
    if name.suffix == ".eval":
        return "inspect-ai"  # Inspect AI's zip log (traces/importers/inspect_ai.py)
    if name.name.endswith(".messages.json") or name.name.endswith(".compaction.json"):
        return "cline"
    try:
        with open_log(path) as f:
            head = f.read(256_000)
    except OSError as e:  # a damaged compressed file raises DamagedFile: no format to guess, and
        # a folder mode stops on it instead of listing it among files no importer reads
        raise ImportFailure(str(path), f"cannot read: {e.strerror or e}") from None
    if head.startswith(b"SQLite format 3\x00"):
        return "opencode"  # opencode's database (traces/importers/opencode.py checks its tables)
    text = head.decode("utf-8", "replace")
    obj = _first_object(head)
    if obj is not None:
        if "request" in obj and "response" in obj:
            return "claude-trace"
        if obj.get("kind") in ("session_start", "codex_event") or ("dir" in obj and "kind" in obj):
            return "codex"
        if obj.get("type") in ("session_meta", "turn_context", "response_item", "event_msg"):
            return "codex"
        if "instructions" in obj and "id" in obj and "timestamp" in obj and "type" not in obj:
            return "codex"  # the first Codex versions' rollout (traces/importers/codex_rollout.py)
        if "instance_id" in obj and "history" in obj:
            return "openhands"
        if "projectHash" in obj and "sessionId" in obj:
            return "gemini-cli"  # its header line (or the older single-JSON session)
        if "sessionId" in obj or obj.get("type") in ("file-history-snapshot", "summary", "queue-operation"):
            return "claude-code"
    stripped = text.lstrip()
    if stripped.startswith("{"):
        if '"samples"' in text and '"eval"' in text:
            return "inspect-ai"
        if '"trajectory"' in text and '"history"' in text:
            return "swe-agent"
        if '"system_prompt"' in text and '"messages"' in text:
            return "cline"
        if '"projectHash"' in text and '"sessionId"' in text and '"messages"' in text:
            return "gemini-cli"  # the older single-JSON session
        if '"info"' in text and '"messages"' in text and '"ses_' in text:
            return "opencode"  # `opencode export`: session ids start "ses_"
    from ctxbench.sim.core.registry import names

    known = ", ".join(names("importer"))
    raise ImportFailure(str(path), f"unknown trace format; give --format (known: {known})")
