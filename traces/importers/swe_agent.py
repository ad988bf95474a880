"""SWE-agent trajectories (`.traj`, FORMATS.md §2.7): `history` is the exact message list; there is
no per-request usage (only run totals, kept in the header meta), so sizes use the byte rate."""

from __future__ import annotations

from pathlib import Path

from ctxbench.sim.core.registry import register
from ctxbench.traces.importers.base import ImportFailure, ImportReport, ImportResult, json_document
from ctxbench.traces.importers.tokens import Item, build_traces
from ctxbench.traces.model import Content, SystemEvent

CANNOT = ["per-request usage (only totals: model_stats)", "timestamps of requests"]


@register("importer", "swe-agent")
def import_swe_agent(paths: list[Path], report: ImportReport | None = None) -> ImportResult:
    path = paths[0]
    report = report or ImportReport(str(path), "swe-agent")
    report.cannot_provide = list(CANNOT)
    doc = json_document(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("history"), list):
        raise ImportFailure(str(path), "not a SWE-agent trajectory: no 'history' list")
    items: list[Item] = []
    system = None
    for m in doc["history"]:
        if not isinstance(m, dict):
            continue
        c = m.get("content")
        text = (
            c
            if isinstance(c, str)
            else "\n".join(str(x.get("text", "")) for x in c or [] if isinstance(x, dict))
        )
        role = m.get("role")
        if role == "system" and system is None:
            system = {"main": SystemEvent((Content("text", text=text),), t=0.0)}
        elif role == "assistant":
            items.append(Item("reply", [Content("text", text=text)]))
        else:
            items.append(Item("user", [Content("text", text=text)]))
    stats = (doc.get("info") or {}).get("model_stats") or {}
    res = build_traces(
        [("main", items, "", "", {"format": "swe-agent", "model_stats": stats})],
        str(path),
        "swe-agent",
        report,
        system=system,
    )
    return res
