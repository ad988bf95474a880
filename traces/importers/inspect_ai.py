"""Inspect AI eval logs (FORMATS.md §2.5): every `model` event of each sample is one request, its
`output.usage` the bill. One trace per sample.

- `.json` (one document) and `.eval`, the default log format: a zip of `header.json` (or
  `_journal/start.json` while the eval runs) and one `samples/<id>_epoch_<n>.json` per sample,
  zstandard-compressed by current versions (traces/compressed.py `zip_member`);
- a model event's prompt is its `input` messages or, in current versions, `input_refs`: [start, end)
  ranges into the sample's message pool `events_data.messages`; `attachment://<hash>` strings
  resolve through `sample.attachments`;
- `input_tokens` included the cached part for some providers (OpenAI: the shared 0.3.95 log) until
  Inspect normalised it to the uncached part only (inspect_ai #3341, 2026-02; Gemini #3711): read
  per request from `total_tokens`, which is the whole prompt plus output either way (input + output
  when the cache is inside input; input + cache read + cache write + output when it is not).
  Checked on Inspect 0.3.285 runs against `ctxbench serve` (Anthropic and OpenAI), usage equal to
  the server's ledger."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from ctxbench.sim.core.registry import register
from ctxbench.traces.compressed import read_errors, read_failure, zip_member
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

CANNOT = ["cache writes where the provider reports none (OpenAI automatic caching)"]


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


def _document(path: Path) -> dict[str, Any]:
    """The log as one document `{eval, samples}`: a `.json` log as it is, an `.eval` zip read member
    by member (module docstring)."""
    if not zipfile.is_zipfile(path):
        if path.suffix == ".eval":
            raise ImportFailure(str(path), "not a zip archive, as an .eval log is (truncated?)")
        doc = json_document(path)
        if not isinstance(doc, dict) or not isinstance(doc.get("samples"), list):
            raise ImportFailure(str(path), "not an Inspect eval log: no 'samples' list")
        return doc
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
        head = next((n for n in ("header.json", "_journal/start.json") if n in names), None)
        if head is None:
            raise ImportFailure(str(path), "not an Inspect .eval log: no header.json or _journal/start.json")
        samples = [
            json.loads(zip_member(path, n)) for n in names if n.startswith("samples/") and n.endswith(".json")
        ]
        header = json.loads(zip_member(path, head))
    except (zipfile.BadZipFile, ValueError, RecursionError) as e:
        raise ImportFailure(str(path), f"damaged .eval log ({read_failure(e)})") from None
    except read_errors() as e:  # a damaged zstandard member among them
        raise ImportFailure(str(path), f"damaged .eval log ({read_failure(e)})") from None
    return {"eval": header.get("eval") if isinstance(header, dict) else None, "samples": samples}


def _prompt(ev: dict[str, Any], pool: list[Any], where: str, report: ImportReport) -> list[dict[str, Any]]:
    """The messages a model event sent: its `input`, else its `input_refs` ranges into `pool`."""
    msgs = ev.get("input") or []
    refs = ev.get("input_refs")
    if not msgs and isinstance(refs, list):
        for r in refs:
            ok = isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) for x in r)
            if not ok or not 0 <= r[0] <= r[1] <= len(pool):
                report.skip("input_refs range outside the sample's events_data.messages", where)
                continue
            msgs += pool[r[0] : r[1]]
    return [m for m in msgs if isinstance(m, dict)]


def _usage(u: dict[str, Any], where: str, at: str) -> Usage:
    """A model event's usage (module docstring: whether `input_tokens` holds the cached part)."""
    read = count(u, "input_tokens_cache_read", where, at)
    write = count(u, "input_tokens_cache_write", where, at)
    inp, out = count(u, "input_tokens", where, at), count(u, "output_tokens", where, at)
    inside = (read or write) and u.get("total_tokens") == inp + out and inp >= read + write
    return Usage(inp - read - write if inside else inp, read, write, 0, out)


@register("importer", "inspect-ai")
def import_inspect_ai(paths: list[Path], report: ImportReport | None = None) -> ImportResult:
    """One trace per sample (and epoch, when the eval ran several) and model: a scorer's or other
    role's model events (a grader on another model) are a conversation of their own, with a cache of
    their own, named after the sample and the model."""
    path = paths[0]
    report = report or ImportReport(str(path), "inspect-ai")
    report.cannot_provide = list(CANNOT)
    doc = _document(path)
    for s_i, x in enumerate(doc["samples"]):
        if not isinstance(x, dict):
            report.skip("sample that is not an object", f"samples[{s_i}]")
    samples = [x for x in doc["samples"] if isinstance(x, dict)]
    epochs = len({str(x.get("epoch", 1)) for x in samples}) > 1
    convs = []
    for s_i, sample in enumerate(samples):
        name = f"sample-{sample.get('id', s_i)}" + (f"-epoch-{sample.get('epoch', 1)}" if epochs else "")
        for k, (model, items) in enumerate(_conversations(sample, f"samples[{s_i}]", path, report).items()):
            conv = f"{name}-{model.rsplit('/', 1)[-1]}" if k else name
            convs.append((conv, items, normalize_model(model), model, {"format": "inspect-ai"}))
    return build_traces(convs, str(path), "inspect-ai", report, whole=True)


def _conversations(
    sample: dict[str, Any], where: str, path: Path, report: ImportReport
) -> dict[str, list[Item]]:
    """The items of one sample's model events, per model, in order of first use."""
    att = sample.get("attachments")
    att = att if isinstance(att, dict) else {}
    data = sample.get("events_data")
    pool = data.get("messages") if isinstance(data, dict) else None
    pool = pool if isinstance(pool, list) else []
    out: dict[str, list[Item]] = {}
    seen: dict[str, int] = {}  # per model: the messages its conversation holds already
    for ev in sample.get("events") or []:
        if not isinstance(ev, dict) or ev.get("event") != "model":
            continue
        model = str(ev.get("model", ""))
        items = out.setdefault(model, [])
        msgs = _prompt(ev, pool, where, report)
        for m in msgs[seen.get(model, 0) :]:
            if m.get("role") == "system":
                continue
            role, cs = _message(m, att)
            if role == "user":
                items.append(Item("user", cs, t=parse_time(ev.get("timestamp"))))
            elif not (items and items[-1].kind == "reply"):  # else: the previous output, recorded
                items.append(Item("reply", cs))
        output = ev.get("output") or {}
        u = output.get("usage") or {}
        usage = None
        if "input_tokens" not in u:
            report.skip("model event without usage", where)
        else:
            usage = _usage(u, str(path), f"{where}.events[].output.usage")
        choice = (output.get("choices") or [{}])[0].get("message") or {}
        _, cs = _message({**choice, "role": "assistant"}, att)
        items.append(Item("reply", cs, t=parse_time(ev.get("timestamp")), usage=usage, model=model))
        seen[model] = len(msgs) + 1
    return out
