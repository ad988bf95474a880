"""The view's data: runs and bills in columns, compact enough for a 5,000-request session.

Every per-request field is one array (strings as indexes into a shared code list); each prompt is
its delta against the previous prompt of its conversation (bench/view/collect.py); every block is
stored once. The shape (`FORMAT`) is what bench/view/page.py's script reads:

    {"format": 1, "kind": "run" | "compare" | "fidelity", "title", "trace", "codes": [str...],
     "blocks": {"kind", "role", "tok", "dig", "name"}, "runs": [RUN...], "billed": BILL | null}
    RUN  = {"label", "policy", "provider", "model", "window", "thresholds": [[name, tokens]...],
            "summary": {...}, "req": {column: [...]}, "prompt": {"base", "keep", "add"}}
    BILL = {"read", "write", "unc", "out", "cost", "pcost", "within", "cause"}  (one per reply)
"""

from __future__ import annotations

import json
from typing import Any

from ctxbench.bench.view.collect import Blocks, Observed

FORMAT = 1


class Codes:
    """Strings as small integers: one list for the whole page."""

    def __init__(self) -> None:
        self.names: list[str] = [""]  # code 0 is "nothing" (no miss, no edit, no error)
        self.index: dict[str, int] = {"": 0}

    def __call__(self, text: str) -> int:
        got = self.index.get(text)
        if got is None:
            got = self.index[text] = len(self.names)
            self.names.append(text)
        return got


def run_json(ob: Observed, codes: Codes, label: str = "") -> dict[str, Any]:
    """One run: its requests in columns, its prompts, its budget and thresholds, its totals."""
    rs = ob.records
    s = ob.summary
    return {
        "label": label or ob.policy.name,
        "policy": ob.policy.name,
        "provider": ob.serving.profile,
        "model": ob.serving.model,
        "window": ob.window,
        "thresholds": [[n, t] for n, t in ob.thresholds],
        "summary": {
            "requests": s.requests,
            "cost": round(s.cost, 6),
            "cache_read_share": round(s.cache_read_share, 4),
            "compactions": s.compactions,
            "evictions": s.evictions,
            "misses": s.misses,
            "status": s.status,
        },
        "req": {
            "conv": [codes(r.conversation) for r in rs],
            "kind": [codes(r.kind) for r in rs],
            "read": [r.cache_read for r in rs],
            "write": [r.cache_write_5m + r.cache_write_1h for r in rs],
            "unc": [r.uncached for r in rs],
            "out": [r.output for r in rs],
            "cost": [round(r.cost, 6) for r in rs],
            "size": [r.true_input for r in rs],
            "est": [r.estimate for r in rs],
            "miss": [codes(r.miss_cause) for r in rs],
            "mtok": [r.miss_tokens for r in rs],
            "edit": [codes(r.edit) for r in rs],
            "saved": [r.tokens_saved for r in rs],
            "err": [codes(r.error) for r in rs],
        },
        "prompt": {"base": ob.prompts.base, "keep": ob.prompts.keep, "add": ob.prompts.add},
    }


def blocks_json(blocks: Blocks, codes: Codes) -> dict[str, Any]:
    return {
        "kind": [codes(k) for k in blocks.kind],
        "role": [codes(r) for r in blocks.role],
        "tok": blocks.tokens,
        "dig": blocks.digest,
        "name": [codes(n) for n in blocks.name],
    }


def page_data(
    kind: str,
    title: str,
    trace: str,
    runs: list[Observed],
    blocks: Blocks,
    billed: dict[str, Any] | None = None,
    labels: list[str] | None = None,
    codes: Codes | None = None,
) -> dict[str, Any]:
    """The page's data; `codes` is the one `billed` was encoded with, if any."""
    codes = codes or Codes()
    labels = labels or [""] * len(runs)
    out = {
        "format": FORMAT,
        "kind": kind,
        "title": title,
        "trace": trace,
        "runs": [run_json(ob, codes, lab) for ob, lab in zip(runs, labels, strict=True)],
        "blocks": blocks_json(blocks, codes),
        "billed": billed,
    }
    out["codes"] = codes.names
    return out


def dumps(data: dict[str, Any]) -> str:
    """Compact JSON that is safe inside a `<script>` element (no `</` can close it)."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")
