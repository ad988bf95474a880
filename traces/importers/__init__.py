"""Importers of real recorded sessions (traces-real/FORMATS.md), one module per format.

Each importer keeps the recorded usage as ground truth on the trace (`MessageEvent.usage`), derives
true block sizes from it where it can (`tokens.py`), and lists in its report what the source format
cannot provide. Each registers itself as an `importer` (sim/core/registry.py), whose lookup table
names its module: `import_paths` imports the one module of the format it reads (issue 28), and
`IMPORTERS` (format name → function, importing every one) and `FORMATS` are read from there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from ctxbench.sim.core.registry import Registered, RegistryError, homes, lookup
from ctxbench.traces.importers.base import ImportFailure, ImportReport, ImportResult, current_line
from ctxbench.traces.importers.detect import detect

Importer = Callable[[list[Path]], ImportResult]

IMPORTERS: Mapping[str, Importer] = Registered("importer")  # a view of the registry (imports every one)
FORMATS = tuple(homes("importer"))  # the format names, no importer imported (a test checks both agree)

__all__ = ["FORMATS", "IMPORTERS", "ImportFailure", "ImportReport", "ImportResult", "detect", "import_paths"]


def import_paths(paths: list[Path], fmt: str | None = None) -> ImportResult:
    """Import files of one format (auto-detected from the first file unless `fmt` is given)."""
    from ctxbench.traces.format import TraceError  # the trace codec: not for `billed`'s start-up

    if not paths:
        raise ImportFailure("<none>", "no input files")
    name = fmt or detect(paths[0])
    try:
        importer: Importer = lookup("importer", name)  # imports that format's module only
    except RegistryError:
        known = ", ".join(FORMATS)
        raise ImportFailure(str(paths[0]), f"unknown format {name!r}; known formats: {known}") from None
    if fmt is None:
        for p in paths[1:]:
            other = detect(p)
            if other != name:
                raise ImportFailure(
                    str(p), f"is {other}, but {paths[0]} is {name}: import one format at a time"
                )
    try:
        return importer(paths)
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
