"""The CI guard a harness author adopts (issue 30): Codex compactions explained, every break named
with its field, hint and price, SARIF / JUnit output, baselines keyed by content, the plugin strict."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ctxbench.bench.prefix.check import find_breaks
from ctxbench.bench.prefix.ci_formats import format_junit, format_sarif
from ctxbench.bench.prefix.pytest_plugin import PrefixBreakError, assert_prefix_stable
from ctxbench.bench.prefix.report import apply_baseline, baseline_dict, describe
from ctxbench.bench.prefix.request_log import parse_line
from tests.bench.prefix.codex_log import codex_log

DATA = Path(__file__).parents[1] / "data"
pytest_plugins = ["pytester"]


def _check(entries: list, allowed: tuple[str, ...] = ("side_request", "new_conversation")):
    return find_breaks([parse_line(e, i + 1, f"r{i}") for i, e in enumerate(entries)], allowed)


def _body(system: str, msgs: list[tuple[str, str]]) -> dict:
    return {
        "model": "claude-sonnet-4-6",
        "system": system,
        "tools": [{"name": "read", "input_schema": {"type": "object"}}],
        "messages": [{"role": r, "content": c} for r, c in msgs],
    }


def _turns(n: int) -> list[tuple[str, str]]:
    out = [("user", "task: fix it")]
    for k in range(n):
        out += [("assistant", f"calling tool {k}"), ("user", f"tool result {k}: " + "line of output " * 6)]
    return out


def test_codex_compaction_requests_and_restarts_are_explained_however_often_it_compacts() -> None:
    rep = _check(codex_log(compactions=3))
    lines = [describe(b, b in rep.failing) for b in rep.breaks]
    assert rep.ok, lines
    assert [b.cls for b in rep.breaks] == ["side_request", "reset_after_compaction"] * 3
    assert all(b.explained for b in rep.breaks)
    assert not any("unexplained" in x and "recognised" in x for x in lines)


def test_a_rewrite_in_codex_traffic_still_fails() -> None:
    log = codex_log(compactions=1)
    edited = json.loads(json.dumps(log[3]))
    edited["input"][4]["output"] = "rewritten"
    log.insert(4, edited)
    log[5] = {**log[5], "input": [*edited["input"], *log[5]["input"][len(edited["input"]) :]]}
    rep = _check(log)
    assert [b.cls for b in rep.failing] == ["mid_conversation_edit"]


def test_every_break_names_field_hint_and_price() -> None:
    # a timestamp in the system prompt on every request, and later a truncated tool result
    msgs = _turns(4)
    log = [_body(f"You are helpful. Date: 2025-06-0{d} 10:0{d}", msgs[: 2 * d + 1]) for d in range(1, 5)]
    cut = list(msgs[:9])
    cut[4] = ("user", cut[4][1][:30])
    log.append(_body("You are helpful. Date: 2025-06-05 10:05", cut))
    rep = find_breaks([parse_line(e, i + 1, f"r{i}") for i, e in enumerate(log)], ("side_request",))
    stamps = [b for b in rep.failing if b.segment == "system"]
    assert [b.request for b in stamps] == [1, 2, 3, 4]  # every request, not only the last
    assert all(b.cls == "static_prefix_edit" and "time stamp" in b.hint for b in stamps)
    assert stamps[0].path == "system[0]" and "06-01" in stamps[0].before and "06-02" in stamps[0].after
    truncated = [b for b in rep.failing if b.segment == "messages"]
    assert [(b.request, b.cls, b.message) for b in truncated] == [(4, "mid_conversation_edit", 4)]
    assert "truncated" in truncated[0].hint
    assert all(
        b.dollars is not None and b.dollars > 0 and b.model == "claude-sonnet-4-6" for b in rep.failing
    )
    assert rep.dollars == pytest.approx(sum(b.dollars or 0 for b in rep.failing))


def test_tool_reorder_and_schema_edit_are_named() -> None:
    t1 = {"name": "a", "input_schema": {"type": "object", "properties": {"x": {"type": "string"}}}}
    t2 = {"name": "b", "input_schema": {"type": "object"}}
    base = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    nxt = {**base, "messages": [*base["messages"], {"role": "assistant", "content": "a"}]}
    rep = _check([{**base, "tools": [t1, t2]}, {**nxt, "tools": [t2, t1]}])
    assert "tool order" in rep.breaks[0].hint
    t1b = {**t1, "input_schema": {"type": "object", "properties": {"x": {"type": "integer"}}}}
    rep = _check([{**base, "tools": [t1, t2]}, {**nxt, "tools": [t1b, t2]}])
    b = rep.breaks[0]
    assert b.path == "tools[0].input_schema.properties.x.type" and (b.before, b.after) == (
        "string",
        "integer",
    )
    assert "schema of 'a'" in b.hint


def test_sarif_validates_against_the_2_1_0_schema_and_junit_has_one_failure_per_break() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    log = [_body(f"Date: 2025-06-0{d}", _turns(d)) for d in range(1, 4)]
    rep = find_breaks([parse_line(e, i + 1, f"r{i}") for i, e in enumerate(log)])
    assert len(rep.failing) == 2
    sarif = json.loads(format_sarif(rep, "log.jsonl"))
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.validate(sarif, schema)
    results = sarif["runs"][0]["results"]
    assert [r["level"] for r in results] == ["error", "error"]
    assert results[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    assert "system[0]" in results[0]["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
    root = ET.fromstring(format_junit(rep, "log.jsonl"))
    cases = root.findall(".//testcase")
    assert len(cases) == 3 and len(root.findall(".//failure")) == 2
    assert root.find("testsuite").get("failures") == "2"  # type: ignore[union-attr]


def test_baseline_keyed_by_content_survives_added_and_removed_requests() -> None:
    msgs = _turns(5)
    log = [_body("S", msgs[: 2 * d + 1]) for d in range(1, 6)]
    bad = list(msgs)
    bad[2] = ("user", "edited in place")
    log.append(_body("S", bad))
    rep = _check(log)
    assert len(rep.failing) == 1
    base = baseline_dict(rep)
    assert apply_baseline(rep, base).ok
    # two extra requests in front (another session's warm-up), one request left out in the middle
    extra = [{**_body("S", [("user", "other")]), "metadata": {"session_id": "x"}}] * 2
    shifted = _check(extra + log[:2] + log[3:])
    assert shifted.failing and shifted.failing[0].request != rep.failing[0].request
    assert apply_baseline(shifted, base).ok
    # a different edit is not accepted by it
    other = list(bad)
    other[2] = ("user", "edited otherwise")
    assert not apply_baseline(_check([*log[:-1], _body("S", other)]), base).ok


def test_plugin_fails_an_undeclared_history_wipe_unless_allowed(tmp_path: Path) -> None:
    log = [_body("S", _turns(1)), _body("S", _turns(2)), _body("S", [("user", "something else")])]
    with pytest.raises(PrefixBreakError, match="new_conversation"):
        assert_prefix_stable(log)
    assert_prefix_stable(log, allow=("side_request", "new_conversation"))
    base = tmp_path / "b.json"
    rep = find_breaks([parse_line(e, i + 1, "r") for i, e in enumerate(log)], ("side_request",))
    base.write_text(json.dumps(baseline_dict(rep)), encoding="utf-8")
    assert_prefix_stable(log, baseline=base)


PLUGIN_TEST = """
def body(system, msgs):
    return {"model": "m", "system": system, "messages": [{"role": r, "content": c} for r, c in msgs]}

def test_stamped(prefix_log):
    msgs = [("user", "hi")]
    for k in range(4):
        prefix_log.record(body(f"now: 2025-01-01 10:0{k}", msgs))
        msgs = msgs + [("assistant", f"a{k}"), ("user", f"u{k}")]
    prefix_log.assert_stable()
"""


def test_plugin_counts_a_changing_timestamp_on_every_request(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PLUGIN_TEST)
    from importlib.metadata import entry_points

    plugin = "ctxbench.bench.prefix.pytest_plugin"
    load = [] if any(ep.value == plugin for ep in entry_points(group="pytest11")) else ["-p", plugin]
    result = pytester.runpytest(*load, "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "3 failing" in out and "side_request" not in out
    body = out.split("short test summary info")[0]  # under CI pytest repeats the message there, whole
    assert body.count("static_prefix_edit at system block 0") == 3 and "time stamp" in out
