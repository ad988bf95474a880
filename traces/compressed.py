"""Logs and traces kept compressed: `.gz`, `.xz` and `.bz2` files are decompressed as read, by
every reader (`ctxbench import`, `fidelity`, `check-prefix`, `run`). A raw harness log compresses
~100x (the same conversation is re-sent with every request), so this is how logs are shared and
kept (the test data here are `.jsonl.xz`). The codecs are imported only to read such a file (a
short `ctxbench run` of a plain trace imports none of them)."""

from __future__ import annotations

from pathlib import Path
from typing import IO, cast

SUFFIXES = (".gz", ".xz", ".bz2")


def open_log(path: Path) -> IO[bytes]:
    """`path` opened for reading bytes, decompressed as read when its suffix says so."""
    if path.suffix == ".gz":
        import gzip

        return cast("IO[bytes]", gzip.open(path, "rb"))
    if path.suffix == ".xz":
        import lzma

        return cast("IO[bytes]", lzma.open(path, "rb"))
    if path.suffix == ".bz2":
        import bz2

        return cast("IO[bytes]", bz2.open(path, "rb"))
    return path.open("rb")


def read_errors() -> tuple[type[Exception], ...]:
    """What reading a file may raise: OSError (gzip's BadGzipFile is one), and for a damaged
    compressed stream EOFError (truncated) or lzma's own error. Called in an `except` clause, so
    it runs (and imports lzma) only when something was raised."""
    import lzma

    return (OSError, EOFError, lzma.LZMAError)


def read_failure(e: Exception) -> str:
    """What went wrong reading, in a few words (an OSError's strerror, else the message)."""
    return str(getattr(e, "strerror", None) or e or type(e).__name__)


def plain(path: Path) -> Path:
    """`path` without its compression suffix (`s.jsonl.xz` -> `s.jsonl`): the name that tells
    the format."""
    return path.with_suffix("") if path.suffix in SUFFIXES else path


def is_compressed(path: Path) -> bool:
    return path.suffix in SUFFIXES
