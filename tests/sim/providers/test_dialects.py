"""One owner of wire facts (sim/providers/dialects.py): the simulated providers and the server
answer every fault with the same status, type and text, and read sessions the same way."""

from __future__ import annotations

import pytest

from ctxbench.sim.core.names import FAULT_KINDS, TTLS, FaultKind
from ctxbench.sim.providers.dialects import (
    DIALECTS,
    FAULT_TEXT,
    as_dialect,
    fault_error,
    fault_kind_of,
    too_long,
)
from ctxbench.sim.providers.registry import make_provider
from ctxbench.sim.serve.render import DIALECT_OF_API, error_body
from ctxbench.sim.serve.wire import ANTHROPIC, CHAT, RESPONSES, session_of
from tests.sim.providers.conftest import request, say, transcript


def test_every_dialect_has_every_fault_and_a_stream_cut_arrives_after_200() -> None:
    assert set(FAULT_TEXT) == set(DIALECTS)
    for dialect, table in FAULT_TEXT.items():
        assert tuple(table) == FAULT_KINDS, dialect
        assert table["stream_error"][0] == 200  # providers.md §1.12, §2.5, §5
        assert all(row[0] >= 400 for kind, row in table.items() if kind != "stream_error")


@pytest.mark.parametrize("api", [ANTHROPIC, CHAT, RESPONSES])
@pytest.mark.parametrize("kind", [k for k in FAULT_KINDS if k != "stream_error"])
def test_served_fault_status_is_the_simulated_one(api: str, kind: FaultKind) -> None:
    dialect = DIALECT_OF_API[api]
    simulated = fault_error(dialect, kind, 2.0)
    status, body = error_body(api, simulated, "req_1")
    assert status == simulated.status
    err = body["error"]
    assert err["type"] == simulated.type and err["message"] == simulated.message
    assert fault_kind_of(dialect, status) == kind  # what the reference driver reads back


def test_fault_of_another_providers_model_is_rendered_in_the_clients_api() -> None:
    p = make_provider("openai-auto", "gpt-4.1", 0, faults={"scripted": {0: "timeout"}})
    tr = transcript()
    say(tr, "user", "u", 500)
    err = p.call(request(tr, 0), 0.0).error
    assert err is not None and err.status == 408  # OpenAI: the SDK's timeout status (§2.5)
    status, body = error_body(ANTHROPIC, err, "req_1")
    assert (status, body["error"]["type"]) == (504, "timeout_error")  # Anthropic §1.12


def test_stream_cut_on_a_request_not_streamed_gets_its_types_status() -> None:
    cut = fault_error("openai-chat", "stream_error", None)
    assert as_dialect("anthropic", cut).status == 529  # overloaded_error
    assert as_dialect("openai-chat", cut).status == 500  # server_error
    assert as_dialect("openai-chat", cut, streamed=True).status == 200


def test_too_long_carries_the_apis_param_and_text() -> None:
    status, body = error_body(CHAT, too_long("anthropic", 150_000, 128_000), "r", 128_000, 150_000)
    assert status == 400 and body["error"]["param"] == "messages"
    assert body["error"]["code"] == "context_length_exceeded"
    assert "128000 tokens" in body["error"]["message"] and "150000 tokens" in body["error"]["message"]
    status, body = error_body(ANTHROPIC, too_long("openai-chat", 9, 8), "r", 8, 9)
    assert body["error"]["message"] == "prompt is too long: 9 tokens > 8 maximum"
    assert body["request_id"] == "r"


def test_ttl_names_are_spelled_once() -> None:
    assert TTLS == ("5m", "1h")


@pytest.mark.parametrize(
    ("headers", "body", "wrapper", "expected"),
    [
        ({"X-Claude-Code-Session-Id": "cc"}, {"prompt_cache_key": "k"}, None, "cc"),
        ({}, {"metadata": {"user_id": '{"session_id": "s1", "account": "a"}'}}, None, "s1"),
        ({}, {"metadata": {"user_id": "user_abc"}}, None, "user_abc"),
        ({}, {"prompt_cache_key": "codex-1"}, None, "codex-1"),
        ({}, {"session_id": "or-1", "prompt_cache_key": "k"}, None, "or-1"),
        ({"session-id": "h"}, {}, {"session_id": "w"}, "w"),
        ({}, {"user": "u"}, None, "u"),
        ({}, {}, None, None),
    ],
)
def test_one_session_reading(
    headers: dict[str, str], body: dict[str, object], wrapper: dict[str, object] | None, expected: str | None
) -> None:
    assert session_of(headers, body, wrapper) == expected
