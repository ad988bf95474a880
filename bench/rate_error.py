"""How far the calibrated byte rate is from exact token counts, measured on real text
(`ctxbench tokenizers --measure`).

The rate (sim/core/tokens.py `RateCounter`, research/ecosystem.md §1.6: o200k's 4.48 bytes per token
for prose, 4.16 code, 3.10 JSON) counts each text block at the rate of the kind its trace gives
it (`lang`). Here every text of the shared real recorded sessions (`$CTXBENCH_REAL`: the files
the fidelity report reads) and of the bundled samples that carry text is cut, per source and
kind, into 2 KB chunks (2,048 bytes of the kind's texts joined by newlines, cut at a character
boundary; the last partial chunk is left out), and each chunk is counted by the rate and exactly
by o200k_base and cl100k_base (toktok-rs, byte-identical to tiktoken, ecosystem.md §1.3; extra
`tokenizers`). The spread is the ratio rate / exact per chunk: min, median, max, and the total.

Claude has no offline tokenizer (ecosystem.md §1.5): its only ground truth is what was billed,
so the claude-trace log's billed input per request is compared with the rate's count of the same
request body (bench/fidelity/report.py `calibration`, the table of the fidelity report).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxbench.sim.core.tokens import TOKENIZERS, RateCounter, toktok_available
from ctxbench.traces.model import CompactionEvent, MessageEvent, SystemEvent, ToolsEvent, Trace

if TYPE_CHECKING:
    from ctxbench.bench.fidelity.discover import Found

CHUNK_BYTES = 2048
EXACT = ("o200k", "cl100k")  # `--tokenizer` names of the exact offline encodings


def texts_by_kind(traces: Iterable[Trace]) -> dict[str, list[str]]:
    """Every text a trace carries (messages, system, summaries, tool schemas), by its rate kind."""
    out: dict[str, list[str]] = {}
    for tr in traces:
        for e in tr.events:
            if isinstance(e, ToolsEvent):
                out.setdefault("json", []).extend(t.schema for t in e.tools if t.schema)
                continue
            items = e.content if isinstance(e, MessageEvent | SystemEvent) else ()
            items = e.summary if isinstance(e, CompactionEvent) else items
            for c in items:
                if c.text:
                    out.setdefault(c.lang, []).append(c.text)
    return out


def chunks(texts: list[str], size: int = CHUNK_BYTES) -> Iterator[str]:
    """The texts joined by newlines, cut into pieces of `size` UTF-8 bytes (at a character
    boundary, so a piece may be a few bytes short); the last, partial piece is left out."""
    data = "\n".join(texts).encode("utf-8")
    start = 0
    while len(data) - start >= size:
        end = start + size
        while end > start and end < len(data) and (data[end] & 0xC0) == 0x80:  # not mid-character
            end -= 1
        if end == start:  # `size` below one character: the piece is that character
            end = start + 1
            while end < len(data) and (data[end] & 0xC0) == 0x80:
                end += 1
        yield data[start:end].decode("utf-8")
        start = end


@dataclass(frozen=True)
class Spread:
    """Rate / exact over the chunks of one source and kind, for one encoding."""

    source: str
    kind: str
    encoding: str
    chunks: int
    bytes_per_token: float  # measured: bytes / exact tokens over all chunks
    rate_bytes_per_token: float  # the rate the simulator uses for this kind
    total: float  # rate tokens / exact tokens over all chunks
    low: float
    median: float
    high: float


def spreads(source: str, by_kind: dict[str, list[str]], encoding: str) -> list[Spread]:
    """The per-chunk spread of the rate against `encoding` (`o200k` or `cl100k`) per kind."""
    import toktok

    rate = RateCounter()
    out = []
    for kind, texts in sorted(by_kind.items()):
        pieces = list(chunks(texts))
        if not pieces:
            continue
        exact = [int(n) for n in toktok.batch_count(pieces, str(TOKENIZERS[encoding]))]
        est = [rate.count_text(p, kind) for p in pieces]
        ratios = [e / x for e, x in zip(est, exact, strict=True) if x]
        nbytes = sum(len(p.encode("utf-8")) for p in pieces)
        out.append(
            Spread(
                source, kind, encoding, len(pieces), nbytes / max(1, sum(exact)),
                rate.rates.get(kind, rate.rates["prose"]), sum(est) / max(1, sum(exact)),
                min(ratios), statistics.median(ratios), max(ratios),
            )
        )  # fmt: skip
    return out


def real_traces(found: Found) -> list[Trace]:
    """The recorded sessions the fidelity report reads (every log found under a folder,
    bench/fidelity/discover.py), imported (every conversation of each)."""
    from ctxbench.traces.importers import import_paths

    out: list[Trace] = []
    for log in found.logs:
        out += import_paths([log.path], log.format).traces
    return out


def sample_traces() -> list[Trace]:
    """The bundled samples (only those that carry text add chunks: the others are sizes only)."""
    from ctxbench.traces.format import read_trace
    from ctxbench.traces.generators.samples import SAMPLES_DIR

    return [read_trace(p) for p in sorted(SAMPLES_DIR.glob("*.jsonl"))]


def measure(root: Path | None) -> dict[str, Any]:
    """Spreads on the real sessions under `root` (None or missing: skipped, said so) and the
    samples, for each exact encoding when toktok-rs is installed; Claude's calibration against
    the billed counts of the claude-trace logs."""
    from ctxbench.bench.fidelity.discover import discover
    from ctxbench.bench.fidelity.report import calibration, calibration_summary

    sources: dict[str, dict[str, list[str]]] = {"samples": texts_by_kind(sample_traces())}
    notes = []
    found = discover(root) if root is not None and root.is_dir() else None
    claude: list[dict[str, Any]] = []
    if found is not None and found.logs:
        sources = {"real sessions": texts_by_kind(real_traces(found)), **sources}
        cal = [c for log in found.of("claude-trace") for c in calibration(log.path)]
        claude = calibration_summary(cal)
    else:
        notes.append(f"no real recorded sessions at {root} (set CTXBENCH_REAL): samples only")
    rows: list[Spread] = []
    if toktok_available():
        for enc in EXACT:
            for name, by_kind in sources.items():
                rows += spreads(name, by_kind, enc)
    else:
        notes.append("o200k/cl100k need the 'tokenizers' extra: pip install 'ctxbench[tokenizers]'")
    return {
        "chunk_bytes": CHUNK_BYTES,
        "spreads": [asdict(r) for r in rows],
        "claude": claude,
        "notes": notes,
    }


def format_measure(data: dict[str, Any]) -> str:
    lines: list[str] = []
    if data["spreads"]:
        lines += [
            f"the rate against exact counts, per {data['chunk_bytes']:,}-byte chunk of real text "
            "(rate / exact: below 1 the rate under-counts)",
            f"  {'source':14s} {'kind':5s} {'exact':7s} {'chunks':>6s} {'B/token':>7s} {'rate':>5s} "
            f"{'total':>6s} {'min':>5s} {'median':>6s} {'max':>5s}",
        ]
    for r in data["spreads"]:
        lines.append(
            f"  {r['source']:14s} {r['kind']:5s} {r['encoding']:7s} {r['chunks']:>6,} "
            f"{r['bytes_per_token']:>7.2f} {r['rate_bytes_per_token']:>5.2f} {r['total']:>6.3f} "
            f"{r['low']:>5.2f} {r['median']:>6.2f} {r['high']:>5.2f}"
        )
    if data["claude"]:
        lines += [""] if lines else []
        lines.append("Claude (no offline tokenizer): the rate against the billed input of claude-trace")
        for c in data["claude"]:
            ox = c["o200k_error_mean_abs"]
            lines.append(
                f"  {c['model']:28s} {c['requests']:>3} requests · rate error "
                f"mean |{c['rate_error_mean_abs']:.1%}| "
                f"range {c['rate_error_min']:+.1%}..{c['rate_error_max']:+.1%}"
                + ("" if ox is None else f" · o200k error mean |{ox:.1%}|")
            )
    lines += [f"note: {n}" for n in data["notes"]]
    return "\n".join(lines)
