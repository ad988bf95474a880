"""The figure and numbers of the README and the guide (docs/) are what
`python -m ctxbench.bench.readme_figures` computes from the bundled samples (bench/readme_figures.py):
neither can drift from the code."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxbench.bench.readme_figures import FIGURE, Figures, compute, problems, readme_and_docs, write_figure
from ctxbench.sim.core.tokens import toktok_available
from tests.real import REAL

ROOT = Path(__file__).resolve().parents[2]
README = readme_and_docs(ROOT / "README.md")  # the README, then the guide (docs/*.md)


@pytest.fixture(scope="module")
def figures() -> Figures:
    return compute(full_sweep=False)  # the quoted budgets only: the same runs as the full sweep's


def test_every_number_the_readme_quotes_is_what_the_code_gives(figures: Figures) -> None:
    assert problems(README, figures) == []
    assert figures.failed_budgets() == [32_000] and figures.masking_status == "too_long"
    if toktok_available() and REAL.is_dir():  # the measured rate error is checked where measurable
        assert figures.measured and all(q in " ".join(README.split()) for q in figures.measured)


def test_a_drifted_readme_is_caught(figures: Figures) -> None:
    ratio = f"{figures.ratios()[40_000]:.1f}× less at a 40k budget"
    assert ratio in README
    drifted = README.replace(ratio, "9.9× less at a 40k budget")
    assert any("40k budget" in p for p in problems(drifted, figures))
    line = figures.quickstart.splitlines()[3]  # the first policy's row
    cost = line.split()[1]
    assert any("quick-start line 4" in p for p in problems(README.replace(cost, "$0.0001", 1), figures))


def test_the_readme_figure_is_drawn_from_the_sweep(figures: Figures, tmp_path: Path) -> None:
    """The command writes the figure the README shows (reports/readme/), in the plot style of
    `ctxbench plot`: the x-axis names the H presets' working budget."""
    assert f"](reports/readme/{FIGURE})" in README and (ROOT / "reports" / "readme" / FIGURE).is_file()
    from ctxbench.bench.plots import budget_axis

    assert budget_axis(figures.sweep) == "working budget (k tokens)"
    png = write_figure(figures, tmp_path)
    assert png.name == FIGURE and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
