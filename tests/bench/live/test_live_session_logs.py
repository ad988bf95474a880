"""opencode, Gemini CLI and Cline from npm against `ctxbench serve` (bench/live/session_logs.py): the
importers read the session log each harness writes, and the replay predicts what the server billed.

Needs node and the packages in $CTXBENCH_NPM_PREFIX (.ci/run installs them); skipped with the
reason when they are absent."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.live.run_harness import npm_prefix
from ctxbench.bench.live.session_logs import missing, run
from ctxbench.bench.prefix.check import find_breaks
from ctxbench.bench.prefix.request_log import read_request_log
from ctxbench.traces.importers import import_paths


def _run(name: str, tmp_path: Path) -> tuple[Path, Path]:
    prefix = npm_prefix(None)
    why = missing(name, prefix)
    if why:
        pytest.skip(why)
    log, ledger, _script = run(name, tmp_path / name, prefix, timeout=240)
    return log, ledger


@pytest.mark.slow
def test_opencode_database_replays_every_bill(tmp_path: Path) -> None:
    """Three auto-compactions: the main conversation and each compaction request within
    tolerance, cost exact; the raw traffic explained by check-prefix."""
    log, ledger = _run("opencode", tmp_path)
    res = import_paths([log])
    assert (
        res.names[0].endswith("main")
        and sum(n.split("/")[-1].startswith("compaction-") for n in res.names) == 3
    )
    for tr in res.traces:
        sf = compare(tr)
        assert sf.share_within == 1.0, tr.header.meta["conversation"]
        assert sf.cost_predicted == pytest.approx(sf.cost_billed, rel=1e-9)
    with ledger.open(encoding="utf-8") as f:
        assert find_breaks(read_request_log(f, str(ledger))).ok


@pytest.mark.slow
def test_gemini_cli_session_log_replays_its_bills(tmp_path: Path) -> None:
    """`-p … --yolo`: every logged request within tolerance and the cost exact; the raw traffic
    clean for check-prefix. (A resumed and compressed session, which the CLI does not always log
    to the same file, is checked on two recorded runs: tests/traces/importers/test_gemini_cli.py.)"""
    log, ledger = _run("gemini-cli", tmp_path)
    sf = compare(import_paths([log]).main)
    assert sf.n >= 4 and sf.share_within == 1.0
    assert sf.cost_predicted == pytest.approx(sf.cost_billed, rel=1e-6)
    with ledger.open(encoding="utf-8") as f:
        assert find_breaks(read_request_log(f, str(ledger))).ok


@pytest.mark.slow
def test_cline_task_folder_replays_every_bill(tmp_path: Path) -> None:
    """Cline CLI 2.18.0 (the extension's task code) on the Anthropic API: its task folder imports,
    every request within tolerance, the input and cache figures the server's (its output one token
    more per request: tests/traces/importers/test_cline_task_live.py), and the `cline` preset
    predicts the same; the raw traffic clean for check-prefix."""
    from ctxbench.policies.preset import load_policy

    folder, ledger = _run("cline", tmp_path)
    tr = import_paths([folder]).main
    for sf in (compare(tr), compare(tr, policy=load_policy("cline"))):
        assert sf.n == 7 and sf.share_within == 1.0
    with ledger.open(encoding="utf-8") as f:
        assert find_breaks(read_request_log(f, str(ledger))).ok
