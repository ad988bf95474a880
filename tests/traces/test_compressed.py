"""Compressed logs and traces (traces/compressed.py): a `.gz`, `.xz`, `.bz2` or `.zst` file reads as the
file it holds, by the trace reader, the format detection and the importers; a damaged or truncated
stream, or any bytes under a compressed name, ends in one clean error (exit 2), never a traceback."""

from __future__ import annotations

import bz2
import gzip
import lzma
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxbench.bench.robustness.fuzz_inputs import run_cli
from ctxbench.traces.format import TraceError, read_trace
from ctxbench.traces.importers import ImportFailure, detect, import_paths

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "traces/samples/game-60.jsonl"
ROLLOUT = ROOT / "tests/traces/importers/data/codex-0.171.0.rollout.jsonl.xz"


def _zstd(data: bytes) -> bytes:
    try:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]  # Python 3.14+

        return bytes(zstd.compress(data))
    except ImportError:
        import zstandard

        return zstandard.ZstdCompressor().compress(data)


CODECS: dict[str, Callable[[bytes], bytes]] = {
    ".gz": gzip.compress, ".xz": lzma.compress, ".bz2": bz2.compress, ".zst": _zstd,
}  # fmt: skip


@pytest.mark.parametrize("suffix", sorted(CODECS))
def test_a_compressed_trace_reads_as_the_plain_one(tmp_path: Path, suffix: str) -> None:
    packed = tmp_path / f"game-60.jsonl{suffix}"
    packed.write_bytes(CODECS[suffix](SAMPLE.read_bytes()))
    assert read_trace(packed).events == read_trace(SAMPLE).events


@pytest.mark.parametrize("suffix", sorted(CODECS))
def test_a_compressed_harness_log_is_detected_and_imported(tmp_path: Path, suffix: str) -> None:
    """The Codex rollout kept here as .xz: detected from its contents under any codec, imported
    with the same conversations and bills as the plain file."""
    raw = lzma.decompress(ROLLOUT.read_bytes())
    plain = tmp_path / "rollout.jsonl"
    plain.write_bytes(raw)
    packed = tmp_path / f"rollout.jsonl{suffix}"
    packed.write_bytes(CODECS[suffix](raw))
    assert detect(packed) == detect(plain) == "codex"
    a, b = import_paths([packed]), import_paths([plain])
    assert a.names == b.names and [t.events for t in a.traces] == [t.events for t in b.traces]


def test_the_name_under_the_compression_suffix_tells_the_format(tmp_path: Path) -> None:
    swe = tmp_path / "task.traj.gz"
    swe.write_bytes(gzip.compress(b"{}"))
    assert detect(swe) == "swe-agent"


@pytest.mark.parametrize("suffix", sorted(CODECS))
def test_a_truncated_stream_is_one_clean_error(tmp_path: Path, suffix: str) -> None:
    whole = CODECS[suffix](SAMPLE.read_bytes())
    cut = tmp_path / f"t.jsonl{suffix}"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(TraceError, match="cannot read trace file"):
        read_trace(cut)
    with pytest.raises(ImportFailure, match="cannot read"):
        import_paths([cut], "claude-code")
    out = run_cli(["run", str(cut), "--policy", "h-direct"])
    assert not out.traceback and out.clean and str(cut) in out.stderr


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300), suffix=st.sampled_from(sorted(CODECS)), wrap=st.booleans())
def test_any_bytes_under_a_compressed_name_fail_cleanly(
    tmp_path: Path, data: bytes, suffix: str, wrap: bool
) -> None:
    """Random bytes, raw or validly compressed, named as a compressed log: every reader ends in
    exit 2 or reads them, never a traceback."""
    path = tmp_path / f"x.jsonl{suffix}"
    path.write_bytes(CODECS[suffix](data) if wrap else data)
    for argv in (["import", str(path), "-o", str(tmp_path / "o.jsonl")], ["fidelity", str(path)]):
        out = run_cli(argv)
        assert not out.traceback, out.traceback
        assert out.clean, out.stderr
