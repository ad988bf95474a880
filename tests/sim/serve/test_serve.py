"""ctxbench serve: SDKs parse every response; errors have the real 4xx shapes; the cache key follows
the bytes sent (load: test_serve_load.py; redaction: test_redaction_rules.py)."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.sim.serve.server import CtxServer, ServeConfig, start_background, stop

anthropic = pytest.importorskip("anthropic", reason="the `live` extra (anthropic SDK) is not installed")
openai = pytest.importorskip("openai", reason="the `live` extra (openai SDK) is not installed")

SYSTEM = [{"type": "text", "text": "You are a careful agent. " * 300, "cache_control": {"type": "ephemeral"}}]
MODEL = "claude-sonnet-4-6"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CtxServer]:
    ledger = tmp_path_factory.mktemp("serve") / "requests.jsonl"
    srv, _ = start_background(ServeConfig(ledger=str(ledger)))
    yield srv
    stop(srv)


def _a(srv: CtxServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="sk-ant-secret", base_url=srv.url, max_retries=0, timeout=20)


def _o(srv: CtxServer) -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-secret", base_url=srv.url + "/v1", max_retries=0, timeout=20)


def test_anthropic_nonstream_and_stream_usage(server: CtxServer) -> None:
    a = _a(server)
    msgs = [{"role": "user", "content": "hello"}]
    first = a.messages.create(
        model=MODEL, max_tokens=50, system=SYSTEM, messages=msgs, extra_headers={"x-session-id": "t1"}
    )
    assert first.usage.cache_creation_input_tokens > 1024 and first.usage.cache_read_input_tokens == 0
    assert first.usage.cache_creation.ephemeral_5m_input_tokens == first.usage.cache_creation_input_tokens
    with a.messages.stream(
        model=MODEL, max_tokens=50, system=SYSTEM, messages=msgs, extra_headers={"x-session-id": "t1"}
    ) as s:
        again = s.get_final_message()
    assert again.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert again.usage.input_tokens == first.usage.input_tokens  # after the last breakpoint (§1.9)
    assert again.content[0].type == "text" and again.stop_reason == "end_turn"
    assert a.messages.count_tokens(model=MODEL, messages=msgs).input_tokens > 0


def test_openai_chat_and_responses_all_paths(server: CtxServer) -> None:
    o = _o(server)
    msgs = [{"role": "user", "content": "hi"}]
    gpt = "gpt-5.1-codex"  # priced as gpt-5.1 (sim/data/models.yaml)
    c = o.chat.completions.create(model=gpt, messages=msgs)
    assert c.usage.prompt_tokens > 0 and c.usage.prompt_tokens_details.cached_tokens == 0
    chunks = list(
        o.chat.completions.create(
            model=gpt, messages=msgs, stream=True, stream_options={"include_usage": True}
        )
    )
    assert chunks[-1].usage.prompt_tokens == c.usage.prompt_tokens
    with o.chat.completions.stream(model=gpt, messages=msgs, stream_options={"include_usage": True}) as s:
        assert s.get_final_completion().usage.total_tokens == c.usage.total_tokens
    r = o.responses.create(model=gpt, input="hi")
    assert r.output_text == "ok" and r.usage.input_tokens_details.cached_tokens == 0
    with o.responses.stream(model=gpt, input="hi") as s:
        assert s.get_final_response().usage.input_tokens == r.usage.input_tokens


def test_tool_use_round_trip_streams(server: CtxServer) -> None:
    """A task-mode reply with a tool call parses on all three APIs, streaming and not."""
    from ctxbench.sim.serve.script import Scripter

    server.state.scripter = Scripter("task", [{"shell": "echo hi"}] * 6)
    try:
        tools_a = [
            {
                "name": "Bash",
                "description": "run",
                "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
            }
        ]
        m = _a(server).messages.create(
            model=MODEL, max_tokens=50, tools=tools_a, messages=[{"role": "user", "content": "go"}]
        )
        assert m.stop_reason == "tool_use" and m.content[-1].input == {"command": "echo hi"}
        with _a(server).messages.stream(
            model=MODEL, max_tokens=50, tools=tools_a, messages=[{"role": "user", "content": "go"}]
        ) as s:
            assert s.get_final_message().content[-1].input == {"command": "echo hi"}
        tools_o = [
            {
                "type": "function",
                "function": {
                    "name": "bash",
                    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
                },
            }
        ]
        c = _o(server).chat.completions.create(
            model="gpt-5", tools=tools_o, messages=[{"role": "user", "content": "go"}]
        )
        assert json.loads(c.choices[0].message.tool_calls[0].function.arguments) == {"command": "echo hi"}
        with _o(server).chat.completions.stream(
            model="gpt-5", tools=tools_o, messages=[{"role": "user", "content": "go"}]
        ) as s:
            assert s.get_final_completion().choices[0].message.tool_calls[0].function.name == "bash"
        tools_r = [
            {
                "type": "function",
                "name": "exec_command",
                "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
            }
        ]
        with _o(server).responses.stream(model="gpt-5", tools=tools_r, input="go") as s:
            call = s.get_final_response().output[0]
        assert call.type == "function_call" and json.loads(call.arguments) == {"cmd": "echo hi"}
    finally:
        from ctxbench.sim.serve.script import Scripter as S

        server.state.scripter = S()


def test_a_shell_tool_that_takes_a_list_of_commands(server: CtxServer) -> None:
    """Cline CLI 3.x's `run_commands` (`commands`: an array of strings), listed after a server tool:
    the task's shell step calls it with the one command in the list."""
    from ctxbench.sim.serve.script import Scripter

    server.state.scripter = Scripter("task", [{"shell": "echo hi"}])
    try:
        schema = {
            "type": "object",
            "properties": {"commands": {"type": "array", "items": {"type": "string"}}},
        }
        tools = [
            {"type": "web_search_20250305", "name": "web_search"},
            {"name": "run_commands", "description": "run", "input_schema": schema},
        ]
        m = _a(server).messages.create(
            model=MODEL, max_tokens=50, tools=tools, messages=[{"role": "user", "content": "go"}]
        )
        assert (m.content[-1].name, m.content[-1].input) == ("run_commands", {"commands": ["echo hi"]})
    finally:
        from ctxbench.sim.serve.script import Scripter as S

        server.state.scripter = S()


def test_fast_mode_is_its_own_model_for_price_and_cache(server: CtxServer) -> None:
    """`speed: "fast"` (Opus 4.6): billed at the model's `-fast` row, with a cache of its own
    (providers.md §1.6), the reply's model unchanged and its usage saying the speed; fast mode on a
    model without fast prices, or another speed, is a 400 invalid_request_error."""
    system = [{"type": "text", "text": "You are helpful. " * 2000, "cache_control": {"type": "ephemeral"}}]
    seen = []
    for speed in ("standard", "fast", "fast", "standard"):
        m = _a(server).messages.create(
            model="claude-opus-4-6",
            max_tokens=5,
            system=system,  # type: ignore[arg-type]
            messages=[{"role": "user", "content": "hi"}],
            extra_body={"speed": speed},
        )
        assert m.model == "claude-opus-4-6" and m.usage.model_dump()["speed"] == speed
        seen.append((m.usage.cache_creation_input_tokens > 0, m.usage.cache_read_input_tokens > 0))
    assert seen == [(True, False), (True, False), (False, True), (False, True)]
    for model, speed in (("claude-sonnet-4-5", "fast"), ("claude-opus-4-6", "turbo")):
        with pytest.raises(anthropic.BadRequestError) as e:
            _a(server).messages.create(
                model=model,
                max_tokens=5,
                messages=[{"role": "user", "content": "hi"}],
                extra_body={"speed": speed},
            )
        assert e.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]


def _post(srv: CtxServer, path: str, body: bytes) -> tuple[int, dict]:
    host, port = srv.server_address[:2]
    conn = http.client.HTTPConnection(str(host), int(port), timeout=10)
    conn.request("POST", path, body=body, headers={"content-type": "application/json", "x-api-key": "k"})
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, json.loads(data)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=8),
    lambda c: (
        st.lists(c, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "model",
                    "max_tokens",
                    "messages",
                    "role",
                    "content",
                    "type",
                    "text",
                    "tools",
                    "system",
                    "input",
                    "cache_control",
                    "ttl",
                    "stream",
                    "tool_use_id",
                    "source",
                    "data",
                    "name",
                    "id",
                    "tool_calls",
                    "function",
                    "arguments",
                    "image_url",
                    "url",
                    "instructions",
                    "call_id",
                    "output",
                ]
            ),
            c,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(
    path=st.sampled_from(
        ["/v1/messages", "/v1/chat/completions", "/v1/responses", "/v1/messages/count_tokens"]
    ),
    body=JSONISH,
)
def test_fuzzed_bodies_never_5xx(server: CtxServer, path: str, body: object) -> None:
    status, resp = _post(server, path, json.dumps(body).encode())
    assert status < 500, resp
    if status >= 400:
        if path.startswith("/v1/messages"):
            assert resp["type"] == "error" and resp["error"]["type"] and resp["error"]["message"]
        else:
            assert set(resp["error"]) >= {"message", "type", "param", "code"}


@pytest.mark.parametrize("raw", [b"", b"{", b"\xff\xfe", b"[1,2", b'{"model": 1}', b"null", b"1e999999"])
def test_malformed_json_is_400(server: CtxServer, raw: bytes) -> None:
    for path in ("/v1/messages", "/v1/chat/completions", "/v1/responses"):
        status, _ = _post(server, path, raw)
        assert 400 <= status < 500


def test_too_long_and_too_many_breakpoints(server: CtxServer) -> None:
    big = "word " * 1_000_000  # ~1.1M tokens at 4.48 B/token > the 200k-or-1M window
    with pytest.raises(anthropic.BadRequestError, match="prompt is too long"):
        _a(server).messages.create(model=MODEL, max_tokens=5, messages=[{"role": "user", "content": big}])
    with pytest.raises(openai.BadRequestError) as e:
        _o(server).chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": big}])
    assert e.value.code == "context_length_exceeded"
    cc = {"type": "ephemeral"}
    blocks = [{"type": "text", "text": f"b{i}", "cache_control": cc} for i in range(5)]
    with pytest.raises(anthropic.BadRequestError, match="maximum of 4 blocks"):
        _a(server).messages.create(model=MODEL, max_tokens=5, messages=[{"role": "user", "content": blocks}])


def test_key_order_in_tool_input_breaks_prefix(server: CtxServer) -> None:
    """providers.md §1.1: the same tool input with its keys reordered is a different prefix."""

    def conv(inp: dict) -> list:
        return [
            {"role": "user", "content": "x " * 3000},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": inp}]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": "r",
                        "cache_control": {"type": "ephemeral"},
                    }
                ],
            },
        ]

    a = _a(server)
    h = {"x-session-id": "order"}
    a.messages.create(model=MODEL, max_tokens=5, messages=conv({"a": 1, "b": 2}), extra_headers=h)
    same = a.messages.create(model=MODEL, max_tokens=5, messages=conv({"a": 1, "b": 2}), extra_headers=h)
    swapped = a.messages.create(model=MODEL, max_tokens=5, messages=conv({"b": 2, "a": 1}), extra_headers=h)
    assert same.usage.cache_read_input_tokens > 0 and swapped.usage.cache_read_input_tokens == 0
