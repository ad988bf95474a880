"""Claude Code's billing-header system block (`x-anthropic-billing-header: ...`, system[0]) is no part
of the Anthropic cache key by default (AnthropicConfig.skip_billing_header, which cites the
evidence): a prompt that differs only in that block reads the entries the other one wrote, in
`ctxbench serve` (sim/serve/wire/common.py) and in a simulated replay (sim/build.py) alike. The block is
keyed as one fixed digest (sim/content.BILLING_HEADER_DIGEST): the transcript finds it once, when
its head is pushed, and the cache adds one constant to the hashes from it on."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.policies.preset import load_policy
from ctxbench.sim.core.catalog import model_info, prices
from ctxbench.sim.core.content import BILLING_HEADER_DIGEST, Block, Message
from ctxbench.sim.core.provider import Request
from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.prepared import prepare
from ctxbench.sim.providers.anthropic import AnthropicConfig, AnthropicProvider
from ctxbench.sim.providers.registry import make_provider
from ctxbench.sim.runner import factory_for, run_prepared
from ctxbench.sim.serve.wire import ANTHROPIC, parse
from ctxbench.traces.model import (
    Content,
    Header,
    MessageEvent,
    SystemEvent,
    ToolDef,
    ToolsEvent,
    Trace,
    Usage,
)

MODEL = "claude-sonnet-4-5"
F = factory_for(MODEL)


def header(fp: str, cch: str = "") -> str:
    return f"x-anthropic-billing-header: cc_version=2.1.197.{fp}; cc_entrypoint=sdk-cli;" + (
        f" cch={cch};" if cch else ""
    )


# ---------------------------------------------------------------- the transcript's index
def _head(text: str) -> tuple[list[Block], list[Block]]:
    tools = [F.tool_def("Bash", None, 2000)]
    system = [F.text("system", text), F.text("system", "You are a Claude agent. " * 300)]
    return tools, system


def test_header_keyed_as_one_fixed_digest() -> None:
    """hashes + header_delta from the header on = the hashes of the same prompt whose header block
    has BILLING_HEADER_DIGEST as its digest; before it, nothing moves."""
    tools, system = _head(header("4fb"))
    tr = Transcript(tools, system)
    tr.append(Message.of("user", (F.text("user", "Review the build logs."),)))
    assert tr.header_pos == tr.tools_end == 1
    fixed = Transcript(tools, [replace(system[0], digest=BILLING_HEADER_DIGEST), system[1]])
    fixed.append(tr.messages[0])
    keyed = [h + (tr.header_delta if p >= tr.header_pos else 0) for p, h in enumerate(tr.hashes)]
    assert keyed == fixed.hashes
    assert tr.hashes[0] == fixed.hashes[0] and tr.hashes[1] != fixed.hashes[1]
    assert tr.fork().header_pos == 1 and tr.fork().header_delta == tr.header_delta


def test_header_found_again_when_the_head_changes() -> None:
    tools, system = _head(header("4fb"))
    tr = Transcript(tools, system)
    before = tr.header_delta
    assert tr.replace_system([F.text("system", header("f9d")), system[1]]) == 1
    assert tr.header_pos == 1 and tr.header_delta != before
    tr.replace_system(system[1:])  # no header any more
    assert (tr.header_pos, tr.header_delta) == (-1, 0)
    tr.replace_tools([*tools, F.tool_def("Read", None, 500)])
    assert tr.header_pos == -1
    tr.replace_system(system)
    assert tr.header_pos == 2  # after the two tools
    plain = Transcript(tools, [F.text("system", "x-anthropic-billing-header is mentioned, not sent")])
    assert plain.header_pos == -1
    assert Transcript([], [F.text("user", header("4fb"))]).header_pos == -1  # a system block only


# ---------------------------------------------------------------- the provider, by hand
def _reads(fps: list[str], skip: bool = True) -> list[int]:
    """Cache reads of one conversation's requests, each with the billing header `fps[k]`, marks on
    both system blocks after the header and on the last message (Claude Code 2.1.197)."""
    prov = AnthropicProvider(model_info(MODEL), prices(MODEL), AnthropicConfig(skip_billing_header=skip))
    tools = [F.tool_def("Bash", None, 2000)]
    body = [F.text("system", None, 0, key="s1", tokens=300), F.text("system", None, 0, key="s2", tokens=3000)]
    tr = Transcript(tools, [F.text("system", header(fps[0])), *body])
    reads = []
    for k, fp in enumerate(fps):
        tr.replace_system([F.text("system", header(fp)), *body])
        tr.append(Message.of("user", (F.text("user", None, 0, key=f"u{k}", tokens=1500),)))
        marks = ((tr.tools_end + 1, "5m"), (tr.tools_end + 2, "5m"), (len(tr) - 1, "5m"))
        out = prov.call(Request(tr, len(tr), MODEL, 10, marks, index=k), 10.0 * k)
        reads.append(out.usage.cache_read)
        tr.append(Message.of("assistant", (F.text("assistant", None, 0, key=f"a{k}", tokens=100),)))
    return reads


def test_a_changed_fingerprint_reads_the_whole_previous_prompt() -> None:
    head = F.tool_def("Bash", None, 2000).tokens + F.text("system", header("4fb")).tokens + 3300
    assert _reads(["4fb", "4fb"]) == [0, head + 1500]
    assert _reads(["4fb", "f9d", "f9d"]) == [0, head + 1500, head + 3100]
    # counted as content (a third-party prefix cache): the whole prefix from the header on is re-written
    assert _reads(["4fb", "f9d", "f9d"], skip=False) == [0, 0, head + 3100]


# ---------------------------------------------------------------- `ctxbench serve`: the wire path
def _body(system0: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    messages = json.loads(json.dumps(messages))
    messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return {
        "model": MODEL,
        "max_tokens": 32000,
        "system": [
            {"type": "text", "text": system0},
            {"type": "text", "text": "You are a Claude agent.", "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "Be careful. " * 400, "cache_control": {"type": "ephemeral"}},
        ],
        "tools": [
            {"name": "Bash", "description": "Run a command. " * 50, "input_schema": {"type": "object"}}
        ],
        "messages": messages,
    }


def _served(bodies: list[dict[str, Any]], profile: str = "anthropic", **over: Any) -> list[tuple[int, int]]:
    """(cache read, prompt tokens) of each body billed in order by one provider of `profile`."""
    prov = make_provider(profile, MODEL, 0, **over)
    out = []
    for k, body in enumerate(bodies):
        p = parse(ANTHROPIC, body, {}, F)
        req = Request(p.tr, len(p.tr), MODEL, 10, p.breakpoints, "live", p.session, k)
        out.append((prov.call(req, float(k)).usage.cache_read, req.input_tokens))
    return out


USER = {"role": "user", "content": [{"type": "text", "text": "Review the build logs. " * 100}]}
REPLY = {"role": "assistant", "content": [{"type": "text", "text": "Looking at them now. " * 20}]}
MORE = {"role": "user", "content": [{"type": "text", "text": "And the tests. " * 100}]}


def test_serve_reads_through_a_changed_header_by_profile_default() -> None:
    """The `anthropic` profile (sim/data/profiles/anthropic.yaml) sets skip_billing_header: the
    second request, with another cc_version fingerprint and cch, reads the first one's prompt."""
    a = _body(header("4fb", "36ee5"), [USER])
    b = _body(header("f9d", "0aaa9"), [USER, REPLY, MORE])
    (r1, n1), (r2, _n2) = _served([a, b])
    assert r1 == 0 and r2 == n1
    (_, n1), (r2, _) = _served([a, b], skip_billing_header=False)
    assert r2 == 0  # tools carry no mark: nothing before the header is an entry
    same = _body(header("4fb", "36ee5"), [USER, REPLY, MORE])
    assert _served([a, same], skip_billing_header=False)[1][0] == n1


@settings(max_examples=40, deadline=None)
@given(
    st.text("0123456789abcdef", min_size=3, max_size=3),
    st.text("0123456789abcdef", min_size=3, max_size=3),
    st.one_of(st.just(""), st.text("0123456789abcdef", min_size=5, max_size=5)),
    st.integers(min_value=1, max_value=300),
    st.integers(min_value=1, max_value=6),
)
def test_prompts_that_differ_only_in_the_header_hit_the_same_entries(
    fp1: str, fp2: str, cch: str, words: int, turns: int
) -> None:
    msgs: list[dict[str, Any]] = []
    for k in range(turns):
        msgs.append({"role": "user", "content": [{"type": "text", "text": f"step {k} " * words}]})
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": f"done {k}"}]})
    msgs.append({"role": "user", "content": [{"type": "text", "text": "next"}]})
    a = _body(header(fp1), msgs)
    b = _body(header(fp2, cch), msgs)
    (r1, _n1), (r2, n2) = _served([a, b])
    assert r1 == 0 and r2 == n2  # the whole prompt, whatever the header says
    (_, _), (r2, n2) = _served([a, b], skip_billing_header=False)
    assert r2 == (n2 if a == b else 0)


# ---------------------------------------------------------------- a simulated replay (sim/build.py)
def _trace() -> Trace:
    def user(k: int) -> MessageEvent:
        return MessageEvent("user", (Content("text", text=f"question {k} " * 300),), t=float(k))

    def reply(k: int) -> MessageEvent:
        text = Content("text", text=f"answer {k} " * 50)
        return MessageEvent("assistant", (text,), t=float(k), usage=Usage())

    def system(fp: str, t: float) -> SystemEvent:
        body = Content("text", text="You are a coding agent. " * 1500)
        return SystemEvent((Content("text", text=header(fp)), body), t=t)

    events = [
        ToolsEvent((ToolDef("Read", nbytes=800),), t=0.0),
        system("4fb", 0.0),
        user(0), reply(0), user(1), reply(1),
        system("f9d", 2.0),  # the header changes, as at Claude Code's first compaction
        user(2), reply(2),
    ]  # fmt: skip
    return Trace(Header(source="test", harness="C", model=MODEL), tuple(events))


def test_replay_reads_through_a_changed_header() -> None:
    prep = prepare(_trace(), factory_for(MODEL))
    policy = load_policy("recorded")
    recs = run_prepared([prep], policy, "anthropic", 0).records
    assert len(recs) == 3
    assert recs[2].cache_read == recs[1].cache_read + recs[1].cache_write_5m and recs[2].miss_cause == ""
    off = run_prepared([prep], policy, "anthropic", 0, {"skip_billing_header": False}).records
    assert off[2].cache_read < recs[2].cache_read and off[2].miss_cause != ""
