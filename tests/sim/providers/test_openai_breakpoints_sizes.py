"""OpenAI's explicit breakpoints (sim/providers/openai_breakpoints.py): a read is the prefix of
the request that reads it. An imported trace sizes its blocks per request, so the same content
(same hash) can be larger in the request that wrote the entry than in the one reading it; the
read never exceeds the reading prompt (a Codex 2026 rollout replayed to a negative uncached input
and stopped with "Negative delay")."""

from __future__ import annotations

from ctxbench.sim.providers.openai_breakpoints import BreakpointConfig, OpenAIBreakpointProvider
from tests.sim.providers.conftest import EPS_LATENCY, catalog, request, say, transcript


def test_a_read_is_the_reading_requests_own_prefix() -> None:
    m, p = catalog("gpt-5.6-terra")
    prov = OpenAIBreakpointProvider("openai", m, p, BreakpointConfig(latency=EPS_LATENCY), 0)
    big, small = transcript(), transcript()
    say(big, "user", "u1", 9_000)
    say(small, "user", "u1", 4_000)  # the same content, sized smaller in this request
    first = prov.call(request(big, 0, breakpoints=((len(big) - 1, "5m"),)), 0.0)
    assert first.usage.cache_write_5m > 0
    out = prov.call(request(small, 1, breakpoints=((len(small) - 1, "5m"),)), 10.0)
    total = small.cum_tokens[len(small) - 1]
    assert 0 < out.usage.cache_read <= total and out.usage.uncached >= 0 and out.duration >= 0
