"""A profile's `output_cached` models: a tool call's continuation reads into the previous response's
output, one 128-token step short of its end; a new user turn reads the previous prompt only
(sim/providers/auto_prefix.py `_through_output`)."""

from __future__ import annotations

from dataclasses import replace

from ctxbench.sim.core.provider import Request
from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.providers.auto_prefix import AutoPrefixProvider, granular
from tests.sim.providers.conftest import catalog, say, tool_round, transcript
from tests.sim.providers.test_openai_auto import OPENAI

OUTPUT_CACHED = replace(OPENAI, output_cached=("gpt-5.4",))


def _provider() -> AutoPrefixProvider:
    m, p = catalog("gpt-4.1")
    return AutoPrefixProvider("openai", m, p, OUTPUT_CACHED, 0)


def _call(p: AutoPrefixProvider, tr: Transcript, index: int, model: str, output: int, t: float) -> int:
    req = Request(tr, len(tr), model, output, (), "gameplay", "c", index)
    return p.call(req, t).usage.cache_read


def test_a_tool_continuation_reads_through_the_previous_output() -> None:
    """Development part, BearTDK6/ba-pro (gpt-5.4): a 19,449-token prompt whose response
    generated 2,130 tokens; the next request reads 19,449 + 2,130 - 128 rounded down to 128s."""
    p, tr = _provider(), transcript(tools=500, system=2000)
    say(tr, "user", "u0", 19_449 - 2_500)
    assert _call(p, tr, 0, "gpt-5.4", 2_130, 0.0) == 0
    tool_round(tr, 0, 2_130, 60)
    assert _call(p, tr, 1, "gpt-5.4", 114, 5.0) == granular(19_449 + 2_130 - 128, 1024, 128) == 21_376


def test_a_user_turn_reads_the_previous_prompt_only() -> None:
    p, tr = _provider(), transcript(tools=500, system=2000)
    say(tr, "user", "u0", 17_000)
    _call(p, tr, 0, "gpt-5.4", 2_130, 0.0)
    say(tr, "assistant", "a0", 2_130)
    say(tr, "user", "u1", 40)
    assert _call(p, tr, 1, "gpt-5.4", 100, 5.0) == granular(19_500, 1024, 128)


def test_a_model_not_listed_reads_the_previous_prompt_only() -> None:
    p, tr = _provider(), transcript(tools=500, system=2000)
    say(tr, "user", "u0", 17_000)
    _call(p, tr, 0, "gpt-5.2-codex", 2_130, 0.0)
    tool_round(tr, 0, 2_130, 60)
    assert _call(p, tr, 1, "gpt-5.2-codex", 100, 5.0) == granular(19_500, 1024, 128)


def test_a_changed_prefix_reads_no_output() -> None:
    """The match must end where the previous prompt ended: an edit before it reads only up to the edit."""
    p, tr = _provider(), transcript(tools=500, system=2000)
    say(tr, "user", "u0", 17_000)
    _call(p, tr, 0, "gpt-5.4", 2_130, 0.0)
    other = transcript(tools=500, system=2000)
    say(other, "user", "u0-edited", 17_000)
    tool_round(other, 0, 2_130, 60)
    assert _call(p, other, 1, "gpt-5.4", 100, 5.0) == granular(2_500, 1024, 128)
