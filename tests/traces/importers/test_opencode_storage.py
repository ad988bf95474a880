"""opencode's file storage (traces/importers/opencode_storage.py): a synthetic storage folder made for
these tests (tests/traces/importers/data/opencode-storage: a session with a tool call and a task-tool
sub-agent's session), and the recorded opencode 1.18.33 databases written out as storage folders the
way opencode's JSON-to-SQLite migration reads them (json-migration.ts: ids from the paths), which
must import exactly as the databases do."""

from __future__ import annotations

import json
import lzma
import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from ctxbench.bench.cli import main
from ctxbench.bench.fidelity.discover import discover
from ctxbench.bench.robustness.fuzz_inputs import mutate, run_cli
from ctxbench.traces.importers import ImportFailure, detect, import_paths
from ctxbench.traces.model import MessageEvent, Trace

DATA = Path(__file__).parent / "data"
STORAGE = DATA / "opencode-storage"
MAIN = STORAGE / "session/global/ses_0a0000000ffeSyntheticMain01.json"
SUB = STORAGE / "session/global/ses_0a0000100ffeSyntheticSub001.json"


def _usage(tr: Trace) -> list[tuple[int, int, int, int]]:
    return [
        (e.usage.input_tokens, e.usage.cache_read, e.usage.cache_write_5m, e.usage.output_tokens)
        for e in tr.events
        if isinstance(e, MessageEvent) and e.usage is not None
    ]


def _storage_from_db(db_xz: Path, out: Path) -> Path:
    """The database's sessions, messages and parts as opencode's file storage wrote them."""
    db = out / "o.db"
    db.write_bytes(lzma.decompress(db_xz.read_bytes()))
    con = sqlite3.connect(db)
    root = out / "storage"

    def write(rel: str, obj: dict[str, object]) -> None:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(json.dumps(obj, indent=2), encoding="utf-8")

    for sid, project, parent, slug, version, created in con.execute(
        "SELECT id, project_id, parent_id, slug, version, time_created FROM session"
    ):
        info = {
            "id": sid,
            "slug": slug,
            "version": version,
            "projectID": project,
            "time": {"created": created},
        }
        write(f"session/{project}/{sid}.json", {**info, **({"parentID": parent} if parent else {})})
    for mid, sid, data in con.execute("SELECT id, session_id, data FROM message"):
        write(f"message/{sid}/{mid}.json", {"id": mid, "sessionID": sid, **json.loads(data)})
    for pid, mid, sid, data in con.execute("SELECT id, message_id, session_id, data FROM part"):
        write(f"part/{mid}/{pid}.json", {"id": pid, "sessionID": sid, "messageID": mid, **json.loads(data)})
    con.close()
    db.unlink()
    return root


def test_detected_by_layout() -> None:
    assert detect(STORAGE) == detect(MAIN) == detect(SUB) == "opencode"
    assert detect(STORAGE.parent / "opencode-storage") == "opencode"
    with pytest.raises(ImportFailure):
        detect(STORAGE / "message")  # a folder of the storage is no log


def test_a_session_file_imports_with_its_sub_agent() -> None:
    res = import_paths([MAIN])
    assert res.names == ["main", "agent-synthetic-sub/main"]
    main_trace, sub = res.traces
    assert _usage(main_trace) == [
        (3, 0, 12000, 40),
        (3, 12000, 90, 60),
        (3, 12090, 120, 50),
        (3, 12210, 80, 20),
    ]
    assert _usage(sub) == [(3, 0, 8000, 15)]
    tools = [c.tool_id for e in main_trace.events if isinstance(e, MessageEvent) for c in e.content]
    assert "toolu_syn01" in tools and "toolu_syn02" in tools
    # the sub-agent's session alone: its own log
    assert import_paths([SUB]).names == ["main"]


def test_the_folder_imports_every_session() -> None:
    res = import_paths([STORAGE])
    assert sorted(res.names) == ["agent-synthetic-sub/main", "synthetic-main/main"]


def test_discovery_lists_one_log_per_main_session(tmp_path: Path) -> None:
    home = tmp_path / "dot-local/share/opencode"
    shutil.copytree(STORAGE, home / "storage")
    found = discover(tmp_path)
    assert [(log.rel, log.format) for log in found.logs] == [
        ("dot-local/share/opencode/storage/session/global/ses_0a0000000ffeSyntheticMain01.json", "opencode")
    ]
    assert found.skipped == ()  # message and part files are read with their session, never listed


def test_billed_and_fidelity_read_a_storage_folder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["billed", str(STORAGE), "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert (row["requests"], row["inputTokens"], row["cacheReadTokens"], row["cacheCreationTokens"]) == (
        5, 15, 36300, 20290,
    )  # fmt: skip
    assert row["modelBreakdowns"][0]["modelName"] == "claude-sonnet-4-5"
    assert main(["fidelity", str(STORAGE), "-q"]) == 0
    assert main(["import", str(STORAGE), "-o", "/dev/null", "--json"]) == 0


@pytest.mark.parametrize("name", ["subagent", "openai"])
def test_a_database_written_as_storage_imports_the_same(tmp_path: Path, name: str) -> None:
    db = DATA / f"opencode-1.18.33-{name}.db.xz"
    root = _storage_from_db(db, tmp_path)
    from_db, from_files = import_paths([db]), import_paths([root])
    assert from_files.names == from_db.names
    assert [_usage(t) for t in from_files.traces] == [_usage(t) for t in from_db.traces]
    assert [len(t.events) for t in from_files.traces] == [len(t.events) for t in from_db.traces]


def test_malformed_files_name_the_file_and_field(tmp_path: Path) -> None:
    root = shutil.copytree(STORAGE, tmp_path / "storage")
    step = sorted((root / "part/msg_0a0000002001SyntheticAsst01").iterdir())[-1]
    data = json.loads(step.read_text())
    data["tokens"]["cache"]["read"] = -4
    step.write_text(json.dumps(data))
    with pytest.raises(
        ImportFailure, match=r"prt_0a0000002001SyntheticAsst0107\.json: field 'tokens\.cache\.read'"
    ):
        import_paths([root])
    step.write_text('{"type": "step-finish",')
    with pytest.raises(ImportFailure, match=r"prt_0a0000002001SyntheticAsst0107\.json:1: not JSON"):
        import_paths([root])
    step.write_text("[1]")
    with pytest.raises(ImportFailure, match=r"prt_0a0000002001SyntheticAsst0107\.json: not a JSON object"):
        import_paths([root])


@pytest.mark.parametrize("seed", range(12))
def test_fuzzed_storage_files_fail_cleanly(tmp_path: Path, seed: int) -> None:
    """One file of the folder mutated (bench/robustness/fuzz_inputs.py): every reader ends with
    exit 0 or one error line naming a file, never a traceback."""
    rng = random.Random(seed)
    root = shutil.copytree(STORAGE, tmp_path / "storage")
    files = sorted(p for p in root.rglob("*.json") if "project" not in p.parts)
    victim = rng.choice(files)
    victim.write_bytes(mutate(json.loads(victim.read_text()), rng))
    for argv in (
        ["import", str(root), "-o", str(tmp_path / "o.jsonl")],
        ["billed", str(root)],
        ["fidelity", str(root), "-q"],
        ["fidelity", "--all-real", str(tmp_path), "--json"],
    ):
        out = run_cli(argv)
        assert not out.traceback, (victim, out.traceback)
        assert out.clean, (victim, out.stderr)
