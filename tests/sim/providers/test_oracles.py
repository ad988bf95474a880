"""Each cache model agrees with a brute-force oracle on random request sequences (hypothesis
state machines). The oracles keep every prefix / entry explicitly and scan linearly."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from ctxbench.sim.core.content import Message
from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.providers.auto_prefix import AutoConfig, AutoPrefixProvider, granular
from ctxbench.sim.providers.openai_breakpoints import (
    BreakpointConfig,
    OpenAIBreakpointProvider,
    implicit_breakpoint,
)
from tests.sim.providers.conftest import EPS_LATENCY, F, catalog, request

SIZES = st.sampled_from([40, 130, 300, 520, 900])
KEYS = st.sampled_from(["x", "y", "z", "w"])  # few contents, so conversations share prefixes


class _Convs(RuleBasedStateMachine):
    """Random conversations: new ones, appends, edits (branches) and time passing."""

    def __init__(self) -> None:
        super().__init__()
        self.convs: list[Transcript] = []
        self.now = 0.0
        self.index = 0

    @initialize()
    def start(self) -> None:
        self.convs.append(self._new("a"))

    def _new(self, sys_key: str) -> Transcript:
        return Transcript(
            [F.text("tools", None, 0, key="T", tokens=200)],
            [F.text("system", None, 0, key=sys_key, tokens=700)],
        )

    @rule(sys_key=st.sampled_from(["a", "b"]))
    def new_conversation(self, sys_key: str) -> None:
        if len(self.convs) < 4:
            self.convs.append(self._new(sys_key))

    @rule(c=st.integers(0, 3), key=KEYS, size=SIZES, role=st.sampled_from(["user", "assistant"]))
    def append(self, c: int, key: str, size: int, role: str) -> None:
        tr = self.convs[c % len(self.convs)]
        tr.append(Message.of(role, (F.text(role, None, 0, key=key, tokens=size),)))

    @rule(c=st.integers(0, 3), m=st.integers(0, 6), key=KEYS, size=SIZES)
    def edit(self, c: int, m: int, key: str, size: int) -> None:
        tr = self.convs[c % len(self.convs)]
        if tr.messages:
            tr.replace_from(
                m % len(tr.messages),
                [Message.of("user", (F.text("user", None, 0, key="e" + key, tokens=size),))],
            )

    @rule(dt=st.sampled_from([0.0, 1.0, 100.0, 400.0, 700.0, 2000.0]))
    def wait(self, dt: float) -> None:
        self.now += dt


class AutoPrefixMachine(_Convs):
    """OpenAI-style automatic cache (one replica) vs. an oracle of every prefix's last use."""

    TTL = 600.0

    def __init__(self) -> None:
        super().__init__()
        m, p = catalog("gpt-4.1")
        cfg = AutoConfig(granularity=128, ttl=self.TTL, latency=EPS_LATENCY)
        self.p = AutoPrefixProvider("openai", m, p, cfg, 0)
        self.last_use: dict[int, float] = {}  # chain hash -> last use (written or read)
        self.written: dict[int, float] = {}  # chain hash -> when written (readable strictly after)

    @rule(c=st.integers(0, 3))
    def call(self, c: int) -> None:
        tr = self.convs[c % len(self.convs)]
        if not len(tr):
            return
        n = len(tr)

        def live(h: int) -> bool:
            return h in self.last_use and self.last_use[h] + self.TTL > self.now

        matched = -1
        for i in range(n):  # brute force: walk the chain until the first dead or unready prefix
            h = tr.hashes[i]
            if not live(h) or self.written[h] >= self.now:
                break
            matched = i
        want = granular(tr.cum_tokens[matched] if matched >= 0 else 0, 1024, 128)
        out = self.p.call(request(tr, self.index, conv=f"c{c}"), self.now)
        self.index += 1
        assert out.usage.cache_read == want, (out.usage.cache_read, want)
        for i in range(matched + 1):
            self.last_use[tr.hashes[i]] = self.now
        if tr.total_tokens >= 1024:
            for i in range(n):
                h = tr.hashes[i]
                if not live(h):
                    self.written[h] = self.now
                self.last_use[h] = self.now


class BreakpointMachine(_Convs):
    """OpenAI 5.6 breakpoints vs. an oracle scanning every write ever made."""

    TTL = 1800.0
    WINDOW = 3

    def __init__(self) -> None:
        super().__init__()
        m, p = catalog("gpt-5.6-terra")
        cfg = BreakpointConfig(ttl=self.TTL, read_window=self.WINDOW, latency=EPS_LATENCY)
        self.p = OpenAIBreakpointProvider("openai", m, p, cfg, 0)
        self.entries: dict[int, tuple[int, int, float, float]] = {}  # hash -> (pos, tokens, expires, written)
        self.writes: list[tuple[str, int]] = []  # (key, hash) in write order

    @rule(
        c=st.integers(0, 3), marks=st.lists(st.integers(0, 40), max_size=5), key=st.sampled_from([None, "k"])
    )
    def call(self, c: int, marks: list[int], key: str | None) -> None:
        tr = self.convs[c % len(self.convs)]
        n = len(tr)
        if not n:
            return
        bps = tuple((b % n, "5m") for b in marks)
        req = request(tr, self.index, conv=f"c{c}", key=key, breakpoints=bps)
        self.index += 1
        explicit = sorted({b for b, _ in bps})
        imp = implicit_breakpoint(req)
        points = sorted({*[b for b in explicit if b != imp][-3:], *([imp] if imp >= 0 else [])})
        recent = [h for k, h in self.writes if k == (key or "")][-self.WINDOW :]
        cands = {tr.hashes[p]: p for p in points}
        for h in recent:
            if h in self.entries and self.entries[h][0] < n and tr.hashes[self.entries[h][0]] == h:
                cands[h] = self.entries[h][0]
        read, read_h = 0, None
        for h, pos in cands.items():
            e = self.entries.get(h)
            here = tr.cum_tokens[pos]  # the read is this request's own prefix (its sizes)
            if e is not None and e[2] > self.now and e[3] < self.now and here > read:
                read, read_h = here, h
        out = self.p.call(req, self.now)
        assert out.usage.cache_read == read, (out.usage.cache_read, read)
        if read_h is not None:
            pos, tok, _, w = self.entries[read_h]
            self.entries[read_h] = (pos, tok, self.now + self.TTL, w)
        top = read
        for p in points:
            if tr.cum_tokens[p] > read and tr.cum_tokens[p] >= 1024:
                self.entries[tr.hashes[p]] = (p, tr.cum_tokens[p], self.now + self.TTL, self.now)
                self.writes.append((key or "", tr.hashes[p]))
                top = max(top, tr.cum_tokens[p])
        assert out.usage.cache_write == top - read
        assert out.wire["input_tokens_details"] == {"cached_tokens": read, "cache_write_tokens": top - read}

    @invariant()
    def nothing(self) -> None:
        pass

    @precondition(lambda self: True)
    @rule()
    def noop(self) -> None:
        pass


TestAutoPrefixOracle = AutoPrefixMachine.TestCase
TestAutoPrefixOracle.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)
TestBreakpointOracle = BreakpointMachine.TestCase
TestBreakpointOracle.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)
