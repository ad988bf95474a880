"""The verdict column of a comparison: which policy is cheapest, and whether each gap holds up.

- A policy with a run that ended by an error is FAILED (cut short, so cheap) and never ranked.
- Among the rest, the cheapest mean cost is the reference. Policies whose cost equals it on every
  seed (to 1e-9 relative) tie with it: all of them say "tie for best", none is "best".
- Every other policy is compared with the reference **paired**: per seed, its cost minus the
  reference's on the same seed and traces (the same seed draws the same trace and the same
  provider events for both), and a 95 % Student t interval of those differences. The gap is a
  verdict ("costlier than REF: +$d, paired 95 % CI lo..hi over n seeds") only when the interval
  excludes 0; else "NOT SUPPORTED" (the interval includes 0). An unpaired comparison of two
  intervals (the seeds' spread of each policy) calls consistent gaps unsupported: five of five
  seeds putting one policy above another is a supported gap however much either moves with the
  seed (issue 29).
- With one seed there is no interval: the reference is "best" and the others carry no verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ctxbench.bench.stats import Stat, stat


class PolicyRow(Protocol):
    """What a verdict reads and sets of a compare table's row (bench/compare.py `PolicyRow`)."""

    policy: str
    runs: int
    stats: dict[str, Stat]
    per_seed: dict[int, float]
    rel_best: float
    verdict: str

TIE_REL = 1e-9  # equal costs: the same to this relative difference on every seed


def _equal(a: float, b: float) -> bool:
    return abs(a - b) <= TIE_REL * max(1.0, abs(a), abs(b))


def same_costs(p: PolicyRow, q: PolicyRow) -> bool:
    """Equal cost on every seed both ran (and the same seeds)."""
    return p.per_seed.keys() == q.per_seed.keys() and all(
        _equal(p.per_seed[s], q.per_seed[s]) for s in p.per_seed
    )


def paired(p: PolicyRow, ref: PolicyRow) -> tuple[float, float, float, int]:
    """Mean, low and high of the 95 % interval of `p` minus `ref` over their common seeds, and n."""
    common = sorted(p.per_seed.keys() & ref.per_seed.keys())
    s = stat([p.per_seed[k] - ref.per_seed[k] for k in common])
    return s.mean, s.lo, s.hi, s.n


def rank(prs: Sequence[PolicyRow], failed: dict[int, int]) -> None:
    """Set `rel_best` and `verdict` of every row (module docstring); `failed` maps id(row) to its
    runs that ended by an error."""
    finished = [p for p in prs if not failed[id(p)]]
    ref = min(finished, key=lambda p: p.stats["cost"].mean) if finished else None
    ties = [p for p in finished if ref is not None and same_costs(p, ref)]
    for p in prs:
        c = p.stats["cost"]
        base = ref.stats["cost"].mean if ref else 0.0
        p.rel_best = c.mean / base if base else float("nan")
        if failed[id(p)]:
            p.verdict = f"FAILED ({failed[id(p)]} of {p.runs} runs ended by an error)"
        elif p in ties:
            p.verdict = f"tie for best ({len(ties)} policies, equal cost)" if len(ties) > 1 else "best"
        elif ref is not None:
            p.verdict = _gap(p, ref, [q for q in finished if q is not p and q not in ties])


def _money(v: float) -> str:
    return f"{'-' if v < 0 else '+'}${abs(v):,.4f}"


def _gap(p: PolicyRow, ref: PolicyRow, others: list[PolicyRow]) -> str:
    tie = next((q.policy for q in others if same_costs(p, q)), "")
    said = f"ties with {tie} (equal cost); " if tie else ""
    d, lo, hi, n = paired(p, ref)
    if n < 2:
        return said.removesuffix("; ")
    if lo > 0:
        ci = f"{_money(lo)}..{_money(hi)}"
        return f"{said}costlier than {ref.policy}: {_money(d)}, paired 95 % CI {ci} over {n} seeds"
    ci = f"{_money(lo)}..{_money(hi)}"
    return f"{said}NOT SUPPORTED (the paired 95 % CI of the gap to {ref.policy} includes 0: {ci})"
