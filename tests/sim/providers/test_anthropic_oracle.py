"""The Anthropic cache model agrees with a brute-force oracle on random request sequences.

The oracle keys entries by the full tuple of block digests up to a position (no chained hashes,
no shortcuts), scans every breakpoint's 20-position window and bills by the A/B/C rule, straight
from providers.md §1.3-§1.8.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.sim.core.catalog import model_info, prices
from ctxbench.sim.core.content import Block, Message, digest64
from ctxbench.sim.core.provider import Latency, Request
from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.providers.anthropic import AnthropicConfig, AnthropicProvider

TTL = {"5m": 300.0, "1h": 3600.0}
MIN_CACHEABLE = 1024  # claude-sonnet-4-6 (providers.md §1.4)


@dataclass
class _OEntry:
    tokens: int
    expires: float
    readable_at: float
    ttl: float
    images: tuple[int, ...]


class Oracle:
    def __init__(self, lookback: int = 20) -> None:
        self.entries: dict[tuple[int, ...], _OEntry] = {}
        self.lookback = lookback

    def call(
        self, blocks: list[Block], system_end: int, bps: list[tuple[int, str]], now: float, ttft: float
    ) -> tuple[int, int, int, int]:
        digests = [b.digest for b in blocks]
        tokens = [sum(b.tokens for b in blocks[: i + 1]) for i in range(len(blocks))]
        images = tuple(b.digest for b in blocks if b.kind == "image")
        best, best_key = 0, None
        for b, _ in bps:
            for pos in range(b, max(-1, b - self.lookback), -1):
                key = tuple(digests[: pos + 1])
                e = self.entries.get(key)
                if e is None or e.expires <= now or e.readable_at > now:
                    continue
                if pos >= system_end and images[: len(e.images)] != e.images:
                    continue
                if tokens[pos] > best:
                    best, best_key = tokens[pos], key
                break
        if best_key is not None:
            e = self.entries[best_key]
            e.expires = now + e.ttl
        top, top_1h = best, best
        for b, ttl in bps:
            if tokens[b] <= best or tokens[b] < MIN_CACHEABLE:
                continue
            self.entries[tuple(digests[: b + 1])] = _OEntry(
                tokens[b], now + TTL[ttl], now + ttft, TTL[ttl], images
            )
            top = max(top, tokens[b])
            if ttl == "1h":
                top_1h = max(top_1h, tokens[b])
        total = tokens[-1]
        return total - top, best, top - top_1h, top_1h - best


def _blocks(rng: random.Random, n: int, pool: list[Block]) -> list[Block]:
    out = []
    for _ in range(n):
        if pool and rng.random() < 0.3:
            out.append(rng.choice(pool))
            continue
        k = rng.random()
        kind = "image" if k < 0.15 else ("tool_use" if k < 0.3 else ("tool_result" if k < 0.45 else "text"))
        b = Block(kind, "user", 10, rng.randint(1, 400), digest64(str(rng.random()).encode()))
        pool.append(b)
        out.append(b)
    return out


@given(st.integers(0, 2**32 - 1), st.integers(2, 14))
@settings(max_examples=120, deadline=None)
def test_cache_matches_bruteforce_oracle(seed: int, n_requests: int) -> None:
    rng = random.Random(seed)
    latency = Latency(base_ttft=0.5, prefill_tps=1e9, output_tps=1e9)
    prov = AnthropicProvider(
        model_info("claude-sonnet-4-6"), prices("claude-sonnet-4-6"), AnthropicConfig(latency=latency)
    )
    oracle = Oracle()
    pool: list[Block] = []
    head = _blocks(rng, rng.randint(1, 4), pool)
    msgs: list[list[Block]] = [_blocks(rng, rng.randint(1, 6), pool) for _ in range(rng.randint(1, 4))]
    now = 0.0
    for i in range(n_requests):
        r = rng.random()
        if r < 0.6:
            msgs.append(_blocks(rng, rng.randint(1, 30), pool))
        elif r < 0.8 and msgs:
            j = rng.randrange(len(msgs))
            msgs[j] = _blocks(rng, rng.randint(1, 5), pool)
        elif msgs:
            msgs.pop(rng.randrange(len(msgs)))
        tr = Transcript(head[:1], head[1:])
        for m in msgs:
            tr.append(Message.of("user", m))
        n = len(tr)
        if n == 0:
            continue
        bps = sorted({rng.randrange(n) for _ in range(rng.randint(0, 4))})
        ttls = sorted((rng.choice(["5m", "1h"]) for _ in bps), key=lambda t: t != "1h")  # 1h before 5m
        breakpoints = tuple(zip(bps, ttls, strict=True))
        now += rng.choice([0.0, 0.2, 5.0, 200.0, 301.0, 3000.0, 4000.0])
        req = Request(tr, n, "claude-sonnet-4-6", 10, breakpoints, index=i)
        out = prov.call(req, now)
        exp = oracle.call(list(tr.blocks), tr.system_end, list(breakpoints), now, 0.5 + 0 * i)
        got = (out.usage.uncached, out.usage.cache_read, out.usage.cache_write_5m, out.usage.cache_write_1h)
        assert got == exp, f"request {i}: model {got} != oracle {exp}"


def test_fifth_breakpoint_is_the_apis_400() -> None:
    prov = AnthropicProvider(model_info("claude-sonnet-4-6"), prices("claude-sonnet-4-6"))
    tr = Transcript()
    tr.append(Message.of("user", [Block("text", "user", 1, 1, i) for i in range(6)]))
    out = prov.call(Request(tr, 6, "claude-sonnet-4-6", 1, tuple((i, "5m") for i in range(5))), 0.0)
    assert out.error is not None and out.error.status == 400
    assert out.error.message == "A maximum of 4 blocks with cache_control may be provided. Found 5."


def test_prompt_too_long_error_text() -> None:
    prov = AnthropicProvider(model_info("claude-sonnet-4-6"), prices("claude-sonnet-4-6"))
    tr = Transcript()
    tr.append(Message.of("user", [Block("text", "user", 1, 150_000, 1), Block("text", "user", 1, 63_462, 2)]))
    out = prov.call(Request(tr, 2, "claude-sonnet-4-6", 1), 0.0)
    assert out.error is not None and (out.error.status, out.error.type) == (400, "invalid_request_error")
    assert out.error.message == "prompt is too long: 213462 tokens > 200000 maximum"


def test_lookback_of_20_blocks_and_readable_after_first_token() -> None:
    """The doc's worked example: with a breakpoint on block 35, blocks 35..16 are checked and an
    entry at block 15 is one position outside (§1.3); an entry is readable only once the writing
    request produced its first token (§1.5)."""
    model = "claude-sonnet-4-6"
    tr = Transcript()
    tr.append(Message.of("user", [Block("text", "user", 1, 100, 1000 + i) for i in range(35)]))
    prov = AnthropicProvider(model_info(model), prices(model))
    first = prov.call(Request(tr, 35, model, 1, ((14, "5m"),)), 0.0)  # entry at block 15
    assert first.usage.cache_write_5m == 1500
    outside = Request(tr, 35, model, 1, ((34, "5m"),))
    assert prov.cache.lookup(outside, 10.0) == (0, -1)
    assert prov.diagnose(outside, 14, 10.0) == "lookback_exceeded"
    inside = Request(tr, 35, model, 1, ((33, "5m"),))
    assert prov.cache.lookup(inside, 10.0) == (1500, 14)

    fresh = AnthropicProvider(model_info(model), prices(model))
    w = fresh.call(Request(tr, 35, model, 1, ((14, "5m"),)), 0.0)
    early = Request(tr, 35, model, 1, ((14, "5m"),))
    assert fresh.cache.lookup(early, w.ttft / 2) == (0, -1)
    assert fresh.diagnose(early, 14, w.ttft / 2) == "not_ready"
    assert fresh.cache.lookup(early, w.ttft) == (1500, 14)
    assert fresh.diagnose(early, 14, 301.0) == "ttl_expiry"  # 5m measured from the request's start
