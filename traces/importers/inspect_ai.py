"""Inspect AI eval logs (`.json`, FORMATS.md §2.5): every `model` event of each sample is one request
(`input` messages with `attachment://` references resolved, `output.usage`). One trace per sample."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxbench.traces.importers.base import (
    ImportFailure,
    ImportReport,
    ImportResult,
    canonical,
    count,
    json_document,
    normalize_model,
    parse_time,
    tool_use,
)
from ctxbench.traces.importers.tokens import Item, build_traces
from ctxbench.traces.model import Content, Usage

CANNOT = ["cache writes (OpenAI models report none)"]


def _text(v: Any, att: dict[str, Any]) -> str:
    if isinstance(v, str):
        return str(att.get(v[len("attachment://") :], v)) if v.startswith("attachment://") else v
    if isinstance(v, list):
        return "\n".join(_text(x.get("text", canonical(x)) if isinstance(x, dict) else x, att) for x in v)
    return canonical(v)


def _message(m: dict[str, Any], att: dict[str, Any]) -> tuple[str, list[Content]]:
    role = m.get("role")
    text = _text(m.get("content", ""), att)
    if role == "assistant":
        cs = [Content("text", text=text)]
        for c in m.get("tool_calls") or []:
            cs.append(tool_use(c.get("arguments", {}), c.get("id", ""), str(c.get("function", "tool"))))
        return "assistant", cs
    if role == "tool":
        return "user", [Content("tool_result", text=text, tool_id=str(m.get("tool_call_id", "")))]
    return "user", [Content("text", text=text)]


def import_inspect_ai(paths: list[Path], report: ImportReport | None = None) -> ImportResult:
    path = paths[0]
    report = report or ImportReport(str(path), "inspect-ai")
    report.cannot_provide = list(CANNOT)
    doc = json_document(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("samples"), list):
        raise ImportFailure(str(path), "not an Inspect eval log: no 'samples' list")
    convs = []
    for s_i, sample in enumerate(doc["samples"]):
        att = sample.get("attachments") or {}
        items: list[Item] = []
        seen = 0
        model = ""
        for ev in sample.get("events") or []:
            if not isinstance(ev, dict) or ev.get("event") != "model":
                continue
            model = str(ev.get("model", model))
            msgs = [m for m in ev.get("input") or [] if isinstance(m, dict)]
            for m in msgs[seen:]:
                if m.get("role") == "system":
                    continue
                role, cs = _message(m, att)
                if role == "user":
                    items.append(Item("user", cs, t=parse_time(ev.get("timestamp"))))
                elif items and items[-1].kind == "reply":
                    pass  # already recorded as the previous output
                else:
                    items.append(Item("reply", cs))
            out = ev.get("output") or {}
            u = out.get("usage") or {}
            if "input_tokens" not in u:
                report.skip("model event without usage", f"samples[{s_i}]")
                usage = None
            else:
                at = f"samples[{s_i}].events[].output.usage"
                read, total = (
                    count(u, "input_tokens_cache_read", str(path), at),
                    count(u, "input_tokens", str(path), at),
                )
                usage = Usage(
                    max(0, total - read),
                    min(read, total),
                    count(u, "input_tokens_cache_write", str(path), at),
                    0,
                    count(u, "output_tokens", str(path), at),
                )
            choice = (out.get("choices") or [{}])[0].get("message") or {}
            _, cs = _message({**choice, "role": "assistant"}, att)
            items.append(Item("reply", cs, t=parse_time(ev.get("timestamp")), usage=usage, model=model))
            seen = len(msgs) + 1
        convs.append(
            (
                f"sample-{sample.get('id', s_i)}",
                items,
                normalize_model(model),
                model,
                {"format": "inspect-ai"},
            )
        )
    return build_traces(convs, str(path), "inspect-ai", report, whole=True)
