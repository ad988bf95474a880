"""The fidelity report's section on the non-Claude-Code formats (bench/fidelity_report.md "Other
formats"): each conversation replayed on the provider its log's model is served by
(sim/providers/choice.py), its figures, every mismatch with its cause, and what the log's own
numbers show beyond the replay (bench/fidelity/auto.py `evidence`, a gateway's recorded cost).
"""

from __future__ import annotations

from typing import Any

from ctxbench.bench.fidelity.auto import evidence
from ctxbench.bench.fidelity.discover import Found
from ctxbench.bench.fidelity.fields import session_json
from ctxbench.bench.fidelity.logs import Replayed, not_compared_json, replay_log
from ctxbench.bench.fidelity.replay import serving
from ctxbench.bench.fidelity.results import SessionFidelity
from ctxbench.sim.core.profiles import profile
from ctxbench.traces.model import MessageEvent, Trace


def recorded_cost(trace: Trace) -> float | None:
    """The cost the log itself records for its requests (Cline's metrics.cost), if every request has one."""
    costs = [e.usage.cost for e in trace.events if isinstance(e, MessageEvent) and e.usage is not None]
    if not costs or any(c is None for c in costs):
        return None
    return sum(c for c in costs if c is not None)


def _notes(rel: str, name: str, tr: Trace, sf: SessionFidelity, prof: str) -> list[str]:
    out: list[str] = []
    if profile(prof).get("provider") == "auto-prefix":
        out += evidence(sf.requests)
    rec = recorded_cost(tr)
    if rec is not None and sf.cost_billed:
        out.append(
            f"the log's own cost is ${rec:.4f}, {rec / sf.cost_billed:.3f}× the list prices of "
            f"sim/data/prices.yaml for its billed usage (${sf.cost_billed:.4f})"
        )
    return [f"- {rel} {name}: {n}" for n in out]


def _outside(rel: str, name: str, sf: SessionFidelity) -> list[str]:
    """Every request outside tolerance, with its cost gap and cause (bench/fidelity/compare.py names one for
    each; on an automatic-prefix cache, bench/fidelity/auto.py)."""
    off = [r for r in sf.requests if not r.within]
    if not off:
        return []
    gap = sf.cost_gap(only_mismatches=True)
    out = [
        "",
        f"### {rel} {name} ({len(off)} of {sf.n} outside tolerance)",
        "",
        f"Cost gap ${sf.cost_predicted - sf.cost_billed:+.4f}, of which these requests ${gap:+.4f}.",
        "",
    ]
    by: dict[str, list[float]] = {}
    lines = []
    for r in off:  # every request outside tolerance has a cause (bench/fidelity/compare.py `_score`)
        cause = r.cause
        by.setdefault(cause.split(":")[0], []).append(r.cost_predicted - r.cost_billed)
        lines.append(
            f"- #{r.index} (t={r.t:.0f} s, cost gap ${r.cost_predicted - r.cost_billed:+.4f}): billed "
            f"read {r.billed.cache_read:,}, predicted {r.predicted.cache_read:,}; uncached "
            f"{r.billed.input_tokens:,} / {r.input_predicted:,} — {cause}"
        )
    out += [f"- by cause: {k}: {len(v)} request{'s' * (len(v) != 1)}, ${sum(v):+.4f}" for k, v in by.items()]
    return [*out, "", *lines]


def replays(found: Found) -> list[Replayed]:
    """Every conversation of the non-Claude-Code logs `found` holds, replayed on the provider its
    model is served by (bench/fidelity/logs.py)."""
    return [r for log in found.others() for r in replay_log(log)]


def other_json(found: Found, requests: bool = False) -> list[dict[str, Any]]:
    """The `fidelity --all-real --json` objects of these conversations (bench/fidelity/fields.py),
    with the log, its format and the provider profile of the replay."""
    out: list[dict[str, Any]] = []
    for r in replays(found):
        session = f"{r.log.rel} {r.name}"
        if r.fidelity is None or not r.compared:
            out.append(not_compared_json(r, session))
            continue
        head = {"session": session, "log": r.log.rel, "format": r.log.format}
        out.append({**session_json(r.fidelity, requests), **head, "provider": serving(r.trace).profile})
    return out


def other_formats(found: Found, convs: list[Replayed] | None = None) -> list[str]:
    """The section's lines (module docstring); `convs`: `replays(found)` when the caller has them. A
    conversation not replayed for an error on its data has a row saying so (and is named with the
    error in the report's "Not replayed" section, bench/fidelity/logs.py)."""
    table = [
        "",
        "## Other formats (replayed on the provider their model is served by)",
        "",
        "| log | conversation | model | provider | requests | within | read billed / predicted "
        "| uncached billed / predicted | cost billed / predicted |",
        "|---|---|---|---|---:|---:|---:|---:|---:|",
    ]
    details: list[str] = []
    notes: list[str] = []
    for r in replays(found) if convs is None else convs:
        rel, name, tr, sf = r.log.rel, r.name, r.trace, r.fidelity
        if r.error is not None:
            stage = "not imported" if r.error.stage == "import" else "not replayed"
            row = f"| {rel} | {name} | {r.recorded_model()} | — | {r.billed_requests()} | {stage}: "
            table.append(row + f"{r.error.kind} (section Not replayed) | | | |")
            continue
        if sf is None:
            table.append(
                f"| {rel} | {name} | {r.recorded_model()} | — | {r.billed_requests()} | model not in "
                "sim/data/models.yaml (not replayed) | | | |"
            )
            continue
        if not sf.has_usage:
            table.append(f"| {rel} | {name} | — | — | 0 | no per-request usage (not counted) | | | |")
            continue
        d = session_json(sf)
        b, p = d["billed"], d["predicted"]
        prof = serving(tr).profile
        table.append(
            f"| {rel} | {name} | {sf.model} | {prof} | {sf.n} | {sf.share_within:.1%} | "
            f"{b['cache_read']:,} / {p['cache_read']:,} | {b['input']:,} / {p['input']:,} | "
            f"${b['cost']:.4f} / ${p['cost']:.4f} |"
        )
        notes += _notes(rel, name, tr, sf, prof)
        details += _outside(rel, name, sf)
    out = table
    if notes:
        out += ["", "What the logs show beyond the replay:", "", *notes]
    if details:
        out += ["", "## Other formats: requests outside tolerance", *details]
    return out
