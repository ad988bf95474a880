"""One-line capture of the request bodies an official SDK client sends, in the request-log format
`check-prefix` and `import` read (one `{"body": ..., "model": ..., "url": ...}` JSON per line,
request_log.py):

    from ctxbench.bench.prefix.capture import capture
    client = capture(anthropic.Anthropic(), "requests.jsonl")      # or openai.OpenAI(...),
    client = capture(genai.Client(api_key=...), "requests.jsonl")  # google-genai

The client's httpx transport gets a request event hook (httpx's `event_hooks`); the client is
returned unchanged otherwise. The model of a Gemini request is in its URL
(`.../models/{model}:generateContent`) and is written beside the body.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

_MODEL_IN_PATH = re.compile(r"/models/([^/:]+):")


def _httpx_client(client: Any) -> Any:
    for path in (("_client",), ("_api_client", "_httpx_client"), ("_client", "_client")):
        obj = client
        for attr in path:
            obj = getattr(obj, attr, None)
        if obj is not None and hasattr(obj, "event_hooks"):
            return obj
    raise TypeError(
        f"capture: no httpx client found in {type(client).__name__} (anthropic, openai, google-genai)"
    )


class _Writer:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.lock = threading.Lock()

    def __call__(self, request: Any) -> None:
        if request.method != "POST":
            return
        try:
            body = json.loads(request.content or b"null")
        except ValueError:
            return  # not a JSON body (an upload): no prompt
        if not isinstance(body, dict):
            return
        entry: dict[str, Any] = {"body": body, "url": str(request.url)}
        m = _MODEL_IN_PATH.search(request.url.path)
        if m and "model" not in body:
            entry["model"] = m.group(1)
        line = json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n"
        with self.lock, self.path.open("a", encoding="utf-8") as f:
            f.write(line)


def capture(client: Any, path: str | Path) -> Any:
    """`client` with every request body it sends appended to `path` (JSONL); returns `client`."""
    hc = _httpx_client(client)
    hooks = dict(hc.event_hooks)
    hooks["request"] = [*hooks.get("request", []), _Writer(path)]
    hc.event_hooks = hooks
    return client
