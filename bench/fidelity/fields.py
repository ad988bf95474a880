"""Every billed field of a fidelity replay, billed vs predicted, per request and per session
(`ctxbench fidelity --json`, bench/fidelity_report.md): uncached input, cache read, cache write
5m and 1h, output and cost. The replay takes output from the bill (it predicts caching, not the
model's replies), so output differs only through nothing; cost differs through the cache fields.
"""

from __future__ import annotations

from typing import Any

from ctxbench.bench.fidelity.not_within import by_kind, naive_kind, replay_kind
from ctxbench.bench.fidelity.results import COPIED, KINDS, NO_USAGE, RequestCompare, SessionFidelity

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


def naive(r: RequestCompare) -> dict[str, float]:
    """The naive replay's request: the previous request's read + write read, the rest written."""
    b = r.billed
    write = b.cache_read + b.cache_write_5m + b.cache_write_1h - r.naive_read
    w5, w1 = (0, write) if b.cache_write_1h and not b.cache_write_5m else (write, 0)
    return {
        "input": b.input_tokens,
        "cache_read": r.naive_read,
        "cache_write_5m": w5,
        "cache_write_1h": w1,
        "output": b.output_tokens,
        "cost": r.cost_naive,
    }


def backend_json(sf: SessionFidelity) -> dict[str, Any]:
    """Another backend behind Claude Code (traces/importers/backend.py): `backend` (its provider and
    the replay's assumption), `writes_assumption` (a log that records no cache write: compared and
    priced as it reports, bench/fidelity/gateway.py), `suggestions_assumption` (prompt suggestions
    assumed sent, bench/fidelity/forks.py), `usage_unrecorded` (requests whose log records 0 tokens:
    not scored)."""
    out: dict[str, Any] = {}
    if sf.meta.get("backend_assumption"):
        out["backend"] = {"provider": sf.meta.get("backend", ""), "assumption": sf.meta["backend_assumption"]}
    if sf.meta.get("writes_assumption"):
        out["writes_assumption"] = sf.meta["writes_assumption"]
    if sf.meta.get("suggestions_assumption"):  # --assume-prompt-suggestions (bench/fidelity/forks.py)
        out["suggestions_assumption"] = sf.meta["suggestions_assumption"]
    if sf.meta.get("usage_unrecorded"):
        out["usage_unrecorded"] = int(str(sf.meta["usage_unrecorded"]))
    return out


def interval_json(sf: SessionFidelity) -> dict[str, Any]:
    """The session's `cost_interval` (session_json); with policy P's summary requests at real
    compactions the log holds no bill of (policy.py `unlogged_cost`), `logged_requests`: the same
    interval over the requests the log bills, without them."""
    from ctxbench.bench.fidelity.interval import cost_interval

    ci = cost_interval(sf)
    out: dict[str, Any] = {
        "central": round(ci.central, 6),
        "mean": round(ci.mean, 6),
        "low": round(ci.low, 6),
        "high": round(ci.high, 6),
        "level": 0.9,
        "billed_inside": ci.holds(sf.cost_billed),
    }
    if ci.auto is not None:  # an automatic-prefix cache's measured share (auto_interval.py)
        out.update(ci.auto.share_json())
    if sf.unlogged:
        lg = ci.less(sf.unlogged)
        out["logged_requests"] = {
            "unlogged_policy_requests_cost": round(sf.unlogged, 6), "central": round(lg.central, 6),
            "low": round(lg.low, 6), "high": round(lg.high, 6), "billed_inside": lg.holds(sf.cost_billed),
        }  # fmt: skip
    return out


def session_json(sf: SessionFidelity, requests: bool = False) -> dict[str, Any]:
    """One session. Its top level is the prediction, nothing taken from the bill (issue 28):
    `within_tolerance` (share of requests whose cache read, cache write and uncached input are
    each within max(1 %, 128) tokens of the bill, 0-1; null without per-request usage),
    `read_match`, `billed` and `predicted` totals of every field, `cost_interval` (`central`: the
    median, the session's predicted cost; `mean`: what a pooled prediction sums; the 90 % interval:
    misses the log cannot show, warming by other sessions and entries kept past their ttl drawn at
    the measured rates on Anthropic (bench/fidelity/warming.py), the measured share of reads not
    found on automatic-prefix caches, widened by the replay's model error measured on the
    development part, bench/fidelity/interval.py and model_error.py; `logged_requests` under policy
    P: interval_json), `fallbacks` (requests predicted as the naive read where the client model is
    unsure, bench/fidelity/unsure.py) and `not_scored` (billed requests the replay did not reach,
    with why), `not_within` (the requests not within tolerance by what the bill shows: read less,
    read more, size off, split off; bench/fidelity/not_within.py; per request too). `naive` holds
    the naive replay's figures; `conditioned` those of the replay with the outside events taken from the bill
    (bench/fidelity/outside.py), listed per kind in `outside_events` (requests, count, cost: what
    replaying them changes in the predicted cost of their requests) as an explanation;
    `unconditioned` repeats the top-level figures (kept for readers of the earlier shape)."""
    base = sf.baseline
    out: dict[str, Any] = {
        "session": sf.name,
        "model": sf.model,
        "policy": sf.policy,
        # what "predicted" is (bench/fidelity/__init__.py): the replay of what was recorded, or P's
        "predicted_by": "replay" if sf.track is None else f"policy {sf.policy}",
        "requests": sf.n,
        "per_request_usage": sf.has_usage or bool(sf.copied),  # copies: billed, scored elsewhere
        "within_tolerance": round(base.share_within, 4) if sf.has_usage else None,
        "read_match": round(base.share_ok, 4) if sf.has_usage else None,
        "billed": _sum([billed(r) for r in sf.requests]) if sf.has_usage else None,
        "predicted": _sum([predicted(r) for r in base.requests]) if sf.has_usage else None,
    } | backend_json(sf)
    if sf.track is not None:  # policy P: where each compacted, P's own summary requests (policy.py)
        out["compactions_before"] = {"real": sf.track.real, "policy": sf.track.own}
        out["policy_requests"] = [{"before": i, "cost": round(c, 6)} for i, c in sf.own_requests]
    if sf.not_scored:
        out["not_scored"] = {"count": len(sf.not_scored), "requests": sf.not_scored, "why": sf.not_scored_why}
    if len(sf.models) > 1:  # a session on several models (`model_switch`): each request priced as its own
        out["models"] = sf.models
    if sf.copied:  # a forked session's copies of earlier requests: scored where they were billed
        out["copied_requests"] = sf.copied
    if not sf.has_usage:
        out["note"] = COPIED.format(n=sf.copied) if sf.copied else NO_USAGE
        return out
    out["cost_interval"] = interval_json(sf)
    out["fallbacks"] = {
        "count": base.fallbacks,
        "requests": {str(r.index): r.fallback for r in base.requests if r.fallback},
    }
    out["naive"] = {
        "within_tolerance": round(sf.share_naive_within, 4),
        "read_match": round(sf.share_naive_ok, 4),
        "predicted": _sum([naive(r) for r in sf.requests]),
        "not_within": by_kind(naive_kind(r) for r in sf.requests),
    }
    out["not_within"] = by_kind(replay_kind(r) for r in base.requests)  # bench/fidelity/not_within.py
    out["conditioned"] = {
        "within_tolerance": round(sf.share_within, 4),
        "read_match": round(sf.share_ok, 4),
        "predicted": _sum([predicted(r) for r in sf.requests]),
    }
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
                "user_turn": r.real_user,
                "within": u.within,
                "naive_within": r.naive_within,
                "not_within": replay_kind(u),
                "naive_not_within": naive_kind(r),
                "outside": r.outside,
                "unsure": u.unsure,
                "fallback": u.fallback,
                "billed": billed(r),
                "predicted": predicted(u),
                "predicted_conditioned": predicted(r),
                "predicted_naive": naive(r),
            }
            for r, u in zip(sf.requests, base.requests, strict=True)
        ]
    return out


def field_gaps(sf: SessionFidelity) -> dict[str, float]:
    """Predicted minus billed, relative to billed, of every field's session total (0 when both are 0)."""
    b = _sum([billed(r) for r in sf.requests])
    p = _sum([predicted(r) for r in sf.requests])
    return {f: ((p[f] - b[f]) / b[f] if b[f] else (0.0 if not p[f] else float("inf"))) for f in FIELDS}
