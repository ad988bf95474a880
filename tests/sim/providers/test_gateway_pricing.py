"""A gateway that reports no cache writes bills them at the write rate (Cline's) or as the input
its usage shows (a Claude Code relay, sim/data/profiles/claude-relay.yaml)."""

from __future__ import annotations

from ctxbench.sim.core.catalog import model_info, prices
from ctxbench.sim.core.profiles import profile
from ctxbench.sim.core.provider import Usage, price
from ctxbench.sim.providers.anthropic import AnthropicConfig, AnthropicProvider

MODEL = "claude-opus-4-6"
U = Usage(uncached=100, cache_read=20_000, cache_write_5m=3_000, cache_write_1h=0, output=50)


def _cost(**cfg: bool) -> float:
    return AnthropicProvider(model_info(MODEL), prices(MODEL), AnthropicConfig(**cfg))._price(U)


def test_relay_bills_what_it_reports_cline_bills_the_writes() -> None:
    as_reported = price(prices(MODEL), Usage(3_100, 20_000, 0, 0, 50))
    assert _cost(report_cache_writes=False, bill_unreported_writes=False) == as_reported
    assert _cost(report_cache_writes=False) == price(prices(MODEL), U)  # Cline: billed at the write rate
    assert _cost() == price(prices(MODEL), U)
    assert as_reported < price(prices(MODEL), U)
    relay = profile("claude-relay")
    assert relay["report_cache_writes"] is False and relay["bill_unreported_writes"] is False
