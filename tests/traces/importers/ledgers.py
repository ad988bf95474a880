"""The server's ledger beside a recorded harness log (tests/traces/importers/data/*.requests.jsonl.xz):
the requests it billed, and each one's usage as a trace records it."""

from __future__ import annotations

import json
import lzma
from pathlib import Path
from typing import Any

from ctxbench.traces.model import Usage


def billed_rows(path: Path) -> list[dict[str, Any]]:
    """Every ledger line of a billed request (refused ones carry no usage)."""
    with lzma.open(path, "rt", encoding="utf-8") as f:
        return [r for r in map(json.loads, filter(str.strip, f)) if "usage" in r]


def usage_of(row: dict[str, Any], output: bool = True) -> Usage:
    """A ledger row's usage; without its output tokens when `output` is False."""
    u = row["usage"]
    return Usage(
        u["uncached"], u["cache_read"], u["cache_write_5m"], u["cache_write_1h"], u["output"] if output else 0
    )
