"""Shared pieces of the importers: the result and report types, tolerant line reading, token
allocation from billed usage, image sizes, timestamps.

Bad input never crashes an importer and is never dropped silently: a line that cannot be used is
counted under a reason in `ImportReport.skipped` (with the first few locations), and input with
nothing usable is an `ImportFailure` naming the file and why.
"""

from __future__ import annotations

import base64
import contextvars
import datetime as _dt
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxbench.sim.core.imagesize import image_size
from ctxbench.traces.compressed import is_compressed, open_log, read_errors, read_failure
from ctxbench.traces.fields import MAX_COST, MAX_SECONDS, MAX_TOKENS

if TYPE_CHECKING:  # the trace model is imported by what builds traces, not by `billed`'s start-up
    from ctxbench.traces.model import Content, Trace


class ImportFailure(ValueError):
    """Input an importer cannot turn into a trace: `path[:line]: [field 'x': ]reason`."""

    def __init__(self, path: str, reason: str, line: int = 0, field: str = "") -> None:
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: field '{field}': {reason}" if field else f"{where}: {reason}")
        self.path = path
        self.line = line
        self.field = field
        self.reason = reason

    def __reduce__(self) -> tuple[Any, ...]:
        return (ImportFailure, (self.path, self.reason, self.line, self.field))


def _fail(where: str, field: str, reason: str) -> ImportFailure:
    path, _, line = where.rpartition(":")
    if not line.isdigit():
        path, line = where, "0"
    return ImportFailure(path, reason, int(line), field)


def _shown(value: Any) -> str:
    return json.dumps(value)[:40] if isinstance(value, int | float | str) else type(value).__name__


def cost(record: Any, name: str, where: str, prefix: str = "") -> float | None:
    """A billed cost in USD from a log record: absent or null is None; anything but a finite
    non-negative number up to the trace format's bound is an `ImportFailure` (see `count`)."""
    value = record.get(name) if isinstance(record, dict) else None
    if value is None:
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or (isinstance(value, float) and not math.isfinite(value)) or not 0 <= value <= MAX_COST:
        field = f"{prefix}.{name}" if prefix else name
        raise _fail(where, field, f"expected a cost (a number from 0 to {MAX_COST:g}), got {_shown(value)}")
    return float(value)


def count(record: Any, name: str, where: str, prefix: str = "") -> int:
    """The token count `record[name]` of a log record: absent or null is 0; anything but a
    non-negative integer (an integral float is accepted) up to the trace format's bound is an
    `ImportFailure` naming the file, the line and the field. `where` is `file:line` (or a file
    name with a JSON path), `prefix` the dotted path of `record` inside its line."""
    value = record.get(name) if isinstance(record, dict) else None
    if value is None:
        return 0
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        field = f"{prefix}.{name}" if prefix else name
        reason = f"expected a token count (an integer from 0 to {MAX_TOKENS}), got {_shown(value)}"
        raise _fail(where, field, reason)
    return value


@dataclass
class ImportReport:
    """What an import did: counted skips by reason, notes on what the format cannot provide."""

    source: str
    format: str
    skipped: Counter[str] = field(default_factory=Counter)
    where: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    cannot_provide: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)

    def skip(self, reason: str, where: str = "") -> None:
        self.skipped[reason] += 1
        locs = self.where.setdefault(reason, [])
        if where and len(locs) < 3:
            locs.append(where)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def format_text(self) -> str:
        lines = [f"{self.source} ({self.format})"]
        if self.counts:
            lines.append("  " + ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items())))
        for reason, n in sorted(self.skipped.items()):
            locs = self.where.get(reason, [])
            at = f" (e.g. {', '.join(locs)})" if locs else ""
            lines.append(f"  skipped {n} × {reason}{at}")
        lines += [f"  note: {n}" for n in self.notes]
        lines += [f"  not in this format: {c}" for c in self.cannot_provide]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "format": self.format,
            "counts": dict(sorted(self.counts.items())),
            "skipped": dict(sorted(self.skipped.items())),
            "notes": list(self.notes),
            "cannot_provide": list(self.cannot_provide),
        }


@dataclass
class ImportResult:
    """Traces made from one source: `traces[0]` is the main conversation; the others are its
    sub-agents or side requests (named by `names`)."""

    traces: list[Trace]
    names: list[str]
    report: ImportReport

    @property
    def main(self) -> Trace:
        return self.traces[0]


# ---------------------------------------------------------------- reading
def read_bytes(path: Path) -> bytes:
    """The file's bytes, decompressed when it is a `.gz`, `.xz` or `.bz2` (traces/compressed.py)."""
    try:
        if not is_compressed(path):
            return path.read_bytes()
        with open_log(path) as f:
            return f.read()
    except FileNotFoundError:
        raise ImportFailure(str(path), "no such file") from None
    except read_errors() as e:
        raise ImportFailure(str(path), f"cannot read: {read_failure(e)}") from None


# Where the bytes an importer has parsed are reported (`ctxbench import` sets it to a progress
# bar, counted in bytes so that many small files and one large log both move it); None: nowhere.
parsed_bytes: contextvars.ContextVar[Callable[[int], None] | None] = contextvars.ContextVar(
    "parsed_bytes", default=None
)

PROGRESS_EVERY = 1 << 20  # bytes between two reports while parsing a large JSONL log


# The line an importer is working on (set while it iterates `jsonl_objects`), so that a shape it
# does not expect can still be reported as `file:line` by `importers.import_paths`.
current_line: contextvars.ContextVar[tuple[str, int]] = contextvars.ContextVar(
    "current_line", default=("", 0)
)


class _Lines(list[tuple[int, dict[str, Any]]]):
    """The object lines of a file; iterating them records the current line in `current_line`."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = str(path)

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        for n, obj in super().__iter__():
            current_line.set((self.path, n))
            yield n, obj
        current_line.set(("", 0))


def jsonl_objects(path: Path, report: ImportReport) -> list[tuple[int, dict[str, Any]]]:
    """Every JSON object line of a JSONL file, with its line number. Lines that are not UTF-8, not
    JSON (a truncated last line included) or not objects are counted skips."""
    data = read_bytes(path)
    out = _Lines(path)
    raw_lines = data.split(b"\n")
    report_parsed = parsed_bytes.get()
    unreported = 0
    for n, raw in enumerate(raw_lines, 1):
        if report_parsed is not None:
            unreported += len(raw) + (n < len(raw_lines))  # the newline, if any
            if unreported >= PROGRESS_EVERY:
                report_parsed(unreported)
                unreported = 0
        if not raw.strip():
            continue
        where = f"{path.name}:{n}"
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            report.skip("line not valid UTF-8", f"{where} byte {e.start}")
            continue
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):
            last = n == len(raw_lines) and not data.endswith(b"\n")
            report.skip("truncated last line" if last else "line not valid JSON", where)
            continue
        if not isinstance(obj, dict):
            report.skip("line not a JSON object", where)
            continue
        out.append((n, obj))
    if report_parsed is not None and unreported:
        report_parsed(unreported)
    return out


def json_document(path: Path) -> Any:
    data = read_bytes(path)
    report_parsed = parsed_bytes.get()
    if report_parsed is not None:
        report_parsed(len(data))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ImportFailure(str(path), f"not valid UTF-8 (byte {e.start})") from None
    try:
        return json.loads(text)
    except ValueError as e:
        raise ImportFailure(str(path), f"not valid JSON ({e}); truncated file?") from None


def parse_time(value: Any) -> float | None:
    """Epoch seconds from an ISO 8601 string, epoch seconds or epoch milliseconds."""
    if isinstance(value, bool):
        return None
    v: float | None = None
    if isinstance(value, int | float) and math.isfinite(value) and abs(value) < 1e15:
        v = float(value)
        v = v / 1000.0 if v > 1e11 else v
    elif isinstance(value, str) and value:
        try:
            v = _dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except (ValueError, OverflowError):
            return None
    # A time outside the format's range (FORMAT.md bounds) is no time at all, like an unparsable one.
    return v if v is not None and 0 <= v <= MAX_SECONDS else None


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def tool_use(arguments: Any, tool_id: Any, name: str) -> Content:
    """A tool call as trace content: its arguments as canonical JSON (key order matters to a cache)."""
    from ctxbench.traces.model import Content

    return Content("tool_use", text=canonical(arguments), lang="json", tool_id=str(tool_id), name=name)


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
MAX_NAME = 80  # characters of a conversation name in a file name (NAME_MAX is 255 bytes)


def file_names(names: list[str]) -> list[str]:
    """Names safe inside a file name, one per conversation, all different: characters other than
    letters, digits, `_`, `.`, `-` become `_`, no leading dot (no `..`, no hidden file), at most
    MAX_NAME characters; a name that had to change gets a short hash of the original so two ids
    never share a file. The names come from log content (e.g. Claude Code's `agentId`)."""
    out: list[str] = []
    for name in names:
        safe = _UNSAFE.sub("_", name).lstrip(".")[:MAX_NAME] or "conversation"
        if safe != name:
            import hashlib

            digest = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
            safe = f"{safe}-{digest}"
        base, n = safe, 2
        while safe in out:
            safe, n = f"{base}-{n}", n + 1
        out.append(safe)
    return out


# `service_tier` and `inference_geo` values billed at list prices (Anthropic usage, providers.md
# §1.9; OpenAI's `default`/`auto`, §2): any other (priority or fast, flex, batch, a US-only
# `inference_geo`) is counted in the import report as priced at list prices, the catalog having no
# rates for it, rather than passed over.
LIST_PRICE_TERMS = {
    "service_tier": ("", "standard", "default", "auto"),
    "inference_geo": ("", "not_available", "global"),
}


def other_price_terms(u: Any) -> list[str]:
    """The billing terms of a usage object that list prices do not cover (`LIST_PRICE_TERMS`)."""
    if not isinstance(u, dict):
        return []
    return [f"{k} {u[k]!r}" for k, ok in LIST_PRICE_TERMS.items() if k in u and str(u[k] or "") not in ok]


def normalize_model(name: str) -> str:
    """The catalog name of a recorded model id (sim/core/catalog.py `resolve`: `claude-sonnet-4-5-20250929`
    → `claude-sonnet-4-5`, `openai/gpt-4o-mini` → `gpt-4o-mini`); an id the catalog does not know
    is kept as recorded, so that `run` and `fidelity` stop on it with the closest known ids."""
    from ctxbench.sim.core.catalog import CatalogError, canonical

    try:
        return canonical(name)
    except CatalogError:
        return name


# ---------------------------------------------------------------- token allocation
def allocate(total: int, weights: list[int]) -> list[int]:
    """Split `total` tokens over blocks in proportion to `weights` (largest remainder): integers
    that sum to exactly `total` (0 for every block when total ≤ 0)."""
    if not weights:
        return []
    if total <= 0:
        return [0] * len(weights)
    w = [max(0, x) for x in weights]
    s = sum(w)
    if s == 0:
        w, s = [1] * len(w), len(w)
    raw = [total * x / s for x in w]
    out = [math.floor(r) for r in raw]
    rest = total - sum(out)
    order = sorted(range(len(w)), key=lambda i: (out[i] - raw[i], i))
    for i in order[:rest]:
        out[i] += 1
    return out


# ---------------------------------------------------------------- images
def b64_image(data: str) -> tuple[int, int, int]:
    """(width, height, bytes) of a base64 image; zeros when it cannot be decoded."""
    try:
        raw = base64.b64decode(data, validate=False)
    except (ValueError, TypeError):
        return 0, 0, 0
    w, h = image_size(raw)
    return w, h, len(raw)
