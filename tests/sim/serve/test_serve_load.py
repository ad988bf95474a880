"""ctxbench serve under load: 50 conversations at once, straight or through the recording proxy,
plain or streamed: every request answered and on both ledgers, in order, credentials redacted."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from ctxbench.sim.serve.proxy import start_proxy, stop_proxy
from ctxbench.sim.serve.record import REDACTED
from ctxbench.sim.serve.server import ServeConfig, start_background, stop

anthropic = pytest.importorskip("anthropic", reason="the `live` extra (anthropic SDK) is not installed")
openai = pytest.importorskip("openai", reason="the `live` extra (openai SDK) is not installed")

SYSTEM = [{"type": "text", "text": "You are a careful agent. " * 300, "cache_control": {"type": "ephemeral"}}]
MODEL = "claude-sonnet-4-6"


def _conversation(url: str, k: int) -> list[int]:
    a = anthropic.Anthropic(api_key="sk-ant-secret-key", base_url=url, max_retries=0, timeout=30)
    msgs: list[dict] = []
    reads = []
    for turn in range(4):
        msgs.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": f"conversation {k} turn {turn} " + "y " * 600,
                        "cache_control": {"type": "ephemeral"},
                    }
                ],
            }
        )
        m = a.messages.create(
            model=MODEL,
            max_tokens=20,
            system=SYSTEM,
            messages=msgs,
            extra_headers={"x-session-id": f"conv{k}"},
        )
        reads.append(m.usage.cache_read_input_tokens)
        msgs[-1]["content"][0].pop("cache_control")
        msgs.append({"role": "assistant", "content": m.content[0].text})
    return reads


@pytest.mark.parametrize("through_proxy", [False, True])
def test_load_50_concurrent_conversations(tmp_path, through_proxy: bool) -> None:
    srv, _ = start_background(ServeConfig(ledger=str(tmp_path / "serve.jsonl")))
    proxy = None
    try:
        url = srv.url
        if through_proxy:
            proxy, _ = start_proxy(srv.url, str(tmp_path / "proxy.jsonl"))
            url = proxy.url
        with ThreadPoolExecutor(50) as ex:
            results = list(ex.map(lambda k: _conversation(url, k), range(50)))
        assert all(r[0] == 0 or r[0] > 0 for r in results) and all(r[-1] > 0 for r in results)
    finally:
        if proxy is not None:
            stop_proxy(proxy)
        stop(srv)
    for path in ["serve.jsonl"] + (["proxy.jsonl"] if through_proxy else []):
        lines = [json.loads(x) for x in (tmp_path / path).read_text(encoding="utf-8").splitlines()]
        assert len(lines) == 200 and sorted(x["seq"] for x in lines) == list(range(1, 201))
        assert all(x["status"] == 200 and x["usage"]["output"] == 1 for x in lines), path
        assert all(
            REDACTED in (x["headers"].get("x-api-key"), x["headers"].get("authorization")) for x in lines
        )
        assert "sk-ant-secret-key" not in (tmp_path / path).read_text(encoding="utf-8")
        per_conv: dict[str, int] = {}
        for x in lines:
            per_conv[x["body"]["messages"][0]["content"][0]["text"].split()[1]] = (
                per_conv.get(x["body"]["messages"][0]["content"][0]["text"].split()[1], 0) + 1
            )
        assert sorted(per_conv.values()) == [4] * 50


def _streamed_conversation(url: str, k: int, sdk: str) -> int:
    """Four streamed turns of one conversation; returns the last turn's cached input tokens."""
    history = f"conversation {k} " + "z " * 1200
    last = 0
    if sdk == "anthropic":
        a = anthropic.Anthropic(api_key="sk-ant-secret-key", base_url=url, max_retries=0, timeout=30)
        msgs: list[dict] = []
        for turn in range(4):
            msgs.append({"role": "user", "content": f"{history} turn {turn}"})
            with a.messages.stream(
                model=MODEL,
                max_tokens=20,
                system=SYSTEM,
                messages=msgs,
                extra_headers={"x-session-id": f"s{k}"},
            ) as s:
                m = s.get_final_message()
            last = m.usage.cache_read_input_tokens or 0
            msgs.append({"role": "assistant", "content": m.content[0].text})
        return last
    o = openai.OpenAI(api_key="sk-openai-secret-key", base_url=url + "/v1", max_retries=0, timeout=30)
    cmsgs: list[dict] = [{"role": "system", "content": "You are careful. " * 400}]
    for turn in range(4):
        cmsgs.append({"role": "user", "content": f"{history} turn {turn}"})
        text, usage = "", None
        for chunk in o.chat.completions.create(
            model="gpt-5", messages=cmsgs, stream=True, stream_options={"include_usage": True}, user=f"s{k}"
        ):
            if chunk.choices and chunk.choices[0].delta.content:
                text += chunk.choices[0].delta.content
            usage = chunk.usage or usage
        assert usage is not None
        last = usage.prompt_tokens_details.cached_tokens or 0
        cmsgs.append({"role": "assistant", "content": text})
    return last


@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_load_50_concurrent_streaming_conversations_through_proxy(tmp_path, sdk: str) -> None:
    """50 streamed conversations through proxy → serve at once: 0 lost on either ledger."""
    srv, _ = start_background(ServeConfig(ledger=str(tmp_path / "serve.jsonl")))
    proxy, _ = start_proxy(srv.url, str(tmp_path / "proxy.jsonl"))
    try:
        with ThreadPoolExecutor(50) as ex:
            reads = list(ex.map(lambda k: _streamed_conversation(proxy.url, k, sdk), range(50)))
        if sdk == "anthropic":  # the default anthropic profile caches at the marks the SDK call sent
            assert all(r > 0 for r in reads)
    finally:
        stop_proxy(proxy)
        stop(srv)
    for path in ("serve.jsonl", "proxy.jsonl"):
        text = (tmp_path / path).read_text(encoding="utf-8")
        lines = [json.loads(x) for x in text.splitlines()]
        assert sorted(x["seq"] for x in lines) == list(range(1, 201)), path
        assert all(x["status"] == 200 and x["usage"]["output"] >= 1 for x in lines), path
        assert "secret-key" not in text
