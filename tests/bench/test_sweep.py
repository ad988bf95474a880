"""Sweeps: budgets parsing, run keys, determinism, resume after SIGKILL, the Dask executor."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctxbench.bench.runs import RunTask, make_tasks, run_task, trace_hash
from ctxbench.bench.store import ledger_path, load_ledger, read_results
from ctxbench.bench.sweep import run_sweep
from ctxbench.sim.core.values import parse_sizes

ROOT = Path(__file__).resolve().parents[2]
SHORT = str(ROOT / "traces/samples/game-short.jsonl")


def test_parse_sizes() -> None:
    assert parse_sizes("32k:48k:8k") == [32000, 40000, 48000]
    assert parse_sizes("32k,120000") == [32000, 120000]
    with pytest.raises(ValueError, match="START:STOP:STEP"):
        parse_sizes("1:2")
    with pytest.raises(ValueError, match="80k"):
        parse_sizes("lots")


def test_key_depends_on_every_part() -> None:
    t = RunTask(SHORT, trace_hash(SHORT), "h-direct", "p1", 64000, "anthropic", 0)
    keys = {t.key}
    for change in (
        {"trace_hash": "x"},
        {"policy_hash": "p2"},
        {"budget": 72000},
        {"provider": "other"},
        {"seed": 1},
        {"version": "9.9"},
        {"policy": "h-openrouter"},
    ):
        keys.add(RunTask(**{**t.__dict__, **change}).key)
    assert len(keys) == 8


def test_gen_spec_traces() -> None:
    assert trace_hash("gen:game?turns=5&seed=1") == trace_hash("gen:game?seed=1&turns=5")
    assert trace_hash("gen:game?turns=5&seed=1") != trace_hash("gen:game?turns=5&seed=2")
    with pytest.raises(ValueError, match="valid"):
        trace_hash("gen:game?nope=1")
    (task,) = make_tasks(["gen:game?turns=5&seed=1"], ["h-direct"], [None], [None], [0])
    assert run_task(task)["requests"] >= 5


def test_results_do_not_depend_on_order_or_workers(tmp_path: Path) -> None:
    tasks = make_tasks([SHORT], ["h-direct", "h-keep-last-2"], [40000, 80000], [None], [0, 1])
    a = run_sweep(tasks, tmp_path / "a.csv", jobs=1, stream=None)
    b = run_sweep(list(reversed(tasks)), tmp_path / "b.csv", jobs=2, stream=None)
    assert a.computed == b.computed == 8
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    again = run_sweep(tasks, tmp_path / "a.csv", jobs=1, stream=None)
    assert (again.reused, again.computed) == (8, 0)


def test_torn_last_line_is_repaired(tmp_path: Path) -> None:
    tasks = make_tasks([SHORT], ["h-direct"], [40000, 80000], [None], [0])
    run_sweep(tasks, tmp_path / "r.csv", jobs=1, stream=None)
    lp = ledger_path(tmp_path / "r.csv")
    data = lp.read_bytes()
    lp.write_bytes(data + data.splitlines(keepends=True)[0][:25])  # a kill in the middle of a write
    st = run_sweep(tasks, tmp_path / "r.csv", jobs=1, stream=None)
    assert (st.reused, st.computed) == (2, 0)
    assert lp.read_bytes() == data


def _sweep_cmd(out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "ctxbench.bench.cli",
        "sweep",
        "traces/samples/game-300.jsonl",
        "--policy",
        "h-direct",
        "--policy",
        "h-keep-last-2",
        "--budgets",
        "40k:200k:16k",
        "--seeds",
        "10",
        "-o",
        str(out),
        "-j",
        "2",
        *extra,
    ]


def test_killed_sweep_resumes_nothing_lost_nothing_recomputed(tmp_path: Path) -> None:
    out = tmp_path / "sweep.csv"
    lp = ledger_path(out)
    total = 2 * 11 * 10  # policies x budgets x seeds = 220 runs
    proc = subprocess.Popen(
        _sweep_cmd(out, "--quiet"),
        cwd=ROOT,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            if lp.exists() and lp.read_bytes().count(b"\n") >= 30:
                break
            if proc.poll() is not None:
                pytest.fail(
                    f"sweep ended before it could be killed: {proc.stderr.read() if proc.stderr else ''}"
                )
            time.sleep(0.005)
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its worker processes, mid-run
    finally:
        proc.wait(timeout=30)
    before = load_ledger(lp)  # repairs a torn last line
    first_part = lp.read_bytes()
    assert 30 <= len(before) < total, "the kill must land part-way"
    res = subprocess.run(
        _sweep_cmd(out, "--quiet", "--json"), cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr
    stats = json.loads(res.stdout)
    assert stats["total"] == total
    assert stats["reused"] == len(before)  # nothing lost
    assert stats["computed"] == total - len(before)  # nothing recomputed
    final = lp.read_bytes()
    assert final.startswith(first_part)
    keys = [json.loads(x)["key"] for x in final.splitlines()]
    assert len(keys) == total == len(set(keys))  # every run present once
    rows = read_results(out)
    assert len(rows) == total and len({r["key"] for r in rows}) == total


def _children(pid: int) -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            out.update(int(x) for x in (task / "children").read_text().split())
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc to find the workers")
def test_killed_sweep_leaves_no_worker_behind(tmp_path: Path) -> None:
    """SIGKILL to the sweep process alone (not its group): its pool workers end too."""
    out = tmp_path / "sweep.csv"
    lp = ledger_path(out)
    proc = subprocess.Popen(
        _sweep_cmd(out, "--quiet"), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            workers |= _children(proc.pid)
            if len(workers) >= 2 and lp.exists() and lp.read_bytes().count(b"\n") >= 5:
                break
            time.sleep(0.01)
        assert len(workers) >= 2 and proc.poll() is None, "the sweep must be killed while its pool runs"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.05)
        assert not [w for w in workers if _alive(w)], "pool workers outlived the killed sweep"
    finally:
        for w in workers:
            with contextlib.suppress(OSError):
                if _alive(w):
                    os.kill(w, signal.SIGKILL)


@pytest.mark.slow  # starts a local Dask cluster (~5 s)
def test_dask_local_cluster(tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed")
    tasks = make_tasks([SHORT], ["h-direct"], [40000, 120000], [None], [0, 1])
    st = run_sweep(tasks, tmp_path / "d.csv", jobs=2, scheduler="local-dask", stream=None)
    run_sweep(tasks, tmp_path / "p.csv", jobs=1, stream=None)
    assert st.computed == 4
    assert (tmp_path / "d.csv").read_bytes() == (tmp_path / "p.csv").read_bytes()


def test_an_unreachable_scheduler_is_named_quickly() -> None:
    pytest.importorskip("distributed", reason="the `dask` extra is not installed")
    from ctxbench.bench.sweep import execute

    tasks = make_tasks(["traces/samples/game-60.jsonl"], ["h-direct"], [None], [None], [0])
    with pytest.raises(ValueError, match=r"tcp://127.0.0.1:9: could not reach the Dask scheduler within"):
        execute(tasks, lambda row: None, 1, "tcp://127.0.0.1:9")


def test_workers_run_from_shipped_trace_contents_not_paths(tmp_path: Path) -> None:
    """What Dask workers started in another folder do: the trace arrives as data, so a relative
    path that does not exist where the worker runs is never opened."""
    from ctxbench.bench.runs import run_batch
    from ctxbench.traces.generators.spec import open_trace

    sample = "traces/samples/game-60.jsonl"
    tasks = make_tasks([sample], ["h-direct"], [None], [None], [0])
    shipped = {"elsewhere/game-60.jsonl": open_trace(sample)}
    moved = [dataclasses.replace(t, trace="elsewhere/game-60.jsonl") for t in tasks]
    rows = run_batch(moved, shipped)
    assert rows[0]["requests"] > 60 and rows[0]["trace"] == "elsewhere/game-60.jsonl"
