"""Codex CLI TUI session logs (FORMATS.md §2.3): one reply per `token_count` event.

The prompt cannot be rebuilt (no instructions, no tool schemas, outputs only as deltas), but every
`token_count` gives the whole prompt of its request (`input_tokens` includes the cached part,
OpenAI semantics), so block sizes come from the usage (traces/importers/tokens.py, `whole`).

What the log shows, and how it is read:
- a `session_configured` event after one that already had requests is a new session (`/new`, or a
  restart): a new conversation whose prompt starts again at the instructions (binary-size log:
  the second session's first prompt is 6,042 tokens after 27,124), not a prompt that shrank;
- the `token_count` of a response arrives after the commands it called have run (codex-rs handles
  each function call as its output item completes, then the response's `Completed` event): the
  commands' outputs are in the NEXT prompt, after the reply that called them;
- the model sees a command's stdout when it exits 0, else its stderr (codex-rs core/src/codex.rs,
  mid-2025: `format_exec_output(if is_success { &stdout } else { &stderr }, …)`; in the log a
  `just fmt` with 5 KB of warnings on stderr and exit 0 grew the next prompt by 35 tokens, the same
  command exiting -1 by 1,623); the TUI event truncates each stream to 5 KiB (MAX_STREAM_OUTPUT);
- a reply's `reasoning_output_tokens` are part of its `output_tokens`, and the reasoning item is
  sent back in the next prompt (the growth of the next prompt includes them): the reply carries
  its reasoning text as a thinking block.
Rollout files (`rollout-*.jsonl`, the log Codex writes under `$CODEX_HOME/sessions`) are read by
traces/importers/codex_rollout.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxbench.sim.core.registry import register
from ctxbench.traces.importers.base import (
    ImportReport,
    ImportResult,
    count,
    jsonl_objects,
    normalize_model,
    parse_time,
    tool_use,
)
from ctxbench.traces.importers.codex_rollout import import_rollout, is_rollout, split_short_prompts
from ctxbench.traces.importers.tokens import Item, build_traces
from ctxbench.traces.model import Content, Usage

CANNOT = [
    "the prompt (instructions, tool schemas, exact items): block sizes come from usage",
    "cache writes (OpenAI reports none)",
]

# The user's message of a task, when the log has no `user_message` (the TUI log of traces-real
# records key events only): its size is the first prompt's remainder (traces/importers/tokens.py).
UNSEEN_PROMPT = "[the user's message: not in the TUI log]"


def _model_output(msg: dict[str, Any]) -> str:
    """What the model saw of a finished command (module docstring)."""
    out, err = str(msg.get("stdout", "") or ""), str(msg.get("stderr", "") or "")
    if not out and not err:
        return str(msg.get("aggregated_output", "") or "")
    return out if msg.get("exit_code") == 0 else err


class _Session:
    """The items of one Codex session, built event by event."""

    def __init__(self, name: str, model: str) -> None:
        self.name = name
        self.model = model
        self.items: list[Item] = []
        self.reply: list[Content] = []  # this response's output: reasoning, messages, calls
        self.results: list[Content] = []  # outputs of this response's calls: the next prompt
        self.asked = False  # a task started and its user message is not in the items yet
        self.asked_t: float | None = None  # when that task started

    def user(self, text: str, t: float | None) -> None:
        self.items.append(Item("user", [Content("text", text=text)], t=t))
        self.asked = False

    def replied(self, usage: Usage, t: float | None) -> None:
        if self.asked:  # the TUI log does not record what the user typed: a block of its own
            self.user(UNSEEN_PROMPT, self.asked_t)
        self.items.append(Item("reply", self.reply or [Content("text", text="")], t=t, usage=usage))
        if self.results:
            self.items.append(Item("user", self.results, t=t))
        self.reply, self.results = [], []


def _usage(info: Any, where: str) -> Usage | None:
    last = info.get("last_token_usage", info) if isinstance(info, dict) else None
    if not isinstance(last, dict) or "input_tokens" not in last:
        return None
    at = "payload.msg.info.last_token_usage"
    inp, cached = count(last, "input_tokens", where, at), count(last, "cached_input_tokens", where, at)
    return Usage(
        input_tokens=max(0, inp - cached),
        cache_read=min(cached, inp),
        output_tokens=count(last, "output_tokens", where, at),
    )


@register("importer", "codex")
def import_codex(paths: list[Path], report: ImportReport | None = None) -> ImportResult:
    path = paths[0]
    report = report or ImportReport(str(path), "codex")
    lines = jsonl_objects(path, report)
    if lines and is_rollout(lines[0][1]):
        return import_rollout(path, report, lines)
    report.cannot_provide = list(CANNOT)
    sessions: list[_Session] = []
    model = ""
    meta: dict[str, str] = {"format": "codex"}
    for n, o in lines:
        t = parse_time(o.get("ts"))
        if o.get("kind") == "session_start":
            model = str(o.get("model", model))
            if o.get("model_provider_id"):  # the endpoint billed (bench/fidelity/interval.py)
                meta["model_provider"] = str(o["model_provider_id"])
            continue
        if o.get("kind") != "codex_event":
            report.counts["non-model lines"] += 1
            continue
        payload = o.get("payload")
        msg = payload.get("msg") if isinstance(payload, dict) else None
        if not isinstance(msg, dict):
            report.skip("codex_event without payload.msg", f"{path.name}:{n}")
            continue
        typ = msg.get("type")
        if typ == "session_configured" or not sessions:
            model = str(msg.get("model", model)) if typ == "session_configured" else model
            if not sessions or sessions[-1].items:
                name = "main" if not sessions else f"session-{len(sessions) + 1}"
                if sessions:
                    report.note(f"{name}: a new Codex session (session_configured) starts a new conversation")
                sessions.append(_Session(name, model))
            sessions[-1].model = model
            if typ == "session_configured":
                continue
        s = sessions[-1]
        if typ == "agent_message":
            s.reply.append(Content("text", text=str(msg.get("message", ""))))
        elif typ == "agent_reasoning":
            s.reply.append(Content("thinking", text=str(msg.get("text", ""))))
        elif typ == "exec_command_begin":
            s.reply.append(tool_use({"command": msg.get("command")}, msg.get("call_id", ""), "shell"))
        elif typ == "exec_command_end":
            s.results.append(
                Content("tool_result", text=_model_output(msg), tool_id=str(msg.get("call_id", "")))
            )
        elif typ == "patch_apply_begin":
            s.reply.append(tool_use({"changes": msg.get("changes")}, msg.get("call_id", ""), "apply_patch"))
        elif typ == "patch_apply_end":
            text = str(msg.get("stdout", "") or "") + str(msg.get("stderr", "") or "")
            s.results.append(Content("tool_result", text=text, tool_id=str(msg.get("call_id", ""))))
        elif typ == "task_started":
            s.asked, s.asked_t = True, t
        elif typ == "user_message":
            s.user(str(msg.get("message", "")), t)
        elif typ == "token_count":
            usage = _usage(msg.get("info") if isinstance(msg.get("info"), dict) else msg, f"{path}:{n}")
            if usage is None:
                report.skip("token_count without input_tokens", f"{path.name}:{n}")
                continue
            s.replied(usage, t)
        else:
            report.counts["other codex events"] += 1
    convs = []
    for s in sessions:  # a request whose prompt dropped and came back (codex_rollout.py)
        sides = [(f"{s.name}-{n}", items) for n, items in split_short_prompts(s.items, report)]
        convs += [
            (n, items, normalize_model(s.model), s.model, dict(meta))
            for n, items in [(s.name, s.items), *sides]
        ]
    return build_traces(
        convs,
        str(path),
        "codex",
        report,
        whole=True,
    )
