"""Codex CLI TUI session logs (FORMATS.md §2.3): one reply per `token_count` event.

The prompt cannot be rebuilt (no instructions, no tool schemas, outputs only as deltas): replies
carry the agent messages since the previous `token_count`, user messages the commands' output;
sizes come from the usage (OpenAI semantics: `input_tokens` includes the cached part).
Rollout files (`rollout-*.jsonl`) are not supported by this importer (none in traces-real/).
"""

from __future__ import annotations

from pathlib import Path

from ctxbench.traces.importers.base import (
    ImportReport,
    ImportResult,
    count,
    jsonl_objects,
    normalize_model,
    parse_time,
)
from ctxbench.traces.importers.tokens import Item, build_traces
from ctxbench.traces.model import Content, Usage

CANNOT = [
    "the prompt (instructions, tool schemas, exact items): block sizes come from usage",
    "cache writes (OpenAI reports none)",
    "rollout-*.jsonl files (not supported here)",
]


def import_codex(paths: list[Path], report: ImportReport | None = None) -> ImportResult:
    path = paths[0]
    report = report or ImportReport(str(path), "codex")
    report.cannot_provide = list(CANNOT)
    items: list[Item] = []
    said: list[str] = []
    model = ""
    for n, o in jsonl_objects(path, report):
        t = parse_time(o.get("ts"))
        if o.get("kind") == "session_start":
            model = str(o.get("model", model))
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
        if typ == "agent_message":
            said.append(str(msg.get("message", "")))
        elif typ == "exec_command_end":
            out = str(msg.get("stdout", "")) + str(msg.get("stderr", "")) or str(
                msg.get("aggregated_output", "")
            )
            items.append(Item("user", [Content("text", text=out)], t=t))
        elif typ == "user_message":
            items.append(Item("user", [Content("text", text=str(msg.get("message", "")))], t=t))
        elif typ == "token_count":
            info = msg.get("info") if isinstance(msg.get("info"), dict) else msg
            last = info.get("last_token_usage", info) if isinstance(info, dict) else {}
            if not isinstance(last, dict) or "input_tokens" not in last:
                report.skip("token_count without input_tokens", f"{path.name}:{n}")
                continue
            where, at = f"{path}:{n}", "payload.msg.info.last_token_usage"
            inp, cached = (
                count(last, "input_tokens", where, at),
                count(last, "cached_input_tokens", where, at),
            )
            u = Usage(
                input_tokens=max(0, inp - cached),
                cache_read=min(cached, inp),
                output_tokens=count(last, "output_tokens", where, at),
            )
            items.append(Item("reply", [Content("text", text="\n".join(said))], t=t, usage=u, model=model))
            said = []
        else:
            report.counts["other codex events"] += 1
    return build_traces(
        [("main", items, normalize_model(model), model, {"format": "codex"})],
        str(path),
        "codex",
        report,
        whole=True,
    )
