"""OpenAI automatic caching (providers.md §2.1): 0 or >= 1,024 in 128-token steps; overflow above
~15 RPM per (prefix, key) spills to other machines, and those misses are attributed to routing."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.sim.providers.auto_prefix import AutoConfig, AutoPrefixProvider, granular
from tests.sim.providers.conftest import ZERO_LATENCY, catalog, request, say, transcript

OPENAI = AutoConfig(
    dialect="openai-chat",
    granularity=128,
    ttl=86400,
    routing="prefix",
    replicas=16,
    overflow_rpm=15,
    overflow_pool=4,
    latency=ZERO_LATENCY,
)


def provider(seed: int = 0, cfg: AutoConfig = OPENAI) -> AutoPrefixProvider:
    m, p = catalog("gpt-4.1")
    return AutoPrefixProvider("openai", m, p, cfg, seed)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 900), min_size=1, max_size=12), st.integers(0, 50))
def test_reads_are_zero_or_1024_plus_128k(sizes: list[int], seed: int) -> None:
    p = provider(seed)
    tr = transcript(tools=10, system=20)
    t = 0.0
    for k, n in enumerate(sizes):
        say(tr, "user", f"u{k}", n)
        out = p.call(request(tr, k), t)
        r = out.usage.cache_read
        assert r == 0 or (r >= 1024 and (r - 1024) % 128 == 0)
        assert r <= tr.total_tokens
        assert out.wire["prompt_tokens_details"]["cached_tokens"] == r
        assert out.wire["prompt_tokens"] == tr.total_tokens  # prompt_tokens includes cached (§7)
        t += 10


def test_granular_rounding() -> None:
    assert granular(1023, 1024, 128) == 0
    assert granular(1024, 1024, 128) == 1024
    assert granular(1151, 1024, 128) == 1024
    assert granular(1152, 1024, 128) == 1152


def test_follow_up_reads_whole_previous_prompt_rounded() -> None:
    p = provider()
    tr = transcript()
    say(tr, "user", "u0", 333)
    first = p.call(request(tr, 0), 0.0)
    assert first.usage.cache_read == 0
    say(tr, "assistant", "a0", 100)
    say(tr, "user", "u1", 50)
    second = p.call(request(tr, 1), 5.0)
    assert second.usage.cache_read == granular(2833, 1024, 128) == 2816


def test_spill_over_above_rate_is_attributed_to_routing() -> None:
    """40 requests within one minute for one (prefix, key): after 15, some land on other machines
    (cold caches) and the harness's diagnosis of the lost prefix is 'routing'."""
    p = provider(3)
    tr = transcript()
    say(tr, "user", "u0", 400)
    p.call(request(tr, 0, key="k"), 0.0)
    causes = []
    overflowed = 0
    for i in range(1, 40):
        out = p.call(request(tr, i, key="k"), i * 1.0)
        overflowed += "overflow" in out.route
        if out.usage.cache_read == 0:
            causes.append(p.diagnose(request(tr, i, key="k"), len(tr) - 1, i * 1.0))
    assert overflowed == 40 - 15
    assert 1 <= len(causes) <= 3  # each new machine is a one-time miss (overflow pool of 4)
    assert set(causes) == {"routing"}


def test_below_rate_no_spill() -> None:
    p = provider(3)
    tr = transcript()
    say(tr, "user", "u0", 400)
    for i in range(30):
        out = p.call(request(tr, i, key="k"), i * 5.0)  # 12 per minute
        assert "overflow" not in out.route
        assert i == 0 or out.usage.cache_read > 0


def test_cache_key_changes_machine_and_so_misses() -> None:
    p = provider(1)
    tr = transcript()
    say(tr, "user", "u0", 400)
    p.call(request(tr, 0, key="a"), 0.0)
    homes = {p.router.route(request(tr, 0, key=k), 0.0).home for k in "abcdefgh"}
    assert len(homes) > 1  # the key is part of the routing hash


def test_ttl_expiry_in_memory() -> None:
    from dataclasses import replace

    p = provider(0, replace(OPENAI, ttl=600))
    tr = transcript()
    say(tr, "user", "u0", 400)
    p.call(request(tr, 0), 0.0)
    say(tr, "user", "u1", 10)
    prev = p.call(request(tr, 1), 599.0)
    assert prev.usage.cache_read > 0
    say(tr, "user", "u2", 10)
    out = p.call(request(tr, 2), 599.0 + 601.0)
    assert out.usage.cache_read == 0
    assert p.diagnose(request(tr, 2), prev.cached_pos, 1200.0) == "ttl_expiry"


def test_capacity_evicts_lru_and_diagnoses_evicted() -> None:
    from dataclasses import replace

    p = provider(0, replace(OPENAI, replicas=1, routing="single", capacity_tokens=6000))
    a, b = transcript(key="a"), transcript(key="b")
    say(a, "user", "ua", 1000)
    say(b, "user", "ub", 1000)
    prev = p.call(request(a, 0, conv="a"), 0.0)
    p.call(request(b, 0, conv="b"), 1.0)  # 7,000 cached > 6,000: a's chain is evicted
    say(a, "user", "ua2", 10)
    out = p.call(request(a, 1, conv="a"), 2.0)
    assert out.usage.cache_read == 0
    assert p.diagnose(request(a, 1, conv="a"), prev.cached_pos, 2.0) == "evicted"
