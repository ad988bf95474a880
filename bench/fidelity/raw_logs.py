"""Claude Code session logs read line by line, for the counts that need what an import leaves out
(a message's final usage, `compactMetadata`, thinking blocks left empty): bench/fidelity/
thinking_kept.py and compact_count.py. A line that is not a JSON object, and a log that cannot be
opened, are counted and named (`unreadable`), never a traceback; a folder named like a log is
skipped."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Protocol, TypeVar

GAP = 240.0  # seconds between requests: well inside the 5-minute TTL, so a short read is not an expiry


def jsonl_logs(roots: Iterable[Path]) -> Iterator[tuple[Path, str]]:
    """Every `*.jsonl` file under `roots`, in order, with its source: its first folder under the
    root (a repository of the corpus), or the root's own name."""
    for root in roots:
        for path in sorted(p for p in root.rglob("*.jsonl") if p.is_file()):
            rel = path.relative_to(root).parts
            yield path, rel[0] if len(rel) > 1 else root.name


def lines_of(path: Path, unreadable: Counter[str]) -> Iterator[dict[str, object]]:
    """The JSON-object lines of `path`; the others ("PATH:LINE") and an unreadable file ("PATH:
    why") are counted in `unreadable`."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for n, raw in enumerate(f, start=1):
                try:
                    line = json.loads(raw)
                except ValueError:
                    line = None
                if isinstance(line, dict):
                    yield line
                elif raw.strip():
                    unreadable[f"{path}:{n}"] += 1
    except OSError as e:
        unreadable[f"{path}: {e.strerror or e}"] += 1


def usage_of(line: dict[str, object]) -> tuple[int, int, int] | None:
    """(whole prompt, cache read, output) of an assistant line's usage, or None without one (a
    message logged over several lines has its final output on the last)."""
    msg = line.get("message")
    usage = msg.get("usage") if isinstance(msg, dict) else None
    if line.get("type") != "assistant" or not isinstance(usage, dict):
        return None
    keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")
    parts = [usage.get(k) or 0 for k in keys]
    if not all(isinstance(p, int) for p in parts):
        return None
    return parts[0] + parts[1] + parts[2], parts[1], parts[3]


def line_time(line: dict[str, object]) -> float | None:
    """The line's `timestamp` in seconds, or None without a readable one."""
    stamp = line.get("timestamp")
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def is_prompt(line: dict[str, object]) -> bool:
    """A user line with content other than tool results (not a meta or compact-summary line)."""
    if line.get("isMeta") or line.get("isCompactSummary"):
        return False
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return True
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") != "tool_result" for b in content
    )


class Counts(Protocol):
    """What a count over raw logs gives: JSON and text."""

    def json(self) -> dict[str, object]: ...

    def lines(self) -> list[str]: ...


C = TypeVar("C", bound=Counts)


def count_each(roots: Iterable[Path], acc: C, count_log: Callable[[Path, str, C], None]) -> C:
    """`acc` with `count_log` run on every `*.jsonl` log under `roots` (`jsonl_logs`), in order."""
    for path, source in jsonl_logs(roots):
        count_log(path, source, acc)
    return acc


def main_of(prog: str, doc: str, count: Callable[[list[Path]], Counts], argv: list[str] | None) -> int:
    """The command of a count over folders of Claude Code logs: exit 0 when counted, 2 when a
    folder does not exist."""
    ap = argparse.ArgumentParser(prog=f"python -m {prog}", description=doc.split("\n\n")[0])
    ap.add_argument("roots", nargs="+", type=Path, help="folders of Claude Code logs")
    ap.add_argument("--json", action="store_true", help="the counts as JSON")
    a = ap.parse_args(argv)
    missing = [str(r) for r in a.roots if not r.is_dir()]
    if missing:
        print(f"ctxbench: error: not a folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    acc = count(a.roots)
    print(json.dumps(acc.json(), indent=1) if a.json else "\n".join(acc.lines()))
    return 0
