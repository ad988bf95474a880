"""Does the `claude-code` preset predict real Claude Code sessions with compactions? (issue 29,
its first "Done when": each compaction within +-1 turn and the billed cost within 5 % on every
session.)

For every Claude Code conversation of a part (bench/corpus/README.md: the development part is the
shared traces-real folder and the corpus's `dev/` rows, the test part its `test/` rows) whose log
records at least one compaction, the preset runs on the session with what the trace knows
(bench/trace_knows.py), as `ctxbench fidelity --policy claude-code` runs it, and the report gives:

- where each compacted: the billed requests the real harness and the preset compacted before (a
  "turn" is a billed request, one model call; the real summariser request is not counted), their
  counts and the largest distance between paired compactions;
- the billed cost; the preset's predicted cost; "like for like": the same plus the cost of the
  outside events the recorded replay reads in the bill (server-side lookup misses, outside
  warming: events no context policy decides, bench/fidelity/outside.py), minus the preset's
  summary requests at a point where the real harness compacted too but the log holds no bill of
  its summariser (a proxy log that did not capture it): on the bill's terms; the naive figure (the
  recorded replay's naive cost, bench/naive.py) beside.

A conversation whose log leaves most of its message blocks sized 0 tokens (bench/fidelity/unsure.py
`ZERO_BLOCKS_SHARE`: content no bill sized, so the rebuilt prompt does not grow as the one sent
did) is named and not compared: a preset replayed on it predicts a conversation that never grew.

Usage: `python -m ctxbench.bench.preset_fidelity --corpus corpus-data [--split dev|test]
[--all-real DIR] [--policy claude-code] [-o FILE] [--json]`. Exit 0 when the report is written
(a figure outside the target is a finding, not a failure), 2 on bad input.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.fidelity.discover import CLAUDE_CODE_FORMATS, discover
from ctxbench.bench.fidelity.interval import cost_interval
from ctxbench.bench.fidelity.parts import Part, parts
from ctxbench.bench.fidelity.policy import TURNS
from ctxbench.bench.fidelity.results import SessionFidelity
from ctxbench.bench.fidelity.unsure import ZERO_BLOCKS_SHARE, zero_block_share
from ctxbench.sim.core.catalog import CatalogError
from ctxbench.sim.providers.choice import NoModelError
from ctxbench.traces.importers import ImportFailure, import_paths
from ctxbench.traces.model import CompactionEvent, MessageEvent, Trace

COST = 0.05  # issue 29: the billed cost within 5 %


@dataclass
class Row:
    """One conversation with at least one recorded compaction."""

    part: str
    log: str
    name: str
    model: str = ""
    requests: int = 0
    real: list[int] = field(default_factory=list)  # billed requests the real harness compacted before
    own: list[int] = field(default_factory=list)  # ... the preset compacted before
    # each recorded compaction's trigger and the prompt size Claude Code logged before it (compactMetadata)
    triggers: list[str] = field(default_factory=list)
    billed: float = 0.0
    predicted: float = 0.0  # the preset's prediction
    outside: float = 0.0  # the cost of the outside events the recorded replay reads in the bill
    # the preset's summary requests where the real harness compacted too, with no bill in the log
    unlogged: float = 0.0
    # the preset's cost on the requests the log bills as a distribution: the median and 90 % interval
    # of the chance draws (lookup misses, warming by other sessions, entries kept past their ttl:
    # bench/fidelity/interval.py)
    central: float = 0.0
    low: float = 0.0
    high: float = 0.0
    naive: float = 0.0
    note: str = ""  # why it is not compared ("" when it is)
    # a compaction recorded before the first billed request (a file that continues a compacted
    # session, e.g. Claude Code's `agent-acompact-*` sub-agent files): the conversation's starting
    # state, which no policy run on it decides, so it is not one of the compactions compared
    starts_compacted: bool = False
    # recorded compactions triggered by context the log does not hold (`UNLOGGED_CONTEXT`)
    unlogged_context: int = 0

    @property
    def turns_off(self) -> int | None:
        """The largest distance between paired compactions (None when the counts differ)."""
        if len(self.real) != len(self.own):
            return None
        return max((abs(a - b) for a, b in zip(self.real, self.own, strict=True)), default=0)

    def delta(self, cost: float) -> float:
        return (cost - self.billed) / self.billed if self.billed else 0.0

    @property
    def logged(self) -> float:
        """The preset's cost of the requests the log bills: without its summary requests whose real
        counterpart the log holds no bill of (nothing taken from the bill)."""
        return self.predicted - self.unlogged

    @property
    def inside(self) -> bool:
        """The bill inside the 90 % interval of the preset's cost on the logged requests."""
        return self.low - 1e-6 <= self.billed <= self.high + 1e-6

    @property
    def like_for_like(self) -> float:
        """The preset's cost on the bill's terms: with the outside events, without its summary
        requests whose real counterpart the log holds no bill of."""
        return self.predicted + self.outside - self.unlogged

    @property
    def turns_ok(self) -> bool:
        off = self.turns_off
        return off is not None and off <= TURNS

    def json(self) -> dict[str, Any]:
        return {
            "part": self.part, "log": self.log, "conversation": self.name, "model": self.model,
            "requests": self.requests, "note": self.note or None,
            "compactions_before": {"real": self.real, "preset": self.own}, "real_triggers": self.triggers,
            "starts_compacted": self.starts_compacted, "unlogged_context_triggers": self.unlogged_context,
            "turns_off": self.turns_off, "billed": round(self.billed, 6),
            "predicted": round(self.predicted, 6), "outside_events": round(self.outside, 6),
            "unlogged_summariser": round(self.unlogged, 6), "logged_requests": round(self.logged, 6),
            "logged_requests_interval": {
                "central": round(self.central, 6), "low": round(self.low, 6), "high": round(self.high, 6),
                "billed_inside": self.inside,
            },
            "like_for_like": round(self.like_for_like, 6),
            "naive": round(self.naive, 6),
            "delta": round(self.delta(self.predicted), 6),
            "delta_logged_requests": round(self.delta(self.central), 6),
            "delta_like_for_like": round(self.delta(self.like_for_like), 6),
            "naive_delta": round(self.delta(self.naive), 6),
        }  # fmt: skip


def _compacts(trace: Trace) -> bool:
    """Whether the log records a compaction and a billed request besides the summariser's (a
    summariser's file read without its session may hold nothing else: no turn for a preset)."""
    events = trace.events
    return any(isinstance(e, CompactionEvent) for e in events) and any(
        isinstance(e, MessageEvent) and e.usage is not None and e.tag != "summary" for e in events
    )


def measure(tr: Trace, name: str, policy: str) -> tuple[SessionFidelity, SessionFidelity]:
    """The preset's replay and the recorded replay of one conversation."""
    return compare(tr, name, policy), compare(tr, name)


def rows_of(part: Part, policy: str, stream: Any = None) -> list[Row]:
    """Every Claude Code conversation of the part with a recorded compaction, measured."""
    seen: set[str] = set()
    out: list[Row] = []
    for root in part.roots:
        for log in discover(root).of(*CLAUDE_CODE_FORMATS):
            digest = hashlib.sha256(log.path.read_bytes()).hexdigest()
            if digest in seen:  # a file in two folders of a part is replayed once
                continue
            seen.add(digest)
            try:
                res = import_paths([log.path], log.format)
            except ImportFailure:
                continue  # discover detected it; a log it cannot import has no compaction to compare
            rel = f"{root.name}/{log.rel}"
            for tr, name in zip(res.traces, res.names, strict=True):
                if not _compacts(tr):
                    continue
                if stream is not None:
                    print(f"preset_fidelity {part.name}: {rel} {name}", file=stream)
                out.append(_row(part.name, rel, name, tr, policy))
    return out


# A recorded automatic compaction whose logged prompt size (`compactMetadata.preTokens`) is more
# than this many times the last billed prompt before it (with that request's output) was triggered
# by context the log does not hold (the session went on in a file the log is not, or a relay left
# requests out), which no policy run on the log can reach. Between a request and the compaction
# after it only its output and the tool results it asked for are added: on the development part the
# largest such growth is 1.83 times (a sub-agent's, 96,149 to 175,945 tokens), every other at most
# 1.35; on the test part two are 3.2 and 4.6 times the prompt before (measured on the importer's
# reading of a message's largest usage line: on its first line, a relay's two more were ~4 times).
UNLOGGED_CONTEXT = 2.0


def _triggers(tr: Trace) -> tuple[list[str], int]:
    """Each recorded compaction's trigger and logged size, and how many were triggered by context
    the log does not hold (`UNLOGGED_CONTEXT`, named beside the size)."""
    out, last, unlogged = [], 0, 0
    for e in tr.events:
        if isinstance(e, MessageEvent) and e.usage is not None:
            last = e.usage.total_input + e.usage.output_tokens
        if not isinstance(e, CompactionEvent):
            continue
        text = f"{e.trigger} {e.pre_tokens:,}" if e.pre_tokens else e.trigger
        if e.trigger == "auto" and e.pre_tokens and last and e.pre_tokens > UNLOGGED_CONTEXT * last:
            unlogged += 1
            text += f" (the log's prompt before it: {last:,}; what triggered it is not in the log)"
        out.append(text)
    return out, unlogged


def _row(part: str, rel: str, name: str, tr: Trace, policy: str) -> Row:
    row = Row(part, rel, name, str(tr.header.meta.get("model_recorded", tr.header.model)))
    row.triggers, row.unlogged_context = _triggers(tr)
    zero = zero_block_share(tr)
    if zero > ZERO_BLOCKS_SHARE:  # bench/fidelity/unsure.py: the recorded replay falls back to naive here
        row.note = (
            f"not compared: {zero:.0%} of the log's message blocks are sized 0 tokens (content no bill "
            "sized): a preset would replay a prompt that does not grow as the one sent did"
        )
        return row
    try:
        sf, rec = measure(tr, name, policy)
    except (CatalogError, NoModelError) as e:  # no substitute model is guessed (H-20)
        row.note = f"not compared: {e.args[0] if e.args else e}"
        return row
    except (ValueError, KeyError, IndexError) as e:  # a log the replay cannot take: named, the rest measured
        row.note = f"not compared: the replay failed ({type(e).__name__}: {e})"
        return row
    if not sf.has_usage:
        row.note = "not compared: the log has no per-request usage"
        return row
    base = sf.baseline
    row.model = " -> ".join(sf.models)
    row.requests = len(base.requests)
    real, own = (list(sf.track.real), list(sf.track.own)) if sf.track else ([], [])
    row.starts_compacted = 0 in real
    row.real, row.own = [i for i in real if i > 0], [i for i in own if i > 0]
    row.billed, row.predicted, row.naive = base.cost_billed, base.cost_predicted, sf.cost_naive
    row.outside = rec.cost_predicted - rec.baseline.cost_predicted
    row.unlogged = sf.unlogged
    # chance only: the model error is the recorded replay's, not a preset's
    ci = cost_interval(sf, model_error=False).less(row.unlogged)
    row.central, row.low, row.high = ci.central, ci.low, ci.high
    return row


def _pct(x: float) -> str:
    return f"{x:+.1%}"


def render(part: str, rows: list[Row], policy: str) -> list[str]:
    """The part's table, pooled line and verdict (markdown)."""
    lines = [f"## {part} part: `{policy}` on Claude Code sessions with compactions", ""]
    if not rows:
        return [*lines, "No Claude Code conversation of this part records a compaction.", ""]
    lines += [
        "| log | conversation | model | requests | real triggers (tokens before) "
        "| compactions before (real / preset) | turns off "
        "| billed | preset Δ | unlogged summariser | preset Δ, logged requests | 90 % interval | inside "
        "| outside events | like for like Δ | naive Δ |",
        "|---|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    done = [r for r in rows if not r.note]
    for r in rows:
        if r.note:
            lines.append(f"| {r.log} | {r.name} | {r.model} | | | | | | {r.note} | | | | | | | |")
            continue
        off = "count differs" if r.turns_off is None else str(r.turns_off)
        lines.append(
            f"| {r.log} | {r.name} | {r.model} | {r.requests} | {'; '.join(r.triggers)}"
            f"{' (the first before request 0: starts compacted)' if r.starts_compacted else ''} | "
            f"{r.real} / {r.own} | {off} | "
            f"${r.billed:.4f} | {_pct(r.delta(r.predicted))} | ${r.unlogged:.4f} | "
            f"{_pct(r.delta(r.central))} | ${r.low:.4f}..${r.high:.4f} | {'yes' if r.inside else 'no'} | "
            f"${r.outside:.4f} | {_pct(r.delta(r.like_for_like))} | "
            f"{_pct(r.delta(r.naive))} |"
        )
    lines.append("")
    if done:
        billed = sum(r.billed for r in done)
        pred = sum(r.predicted for r in done)
        logged = sum(r.logged for r in done)
        like = sum(r.like_for_like for r in done)
        naive = sum(r.naive for r in done)
        turns = sum(r.turns_ok for r in done)
        cost = sum(abs(r.delta(r.predicted)) <= COST for r in done)
        cost_logged = sum(abs(r.delta(r.central)) <= COST for r in done)
        inside = sum(r.inside for r in done)
        cost_like = sum(abs(r.delta(r.like_for_like)) <= COST for r in done)
        n = len(done)
        lines += [
            f"Pooled over {n} conversation(s): billed ${billed:.4f}, preset ${pred:.4f} "
            f"({(pred - billed) / billed:+.1%}), on the logged requests ${logged:.4f} "
            f"({(logged - billed) / billed:+.1%}), like for like ${like:.4f} "
            f"({(like - billed) / billed:+.1%}), naive ${naive:.4f} ({(naive - billed) / billed:+.1%}).",
            "",
            f"- same number of compactions, each within ±{TURNS} request: {turns} of {n}; of the "
            f"{n - turns} others, {sum(not r.turns_ok and r.unlogged_context > 0 for r in done)} record a "
            "compaction triggered by context the log does not hold (named in the triggers column)",
            f"- preset's cost within {COST:.0%} of the bill: {cost} of {n}; on the requests the log bills "
            f"(the prediction, nothing taken from the bill): {cost_logged} of {n}; like for like: "
            f"{cost_like} of {n}",
            f"- billed inside the 90 % interval of the preset's cost on the logged requests: {inside} of {n}",
            "",
        ]
    return lines


HEAD = """# `claude-code` preset vs real Claude Code sessions with compactions

Made by `python -m ctxbench.bench.preset_fidelity --corpus corpus-data -o bench/preset_fidelity.md`
(bench/preset_fidelity.py). A turn is a billed request. "preset Δ": the preset's predicted cost
against the bill. "unlogged summariser": the preset's summary requests at a point where the real
harness compacted too but the log holds no bill of its summariser request (the summariser's file
not beside the log, or a proxy log without it): the provider billed it, the log does not show it.
"preset Δ, logged requests": the preset's cost of the requests the log bills (preset - unlogged
summariser) against the bill: the prediction on the bill's own requests, nothing taken from the
bill, as the median of its chance draws, with their 90 % interval (server-side lookup misses,
warming by other sessions and entries kept past their ttl at the development part's rates,
bench/fidelity/interval.py; the recorded replay's model error is not a preset's, so it does not
widen them). "outside events": what the events no policy decides cost in the bill (server-side
lookup misses, outside warming: read by the recorded replay, bench/fidelity/outside.py). "like
for like Δ": preset + outside events - unlogged summariser, against the bill. "naive Δ": the
recorded replay's naive figure. A compaction recorded before the first billed request (a log that
continues a compacted session, as Claude Code's `agent-acompact-*` files do) is the
conversation's starting state: named in the triggers column, not compared. An automatic
compaction whose logged size is more than twice the log's last prompt before it is named there too:
the context that triggered it is not in the log (bench/preset_fidelity.py `UNLOGGED_CONTEXT`).

What a log cannot tell, so the preset cannot predict it: the server-side lookup misses and outside
warming (hence the like-for-like column); how the post-compaction prompt splits into summary,
re-attached files, todo list, plan and `SessionStart` hook output (only its billed total is known,
and taken: bench/trace_knows.py `compaction.summary_tokens`); at a compaction point the real
session did not have, its size (the preset's range: the summary text alone, to the text plus up to
5 re-read files of 5,000 tokens as the preset models them, policies/presets/claude-code.yaml
`reattach_*`, plus unlogged hook output).
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ctxbench.bench.preset_fidelity", description=__doc__)
    p.add_argument("--corpus", metavar="DIR", help="a folder made by python -m ctxbench.bench.corpus.extract")
    p.add_argument(
        "--all-real", metavar="DIR", help="the shared folder of the development part (default: traces-real)"
    )
    p.add_argument("--split", choices=("test", "dev"), help="this part only")
    p.add_argument("--policy", default="claude-code", help="the preset (default claude-code)")
    p.add_argument("-o", "--output", help="write the report (markdown) to FILE")
    p.add_argument("--json", action="store_true", help="print one JSON object per conversation")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    args = p.parse_args(argv)
    from ctxbench.bench.fidelity.report import DEFAULT_DIR

    try:
        shared = Path(args.all_real) if args.all_real else DEFAULT_DIR
        corpus = Path(args.corpus) if args.corpus else None
        todo = parts(shared if shared.is_dir() else None, corpus, args.split)
        if not todo:
            raise ValueError("no part to measure: give --corpus DIR or --all-real DIR")
        stream = None if args.quiet else sys.stderr
        measured = [(part.name, rows_of(part, args.policy, stream)) for part in todo]
    except (ValueError, OSError) as e:
        print(f"preset_fidelity: error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([r.json() for _, rows in measured for r in rows], indent=2))
        return 0
    text = "\n".join([HEAD, *(line for name, rows in measured for line in render(name, rows, args.policy))])
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}")
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
