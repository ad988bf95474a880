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
        "--format", choices=("text", "json", "github"), default="text", help="output (default text)"
    )
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
    p.add_argument("--provider", help="with --policy: provider profile")
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


def build_report(args: argparse.Namespace, allowed: tuple[str, ...]) -> Report:
    path = Path(args.log)
    if not path.is_file():
        raise FileNotFoundError(f"{args.log}: no such file")
    first = _first_json(path)
    entries: list[dict[str, Any]] | None = None
    skipped: list[int] = []  # ledger lines of requests the server refused
    if isinstance(first, dict) and first.get("format") == "ctxbench-trace":
        if args.policy:
            from ctxbench.policies.preset import load_policy
            from ctxbench.sim.prepared_cache import prepared_file

            policy = load_policy(args.policy).with_budget(args.budget)
            prep = prepared_file(str(path)).prepared  # kept prepared by file content
            entries = simulated_log(prep, policy, args.provider, args.seed)
        else:
            from ctxbench.traces.format import read_trace

            entries = trace_log(read_trace(path))
        reqs = [parse_line(e, 0, f"{path} request {i}") for i, e in enumerate(entries)]
    elif isinstance(first, dict) and "miss_cause" in first and "conversation" in first:
        from ctxbench.sim.core.records import load_jsonl

        report = record_breaks(load_jsonl(path), allowed)
        report.source = str(args.log)
        return report
    else:
        if args.policy:
            raise ValueError("--policy needs a ctxbench trace as LOG")
        with open_log(path) as f:
            reqs = read_request_log(f, str(path), skipped)
    if args.save_log:
        out = Path(args.save_log)
        out.parent.mkdir(parents=True, exist_ok=True)
        lines = (
            dump_log(entries)
            if entries is not None
            else (line.decode("utf-8", "surrogateescape").rstrip("\n") for line in open_log(path))
        )
        out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    report = find_breaks(reqs, allowed)
    report.source = str(args.log) + (f" --policy {args.policy}" if args.policy else "")
    if skipped:
        at = ", ".join(map(str, skipped[:5])) + (", ..." if len(skipped) > 5 else "")
        report.notes.append(
            f"{len(skipped)} ledger line(s) of refused requests left out (lines {at}): "
            "the API answered them with an error"
        )
    return report


def _session_log_hint(path: Path) -> str:
    """When LOG is a harness's session log (no request bodies), how to check it: import it first."""
    from ctxbench.traces.importers import ImportFailure, detect

    try:
        fmt = detect(path)
    except (ImportFailure, OSError, ValueError):  # ValueError: a damaged compressed file
        return ""
    if fmt == "claude-trace":  # request traffic: read above
        return ""
    return (
        f" ({path} looks like a session log of {fmt}, which records no request bodies: "
        f"`ctxbench import {path} -o T.jsonl`, then `ctxbench check-prefix T.jsonl`)"
    )


def handle(args: argparse.Namespace) -> int:
    allowed = tuple(args.allow) if args.allow else DEFAULT_ALLOWED
    try:
        report = build_report(args, allowed)
    except ValueError as exc:
        hint = _session_log_hint(Path(args.log)) if Path(args.log).is_file() else ""
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
    if args.format == "json":
        print(json.dumps(report_dict(report), indent=2))
    elif args.format == "github":
        print(format_github(report, args.log))
    else:
        print(format_text(report, args.limit))
    return 0 if report.ok else 1
