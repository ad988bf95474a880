"""Claude Code's `<system-reminder>` attachments, placed where the harness puts them at another setting.

Claude Code appends reminders to tool results (research/policies.md §1 attachments; seen in every
recorded ledger of tests/serve/data/whatif): a long one announcing the agents and tools again on the
first tool result after each compaction (~400 tokens here) and a short task-list reminder every few
turns, its count restarted by a compaction. Where they fall depends on where the harness compacted,
so a task rebuilt from a run at one setting carries them at that run's compaction points; predicting
another setting with them left there puts ~100-400 tokens on the wrong turns, enough to move a
trigger near its threshold by a turn (bench/whatif_report.md, Claude Code 140k -> 120k).

`replace_reminders` takes the texts from the recording (what the trace knows: a recording without a
compaction holds the post-compaction one too, as the first message's announcement), strips them, and
appends them again where the rule below puts them for a given list of compaction turns;
`bench.live.whatif.predict` iterates: simulate, place the reminders for the predicted compactions,
simulate again, until the compactions no longer move. The rule's numbers are config values
measured on the recorded Claude Code 2.1.197 ledgers (tests/serve/data/whatif/claude-code-*).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ctxbench.sim.core.content import TOOL_RESULT, Message
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.prepared import PreparedTrace
from ctxbench.sim.serve.wire.common import lang_of

OPEN = "<system-reminder>"
CLOSE = "</system-reminder>"


@dataclass(frozen=True)
class ReminderRule:
    """Where Claude Code appends its reminders (measured on the 2.1.197 what-if ledgers: task-list
    reminder at turns 5, 10, 15 without compaction; after a compaction at turn c, c+4 then every 5;
    the agent listing on turn c's tool result once compacted, see `turns_for`)."""

    period: int = 5  # task-list reminder every 5 turns (turns 5, 10, 15 in the 140k run)
    after_compaction: int = 4  # ... and 4 turns after a compaction (8 -> 12, 13 -> 17, 17 -> 21)
    # The post-compaction reminder announces again what the session's first message announced: in
    # the 100k, 120k and 140k ledgers it is that message's agent listing reminder, byte for byte
    # (1,788 bytes), so a recording without a compaction shows it too.
    announced: str = "Available agent types"


def _split(text: str) -> tuple[str, str]:
    """(tool output, appended reminders) of a tool result's text."""
    i = text.find("\n" + OPEN)
    if i < 0:
        i = text.find(OPEN)
    return (text, "") if i < 0 else (text[:i], text[i:])


def _tool_result_steps(prep: PreparedTrace) -> list[int]:
    return [
        i
        for i, s in enumerate(prep.steps)
        if s.kind == "message"
        and s.message is not None
        and s.message.role == "user"
        and any(b.kind == TOOL_RESULT for b in s.message.blocks)
    ]


def _announced(prep: PreparedTrace, rule: ReminderRule) -> str:
    """The reminder of the session's first message that the harness announces again after a
    compaction (`ReminderRule.announced`), as the post-compaction reminder carries it ("" if none)."""
    first = next((s.message for s in prep.steps if s.message is not None and s.message.role == "user"), None)
    for b in first.blocks if first is not None else ():
        text = b.text or ""
        i = text.find(f"{OPEN}\n{rule.announced}")
        end = text.find(CLOSE, i) if i >= 0 else -1
        if end >= 0:
            return "\n" + text[i : end + len(CLOSE)]
    return ""


def texts_of(
    prep: PreparedTrace, compactions: list[int], rule: ReminderRule | None = None
) -> tuple[str, str]:
    """(post-compaction reminder, periodic reminder) texts as recorded ("" when none was); without
    a compaction, the post-compaction one is what the first message announced (`_announced`)."""
    after, periodic = "", ""
    for turn, i in enumerate(_tool_result_steps(prep), 1):
        msg = prep.steps[i].message
        assert msg is not None
        for b in msg.blocks:
            if b.kind == TOOL_RESULT and b.text:
                tail = _split(b.text)[1]
                if tail and turn in compactions:
                    after = after or tail
                elif tail:
                    periodic = periodic or tail
    return after or _announced(prep, rule or ReminderRule()), periodic


def turns_for(rule: ReminderRule, turns: int, compactions: list[int]) -> dict[int, str]:
    """Turn -> "after" | "periodic": which reminder the tool result of each turn carries.

    The harness appends the post-compaction reminder to turn c's tool result in the requests
    *after* the compaction only (the compaction request carries it without: recorded ledgers), which
    a task of one message per turn cannot say; it is put on turn c+1's tool result instead, so that
    it is never counted in the estimate that decides the compaction at c. The post-compaction
    request is then billed ~400 tokens short, every later one is the same."""
    out: dict[int, str] = {}
    last = 0
    for t in range(1, turns + 1):
        if t in compactions:
            last = t - (rule.period - rule.after_compaction)
            if t + 1 <= turns:
                out[t + 1] = "after"
        elif t in out:
            continue
        elif t - last >= rule.period:
            out[t] = "periodic"
            last = t
    return out


def replace_reminders(
    prep: PreparedTrace,
    f: BlockFactory,
    texts: tuple[str, str],
    compactions: list[int],
    rule: ReminderRule | None = None,
) -> PreparedTrace:
    """`prep` with its tool results' reminders stripped and appended again for `compactions`."""
    rule = rule or ReminderRule()
    idx = _tool_result_steps(prep)
    where = turns_for(rule, len(idx), compactions)
    steps = list(prep.steps)
    for turn, i in enumerate(idx, 1):
        msg = steps[i].message
        assert msg is not None
        add = {"after": texts[0], "periodic": texts[1]}.get(where.get(turn, ""), "")
        blocks = []
        for n, b in enumerate(msg.blocks):
            if b.kind != TOOL_RESULT or b.text is None:
                blocks.append(b)
                continue
            body = _split(b.text)[0]
            text = body + add if n == len(msg.blocks) - 1 or add == "" else body
            if text == b.text:
                blocks.append(b)
            else:
                blocks.append(f.text("user", text, kind=TOOL_RESULT, lang=lang_of(text), tool_id=b.tool_id))
        steps[i] = replace(steps[i], message=Message.of(msg.role, tuple(blocks), msg.tag))
    return replace(prep, steps=tuple(steps))
