"""The provider-call side of the harness processes (sim/harness/calls.py)."""

from __future__ import annotations

import simpy

from ctxbench.sim.harness.calls import wait


def test_a_conversation_alone_moves_the_clock_without_the_event_queue() -> None:
    """Alone in the queue, the clock advances at once (no event to yield); with another event
    scheduled, a timeout is returned and the clock waits for it, as a yielded timeout would."""
    env = simpy.Environment()
    assert wait(env, 2.5) is None and env.now == 2.5
    env.timeout(10.0)  # another process's pending event
    ev = wait(env, 1.0)
    assert ev is not None and env.now == 2.5
    env.run(until=ev)
    assert env.now == 3.5
