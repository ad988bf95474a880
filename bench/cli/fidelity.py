"""`ctxbench fidelity`: replay imported traces with the recorded harness's behaviour and compare
every request's predicted usage with the bill (bench/fidelity/compare.py); `--all-real` regenerates the
report over every real session in traces-real/."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.fidelity.fields import session_json
from ctxbench.bench.fidelity.logs import traces_of
from ctxbench.bench.fidelity.replay import serving
from ctxbench.sim.core.catalog import add_prices_file
from ctxbench.traces.model import MessageEvent


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fidelity", help="predicted vs billed usage of an imported trace", description=__doc__)
    p.add_argument(
        "traces",
        nargs="*",
        help="ctxbench traces, or a harness's own logs (imported first, as `ctxbench import` does)",
    )
    p.add_argument("--policy", default="recorded", help="preset (default: recorded = the recorded harness)")
    p.add_argument(
        "--provider",
        help="provider profile (default: the one the log's model is served by, sim/providers/choice.py)",
    )
    p.add_argument(
        "--model",
        help="run every request as this model id (default: the trace's, and the models it switches to; "
        "aliases and dated ids resolve, sim/core/catalog.py)",
    )
    p.add_argument("--prices", metavar="FILE", help="extra price rows (YAML, as sim/data/prices.yaml)")
    p.add_argument("--no-warm", action="store_true", help="start with an empty cache")
    p.add_argument(
        "--keep-warm",
        action="store_true",
        help="assume other sessions of the account keep the shared static prefix warm "
        "(bench/fidelity/compare.py)",
    )
    p.add_argument(
        "--all-real",
        nargs="?",
        const="",
        metavar="DIR",
        help="report over every log under DIR (default: traces-real/, or $CTXBENCH_REAL)",
    )
    p.add_argument("-o", "--output", help="write the report to FILE (markdown)")
    p.add_argument("--requests", action="store_true", help="print every request, not only mismatches")
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object per session: requests, within_tolerance, billed and predicted fields, "
        "outside events taken from the bill and the unconditioned figures",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar on stderr")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.prices:
        add_prices_file(args.prices)
    if args.all_real is not None:
        from ctxbench.bench.fidelity.discover import discover
        from ctxbench.bench.fidelity.logs import not_compared_json
        from ctxbench.bench.fidelity.other import other_json
        from ctxbench.bench.fidelity.report import DEFAULT_DIR, conversations, label, render
        from ctxbench.bench.progress import terminal_stderr

        stream = terminal_stderr(args.quiet or args.json)  # progress never reaches stdout
        root = Path(args.all_real) if args.all_real else DEFAULT_DIR
        if args.json:  # every conversation of every log under the folder, one object each
            found = discover(root)
            sessions = [
                {**session_json(r.fidelity, args.requests), "session": label(r.log, r.name)}
                | {"log": r.log.rel, "format": r.log.format}
                if r.fidelity and r.compared
                else not_compared_json(r, label(r.log, r.name))
                for r in conversations(found, stream)
            ]
            sessions += other_json(found, args.requests)
            print(json.dumps(sessions, indent=2))
            return 0
        text = render(root, stream)
        if args.output:
            Path(args.output).write_text(text, encoding="utf-8")
            print(f"wrote {args.output}")
        else:
            print(text, end="")
        return 0
    if not args.traces:
        raise ValueError("give trace files or --all-real")
    for path in args.traces:
        if Path(path).is_dir():
            every = f"`--all-real {path}` for every log under it"
            raise ValueError(f"{path}: a folder; give its log files, or {every}")
    out: list[str] = []
    traces = [t for path in args.traces for t in traces_of(path)]
    for _path, tr in traces:  # every model known before the first request (H-20)
        if any(isinstance(e, MessageEvent) and e.usage is not None for e in tr.events):
            note = serving(tr, args.provider, args.model).note
            if note:
                print(f"note: {note}", file=sys.stderr)
    docs: list[dict[str, object]] = []
    for path, tr in traces:
        sf = compare(
            tr,
            Path(path.split("#")[0]).stem + (f"#{path.split('#', 1)[1]}" if "#" in path else ""),
            args.policy,
            args.provider,
            warm=not args.no_warm,
            keep_warm=args.keep_warm,
            model=args.model,
        )
        if args.json:
            docs.append({"trace": path, **session_json(sf, args.requests)})
            continue
        if not sf.has_usage:
            out.append(f"{path}: no per-request usage in the log (totals only): nothing to compare")
            continue
        out.append(
            f"{path}: {sf.n} requests · model {' -> '.join(sf.models)} · policy {sf.policy} · "
            f"within tolerance {sf.share_within:.1%} · read match {sf.share_ok:.1%} "
            f"(naive {sf.share_naive_ok:.1%})"
        )
        out.append(
            f"  cache read billed {sf.total('billed'):,} predicted {sf.total('predicted'):,} · "
            f"cost billed ${sf.cost_billed:.4f} predicted ${sf.cost_predicted:.4f}"
        )
        if sf.outside:  # taken from the bill and counted apart (bench/fidelity/outside.py)
            base = sf.baseline
            out.append(
                f"  outside events taken from the bill: lookup failures {list(sf.outside.lookup_failures)}, "
                f"outside warming {list(sf.outside.outside_warming)}, unlogged turn content "
                f"{list(sf.outside.unlogged_turn_content)} · without them: within "
                f"{base.share_within:.1%}, cost predicted ${base.cost_predicted:.4f}"
            )
        for r in sf.requests if args.requests else sf.misses:
            out.append(
                f"  #{r.index} t={r.t:.0f}s read {r.billed.cache_read:,}/{r.predicted.cache_read:,} "
                f"write {r.billed.cache_write_5m + r.billed.cache_write_1h:,}/{r.predicted.cache_write:,} "
                f"uncached {r.billed.input_tokens:,}/{r.input_predicted:,}"
                + (f" — {r.cause}" if r.cause else "")
            )
    if args.json:
        print(json.dumps(docs if len(docs) != 1 else docs[0], indent=2))
        return 0
    text = "\n".join(out) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    print(text, end="")
    return 0
