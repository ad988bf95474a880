"""A profile's `read_units`: a model whose billed reads fall on a grid of its own is rounded down to
that grid, not to the documented 128-token steps (sim/providers/auto_prefix.py `read_grid`)."""

from __future__ import annotations

from dataclasses import replace

from ctxbench.sim.core.profiles import profile
from ctxbench.sim.core.provider import Request
from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.providers.auto_prefix import AutoPrefixProvider, read_grid
from tests.sim.providers.conftest import catalog, say, transcript
from tests.sim.providers.test_openai_auto import OPENAI

UNITS = (("gpt-5", 1024, 768), ("gpt-5.5", 512, 384), ("gpt-5.4-mini", 512, 384))


def _read(p: AutoPrefixProvider, tr: Transcript, index: int, model: str, t: float) -> int:
    return p.call(Request(tr, len(tr), model, 100, (), "gameplay", "c", index), t).usage.cache_read


def test_the_grid_of_a_listed_model_starts_at_its_first_point_above_the_minimum() -> None:
    assert read_grid(UNITS, "gpt-5.5", 1024, 128) == (1408, 512)
    assert read_grid(UNITS, "gpt-5.4-mini", 1024, 128) == (1408, 512)
    assert read_grid(UNITS, "gpt-5", 1024, 128) == (1792, 1024)
    assert read_grid(UNITS, "gpt-5-codex", 1024, 128) == (1024, 128)  # by model id, not a prefix
    assert read_grid(UNITS, "gpt-5.4", 1024, 128) == (1024, 128)
    assert read_grid(UNITS, "gpt-4.1", 1024, 128) == (1024, 128)


def test_a_gpt_5_5_continuation_reads_the_previous_prompt_on_its_grid() -> None:
    """Development part, ADIOCLASSMATE/dotfile rollout-2026-07-03T15-12-18 (gpt-5.5): after a
    17,545-token prompt the bill read 17,280 (384 + 33·512), not 17,408 (136·128)."""
    m, prices = catalog("gpt-4.1")
    p = AutoPrefixProvider("openai", m, prices, replace(OPENAI, read_units=UNITS), 0)
    tr = transcript(tools=500, system=2000)
    say(tr, "user", "u0", 17_545 - 2_500)
    assert _read(p, tr, 0, "gpt-5.5", 0.0) == 0
    say(tr, "assistant", "a0", 200)
    say(tr, "user", "u1", 40)
    assert _read(p, tr, 1, "gpt-5.5", 5.0) == 17_280
    say(tr, "assistant", "a1", 200)
    say(tr, "user", "u2", 40)
    assert _read(p, tr, 2, "gpt-4.1", 10.0) == 17_785 // 128 * 128  # another model: 128-token steps


def test_the_openai_profiles_list_the_models_measured_on_a_grid() -> None:
    for name in ("openai-auto", "openai-auto-inmemory"):
        units = {str(m): (int(s), int(r)) for m, s, r in profile(name)["read_units"]}
        assert units == {"gpt-5.5": (512, 384), "gpt-5.4-mini": (512, 384)}
