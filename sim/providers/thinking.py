"""Thinking blocks stripped by the API when a user turn brings non-tool-result content.

providers.md §1.6 (row "Non-tool-result user content with thinking on" [DOC A-PC]): on earlier
Opus/Sonnet models (before Opus 4.5 and Sonnet 4.6) and on all Haiku models, a user message with
any content other than tool results makes the API strip the thinking blocks of every earlier
assistant turn, which invalidates the messages-level cache from the first stripped block on;
Opus 4.5+ and Sonnet 4.6+ keep them. Within a tool loop (user messages holding only tool
results) thinking is kept (§1.7: "Cache stays valid when only tool_results are added").

So the prompt the provider hashes and bills is the transcript with the thinking blocks of every
assistant message before the last "real" user message removed. `ThinkingStripper` keeps that
prompt as its own `Transcript`, updated incrementally per request: appended messages are copied,
and only the messages of the turn that just ended are re-hashed when a real user message arrives
(work bounded by the turn, never by the whole prompt). Positions are mapped both ways so the
provider's lookup/commit run unchanged on the stripped prompt.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from ctxbench.sim.core.content import IMAGE, THINKING, TOOL_RESULT, Message
from ctxbench.sim.core.names import Breakpoints, Ttl
from ctxbench.sim.core.provider import Request
from ctxbench.sim.core.transcript import Transcript


def _has_thinking(msg: Message) -> bool:
    return msg.role == "assistant" and any(b.kind == THINKING for b in msg.blocks)


def _end_hash(tr: Transcript, m: int) -> int:
    end = tr.message_end(m)
    return tr.hashes[end - 1] if end > 0 else 0


def real_user(msg: Message) -> bool:
    """A user message with content other than tool results (§1.6). An image right after tool
    results belongs to them (traces/FORMAT.md: such an image "follows the tool_result items")."""
    if msg.role != "user":
        return False
    after_result = False
    for b in msg.blocks:
        if b.kind == TOOL_RESULT:
            after_result = True
        elif b.kind != IMAGE or not after_result:
            return True
    return False


@dataclass
class _State:
    src: Transcript
    eff: Transcript
    src_ends: list[int] = field(default_factory=list)  # src chain hash at the end of each mirrored message
    stripped: list[bool] = field(default_factory=list)  # mirrored message i has its thinking removed
    bound: int = -1  # index of the last real user message mirrored (-1: none)
    head: tuple[int, int, int] = (0, 0, 0)  # tools end, system end and its chain hash when mirrored


class ThinkingStripper:
    """The stripped prompt of each transcript a provider sees, kept in step with it."""

    def __init__(self) -> None:
        self._states: dict[int, _State] = {}
        self._cache: dict[int, tuple[Message, Message]] = {}
        self._last: tuple[Request, Request, ThinkingMap] | None = None  # (request, view, map)

    def _strip(self, msg: Message) -> Message:
        hit = self._cache.get(id(msg))
        if hit is not None and hit[0] is msg:
            return hit[1]
        out = Message.of(msg.role, [b for b in msg.blocks if b.kind != THINKING], msg.tag, msg.pinned)
        self._cache[id(msg)] = (msg, out)
        return out

    def _state(self, tr: Transcript) -> _State:
        st = self._states.get(id(tr))
        head = (tr.tools_end, tr.system_end, tr.hashes[tr.system_end - 1] if tr.system_end else 0)
        if st is None or st.src is not tr or st.head != head:  # new, or its tools/system replaced
            tools, system = tr.blocks[: tr.tools_end], tr.blocks[tr.tools_end : tr.system_end]
            st = self._states[id(tr)] = _State(tr, Transcript(tools, system), head=head)
        return st

    def _sync(self, st: _State) -> None:
        """Mirror `st.src` into `st.eff`: keep the unchanged leading messages, strip the thinking
        of every assistant message before the last real user message."""
        src, eff = st.src, st.eff
        msgs = src.messages
        k = min(len(st.src_ends), len(msgs))
        while k > 0 and _end_hash(src, k - 1) != st.src_ends[k - 1]:
            k -= 1  # an edit: the chained hash tells how many leading messages are unchanged
        bound = st.bound if st.bound < k else -1
        if bound < 0:
            bound = next((i for i in range(k - 1, -1, -1) if real_user(msgs[i])), -1)
        for i in range(k, len(msgs)):
            if real_user(msgs[i]):
                bound = i
        first = k
        for i in range(max(0, min(st.bound, bound)), min(max(st.bound, bound), k)):
            if st.stripped[i] != (i < bound and _has_thinking(msgs[i])):
                first = i  # the turn that just ended: its thinking is stripped from now on
                break
        st.bound = bound
        if first == len(msgs) == len(eff.messages):
            return
        new = [
            self._strip(m) if i < bound and _has_thinking(m) else m for i, m in enumerate(msgs[first:], first)
        ]
        eff.replace_from(first, new)
        del st.src_ends[first:], st.stripped[first:]
        for i in range(first, len(msgs)):
            st.src_ends.append(_end_hash(src, i))
            st.stripped.append(i < bound and _has_thinking(msgs[i]))

    def view(self, req: Request) -> tuple[Request, ThinkingMap]:
        """The request as the provider sees it: same fields, stripped prompt, mapped breakpoints.
        A transcript without thinking blocks is its own stripped prompt (no mirror is kept; one
        is rebuilt from the transcript when thinking appears). The latest answer is kept, since
        the harness's diagnosis and the call ask for the same request."""
        last = self._last
        if last is not None and last[0] is req:
            return last[1], last[2]
        if not req.tr.thinking_msgs:
            self._states.pop(id(req.tr), None)
            bps = req.breakpoints
            ascending = all(bps[i][0] < bps[i + 1][0] for i in range(len(bps) - 1))
            out = req if ascending else _copy(req, req.tr, req.n, _mapped(bps, IDENTITY))
            self._last = (req, out, IDENTITY)
            return out, IDENTITY
        st = self._state(req.tr)
        self._sync(st)
        mp = ThinkingMap(st)
        n = mp.to_eff(req.n - 1) + 1 if req.n > 0 else 0
        out = _copy(req, st.eff, n, _mapped(req.breakpoints, mp))
        self._last = (req, out, mp)
        return out, mp


def _mapped(breakpoints: Breakpoints, mp: ThinkingMap) -> Breakpoints:
    """Breakpoints on the stripped prompt: mapped, in ascending order, the first ttl of a
    position kept."""
    out: dict[int, Ttl] = {}
    for pos, ttl in breakpoints:
        q = mp.to_eff(pos)
        if q >= 0:
            out.setdefault(q, ttl)
    return tuple(sorted(out.items()))


def _copy(req: Request, tr: Transcript, n: int, breakpoints: Breakpoints) -> Request:
    """`req` on another transcript (its stripped prompt), with positions mapped onto it."""
    return Request(
        tr,
        n,
        req.model,
        req.output_tokens,
        breakpoints,
        req.kind,
        req.conversation,
        req.index,
        req.cache_key,
        req.session_id,
        req.max_tokens,
    )


class ThinkingMap:
    """Block positions between a transcript and its stripped prompt."""

    def __init__(self, st: _State | None) -> None:
        self.st = st  # None: the identity (nothing stripped)

    def to_eff(self, pos: int) -> int:
        """The stripped prompt's position of block `pos`, or of the last kept block before it."""
        if self.st is None:
            return pos
        src, eff = self.st.src, self.st.eff
        if pos < src.system_end:
            return pos
        m = bisect_right(src.msg_starts, pos) - 1
        off = pos - src.msg_starts[m]
        if self.st.stripped[m]:
            blocks = src.messages[m].blocks
            off = sum(1 for b in blocks[: off + 1] if b.kind != THINKING) - 1
        return eff.msg_starts[m] + off if off >= 0 else eff.msg_starts[m] - 1

    def to_src(self, pos: int) -> int:
        """The transcript position of the stripped prompt's block `pos` (-1 stays -1)."""
        if self.st is None:
            return pos
        src, eff = self.st.src, self.st.eff
        if pos < src.system_end:
            return pos
        m = bisect_right(eff.msg_starts, pos) - 1
        off = pos - eff.msg_starts[m]
        if self.st.stripped[m]:
            kept = [j for j, b in enumerate(src.messages[m].blocks) if b.kind != THINKING]
            off = kept[off]
        return src.msg_starts[m] + off


IDENTITY = ThinkingMap(None)
