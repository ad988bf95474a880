"""`--tokenizer`: exact o200k/cl100k counts for traces that carry text, the `exact` estimator, the
`tokenizers` listing, and the extra named when toktok-rs is absent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.bench.cli import main
from ctxbench.policies.preset import load_policy
from ctxbench.sim.core.tokens import make_counter, toktok_available
from ctxbench.sim.runner import run_trace
from ctxbench.sim.summary import summarize
from ctxbench.traces.generators import generate

needs_toktok = pytest.mark.skipif(not toktok_available(), reason="the `tokenizers` extra is not installed")


def _text_trace():
    return generate("game", turns=12, full_text=True, seed=3)


@needs_toktok
def test_exact_tokenizer_changes_true_counts_of_text() -> None:
    pol = load_policy("h-direct")
    rate = summarize(run_trace(_text_trace(), pol, tokenizer="rate").records, [])
    exact = summarize(run_trace(_text_trace(), pol, tokenizer="o200k").records, [])
    assert exact.true_input != rate.true_input
    assert make_counter("o200k").count_text("hello world", "prose") == 2


@needs_toktok
def test_the_exact_estimator_has_no_error_against_the_true_counts(tmp_path: Path) -> None:
    path = tmp_path / "exact.yaml"
    path.write_text(
        "name: exact-h\nestimator: exact\neviction: {name: keep-last, n: 2}\n"
        "compaction: {name: h-handoff, trigger: 0.65}\nmarks: h-direct\n"
    )
    s = summarize(run_trace(_text_trace(), load_policy(str(path)), tokenizer="o200k").records, [])
    assert s.estimate_error_mean == 0.0 and s.estimate_error_worst == 0.0


def test_missing_toktok_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import ctxbench.sim.core.tokens as tokens

    monkeypatch.setattr(tokens, "toktok_available", lambda: False)
    argv = ["run", "traces/samples/game-60.jsonl", "--policy", "h-direct", "--tokenizer", "o200k"]
    assert main(argv) == 2
    assert "pip install 'ctxbench[tokenizers]'" in capsys.readouterr().err


def test_tokenizers_listing_says_which_models_have_no_offline_tokenizer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["tokenizers", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    models = {m["model"]: m for m in data["models"]}
    assert models["gpt-4.1"]["offline_tokenizer"] == "o200k"
    assert models["claude-sonnet-4-6"]["offline_tokenizer"] is None
    assert "§1.6" in models["claude-sonnet-4-6"]["rate_error"]
    assert {t["name"] for t in data["tokenizers"]} == {"rate", "o200k", "cl100k"}
