"""`billed` reads usage as ccusage 20.x does (bench/billed/fast.py): of the lines of one message the
one with the largest total, as the importer does, cache writes from the 5m/1h split where a line has
one; and says where the importer's reading differs (synthetic lines)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.bench.billed.fast import fast_totals
from ctxbench.bench.cli import main
from ctxbench.traces.importers import import_paths
from ctxbench.traces.model import MessageEvent
from tests.bench.billed.usage_lines import usage_line

ZERO = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}


def _log(tmp: Path, *lines: str) -> Path:
    p = tmp / "s.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_lines_of_one_message_with_different_usage_keep_the_largest(tmp_path: Path) -> None:
    """A backend other than Anthropic's API logs its estimate on a message's first line and the
    request's own counts on the last (13562964800/claude-skills, test part: input 1,304 then
    128,822): `billed` and the importer both keep the largest line, so no note."""
    a = {
        "input_tokens": 10,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
        "output_tokens": 5,
    }
    b = {
        "input_tokens": 4,
        "cache_read_input_tokens": 900,
        "cache_creation_input_tokens": 0,
        "output_tokens": 7,
    }
    log = _log(tmp_path, usage_line(1, a), usage_line(2, b))
    fast = fast_totals(log)
    assert fast is not None
    t = fast.totals
    assert (t.requests, t.input, t.cache_read, t.output) == (1, 4, 900, 7)  # line b: total 911 > 15
    assert t.notes == ()
    (tr,) = import_paths([log], "claude-code").traces
    (usage,) = [e.usage for e in tr.events if isinstance(e, MessageEvent) and e.usage is not None]
    assert (usage.input_tokens, usage.cache_read, usage.output_tokens) == (4, 900, 7)


def test_a_first_line_without_prompt_counts_is_read_as_the_importer_reads_it(tmp_path: Path) -> None:
    """A gateway writes 0 input and no cache fields on every line but the last: ccusage keeps the
    last (largest), and so does the importer: no note."""
    real = {
        "input_tokens": 30,
        "cache_read_input_tokens": 40239,
        "cache_creation_input_tokens": 0,
        "output_tokens": 197,
    }
    empty = {"input_tokens": 0, "output_tokens": 0}
    fast = fast_totals(_log(tmp_path, usage_line(1, empty), usage_line(2, real)))
    assert fast is not None and fast.totals.notes == ()
    assert (fast.totals.input, fast.totals.cache_read, fast.totals.output) == (30, 40239, 197)


def test_ordinary_message_lines_give_no_note(tmp_path: Path) -> None:
    u = {"input_tokens": 3, "cache_read_input_tokens": 50, "cache_creation_input_tokens": 20,
         "output_tokens": 1, "cache_creation": {**ZERO, "ephemeral_5m_input_tokens": 20}}  # fmt: skip
    fast = fast_totals(_log(tmp_path, usage_line(1, u), usage_line(2, {**u, "output_tokens": 40})))
    assert fast is not None and fast.totals.notes == () and fast.totals.output == 40


@pytest.mark.parametrize(("split", "write"), [(ZERO, 0), ({}, 0), (None, 111_055)])
def test_cache_write_total_without_its_split(
    tmp_path: Path, split: dict[str, int] | None, write: int
) -> None:
    u: dict[str, object] = {"input_tokens": 1, "cache_read_input_tokens": 0,
                            "cache_creation_input_tokens": 111_055, "output_tokens": 2}  # fmt: skip
    if split is not None:
        u["cache_creation"] = split
    fast = fast_totals(_log(tmp_path, usage_line(1, u)))
    assert fast is not None and fast.totals.cache_write == write  # a split (even 0) wins, as ccusage
    if split is None:
        assert fast.totals.notes == ()
    else:
        (note,) = fast.totals.notes
        assert note.what == "cache-write-without-split"
        assert note.figures == {"cacheCreationTokens": (0, 111_055)}


def test_billed_prints_the_note_and_json_holds_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    u = {"input_tokens": 1, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 500,
         "output_tokens": 2, "cache_creation": ZERO}  # fmt: skip
    path = _log(tmp_path, usage_line(1, u))
    assert main(["billed", str(path), "--json"]) == 0
    out = capsys.readouterr()
    (row,) = json.loads(out.out)
    assert row["cacheCreationTokens"] == 0
    assert row["readingNotes"][0]["figures"] == {"cacheCreationTokens": {"billed": 0, "importer": 500}}
    assert "importer 500" in out.err and "relay" in out.err


def test_unknown_model_suggestions_come_from_its_vendor_family() -> None:
    from ctxbench.sim.core.catalog import closest, model_info

    cases = (("claude-opus-9", "anthropic"), ("gpt-7-turbo", "openai"), ("gemini-9-pro", "gemini"))
    for name, vendor in cases:
        near = closest(name)
        assert near and all(model_info(k).provider == vendor for k in near), (name, near)
