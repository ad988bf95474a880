"""OpenAI models whose cache holds what a response generated (the profiles' `output_cached`,
bench/fidelity/auto.py `left_cached`): a tool call's continuation reads the previous prompt and
output one 128-token step short of their end, in the replay and in the naive reading alike; a new
user turn reads the previous prompt; other models read the previous prompt."""

from __future__ import annotations

from ctxbench.bench.fidelity.auto import left_cached, output_cached
from ctxbench.bench.fidelity.compare import compare
from ctxbench.sim.core.profiles import profile
from ctxbench.traces.model import Content, Header, MessageEvent, SystemEvent, Trace, Usage

OPENAI = profile("openai-auto")


def test_the_profile_lists_the_models_measured_to_read_through_their_output() -> None:
    assert output_cached(OPENAI, "gpt-5.4") and output_cached(OPENAI, "gpt-5.3-codex")
    assert output_cached(OPENAI, "gpt-5.1-codex-max")
    assert not output_cached(OPENAI, "gpt-5.2-codex") and not output_cached(OPENAI, "gpt-5-codex")
    assert not output_cached(profile("deepseek"), "gpt-5.4")
    # development part, BearTDK6/ba-pro (gpt-5.4): prompt 19,449, output 2,130, the next read 21,504
    assert left_cached(OPENAI, 19_449, 2_130, "gpt-5.4") == 21_451
    assert left_cached(OPENAI, 19_449, 2_130, "gpt-5.4", turn=True) == 19_449
    assert left_cached(OPENAI, 19_449, 2_130, "gpt-5.2-codex") == 19_449


def _trace(model: str, through: bool) -> Trace:
    """A user turn, three tool rounds, a second user turn. Each continuation bills the read of the
    previous prompt and output one step short (`through`) or of the previous prompt; the second
    user turn bills the previous prompt."""
    events: list[SystemEvent | MessageEvent] = [SystemEvent((Content("text", "system " * 3000),), t=0.0)]
    events.append(MessageEvent("user", (Content("text", "question " + "word " * 800),), t=0.0))
    prompt, prev, out, read = 4_000, 0, 0, 0
    for i in range(5):
        if i == 4:
            events.append(MessageEvent("user", (Content("text", "again " + "word " * 200),), t=40.0))
        elif i:
            events.append(
                MessageEvent("user", (Content("tool_result", "ok " * 300, tool_id=f"t{i}"),), t=10.0 * i)
            )
        if i:
            top = prev + out - 128 if through and i < 4 else prev
            read = min(top, prompt) // 128 * 128
        out = 900 + 10 * i
        u = Usage(prompt - read, read, 0, 0, out)
        call = Content("tool_use", '{"cmd": "ls"}' * 60, tool_id=f"t{i + 1}", name="shell")
        events.append(MessageEvent("assistant", (call,), t=10.0 * i + 1, usage=u))
        prev, prompt = prompt, prompt + out + 400
    return Trace(Header("t.jsonl", model=model, meta={"format": "codex-rollout"}), tuple(events))


def test_a_listed_model_is_predicted_reading_through_its_output() -> None:
    sf = compare(_trace("gpt-5.4", through=True))
    reads = [r.predicted.cache_read for r in sf.baseline.requests]
    assert reads == [r.billed.cache_read for r in sf.baseline.requests]
    assert [r.naive_read for r in sf.baseline.requests] == reads


def test_a_model_not_listed_is_predicted_reading_the_previous_prompt() -> None:
    sf = compare(_trace("gpt-5.2-codex", through=False))
    reads = [r.predicted.cache_read for r in sf.baseline.requests]
    assert reads == [r.billed.cache_read for r in sf.baseline.requests]
