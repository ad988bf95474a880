"""Every reader fails cleanly (issue 12): malformed traces, request logs and importer logs end in
exit 2 with one line naming file, line and field — never a traceback. Bounded fuzzing (hypothesis
draws the seeds of `ctxbench.bench.robustness.fuzz_inputs`' mutations) plus the cases the issue reported."""

from __future__ import annotations

import contextlib
import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxbench.bench.robustness.fuzz_inputs import IMPORTER_SEEDS, importer_input, mutate_lines, run_cli
from ctxbench.traces.format import TraceError, loads_line

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = [json.loads(x) for x in (ROOT / "traces/samples/coding-short.jsonl").read_text().splitlines()[:14]]
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _one_line_error(argv: list[str]) -> str:
    out = run_cli(argv)
    assert not out.traceback, out.traceback
    assert out.clean, out.stderr
    return out.stderr.strip()


@FUZZ
@given(seed=st.integers(0, 2**32))
def test_fuzzed_trace_lines_fail_cleanly(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    data = mutate_lines(SAMPLE, rng, n_bad=rng.choice((1, 2, 3)))
    for i, raw in enumerate(data, 1):
        with contextlib.suppress(TraceError):
            loads_line(raw, path="t.jsonl", lineno=i)
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(data) + b"\n")
    err = _one_line_error(["check-prefix", str(path)])
    if err.startswith("ctxbench: error:"):
        assert str(path) in err


@FUZZ
@given(seed=st.integers(0, 2**32), fmt=st.sampled_from(sorted(IMPORTER_SEEDS)))
def test_fuzzed_importer_logs_fail_cleanly(tmp_path: Path, seed: int, fmt: str) -> None:
    name, data, _ = importer_input(fmt, random.Random(seed))
    (tmp_path / name).write_bytes(data)
    _one_line_error(["import", str(tmp_path / name), "--format", fmt, "-o", str(tmp_path / "out.jsonl")])
    # the other readers of harness logs: detected from the contents, per session, over a folder
    for argv in (["billed", str(tmp_path / name)], ["fidelity", str(tmp_path / name)]):
        out = run_cli(argv)
        assert not out.traceback, out.traceback
    out = run_cli(["fidelity", "--all-real", str(tmp_path), "--json"])
    assert not out.traceback, out.traceback


def _request_log() -> list[dict]:
    msgs = [{"role": "user", "content": "hi"}]
    out = []
    for k in range(3):
        out.append({"session_id": "s", "body": {"model": "m", "system": "sys", "messages": list(msgs)}})
        msgs += [{"role": "assistant", "content": f"a{k}", "tool_calls": [{"id": f"c{k}"}]}]
    return out


@FUZZ
@given(seed=st.integers(0, 2**32))
def test_fuzzed_request_logs_fail_cleanly(tmp_path: Path, seed: int) -> None:
    data = mutate_lines(_request_log(), random.Random(seed), n_bad=2)
    (tmp_path / "log.jsonl").write_bytes(b"\n".join(data) + b"\n")
    _one_line_error(["check-prefix", str(tmp_path / "log.jsonl")])


# ---------------------------------------------------------------- the cases the issue reported
USER = '{"type":"message","role":"user","content":[{"kind":"text","text":"a"}]}'


def _trace_with(tmp_path: Path, line: str) -> Path:
    head = json.dumps(SAMPLE[0])
    p = tmp_path / "t.jsonl"
    p.write_text(head + "\n" + line + "\n", encoding="utf-8")
    return p


@pytest.mark.parametrize(
    ("line", "field"),
    [
        (USER.replace('"content"', '"t":1' + "0" * 400 + ',"content"'), "t"),
        (USER.replace('"user"', '"assistant","output_tokens":' + "9" * 30), "output_tokens"),
        (USER.replace('"text":"a"', '"bytes":1' + "0" * 400 + ',"key":"k"'), "content[0].bytes"),
        ('{"type":"tools","tools":[{"name":"a","schema":{"x":1e400}}]}', "tools[0].schema.x"),
    ],
)
def test_numbers_past_their_bound_name_the_field(tmp_path: Path, line: str, field: str) -> None:
    p = _trace_with(tmp_path, line)
    for argv in (["check-prefix", str(p)], ["run", str(p), "--policy", "c-default"]):
        err = _one_line_error(argv)
        assert f"{p}:2: field '{field}'" in err, err


def test_request_log_tool_calls_not_a_list_and_deep_nesting(tmp_path: Path) -> None:
    p = tmp_path / "log.jsonl"
    body = {"model": "m", "messages": [{"role": "assistant", "content": "x", "tool_calls": 5}]}
    p.write_text(json.dumps(body) + "\n", encoding="utf-8")
    assert "field 'messages[0].tool_calls'" in _one_line_error(["check-prefix", str(p)])
    p.write_text(json.dumps({"model": "m", "messages": []}) + "\n" + "[" * 100000 + "\n", encoding="utf-8")
    assert f"{p}:2" in _one_line_error(["check-prefix", str(p)])


@pytest.mark.parametrize("fmt", ["claude-code", "codex", "openhands"])
@pytest.mark.parametrize("value", ["Infinity", "[1]", '{"a":1}', "1e400", "-3"])
def test_importer_token_counts_name_file_line_and_field(tmp_path: Path, fmt: str, value: str) -> None:
    name, seed, _ = IMPORTER_SEEDS[fmt]
    key = {
        "claude-code": "cache_read_input_tokens",
        "codex": "cached_input_tokens",
        "openhands": "cache_read_tokens",
    }[fmt]
    text = "\n".join(json.dumps(x) for x in seed).replace(f'"{key}": 100', f'"{key}": {value}', 1)
    text = text.replace(f'"{key}": 800', f'"{key}": {value}', 1)
    assert value in text
    (tmp_path / name).write_text(text + "\n", encoding="utf-8")
    err = _one_line_error(["import", str(tmp_path / name), "--format", fmt, "-o", str(tmp_path / "o.jsonl")])
    assert f"{tmp_path / name}:" in err or f"{name}:" in err, err
    assert key in err, err


@pytest.mark.parametrize("agent", ["../../escape", "a" * 300, "x/y\\z", ".hidden"])
def test_file_names_from_log_content_are_sanitised(tmp_path: Path, agent: str) -> None:
    name, seed, _ = IMPORTER_SEEDS["claude-code"]
    reply = dict(seed[1], uuid="a9", requestId="r9", isSidechain=True, agentId=agent)
    lines = [*(dict(x, agentId=agent) if x.get("agentId") else x for x in seed), reply]
    src = tmp_path / "in" / name
    src.parent.mkdir()
    src.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    out = tmp_path / "out" / "t.jsonl"
    out.parent.mkdir()
    res = run_cli(["import", str(src), "--format", "claude-code", "-o", str(out)])
    assert res.code == 0 and not res.traceback, res.stderr
    written = sorted(p.name for p in out.parent.iterdir())
    assert len(written) == 2 and all(len(n) < 120 for n in written), written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out"]  # nothing escaped the folder


def test_detect_survives_deep_nesting(tmp_path: Path) -> None:
    p = tmp_path / "log.jsonl"
    p.write_bytes(b"[" * 100000 + b"\n")
    assert "unknown trace format" in _one_line_error(["import", str(p), "-o", str(tmp_path / "o.jsonl")])
