"""Predict a real harness's compactions and billing from its task alone, and compare with a recording.

    python -m ctxbench.bench.live.predict claude-code --record reports/live/claude-code
    python -m ctxbench.bench.live.predict codex --record reports/live/codex [--run] [--json out.json]

A live run (`ctxbench.bench.live.run_harness`) leaves the server's ledger `requests.jsonl`: every request the
harness sent, with the usage the server billed. From it this module rebuilds the *pre-compaction*
conversation — the task as the harness experienced it: the initial prompt, every model reply and
every tool result, without the harness's own compaction requests, compaction instructions or
continuation summaries — as a `PreparedTrace` whose blocks are exactly the blocks the server
billed (same parser, same token counter). It then simulates that task with the matching preset
(`policies/presets/<harness>-live.yaml`: the harness preset plus the live run's window/limit
override) on the same provider profile and model, and compares request by request: where each
compaction happened (real vs predicted), the input at the trigger, and the billed usage (cache
read, cache write, uncached) of every request, with totals and cost.

Why rebuild instead of replaying the recording: a replay of the recorded requests only tests the
provider model (run_harness.analyze does that); here the harness model must decide by itself when
to compact and what the next requests then contain, which is the claim under test (issue #7).
"""

from __future__ import annotations

import argparse
import json
import sys
from itertools import pairwise, zip_longest
from pathlib import Path

from ctxbench.bench.live.alignment import READ_TOLERANCE, Comparison, Row, align
from ctxbench.bench.live.ledger import (
    SIDE,
    SUMMARY,
    PredictError,
    Task,
    billing_header,
    load_ledger,
    rebill,
    task_of,
)
from ctxbench.bench.live.run_harness import PROFILES as RUN_PROFILES
from ctxbench.bench.live.table import as_json, format_table, verdict
from ctxbench.policies.budget import budget_for
from ctxbench.policies.preset import Policy, PresetError, load_policy
from ctxbench.policies.view import View
from ctxbench.sim.core.catalog import model_info, prices
from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.providers.registry import make_provider
from ctxbench.sim.runner import run_prepared
from ctxbench.sim.serve.server import ZERO_LATENCY

# The provider profile each harness was billed by in the live run.
PROFILES = {name: profile for name, (profile, _model) in RUN_PROFILES.items()}
PRESETS = {"claude-code": "claude-code-live", "codex": "codex-live"}


# ---------------------------------------------------------------- simulate and compare
def simulate(task: Task, policy: Policy, profile: str, seed: int = 0) -> list[RequestRecord]:
    res = run_prepared([task.prepared], policy, profile, seed, {"latency": dict(ZERO_LATENCY)})
    bad = [o for o in res.outcomes if o.status != "ok"]
    if bad:
        raise PredictError(f"simulation ended with {bad[0].error}: {bad[0].message}")
    return res.records


def threshold_of(policy: Policy, model: str) -> int:
    """The preset's compaction threshold for `model` (what the harness compares its estimate with)."""
    comp = policy.compaction
    info = model_info(model)
    budget = budget_for(policy, info)
    view = View(Transcript((), ()), None, budget, info.window, 0, -1, True, 0, info.max_output)
    return int(comp.threshold(view)) if hasattr(comp, "threshold") else budget


def _totals_usage(usages: list[dict[str, int]], model: str) -> dict[str, float]:
    price = prices(model)
    t = {
        "requests": float(len(usages)),
        "input": 0.0,
        "uncached": 0.0,
        "cache_read": 0.0,
        "cache_write": 0.0,
        "output": 0.0,
        "cost": 0.0,
    }
    for u in usages:
        w = u["cache_write_5m"] + u["cache_write_1h"]
        t["input"] += u["uncached"] + u["cache_read"] + w
        t["uncached"] += u["uncached"]
        t["cache_read"] += u["cache_read"]
        t["cache_write"] += w
        t["output"] += u["output"]
        t["cost"] += price.cost(
            u["uncached"], u["cache_read"], u["cache_write_5m"], u["cache_write_1h"], u["output"]
        )
    return t


def _totals_pred(recs: list[RequestRecord]) -> dict[str, float]:
    t = {
        "requests": float(len(recs)),
        "input": 0.0,
        "uncached": 0.0,
        "cache_read": 0.0,
        "cache_write": 0.0,
        "output": 0.0,
        "cost": 0.0,
    }
    for r in recs:
        t["input"] += r.true_input
        t["uncached"] += r.uncached
        t["cache_read"] += r.cache_read
        t["cache_write"] += r.cache_write_5m + r.cache_write_1h
        t["output"] += r.output
        t["cost"] += r.cost
    return t


def compare(
    harness: str,
    folder: Path,
    preset: str | None = None,
    profile: str | None = None,
    seed: int = 0,
    policy: Policy | None = None,
) -> Comparison:
    """The recording in `folder` against the preset's simulation of its task (`policy`, when given,
    replaces the preset: bench/live/whatif.py passes one with another setting's knob)."""
    reqs, f = load_ledger(folder)
    task = task_of(reqs, f, folder.name)
    name = policy.name if policy is not None else preset or PRESETS[harness]
    policy = policy if policy is not None else load_policy(name)
    prof = profile or PROFILES[harness]
    recs = simulate(task, policy, prof, seed)
    billed = [r for r in reqs if r.kind != SIDE]  # the simulator models no side requests
    real_c = [i + 1 for i, r in enumerate(billed) if r.kind == SUMMARY]
    pred_c = [r.index + 1 for r in recs if r.kind in ("summary", "summary_text")]
    by_index = {r.index + 1: r for r in recs}
    triggers = []
    for i, (a, b) in enumerate(zip_longest(real_c, pred_c)):
        real_prev = billed[a - 2] if a is not None and a >= 2 else None
        pred_rec = by_index.get(b) if b is not None else None
        pred_prev = by_index.get(b - 1) if b is not None else None
        triggers.append(
            {
                "compaction": i + 1,
                "real_request": a,
                "pred_request": b,
                "real_reported_before": (real_prev.input + real_prev.usage["output"]) if real_prev else None,
                "pred_estimate_before": pred_prev.estimate if pred_prev else None,
                "pred_estimate": pred_rec.estimate if pred_rec else None,
                "real_summary_input": billed[a - 1].input if a is not None else None,
                "pred_summary_input": pred_rec.true_input if pred_rec else None,
            }
        )
    notes = list(task.notes)
    sides = len(reqs) - len(billed)
    if sides:
        notes.append(f"{sides} side request(s) (no tools, no compaction prompt) are not simulated")
    model = task.prepared.model
    plain = rebill(reqs, prof)
    off = [r.seq for r, u in zip(reqs, plain, strict=True) if u != r.usage]
    if off:
        notes.append(
            f"re-billing the recording with {prof}/{model} differs from the server at requests {off}"
        )
    totals = {"real": _totals_usage([r.usage for r in billed], model), "predicted": _totals_pred(recs)}
    heads = [(r.seq, billing_header(r)) for r in reqs if billing_header(r)]
    changes = [(seq, g, h) for (_, g), (seq, h) in pairwise(heads) if h != g]
    if changes:
        cfg = getattr(make_provider(prof, model), "cfg", None)
        kept_out = bool(getattr(cfg, "skip_billing_header", False))

        def fp(h: str) -> str:
            return h.split("cc_version=")[-1].split(";")[0]

        notes.append(
            "Claude Code billing header (system[0]) changes at requests "
            + ", ".join(f"{seq} ({fp(g)} -> {fp(h)})" for seq, g, h in changes)
            + (
                f": the {prof} profile keeps it out of the cache key (skip_billing_header), as the "
                "real API does; the simulator keeps the first one"
                if kept_out
                else f": the {prof} profile counts it in the cached prefix, the simulator keeps the "
                "first one (the server re-writes the prefix there)"
            )
        )
    return Comparison(
        harness,
        name,
        prof,
        model,
        threshold_of(policy, model),
        align(billed, recs),
        real_c,
        pred_c,
        triggers,
        totals,
        notes,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("harness", choices=sorted(PRESETS))
    ap.add_argument("--record", default=None, help="folder of a live run (default reports/live/<harness>)")
    ap.add_argument("--run", action="store_true", help="run the harness first (bench.live.run_harness)")
    ap.add_argument("--prefix", default=None, help="npm prefix for --run")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--preset", default=None, help="policy preset (default <harness>-live)")
    ap.add_argument("--profile", default=None, help="provider profile (default: the live run's)")
    ap.add_argument("--json", default=None, help="also write the comparison as JSON here")
    a = ap.parse_args(argv)
    folder = Path(a.record or f"reports/live/{a.harness}")
    if a.run:
        from ctxbench.bench.live.run_harness import harness_available, npm_prefix, run

        prefix = npm_prefix(a.prefix)
        why = harness_available(a.harness, prefix)
        if why:
            print(f"skip: {why}")
            return 0
        info = run(a.harness, folder, prefix, a.timeout)
        if info["rc"] != 0:
            print(
                f"error: {a.harness} exited with {info['rc']} (see {folder / 'harness.log'})", file=sys.stderr
            )
            return 1
    try:
        c = compare(a.harness, folder, a.preset, a.profile)
    except (PredictError, PresetError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_table(c))
    if a.json:
        Path(a.json).write_text(json.dumps(as_json(c), indent=1), encoding="utf-8")
    return 0 if c.ok else 1


__all__ = [
    "PRESETS",
    "PROFILES",
    "READ_TOLERANCE",
    "Comparison",
    "Row",
    "align",
    "as_json",
    "compare",
    "format_table",
    "main",
    "simulate",
    "threshold_of",
    "verdict",
]

if __name__ == "__main__":
    sys.exit(main())
