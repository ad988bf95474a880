"""Soak: many malformed inputs through every reader and the HTTP front, and the counts that must be 0.

    python -m ctxbench.bench.robustness.soak --lines 100000 --requests 10000

Readers (`soak_readers`): trace files through `check-prefix` and `run`, request logs through
`check-prefix`, the seven importers through `import`, every trace line also through the line
decoder. HTTP (`soak_http`): raw-socket requests to `serve` and to `proxy` in front of a second
`serve` (127.0.0.1 only), plus connections that stall half-way through a body. Exit 1 when any
count that must be 0 is not (tracebacks, CLI errors longer than one line, requests without an
answer, HTML pages, unmodelled 5xx, lost or non-JSON ledger lines, sequence gaps, stored secrets,
stalled requests not answered 408), else 0. Bounded: it stops after the given numbers.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from ctxbench.bench.robustness.soak_http import HttpCounts, soak_http
from ctxbench.bench.robustness.soak_readers import ReaderCounts, soak_readers


def _print_readers(c: ReaderCounts) -> None:
    print(f"readers: {c.lines} fuzzed lines in {c.files} files")
    for key, n in sorted(c.runs.items()):
        print(f"  {key}: {n}")
    print(f"  tracebacks: {c.tracebacks}")
    print(f"  errors not on one line: {c.not_one_line}")


def _print_http(c: HttpCounts) -> None:
    print(f"http: {c.requests} fuzzed requests (+{c.stalled} stalled connections)")
    by_class: dict[str, int] = {}
    for key, n in c.by_status.items():
        front, _kind, status, shape = key.split(" ")
        label = f"{front} {status[0]}xx {shape}" if status != "0" else f"{front} no answer"
        by_class[label] = by_class.get(label, 0) + n
    for label, n in sorted(by_class.items()):
        print(f"  answered {label}: {n}")
    statuses: dict[str, int] = {}
    for key, n in c.by_status.items():
        status = key.split(" ")[2]
        statuses[status] = statuses.get(status, 0) + n
    print("  by status: " + ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items())))
    print(f"  requests without an answer: {c.no_answer}")
    print(f"  HTML pages: {c.html}")
    print(f"  unmodelled 5xx: {c.unmodelled_5xx}")
    print(f"  ledger lines: {c.ledger_lines}; lost: {c.lost}; non-JSON: {c.non_json}; seq gaps: {c.seq_gaps}")
    print(f"  stored secrets: {c.secrets_stored}")
    print(f"  server tracebacks: {c.tracebacks}")
    print(f"  stalled bodies answered 408: {c.stalled_answered_408} of {c.stalled}")
    print(f"  second answers to one request: {c.extra_answers}")
    print(f"  errors not in their path's API shape: {c.wrong_shape}")
    print(f"  slowest ordinary request with {c.slow} slow connections open: {c.slow_latency_max:.3f} s")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m ctxbench.bench.robustness.soak", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--lines", type=int, default=100_000, help="fuzzed reader lines (default 100000)")
    ap.add_argument("--requests", type=int, default=10_000, help="fuzzed HTTP requests (default 10000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=8, help="concurrent HTTP clients (default 8)")
    args = ap.parse_args(argv)
    t0 = time.process_time()
    readers = soak_readers(args.lines, args.seed) if args.lines > 0 else ReaderCounts()
    http = soak_http(args.requests, args.seed, args.jobs) if args.requests > 0 else HttpCounts()
    _print_readers(readers)
    _print_http(http)
    print(f"CPU seconds (this process): {time.process_time() - t0:.1f}")
    bad = (
        readers.tracebacks
        + readers.not_one_line
        + http.no_answer
        + http.html
        + http.unmodelled_5xx
        + http.lost
        + http.non_json
        + http.seq_gaps
        + http.secrets_stored
        + http.extra_answers
        + http.wrong_shape
        + (http.slow_latency_max > 1.0)
        + http.tracebacks
        + (http.stalled - http.stalled_answered_408)
    )
    for example in readers.examples + http.examples:
        print("example:", example[:2000], file=sys.stderr)
    print("soak: " + ("all counts that must be 0 are 0" if bad == 0 else f"{bad} failures"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
