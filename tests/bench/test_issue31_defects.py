"""Issue 31's list of defects a newcomer met, one regression test each (numbered as the issue)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

from ctxbench.bench import plots
from ctxbench.bench.cli import main
from ctxbench.bench.cli.billed import short_path
from ctxbench.bench.compare import compare_rows, render
from ctxbench.bench.report import write_report
from ctxbench.policies.preset import PresetError, load_policy
from ctxbench.sim.summary import HARNESS_ENDINGS
from tests.bench.test_compare_plots import row
from tests.real import REAL, needs_real

ROOT = Path(__file__).resolve().parents[2]
GAME = str(ROOT / "traces" / "samples" / "game-300.jsonl")
CODING = str(ROOT / "traces" / "samples" / "coding-long.jsonl")
CC_LOG = REAL / "spotter" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"


def _failed_sweep() -> list[dict]:
    """Two policies over three budgets and three seeds; `b` fails every run at 32k."""
    out = []
    for s in range(3):
        for b in (32000, 64000, 96000):
            out.append(row("a", s, 1.0 + b / 1e5, budget=b))
            fail = b == 32000
            out.append(row("b", s, 0.14 if fail else 2.0, budget=b, status="too_long" if fail else "ok"))
    return out


# 1 ------------------------------------------------------------------------------------------
def test_1_failed_crosses_sit_on_the_axis_floor_and_no_line_joins_failed_points() -> None:
    rows = _failed_sweep()
    fig = plots.cost_figure(rows)
    ax = fig.axes[0]
    crosses = [ln for ln in ax.lines if ln.get_marker() == "x" and len(ln.get_xdata())]
    assert crosses, "a failed budget is marked"
    for ln in crosses:
        assert list(ln.get_ydata()) == [0.0]  # y = 0 in axes coordinates: the floor, never $3.5
        _, y = ln.get_transform().transform((32.0, 0.0))
        _, y0 = ax.transAxes.transform((0.0, 0.0))
        assert abs(y - y0) < 1e-6  # on the floor of the axes whatever the policy's index
    assert ax.get_ylim()[0] == 0.0
    plt.close(fig)
    fig, ax = plt.subplots()
    plots._line(ax, plots.series(rows, "compactions"), failed=plots.failed_budgets(rows))
    ys = ax.lines[1].get_ydata()  # policy b
    assert np.isnan(ys[0]) and not np.isnan(ys[1])  # the failed 32k point is a gap, not joined
    plt.close(fig)


# 2 ------------------------------------------------------------------------------------------
def test_2_runs_ended_by_error_are_counted_not_averaged() -> None:
    rows = _failed_sweep()
    at32 = compare_rows([r for r in rows if r["budget"] == 32000])
    b = next(p for p in at32 if p.policy == "b")
    assert b.verdict == "FAILED (3 of 3 runs ended by an error)"
    text = render(at32, "terminal")
    head, _, body_b = (text.splitlines()[i] for i in (0, 2, 3))
    col = head.index("runs ended by error") + len("runs ended by error")
    assert body_b[:col].rstrip().endswith("3")  # the count beside "FAILED (3 of 3 ...)", not 1
    failed = dict(plots.series(rows, "failed_runs")["b"])
    assert failed[32000].mean == 3.0 and failed[64000].mean == 0.0


# 3 ------------------------------------------------------------------------------------------
def test_3_a_window_budget_goes_up_to_a_1m_window(capsys: pytest.CaptureFixture[str]) -> None:
    assert load_policy("c-default").with_budget(500_000).budget == 500_000
    assert load_policy("c-default").with_budget(500_000, window=1_000_000).budget == 500_000
    with pytest.raises(PresetError, match=re.escape("outside 32000..200000")):
        load_policy("c-default").with_budget(500_000, window=200_000)
    with pytest.raises(PresetError, match=r"\(H-11\)"):
        load_policy("h-direct").with_budget(500_000)  # a working budget stays H-11's
    argv = ["run", CODING, "--policy", "c-default", "--model", "claude-sonnet-4-6[1m]", "--budget", "500k"]
    assert main(argv) == 0
    assert "budget 500,000" in capsys.readouterr().out
    assert main(["run", CODING, "--policy", "c-default", "--budget", "500k"]) == 0
    err = capsys.readouterr().err
    assert "capped at 200,000" in err  # on a 200k model: capped as Claude Code caps it, and said


# 4 ------------------------------------------------------------------------------------------
@needs_real
def test_4_run_on_a_raw_session_log_points_to_import(capsys: pytest.CaptureFixture[str]) -> None:
    for verb in (["run", str(CC_LOG), "--policy", "c-default"], ["context", str(CC_LOG), "--at", "1"]):
        assert main(verb) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"`ctxbench import {CC_LOG} -o T.jsonl`" in err


# 5 ------------------------------------------------------------------------------------------
def test_5_tokenizers_measure_on_a_missing_folder_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tokenizers", "--measure", "--real", "/nonexistent"]) == 2
    assert capsys.readouterr().err == (
        "ctxbench: error: --real /nonexistent: no such folder of real recorded sessions\n"
    )


# 6 ------------------------------------------------------------------------------------------
def test_6_the_report_draws_two_panels_wide_and_collapses_the_budget_tables(tmp_path: Path) -> None:
    page = write_report(_failed_sweep(), tmp_path / "rep").read_text()
    assert "<img class='wide' src='compactions_failures_vs_budget.svg'" in page
    assert page.count("<details class='budget'>") == 3 and "<h3>" not in page


# 7 ------------------------------------------------------------------------------------------
def test_7_an_unknown_component_names_the_file_and_key(tmp_path: Path) -> None:
    p = tmp_path / "p.yaml"
    p.write_text("name: x\nestimator: anchored\neviction: {name: bach}\ncompaction: none\nmarks: none\n")
    with pytest.raises(PresetError) as exc:
        load_policy(str(p))
    assert str(exc.value).startswith(f"{p}: eviction.name: unknown eviction 'bach' (did you mean 'batch'?)")
    p.write_text("name: x\nestimator: anchord\neviction: batch\ncompaction: none\nmarks: none\n")
    with pytest.raises(PresetError, match=re.escape(f"{p}: estimator: unknown estimator 'anchord'")):
        load_policy(str(p))


# 8 ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "argv",
    [
        ["run", GAME, "--policy", "h-direct", "--budget", "80kk"],
        ["compare", GAME, "--format", "md"],
        ["runn"],
    ],
)
def test_8_argument_errors_are_one_line_without_usage(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "usage:" not in err and "error:" in err and "--help" in err


# 9 ------------------------------------------------------------------------------------------
def test_9_sweep_draws_no_progress_bar_on_a_pipe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.csv"
    argv = [
        "sweep",
        "traces/samples/game-short.jsonl",
        "--policy",
        "h-direct",
        "--budgets",
        "64k",
        "-o",
        str(out),
    ]
    assert main([a if a != "traces/samples/game-short.jsonl" else str(ROOT / a) for a in argv]) == 0
    assert capsys.readouterr().err == ""  # pytest's stderr is no terminal: no bar, no \r


def test_9_generate_and_import_say_wrote_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "g.jsonl"
    assert main(["generate", "game", "--turns", "300", "-o", str(out)]) == 0
    got = capsys.readouterr()
    assert got.err == ""
    assert got.out == f"wrote {out}: 300 turns (301 replies: the opening BEGIN reply, then one per turn)\n"
    assert main(["generate", "coding", "--turns", "3", "-o", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out}: 3 user turns, ")
    if REAL.is_dir():  # `import` says it on stdout as well
        assert main(["import", str(CC_LOG), "-o", str(tmp_path / "i.jsonl")]) == 0
        got = capsys.readouterr()
        assert f"wrote {tmp_path / 'i.jsonl'}" in got.out and "wrote" not in got.err


def test_9_help_says_serve_speaks_gemini_too() -> None:
    from ctxbench.bench.cli import VERBS

    assert "Gemini" in next(v.help for v in VERBS if v.name == "serve")


def test_9_compare_shows_no_vs_best_for_failed_rows_and_no_zero_spread() -> None:
    rows = [r for r in _failed_sweep() if r["budget"] == 32000]
    text = render(compare_rows(rows), "terminal")
    line_b = next(line for line in text.splitlines() if line.startswith("b "))
    assert " - " in line_b and "x " not in line_b.split("$")[1][:20]
    assert "±0.0000" not in text and "±0.0%" not in text and "±0.0" not in text  # seeds did not vary
    varied = compare_rows([row("a", s, 1.0 + s) for s in range(3)])
    assert "±" in render(varied, "terminal")


def test_9_run_statuses_list_every_ending_of_the_harness() -> None:
    src = "".join(p.read_text() for p in (ROOT / "sim" / "harness").glob("*.py"))
    named = set(re.findall(r'CallFailed\(\s*"([a-z_]+)"', src))
    assert named and named <= set(HARNESS_ENDINGS) and "still_over_budget" in HARNESS_ENDINGS
    doc = (ROOT / "sim" / "summary.py").read_text()
    assert all(f"`{s}`" in doc for s in HARNESS_ENDINGS)


def test_9_billed_shortens_long_session_paths() -> None:
    long = "-Users-someone-workspace-a-rather-long-project-name/0f3a9c2e-1111-2222-3333-444455556666.jsonl"
    short = short_path(long)
    assert len(short) <= 56 and short.endswith("0f3a9c2e-1111-2222-3333-444455556666.jsonl")
    assert short_path("a/b.jsonl") == "a/b.jsonl"


@needs_real
def test_9_recorded_labels_turns_and_context_shows_the_recorded_prompt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    t = tmp_path / "t.jsonl"
    assert main(["import", str(CC_LOG), "-o", str(t)]) == 0
    capsys.readouterr()
    rec = tmp_path / "r.jsonl"
    assert main(["run", str(t), "--policy", "recorded", "--records", str(rec)]) == 0
    records = [json.loads(line) for line in rec.read_text().splitlines()]
    assert "gameplay" not in {r["kind"] for r in records} and "turn" in {r["kind"] for r in records}
    capsys.readouterr()
    at = max(range(len(records)), key=lambda i: records[i]["true_input"])
    assert main(["context", str(t), "--at", str(at)]) == 0
    out = capsys.readouterr().out
    assert "as the recorded harness sent it" in out and "tips:" not in out and "levels:" not in out
    assert f"{records[at]['true_input']:,} / " in out  # the size the run records at that request
    assert main(["context", str(t), "--policy", "c-default", "--at", "3"]) == 0
    assert "is an imported session replayed by c-default" in capsys.readouterr().out


def test_9_the_worst_estimate_error_is_explained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", CODING, "--policy", "c-default"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("estimate error"))
    assert re.search(r"worst [+-][\d.]+% at request \d+ \(\w+: estimated [\d,]+, true [\d,]+\)", line)
    assert main(["run", CODING, "--policy", "c-default", "--json"]) == 0
    w = json.loads(capsys.readouterr().out)["worst_request"]
    assert set(w) == {"conversation", "index", "kind", "estimate", "true_input"}
    page = write_report(_failed_sweep(), tmp_path / "rep").read_text()
    assert "'est. err' compares the harness's own token estimate" in page
