"""DeepSeek behind Claude Code: a unit ends where the previous output ended (providers.md §4 rule 1),
reads come in 128-token units (measured on the development part), the naive reading follows both,
and no write is ever predicted or billed."""

from __future__ import annotations

from pathlib import Path

from ctxbench.bench.fidelity.auto import left_cached, unit_read, writes_free
from ctxbench.bench.fidelity.compare import compare
from ctxbench.sim.core.profiles import profile
from ctxbench.traces.importers import import_paths
from tests.traces.importers.claude_code_lines import turn, write_log

DEEPSEEK = profile("deepseek")


def test_deepseek_leaves_its_output_cached_in_whole_units() -> None:
    assert writes_free(DEEPSEEK) and writes_free({"provider": "auto-prefix"})
    assert not writes_free(profile("anthropic"))
    assert left_cached(DEEPSEEK, 25_254, 231) == 25_485
    assert left_cached({"provider": "auto-prefix"}, 25_254, 231) == 25_254
    assert DEEPSEEK["unit_tokens"] == 128
    assert unit_read(25_485, 25_577, 128) == 25_472  # the read the log billed (floor to 128)
    assert unit_read(25_485, 20_000, 128) == 19_968  # never more than the request's own prompt


def _deepseek_log(tmp_path: Path) -> Path:
    """Claude Code on deepseek-v4-pro: each request reads the previous prompt and its output,
    rounded down to 128 tokens, 2 s after the previous reply (faster than the profile's 3 s)."""
    lines, prev_left = [], 0
    for k in range(8):
        prompt = 12_000 if k == 0 else prev_left + 700 + 37 * k
        read = prev_left // 128 * 128
        out = 200 + 11 * k
        usage = {
            "input_tokens": prompt - read,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": 0,
            "output_tokens": out,
        }
        lines += turn(
            k, "deepseek-v4-pro", usage,
            asked=f"2026-05-01T08:00:{k * 5:02d}Z", answered=f"2026-05-01T08:00:{k * 5 + 2:02d}Z",
            message_id=f"{k:08d}-aaaa-bbbb-cccc-dddddddddddd", text_bytes=400, result_bytes=900,
        )  # fmt: skip
        prev_left = prompt + out
    return write_log(tmp_path / "ds.jsonl", lines)


def test_naive_and_replay_read_the_previous_output_and_write_nothing(tmp_path: Path) -> None:
    (trace,) = import_paths([_deepseek_log(tmp_path)], "claude-code").traces
    sf = compare(trace)
    base = sf.baseline
    assert all(r.naive_ok for r in base.requests)  # the naive reading is the unit rule
    assert base.share_ok == 1.0
    assert all(r.predicted.cache_write_5m == r.predicted.cache_write_1h == 0 for r in base.requests)
    # the replay sizes a reply from the bills' growth, not its output: a unit short at most (2 % here)
    assert abs(base.cost_predicted - sf.cost_billed) < 0.05 * sf.cost_billed


def test_a_read_a_unit_apart_from_the_naive_one_falls_back_to_it(tmp_path: Path) -> None:
    """The rebuilt prompt sizes a reply from the bills' growth, so its unit boundaries can sit a unit
    off the ones sent: where the replay's read is one unit or more from the naive one, the request
    falls back to the naive read and names why (on the development part the bill read exactly the
    naive read on 747 such requests, the replay's on 9: bench/fidelity/unsure.py)."""
    (trace,) = import_paths([_deepseek_log(tmp_path)], "claude-code").traces
    base = compare(trace).baseline
    apart = [r for r in base.requests if r.index and r.replay_read != r.naive_read]
    assert apart  # the synthetic log's replies are sized a unit short of their output
    assert all(r.fallback.startswith("naive (units end inside messages") for r in apart)
    assert all(r.within for r in base.requests)
    assert abs(base.cost_predicted - compare(trace).cost_billed) < 1e-9
