"""Does a Claude Code turn read the previous prompt in full after a turn with thinking, on a model the
API documents as stripping earlier turns' thinking? (providers.md §1.6: on all Haiku models and on
Opus before 4.5 / Sonnet before 4.6 a user message with content other than tool results strips the
thinking of earlier assistant turns, which breaks the cache from the first stripped block;
sim/core/thinking.py `strips_thinking`; research note bench/claude_code_wire.md §5.)

Read straight from Claude Code's session logs (`*.jsonl` under the folders given): a *turn start*
is the first billed request after a user prompt (content other than tool results; not a meta or
compact-summary line) that follows a turn whose assistant messages held thinking blocks. Counted
only when it was sent within `GAP` seconds of the previous request (no TTL question) and its prompt
did not shrink (no compaction): "full" when it read the previous request's whole prompt (within
max(1 %, 128) tokens, or more), else "less" (what stripping predicts). By model, whether its name
strips, the Claude Code version, and the folder under the roots (the source).

Usage: `python -m ctxbench.bench.fidelity.thinking_kept DIR... [--json]`. Exit 0 when counted, 2
when a folder does not exist. A line that is not a JSON object is counted and named, not read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ctxbench.bench.fidelity.raw_logs import (
    GAP,
    count_each,
    is_prompt,
    line_time,
    lines_of,
    main_of,
    usage_of,
)
from ctxbench.bench.fidelity.results import tolerance
from ctxbench.sim.core.thinking import strips_thinking

Key = tuple[str, bool, str, str]  # (model, strips thinking by name, version, source)


@dataclass
class TurnStarts:
    """Turn starts after a turn with thinking, read in full or not, and the lines not read."""

    counts: dict[Key, Counter[str]] = field(default_factory=dict)
    unreadable: Counter[str] = field(default_factory=Counter)  # "file:line" -> 1

    def add(self, key: Key, full: bool) -> None:
        self.counts.setdefault(key, Counter())["full" if full else "less"] += 1

    def json(self) -> dict[str, object]:
        rows = [
            {"model": m, "strips": s, "version": v, "source": src, **dict(sorted(c.items()))}
            for (m, s, v, src), c in sorted(self.counts.items())
        ]
        return {"turn_starts": rows, "lines_not_read": sorted(self.unreadable)}

    def lines(self) -> list[str]:
        out = ["model | strips by name | version | source | full | less"]
        for (m, s, v, src), c in sorted(self.counts.items()):
            out.append(f"{m} | {'yes' if s else 'no'} | {v} | {src} | {c['full']} | {c['less']}")
        for strips in (True, False):
            tot: Counter[str] = Counter()
            for key, c in self.counts.items():
                if key[1] is strips:
                    tot.update(c)
            label = "stripping" if strips else "keeping"
            out.append(f"all models {label} by name: full {tot['full']}, less {tot['less']}")
        if self.unreadable:
            out.append(
                f"lines not read (not a JSON object): {len(self.unreadable)}, first {min(self.unreadable)}"
            )
        return out


def count_log(path: Path, source: str, acc: TurnStarts) -> None:
    """Add the turn starts of one Claude Code log to `acc` (module docstring)."""
    prev_prompt, prev_id, prev_t = 0, None, None
    thinking_now = thinking_before = False  # thinking in the turn under way / the turn just ended
    start_t: float | None = None  # time of the user prompt awaiting its first request
    for line in lines_of(path, acc.unreadable):
        if line.get("isSidechain"):
            continue
        kind = line.get("type")
        if kind == "user" and is_prompt(line):
            if start_t is None:
                thinking_before, thinking_now = thinking_now, False
            start_t = line_time(line)
        elif kind == "system" and line.get("subtype") == "compact_boundary":
            prev_prompt, thinking_now, thinking_before, start_t = 0, False, False, None
        elif kind == "assistant" and isinstance(msg := line.get("message"), dict):
            content = msg.get("content")
            if isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") == "thinking" for b in content
            ):
                thinking_now = True
            sized = usage_of(line)
            if sized is None or msg.get("id") == prev_id:
                continue
            prompt, read, _ = sized
            model = str(msg.get("model") or "")
            prompt_gap = start_t - prev_t if start_t is not None and prev_t is not None else -1.0
            if thinking_before and prev_prompt and 0 <= prompt_gap < GAP and prompt >= prev_prompt:
                full = read >= prev_prompt - tolerance(prev_prompt)
                acc.add((model, strips_thinking(model), str(line.get("version") or ""), source), full)
            start_t = None
            prev_prompt, prev_id, prev_t = prompt, msg.get("id"), line_time(line) or prev_t


def count(roots: Iterable[Path]) -> TurnStarts:
    """The turn starts of every `*.jsonl` log under `roots` (raw_logs.py `jsonl_logs`)."""
    return count_each(roots, TurnStarts(), count_log)


def main(argv: list[str] | None = None) -> int:
    return main_of("ctxbench.bench.fidelity.thinking_kept", __doc__ or "", count, argv)


if __name__ == "__main__":
    raise SystemExit(main())
