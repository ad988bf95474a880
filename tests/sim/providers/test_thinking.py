"""Thinking stripped on non-tool-result user content (providers.md §1.6) and the two observed
Anthropic options (nested tool-result images, reads refreshing inner marks)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.sim.core.catalog import model_info, prices
from ctxbench.sim.core.content import Block, Message, digest64
from ctxbench.sim.core.provider import Latency, Request
from ctxbench.sim.core.thinking import strips_thinking
from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.providers.anthropic import AnthropicConfig, AnthropicProvider
from ctxbench.sim.providers.thinking import ThinkingStripper, real_user

ZERO = Latency(base_ttft=0.0, prefill_tps=1e15, output_tps=1e15)


def _b(kind: str, tokens: int, role: str = "user", tag: str = "") -> Block:
    return Block(kind, role, tokens * 4, tokens, digest64(f"{kind}{tokens}{role}{tag}".encode()))


@pytest.mark.parametrize(
    ("model", "strips"),
    [
        ("claude-haiku-4-5", True),
        ("claude-haiku-4-5-20251001", True),
        ("claude-sonnet-4-5", True),
        ("claude-sonnet-4", True),
        ("claude-sonnet-4-20250514", True),
        ("claude-opus-4-1", True),
        ("claude-3-5-sonnet-20241022", True),
        ("claude-sonnet-4-6", False),
        ("claude-opus-4-5", False),
        ("claude-opus-4-6", False),
        ("claude-opus-4-7", False),
        ("gpt-4.1", False),
    ],
)
def test_which_models_strip(model: str, strips: bool) -> None:
    assert strips_thinking(model) is strips


def test_images_after_tool_results_belong_to_them() -> None:
    tool = _b("tool_result", 5)
    img = _b("image", 50)
    assert not real_user(Message.of("user", [tool, img]))
    assert real_user(Message.of("user", [img, tool]))
    assert real_user(Message.of("user", [tool, _b("text", 3)]))


def _session(real_last: bool) -> list[tuple[Transcript, tuple[tuple[int, str], ...]]]:
    """Three requests: user text, one tool round trip with thinking, then user content."""
    tr = Transcript([_b("tool_def", 2000, "system")], [_b("text", 3000, "system")])
    steps = []

    def marks() -> tuple[tuple[int, str], ...]:
        ends = [tr.message_end(m) - 1 for m in range(max(0, len(tr.messages) - 2), len(tr.messages))]
        return tuple((p, "5m") for p in sorted(set(ends)))

    tr.append(Message.of("user", [_b("text", 400, tag="u0")]))
    steps.append(marks())
    tr.append(
        Message.of("assistant", [_b("thinking", 300, "assistant", "t0"), _b("tool_use", 50, "assistant")])
    )
    tr.append(Message.of("user", [_b("tool_result", 200, tag="r1")]))
    steps.append(marks())
    tr.append(
        Message.of("assistant", [_b("thinking", 100, "assistant", "t1"), _b("tool_use", 60, "assistant")])
    )
    last = [_b("tool_result", 70, tag="r2")] + ([_b("text", 20, tag="x")] if real_last else [])
    tr.append(Message.of("user", last))
    steps.append(marks())
    return [(tr, m) for m in steps]


def _run(model: str, real_last: bool, **cfg: object) -> list[tuple[int, int]]:
    prov = AnthropicProvider(model_info(model), prices(model), AnthropicConfig(latency=ZERO, **cfg))  # type: ignore[arg-type]
    steps = _session(real_last)
    tr = steps[0][0]
    full = list(tr.messages)
    out = []
    t = Transcript(tr.blocks[: tr.tools_end], tr.blocks[tr.tools_end : tr.system_end])
    for k, (_, bps) in enumerate(steps):
        while len(t.messages) < (1, 3, 5)[k]:
            t.append(full[len(t.messages)])
        res = prov.call(Request(t, len(t), model, 10, bps), float(k))
        out.append((res.usage.cache_read, res.usage.input_total))
    return out


def test_real_user_content_strips_earlier_thinking_on_haiku() -> None:
    (r0, n0), (r1, n1), (r2, n2) = _run("claude-haiku-4-5", real_last=True)
    assert r0 == 0 and n0 == 5400
    assert r1 == 5400 and n1 == 5400 + 350 + 200  # within the tool loop thinking is kept
    # the prompt lost both thinking blocks (400 tokens), the read falls back to the end of u0
    assert n2 == 5400 + 50 + 200 + 60 + 70 + 20
    assert r2 == 5400


def test_tool_results_only_keep_thinking_on_haiku() -> None:
    (_, _), (_, n1), (r2, n2) = _run("claude-haiku-4-5", real_last=False)
    assert r2 == n1 and n2 == n1 + 160 + 70


def test_newer_models_keep_thinking() -> None:
    (_, _), (_, n1), (r2, n2) = _run("claude-sonnet-4-6", real_last=True)
    assert r2 == n1 and n2 == n1 + 160 + 90


def test_flag_overrides_the_model_rule() -> None:
    (_, _), (_, n1), (r2, _) = _run("claude-haiku-4-5", real_last=True, strip_thinking_on_user_content=False)
    assert r2 == n1
    (_, _), (_, _), (r2, _) = _run("claude-sonnet-4-6", real_last=True, strip_thinking_on_user_content=True)
    assert r2 == 5400


@st.composite
def _conversations(draw: st.DrawFn) -> list[tuple[str, list[str]]]:
    kinds = {
        "assistant": st.lists(st.sampled_from(["thinking", "text", "tool_use"]), min_size=1, max_size=4),
        "user": st.lists(st.sampled_from(["tool_result", "text", "image"]), min_size=1, max_size=3),
    }
    out = []
    for i in range(draw(st.integers(1, 14))):
        role = "user" if i % 2 == 0 else "assistant"
        out.append((role, draw(kinds[role])))
    return out


@given(_conversations(), st.integers(0, 2**16))
@settings(max_examples=80, deadline=None)
def test_stripped_prompt_matches_bruteforce(conv: list[tuple[str, list[str]]], seed: int) -> None:
    """After every append (and now and then an edit), the kept prompt is the transcript minus
    the thinking before the last real user message, and positions map back and forth."""
    rng = random.Random(seed)
    tr = Transcript([_b("tool_def", 10, "system")], [_b("text", 10, "system")])
    st_ = ThinkingStripper()
    n = 0
    for role, kinds in conv:
        blocks = [_b(k, rng.randint(1, 99), role, str(n + j)) for j, k in enumerate(kinds)]
        n += len(blocks)
        if tr.messages and rng.random() < 0.2:
            m = rng.randrange(len(tr.messages))
            tr.replace_from(m, tr.messages[m:])  # identical: nothing changes
            if rng.random() < 0.5:
                tr.truncate_messages(m)
        tr.append(Message.of(role, blocks))
        eff, mp = st_.view(Request(tr, len(tr), "claude-haiku-4-5", 1))
        bound = max((i for i, msg in enumerate(tr.messages) if real_user(msg)), default=-1)
        expect = list(tr.blocks[: tr.system_end])
        for i, msg in enumerate(tr.messages):
            expect += [
                b for b in msg.blocks if not (i < bound and msg.role == "assistant" and b.kind == "thinking")
            ]
        assert [b.digest for b in eff.tr.blocks] == [b.digest for b in expect]
        assert eff.n == len(expect)
        for q in range(len(eff.tr)):
            assert mp.to_eff(mp.to_src(q)) == q


def test_tool_result_images_are_one_lookback_position() -> None:
    """A screenshot after a tool_result is nested in it on the wire: 15 tool results with a
    screenshot each are 15 positions, not 30, so an entry 16 results back is still found."""
    model = "claude-sonnet-4-6"
    tr = Transcript([], [_b("text", 2000, "system")])
    tr.append(Message.of("user", [_b("text", 10, tag="q")]))
    first = len(tr) - 1
    for i in range(15):
        tr.append(Message.of("user", [_b("tool_result", 5, tag=str(i)), _b("image", 50, tag=str(i))]))
    last = len(tr) - 1
    for nested, expect in ((False, 0), (True, tr.cum_tokens[first])):
        prov = AnthropicProvider(
            model_info(model), prices(model), AnthropicConfig(latency=ZERO, tool_result_images_nested=nested)
        )
        prov.call(Request(tr, first + 1, model, 1, ((first, "5m"),)), 0.0)
        out = prov.call(Request(tr, len(tr), model, 1, ((last, "5m"),)), 1.0)
        assert out.usage.cache_read == expect


def test_reads_refresh_inner_marks_only_when_enabled() -> None:
    model = "claude-sonnet-4-6"
    tr = Transcript([], [_b("text", 2000, "system")])
    sys_end = len(tr) - 1
    for i in range(3):
        tr.append(Message.of("user", [_b("text", 100, tag=str(i))]))
    for refresh, expect in ((False, 0), (True, 2000)):
        prov = AnthropicProvider(
            model_info(model), prices(model), AnthropicConfig(latency=ZERO, refresh_marks_in_read=refresh)
        )
        for k in range(3):  # every 200 s the growing prompt is read; the system mark is inside it
            n = tr.msg_starts[k] + 1
            prov.call(Request(tr, n, model, 1, ((sys_end, "5m"), (n - 1, "5m"))), 200.0 * k)
        # 500 s after the system entry was written, a request that changed its messages
        other = Transcript([], [tr.blocks[0]])
        other.append(Message.of("user", [_b("text", 100, tag="new")]))
        out = prov.call(Request(other, len(other), model, 1, ((0, "5m"), (1, "5m"))), 500.0)
        assert out.usage.cache_read == expect
