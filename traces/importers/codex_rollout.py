"""Codex CLI rollout files (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`): the log Codex
writes for every session (the TUI log of traces/importers/codex.py is another one).

Each line is `{"timestamp", "type", "payload"}` (bench/claude_code_wire.md §4, Codex CLI 0.171.0
run against `ctxbench serve`):
- `session_meta`: `base_instructions.text` is the instructions sent with every request: the
  system prompt of the trace; `turn_context` names the model;
- `response_item`: the items of the prompt as the Responses API takes them: `message`
  (developer and user items are prompt text, assistant items a reply's text), `reasoning` (sent
  back in the next prompt), `function_call` / `custom_tool_call` (a reply's tool call) and
  `*_output` (its result, in the next prompt);
- the usage of one response: `token_usage_record` (`usage`, one per `response_id`, written after
  that response's items and before its calls' outputs) where the file has them, else the
  `last_token_usage` of each `event_msg` `token_count` whose totals moved (Codex repeats the last
  one, e.g. before a compaction). `input_tokens` includes the cached part (OpenAI semantics), so
  block sizes come from the whole prompt (traces/importers/tokens.py, `whole`);
- `compacted`: the conversation was replaced by a summary (`message`). The reply before it was
  the compaction request's: sent without tools and under other instructions (the serve ledger:
  it shares no prefix with the conversation's requests, tests/bench/data/live/codex-0.171.0), so it
  is imported as a conversation of its own (`compaction-N`: one request whose prompt, not in the
  file, is a block sized from its usage), never as a request of the main conversation, whose
  prompt would seem to shrink there.
- a request whose recorded prompt drops below the previous one's and the next one's comes back
  to at least the earlier size (issue 33: 11,194 -> 3,773 -> 11,725 tokens on a response with
  three parallel tool calls, Codex 0.x) did not carry the conversation: its usage is imported as
  a conversation of its own (`short-prompt-N`, one request whose prompt is a block sized from
  it, as a compaction request), and its reply stays in the conversation as a request without
  usage, so that the blocks before it are not sized as a rewrite (traces/importers/sizing.py
  `take_back`) and the next request is sized on the prompt before the drop.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxbench.traces.importers.base import (
    ImportReport,
    ImportResult,
    count,
    normalize_model,
    other_price_terms,
    parse_time,
    tool_use,
)
from ctxbench.traces.importers.tokens import Item, build_traces
from ctxbench.traces.model import Content, SystemEvent, Usage

SHORT_PROMPT = "[a request whose prompt is not the conversation's: not in the rollout]"

CANNOT = [
    "tool schemas (block sizes come from usage)",
    "the compaction request's own instruction (its reply and usage are kept)",
    "cache writes (OpenAI reports none)",
]
UNSEEN_HISTORY = "[the conversation sent for compaction, without tools: not in the rollout]"
CALLS = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def is_rollout(first: dict[str, Any] | None) -> bool:
    """Whether a file whose first object is `first` is a rollout file (module docstring), or one
    of the first versions' (`is_early_rollout`)."""
    return is_early_rollout(first) or (
        isinstance(first, dict)
        and first.get("type") in ("session_meta", "turn_context", "response_item", "event_msg")
    )


def is_early_rollout(first: dict[str, Any] | None) -> bool:
    """The rollout of the first Codex CLI versions (0.22.0, run against `ctxbench serve`): a first
    line `{id, timestamp, instructions}`, then the bare response items between `{"record_type":
    "state"}` lines; no token counts and no model name."""
    return isinstance(first, dict) and "instructions" in first and "id" in first and "type" not in first


def _text(content: Any) -> str:
    parts = content if isinstance(content, list) else []
    return "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict) and "text" in p)


def _usage(u: Any, where: str, report: ImportReport) -> Usage | None:
    if not isinstance(u, dict) or "input_tokens" not in u:
        return None
    inp, cached = count(u, "input_tokens", where), count(u, "cached_input_tokens", where)
    if count(u, "cache_write_input_tokens", where):
        report.note("cache_write_input_tokens > 0: kept inside the uncached input (OpenAI bills no writes)")
    return Usage(
        input_tokens=max(0, inp - cached),
        cache_read=min(cached, inp),
        output_tokens=count(u, "output_tokens", where),
    )


class _Reader:
    """The items of one rollout, line by line."""

    def __init__(self, report: ImportReport, by_record: bool) -> None:
        self.report = report
        self.by_record = by_record  # usage from token_usage_record lines (else token_count)
        self.items: list[Item] = []
        self.reply: list[Content] = []
        self.called: set[str] = set()  # call ids of replies already in the items
        self.pending: list[Content] = []  # outputs of calls whose reply is not in the items yet
        self.model = ""
        self.system = ""
        self.provider = ""  # session_meta model_provider: the endpoint billed (bench/fidelity/interval.py)
        self.totals: Any = None
        self.sides: list[tuple[str, list[Item]]] = []  # compaction requests (module docstring)

    def replied(self, usage: Usage | None, t: float | None, where: str) -> None:
        self.items.append(
            Item(
                "reply",
                self.reply or [Content("text", text="")],
                t=t,
                usage=usage,
                where=where,
                model=self.model,
            )
        )
        self.called |= {c.tool_id for c in self.reply if c.kind == "tool_use"}
        self.reply = []
        if self.pending:
            self.items.append(Item("user", self.pending, t=t))
            self.pending = []

    def item(self, p: dict[str, Any], t: float | None) -> None:
        kind = p.get("type")
        if kind == "message":
            if p.get("role") == "assistant":
                self.reply.append(Content("text", text=_text(p.get("content"))))
            else:  # developer and user items: prompt text
                self.items.append(Item("user", [Content("text", text=_text(p.get("content")))], t=t))
        elif kind == "reasoning":
            summary = _text(p.get("summary")) or _text(p.get("content"))
            self.reply.append(Content("thinking", text=summary))
        elif kind in CALLS:
            args = p.get("arguments", p.get("input", p.get("action")))
            self.reply.append(tool_use(args, p.get("call_id", ""), str(p.get("name", kind))))
        elif kind in OUTPUTS:
            out = p.get("output")
            text = out if isinstance(out, str) else _text(out) if isinstance(out, list) else str(out or "")
            result = Content("tool_result", text=text, tool_id=str(p.get("call_id", "")))
            if result.tool_id in self.called:  # its reply is in: the result joins the next prompt
                self.items.append(Item("user", [result], t=t))
            else:
                self.pending.append(result)
        else:
            self.report.counts[f"response items of type {kind!r} (not modelled)"] += 1

    def line(self, o: dict[str, Any], where: str) -> None:
        typ, p, t = o.get("type"), o.get("payload"), parse_time(o.get("timestamp"))
        if not isinstance(p, dict):
            self.report.counts["rollout lines without a payload object"] += 1
            return
        if typ == "session_meta":
            instr = p.get("base_instructions")
            self.system = self.system or (_text([instr]) if isinstance(instr, dict) else "")
            self.provider = self.provider or str(p.get("model_provider") or "")
        elif typ == "turn_context":
            self.model = str(p.get("model") or self.model)
        elif typ == "response_item":
            self.item(p, t)
        elif typ == "compacted":
            self.compaction_request(t)
            self.items += [
                Item("compact", t=t),
                Item("summary", [Content("text", text=str(p.get("message", "")))], t=t),
            ]
            self.report.counts["compactions"] += 1
        elif typ == "token_usage_record" and self.by_record:
            self.usage(p.get("usage"), t, where, p)
        elif typ == "event_msg" and p.get("type") == "token_count" and not self.by_record:
            info = p.get("info")
            if isinstance(info, dict) and info.get("total_token_usage") != self.totals:
                self.totals = info.get("total_token_usage")
                self.usage(info.get("last_token_usage"), t, where, {**info, **p})
            else:
                self.report.counts["token_count events repeating the last totals"] += 1
        else:
            self.report.counts["rollout lines that are no request (events, state)"] += 1

    def compaction_request(self, t: float | None) -> None:
        """The last reply, the compaction request's, becomes a conversation of its own."""
        at = next((k for k in range(len(self.items) - 1, -1, -1) if self.items[k].kind == "reply"), None)
        if at is None:
            return
        reply = self.items.pop(at)
        prompt = Content("text", text=UNSEEN_HISTORY)
        self.sides.append((f"compaction-{len(self.sides) + 1}", [Item("user", [prompt], t=reply.t), reply]))

    def usage(self, u: Any, t: float | None, where: str, terms: Any = None) -> None:
        usage = _usage(u, where, self.report)
        if usage is None:
            self.report.skip("usage without input_tokens", where)
            return
        for term in other_price_terms(terms):  # e.g. `service_tier` "priority" (Codex fast mode)
            self.report.counts[f"requests billed on {term} (priced at list prices: no rates for it)"] += 1
        self.replied(usage, t, where)


def import_rollout(path: Path, report: ImportReport, lines: list[tuple[int, dict[str, Any]]]) -> ImportResult:
    """One rollout file, its lines already read: the main conversation and each compaction
    request (module docstring)."""
    report.cannot_provide = list(CANNOT)
    if lines and is_early_rollout(lines[0][1]):
        return _import_early(path, report, lines)
    r = _Reader(report, any(o.get("type") == "token_usage_record" for _, o in lines))
    for n, o in lines:
        r.line(o, f"{path.name}:{n}")
    if r.reply or r.pending:
        report.skip("reply items after the last usage (no request to attach them to)", path.name)
    r.sides += split_short_prompts(r.items, report)
    system = {"main": SystemEvent((Content("text", text=r.system),))} if r.system else None
    meta = {"format": "codex-rollout", **({"model_provider": r.provider} if r.provider else {})}
    convs = [
        (name, items, *_first_model(items, r.model), meta) for name, items in [("main", r.items), *r.sides]
    ]
    return build_traces(convs, str(path), "codex", report, True, system)


def _whole(u: Usage) -> int:
    return u.input_tokens + u.cache_read


def split_short_prompts(items: list[Item], report: ImportReport) -> list[tuple[str, list[Item]]]:
    """Requests whose prompt drops and comes back (module docstring): their usage moved to a
    conversation of their own each, their reply kept in `items` without usage."""
    sides: list[tuple[str, list[Item]]] = []
    runs: list[list[int]] = [[]]  # replies with usage, a run per compaction
    for k, it in enumerate(items):
        if it.kind == "compact":
            runs.append([])
        elif it.kind == "reply" and it.usage is not None:
            runs[-1].append(k)
    for run in runs:
        for a, b, c in zip(run, run[1:], run[2:], strict=False):
            ua, ub, uc = items[a].usage, items[b].usage, items[c].usage
            if ua is None or ub is None or uc is None:
                continue
            if _whole(ub) < _whole(ua) <= _whole(uc):
                dip = items[b]
                n = len(sides) + 1
                prompt = Content("text", text=SHORT_PROMPT)
                empty = [Content("text", text="")]
                reply = Item("reply", empty, t=dip.t, usage=ub, where=dip.where, model=dip.model)
                sides.append((f"short-prompt-{n}", [Item("user", [prompt], t=dip.t), reply]))
                dip.usage = None
                report.counts[
                    "requests whose prompt dropped and came back (imported as conversations of their own)"
                ] += 1
    return sides


def _first_model(items: list[Item], default: str) -> tuple[str, str]:
    """The model a conversation starts on (catalog name, as recorded): its first reply's
    `turn_context` model; a later `/model` is a `model_switch` (traces/importers/tokens.py)."""
    recorded = next((i.model for i in items if i.kind == "reply" and i.model), default)
    return normalize_model(recorded), recorded


def _import_early(path: Path, report: ImportReport, lines: list[tuple[int, dict[str, Any]]]) -> ImportResult:
    """An early rollout (`is_early_rollout`): the conversation, one request per run of assistant
    items, none with usage (the format records none), on the model `--model` names."""
    report.cannot_provide = [
        "token usage and the model: the first Codex versions' rollouts record neither "
        "(fidelity has nothing to compare; run and context take --model)",
        *CANNOT[:1],
    ]
    r = _Reader(report, False)
    for n, o in lines[1:]:
        if "record_type" in o:
            report.counts["state lines"] += 1
            continue
        kind = o.get("type")
        assistant = (
            kind in CALLS or kind == "reasoning" or (kind == "message" and o.get("role") == "assistant")
        )
        if r.reply and not assistant:  # the reply is complete: its request has ended
            r.replied(None, None, f"{path.name}:{n}")
        r.item(o, None)
    if r.reply:
        r.replied(None, None, path.name)
    instr = lines[0][1].get("instructions")
    system = (
        {"main": SystemEvent((Content("text", text=instr),))} if isinstance(instr, str) and instr else None
    )
    return build_traces(
        [("main", r.items, "", "", {"format": "codex-rollout"})], str(path), "codex", report, True, system
    )
