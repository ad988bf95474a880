"""Inspect AI logs as current versions write them (traces/importers/inspect_ai.py).

Real runs: Inspect 0.3.285 (PyPI) against `ctxbench serve`, a task of two samples whose solver is a
~1.4k-token system message, a local `bash(cmd)` tool and `generate(tool_calls="loop")`, run with
`inspect eval task.py --model anthropic/claude-sonnet-4-5 --max-connections 1` (ANTHROPIC_BASE_URL
= the server) and `--model openai/gpt-5.1` (OPENAI_BASE_URL, the Responses API). The logs are
`.eval` zips of zstandard members whose model events carry `input_refs` into the sample's message
pool instead of `input`, and whose `input_tokens` is the uncached part only (inspect_ai #3341);
the server's ledgers are beside them. Before: the format was not detected, and read as JSON each
Anthropic request had its cache read taken out of an `input_tokens` of 0 (read 0, billed $0)."""

from __future__ import annotations

import json
import random
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.robustness.fuzz_inputs import mutate, run_cli
from ctxbench.traces.importers import import_paths
from ctxbench.traces.importers.base import ImportFailure
from ctxbench.traces.importers.detect import detect
from ctxbench.traces.importers.inspect_ai import _usage
from ctxbench.traces.model import MessageEvent, Usage
from tests.traces.importers.ledgers import billed_rows, usage_of

DATA = Path(__file__).parent / "data"
RUNS = ["anthropic", "openai"]


def _ledger(run: str) -> list[tuple[Usage, float]]:
    """The usage and cost of every request of the samples (not Inspect's own probe of the OpenAI
    model, "Please say 'hello, world'", which no sample holds)."""
    rows = billed_rows(DATA / f"inspect-0.3.285-{run}.requests.jsonl.xz")
    return [(usage_of(r), float(r["cost"])) for r in rows if not isinstance(r["body"].get("input"), str)]


@pytest.mark.parametrize("run", RUNS)
def test_every_request_of_an_eval_log_has_the_usage_the_server_billed(run: str) -> None:
    log = DATA / f"inspect-0.3.285-{run}.eval"
    assert detect(log) == "inspect-ai"
    traces = import_paths([log]).traces
    assert [t.header.meta["conversation"] for t in traces] == ["sample-1", "sample-2"]
    usages = [e.usage for t in traces for e in t.events if isinstance(e, MessageEvent) and e.usage]
    billed = _ledger(run)
    assert usages == [u for u, _ in billed]
    prompts = [e for e in traces[0].events if isinstance(e, MessageEvent) and e.role == "user"]
    assert len(prompts) == 4  # the task's prompt, then each tool result (from `input_refs`)


@pytest.mark.parametrize("run", RUNS)
def test_the_replay_of_an_eval_log_matches_every_bill(run: str) -> None:
    sessions = [compare(t) for t in import_paths([DATA / f"inspect-0.3.285-{run}.eval"]).traces]
    assert all(r.within for sf in sessions for r in sf.requests)
    cost = sum(c for _, c in _ledger(run))
    assert sum(sf.cost_billed for sf in sessions) == pytest.approx(cost, abs=1e-8)
    assert sum(sf.cost_predicted for sf in sessions) == pytest.approx(cost, abs=1e-8)


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        # Inspect 0.3.95, OpenAI: the cache inside input (the shared log, traces-real inspect-ai)
        ({"input_tokens": 1568, "output_tokens": 17, "total_tokens": 1585, "input_tokens_cache_read": 1024},
         Usage(544, 1024, 0, 0, 17)),
        # Inspect 0.3.285: input is the uncached part, whatever the provider
        ({"input_tokens": 954, "output_tokens": 80, "total_tokens": 2570, "input_tokens_cache_read": 1536},
         Usage(954, 1536, 0, 0, 80)),
        ({"input_tokens": 0, "output_tokens": 80, "total_tokens": 2549, "input_tokens_cache_write": 856,
          "input_tokens_cache_read": 1613}, Usage(0, 1613, 856, 0, 80)),
        ({"input_tokens": 10, "output_tokens": 5}, Usage(10, 0, 0, 0, 5)),
    ],
)  # fmt: skip
def test_input_tokens_hold_the_cache_only_where_the_total_says_so(
    usage: dict[str, int], expected: Usage
) -> None:
    assert _usage(usage, "log", "usage") == expected


def test_a_damaged_eval_log_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "run.eval"
    good = (DATA / "inspect-0.3.285-anthropic.eval").read_bytes()
    bad.write_bytes(good[: len(good) // 2])
    with pytest.raises(ImportFailure, match=r"run\.eval: not a zip archive"):
        import_paths([bad])
    with zipfile.ZipFile(tmp_path / "empty.eval", "w") as zf:
        zf.writestr("other.json", "{}")
    with pytest.raises(ImportFailure, match=r"no header\.json"):
        import_paths([tmp_path / "empty.eval"])


def _sample_and_header() -> tuple[dict[str, object], dict[str, object]]:
    from ctxbench.traces.compressed import zip_member

    log = DATA / "inspect-0.3.285-anthropic.eval"
    return json.loads(zip_member(log, "samples/1_epoch_1.json")), json.loads(zip_member(log, "header.json"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32))
def test_fuzzed_eval_logs_fail_cleanly(tmp_path: Path, seed: int) -> None:
    """A malformed member (deflate, as older Inspect wrote them) or damaged bytes of a zstandard
    member: `import` imports it or exits 2 with one line, never a traceback."""
    rng = random.Random(seed)
    log = tmp_path / "run.eval"
    if rng.random() < 0.5:
        sample, header = _sample_and_header()
        with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("header.json", json.dumps(header))
            zf.writestr("samples/1_epoch_1.json", mutate(sample, rng))
    else:
        data = bytearray((DATA / "inspect-0.3.285-anthropic.eval").read_bytes())
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        log.write_bytes(bytes(data))
    out = run_cli(["import", str(log), "-o", str(tmp_path / "out.jsonl")])
    assert out.clean, out.traceback or out.stderr


def test_a_grader_on_another_model_and_each_epoch_are_conversations_of_their_own() -> None:
    """The same task with `model_graded_qa(model="anthropic/claude-haiku-4-5")` as scorer and
    `--epochs 2`: every sample and epoch is a conversation, and the grader's model events one of
    their own (its own model, its own cache). Before, the grader's request joined the sample's
    conversation (a model switch inside it: 1/11 requests within) and the epochs shared names."""
    log = DATA / "inspect-0.3.285-grader-epochs.eval"
    traces = import_paths([log]).traces
    names = [t.header.meta["conversation"] for t in traces]
    assert len(set(names)) == len(names) == 8
    assert {t.header.model for t in traces} == {"claude-sonnet-4-5", "claude-haiku-4-5"}
    assert all(
        n.endswith("claude-haiku-4-5") == (t.header.model == "claude-haiku-4-5")
        for n, t in zip(names, traces, strict=True)
    )
    sessions = [compare(t) for t in traces]
    assert sum(sf.n for sf in sessions) == len(_ledger("grader-epochs")) == 11
    assert all(r.within for sf in sessions for r in sf.requests)
    cost = sum(c for _, c in _ledger("grader-epochs"))
    assert sum(sf.cost_billed for sf in sessions) == pytest.approx(cost, abs=1e-8)
