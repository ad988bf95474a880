"""`ctxbench billed --json` against ccusage 20.0.24 on Codex, Gemini CLI and opencode logs (issue 33:
"`billed` on each format agrees with ccusage wherever ccusage reads that format").

Figures: ccusage 20.0.24 (npm), `npx -y ccusage@20.0.24 <codex|gemini|opencode> session --json
--offline -z UTC`, run on 2026-12-05 with HOME and the data folder (tests/bench/ccusage_layout.py
`LAYOUT`: CODEX_HOME, GEMINI_DATA_DIR, OPENCODE_DATA_DIR) pointing at a temporary folder holding
copies of the logs below laid out as each sub-command looks for them: the importer fixtures
(tests/traces/importers/data, decompressed: Codex 0.40/0.92/0.171 rollouts as
`sessions/2026/01/01/rollout-*.jsonl`, Gemini CLI 0.61 `.jsonl` and older `.json` chats as
`tmp/<hash>/chats/session-*`, opencode 1.3/1.15/1.18.33 `opencode.db` and the `storage/` tree) and
the small logs tests/bench/ccusage_layout.py writes. ccusage's `costUSD`/`totalCost` uses its
embedded LiteLLM prices; ours the catalog's (sim/data/prices.yaml): equal on every model here.

Where ccusage reads a log otherwise (bench/billed/ccusage.py), `billed` says so in `readingNotes`
(`versus: "ccusage"`) with ccusage's figure; those tests check the note gives ccusage's figure.
"""

from __future__ import annotations

import json
import lzma
import shutil
from pathlib import Path
from typing import Any

import pytest

from ctxbench.bench.cli import main
from tests.bench.ccusage_layout import codex_without_model, gemini_pair

DATA = Path(__file__).resolve().parents[2] / "traces" / "importers" / "data"
TOKENS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheCreationTokens", "totalTokens")

# fixture -> ccusage session (inputTokens, outputTokens, cacheReadTokens, cacheCreationTokens,
# totalTokens, cost), per model (inputTokens, outputTokens, cacheReadTokens)
CODEX: dict[str, tuple[tuple[int, int, int, int, int, float], dict[str, tuple[int, int, int]]]] = {
    "codex-0.40.0.rollout.jsonl.xz": (
        (10602, 246, 23424, 0, 34272, 0.0186405),
        {"gpt-5.1-codex": (10602, 246, 23424)},
    ),
    "codex-0.92.0.rollout.jsonl.xz": (
        (6752, 246, 14464, 0, 21462, 0.012708000000000002),
        {"gpt-5.1-codex": (6752, 246, 14464)},
    ),
    "codex-0.171.0-model-switch.rollout.jsonl.xz": (
        (30329, 252, 33408, 0, 63989, 0.027616250000000002),
        {"gpt-5.1-codex": (13386, 246, 33408), "gpt-5.1-codex-mini": (16943, 6, 0)},
    ),
    # recorded over a compact rewrite in Codex's key order (the fixture is stored with sorted keys
    # and spaces, which ccusage's line filter passes over: 0 sessions)
    "codex-0.171.0.rollout.jsonl.xz": (
        (63787, 2466, 200448, 0, 266701, 0.12944975),
        {"gpt-5.1-codex": (63787, 2466, 200448)},
    ),
    # no token_count events: ccusage lists no session
    "codex-0.22.0.rollout.jsonl.xz": ((0, 0, 0, 0, 0, 0.0), {}),
}
GEMINI: dict[str, tuple[tuple[int, int, int, int, int, float], dict[str, float]]] = {
    "gemini-cli-0.61.0.session.jsonl.xz": (
        (13141, 326, 51234, 0, 64701, 0.026090499999999996),
        {"gemini-2.5-pro": 0.026090499999999996},
    ),
    "gemini-cli-0.61.0-resume.session.jsonl.xz": (
        (108864, 646, 160141, 0, 269651, 0.16255762499999998),
        {"gemini-2.5-pro": 0.16255762499999998},
    ),
    "gemini-cli-0.61.0-resume-samedir.session.jsonl.xz": (
        (102377, 646, 166657, 0, 269680, 0.15526337500000004),
        {"gemini-2.5-pro": 0.15526337500000004},
    ),
    "gemini-cli-model-switch.session.json": (
        (30200, 390, 51500, 0, 82090, 0.02684),
        {"gemini-2.5-pro": 0.0201, "gemini-2.5-flash": 0.006739999999999999},
    ),
}
# opencode: ccusage lists each session of the store (a sub-agent's child session too) on its own;
# the first listed here is the main one, the one `billed`'s note gives
OPENCODE: dict[str, list[tuple[int, int, int, int, int, float]]] = {
    "opencode-1.3.0.db.xz": [(0, 1926, 344172, 15753, 361851, 0.19121535000000003)],
    "opencode-1.15.0.db.xz": [(0, 1926, 354780, 15845, 372551, 0.19474275)],
    "opencode-1.18.33-openai.db.xz": [(14965, 486, 64128, 0, 79579, 0.03158225)],
    "opencode-1.18.33-subagent.db.xz": [
        (0, 63, 8786, 8853, 17702, 0.03677955),
        (0, 128, 15104, 10161, 25393, 0.04455495),
    ],
    "opencode-storage": [(12, 170, 36300, 12290, 48772, 0.059873), (3, 15, 0, 8000, 8018, 0.030234)],
}


def billed(capsys: pytest.CaptureFixture[str], *paths: Path, code: int = 0) -> list[dict[str, Any]]:
    assert main(["billed", *map(str, paths), "--json"]) == code
    return list(json.loads(capsys.readouterr().out))


def unpacked(name: str, folder: Path) -> Path:
    src = DATA / name
    if src.is_dir():
        return Path(shutil.copytree(src, folder / "storage"))
    out = folder / name.removesuffix(".xz")
    out.write_bytes(lzma.decompress(src.read_bytes()) if name.endswith(".xz") else src.read_bytes())
    return out


def as_ccusage(row: dict[str, Any]) -> tuple[int, ...]:
    """A row's token figures as ccusage prints them: its ccusage notes' figures where it has one."""
    got = {k: row[k] for k in TOKENS}
    for note in row["readingNotes"]:
        if note["versus"] == "ccusage":
            got |= {k: v["ccusage"] for k, v in note["figures"].items()}
    return tuple(got[k] for k in TOKENS)


@pytest.mark.parametrize("name", sorted(CODEX))
def test_codex_rollouts_agree_with_ccusage(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (*tokens, cost), models = CODEX[name]
    (row,) = billed(capsys, unpacked(name, tmp_path))
    assert as_ccusage(row) == tuple(tokens) and row["readingNotes"] == []
    assert row["totalCost"] == pytest.approx(cost, abs=1e-6)
    got = {
        m["modelName"]: (m["inputTokens"], m["outputTokens"], m["cacheReadTokens"])
        for m in row["modelBreakdowns"]
    }
    assert got == models


@pytest.mark.parametrize("name", sorted(GEMINI))
def test_gemini_cli_chats_agree_with_ccusage(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (*tokens, cost), models = GEMINI[name]
    (row,) = billed(capsys, unpacked(name, tmp_path))
    assert as_ccusage(row) == tuple(tokens)
    assert row["totalCost"] == pytest.approx(cost, abs=1e-6)
    assert {m["modelName"]: m["cost"] for m in row["modelBreakdowns"]} == pytest.approx(models, abs=1e-6)


@pytest.mark.parametrize("name", sorted(OPENCODE))
def test_opencode_stores_agree_with_ccusage(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One row per store; where it holds several sessions, the sum of ccusage's, and a note giving
    ccusage's figures of the main session alone."""
    sessions = OPENCODE[name]
    (row,) = billed(capsys, unpacked(name, tmp_path))
    summed = tuple(sum(s[k] for s in sessions) for k in range(5))
    assert tuple(row[k] for k in TOKENS) == summed
    assert row["totalCost"] == pytest.approx(sum(s[5] for s in sessions), abs=1e-6)
    assert as_ccusage(row) == sessions[0][:5]
    notes = [n["what"] for n in row["readingNotes"]]
    assert notes == (["opencode-sessions-summed"] if len(sessions) > 1 else [])


def test_gemini_thoughts_and_files_of_one_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ccusage: one session of both files, `outputTokens` without the thoughts tokens, which its
    total and cost count: (29300 in, 610 out, 23000 read, 54619 total, $0.04845250000000001;
    gemini-2.5-pro $0.04394000000000001, gemini-2.5-flash $0.0045125). `billed`: a row per file,
    thoughts in the output, both said in notes that give ccusage's figures. Both count a reply's
    `tool` tokens (toolUsePromptTokenCount) as uncached input."""
    assert main(["billed", *map(str, gemini_pair(tmp_path)), "--json"]) == 0
    captured = capsys.readouterr()
    rows = json.loads(captured.out)
    assert [as_ccusage(r) for r in rows] == [(29300, 610, 23000, 0, 54619)] * 2
    assert [r["outputTokens"] for r in rows] == [150 + 420 + 90, 300 + 1234 + 70 + 55]
    assert sum(r["totalTokens"] for r in rows) == 54619  # ccusage's total counts the thoughts
    assert sum(r["totalCost"] for r in rows) == pytest.approx(0.04845250000000001, abs=2e-6)
    per: dict[str, float] = {}
    for r in rows:
        for m in r["modelBreakdowns"]:
            per[m["modelName"]] = per.get(m["modelName"], 0) + m["cost"]
    assert per == pytest.approx(
        {"gemini-2.5-pro": 0.04394000000000001, "gemini-2.5-flash": 0.0045125}, abs=2e-6
    )
    # stderr: one line per kind of note, not one per file
    assert captured.err.count("(gemini-thoughts-in-output)") == 1
    assert captured.err.count("(gemini-session-files-summed)") == 1
    whats = [[n["what"] for n in r["readingNotes"]] for r in rows]
    assert whats == [["gemini-thoughts-in-output", "gemini-session-files-summed"]] * 2


def test_codex_rollout_without_a_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ccusage prices a rollout naming no model as gpt-5 (`isFallback: true`): 9840 in, 650 out
    (128 reasoning), 8960 read, 19450 total, $0.01992. `billed`: the same tokens, no guessed cost
    (exit 2, the error says the log names no model and how to give one), a note; `--model gpt-5`
    gives ccusage's cost."""
    path = codex_without_model(tmp_path / "rollout-2025-11-01T01-02-58-c0de0034.jsonl")
    assert main(["billed", str(path), "--json"]) == 2
    captured = capsys.readouterr()
    (row,) = json.loads(captured.out)
    assert as_ccusage(row) == (9840, 650, 8960, 0, 19450) and row["totalCost"] is None
    assert [n["what"] for n in row["readingNotes"]] == ["codex-no-model"]
    assert "the log records no model" in captured.err and "--model NAME" in captured.err
    assert "unknown model ''" not in captured.err and "(codex-no-model)" in captured.err
    assert main(["billed", str(path), "--json", "--model", "gpt-5"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["totalCost"] == pytest.approx(0.01992, abs=1e-6) and row["readingNotes"] == []


def test_opencode_logged_cost_is_taken_as_ccusage_takes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """opencode records each reply's cost (on the message and its `step-finish` part; 0 where it
    has no prices). With the first reply's set to $1.00 in both, ccusage (`auto`) gives
    $1.02064475: that $1.00 and the other six replies at list prices; `billed` the same."""
    import sqlite3

    db = unpacked("opencode-1.18.33-openai.db.xz", tmp_path)
    con = sqlite3.connect(db)
    rows = con.execute("SELECT id, data FROM message ORDER BY time_created").fetchall()
    first = next(i for i, d in rows if json.loads(d).get("role") == "assistant")
    for table, key in (("message", "id"), ("part", "message_id")):
        for i, d in con.execute(f"SELECT id, data FROM {table} WHERE {key} = ?", (first,)).fetchall():
            o = json.loads(d)
            if table == "message" or o.get("type") == "step-finish":
                con.execute(f"UPDATE {table} SET data = ? WHERE id = ?", (json.dumps({**o, "cost": 1.0}), i))
    con.commit()
    con.close()
    (row,) = billed(capsys, db)
    assert row["totalCost"] == pytest.approx(1.02064475, abs=1e-6)


def test_kilo_cli_store_reads_as_opencode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Kilo CLI keeps opencode's store (`$KILO_DATA_DIR/kilo.db`, the same `message` table ccusage's
    kilo adapter reads). No Kilo log of a real run is at hand: the opencode 1.18.33 sub-agent store
    copied as `kilo.db` gives, by `ccusage kilo session`, the two sessions its `opencode` command
    gives; `billed` reads it as an opencode store."""
    db = unpacked("opencode-1.18.33-subagent.db.xz", tmp_path).rename(tmp_path / "kilo.db")
    (row,) = billed(capsys, db)
    sessions = OPENCODE["opencode-1.18.33-subagent.db.xz"]
    assert row["format"] == "opencode"
    assert tuple(row[k] for k in TOKENS) == tuple(sum(s[k] for s in sessions) for k in range(5))
    assert as_ccusage(row) == sessions[0][:5]
