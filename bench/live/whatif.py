"""Counterfactual validation (issue 29): a harness run at one setting predicts the same task at another.

    python -m ctxbench.bench.live.whatif record claude-code --prefix .npm-harnesses   # live, minutes
    python -m ctxbench.bench.live.whatif report                                             # offline, seconds

`record` runs a real harness (npm, local prefix) against `ctxbench serve` with the same scripted
task at three or more settings of the knob its preset models (Claude Code's auto-compact window,
Codex's `model_auto_compact_token_limit`, opencode's `limit.context`, Gemini CLI's
`model.compressionThreshold`, Cline's model context window) and keeps each server ledger, compressed,
in `tests/bench/data/whatif/<harness>-<version>-<setting>.requests.jsonl.xz` (Cline's task folder
beside it: bench/live/whatif_cline.py).

`report` needs no harness: for every ordered pair of kept settings (A, B) it rebuilds the
pre-compaction task from the ledger recorded at A (`bench.live.ledger.task_of`: prompt, model
replies and tool results, without the harness's compaction requests and summaries), simulates it
with the harness's preset set to B's knob, and compares with what the harness was served at B:
the task turn of every compaction (the number of main requests before it; consecutive compaction
requests, e.g. Gemini CLI's summary and verification probe, are one compaction) and the cost of
the main and compaction requests (side requests such as title generation are not simulated).
Target (issue 29): every compaction within ±1 turn and the cost within 5 %. The report is written
to `bench/whatif_report.md`; tests/bench/live/test_whatif.py re-derives it from the kept ledgers.
"""

from __future__ import annotations

import argparse
import lzma
import shutil
import sys
import time
from dataclasses import dataclass, fields, is_dataclass, replace
from itertools import groupby
from pathlib import Path
from typing import Any

from ctxbench.bench.live import whatif_cline
from ctxbench.bench.live.ledger import (
    ACK_MARKERS,
    CONTINUATION_MARKERS,
    MAIN,
    SIDE,
    SUMMARY,
    LiveRequest,
    PredictError,
    is_continuation,
    load_ledger,
    summary_texts,
    task_of,
)
from ctxbench.bench.live.predict import PROFILES, _totals_pred, _totals_usage, simulate
from ctxbench.bench.live.reminders import replace_reminders, texts_of
from ctxbench.bench.live.whatif_harnesses import HARNESSES, Harness, Setting
from ctxbench.bench.live.whatif_report import COST_TOLERANCE, TURN_TOLERANCE, Pair, render
from ctxbench.policies.preset import Policy, PresetError, load_policy, with_policy_set
from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.serve.script import SUMMARY_MARKERS
from ctxbench.traces.model import Trace

DATA = Path("tests/bench/data/whatif")
REPORT = Path("bench/whatif_report.md")
MAX_ROUNDS = 5  # simulate / re-place reminders rounds before the compactions must have settled


def stem_of(h: Harness, s: Setting) -> str:
    return f"{h.name}-{h.version}-{s.label}"


def ledger_path(data: Path, h: Harness, s: Setting) -> Path:
    return data / f"{stem_of(h, s)}.requests.jsonl.xz"


def policy_for(h: Harness, s: Setting) -> Policy:
    """The harness's preset with setting `s`'s knob."""
    p = load_policy(h.preset)
    if s.no_compaction:
        p = replace(p, compaction=load_policy("none").compaction)
    if s.budget is not None:
        p = replace(p, budget=s.budget)
    return with_policy_set(p, s.policy_set) if s.policy_set else p


# ---------------------------------------------------------------- compaction turns and costs
def served_turns(reqs: list[LiveRequest]) -> list[int]:
    """The task turn of each compaction the harness made: main requests before it (a run of
    consecutive compaction requests is one compaction)."""
    turns, mains = [], 0
    for kind, group in groupby(r.kind for r in reqs if r.kind != SIDE):
        n = len(list(group))
        if kind == SUMMARY:
            turns.append(mains)
        elif kind == MAIN:
            mains += n
    return turns


def predicted_turns(recs: list[RequestRecord]) -> list[int]:
    turns, mains = [], 0
    for is_summary, group in groupby(r.kind in ("summary", "summary_text") for r in recs):
        n = len(list(group))
        if is_summary:
            turns.append(mains)
        else:
            mains += n
    return turns


@dataclass
class Served:
    setting: Setting
    path: Path
    reqs: list[LiveRequest]
    turns: list[int]
    cost: float  # main + compaction requests, as billed
    side_cost: float  # side requests (not simulated)
    model: str
    preset_sizes: tuple[int, int] = (0, 0)  # the preset's summary_bytes, instruction_bytes
    task: Trace | None = None  # the kept task folder's import (a `task_folder` harness: Cline)

    @property
    def sizes(self) -> tuple[int | None, int | None]:
        """(continuation message, compaction instruction) bytes as recorded."""
        return summary_bytes(self.reqs), instruction_bytes(self.reqs)


def load_served(data: Path, h: Harness) -> list[Served]:
    comp: Any = load_policy(h.preset).compaction
    out = []
    for s in h.settings:
        path = ledger_path(data, h, s)
        reqs, _f = load_ledger(path)
        billed = [r for r in reqs if r.kind != SIDE]
        model = billed[0].model if billed else ""
        task = whatif_cline.task_trace(data, stem_of(h, s)) if h.task_folder else None
        turns = whatif_cline.truncation_turns(task) if task is not None else served_turns(reqs)
        out.append(
            Served(
                s,
                path,
                reqs,
                turns,
                _totals_usage([r.usage for r in billed], model)["cost"],
                sum(r.cost for r in reqs if r.kind == SIDE),
                model,
                (getattr(comp, "summary_bytes", 0), getattr(comp, "instruction_bytes", 0)),  # none: Cline's
                task,
            )
        )
    return out


def summary_bytes(reqs: list[LiveRequest]) -> int | None:
    """The bytes of the continuation message the harness put at the head of the context after its
    first compaction (its wrapper text and the model's summary), as recorded; None without one.
    Where the harness spreads it over several messages (opencode: "What did we do so far?", the
    summary as an assistant turn, "Continue if you have next steps ..."), their sum; Gemini CLI's
    acknowledgement turn is the preset's `ack_bytes`, not counted here."""
    after, summaries = False, summary_texts(reqs)
    for r in reqs:
        if r.kind == SUMMARY:
            after = True
        elif r.kind == MAIN and after:
            n = 0
            for m in r.parsed.messages:
                whole = any(b.text and any(x in b.text for x in CONTINUATION_MARKERS) for b in m.blocks)
                n += sum(
                    len(b.text.encode("utf-8"))
                    for b in m.blocks
                    if b.text and (whole or (is_continuation(b, summaries) and b.text not in ACK_MARKERS))
                )
            return n or None
    return None


def instruction_bytes(reqs: list[LiveRequest]) -> int | None:
    """The bytes of the compaction instruction in the harness's first compaction request, as
    recorded (the block carrying a SUMMARY_MARKERS text); None without one."""
    for r in reqs:
        if r.kind == SUMMARY:
            for m in reversed(r.parsed.messages):
                for b in m.blocks:
                    if b.text and any(x in b.text for x in SUMMARY_MARKERS):
                        return len(b.text.encode("utf-8"))
            return None
    return None


def predict(h: Harness, source: Served, target: Served, profile: str | None = None) -> Pair:
    """Setting `target` predicted from the task recorded at `source`: the preset at the target's
    knob, with the sizes of the continuation message and of the compaction instruction that the
    source recording shows (what the trace knows; the preset's values otherwise)."""
    _reqs, f = load_ledger(source.path)
    task = task_of(source.reqs, f, source.path.name)
    policy, prof = policy_for(h, target.setting), profile or PROFILES[h.name]
    known = {"summary_bytes": summary_bytes(source.reqs), "instruction_bytes": instruction_bytes(source.reqs)}
    has: set[str] = {f.name for f in fields(policy.compaction)} if is_dataclass(policy.compaction) else set()
    sets = [f"compaction.{k}={v}" for k, v in known.items() if v is not None and k in has]
    policy = with_policy_set(policy, sets) if sets else policy
    if h.reminders:  # the reminders where the harness would put them for the predicted compactions
        texts, seen = texts_of(task.prepared, source.turns), [source.turns]
        while True:
            moved = replace_reminders(task.prepared, f, texts, seen[-1])
            recs = simulate(replace(task, prepared=moved), policy, prof)
            if predicted_turns(recs) in seen or len(seen) >= MAX_ROUNDS:
                break
            seen.append(predicted_turns(recs))
    else:
        recs = simulate(task, policy, prof)
    served = [r for r in target.reqs if r.kind != SIDE]
    return Pair(
        source.setting.label,
        target.setting.label,
        target.turns,
        predicted_turns(recs),
        target.cost,
        _totals_pred(recs)["cost"],
        len(served),
        len(recs),
    )


def predict_from_task_folder(h: Harness, source: Served, target: Served) -> Pair:
    """Setting `target` predicted from the task folder kept at `source` (bench/live/whatif_cline.py):
    its import under the preset at the target's knob."""
    if source.task is None:
        raise PredictError(f"{source.path}: no task folder kept beside this ledger")
    recs = whatif_cline.simulate(source.task, policy_for(h, target.setting))
    served = [r for r in target.reqs if r.kind != SIDE]
    return Pair(
        source.setting.label,
        target.setting.label,
        target.turns,
        whatif_cline.predicted_truncations(recs),
        target.cost,
        _totals_pred(recs)["cost"],
        len(served),
        len(recs),
    )


def pairs_of(data: Path, h: Harness) -> tuple[list[Served], list[Pair]]:
    served = load_served(data, h)
    if h.task_folder:
        return served, [predict_from_task_folder(h, a, b) for a in served for b in served]
    return served, [predict(h, a, b) for a in served for b in served]


# ---------------------------------------------------------------- record (live)
# run by bench/live/session_logs.py, the others by run_harness.py
LOGGED = ("opencode", "gemini-cli", "cline")


def _run(
    name: str, out: Path, prefix: Path, timeout: float, knobs: dict[str, str], task: Path | None
) -> dict[str, Any]:
    """One live run of harness `name`: rc, seconds, requests, and for one run by session_logs.py its
    log (a session log, or Cline's task folder)."""
    if name not in LOGGED:
        from ctxbench.bench.live.run_harness import run

        return run(name, out, prefix, timeout, knobs, task)
    from ctxbench.bench.live.session_logs import run as run_logged

    t0 = time.monotonic()
    try:
        log, ledger, _script = run_logged(name, out, prefix, timeout, False, knobs, task)
    except RuntimeError as exc:  # the harness exited non-zero: the message has its log's tail
        (out / "harness.log").write_text(str(exc), encoding="utf-8")
        return {"rc": 1, "seconds": round(time.monotonic() - t0, 1), "requests": 0}
    n = sum(1 for x in ledger.read_text(encoding="utf-8").splitlines() if x.strip())
    return {"rc": 0, "seconds": round(time.monotonic() - t0, 1), "requests": n, "log": log}


def record(
    name: str, prefix: Path, data: Path, timeout: float, work: Path, only: list[str] | None = None
) -> list[str]:
    """Run harness `name` at each of its settings (or those labelled `only`) and keep the ledgers;
    the problems met."""
    h = HARNESSES[name]
    data.mkdir(parents=True, exist_ok=True)
    problems = []
    for s in h.settings:
        if only and s.label not in only:
            continue
        out = work / f"{name}-{s.label}"
        task = Path(__file__).parent / h.task if h.task else None
        info = _run(name, out, prefix, timeout, dict(s.harness_knobs), task)
        if info["rc"] != 0:
            problems.append(f"{name} at {s.knob} exited with {info['rc']} (see {out / 'harness.log'})")
            continue
        raw = (out / "requests.jsonl").read_bytes()
        ledger_path(data, h, s).write_bytes(lzma.compress(raw, preset=9 | lzma.PRESET_EXTREME))
        if h.task_folder:
            whatif_cline.keep_task(info["log"], data, stem_of(h, s))
        print(f"{name} {s.knob}: {info['requests']} requests, {info['seconds']} s")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m ctxbench.bench.live.whatif",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="verb", required=True)
    rec = sub.add_parser("record", help="run a harness at each setting and keep the ledgers (live)")
    rec.add_argument("harness", choices=sorted(HARNESSES))
    rec.add_argument("--prefix", default=None, help="npm prefix with the harness ($CTXBENCH_NPM_PREFIX)")
    rec.add_argument("--timeout", type=float, default=400.0)
    rec.add_argument("--work", default="reports/whatif", help="folder for the runs (HOME, work dir)")
    rec.add_argument("--data", default=str(DATA), help=f"where the ledgers are kept (default {DATA})")
    rec.add_argument("--only", action="append", help="only the setting with this label (repeat)")
    rep = sub.add_parser("report", help="predict every setting from every other (offline)")
    rep.add_argument("--data", default=str(DATA), help=f"the kept ledgers (default {DATA})")
    rep.add_argument("--out", default=str(REPORT), help=f"the report (default {REPORT}; - for stdout)")
    rep.add_argument("--harness", action="append", choices=sorted(HARNESSES), help="only these (repeat)")
    a = ap.parse_args(argv)
    if a.verb == "record":
        from ctxbench.bench.live.run_harness import harness_available, npm_prefix
        from ctxbench.bench.live.session_logs import missing

        prefix = npm_prefix(a.prefix)
        why = missing(a.harness, prefix) if a.harness in LOGGED else harness_available(a.harness, prefix)
        if why:
            print(f"whatif: error: cannot run {a.harness}: {why}", file=sys.stderr)
            return 2
        work = Path(a.work).resolve()
        problems = record(a.harness, prefix, Path(a.data), a.timeout, work, a.only)
        shutil.rmtree(work, ignore_errors=True) if not problems else None
        for p in problems:
            print(f"whatif: FAIL: {p}", file=sys.stderr)
        return 1 if problems else 0
    try:
        results = {n: pairs_of(Path(a.data), HARNESSES[n]) for n in (a.harness or HARNESSES)}
    except (PredictError, PresetError) as exc:
        print(f"whatif: error: {exc}", file=sys.stderr)
        return 2
    text = render({n: (HARNESSES[n].title, *r) for n, r in results.items()})
    if a.out == "-":
        print(text, end="")
    else:
        Path(a.out).write_text(text, encoding="utf-8")
        print(f"wrote {a.out}")
    return 0 if all(p.ok for _s, pairs in results.values() for p in pairs) else 1


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["COST_TOLERANCE", "DATA", "HARNESSES", "TURN_TOLERANCE", "Pair", "Served", "main", "pairs_of"]
