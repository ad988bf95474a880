"""Writer and reader agree: random traces survive write -> read; samples survive read -> write."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from ctxbench.traces.format import TraceError, dumps_event, dumps_trace, loads_line, read_trace, write_trace
from ctxbench.traces.model import Content, Header, MessageEvent, ToolDef, ToolsEvent, Trace
from tests.traces.trace_strategies import traces

SAMPLES = sorted((Path(__file__).resolve().parents[2] / "traces" / "samples").glob("*.jsonl"))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("roundtrip")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=traces())
def test_random_trace_round_trips(trace: Trace, workdir: Path) -> None:
    path = workdir / "t.jsonl"
    write_trace(trace, path)
    back = read_trace(path)
    assert back.header == trace.header
    assert back.events == trace.events
    assert back.path == str(path)
    assert dumps_trace(back) == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_samples_rewrite_byte_identical(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / sample.name
    write_trace(read_trace(sample), out)
    assert out.read_bytes() == sample.read_bytes()


def test_there_are_samples() -> None:
    assert {p.name for p in SAMPLES} >= {"game-300.jsonl", "game-60.jsonl", "game-short.jsonl"}


def test_write_to_stream_equals_write_to_path(tmp_path: Path) -> None:
    trace = read_trace(SAMPLES[0])
    buf = io.StringIO()
    write_trace(trace, buf)
    write_trace(trace, tmp_path / "x.jsonl")
    assert buf.getvalue() == (tmp_path / "x.jsonl").read_text(encoding="utf-8")


def test_defaults_are_omitted() -> None:
    msg = MessageEvent("user", (Content("text", text="hi"),))
    assert dumps_event(msg) == '{"type":"message","role":"user","content":[{"kind":"text","text":"hi"}]}'
    header = dumps_event(Header(source="s"))
    assert header == '{"type":"header","format":"ctxbench-trace","version":1,"source":"s"}'
    # zero is not the default of an optional clock: t=0.0 is written, t=None is not
    assert '"t":0.0' in dumps_event(MessageEvent("user", (Content("text", text="a"),), t=0.0))


def test_tool_schema_is_an_object_stored_canonically() -> None:
    line = '{"type":"tools","tools":[{"name":"a","schema":{"b":[1,2],"a":{"y":1,"x":"é"}}}]}'
    tools = loads_line(line)
    assert isinstance(tools, ToolsEvent)
    assert tools.tools[0].schema == '{"a":{"x":"é","y":1},"b":[1,2]}'


def test_writer_refuses_what_the_reader_would_reject(tmp_path: Path) -> None:
    bad = [
        Trace(
            Header(source="s"), (MessageEvent("user", (Content("tool_result", text="x", tool_id="nope"),)),)
        ),
        Trace(Header(source="s"), (MessageEvent("user", (Content("image", nbytes=3, key="k"),)),)),
        Trace(
            Header(source="s"), (MessageEvent("user", (Content("text", nbytes=3),)),)
        ),  # sized without a key
        Trace(Header(source="s"), (MessageEvent("user", (Content("text", text="x", name="n"),)),)),
        Trace(Header(source="s"), (ToolsEvent((ToolDef("a", schema='{"b":1, "a":2}'),)),)),
        Trace(Header(source="s", version=2), ()),
        Trace(Header(source="s", meta={"x": float("nan")}), ()),
    ]
    for i, trace in enumerate(bad):
        path = tmp_path / f"bad{i}.jsonl"
        with pytest.raises(TraceError) as info:
            write_trace(trace, path)
        assert str(path) in str(info.value)
        assert not path.exists(), "a refused trace leaves no partial file"
