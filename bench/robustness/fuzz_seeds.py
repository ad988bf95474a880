"""Valid seeds of each importer's format, one small log per reader, that the fuzz suite and the
soak mutate (bench/robustness/fuzz_inputs.py `importer_input`): every registered importer has one."""

from __future__ import annotations

from typing import Any


def _claude_code() -> list[Any]:
    base = {"sessionId": "s1", "timestamp": "2026-01-01T00:00:00Z", "version": "2.1.0"}
    usage = {
        "input_tokens": 3,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 5000,
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 5000},
        "output_tokens": 40,
    }
    return [
        {**base, "type": "user", "uuid": "u1", "message": {"role": "user", "content": "hello"}},
        {
            **base,
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "requestId": "r1",
            "message": {
                "id": "m1",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"c": 1}}],
                "usage": usage,
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "u2",
            "isSidechain": True,
            "agentId": "abc",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "ok"}]}
                ],
            },
        },
        {
            **base,
            "type": "system",
            "subtype": "compact_boundary",
            "compactMetadata": {"trigger": "auto", "preTokens": 9},
        },
        {
            **base,
            "type": "assistant",
            "uuid": "a2",
            "requestId": "r2",
            "message": {
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "done"}],
                "usage": usage,
            },
        },
    ]


def _claude_trace() -> list[Any]:
    req = {
        "timestamp": 1767225600.0,
        "headers": {"x-api-key": "[redacted]"},
        "body": {
            "model": "claude-sonnet-4-5",
            "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
            "tools": [
                {"name": "Bash", "input_schema": {"type": "object"}},
                {"name": "Read", "input_schema": {}},
            ],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        },
    }
    sse = (
        'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":3,'
        '"cache_read_input_tokens":0,"cache_creation_input_tokens":900}}}\n\n'
        'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
        'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}\n\n'
        'data: {"type":"message_delta","usage":{"output_tokens":5}}\n\n'
    )
    usage = {
        "input_tokens": 3,
        "cache_read_input_tokens": 900,
        "cache_creation_input_tokens": 10,
        "output_tokens": 7,
    }
    more = [
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {"role": "user", "content": "and?"},
    ]
    body: dict[str, Any] = req["body"]  # type: ignore[assignment]
    req2 = {**req, "body": {**body, "messages": body["messages"] + more}}
    return [
        {"request": req, "response": {"status_code": 200, "body_raw": sse}},
        {
            "request": req2,
            "response": {"body": {"usage": usage, "content": [{"type": "text", "text": "yo"}]}},
        },
    ]


def _codex() -> list[Any]:
    tok = {
        "type": "token_count",
        "info": {"last_token_usage": {"input_tokens": 900, "cached_input_tokens": 800, "output_tokens": 9}},
    }
    return [
        {"ts": "2026-01-01T00:00:00Z", "kind": "session_start", "model": "gpt-5"},
        {
            "ts": "2026-01-01T00:00:01Z",
            "kind": "codex_event",
            "payload": {"msg": {"type": "user_message", "message": "go"}},
        },
        {
            "ts": "2026-01-01T00:00:02Z",
            "kind": "codex_event",
            "payload": {"msg": {"type": "agent_message", "message": "ok"}},
        },
        {"ts": "2026-01-01T00:00:03Z", "kind": "codex_event", "payload": {"msg": tok}},
        {
            "ts": "2026-01-01T00:00:04Z",
            "kind": "codex_event",
            "payload": {"msg": {"type": "exec_command_end", "stdout": "x", "stderr": ""}},
        },
        {"ts": "2026-01-01T00:00:05Z", "kind": "codex_event", "payload": {"msg": tok}},
    ]


def _openhands() -> list[Any]:
    usage = {
        "model": "openai/gpt-4o",
        "prompt_tokens": 900,
        "cache_read_tokens": 100,
        "cache_write_tokens": 0,
        "completion_tokens": 9,
        "response_id": "r1",
    }
    history = [
        {"source": "user", "message": "fix it", "timestamp": "2026-01-01T00:00:00"},
        {
            "source": "agent",
            "message": "ls",
            "timestamp": "2026-01-01T00:00:01",
            "tool_call_metadata": {"model_response": {"id": "r1"}},
        },
        {"source": "environment", "content": "a b", "timestamp": "2026-01-01T00:00:02"},
    ]
    return [{"instance_id": "repo__repo-1", "history": history, "metrics": {"token_usages": [usage]}}]


def _cline() -> Any:
    return {
        "system_prompt": "you are cline",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "go"}], "ts": 1767225600000},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "read", "input": {"p": "a"}}],
                "metrics": {
                    "inputTokens": 900,
                    "cacheReadTokens": 100,
                    "cacheWriteTokens": 0,
                    "outputTokens": 9,
                    "cost": 0.01,
                },
                "modelInfo": {"id": "claude-sonnet-4-5"},
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
        ],
    }


def _inspect_ai() -> Any:
    ev = {
        "event": "model",
        "model": "openai/gpt-4o",
        "timestamp": "2026-01-01T00:00:00+00:00",
        "input": [{"role": "system", "content": "sys"}, {"role": "user", "content": "attachment://a1"}],
        "output": {
            "usage": {"input_tokens": 900, "input_tokens_cache_read": 100, "output_tokens": 9},
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "content": "ok",
                        "tool_calls": [{"id": "c1", "function": "bash", "arguments": {"cmd": "ls"}}],
                    }
                }
            ],
        },
    }
    return {"eval": {"task": "t"}, "samples": [{"attachments": {"a1": "hello"}, "events": [ev, dict(ev)]}]}


def _swe_agent() -> Any:
    return {
        "trajectory": [],
        "history": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": [{"type": "text", "text": "fix"}]},
            {"role": "assistant", "content": "ls"},
        ],
        "info": {"model_stats": {"tokens_sent": 10}},
    }


def _opencode() -> Any:
    """An `opencode export` document (traces/importers/opencode.py): a step with a tool call, then a
    compaction and its summary."""
    tokens = {"total": 909, "input": 0, "output": 9, "cache": {"write": 900}}
    step = {"type": "step-finish", "tokens": tokens, "cost": 0.01}
    call = {"status": "completed", "input": {"c": "ls"}, "output": "ok"}
    model = "claude-sonnet-4-5"
    return {
        "info": {"id": "ses_1", "slug": "s"},
        "messages": [
            {"info": {"id": "m1", "role": "user"}, "parts": [{"type": "text", "text": "go"}]},
            {
                "info": {"id": "m2", "role": "assistant", "modelID": model, "time": {"created": 17672e8}},
                "parts": [{"type": "tool", "tool": "bash", "callID": "t1", "state": call}, step],
            },
            {"info": {"id": "m3", "role": "user"}, "parts": [{"type": "compaction", "tail_start_id": "m2"}]},
            {
                "info": {"id": "m4", "role": "assistant", "summary": True, "modelID": model},
                "parts": [{"type": "text", "text": "summary"}, step],
            },
        ],
    }


def _gemini_cli() -> list[dict[str, Any]]:
    """A Gemini CLI session log (traces/importers/gemini_cli.py): header, opening history, a reply
    with a call and its logged result, a replaced history."""
    ctx = {"id": "c", "type": "user", "content": [{"text": "<session_context>"}]}
    call = {"id": "t1", "name": "run_shell_command", "args": {"command": "ls"}}
    tokens = {"input": 900, "output": 9, "cached": 0, "thoughts": 0, "tool": 0, "total": 909}
    reply = {"id": "g1", "type": "gemini", "content": "ok", "tokens": tokens, "model": "gemini-2.5-pro"}
    result = {"functionResponse": {"id": "t1", "name": "run_shell_command", "response": {"output": "a"}}}
    return [
        {"sessionId": "s", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z", "kind": "main"},
        {"$set": {"messages": [ctx]}},
        {"id": "u1", "type": "user", "content": [{"text": "go"}]},
        reply,
        {**reply, "toolCalls": [{**call, "result": [result]}]},
        {"id": "u2", "type": "user", "content": [result]},
        {"$set": {"messages": [ctx, {"id": "u3", "type": "user", "content": [{"text": "summary"}]}]}},
        {**reply, "id": "g2", "tokens": {**tokens, "input": 950, "cached": 800}},
    ]


# name → (file name, JSONL lines (a list) or one JSON document)
IMPORTER_SEEDS: dict[str, tuple[str, Any, bool]] = {
    "claude-code": ("session.jsonl", _claude_code(), True),
    "claude-trace": ("log-1.jsonl", _claude_trace(), True),
    "codex": ("codex-tui.jsonl", _codex(), True),
    "openhands": ("output.jsonl", _openhands(), True),
    "cline": ("s.messages.json", _cline(), False),
    "inspect-ai": ("eval.json", _inspect_ai(), False),
    "swe-agent": ("run.traj", _swe_agent(), False),
    "opencode": ("ses_1.json", _opencode(), False),
    "gemini-cli": ("session-1.jsonl", _gemini_cli(), True),
}
