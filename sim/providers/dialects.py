"""Each provider's own wire facts, in one place: usage fields, error texts, statuses and bodies,
and the fault table (providers.md §7, §8).

A *dialect* names how a provider reports usage and errors. Providers pick one by config, so the
same cache model can answer as Anthropic Messages, OpenAI Chat Completions, OpenAI Responses,
Gemini, DeepSeek, OpenRouter or a Meta-style OpenAI-compatible endpoint. The simulated providers
(`sim/providers/*`) and the HTTP server (`sim/serve/render.py`) both build their usage JSON, error
statuses and error bodies here, so a simulated call and a served one cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Final

from ctxbench.sim.core.names import FaultKind, is_fault
from ctxbench.sim.core.provider import ProviderError, Usage

DIALECTS = ("anthropic", "openai-chat", "openai-responses", "gemini", "deepseek", "openrouter", "meta")
ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES = "anthropic", "openai-chat", "openai-responses"
_INVALID = "invalid_request_error"


def anthropic_wire_usage(u: Usage) -> dict[str, Any]:
    """Usage in the Messages API's own fields (§1.9): input_tokens is what follows the last breakpoint."""
    return {
        "input_tokens": u.uncached,
        "cache_creation_input_tokens": u.cache_write,
        "cache_read_input_tokens": u.cache_read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": u.cache_write_5m,
            "ephemeral_1h_input_tokens": u.cache_write_1h,
        },
        "output_tokens": u.output,
    }


def wire_renderer(dialect: str) -> Callable[[Usage], dict[str, Any]]:
    """`wire_usage` of one dialect, for `Outcome.wire_of` (usage rendered only when asked)."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; valid: {', '.join(DIALECTS)}")
    return anthropic_wire_usage if dialect == ANTHROPIC else partial(wire_usage, dialect)


def wire_usage(dialect: str, u: Usage) -> dict[str, Any]:
    """Usage exactly as the provider's API names it (providers.md §7 table)."""
    inp = u.input_total
    if dialect == ANTHROPIC:
        return anthropic_wire_usage(u)
    if dialect in ("openai-chat", "meta"):
        # §2.3 Chat: prompt_tokens includes cached; cached_tokens "is present even when no tokens
        # were cached"; cache_write_tokens only on 5.6+ (written tokens > 0).
        # meta: OpenAI-compatible (assumed).
        details: dict[str, Any] = {"cached_tokens": u.cache_read, "audio_tokens": 0}
        if u.cache_write:
            details["cache_write_tokens"] = u.cache_write
        return {
            "prompt_tokens": inp,
            "completion_tokens": u.output,
            "total_tokens": inp + u.output,
            "prompt_tokens_details": details,
            "completion_tokens_details": {"reasoning_tokens": 0},
        }
    if dialect == "openai-responses":
        # §2.3 Responses: input_tokens_details.{cached_tokens, cache_write_tokens} both required ints
        return {
            "input_tokens": inp,
            "input_tokens_details": {"cached_tokens": u.cache_read, "cache_write_tokens": u.cache_write},
            "output_tokens": u.output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": inp + u.output,
        }
    if dialect == "gemini":
        # §3 usageMetadata: promptTokenCount INCLUDES cached content. cachedContentTokenCount is
        # left out when 0 (proto3 JSON omits zero-valued fields; assumed, not in research/).
        out: dict[str, Any] = {"promptTokenCount": inp}
        if u.cache_read:
            out["cachedContentTokenCount"] = u.cache_read
        out["candidatesTokenCount"] = u.output
        out["totalTokenCount"] = inp + u.output
        return out
    if dialect == "deepseek":
        # §4 DS-KV: hit + miss = prompt_tokens; prompt_tokens_details.cached_tokens = hit
        return {
            "prompt_tokens": inp,
            "completion_tokens": u.output,
            "total_tokens": inp + u.output,
            "prompt_cache_hit_tokens": u.cache_read,
            "prompt_cache_miss_tokens": inp - u.cache_read,
            "prompt_tokens_details": {"cached_tokens": u.cache_read},
        }
    if dialect == "openrouter":
        # §5 usage accounting (OpenAI shape); `cost` and `cache_discount` are added by the caller
        return {
            "prompt_tokens": inp,
            "completion_tokens": u.output,
            "total_tokens": inp + u.output,
            "prompt_tokens_details": {
                "cached_tokens": u.cache_read,
                "cache_write_tokens": u.cache_write,
                "audio_tokens": 0,
            },
            "completion_tokens_details": {"reasoning_tokens": 0},
        }
    raise ValueError(f"unknown dialect {dialect!r}; valid: {', '.join(DIALECTS)}")


def too_long(dialect: str, tokens: int, window: int, output: int = 0) -> ProviderError:
    """The provider's real "prompt too long" error (providers.md §8 row "Too long")."""
    if dialect == ANTHROPIC:  # §1.12
        msg = f"prompt is too long: {tokens} tokens > {window} maximum"
        return ProviderError(400, "invalid_request_error", msg, "too_long", False)
    if dialect in ("openai-chat", "meta"):
        # §2.5 [3P verbatim]; meta: OpenAI-compatible (assumed)
        msg = (
            f"This model's maximum context length is {window} tokens. However, your messages resulted in "
            f"{tokens} tokens. Please reduce the length of the messages."
        )
        code = "context_length_exceeded"
        return ProviderError(400, _INVALID, msg, "too_long", False, code=code, param="messages")
    if dialect == "openai-responses":
        # §2.5 [3P codex fixtures]
        msg = "Your input exceeds the context window of this model. Please adjust your input and try again."
        code = "context_length_exceeded"
        return ProviderError(400, _INVALID, msg, "too_long", False, code=code, param="input")
    if dialect == "gemini":
        # §3 [3P verbatim body]: 400 INVALID_ARGUMENT
        msg = f"The input token count ({tokens}) exceeds the maximum number of tokens allowed ({window})."
        return ProviderError(400, "INVALID_ARGUMENT", msg, "too_long", False, code="INVALID_ARGUMENT")
    if dialect == "deepseek":
        # §4: OpenAI-style text (UNCONFIRMED exact)
        msg = (
            f"This model's maximum context length is {window} tokens. However, you requested "
            f"{tokens + output} tokens ({tokens} in the messages, {output} in the completion). "
            "Please reduce the length of the messages or completion."
        )
        return ProviderError(
            400, "invalid_request_error", msg, "too_long", False, code="invalid_request_error"
        )
    if dialect == "openrouter":
        # §5 [3P verbatim probe]; the doc's text continues past "plugin" (elided in research/)
        msg = (
            f"This endpoint's maximum context length is {window} tokens. However, you requested about "
            f"{tokens + output} tokens ({tokens} of text input, {output} in the output). Please reduce the "
            "length of either one, or use the context-compression plugin to compress your prompt "
            "automatically."
        )
        return ProviderError(400, "invalid_request_error", msg, "too_long", False, code="400")
    raise ValueError(f"unknown dialect {dialect!r}; valid: {', '.join(DIALECTS)}")


# The fault table: (status, type, message, code) per dialect and fault kind (sim/names.FaultKind).
# `stream_error` is an error event after HTTP 200 on every API (§1.12 "Errors can arrive after HTTP
# 200 as SSE error events", §2.5 Responses `response.failed`, §5 "mid-stream errors with 200"): its
# status is 200 and its type is the one the event carries; a request that is not streamed gets the
# row of that type instead (`as_dialect`).
Row = tuple[int, str, str, str]
_ANTHROPIC_FAULTS: dict[FaultKind, Row] = {  # §1.12 [DOC errors]; §8 row "Transient"
    "rate_limit": (
        429,
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit",
        "",
    ),
    "overloaded": (529, "overloaded_error", "Overloaded", ""),
    "server_error": (500, "api_error", "Internal server error", ""),
    "timeout": (504, "timeout_error", "Request timed out", ""),
    "stream_error": (200, "overloaded_error", "Overloaded", ""),
}
_OPENAI_FAULTS: dict[FaultKind, Row] = {  # §2.5 [3P summaries of the error-codes page]; texts UNCONFIRMED
    "rate_limit": (
        429,
        "requests",
        "Rate limit reached for requests. Please try again in 2s.",
        "rate_limit_exceeded",
    ),
    "overloaded": (
        503,
        "service_unavailable_error",
        "The server is overloaded. Please try again later.",
        "server_is_overloaded",
    ),
    "server_error": (
        500,
        "server_error",
        "The server had an error while processing your request.",
        "server_error",
    ),
    # the error-codes page names no server timeout; 408 is the timeout status the SDK retries
    # (§2.5 "retries 408/409/429/≥500"), and OpenRouter's documented timeout (§5)
    "timeout": (408, "timeout", "Request timed out.", "timeout"),
    "stream_error": (
        200,
        "server_error",
        "The server had an error while processing your request.",
        "server_error",
    ),
}
FAULT_TEXT: Final[dict[str, dict[FaultKind, Row]]] = {
    "anthropic": _ANTHROPIC_FAULTS,
    "openai-chat": _OPENAI_FAULTS,
    "openai-responses": _OPENAI_FAULTS,
    "meta": _OPENAI_FAULTS,  # OpenAI-compatible (assumed)
    "gemini": {  # §3 [3P verbatim bodies]; 503 text UNCONFIRMED
        "rate_limit": (
            429,
            "RESOURCE_EXHAUSTED",
            "Resource has been exhausted (e.g. check quota).",
            "RESOURCE_EXHAUSTED",
        ),
        "overloaded": (503, "UNAVAILABLE", "The model is overloaded. Please try again later.", "UNAVAILABLE"),
        "server_error": (500, "INTERNAL", "An internal error has occurred.", "INTERNAL"),
        "timeout": (504, "DEADLINE_EXCEEDED", "Deadline exceeded.", "DEADLINE_EXCEEDED"),
        "stream_error": (200, "INTERNAL", "An internal error has occurred.", "INTERNAL"),
    },
    "deepseek": {  # §4 [DOC error_codes]: 429 Rate Limit Reached, 500 Server Error, 503 Server Overloaded
        "rate_limit": (429, "rate_limit_error", "Rate Limit Reached", "429"),
        "overloaded": (503, "server_overloaded", "Server Overloaded", "503"),
        "server_error": (500, "server_error", "Server Error", "500"),
        "timeout": (408, "timeout", "Request timed out.", "408"),  # assumed (OpenAI-compatible)
        "stream_error": (200, "server_error", "Server Error", "500"),
    },
    "openrouter": {  # §5 [DOC errors]: 408, 429, 502, 503; mid-stream errors arrive with HTTP 200
        "rate_limit": (429, "rate_limited", "Rate limit exceeded", "429"),
        "overloaded": (503, "no_provider", "No available provider meets your routing requirements", "503"),
        "server_error": (502, "provider_error", "Provider returned error", "502"),
        "timeout": (408, "timeout", "Request timed out", "408"),
        "stream_error": (200, "provider_error", "Provider returned error", "502"),
    },
}
# Which faults carry a retry-after header: Anthropic's 429 (§1.12 "+retry-after"); OpenAI-style
# APIs also on 503 (§2.5 `retry-after`, §5 "503 (+Retry-After)").
_RETRY_AFTER: Final[dict[str, tuple[FaultKind, ...]]] = {"anthropic": ("rate_limit",)}
_RETRY_AFTER_DEFAULT: Final[tuple[FaultKind, ...]] = ("rate_limit", "overloaded")


def _dialect(dialect: str) -> dict[FaultKind, Row]:
    table = FAULT_TEXT.get(dialect)
    if table is None:
        raise ValueError(f"unknown dialect {dialect!r}; valid: {', '.join(DIALECTS)}")
    return table


def fault_error(dialect: str, kind: FaultKind, retry_after: float | None) -> ProviderError:
    """The error a `kind` fault returns in `dialect` (the fault table above)."""
    status, etype, msg, code = _dialect(dialect)[kind]
    ra = retry_after if kind in _RETRY_AFTER.get(dialect, _RETRY_AFTER_DEFAULT) else None
    billed = kind == "stream_error"
    return ProviderError(status, etype, msg, kind, True, ra, billed=billed, code=code)


def fault_kind_of(dialect: str, status: int) -> FaultKind | None:
    """The fault kind an HTTP error status stands for in `dialect` (a client reading a reply)."""
    return next((k for k, row in _dialect(dialect).items() if row[0] == status and status != 200), None)


def as_dialect(
    dialect: str, err: ProviderError, window: int = 0, tokens: int = 0, streamed: bool = False
) -> ProviderError:
    """`err` (from any provider model) as the API of `dialect` returns it: a client speaking the
    Chat API gets OpenAI's texts even when an Anthropic cache model billed the call. A stream cut
    on a request that is not streamed becomes the row of the error type the cut carries."""
    if err.kind == "too_long":
        return too_long(dialect, tokens, window)
    kind = err.kind
    if not is_fault(kind):
        return err
    out = fault_error(dialect, kind, err.retry_after)
    if kind == "stream_error" and not streamed:
        status = next(r[0] for r in _dialect(dialect).values() if r[1] == out.type and r[0] != 200)
        out = ProviderError(status, out.type, out.message, kind, True, None, billed=True, code=out.code)
    return out


def error_json(dialect: str, err: ProviderError, request_id: str) -> tuple[int, dict[str, Any]]:
    """(status, body) of an error in the API's own JSON shape (§1.12, §2.5)."""
    if dialect == ANTHROPIC:
        return err.status, {
            "type": "error",
            "error": {"type": err.type, "message": err.message},
            "request_id": request_id,
        }
    if dialect == "gemini":  # google.rpc.Status: code, message, status (§3 [3P verbatim bodies])
        return err.status, {"error": {"code": err.status, "message": err.message, "status": err.type}}
    body = {"message": err.message, "type": err.type, "param": err.param, "code": err.code or None}
    return err.status, {"error": body}
