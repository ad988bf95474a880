"""The fast path of the trace reader (`traces/fastread.py`) against the strict one (`traces/codec.py`).

Its contract is one-sided: when it returns an event, the strict decoder returns an equal one (never
an error); on any line it is not sure of it returns None and the strict decoder decides. These
properties draw valid traces (every field kind) and mutated lines (the reader fuzz's mutations plus
duplicate keys, spelled-out defaults and escaped colons), and check that the fast path is taken for
what the writer writes, so a fast path that silently gave up on everything would fail too.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxbench.bench.robustness.fuzz_inputs import mutate
from ctxbench.traces import format as format_module
from ctxbench.traces.codec import decode_line
from ctxbench.traces.fastread import fast_message
from ctxbench.traces.format import FAST_READ_BYTES, TraceError, _parse, dumps_event, loads_line, read_trace
from ctxbench.traces.model import Content, MessageEvent, Trace
from tests.traces.trace_strategies import traces

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def strict(line: str | bytes) -> Any:
    """The strict decoder alone (what `loads_line` runs when the fast path gives up)."""
    return decode_line(_parse(line, "t.jsonl", 1))


def _agrees(line: str | bytes) -> MessageEvent | None:
    fast = fast_message(line)
    if fast is not None:
        slow = strict(line)  # raises if the fast path accepted a line the strict one refuses
        assert fast == slow
        assert list(vars(fast)) == list(vars(slow))
        for a, b in zip(fast.content, slow.content, strict=True):
            assert list(vars(a)) == list(vars(b))
    return fast


@SETTINGS
@given(trace=traces())
def test_written_messages_take_the_fast_path_and_read_back_equal(trace: Trace) -> None:
    for event in trace.events:
        line = dumps_event(event)
        fast = _agrees(line)
        if isinstance(event, MessageEvent):
            assert fast == event
            assert _agrees(line.encode("utf-8")) == event
        else:
            assert fast is None


MESSAGE = {
    "type": "message",
    "role": "assistant",
    "tag": "reply",
    "t": 3.5,
    "output_tokens": 40,
    "usage": {"input_tokens": 3, "cache_read": 100, "cost": 0.25},
    "request_id": "req:1",
    "content": [
        {"kind": "text", "text": "a: b: c"},
        {"kind": "tool_use", "id": "tu:1", "name": "Bash", "bytes": 120, "lang": "json", "key": "in:1"},
        {"kind": "thinking", "bytes": 300, "key": "th1", "tokens": 70, "cache": "5m"},
    ],
}
USER = {
    "type": "message",
    "role": "user",
    "content": [
        {"kind": "image", "bytes": 9000, "width": 640, "height": 480, "key": "shot:1", "pinned": True},
        {"kind": "tool_result", "tool_use_id": "tu:1", "bytes": 50, "key": "out:1", "is_error": True},
    ],
}


@settings(max_examples=400, deadline=None)
@given(seed=st.integers(0, 2**32), which=st.sampled_from((MESSAGE, USER)))
def test_mutated_lines_are_decided_as_the_strict_reader_decides(seed: int, which: dict[str, Any]) -> None:
    _agrees(mutate(which, random.Random(seed)))


def _duplicate(text: str, key: str, value: str) -> str:
    """`text` with a second `"key": value` pair inserted right after the first `"key":...` one."""
    at = text.index(f'"{key}":')
    return text[:at] + f'"{key}":{value},' + text[at:]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("tag", '"reply"'),  # the same value twice
        ("tag", '"prep"'),
        ("request_id", '"x:y:z"'),  # colons inside the dropped value
        ("text", '"one: two"'),  # inside a content item
        ("cache_read", "100"),  # inside usage
        ("kind", '"text"'),  # the tag field of a content item
        ("type", '"message"'),  # the tag field of the line
    ],
)
def test_a_duplicate_key_anywhere_is_left_to_the_strict_reader(key: str, value: str) -> None:
    line = _duplicate(json.dumps(MESSAGE, separators=(",", ":")), key, value)
    assert fast_message(line) is None
    with pytest.raises(TraceError, match="duplicate key"):
        loads_line(line)


@pytest.mark.parametrize(
    "line",
    [
        # a default spelled out (valid: the strict reader reads it; the colon count cannot tell)
        json.dumps({**USER, "pinned": False}),
        json.dumps({**USER, "tag": ""}),
        # an escaped colon: a duplicate could hide behind it
        json.dumps(MESSAGE).replace('"req:1"', '"req\\u003a1"'),
        json.dumps(MESSAGE).replace('"req:1"', '"req\\u003A1"'),
    ],
)
def test_lines_the_colon_count_cannot_judge_are_read_strictly(line: str) -> None:
    assert fast_message(line) is None
    assert loads_line(line) == strict(line)


def test_the_fast_path_keeps_every_strict_rule_it_checks_in_python() -> None:
    bad = [
        {**USER, "content": [{"kind": "text", "text": "x", "bytes": 3}]},  # text and bytes
        {**USER, "content": [{"kind": "text", "bytes": 3}]},  # a size without a key
        {**USER, "content": [{"kind": "text", "bytes": 3, "key": ""}]},
        {**USER, "content": [{"kind": "tool_use", "id": "a", "name": "b", "text": ""}]},  # not a user kind
        {**USER, "output_tokens": 3},  # only a reply carries it
        {**USER, "content": []},
        {**MESSAGE, "usage": {"input_tokens": True}},
        {**MESSAGE, "t": -1},
    ]
    for value in bad:
        line = json.dumps(value)
        assert fast_message(line) is None
        with pytest.raises(TraceError):
            loads_line(line)


def test_content_made_by_the_fast_path_is_a_plain_content() -> None:
    fast = fast_message(json.dumps(MESSAGE))
    assert fast is not None
    made = fast.content[1]
    assert made == Content("tool_use", None, 120, "json", "in:1", tool_id="tu:1", name="Bash")
    assert hash(made) == hash(Content("tool_use", None, 120, "json", "in:1", tool_id="tu:1", name="Bash"))
    with pytest.raises(AttributeError):
        made.kind = "text"  # type: ignore[misc]


@pytest.mark.parametrize(
    "bad",
    [
        _duplicate(json.dumps(MESSAGE, separators=(",", ":")), "tag", '"prep"'),
        json.dumps({**USER, "content": [{"kind": "text", "bytes": 3}]}),
        json.dumps(MESSAGE).replace('"t": 3.5', '"t": 1e400'),
        json.dumps(MESSAGE).replace('"req:1"', '"\\ud800"'),
    ],
)
def test_a_large_file_names_the_same_error_as_a_small_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    """Files from FAST_READ_BYTES on read message lines through the fast path: their errors are the
    strict reader's, word for word."""
    header = json.dumps({"type": "header", "format": "ctxbench-trace", "version": 1, "source": "t"})
    filler = json.dumps({**MESSAGE, "content": [{"kind": "text", "text": "x"}]})
    n = FAST_READ_BYTES // len(filler) + 10
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join([header, *[filler] * n, bad, filler]) + "\n")
    with pytest.raises(TraceError) as fast:
        read_trace(path)
    monkeypatch.setattr(format_module, "FAST_READ_BYTES", 10**12)
    with pytest.raises(TraceError) as slow:
        read_trace(path)
    assert str(fast.value) == str(slow.value)
    assert f":{n + 2}:" in str(fast.value)
