"""Every billed field of a fidelity replay, billed vs predicted, per request and per session
(`ctxbench fidelity --json`, bench/fidelity_report.md): uncached input, cache read, cache write
5m and 1h, output and cost. The replay takes output from the bill (it predicts caching, not the
model's replies), so output differs only through nothing; cost differs through the cache fields.
"""

from __future__ import annotations

from typing import Any

from ctxbench.bench.fidelity.results import KINDS, RequestCompare, SessionFidelity

FIELDS = ("input", "cache_read", "cache_write_5m", "cache_write_1h", "output", "cost")


def billed(r: RequestCompare) -> dict[str, float]:
    b = r.billed
    return {
        "input": b.input_tokens,
        "cache_read": b.cache_read,
        "cache_write_5m": b.cache_write_5m,
        "cache_write_1h": b.cache_write_1h,
        "output": b.output_tokens,
        "cost": r.cost_billed,
    }


def predicted(r: RequestCompare) -> dict[str, float]:
    p = r.predicted
    return {
        "input": r.input_predicted,
        "cache_read": p.cache_read,
        "cache_write_5m": p.cache_write_5m,
        "cache_write_1h": p.cache_write_1h,
        "output": r.billed.output_tokens,
        "cost": r.cost_predicted,
    }


def _sum(rows: list[dict[str, float]]) -> dict[str, float]:
    out = {f: sum(row[f] for row in rows) for f in FIELDS}
    out["cost"] = round(out["cost"], 6)
    return out


def session_json(sf: SessionFidelity, requests: bool = False) -> dict[str, Any]:
    """One session: `requests`, `within_tolerance` (share of requests whose cache read, cache
    write and uncached input are each within max(1 %, 128) tokens of the bill, 0-1; null without
    per-request usage), `billed` and `predicted` totals of every field; these figures replay the
    outside events taken from the bill as observed (bench/fidelity/outside.py). `outside_events`
    lists them per kind (requests, count, cost: what replaying them changes in the predicted cost
    of their requests); `naive_read_match` the naive reading's share; `cost_interval` (automatic-
    prefix caches with a measured rate) the 90 % interval on cost; `unconditioned` holds the
    figures of the replay without them."""
    out: dict[str, Any] = {
        "session": sf.name,
        "model": sf.model,
        "policy": sf.policy,
        "requests": sf.n,
        "per_request_usage": sf.has_usage,
        "within_tolerance": round(sf.share_within, 4) if sf.has_usage else None,
        "read_match": round(sf.share_ok, 4) if sf.has_usage else None,
        "billed": _sum([billed(r) for r in sf.requests]) if sf.has_usage else None,
        "predicted": _sum([predicted(r) for r in sf.requests]) if sf.has_usage else None,
    }
    if sf.has_usage:  # the naive reading's match (bench/fidelity/compare.py, auto.py naive_read)
        out["naive_read_match"] = round(sf.share_naive_ok, 4)
    if sf.interval is not None:  # automatic-prefix caches (bench/fidelity/interval.py)
        iv = sf.interval
        out["cost_interval"] = {
            "level": 0.9,
            "low": round(iv.low, 6),
            "high": round(iv.high, 6),
            "expected": round(iv.mean, 6),
            "draws": iv.draws,
            "seed": iv.seed,
            "rate": {"provider": iv.provider, "found": iv.rate[0], "missed": iv.rate[1]},
            "billed_inside": iv.inside(sf.cost_billed),
        }
    if len(sf.models) > 1:  # a session on several models (`model_switch`): each request priced as its own
        out["models"] = sf.models
    if sf.copied:  # a forked session's copies of earlier requests: scored where they were billed
        out["copied_requests"] = sf.copied
    if not sf.has_usage:
        out["note"] = "the log has no per-request usage (totals only): nothing to compare"
        return out
    base = sf.baseline
    out["outside_events"] = {
        kind: {
            "requests": list(sf.outside.at(kind)),
            "count": len(sf.outside.at(kind)),
            "cost": round(sf.outside_cost(kind), 6),
        }
        for kind in KINDS
    }
    out["unconditioned"] = {
        "within_tolerance": round(base.share_within, 4),
        "read_match": round(base.share_ok, 4),
        "predicted": _sum([predicted(r) for r in base.requests]),
    }
    if requests:
        out["per_request"] = [
            {
                "index": r.index,
                "t": r.t,
                "model": r.model,
                "within": r.within,
                "outside": r.outside,
                "billed": billed(r),
                "predicted": predicted(r),
                "predicted_unconditioned": predicted(u),
            }
            for r, u in zip(sf.requests, base.requests, strict=True)
        ]
    return out


def field_gaps(sf: SessionFidelity) -> dict[str, float]:
    """Predicted minus billed, relative to billed, of every field's session total (0 when both are 0)."""
    b = _sum([billed(r) for r in sf.requests])
    p = _sum([predicted(r) for r in sf.requests])
    return {f: ((p[f] - b[f]) / b[f] if b[f] else (0.0 if not p[f] else float("inf"))) for f in FIELDS}
