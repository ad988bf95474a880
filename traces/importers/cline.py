"""Cline SDK sessions (`*.messages.json`, FORMATS.md §2.4; what Cline CLI 3.x writes under
`~/.cline/data/sessions/<id>/`): system prompt and messages with per-reply metrics (`inputTokens` =
the whole prompt, cache reads and writes inside it; the Cline gateway reports no cache writes).
Compacted variants are imported as they are (already compacted); their compaction messages are
counted and noted.

On the Anthropic API (`modelInfo.provider` "anthropic") Cline CLI 3.0.65 sends one cache mark: on the
last text block of the latest user message of the ai-sdk conversation, i.e. the user's latest
prompt (tool results are `tool` messages there), none on the system prompt, the tools or the tool
loop after the prompt (its bundle: the prompt-cache step marks the last `user` message's last text
part; checked against `ctxbench serve`, tests/traces/importers/test_cline_cli.py), so every request
of a tool loop reads the prefix up to the prompt and pays the rest as uncached input. The importer
records that mark (`meta.message_mark` "user prompt", traces/importers/sizing.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.sim.core.registry import register
from ctxbench.traces.importers.base import (
    ImportFailure,
    ImportReport,
    ImportResult,
    canonical,
    cost,
    count,
    json_document,
    normalize_model,
    parse_time,
    tool_use,
)
from ctxbench.traces.importers.tokens import Item, build_traces
from ctxbench.traces.model import Content, SystemEvent, Usage

CANNOT = ["tool schemas", "cache writes (the Cline gateway reports 0)"]


def _contents(raw: Any, role: str) -> list[Content]:
    out: list[Content] = []
    for b in raw if isinstance(raw, list) else [{"type": "text", "text": str(raw)}]:
        if not isinstance(b, dict):
            continue
        t = b.get("type")
        if t == "text":
            out.append(Content("text", text=str(b.get("text", ""))))
        elif t == "file":
            out.append(Content("text", text=f"{b.get('path', '')}\n{b.get('content', '')}"))
        elif t == "tool_use" and role == "assistant":
            out.append(tool_use(b.get("input", {}), b.get("id", ""), str(b.get("name", "tool"))))
        elif t == "tool_result" and role == "user":
            c = b.get("content")
            text = c if isinstance(c, str) else canonical(c)
            out.append(Content("tool_result", text=text, tool_id=str(b.get("tool_use_id", ""))))
        else:
            out.append(Content("text", text=canonical(b)))
    return out


@dataclass
class _Conversation:
    """The requests one model served (one provider cache): its items, and the user messages sent
    since its last reply."""

    name: str
    model: str
    meta: dict[str, Any]
    items: list[Item] = field(default_factory=list)
    pending: list[Item] = field(default_factory=list)


@register("importer", "cline")
def import_cline(paths: list[Path], report: ImportReport | None = None) -> ImportResult:
    """One conversation per model (a provider cache is per model): Cline lets the user switch
    models mid-session, and session.messages.json ends with one mistralai/voxtral request a day
    later (a 12,238-token prompt after 51,852). A model's first reply starts its conversation with
    the messages since the previous reply; a model the session comes back to goes on with its own
    conversation (replies of the other models in between are not in it: their tokens are part of
    its next billed prompt, which sizes its blocks)."""
    path = paths[0]
    report = report or ImportReport(str(path), "cline")
    report.cannot_provide = list(CANNOT)
    doc = json_document(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        raise ImportFailure(str(path), "not a Cline session: no 'messages' list")
    convs: dict[str, _Conversation] = {}  # by model, in order of first reply
    since_reply: list[Item] = []  # user messages since the last reply of any model
    last = ""
    for i, m in enumerate(doc["messages"]):
        if not isinstance(m, dict):
            report.skip("message not an object", f"messages[{i}]")
            continue
        role = m.get("role")
        meta = m.get("metadata")
        kind = meta.get("kind") if isinstance(meta, dict) else None
        if kind:
            report.counts[f"{kind} messages (file already compacted)"] += 1
        t = parse_time(m.get("ts"))
        if role == "assistant":
            raw_info = m.get("modelInfo")
            info: dict[str, Any] = raw_info if isinstance(raw_info, dict) else {}
            model = str(info.get("id", "")) or last
            conv = convs.get(model)
            if conv is None:
                name = "main" if not convs else model.rsplit("/", 1)[-1] or f"model-{len(convs) + 1}"
                if convs:
                    report.note(
                        f"{name}: replies from {model} (another model) are a conversation of their own"
                    )
                # the gateway the usage comes from (modelInfo.provider "cline"): sim/providers/
                # choice.py serves the log on its profile (sim/data/profiles/cline.yaml)
                gateway = str(info.get("provider", ""))
                about: dict[str, Any] = {"format": "cline", "gateway": gateway}
                if gateway == "anthropic":  # the module docstring: one mark, on the user's prompt
                    about["message_mark"] = "user prompt"
                conv = convs[model] = _Conversation(name, model, about)
                conv.pending = list(since_reply)
            elif model != last:
                report.note(
                    f"{conv.name}: the session came back to {model}; the replies in between are not in it"
                )
            conv.items += conv.pending
            conv.items.append(
                Item("reply", _contents(m.get("content"), "assistant"), t=t, usage=_usage(m, i, path))
            )
            conv.pending, since_reply, last = [], [], model
        elif role == "user":
            item = Item("user", _contents(m.get("content"), "user"), t=t)
            since_reply.append(item)
            for c in convs.values():
                c.pending.append(item)
        else:
            report.skip(f"message with role {role!r}", f"messages[{i}]")
    for c in convs.values():
        c.items += c.pending
    sys_text = doc.get("system_prompt")
    sys_event = SystemEvent((Content("text", text=str(sys_text)),), t=0.0) if sys_text else None
    return build_traces(
        [(c.name, c.items, normalize_model(c.model), c.model, c.meta) for c in convs.values()],
        str(path),
        "cline",
        report,
        whole=True,
        system={c.name: sys_event for c in convs.values()} if sys_event else None,
    )


def _usage(m: dict[str, Any], i: int, path: Path) -> Usage | None:
    """Usage of a reply from `metrics`: inputTokens is the whole prompt (FORMATS.md §2.4)."""
    raw_met = m.get("metrics")
    met: dict[str, Any] | None = raw_met if isinstance(raw_met, dict) else None
    if met is None or "inputTokens" not in met:
        return None
    at = f"messages[{i}].metrics"
    total, read = count(met, "inputTokens", str(path), at), count(met, "cacheReadTokens", str(path), at)
    write = count(met, "cacheWriteTokens", str(path), at)
    return Usage(
        max(0, total - read - write),
        min(read, total),
        write,
        0,
        count(met, "outputTokens", str(path), at),
        cost(met, "cost", str(path), at),
    )
