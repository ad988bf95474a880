"""One flat record per provider call (DESIGN.md "Records, not statistics, in the loop")."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import IO, Any

from ctxbench.sim.core.names import MISS_CAUSES as MISS_CAUSES  # the one spelling, re-exported
from ctxbench.sim.core.names import RequestKind


@dataclass(slots=True)
class RequestRecord:
    conversation: str
    index: int  # position of this call in the conversation, retries included
    kind: RequestKind  # what the harness made the request for (sim/core/names.py)
    attempt: int  # 0 for the first try, n for the n-th retry
    time: float  # wall-clock start (s)
    game_time: float  # game clock at the request (H-18: compaction adds none)
    model: str
    true_input: int  # true tokens of the prompt
    estimate: int  # the harness estimator's number before the call
    uncached: int
    cache_read: int
    cache_write_5m: int
    cache_write_1h: int
    output: int
    cost: float
    ttft: float
    latency: float
    error: str = ""  # error kind ("" when the call succeeded)
    status: int = 200
    miss_cause: str = ""  # why cached tokens were lost ("" when none were)
    miss_tokens: int = 0  # tokens the previous request left cached that this one did not read
    edit: str = ""  # edits applied just before this call (eviction, trim, compaction)
    edit_detail: int = 0  # images evicted / pairs trimmed
    tokens_saved: int = 0  # true tokens removed by the compaction/trim before this call
    breakpoints: int = 0
    images: int = 0
    route: str = ""

    @property
    def input_total(self) -> int:
        return self.uncached + self.cache_read + self.cache_write_5m + self.cache_write_1h


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(RequestRecord))


def record_dict(r: RequestRecord) -> dict[str, Any]:
    return dict(zip(FIELDS, astuple(r), strict=True))


def _clean(v: Any) -> Any:
    return round(v, 9) if isinstance(v, float) else v


def write_jsonl(records: Iterable[RequestRecord], out: IO[str]) -> None:
    for r in records:
        out.write(json.dumps({k: _clean(v) for k, v in record_dict(r).items()}, separators=(",", ":")) + "\n")


def write_csv(records: Iterable[RequestRecord], out: IO[str]) -> None:
    w = csv.writer(out, lineterminator="\n")
    w.writerow(FIELDS)
    for r in records:
        w.writerow([_clean(v) for v in astuple(r)])


def save(records: Sequence[RequestRecord], path: str | Path) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)  # `run --records reports/x.csv` on a fresh checkout
    with p.open("w", encoding="utf-8", newline="") as f:
        (write_csv if p.suffix == ".csv" else write_jsonl)(records, f)


def load_jsonl(path: str | Path) -> list[RequestRecord]:
    out = []
    with Path(path).open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
                out.append(RequestRecord(**{k: d[k] for k in FIELDS if k in d}))
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{path}:{n}: not a ctxbench record: {exc}") from exc
    return out
