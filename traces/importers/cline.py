"""Cline SDK sessions (`*.messages.json`, FORMATS.md §2.4): system prompt and messages with per-reply
metrics (`inputTokens` = the whole prompt, `cacheReadTokens`; the gateway reports no cache writes).
Compacted variants are imported as they are (already compacted); their compaction messages are
counted and noted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def _conversation_name(model: str, taken: int) -> str:
    return "main" if not taken else model.rsplit("/", 1)[-1] or f"model-{taken + 1}"


def import_cline(paths: list[Path], report: ImportReport | None = None) -> ImportResult:
    """One conversation per model: a reply from another model than the conversation's (Cline lets
    the user switch models mid-session; session.messages.json ends with one mistralai/voxtral
    request a day later, a 12,238-token prompt after 51,852) is served by another provider cache
    and starts a conversation of its own with the messages since the previous reply."""
    path = paths[0]
    report = report or ImportReport(str(path), "cline")
    report.cannot_provide = list(CANNOT)
    doc = json_document(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        raise ImportFailure(str(path), "not a Cline session: no 'messages' list")
    convs: list[tuple[str, list[Item], str, dict[str, Any]]] = []  # name, items, model, meta
    pending: list[Item] = []  # user messages since the last reply
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
            model = str(info.get("id", "")) or (convs[-1][2] if convs else "")
            if not convs or (model != convs[-1][2] and convs[-1][2]):
                name = _conversation_name(model, len(convs))
                if convs:
                    report.note(
                        f"{name}: a reply from {model} (another model) starts a conversation of its own"
                    )
                # the gateway the log's usage comes from (modelInfo.provider: "cline"), for
                # sim/providers/choice.py: it reports no cache writes (sim/data/profiles/cline.yaml)
                convs.append((name, [], model, {"format": "cline", "gateway": str(info.get("provider", ""))}))
            items = convs[-1][1]
            items += pending
            pending = []
            items.append(
                Item("reply", _contents(m.get("content"), "assistant"), t=t, usage=_usage(m, i, path))
            )
        elif role == "user":
            pending.append(Item("user", _contents(m.get("content"), "user"), t=t))
        else:
            report.skip(f"message with role {role!r}", f"messages[{i}]")
    if convs:
        convs[-1][1].extend(pending)
    sys_text = doc.get("system_prompt")
    sys_event = SystemEvent((Content("text", text=str(sys_text)),), t=0.0) if sys_text else None
    return build_traces(
        [(name, items, normalize_model(model), model, meta) for name, items, model, meta in convs],
        str(path),
        "cline",
        report,
        whole=True,
        system={name: sys_event for name, *_ in convs} if sys_event else None,
    )


def _usage(m: dict[str, Any], i: int, path: Path) -> Usage | None:
    """Usage of a reply from `metrics`: inputTokens is the whole prompt (FORMATS.md §2.4)."""
    raw_met = m.get("metrics")
    met: dict[str, Any] | None = raw_met if isinstance(raw_met, dict) else None
    if met is None or "inputTokens" not in met:
        return None
    at = f"messages[{i}].metrics"
    total, read = count(met, "inputTokens", str(path), at), count(met, "cacheReadTokens", str(path), at)
    return Usage(
        max(0, total - read),
        min(read, total),
        count(met, "cacheWriteTokens", str(path), at),
        0,
        count(met, "outputTokens", str(path), at),
        cost(met, "cost", str(path), at),
    )
