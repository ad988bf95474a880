"""Every figure and number the README and its guide (docs/) quote, regenerated from the bundled samples.

    python -m ctxbench.bench.readme_figures            # writes reports/readme/cost_vs_budget.png,
                                                       # prints the numbers and the README's sentences
    python -m ctxbench.bench.readme_figures --check    # exit 1 naming each README quote that differs

Run from the checkout's root (the README and `reports/` are found from there, or pass `--readme`
and `-o`). The runs are exactly the README's commands: the quick-start `compare` on game-300, the
tour's budget sweep (h-openrouter vs h-keep-last-2, 32k..200k by 8k, 3 seeds) behind the figure
and the eviction ratios, c-default on coding-long at 40k, 120k and its 200k window, and masking-10
on coding-long; where toktok-rs and the shared real sessions (`$CTXBENCH_REAL`) are present, also
the rate's measured error (`ctxbench tokenizers --measure`). tests/bench/test_readme_figures.py
recomputes the quoted numbers and checks them against README.md and docs/*.md, so neither can drift from
what the code gives.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.bench.compare import compare_rows, render
from ctxbench.bench.runs import make_tasks
from ctxbench.bench.sweep import execute
from ctxbench.sim.core.values import parse_sizes
from ctxbench.traces.generators.samples import SAMPLES_DIR

GAME = str(SAMPLES_DIR / "game-300.jsonl")
CODING = str(SAMPLES_DIR / "coding-long.jsonl")
QUICKSTART_POLICIES = ("h-openrouter", "h-direct", "h-keep-last-2")  # README "Set up and run"
SWEEP_POLICIES = ("h-openrouter", "h-keep-last-2")  # README tour: the sweep behind the figure
SWEEP_BUDGETS = "32k:200k:8k"
SWEEP_SEEDS = 3
RATIO_BUDGETS = (40_000, 120_000)  # "costs 2.1x less at a 40k budget and 4.1x less at the default 120k"
WINDOW_BUDGETS = (40_000, 120_000, None)  # c-default: 40k, 120k, its own (the 200k model window)
FIGURE = "cost_vs_budget.png"


def _rows(
    traces: list[str], policies: tuple[str, ...], budgets: list[int | None], seeds: int, jobs: int
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    execute(make_tasks(traces, list(policies), budgets, [None], list(range(seeds))), rows.append, jobs)
    return rows


@dataclass
class Figures:
    """The computed numbers; `sweep` holds the sweep's rows (all budgets, or the quoted ones)."""

    quickstart: str = ""
    measured: list[str] | None = None  # the measured rate error (None: not measurable here)
    sweep: list[dict[str, Any]] = field(default_factory=list)
    window_costs: dict[int | None, float] = field(default_factory=dict)
    masking_status: str = ""

    def ratios(self) -> dict[int, float]:
        """h-keep-last-2's cost over h-openrouter's at each quoted budget (means over seeds)."""
        cost: dict[tuple[str, int], list[float]] = defaultdict(list)
        for r in self.sweep:
            cost[(r["policy"], int(r["budget"]))].append(float(r["cost"]))
        mean = {k: sum(v) / len(v) for k, v in cost.items()}
        return {b: mean[(SWEEP_POLICIES[1], b)] / mean[(SWEEP_POLICIES[0], b)] for b in RATIO_BUDGETS}

    def failed_budgets(self) -> list[int]:
        return sorted({int(r["budget"]) for r in self.sweep if r["status"] != "ok"})

    def quotes(self) -> list[str]:
        """The README's sentences with these numbers in them (whitespace as one space)."""
        r40, r120 = (self.ratios()[b] for b in RATIO_BUDGETS)
        c40, c120, cwin = (self.window_costs[b] for b in WINDOW_BUDGETS)
        failed = ", ".join(f"{b // 1000}k" for b in self.failed_budgets()) or "no budget"
        return [
            f"costs {r40:.1f}× less at a 40k budget and {r120:.1f}× less at the default 120k",
            f"The crosses mark runs that ended with an error (at {failed} the new conversation",
            f"`c-default` costs ${c40:.2f} at 40k, ${c120:.2f} at 120k and ${cwin:.2f} at the 200k window",
            f"(`masking-10` on `coding-long` ends `{self.masking_status}`)",
            *(self.measured or []),
        ]


def measured_quotes(root: Path) -> list[str] | None:
    """The README's measured rate error (`ctxbench tokenizers --measure` on the shared real
    sessions against o200k); None where toktok-rs or the sessions are absent (nothing to check)."""
    from ctxbench.bench.fidelity.report import CLAUDE_TRACE
    from ctxbench.bench.rate_error import measure
    from ctxbench.sim.core.tokens import toktok_available

    if not toktok_available() or not (root / CLAUDE_TRACE).is_file():
        return None
    spread = {
        r["kind"]: r
        for r in measure(root)["spreads"]
        if r["source"] == "real sessions" and r["encoding"] == "o200k"
    }
    p, j = spread["prose"], spread["json"]
    return [
        f"text the importers mark prose (mostly tool results: code, logs, listings) runs "
        f"{p['bytes_per_token']:.2f} B/token, so the rate ({p['rate_bytes_per_token']:.2f}) under-counts "
        f"it by {(1 - p['total']) * 100:.0f} % in total and is off {p['low']:.2f}–{p['high']:.2f}× per "
        f"chunk; JSON (tool inputs and schemas) runs {j['bytes_per_token']:.2f} B/token, over-counted by "
        f"{(j['total'] - 1) * 100:.0f} % ({j['low']:.2f}–{j['high']:.2f}× per chunk)",
    ]


def compute(full_sweep: bool = True, jobs: int = 1) -> Figures:
    """Run the README's commands (the sweep over every budget, or only the quoted ones)."""
    f = Figures()
    quick = _rows([GAME], QUICKSTART_POLICIES, [None], 1, jobs)
    order = {p: i for i, p in enumerate(QUICKSTART_POLICIES)}
    quick.sort(key=lambda r: order[r["policy"]])
    f.quickstart = render(compare_rows(quick), "terminal", "1 trace(s) · 1 seed(s) · provider each preset's")
    budgets: list[int | None] = list(parse_sizes(SWEEP_BUDGETS))
    if not full_sweep:
        budgets = [b for b in budgets if b in RATIO_BUDGETS or b == budgets[0]]
    f.sweep = _rows([GAME], SWEEP_POLICIES, budgets, SWEEP_SEEDS, jobs)
    for r in _rows([CODING], ("c-default",), list(WINDOW_BUDGETS), 1, jobs):
        f.window_costs[int(r["budget"]) or None] = float(r["cost"])  # 0: the preset's own, the window
    (masking,) = _rows([CODING], ("masking-10",), [None], 1, jobs)
    f.masking_status = str(masking["status"])
    from ctxbench.bench.fidelity.report import DEFAULT_DIR

    f.measured = measured_quotes(DEFAULT_DIR)
    return f


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def readme_and_docs(readme: Path) -> str:
    """The README followed by the guide beside it (`docs/*.md`, in name order): the README shows
    the quick-start table and the figure's numbers, the guide quotes the other figures."""
    docs = sorted((readme.parent / "docs").glob("*.md"))
    return "\n\n".join(p.read_text(encoding="utf-8") for p in [readme, *docs])


def readme_table(readme: str) -> list[str]:
    """The quick-start output block of the README (the first ``` block after the install line)."""
    m = re.search(r"```\n(1 trace\(s\).*?)```", readme, re.S)
    return m.group(1).rstrip("\n").splitlines() if m else []


def problems(readme: str, figures: Figures) -> list[str]:
    """Each quote of the README (and the guide after it) that differs from what the code gives
    (empty: they are current).
    The quick-start table may be cut on the right (`...`); what it shows must be the output's."""
    out = [f"README lacks: {q!r}" for q in figures.quotes() if _squash(q) not in _squash(readme)]
    shown, real = readme_table(readme), figures.quickstart.splitlines()
    if not shown:
        out.append("README lacks the quick-start compare output (a ``` block starting '1 trace(s)')")
    for i, line in enumerate(shown):
        cut = line.rstrip().removesuffix("...").rstrip()
        if i >= len(real) or not real[i].startswith(cut):
            got = real[i][: len(cut)] if i < len(real) else "(no such line)"
            out.append(f"README quick-start line {i + 1}: shows {cut!r}, the command prints {got!r}")
    return out


def write_figure(figures: Figures, out_dir: Path) -> Path:
    """The README's cost-versus-budget PNG (the plot style of `ctxbench plot`)."""
    from ctxbench.bench.plots import cost_figure, save_png

    out_dir.mkdir(parents=True, exist_ok=True)
    return save_png(cost_figure(figures.sweep), out_dir / FIGURE)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m ctxbench.bench.readme_figures", description=(__doc__ or "").split("\n")[0]
    )
    p.add_argument("--readme", default="README.md", help="the README to check (default ./README.md)")
    p.add_argument("-o", "--output", default="reports/readme", help="where the figure goes")
    p.add_argument("--check", action="store_true", help="only check the README's numbers; write nothing")
    p.add_argument("-j", "--jobs", type=int, default=1, help="worker processes (default 1)")
    args = p.parse_args(argv)
    figures = compute(full_sweep=not args.check, jobs=args.jobs)
    if not args.check:
        print(f"wrote {write_figure(figures, Path(args.output))}")
    print(figures.quickstart)
    for q in figures.quotes():
        print(q)
    if figures.measured is None:
        print("note: the measured rate error needs toktok-rs and $CTXBENCH_REAL: not computed, not checked")
    readme = Path(args.readme)
    if not readme.is_file():
        print(f"readme_figures: {readme}: no such file (nothing checked)", file=sys.stderr)
        return 2 if args.check else 0
    bad = problems(readme_and_docs(readme), figures)
    for b in bad:
        print(f"readme_figures: {b}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        sys.exit(0)
