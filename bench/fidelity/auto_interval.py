"""A 90 % interval on the cost of a session replayed on an automatic-prefix cache (OpenAI ≤ 5.5
automatic caching, Gemini implicit caching), from a measured rate of finding the cached prefix.

What the providers document is in the replay (sim/providers/auto_prefix.py): a minimum prefix
(OpenAI 1,024 tokens, https://platform.openai.com/docs/guides/prompt-caching; Gemini 2.5+ per
model, https://ai.google.dev/gemini-api/docs/caching), hits in 128-token steps (OpenAI), routing
"based on a hash of the initial prefix" that "does not guarantee stickiness" (same OpenAI page;
https://cookbook.openai.com/examples/prompt_caching_201) and retention (OpenAI in memory "5 to 10
minutes of inactivity", extended "up to a maximum of 24 hours"). Its central prediction is that a
request reads what the previous one left (its prompt, rounded to the steps) on the machine the
conversation is routed to. What no document gives is how often a request lands elsewhere: that is
`FOUND`, a rate measured on real logs, each cited next to its constant.

A draw goes through the session's requests: each (after the first) finds its prefix with the
drawn rate and then reads what the central prediction says; otherwise it reads what another
machine holds, as the measured misses did: only the static prefix other sessions of the account
keep warm (`warm_tokens` of the log), or the entry a request `BACK` requests before it left, if
within the retention and still a prefix of this prompt (the shortest central read since then
bounds the shared part). The rates are drawn per session from Beta(a, b) of their counts (mean: the
measured share), so the interval also carries the uncertainty of rates measured on few requests. Deterministic
for a seed.
"""

from __future__ import annotations

import random
from typing import Any

from ctxbench.bench.fidelity.results import DrawnInterval, SessionFidelity
from ctxbench.sim.core.catalog import prices
from ctxbench.sim.providers.auto_prefix import granular

# (found, missed): requests after the first that read the previous prompt (within tolerance, or
# more) / that read less, on logs billed by the provider itself.
# OpenAI, Codex TUI 0.x on gpt-5 (August 2025), traces-real codex-tui/binary-size-log.jsonl: main
# 13 / 6 (#3 #5 #6 #10 #14 #17 read the static prefix or an older entry), session-2 11 / 2 (#10
# #12). Idle gaps 1.4-286 s; misses at every gap (23 requests under 10 s: 6 missed; 9 over:
# 2 missed), so the rate is one figure, not a function of the gap, until more logs say otherwise.
FOUND: dict[str, tuple[int, int]] = {
    "openai": (24, 8),
}
# What a request that did not find its prefix read, same log: 3 of the 8 only the static prefix
# other sessions keep warm (main #3 #5, session-2 #10), 5 the entry of the request 3 to 5 before it
# (main #6 <- #2, #10 <- #5, #14 <- #11, #17 <- #13; session-2 #12 <- #9), never expired there
# (the retention of the profile bounds it).
STATIC_ONLY: tuple[int, int] = (3, 5)  # (static prefix only, an older entry)
BACK = (3, 4, 5)  # how many requests back that older entry was written
DRAWS = 200
LEVEL = 0.90
# providers a log's endpoint must name for its rate to apply (the Codex logs' model_provider):
# a log recorded against another endpoint (e.g. `ctxbench serve`, model_provider "mock") is not
# the provider's cache
PROVIDER_OF_DIALECT = {"openai-chat": "openai", "openai-responses": "openai", "gemini": "gemini"}


def measured_rate(provider: str, meta: dict[str, Any]) -> tuple[int, int] | None:
    """The measured (found, missed) counts for a log served by `provider`, or None: no rate
    measured for it, or the log names another endpoint."""
    endpoint = str(meta.get("model_provider", "") or "").lower()
    if endpoint and endpoint != provider:
        return None
    return FOUND.get(provider)


def drawn_interval(
    sf: SessionFidelity,
    provider: str,
    ttl: float,
    minimum: int,
    step: int,
    seed: int = 0,
    draws: int = DRAWS,
) -> DrawnInterval | None:
    """The 90 % interval of the session's cost over `draws` seeded draws (module docstring), or
    None when no rate is measured for this provider and endpoint."""
    rate = measured_rate(provider, sf.meta)
    if rate is None or not sf.requests:
        return None
    warm = int(sf.meta.get("warm_tokens", 0) or 0)
    rng = random.Random(seed)  # the same draws whatever the session is called
    costs = sorted(_draw(sf, rng, rate, ttl, minimum, step, warm) for _ in range(draws))
    tail = (1 - LEVEL) / 2
    low = costs[int(tail * (draws - 1))]
    high = costs[round((1 - tail) * (draws - 1))]
    return DrawnInterval(low, high, sum(costs) / draws, draws, seed, rate, provider)


def _draw(
    sf: SessionFidelity,
    rng: random.Random,
    rate: tuple[int, int],
    ttl: float,
    minimum: int,
    step: int,
    warm: int,
) -> float:
    p = rng.betavariate(rate[0], rate[1])
    q = rng.betavariate(*STATIC_ONLY)
    cost = 0.0
    reqs = sf.requests
    for k, r in enumerate(reqs):
        prompt = r.billed.input_tokens + r.billed.cache_read
        read = r.predicted.cache_read  # the central prediction: found
        if k and rng.random() >= p:  # not found: the static prefix, or an older entry
            read = granular(min(warm, prompt), minimum, step)
            j = k - rng.choice(BACK)
            if j >= 0 and rng.random() >= q and r.t - reqs[j].t <= ttl:
                left = reqs[j].billed.input_tokens + reqs[j].billed.cache_read
                shared = min([left] + [reqs[m].predicted.cache_read for m in range(j + 1, k + 1)])
                read = max(read, granular(min(shared, prompt), minimum, step))
        pr = prices(r.model or sf.model)
        cost += pr.cost(prompt - read, read, 0, 0, r.billed.output_tokens)
    return cost
