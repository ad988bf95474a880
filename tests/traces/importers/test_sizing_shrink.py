"""A billed prompt that shrinks with no compaction line (traces/importers/sizing_shares.py
`take_back`): the missing tokens come back from the blocks sized last, and the requests that sent
those blocks before the shrink are named in the header's meta (`RESIZED`), so that the fidelity
replay falls back to the naive read on them (bench/fidelity/unsure.py `SIZED_DOWN`)."""

from __future__ import annotations

from ctxbench.bench.fidelity.unsure import SIZED_DOWN, Unsure, unsure
from ctxbench.traces.importers.base import ImportReport
from ctxbench.traces.importers.sizing import size_events
from ctxbench.traces.importers.sizing_shares import RESIZED
from ctxbench.traces.model import Content, Event, Header, MessageEvent, Trace, Usage


def _user(nbytes: int, char: str) -> MessageEvent:  # distinct texts: none is sized as sent again
    return MessageEvent("user", (Content("text", char * nbytes, nbytes=nbytes),))


def _reply(cached: int) -> MessageEvent:
    return MessageEvent(
        "assistant", (Content("text", "ok", nbytes=2),), output_tokens=5, usage=Usage(3, 0, cached, 0, 5)
    )


def _events(last: int) -> list[Event]:
    return [
        _user(40_000, "a"), _reply(10_000), _user(16_000, "b"), _reply(14_000),
        _user(16_000, "c"), _reply(18_000), _user(400, "d"), _reply(last),
    ]  # fmt: skip


def test_requests_that_sent_blocks_a_later_shrink_took_back_are_named() -> None:
    # the last prompt bills 6,000 tokens less than the one before: the round of the third request
    # (4,000) and 2,000 of the second's go back; the second and third requests (numbers 1 and 2)
    # sent those blocks, the first did not, the shrinking one is sized on its own bill
    _, meta = size_events(_events(12_000), "claude-sonnet-4-6", ImportReport("t", "test"), "t")
    assert meta[RESIZED] == [[1, 3]]


def test_a_prompt_that_only_grows_names_none() -> None:
    _, meta = size_events(_events(18_500), "claude-sonnet-4-6", ImportReport("t", "test"), "t")
    assert RESIZED not in meta


def test_the_named_requests_are_unsure_and_the_others_not() -> None:
    doubt = Unsure(sized_down=((1, 3),))
    assert [doubt.at(i) for i in range(4)] == ["", SIZED_DOWN, SIZED_DOWN, ""]


def test_the_spans_are_read_from_the_header_and_a_malformed_one_is_ignored() -> None:
    def trace(spans: object) -> Trace:
        return Trace(Header(source="t", harness="h", model="m", meta={RESIZED: spans}), ())

    assert unsure(trace([[1, 3], [5, 6]])).sized_down == ((1, 3), (5, 6))
    assert unsure(trace([[1, "3"], [2], "x", [4, 5]])).sized_down == ((4, 5),)
    assert unsure(trace({"1": 3})).sized_down == ()
