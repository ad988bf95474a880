"""`ctxbench serve`: the provider models behind the real wire APIs, on a stdlib HTTP server.

Endpoints: `POST /v1/messages` (+ SSE, `?beta=true` accepted), `/v1/messages/count_tokens`,
`/v1/chat/completions` (+ SSE with `stream_options.include_usage`), `/v1/responses` (+ SSE),
`/v1/responses/input_tokens`, `GET /v1/models`, and the Gemini API's
`/v1beta/models/{model}:generateContent`, `:streamGenerateContent` (+ SSE with `alt=sse`) and
`:countTokens` (sim/serve/wire/gemini.py). Each request is parsed into a Transcript
(`ctxbench.sim.serve.wire`), billed by `provider.call(Request, now)` of the same provider model the simulator
uses (`make_provider(profile, model, seed)`), answered with a scripted reply (`ctxbench.sim.serve.script`),
and recorded with credentials redacted (`ctxbench.sim.serve.record`).

Sockets get TCP_NODELAY: without it every request costs 44 ms (Nagle + delayed ACK, measured in
ecosystem.md §2.2). Bound to 127.0.0.1 by default.

Time: `clock="wall"` uses seconds since the server started; `clock="header"` takes the time from
the `x-ctxbench-now` header (the reference driver sends its simulated time, so TTLs and idle gaps
match the simulation exactly). With `latency="none"` (the default in wall mode) the provider's
latency model is zeroed, because this server answers at once: a cache entry is then readable by
the next request, as it would be on the real API where the next request cannot start before the
previous one's first token arrived (providers.md §1.5).
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

from ctxbench.sim.core.catalog import CatalogError
from ctxbench.sim.core.provider import Request
from ctxbench.sim.providers.registry import make_provider
from ctxbench.sim.serve import render
from ctxbench.sim.serve.front import (
    MAX_BODY,
    RID_PREFIX,
    FrontHandler,
    FrontServer,
    Refusal,
    Reply,
    api_of_path,
    json_reply,
    stop_front,
)
from ctxbench.sim.serve.record import Ledger, usage_dict
from ctxbench.sim.serve.script import Scripter
from ctxbench.sim.serve.state import ZERO_LATENCY, Observation, ServeConfig, ServeState
from ctxbench.sim.serve.wire import (
    ANTHROPIC,
    CHAT,
    GEMINI,
    RESPONSES,
    Parsed,
    WireError,
    bad,
    parse,
    parse_json_body,
    unknown_model,
)
from ctxbench.sim.serve.wire.anthropic import fast_mode
from ctxbench.sim.serve.wire.gemini import not_found as gemini_not_found
from ctxbench.sim.serve.wire.gemini import route as gemini_route

_SECONDS = re.compile(r"[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]{1,3})?")
ROUTES = {
    "/v1/messages": ANTHROPIC,
    "/v1/chat/completions": CHAT,
    "/chat/completions": CHAT,
    "/v1/responses": RESPONSES,
    "/responses": RESPONSES,
}


class Handler(FrontHandler):
    server: CtxServer

    def ledger(self) -> Ledger:
        return self.server.state.ledger

    # ------------------------------------------------------------ routes
    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        api = api_of_path(path)
        entry, _ = self.entry(api)
        if path not in ("/v1/models", "/models"):
            self.refuse(Refusal(404, f"Not found: {path}", "not_found_error"), entry=entry)
            return
        model = self.server.state.cfg.model
        listing = {
            "object": "list",
            "data": [
                {
                    "id": model,
                    "type": "model",
                    "object": "model",
                    "display_name": model,
                    "created_at": "2026-01-01T00:00:00Z",
                }
            ],
        }
        self.answer(entry, json_reply(200, listing))

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        st = self.server.state
        route = ROUTES.get(path.removesuffix("/count_tokens").removesuffix("/input_tokens"))
        if route is None and gemini_route(path) is not None:
            route = GEMINI
        api = route or api_of_path(path)
        entry, red = self.entry(api)
        self.secrets = red.secrets  # scrubbed from this conversation's trace too
        rid = st.next_id(RID_PREFIX.get(api, "resp_"))
        try:
            headers = self._headers()
            t = self._now(headers)
            raw = self.read_body()
            try:
                body = parse_json_body(raw)
            except WireError:
                entry["body_text"] = red.text(raw[:65536].decode("utf-8", "replace"))
                raise
            entry["body"] = red.body(body) if red.secrets or isinstance(body, dict) else body
            if route is None:
                raise WireError(404, "not_found_error", f"Not found: {path}")
            reply = self._handle(api, path, body, headers, t, rid, entry)
        except Refusal as r:
            self.refuse(r, close=True, entry=entry)
            return
        except WireError as e:
            entry.setdefault("error", e.message)
            reply = self.error_reply(api, e, rid)
        self.answer(entry, reply)

    def _headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items()}

    def _now(self, headers: dict[str, str]) -> float:
        st = self.server.state
        if st.cfg.clock == "header" and "x-ctxbench-now" in headers:
            text = headers["x-ctxbench-now"].strip()
            now = float(text) if len(text) <= 32 and _SECONDS.fullmatch(text) else -1.0
            if not 0 <= now <= 1e10:
                raise bad("x-ctxbench-now: expected seconds as a non-negative decimal number (e.g. 12.5)")
            return now
        return time.monotonic() - st.start

    def _handle(
        self,
        api: str,
        path: str,
        body: Any,
        headers: dict[str, str],
        t: float,
        rid: str,
        entry: dict[str, Any],
    ) -> Reply:
        """Bill and answer one parsed request; the ledger entry is filled in on the way."""
        st = self.server.state
        body, requested, model, speed, counting, named = self._model(api, path, body)
        p = parse(api, body, headers, st.factory(model), model)
        if named is not None:
            p.stream = named[1] == "streamGenerateContent"
        entry["conversation"] = p.session
        if counting:  # no caching logic (providers.md §1.14, §2.7, §3)
            return count_reply(api, p.tr.total_tokens)
        provider = st.provider(model)
        reply = st.scripter.reply(p, header_int(headers, "x-ctxbench-output-tokens"))
        req, out, index = self._bill(api, p, model, reply.output_tokens, headers, t)
        entry.update(
            model=model,
            index=index,
            blocks=len(p.tr),
            breakpoints=[list(b) for b in p.breakpoints],
            usage=usage_dict(out.usage),
            reply=list(reply.blocks),
            cost=round(out.cost, 9),
        )
        extra = {
            "request-id": rid,
            "x-request-id": rid,
            "x-ctxbench-ttft": repr(out.ttft),
            "x-ctxbench-duration": repr(out.duration),
            "x-ctxbench-cached-pos": str(out.cached_pos),
            "x-ctxbench-cost": repr(out.cost),
        }
        err = out.error
        if err is not None and not (err.kind == "stream_error" and p.stream):
            entry["error"] = err.kind
            return self.error_reply(api, err, rid, provider.model.window, req.input_tokens)
        if err is None:
            st.recorder.add(p, reply.blocks, out.usage, reply.output_tokens, t, self.secrets)
        else:
            entry["error"] = err.kind
        return self._render(api, p, body, rid, requested or model, reply, out, speed, extra)

    def _model(
        self, api: str, path: str, body: Any
    ) -> tuple[Any, Any, str, str, bool, tuple[str, str] | None]:
        """(body, the model id asked for, the model served, speed, a token count?, Gemini's
        (model, method) from the path) of one request; a model the catalog does not know is the
        API's own not-found error."""
        st = self.server.state
        counting = path.endswith(("/count_tokens", "/input_tokens"))
        if counting and isinstance(body, dict) and api == ANTHROPIC:
            body = {"max_tokens": 1, **body}
        requested = body.get("model") if isinstance(body, dict) else None
        named = gemini_route(path) if api == GEMINI else None
        if named is not None:  # the Gemini API names the model in the path
            requested = named[0]
            counting = named[1] == "countTokens"
        model = st.cfg.model  # a missing or ill-typed model is parse's 400
        if isinstance(requested, str):
            try:
                model = st.model_for(requested)
            except CatalogError:
                missing = gemini_not_found(requested, named[1]) if named else unknown_model(api, requested)
                raise missing from None
        speed = fast_mode(body, requested) if api == ANTHROPIC and isinstance(requested, str) else "standard"
        if speed == "fast":
            model = st.model_for(f"{model}-fast")
        return body, requested, model, speed, counting, named

    def _bill(
        self, api: str, p: Any, model: str, output_tokens: int, headers: dict[str, str], t: float
    ) -> tuple[Request, Any, int]:
        """The request as the provider model sees it, its outcome, and its index in the session."""
        st = self.server.state
        provider = st.provider(model)
        asked_index = header_int(headers, "x-ctxbench-index")
        with st.lock:
            index = asked_index if asked_index is not None else st.counters.get(p.session, 0)
            st.counters[p.session] = index + 1
            req = Request(
                p.tr,
                len(p.tr),
                model,
                output_tokens,
                p.breakpoints,
                headers.get("x-ctxbench-kind", "live"),
                p.session,
                index,
                p.cache_key,
                p.session,
            )
            out = provider.call(req, t)
            if st.cfg.keep_observations:
                st.observations.append(
                    Observation(
                        p.session,
                        index,
                        api,
                        len(p.tr),
                        [b.tokens for b in p.tr.blocks],
                        list(p.tr.hashes),
                        p.breakpoints,
                        out.usage if out.error is None or out.error.billed else None,
                        out.error.kind if out.error else "",
                    )
                )
        return req, out, index

    def _render(
        self,
        api: str,
        p: Any,
        body: Any,
        rid: str,
        name: str,
        reply: Any,
        out: Any,
        speed: str,
        extra: dict[str, str],
    ) -> Reply:
        """The answer in the API's shape, streamed when the request asked for a stream."""
        u, err = out.usage, out.error
        sse = {"content-type": "text/event-stream", "cache-control": "no-cache", **extra}
        if api == ANTHROPIC:
            if p.stream:
                return Reply(200, sse, chunks=render.anthropic_stream(rid, name, reply, u, err, speed))
            return json_reply(200, render.anthropic_message(rid, name, reply, u, speed), extra)
        if api == GEMINI:
            if p.stream:
                alt_sse = "alt=sse" in self.path.split("?", 1)[-1].split("&")
                head = sse if alt_sse else {"content-type": "application/json", **extra}
                return Reply(200, head, chunks=render.gemini_stream(rid, name, reply, u, alt_sse))
            return json_reply(200, render.gemini_response(rid, name, reply, u), extra)
        if api == CHAT:
            if p.stream:
                return Reply(200, sse, chunks=render.chat_stream(rid, name, reply, u, p.include_usage))
            return json_reply(200, render.chat_completion(rid, name, reply, u), extra)
        inc = body.get("include")  # Codex with store=false asks for its reasoning back
        think = isinstance(inc, list) and "reasoning.encrypted_content" in inc
        if p.stream:
            return Reply(200, sse, chunks=render.responses_stream(rid, name, reply, u, err, think))
        return json_reply(200, render.response_object(rid, name, reply, u, reasoning=think), extra)


def count_reply(api: str, n: int) -> Reply:
    """The answer to a token count (`count_tokens`, `input_tokens`, `countTokens`)."""
    if api == GEMINI:
        return json_reply(200, {"totalTokens": n})
    if api == ANTHROPIC:
        return json_reply(200, {"input_tokens": n})
    return json_reply(200, {"object": "response.input_tokens", "input_tokens": n})


class CtxServer(FrontServer):
    def __init__(self, state: ServeState) -> None:
        self.state = state
        cfg = state.cfg
        super().__init__(
            (cfg.host, cfg.port), Handler, cfg.read_timeout, cfg.max_connections, cfg.max_per_client
        )

    def next_id(self, prefix: str) -> str:
        return self.state.next_id(prefix)


def header_int(headers: dict[str, str], name: str) -> int | None:
    """A ctxbench control header holding a count: absent is None, anything but 1-9 ASCII digits is
    a 400 in the API's shape (`²`, `1e3`, 5,000 digits)."""
    text = headers.get(name)
    if text is None:
        return None
    if not _COUNT.fullmatch(text.strip()):
        raise bad(f"{name}: expected a non-negative integer of at most 9 digits, got {text[:20]!r}")
    return int(text)


_COUNT = re.compile(r"[0-9]{1,9}")


def make_server(cfg: ServeConfig, scripter: Scripter | None = None) -> CtxServer:
    make_provider(cfg.profile, cfg.model, cfg.seed)  # fail early on a bad profile or model
    state = ServeState(cfg, scripter or Scripter(), Ledger(cfg.ledger))
    return CtxServer(state)


def start_background(
    cfg: ServeConfig, scripter: Scripter | None = None
) -> tuple[CtxServer, threading.Thread]:
    """Start a server on a thread (tests, validate, proxy upstreams); stop with `stop(server)`."""
    srv = make_server(cfg, scripter)
    th = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    th.start()
    return srv, th


def stop(srv: CtxServer) -> None:
    """Stop a background server: requests in flight finish and are recorded, then the ledger closes."""
    stop_front(srv)
    srv.state.ledger.close()


__all__ = [
    "MAX_BODY",
    "ZERO_LATENCY",
    "CtxServer",
    "Observation",
    "Parsed",
    "ServeConfig",
    "ServeState",
    "make_server",
    "start_background",
    "stop",
]
