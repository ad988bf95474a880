"""`ctxbench serve` speaks the Gemini API (sim/serve/wire/gemini.py): through the official SDK
(google-genai) and with the traffic of Gemini CLI 0.61.0 from npm, recorded against it
(tests/sim/serve/data: a session, and one resumed with `--resume latest` that compresses its history)."""

from __future__ import annotations

import json
import lzma
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxbench.bench.prefix.check import find_breaks
from ctxbench.bench.prefix.request_log import read_request_log
from ctxbench.sim.serve.server import CtxServer, ServeConfig, start_background, stop
from ctxbench.sim.serve.wire.gemini import route

DATA = Path(__file__).parent / "data"
LONG = "The build log says module 7 compiled without warnings. " * 300
GENERATE = "/v1beta/models/gemini-2.5-pro:generateContent"
TOOLS = [{"functionDeclarations": [{"name": "run", "parametersJsonSchema": {"type": "object"}}]}]


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[CtxServer]:
    cfg = ServeConfig(profile="gemini-implicit", model="gemini-2.5-pro", ledger=str(tmp_path / "l.jsonl"))
    srv, _ = start_background(cfg)
    yield srv
    stop(srv)


def _post(srv: CtxServer, path: str, body: Any) -> tuple[int, bytes]:
    req = urllib.request.Request(
        srv.url + path, json.dumps(body).encode(), {"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _body(*texts: str) -> dict[str, Any]:
    return {
        "systemInstruction": {"parts": [{"text": "You are terse."}]},
        "tools": TOOLS,
        "contents": [{"role": "user", "parts": [{"text": t}]} for t in texts],
    }


def test_paths_name_the_model_and_the_method() -> None:
    assert route("/v1beta/models/gemini-2.5-pro:streamGenerateContent") == (
        "gemini-2.5-pro",
        "streamGenerateContent",
    )
    assert route("/v1/models/gemini-2.0-flash:countTokens") == ("gemini-2.0-flash", "countTokens")
    assert route("/v1beta/models/gemini-2.5-pro:embedContent") is None


def test_implicit_cache_reads_the_previous_prompt(server: CtxServer) -> None:
    path = "/v1beta/models/gemini-2.5-pro:generateContent"
    status, raw = _post(server, path, _body(LONG))
    first = json.loads(raw)
    assert status == 200 and "cachedContentTokenCount" not in first["usageMetadata"]
    status, raw = _post(server, path, _body(LONG, "and again"))
    usage = json.loads(raw)["usageMetadata"]
    assert usage["promptTokenCount"] > first["usageMetadata"]["promptTokenCount"]
    assert 0 < usage["cachedContentTokenCount"] <= first["usageMetadata"]["promptTokenCount"]


def test_sse_stream_and_count_tokens(server: CtxServer) -> None:
    status, raw = _post(server, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", _body("hi"))
    events = [json.loads(x[len(b"data: ") :]) for x in raw.split(b"\r\n\r\n") if x.startswith(b"data: ")]
    assert status == 200 and events[-1]["candidates"][0]["finishReason"] == "STOP"
    assert events[-1]["usageMetadata"]["totalTokenCount"] > 0
    status, raw = _post(
        server, "/v1beta/models/gemini-2.5-pro:countTokens", {"contents": [{"parts": [{"text": "x"}]}]}
    )
    assert status == 200 and json.loads(raw)["totalTokens"] > 0


@pytest.mark.parametrize(
    ("path", "body", "status", "says"),
    [
        (GENERATE.replace("2.5-pro", "nope-9"), _body("hi"), 404, "models/gemini-nope-9 is not found"),
        (GENERATE, {"contents": []}, 400, "contents is not specified"),
        (GENERATE, {"contents": [{"role": "bot", "parts": []}]}, 400, "role"),
        (GENERATE, {**_body("hi"), "cachedContent": "cachedContents/x"}, 403, "CachedContent"),
    ],
)  # fmt: skip
def test_refusals_have_the_gemini_error_shape(
    server: CtxServer, path: str, body: Any, status: int, says: str
) -> None:
    got, raw = _post(server, path, body)
    err = json.loads(raw)["error"]
    assert got == status and err["code"] == status and says in err["message"]
    assert set(err) == {"code", "message", "status"} and err["status"].isupper()


def test_the_official_sdk_reads_every_answer(server: CtxServer) -> None:
    genai = pytest.importorskip("google.genai", reason="the `live` extra (google-genai SDK) is not installed")
    from google.genai import errors, types

    client = genai.Client(api_key="x", http_options=types.HttpOptions(base_url=server.url))
    first = client.models.generate_content(model="gemini-2.5-pro", contents=LONG)
    assert first.usage_metadata is not None and first.usage_metadata.prompt_token_count
    chunks = list(client.models.generate_content_stream(model="gemini-2.5-pro", contents=[LONG, "more"]))
    last = chunks[-1].usage_metadata
    assert (
        last is not None
        and 0 < (last.cached_content_token_count or 0) <= first.usage_metadata.prompt_token_count
    )
    assert client.models.count_tokens(model="gemini-2.5-pro", contents="hello").total_tokens
    with pytest.raises(errors.ClientError) as e:
        client.models.generate_content(model="gemini-nope-9", contents="hi")
    assert e.value.code == 404 and e.value.status == "NOT_FOUND"


def _ledger(name: str) -> list[str]:
    with lzma.open(DATA / name, "rt", encoding="utf-8") as f:
        return [line for line in f if line.strip()]


def test_gemini_cli_traffic_is_prefix_stable() -> None:
    """Gemini CLI 0.61.0 (`-m gemini-2.5-pro -p … --yolo`): each request extends the previous one,
    and the implicit cache reads all of it (the ledger's bills)."""
    lines = _ledger("gemini-cli-0.61.0.requests.jsonl.xz")
    rep = find_breaks(read_request_log(lines, "gemini-cli"))
    assert rep.ok and not rep.breaks
    usage = [json.loads(x)["usage"] for x in lines]
    assert all(u["cache_read"] > 0 for u in usage[1:])


def test_gemini_cli_rewrites_its_history_after_loop_detection() -> None:
    """Four identical tool calls trip the CLI's loop detection; its recovery request (request 5)
    re-sends the history without the function calls' `thoughtSignature`, so it diverges inside the
    first model turn (a mid-conversation edit, re-billing ~20k tokens). The resumed run (`--resume
    latest`) re-sends the history with its first message's session context changed with the folder
    (a file added since): every token of it is billed again, and since the resumed conversation goes
    on from that request it is a break of the main line, reported with the field that changed, not a
    side request; it sends each function response twice; its compression request (own system
    prompt, no tools), the verification pass and the compressed history after them are recognised."""
    lines = _ledger("gemini-cli-0.61.0-resume.requests.jsonl.xz")
    rep = find_breaks(read_request_log(lines, "gemini-cli-resume"))
    failing = [(b.request, b.cls) for b in rep.failing]
    assert failing == [(5, "mid_conversation_edit"), (6, "reset_after_compaction")]
    assert rep.failing[1].path == "messages[0].content[0]"
    explained = {b.cls for b in rep.breaks if b.explained}
    assert explained == {"reset_after_compaction", "side_request"}  # the second pass: a side request


def test_gemini_cli_0_51_compression_that_keeps_the_history_is_explained() -> None:
    """Gemini CLI 0.51.0 (the ten-step task with `model.compressionThreshold` 0.03, from npm against
    `ctxbench serve`): its compression request (own system prompt, no tools) summarises only the
    session context, the verification probe echoes the summary as the model's turn, and the next
    request puts the summary after the session context with the whole history kept: no shorter
    than before, diverging at message 1. The pasted summary, found in the probe, explains it; its
    session log replays within tolerance."""
    from ctxbench.bench.fidelity.compare import compare
    from ctxbench.traces.importers import import_paths

    lines = _ledger("gemini-cli-0.51.0-compress.requests.jsonl.xz")
    rep = find_breaks(read_request_log(lines, "gemini-cli-0.51"))
    assert rep.ok
    reset = next(b for b in rep.breaks if b.cls == "reset_after_compaction")
    assert (reset.request, reset.message, reset.explained) == (7, 1, True)
    assert reset.declared == "compaction (recognised: request 5)"
    sf = compare(import_paths([DATA / "gemini-cli-0.51.0-compress.session.jsonl.xz"]).traces[0])
    assert sf.n == 11 and all(r.within for r in sf.requests)


def test_proxy_records_gemini_traffic(server: CtxServer, tmp_path: Path) -> None:
    """`proxy` in front of a Gemini endpoint (here `serve`): answers relayed, the ledger line holds
    the model of the path and the usage of `usageMetadata`, and the conversation is traced."""
    from ctxbench.sim.serve.proxy import start_proxy, stop_proxy

    proxy, _ = start_proxy(server.url, str(tmp_path / "proxy.jsonl"))
    try:
        for body in (_body(LONG), _body(LONG, "and again")):
            status, _raw = _post(proxy, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", body)
            assert status == 200
        traces = proxy.state.recorder.write(tmp_path / "traces")
    finally:
        stop_proxy(proxy)
    lines = [json.loads(x) for x in (tmp_path / "proxy.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [x["model"] for x in lines] == ["gemini-2.5-pro"] * 2
    assert lines[1]["usage"]["cache_read"] > 0 and lines[0]["usage"]["cache_read"] == 0
    assert len(traces) == 1


def test_a_number_past_float_range_is_a_400_not_a_crash(server: CtxServer) -> None:
    """`1e999` parses to infinity, which JSON cannot hold: refused as invalid JSON (found by the
    HTTP fuzz in a Gemini part)."""
    raw = json.dumps(_body("hi")).replace('"hi"', '"hi", "x": 1e999').encode()
    req = urllib.request.Request(server.url + GENERATE, raw, {"content-type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=20)
    err = json.loads(e.value.read())["error"]
    assert e.value.code == 400 and err["status"] == "INVALID_ARGUMENT" and "out of range" in err["message"]
