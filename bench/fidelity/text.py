"""The text `ctxbench fidelity FILE` prints for one conversation. Its first line is the
prediction with nothing taken from the bill, the naive replay's figures beside each figure
(issue 28); the outside events the bill shows follow as an explanation, then the requests the
prediction fell back to the naive read for, the requests not scored, and the mismatches."""

from __future__ import annotations

from ctxbench.bench.fidelity.interval import cost_interval
from ctxbench.bench.fidelity.results import COPIED, RequestCompare, SessionFidelity


def _request(r: RequestCompare) -> str:
    return (
        f"  #{r.index} t={r.t:.0f}s read {r.billed.cache_read:,}/{r.predicted.cache_read:,} "
        f"(naive {r.naive_read:,}) "
        f"write {r.billed.cache_write_5m + r.billed.cache_write_1h:,}/{r.predicted.cache_write:,} "
        f"uncached {r.billed.input_tokens:,}/{r.input_predicted:,}"
        + (f" — {r.cause}" if r.cause else "")
        + (f" · fallback: {r.fallback}" if r.fallback else "")
    )


def predicted_label(sf: SessionFidelity) -> str:
    """What the predicted cost is (bench/fidelity/__init__.py): the replay of what was recorded,
    or policy P's prediction."""
    return "predicted by the replay" if sf.track is None else f"predicted by policy {sf.policy}"


def session_text(path: str, sf: SessionFidelity, every: bool = False) -> list[str]:
    """The lines of one conversation (module docstring); `every`: every request, not only misses."""
    if not sf.has_usage and sf.copied:
        return [f"{path}: {COPIED.format(n=sf.copied)}"]
    if not sf.has_usage:
        n = sf.meta.get("usage_unrecorded")
        why = f"its {n} request(s) record 0 tokens in and out" if n else "no per-request usage in the log"
        why += "" if n else " (totals only)"
        return [f"{path}: {why}: nothing to compare"]
    base = sf.baseline
    ci = cost_interval(sf)
    out = [
        f"{path}: {base.n} requests · model {' -> '.join(sf.models)} · policy {sf.policy} · "
        f"within tolerance {base.share_within:.1%} (naive {sf.share_naive_within:.1%}) · "
        f"read match {base.share_ok:.1%} (naive {sf.share_naive_ok:.1%})",
        f"  cache read billed {sf.total('billed'):,} predicted {base.total('predicted'):,} "
        f"(naive {sf.total('naive'):,}) · cost billed ${sf.cost_billed:.4f} {predicted_label(sf)} "
        f"${ci.central:.4f} (naive ${sf.cost_naive:.4f}), 90 % interval "
        f"${ci.low:.4f}..${ci.high:.4f}{'' if ci.holds(sf.cost_billed) else ' (billed outside)'}"
        f", mean ${ci.mean:.4f}"
        + (
            f" · each request as predicted ${base.cost_predicted:.4f}"
            if ci.central != base.cost_predicted
            else ""
        ),
    ]
    if sf.meta.get("backend_assumption"):  # another backend behind Claude Code (traces/importers/backend.py)
        out.append(f"  assumed: {sf.meta['backend_assumption']}")
    if sf.meta.get("writes_assumption"):  # a log that records no cache write (bench/fidelity/gateway.py)
        out.append(f"  assumed: {sf.meta['writes_assumption']}")
    if sf.meta.get("suggestions_assumption"):  # --assume-prompt-suggestions (bench/fidelity/forks.py)
        out.append(f"  assumed: {sf.meta['suggestions_assumption']}")
    if sf.meta.get("usage_unrecorded"):
        n = sf.meta["usage_unrecorded"]
        out.append(f"  not scored: {n} request(s) whose usage records 0 tokens in and out (bill unknown)")
    if sf.track is not None:  # policy P: where each compacted (bench/fidelity/policy.py)
        own = len(sf.own_requests)
        out.append(
            f"  compactions before requests: real harness {sf.track.real}, {sf.policy} {sf.track.own}"
            + (f" · {own} summary request(s) of {sf.policy} with no billed counterpart, "
               f"${sum(c for _, c in sf.own_requests):.4f} in its prediction" if own else "")
        )  # fmt: skip
    if sf.unlogged:  # P's summary requests at real compactions the log holds no bill of (policy.py)
        lg = ci.less(sf.unlogged)
        out.append(
            f"  on the requests the log bills (without ${sf.unlogged:.4f} of {sf.policy}'s summary requests "
            f"at real compactions whose summariser request the log holds no bill of): ${lg.central:.4f}, "
            f"90 % interval ${lg.low:.4f}..${lg.high:.4f}"
            + ("" if lg.holds(sf.cost_billed) else " (billed outside)")
        )
    if ci.auto is not None:  # an automatic-prefix cache's measured share (bench/fidelity/auto_interval.py)
        lo, mid, hi = ci.auto.shares
        out.append(
            f"  the {ci.auto.provider} cache did not find {lo:.1%}..{hi:.1%} (median {mid:.1%}) of the "
            "predicted reads on the development part: the interval; at the median share, the predicted cost"
        )
    elif sf.auto_provider:
        out.append(
            f"  no share of reads not found is measured for the {sf.auto_provider} cache on the development "
            "part: the interval is the prediction itself (bench/fidelity/auto_interval.py)"
        )
    if sf.outside:  # taken from the bill: an explanation, not the prediction (bench/fidelity/outside.py)
        out.append(
            f"  explained by outside events taken from the bill: lookup failures "
            f"{list(sf.outside.lookup_failures)}, outside warming {list(sf.outside.outside_warming)}, "
            f"unlogged turn content {list(sf.outside.unlogged_turn_content)} · with them: within "
            f"{sf.share_within:.1%}, cost predicted ${sf.cost_predicted:.4f}"
        )
    if base.fallbacks:
        reasons = "; ".join(sorted({r.fallback for r in base.requests if r.fallback}))
        out.append(f"  fallback where the prediction is unsure, {base.fallbacks} request(s): {reasons}")
    if sf.not_scored:
        first, last = sf.not_scored[0], sf.not_scored[-1]
        n = len(sf.not_scored)
        out.append(f"  not scored: {n} billed request(s) #{first}..#{last}: {sf.not_scored_why}")
    out += [_request(r) for r in (base.requests if every else base.misses)]
    return out
