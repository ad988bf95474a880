"""Fidelity: replay imported real sessions and compare each request's predicted usage with what the
provider billed. The one public entry of the package; its modules:

- `compare` scores one trace (`compare(trace) -> SessionFidelity`); `results` the records it fills;
- `replay` runs the recorded harness's behaviour on the provider model; `outside`, `causes`,
  `auto`, `gateway`, `forks` name and replay what the client model alone cannot predict;
- `discover`, `logs`, `other` find and replay every log under a folder; `report` and `tables`
  write `bench/fidelity_report.md`; `fields` the `--json` shape.

- `policy` names a divergence "policy: ..." under `--policy P` other than `recorded`.

Costs (issue 29: one meaning each, named so in the output; priced at the catalog's list prices,
sim/data/prices.yaml):

- **billed** (`fidelity`'s "cost billed", `ctxbench billed`): the provider's bill, each request's
  recorded usage priced as charged;
- **predicted by the replay** (`fidelity`, policy `recorded`): the recorded harness replayed on the
  provider model, with nothing taken from the bill but its first request's read of a static prefix
  an earlier session wrote (`meta.warm_tokens`, written at t = -1 s) and each request's uncached
  tail after its last mark (in no block of the trace); the outside events the bill shows (lookup
  failures, outside warming, unlogged turn content) are not predicted: "with them" is an
  explanation, equal to the bill when they explain every miss;
- **predicted by policy P** (`fidelity --policy P`): P's own replay of the conversation the same way
  (warm prefix, uncached tail, billed outputs), P taking what the trace knows (bench/trace_knows.py),
  its own summary requests included; no outside event is inferred;
- **`run`'s cost**: a simulation, not a replay against a bill: it starts with an empty cache (its
  first request writes the static prefix another session had written) and has no uncached tail.
  On spotter 258c7280 (Claude Code 2.1.39, Opus 4.6, 1h marks): billed $11.962; predicted by the
  replay $10.588 (its two lookup failures, #31 and #150, re-wrote 145k tokens: +$1.374); `run
  --policy recorded` $10.756 = the replay with an empty cache at the start (+$0.169 for writing
  the 17,842-token prefix at the 1h price) and without the 183-token uncached tail (-$0.001).

Names are imported on first use, so `from ctxbench.bench.fidelity import discover` does not import
the replay machinery.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxbench.bench.fidelity.compare import compare
    from ctxbench.bench.fidelity.discover import Found, Log, discover
    from ctxbench.bench.fidelity.logs import replay_log
    from ctxbench.bench.fidelity.report import render
    from ctxbench.bench.fidelity.results import RequestCompare, SessionFidelity

_HOME = {
    "compare": "compare",
    "Found": "discover",
    "Log": "discover",
    "discover": "discover",
    "replay_log": "logs",
    "render": "report",
    "RequestCompare": "results",
    "SessionFidelity": "results",
}
__all__ = [
    "Found",
    "Log",
    "RequestCompare",
    "SessionFidelity",
    "compare",
    "discover",
    "render",
    "replay_log",
]


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
