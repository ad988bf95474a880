"""Which files make one Claude Code session: its log and its sub-agents' logs (FORMATS.md §2.1).

Kept apart from the importer (claude_code.py) so that what only lists a session's files (`ctxbench
billed`'s usage reader, `fidelity --all-real`'s folder walk) does not import the importer.
"""

from __future__ import annotations

import re
from pathlib import Path

AGENT_FILE = re.compile(r"agent-(.+)\.jsonl$")


def related_files(path: Path) -> list[Path]:
    """The session file plus its sub-agent files (2.0.x `agent-*.jsonl` siblings that name this
    session are not guessed; 2.1.x `<session>/subagents/agent-*.jsonl` are)."""
    out = [path]
    sub = path.with_suffix("") / "subagents"
    if sub.is_dir():
        out += sorted(p for p in sub.iterdir() if AGENT_FILE.search(p.name))
    return out
