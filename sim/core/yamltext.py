"""YAML text to Python data with the safe schema, through libyaml's C parser when PyYAML was built
with it (about 7x faster than the pure-Python parser on the bundled profiles and presets, which every
command reads at start-up), else through the pure-Python one; both raise `yaml.YAMLError`
(also reachable as `ctxbench.sim.core.yamltext.YAMLError`, which imports PyYAML only when an error is
being handled).

The files shipped with ctxbench (presets, model catalog, prices, provider profiles) are read through
`load_bundled`, which keeps each one's parsed data in the user's cache by content (issue 13:
importing PyYAML and parsing them was a fifth of a short `ctxbench run`): a file read before is one
`marshal` load, and PyYAML is not imported at all. The cache folder is `$CTXBENCH_CACHE_DIR`, else
`$XDG_CACHE_HOME/ctxbench`, else `~/.cache/ctxbench`; `CTXBENCH_CACHE_DIR=` (empty) turns it off.
An entry is named by the hash of the file's bytes, so an edited file is simply a new entry; an
entry that cannot be read or written is ignored, and data marshal cannot hold (YAML dates) is not
cached.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sys
from pathlib import Path
from typing import Any

try:  # the same blake2b as hashlib's, without loading OpenSSL for the other algorithms
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

# Bumped when what a cached entry holds changes meaning (the loader, the entry's shape).
CACHE_FORMAT = 1


def __getattr__(name: str) -> Any:
    if name == "YAMLError":  # `except yamltext.YAMLError`: evaluated only once an error is raised
        import yaml

        return yaml.YAMLError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_yaml(text: str) -> Any:
    """The one document in `text` (None when empty), safe tags only."""
    import yaml

    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)


def cache_dir() -> Path | None:
    """Where parsed bundled files are kept, or None when the cache is off."""
    env = os.environ.get("CTXBENCH_CACHE_DIR")
    if env is not None:
        return Path(env) if env else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ctxbench"


def load_bundled(path: Path) -> Any:
    """The YAML document of a file shipped with ctxbench, parsed once per content (module doc)."""
    raw = path.read_bytes()
    key = blake2b(raw, digest_size=16).hexdigest()
    folder = cache_dir()
    entry = None
    if folder is not None:
        v = sys.version_info
        entry = folder / f"yaml-{CACHE_FORMAT}-py{v.major}.{v.minor}-m{marshal.version}" / f"{key}.marshal"
        try:
            stored = marshal.loads(entry.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            pass
        else:
            if type(stored) is tuple and len(stored) == 2 and stored[0] == key:
                return stored[1]
    data = load_yaml(raw.decode("utf-8"))
    if entry is not None:
        try:
            blob = marshal.dumps((key, data))
        except ValueError:  # e.g. a date: parsed every time
            return data
        store_entry(entry, blob)
    return data


def store_entry(entry: Path, blob: bytes) -> None:
    """Write `blob` as `entry` atomically (a temporary file renamed over it); any failure is
    silent, since the cache only saves time (also the prepared-trace cache's writer)."""
    tmp = entry.with_name(f".{entry.name}.{os.getpid()}")
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(blob)
        os.replace(tmp, entry)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def yaml_problem(where: str, exc: Exception) -> str:
    """One line for a YAML syntax error: `FILE:LINE: not valid YAML (what the parser found)`."""
    mark = getattr(exc, "problem_mark", None)
    line = f":{mark.line + 1}" if mark is not None else ""
    return f"{where}{line}: not valid YAML ({getattr(exc, 'problem', None) or exc})"
