"""H-22 reproduced: per-replica caches, with and without a prompt_cache_key.

SPEC H-22: "without the key, 3 of a run's first 11 requests read nothing from the cache and a
15-turn test conversation had 79% of its input cached; with the key every follow-up read the cache."
The conversation: 500 tokens of tools, 2,000 of system prompt, then 15 turns of a 400-token user
message and a 300-token reply (the shape of the source's test conversation is not published).
"""

from __future__ import annotations

import statistics

from ctxbench.sim.providers.auto_prefix import AutoConfig, AutoPrefixProvider
from tests.sim.providers.conftest import ZERO_LATENCY, catalog, request, say, transcript

# the meta-replicas profile (sim/data/profiles/meta-replicas.yaml)
META = AutoConfig(dialect="meta", granularity=1, ttl=3600, routing="key", replicas=2, latency=ZERO_LATENCY)


def fifteen_turns(seed: int, key: str | None, cfg: AutoConfig = META) -> tuple[float, list[int]]:
    model, prices = catalog("meta-muse-wonder")
    p = AutoPrefixProvider("meta", model, prices, cfg, seed)
    tr = transcript()
    reads, inputs = [], []
    t = 0.0
    for k in range(15):
        say(tr, "user", f"u{k}", 400)
        out = p.call(request(tr, k, key=key, output=300), t)
        reads.append(out.usage.cache_read)
        inputs.append(out.usage.input_total)
        t += 20.0
        say(tr, "assistant", f"a{k}", 300)
    return sum(reads) / sum(inputs), reads


def test_h22_without_key_about_79_percent_with_early_zero_reads() -> None:
    shares, zero_early = [], []
    for seed in range(100):
        share, reads = fifteen_turns(seed, None)
        shares.append(share)
        zero_early.append(sum(1 for r in reads[1:11] if r == 0))
    mean = statistics.mean(shares)
    q = statistics.quantiles(shares, n=10)
    print(
        f"H-22 no key, 100 seeds: mean {mean:.3f}, p10 {q[0]:.3f}, median {statistics.median(shares):.3f}, "
        f"p90 {q[-1]:.3f}, min {min(shares):.3f}, max {max(shares):.3f}; "
        f"follow-ups 2-11 reading nothing: mean {statistics.mean(zero_early):.2f}, max {max(zero_early)}"
    )
    assert 0.75 <= mean <= 0.83  # H-22: 79 %
    # every run has an early follow-up that reads nothing (the first visit to the other replica).
    # With 2 replicas there is exactly one; H-22's "3 of the first 11" (a longer game run) fits
    # 4 replicas (2.9 expected, test_four_replicas_three_zero_reads) — which give ~65 % here.
    assert all(z >= 1 for z in zero_early)


def test_h22_with_key_every_follow_up_reads() -> None:
    for seed in range(100):
        share, reads = fifteen_turns(seed, "run-1")
        assert reads[0] == 0
        assert all(r > 0 for r in reads[1:])
        assert share > 0.88


def test_four_replicas_three_zero_reads() -> None:
    from dataclasses import replace

    four = replace(META, replicas=4)
    zeros = [sum(1 for r in fifteen_turns(s, None, four)[1][1:11] if r == 0) for s in range(100)]
    assert 2.4 <= statistics.mean(zeros) <= 3.4  # expected sum_{j=1..10} 0.75^j = 2.83


def test_more_replicas_read_less() -> None:
    from dataclasses import replace

    four = replace(META, replicas=4)
    m2 = statistics.mean(fifteen_turns(s, None)[0] for s in range(40))
    m4 = statistics.mean(fifteen_turns(s, None, four)[0] for s in range(40))
    assert m4 < m2 - 0.05


def test_zero_read_follow_ups_diagnosed_as_routing_before_the_call() -> None:
    """The harness asks `diagnose` before each call: the miss is the replica, not the cache."""
    model, prices = catalog("meta-muse-wonder")
    causes = []
    for seed in range(20):
        p = AutoPrefixProvider("meta", model, prices, META, seed)
        tr = transcript()
        prev = -1
        for k in range(15):
            say(tr, "user", f"u{k}", 400)
            req = request(tr, k, output=300)
            pre = p.diagnose(req, prev, 20.0 * k) if prev >= 0 else ""
            out = p.call(req, 20.0 * k)
            if k and out.usage.cache_read == 0:
                causes.append(pre)
            prev = out.cached_pos
            say(tr, "assistant", f"a{k}", 300)
    assert causes and set(causes) == {"routing"}
