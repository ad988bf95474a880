"""`recorded` compaction (policies/recorded.py): a recorded compaction's summary replaces the
conversation after the pinned messages, followed by the latest messages the harness kept
(`kept_from`, Claude Code 2.1.x preservedSegment), never by the summariser's own request."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from ctxbench.policies.recorded import RecordedCompaction, RecordedMarks
from ctxbench.policies.view import View
from ctxbench.sim.core.content import Message
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.core.transcript import Transcript

F = BlockFactory()


def _view(tags: list[str]) -> View:
    tr = Transcript((), (F.text("system", None, 2000, key="sys"),))
    for i, tag in enumerate(tags):
        role = "assistant" if i % 2 else "user"
        tr.append(Message.of(role, (F.text(role, None, 100 + i, key=f"m{i}"),), tag))
    return View(tr, None, 200_000, 200_000, 0, -1, True, factory=F)


SUMMARY = Message.of("user", (F.text("user", None, 500, key="summary"),), "summary")


@given(n=st.integers(1, 12), keep=st.integers(-2, 14))
def test_the_summary_then_the_last_messages_kept(n: int, keep: int) -> None:
    view = _view(["prompt"] * n)
    edit = RecordedCompaction().recorded(view, SUMMARY, keep)
    kept = max(0, min(keep, n))
    assert edit.first == 0
    assert edit.messages == (SUMMARY, *view.tr.messages[n - kept :])
    assert edit.kept == kept


def test_the_summarisers_request_is_not_kept() -> None:
    """A merged summariser request (its instruction and reply, tagged "summary") sits between the
    kept messages and the boundary: it is dropped, and the kept ones are no longer the last."""
    view = _view(["prompt", "reply", "tool_results", "summary", "summary"])
    edit = RecordedCompaction().recorded(view, SUMMARY, 4)
    assert edit.messages == (SUMMARY, view.tr.messages[1], view.tr.messages[2])
    assert edit.kept == 0


def test_without_kept_messages_only_the_summary() -> None:
    view = _view(["prompt", "reply"])
    assert RecordedCompaction().recorded(view, SUMMARY).messages == (SUMMARY,)
    assert RecordedCompaction().recorded(view, None).messages == ()


def _marked(tags: list[str], cache: list[str]) -> View:
    """Messages of these tags (a reply is the assistant's), each one's block marked with `cache`."""
    tr = Transcript((), (F.text("system", None, 2000, key="sys"),))
    for i, (tag, c) in enumerate(zip(tags, cache, strict=True)):
        role = "assistant" if tag == "reply" else "user"
        block = replace(F.text(role, None, 100 + i, key=f"m{i}"), cache=c)
        tr.append(Message.of(role, (block,), tag))
    return View(tr, None, 200_000, 200_000, 0, -1, True, factory=F)


def _message_marks(view: View) -> list[int]:
    """The messages RecordedMarks marks (system marks left out)."""
    tr = view.tr
    marks = RecordedMarks().place(view)
    return sorted(bisect_right(tr.msg_starts, p) - 1 for p, _ in marks if p >= tr.system_end)


def test_an_unmarked_summariser_instruction_is_marked_one_api_message_back() -> None:
    """Claude Code's skipCacheWrite: the instruction (its own user message in the trace, merged
    with the tool results before it on the wire) carries no mark; the reply before them does."""
    tags = ["prompt", "reply", "tool_results", "reply", "tool_results", "summary"]
    assert _message_marks(_marked(tags, ["5m", "", "5m", "", "5m", ""])) == [2, 3]
    # recorded on the instruction itself (an imported summariser request): marked there
    assert _message_marks(_marked(tags, ["5m", "", "5m", "", "5m", "5m"])) == [4, 5]
    # a trace that records no marks: the last two messages, as before
    assert _message_marks(_marked(tags, [""] * 6)) == [4, 5]


def test_prompt_only_marks_the_newest_recorded_mark_alone() -> None:
    """Cline CLI 3.x (`prompt_only`): one mark, on the newest block that carries a recorded one
    (the user's latest prompt), none on the tool loop after it nor on the system prompt."""
    tags = ["prompt", "reply", "tool_results", "reply", "prompt", "reply", "tool_results"]
    view = _marked(tags, ["5m", "", "", "", "1h", "", ""])
    marks = RecordedMarks(prompt_only=True).place(view)
    assert marks == ((view.tr.msg_starts[4], "1h"),)
    assert RecordedMarks(prompt_only=True).place(_marked(tags, [""] * 7)) == ()  # nothing recorded
    view.tr.truncate_messages(4)  # the index follows edits: the older prompt again
    assert RecordedMarks(prompt_only=True).place(view) == ((view.tr.msg_starts[0], "5m"),)
