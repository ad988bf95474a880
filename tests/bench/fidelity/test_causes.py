"""Why a request's read missed (bench/fidelity/causes.py): the cause names only evidence that
holds for the request's own provider."""

from __future__ import annotations

from ctxbench.bench.fidelity.causes import likely_cause
from ctxbench.bench.fidelity.results import RequestCompare
from ctxbench.sim.core.provider import Usage as SimUsage
from ctxbench.traces.model import Usage

SYSTEM = 15_000


def _pinned_at_the_system_prefix() -> RequestCompare:
    """Request 1, four seconds after the first: billed only the system + tools prefix while the
    replay read the whole previous prompt."""
    billed = Usage(1_000, SYSTEM, 0, 0, 100)
    return RequestCompare(1, 4.0, 4.0, billed, SimUsage(100, 15_900, 0, 0, 100), 15_900)


def test_a_read_pinned_at_the_system_prefix_cites_anthropics_diagnostics_on_anthropic_only() -> None:
    meta: dict[str, object] = {"system_tokens": SYSTEM, "ttl": "5m"}
    r = _pinned_at_the_system_prefix()
    on_anthropic = likely_cause(r, meta, "claude-sonnet-4-6")
    on_openai = likely_cause(r, meta, "gpt-5.6-sol")
    assert "server-side lookup miss" in on_anthropic and "server-side lookup miss" in on_openai
    assert "anthropics/claude-code#87966" in on_anthropic
    assert "anthropics/claude-code" not in on_openai and "previous_message_not_found" not in on_openai
    assert "anthropics/claude-code#87966" in likely_cause(r, meta, "a-model-nobody-knows")
