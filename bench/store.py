"""The sweep's resumable store: an append-only JSONL ledger, one line per finished run, consolidated
into a columnar CSV (no extra dependency).

Why a ledger: a line is written (and flushed to the kernel) the moment a run finishes, by one
writer (the sweep's parent process), so killing the sweep at any instant loses at most the line
being written; on resume a torn last line is cut off and every key already present is skipped
(peers.md "Ideas worth absorbing" 3). The CSV is rebuilt from the ledger, sorted, so the same runs
always give a byte-identical file whatever order they finished in.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from ctxbench.bench.runs import ID_COLUMNS, METRIC_COLUMNS, failure_kinds

SORT_KEY = ("trace", "policy", "budget", "provider", "seed")


def ledger_path(results: str | Path) -> Path:
    """`sweep.csv` -> `sweep.runs.jsonl` (kept beside the results file)."""
    p = Path(results)
    return p.with_name(p.stem + ".runs.jsonl")


def load_ledger(path: str | Path, repair: bool = True) -> dict[str, dict[str, Any]]:
    """Rows by key. A torn last line (a kill during a write) is removed when `repair` is set;
    a bad line anywhere else is an error naming it."""
    p = Path(path)
    if not p.exists():
        return {}
    data = p.read_bytes()
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        if repair:
            with p.open("r+b") as f:
                f.truncate(cut)
        data = data[:cut]
    rows: dict[str, dict[str, Any]] = {}
    for n, line in enumerate(data.decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            key = row["key"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{p}:{n}: not a sweep ledger line ({exc})") from exc
        rows.setdefault(key, row)
    return rows


class Ledger:
    """Append-only writer: one JSON line per finished run, flushed at once."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f: IO[str] = self.path.open("a", encoding="utf-8")

    def write(self, row: dict[str, Any]) -> None:
        self._f.write(json.dumps(row, sort_keys=True, separators=(",", ":")) + "\n")
        self._f.flush()

    def sync(self) -> None:
        self._f.flush()
        os.fsync(self._f.fileno())

    def close(self) -> None:
        self._f.close()


def columns(rows: list[dict[str, Any]]) -> list[str]:
    return [*ID_COLUMNS, *METRIC_COLUMNS, *(f"failures_{k}" for k in failure_kinds(rows))]


def sort_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: tuple(r.get(k, "") for k in SORT_KEY))


def write_results(rows: Iterable[dict[str, Any]], path: str | Path) -> int:
    """Write the consolidated CSV (sorted rows, fixed columns); returns the row count."""
    rs = sort_rows(rows)
    cols = columns(rs)
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        for r in rs:
            w.writerow([r.get(c, 0 if c.startswith("failures_") else "") for c in cols])
    tmp.replace(p)
    return len(rs)


def _typed(v: str) -> Any:
    try:
        return int(v)
    except ValueError:
        pass
    try:
        return float(v)
    except ValueError:
        return v


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a results CSV (numbers typed), or of a ledger (`.jsonl`) directly."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{path}: no such results file")
    if p.suffix == ".jsonl":
        return sort_rows(load_ledger(p, repair=False).values())
    with p.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in ("policy", "budget", "seed", "cost") if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not a ctxbench results file (missing columns: {', '.join(missing)})")
        return [
            {
                k: (
                    v
                    if k
                    in (
                        "key",
                        "trace",
                        "trace_hash",
                        "policy",
                        "policy_hash",
                        "budget_means",
                        "provider",
                        "version",
                        "status",
                    )
                    else _typed(v)
                )
                for k, v in row.items()
            }
            for row in reader
        ]
