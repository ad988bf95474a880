"""`traces/schema.json` describes what the reader reads: same line types, fields, enums and rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from ctxbench.traces.codec import (
    CACHE_TTLS,
    CONTENT_FIELDS,
    EVENT_FIELDS,
    HEADER_FIELDS,
    LANGS,
    LINE_TYPES,
    ROLES,
    TAGS,
    TOOL_FIELDS,
    TRIGGERS,
    USAGE_FIELDS,
)
from ctxbench.traces.fields import INTEGER_BOUNDS, NUMBER_BOUNDS
from ctxbench.traces.format import TraceError, dumps_trace, loads_line
from ctxbench.traces.model import Trace
from tests.traces.trace_strategies import traces

ROOT = Path(__file__).resolve().parents[2]
SCHEMA: dict[str, Any] = json.loads((ROOT / "traces" / "schema.json").read_text(encoding="utf-8"))
DEFS: dict[str, Any] = SCHEMA["$defs"]
SAMPLES = sorted((ROOT / "traces" / "samples").glob("*.jsonl"))

jsonschema = pytest.importorskip(
    "jsonschema", reason="jsonschema is not installed: schema validation skipped"
)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def props(name: str) -> set[str]:
    return set(DEFS[name]["properties"])


# -------------------------------------------------- the schema's tables equal the reader's


def test_schema_is_valid_draft_2020_12() -> None:
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_line_types_agree() -> None:
    refs = [r["$ref"].removeprefix("#/$defs/") for r in SCHEMA["oneOf"]]
    assert tuple(refs) == LINE_TYPES
    for name in refs:
        assert DEFS[name]["properties"]["type"] == {"const": name}


def test_fields_agree() -> None:
    assert props("header") == set(HEADER_FIELDS)
    for name, fields in EVENT_FIELDS.items():
        assert props(name) == set(fields), name
    for kind, fields in CONTENT_FIELDS.items():
        assert props(f"content_{kind}") == set(fields), kind
        assert DEFS[f"content_{kind}"]["properties"]["kind"] == {"const": kind}
    assert props("tool") == set(TOOL_FIELDS)
    assert props("usage") == set(USAGE_FIELDS)
    for name in (*LINE_TYPES, *(f"content_{k}" for k in CONTENT_FIELDS), "tool", "usage"):
        assert DEFS[name]["additionalProperties"] is False, name


def test_enums_agree() -> None:
    message = DEFS["message"]["properties"]
    assert tuple(message["role"]["enum"]) == ROLES
    assert tuple(message["tag"]["enum"]) == TAGS
    assert tuple(DEFS["compaction"]["properties"]["trigger"]["enum"]) == TRIGGERS
    assert tuple(DEFS["content_text"]["properties"]["lang"]["enum"]) == LANGS
    for kind in CONTENT_FIELDS:
        assert tuple(DEFS[f"content_{kind}"]["properties"]["cache"]["enum"]) == CACHE_TTLS


def _numeric_properties(node: Any) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    if isinstance(node, dict):
        for name, prop in (node.get("properties") or {}).items():
            if isinstance(prop, dict) and prop.get("type") in ("integer", "number") and "const" not in prop:
                out.append((name, prop))
        for v in node.values():
            out += _numeric_properties(v)
    elif isinstance(node, list):
        for v in node:
            out += _numeric_properties(v)
    return out


def test_bounds_agree() -> None:
    """Every number in the schema has the reader's upper bound as its `maximum`."""
    found = _numeric_properties(SCHEMA)
    assert found
    for name, prop in found:
        table = INTEGER_BOUNDS if prop["type"] == "integer" else NUMBER_BOUNDS
        assert prop.get("maximum") == table[name], name
    assert DEFS["t"]["maximum"] == NUMBER_BOUNDS["t"]


MINIMAL = {
    "header": {"type": "header", "format": "ctxbench-trace", "version": 1, "source": "s"},
    "system": {"type": "system", "content": [{"kind": "text", "text": "x"}]},
    "tools": {"type": "tools", "tools": [{"name": "a", "bytes": 3}]},
    "message": {"type": "message", "role": "user", "content": [{"kind": "text", "text": "x"}]},
    "model_switch": {"type": "model_switch", "model": "m"},
    "compaction": {"type": "compaction"},
    "resume": {"type": "resume"},
}


@pytest.mark.parametrize("kind", LINE_TYPES)
def test_required_fields_agree(kind: str) -> None:
    """Each line type's minimal line is valid for both; dropping a schema-required field fails both."""
    line = MINIMAL[kind]
    assert VALIDATOR.is_valid(line)
    loads_line(json.dumps(line))
    assert set(DEFS[kind]["required"]) == set(line)
    for field in DEFS[kind]["required"]:
        smaller = {k: v for k, v in line.items() if k != field}
        assert not VALIDATOR.is_valid(smaller)
        with pytest.raises(TraceError):
            loads_line(json.dumps(smaller))


BOTH_REJECT = [
    '{"type":"message","role":"user","output_tokens":3,"content":[{"kind":"text","text":"a"}]}',
    '{"type":"message","role":"assistant","content":[{"kind":"text","text":"a","bytes":3}]}',
    '{"type":"message","role":"assistant","content":[{"kind":"text","bytes":3}]}',
    '{"type":"message","role":"assistant","content":[{"kind":"image","bytes":3,"key":"k","width":1,"height":1}]}',
    '{"type":"message","role":"user","content":[{"kind":"image","bytes":3,"key":"k","width":0,"height":1}]}',
    '{"type":"message","role":"user","content":[]}',
    '{"type":"tools","tools":[{"name":"a","bytes":3,"schema":{}}]}',
    '{"type":"system","content":[{"kind":"thinking","text":"a"}]}',
    '{"type":"header","format":"ctxbench-trace","version":2,"source":"s"}',
    '{"type":"compaction","trigger":"whim"}',
    '{"type":"model_switch","model":"m","extra":1}',
    '{"type":"model_switch","model":"m","window":1000000001}',
    '{"type":"message","role":"user","t":1e11,"content":[{"kind":"text","text":"a"}]}',
    '{"type":"message","role":"user","t":1' + "0" * 400 + ',"content":[{"kind":"text","text":"a"}]}',
    '{"type":"message","role":"assistant","usage":{"cache_read":' + "9" * 30 + '},'
    '"content":[{"kind":"text","text":"a"}]}',
]


@pytest.mark.parametrize("line", BOTH_REJECT)
def test_malformed_lines_rejected_by_both(line: str) -> None:
    assert not VALIDATOR.is_valid(json.loads(line))
    with pytest.raises(TraceError):
        loads_line(line)


# -------------------------------------------------- every line we write is schema-valid


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_sample_lines_validate(sample: Path) -> None:
    for n, line in enumerate(sample.read_text(encoding="utf-8").splitlines(), 1):
        errors = list(VALIDATOR.iter_errors(json.loads(line)))
        assert not errors, f"{sample.name}:{n}: {errors[0].message}"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=traces())
def test_written_random_traces_validate(trace: Trace) -> None:
    for line in dumps_trace(trace).splitlines():
        errors = list(VALIDATOR.iter_errors(json.loads(line)))
        assert not errors, errors[0].message


def test_format_md_documents_every_field() -> None:
    doc = (ROOT / "traces" / "FORMAT.md").read_text(encoding="utf-8")
    fields = {*HEADER_FIELDS, *TOOL_FIELDS, *USAGE_FIELDS, *LINE_TYPES, *CONTENT_FIELDS}
    fields |= {f for table in (EVENT_FIELDS, CONTENT_FIELDS) for names in table.values() for f in names}
    fields |= {*TAGS, *TRIGGERS, *LANGS, *CACHE_TTLS} - {""}
    missing = sorted(f for f in fields if f"`{f}`" not in doc)
    assert not missing, f"FORMAT.md does not mention: {missing}"
