"""Observed Anthropic cache options (sim/providers/anthropic.py, bench/fidelity/replay.py OBSERVED):
`refresh_ttl` (which ttl a read gives the entry it hits), `extension_readable_after` (when an entry
written on top of a read becomes readable) and a lookup failure scripted for any conversation."""

from __future__ import annotations

from typing import Any

from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.providers.anthropic import AnthropicConfig, AnthropicProvider
from tests.sim.providers.conftest import ZERO_LATENCY, catalog, request, say, transcript

MODEL = "claude-sonnet-4-6"


def _provider(**cfg: Any) -> AnthropicProvider:
    info, price = catalog(MODEL)
    return AnthropicProvider(info, price, AnthropicConfig(latency=ZERO_LATENCY, **cfg))


def _grown(tr: Transcript, k: int) -> None:
    say(tr, "user", f"u{k}", 3000)
    say(tr, "assistant", f"a{k}", 500)


def _scene(**cfg: Any) -> tuple[AnthropicProvider, Transcript, int]:
    """Entry E1 (1h, t=0) at the end of turn 0; request 1 (t=10) reads E1 and writes E2 (1h).
    Returns the provider, the transcript and E1's size."""
    p, tr = _provider(**cfg), transcript()
    _grown(tr, 0)
    p.call(request(tr, 0, breakpoints=((len(tr) - 1, "1h"),)), 0.0)
    e1 = tr.cum_tokens[len(tr) - 1]
    _grown(tr, 1)
    assert p.call(request(tr, 1, breakpoints=((len(tr) - 1, "1h"),)), 10.0).usage.cache_read == e1
    return p, tr, e1


def test_a_5m_read_re_times_the_1h_entry_it_hits_only_with_refresh_ttl_reader() -> None:
    for mode in ("entry", "reader"):
        p, tr, e1 = _scene(refresh_ttl=mode)
        e2 = tr.cum_tokens[len(tr) - 1]
        fork = request(tr, -1, breakpoints=((len(tr) - 1, "5m"),))
        assert p.call(fork, 100.0).usage.cache_read == e2  # a forked query reads E2 with a 5m mark
        _grown(tr, 2)
        later = p.call(request(tr, 2, breakpoints=((len(tr) - 1, "1h"),)), 100.0 + 301.0)
        # reader: E2 expired 300 s after the fork's read; E1 (1h, not read by the fork) is live
        assert later.usage.cache_read == (e1 if mode == "reader" else e2), mode


def test_an_entry_written_on_top_of_a_read_is_readable_after_the_delay() -> None:
    for delay, at, reads_e2 in ((0.0, 12.0, True), (3.0, 12.0, False), (3.0, 13.5, True)):
        p, tr, _ = _scene(extension_readable_after=delay)
        e2 = tr.cum_tokens[len(tr) - 1]
        _grown(tr, 2)
        out = p.call(request(tr, 2, breakpoints=((len(tr) - 1, "1h"),)), at)
        assert (out.usage.cache_read == e2) is reads_e2, (delay, at)
        assert out.usage.cache_read > 0  # E1 is read either way


def test_an_entry_written_from_scratch_is_readable_at_once_whatever_the_delay() -> None:
    p, tr = _provider(extension_readable_after=3.0), transcript()
    _grown(tr, 0)
    p.call(request(tr, 0, breakpoints=((len(tr) - 1, "5m"),)), 0.0)  # reads nothing
    e1 = tr.cum_tokens[len(tr) - 1]
    _grown(tr, 1)
    assert p.call(request(tr, 1, breakpoints=((len(tr) - 1, "5m"),)), 1.0).usage.cache_read == e1


def test_a_lookup_failure_scripted_for_conversation_empty_matches_any_conversation() -> None:
    for conv in ("c0", "other"):
        p, tr = _provider(lookup_failure_at=(("", 1),)), transcript()
        _grown(tr, 0)
        p.call(request(tr, 0, conv, breakpoints=((len(tr) - 1, "5m"),)), 0.0)
        _grown(tr, 1)
        out = p.call(request(tr, 1, conv, breakpoints=((len(tr) - 1, "5m"),)), 5.0)
        assert out.usage.cache_read == 0  # the system prefix was never marked: nothing read
        assert p.cache.failed_lookup == (conv, 1)
