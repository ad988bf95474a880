"""OpenRouter (H-21, providers.md §5): a forced fallback lands on a cold cache and the miss is
attributed to the provider switch; session affinity on vs off."""

from __future__ import annotations

from ctxbench.sim.providers.registry import make_provider
from tests.sim.providers.conftest import request, say, transcript

MODEL = "claude-sonnet-4-6"


def turns(p, n: int, session: str | None, t0: float = 0.0):
    tr = transcript(tools=1500, system=3000)
    outs = []
    t = t0
    for k in range(n):
        say(tr, "user", f"u{k}", 600)
        req = request(tr, k, session=session, breakpoints=((len(tr) - 1, "5m"),))
        out = p.call(req, t)
        prev = outs[-1].cached_pos if outs else -1
        cause = p.diagnose(req, prev, t) if prev >= 0 and out.usage.cache_read < tr.cum_tokens[prev] else ""
        outs.append(out)
        yield out, cause
        t += 30.0
        say(tr, "assistant", f"a{k}", 200)


def test_forced_fallback_is_a_cold_cache_miss_attributed_to_provider_switch() -> None:
    p = make_provider("openrouter", MODEL, 0)
    first = p.call(request(transcript(), 0, session="run"), 0.0)
    sticky = first.route
    p2 = make_provider("openrouter", MODEL, 0, down={5: sticky})
    results = list(turns(p2, 10, "run"))
    routes = [o.route for o, _ in results]
    assert routes[:5] == [sticky] * 5
    assert routes[5] != sticky  # fell back
    out5, cause5 = results[5]
    assert out5.usage.cache_read == 0  # cold cache on the fallback provider
    assert cause5 == "provider_switch"
    assert all(c == "" for _, c in results[1:5])
    assert out5.wire["provider"] == routes[5]
    assert out5.wire["cache_discount"] < 0  # a write costs more than it saves (negative on writes)
    assert results[3][0].wire["cache_discount"] > 0


def test_session_affinity_on_never_switches_off_does() -> None:
    switches_on = switches_off = 0
    for seed in range(20):
        on = make_provider("openrouter", MODEL, seed)
        off = make_provider("openrouter", MODEL, seed)
        switches_on += sum(c == "provider_switch" for _, c in turns(on, 8, "run"))
        switches_off += sum(c == "provider_switch" for _, c in turns(off, 8, None))
    assert switches_on == 0
    assert switches_off >= 5  # without session_id stickiness starts only after a cache hit


def test_sticky_expires_after_ten_idle_minutes() -> None:
    p = make_provider("openrouter", MODEL, 4)
    tr = transcript()
    say(tr, "user", "u", 2000)
    r0 = p.call(request(tr, 0, session="s"), 0.0).route
    routes = {p.call(request(tr, i, session="s"), 700.0 * i).route for i in range(1, 30)}
    assert len(routes | {r0}) > 1  # after > 10 min idle the session is re-balanced


def test_pinned_order_uses_first_and_falls_back() -> None:
    p = make_provider("openrouter-pinned", MODEL, 0, down={2: "anthropic"})
    routes = [o.route for o, _ in turns(p, 4, None)]
    assert routes == ["anthropic", "anthropic", "amazon-bedrock", "anthropic"]


def test_no_fallback_when_not_allowed() -> None:
    p = make_provider("openrouter-pinned", MODEL, 0, down={1: "anthropic"}, allow_fallbacks=False)
    outs = [o for o, _ in turns(p, 2, None)]
    assert outs[1].error is not None and outs[1].error.status == 503 and outs[1].error.transient


def test_usage_is_openai_shape_with_cost() -> None:
    p = make_provider("openrouter", MODEL, 0)
    tr = transcript()
    say(tr, "user", "u", 100)
    out = p.call(request(tr, 0, session="s", breakpoints=((len(tr) - 1, "5m"),)), 0.0)
    w = out.wire
    assert w["prompt_tokens"] == tr.total_tokens
    assert w["prompt_tokens_details"]["cache_write_tokens"] == out.usage.cache_write
    assert w["cost"] == round(out.cost, 10) and out.cost > 0
