"""The system prompt's size S inferred from the bill (traces/importers/sizing.py `system_size`):
a read right after a recorded compaction is S only where it fits in every prompt of the log."""

from __future__ import annotations

from ctxbench.sim.core.tokens import RateCounter
from ctxbench.traces.importers.sizing import system_size
from ctxbench.traces.model import CompactionEvent, Content, Event, MessageEvent, Usage


def _user(text: str = "go") -> MessageEvent:
    return MessageEvent("user", (Content("text", text, len(text)),))


def _reply(read: int, write: int) -> MessageEvent:
    return MessageEvent("assistant", (Content("text", "ok", 2),), usage=Usage(1, read, write, 0, 5))


def test_a_read_after_a_compaction_that_kept_a_long_prefix_is_not_the_system_prompt() -> None:
    # a resumed session: its first prompt is 172k; a compaction keeps 163k of it; a later request
    # (another model's, after a switch) has a prompt of 56k: the system cannot be 163k
    events: list[Event] = [
        _user(), _reply(0, 172_302), _user(), _reply(172_302, 4_110),
        CompactionEvent(), _reply(163_284, 11_672),
        _user(), _reply(0, 56_064), _user(), _reply(56_064, 1_140),
    ]  # fmt: skip
    s, _, how = system_size(events, RateCounter())
    assert s <= 56_064 and how != "cache read after a recorded compaction"


def test_a_read_after_a_compaction_that_replaced_the_conversation_is_the_system_prompt() -> None:
    events: list[Event] = [
        _user(), _reply(0, 40_000), _user(), _reply(40_000, 30_000),
        CompactionEvent(), _reply(12_000, 3_000), _user(), _reply(15_000, 2_000),
    ]  # fmt: skip
    s, _, how = system_size(events, RateCounter())
    assert (s, how) == (12_000, "cache read after a recorded compaction")
