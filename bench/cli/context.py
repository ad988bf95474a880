"""`ctxbench context TRACE --policy P --at N`: harness C's context breakdown (C-2, C-3) for
request N of a run: used / limit / remaining / percent with the 50 % and 80 % levels, "~Nk until
auto-compact" past 40 %, one row per bucket largest first, the status indicator and the tips."""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

from ctxbench.bench.cli._session_log import trace_or_log_hint
from ctxbench.policies.preset import Policy, load_policy
from ctxbench.sim.core.content import IMAGE, TOOL_DEF, Block
from ctxbench.sim.harness.coding import CodingConversation, Snapshot
from ctxbench.sim.harness.conversation import Conversation
from ctxbench.sim.harness.recorded import RecordedConversation
from ctxbench.sim.runner import RunHooks, prepare_for, run_prepared
from ctxbench.traces.generators.spec import TRACE_HELP, open_trace
from ctxbench.traces.model import SystemEvent, Trace

WARN, DANGER = 0.50, 0.80  # C-2 colour levels
COUNTDOWN_FROM = 0.40  # C-2: "~52k until auto-compact" past 40 %
INDICATOR_PP = 0.20  # C-3: within 20 percentage points of the auto-compact threshold
LARGE_WINDOW = 500_000  # C-3 "very large windows" (assumed: the seed's example is a 1M window)
PLAIN_COUNT_FROM = 180_000  # C-3
IMAGE_TOKENS = 1500  # C-2
BUCKETS = ("System prompt", "Memory", "State", "System tools", "MCP", "Skills", "Sub-agents", "Messages")


@dataclass(frozen=True)
class Row:
    bucket: str
    tokens: int
    detail: str = ""


def bucket_of_system(key: str) -> str:
    if key.startswith("memory"):
        return "Memory"
    return {"state": "State", "skills": "Skills", "agents": "Sub-agents"}.get(key, "System prompt")


def buckets(snap: Snapshot, system_keys: list[str], bytes_per_token: float = 4.0) -> list[Row]:
    """Per-bucket local estimates, scaled to the used count when it is provider-reported (C-2)."""
    est: dict[str, float] = dict.fromkeys(BUCKETS, 0.0)
    counts: dict[str, int] = dict.fromkeys(BUCKETS, 0)

    def size(b: Block) -> float:
        return IMAGE_TOKENS if b.kind == IMAGE else b.nbytes / bytes_per_token

    for i, b in enumerate(snap.blocks):
        if i < snap.tools_end:
            name = "MCP" if b.kind == TOOL_DEF and b.name.startswith("mcp__") else "System tools"
        elif i < snap.system_end:
            j = i - snap.tools_end
            name = bucket_of_system(system_keys[j] if j < len(system_keys) else "system")
        else:
            name = "Messages"
        est[name] += size(b)
        counts[name] += 1
    total = sum(est.values()) or 1.0
    scale = snap.used / total if snap.reported else 1.0
    rows = []
    for name in BUCKETS:
        if not counts[name]:
            continue
        detail = ""
        if name in ("System tools", "MCP"):
            detail = f"{counts[name]} tools"
        elif name == "Messages":
            detail = f"{snap.users} user · {snap.assistants} assistant"
        elif name == "Memory" and snap.memory_modified:
            detail = "modified, refreshes next request"  # C-2: an edited memory file
        rows.append(Row(name, math.ceil(est[name] * scale), detail))
    return sorted(rows, key=lambda r: (-r.tokens, r.bucket))


def k(n: float) -> str:
    return f"{n / 1000:.1f}k"


def render(snap: Snapshot, rows: list[Row], images: int) -> str:
    used, limit = snap.used, snap.window
    pct = used / limit if limit else 0.0
    level = "danger" if pct >= DANGER else "warning" if pct >= WARN else "normal"
    src = (
        "provider-reported count of the last request"
        if snap.reported
        else "local estimate (no usable report)"
    )
    bar = "#" * min(40, round(pct * 40))
    lines = [
        f"Context at request {snap.index} ({snap.kind}, {snap.model}, mode {snap.mode})",
        f"[{bar:<40}] {used:,} / {limit:,} tokens ({pct:.1%}) · {max(0, limit - used):,} remaining · {level}",
        f"levels: warning at {WARN:.0%} ({int(WARN * limit):,}), "
        f"danger at {DANGER:.0%} ({int(DANGER * limit):,}) · {src}",
    ]
    until = snap.threshold - used
    if pct >= COUNTDOWN_FROM:
        lines.append(f"~{max(0, until) // 1000}k until auto-compact (fires at {snap.threshold:,})")
    thr_pct = snap.threshold / limit if limit else 1.0
    indicator = pct >= thr_pct - INDICATOR_PP
    plain = limit >= LARGE_WINDOW and used >= PLAIN_COUNT_FROM
    lines.append(
        "status indicator: " + ("shown" if indicator else "plain token count" if plain else "hidden")
        + f" (C-3: within {INDICATOR_PP:.0%} points of {thr_pct:.0%})"
    )  # fmt: skip
    lines.append(f"{'bucket':<14}{'tokens':>10}  share")
    for r in rows:
        share = r.tokens / limit if limit else 0.0
        lines.append(f"{r.bucket:<14}{r.tokens:>10,}  {share:5.1%}  {r.detail}".rstrip())
    lines.append("tips:")
    for t in tips(snap, rows, images):
        lines.append(f"  - {t}")
    return "\n".join(lines)


def tips(snap: Snapshot, rows: list[Row], images: int) -> list[str]:
    """C-2's context-aware suggestions, from the numbers."""
    out = []
    pct = snap.used / snap.window if snap.window else 0.0
    by = {r.bucket: r.tokens for r in rows}
    if pct >= WARN and snap.used < snap.threshold:
        urgency = "soon: " if pct >= DANGER else ""
        out.append(f"{urgency}run /compact at a task boundary before the summarize tier fires")
    if by.get("Messages", 0) >= 0.5 * snap.used:
        out.append(
            "the conversation dominates the window; delegate research to sub-agents or /clear between tasks"
        )
    mcp = by.get("MCP", 0)
    if mcp >= 0.05 * snap.window:
        out.append(f"MCP tool schemas cost ~{k(mcp)} tokens on every request; disconnect unused servers")
    if images:
        out.append(f"{images} image(s) in context, ~1.5k tokens each, never summarized away")
    if snap.assistants >= 150:
        out.append("a very long session: consider starting a fresh one")
    return out or ["nothing to suggest"]


def snapshot(
    trace: Trace, policy: Policy, at: int, seed: int = 0, model: str | None = None
) -> Snapshot | None:
    """Run `trace` under a C-harness `policy` and return the snapshot of request `at`."""
    convs: list[Conversation] = []
    hooks = RunHooks(snapshot_at=(at,), on_conversation=convs.append)
    run_prepared([prepare_for(trace, model)], policy, policy.provider, seed, hooks=hooks)
    conv = convs[0]
    if isinstance(conv, CodingConversation | RecordedConversation):
        return conv.snapshots.get(at)
    return None


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("context", help="C's context breakdown at one request (C-2, C-3)", description=__doc__)
    p.add_argument("trace", help=TRACE_HELP)
    p.add_argument(
        "--policy",
        help="a C-harness preset or YAML path (default c-default; for an imported session `recorded`: "
        "the prompt the recorded harness sent, without C's levels and tips)",
    )
    p.add_argument("--at", type=int, required=True, help="request index N (0 = the first request)")
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of every random draw: fault and latency draws, best-effort evictions (default 0)",
    )
    p.add_argument("--model", help="model (default: the trace's)")
    p.set_defaults(handler=handle)


def imported(trace: Trace) -> bool:
    """A trace imported from a harness's log (its header names the log's format), not generated."""
    return bool(trace.header.meta.get("format")) and trace.header.source != "synthetic"


def handle(args: argparse.Namespace) -> int:
    with trace_or_log_hint(args.trace, "context"):  # a raw session log: say `ctxbench import` first
        trace = open_trace(args.trace)
    policy = load_policy(args.policy or ("recorded" if imported(trace) else "c-default"))
    if policy.harness not in ("C", "recorded"):
        raise ValueError(
            f"policy {policy.name!r} is for harness {policy.harness}; context needs a C-harness preset "
            "or `recorded`"
        )
    snap = snapshot(trace, policy, args.at, args.seed, args.model)
    if snap is None:
        raise ValueError(f"{args.trace}: the run under {policy.name} made no request {args.at}")
    keys = [c.key for ev in trace.events if isinstance(ev, SystemEvent) for c in ev.content]
    bpt = float(getattr(policy.estimator, "bytes_per_token", 4.0))
    images = sum(1 for b in snap.blocks[snap.system_end :] if b.kind == IMAGE)
    rows = buckets(snap, keys, bpt)
    if policy.harness == "recorded":
        print(render_recorded(snap, rows))
        return 0
    if imported(trace):
        print(
            f"note: {args.trace} is an imported session replayed by {policy.name}, the synthetic C "
            "harness: its compactions, levels and tips are that model's, not the recorded harness's "
            "(without --policy: the prompt as recorded)"
        )
    print(render(snap, rows, images))
    return 0


def render_recorded(snap: Snapshot, rows: list[Row]) -> str:
    """Request N of an imported session as the recorded harness sent it: its size against the
    model window and its buckets; none of C-2/C-3's levels, countdown or tips, which describe the
    synthetic C harness (issue 31 #9). The size is the run's `true_input` of that request."""
    used, limit = snap.used, snap.window
    pct = used / limit if limit else 0.0
    bar = "#" * min(40, round(pct * 40))
    lines = [
        f"Context at request {snap.index} ({snap.kind}, {snap.model}) as the recorded harness sent it",
        f"[{bar:<40}] {used:,} / {limit:,} tokens ({pct:.1%}) · {max(0, limit - used):,} remaining",
        f"{'bucket':<14}{'tokens':>10}  share",
    ]
    for r in rows:
        share = r.tokens / limit if limit else 0.0
        lines.append(f"{r.bucket:<14}{r.tokens:>10,}  {share:5.1%}  {r.detail}".rstrip())
    return "\n".join(lines)
