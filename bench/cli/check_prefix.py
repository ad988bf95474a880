"""`ctxbench check-prefix`: check that every request starts with its parent request, for CI.

LOG is a raw request log (Anthropic Messages, OpenAI Chat Completions or Responses bodies, one
JSON per line, bare or wrapped as {"body": ...} / claude-trace {"request": {"body": ...}}), a
ctxbench records file, or a ctxbench trace (the requests it records; with --policy, the requests
a simulated run of that policy sends). Exit status: 0 clean or within the baseline, 1 not, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ctxbench.bench.cli._session_log import session_log_hint
from ctxbench.bench.prefix.check import CLASSES, DEFAULT_ALLOWED, Report, find_breaks, record_breaks
from ctxbench.bench.prefix.report import (
    apply_baseline,
    baseline_dict,
    format_github,
    format_text,
    report_dict,
)
from ctxbench.bench.prefix.request_log import (
    dump_log,
    parse_line,
    read_request_log,
    simulated_log,
    trace_log,
)
from ctxbench.sim.core.values import size_arg
from ctxbench.traces.compressed import open_log


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check-prefix",
        help="check prefix stability of a request log (CI)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example: ctxbench check-prefix traces/samples/game-300.jsonl --policy h-direct "
        "--baseline bench/baselines/h-direct.json --format github",
    )
    p.add_argument("log", metavar="LOG", help="request log, records file or trace (JSONL)")
    p.add_argument("--baseline", help="accepted breaks (JSON); only new failing breaks fail")
    p.add_argument("--write-baseline", metavar="FILE", help="write the current failing breaks as a baseline")
    p.add_argument(
        "--format",
        choices=("text", "json", "github", "sarif", "junit"),
        default="text",
        help="output on stdout (default text; sarif: SARIF 2.1.0 for code scanning; junit: JUnit XML)",
    )
    p.add_argument("--sarif-output", metavar="FILE", help="also write the SARIF 2.1.0 log to FILE")
    p.add_argument("--junit-output", metavar="FILE", help="also write the JUnit XML report to FILE")
    p.add_argument(
        "--allow",
        action="append",
        choices=CLASSES,
        help=f"classes that never fail (default: {', '.join(DEFAULT_ALLOWED)})",
    )
    p.add_argument("--policy", help="with a trace: check the requests a simulated run of this preset sends")
    p.add_argument(
        "--budget", type=size_arg, help="with --policy: the preset's budget (its budget_means); 80000, 80k"
    )
    p.add_argument(
        "--provider",
        help="with --policy: provider profile (default: the one serving the trace's model; the "
        "preset's for a trace that names no model, as `run`)",
    )
    p.add_argument("--model", help="with --policy: run every request as this model (default: the trace's)")
    p.add_argument("--seed", type=int, default=0, help="with --policy: seed (default 0)")
    p.add_argument("--save-log", metavar="FILE", help="write the request log that was checked (JSONL)")
    p.add_argument("--limit", type=int, default=20, help="breaks shown in text output (default 20)")
    p.set_defaults(handler=handle)


def _first_json(path: Path) -> Any:
    with open_log(path) as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    return json.loads(line)
                except RecursionError:
                    raise ValueError(f"{path}:{n}: JSON nested too deeply") from None
                except ValueError as exc:  # not UTF-8 or not JSON
                    raise ValueError(f"{path}:{n}: not JSON ({exc})") from None
    raise ValueError(f"{path}: empty log")


def build_report(
    log: str,
    allowed: tuple[str, ...] = DEFAULT_ALLOWED,
    policy: str | None = None,
    budget: int | None = None,
    provider: str | None = None,
    seed: int = 0,
    save_log: str | None = None,
    model: str | None = None,
) -> Report:
    """The prefix report of `log` (the module docstring's kinds of LOG); with `policy`, of the
    requests a simulated run of it on the trace `log` sends, on the provider and model every verb
    picks (`provider`, `model` override them); `save_log` writes what was checked."""
    path = Path(log)
    if not path.is_file():
        raise FileNotFoundError(f"{log}: no such file")
    first = _first_json(path)
    entries: list[dict[str, Any]] | None = None
    served = ""  # with --policy: the provider and model simulated
    skipped: list[int] = []  # ledger lines of requests the server refused
    if isinstance(first, dict) and first.get("format") == "ctxbench-trace":
        if policy:
            from ctxbench.bench.runs import serve
            from ctxbench.policies.preset import load_policy
            from ctxbench.sim.prepared_cache import prepared_file

            pol = load_policy(policy).with_budget(budget)
            pf = prepared_file(str(path))  # kept prepared by file content
            # the profile and model `run` and `compare` pick for this trace (bench/runs.py `serve`)
            prep, serving, knows = serve(str(path), pf, pol, provider, model, spec=policy)
            entries = simulated_log(prep, knows.policy, serving.profile, seed)
            served = f"provider {serving.profile} ({serving.why}) · model {serving.model}"
        else:
            from ctxbench.traces.format import read_trace

            entries = trace_log(read_trace(path))
        reqs = [parse_line(e, 0, f"{path} request {i}") for i, e in enumerate(entries)]
    elif isinstance(first, dict) and "miss_cause" in first and "conversation" in first:
        from ctxbench.sim.core.records import load_jsonl

        report = record_breaks(load_jsonl(path), allowed)
        report.source = str(log)
        return report
    else:
        if policy:
            raise ValueError("--policy needs a ctxbench trace as LOG")
        with open_log(path) as f:
            reqs = read_request_log(f, str(path), skipped)
    if save_log:
        out = Path(save_log)
        out.parent.mkdir(parents=True, exist_ok=True)
        lines = (
            dump_log(entries)
            if entries is not None
            else (line.decode("utf-8", "surrogateescape").rstrip("\n") for line in open_log(path))
        )
        out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    report = find_breaks(reqs, allowed)
    report.source = str(log) + (f" --policy {policy}" if policy else "")
    if served:
        report.notes.insert(0, f"simulated on {served}")
    if skipped:
        at = ", ".join(map(str, skipped[:5])) + (", ..." if len(skipped) > 5 else "")
        report.notes.append(
            f"{len(skipped)} ledger line(s) of refused requests left out (lines {at}): "
            "the API answered them with an error"
        )
    return report


def handle(args: argparse.Namespace) -> int:
    allowed = tuple(args.allow) if args.allow else DEFAULT_ALLOWED
    try:
        report = build_report(
            args.log, allowed, args.policy, args.budget, args.provider, args.seed, args.save_log, args.model
        )
    except ValueError as exc:
        hint = session_log_hint(Path(args.log)) if Path(args.log).is_file() else ""
        if hint:
            raise ValueError(f"{exc}{hint}") from None
        raise
    if args.write_baseline:
        Path(args.write_baseline).parent.mkdir(parents=True, exist_ok=True)
        Path(args.write_baseline).write_text(
            json.dumps(baseline_dict(report), indent=2) + "\n", encoding="utf-8"
        )
        print(f"wrote {args.write_baseline}: {len(report.failing)} accepted break(s)", file=sys.stderr)
    if args.baseline:
        try:
            base = json.loads(Path(args.baseline).read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ValueError(f"{args.baseline}: not JSON ({exc})") from exc
        report = apply_baseline(report, base, args.baseline)
    from ctxbench.bench.prefix.ci_formats import format_junit, format_sarif

    for out, form in ((args.sarif_output, format_sarif), (args.junit_output, format_junit)):
        if out:
            Path(out).parent.mkdir(parents=True, exist_ok=True)
            Path(out).write_text(form(report, args.log) + "\n", encoding="utf-8")
    if args.format == "json":
        print(json.dumps(report_dict(report), indent=2))
    elif args.format == "github":
        print(format_github(report, args.log))
    elif args.format in ("sarif", "junit"):
        print((format_sarif if args.format == "sarif" else format_junit)(report, args.log))
    else:
        print(format_text(report, args.limit))
    return 0 if report.ok else 1
