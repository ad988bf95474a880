"""Output of the prefix check: the text, GitHub-annotation and JSON forms of a `Report`, and the
committed baselines of accepted breaks (so CI fails only on new ones)."""

from __future__ import annotations

from typing import Any

from ctxbench.bench.prefix.check import Break, Report


# ------------------------------------------------------------------ baselines
def baseline_dict(report: Report) -> dict[str, Any]:
    """The accepted breaks of a log (committed, so CI fails only on new ones), each keyed by content
    (culprit.py `content_key`): adding or removing requests keeps every entry."""
    return {
        "format": "ctxbench-prefix-baseline",
        "version": 2,
        "source": report.source,
        "requests": report.requests,
        "accepted": [
            {"key": b.key, "class": b.cls, "path": b.path, "request": b.request} for b in report.failing
        ],
        "breaks_by_class": _counts(report.breaks),
    }


def apply_baseline(report: Report, baseline: dict[str, Any], where: str = "<baseline>") -> Report:
    """The report without the failing breaks the baseline accepts: by content key (version 2) or by
    request index (version 1, the committed baselines written before keys existed)."""
    if not isinstance(baseline, dict) or baseline.get("format") != "ctxbench-prefix-baseline":
        raise ValueError(f"{where}: not a ctxbench prefix baseline (field 'format')")
    entries = baseline.get("accepted", [])
    if not isinstance(entries, list):
        raise ValueError(f"{where}: field 'accepted': expected a list")
    if baseline.get("version", 1) == 1:
        accepted = {tuple(s) for s in entries if isinstance(s, list)}
        failing = [b for b in report.failing if b.signature not in accepted]
    else:
        keys = [e.get("key") if isinstance(e, dict) else None for e in entries]
        if any(not isinstance(k, str) for k in keys):
            n = next(n for n, k in enumerate(keys) if not isinstance(k, str))
            raise ValueError(f"{where}: field 'accepted[{n}].key': expected a string")
        failing = [b for b in report.failing if b.key not in set(keys)]
    return Report(report.requests, report.breaks, failing, report.source, report.notes)


def _counts(breaks: list[Break]) -> dict[str, int]:
    out: dict[str, int] = {}
    for b in breaks:
        key = b.cls + (" (explained)" if b.explained else "")
        out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items()))


# ------------------------------------------------------------------ output
def describe(b: Break, failing: bool = True) -> str:
    """One break in a line; an unexplained break that does not fail the check (its class allowed,
    side_request by default, or listed in the baseline) is said to be allowed."""
    recognised = "(recognised" in b.declared  # read off the log itself (bench/prefix/recognise.py)
    state = (
        ("explained: " if recognised else "explained by declared ") + b.declared
        if b.explained
        else "unexplained"
        if failing
        else "unexplained, allowed"
    )
    who = (
        f"request {b.request}"
        + (f" ({b.label})" if b.label else "")
        + (f" [line {b.line}]" if b.line else "")
    )
    parent = f"request {b.parent}" if b.parent is not None else "the previous request"
    cost = f", ~{b.tokens:,} tokens re-billed" if b.tokens else ""
    if b.tokens and b.dollars is not None:
        cost += f" = ${b.dollars:.4f} on {b.model}"
    note = f"; {b.note}" if b.note else ""
    return f"{who} does not start with {parent}: {b.cls} at {b.where()} ({state}{cost}){note}"


def culprit(b: Break) -> str:
    """The field that changed, before -> after, and the usual cause it looks like."""
    if not b.path:
        return ""
    out = f"changed: {b.path}: {b.before!r} -> {b.after!r}"
    return out + (f"; likely {b.hint}" if b.hint else "")


def format_text(report: Report, limit: int = 20) -> str:
    counts = ", ".join(f"{k} {v}" for k, v in _counts(report.breaks).items()) or "none"
    head = (
        f"{report.source + ': ' if report.source else ''}{report.requests} requests, "
        f"{len(report.breaks)} breaks "
        f"({counts}); {len(report.failing)} failing{_price(report)} -> {'OK' if report.ok else 'FAIL'}"
    )
    lines = [head, *(f"  note: {n}" for n in report.notes)]
    failing = {id(b) for b in report.failing}
    shown = sorted(report.breaks, key=lambda b: (id(b) not in failing, b.request))[:limit]
    for b in shown:
        mark = "x" if id(b) in failing else "-"
        lines.append(f"  {mark} {describe(b, id(b) in failing)}")
        if culprit(b):
            lines.append(f"      {culprit(b)}")
        if b.old or b.new:
            lines.append(f"      parent: {b.old}")
            lines.append(f"      this:   {b.new}")
    if len(report.breaks) > limit:
        lines.append(f"  ... {len(report.breaks) - limit} more (use --format json for all)")
    return "\n".join(lines)


def _esc(s: str, prop: bool = False) -> str:
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return s.replace(":", "%3A").replace(",", "%2C") if prop else s


def _price(report: Report) -> str:
    return f" (${report.dollars:.4f} re-billed)" if report.failing and report.dollars else ""


def format_github(report: Report, path: str) -> str:
    """GitHub Actions workflow commands: an error per failing break, a notice per other break,
    titled with the class and the field that changed (the log line is where the request is)."""
    failing = {id(b) for b in report.failing}
    out = []
    for b in report.breaks:
        level = "error" if id(b) in failing else "notice"
        title = f"prefix {b.cls}" + (f": {b.path} changed" if b.path else "")
        if b.dollars:
            title += f" (${b.dollars:.4f})"
        props = (
            f"file={_esc(path, True)}" + (f",line={b.line}" if b.line else "") + f",title={_esc(title, True)}"
        )
        diff = f"\nparent: {b.old}\nthis:   {b.new}" if b.old or b.new else ""
        what = f"\n{culprit(b)}" if culprit(b) else ""
        out.append(f"::{level} {props}::{_esc(describe(b, id(b) in failing) + what + diff)}")
    out.append(
        f"{report.requests} requests, {len(report.breaks)} breaks, {len(report.failing)} failing"
        + _price(report)
    )
    return "\n".join(out)


def report_dict(report: Report) -> dict[str, Any]:
    failing = {id(b) for b in report.failing}
    return {
        "source": report.source,
        "notes": list(report.notes),
        "ok": report.ok,
        "requests": report.requests,
        "breaks_by_class": _counts(report.breaks),
        "failing_dollars": report.dollars,
        "breaks": [{**b.as_dict(), "failing": id(b) in failing} for b in report.breaks],
    }
