"""Fidelity: replay imported real sessions and compare each request's predicted usage with what the
provider billed. The one public entry of the package; its modules:

- `compare` scores one trace (`compare(trace) -> SessionFidelity`); `results` the records it fills;
- `replay` runs the recorded harness's behaviour on the provider model; `outside`, `causes`,
  `auto`, `gateway`, `forks` name and replay what the client model alone cannot predict;
- `discover`, `logs`, `other` find and replay every log under a folder; `report` and `tables`
  write `bench/fidelity_report.md`; `fields` the `--json` shape.

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
