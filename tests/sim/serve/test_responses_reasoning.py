"""Reasoning items on the Responses API (Codex CLI with `store: false` asks for them back with
`include: ["reasoning.encrypted_content"]`): `ctxbench serve` answers with one, as reasoning models
do, and a reasoning item in an input joins the assistant turn whose call follows it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ctxbench.sim.runner import factory_for
from ctxbench.sim.serve.server import CtxServer, ServeConfig, start_background, stop
from ctxbench.sim.serve.wire import RESPONSES, parse

openai = pytest.importorskip("openai", reason="the `live` extra (openai SDK) is not installed")


@pytest.fixture()
def server() -> Iterator[CtxServer]:
    srv, _ = start_background(ServeConfig(profile="openai-auto", model="gpt-5.1"))
    yield srv
    stop(srv)


def test_reasoning_item_only_when_asked(server: CtxServer) -> None:
    o = openai.OpenAI(api_key="sk-x", base_url=server.url + "/v1", max_retries=0, timeout=20)
    plain = o.responses.create(model="gpt-5.1-codex", input="hi")
    assert [i.type for i in plain.output] == ["message"]
    asked = o.responses.create(model="gpt-5.1-codex", input="hi", include=["reasoning.encrypted_content"])
    assert [i.type for i in asked.output] == ["reasoning", "message"]
    assert asked.output[0].encrypted_content
    with o.responses.stream(model="gpt-5.1-codex", input="hi", include=["reasoning.encrypted_content"]) as s:
        final = s.get_final_response()
    assert final.output[0].type == "reasoning" and final.output[0].encrypted_content


def test_a_reasoning_item_opens_the_assistant_turn_of_its_call() -> None:
    body = {
        "model": "gpt-5.1",
        "input": [
            {"role": "user", "content": "run it"},
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"},
            {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "done"},
            {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "opaque 2"},
        ],
    }
    p = parse(RESPONSES, body, {}, factory_for("gpt-5.1"))
    assert [(m.role, [b.kind for b in m.blocks]) for m in p.messages] == [
        ("user", ["text"]),
        ("assistant", ["thinking", "tool_use"]),
        ("user", ["tool_result"]),
        ("assistant", ["thinking"]),
    ]
