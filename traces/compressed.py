"""Logs and traces kept compressed: `.gz`, `.xz`, `.bz2` and `.zst` files are decompressed as read,
by every reader (`ctxbench import`, `fidelity`, `check-prefix`, `run`). A raw harness log compresses
~100x (the same conversation is re-sent with every request), so this is how logs are shared and
kept (the test data here are `.jsonl.xz`). The codecs are imported only to read such a file (a
short `ctxbench run` of a plain trace imports none of them). Zstandard is also what Inspect AI
compresses the members of its `.eval` logs with (zip method 93, `zstd_stream`): the standard
library's `compression.zstd` from Python 3.14, the `zstandard` package before it (a dependency
there)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import IO, Any, cast

SUFFIXES = (".gz", ".xz", ".bz2", ".zst")


class DamagedFile(ValueError):
    """A compressed file, zip archive or zip member that cannot be decompressed. The one error every
    reader sees for damaged input, whatever the codec raised (zlib.error, EOFError, LZMAError, a
    zstandard error, gzip's and bz2's OSError, zipfile's BadZipFile, NotImplementedError for a zip
    method the standard library does not read): a ValueError, so the CLI prints it as one line and
    exits 2. `what` says what is wrong without the file name (`str()` has both)."""

    def __init__(self, path: Path | str, what: str) -> None:
        self.path, self.what = str(path), what
        super().__init__(f"{path}: {what}")


def open_log(path: Path) -> IO[bytes]:
    """`path` opened for reading bytes, decompressed as read when its suffix says so; a damaged
    stream raises DamagedFile as it is read."""
    if path.suffix not in SUFFIXES:
        return path.open("rb")
    return io.BufferedReader(_Guarded(_decompressing(path), path), 1 << 16)


def _decompressing(path: Path) -> IO[bytes]:
    if path.suffix == ".gz":
        import gzip

        return cast("IO[bytes]", gzip.open(path, "rb"))
    if path.suffix == ".xz":
        import lzma

        return cast("IO[bytes]", lzma.open(path, "rb"))
    if path.suffix == ".bz2":
        import bz2

        return cast("IO[bytes]", bz2.open(path, "rb"))
    return zstd_stream(path.open("rb"))


class _Guarded(io.RawIOBase):
    """A decompressing stream whose codec errors become DamagedFile naming the file (read in
    64 KiB blocks, so lines are still split in C by the BufferedReader around it)."""

    def __init__(self, inner: IO[bytes], path: Path) -> None:
        super().__init__()
        self._inner, self._path = inner, path

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        try:
            return self._inner.readinto(b)  # type: ignore[attr-defined]
        except decode_errors() as e:
            if isinstance(e, OSError) and e.errno is not None:
                raise  # a real I/O error (EIO, EISDIR...), not damaged data
            raise DamagedFile(self._path, damage(self._path.suffix, e)) from None

    def close(self) -> None:
        self._inner.close()
        super().close()


def damage(kind: str, e: BaseException) -> str:
    """What is wrong with a damaged `kind` (`.gz`, `zip member x`...) stream, in a few words."""
    msg = str(e) or type(e).__name__
    if isinstance(e, EOFError):
        msg = "truncated: " + msg
    return f"damaged {kind.lstrip('.')} data ({msg})"


def decode_errors() -> tuple[type[BaseException], ...]:
    """Everything a codec may raise on damaged data: zlib.error (gzip, zip deflate), EOFError (a
    stream cut short), lzma's LZMAError, the zstandard errors, OSError (gzip's BadGzipFile "not a
    gzipped file", bz2's "Invalid data stream"), zipfile's BadZipFile (also a CRC mismatch),
    NotImplementedError (a zip method zipfile does not read: shrink, implode, PPMd, AES...),
    RuntimeError (an encrypted zip member). Imports zlib and lzma, so it is called only once an
    error was raised (in an `except` clause)."""
    import lzma
    import sys
    import zipfile
    import zlib

    zstd_errors = tuple(
        getattr(m, name)
        for m, name in (
            (sys.modules.get("zstandard"), "ZstdError"),
            (sys.modules.get("compression.zstd"), "ZstdError"),
        )
        if m is not None and hasattr(m, name)
    )
    return (
        zlib.error,
        EOFError,
        lzma.LZMAError,
        OSError,
        zipfile.BadZipFile,
        NotImplementedError,
        RuntimeError,
        *zstd_errors,
    )


def zstd_stream(raw: IO[bytes]) -> IO[bytes]:
    """`raw` (zstandard frames, one after another) decompressed as read; a stream cut inside a
    frame raises EOFError at its end, as lzma and bz2 do (never a silently short file)."""
    try:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]  # Python 3.14+

        return cast("IO[bytes]", zstd.ZstdFile(raw, "rb"))
    except ImportError:
        return io.BufferedReader(_ZstdFrames(raw))


class _ZstdFrames(io.RawIOBase):
    """Zstandard frames read one after another with the `zstandard` package (Python < 3.14),
    checking that the last one ends (its stream reader stops silently at a cut)."""

    def __init__(self, raw: IO[bytes]) -> None:
        import zstandard

        super().__init__()
        self._raw, self._new = raw, zstandard.ZstdDecompressor().decompressobj
        self._frame: Any = None
        self._out, self._at = b"", 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while self._at >= len(self._out):
            data = self._raw.read(1 << 16)
            if not data:
                if self._frame is not None and not self._frame.eof:
                    raise EOFError("compressed file ended before the end-of-stream marker was reached")
                return 0
            parts = []
            while data:
                if self._frame is None or self._frame.eof:
                    self._frame = self._new()
                parts.append(self._frame.decompress(data))
                data = self._frame.unused_data if self._frame.eof else b""
            self._out, self._at = b"".join(parts), 0
        n = min(len(b), len(self._out) - self._at)
        b[:n] = self._out[self._at : self._at + n]
        self._at += n
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


def read_errors() -> tuple[type[Exception], ...]:
    """What reading a file (`open_log`, `zip_member`) may raise: OSError (no such file, a
    directory, an I/O error) and DamagedFile (every codec's error, translated where the data is
    decompressed). Called in an `except` clause, so it costs nothing until something was raised."""
    return (OSError, DamagedFile)


def read_failure(e: Exception) -> str:
    """What went wrong reading, in a few words (a DamagedFile's `what`, an OSError's strerror,
    else the message), without the file name (the caller names the file)."""
    if isinstance(e, DamagedFile):
        return e.what
    return str(getattr(e, "strerror", None) or e or type(e).__name__)


def plain(path: Path) -> Path:
    """`path` without its compression suffix (`s.jsonl.xz` -> `s.jsonl`): the name that tells
    the format."""
    return path.with_suffix("") if path.suffix in SUFFIXES else path


def is_compressed(path: Path) -> bool:
    return path.suffix in SUFFIXES


def zip_member(path: Path, name: str) -> bytes:
    """The bytes of member `name` of zip archive `path`, zstandard members (method 93, Inspect AI's
    `.eval` logs) included, which the standard library's zipfile reads only from Python 3.14."""
    import zipfile

    try:
        return _zip_member(path, name)
    except KeyError:
        raise DamagedFile(path, f"no member {name!r} in the zip archive") from None
    except zipfile.BadZipFile as e:
        raise DamagedFile(path, f"damaged zip archive or member {name} ({e})") from None
    except DamagedFile as e:
        raise DamagedFile(path, f"zip member {name}: {e.what}") from None
    except decode_errors() as e:
        if isinstance(e, OSError) and e.errno is not None:
            raise
        what = (
            f"zip member {name} is stored with a method this reader cannot decompress ({e})"
            if isinstance(e, NotImplementedError)
            else damage(f"zip member {name}", e)
        )
        raise DamagedFile(path, what) from None


def _zip_member(path: Path, name: str) -> bytes:
    import struct
    import zipfile

    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(name)
        if info.compress_type != ZIP_ZSTANDARD:
            return zf.read(info)
    with path.open("rb") as f:  # the member's data follows its local header (zip APPNOTE 4.3.7)
        f.seek(info.header_offset)
        head = f.read(30)
        if len(head) < 30 or head[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile(f"{name}: no local file header")
        name_len, extra_len = struct.unpack("<HH", head[26:30])
        f.seek(info.header_offset + 30 + name_len + extra_len)
        raw = f.read(info.compress_size)
    try:
        with zstd_stream(io.BytesIO(raw)) as member:
            return member.read()
    except decode_errors() as e:
        raise DamagedFile(path, damage(f"zip member {name}", e)) from None


ZIP_ZSTANDARD = 93  # zip APPNOTE 4.4.5 compression method "Zstandard"
