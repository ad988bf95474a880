"""`fidelity --policy P` (issue 29): under a policy other than `recorded` a divergence is the
policy's ("policy: ..."), outside events are inferred only when replaying what was recorded, the
real summariser request is the summary request it was, and the round before a compaction that no
bill covers is sized."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.fidelity.replay import replay
from ctxbench.bench.fidelity.results import SessionFidelity
from ctxbench.policies.preset import load_policy
from ctxbench.traces.importers import import_paths
from ctxbench.traces.importers.base import ImportReport
from ctxbench.traces.importers.sizing import size_events
from ctxbench.traces.model import CompactionEvent, Content, MessageEvent, Trace, Usage
from tests.real import REAL, needs_real

SPOTTER = "spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"  # one compaction (summariser merged)


@cache
def _trace() -> Trace:
    return import_paths([REAL / SPOTTER], "claude-code").traces[0]


@cache
def _fidelity(policy: str) -> SessionFidelity:
    return compare(_trace(), "258c7280", policy)


@needs_real
def test_recorded_replay_sends_the_summariser_request_as_a_summary() -> None:
    recs = [r for r in replay(_trace(), load_policy("recorded")) if r.kind != "warmup"]
    assert len(recs) == 153
    assert [r.kind for r in recs].count("summary") == 1
    sf = _fidelity("recorded")
    assert sf.track is None and sf.outside.lookup_failures == (31, 150)  # taken from the bill


@needs_real
def test_a_preset_is_not_blamed_on_the_server() -> None:
    sf = _fidelity("claude-code")
    assert not sf.outside and sf.unconditioned is None  # no outside event inferred under P
    assert sf.n == 153  # the real summariser request paired with P's own, not replayed as a turn
    assert sf.track.real == [103] and sf.track.own == [103]
    causes = [r.cause for r in sf.misses]
    assert causes and all(c.startswith("policy: ") for c in causes)
    assert not any("lookup" in c.split("(")[0] or "IDE" in c for c in causes)


@needs_real
def test_a_policy_that_does_not_compact_is_named_where_the_real_harness_did() -> None:
    sf = _fidelity("none")
    assert sf.track.real == [103] and sf.track.own == []
    by_index = {r.index: r for r in sf.requests}
    assert by_index[102].cause == (
        "policy: the real harness compacted at request 102 (its summariser request); none did not"
    )
    assert by_index[102].cost_predicted == 0.0  # P sent no such request
    assert by_index[103].cause == "policy: the real harness compacted before request 103; none did not"
    assert by_index[104].cause.startswith(
        "policy: none's context differs from the real harness's since request 103"
    )


def _text(n: int) -> Content:
    return Content("text", "x" * n, nbytes=n)


def test_the_round_before_a_compaction_no_bill_covers_is_sized() -> None:
    """No summariser request merged (a log without it): the last reply and the tool results after
    it are sized at the reply's output and the calibrated rate, not 0 (issue 29)."""
    u1 = Usage(3, 0, 1000, 0, 50)
    u2 = Usage(3, 1000, 400, 0, 80)
    events = [
        MessageEvent("user", (_text(4000),), t=0.0),
        MessageEvent("assistant", (_text(200),), t=1.0, output_tokens=50, usage=u1),
        MessageEvent("user", (_text(1600),), t=2.0),
        MessageEvent("assistant", (_text(320),), t=3.0, output_tokens=80, usage=u2),
        MessageEvent("user", (Content("tool_result", "y" * 2000, nbytes=2000, lang="code"),), t=4.0),
        CompactionEvent((_text(800),), t=5.0),
        MessageEvent("assistant", (_text(100),), t=6.0, output_tokens=25, usage=Usage(3, 0, 900, 0, 25)),
    ]
    out, _meta = size_events(events, "claude-sonnet-4-6", ImportReport("t", "test"), "t")
    reply, result = out[4], out[5]  # after the system event
    assert isinstance(reply, MessageEvent) and isinstance(result, MessageEvent)
    assert reply.content[0].tokens == 80  # its output
    assert (result.content[0].tokens or 0) > 0  # the calibrated rate


def test_fidelity_cli_names_the_policy_prediction(tmp_path: Path) -> None:
    from ctxbench.bench.fidelity.text import predicted_label

    assert predicted_label(SessionFidelity("s", "m", "recorded")) == "predicted by the replay"
    sf = SessionFidelity("s", "m", "codex")
    sf.track = object()
    assert predicted_label(sf) == "predicted by policy codex"
