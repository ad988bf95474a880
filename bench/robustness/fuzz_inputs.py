"""Malformed inputs for the fuzz suite and the soak (`ctxbench.bench.robustness.soak`): trace lines, request
logs and importer logs made by mutating valid seeds, and the oracle that runs the CLI on them.

A mutation picks one place in a valid JSON value and puts there a value a careless producer could
write: integers past float range, `NaN`/`Infinity`/`1e400`, lone surrogates, wrong types (a number
where a list is expected: `"tool_calls":5`), deep nesting, path-like and very long ids; or it
damages the line itself (truncated, non-UTF-8 bytes, a key dropped). Raw JSON text that Python's
encoder cannot write (`NaN`, 400-digit numbers, 5,000 nested arrays) is spliced in after encoding.
The oracle (`run_cli`) calls `ctxbench.bench.cli.main` in-process and reports an exception that
escapes it as a traceback: the project's rule is exit 2 with one line, never a traceback.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ctxbench.bench.robustness.fuzz_seeds import IMPORTER_SEEDS

# Raw JSON texts (spliced in after encoding) and plain values a mutation can put anywhere.
RAW_VALUES = (
    "1" + "0" * 400,  # integer past float range
    "9" * 30,  # 1e30: representable, absurd as a token count
    "-1",
    "1e400",  # parses as infinity
    "-1e400",
    "NaN",
    "Infinity",
    "-Infinity",
    '"h\\ud800i"',  # lone surrogate
    '"zz\\udfff"',
    "[" * 5000 + "]" * 5000,  # deeper than the parser's stack
    '{"a":' * 3000 + "1" + "}" * 3000,
)
PLAIN_VALUES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    5,
    1.5,
    "",
    "x",
    "²",
    "../../etc/passwd",
    "a" * 300,
    [],
    [1, "a", None],
    {},
    {"type": "text"},
    [[[]]],
)


def _paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*at, i))


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _set(value[head], rest, new)}
    out = list(value)
    out[head] = _set(out[head], rest, new)
    return out


def _drop(value: Any, path: tuple[Any, ...]) -> Any:
    if len(path) == 1 and isinstance(value, dict):
        return {k: v for k, v in value.items() if k != path[0]}
    if len(path) == 1 and isinstance(value, list):
        return value[: path[0]] + value[path[0] + 1 :]
    if not path:
        return value
    return _set(value, path[:1], _drop(value[path[0]], path[1:]))


_SENTINEL = "\u0000ctxbench-fuzz\u0000"


def mutate(value: Any, rng: random.Random) -> bytes:
    """One malformed JSON line (bytes, no newline) made from a valid JSON value."""
    op = rng.random()
    paths = list(_paths(value))
    path = rng.choice(paths[1:] or paths)
    if op < 0.45:  # a raw text JSON (or Python) cannot write, at one place
        text = json.dumps(_set(value, path, _SENTINEL), ensure_ascii=False)
        return text.replace(json.dumps(_SENTINEL), rng.choice(RAW_VALUES), 1).encode("utf-8")
    if op < 0.8:  # a wrong type or an absurd value
        return json.dumps(_set(value, path, rng.choice(PLAIN_VALUES)), ensure_ascii=False).encode("utf-8")
    if op < 0.88:
        return json.dumps(_drop(value, path), ensure_ascii=False).encode("utf-8")
    data = json.dumps(value, ensure_ascii=False).encode("utf-8")
    if op < 0.94:
        return data[: rng.randrange(max(1, len(data)))]
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice((b"\xff", b"\xc3", b"\x00", b"\xed\xa0\x80", b'"', b"}")) + data[at:]


def mutate_lines(lines: list[Any], rng: random.Random, n_bad: int = 1) -> list[bytes]:
    """A JSONL file: the valid lines with `n_bad` of them (never the first, often) mutated."""
    out = [json.dumps(x, ensure_ascii=False).encode("utf-8") for x in lines]
    for _ in range(n_bad):
        i = (
            rng.randrange(len(out))
            if rng.random() < 0.3
            else rng.randrange(1, len(out))
            if len(out) > 1
            else 0
        )
        out[i] = mutate(lines[i], rng)
    return out


def importer_input(fmt: str, rng: random.Random) -> tuple[str, bytes, int]:
    """(file name, malformed content, lines in it) for the importer `fmt` (seeds:
    bench/robustness/fuzz_seeds.py)."""
    name, seed, jsonl = IMPORTER_SEEDS[fmt]
    if jsonl:
        lines = mutate_lines(seed, rng, n_bad=rng.choice((1, 1, 2)))
        return name, b"\n".join(lines) + b"\n", len(lines)
    return name, mutate(seed, rng), 1


# ---------------------------------------------------------------- the oracle
@dataclass(frozen=True)
class Outcome:
    """What one CLI run did: exit code, stderr, and the traceback of an exception that escaped."""

    code: int
    stderr: str
    traceback: str = ""

    @property
    def clean(self) -> bool:
        """Exit 0 or 1, or exit 2 with one `ctxbench: error:` line per bad input (a folder mode names
        each log it left out, on a line of its own); never a traceback."""
        if self.traceback:
            return False
        if self.code == 2:
            lines = self.stderr.strip().splitlines()
            errors = [x for x in lines if not x.startswith("note:")]
            return bool(errors) and all(x.startswith(("ctxbench: error:", "usage:")) for x in errors)
        return self.code in (0, 1)


def run_cli(argv: list[str]) -> Outcome:
    """`ctxbench ARGV` in this process, stdout discarded, stderr captured."""
    from ctxbench.bench.cli import main

    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main(argv, catch_crashes=False)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 2
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            return Outcome(-1, err.getvalue(), traceback.format_exc())
    return Outcome(int(code), err.getvalue())
