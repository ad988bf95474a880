"""Re-measure, on the development part only, the rates the fidelity replay draws from and the
fallback evidence it cites (issue 28: every fitted constant cites the development sessions it was
measured on, and the measurement can be rerun):

- on automatic-prefix caches (bench/fidelity/auto_interval.py `LOST_SHARE`): per conversation,
  the share of what the central prediction's cached reads save that the bill did not save (net),
  weighted by that saving (the share of a dollar saved: its mean is the pooled share, and the
  pooled cost is linear in it); and, as
  evidence for the causes bench/fidelity/auto.py names, of the requests after the first, how many
  read what the central prediction says (within tolerance, or more: *found*) and how many read
  less (*missed*); of the misses, how many read only the static prefix other sessions keep warm,
  how many an older entry of the conversation (and how many requests back), and how many neither;
- on explicit-breakpoint caches (bench/fidelity/misses.py `MISSES`): of the requests the replay
  predicts to read something, how many read less, and the share of the predicted read they lost;
  on Anthropic's own endpoint, how many times a continuation's miss rate a user turn has, by its
  gap, stratified by account (`Misses.factors`); per conversation, its own miss rate (per unit of
  that exposure); and the expiry breaks that read a prefix kept warm (`WARMING`);
- the replay's own model error (bench/fidelity/model_error.py `MODEL_ERROR`): per session, how far
  the bill fell outside the chance interval relative to its central value, per cache family and
  session size, and the split-conformal margins they give (with the quantiles of billed/central
  - 1 beside, for the record);
- where the rebuilt prompt is unsure (bench/fidelity/unsure.py `PROMPT_NOT_LOGGED`): requests the
  replay, before any fallback, predicted short of the naive read with no timing cause, and which
  of the two the bill sided with; and the same for every read the replay predicted apart from the
  naive one on a request served by another backend (`OTHER_BACKEND`) or sized down by a later
  shrink (`SIZED_DOWN`); and every break the replay
  predicts short of the naive read, by its miss cause, with the side the bill took; and on
  DeepSeek (`READS_INSIDE_MESSAGES`), every read with no timing cause a unit or more apart from the
  naive one, and which of the two the bill read exactly;
- DeepSeek (sim/data/profiles/deepseek.yaml `unit_tokens`, bench/fidelity/auto.py `left_cached`):
  reads that are whole 128-token units, and reads past the previous prompt (into its output) or
  past its output too; Claude Code relays to Anthropic models (sim/data/profiles/claude-relay.yaml
  `ttl`; a relay to another vendor's model is that vendor's cache): requests sent within 5 minutes
  of the previous one and later, and how many read less than half the previous prompt;
- on automatic-prefix caches and DeepSeek's (sim/data/profiles/zai.yaml, deepseek.yaml `ttl`):
  requests by the idle gap since the previous one, kept (read at least half its prompt) or lost
  (bench/fidelity/gaps.py); per model, the grid its reads fall on (`read_units`, grids.py).

    python -m ctxbench.bench.fidelity.measure --corpus DIR [--shared DIR] [--json]

The text output ends with `MEAN_SHARE` and `MODEL_ERROR` as Python, ready to paste into
auto_interval.py and model_error.py.

The test part is never read here: it is read only by the command that writes the report.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ctxbench.bench.fidelity.auto import STEP, UnitCounts, count_deepseek
from ctxbench.bench.fidelity.auto_interval import read_saving
from ctxbench.bench.fidelity.gaps import count_edge, count_relay, count_retention, prompt_of
from ctxbench.bench.fidelity.grids import GridCounts, count_grids, grids_json, grids_line
from ctxbench.bench.fidelity.interval import RELAY, cost_interval, miss_kind
from ctxbench.bench.fidelity.misses import EXPLICIT, MissCounts, count_misses
from ctxbench.bench.fidelity.model_error import POOLED, margins, scores, stratum
from ctxbench.bench.fidelity.parts import Part, replay_part
from ctxbench.bench.fidelity.results import RequestCompare, SessionFidelity, near
from ctxbench.bench.fidelity.unsure import count_sided, entry_lives
from ctxbench.bench.fidelity.warming import WarmCounts, account, count_warming


@dataclass
class AutoCounts:
    """What the requests of one provider's logs read (module docstring)."""

    found: int = 0
    missed: int = 0
    static_only: int = 0
    older: int = 0
    neither: int = 0
    back: Counter[int] = field(default_factory=Counter)
    sessions: list[str] = field(default_factory=list)
    lost: list[tuple[float, float]] = field(default_factory=list)  # (share, central saving) per conversation
    into_output: int = 0  # reads past the previous prompt, not past its output (auto.py OUTPUT)
    output_readable: int = 0  # tokens of previous outputs a next request could have read (128-token steps)
    output_read: int = 0  # ... and read
    # tool continuations by model: within tolerance of the previous prompt ("prompt") and of the
    # previous prompt and output one step short ("through output"), auto.py `left_cached`
    through: dict[str, Counter[str]] = field(default_factory=dict)

    def json(self) -> dict[str, object]:
        return {
            "found": self.found, "missed": self.missed, "static_only": self.static_only,
            "older_entry": self.older, "neither": self.neither,
            "back": {str(k): v for k, v in sorted(self.back.items())},
            "lost_share_quantiles": [round(q, 4) for q in _quantiles(self.lost)],
            "mean_share": round(self.mean_share, 4),
            "conversations_in_lost_share": len(self.lost), "sessions": self.sessions,
            "into_output": self.into_output, "output_read": self.output_read,
            "output_readable": self.output_readable,
            "continuations_by_model": _sorted_counts(self.through),
        }  # fmt: skip

    @property
    def mean_share(self) -> float:
        """The saving-weighted mean of the lost shares: the pooled share (auto_interval.py `MEAN_SHARE`)."""
        total = sum(w for _, w in self.lost)
        return sum(s * w for s, w in self.lost) / total if total else 0.0


SHARE_FLOOR = 10  # conversations with at least this many requests give a lost share
QUANTILES = 20  # a distribution as its 5 % quantiles (0 % and 100 % included)


def _quantiles(xs: list[tuple[float, float]]) -> list[float]:
    """The 5 % quantiles of values weighted by their weights (a conversation's share weighted by
    what its central reads save: the distribution of the share of a dollar, whose mean is the
    pooled share)."""
    if not xs:
        return []
    ys = sorted(xs)
    total = sum(w for _, w in ys)
    out, acc, k = [], 0.0, 0
    for i in range(QUANTILES + 1):
        target = total * i / QUANTILES
        while k < len(ys) - 1 and acc + ys[k][1] < target:
            acc += ys[k][1]
            k += 1
        out.append(ys[k][0])
    return out


def _count_output(prev: RequestCompare, r: RequestCompare, acc: AutoCounts) -> None:
    """How much of the previous response's output request `r` read (auto.py OUTPUT): of the
    128-token steps between the previous prompt and the previous prompt with its output."""
    prompt, read = prompt_of(prev), r.billed.cache_read
    start = min(prompt, prompt_of(r)) // STEP * STEP
    end = min(prompt + prev.billed.output_tokens, prompt_of(r)) // STEP * STEP
    acc.into_output += prompt < read <= prompt + prev.billed.output_tokens
    if end > start and read >= start:
        acc.output_readable += end - start
        acc.output_read += min(read, end) - start
    if r.real_user or not read:
        return
    c = acc.through.setdefault(_model_family(r.model), Counter())
    c["continuations"] += 1
    c["prompt"] += near(read, min(prompt, prompt_of(r)) // STEP * STEP)
    through = min(prompt + prev.billed.output_tokens - STEP, prompt_of(r))
    c["through output"] += near(read, through // STEP * STEP)


def _model_family(model: str) -> str:
    """A model id without its variant suffixes (gpt-5.3-codex, gpt-5.4-mini: gpt-5.3, gpt-5.4)."""
    return re.sub(r"-(codex|max|mini|spark|latest)\b", "", model)


def count_auto(sf: SessionFidelity, acc: AutoCounts) -> None:
    """Add the reads of one conversation on an automatic-prefix cache to `acc`: each request after
    the first against the central prediction's read, and the conversation's lost share (what the
    central reads save that the bill's did not, net, over what the central reads save)."""
    warm = int(sf.meta.get("warm_tokens", 0) or 0)
    reqs = sf.baseline.requests  # the prediction the interval draws around (interval.py), no outside event
    for k in range(1, len(reqs)):
        read, central = reqs[k].billed.cache_read, reqs[k].predicted.cache_read
        _count_output(reqs[k - 1], reqs[k], acc)
        if read >= central or near(read, central) or (central == 0 and read == 0):
            acc.found += 1
            continue
        acc.missed += 1
        if warm and abs(read - warm) < STEP:
            acc.static_only += 1
            continue
        held = (
            k - j
            for j in range(k - 2, -1, -1)
            if prompt_of(reqs[j]) - STEP < read <= prompt_of(reqs[j]) + STEP
        )
        back = next(held, 0)
        if back:
            acc.older += 1
            acc.back[back] += 1
        else:
            acc.neither += 1
    saved = sum(read_saving(r, sf.model, r.predicted.cache_read) for r in reqs[1:])
    if len(reqs) >= SHARE_FLOOR and saved > 0:
        lost = saved - sum(read_saving(r, sf.model, r.billed.cache_read) for r in reqs[1:])
        acc.lost.append((lost / saved, saved))


@dataclass
class ErrorCounts:
    """The model error of one stratum (bench/fidelity/model_error.py): each session's scores
    against the chance interval, and its residual billed/central - 1."""

    lower: list[float] = field(default_factory=list)
    upper: list[float] = field(default_factory=list)
    residual: list[float] = field(default_factory=list)

    def margins(self) -> tuple[float, float]:
        return margins(self.lower, self.upper)

    def json(self) -> dict[str, object]:
        lo, hi = self.margins()
        ys = sorted(self.residual)
        q = [round(ys[round(i * (len(ys) - 1) / 20)], 4) for i in (1, 10, 19)] if ys else []
        return {"sessions": len(ys), "margins": [round(lo, 4), round(hi, 4)], "residual_q05_q50_q95": q}


def count_error(sf: SessionFidelity, acc: dict[tuple[str, str], ErrorCounts]) -> None:
    """Add one session's scores against its chance interval to its stratum, and to its size
    class's pooled stratum (model_error.py `POOLED`)."""
    ci = cost_interval(sf, model_error=False)
    lo, hi = scores(sf.cost_billed, ci.central, ci.low, ci.high)
    family, size = stratum(sf)
    for key in ((family, size), (POOLED, size)):
        c = acc.setdefault(key, ErrorCounts())
        c.lower.append(lo)
        c.upper.append(hi)
        c.residual.append(sf.cost_billed / ci.central - 1 if ci.central else 0.0)


def dev_part(shared: Path | None, corpus: Path) -> Part:
    """The development part: the shared folder and the corpus's `dev/` folder (never `test/`)."""
    roots = tuple(p for p in (shared, corpus / "dev") if p is not None and p.is_dir())
    if not roots:
        raise ValueError(
            f"no development part under {corpus} (make it with python -m ctxbench.bench.corpus.extract)"
        )
    return Part("dev", roots)


def _sorted_counts(counts: Mapping[str, Counter[str]]) -> dict[str, dict[str, int]]:
    """Counters by key, keys and inner keys sorted (the JSON and text are the same on every run)."""
    return {k: dict(sorted(c.items())) for k, c in sorted(counts.items())}


@dataclass
class Measured:
    """Everything the module docstring lists, over one part."""

    auto: dict[str, AutoCounts] = field(default_factory=dict)
    misses: dict[str, MissCounts] = field(default_factory=dict)  # by interval.py `miss_kind`
    warming: WarmCounts = field(default_factory=WarmCounts)  # warming.py, beside the misses
    sided: dict[str, Counter[str]] = field(default_factory=dict)  # where unsure: whom the bill sided with
    units: Counter[str] = field(default_factory=Counter)  # reads in units inside messages: the same
    breaks: dict[str, Counter[str]] = field(default_factory=dict)  # every predicted break, by cause
    deepseek: UnitCounts = field(default_factory=UnitCounts)
    relay: Counter[str] = field(default_factory=Counter)
    edge: Counter[str] = field(default_factory=Counter)  # expiry breaks past the TTL (gaps.py count_edge)
    # per automatic-prefix cache and DeepSeek (gaps.py)
    retention: dict[str, Counter[str]] = field(default_factory=dict)
    error: dict[tuple[str, str], ErrorCounts] = field(default_factory=dict)
    grids: dict[str, GridCounts] = field(default_factory=dict)  # automatic prefixes, by model (grids.py)
    # conversations whose replay raised on their data (bench/fidelity/logs.py): not measured, named
    not_replayed: list[str] = field(default_factory=list)

    def json(self) -> dict[str, object]:
        return {
            "auto_prefix": {p: a.json() for p, a in sorted(self.auto.items())},
            "model_error": {f"{f} {k}": e.json() for (f, k), e in sorted(self.error.items())},
            "explicit_breakpoints": {k: m.json() for k, m in sorted(self.misses.items())},
            "warming": self.warming.json(),
            "unsure_sided": _sorted_counts(self.sided),
            "reads_in_units": dict(sorted(self.units.items())),
            "breaks_by_cause": _sorted_counts(self.breaks),
            "deepseek_reads": vars(self.deepseek),
            "relay_requests": dict(sorted(self.relay.items())),
            "expiry_breaks_at_ttl_edge": dict(sorted(self.edge.items())),
            "retention_by_gap": _sorted_counts(self.retention),
            "read_grids": grids_json(self.grids),
        }

    def lines(self) -> list[str]:
        out = []
        for provider, c in sorted(self.auto.items()):
            out += [
                f"{provider}: found {c.found}, missed {c.missed} (static prefix only {c.static_only}, "
                f"an older entry {c.older}, neither {c.neither}); {len(c.sessions)} conversations",
                f"  lost share per conversation of >= {SHARE_FLOOR} requests ({len(c.lost)}), weighted, "
                f"5 % quantiles: {[round(q, 4) for q in _quantiles(c.lost)]}",
                f"  read past the previous prompt into its output: {c.into_output} requests; of the "
                "previous outputs' tokens a request could read, "
                f"{c.output_read / max(1, c.output_readable):.1%} read ({c.output_read:,} of "
                f"{c.output_readable:,})",
                "  reads through the previous output, tool continuations by model (within tolerance of "
                f"the previous prompt / of the previous prompt and output one step short): {_through(c)}",
            ]
        for kind, misses in sorted(self.misses.items()):
            m = misses.json()
            out.append(
                f"{kind} breakpoints: {m['read_less']} of {m['predicted_reads']} requests with a predicted "
                f"read read less (exposure {m['exposure']}: Misses.rate is their ratio); share lost, "
                f"deciles: {m['lost_share_deciles']}; miss rate per turn class, times a continuation's "
                f"(Misses.factors): {m['turn_factors']}; per conversation ({m['conversations']}), its "
                "miss rate and the share of the exposure at it: "
                f"{m['rate_weights']}; share lost, deciles, at each of those rates: "
                f"{m['lost_share_deciles_at']}"
            )
        out.append(self.warming.line())
        out += [
            f"{what}, the bill sided with: {dict(sorted(c.items()))}"
            for what, c in sorted(self.sided.items())
        ]
        out.append(
            "reads in units that end inside messages, a unit or more apart from the naive read, the "
            f"bill read exactly: {dict(sorted(self.units.items()))}"
        )
        breaks = _sorted_counts(self.breaks)
        out.append(
            f"breaks the replay predicts short of the naive read, by cause, the bill sided with: {breaks}"
        )
        d = self.deepseek
        out.append(
            f"deepseek: {d.reads} reads after the first, {d.whole_units} whole 128-token units; past the "
            f"previous prompt into its output {d.into_output}, past its output {d.past_output}"
        )
        out.append(f"claude relays to anthropic models: {dict(sorted(self.relay.items()))}")
        out.append(f"expiry breaks at the TTL's edge (anthropic, relays): {dict(sorted(self.edge.items()))}")
        for provider, gaps in sorted(self.retention.items()):
            kept = dict(sorted(gaps.items()))
            out.append(f"{provider} retention by idle gap (read >= half the previous prompt): {kept}")
        for (fam, size), e in sorted(self.error.items()):
            j = e.json()
            out.append(
                f"model error {fam} {size}: {j['sessions']} sessions, billed/central - 1 at 5 %, 50 %, "
                f"95 %: {j['residual_q05_q50_q95']}; margins beyond the chance interval {j['margins']}"
            )
        out.append(grids_line(self.grids))
        shares = {p: round(c.mean_share, 4) for p, c in sorted(self.auto.items()) if c.lost}
        out.append(f"MEAN_SHARE: dict[str, float] = {shares}")
        out.append("MODEL_ERROR: dict[tuple[str, str], tuple[float, float, int]] = {")
        for key, e in sorted(self.error.items()):
            lo, hi = e.margins()
            out.append(f"    {key!r}: ({round(lo, 4)}, {round(hi, 4)}, {len(e.lower)}),")
        out.append("}")
        return out


def _through(c: AutoCounts) -> str:
    return "; ".join(
        f"{m} {n['continuations']}: {n['prompt']} / {n['through output']}"
        for m, n in sorted(c.through.items())
    )


def measure(part: Part) -> Measured:
    """The counts of the module docstring over `part`."""
    if part.name != "dev":
        raise ValueError("the measurement reads the development part only")
    convs, _ = replay_part(part)
    out = Measured()
    for r in convs:
        sf = r.fidelity
        if r.error is not None:
            out.not_replayed.append(f"{r.log.rel} {r.name}: {r.why_not}")
        if sf is None or not sf.has_usage:
            continue
        if sf.model.startswith("deepseek"):
            count_deepseek(sf, out.deepseek)
            count_retention(sf, out.retention.setdefault("deepseek", Counter()))
        if miss_kind(sf) == RELAY:  # a relay to an Anthropic model: the claude-relay profile's TTL
            count_relay(sf, out.relay)
        if sf.auto_provider:
            acc = out.auto.setdefault(sf.auto_provider, AutoCounts())
            count_auto(sf, acc)
            count_grids(sf, out.grids)
            count_retention(sf, out.retention.setdefault(sf.auto_provider, Counter()))
            acc.sessions.append(f"{r.log.rel} {r.name}")
        else:
            kind, who = miss_kind(sf), account(r.log.rel)
            count_misses(sf, out.misses.setdefault(kind, MissCounts(turns=kind == EXPLICIT)), who)
            count_warming(sf, who, out.warming)
            if kind in (EXPLICIT, RELAY):
                count_edge(sf, entry_lives(sf.meta), out.edge)
        count_error(sf, out.error)
        count_sided(sf, out.sided, out.breaks, out.units)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m ctxbench.bench.fidelity.measure", description=(__doc__ or "").split("\n\n")[0]
    )
    ap.add_argument("--corpus", required=True, help="folder made by python -m ctxbench.bench.corpus.extract")
    ap.add_argument("--shared", default=None, help="the shared traces-real folder (development part too)")
    ap.add_argument("--json", action="store_true", help="the counts as JSON (with the sessions)")
    a = ap.parse_args(argv)
    try:
        out = measure(dev_part(Path(a.shared) if a.shared else None, Path(a.corpus)))
    except (ValueError, OSError) as e:
        print(f"ctxbench: error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(out.json(), indent=1) if a.json else "\n".join(out.lines()))
    for why in out.not_replayed:
        print(f"note: not measured: {why}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
