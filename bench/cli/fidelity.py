"""`ctxbench fidelity`: replay imported traces with the recorded harness's behaviour and compare
every request's predicted usage with the bill (bench/fidelity/compare.py); `--all-real` regenerates the
report over every real session in traces-real/."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import IO

from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.fidelity.fields import session_json
from ctxbench.bench.fidelity.forks import with_prompt_suggestions
from ctxbench.bench.fidelity.logs import DATA_ERRORS, IMPORT, NotReplayed, Replayed, traces_of
from ctxbench.bench.fidelity.replay import serving
from ctxbench.bench.fidelity.text import session_text
from ctxbench.policies.preset import load_policy, with_policy_set
from ctxbench.sim.core.catalog import CatalogError, add_prices_file
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
        "--policy-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a value of --policy's preset, as for `run` (compaction.window=20000; repeat)",
    )
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
        "--assume-prompt-suggestions",
        action="store_true",
        help="Claude Code logs: assume the account had prompt suggestions on, a forked query sent when "
        "each turn ends that no log line records (bench/claude_code_wire.md §6; default: not sent)",
    )
    p.add_argument(
        "--all-real",
        nargs="?",
        const="",
        metavar="DIR",
        help="report over every log under DIR (default: traces-real/, or $CTXBENCH_REAL)",
    )
    p.add_argument(
        "--corpus",
        metavar="DIR",
        help="with --all-real: a folder made by `python -m ctxbench.bench.corpus.extract --out DIR`; "
        "its test/ rows are the test part (reported first), its dev/ rows join the --all-real folder as the "
        "development part (bench/corpus/README.md)",
    )
    p.add_argument("--split", choices=("test", "dev"), help="with --corpus: report this part only")
    p.add_argument("-o", "--output", help="write the report to FILE (markdown)")
    p.add_argument("--requests", action="store_true", help="print every request, not only mismatches")
    p.add_argument(
        "--json",
        action="store_true",
        help="print a JSON array (always, even of one): one object per conversation: requests, "
        "within_tolerance, billed and predicted fields, "
        "outside events taken from the bill and the unconditioned figures; one whose replay raised an "
        "error on its data: null figures, `error` (class, message, stage) and `not_scored` (a log whose "
        "import raised: one object, `error` with stage import); `copied_requests`: copies of requests "
        "counted in another conversation or an earlier log (scored there, as `billed` counts them), "
        "`usage_unrecorded`: requests recording 0 tokens (billed, not compared)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar on stderr")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.prices:
        add_prices_file(args.prices)
    if args.all_real is not None:
        from ctxbench.bench.fidelity.discover import discover
        from ctxbench.bench.fidelity.logs import conversation_json
        from ctxbench.bench.fidelity.other import other_json
        from ctxbench.bench.fidelity.report import DEFAULT_DIR, conversations, label, render
        from ctxbench.bench.progress import terminal_stderr

        stream = terminal_stderr(args.quiet or args.json)  # progress never reaches stdout
        root = Path(args.all_real) if args.all_real else DEFAULT_DIR
        if args.corpus:
            return _parts(args, root, stream)
        if args.json:  # every conversation of every log under the folder, one object each
            found = discover(root)
            convs = conversations(found, stream)
            sessions = [conversation_json(r, label(r.log, r.name), args.requests) for r in convs]
            sessions += other_json(found, args.requests)
            print(json.dumps(sessions, indent=2))
            return 0
        failed: list[Replayed] = []
        text = render(root, stream, failed)
        _write(args, text, failed)
        return 0
    return _traces(args)


def _traces(args: argparse.Namespace) -> int:
    """`fidelity TRACE...`: each trace (or log, imported first) scored; one on an unknown model or
    whose replay raises an error on its data is named and the others scored; alone, it is the
    one-line error naming its file (exit 2)."""
    if args.corpus or args.split:
        raise ValueError("--corpus and --split go with --all-real")
    if not args.traces:
        raise ValueError("give trace files or --all-real")
    from ctxbench.traces.importers.detect import is_log_folder

    for path in args.traces:
        if Path(path).is_dir() and not is_log_folder(Path(path)):  # a task folder, opencode's storage: a log
            every = f"`--all-real {path}` for every log under it"
            raise ValueError(f"{path}: a folder; give its log files, or {every}")
    out: list[str] = []
    traces = [t for path in args.traces for t in traces_of(path)]
    if args.assume_prompt_suggestions:
        traces = [(path, with_prompt_suggestions(tr)) for path, tr in traces]
    unknown = 0
    for _path, tr in traces:  # every model known before the first request (H-20)
        if any(isinstance(e, MessageEvent) and e.usage is not None for e in tr.events):
            try:
                note = serving(tr, args.provider, args.model).note
            except CatalogError:
                unknown += 1
                if unknown == len(traces):
                    raise
                continue  # named where it is scored
            if note:
                print(f"note: {note}", file=sys.stderr)
    docs: list[dict[str, object]] = []
    seen: set[str] = set()  # request ids scored: a copy in a later conversation is scored once
    policy = with_policy_set(load_policy(args.policy), args.policy_set) if args.policy_set else args.policy
    for path, tr in traces:
        name = Path(path.split("#")[0]).stem + (f"#{path.split('#', 1)[1]}" if "#" in path else "")
        try:
            sf = compare(
                tr, name, policy, args.provider,
                warm=not args.no_warm, keep_warm=args.keep_warm, model=args.model,
            )  # fmt: skip
        except CatalogError as e:
            if len(traces) == 1:
                raise
            # one conversation on an unknown model: the others are scored, this one named (issue 28)
            print(f"note: {path}: not scored: {e}", file=sys.stderr)
            if args.json:
                docs.append({"trace": path, "session": name, "within_tolerance": None, "note": str(e)})
            else:
                out.append(f"{path}: not scored: {e}")
            continue
        except DATA_ERRORS as e:  # an error on this trace's data: one line naming the file
            err = NotReplayed.of(e)
            if len(traces) == 1:
                raise ValueError(f"{path}: not replayed: {err}") from None
            print(f"note: {path}: not replayed: {err}", file=sys.stderr)  # the others are scored
            if args.json:
                error = {"class": err.kind, "message": err.message, "stage": err.stage}
                docs.append(
                    {"trace": path, "session": name, "within_tolerance": None, "note": f"not replayed: {err}"}
                    | {"error": error}
                )
            else:
                out.append(f"{path}: not replayed: {err}")
            continue
        ids = {r.request_id for r in sf.requests if r.request_id}
        sf, seen = sf.without(seen), seen | ids  # a copy scored once (report.py billed_once)
        if args.json:
            docs.append({"trace": path, **session_json(sf, args.requests)})
            continue
        out += session_text(path, sf, args.requests)
    if args.json:
        print(json.dumps(docs, indent=2))  # always an array, one object per conversation (issue 31 #9)
        return 0
    text = "\n".join(out) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    print(text, end="")
    return 0


def _parts(args: argparse.Namespace, root: Path, stream: IO[str] | None) -> int:
    """`--all-real --corpus DIR [--split]`: the test part first, then the development part
    (bench/fidelity/parts.py); `--json` gives every conversation with its part."""
    from ctxbench.bench.fidelity.logs import conversation_json
    from ctxbench.bench.fidelity.parts import parts, render_parts, replay_part
    from ctxbench.bench.fidelity.report import label

    shared = root if root.is_dir() else None
    if args.json:
        docs = []
        for part in parts(shared, Path(args.corpus), args.split):
            convs, _found = replay_part(part, stream)
            for r in convs:
                doc = conversation_json(r, label(r.log, r.name), args.requests)
                docs.append(doc | {"part": part.name, "log": r.log.rel, "format": r.log.format})
        print(json.dumps(docs, indent=2))
        return 0
    failed: list[Replayed] = []
    text = render_parts(shared, Path(args.corpus), args.split, stream, failed)
    _write(args, text, failed)
    return 0


def _write(args: argparse.Namespace, text: str, failed: list[Replayed]) -> None:
    """The report to `-o FILE` or stdout; a note on stderr naming each conversation not replayed
    (the report has them in its "Not replayed" section, bench/fidelity/logs.py)."""
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}")
    else:
        print(text, end="")
    for r in failed:
        name = "" if r.name == IMPORT else f" {r.name}"
        print(f"note: {r.log.path}{name}: {r.why_not}", file=sys.stderr)
    if failed:
        print(f"note: {len(failed)} conversation(s) not replayed, named in the report", file=sys.stderr)
