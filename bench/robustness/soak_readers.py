"""The reader half of the soak: malformed traces, request logs and importer logs through the CLI.

Every file holds valid lines with one or two mutated (`ctxbench.bench.robustness.fuzz_inputs`); each trace
line is also decoded on its own (`loads_line`), so every fuzzed line meets the reader even when an
earlier line of its file already stopped the file. Counted: lines, files, CLI runs by exit code,
runs whose error was not one line, and tracebacks (with the first few kept for the report).
"""

from __future__ import annotations

import json
import random
import tempfile
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.bench.robustness.fuzz_inputs import IMPORTER_SEEDS, importer_input, mutate_lines, run_cli

SAMPLES = Path(__file__).resolve().parents[2] / "traces" / "samples"


@dataclass
class ReaderCounts:
    lines: int = 0
    files: int = 0
    runs: Counter[str] = field(default_factory=Counter)  # "<verb> exit <code>"
    not_one_line: int = 0
    tracebacks: int = 0
    examples: list[str] = field(default_factory=list)

    def note(self, what: str, text: str) -> None:
        if len(self.examples) < 5:
            self.examples.append(f"{what}\n{text}")


def _seed_lines(name: str, limit: int) -> list[Any]:
    with (SAMPLES / name).open(encoding="utf-8") as f:
        return [json.loads(line) for line, _ in zip(f, range(limit), strict=False)]


def _check(counts: ReaderCounts, verb: str, argv: list[str], what: str) -> None:
    out = run_cli(argv)
    counts.runs[f"{verb} exit {out.code}"] += 1
    if out.traceback:
        counts.tracebacks += 1
        counts.note(what, out.traceback)
    elif not out.clean:
        counts.not_one_line += 1
        counts.note(what, out.stderr)


def fuzz_trace_lines(counts: ReaderCounts, n_lines: int, rng: random.Random, folder: Path) -> None:
    """Traces of 6-15 lines (the start of a sample), with 1-3 lines mutated; each file
    through `check-prefix` (reader + the request log it implies), one in four also through `run`."""
    from ctxbench.traces.format import TraceError, loads_line

    seeds = [_seed_lines(n, 200) for n in ("coding-short.jsonl", "game-short.jsonl")]
    path = folder / "t.jsonl"
    while counts.lines < n_lines:
        seed = rng.choice(seeds)
        lines = seed[: rng.randrange(6, 16)]  # a prefix: every tool_result keeps its tool_use
        data = mutate_lines(lines, rng, n_bad=rng.choice((1, 1, 2, 3)))
        for i, raw in enumerate(data, 1):
            try:
                loads_line(raw, path=str(path), lineno=i)
            except TraceError:
                pass
            except Exception:
                counts.tracebacks += 1
                counts.note(f"loads_line {raw[:200]!r}", traceback.format_exc())
        counts.lines += len(data)
        counts.files += 1
        path.write_bytes(b"\n".join(data) + b"\n")
        _check(counts, "check-prefix", ["check-prefix", str(path)], f"check-prefix {data!r:.400}")
        if counts.files % 4 == 0:
            argv = ["run", str(path), "--policy", "c-default"]
            _check(counts, "run", argv, f"run {data!r:.400}")


def _request_log_seed() -> list[Any]:
    tools = [{"name": "Bash", "input_schema": {"type": "object", "properties": {"c": {"type": "string"}}}}]
    msgs: list[Any] = [{"role": "user", "content": "hi"}]
    out: list[Any] = []
    for k in range(4):
        out.append(
            {
                "session_id": "s",
                "body": {"model": "m", "tools": tools, "system": "sys", "messages": list(msgs)},
            }
        )
        msgs += [
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"a{k}"}],
                "tool_calls": [{"id": f"c{k}"}],
            },
            {"role": "tool", "tool_call_id": f"c{k}", "content": "ok"},
        ]
    out.append(
        {"model": "m", "input": [{"role": "user", "content": "x"}, {"type": "function_call", "call_id": "1"}]}
    )
    return out


def fuzz_request_logs(counts: ReaderCounts, n_lines: int, rng: random.Random, folder: Path) -> None:
    seed = _request_log_seed()
    path = folder / "requests.jsonl"
    done = 0
    while done < n_lines:
        data = mutate_lines(seed, rng, n_bad=rng.choice((1, 2)))
        path.write_bytes(b"\n".join(data) + b"\n")
        done += len(data)
        counts.lines += len(data)
        counts.files += 1
        _check(counts, "check-prefix", ["check-prefix", str(path)], f"check-prefix log {data!r:.400}")


def fuzz_importers(counts: ReaderCounts, n_lines: int, rng: random.Random, folder: Path) -> None:
    done = 0
    fmts = sorted(IMPORTER_SEEDS)
    while done < n_lines:
        fmt = fmts[counts.files % len(fmts)]
        name, data, n = importer_input(fmt, rng)
        sub = folder / f"imp{counts.files % 2}"
        sub.mkdir(exist_ok=True)
        src = sub / name
        src.write_bytes(data)
        done += n
        counts.lines += n
        counts.files += 1
        argv = ["import", str(src), "--format", fmt, "-o", str(sub / "out.jsonl")]
        _check(counts, f"import {fmt}", argv, f"import {fmt} {data!r:.400}")


def fuzz_containers(counts: ReaderCounts, n_lines: int, rng: random.Random, folder: Path) -> None:
    """Damaged compressed and zipped files (bench/robustness/fuzz_containers.py): a trace and each
    importer's log under every compression suffix, Inspect `.eval` zips and opencode databases,
    through every verb that reads files and the folder modes; a file counts its plain lines."""
    from ctxbench.bench.robustness.fuzz_containers import (
        container_runs,
        damaged_db,
        damaged_eval,
        damaged_files,
    )

    trace = (SAMPLES / "coding-short.jsonl").read_bytes()
    fmts = sorted(IMPORTER_SEEDS)
    done = k = 0
    while done < n_lines:
        k += 1
        sub = folder / f"c{k % 2}"
        if sub.exists():
            for old in sub.iterdir():
                old.unlink()
        sub.mkdir(exist_ok=True)
        fmt: str | None = None if k % 4 == 0 else fmts[k % len(fmts)]
        if fmt is None:
            files, n = damaged_files(trace, "t.jsonl", rng), trace.count(b"\n")
        else:
            name, data, n = importer_input(fmt, rng) if rng.random() < 0.3 else _plain_seed(fmt)
            files = damaged_files(data, name, rng)
            if fmt == "inspect-ai":
                files.append(("log.eval", damaged_eval({"header.json": b"{}", "samples/1.json": data}, rng)))
            if fmt == "opencode":
                files.append(damaged_db(rng))
        for name, data in files:
            (sub / name).write_bytes(data)
            for label, argv in container_runs(sub / name, fmt, folder):
                folder_mode = label.endswith("folder") or label == "fidelity --all-real"
                if folder_mode and rng.random() < 0.8:
                    continue  # the folder modes read every file in it: one run in five
                _check(counts, f"damaged {label}", argv, f"{label} {name} {data[:200]!r}")
            (sub / name).unlink()
            done += n
            counts.lines += n
            counts.files += 1


def _plain_seed(fmt: str) -> tuple[str, bytes, int]:
    name, seed, jsonl = IMPORTER_SEEDS[fmt]
    if jsonl:
        return name, b"\n".join(json.dumps(x).encode() for x in seed) + b"\n", len(seed)
    return name, json.dumps(seed).encode(), 1


def soak_readers(n_lines: int, seed: int = 0) -> ReaderCounts:
    """At least `n_lines` fuzzed lines: 50% trace lines, 20% request-log lines, 15% importer logs,
    15% lines in damaged compressed or zipped files."""
    counts = ReaderCounts()
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="ctxbench-soak-") as tmp:
        folder = Path(tmp)
        fuzz_trace_lines(counts, n_lines * 5 // 10, rng, folder)
        fuzz_request_logs(counts, n_lines * 2 // 10, rng, folder)
        fuzz_containers(counts, n_lines * 15 // 100, rng, folder)
        fuzz_importers(counts, n_lines - counts.lines, rng, folder)
    return counts
