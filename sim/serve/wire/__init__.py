"""Request bodies of the APIs the HTTP provider speaks, read into the content model: Anthropic
Messages (`anthropic`), OpenAI Chat Completions and Responses (`openai`), Gemini (`gemini`), on the
helpers they share (`common`); `parse` picks the reader of a request's API."""

from __future__ import annotations

from typing import Any

from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.serve.wire.common import (
    ANTHROPIC,
    CHAT,
    GEMINI,
    IMAGE_RULES,
    RESPONSES,
    Parsed,
    WireError,
    bad,
    canon,
    lang_of,
    obj,
    parse_json_body,
    session_of,
    unknown_model,
)


def parse(api: str, body: Any, headers: dict[str, str], factory: BlockFactory, model: str = "") -> Parsed:
    """Parse one request body of `api` into the content model; WireError on anything malformed.
    `model`: the Gemini API names it in the path, not the body."""
    body = obj(body, "body")
    if api == GEMINI:
        from ctxbench.sim.serve.wire.gemini import parse_gemini

        return parse_gemini(body, headers, factory, model)
    if api == ANTHROPIC:
        from ctxbench.sim.serve.wire.anthropic import parse_anthropic

        return parse_anthropic(body, headers, factory)
    from ctxbench.sim.serve.wire.openai import parse_chat, parse_responses

    return parse_chat(body, headers, factory) if api == CHAT else parse_responses(body, headers, factory)


__all__ = [
    "ANTHROPIC",
    "CHAT",
    "GEMINI",
    "IMAGE_RULES",
    "RESPONSES",
    "Parsed",
    "WireError",
    "bad",
    "canon",
    "lang_of",
    "parse",
    "parse_json_body",
    "session_of",
    "unknown_model",
]
