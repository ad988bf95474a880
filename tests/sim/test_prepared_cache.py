"""The prepared-trace cache (sim/prepared_cache.py, issue 13): a kept entry gives the very prepared
trace that reading and preparing gives (every field, records byte-identical), damaged or stale
entries are prepared anew and rewritten, bad files raise their reader's error and are never kept."""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxbench.policies.preset import load_policy
from ctxbench.sim import prepared_cache
from ctxbench.sim.core.records import write_jsonl
from ctxbench.sim.prepared_cache import SOURCES, for_model, open_prepared, prepared_file
from ctxbench.sim.runner import prepare_for, run_prepared
from ctxbench.traces.format import TraceError, read_trace, write_trace
from ctxbench.traces.generators import generate
from ctxbench.traces.model import MessageEvent
from tests.real import REAL, needs_real

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "traces" / "samples").glob("*.jsonl"))


def entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("prepared-*/*.marshal"))


def fields_of(obj: Any) -> Any:
    """Every field, compare=False ones too (a Message's digests and block tokens), with types."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return (type(obj).__name__, *(fields_of(getattr(obj, f.name)) for f in dataclasses.fields(obj)))
    if isinstance(obj, tuple | list):
        return tuple(fields_of(x) for x in obj)
    if isinstance(obj, dict):
        return tuple((k, fields_of(v)) for k, v in obj.items())
    return (type(obj).__name__, obj)


def records_bytes(prep: Any, preset: str) -> bytes:
    policy = load_policy(preset)
    out = io.StringIO()
    write_jsonl(run_prepared([prep], policy, policy.provider, 3).records, out)
    return out.getvalue().encode()


def check_same(path: str, model: str | None = None, tokenizer: str = "rate") -> None:
    """Cold (prepared and kept) and warm (loaded) both equal reading and preparing, field by field."""
    trace = read_trace(path)
    want = prepare_for(trace, model, tokenizer)
    cold = prepared_file(path, model, tokenizer)
    warm = prepared_file(path, model, tokenizer)
    assert fields_of(cold.prepared) == fields_of(want) == fields_of(warm.prepared)
    replies = tuple(e for e in trace.events if isinstance(e, MessageEvent) and e.role == "assistant")
    assert warm.facts.header == trace.header and warm.facts.path == trace.path
    assert fields_of(warm.facts.events) == fields_of(replies)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_kept_entry_is_the_prepared_trace(cache: Path, sample: Path) -> None:
    check_same(str(sample))
    assert len(entries(cache)) == 1


CASES = [("game-300", "h-direct"), ("game-300", "h-keep-last-2"), ("coding-long", "claude-code"),
         ("coding-long", "codex")]  # fmt: skip


@pytest.mark.parametrize(("sample", "preset"), CASES)
def test_records_byte_identical_cold_and_warm(cache: Path, sample: str, preset: str) -> None:
    path = str(ROOT / "traces" / "samples" / f"{sample}.jsonl")
    plain = records_bytes(prepare_for(read_trace(path)), preset)
    cold = records_bytes(prepared_file(path).prepared, preset)
    assert entries(cache)
    warm = records_bytes(prepared_file(path).prepared, preset)
    assert plain == cold == warm


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    gen=st.sampled_from(["game", "coding"]),
    size=st.integers(1, 12),
    seed=st.integers(0, 2**16),
    resumes=st.sampled_from([0.0, 0.3]),
)
def test_generated_traces_round_trip(cache: Path, tmp_path: Path, gen: str, size: int, seed: int,
                                     resumes: float) -> None:  # fmt: skip
    params: dict[str, Any] = {"turns": size, "seed": seed}
    if gen == "coding":
        params = {"user_turns": size, "seed": seed, "resume_share": resumes}
    path = tmp_path / f"{gen}-{size}-{seed}-{resumes}.jsonl"
    write_trace(generate(gen, **params), path)
    check_same(str(path))
    check_same(str(path), model="gpt-4.1")


@needs_real
def test_imported_real_sessions_round_trip(cache: Path, tmp_path: Path) -> None:
    """Imported traces carry usage, request ids, cache marks and recorded compactions."""
    from ctxbench.traces.importers import import_paths

    sessions = sorted((REAL / "claude-code-log").glob("*/*.jsonl"))[:4]
    assert sessions, f"no Claude Code sessions under {REAL}"
    for i, s in enumerate(sessions):
        trace = import_paths([s]).traces[0]
        path = tmp_path / f"real-{i}.jsonl"
        write_trace(trace, path)
        check_same(str(path))


def test_model_and_tokenizer_are_part_of_the_key(cache: Path) -> None:
    path = str(ROOT / "traces" / "samples" / "game-60.jsonl")
    check_same(path)
    check_same(path, model="gpt-4.1")
    assert len(entries(cache)) == 2
    assert prepared_file(path, "gpt-4.1").prepared.model == "gpt-4.1"


def test_edited_file_is_a_new_entry(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_trace(generate("game", turns=3, seed=1), path)
    check_same(str(path))
    write_trace(generate("game", turns=4, seed=1), path)
    check_same(str(path))
    assert len(entries(cache)) == 2


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty", "other-ident"])
def test_damaged_entry_is_prepared_anew_and_rewritten(cache: Path, damage: str) -> None:
    path = str(ROOT / "traces" / "samples" / "game-60.jsonl")
    prepared_file(path)
    (entry,) = entries(cache)
    good = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(good[: len(good) // 2])
    elif damage == "flip":  # a byte of the payload: the checksum no longer matches
        entry.write_bytes(good[:-100] + bytes([good[-100] ^ 0x40]) + good[-99:])
    elif damage == "garbage":
        entry.write_bytes(b"\x00not marshal at all")
    elif damage == "empty":
        entry.write_bytes(b"")
    else:
        import marshal

        _, check, payload = marshal.loads(good)
        entry.write_bytes(marshal.dumps(("another|ident", check, payload)))
    check_same(path)
    assert entry.read_bytes() == good


def test_stale_model_facts_are_not_loaded(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry whose model the catalog now describes otherwise (tokenizer scale, image rule)."""
    path = str(ROOT / "traces" / "samples" / "game-60.jsonl")
    prepared_file(path)
    monkeypatch.setattr(prepared_cache, "_factory_facts", lambda model: (2.0, "none"))
    assert prepared_cache._load(entries(cache)[0], "x", path) is None  # another ident: not loaded
    (entry,) = entries(cache)
    ident = __import__("marshal").loads(entry.read_bytes())[0]
    assert prepared_cache._load(entry, ident, path) is None


def test_bad_file_raises_its_error_and_is_not_kept(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    lines = (ROOT / "traces" / "samples" / "game-60.jsonl").read_text().splitlines()
    event = json.loads(lines[3])
    event["role"] = "narrator"
    lines[3] = json.dumps(event)
    path.write_text("\n".join(lines) + "\n")
    for _ in range(2):
        with pytest.raises(TraceError) as exc:
            prepared_file(str(path))
        assert (exc.value.path, exc.value.line, exc.value.field) == (str(path), 4, "role")
    with pytest.raises(TraceError, match="no such trace file"):
        prepared_file(str(tmp_path / "missing.jsonl"))
    assert not entries(cache)


def test_empty_cache_dir_turns_it_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CTXBENCH_CACHE_DIR", "")
    monkeypatch.chdir(tmp_path)
    path = str(ROOT / "traces" / "samples" / "game-60.jsonl")
    assert fields_of(prepared_file(path).prepared) == fields_of(prepare_for(read_trace(path)))
    assert not list(tmp_path.rglob("*.marshal"))


def test_unwritable_cache_is_silent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("CTXBENCH_CACHE_DIR", str(blocker / "cache"))
    check_same(str(ROOT / "traces" / "samples" / "game-60.jsonl"))


def test_generator_specs_are_prepared_not_kept(cache: Path) -> None:
    pf = open_prepared("gen:game?turns=4&seed=2")
    assert fields_of(pf.prepared) == fields_of(prepare_for(generate("game", turns=4, seed=2)))
    assert not entries(cache)


def test_sources_cover_what_reading_and_preparing_imports() -> None:
    """An edit to any module that reads or prepares a trace changes the key (`source_key`)."""
    code = (
        "import sys, ctxbench.sim.prepared, ctxbench.traces.format, ctxbench.traces.fastread; "
        "print('\\n'.join(m for m in sys.modules if m.startswith('ctxbench.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    listed = {s.removesuffix(".py").replace("/", ".") for s in SOURCES}
    packages = {"sim", "sim.core", "traces"}
    # yamltext: the catalog's data files, whose model facts each entry carries and checks; native:
    # which build of the hot path is loaded (the package's import), not what a trace becomes
    missing = {m.removeprefix("ctxbench.") for m in out.split()} - listed - packages
    missing -= {"sim.core.yamltext", "sim.core.native"}
    assert not missing, f"add to SOURCES: {sorted(missing)}"


def test_for_model_is_prepare_for_of_that_model(cache: Path) -> None:
    """`run` prepares for the trace's model, then for the one `choose` picks (a dated id's catalog
    name: the same blocks; a model with other facts: prepared anew)."""
    path = str(ROOT / "traces" / "samples" / "game-60.jsonl")
    pf = prepared_file(path, "claude-sonnet-4-5-20250929")
    trace = read_trace(path)
    for model in ("claude-sonnet-4-5", "gpt-4.1"):
        assert fields_of(for_model(path, pf.prepared, model)) == fields_of(prepare_for(trace, model))


@pytest.mark.parametrize("args", [["--policy", "h-direct"], ["--policy", "codex", "--model", "gpt-4.1"]])
def test_run_command_records_same_cold_warm_and_off(tmp_path: Path, args: list[str]) -> None:
    """`ctxbench run --records -`: the same bytes with the cache off, cold and warm."""
    import os

    trace = str(ROOT / "traces" / "samples" / "game-300.jsonl")
    outs = []
    for folder in ("", str(tmp_path / "c"), str(tmp_path / "c")):
        env = {**os.environ, "CTXBENCH_CACHE_DIR": folder}
        cmd = [sys.executable, "-m", "ctxbench.bench.cli", "run", trace, *args, "--records", "-"]
        outs.append(subprocess.run(cmd, capture_output=True, env=env, check=True).stdout)
    assert outs[0] and outs[0] == outs[1] == outs[2]
    assert entries(tmp_path / "c")


def test_unreadable_sources_turn_the_cache_off(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installation without the sources cannot tell its code apart: nothing is kept."""
    monkeypatch.setattr(prepared_cache, "SOURCES", ("sim/no-such-module.py",))
    monkeypatch.setattr(prepared_cache, "_source_key", None)
    check_same(str(ROOT / "traces" / "samples" / "game-60.jsonl"))
    assert not entries(cache)
