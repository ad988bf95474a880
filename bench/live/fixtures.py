"""Small, shareable request logs from live harness runs (tests/bench/data/live/):

    python -m ctxbench.bench.live.fixtures reports/live/claude-code/requests.jsonl OUT.jsonl.xz

The `ctxbench serve` ledger already has its keys redacted (sim/serve/record.py). What is left out
here is bulk a test does not need and a repository should not carry: every string longer than
`LIMIT` characters (the harness's own system prompt and tool descriptions, the 25 KB shell
outputs of the task) becomes its first 48 characters and a digest of the whole. Equal strings stay
equal and different ones stay different, so every prefix relation of the log is kept (which
request contains which, where one diverges, which system field changed); only the byte counts,
and so the tokens a break re-bills, shrink. The result is written xz-compressed (the same
conversation is re-sent with every request).
"""

from __future__ import annotations

import hashlib
import json
import lzma
import sys
from pathlib import Path
from typing import Any

LIMIT = 240  # characters: the Claude Code billing header (~110) and short instructions stay whole
KEEP = 48  # characters of a long string kept in front of its digest


def shrink(value: Any) -> Any:
    """`value` with every long string replaced by its head and digest (module docstring)."""
    if isinstance(value, str) and len(value) > LIMIT:
        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return f"{value[:KEEP]}… <{len(value)} chars, sha256 {digest}>"
    if isinstance(value, dict):
        return {k: shrink(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shrink(v) for v in value]
    return value


def write_fixture(src: Path, dest: Path) -> int:
    """Write the shrunk ledger `src` to `dest` (xz); returns the number of lines."""
    lines = [json.loads(x) for x in src.read_text(encoding="utf-8").splitlines() if x.strip()]
    text = "".join(json.dumps(shrink(x), ensure_ascii=False, sort_keys=True) + "\n" for x in lines)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with lzma.open(dest, "wt", encoding="utf-8", preset=9) as f:
        f.write(text)
    return len(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m ctxbench.bench.live.fixtures LEDGER.jsonl OUT.jsonl.xz", file=sys.stderr)
        return 2
    n = write_fixture(Path(args[0]), Path(args[1]))
    print(f"wrote {args[1]}: {n} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
