"""`ctxbench import PATH... [--format F] -o TRACE`: turn a real recorded session into a ctxbench trace.

The main conversation goes to TRACE; sub-agents and other conversations of the same source go next
to it as `<TRACE stem>.<name>.jsonl`. The import report (counted skips, what the format cannot
provide) is printed."""

from __future__ import annotations

import argparse
import contextlib
import json
from pathlib import Path
from typing import IO

from ctxbench.bench.progress import Progress, terminal_stderr
from ctxbench.traces.format import TraceError, dumps_trace
from ctxbench.traces.importers import FORMATS, ImportFailure, import_paths
from ctxbench.traces.importers.base import ImportResult, file_names, parsed_bytes


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import", help="import a real recorded session as a trace", description=__doc__)
    p.add_argument("paths", nargs="+", help="recorded session file(s) of one format")
    p.add_argument("--format", choices=FORMATS, help="source format (default: detected)")
    p.add_argument("-o", "--output", required=True, help="trace file to write (JSONL)")
    p.add_argument("--json", action="store_true", help="print the import report as JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar on stderr")
    p.set_defaults(handler=handle)


def total_bytes(paths: list[Path]) -> int:
    """The size of the files to import (a missing one counts 0: the importer names it)."""
    total = 0
    for p in paths:
        with contextlib.suppress(OSError):
            total += p.stat().st_size
    return total


def import_with_progress(paths: list[Path], fmt: str | None, stream: IO[str] | None) -> ImportResult:
    """`import_paths`, with a bar of the bytes parsed on `stream` (None: silent)."""
    progress = Progress(total_bytes(paths), 0, stream, "import", unit="B", unit_scale=True)
    token = parsed_bytes.set(progress.update if stream is not None else None)
    try:
        return import_paths(paths, fmt)
    finally:
        parsed_bytes.reset(token)
        progress.close()


def handle(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in args.paths]
    from ctxbench.traces.importers.detect import is_log_folder

    for p in paths:
        if p.is_dir() and not is_log_folder(p):  # a Cline-family task folder, opencode's storage: read
            raise ValueError(f"{p}: a folder; give the session log files in it (one format at a time)")
    res = import_with_progress(paths, args.format, terminal_stderr(args.quiet or args.json))
    out = Path(args.output)
    names = file_names(res.names)
    dests = [
        out if i == 0 else out.with_name(f"{out.stem}.{n}{out.suffix or '.jsonl'}")
        for i, n in enumerate(names)
    ]
    try:  # every trace checked before any file is written
        texts = [dumps_trace(tr, path=str(d)) for tr, d in zip(res.traces, dests, strict=True)]
    except TraceError as e:  # a value of the log the trace format cannot hold
        field = f"field '{e.field}': " if e.field else ""
        raise ImportFailure(args.paths[0], f"cannot be imported: {field}{e.reason}") from None
    written = []
    for text, dest in zip(texts, dests, strict=True):
        try:
            Path(dest).parent.mkdir(parents=True, exist_ok=True)  # `-o reports/x.jsonl` on a fresh checkout
            with open(dest, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        except OSError as e:
            raise ImportFailure(str(dest), f"cannot write: {e.strerror or e}") from None
        written.append(str(dest))
    if args.json:
        print(json.dumps({**res.report.as_dict(), "written": written}, indent=2))
    else:
        print(res.report.format_text())
        for w in written:
            print(f"wrote {w}")
    return 0
