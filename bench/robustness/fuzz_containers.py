"""Damaged containers for the fuzz suite and the soak (issue 32): every kind of compressed or zipped
file a reader accepts (`.gz`, `.xz`, `.bz2`, `.zst`, an Inspect `.eval` zip with members of any zip
method, an opencode SQLite database, plain or compressed), damaged the ways files get damaged:
cut short, bytes flipped in the middle, a header only, empty, plain text under a compressed name,
garbage appended, a zip member marked with a method the reader cannot decompress (shrink, implode,
PPMd, AES: zip APPNOTE 4.4.5) or marked deflate when its data is not.

`damaged_files(plain, name, rng)` makes them from valid content; `container_runs(path)` lists the
CLI runs that read such a file (every verb that reads files, and the folder modes).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import random
import sqlite3
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

# zip methods this fuzz marks members with: 1 shrink, 6 implode, 97 WavPack, 98 PPMd, 99 AES
# (zip APPNOTE 4.4.5); none of them is read by zipfile.
UNREADABLE_ZIP_METHODS = (1, 6, 97, 98, 99)


def _zstd(data: bytes) -> bytes:
    try:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]  # Python 3.14+

        return bytes(zstd.compress(data))
    except ImportError:
        import zstandard

        return bytes(zstandard.ZstdCompressor().compress(data))


CODECS: dict[str, Callable[[bytes], bytes]] = {
    ".gz": lambda d: gzip.compress(d, mtime=0),
    ".xz": lzma.compress,
    ".bz2": bz2.compress,
    ".zst": _zstd,
}


def damage(data: bytes, rng: random.Random) -> bytes:
    """`data` damaged one way: cut short, bytes flipped past the header, header only, empty,
    garbage appended, or plain text."""
    op = rng.randrange(6)
    if op == 0 and len(data) > 2:
        return data[: rng.randrange(1, len(data) - 1)]
    if op == 1 and len(data) > 12:
        out = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(min(10, len(out) - 1), len(out))
            out[at] ^= rng.randrange(1, 256)
        return bytes(out)
    if op == 2:
        return data[: min(len(data), rng.choice((2, 4, 6, 10, 18)))]
    if op == 3:
        return b""
    if op == 4:
        return data + bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    return b'{"not": "compressed"}\n'


def _zip(members: dict[str, bytes], method: int) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _remark(archive: bytes, method: int) -> bytes:
    """Every member of `archive` marked with zip method `method` (local and central headers), its
    data left as it is."""
    out = bytearray(archive)
    for sig, at in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        i = out.find(sig)
        while i >= 0:
            struct.pack_into("<H", out, i + at, method)
            i = out.find(sig, i + 4)
    return bytes(out)


def damaged_eval(members: dict[str, bytes], rng: random.Random) -> bytes:
    """An Inspect `.eval` zip made of `members`, damaged one way."""
    op = rng.randrange(5)
    if op == 0:  # a method zipfile does not read
        return _remark(_zip(members, zipfile.ZIP_STORED), rng.choice(UNREADABLE_ZIP_METHODS))
    if op == 1:  # marked deflate, data stored
        return _remark(_zip(members, zipfile.ZIP_STORED), zipfile.ZIP_DEFLATED)
    if op == 2:  # marked zstandard (93), data deflated
        return _remark(_zip(members, zipfile.ZIP_DEFLATED), 93)
    method = rng.choice((zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA))
    return damage(_zip(members, method), rng)


def opencode_db(rows: list[tuple[str, str, str]]) -> bytes:
    """An opencode SQLite database with one session whose messages are `rows` (id, role, text)."""
    import json
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "opencode.db"
        db = sqlite3.connect(path)
        db.executescript(
            "CREATE TABLE session (id TEXT, slug TEXT, parent_id TEXT, time_created INTEGER);"
            "CREATE TABLE message (id TEXT, session_id TEXT, data TEXT);"
            "CREATE TABLE part (id TEXT, message_id TEXT, data TEXT);"
        )
        db.execute("INSERT INTO session VALUES ('ses_1', 's', NULL, 1)")
        for mid, role, text in rows:
            db.execute("INSERT INTO message VALUES (?, 'ses_1', ?)", (mid, json.dumps({"role": role})))
            db.execute(
                "INSERT INTO part VALUES (?, ?, ?)",
                ("p" + mid, mid, json.dumps({"type": "text", "text": text})),
            )
        db.commit()
        db.close()
        return path.read_bytes()


def damaged_files(plain: bytes, name: str, rng: random.Random) -> list[tuple[str, bytes]]:
    """(file name, damaged bytes) for `plain` (a log named `name`) under every compression suffix."""
    return [(name + suffix, damage(codec(plain), rng)) for suffix, codec in CODECS.items()]


def damaged_db(rng: random.Random) -> tuple[str, bytes]:
    """A damaged opencode database, plain or compressed."""
    data = opencode_db([(f"m{i}", "user" if i % 2 == 0 else "assistant", f"text {i}") for i in range(6)])
    suffix = rng.choice(("", "", ".gz", ".xz", ".zst"))
    if suffix and rng.random() < 0.5:  # a sound compression of a damaged database
        return "opencode.db" + suffix, CODECS[suffix](damage(data, rng))
    if suffix:
        return "opencode.db" + suffix, damage(CODECS[suffix](data), rng)
    return "opencode.db", damage(data, rng)


def container_runs(path: Path, fmt: str | None, out: Path) -> list[tuple[str, list[str]]]:
    """(label, argv) of the CLI runs that read the damaged file `path` (a log of format `fmt`, or a
    trace when None), writing any output under `out`."""
    p, o = str(path), str(out / "out.jsonl")
    if fmt is None:  # a trace (or a request log)
        return [
            ("check-prefix", ["check-prefix", p]),
            ("check-prefix --policy", ["check-prefix", p, "--policy", "c-default"]),
            ("run", ["run", p, "--policy", "c-default"]),
            ("fidelity", ["fidelity", p, "-q"]),
        ]
    runs = [
        (f"import {fmt}", ["import", p, "--format", fmt, "-o", o, "-q"]),
        ("import detected", ["import", p, "-o", o, "-q"]),
        ("import folder", ["import", str(path.parent), "-o", o, "-q"]),
        ("check-prefix log", ["check-prefix", p]),
    ]
    if fmt in ("claude-code", "codex", "gemini-cli", "cline", "opencode"):
        runs += [
            ("billed", ["billed", p, "--json"]),
            ("billed folder", ["billed", str(path.parent), "--json"]),
            ("fidelity log", ["fidelity", p, "-q"]),
            (
                "fidelity --all-real",
                ["fidelity", "--all-real", str(path.parent), "-q", "-o", str(out / "f.md")],
            ),
        ]
    return runs
