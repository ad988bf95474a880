"""Issue 28 on the development part only (the shared sessions): the naive fallback where the
client model is unsure, the 1M tier, requests not scored, the seeded cost interval, the corpus
split and `--all-real --corpus`, and `billed`'s fast reading path against the importer's."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from ctxbench.bench.billed.fast import fast_totals
from ctxbench.bench.billed.totals import billed_totals
from ctxbench.bench.cli import main
from ctxbench.bench.corpus.extract import CorpusError, rows, split_of
from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.fidelity.interval import cost_interval
from ctxbench.bench.fidelity.replay import serving
from ctxbench.bench.fidelity.unsure import unsure
from ctxbench.traces.importers import ImportFailure, import_paths
from ctxbench.traces.model import MessageEvent, Trace, Usage
from tests.real import REAL, needs_real

SNIFFLY = "sniffly/d3ad4cdc-5657-435d-98fa-0035d53e383d.jsonl"
CODERABBIT = (
    "claude-code-log/-Users-dain-workspace-coderabbit-review-helper/"
    + "cb2e607c-c758-415a-8b45-c49e4631906a.jsonl"
)


def _main(rel: str) -> Trace:
    return import_paths([REAL / rel]).main


def _with_meta(tr: Trace, **meta: object) -> Trace:
    return replace(tr, header=replace(tr.header, meta={**tr.header.meta, **meta}))


def test_corpus_pointers_and_split_rule(tmp_path: Path) -> None:
    table = rows()
    assert {r["split"] for r in table} == {"dev", "test"}
    for r in table:  # no repository in two parts
        assert {x["split"] for x in table if x["repo"] == r["repo"]} == {r["split"]}
    assert split_of("d-kimuson/claude-code-viewer") == "test"
    bad = tmp_path / "s.csv"
    bad.write_text(
        "repo,path,commit,format,model,requests,licence,split,sha256\na/b,p,abc,x,m,1,MIT,both,0\n"
    )
    with pytest.raises(CorpusError, match=r"s.csv:2: field split"):
        rows(bad)


@needs_real
def test_unsure_version_falls_back_to_naive_never_below_it() -> None:
    """A version the replay was not checked on: requests where it predicts a break of the client's
    prompt fall back to the naive read and say so; the score is never below naive's."""
    tr = _with_meta(_main(CODERABBIT), version="9.9.9")
    assert unsure(tr).at(5) == "version 9.9.9 not checked"
    sf = compare(tr, condition=False)
    for r in sf.requests:
        assert r.unsure == "version 9.9.9 not checked"
        if r.fallback:
            assert (
                r.fallback == "naive (version 9.9.9 not checked)" and r.predicted.cache_read == r.naive_read
            )
    assert sf.share_ok >= sf.share_naive_ok
    checked = compare(_main(CODERABBIT), condition=False)
    assert checked.fallbacks == 0 and all(not r.unsure for r in checked.requests)


@needs_real
def test_unlogged_shrink_is_unsure_from_there_on() -> None:
    tr = _main(SNIFFLY)
    events = list(tr.events)
    k = [i for i, e in enumerate(events) if isinstance(e, MessageEvent) and e.usage is not None][30]
    u = events[k].usage
    assert u is not None
    events[k] = replace(events[k], usage=Usage(u.input_tokens, 10, 0, 0, u.output_tokens))
    doubt = unsure(replace(tr, events=tuple(events)))
    assert doubt.shrink_from > 0 and doubt.at(doubt.shrink_from) == "unlogged shrink" and not doubt.at(0)


@needs_real
def test_prompt_over_the_window_runs_on_the_1m_tier() -> None:
    tr = _main(SNIFFLY)
    events = list(tr.events)
    k = next(i for i, e in enumerate(events) if isinstance(e, MessageEvent) and e.usage is not None)
    u = events[k].usage
    assert u is not None
    events[k] = replace(events[k], usage=replace(u, input_tokens=250_000))
    sv = serving(replace(tr, events=tuple(events)))
    assert sv.model == "claude-sonnet-4[1m]" and "1M tier" in sv.note and "200,000-token window" in sv.note
    assert serving(tr).model == "claude-sonnet-4"


@needs_real
def test_cost_interval_is_seeded_and_holds_the_bill() -> None:
    sf = compare(_main("spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"))
    a, b = cost_interval(sf), cost_interval(sf)
    assert a == b and a.low <= a.central <= a.high and a.holds(sf.cost_billed)
    # without failures (and without the model error, model_error.py) the bill is outside
    assert not cost_interval(sf, rate=0.0, model_error=False).holds(sf.cost_billed)


@needs_real
def test_fast_billed_equals_the_importers(tmp_path: Path) -> None:
    for path in sorted(REAL.rglob("*.jsonl")):
        if "subagents" in path.parts:
            continue
        try:
            res = import_paths([path], "claude-code")
        except ImportFailure:  # not a Claude Code session
            continue
        fast = fast_totals(path)
        assert fast is not None, path
        slow = billed_totals(list(res.traces))
        assert replace(fast.totals, cost=0.0, models=()) == replace(slow, cost=0.0, models=()), path
        assert fast.totals.cost == pytest.approx(slow.cost, rel=1e-12), path
        no_cost = [replace(m, cost=0.0) for m in slow.models]
        assert [replace(m, cost=0.0) for m in fast.totals.models] == no_cost, path
        for a, b in zip(fast.totals.models, slow.models, strict=True):
            assert a.cost == pytest.approx(b.cost, rel=1e-12), path


@needs_real
def test_all_real_corpus_parts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A corpus folder (here made of development sessions): the test part first, figures beside naive."""
    corpus = tmp_path / "corpus"
    (corpus / "test" / "a").mkdir(parents=True)
    (corpus / "dev").mkdir()
    shutil.copy(REAL / SNIFFLY, corpus / "test" / "a" / "s.jsonl")
    shared = tmp_path / "shared"
    shared.mkdir()
    shutil.copy(REAL / CODERABBIT, shared / "c.jsonl")
    out = tmp_path / "r.md"
    assert main(["fidelity", "--all-real", str(shared), "--corpus", str(corpus), "-o", str(out), "-q"]) == 0
    text = out.read_text()
    assert text.index("## test part") < text.index("## dev part") < text.index("Development part in detail")
    assert "| s.jsonl | main | claude-code | claude-sonnet-4 | 62 | 100.0% | 93.5% |" in text
    capsys.readouterr()
    assert (
        main(["fidelity", "--all-real", str(shared), "--corpus", str(corpus), "--split", "test", "--json"])
        == 0
    )
    docs = json.loads(capsys.readouterr().out)
    assert [d["part"] for d in docs] == ["test"] and docs[0]["naive"]["within_tolerance"] == 0.9355
    assert main(["fidelity", str(REAL / SNIFFLY), "--corpus", str(corpus)]) == 2
