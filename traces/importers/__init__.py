"""Importers of real recorded sessions (traces-real/FORMATS.md), one module per format.

Each importer keeps the recorded usage as ground truth on the trace (`MessageEvent.usage`), derives
true block sizes from it where it can (`tokens.py`), and lists in its report what the source format
cannot provide. Each is registered once as an `importer` in sim/core/registry.py; `IMPORTERS`
(format name → function) and `FORMATS` are read from there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from ctxbench.sim.core.registry import Registered, register
from ctxbench.traces.format import TraceError
from ctxbench.traces.importers.base import ImportFailure, ImportReport, ImportResult, current_line
from ctxbench.traces.importers.claude_code import import_claude_code
from ctxbench.traces.importers.claude_trace import import_claude_trace
from ctxbench.traces.importers.cline import import_cline
from ctxbench.traces.importers.cline_task import import_cline_task
from ctxbench.traces.importers.codex import import_codex
from ctxbench.traces.importers.detect import detect
from ctxbench.traces.importers.gemini_cli import import_gemini_cli
from ctxbench.traces.importers.inspect_ai import import_inspect_ai
from ctxbench.traces.importers.opencode import import_opencode
from ctxbench.traces.importers.openhands import import_openhands
from ctxbench.traces.importers.swe_agent import import_swe_agent

Importer = Callable[[list[Path]], ImportResult]

for _name, _fn in (
    ("claude-code", import_claude_code),
    ("claude-trace", import_claude_trace),
    ("codex", import_codex),
    ("cline", import_cline),
    ("cline-task", import_cline_task),
    ("gemini-cli", import_gemini_cli),
    ("inspect-ai", import_inspect_ai),
    ("opencode", import_opencode),
    ("openhands", import_openhands),
    ("swe-agent", import_swe_agent),
):
    register("importer", _name)(_fn)
IMPORTERS: Mapping[str, Importer] = Registered("importer")  # a view of the registry
FORMATS = tuple(IMPORTERS)

__all__ = ["FORMATS", "IMPORTERS", "ImportFailure", "ImportReport", "ImportResult", "detect", "import_paths"]


def import_paths(paths: list[Path], fmt: str | None = None) -> ImportResult:
    """Import files of one format (auto-detected from the first file unless `fmt` is given)."""
    if not paths:
        raise ImportFailure("<none>", "no input files")
    name = fmt or detect(paths[0])
    if name not in IMPORTERS:
        raise ImportFailure(str(paths[0]), f"unknown format {name!r}; known formats: {', '.join(IMPORTERS)}")
    if fmt is None:
        for p in paths[1:]:
            other = detect(p)
            if other != name:
                raise ImportFailure(
                    str(p), f"is {other}, but {paths[0]} is {name}: import one format at a time"
                )
    try:
        return IMPORTERS[name](paths)
    except (ImportFailure, TraceError):
        raise
    except (TypeError, AttributeError, KeyError, IndexError, ValueError, OverflowError, RecursionError) as e:
        # A shape the importer does not expect (e.g. a list where the format has an object): one
        # line naming the file and what was wrong, never a traceback.
        what = "nested too deeply" if isinstance(e, RecursionError) else f"{type(e).__name__}: {e}"
        where, line = current_line.get()
        raise ImportFailure(
            where or str(paths[0]), f"malformed {name} record the importer cannot read ({what})", line
        ) from None
