"""What Claude Code counted when it auto-compacted, read from its session logs (bench/trace_knows.py
`estimator`): for each automatic compaction (`compact_boundary`, `compactMetadata.preTokens`), the
difference between that count and the previous request's billed prompt plus its final output
tokens (a message logged over several lines carries its final usage on the last one). Up to 2.1.1
Claude Code compared the last response's usage total with its threshold (the difference is 0);
from 2.1.2 it adds an estimate of the messages after it (a positive difference).

Usage: `python -m ctxbench.bench.fidelity.compact_count DIR... [--json]`. Exit 0 when counted, 2 when
a folder does not exist. A line that is not a JSON object, and a log that cannot be opened, are
counted and named, not read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ctxbench.bench.fidelity.raw_logs import jsonl_logs, lines_of, main_of, usage_of


@dataclass
class CompactCounts:
    """Per Claude Code version: automatic compactions whose count was the last usage alone, or more."""

    by_version: dict[str, Counter[str]] = field(default_factory=dict)
    unreadable: Counter[str] = field(default_factory=Counter)

    def json(self) -> dict[str, object]:
        return {
            "by_version": {v: dict(sorted(c.items())) for v, c in sorted(self.by_version.items())},
            "lines_not_read": sorted(self.unreadable),
        }

    def lines(self) -> list[str]:
        out = ["version | last usage alone | more"]
        for v, c in sorted(self.by_version.items()):
            out.append(f"{v} | {c['last usage alone']} | {c['more']}")
        if self.unreadable:
            out.append(f"lines not read: {len(self.unreadable)}, first {min(self.unreadable)}")
        return out


def count_log(path: Path, acc: CompactCounts) -> None:
    """Add the automatic compactions of one Claude Code log to `acc` (module docstring)."""
    prompt = output = 0
    last_id: object = None
    version = ""
    for line in lines_of(path, acc.unreadable):
        if line.get("isSidechain"):
            continue
        sized = usage_of(line)
        if sized is not None:
            msg = line.get("message")
            msg_id = msg.get("id") if isinstance(msg, dict) else None
            if msg_id != last_id:
                prompt, output, last_id = sized[0], sized[2], msg_id
            output = max(output, sized[2])  # the final usage is on the message's last line
            version = str(line.get("version") or version)
        meta = line.get("compactMetadata")
        if (
            line.get("subtype") == "compact_boundary"
            and isinstance(meta, dict)
            and meta.get("trigger") == "auto"
        ):
            pre = meta.get("preTokens")
            if isinstance(pre, int) and prompt:
                side = "last usage alone" if pre == prompt + output else "more"
                acc.by_version.setdefault(version or "unknown", Counter())[side] += 1


def count(roots: Iterable[Path]) -> CompactCounts:
    """The automatic compactions of every `*.jsonl` log under `roots`."""
    acc = CompactCounts()
    for path, _ in jsonl_logs(roots):
        count_log(path, acc)
    return acc


def main(argv: list[str] | None = None) -> int:
    return main_of("ctxbench.bench.fidelity.compact_count", __doc__ or "", count, argv)


if __name__ == "__main__":
    raise SystemExit(main())
