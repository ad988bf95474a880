"""Hypothesis strategies for valid `Trace` values (every field kind, every event type).

Valid means what `ctxbench.traces.format` accepts: kinds allowed per place, text xor size, a key for sized
content, tool_result ids answering earlier tool_use ids, `kept_from` within the messages so far.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ctxbench.traces.codec import CACHE_TTLS, LANGS, TAGS, TRIGGERS, canonical_json
from ctxbench.traces.fields import MAX_BYTES, MAX_TOKENS
from ctxbench.traces.model import (
    CompactionEvent,
    Content,
    Event,
    Header,
    MessageEvent,
    ModelSwitchEvent,
    ResumeEvent,
    SystemEvent,
    ToolDef,
    ToolsEvent,
    Trace,
    Usage,
)

texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
names = texts.filter(bool)
counts = st.integers(min_value=0, max_value=MAX_TOKENS)  # token counts (FORMAT.md bounds)
sizes = st.integers(min_value=0, max_value=MAX_BYTES)
positives = st.integers(min_value=1, max_value=10_000)
times = st.none() | st.floats(min_value=0, max_value=1e7, allow_nan=False, allow_infinity=False)
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def bodies(draw: st.DrawFn, lang: bool = True) -> dict[str, Any]:
    """text xor (bytes + key), optional lang, key and flags."""
    d: dict[str, Any] = {}
    if draw(st.booleans()):
        d["text"] = draw(texts)
        d["key"] = draw(st.just("") | names)
    else:
        d["nbytes"] = draw(sizes)
        d["key"] = draw(names)
    if lang:
        d["lang"] = draw(st.sampled_from(LANGS))
    d["pinned"] = draw(st.booleans())
    d["skill"] = draw(st.booleans())
    d["tokens"] = draw(st.none() | counts)
    d["cache"] = draw(st.sampled_from(("", *CACHE_TTLS)))
    d["turn"] = draw(st.booleans())  # sent in its own turn only (FORMAT.md `turn`)
    return d


def text_items(kind: str = "text") -> st.SearchStrategy[Content]:
    return bodies().map(lambda b: Content(kind, **b))


def _image(w: int, h: int, n: int, k: str, p: bool, t: int | None, c: str) -> Content:
    return Content("image", nbytes=n, key=k, width=w, height=h, pinned=p, tokens=t, cache=c)


images = st.builds(
    _image,
    positives,
    positives,
    positives,
    names,
    st.booleans(),
    st.none() | counts,
    st.sampled_from(("", *CACHE_TTLS)),
)
usages = st.builds(Usage, counts, counts, counts, counts, counts, st.none() | st.floats(0, 1e4))


@st.composite
def messages(draw: st.DrawFn, tool_ids: list[str], answered: set[str]) -> MessageEvent:
    """A message; tool_use ids are fresh, tool_results answer earlier tool_uses."""
    role = draw(st.sampled_from(("user", "assistant")))
    items: list[Content] = []
    for _ in range(draw(st.integers(1, 4))):
        if role == "assistant":
            choice = draw(st.sampled_from(("text", "thinking", "tool_use")))
            if choice == "tool_use":
                tid = f"id{len(tool_ids)}-{draw(texts)}"
                tool_ids.append(tid)
                items.append(Content("tool_use", tool_id=tid, name=draw(names), **draw(bodies())))
            else:
                items.append(draw(text_items(choice)))
        else:
            open_ids = [t for t in tool_ids if t not in answered]
            choice = draw(
                st.sampled_from(("text", "image", "tool_result") if open_ids else ("text", "image"))
            )
            if choice == "tool_result":
                tid = draw(st.sampled_from(open_ids))
                answered.add(tid)
                err = draw(st.booleans())
                items.append(Content("tool_result", tool_id=tid, is_error=err, **draw(bodies())))
            else:
                items.append(draw(images if choice == "image" else text_items()))
    reply = role == "assistant"
    return MessageEvent(
        role=role,
        content=tuple(items),
        tag=draw(st.sampled_from(TAGS)),
        pinned=draw(st.booleans()),
        t=draw(times),
        game_t=draw(times),
        output_tokens=draw(st.none() | counts) if reply else None,
        usage=draw(st.none() | usages) if reply else None,
        request_id=draw(st.just("") | texts),
    )


tool_defs = st.builds(
    lambda name, schema, n, mcp: ToolDef(
        name,
        schema=canonical_json(schema) if schema is not None else None,
        nbytes=n if schema is None else 0,
        mcp=mcp,
    ),
    names,
    st.none() | st.dictionaries(texts, json_values, max_size=3),
    sizes,
    st.booleans(),
)


@st.composite
def traces(draw: st.DrawFn) -> Trace:
    """A valid trace of up to 12 events of every type."""
    header = Header(
        source=draw(names),
        harness=draw(texts),
        model=draw(texts),
        window=draw(counts),
        meta=draw(st.dictionaries(texts, json_values, max_size=3)),
    )
    events: list[Event] = []
    tool_ids: list[str] = []
    answered: set[str] = set()
    n_messages = 0
    kinds = ("system", "tools", "message", "switch", "compaction", "resume")
    for kind in draw(st.lists(st.sampled_from(kinds), max_size=12)):
        if kind == "system":
            events.append(
                SystemEvent(tuple(draw(st.lists(text_items(), min_size=1, max_size=3))), t=draw(times))
            )
        elif kind == "tools":
            tools = draw(st.lists(tool_defs, max_size=4, unique_by=lambda x: x.name))
            events.append(ToolsEvent(tuple(tools), t=draw(times)))
        elif kind == "message":
            events.append(draw(messages(tool_ids, answered)))
            n_messages += 1
        elif kind == "switch":
            events.append(ModelSwitchEvent(draw(names), window=draw(counts), t=draw(times)))
        elif kind == "resume":
            events.append(ResumeEvent(saved_total=draw(st.none() | counts), t=draw(times)))
        else:
            events.append(
                CompactionEvent(
                    summary=tuple(draw(st.lists(text_items(), max_size=2))),
                    kept_from=draw(st.none() | st.integers(0, n_messages)),
                    trigger=draw(st.sampled_from(TRIGGERS)),
                    pre_tokens=draw(st.none() | counts),
                    t=draw(times),
                )
            )
    return Trace(header, tuple(events))
