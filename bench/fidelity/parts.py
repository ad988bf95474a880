"""The headline of the fidelity report over a development and a test part (issue 28).

The development part is the shared traces-real folder and the corpus's `dev` rows; the test part
is the corpus's `test` rows (bench/corpus/README.md: the split, by repository). Every figure is
the prediction with nothing taken from the bill (`SessionFidelity.baseline`), the naive replay's
figure beside it; each session's predicted cost has a 90 % interval (bench/fidelity/interval.py: the
provider's chance widened by the replay's model error, bench/fidelity/model_error.py) and the part's
coverage (share of sessions whose billed cost falls inside) and median interval width are given,
overall and per family, beside those of the chance draws alone. Requests the replay did not score
are counted and named; conversations not compared are named with why.
"""

from __future__ import annotations

import hashlib
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ctxbench.bench.fidelity.counts import accounted
from ctxbench.bench.fidelity.discover import Found, discover
from ctxbench.bench.fidelity.interval import cost_interval
from ctxbench.bench.fidelity.logs import Replayed, not_replayed, replay_log
from ctxbench.bench.fidelity.model_error import MIN_SESSIONS, MODEL_ERROR, borrows
from ctxbench.bench.fidelity.not_within import table as not_within_table
from ctxbench.bench.fidelity.results import SessionFidelity
from ctxbench.bench.fidelity.unsure import naive_only, rules_line
from ctxbench.bench.fidelity.warming import part_line
from ctxbench.bench.progress import Progress
from ctxbench.sim.core.catalog import model_info

SPLITS = ("test", "dev")
# No conversation of at least this many requests with a read match below naive - 0.5 pt: Claude Code
# 20 (issue 28), the other harnesses 10 (issue 33).
CONVERSATION_FLOOR = {"claude-code": 20}
OTHER_FLOOR = 10


@dataclass(frozen=True)
class Part:
    name: str  # "test" | "dev"
    roots: tuple[Path, ...]


def parts(shared: Path | None, corpus: Path | None, split: str | None) -> list[Part]:
    """The parts to report, test first: the corpus's `test/` folder; the shared folder with the
    corpus's `dev/` folder. `split` keeps one of them."""
    out = []
    if corpus is not None:
        if not corpus.is_dir():
            raise ValueError(
                f"--corpus {corpus}: not a folder (make it with python -m ctxbench.bench.corpus.extract)"
            )
        if (corpus / "test").is_dir():
            out.append(Part("test", (corpus / "test",)))
    dev = tuple(p for p in (shared, corpus / "dev" if corpus else None) if p is not None and p.is_dir())
    if dev:
        out.append(Part("dev", dev))
    return [p for p in out if split in (None, p.name)]


def replay_part(part: Part, stream: IO[str] | None = None) -> tuple[list[Replayed], list[Found]]:
    """Every conversation of every log of the part, replayed."""
    found = [discover(root) for root in part.roots]
    seen: set[str] = set()
    logs = []
    for log in (log for f in found for log in f.logs):  # a file in two folders is replayed once
        try:
            digest = hashlib.sha256(log.path.read_bytes()).hexdigest()
        except OSError:  # unreadable now: kept, and named by its import (bench/fidelity/logs.py)
            digest = f"unread {log.path}"
        if digest not in seen:
            seen.add(digest)
            logs.append(log)
    progress = Progress(len(logs), 0, stream, f"fidelity {part.name}", unit="file")
    convs: list[Replayed] = []
    try:
        for log in logs:
            convs += replay_log(log)
            progress.update()
    finally:
        progress.close()
    from ctxbench.bench.fidelity.report import billed_once

    return billed_once(convs), found  # a request copied into two logs is scored once


OTHER_BACKENDS = "claude-code on other backends"


def families(harness: str, models: list[str]) -> list[str]:
    """The pooled rows a conversation counts in: its harness; a Claude Code conversation on another
    provider's models (DeepSeek's, Z.ai's Anthropic-compatible endpoints) in "claude-code on other
    backends" and in that provider's own row beside it; one that mixes Claude models with another
    backend's in "claude-code on several backends"."""
    vendors = list(dict.fromkeys(model_info(m).provider for m in models))
    if harness != "claude-code" or vendors in ([], ["anthropic"]):
        return [harness]
    if "anthropic" in vendors:
        return ["claude-code on several backends"]
    return [OTHER_BACKENDS] + [f"{OTHER_BACKENDS}: {v}" for v in vendors]


def _share(xs: list[bool]) -> str:
    return f"{sum(xs) / len(xs):.0%}" if xs else "n/a"


def _median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else 0.0


def _cover(c: list[list[float]]) -> str:
    """A family's coverage and median width, with model error and (chance draws only)."""
    ok, width, ok0, width0 = c
    n = len(ok)
    return (
        f"{int(sum(ok))}/{n} {sum(ok) / n:.0%} ({int(sum(ok0))}/{n} {sum(ok0) / n:.0%}) | "
        f"{_median(width):.1%} ({_median(width0):.1%})"
    )


def _pct(a: float, b: float) -> str:
    return f"{(a - b) / b:+.1%}" if b else "n/a"


def summary(part: Part, convs: list[Replayed], found: list[Found]) -> list[str]:
    """The part's headline: pooled per family, per conversation, coverage, not scored, not compared."""
    lines = [f"## {part.name} part: prediction (nothing taken from the bill) vs naive", ""]
    lines.append("Folders: " + ", ".join(f"`{r.parent.name}/{r.name}`" for r in part.roots))
    lines += [
        "",
        "| log | conversation | format | model | requests | within | naive within | read match | naive read "
        "| cost Δ | naive cost Δ | 90 % interval | billed inside | fallbacks | not scored |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    pooled: dict[str, list[float]] = {}
    close: dict[str, list[int]] = {}  # per family: conversations, within 2 % and 5 % (and naive's)
    inside: list[bool] = []
    widths: list[float] = []
    inside0: list[bool] = []  # the chance draws alone (before the model error)
    widths0: list[float] = []
    cover: dict[str, list[list[float]]] = {}  # per family: inside, width; chance only: inside, width
    below: list[str] = []
    by_family: dict[str, list[SessionFidelity]] = {}
    scored = [(r.log.rel, sf) for r in convs if (sf := r.fidelity) is not None and sf.has_usage]
    for r in convs:
        sf = r.fidelity
        if sf is None or not sf.has_usage:
            continue
        base = sf.baseline
        ci, chance = cost_interval(sf), cost_interval(sf, model_error=False)
        ok = ci.holds(sf.cost_billed)
        inside.append(ok)
        widths.append(ci.width)
        inside0.append(chance.holds(sf.cost_billed))
        widths0.append(chance.width)
        floor_key = "claude-code" if r.log.format in ("claude-code", "claude-trace") else r.log.format
        for fam in families(floor_key, sf.models):
            by_family.setdefault(fam, []).append(sf)
            acc = pooled.setdefault(fam, [0, 0, 0, 0.0, 0.0, 0.0, 0])
            acc[0] += base.n
            acc[1] += sum(x.within for x in base.requests)
            acc[2] += sum(x.naive_within for x in sf.requests)
            acc[3] += sf.cost_billed
            acc[4] += ci.mean  # the pooled prediction sums the sessions' expectations
            acc[5] += sf.cost_naive
            acc[6] += len(sf.not_scored) + int(str(sf.meta.get("usage_unrecorded", 0) or 0))
            figures = (ok, ci.width, inside0[-1], chance.width)
            for xs, x in zip(cover.setdefault(fam, [[], [], [], []]), figures, strict=True):
                xs.append(float(x))
            c = close.setdefault(fam, [0, 0, 0, 0, 0])
            c[0] += 1
            for k, (cost, share) in enumerate(
                ((ci.central, 0.02), (ci.central, 0.05), (sf.cost_naive, 0.02), (sf.cost_naive, 0.05))
            ):
                c[k + 1] += abs(cost - sf.cost_billed) <= share * sf.cost_billed
        floor = CONVERSATION_FLOOR.get(floor_key, OTHER_FLOOR)
        if base.n >= floor and base.share_ok < sf.share_naive_ok - 0.005:
            below.append(f"{Path(r.log.rel).name} {r.name} ({naive_only(base)})")
        models = " -> ".join(sf.models)
        lines.append(
            f"| {Path(r.log.rel).name[:40]} | {r.name} | {r.log.format} | {models} | {base.n} | "
            f"{base.share_within:.1%} | {sf.share_naive_within:.1%} | {base.share_ok:.1%} | "
            f"{sf.share_naive_ok:.1%} | {_pct(ci.central, sf.cost_billed)} | "
            f"{_pct(sf.cost_naive, sf.cost_billed)} | ${ci.low:.3f}..${ci.high:.3f} | "
            f"{'yes' if ok else 'no'} | {base.fallbacks} | {len(sf.not_scored)} |"
        )
    lines += [
        "",
        "| family | requests | within | naive within | cost Δ | naive cost Δ | conversations "
        "| cost within 2 % (naive) | within 5 % (naive) | not scored | billed inside 90 % (chance only) "
        "| median width (chance only) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for fam, (n, w, nw, billed, pred, naive, ns) in sorted(pooled.items()):
        k, c2, c5, n2, n5 = close[fam]
        lines.append(
            f"| {fam} | {n} | {w / max(1, n):.1%} | {nw / max(1, n):.1%} | {_pct(pred, billed)} | "
            f"{_pct(naive, billed)} | {k} | {c2 / k:.0%} ({n2 / k:.0%}) | {c5 / k:.0%} ({n5 / k:.0%}) "
            f"| {ns} | {_cover(cover[fam])} |"
        )
    lines += [
        "",
        f"Billed cost inside the 90 % interval: {sum(inside)}/{len(inside)} conversations "
        f"({_share(inside)}); "
        f"median interval width {_median(widths):.1%} of the central value (chance draws only: "
        f"{sum(inside0)}/{len(inside0)}, {_share(inside0)}, median width {_median(widths0):.1%}; the "
        "model error is measured on the development part, bench/fidelity/model_error.py"
        + _borrowed()
        + ").",
        f"Conversations of >= {CONVERSATION_FLOOR['claude-code']} requests (Claude Code; >= {OTHER_FLOOR} of "
        "other harnesses) whose read match is below naive - 0.5 pt (with the miss causes of the requests "
        "only the naive read matched): "
        + (", ".join(below) if below else "none")
        + ".",
        part_line(scored),
        rules_line([sf for _, sf in scored]),
        "",
        *not_within_table(by_family),
    ]
    lines += ["", *accounted(convs)]
    lines += named(convs, found)
    return [*lines, ""]


def _borrowed() -> str:
    """The model-error strata too small to calibrate alone (model_error.py `borrows`)."""
    small = [f"{f} {k} ({MODEL_ERROR[(f, k)][2]})" for f, k in sorted(MODEL_ERROR) if borrows((f, k))]
    if not small:
        return ""
    return (
        f"; strata of fewer than {MIN_SESSIONS} development sessions take the widest of their own "
        f"margins and those of every family pooled: {', '.join(small)}"
    )


def _also(r: Replayed) -> str:
    """What a conversation not compared holds besides its own requests: copies counted elsewhere,
    requests recording 0 tokens."""
    parts = [f"{r.copied} copied request(s) counted in another conversation or log"] if r.copied else []
    parts += [f"{r.unrecorded} request(s) recording 0 tokens"] if r.unrecorded else []
    return f" ({'; '.join(parts)})" if parts else ""


def named(convs: list[Replayed], found: list[Found]) -> list[str]:
    """The part's requests and conversations not scored, each named with why; what the replay of
    Claude Code on another backend assumes; the files no importer reads."""
    lines: list[str] = []
    for r in convs:
        unrecorded = r.trace.header.meta.get("usage_unrecorded")
        if r.compared and unrecorded:
            lines.append(
                f"- not scored: {Path(r.log.rel).name} {r.name}: {unrecorded} request(s) whose usage records "
                "0 tokens in and out (bill unknown)"
            )
        if r.fidelity is not None and r.fidelity.not_scored:
            lines.append(
                f"- not scored: {Path(r.log.rel).name} {r.name}: {len(r.fidelity.not_scored)} request(s), "
                f"{r.fidelity.not_scored_why}"
            )
        if r.fidelity is not None and r.fidelity.copied and not r.fidelity.n:
            lines.append(
                f"- scored elsewhere: {Path(r.log.rel).name} {r.name}: its {r.fidelity.copied} request(s) "
                "are copies of another conversation's (same requestId), scored there"
            )
        elif not r.compared and r.error is None:  # not replayed: their own list (logs.py not_replayed)
            lines.append(
                f"- not compared: {Path(r.log.rel).name} {r.name} ({r.shown_model()}): {r.why_not}"
                + _also(r)
            )
    assumed: dict[str, int] = {}  # another backend, a log with no writes: what its replay assumes
    for r in convs:
        writes = r.fidelity.meta.get("writes_assumption", "") if r.fidelity is not None else ""
        for why in (str(r.trace.header.meta.get("backend_assumption", "")), str(writes)):
            if why and r.compared:
                assumed[why] = assumed.get(why, 0) + 1
    lines += [f"- assumed ({n} conversation(s)): {why}" for why, n in sorted(assumed.items())]
    for f in found:
        lines += [f"- no importer reads {rel}: {why}" for rel, why in f.skipped]
    return lines + not_replayed(convs, "### Not replayed")


def render_parts(
    shared: Path | None,
    corpus: Path,
    split: str | None,
    stream: IO[str] | None = None,
    failed: list[Replayed] | None = None,
) -> str:
    """The report's parts (test first), then the detailed report of the shared folder when the
    development part is asked for (bench/fidelity/report.py); the conversations not replayed are
    named in each part and added to `failed` (once each)."""
    from ctxbench.bench.fidelity.report import render

    lines = [
        "# Fidelity on real recorded sessions: test and development parts",
        "",
        "Regenerate: `python -m ctxbench.bench.cli fidelity --all-real --corpus DIR -o "
        "bench/fidelity_report.md` (DIR made by `python -m ctxbench.bench.corpus.extract --out DIR`; "
        "split rule in bench/corpus/README.md). Within = cache read, cache write and uncached input "
        "each within max(1 %, 128) tokens of the bill; the prediction takes nothing from the bill.",
        "",
    ]
    chosen = parts(shared, corpus, split)
    errors: list[Replayed] = []
    for part in chosen:
        convs, found = replay_part(part, stream)
        lines += summary(part, convs, found)
        errors += [r for r in convs if r.error is not None]
    text = "\n".join(lines) + "\n"
    if shared is not None and any(p.name == "dev" for p in chosen):
        detail = render(shared, stream, errors).split("\n", 1)[1]
        text += "\n# Development part in detail: the shared sessions\n" + detail
    if failed is not None:  # the shared folder's are in the dev part and in its detail: once each
        failed += list({(r.log.path, r.name): r for r in errors}.values())
    return text
