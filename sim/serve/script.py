"""Scripted model replies: echo, replay (the replies of a trace), task (a script of tool calls).

Task mode makes a harness do real work long enough to reach its own compaction: each main
request (one that offers tools and is not a summary request) gets the next step of the script —
usually a call to the harness's shell tool whose output is large — until the steps run out, then a
final text. A harness that offers no tools but has the model write its calls as XML tags in the
reply's text (Cline on an OpenAI-compatible endpoint, Roo Code: wire/common.py `XML_TOOL_USE`) gets
each step written so. Steps are counted globally, not per conversation: after a compaction a harness
restarts its conversation, and a per-conversation count loops forever (ecosystem.md §2, seen:
3,637 requests in 400 s). Side requests (no tools: titles, Codex's checkpoint compaction, other
summarizers) and summary requests (Claude Code's "Respond with TEXT ONLY") get a text reply of
`summary_bytes`. A JSON-format request (title generation) gets a small JSON object.

Script file (YAML or JSON):
    steps:                      # one per main request, in order
      - shell: "head -c 25000 /dev/urandom | base64"   # call the request's shell-like tool
        text: "Reading the output."                      # optional text before the call
        output_tokens: 120                               # optional reported output size
      - tool: Read                                       # or any tool by name, with its input
        input: {file_path: /etc/hostname}
    final_text: "Done."
    summary_bytes: 4000
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ctxbench.sim.core.yamltext import load_yaml
from ctxbench.sim.serve.render import Reply
from ctxbench.sim.serve.wire import Parsed
from ctxbench.traces.model import MessageEvent, Trace

SHELL_TOOLS = (
    "Bash", "exec_command", "shell", "bash", "run_shell_command", "local_shell", "shell_command",
    "run_commands",  # Cline CLI 3.x: `commands`, an array of command strings
)  # fmt: skip
SUMMARY_MARKERS = (
    "Respond with TEXT ONLY",  # Claude Code's compaction prompt (ecosystem.md §3a)
    "CONTEXT CHECKPOINT COMPACTION",  # Codex (§3b)
    "create a detailed summary",
    "context summarization agent",  # opencode (§3c)
    "<state_snapshot>",  # Gemini CLI's summary and verification prompts (§3d)
)
# Gemini CLI's next-speaker check prompt (bundle: nextSpeakerChecker CHECK_PROMPT, ecosystem.md §3d)
NEXT_SPEAKER_CHECK = "determine who should logically speak next"
STEP_KEYS = ("shell", "tool", "input", "text", "output_tokens")
XML_SHELL = "execute_command"  # the shell tool of Cline's and Roo Code's XML tool calls


class ScriptError(ValueError):
    """A task script that cannot be used: names the file and the step."""


def _tokens(text: str) -> int:
    return max(1, len(text.encode("utf-8")) // 4)


def _filler(nbytes: int, n: int = 0) -> str:
    words = "The summary records the goal, the files touched, the decisions and the next step. "
    head = f"Summary {n}. " if n else ""
    return (head + words * (nbytes // len(words) + 1))[:nbytes]


def summary_reply(instruction: str, nbytes: int, n: int = 0) -> str:
    """A summary of `nbytes` bytes, in the form the instruction asks for: Claude Code's compaction
    prompt asks for an <analysis> block and a <summary> block, and 2.1.332 sends the request again
    when the reply has no <summary> tags (bench/claude_code_wire.md §3); a real model follows the
    form, so the mock does too. Other instructions get the plain text. `n` > 0: the n-th summary
    of the run, which says so (a real model's summaries differ; identical ones let a harness that
    summarizes its own summary, as Gemini CLI does, read the next request from the cache)."""
    if "<summary>" not in instruction:
        return _filler(nbytes, n)
    head, tail = "<analysis>\nThe conversation so far.\n</analysis>\n\n<summary>\n", "\n</summary>"
    return head + _filler(max(0, nbytes - len(head) - len(tail)), n) + tail


def shell_input(p: Parsed, name: str, cmd: str) -> dict[str, Any]:
    """The shell tool's input for `cmd`, shaped by the tool's own parameter names."""
    params = dict(x.split(":", 1) for x in p.tool_params.get(name, ()))
    if "cmd" in params:
        return {"cmd": cmd}
    if params.get("command") == "array":
        return {"command": ["bash", "-lc", cmd]}
    if params.get("commands") == "array":
        return {"commands": [cmd]}
    return {"command": cmd}


@dataclass
class Scripter:
    """Chooses the reply for each request (thread-safe)."""

    mode: str = "echo"  # echo | replay | task
    steps: list[dict[str, Any]] = field(default_factory=list)
    final_text: str = "Done."
    summary_bytes: int = 4000
    replies: list[Reply] = field(default_factory=list)  # replay mode
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _step: int = 0
    _summaries: int = 0
    _per_conv: dict[str, int] = field(default_factory=dict)
    _ids: int = 0

    def _id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}{self._ids:06d}"

    def reply(self, p: Parsed, out_hint: int | None) -> Reply:
        with self._lock:
            r = self._choose(p)
        if out_hint is not None:
            return Reply(r.blocks, out_hint)
        return r

    def _text(self, text: str, out: int | None = None) -> Reply:
        return Reply(({"type": "text", "text": text},), out if out is not None else _tokens(text))

    def _choose(self, p: Parsed) -> Reply:
        if p.wants_json and NEXT_SPEAKER_CHECK in p.last_user_text:
            # Gemini CLI asks after a reply without tool calls (model.skipNextSpeakerCheck false): the
            # model speaks next while the task has steps left, so a text-only step ends a segment of
            # the run ("Please continue." follows) and not the run
            left = self.mode == "task" and self._step < len(self.steps)
            who = "model" if left else "user"
            return self._text(json.dumps({"reasoning": "task script", "next_speaker": who}))
        if p.wants_json:
            return self._text(json.dumps({"title": "ctxbench task", "isNewTopic": True}))
        if self.mode == "replay" and self.replies:
            k = self._per_conv.get(p.session, 0)
            self._per_conv[p.session] = k + 1
            return self.replies[k % len(self.replies)]
        if self.mode == "echo":
            return self._text("ok")
        summary = not (p.tool_names or p.xml_tools) or any(m in p.last_user_text for m in SUMMARY_MARKERS)
        if summary:
            self._summaries += 1
            return self._text(summary_reply(p.last_user_text, self.summary_bytes, self._summaries))
        if self.mode != "task" or self._step >= len(self.steps):
            return self._text(self.final_text if self.mode == "task" else "ok")
        step = self.steps[self._step]
        self._step += 1
        blocks: list[dict[str, Any]] = []
        if step.get("text"):
            blocks.append({"type": "text", "text": str(step["text"])})
        if "shell" not in step and "tool" not in step:  # a text-only step: the turn ends here
            return self._text(str(step["text"]), int(step.get("output_tokens", 0)) or None)
        if not p.tool_names:  # tools called in XML tags in the reply's text (`Parsed.xml_tools`)
            return self._xml_call(step)
        if "shell" in step:
            name = next((n for n in SHELL_TOOLS if n in p.tool_names), p.tool_names[0])
            inp = shell_input(p, name, str(step["shell"]))
        else:
            name = str(step.get("tool"))
            if name not in p.tool_names:
                return self._text(self.final_text)
            inp = dict(step.get("input") or {})
        blocks.append({"type": "tool_use", "id": self._id("toolu_ctx"), "name": name, "input": inp})
        out = int(step.get("output_tokens", 0)) or _tokens(json.dumps(blocks))
        return Reply(tuple(blocks), out)

    def _xml_call(self, step: dict[str, Any]) -> Reply:
        """A step as Cline and Roo Code's models write a tool call when no tools are offered: the tool's
        name in a tag around one tag per parameter, after the step's text; a shell step calls their
        shell tool, `execute_command`."""
        if "shell" in step:
            name, inp = XML_SHELL, {"command": str(step["shell"]), "requires_approval": "false"}
        else:
            name, inp = str(step.get("tool")), dict(step.get("input") or {})
        params = "".join(f"<{k}>{v if isinstance(v, str) else json.dumps(v)}</{k}>\n" for k, v in inp.items())
        call = f"<{name}>\n{params}</{name}>"
        text = f"{step['text']}\n\n{call}" if step.get("text") else call
        return self._text(text, int(step.get("output_tokens", 0)) or None)

    @property
    def steps_done(self) -> int:
        return self._step


def load_script(path: str) -> Scripter:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ScriptError(f"{path}: cannot read task script: {e.strerror or e}") from None
    try:
        data = load_yaml(text)
    except yaml.YAMLError as e:
        raise ScriptError(f"{path}: not valid YAML/JSON: {e}") from None
    if not isinstance(data, dict):
        raise ScriptError(f"{path}: a task script must be a mapping with 'steps'")
    valid = ("steps", "final_text", "summary_bytes", "repeat")
    for k in data:
        if k not in valid:
            raise ScriptError(f"{path}: unknown key {k!r}; valid keys: {', '.join(valid)}")
    steps = data.get("steps") or []
    if not isinstance(steps, list):
        raise ScriptError(f"{path}: 'steps' must be a list")
    for i, s in enumerate(steps):
        if not isinstance(s, dict) or not ("shell" in s or "tool" in s or "text" in s):
            raise ScriptError(f"{path}: steps[{i}]: needs 'shell', 'tool' or 'text' (a text-only reply)")
        for k in s:
            if k not in STEP_KEYS:
                raise ScriptError(
                    f"{path}: steps[{i}]: unknown key {k!r}; valid keys: {', '.join(STEP_KEYS)}"
                )
    steps = steps * int(data.get("repeat", 1))
    return Scripter("task", steps, str(data.get("final_text", "Done.")), int(data.get("summary_bytes", 4000)))


def replay_script(trace: Trace) -> Scripter:
    """Replies of a trace in order (per conversation): text and tool_use blocks, output tokens."""
    replies = []
    for ev in trace.events:
        if not isinstance(ev, MessageEvent) or ev.role != "assistant":
            continue
        blocks: list[dict[str, Any]] = []
        for c in ev.content:
            if c.kind == "tool_use":
                try:
                    inp = json.loads(c.text) if c.text else {}
                except ValueError:
                    inp = {"text": c.text}
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": c.tool_id,
                        "name": c.name,
                        "input": inp if isinstance(inp, dict) else {"value": inp},
                    }
                )
            elif c.kind == "text":
                blocks.append({"type": "text", "text": c.text if c.text is not None else _filler(c.nbytes)})
        out = ev.output_tokens if ev.output_tokens is not None else _tokens(json.dumps(blocks))
        replies.append(Reply(tuple(blocks) or ({"type": "text", "text": "ok"},), int(out)))
    return Scripter("replay", replies=replies)
