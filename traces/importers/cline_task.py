"""Task folders of the Cline family's VS Code extensions: Cline (`saoudrizwan.claude-dev`), Roo Code
(`rooveterinaryinc.roo-cline`) and Kilo Code (`kilocode.kilo-code`) keep each task under
`<globalStorage>/<extension id>/tasks/<task id>/`:

- `ui_messages.json`: a JSON array of the rows the chat view shows (`{ts, type: "say"|"ask", say|ask,
  text, ...}`). One row `say: "api_req_started"` per API request; its `text` is a JSON string, Cline's
  `ClineApiReqInfo` (src/shared/ExtensionMessage.ts in github.com/cline/cline): `request` (the user
  content sent, as markdown), `tokensIn`, `tokensOut`, `cacheWrites`, `cacheReads`, `cost`, and when the
  request failed `cancelReason` / `streamingFailedMessage`. Roo Code and Kilo Code add `apiProtocol`.
  Cline ≥ 3.2x puts `modelInfo: {providerId, modelId, mode}` on the rows.
- `api_conversation_history.json` (optional here): the prompts, Anthropic-style `{role, content}`
  messages, one assistant message per answered request.
- `task_metadata.json` (Cline, optional): `model_usage` rows `{ts, model_id, model_provider_id}`.

What `tokensIn` counts depends on the provider (the usage chunks of Cline's providers, src/core/api/
providers/*.ts): Anthropic, OpenRouter and Cline's own gateway give the uncached input only
(`prompt_tokens - cached - cache_write`), the generic OpenAI-compatible provider the whole prompt; Roo
Code and Kilo Code say which (`apiProtocol` "anthropic": uncached only, "openai": the whole prompt,
Roo Code's `getApiProtocol` and its cost functions `calculateApiCostAnthropic`/`calculateApiCostOpenAI`).
The importer reads `apiProtocol` "openai" (and Cline's `providerId` "openai") as the whole prompt, anything
else as the uncached part; the choice is noted in the import report.

A `deleted_api_reqs` row (usage of requests the user removed by restoring a checkpoint, summed) is no
request: its tokens are counted in the report, not replayed.

Checked on real runs: Cline CLI 2.18.0 (the extension's task code, Cline 3.82.0, which keeps its tasks
under `~/.cline/data/tasks/<id>/`) against `ctxbench serve` on the Anthropic and OpenAI wires
(tests/traces/importers/test_cline_task_live.py). On Anthropic every request's input and cache figures
are the server's and its `tokensOut` is one more: Cline sums the usage of the stream's `message_start`
(1 output token) and `message_delta` (the whole count); read as logged. On the OpenAI-compatible
provider, `cost` is 0 unless the user set the model's prices (`UNPRICED`). Cline's context truncation
is read from the rows and `context_history.json` and replayed as a compaction
(traces/importers/cline_context.py); the last request's answer may be missing from the history (Cline
ends a task on its `attempt_completion` reply without saving it), and is then the rows'.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from ctxbench.sim.core.registry import register
from ctxbench.traces.importers.anthropic_blocks import assistant_contents, user_contents
from ctxbench.traces.importers.base import (
    ImportFailure,
    ImportReport,
    ImportResult,
    cost,
    count,
    json_document,
    normalize_model,
    parse_time,
    tool_use,
)
from ctxbench.traces.importers.cline_context import mark_truncations, request_ranges
from ctxbench.traces.importers.tokens import Item, build_traces
from ctxbench.traces.model import Content, Usage

UI = "ui_messages.json"
HISTORY = "api_conversation_history.json"
METADATA = "task_metadata.json"
# The extensions whose task folders this reads (their VS Code ids, the folder under globalStorage).
EXTENSIONS = {
    "saoudrizwan.claude-dev": "Cline",
    "rooveterinaryinc.roo-cline": "Roo Code",
    "kilocode.kilo-code": "Kilo Code",
}
WHOLE_PROMPT = ("openai",)  # `apiProtocol` / Cline `providerId` values whose tokensIn is the whole prompt
# Cline's OpenAI-compatible provider prices a model at the user's prices, 0 unless set (the model info
# defaults `inputPrice:0, outputPrice:0` in Cline 3.82.0's bundle, npm cline 2.18.0): its `cost` 0 says
# no price was known, not that the request was free, so the request is priced from the catalog.
UNPRICED = (
    "cost 0 on an OpenAI-compatible provider (Cline's default price, not a bill): priced from the catalog"
)
DEFAULT_PRICE_META = "cost_default_zero"  # a conversation's header: how many of its requests that is
CANNOT = ["system prompt and tool schemas (not in the task folder)"]
_SHOWN = ("text", "reasoning", "completion_result")  # say rows that show the model's reply


def task_files(path: Path) -> tuple[Path, Path | None]:
    """(ui_messages.json, api_conversation_history.json or None) of a task folder or of either file."""
    folder = path if path.is_dir() else path.parent
    ui, hist = folder / UI, folder / HISTORY
    if not ui.is_file():
        raise ImportFailure(str(path), f"no {UI} in {folder}: the usage of a task is there")
    return ui, hist if hist.is_file() else None


def _info(row: dict[str, Any], where: str) -> dict[str, Any] | None:
    """The parsed `ClineApiReqInfo` of an api_req_started row (None when its text is not JSON)."""
    try:
        info = json.loads(str(row.get("text") or "{}"))
    except (ValueError, RecursionError):
        return None
    return info if isinstance(info, dict) else None


def _usage(info: dict[str, Any], whole: bool, where: str) -> Usage:
    tin, read = count(info, "tokensIn", where), count(info, "cacheReads", where)
    write = count(info, "cacheWrites", where)
    uncached = max(0, tin - read - write) if whole else tin
    return Usage(uncached, read, write, 0, count(info, "tokensOut", where), cost(info, "cost", where))


def _reply_contents(row: dict[str, Any]) -> list[Content]:
    """What a say row shows of a reply: its text, or the tool call a `tool` row describes."""
    say, text = row.get("say"), str(row.get("text") or "")
    if say == "tool":
        try:
            call = json.loads(text)
        except (ValueError, RecursionError):
            call = None
        if isinstance(call, dict):
            return [tool_use(call, f"ui-{row.get('ts', '')}", str(call.get("tool", "tool")))]
    return [Content("text", text=text)] if say in _SHOWN and text else []


def _model_of(row: dict[str, Any], metadata: list[tuple[float, str]], t: float | None) -> tuple[str, str]:
    """(model id, provider id) of a request: the row's `modelInfo`, else task_metadata's model in use at t."""
    mi = row.get("modelInfo")
    if isinstance(mi, dict) and mi.get("modelId"):
        return str(mi["modelId"]), str(mi.get("providerId", ""))
    model = ""
    for ts, m in metadata:
        if t is None or ts <= t:
            model = m
    return model, ""


def _metadata(ui: Path, report: ImportReport) -> list[tuple[float, str]]:
    meta = ui.parent / METADATA
    if not meta.is_file():
        return []
    try:
        doc = json_document(meta)
    except ImportFailure as e:
        report.note(f"{METADATA} not read: {e.reason}")
        return []
    rows = doc.get("model_usage") if isinstance(doc, dict) else None
    out = []
    for r in rows if isinstance(rows, list) else []:
        if isinstance(r, dict) and r.get("model_id"):
            out.append((parse_time(r.get("ts")) or 0.0, str(r["model_id"])))
    return sorted(out)


@register("importer", "cline-task")
def import_cline_task(paths: list[Path], report: ImportReport | None = None) -> ImportResult:
    """One conversation per model, as for Cline's SDK sessions (traces/importers/cline.py): a model's
    requests read its own provider cache."""
    ui, hist = task_files(paths[0])
    report = report or ImportReport(str(ui.parent), "cline-task")
    report.cannot_provide = list(CANNOT)
    ext = next((name for key, name in EXTENSIONS.items() if key in ui.parts), "")
    rows = json_document(ui)
    if not isinstance(rows, list):
        raise ImportFailure(str(ui), "not a task's ui_messages: a JSON array of messages expected")
    metadata = _metadata(ui, report)
    # (usage, model, user contents, reply contents, time) per request, in order
    requests: list[dict[str, Any]] = []
    whole_seen: set[str] = set()
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            report.skip("message not an object", f"{UI}[{i}]")
            continue
        say = row.get("say")
        if say == "deleted_api_reqs":
            deleted = _info(row, f"{UI}[{i}]") or {}
            report.counts["deleted requests' usage rows (not replayed)"] += 1
            report.note(
                f"{UI}[{i}]: usage of deleted requests (a restored checkpoint), not replayed: "
                f"tokensIn {deleted.get('tokensIn', 0)}, tokensOut {deleted.get('tokensOut', 0)}, "
                f"cacheReads {deleted.get('cacheReads', 0)}, cost {deleted.get('cost', 0)}"
            )
            continue
        if say != "api_req_started":
            if requests and row.get("type") == "say":
                requests[-1]["reply"] += _reply_contents(row)
            continue
        where = f"{UI}[{i}].text"
        info = _info(row, where)
        if info is None:
            report.skip("api_req_started whose text is not a JSON object", f"{UI}[{i}]")
            continue
        t = parse_time(row.get("ts"))
        model, provider = _model_of(row, metadata, t)
        protocol = str(info.get("apiProtocol") or provider)
        whole = protocol in WHOLE_PROMPT
        counted = "is the whole prompt" if whole else "excludes cache reads and writes"
        whole_seen.add(f"{protocol or 'unnamed'}: tokensIn {counted}")
        u = _usage(info, whole, f"{ui}")
        if not (u.total_input or u.output_tokens or u.cost):
            why = "failed" if info.get("cancelReason") or info.get("streamingFailedMessage") else "no usage"
            report.skip(f"request without usage ({why})", f"{UI}[{i}]")
            continue
        default_price = whole and u.cost == 0
        if default_price:
            u = replace(u, cost=None)
            report.counts[UNPRICED] += 1
        request = str(info.get("request") or "")
        requests.append(
            {
                "usage": u,
                "model": model,
                "provider": provider,
                "user": [Content("text", text=request)] if request else [],
                "reply": [],
                "t": t,
                "default_price": default_price,
                "row": i,
            }
        )
    if not requests:
        raise ImportFailure(str(ui), "no api_req_started row with usage: no request to import")
    for n in sorted(whole_seen):
        report.note(f"apiProtocol/provider {n}")
    if report.counts[UNPRICED]:
        report.note(f"{report.counts[UNPRICED]} request(s): {UNPRICED}")
    if ext:
        report.note(f"task folder of {ext}")
    msgs = _prompts_from_history(hist, requests, report) if hist is not None else None
    if msgs is not None:
        mark_truncations(ui.parent, rows, requests, msgs, report)
    elif any(r is not None for r in request_ranges(rows, [q["row"] for q in requests])):
        report.note(f"context truncation not replayed: the prompts are not those of {HISTORY}")
    return _build(ui, requests, report)


def _prompts_from_history(
    hist: Path, requests: list[dict[str, Any]], report: ImportReport
) -> list[dict[str, Any]] | None:
    """Replace what the chat rows show by the messages sent when the history pairs one assistant
    message with each request (each request's `hist`: its history messages' indices), and return
    the history; otherwise keep the rows, say why and return None."""
    doc = json_document(hist)
    if not isinstance(doc, list):
        report.note(f"{HISTORY} is not a JSON array: prompts taken from {UI}")
        return None
    msgs = [m for m in doc if isinstance(m, dict) and m.get("role") in ("user", "assistant")]
    answers = sum(1 for m in msgs if m["role"] == "assistant")
    # the last request's answer may be missing: Cline 3.82.0 (CLI 2.18.0) ends a task on its
    # attempt_completion reply without saving it; its prompt is there, its reply is what the rows show
    unsaved = answers == len(requests) - 1 and bool(msgs) and msgs[-1]["role"] == "user"
    if answers != len(requests) and not unsaved:
        report.note(
            f"{HISTORY} holds {answers} assistant message(s) for {len(requests)} billed request(s): "
            f"prompts taken from {UI} (what the chat shows)"
        )
        return None
    k = 0
    users: list[Content] = []
    held: list[str] = []
    for j, m in enumerate(msgs):
        where = f"{HISTORY}[{j}]"
        if m["role"] == "user":
            users += user_contents(m.get("content"), report, where)
            held.append(f"h{j}")
        else:
            requests[k]["user"], requests[k]["reply"] = users, assistant_contents(m.get("content"), report)
            requests[k]["hist"] = (held, f"h{j}")
            users, held, k = [], [], k + 1
    if unsaved:
        requests[k]["user"], requests[k]["hist"] = users, (held, "")
        report.note(
            f"{HISTORY} holds no answer to the last request (Cline ends a task without it): "
            f"its reply from {UI}"
        )
    report.counts["prompts from api_conversation_history"] = len(requests)
    return msgs


def _build(ui: Path, requests: list[dict[str, Any]], report: ImportReport) -> ImportResult:
    convs: dict[str, list[Item]] = {}
    gateway: dict[str, str] = {}  # the provider id of a model's first request (sim/providers/choice.py)
    pending: dict[str, list[Item]] = {}
    since: list[Item] = []
    for r in requests:
        model = r["model"]
        user = Item("user", r["user"], t=r["t"]) if r["user"] else None
        if user is not None:
            since.append(user)
            for m in pending:
                pending[m].append(user)
        if model not in convs:
            convs[model], pending[model] = [], list(since)
            gateway[model] = r["provider"]
            if len(convs) > 1:
                report.note(
                    f"{model or 'unnamed model'}: requests on another model are a conversation of their own"
                )
        if "truncated" in r:  # the truncation comes before the request's own new messages
            kept, opening = r["truncated"]
            at = len(convs[model]) + len(pending[model]) - (1 if user is not None else 0)
            items = [*convs[model], *pending[model]]
            compact = Item("compact", t=r["t"], kept=[kept] if kept else [])
            items[at:at] = [compact, Item("summary", opening, t=r["t"])]
            convs[model], pending[model] = items, []
            if user is not None:  # the request's own input, not sent with a summary (prepared.py REATTACHED)
                user.tag = "user"
        convs[model] += pending[model]
        held, reply = r.get("hist", ([], ""))
        if user is not None:
            user.uuids = list(held)
        uuids = [reply] if reply else []
        convs[model].append(Item("reply", r["reply"], t=r["t"], usage=r["usage"], uuids=uuids))
        pending[model], since = [], []
    out = []
    for k, (model, items) in enumerate(convs.items()):
        name = "main" if k == 0 else (model.rsplit("/", 1)[-1] or f"model-{k + 1}")
        meta: dict[str, object] = {"format": "cline-task", "gateway": gateway[model]}
        unpriced = sum(1 for r in requests if r["model"] == model and r["default_price"])
        if unpriced:
            meta[DEFAULT_PRICE_META] = unpriced
        out.append((name, items, normalize_model(model), model, meta))
    return build_traces(out, str(ui), "cline-task", report, whole=True)
