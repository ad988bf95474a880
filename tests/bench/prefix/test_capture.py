"""One-line capture (bench/prefix/capture.py) with each official SDK against `ctxbench serve`,
then check-prefix on the captured file: a clean conversation passes, a rewritten turn fails."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxbench.bench.prefix.capture import capture
from ctxbench.bench.prefix.check import find_breaks
from ctxbench.bench.prefix.request_log import read_request_log
from ctxbench.sim.serve.server import CtxServer, ServeConfig, start_background, stop

SYSTEM = "You are a careful agent. " * 200


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CtxServer]:
    srv, _ = start_background(ServeConfig(ledger=str(tmp_path_factory.mktemp("serve") / "ledger.jsonl")))
    yield srv
    stop(srv)


def _check(path: Path):
    with path.open(encoding="utf-8") as f:
        return find_breaks(read_request_log(f, str(path)))


def _turns(send, rewrite: bool) -> None:
    msgs = [{"role": "user", "content": "first question"}]
    for k in range(3):
        reply = send(msgs)
        msgs = [*msgs, {"role": "assistant", "content": reply}, {"role": "user", "content": f"next {k}"}]
        if rewrite and k == 1:
            msgs[0] = {"role": "user", "content": "first question, edited"}


@pytest.mark.parametrize("rewrite", [False, True])
def test_anthropic_capture(server: CtxServer, tmp_path: Path, rewrite: bool) -> None:
    anthropic = pytest.importorskip("anthropic")
    log = tmp_path / "requests.jsonl"
    client = capture(anthropic.Anthropic(api_key="k", base_url=server.url, max_retries=0, timeout=20), log)

    def send(msgs: list) -> str:
        r = client.messages.create(model="claude-sonnet-4-6", max_tokens=50, system=SYSTEM, messages=msgs)
        return "".join(b.text for b in r.content if b.type == "text") or "ok"

    _turns(send, rewrite)
    rep = _check(log)
    assert rep.requests == 3
    assert rep.ok is not rewrite  # the rewritten first message fails


@pytest.mark.parametrize("rewrite", [False, True])
def test_openai_capture(server: CtxServer, tmp_path: Path, rewrite: bool) -> None:
    openai = pytest.importorskip("openai")
    log = tmp_path / "requests.jsonl"
    client = capture(openai.OpenAI(api_key="k", base_url=server.url + "/v1", max_retries=0, timeout=20), log)

    def send(msgs: list) -> str:
        r = client.chat.completions.create(
            model="gpt-4o", max_tokens=50, messages=[{"role": "system", "content": SYSTEM}, *msgs]
        )
        return r.choices[0].message.content or "ok"

    _turns(send, rewrite)
    rep = _check(log)
    assert rep.requests == 3
    assert rep.ok is not rewrite


@pytest.mark.parametrize("rewrite", [False, True])
def test_google_genai_capture(server: CtxServer, tmp_path: Path, rewrite: bool) -> None:
    genai = pytest.importorskip("google.genai")
    types = pytest.importorskip("google.genai.types")
    log = tmp_path / "requests.jsonl"
    client = capture(
        genai.Client(api_key="k", http_options=types.HttpOptions(base_url=server.url, timeout=20000)), log
    )

    def send(msgs: list) -> str:
        contents = [
            types.Content(
                role="model" if m["role"] == "assistant" else "user", parts=[types.Part(text=m["content"])]
            )
            for m in msgs
        ]
        r = client.models.generate_content(
            model="gemini-2.5-flash",
            contents=contents,
            config=types.GenerateContentConfig(system_instruction=SYSTEM),
        )
        return r.text or "ok"

    _turns(send, rewrite)
    rep = _check(log)
    assert rep.requests == 3
    assert rep.ok is not rewrite
