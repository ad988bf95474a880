"""`ctxbench tokenizers --measure` (bench/rate_error.py): the rate's error per 2 KB chunk of real
text against exact o200k/cl100k, and Claude's against the billed counts of claude-trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.bench.cli import main
from ctxbench.bench.rate_error import CHUNK_BYTES, chunks, measure, spreads, texts_by_kind
from ctxbench.sim.core.tokens import RateCounter, toktok_available
from ctxbench.traces.generators import generate
from tests.real import REAL, needs_real

needs_toktok = pytest.mark.skipif(not toktok_available(), reason="the `tokenizers` extra is not installed")


@given(st.lists(st.text(min_size=0, max_size=3000), max_size=8), st.integers(min_value=4, max_value=5000))
def test_chunks_are_whole_characters_of_at_most_the_size_in_order(texts: list[str], size: int) -> None:
    pieces = list(chunks(texts, size))
    joined = "\n".join(texts)
    assert "".join(pieces) == joined[: len("".join(pieces))]  # in order, nothing skipped
    assert all(size - 3 <= len(p.encode("utf-8")) <= size for p in pieces)
    assert len(joined.encode("utf-8")) - sum(len(p.encode("utf-8")) for p in pieces) < size + 3 * len(pieces)


def test_texts_are_grouped_by_the_kind_the_rate_uses() -> None:
    by = texts_by_kind([generate("game", turns=6, full_text=True, seed=1)])
    assert set(by) == {"prose", "json"} and all(by.values())
    assert any(t.startswith("{") for t in by["json"])  # tool schemas and inputs


@needs_toktok
def test_spreads_compare_the_rate_with_exact_counts_per_chunk() -> None:
    import toktok

    text = ("The quick brown fox jumps over the lazy dog. " * 200).strip()
    (s,) = spreads("t", {"prose": [text]}, "o200k")
    pieces = list(chunks([text]))
    exact = [int(n) for n in toktok.batch_count(pieces, "o200k_base")]
    est = [RateCounter().count_text(p, "prose") for p in pieces]
    assert s.chunks == len(pieces) == len(text.encode()) // CHUNK_BYTES
    assert s.total == pytest.approx(sum(est) / sum(exact))
    assert s.low == pytest.approx(min(e / x for e, x in zip(est, exact, strict=True)))
    assert s.rate_bytes_per_token == 4.48 and s.bytes_per_token > 4.0  # plain English


def test_measure_without_real_sessions_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tokenizers", "--measure", "--real", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert any("no real recorded sessions" in n for n in data["notes"]) and data["claude"] == []
    assert {r["source"] for r in data["spreads"]} <= {"samples"}
    if not toktok_available():
        assert any("pip install 'ctxbench[tokenizers]'" in n for n in data["notes"])


@needs_real
@needs_toktok
def test_measure_on_the_real_sessions(capsys: pytest.CaptureFixture[str]) -> None:
    """Both exact encodings on the real sessions' prose and JSON; Claude's calibration rows are the
    fidelity report's (bench/fidelity_report.calibration_summary)."""
    from ctxbench.bench.fidelity.report import CLAUDE_TRACE, calibration, calibration_summary

    data = measure(REAL)
    real = {(r["kind"], r["encoding"]): r for r in data["spreads"] if r["source"] == "real sessions"}
    assert set(real) == {(k, e) for k in ("prose", "json") for e in ("o200k", "cl100k")}
    for r in real.values():
        assert r["chunks"] > 100 and r["low"] <= r["median"] <= r["high"]
    assert data["claude"] == calibration_summary(calibration(REAL / CLAUDE_TRACE))
    assert main(["tokenizers", "--measure", "--real", str(REAL)]) == 0
    out = capsys.readouterr().out
    assert "real sessions  prose o200k" in out and "Claude (no offline tokenizer)" in out
