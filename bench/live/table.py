"""Output of `bench.live.predict`: the request-by-request table, the verdict line and the JSON form."""

from __future__ import annotations

from typing import Any

from ctxbench.bench.live.alignment import READ_TOLERANCE, Comparison
from ctxbench.bench.live.ledger import MAIN, SUMMARY, LiveRequest
from ctxbench.sim.core.records import RequestRecord


def _cells_real(r: LiveRequest | None) -> list[str]:
    if r is None:
        return ["-", "-", "-", "-", "-", "-", "-"]
    u = r.usage
    return [
        str(r.seq),
        r.kind,
        str(r.input),
        str(u["cache_read"]),
        str(r.write),
        str(u["uncached"]),
        "yes" if r.kind == SUMMARY else "no",
    ]


def _cells_pred(p: RequestRecord | None) -> list[str]:
    if p is None:
        return ["-", "-", "-", "-", "-", "-", "-"]
    kind = SUMMARY if p.kind in ("summary", "summary_text") else MAIN
    return [
        str(p.index + 1),
        kind,
        str(p.true_input),
        str(p.cache_read),
        str(p.cache_write_5m + p.cache_write_1h),
        str(p.uncached),
        "yes" if kind == SUMMARY else "no",
    ]


def format_table(c: Comparison) -> str:
    head = ["#", "kind", "input", "read", "write", "uncached", "compact"]
    cols = [*(f"real {h}" for h in head), *(f"pred {h}" for h in head), "Δread", "same"]
    lines = [
        f"{c.harness}: preset {c.preset}, provider {c.profile}/{c.model}, "
        f"compaction threshold {c.threshold:,}",
        " | ".join(cols),
        " | ".join("---" for _ in cols),
    ]
    for row in c.rows:
        a, b = _cells_real(row.real), _cells_pred(row.pred)
        same = "=" if a[1:] == b[1:] else "≠"
        dread = str(int(b[3]) - int(a[3])) if row.real and row.pred else "-"
        lines.append(" | ".join([*a, *b, dread, same]))
    lines.append("")
    keys = ("compaction", "real_request", "pred_request", "real_reported_before", "pred_estimate_before",
            "pred_estimate", "real_summary_input", "pred_summary_input")  # fmt: skip
    lines.append(
        "compaction | real request | pred request | real reported input before | pred estimate one request "
        "before | pred estimate at trigger | real summary-request input | pred summary-request input"
    )
    lines.append(" | ".join("---" for _ in keys))
    lines.extend(" | ".join(str(t[k]) for k in keys) for t in c.triggers)
    lines.append("")
    lines.append("totals | requests | input | cache read | cache write | uncached | output | cost $")
    lines.append(" | ".join("---" for _ in range(8)))
    for who in ("real", "predicted"):
        t = c.totals[who]
        lines.append(
            f"{who} | {int(t['requests'])} | {int(t['input']):,} | {int(t['cache_read']):,} | "
            f"{int(t['cache_write']):,} | {int(t['uncached']):,} | {int(t['output']):,} | {t['cost']:.4f}"
        )
    r, p = c.totals["real"], c.totals["predicted"]
    lines.append(
        "delta | "
        + " | ".join(
            f"{(p[k] - r[k]) / r[k]:+.1%}" if r[k] else ("0" if p[k] == 0 else "new")
            for k in ("requests", "input", "cache_read", "cache_write", "uncached", "output", "cost")
        )
    )
    lines.extend(f"note: {n}" for n in c.notes)
    lines.append(verdict(c))
    return "\n".join(lines)


def verdict(c: Comparison) -> str:
    return (
        f"VERDICT {c.harness}: {'PASS' if c.ok else 'FAIL'} - compactions real {c.real_compactions} "
        f"predicted {c.pred_compactions} ({'within' if c.compactions_ok else 'NOT within'} ±1 request); "
        f"cache read {c.read_delta:+.2%} (tolerance ±{READ_TOLERANCE:.0%})"
    )


def as_json(c: Comparison) -> dict[str, Any]:
    rows = []
    for row in c.rows:
        rows.append(
            {
                "real": dict(
                    zip(
                        ("seq", "kind", "input", "read", "write", "uncached", "compact"),
                        _cells_real(row.real),
                        strict=True,
                    )
                ),
                "pred": dict(
                    zip(
                        ("index", "kind", "input", "read", "write", "uncached", "compact"),
                        _cells_pred(row.pred),
                        strict=True,
                    )
                ),
            }
        )
    return {
        "harness": c.harness,
        "preset": c.preset,
        "profile": c.profile,
        "model": c.model,
        "threshold": c.threshold,
        "real_compactions": c.real_compactions,
        "pred_compactions": c.pred_compactions,
        "compactions_ok": c.compactions_ok,
        "read_delta": c.read_delta,
        "ok": c.ok,
        "triggers": c.triggers,
        "totals": c.totals,
        "notes": c.notes,
        "rows": rows,
    }
