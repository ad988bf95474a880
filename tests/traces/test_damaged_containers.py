"""Damaged compressed and zipped input (issue 32): every verb that reads files fails with one line
naming the file, exit 2, never a traceback, whatever the container (gzip, xz, bz2, zstd, zip members
of any method, SQLite) and whatever the damage (bench/robustness/fuzz_containers.py)."""

from __future__ import annotations

import argparse
import gzip
import json
import lzma
import random
import zipfile
from pathlib import Path

import pytest

from ctxbench.bench.robustness.fuzz_containers import (
    CODECS,
    UNREADABLE_ZIP_METHODS,
    _remark,
    _zip,
    container_runs,
    damage,
    damaged_db,
    damaged_eval,
)
from ctxbench.bench.robustness.fuzz_inputs import run_cli
from ctxbench.bench.robustness.fuzz_seeds import IMPORTER_SEEDS
from ctxbench.traces.compressed import DamagedFile, open_log, zip_member

ROOT = Path(__file__).resolve().parents[2]
TRACE = (ROOT / "traces/samples/coding-short.jsonl").read_bytes()


def _plain(fmt: str) -> tuple[str, bytes]:
    name, seed, jsonl = IMPORTER_SEEDS[fmt]
    if jsonl:
        return name, b"\n".join(json.dumps(x).encode() for x in seed) + b"\n"
    return name, json.dumps(seed).encode()


def _all_runs_clean(path: Path, fmt: str | None, out: Path) -> None:
    for label, argv in container_runs(path, fmt, out):
        res = run_cli(argv)
        assert not res.traceback, f"{label} {path.name}: {res.traceback}"
        assert res.clean, f"{label} {path.name}: {res.stderr}"
        assert res.code in (0, 1, 2), label
        if res.code == 2 and res.stderr.startswith("ctxbench: error:"):
            assert "internal error" not in res.stderr


@pytest.mark.parametrize("suffix", sorted(CODECS))
def test_damaged_compressed_traces_fail_cleanly_in_every_verb(tmp_path: Path, suffix: str) -> None:
    rng = random.Random(f"trace{suffix}")
    for k in range(6):
        folder = tmp_path / f"d{k}"
        folder.mkdir()
        path = folder / f"t.jsonl{suffix}"
        path.write_bytes(damage(CODECS[suffix](TRACE), rng))
        _all_runs_clean(path, None, tmp_path)


@pytest.mark.parametrize("fmt", sorted(IMPORTER_SEEDS))
def test_damaged_compressed_logs_fail_cleanly_in_every_verb(tmp_path: Path, fmt: str) -> None:
    rng = random.Random(f"log{fmt}")
    name, plain = _plain(fmt)
    for k, suffix in enumerate(sorted(CODECS) * 2):
        folder = tmp_path / f"d{k}"
        folder.mkdir()
        path = folder / f"{name}{suffix}"
        path.write_bytes(damage(CODECS[suffix](plain), rng))
        _all_runs_clean(path, fmt, tmp_path)


def test_damaged_eval_zips_and_databases_fail_cleanly(tmp_path: Path) -> None:
    rng = random.Random(7)
    sample = json.dumps(IMPORTER_SEEDS["inspect-ai"][1]["samples"][0]).encode()
    members = {"header.json": b'{"eval": {}}', "samples/1_epoch_1.json": sample}
    for k in range(10):
        folder = tmp_path / f"e{k}"
        folder.mkdir()
        (folder / "log.eval").write_bytes(damaged_eval(members, rng))
        _all_runs_clean(folder / "log.eval", "inspect-ai", tmp_path)
        name, data = damaged_db(rng)
        (folder / name).write_bytes(data)
        _all_runs_clean(folder / name, "opencode", tmp_path)


# ---------------------------------------------------------------- the cases the issue reported
def _error(argv: list[str]) -> str:
    res = run_cli(argv)
    assert not res.traceback, res.traceback
    assert res.code == 2 and res.clean, res.stderr
    return res.stderr.strip()


def test_corrupt_deflate_data_in_a_gz_names_the_file(tmp_path: Path) -> None:
    data = bytearray(gzip.compress(TRACE, mtime=0))
    data[20:40] = b"\xff" * 20
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(bytes(data))
    for argv in (["check-prefix", str(path)], ["run", str(path), "--policy", "c-default"]):
        err = _error(argv)
        assert str(path) in err and "damaged gz data" in err, err


@pytest.mark.parametrize("content", [b"", b"plain text, not xz\n", lzma.compress(TRACE)[:30]])
def test_check_prefix_on_a_bad_first_line_of_an_xz(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "t.jsonl.xz"
    path.write_bytes(content)
    for argv in (["check-prefix", str(path)], ["check-prefix", str(path), "--policy", "c-default"]):
        err = _error(argv)
        assert str(path) in err, err


@pytest.mark.parametrize("method", UNREADABLE_ZIP_METHODS)
def test_an_eval_member_in_an_unsupported_zip_method_is_named(tmp_path: Path, method: int) -> None:
    path = tmp_path / "log.eval"
    path.write_bytes(
        _remark(_zip({"header.json": b"{}", "samples/1.json": b"{}"}, zipfile.ZIP_STORED), method)
    )
    err = _error(["import", str(path), "-o", str(tmp_path / "o.jsonl")])
    assert str(path) in err and "method" in err, err
    with pytest.raises(DamagedFile, match="cannot decompress"):
        zip_member(path, "header.json")


def test_an_eval_member_marked_deflate_whose_data_is_not(tmp_path: Path) -> None:
    path = tmp_path / "log.eval"
    body = b'{"eval": {"task": "' + b"x" * 200 + b'"}}'
    path.write_bytes(_remark(_zip({"header.json": body}, zipfile.ZIP_STORED), zipfile.ZIP_DEFLATED))
    with pytest.raises(DamagedFile) as exc:
        zip_member(path, "header.json")
    assert str(path) in str(exc.value) and "header.json" in str(exc.value)
    assert str(path) in _error(["import", str(path), "-o", str(tmp_path / "o.jsonl")])


def test_a_real_io_error_is_not_called_damage(tmp_path: Path) -> None:
    (tmp_path / "x.gz").mkdir()
    with pytest.raises(IsADirectoryError):
        open_log(tmp_path / "x.gz").read()


def test_a_crash_exits_2_with_one_line_never_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxbench.bench import cli
    from ctxbench.bench.cli import presets

    def boom(args: argparse.Namespace) -> int:
        raise TypeError("unexpected\nsecond line")

    real = presets.register

    def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
        real(sub)
        sub.choices["presets"].set_defaults(handler=boom)

    monkeypatch.setattr(presets, "register", register)
    assert cli.main(["presets"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [err[0]] and err[0].startswith("ctxbench: internal error: TypeError: unexpected")
    with pytest.raises(TypeError):
        cli.main(["presets"], catch_crashes=False)
