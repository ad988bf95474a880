"""Each provider's own wire shapes: usage fields and error texts (providers.md §7, §8).

A *dialect* names how a provider reports usage and errors. Providers pick one by config, so the
same cache model can answer as OpenAI Chat Completions, OpenAI Responses, Gemini, DeepSeek,
OpenRouter or a Meta-style OpenAI-compatible endpoint.
"""

from __future__ import annotations

from typing import Any

from ctxbench.sim.providers.base import ProviderError, Usage

DIALECTS = ("openai-chat", "openai-responses", "gemini", "deepseek", "openrouter", "meta")


def wire_usage(dialect: str, u: Usage) -> dict[str, Any]:
    """Usage exactly as the provider's API names it (providers.md §7 table)."""
    inp = u.input_total
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
    if dialect in ("openai-chat", "meta"):
        # §2.5 [3P verbatim]; meta: OpenAI-compatible (assumed)
        msg = (
            f"This model's maximum context length is {window} tokens. However, your messages resulted in "
            f"{tokens} tokens. Please reduce the length of the messages."
        )
        return ProviderError(
            400, "invalid_request_error", msg, "too_long", False, code="context_length_exceeded"
        )
    if dialect == "openai-responses":
        # §2.5 [3P codex fixtures]
        msg = "Your input exceeds the context window of this model. Please adjust your input and try again."
        return ProviderError(
            400, "invalid_request_error", msg, "too_long", False, code="context_length_exceeded"
        )
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


# (status, type, message, code) per fault kind; kinds as in base.FAULT_KINDS.
_OPENAI_FAULTS = {  # §2.5 [3P summaries of the error-codes page]; message texts abbreviated (UNCONFIRMED)
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
    "timeout": (408, "timeout", "Request timed out.", "timeout"),  # client-side in the SDK (assumed 408)
    "stream_error": (
        200,
        "server_error",
        "The server had an error while processing your request.",
        "server_error",
    ),
}
FAULT_TEXT: dict[str, dict[str, tuple[int, str, str, str]]] = {
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
        "timeout": (408, "timeout", "Request timed out.", "408"),  # assumed
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


def fault_error(dialect: str, kind: str, retry_after: float | None) -> ProviderError:
    status, etype, msg, code = FAULT_TEXT[dialect][kind]
    ra = retry_after if kind in ("rate_limit", "overloaded") else None
    billed = kind == "stream_error"
    return ProviderError(status, etype, msg, kind, True, ra, billed=billed, code=code)
