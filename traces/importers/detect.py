"""Which importer reads a file: decided from its name and its first bytes (never from a guess
that could silently misread: an unknown format is an error listing the known ones)."""

from __future__ import annotations

import json
from pathlib import Path

from ctxbench.traces.compressed import DamagedFile, open_log, plain
from ctxbench.traces.importers import opencode_storage
from ctxbench.traces.importers.base import ImportFailure


def is_log_folder(path: Path) -> bool:
    """A folder that is one log: a Cline-family task folder, or opencode's file storage."""
    return path.is_dir() and (
        (path / "ui_messages.json").is_file() or opencode_storage.storage_root(path) is not None
    )


def _first_object(head: bytes) -> dict[str, object] | None:
    for raw in head.split(b"\n")[:20]:
        try:
            obj = json.loads(raw.decode("utf-8", "replace"))
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's stack
            continue
        if isinstance(obj, dict):
            return obj
    return None


def _whole_document(path: Path, head: bytes) -> dict[str, object] | None:
    """The first object of a pretty-printed JSON document (an object, or an array of objects), read
    whole: its first lines are no JSON on their own (`[`, `{`)."""
    if head.lstrip()[:1] not in (b"[", b"{"):
        return None
    try:
        with open_log(path) as f:
            doc = json.loads(f.read().decode("utf-8", "replace"))
    except DamagedFile:
        raise  # a damaged compressed file is said as such, not as a format no importer reads
    except (ValueError, RecursionError, OSError):
        return None
    if isinstance(doc, list):
        doc = next((x for x in doc if isinstance(x, dict)), None)
    return doc if isinstance(doc, dict) else None


def _by_object(obj: dict[str, object] | None) -> str | None:
    """The format a log's first JSON object names, or None."""
    if obj is None:
        return None
    if obj.get("type") in ("say", "ask") and "ts" in obj:
        return "cline-task"  # a ui_messages.json row (traces/importers/cline_task.py)
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
    return None


HEAD = 65_536  # read first; the rest of the 256 KB only when its complete lines name no format


def detect(path: Path) -> str:
    """The format name of `path` (a registered importer); a compressed file by its contents and
    its name without the compression suffix (traces/compressed.py). Raises ImportFailure for a file
    no importer reads, DamagedFile (a ValueError) for a damaged compressed one."""
    if path.is_dir():
        if (path / "ui_messages.json").is_file():
            return "cline-task"  # a Cline / Roo Code / Kilo Code task folder (traces/importers/cline_task.py)
        if opencode_storage.storage_root(path) is not None:
            return "opencode"  # opencode's file storage (traces/importers/opencode_storage.py)
        raise ImportFailure(str(path), "a folder; give the session log files in it (one format at a time)")
    name = plain(path)
    if opencode_storage.is_session_file(path):
        return "opencode"  # a session of opencode's file storage, read with its messages and parts
    if name.name in ("ui_messages.json", "api_conversation_history.json"):
        return "cline-task"  # either file of a task folder: the importer reads both
    if name.suffix == ".traj":
        return "swe-agent"
    if name.suffix == ".eval":
        return "inspect-ai"  # Inspect AI's zip log (traces/importers/inspect_ai.py)
    if name.name.endswith(".messages.json") or name.name.endswith(".compaction.json"):
        return "cline"
    try:
        with open_log(path) as f:
            head = f.read(HEAD)
            first = _by_object(_first_object(head[: head.rfind(b"\n") + 1]))  # its complete lines
            if first is not None:  # the usual case: a log's first lines name it (HEAD bytes read)
                return first
            head += f.read(256_000 - HEAD)
    except OSError as e:  # a damaged compressed file raises DamagedFile: no format to guess, and
        # a folder mode stops on it instead of listing it among files no importer reads
        raise ImportFailure(str(path), f"cannot read: {e.strerror or e}") from None
    if head.startswith(b"SQLite format 3\x00"):
        return "opencode"  # opencode's database (traces/importers/opencode.py checks its tables)
    found = _by_object(_first_object(head) or _whole_document(path, head))
    if found is not None:
        return found
    text = head.decode("utf-8", "replace")
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
