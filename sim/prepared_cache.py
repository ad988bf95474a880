"""Prepared traces kept in the user's cache by file content (issue 13: reading and preparing a long
trace cost more CPU than simulating it once; loading a kept one costs about half as much).

`prepared_file(path, model, tokenizer)` is how `run`, `compare`, `sweep` and `check-prefix --policy`
turn a trace file into a prepared trace (`open_prepared` for a file or a generator spec, which is
generated and prepared each time; `fidelity` and `context` read the whole trace for more than
preparing it, and real sessions are short): the file's bytes are hashed, and an
entry for that hash and everything else that changes the result (the model and tokenizer asked for,
`PREPARED_FORMAT`, the ctxbench version, the source of the modules that read and prepare a trace,
the Python and marshal versions) is loaded when present, else the file is read (`read_trace`: a bad
file raises its file/line/field error and is never kept) and prepared (`prepare_for`), and the
result written as a new entry (atomically: a temporary file renamed over it).

The entry is a compact tuple form in `marshal` (each distinct block and message once, referenced by
index; events as their field dicts), rebuilt through the slots makers (sim/core/makers.py): on the
10,000-turn game trace a pickle of the prepared trace loads in ~1.3 CPU-s (a frozen slots
dataclass's `__setstate__` sets each field through `object.__setattr__`), more than reading and
preparing it (~0.4), where this form loads in ~0.2 (bench/speed/test_bench_read.py); writing an
entry costs ~0.35 more on the first call.
An entry carries a checksum of its payload and the block factory's facts (tokenizer scale, image
rule) of its model, checked on loading: an entry that cannot be read, is corrupt or stale is
ignored and rewritten, never an error and never a different result.

The folder is yamltext's `cache_dir()` (`$CTXBENCH_CACHE_DIR`, else `$XDG_CACHE_HOME/ctxbench`,
else `~/.cache/ctxbench`); `CTXBENCH_CACHE_DIR=` (empty) turns it off.
"""

from __future__ import annotations

import marshal
import os
import sys
import zlib
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from itertools import repeat
from operator import attrgetter
from pathlib import Path
from typing import Any

from ctxbench.sim import __version__
from ctxbench.sim.core.content import Block, Message, make_block
from ctxbench.sim.core.makers import dict_maker, slots_maker
from ctxbench.sim.core.yamltext import cache_dir, store_entry
from ctxbench.sim.prepared import PreparedTrace, Step, recorded_by
from ctxbench.traces.gcpause import gc_paused
from ctxbench.traces.model import (
    CompactionEvent,
    Content,
    Header,
    MessageEvent,
    ResumeEvent,
    Trace,
    Usage,
)

try:  # hashlib's own blake2b, without loading OpenSSL for the other algorithms (start-up)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

# Bumped when the entry's shape or meaning changes (the source hash below covers code edits).
PREPARED_FORMAT = 1

# The modules whose code decides a prepared trace: reading (traces/), building blocks and messages
# (sim/), `prepare_for` (sim/runner.py) and this form. tests/sim/test_prepared_cache.py checks that
# every ctxbench module reading and preparing imports is listed.
SOURCES = (
    "sim/build.py", "sim/core/content.py", "sim/core/makers.py", "sim/core/names.py", "sim/prepared.py",
    "sim/prepared_cache.py", "sim/runner.py", "sim/core/tokens.py",
    "traces/codec.py", "traces/compressed.py", "traces/fastread.py", "traces/fields.py", "traces/format.py",
    "traces/gcpause.py", "traces/model.py",
)  # fmt: skip

_message = slots_maker(Message)
_step = slots_maker(Step)
_content = dict_maker(Content)
_usage = dict_maker(Usage)
_EVENTS: dict[type, str] = {MessageEvent: "m", ResumeEvent: "r", CompactionEvent: "c"}
_EVENT_MAKERS: dict[str, Callable[[dict[str, Any]], object]] = {
    code: dict_maker(cls) for cls, code in _EVENTS.items()
}


@dataclass(frozen=True)
class PreparedFile:
    """A trace file prepared for a model, and `facts`: the trace's header with its assistant
    messages only (every usage a trace carries: FORMAT.md), all `choose` reads of a trace
    (sim/providers/choice.py), so a kept entry needs no reading of the file."""

    facts: Trace
    prepared: PreparedTrace


_source_key: str | None = None


def source_key() -> str:
    """A hash of ctxbench's version and the source of `SOURCES` (read once per process), so an
    edited checkout never loads an entry an older code made; "" (no caching) when one of them
    cannot be read (an installation without its sources)."""
    global _source_key
    if _source_key is None:
        root = Path(__file__).resolve().parent.parent  # the checkout, or the installed `ctxbench`
        h = blake2b(__version__.encode(), digest_size=16)
        try:
            for name in SOURCES:
                h.update((root / name).read_bytes())
        except OSError:
            _source_key = ""
        else:
            _source_key = h.hexdigest()
    return _source_key


def _tokenizer_key(tokenizer: str) -> str:
    """The tokenizer, with the version of the library behind an exact one."""
    if tokenizer == "rate":
        return tokenizer
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{tokenizer}:{version('toktok-rs')}"
    except PackageNotFoundError:
        return f"{tokenizer}:absent"


def _factory_facts(model: str) -> tuple[float, str]:
    """What a model changes in the blocks prepared for it (sim/runner.py `factory_for`)."""
    from ctxbench.sim.core.catalog import model_info

    info = model_info(model)
    return info.tokenizer_scale, info.image_rule


def prepared_file(path: str, model: str | None = None, tokenizer: str = "rate") -> PreparedFile:
    """`path` read and prepared for `model` (None: the trace's own) with `tokenizer`, from the
    cache when an entry for its content is kept (module doc)."""
    folder = cache_dir()
    if folder is None or not source_key():
        return _prepare_file(path, model, tokenizer)
    try:
        before = os.stat(path)
        raw = Path(path).read_bytes()
    except OSError:
        return _prepare_file(path, model, tokenizer)  # its reader names the problem
    content = blake2b(raw, digest_size=20).hexdigest()
    del raw
    ident = "|".join((content, model or "", _tokenizer_key(tokenizer), source_key()))
    v = sys.version_info
    kind = f"prepared-{PREPARED_FORMAT}-py{v.major}.{v.minor}-m{marshal.version}"
    entry = folder / kind / f"{blake2b(ident.encode(), digest_size=20).hexdigest()}.marshal"
    got = _load(entry, ident, path)
    if got is not None:
        return got
    pf = _prepare_file(path, model, tokenizer)
    try:
        after = os.stat(path)
    except OSError:
        return pf
    if (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size):  # unchanged since hashed
        with gc_paused():  # its many short-lived tuples and dicts: no collections walking the trace
            blob = _dump(pf, ident)
        if blob is not None:
            store_entry(entry, blob)
    return pf


def for_model(text: str, prep: PreparedTrace, model: str, tokenizer: str = "rate") -> PreparedTrace:
    """`prep` (of trace `text`) for `model`: its blocks under the model's name when the model has
    the same tokenizer scale and image rule (what `prepare_for` gives: e.g. a dated id and its
    catalog name), else `text` prepared for it."""
    if prep.model == model:
        return prep
    if _factory_facts(prep.model) == _factory_facts(model):
        return replace(prep, model=model)
    return open_prepared(text, model, tokenizer).prepared


def open_prepared(text: str, model: str | None = None, tokenizer: str = "rate") -> PreparedFile:
    """A trace file (through the cache) or a generator spec (`gen:...`: generated and prepared,
    not kept), prepared for `model` (None: the trace's own) with `tokenizer`."""
    from ctxbench.traces.generators.spec import GEN_PREFIX

    if text.startswith(GEN_PREFIX):
        return _prepare_file(text, model, tokenizer)
    return prepared_file(text, model, tokenizer)


def _prepare_file(text: str, model: str | None, tokenizer: str) -> PreparedFile:
    """Read (`open_trace`: a file, or a generator spec) and prepare, without the cache."""
    from ctxbench.sim.runner import prepare_for
    from ctxbench.traces.generators.spec import open_trace

    trace = open_trace(text)
    prep = prepare_for(trace, model, tokenizer)
    return PreparedFile(_facts(trace.header, prep, trace.path), prep)


def _facts(header: Header, prep: PreparedTrace, path: str) -> Trace:
    replies = tuple(s.event for s in prep.steps if s.kind == "reply" and isinstance(s.event, MessageEvent))
    return Trace(header, replies, path)


# ------------------------------------------------------------------ the entry's form
_BLOCK_FIELDS = tuple(f.name for f in fields(Block))
# A message's blocks are kept as indexes; its digests and tokens are its blocks' (Message.of).
_MESSAGE_FIELDS = tuple(
    f.name for f in fields(Message) if f.name not in ("blocks", "digests", "block_tokens")
)
_STEP_FIELDS = tuple(f.name for f in fields(Step) if f.name not in ("message", "event"))


def _column(values: list[Any]) -> tuple[Any, ...]:
    """One field of many objects: ("=", value, n) when all are equal, ("q" or "Q", bytes) for
    64-bit integers (an array's bytes: marshal makes no object per number), else ("t", values)."""
    types = set(map(type, values))
    if len(types) == 1 and values.count(values[0]) == len(values):
        return ("=", values[0], len(values))
    if types == {int}:
        low, high = min(values), max(values)
        code = "q" if low >= -(2**63) and high < 2**63 else "Q" if low >= 0 and high < 2**64 else ""
        if code:
            return (code, array(code, values).tobytes())
    return ("t", tuple(values))


def _values(col: tuple[Any, ...]) -> Any:
    """The values `_column` packed (an iterable of them)."""
    if col[0] == "=":
        return repeat(col[1], col[2])
    if col[0] == "t":
        return col[1]
    return array(col[0], col[1]).tolist()


def _columns(objs: Sequence[Any], names: tuple[str, ...]) -> tuple[tuple[Any, ...], ...]:
    """Each field `names` of `objs` as a `_column`."""
    return tuple(_column(list(map(attrgetter(n), objs))) for n in names)


def _indexed(objs: list[Any]) -> tuple[list[Any], list[int]]:
    """The distinct objects of `objs` (by identity, None left out) and each one's index among
    them (-1 for None)."""
    index: dict[int, int] = {id(None): -1}
    distinct: list[Any] = []
    for o in objs:
        if id(o) not in index:
            index[id(o)] = len(distinct)
            distinct.append(o)
    return distinct, list(map(index.__getitem__, map(id, objs)))


def _dump(pf: PreparedFile, ident: str) -> bytes | None:
    """The entry's bytes: ident, checksum, payload; None when the trace holds what the form does
    not know (it is then prepared every time). Each distinct block and message is kept once, field
    by field (`_column`), and referenced by index."""
    prep = pf.prepared
    try:
        message_list, step_messages = _indexed([s.message for s in prep.steps])
        all_blocks = [*prep.tools, *prep.system, *(b for m in message_list for b in m.blocks)]
        block_list, at = _indexed(all_blocks)
        n, k = len(prep.tools), len(prep.tools) + len(prep.system)
        tools, system, flat = at[:n], at[n:k], at[k:]
        events = tuple(_event(s.event) for s in prep.steps)
        head = (dict(vars(pf.facts.header)), prep.model, _factory_facts(prep.model), prep.window,
                prep.playbook_bytes, _column(tools), _column(system))  # fmt: skip
        lengths = _column([len(m.blocks) for m in message_list])
        payload = marshal.dumps((
            head,
            _columns(block_list, _BLOCK_FIELDS),
            (_columns(message_list, _MESSAGE_FIELDS), _column(flat), lengths),
            (_columns(prep.steps, _STEP_FIELDS), _column(step_messages), events),
        ))  # fmt: skip
    except (TypeError, ValueError):  # an event or value the form does not hold
        return None
    return marshal.dumps((ident, zlib.crc32(payload), payload))


def _event(ev: object) -> tuple[str, dict[str, Any]] | None:
    if ev is None:
        return None
    code = _EVENTS.get(type(ev))
    if code is None:
        raise TypeError(f"no entry form for {type(ev).__name__}")
    d = dict(vars(ev))
    if code == "m":
        d["content"] = tuple([dict(vars(c)) for c in d["content"]])
        if d["usage"] is not None:
            d["usage"] = dict(vars(d["usage"]))
    elif code == "c":
        d["summary"] = tuple([dict(vars(c)) for c in d["summary"]])
    return code, d


def _load(entry: Path, ident: str, path: str) -> PreparedFile | None:
    """The kept entry, or None when absent, unreadable, corrupt or made for other code or facts."""
    try:
        got_ident, check, payload = marshal.loads(entry.read_bytes())
        if got_ident != ident or zlib.crc32(payload) != check:
            return None
        with gc_paused():  # every object made is kept (traces/gcpause.py)
            return _rebuild(path, marshal.loads(payload))
    except Exception:
        return None


def _rebuild(path: str, payload: tuple[Any, ...]) -> PreparedFile | None:
    """The prepared file `_dump` wrote (None when the catalog has changed the model's facts)."""
    (header, model, facts, window, playbook, tools, system), bcols, (mcols, flat, lengths), steps_part = (
        payload
    )
    if tuple(facts) != _factory_facts(model):  # the catalog changed the model's tokenizer or images
        return None
    blocks = list(map(make_block, *map(_values, bcols)))
    at = blocks.__getitem__
    flat_blocks = list(map(at, _values(flat)))
    digests = [b.digest for b in flat_blocks]
    tokens = [b.tokens for b in flat_blocks]
    spans, o = [], 0
    for n in _values(lengths):
        spans.append((o, o + n))
        o += n
    role, *rest = map(_values, mcols)
    messages = list(map(
        _message, role, [tuple(flat_blocks[a:b]) for a, b in spans], *rest,
        [tuple(digests[a:b]) for a, b in spans], [tuple(tokens[a:b]) for a, b in spans],
    ))  # fmt: skip
    scols, smsg, events = steps_part
    kind, t, game_t, out, sm, sw = map(_values, scols)
    step_messages = [messages[i] if i >= 0 else None for i in _values(smsg)]
    steps = tuple(map(_step, kind, step_messages, t, game_t, out, sm, sw, map(_event_of, events)))
    head = Header(**header)
    prep = PreparedTrace(path or head.source, model, window, tuple(map(at, _values(tools))),
                         tuple(map(at, _values(system))), steps, playbook, recorded_by(head))  # fmt: skip
    return PreparedFile(_facts(head, prep, path), prep)


def _event_of(row: tuple[str, dict[str, Any]] | None) -> object | None:
    if row is None:
        return None
    code, d = row
    if code == "m":
        d["content"] = tuple(map(_content, d["content"]))
        if d["usage"] is not None:
            d["usage"] = _usage(d["usage"])
    elif code == "c":
        d["summary"] = tuple(map(_content, d["summary"]))
    return _EVENT_MAKERS[code](d)
