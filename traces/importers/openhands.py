"""OpenHands evaluation output (`output.jsonl`, FORMATS.md §2.6): one trace per instance; one reply
per `metrics.token_usages` entry, matched to the agent action whose model response has that id.
The prompts were rendered by OpenHands' templates: events are imported as text."""

from __future__ import annotations

from pathlib import Path

from ctxbench.sim.core.registry import register
from ctxbench.traces.importers.base import (
    ImportReport,
    ImportResult,
    canonical,
    count,
    jsonl_objects,
    normalize_model,
    parse_time,
)
from ctxbench.traces.importers.tokens import Item, build_traces
from ctxbench.traces.model import Content, Usage

CANNOT = [
    "the rendered prompts (OpenHands templates): block sizes come from usage",
    "caching (provider had none)",
]


@register("importer", "openhands")
def import_openhands(paths: list[Path], report: ImportReport | None = None) -> ImportResult:
    path = paths[0]
    report = report or ImportReport(str(path), "openhands")
    report.cannot_provide = list(CANNOT)
    convs = []
    for n, o in jsonl_objects(path, report):
        metrics = o.get("metrics") or {}
        usages = {
            str(u.get("response_id")): u for u in metrics.get("token_usages") or [] if isinstance(u, dict)
        }
        items: list[Item] = []
        model = ""
        for ev in o.get("history") or []:
            if not isinstance(ev, dict):
                continue
            t = parse_time(ev.get("timestamp"))
            meta = ev.get("tool_call_metadata") or {}
            resp = meta.get("model_response") if isinstance(meta, dict) else None
            rid = str(resp.get("id")) if isinstance(resp, dict) else ""
            text = str(ev.get("message") or ev.get("content") or canonical(ev.get("args", {})))
            if ev.get("source") == "agent" and rid in usages:
                u = usages.pop(rid)
                model = str(u.get("model", model))
                where, at = f"{path}:{n}", "metrics.token_usages[]"
                prompt, read = count(u, "prompt_tokens", where, at), count(u, "cache_read_tokens", where, at)
                usage = Usage(
                    max(0, prompt - read),
                    min(read, prompt),
                    count(u, "cache_write_tokens", where, at),
                    0,
                    count(u, "completion_tokens", where, at),
                )
                items.append(Item("reply", [Content("text", text=text)], t=t, usage=usage, model=model))
            elif text:
                items.append(Item("user", [Content("text", text=text)], t=t))
        if usages:
            report.skip("token usage without a matching agent action", f"{path.name}:{n} ×{len(usages)}")
        convs.append(
            (
                str(o.get("instance_id", f"line-{n}")),
                items,
                normalize_model(model),
                model,
                {"format": "openhands"},
            )
        )
    return build_traces(convs, str(path), "openhands", report, whole=True)
