"""Strict JSONL reader and deterministic writer of trace format v1 (see `traces/FORMAT.md`).

Strict because a trace that is silently misread gives wrong cache and cost numbers with no sign
of it: every problem is a `TraceError` naming the file, the line and the field. Deterministic
because traces are committed and compared: the same `Trace` always gives byte-identical text
(fields in a fixed order, defaults omitted, `meta` keys sorted, UTF-8, `\\n` line ends).
The writer checks what it writes with the reader's own rules, so it never writes a file that
`read_trace` would reject.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from ctxbench.traces.codec import FieldError, decode_line, encode_line
from ctxbench.traces.compressed import is_compressed, open_log, read_errors, read_failure
from ctxbench.traces.gcpause import gc_paused
from ctxbench.traces.model import CompactionEvent, Event, Header, MessageEvent, Trace

__all__ = [
    "TraceError",
    "dumps_event",
    "dumps_trace",
    "iter_events",
    "loads_line",
    "read_trace",
    "write_trace",
]

PathLike = str | os.PathLike[str]


class TraceError(ValueError):
    """A trace that cannot be read (or written): `path:line: field 'x': reason`."""

    def __init__(self, path: str, line: int, field: str | None, reason: str) -> None:
        where = f"{path}:{line}" if line else path
        text = f"{where}: field '{field}': {reason}" if field else f"{where}: {reason}"
        super().__init__(text)
        self.path = path
        self.line = line
        self.field = field or None
        self.reason = reason

    def __reduce__(self) -> tuple[Any, ...]:
        return (TraceError, (self.path, self.line, self.field, self.reason))


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not allowed (numbers must be finite)")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) == len(pairs):
        return d
    d = {}
    for k, v in pairs:
        if k in d:
            raise FieldError(k, "duplicate key in one JSON object")
        d[k] = v
    return d


# One decoder for every line (json.loads with options would build one per call).
_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)


def _parse(line: str | bytes, path: str, lineno: int) -> Any:
    """One line's JSON value; TraceError for bytes that are not UTF-8 or not JSON."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as e:
            raise TraceError(path, lineno, None, f"not valid UTF-8 (byte {e.start} of the line)") from None
    if line.startswith("\ufeff"):
        raise TraceError(path, lineno, None, "starts with a byte order mark (UTF-8 without BOM expected)")
    if not line.strip():
        raise TraceError(path, lineno, None, "empty line (one JSON object per line expected)")
    try:
        return _DECODER.decode(line)
    except FieldError as e:
        raise TraceError(path, lineno, e.field, e.reason) from None
    except json.JSONDecodeError as e:
        raise TraceError(path, lineno, None, f"invalid JSON at column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise TraceError(path, lineno, None, "invalid JSON: nested too deeply") from None
    except ValueError as e:  # e.g. NaN, or an integer with too many digits
        raise TraceError(path, lineno, None, f"invalid JSON: {e}") from None


def loads_line(line: str | bytes, *, path: str = "<string>", lineno: int = 1) -> Header | Event:
    """Decode one line on its own (no checks that need earlier lines, such as header-first)."""
    value = _parse(line, path, lineno)
    try:
        return decode_line(value)
    except FieldError as e:
        raise TraceError(path, lineno, e.field, e.reason) from None
    except RecursionError:
        raise TraceError(path, lineno, None, "nested too deeply") from None


class _Sequence:
    """Rules that span lines: the header comes first and only once, every tool_result answers an
    earlier tool_use, tool_use ids are unique, and `kept_from` points at an existing message."""

    def __init__(self) -> None:
        self.header_seen = False
        self.tool_uses: dict[str, int] = {}
        self.messages = 0

    def check(self, item: Header | Event, lineno: int) -> None:
        if isinstance(item, Header):
            if self.header_seen:
                raise FieldError("type", "a second header (only line 1 is the header)")
            self.header_seen = True
            return
        if not self.header_seen:
            raise FieldError("type", "expected the header (type 'header') on line 1")
        if isinstance(item, MessageEvent):
            uses = self.tool_uses
            for i, c in enumerate(item.content):
                kind = c.kind
                if kind == "tool_use":
                    if c.tool_id in uses:
                        where = uses[c.tool_id]
                        raise FieldError(
                            f"content[{i}].id", f"tool_use id {c.tool_id!r} already used on line {where}"
                        )
                    uses[c.tool_id] = lineno
                elif kind == "tool_result" and c.tool_id not in uses:
                    raise FieldError(f"content[{i}].tool_use_id", f"no earlier tool_use has id {c.tool_id!r}")
            self.messages += 1
        elif (
            isinstance(item, CompactionEvent)
            and item.kept_from is not None
            and item.kept_from > self.messages
        ):
            raise FieldError("kept_from", f"is {item.kept_from} but only {self.messages} messages precede it")


# From this size on a file's message lines take the fast path (`traces/fastread.py`): below it,
# importing msgspec and building its decoder (~65M instructions once the simulator is imported)
# costs more than it saves (~0.2M a message line: break-even near 330 lines, ~120 KB of a game
# trace; reading the 224 KB game-300 sample costs 190M instructions strictly, 131M this way).
FAST_READ_BYTES = 128 * 1024


def _iter_lines(lines: Iterator[bytes], path: str, fast: bool = False) -> Iterator[Header | Event]:
    fast_message: Callable[[bytes], MessageEvent | None] | None = None
    if fast:
        from ctxbench.traces.fastread import fast_message
    seq = _Sequence()
    lineno = 0
    for lineno, raw in enumerate(lines, 1):
        item = (fast_message and fast_message(raw)) or loads_line(raw, path=path, lineno=lineno)
        try:
            seq.check(item, lineno)
        except FieldError as e:
            raise TraceError(path, lineno, e.field, e.reason) from None
        yield item
    if lineno == 0:
        raise TraceError(path, 1, None, "empty file: expected the header line")


def iter_events(path: PathLike) -> Iterator[Header | Event]:
    """Stream a trace file: the Header, then each event, checked as `read_trace` checks them."""
    name = os.fspath(path)
    try:
        f = open_log(Path(path))  # decompressed as read when compressed (traces/compressed.py)
    except FileNotFoundError:
        raise TraceError(name, 0, None, "no such trace file") from None
    except OSError as e:
        raise TraceError(name, 0, None, f"cannot read trace file: {e.strerror or e}") from None
    with f:
        try:  # a compressed file is taken to be large: ~10x its size once decompressed
            fast = os.stat(path).st_size * (10 if is_compressed(Path(path)) else 1) >= FAST_READ_BYTES
            yield from _iter_lines(iter(f), name, fast)
        except read_errors() as e:  # a directory, a read error mid-file, a damaged stream
            raise TraceError(name, 0, None, f"cannot read trace file: {read_failure(e)}") from None


def read_trace(path: PathLike) -> Trace:
    """Read and check a whole trace file."""
    with gc_paused():
        items = iter_events(path)
        header = next(items)
        assert isinstance(header, Header)  # _Sequence guarantees it
        return Trace(header=header, events=tuple(items), path=os.fspath(path))  # type: ignore[arg-type]


# Characters `str.splitlines()` treats as line ends that JSON may leave raw: escaped on writing so
# that every tool sees one event per line.
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _dump(obj: dict[str, Any]) -> str:
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.translate(_LINE_BREAKS)


def dumps_event(event: Header | Event, *, path: str = "<event>", lineno: int = 0) -> str:
    """One line of JSON (without the newline), checked to read back equal to `event`."""
    try:
        text = _dump(encode_line(event))
    except FieldError as e:
        raise TraceError(path, lineno, e.field, e.reason) from None
    except (ValueError, TypeError) as e:  # NaN or a non-JSON value in meta
        raise TraceError(path, lineno, None, f"cannot be written as JSON: {e}") from None
    back = loads_line(text, path=path, lineno=lineno)
    if back != event:
        field = next(
            (n for n in getattr(event, "__dataclass_fields__", {}) if getattr(back, n) != getattr(event, n)),
            None,
        )
        raise TraceError(
            path, lineno, field, "value cannot be represented in format v1 (it reads back different)"
        )
    return text


def dumps_trace(trace: Trace, *, path: str = "<trace>") -> str:
    """The whole file text of `trace`, checked line by line and across lines."""
    seq = _Sequence()
    lines = []
    for lineno, item in enumerate((trace.header, *trace.events), 1):
        lines.append(dumps_event(item, path=path, lineno=lineno))
        try:
            seq.check(item, lineno)
        except FieldError as e:
            raise TraceError(path, lineno, e.field, e.reason) from None
    return "\n".join(lines) + "\n"


def write_trace(trace: Trace, dest: PathLike | IO[str]) -> None:
    """Write `trace` to a path (UTF-8, `\\n` line ends) or to an open text file.

    The text is built and checked in full first, so a bad trace leaves no partial file behind.
    """
    if isinstance(dest, str | os.PathLike):
        text = dumps_trace(trace, path=os.fspath(dest))
        with open(dest, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    else:
        dest.write(dumps_trace(trace, path=str(getattr(dest, "name", "<stream>"))))


class TraceAppender:
    """A trace written line by line as it grows (a live recording, issue 32): each line checked as
    `dumps_trace` checks it, then written and flushed at once, so a writer killed at any moment
    leaves a valid trace up to its last complete line. A line that fails its check is not written
    (TraceError)."""

    def __init__(self, path: PathLike) -> None:
        self.path = os.fspath(path)
        self._f: IO[str] | None = open(self.path, "w", encoding="utf-8", newline="\n")  # noqa: SIM115
        self._seq = _Sequence()
        self.lines = 0

    def append(self, items: Iterator[Header | Event] | tuple[Header | Event, ...] | list[Any]) -> None:
        if self._f is None:
            raise ValueError(f"{self.path}: trace already closed")
        for item in items:
            lineno = self.lines + 1
            line = dumps_event(item, path=self.path, lineno=lineno)
            try:
                self._seq.check(item, lineno)
            except FieldError as e:
                raise TraceError(self.path, lineno, e.field, e.reason) from None
            self._f.write(line + "\n")
            self.lines = lineno
        self._f.flush()

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None
