"""claude-trace raw HTTP logs (`.claude-trace/log-*.jsonl`, FORMATS.md §2.2): exact request bodies.

Every request is kept byte for byte in the report side (`requests()` gives each body with its
billed usage, for the calibration of the offline tokenizer in bench/fidelity/report.py). The main
trace is the main-loop conversation (the requests with tools whose messages extend each other):
its messages are those of the requests as sent, each reply carries the billed usage of its
request, every block keeps the recorded `cache_control` ttl, and the system prompt and tools are
the recorded ones. A request whose messages do not extend the previous main-loop request (the
restart after `/compact`) becomes a CompactionEvent whose summary is its first message. Side
requests (quota probes, titles, the summariser with its own system prompt) are counted, not traced.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.sim.core.registry import register
from ctxbench.traces.importers.anthropic_blocks import (
    anthropic_usage,
    assistant_contents,
    billed_model,
    user_contents,
)
from ctxbench.traces.importers.base import (
    ImportReport,
    ImportResult,
    canonical,
    jsonl_objects,
    normalize_model,
    parse_time,
)
from ctxbench.traces.importers.tokens import Item, build_traces
from ctxbench.traces.model import Content, SystemEvent, Usage

CANNOT = [
    "nothing essential: token sizes come from billed usage (no offline Claude tokenizer, ecosystem.md §1.5)"
]


@dataclass
class Exchange:
    line: int
    t: float
    body: dict[str, Any]
    usage: dict[str, Any]
    response: list[dict[str, Any]]  # the response's content blocks

    @property
    def model(self) -> str:
        return billed_model(str(self.body.get("model", "")), self.usage, self.body.get("speed"))

    @property
    def billed_total(self) -> int:
        u = self.usage
        return (
            int(u.get("input_tokens") or 0)
            + int(u.get("cache_read_input_tokens") or 0)
            + int(u.get("cache_creation_input_tokens") or 0)
        )


def _sse(raw: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    usage: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    for line in raw.split("\n"):
        if not line.startswith("data: "):
            continue
        try:
            e = json.loads(line[6:])
        except (ValueError, RecursionError):
            continue
        if not isinstance(e, dict):
            continue
        typ = e.get("type")
        if typ == "message_start":
            msg = e.get("message")
            raw_usage = msg.get("usage") if isinstance(msg, dict) else None
            usage = dict(raw_usage) if isinstance(raw_usage, dict) else {}
        elif typ == "message_delta" and isinstance(e.get("usage"), dict):
            usage["output_tokens"] = e["usage"].get("output_tokens", usage.get("output_tokens", 0))
        elif typ == "content_block_start" and isinstance(e.get("content_block"), dict):
            index = e.get("index", len(blocks))
            blocks[index if isinstance(index, int) else len(blocks)] = dict(e["content_block"])
        elif typ == "content_block_delta" and isinstance(e.get("delta"), dict):
            index = e.get("index", 0)
            b = blocks.setdefault(index if isinstance(index, int) else 0, {"type": "text", "text": ""})
            d = e["delta"]
            for kind, key, part in (
                ("text_delta", "text", "text"),
                ("input_json_delta", "_json", "partial_json"),
                ("thinking_delta", "thinking", "thinking"),
            ):
                if d.get("type") == kind:
                    b[key] = str(b.get(key, "")) + str(d.get(part, ""))
    for b in blocks.values():
        if "_json" in b:
            try:
                b["input"] = json.loads(b.pop("_json") or "{}")
            except (ValueError, RecursionError):
                b["input"] = {}
    return usage, [blocks[k] for k in sorted(blocks)]


def requests(path: Path, report: ImportReport) -> list[Exchange]:
    """Every logged request with its billed usage, in request time order."""
    out = []
    for n, o in jsonl_objects(path, report):
        rq, rs = o.get("request"), o.get("response")
        if not isinstance(rq, dict) or not isinstance(rs, dict) or not isinstance(rq.get("body"), dict):
            report.skip("line without a request body", f"{path.name}:{n}")
            continue
        if isinstance(rs.get("body"), dict):
            raw_usage, raw_content = rs["body"].get("usage"), rs["body"].get("content")
            usage = dict(raw_usage) if isinstance(raw_usage, dict) else {}
            content = list(raw_content) if isinstance(raw_content, list) else []
        elif isinstance(rs.get("body_raw"), str):
            usage, content = _sse(rs["body_raw"])
        else:
            usage, content = {}, []
        if "input_tokens" not in usage:
            report.skip("response without usage", f"{path.name}:{n}")
            continue
        anthropic_usage(usage, f"{path}:{n}", "response.body.usage")  # every count checked here
        out.append(Exchange(n, parse_time(rq.get("timestamp")) or 0.0, rq["body"], usage, content))
    out.sort(key=lambda e: (e.t, e.line))
    return out


def _key(m: Any) -> str:
    """A message's content without cache_control (marks move every turn and are not content)."""
    c = m.get("content") if isinstance(m, dict) else m
    if isinstance(c, list):
        c = [{k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b for b in c]
    return canonical(c)


def _marked(contents: list[Content], raw: Any) -> list[Content]:
    if not isinstance(raw, list) or not contents or not isinstance(raw[-1], dict):
        return contents
    cc = raw[-1].get("cache_control")
    if isinstance(cc, dict):
        from dataclasses import replace

        contents[-1] = replace(contents[-1], cache=str(cc.get("ttl", "5m")))
    return contents


@register("importer", "claude-trace")
def import_claude_trace(paths: list[Path], report: ImportReport | None = None) -> ImportResult:
    path = paths[0]
    report = report or ImportReport(str(path), "claude-trace")
    report.cannot_provide = list(CANNOT)
    ex = requests(path, report)
    main = [e for e in ex if e.body.get("tools") and len(e.body.get("tools") or []) > 1]
    report.counts["requests"] = len(ex)
    report.counts["side requests (not traced)"] = len(ex) - len(main)
    items: list[Item] = []
    prev: list[Any] = []
    for e in main:
        msgs = list(e.body.get("messages") or [])
        extends = len(msgs) > len(prev) and [_key(m) for m in msgs[: len(prev) - 1]] == [
            _key(m) for m in prev[:-1]
        ]
        if not extends and prev:
            summary = user_contents(msgs[0].get("content"), report, f"line {e.line}") if msgs else []
            items.append(Item("compact", t=e.t, trigger="manual"))
            items.append(Item("summary", summary, t=e.t))
            new = msgs[1:]
        else:
            new = msgs[max(0, len(prev) - 1) :] if prev else msgs
            if prev and items and items[-1].kind == "reply" and new and new[0].get("role") == "assistant":
                sent = assistant_contents(new[0].get("content"), report)  # the reply as sent back
                items[-1].contents = _marked(sent, new[0].get("content")) or items[-1].contents
                new = new[1:]
        for m in new:
            raw = m.get("content")
            if m.get("role") == "assistant":
                items.append(Item("reply", _marked(assistant_contents(raw, report), raw), t=e.t))
            else:
                items.append(Item("user", _marked(user_contents(raw, report, f"line {e.line}"), raw), t=e.t))
        usage = anthropic_usage(e.usage, f"line {e.line}", "response.body.usage") or Usage()
        items.append(Item("reply", assistant_contents(e.response, report), t=e.t, usage=usage, model=e.model))
        prev = [*msgs, {"role": "assistant", "content": e.response}]
    model = main[0].model if main else ""
    system = None
    if main:
        sys_blocks = main[0].body.get("system") or []
        if isinstance(sys_blocks, str):
            sys_blocks = [{"type": "text", "text": sys_blocks}]
        contents = []
        for b in sys_blocks:
            cc = b.get("cache_control") if isinstance(b, dict) else None
            contents.append(
                Content("text", text=str(b.get("text", "")), cache=str(cc.get("ttl", "5m")) if cc else "")
            )
        if contents:
            system = {"main": SystemEvent(tuple(contents), t=0.0)}
    return build_traces(
        [("main", items, normalize_model(model), model, {"format": "claude-trace"})],
        str(path),
        "claude-code",
        report,
        system=system,
    )
