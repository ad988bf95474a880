"""A request served by another backend than the one a conversation is replayed on (a Claude Code
log on Claude models, then on Z.ai's GLM) is unsure, and there even a timing break falls back to
the naive read (bench/fidelity/unsure.py `other_backend`, compare.py `_predicted`)."""

from __future__ import annotations

from ctxbench.bench.fidelity.compare import _predicted
from ctxbench.bench.fidelity.unsure import OTHER_BACKEND, keeps_timing, other_backend
from ctxbench.sim.core.records import RequestRecord
from ctxbench.traces.model import Usage


def _record(read: int, write: int, cause: str, model: str = "glm-4.7") -> RequestRecord:
    return RequestRecord(
        "c", 3, "turn", 0, 900.0, 0.0, model, read + write + 100, 0, 100, read, write, 0, 50,
        0.0, 0.0, 0.0, miss_cause=cause,
    )  # fmt: skip


def test_only_a_model_of_another_vendor_is_another_backend() -> None:
    assert other_backend("glm-4.7", "claude-sonnet-4-6") == f"{OTHER_BACKEND} (zai)"
    assert other_backend("claude-haiku-4-5", "claude-sonnet-4-6") == ""  # a switch within one vendor
    assert other_backend("not-a-model", "claude-sonnet-4-6") == ""  # unknown: nothing claimed
    assert keeps_timing("version 2.1.88 not checked")
    assert not keeps_timing(f"version 2.1.88 not checked, {OTHER_BACKEND} (zai)")


def test_a_timing_break_on_another_backend_falls_back_to_the_naive_read() -> None:
    billed = Usage(100, 80_000, 2_000, 0, 50)
    expired = _record(0, 82_000, "ttl_expiry")  # the replay's profile's TTL ran out
    # the conversation's own backend: a timing break stands, even where the replay is unsure
    kept, why = _predicted(expired, "version 2.1.88 not checked", billed, 80_000, 0, False)
    assert kept.cache_read == 0 and why == ""
    # another backend's cache is not the replay's: its TTL is no evidence, the naive read stands
    fell, why = _predicted(expired, f"{OTHER_BACKEND} (zai)", billed, 80_000, 0, False)
    assert fell.cache_read == 80_000 and fell.cache_write_5m == 2_000
    assert why == f"naive ({OTHER_BACKEND} (zai))"
