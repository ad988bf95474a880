"""Which real logs a folder holds, for `ctxbench fidelity --all-real [DIR]`.

The folder is walked, not read from a list of names: every file whose format an importer detects
(traces/importers/detect.py) is a log, so a user's own folder of sessions gets the same report and
the same `--json` objects as the shared traces-real (issue 11: the figures are checked on logs
that are not in this repository). A Claude Code session's sub-agent files
(`<session>/subagents/agent-*.jsonl`) are imported with their session, as the importer finds them
(`related_files`), not again on their own; so are an opencode storage session's message and part
files and its sub-agents' sessions. Files no importer reads are listed, with why, never
dropped without a word.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ctxbench.traces.importers import ImportFailure, detect, opencode_storage
from ctxbench.traces.importers.claude_code_files import related_files

# Conversations Claude Code sent, whatever recorded them: its own session log, or a proxy log of
# its requests (claude-trace). These make the report's target table (issue 11: ≥ 99 % within
# tolerance and cost within 1 % on every Claude Code conversation).
CLAUDE_CODE_FORMATS = ("claude-code", "claude-trace")


@dataclass(frozen=True)
class Log:
    rel: str  # the path under the folder, with `/`
    path: Path
    format: str


@dataclass(frozen=True)
class Found:
    root: Path
    logs: tuple[Log, ...]
    skipped: tuple[tuple[str, str], ...]  # (path under the folder, why no importer reads it)

    def of(self, *formats: str) -> list[Log]:
        return [log for log in self.logs if log.format in formats]

    def others(self) -> list[Log]:
        """The logs of every format but Claude Code's (replayed on the provider of their model)."""
        return [log for log in self.logs if log.format not in CLAUDE_CODE_FORMATS]


# folders of tools, never of harness logs: not walked (a dot-folder such as `.claude/projects`,
# `.codex/sessions` or `.gemini/tmp`, where harnesses keep their logs, is)
NOT_LOGS = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".nox",
     ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis", ".npm", ".idea", ".vscode-test"}
)  # fmt: skip


def discover(root: Path) -> Found:
    """Every log under `root`, in the order of their paths (deterministic: the report and the
    `--json` list come out the same on every machine). Raises ValueError when `root` is no folder."""
    if not root.is_dir():
        raise ValueError(f"--all-real {root}: not a folder of recorded logs (or set CTXBENCH_REAL)")
    files: list[tuple[str, Path]] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in NOT_LOGS)  # `.claude`, `.codex`, `.gemini` are walked
        if opencode_storage.storage_root(Path(folder)) == Path(folder):
            # opencode's file storage: its session files are the logs (read with their messages and
            # parts), a sub-agent's session with its parent's (traces/importers/opencode_storage.py)
            dirs[:] = [d for d in dirs if d not in opencode_storage.NOT_LOGS]
            names = []
        for name in sorted(names):
            if not name.startswith("."):
                path = Path(folder, name)
                files.append((path.relative_to(root).as_posix(), path))
    files.sort()
    logs: list[Log] = []
    skipped: list[tuple[str, str]] = []
    for rel, path in files:
        if path.suffix.lower() in (".md", ".txt"):
            skipped.append((rel, "documentation"))
            continue
        try:
            logs.append(Log(rel, path, detect(path)))
        except ImportFailure as e:
            skipped.append((rel, e.reason))
    with_session = {
        extra for log in logs if log.format == "claude-code" for extra in related_files(log.path)[1:]
    }
    # A Cline-family task folder is one log: its ui_messages.json (the importer reads the prompts
    # in api_conversation_history.json beside it).
    with_session |= {
        log.path
        for log in logs
        if log.format == "cline-task"
        and log.path.name != "ui_messages.json"
        and (log.path.parent / "ui_messages.json").is_file()
    }
    with_session |= {
        extra
        for log in logs
        if log.format == "opencode" and opencode_storage.is_session_file(log.path)
        for extra in opencode_storage.session_group(log.path)[1:]
    }
    logs = [log for log in logs if log.path not in with_session]
    return Found(root, tuple(logs), tuple(skipped))
