"""Synthetic request logs for the prefix-check tests: a clean chain of Anthropic bodies, and the
same chain with breaks injected at known positions."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

TEXT = st.text(alphabet="abcdefghij klmnop", min_size=1, max_size=30)


@dataclass(frozen=True)
class Conv:
    tools: list[dict[str, Any]]
    system: list[str]
    turns: list[tuple[list[str], list[str]]]  # (assistant texts, user texts) appended per request
    first_user: list[str]


@st.composite
def conversations(draw: Any, min_requests: int = 2, max_requests: int = 12) -> Conv:
    n_tools = draw(st.integers(0, 3))
    tools = [
        {"name": f"t{i}", "description": draw(TEXT), "input_schema": {"type": "object"}}
        for i in range(n_tools)
    ]
    system = draw(st.lists(TEXT, min_size=1, max_size=2))
    first = draw(st.lists(TEXT, min_size=1, max_size=2))
    turns = draw(
        st.lists(
            st.tuples(st.lists(TEXT, min_size=1, max_size=2), st.lists(TEXT, min_size=1, max_size=2)),
            min_size=min_requests - 1,
            max_size=max_requests - 1,
        )
    )
    return Conv(tools, system, turns, first)


def _blocks(texts: list[str], marked: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
    if marked:
        out[-1]["cache_control"] = {"type": "ephemeral"}  # markers move every turn: not content
    return out


def bodies(
    conv: Conv, edits: dict[int, list[tuple[str, int | None, int, int, str]]] | None = None
) -> list[dict[str, Any]]:
    """Request bodies of `conv`. `edits[i]` = (segment, message, block, offset, char) changes
    applied from request i on (the conversation keeps them)."""
    system = list(conv.system)
    msgs: list[dict[str, Any]] = [{"role": "user", "texts": list(conv.first_user)}]
    out = []
    for i in range(len(conv.turns) + 1):
        if i > 0:
            a, u = conv.turns[i - 1]
            msgs.append({"role": "assistant", "texts": list(a)})
            msgs.append({"role": "user", "texts": list(u)})
        for seg, m, b, off, ch in (edits or {}).get(i, []):
            if seg == "system":
                system[b] = system[b][:off] + ch + system[b][off + 1 :]
            else:
                assert m is not None
                t = msgs[m]["texts"][b]
                msgs[m]["texts"][b] = t[:off] + ch + t[off + 1 :]
        body = {
            "model": "claude-sonnet-4-6",
            "max_tokens": 100,
            "tools": copy.deepcopy(conv.tools),
            "system": _blocks(system, True),
            "messages": [
                {"role": mm["role"], "content": _blocks(mm["texts"], k >= len(msgs) - 2)}
                for k, mm in enumerate(msgs)
            ],
        }
        out.append(body)
    return out


def n_messages_at(conv: Conv, i: int) -> int:
    return 1 + 2 * i
