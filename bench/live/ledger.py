"""A live run's ledger read back: classified requests, the task they carry, and re-billing.

`ctxbench.bench.live.run_harness` leaves the server's ledger `requests.jsonl`: every request a real harness
sent, with the usage the server billed. This module parses it with the server's own parser (so
every block has the tokens the server billed), tells the harness's main requests from its
compaction and side requests, rebuilds the *pre-compaction* task — the initial prompt, every model
reply and every tool result, without compaction instructions or continuation summaries — as a
`PreparedTrace`, and re-bills the recording. `ctxbench.bench.live.predict` simulates the task and
compares.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.sim.core.catalog import model_info
from ctxbench.sim.core.content import BILLING_HEADER, TOOL_USE, Block, Message
from ctxbench.sim.core.provider import Provider, Request
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.prepared import PreparedTrace, Step
from ctxbench.sim.providers.registry import make_provider
from ctxbench.sim.runner import factory_for
from ctxbench.sim.serve.script import SUMMARY_MARKERS
from ctxbench.sim.serve.server import ZERO_LATENCY
from ctxbench.sim.serve.wire import Parsed, WireError, parse

# The message a harness puts at the head of the new context after compacting: Claude Code's
# continuation message (research/policies.md §1 "/compact and the summary prompt"; ecosystem.md
# §3a) and Codex's SUMMARY_PREFIX (policies.md §2). Harness text, not task content.
CONTINUATION_MARKERS = (
    "This session is being continued from a previous conversation",
    "Another language model started to solve this problem",
)
# Continuation *blocks*: opencode 1.18.33's user message of the compaction and the turn it replays
# (ecosystem.md §3c), which the Anthropic API merges with the messages beside them.
CONTINUATION_BLOCKS = (
    "What did we do so far?",
    "Continue if you have next steps, or stop and ask for clarification",
)
# The model turn Gemini CLI puts after its state snapshot (research/policies.md §3 "new history"):
# harness text, modelled by the preset's `ack_bytes`, not part of the continuation message.
ACK_MARKERS = ("Got it. Thanks for the additional context!",)
MAIN, SUMMARY, SIDE = "main", "summary", "side"


class PredictError(ValueError):
    """A recording that cannot be compared (names the file and what is wrong)."""


@dataclass
class LiveRequest:
    """One ledger line: the parsed request, how the harness meant it, and what the server billed."""

    seq: int
    t: float
    kind: str  # main | summary | side
    parsed: Parsed
    usage: dict[str, int]
    cost: float
    reply: list[dict[str, Any]]
    model: str
    raw: dict[str, Any] = field(default_factory=dict, repr=False)  # the ledger line (body, headers)

    @property
    def input(self) -> int:
        u = self.usage
        return u["uncached"] + u["cache_read"] + u["cache_write_5m"] + u["cache_write_1h"]

    @property
    def write(self) -> int:
        return self.usage["cache_write_5m"] + self.usage["cache_write_1h"]


def _has(m: Message, markers: tuple[str, ...]) -> bool:
    return any(b.text and any(x in b.text for x in markers) for b in m.blocks)


def classify(p: Parsed) -> str:
    """summary: carries a compaction instruction (SUMMARY_MARKERS, ecosystem.md §3a/§3b); side: no
    tools (title generation and other helper calls, ecosystem.md §3a); main: a turn of the task (one
    that offers tools, or whose system prompt has the model write its calls in XML tags)."""
    last = p.messages[-1] if p.messages else None
    system = p.tr.blocks[p.tr.tools_end : p.tr.system_end]
    if (
        any(m in p.last_user_text for m in SUMMARY_MARKERS)
        or (last is not None and last.role == "user" and _has(last, SUMMARY_MARKERS))
        or (not p.tool_names and any(b.text and any(x in b.text for x in SUMMARY_MARKERS) for b in system))
    ):  # the last: opencode's compaction agent, its instruction in its own system prompt (§3c)
        return SUMMARY
    return MAIN if p.tool_names or p.xml_tools else SIDE  # xml_tools: Cline's calls in XML tags


def load_ledger(folder: Path) -> tuple[list[LiveRequest], BlockFactory]:
    """The ledger `folder/requests.jsonl`, or `folder` itself when it is a ledger file (`.jsonl`, or
    `.jsonl.xz` as kept in the repo's test data)."""
    path = (
        folder
        if folder.is_file() or folder.name.endswith((".jsonl", ".jsonl.xz"))
        else folder / "requests.jsonl"
    )
    if not path.is_file():
        raise PredictError(f"{path}: no such ledger (run `python -m ctxbench.bench.live.run_harness` first)")
    out: list[LiveRequest] = []
    factory: BlockFactory | None = None
    if path.suffix == ".xz":
        import lzma

        text = lzma.decompress(path.read_bytes()).decode("utf-8")
    else:
        text = path.read_text(encoding="utf-8")
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            x = json.loads(line)
        except ValueError as exc:
            raise PredictError(f"{path}:{n}: not JSON ({exc})") from None
        if x.get("usage") is None:  # a request the server refused: nothing billed, not part of the task
            continue
        try:
            factory = factory or factory_for(x["model"])
            p = parse(x["api"], x["body"], x.get("headers", {}), factory)
            out.append(
                LiveRequest(
                    int(x["seq"]),
                    float(x["t"]),
                    "",
                    p,
                    dict(x["usage"]),
                    float(x.get("cost") or 0.0),
                    list(x.get("reply") or []),
                    str(x["model"]),
                    x,
                )
            )
        except KeyError as exc:
            raise PredictError(f"{path}:{n}: missing field {exc}") from None
        except WireError as exc:
            raise PredictError(f"{path}:{n}: body does not parse: {exc.message}") from None
        out[-1].kind = classify(p)
    if not out or factory is None:
        raise PredictError(f"{path}: no billed request")
    out.sort(key=lambda r: r.seq)
    return out, factory


# ---------------------------------------------------------------- the pre-compaction task
def _key(m: Message) -> tuple[str, tuple[int, ...]]:
    return m.role, tuple(b.digest for b in m.blocks)


def summary_texts(reqs: list[LiveRequest]) -> tuple[str, ...]:
    """The texts the model wrote in reply to the harness's compaction requests (the summaries)."""
    out = []
    for r in reqs:
        if r.kind == SUMMARY:
            out += [str(b["text"]).strip() for b in r.reply if b.get("type") == "text" and b.get("text")]
    return tuple(t for t in out if len(t) >= 40)


def is_continuation(b: Block, summaries: tuple[str, ...] = ()) -> bool:
    """A block the harness made for a compaction: opencode's continuation texts, Gemini CLI's
    acknowledgement, or a summary the model wrote (opencode replays it as an assistant turn,
    Gemini CLI in the first user message). Blocks, not messages: the Anthropic API merges
    consecutive messages of one role, so opencode's summary turn arrives in one message with the
    kept tail's first reply, and its "Continue ..." text in one with the last tool result. (Claude
    Code's and Codex's continuation is a message of its own: CONTINUATION_MARKERS, whole.)"""
    t = b.text
    return t is not None and any(x in t for x in (*CONTINUATION_BLOCKS, *ACK_MARKERS, *summaries))


def _without_continuation(msgs: list[Message], summaries: tuple[str, ...]) -> list[Message]:
    out = []
    for m in msgs:
        if _has(m, CONTINUATION_MARKERS):
            continue
        kept = tuple(b for b in m.blocks if not is_continuation(b, summaries))
        if len(kept) == len(m.blocks):
            out.append(m)
        elif kept:
            out.append(Message.of(m.role, kept, m.tag))
    return out


def _task_messages(p: Parsed, kind: str, summaries: tuple[str, ...] = ()) -> list[Message]:
    """The request's messages minus what the harness added for compaction: the compaction
    instruction (a block of the last user message in Claude Code, its own message in Codex), the
    continuation summary message; none of a compaction request made with its own system prompt
    from a transcript written out as text (opencode, ecosystem.md §3c)."""
    msgs = list(p.messages)
    system = p.tr.blocks[p.tr.tools_end : p.tr.system_end]
    if kind == SUMMARY and any(b.text and any(x in b.text for x in SUMMARY_MARKERS) for b in system):
        return []
    if kind == SUMMARY and msgs:
        last = msgs[-1]
        kept = tuple(b for b in last.blocks if not (b.text and any(x in b.text for x in SUMMARY_MARKERS)))
        msgs[-1:] = [Message.of(last.role, kept, last.tag)] if kept else []
    return _without_continuation(msgs, summaries)


def _reply_message(r: LiveRequest, f: BlockFactory) -> Message:
    """A reply that no later request carries (the last one): rebuilt from the ledger's reply blocks."""
    blocks = []
    for i, b in enumerate(r.reply):
        if b.get("type") == "tool_use":
            text = json.dumps(b.get("input", {}), separators=(",", ":"))
            blocks.append(
                f.text(
                    "assistant", text, kind=TOOL_USE, tool_id=str(b.get("id", i)), name=str(b.get("name", ""))
                )
            )
        else:
            blocks.append(f.text("assistant", str(b.get("text", ""))))
    return Message.of("assistant", tuple(blocks) or (f.text("assistant", "ok"),), "reply")


@dataclass
class Task:
    """The pre-compaction conversation and where it came from."""

    prepared: PreparedTrace
    mains: list[LiveRequest]
    notes: list[str] = field(default_factory=list)


def _answers(m: Message, r: LiveRequest) -> bool:
    """Whether message `m` is the reply the server gave to request `r`."""
    ids = [str(b.get("id")) for b in r.reply if b.get("type") == "tool_use"]
    if ids:
        return list(m.tool_use_ids) == ids
    texts = [str(b.get("text", "")) for b in r.reply if b.get("type") == "text"]
    return m.role == "assistant" and [b.text for b in m.blocks if b.text is not None] == texts


def _after_compaction(r: LiveRequest, prev: LiveRequest, summaries: tuple[str, ...]) -> list[Message] | None:
    """The new input of main request `r` when a compaction took the previous main's reply away
    before it was sent back (Gemini CLI compressing everything after a text reply): the messages
    after the harness's continuation; None when `r` carries that reply (the usual case)."""
    raw = r.parsed.messages
    if any(_answers(m, prev) for m in raw):
        return None
    made = [
        i
        for i, m in enumerate(raw)
        if _has(m, CONTINUATION_MARKERS) or any(is_continuation(b, summaries) for b in m.blocks)
    ]
    return _without_continuation(list(raw[made[-1] + 1 :]), summaries) if made else None


def task_of(reqs: list[LiveRequest], f: BlockFactory, name: str = "live") -> Task:
    """Rebuild the task: messages in first-seen order over the main and compaction requests; each
    assistant message is the reply to the next main request (in order); user messages are inputs."""
    mains = [r for r in reqs if r.kind == MAIN]
    if not mains:
        raise PredictError("the recording has no main request (only compaction or side requests)")
    first = mains[0].parsed.tr
    msgs: list[Message] = []
    first_seen: list[tuple[float, int]] = []  # when, and how many main requests came before
    known: Counter[tuple[str, tuple[int, ...]]] = Counter()
    summaries = summary_texts(reqs)
    n_main = 0
    for r in reqs:
        if r.kind == SIDE:
            continue
        n_main += r.kind == MAIN
        cur = _task_messages(r.parsed, r.kind, summaries)
        # a message is known when the task has it at least as many times as the request so far
        # (the same text twice, e.g. Gemini CLI's "Please continue.", is two messages)
        seen: Counter[tuple[str, tuple[int, ...]]] = Counter()
        last_known = -1
        for i, m in enumerate(cur):
            seen[_key(m)] += 1
            if seen[_key(m)] <= known[_key(m)]:
                last_known = i
        fresh = _after_compaction(r, mains[n_main - 2], summaries) if r.kind == MAIN and n_main > 1 else None
        for m in cur[last_known + 1 :] if fresh is None else fresh:
            msgs.append(m)
            first_seen.append((r.t, n_main - (r.kind == MAIN)))
            known[_key(m)] += 1
    notes: list[str] = []
    steps: list[Step] = []
    k = 0  # replies so far: the k-th assistant message answers mains[k]
    for m, (t, before) in zip(msgs, first_seen, strict=True):
        while m.role != "assistant" and k < before:  # a reply no later request carries (compacted
            r = mains[k]  # before it was sent back: Gemini CLI compressing after a text reply)
            notes.append(f"reply {k + 1} is in no later request: rebuilt from the ledger's reply")
            steps.append(Step("reply", _reply_message(r, f), r.t, None, int(r.usage["output"])))
            k += 1
        if m.role == "assistant":
            if k >= len(mains):
                notes.append(
                    f"assistant message after the last main request ignored ({len(m.blocks)} blocks)"
                )
                continue
            r = mains[k]
            ids = [str(b.get("id")) for b in r.reply if b.get("type") == "tool_use"]
            if ids and list(m.tool_use_ids) != ids:
                notes.append(f"reply {k + 1}: tool ids {list(m.tool_use_ids)} != billed reply {ids}")
            steps.append(Step("reply", m, r.t, None, int(r.usage["output"])))
            k += 1
        else:
            steps.append(Step("message", m, t))
    for r in mains[k:]:  # replies never sent back (the final answer)
        steps.append(Step("reply", _reply_message(r, f), r.t, None, int(r.usage["output"])))
    prep = PreparedTrace(
        name,
        mains[0].model,
        model_info(mains[0].model).window,
        tuple(first.blocks[: first.tools_end]),
        tuple(first.blocks[first.tools_end : first.system_end]),
        tuple(steps),
    )
    return Task(prep, mains, notes)


# ---------------------------------------------------------------- Claude Code's billing header
def billing_header(r: LiveRequest) -> str:
    """The text of Claude Code's attribution block (system[0]) of a request, or "".

    Its `cc_version=<version>.<fp>` suffix is SHA-256(salt + characters 4, 7, 20 of the first user
    text + version)[:3] (recomputed on the recording: the prompt gives 4fb, the continuation
    summary f9d), so it changes when a compaction replaces the first user message. The Anthropic
    provider profile keeps the block out of the cache key, as the bills of real Claude Code
    sessions show the API does (AnthropicConfig.skip_billing_header cites them), so the change
    costs nothing there."""
    body = r.raw.get("body") or {}
    system = body.get("system") if isinstance(body, dict) else None
    if isinstance(system, list) and system and isinstance(system[0], dict):
        text = system[0].get("text")
        if isinstance(text, str) and text.startswith(BILLING_HEADER):
            return text
    return ""


def per_model(profile: str) -> Callable[[str], tuple[Provider, BlockFactory]]:
    """A fresh provider model and block factory per served model, as `ctxbench serve` bills them
    (one cache per model; a side request on another model is billed as that model, never as the
    conversation's)."""
    made: dict[str, tuple[Provider, BlockFactory]] = {}

    def billed_as(model: str) -> tuple[Provider, BlockFactory]:
        if model not in made:
            made[model] = (make_provider(profile, model, 0, latency=dict(ZERO_LATENCY)), factory_for(model))
        return made[model]

    return billed_as


def rebill(reqs: list[LiveRequest], profile: str) -> list[dict[str, int]]:
    """Bill the recorded requests again through a fresh provider model (recorded times)."""
    billed_as = per_model(profile)
    out = []
    for r in reqs:
        provider, f = billed_as(r.model)
        p = parse(r.raw["api"], r.raw["body"], r.raw.get("headers", {}), f)
        req = Request(
            p.tr,
            len(p.tr),
            r.model,
            r.usage["output"],
            p.breakpoints,
            "live",
            p.session,
            int(r.raw.get("index", 0)),
            p.cache_key,
            p.session,
        )
        u = provider.call(req, r.t).usage
        out.append(
            {
                "uncached": u.uncached,
                "cache_read": u.cache_read,
                "cache_write_5m": u.cache_write_5m,
                "cache_write_1h": u.cache_write_1h,
                "output": u.output,
            }
        )
    return out
