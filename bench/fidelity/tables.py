"""The Claude Code part of the fidelity report (bench/fidelity_report.md): what the replay takes
from the bill, the issue 11 targets per conversation (conditioned and unconditioned), reads
against the baselines, the cost error by cause, and every request not within tolerance."""

from __future__ import annotations

import re

from ctxbench.bench.fidelity.results import (
    KINDS,
    LABELS,
    LOOKUP_FAILURE,
    OUTSIDE_WARMING,
    UNLOGGED_TURN_CONTENT,
    SessionFidelity,
)

Row = tuple[str, SessionFidelity, SessionFidelity]  # (label, replay, replay with --keep-warm)
HEADER = [
    "Replay = preset `recorded` (recorded cache marks + ttl, recorded compactions, zero latency) on "
    "the Anthropic provider model with the options the bills show (bench/fidelity/replay.py `OBSERVED`: "
    "lookback of the breakpoint and the 20 blocks before it, screenshots nested in tool results, "
    "reads refresh the request's inner marks, a read re-times the entry it hits to the ttl of the "
    "mark that found it) and the per-model thinking stripping of providers.md §1.6. Claude "
    "Code sessions are imported as the recorded version sent them (traces/importers/claude_code_wire.py, "
    "from its npm package and loopback runs, research note bench/claude_code_wire.md): cache marks "
    "on the last two messages up to 2.1.68 and on the last one from 2.1.69, attachments it never "
    "sends dropped, reminders folded into a string tool result, the tools each ToolSearch result "
    "loads sent as deferred tools from the next request on, the away summary it logs only by its "
    "result line sent as the forked query it is (5m marks, bench/fidelity/forks.py). Claude Code up "
    "to 2.0.29 run by an SDK host (the IDE extension) sends a turn's attachments with that turn only: "
    "@-mentioned files are added before their prompt as blocks of that turn (sized from the bill) "
    "and dropped at the next prompt; the other attachments (todo reminders, IDE diagnostics) have no "
    "position in the log and are not modelled (the misses they cause are named below).",
    "",
    "Taken from the bill (no model of the client can know them):",
    "",
    "- every request's prompt size: blocks are sized so that each request's cached part (read + "
    "write) is the billed one (traces/importers/tokens.py), its uncached tail (`input_tokens`) and "
    "its output are the billed ones, the cache ttl is the billed 5m/1h split;",
    "- the system + tools size S and the static prefix W an earlier session of the account wrote "
    "(the first request's billed read), and that W is cached when the conversation starts;",
    "- a **restarted CLI** and the size of its system prompt's tail (the git status it read when it "
    "started: Claude Code marks its identity line and the rest of the system prompt apart, "
    "traces/importers/system_tail.py): where a new prompt's billed read is exactly the end of the "
    "identity block, less than the system end the process before showed, the system prompt's tail "
    "is replaced there by one whose end is the smallest read of the new process inside its first "
    "prompt (else the same size as before);",
    "- outside events, each recognised by one signature (bench/fidelity/outside.py) and replayed as "
    "observed: a **server-side lookup failure** where the billed read is S while the replay reads "
    "more (the API's diagnostics name it previous_message_not_found, anthropics/claude-code#87966): "
    "the read falls back to S and the rest is re-written; **outside warming** where the billed read "
    "is W while the replay reads less (W expired after an idle gap, or this rendering of it was "
    "written by a sibling conversation): W is written by another session just before; **unlogged "
    "turn content** where, in a log that does not show attachments (Claude Code <= 2.0.x) and on a "
    "model that strips thinking (providers.md §1.6), a request inside a tool loop reads exactly the "
    "turn's start while the replay reads more (the IDE diagnostics Claude Code sends after an edit "
    "without logging them stripped the turn's earlier thinking): the read stops at the turn's start "
    "and the rest is re-written. In the Claude Code <= 2.0.x logs a lookup failure cannot be told "
    "from an unlogged change at the very start of the first message (bench/fidelity/causes.py).",
    "",
    "Within = share of requests whose cache read, cache write (5m + 1h) and uncached input are each "
    "within max(1 %, 128) tokens of the bill (issue 11 target: ≥ 99 % and cost within 1 % on every "
    "conversation). Cost Δ = predicted minus billed cost. Conditioned = with the outside events "
    "replayed as observed; unconditioned = without them (the same when a conversation has none); "
    "each event's cost is what replaying it changes at its request.",
    "",
]


def _pct(a: float, b: float) -> str:
    return f"{(a - b) / b:+.1%}" if b else "n/a"


def _within(sf: SessionFidelity) -> int:
    return sum(r.within for r in sf.requests)


def _events(sf: SessionFidelity, kind: str) -> str:
    n = len(sf.outside.at(kind))
    return f"{n} (${sf.outside_cost(kind):+.3f})" if n else "0"


def targets(rows: list[Row]) -> list[str]:
    """The issue 11 figures per conversation, conditioned and unconditioned."""
    lines = [
        "| session | model | requests | within | cost Δ | lookup failures | outside warming "
        "| unlogged turn content | within unconditioned | cost Δ unconditioned | cost billed |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    n = met = met_base = 0
    n_within = n_base = 0
    for name, sf, _kw in rows:
        base = sf.baseline
        lines.append(
            f"| {name} | {sf.model} | {sf.n} | {sf.share_within:.1%} | "
            f"{_pct(sf.cost_predicted, sf.cost_billed)} | {_events(sf, LOOKUP_FAILURE)} | "
            f"{_events(sf, OUTSIDE_WARMING)} | {_events(sf, UNLOGGED_TURN_CONTENT)} | "
            f"{base.share_within:.1%} | "
            f"{_pct(base.cost_predicted, base.cost_billed)} | ${sf.cost_billed:.3f} |"
        )
        n += sf.n
        n_within += _within(sf)
        n_base += _within(base)
        met += _meets(sf)
        met_base += _meets(base)
    fails = sum(len(sf.outside.lookup_failures) for _n, sf, _kw in rows)
    warmed = sum(len(sf.outside.outside_warming) for _n, sf, _kw in rows)
    stripped = sum(len(sf.outside.unlogged_turn_content) for _n, sf, _kw in rows)
    total = max(1, n)
    return [
        *lines,
        "",
        f"All requests: within {n_within}/{n} = {n_within / total:.1%} conditioned, "
        f"{n_base}/{n} = {n_base / total:.1%} unconditioned; conversations meeting the target "
        f"{met}/{len(rows)} conditioned, {met_base}/{len(rows)} unconditioned.",
        "",
        f"Server-side lookup failures: {fails} of {n} requests ({fails / total:.2%}), the rate these "
        "logs show (sim/providers/anthropic.py `lookup_failure_rate` simulates it, 0 by default); "
        f"outside warming: {warmed} requests; unlogged turn content: {stripped} requests.",
        "",
    ]


def _meets(sf: SessionFidelity) -> bool:
    return sf.share_within >= 0.99 and abs(sf.cost_predicted - sf.cost_billed) <= 0.01 * sf.cost_billed


def reads(rows: list[Row]) -> list[str]:
    """Cache reads against the keep-warm replay and the naive baseline (conditioned replay)."""
    lines = [
        "Match = predicted cache read within max(1 %, 128) tokens of the bill. Keep-warm = the "
        "unconditioned replay assuming other sessions of the account keep W warm (`--keep-warm`). "
        "Naive = each request reads all the previous one cached. Write Δ = predicted minus billed "
        "cache writes.",
        "",
        "| session | read match | keep-warm | naive | cache read Δ replay / naive | write Δ | cost Δ naive |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    all_n = all_ok = all_kw = all_naive = 0
    for name, sf, kw in rows:
        all_n += sf.n
        all_ok += sum(r.ok for r in sf.requests)
        all_kw += sum(r.ok for r in kw.baseline.requests)
        all_naive += sum(r.naive_ok for r in sf.requests)
        bw = sum(r.billed.cache_write_5m + r.billed.cache_write_1h for r in sf.requests)
        pw = sum(r.predicted.cache_write for r in sf.requests)
        lines.append(
            f"| {name} | {sf.share_ok:.1%} | {kw.baseline.share_ok:.1%} | {sf.share_naive_ok:.1%} | "
            f"{_pct(sf.total('predicted'), sf.total('billed'))} / "
            f"{_pct(sf.total('naive'), sf.total('billed'))} | {_pct(pw, bw)} | "
            f"{_pct(sf.cost_naive, sf.cost_billed)} |"
        )
    n = max(1, all_n)
    return [
        *lines,
        "",
        f"All requests: replay {all_ok}/{all_n} = {all_ok / n:.1%}, keep-warm {all_kw}/{all_n} = "
        f"{all_kw / n:.1%}, naive {all_naive}/{all_n} = {all_naive / n:.1%}.",
        "",
    ]


def _cause_class(cause: str) -> str:
    """The cause without its per-request numbers (the text before the first ':' or '(')."""
    head = cause.split(":", 1)[0].split(" (", 1)[0].split(", as when", 1)[0]
    return re.sub(r" after a \d+ s gap", " after a gap longer than the TTL", head).strip() or "unexplained"


def cost_by_cause(rows: list[Row]) -> list[str]:
    """Where each conversation's unconditioned cost error comes from: the predicted-minus-billed
    cost of its requests, grouped by the cause of their mismatch (the outside events by their
    kind; requests within tolerance contribute the rest)."""
    out = [
        "## Cost error by cause (unconditioned replay)",
        "",
        "Predicted minus billed cost of the replay without outside events, summed over the requests "
        "of each cause (all conversations above); the outside events are the rows marked *taken from "
        "the bill* (the conditioned replay replays them); `within tolerance` is what the requests "
        "that match contribute.",
        "",
        "| cause | requests | sessions | cost gap |",
        "|---|---:|---:|---:|",
    ]
    by: dict[str, list[float]] = {}
    sessions: dict[str, set[str]] = {}
    for name, sf, _kw in rows:
        for r in sf.baseline.requests:
            if r.outside:
                key = f"*taken from the bill*: {LABELS[r.outside]}"
            else:
                key = "within tolerance" if r.within else _cause_class(r.cause)
            by.setdefault(key, []).append(r.cost_predicted - r.cost_billed)
            sessions.setdefault(key, set()).add(name)
    for key, gaps in sorted(by.items(), key=lambda kv: sum(kv[1])):
        out.append(f"| {key} | {len(gaps)} | {len(sessions[key])} | ${sum(gaps):+.3f} |")
    return [*out, ""]


def misses(rows: list[Row]) -> list[str]:
    """Per conversation: the outside events taken from its bill, then every request of the
    conditioned replay not within tolerance, with its likely cause."""
    out = ["## Requests not within tolerance and outside events, per session"]
    for name, sf, _kw in rows:
        if not sf.misses and not sf.outside:
            continue
        gap, part = sf.cost_gap(), sf.cost_gap(only_mismatches=True)
        out += [
            "",
            f"### {name} ({len(sf.misses)} of {sf.n} not within tolerance, outside events: {_count(sf)})",
            "",
            f"Cost gap ${gap:+.3f}, of which the requests not within tolerance ${part:+.3f} "
            f"(unconditioned ${sf.baseline.cost_gap():+.3f}).",
            "",
        ]
        for kind in KINDS:
            for i in sf.outside.at(kind):
                r, u = sf.request(i), sf.baseline.request(i)
                out.append(
                    f"- #{i} (t={r.t:.0f} s, gap {r.gap:.0f} s) *taken from the bill*, {LABELS[kind]}: "
                    f"billed read {r.billed.cache_read:,}, predicted without it {u.predicted.cache_read:,}, "
                    f"with it {r.predicted.cache_read:,}; replaying it changes the cost by "
                    f"${r.cost_predicted - u.cost_predicted:+.4f}"
                )
        for r in sf.misses:
            bw = r.billed.cache_write_5m + r.billed.cache_write_1h
            out.append(
                f"- #{r.index} (t={r.t:.0f} s, gap {r.gap:.0f} s): billed read {r.billed.cache_read:,}, "
                f"predicted {r.predicted.cache_read:,}; write {bw:,} / {r.predicted.cache_write:,}; "
                f"cost ${r.cost_predicted - r.cost_billed:+.4f} — {r.cause}"
            )
    return out


def _count(sf: SessionFidelity) -> int:
    return len(sf.outside)
