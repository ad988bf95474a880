"""The zai profile's measured per-model rules (sim/data/profiles/zai.yaml `output_cached`,
`read_units`): glm-4.7 reads on a 128-token grid and through the previous response, as its
development bills show; the other GLM models read the previous prompt to the token."""

from __future__ import annotations

from ctxbench.sim.core.provider import Provider, Request
from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.providers.registry import make_provider
from tests.sim.providers.conftest import say, tool_round, transcript

PROMPT, OUTPUT = 40_000, 700  # the first prompt and its response


def _continuation_read(model: str) -> int:
    """What a tool continuation reads on the zai profile after a `PROMPT`-token request whose
    response was `OUTPUT` tokens."""
    p: Provider = make_provider("zai", model)
    tr: Transcript = transcript(tools=500, system=2000)
    say(tr, "user", "u0", PROMPT - 2_500)
    first = p.call(Request(tr, len(tr), model, OUTPUT, (), "gameplay", "c", 0), 0.0)
    assert first.usage.cache_read == 0
    tool_round(tr, 0, OUTPUT, 300)
    return p.call(Request(tr, len(tr), model, 50, (), "gameplay", "c", 1), 5.0).usage.cache_read


def test_glm_4_7_reads_through_the_previous_response_on_its_grid() -> None:
    """ahmedarafa994/eq-prediction (development part): glm-4.7's reads are 128·k tokens and reach
    into the previous response (zai.yaml sources)."""
    assert _continuation_read("glm-4.7") == (PROMPT + OUTPUT - 1) // 128 * 128


def test_glm_5_1_reads_the_previous_prompt() -> None:
    """Not listed: glm-5.1's bills read the previous prompt more often than through the output."""
    assert _continuation_read("glm-5.1") == PROMPT
