"""Which measured share an automatic-prefix cache draws from (bench/fidelity/auto_interval.py
`cache_of`), and a conversation whose copied requests are left out keeps an interval of the
requests it keeps (bench/fidelity/report.py `billed_once`)."""

from __future__ import annotations

from pathlib import Path

from ctxbench.bench.fidelity.auto_interval import auto_interval, cache_of
from ctxbench.bench.fidelity.discover import Log
from ctxbench.bench.fidelity.logs import Replayed
from ctxbench.bench.fidelity.report import billed_once
from ctxbench.bench.fidelity.results import RequestCompare, SessionFidelity
from ctxbench.sim.core.provider import Usage as SimUsage
from ctxbench.traces.model import Header, MessageEvent, Trace, Usage


def test_a_cache_is_named_by_its_vendor_not_by_the_wire_it_speaks() -> None:
    assert cache_of("openai-auto") == cache_of("openai-auto-inmemory") == "openai"
    assert cache_of("gemini-implicit") == "gemini"
    # zai and moonshot answer in OpenAI's chat shape; their caches are their own
    assert cache_of("zai") == "zai" and cache_of("moonshot") == "moonshot"


def _rc(i: int, rid: str) -> RequestCompare:
    prompt = 20_000 * (i + 1)
    read = prompt - 20_000
    return RequestCompare(
        i, float(i), 1.0, Usage(20_000, read, 0, 0, 500), SimUsage(20_000, read), 0,
        request_id=rid, cost_billed=0.1 * (i + 1), cost_predicted=0.1 * (i + 1),
    )  # fmt: skip


def _replayed(tmp_path: Path, name: str, ids: list[str], start: int) -> Replayed:
    reqs = [_rc(start + k, rid) for k, rid in enumerate(ids)]
    sf = SessionFidelity(name, "gpt-5", "recorded", reqs, meta={"model_provider": "openai"})
    sf.auto_provider = "openai"
    sf.auto_interval = auto_interval(sf, "openai")
    events = tuple(MessageEvent("assistant", (), usage=Usage(1, 0, 0, 0, 1), request_id=rid) for rid in ids)
    path = tmp_path / f"{name}.jsonl"
    path.write_text("{}\n")
    return Replayed(Log(path.name, path, "codex"), name, Trace(Header(path.name, model="gpt-5"), events), sf)


def test_a_conversation_without_its_copies_keeps_an_interval_of_its_own_requests(tmp_path: Path) -> None:
    parent = _replayed(tmp_path, "a", ["r0", "r1", "r2"], 0)
    fork = _replayed(tmp_path, "b", ["r0", "r1", "r2", "r3"], 0)  # a fork repeats its parent's requests
    whole = fork.fidelity.auto_interval if fork.fidelity else None
    _, once = billed_once([parent, fork])
    assert once.fidelity is not None and once.fidelity.n == 1 and whole is not None
    iv = once.fidelity.auto_interval
    assert iv is not None and iv.mean < whole.mean  # the copies' cost is no longer in it
    again = auto_interval(once.fidelity, "openai")
    assert again is not None and iv.mean == again.mean
