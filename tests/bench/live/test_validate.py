"""`validate`: simulation and live drive bill identically on the sample traces (issue #7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxbench.bench.live.validate import format_comparison, validate
from ctxbench.policies.preset import load_policy
from ctxbench.traces.format import read_trace

pytest.importorskip("anthropic", reason="the `live` extra (anthropic SDK) is not installed")
pytest.importorskip("openai", reason="the `live` extra (openai SDK) is not installed")
SAMPLES = Path(__file__).resolve().parents[3] / "traces" / "samples"


@pytest.mark.parametrize("preset", ["h-openrouter", "h-direct", "h-keep-last-2"])
def test_validate_identical_game_short(preset: str) -> None:
    c = validate(read_trace(SAMPLES / "game-short.jsonl"), load_policy(preset))
    assert c.identical, format_comparison(c)
    assert c.requests > 10


def test_validate_chat_wire_identical() -> None:
    c = validate(
        read_trace(SAMPLES / "game-short.jsonl"), load_policy("h-openrouter"), api="chat", stream=False
    )
    assert c.identical, format_comparison(c)


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["h-openrouter", "h-direct", "h-keep-last-2", "c-default", "c-fast"])
def test_validate_identical_game_60(preset: str) -> None:
    c = validate(read_trace(SAMPLES / "game-60.jsonl"), load_policy(preset))
    assert c.identical, format_comparison(c)


def test_validate_detects_a_token_mismatch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: a server that counts one token more per image is caught."""
    import ctxbench.sim.serve.wire.common as wire

    rules = dict(wire.IMAGE_RULES)
    monkeypatch.setattr(wire, "IMAGE_RULES", {k: (lambda w, h, f=f: f(w, h) + 1) for k, f in rules.items()})
    c = validate(read_trace(SAMPLES / "game-short.jsonl"), load_policy("h-direct"))
    assert not c.identical and "tokens differ" in format_comparison(c)
