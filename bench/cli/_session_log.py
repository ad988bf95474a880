"""A harness's session log given where a trace is expected: the one-line error says how to use it
(`ctxbench import` first), the same way for every verb that reads a trace (issue 31 #4)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def session_log_hint(path: Path, then: str = "check-prefix") -> str:
    """When `path` is a harness's session log (no request bodies, not a trace), how to use it:
    import it first, then run `ctxbench THEN` on the trace. "" when it is no such log."""
    from ctxbench.traces.importers import ImportFailure, detect

    try:
        fmt = detect(path)
    except (ImportFailure, OSError, ValueError):
        return ""
    if fmt == "claude-trace" and then == "check-prefix":  # request traffic: check-prefix reads it
        return ""
    return (
        f" ({path} looks like a session log of {fmt}, not a trace: "
        f"`ctxbench import {path} -o T.jsonl`, then `ctxbench {then} T.jsonl ...`)"
    )


@contextmanager
def trace_or_log_hint(text: str, verb: str) -> Iterator[None]:
    """Reading the trace `text`: a ValueError on a file that is a harness's session log is raised
    again with the hint of `session_log_hint` appended."""
    try:
        yield
    except ValueError as exc:
        path = Path(text)
        hint = session_log_hint(path, verb) if not text.startswith("gen:") and path.is_file() else ""
        if not hint:
            raise
        raise ValueError(f"{exc}{hint}") from None
