"""The automatic-prefix cost interval is drawn around the prompts of the prediction it widens
(bench/fidelity/auto_interval.py `prompt_sent`): a replay of what was recorded sends the billed
prompt, a policy its own context."""

from __future__ import annotations

import pytest

from ctxbench.bench.fidelity.auto_interval import LOST_SHARE, _cost, auto_interval, prompt_sent
from ctxbench.bench.fidelity.policy import PolicyTrack
from ctxbench.bench.fidelity.results import RequestCompare, SessionFidelity
from ctxbench.sim.core.catalog import prices
from ctxbench.sim.core.provider import Usage as SimUsage
from ctxbench.traces.model import Usage

MODEL = "glm-5.1"
OUT = 80


def _session(sent: int, policy: bool, billed_prompt: int = 100_000, n: int = 20) -> SessionFidelity:
    """`n` requests billed `billed_prompt` tokens each, predicted to send `sent`, every request
    after the first reading all of it but 500 tokens; the prediction of a policy (`policy`) or a
    replay of what was recorded."""
    reqs = []
    for i in range(n):
        read = sent - 500 if i else 0
        rc = RequestCompare(
            i, 10.0 * i, 10.0, Usage(500, billed_prompt - 500, 0, 0, OUT), SimUsage(sent - read, read), read
        )
        rc.input_predicted = sent - read
        reqs.append(rc)
    sf = SessionFidelity("s", MODEL, "claude-code" if policy else "recorded", reqs, auto_provider="zai")
    sf.track = PolicyTrack("claude-code") if policy else None
    return sf


def _priced(sf: SessionFidelity, prompt: int, share: float) -> float:
    """The session's cost at `share` with every request sending `prompt` tokens."""
    p, cost = prices(MODEL), 0.0
    for k, r in enumerate(sf.requests):
        read = r.predicted.cache_read if not k else min(prompt, int(r.predicted.cache_read * (1 - share)))
        cost += p.cost(prompt - read, read, 0, 0, OUT)
    return cost


def test_a_policy_is_priced_on_the_context_it_sends() -> None:
    """A preset whose context is 80k where the bill's prompt is 100k: the interval prices 80k
    prompts at every share (its median is its own deterministic prediction at the median share),
    not the bill's prompt less the policy's read, 20k uncached tokens a request more."""
    sf = _session(80_000, policy=True)
    assert prompt_sent(sf, sf.requests[3]) == 80_000
    for share in LOST_SHARE["zai"]:
        assert _cost(sf, share) == pytest.approx(_priced(sf, 80_000, share))
    iv = auto_interval(sf, "zai")
    assert iv is not None and iv.low <= iv.median <= iv.high
    assert iv.median < _priced(sf, 100_000, 0.0) * 0.9


def test_a_replay_of_what_was_recorded_takes_every_prompt_size_from_the_bill() -> None:
    """The recorded replay's blocks are sized from the bill, so where its rebuilt prompt is off by
    a few tokens the interval still prices the billed prompt."""
    sf = _session(99_000, policy=False)
    assert prompt_sent(sf, sf.requests[3]) == 100_000
    for share in (LOST_SHARE["zai"][0], 0.0, LOST_SHARE["zai"][-1]):
        assert _cost(sf, share) == pytest.approx(_priced(sf, 100_000, share))
