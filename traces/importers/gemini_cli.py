"""Gemini CLI sessions (`~/.gemini/tmp/<project>/chats/session-*.jsonl`; the older single-JSON
`session-*.json` too): one trace per session and model.

What the log holds (Gemini CLI 0.61.0 run against `ctxbench serve`, beside the server's ledger,
tests/traces/importers/data): a header line (`sessionId`, `startTime`, `kind`), message records
(`id`, `timestamp`, `type` user / gemini / info / error / warning, `content` as API parts,
`toolCalls` with their results, `tokens`), and `{"$set": …}` lines. A record whose id was logged
before replaces it (a reply is logged again once its tool calls have run: the last copy wins). A
`$set` of `messages` is the history the CLI keeps from then on: the first one opens the session (its
`<session_context>` message), a later one that does not just extend the history replaced it (the
CLI compressed the chat, or `--resume` rebuilt it; a resumed process also logs a new header).

The history is reconciled with what the trace already holds at each request: what it added is
sent as new messages; a `$set` that only drops the latest messages and then rebuilds them the same
(a new process restoring the session) changes nothing. Each `gemini` record with `tokens` is one
request. Its usage: `input` is the whole prompt
(`promptTokenCount`, the cached part included), `cached` the part read from the implicit cache,
`output` + `thoughts` the billed output, `tool` (`toolUsePromptTokenCount`) billed as input. Block
sizes come from the usage (traces/importers/sizing.py, whole prompts). A replaced history starts a
new conversation on the same system prompt and tools: a `compaction` whose summary holds the new
history's messages (the compressed summary, the CLI's "Got it" turn, the messages it kept), since
the log does not say which of them the provider had cached.

A model switch (`/model`, or the CLI's router picking Flash or Pro per turn): each model's requests
form a conversation of their own (each model has its own implicit cache, providers.md §3), named
after the model; its first request sends the whole history so far as new messages. Its system
instruction and tools are the first conversation's (`meta.system_of`: one CLI process, one
`getCoreSystemPrompt` and tool list, whatever the model), so its S is that conversation's (or its
own first read, if larger): the reads inside its own first prompt end anywhere in the carried
history (an implicit cache has no marks), and the smallest of them is no system end
(traces/importers/tokens.py).

Plan Mode: a successful `enter_plan_mode` call switches the CLI to Plan Mode and a successful
`exit_plan_mode` call back. Plan Mode sends its own tool declarations and system instruction
(against `ctxbench serve`, 0.61.0 sent 10 tools and a 19,883-character instruction there, 16 and
23,631 outside: tests/traces/importers/data/gemini-cli-0.61.0-plan.*), so its first request reads
nothing cached and the first after it can read what was cached before it. Each model's trace gets a
tool list named after the mode before its first request in another mode than its previous one
(the same mode's list again after leaving it). Its size is the sized system's: the smaller Plan
Mode instruction is not modelled, so the prompts there are sized from their bills as usual. A
switch by keyboard (not a call) is not in the log.

A failed stream attempt: a `gemini` record whose token counts are all 0 is a request whose stream
failed (no finish reason, or thoughts and no text) and that the CLI sent again unchanged
(`GeminiChat.sendMessageStream` retries an `InvalidStreamError`; the corpus's such records date from
2025-11 to 2026-04, while 0.61.0 raises it before it logs the reply). Its prompt was sent and
cached: the next request reads it (development part: FabianLobosMendoza/Autos `97c6369c` reads
12,047 tokens after a logged prompt of 11,949 and an answer of 84; its own prompt, 12,066, has no
room for the attempt's 300-byte text). It is a request without usage (replayed, not scored) whose
reply is in no later prompt.

Not in the log: the system instruction and tool declarations (sized from the usage), and requests
the CLI did not log (the compression request and its verification pass, the request whose reply its
loop detection stopped and the recovery request after it: on the ledger of the resumed run, 6 of
15). A later request can read what one of them cached: the first request of the resumed run read the
recovery request's prompt (its history without the calls' thought signatures), which the log
cannot show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.sim.core.registry import register
from ctxbench.traces.importers.base import (
    ImportFailure,
    ImportReport,
    ImportResult,
    b64_image,
    canonical,
    count,
    json_document,
    jsonl_objects,
    normalize_model,
    parse_time,
    tool_use,
)
from ctxbench.traces.importers.tokens import Item, build_traces
from ctxbench.traces.model import Content, ToolDef, Usage

CANNOT = [
    "the system instruction and tool declarations (sized from the usage)",
    "requests the CLI does not log (compression passes, loop detection's stopped and recovery requests)",
]
# The calls that switch Plan Mode on and off, and the mode each leaves (Gemini CLI 0.61.0 bundle,
# policies/plan.toml; module docstring).
PLAN_MODE_CALLS = {"enter_plan_mode": "plan", "exit_plan_mode": ""}
SENT = ("user", "gemini")  # record types sent to the model (info / error / warning are the CLI's own)


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    if isinstance(content, dict):
        return [content]
    return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []


def _contents(rec: dict[str, Any], as_text: bool = False) -> list[Content]:
    """What a record sends: text parts, inline images, function responses (a user record), the
    reply's text and function calls (a gemini record). `as_text`: everything as text (a message of a
    replaced history, which the trace holds as its compaction's summary)."""
    out: list[Content] = []
    for p in _parts(rec.get("content")):
        if "text" in p and not p.get("thought"):
            out.append(Content("text", text=str(p["text"])))
        elif "functionResponse" in p:
            fr = p["functionResponse"] if isinstance(p["functionResponse"], dict) else {}
            text = canonical(fr.get("response", {}))
            tid = str(fr.get("id") or fr.get("name") or "")
            result = Content("tool_result", text=text, tool_id=tid)
            out.append(Content("text", text=text) if as_text else result)
        elif "inlineData" in p and isinstance(p["inlineData"], dict):
            w, h, n = b64_image(str(p["inlineData"].get("data", "")))
            if w and h and n:
                key = f"img-{rec.get('id', '')}-{len(out)}"
                out.append(Content("image", nbytes=n, key=key, width=w, height=h))
        elif p and "functionCall" not in p:
            out.append(Content("text", text=canonical(p)))
    if rec.get("type") == "gemini":
        for i, call in enumerate(c for c in rec.get("toolCalls") or [] if isinstance(c, dict)):
            name = str(call.get("name", "tool"))
            if as_text:
                out.append(Content("text", text=canonical({"name": name, "args": call.get("args", {})})))
            else:
                out.append(tool_use(call.get("args", {}), call.get("id") or f"{rec.get('id', '')}-{i}", name))
    return out


def _key(rec: dict[str, Any]) -> tuple[Any, ...]:
    """What a record sends, whatever its id and shape: a live reply holds its calls in `toolCalls`,
    the same reply in a `$set` history as `functionCall` parts (ids are the CLI's own)."""
    parts: list[tuple[str, ...]] = []
    for p in _parts(rec.get("content")):
        if "text" in p:
            if not p.get("thought"):
                parts.append(("t", str(p["text"])))
        elif isinstance(p.get("functionCall"), dict):
            parts.append(
                ("c", str(p["functionCall"].get("name")), canonical(p["functionCall"].get("args", {})))
            )
        elif isinstance(p.get("functionResponse"), dict):
            fr = p["functionResponse"]
            parts.append(("r", str(fr.get("name")), canonical(fr.get("response", {}))))
        else:
            parts.append(("o", canonical(p)))
    if rec.get("type") == "gemini" and not any(x[0] == "c" for x in parts):
        for call in (c for c in rec.get("toolCalls") or [] if isinstance(c, dict)):
            parts.append(("c", str(call.get("name")), canonical(call.get("args", {}))))
    return (str(rec.get("type")), tuple(parts))


def _failed_attempt(rec: dict[str, Any]) -> bool:
    """A reply logged with every token count 0: a stream attempt that failed and that the CLI sent
    again (module docstring, "A failed stream attempt")."""
    tokens = rec.get("tokens")
    return isinstance(tokens, dict) and not any(v for v in tokens.values() if isinstance(v, int | float))


def _usage(rec: dict[str, Any], where: str) -> Usage | None:
    tokens = rec.get("tokens")
    if not isinstance(tokens, dict) or _failed_attempt(rec):
        return None
    prompt, read = count(tokens, "input", where, "tokens"), count(tokens, "cached", where, "tokens")
    tool = count(tokens, "tool", where, "tokens")
    out = count(tokens, "output", where, "tokens") + count(tokens, "thoughts", where, "tokens")
    return Usage(max(0, prompt - read) + tool, min(read, prompt), 0, 0, out)


@dataclass
class _Session:
    """The CLI's history (`history`: what it would send next, as `$set` lines and records build it)
    against what the trace already holds (`sent`); they are reconciled at each request."""

    sid: str
    report: ImportReport
    convs: dict[str, list[Item]] = field(default_factory=dict)  # by model
    history: list[tuple[tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)  # (key, record)
    sent: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)  # per model: what its trace holds
    model: str = ""
    owed: dict[str, Any] | None = None  # the last reply's call results, unless a user record holds them
    mode: str = ""  # "plan" from a successful enter_plan_mode call to a successful exit_plan_mode
    mode_sent: dict[str, str] = field(default_factory=dict)  # per model: the mode its trace's tools are

    def settle(self) -> None:
        """Older logs keep a call's result only in its `toolCalls[].result`: sent all the same."""
        if self.owed is not None:
            self.history.append((_key(self.owed), self.owed))
            self.owed = None

    def replace(self, messages: list[Any]) -> None:
        """A `$set` of the history: what the CLI sends from now on (reconciled at the next request)."""
        self.settle()
        recs = [m for m in messages if isinstance(m, dict) and m.get("type") in SENT]
        self.history = [(_key(m), m) for m in recs]

    def _prompt(self, model: str, t: float | None, where: str) -> list[Item]:
        """The items that bring the trace to the CLI's history: the messages it added, or, when it
        replaced what was sent (compression, `--resume` rebuilding it otherwise), a new conversation
        whose summary holds the whole new history."""
        keys = [k for k, _r in self.history]
        sent = self.sent.get(model, [])
        self.sent[model] = keys
        if keys[: len(sent)] == sent:  # a model's first request sends the whole history as new
            return [
                Item("user", _contents(r, as_text=r.get("type") != "user"), t=t)
                for _k, r in self.history[len(sent) :]
            ]
        self.report.counts["histories replaced (compression or --resume)"] += 1
        summary = [c for _k, r in self.history for c in _contents(r, as_text=True)]
        opening = Item("summary", summary or [Content("text", text="")], t=t)
        return [Item("compact", t=t, where=where), opening]

    def _mode_tools(self, model: str, t: float | None) -> list[Item]:
        """A new tool list where the CLI's mode is not the one of the model's previous request: Plan
        Mode sends its own tools and system instruction (module docstring), so the implicit cache
        breaks from the start; leaving it sends the others again."""
        if self.mode == self.mode_sent.get(model, ""):
            return []
        self.mode_sent[model] = self.mode
        self.report.counts["Plan Mode switches (other tools and system instruction: a cache break)"] += 1
        named = ToolDef(f"gemini-cli {self.mode} mode: its tools and system instruction")
        return [Item("tools", tools=(named,) if self.mode else (), t=t)]

    def _switch_mode(self, final: dict[str, Any]) -> None:
        """Follow the Plan Mode calls of a reply that ran (`status` success)."""
        for call in final.get("toolCalls") or []:
            if isinstance(call, dict) and call.get("status") == "success":
                self.mode = PLAN_MODE_CALLS.get(str(call.get("name", "")), self.mode)

    def retried(self, rec: dict[str, Any], t: float | None, where: str) -> None:
        """A failed stream attempt: its prompt was sent (a request, without usage: not scored), its
        reply is in no later prompt (the CLI sends the same history again), its calls never ran."""
        self.report.counts["failed stream attempts sent again (tokens all 0: not scored)"] += 1
        self.model = str(rec.get("model", "")) or self.model
        items = self.convs.setdefault(self.model, [])
        items += self._mode_tools(self.model, t) + self._prompt(self.model, t, where)
        attempt = Item("reply", [Content("text", text="")], t=t, usage=None)
        attempt.where = where
        items.append(attempt)

    def message(self, rec: dict[str, Any], final: dict[str, Any], t: float | None, where: str) -> None:
        kind = rec.get("type")
        if kind not in SENT:
            self.report.counts[f"{kind} records (the CLI's own, not sent)"] += 1
            return
        if kind == "user" and any("functionResponse" in p for p in _parts(rec.get("content"))):
            self.owed = None  # this log records the results as a user record of their own
        self.settle()
        if kind == "gemini" and _failed_attempt(final):
            self.retried(rec, t, where)
            return
        usage = _usage(rec, where) if kind == "gemini" else None
        if usage is None:
            if kind == "gemini":
                self.report.skip("gemini record without tokens (no request of its own)", where)
            self.history.append((_key(final), final if kind == "gemini" else rec))
            return
        self.model = str(rec.get("model", "")) or self.model
        items = self.convs.setdefault(self.model, [])
        items += self._mode_tools(self.model, t) + self._prompt(self.model, t, where)
        reply = Item("reply", _contents(final) or [Content("text", text="")], t=t, usage=usage)
        reply.where = where
        items.append(reply)
        key = _key(final)
        self.history.append((key, final))
        self.sent[self.model].append(key)
        results = [
            part
            for call in final.get("toolCalls") or []
            if isinstance(call, dict)
            for part in _parts(call.get("result"))
            if "functionResponse" in part
        ]
        self.owed = {"type": "user", "content": results} if results else None
        self._switch_mode(final)


def _operations(path: Path, report: ImportReport) -> list[tuple[str, dict[str, Any], str]]:
    """("header" | "set" | "message", object, where) in log order; the older single-JSON session
    as its header and its messages."""
    if path.name.endswith((".jsonl", ".jsonl.gz", ".jsonl.xz", ".jsonl.bz2")):
        ops = []
        for n, obj in jsonl_objects(path, report):
            where = f"{path.name}:{n}"
            if isinstance(obj.get("$set"), dict):
                ops.append(("set", obj["$set"], where))
            elif "sessionId" in obj and "type" not in obj:
                ops.append(("header", obj, where))
            else:
                ops.append(("message", obj, where))
        return ops
    doc = json_document(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        raise ImportFailure(str(path), "not a Gemini CLI session: no 'messages' list")
    msgs = [
        ("message", m, f"{path.name}: messages[{i}]")
        for i, m in enumerate(doc["messages"])
        if isinstance(m, dict)
    ]
    return [("header", doc, path.name), *msgs]


@register("importer", "gemini-cli")
def import_gemini_cli(paths: list[Path], report: ImportReport | None = None) -> ImportResult:
    path = paths[0]
    report = report or ImportReport(str(path), "gemini-cli")
    report.cannot_provide = list(CANNOT)
    ops = _operations(path, report)
    final = {str(o.get("id")): o for kind, o, _w in ops if kind == "message" and o.get("id") is not None}
    header = next((o for kind, o, _w in ops if kind == "header"), {})
    session = _Session(str(header.get("sessionId", path.stem)), report)
    seen: set[str] = set()
    for kind, obj, where in ops:
        if kind == "set":
            if isinstance(obj.get("messages"), list):
                session.replace(obj["messages"])
            continue
        if kind != "message":
            continue
        rid = str(obj.get("id", ""))
        if rid and rid in seen:
            continue  # a later copy of a logged record: its last copy is used (`final`)
        seen.add(rid)
        session.message(obj, final.get(rid, obj), parse_time(obj.get("timestamp")), where)
    meta = {"format": "gemini-cli", "session": session.sid, "usage_counts": "whole prompt"}
    convs = [
        ("main" if i == 0 else model, items, normalize_model(model), model, dict(meta))
        for i, (model, items) in enumerate(session.convs.items())
    ]
    for _name, _items, _model, _recorded, conv_meta in convs[1:]:  # each opens on the history so far
        conv_meta["system_of"] = "main"
    if not convs:
        raise ImportFailure(str(path), "no model responses with tokens found (nothing to import)")
    return build_traces(convs, str(path), "gemini-cli", report)
