"""`ctxbench billed FOLDER` against ccusage, whole process (issue 28: at least as fast as the tool users
compare it with; ccusage 20.x reads a folder of Claude Code logs natively).

Each command is started `RUNS` times, in turn (ctxbench, reference, ctxbench, ...), and timed from
outside: wall seconds and the CPU seconds of the finished child (`resource.getrusage`). Reported, never
asserted: the medians and `billed_over_ccusage` (wall and CPU) in the benchmark's extra info and on
the summary line. The reference is ccusage when `$CCUSAGE` names its executable (run as `ccusage
session --offline` on a `CLAUDE_CONFIG_DIR` whose `projects` is the folder), else the floor: a bare
Python process reading every byte of the folder (`billed_over_floor`).
The folder is `$CTXBENCH_BILLED_DIR`, else one made of the shared Claude Code logs copied until
~45 MB (the size of the folder the issue timed). Run with
    python -m pytest bench/speed/test_bench_billed.py --benchmark-enable -s -p no:cacheprovider
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

RUNS = 5
SIZE = 45_000_000
FOLDERS = ("sniffly", "claude-code-log", "cua-sandbox-apps", "spotter", "claude-code-viewer")  # Claude Code
REAL = Path(os.environ.get("CTXBENCH_REAL", Path(__file__).parents[2] / ".." / "shared" / "traces-real"))
FLOOR = "import pathlib,sys; [p.read_bytes() for p in pathlib.Path(sys.argv[1]).rglob('*.jsonl')]"


def _folder(tmp: Path) -> Path:
    given = os.environ.get("CTXBENCH_BILLED_DIR")
    if given:
        return Path(given)
    if not REAL.is_dir():
        pytest.skip("no real logs (set CTXBENCH_REAL or CTXBENCH_BILLED_DIR)")
    out, k = tmp / "projects", 0
    while not out.exists() or sum(f.stat().st_size for f in out.rglob("*.jsonl")) < SIZE:
        k += 1
        for name in FOLDERS:
            if (REAL / name).is_dir():
                shutil.copytree(REAL / name, out / f"c{k}" / name, ignore=shutil.ignore_patterns("*.md"))
    return out


def _time(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of `cmd`, its output thrown away."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def test_billed_folder_against_reference(benchmark: Any, tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    ctx = [str(Path(sys.executable).with_name("ctxbench")), "billed", str(folder)]
    env = dict(os.environ)
    ccusage = os.environ.get("CCUSAGE")
    if ccusage:
        (tmp_path / "config").mkdir(exist_ok=True)
        link = tmp_path / "config" / "projects"
        if not link.exists():
            link.symlink_to(folder.resolve())
        ref, name = [ccusage, "session", "--offline"], "ccusage"
        env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "config")
    else:
        ref, name = [sys.executable, "-c", FLOOR, str(folder)], "floor"
    _time(ctx, env), _time(ref, env)  # warm-up: the page cache, compiled modules
    ours, theirs = [], []
    for _ in range(RUNS):
        ours.append(_time(ctx, env))
        theirs.append(_time(ref, env))
    benchmark.pedantic(lambda: None, rounds=1)
    med = {
        f"{who}_{what}_s": statistics.median(x[i] for x in runs)
        for who, runs in (("billed", ours), (name, theirs))
        for i, what in enumerate(("wall", "cpu"))
    }
    ratio = {
        f"billed_over_{name}_{what}": med[f"billed_{what}_s"] / med[f"{name}_{what}_s"]
        for what in ("wall", "cpu")
    }
    benchmark.extra_info.update(med | ratio)
    mb = sum(f.stat().st_size for f in folder.rglob("*.jsonl")) / 1e6
    print(
        f"\nbilled on {mb:.0f} MB, whole process, medians of {RUNS}: "
        + ", ".join(f"{k} {v:.3f}" for k, v in (med | ratio).items())
    )
