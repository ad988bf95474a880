"""An imported session under fidelity in the view: what its log billed beside what the replay
predicted, request by request (`ctxbench fidelity`'s scoring, bench/fidelity/compare.py).

What comes from the bill: each reply's uncached input, cache read, cache write (5m + 1h) and
output, priced at the catalog's rates (`cost`). What is predicted: the same fields from the
replay under the `recorded` policy, with the outside events the bill shows replayed as observed
(as `ctxbench fidelity` does), priced the same way with the billed output (`pcost`). `within`:
every input field within fidelity's tolerance of the bill; `cause`: why a request missed, as
fidelity names it."""

from __future__ import annotations

from typing import Any

from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.fidelity.results import SessionFidelity
from ctxbench.bench.view.data import Codes
from ctxbench.traces.model import Trace


def score(trace: Trace, provider: str | None = None, model: str | None = None) -> SessionFidelity:
    """The fidelity of `trace` (one conversation), as `ctxbench fidelity` scores it."""
    return compare(trace, profile=provider, model=model)


def bill_json(sf: SessionFidelity, n: int, codes: Codes) -> dict[str, Any]:
    """Billed and predicted columns for the `n` requests of the view's run (a request with no
    bill, e.g. a reply the log kept no usage for, is null)."""
    cols: dict[str, list[Any]] = {
        k: [None] * n for k in ("read", "write", "unc", "out", "cost", "pread", "pwrite", "punc", "pcost")
    }
    within: list[int | None] = [None] * n
    cause: list[int] = [0] * n
    for rc in sf.requests:
        i = rc.index
        if not 0 <= i < n:
            continue
        b, p = rc.billed, rc.predicted
        cols["read"][i] = b.cache_read
        cols["write"][i] = b.cache_write_5m + b.cache_write_1h
        cols["unc"][i] = b.input_tokens
        cols["out"][i] = b.output_tokens
        cols["cost"][i] = round(rc.cost_billed, 6)
        cols["pread"][i] = p.cache_read
        cols["pwrite"][i] = p.cache_write_5m + p.cache_write_1h
        cols["punc"][i] = rc.input_predicted
        cols["pcost"][i] = round(rc.cost_predicted, 6)
        within[i] = int(rc.within)
        cause[i] = codes(rc.cause)
    scored = [rc for rc in sf.requests if 0 <= rc.index < n]
    return {
        **cols,
        "within": within,
        "cause": cause,
        "total": {
            "billed": round(sf.cost_billed, 6),
            "predicted": round(sf.cost_predicted, 6),
            "within": sum(1 for rc in scored if rc.within),
            "scored": len(scored),
        },
    }
