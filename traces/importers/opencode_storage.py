"""opencode's file storage: what opencode wrote before its SQLite store (`opencode.db`, from 1.2),
and what many committed `~/.local/share/opencode/storage/` folders hold. One JSON file per record
(opencode's `Storage.write(key)` writes `storage/<key...>.json`; its JSON-to-SQLite migration,
packages/opencode/src/storage/json-migration.ts, reads the same layout):

- `session/<projectID>/<sessionID>.json`: the session (`id`, `slug`, `parentID` for a task-tool
  sub-agent's session, `version`, `time`); `projectID` is `global` outside a git repository, else
  the repository's first commit;
- `message/<sessionID>/<messageID>.json`: a message's info (`role`; an assistant message's
  `modelID`, `providerID`, `tokens`, `cost`, `time.created`/`completed`, `summary`);
- `part/<messageID>/<partID>.json`: its parts (`text`, `reasoning`, `tool`, `step-start`,
  `step-finish` with each request's own `tokens` and `cost`, `patch`, `compaction`, ...).

The records are the rows of `opencode.db` (the migration copies each file's JSON, less the ids its
path gives, into `message.data` and `part.data`), so this module only gathers them into the
`opencode export` shape (`info`, `messages`: `info` + `parts`) that traces/importers/opencode.py
reads; messages and parts in the order of their ids (time-ordered, as the database's `ORDER BY id`).
The ids are taken from the paths, as the migration does.

A log is a storage folder (every session in it), or one session file (`session/<p>/<s>.json`: that
session with its sub-agents' sessions, as a Claude Code session's log carries its sub-agents).
`ctxbench fidelity --all-real` and `billed DIR` list one log per session that is no sub-agent's
(`log_files`); the message and part files are read with their session, never as logs of their own.

The layout of opencode before 0.4 (`session/info/`, `session/message/<s>/`, parts under
`session/part/<s>/<m>/`) is not read: its message format differs, and no committed copy of it was
found to check a reader on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxbench.traces.importers.base import ImportFailure

# the folders of a storage root opencode keeps conversations in (json-migration.ts scans these)
SESSION, MESSAGE, PART = "session", "message", "part"
# the storage root's other folders and files: not logs, never walked by a folder discovery
NOT_LOGS = frozenset(
    {
        MESSAGE,
        PART,
        "project",
        "todo",
        "permission",
        "session_share",
        "session_diff",
        "snapshot",
        "quarantine",
    }
)


def storage_root(path: Path) -> Path | None:
    """The storage folder `path` is or holds: a folder with `session/` and `message/`
    sub-folders, or the opencode data folder holding such a `storage/` (None otherwise)."""
    for cand in (path, path / "storage"):
        if (cand / SESSION).is_dir() and (cand / MESSAGE).is_dir():
            return cand
    return None


def is_session_file(path: Path) -> bool:
    """`path` is `<storage>/session/<projectID>/<sessionID>.json` of a storage folder."""
    if path.suffix != ".json" or path.parent.parent.name != SESSION:
        return False
    root = path.parent.parent.parent
    return (root / MESSAGE).is_dir() and path.parent.name != "info"


def _read(path: Path) -> dict[str, Any]:
    """One record: a JSON object, or an ImportFailure naming the file (and the line of a JSON error)."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ImportFailure(str(path), f"cannot read: {e.strerror or e}") from None
    try:
        obj = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ImportFailure(str(path), f"not UTF-8 (byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise ImportFailure(str(path), f"not JSON: {e.msg}", e.lineno) from None
    except (ValueError, RecursionError):
        raise ImportFailure(str(path), "not JSON (nested too deeply or a number past its range)") from None
    if not isinstance(obj, dict):
        raise ImportFailure(str(path), f"not a JSON object (a {type(obj).__name__})")
    return obj


def _records(folder: Path) -> list[Path]:
    """The `*.json` records of `folder`, in the order of their ids (their names)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix == ".json" and p.is_file())


def _session_files(root: Path) -> list[Path]:
    base = root / SESSION
    if not base.is_dir():
        return []
    return sorted(
        (f for project in sorted(base.iterdir()) if project.is_dir() for f in _records(project)),
        key=lambda f: (f.name, str(f)),
    )


def _peek(path: Path) -> dict[str, Any]:
    """A session file's object, {} for a file that is none (its error is said when it is imported)."""
    try:
        obj = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return obj if isinstance(obj, dict) else {}


def _parent_of(path: Path) -> str:
    """The `parentID` a session file names ("" for none)."""
    parent = _peek(path).get("parentID")
    return parent if isinstance(parent, str) else ""


def _created(path: Path) -> float:
    """When a session was created (`time.created`, ms), 0 when it says no number."""
    times = _peek(path).get("time")
    t = times.get("created") if isinstance(times, dict) else None
    return float(t) if isinstance(t, int | float) and not isinstance(t, bool) and t == t else 0.0


def _children(root: Path) -> dict[str, list[Path]]:
    """Session id → the session files that name it as their parent."""
    out: dict[str, list[Path]] = {}
    for f in _session_files(root):
        parent = _parent_of(f)
        if parent:
            out.setdefault(parent, []).append(f)
    return out


def log_files(root: Path) -> list[Path]:
    """The session files of the storage folder `root` that are logs of their own: every session
    but a sub-agent's whose parent session file is there (it is read with its parent)."""
    files = _session_files(root)
    ids = {f.stem for f in files}
    return [f for f in files if _parent_of(f) not in ids]


def session_group(path: Path) -> list[Path]:
    """The session file `path` and its sub-agents' session files (theirs too, depth first)."""
    children = _children(path.parent.parent.parent)
    out: list[Path] = []
    todo, seen = [path], set()
    while todo:
        f = todo.pop(0)
        if f.stem in seen:
            continue
        seen.add(f.stem)
        out.append(f)
        todo[:0] = children.get(f.stem, [])
    return out


def _document(root: Path, session_file: Path) -> dict[str, Any]:
    info = _read(session_file)
    sid = session_file.stem  # the id its path gives (json-migration.ts)
    messages = []
    for mf in _records(root / MESSAGE / sid):
        msg = {**_read(mf), "id": mf.stem, "__file__": str(mf)}
        parts = [{**_read(pf), "id": pf.stem, "__file__": str(pf)} for pf in _records(root / PART / mf.stem)]
        messages.append({"info": msg, "parts": parts})
    return {"info": {**info, "id": sid}, "messages": messages}


def documents(path: Path) -> list[dict[str, Any]]:
    """The sessions of a storage folder (every one) or of a session file (it and its sub-agents')
    as `opencode export` documents; each message and part carries its file as `__file__`."""
    if path.is_dir():
        root = storage_root(path)
        if root is None:
            raise ImportFailure(str(path), "not an opencode storage folder (no session/ and message/ in it)")
        # in the order the database lists them (`ORDER BY time_created, id`: session ids descend)
        files = sorted(_session_files(root), key=lambda f: (_created(f), f.stem))
        if not files:
            raise ImportFailure(str(root / SESSION), "no session file (session/<project>/<id>.json)")
        return [_document(root, f) for f in files]
    if not is_session_file(path):
        raise ImportFailure(str(path), "not an opencode session file (storage/session/<project>/<id>.json)")
    root = path.parent.parent.parent
    return [_document(root, f) for f in session_group(path)]
