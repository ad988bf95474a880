"""`recorded` compaction (policies/recorded.py): a recorded compaction's summary replaces the
conversation after the pinned messages, followed by the latest messages the harness kept
(`kept_from`, Claude Code 2.1.x preservedSegment), never by the summariser's own request."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxbench.policies.recorded import RecordedCompaction
from ctxbench.policies.view import View
from ctxbench.sim.content import Message
from ctxbench.sim.tokens import BlockFactory
from ctxbench.sim.transcript import Transcript

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
