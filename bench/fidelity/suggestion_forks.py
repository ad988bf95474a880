"""Does a Claude Code turn start read the previous prompt *and the response that ended the turn*?
It does when something the log does not show sent the conversation with that response marked in
between: Claude Code's prompt suggestion, a forked query (`querySource:"prompt_suggestion"`) sent
when a turn ends, over the whole conversation with a cache mark on the response (cli.js 2.1.50+
`skipCacheWrite:!0`; before, the last two messages are marked anyway). It is sent only in an
interactive main thread, after two replies or more, from Claude Code 2.0.67, where
`CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION`, a server-side flag (none in 2.1.14-2.1.30; from 2.1.40
`tengu_chomp_inflection`, default on up to 2.1.80, off from 2.1.88) and the
`promptSuggestionEnabled` setting allow it (traces/importers/claude_code_wire.py
`PROMPT_SUGGESTIONS_FROM`). No line of the transcript records it: whether a session's turns start
on the response or on the previous prompt is the account's, not the log's (research note
bench/claude_code_wire.md §6).

Read straight from Claude Code's session logs (`*.jsonl` under the folders given): a *turn start*
is the first billed request after a user prompt (content other than tool results; not a meta or
compact-summary line) in the main thread, sent within `GAP` seconds of the previous request (the
fork's 5-minute entry is alive) with a prompt no smaller than the previous one (no compaction), and
whose previous response's final output is long enough to tell the two apart (`RENDER_SLACK` +
2 `EXACT` tokens). It is "response" when it read the previous prompt and that output (less
`RENDER_SLACK` at most: the response as sent back is a few tokens shorter than as generated),
"prompt" when it read the previous prompt (to `EXACT` tokens: an entry is read whole), "less" or
"more" otherwise; by Claude Code version and the folder under the roots (the source).

Usage: `python -m ctxbench.bench.fidelity.suggestion_forks DIR... [--json]`. Exit 0 when counted,
2 when a folder does not exist. A line that is not a JSON object is counted and named, not read.
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

# The response as the next request sends it back counts a few tokens less than its output (the
# development part's turn starts that read it: 3 less, on Claude Code 2.1.62-2.1.150).
RENDER_SLACK = 16
EXACT = 8  # a read of the previous request's entry is its prompt, to a few tokens
KINDS = ("response", "prompt", "less", "more")

Key = tuple[str, str]  # (Claude Code version, source)


@dataclass
class SuggestionForks:
    """Turn starts by what they read, and the lines not read."""

    counts: dict[Key, Counter[str]] = field(default_factory=dict)
    unreadable: Counter[str] = field(default_factory=Counter)  # "file:line" -> 1

    def add(self, key: Key, kind: str) -> None:
        self.counts.setdefault(key, Counter())[kind] += 1

    def json(self) -> dict[str, object]:
        rows = [
            {"version": v, "source": src, **{k: c[k] for k in KINDS}}
            for (v, src), c in sorted(self.counts.items())
        ]
        return {"turn_starts": rows, "lines_not_read": sorted(self.unreadable)}

    def lines(self) -> list[str]:
        out = ["version | source | " + " | ".join(KINDS)]
        total: Counter[str] = Counter()
        for (v, src), c in sorted(self.counts.items()):
            out.append(f"{v} | {src} | " + " | ".join(str(c[k]) for k in KINDS))
            total.update(c)
        out.append("all: " + ", ".join(f"{k} {total[k]}" for k in KINDS))
        if self.unreadable:
            out.append(
                f"lines not read (not a JSON object): {len(self.unreadable)}, first {min(self.unreadable)}"
            )
        return out


def reads_response(read: int, prev_prompt: int, prev_output: int) -> bool:
    """Whether `read` is the previous prompt and the response after it (less `RENDER_SLACK` at
    most), beyond the previous prompt alone (more than `EXACT` past it)."""
    extra = read - prev_prompt
    return extra > EXACT and prev_output - RENDER_SLACK <= extra <= prev_output


def kind_of(read: int, prev_prompt: int, prev_output: int) -> str:
    """What a turn start read against the previous prompt (an entry is read to the token: within
    `EXACT`) and the previous response's output."""
    if reads_response(read, prev_prompt, prev_output):
        return "response"
    if abs(read - prev_prompt) <= EXACT:
        return "prompt"
    return "less" if read < prev_prompt else "more"


def count_log(path: Path, source: str, acc: SuggestionForks) -> None:
    """Add the turn starts of one Claude Code log to `acc` (module docstring)."""
    prev_prompt = prev_output = 0
    prev_id: object = None
    prev_t: float | None = None
    start_t: float | None = None  # time of the user prompt awaiting its first request
    for line in lines_of(path, acc.unreadable):
        if line.get("isSidechain"):
            continue
        kind = line.get("type")
        if kind == "user" and is_prompt(line):
            start_t = line_time(line)
        elif kind == "system" and line.get("subtype") == "compact_boundary":
            prev_prompt, start_t = 0, None
        elif kind == "assistant" and isinstance(msg := line.get("message"), dict):
            sized = usage_of(line)
            if sized is None:
                continue
            prompt, read, output = sized
            if msg.get("id") == prev_id:  # a later line of the same message: its final output
                prev_output = max(prev_output, output)
                continue
            gap = start_t - prev_t if start_t is not None and prev_t is not None else -1.0
            told = prev_output > RENDER_SLACK + 2 * EXACT
            if prev_prompt and 0 <= gap < GAP and prompt >= prev_prompt and told:
                acc.add((str(line.get("version") or ""), source), kind_of(read, prev_prompt, prev_output))
            start_t = None
            prev_prompt, prev_output, prev_id = prompt, output, msg.get("id")
            prev_t = line_time(line) or prev_t


def count(roots: Iterable[Path]) -> SuggestionForks:
    """The turn starts of every `*.jsonl` log under `roots` (raw_logs.py `jsonl_logs`)."""
    return count_each(roots, SuggestionForks(), count_log)


def main(argv: list[str] | None = None) -> int:
    return main_of("ctxbench.bench.fidelity.suggestion_forks", __doc__ or "", count, argv)


if __name__ == "__main__":
    raise SystemExit(main())
