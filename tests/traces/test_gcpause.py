"""`traces.gcpause.gc_paused`: no collection inside, the collector back after, and what the pause made
moved out of the young generations without a walk (issue 13)."""

from __future__ import annotations

import gc
import weakref

import pytest

from ctxbench.traces.gcpause import gc_paused


def _made_in_a_pause() -> list[list[int]]:
    with gc_paused():
        assert not gc.isenabled()
        kept = [[i] for i in range(5000)]  # more than a young collection's threshold
        assert gc.get_count()[0] >= 5000  # nothing collected inside
    assert gc.isenabled()
    return kept


def test_what_a_pause_made_goes_to_the_oldest_generation_not_frozen() -> None:
    if gc.get_freeze_count():
        pytest.skip("something in this test process froze objects (the next test covers that case)")
    gc.collect()
    kept = _made_in_a_pause()
    assert gc.get_freeze_count() == 0  # nothing left out of the collector's reach
    assert gc.get_count()[0] < 100  # the young generation no longer holds them: no walk over them
    assert len(kept) == 5000


def test_in_a_process_that_freezes_what_a_pause_made_is_frozen_with_the_rest() -> None:
    gc.collect()
    gc.freeze()  # as the `ctxbench` command does after its imports
    try:
        before = gc.get_freeze_count()
        kept = _made_in_a_pause()
        assert gc.get_freeze_count() >= before + len(kept)
    finally:
        gc.unfreeze()


def test_freezing_keeps_no_cyclic_garbage_from_before_the_pause() -> None:
    class Node:
        pass

    gc.collect()
    gc.freeze()
    try:
        cycle = Node()
        cycle.me = cycle  # type: ignore[attr-defined]
        alive = weakref.ref(cycle)
        del cycle  # garbage only the cyclic collector can free
        _made_in_a_pause()
        assert alive() is None  # freed, not frozen
    finally:
        gc.unfreeze()


def test_a_caller_that_paused_the_collector_keeps_it_paused() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
