"""Every malformed trace is a TraceError that names the file, the line and (for JSON) the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxbench.traces.format import TraceError, iter_events, read_trace

SHORT = Path(__file__).resolve().parents[2] / "traces" / "samples" / "game-short.jsonl"
HEADER = '{"type":"header","format":"ctxbench-trace","version":1,"source":"test"}'
USE = json.dumps(
    {
        "type": "message",
        "role": "assistant",
        "content": [{"kind": "tool_use", "id": "u1", "name": "o", "text": "{}"}],
    }
)


def msg(role: str, *items: dict[str, Any], **fields: Any) -> str:
    return json.dumps({"type": "message", "role": role, **fields, "content": list(items)})


def text(**kw: Any) -> dict[str, Any]:
    return {"kind": "text", "text": "x", **kw}


def image(**kw: Any) -> dict[str, Any]:
    return {"kind": "image", "width": 1280, "height": 720, "bytes": 9, "key": "k", **kw}


# (event line after header + USE, field named, words in the reason)
CASES: list[tuple[str, str | None, str]] = [
    (msg("user", text(turn="yes")), "content[0].turn", "expected true or false"),
    (msg("user", text(), image(width=-3)), "content[1].width", "expected a positive integer, got -3"),
    (msg("user", image(height=0)), "content[0].height", "positive integer"),
    (msg("user", image(width=1.5)), "content[0].width", "positive integer"),
    (msg("user", image(width=True)), "content[0].width", "positive integer"),
    (msg("user", {"kind": "image", "width": 1, "height": 1, "key": "k"}), "content[0].bytes", "missing"),
    (msg("user", text(bytes=3)), "content[0].text", "exactly one of 'text' or 'bytes'"),
    (msg("user", {"kind": "text"}), "content[0].text", "exactly one"),
    (msg("user", {"kind": "text", "bytes": 5}), "content[0].key", "non-empty 'key'"),
    (msg("user", text(colour="red")), "content[0].colour", "unknown field"),
    (msg("user", {"kind": "video", "bytes": 1}), "content[0].kind", "expected one of"),
    (msg("user", {"text": "x"}), "content[0].kind", "missing required field"),
    (msg("user", "just a string"), "content[0]", "expected an object"),
    (msg("user", text(lang="klingon")), "content[0].lang", "expected one of"),
    (msg("user", text(pinned="yes")), "content[0].pinned", "true or false"),
    (msg("user", text(tokens=-1)), "content[0].tokens", "non-negative integer"),
    (msg("user", text(text=7)), "content[0].text", "expected a string"),
    (
        msg("user", {"kind": "tool_use", "id": "a", "name": "b", "text": "{}"}),
        "content[0].kind",
        "expected one of",
    ),
    (
        msg("assistant", {"kind": "image", "width": 1, "height": 1, "bytes": 1, "key": "k"}),
        "content[0].kind",
        "",
    ),
    (msg("assistant", {"kind": "tool_use", "name": "b", "text": "{}"}), "content[0].id", "missing"),
    (
        msg("user", {"kind": "tool_result", "tool_use_id": "zz", "text": "r"}),
        "content[0].tool_use_id",
        "no earlier",
    ),
    (
        msg("assistant", {"kind": "tool_use", "id": "u1", "name": "b", "text": "{}"}),
        "content[0].id",
        "already used",
    ),
    (msg("user", text(), output_tokens=3), "output_tokens", "only an assistant"),
    (msg("user", text(), usage={}), "usage", "only an assistant"),
    (msg("assistant", text(), usage={"cache_read": -1}), "usage.cache_read", "non-negative integer"),
    (msg("assistant", text(), usage={"cost": "1"}), "usage.cost", "non-negative number"),
    (msg("assistant", text(), usage={"hits": 1}), "usage.hits", "unknown field"),
    (msg("user", text(), t=-1), "t", "non-negative number"),
    (msg("user", text(), t=None), "t", "got null"),
    (msg("user", text(tokens=None)), "content[0].tokens", "got null"),
    (msg("assistant", text(), usage=None), "usage", "expected an object, got null"),
    ('{"type":"compaction","kept_from":null}', "kept_from", "got null"),
    (msg("user", text(), game_t="noon"), "game_t", "non-negative number"),
    (msg("user", text(), tag="chat"), "tag", "expected one of"),
    (msg("robot", text()), "role", "expected one of"),
    (msg("user"), "content", "at least one"),
    ('{"type":"message","role":"user"}', "content", "missing required field"),
    ('{"type":"message","role":"user","content":{}}', "content", "expected an array"),
    ('{"type":"tools","tools":[{"name":"a","bytes":1,"x":1}]}', "tools[0].x", "unknown field"),
    ('{"type":"tools","tools":[{"name":"a","schema":[1]}]}', "tools[0].schema", "expected an object"),
    ('{"type":"tools","tools":[{"name":"a"}]}', "tools[0].schema", "exactly one of 'schema' or 'bytes'"),
    (
        '{"type":"tools","tools":[{"name":"a","bytes":1},{"name":"a","bytes":2}]}',
        "tools[1].name",
        "duplicate",
    ),
    ('{"type":"tools","tools":[{"name":"","bytes":1}]}', "tools[0].name", "non-empty"),
    (
        '{"type":"system","content":[{"kind":"image","width":1,"height":1,"bytes":1,"key":"k"}]}',
        "content[0].kind",
        "",
    ),
    ('{"type":"model_switch"}', "model", "missing required field"),
    ('{"type":"compaction","kept_from":5}', "kept_from", "only 1 messages precede"),
    ('{"type":"compaction","trigger":"whim"}', "trigger", "expected one of"),
    ('{"type":"snapshot"}', "type", "unknown line type"),
    ('{"role":"user"}', "type", "missing required field"),
    ('{"type":7}', "type", "unknown line type"),
    (HEADER, "type", "a second header"),
    ('{"type":"message","type":"message"}', "type", "duplicate key"),
    ('{"type":"system","t":NaN,"content":[]}', None, "NaN"),
    ('{"type":"system",', None, "invalid JSON at column"),
    ("[1, 2]", None, "expected a JSON object per line"),
    ("", None, "empty line"),
    ("[" * 100_000, None, "nested too deeply"),
    (
        '{"type":"message","role":"user","content":[{"kind":"text","text":"\\ud800"}]}',
        "content[0].text",
        "surrogate",
    ),
]


def write(tmp_path: Path, body: bytes | str, name: str = "x.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(body if isinstance(body, bytes) else body.encode("utf-8"))
    return path


@pytest.mark.parametrize(("line", "field", "words"), CASES)
def test_malformed_line(tmp_path: Path, line: str, field: str | None, words: str) -> None:
    path = write(tmp_path, f"{HEADER}\n{USE}\n{line}\n")
    with pytest.raises(TraceError) as info:
        read_trace(path)
    err = info.value
    assert (err.path, err.line, err.field) == (str(path), 3, field)
    assert str(err).startswith(f"{path}:3: " + (f"field '{field}': " if field else ""))
    assert words in str(err)


@pytest.mark.parametrize(
    ("body", "line", "words"),
    [
        (b"", 1, "empty file"),
        (USE.encode() + b"\n", 1, "expected the header"),
        (
            b'{"type":"header","format":"ctxbench-trace","version":2,"source":"s"}\n',
            1,
            "unsupported version 2",
        ),
        (b'{"type":"header","format":"other","version":1,"source":"s"}\n', 1, "expected 'ctxbench-trace'"),
        (b'{"type":"header","format":"ctxbench-trace","source":"s"}\n', 1, "field 'version': missing"),
        (b'{"type":"header","format":"ctxbench-trace","version":1}\n', 1, "field 'source': missing"),
        (
            b'{"type":"header","format":"ctxbench-trace","version":1,"source":"s","meta":[]}\n',
            1,
            "field 'meta'",
        ),
        (
            HEADER.encode() + b'\n{"type":"system","content":[{"kind":"text","text":"\xff"}]}\n',
            2,
            "not valid UTF-8",
        ),
        (b"\xef\xbb\xbf" + HEADER.encode() + b"\n", 1, "byte order mark"),
        (HEADER.encode() + b"\n\n", 2, "empty line"),
    ],
)
def test_malformed_file(tmp_path: Path, body: bytes, line: int, words: str) -> None:
    path = write(tmp_path, body)
    with pytest.raises(TraceError) as info:
        read_trace(path)
    assert info.value.line == line
    assert str(info.value).startswith(f"{path}:{line}: ")
    assert words in str(info.value)


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "trace.jsonl"
    with pytest.raises(TraceError, match="no such trace file") as info:
        read_trace(path)
    assert str(path) in str(info.value)
    with pytest.raises(TraceError):
        read_trace(tmp_path)  # a directory


def test_iter_events_streams_until_the_error(tmp_path: Path) -> None:
    path = write(tmp_path, f"{HEADER}\n{USE}\n{{}}\n")
    items = iter_events(path)
    assert next(items).source == "test"  # type: ignore[union-attr]
    assert next(items).role == "assistant"  # type: ignore[union-attr]
    with pytest.raises(TraceError, match=":3: field 'type'"):
        next(items)


# ---------------------------------------------------------------- fuzzing

SAMPLE_LINES = SHORT.read_text(encoding="utf-8").splitlines()
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=5), inner, max_size=2),
    max_leaves=4,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _no_constants(name: str) -> None:
    raise ValueError(name)


@st.composite
def mutated_files(draw: st.DrawFn) -> tuple[int, bytes]:
    """The short sample with one line mutated: a value replaced, a field removed or added, the
    text cut or spliced with random bytes."""
    lines = [s.encode("utf-8") for s in SAMPLE_LINES]
    i = draw(st.integers(0, len(lines) - 1))
    obj = json.loads(lines[i])
    how = draw(st.sampled_from(("replace", "remove", "add", "cut", "splice", "garbage")))
    if how in ("replace", "remove", "add"):
        path = draw(st.sampled_from(_paths(obj)))
        parent = obj
        for step in path[:-1]:
            parent = parent[step]
        if how == "replace":
            parent[path[-1]] = draw(JSON_VALUES)
        elif how == "remove":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(JSON_VALUES)
        lines[i] = json.dumps(obj, ensure_ascii=draw(st.booleans())).encode("utf-8")
    elif how == "cut":
        lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    elif how == "splice":
        at = draw(st.integers(0, len(lines[i])))
        lines[i] = lines[i][:at] + draw(st.binary(min_size=1, max_size=6)) + lines[i][at:]
    else:
        lines[i] = draw(st.binary(max_size=40))
    return i + 1, b"\n".join(lines) + b"\n"


@pytest.fixture(scope="module")
def fuzzdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=mutated_files())
def test_fuzzed_lines_fail_cleanly(case: tuple[int, bytes], fuzzdir: Path) -> None:
    lineno, body = case
    path = write(fuzzdir, body, "fuzz.jsonl")
    try:
        read_trace(path)
    except TraceError as err:
        assert err.path == str(path)
        assert err.line >= 1
        assert str(err).startswith(f"{path}:{err.line}: ")
        if err.field is not None:
            assert f"field '{err.field}': " in str(err)
        raw = body.split(b"\n")[err.line - 1]
        try:
            parsed = json.loads(raw.decode("utf-8"), parse_constant=_no_constants)
        except (UnicodeDecodeError, ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict) and err.line == lineno:
            assert err.field is not None, f"an error in a JSON object names a field: {err}"
