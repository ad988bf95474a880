"""Typed values from the command line and YAML: one size syntax, close-match hints, and checks
of a value against a frozen dataclass field's type hint.

Why one module: a token count is written the same way everywhere (`80000`, `80k`, `80K`, `1.5M`),
an unknown name always comes with the closest valid ones, and a bad value always names where it
was given (file, key path), what was expected and what was given, whichever component it is for.
Components stay plain frozen dataclasses; their type hints are the schema.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import re
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar, Union

from ctxbench.sim.core import native

C = TypeVar("C")


# ------------------------------------------------------------------ sizes
@dataclass(frozen=True)
class Size:
    """Marker in `Annotated[int, SIZE]`: a token count, written in the size syntax."""


SIZE = Size()
Tokens = Annotated[int, SIZE]

_SIZE_RE = re.compile(r"^([0-9]+(?:_[0-9]{3})*(?:\.[0-9]+)?)([kKmM]?)$")
_MULT = {"": 1, "k": 1_000, "m": 1_000_000}
SIZE_SYNTAX = "a token count like 80000, 80k, 80K or 1.5M"


def parse_size(value: object, what: str = "size") -> int:
    """`80000`, `80k`, `80K`, `1.5M` (and ints) -> tokens; anything else is a ValueError naming
    `what` and the accepted forms (`80kk`, `-5`, `1.2345k`, `80 tokens` are refused)."""
    if isinstance(value, bool):
        raise ValueError(f"{what}: expected {SIZE_SYNTAX}, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{what}: expected {SIZE_SYNTAX}, got {value!r}")
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    m = _SIZE_RE.match(str(value).strip()) if isinstance(value, str) else None
    if not m:
        raise ValueError(f"{what}: expected {SIZE_SYNTAX}, got {value!r}")
    number = float(m.group(1).replace("_", "")) * _MULT[m.group(2).lower()]
    if not number.is_integer():
        raise ValueError(f"{what}: expected {SIZE_SYNTAX} (a whole number of tokens), got {value!r}")
    return int(number)


def size_arg(text: str) -> int:
    """argparse `type=` for a token count in the size syntax."""
    try:
        return parse_size(text, "size")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("size: ")) from exc


def parse_sizes(spec: str, what: str = "budgets") -> list[int]:
    """`32k:200k:8k` (start:stop:step, stop included) or a list `32k,64k,120000`."""
    if ":" in spec:
        parts = spec.split(":")
        if len(parts) != 3:
            raise ValueError(f"{what} {spec!r}: expected START:STOP:STEP, e.g. 32k:200k:8k")
        start, stop, step = (parse_size(p, f"{what} {spec!r}") for p in parts)
        if step <= 0 or stop < start:
            raise ValueError(f"{what} {spec!r}: need STEP > 0 and STOP >= START")
        return list(range(start, stop + 1, step))
    out = [parse_size(p, f"{what} {spec!r}") for p in spec.split(",") if p.strip()]
    if not out:
        raise ValueError(f"{what} {spec!r}: expected START:STOP:STEP or a list like 32k,64k")
    return out


# ------------------------------------------------------------------ names
def closest(name: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """The valid names closest to `name` (difflib), best first; case and `_`/`-` forgiven."""
    pool = list(choices)

    def norm(s: str) -> str:
        return s.lower().replace("_", "-")

    by_norm = {norm(c): c for c in pool}
    import difflib  # only to suggest a name: not at start-up

    hits = difflib.get_close_matches(norm(name), list(by_norm), n=n, cutoff=0.6)
    return [by_norm[h] for h in hits]


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`" (did you mean 'h-direct'?)"` or `""` when nothing is close."""
    hits = closest(name, choices)
    if not hits:
        return ""
    return " (did you mean " + " or ".join(repr(h) for h in hits) + "?)"


def unknown(what: str, name: str, choices: Iterable[str], valid_label: str = "valid") -> str:
    """`unknown preset 'h-drect' (did you mean 'h-direct'?); valid: a, b, c`."""
    pool = sorted(choices)
    return f"unknown {what} {name!r}{did_you_mean(name, pool)}; {valid_label}: {', '.join(pool) or '(none)'}"


# ------------------------------------------------------------------ values against type hints
@dataclass(frozen=True)
class Range:
    """Marker in `Annotated[float, Range(0, 1)]`: inclusive bounds checked when loaded."""

    lo: float | None = None
    hi: float | None = None

    def describe(self) -> str:
        if self.lo is not None and self.hi is not None:
            return f"between {self.lo:g} and {self.hi:g}"
        return f">= {self.lo:g}" if self.lo is not None else f"<= {self.hi:g}"


Fraction = Annotated[float, Range(0.0, 1.0)]


class ValueProblem(ValueError):
    """A value that does not fit its field: names the key path, the expectation and the value."""


def describe(hint: Any) -> str:
    """What a type hint accepts, in words."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Annotated:
        base, *meta = args
        for m in meta:
            if isinstance(m, Size):
                return SIZE_SYNTAX
        text = describe(base)
        for m in meta:
            if isinstance(m, Range):
                text += f" {m.describe()}"
        return text
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin in (Union, types.UnionType):
        parts = [describe(a) for a in args if a is not type(None)]
        text = " or ".join(parts)
        return text + (" or null" if type(None) in args else "")
    if origin in (tuple, list):
        if len(args) == 2 and args[1] is Ellipsis:
            return f"a list of {describe(args[0])}"
        if args:
            return "a list of " + str(len(args)) + " (" + ", ".join(describe(a) for a in args) + ")"
        return "a list"
    if origin is dict:
        return f"a mapping of {describe(args[0])} to {describe(args[1])}" if args else "a mapping"
    simple = {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}
    if hint in simple:
        return simple[hint]
    if dataclasses.is_dataclass(hint):
        return f"a mapping of {', '.join(f.name for f in dataclasses.fields(hint))}"
    return getattr(hint, "__name__", str(hint))


def _bad(path: str, hint: Any, value: Any) -> ValueProblem:
    return ValueProblem(f"{path}: expected {describe(hint)}, got {value!r}")


def coerce(value: Any, hint: Any, path: str) -> Any:
    """`value` (from YAML or parsed CLI text) checked against `hint` and converted to it
    (ints for floats, tuples for lists, nested dataclasses from mappings); a `ValueProblem`
    naming `path` otherwise. Hints it does not know pass the value through unchanged."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any or isinstance(hint, TypeVar):
        return value
    if origin is Annotated:
        base, *meta = args
        if any(isinstance(m, Size) for m in meta):
            try:
                return parse_size(value, path)
            except ValueError:
                raise _bad(path, hint, value) from None
        try:
            out = coerce(value, base, path)
        except ValueProblem:
            raise _bad(path, hint, value) from None
        for m in meta:
            if isinstance(m, Range) and (
                (m.lo is not None and out < m.lo) or (m.hi is not None and out > m.hi)
            ):
                raise _bad(path, hint, value)
        return out
    if origin is Literal:
        if value in args:
            return value
        hint_text = did_you_mean(str(value), [str(a) for a in args])
        raise ValueProblem(f"{path}: expected {describe(hint)}, got {value!r}{hint_text}")
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        for a in args:
            if a is type(None):
                continue
            try:
                return coerce(value, a, path)
            except ValueProblem:
                continue
        raise _bad(path, hint, value)
    if origin in (tuple, list):
        if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
            raise _bad(path, hint, value)
        if args and not (len(args) == 2 and args[1] is Ellipsis) and len(args) != len(value):
            raise _bad(path, hint, value)
        items = [
            coerce(v, (args[0] if len(args) == 2 and args[1] is Ellipsis else args[i]) if args else Any,
                   f"{path}[{i}]")
            for i, v in enumerate(value)
        ]  # fmt: skip
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(value, Mapping):
            raise _bad(path, hint, value)
        kh, vh = args if args else (Any, Any)
        return {coerce(k, kh, key_path(path, k)): coerce(v, vh, key_path(path, k)) for k, v in value.items()}
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise _bad(path, hint, value)
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise _bad(path, hint, value)
    if hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise _bad(path, hint, value)
    if hint is str:
        if isinstance(value, str):
            return value
        raise _bad(path, hint, value)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if isinstance(value, hint):
            return value
        if not isinstance(value, Mapping):
            raise _bad(path, hint, value)
        return build(hint, dict(value), path)
    return value


@functools.cache
def field_hints(cls: type) -> Mapping[str, Any]:
    """The resolved type hints of a dataclass's init fields (with `Annotated` extras); resolved
    once per class (every provider build checks its config against them), so read-only."""
    try:
        hints = typing.get_type_hints(_as_written(cls), include_extras=True)
    except (NameError, TypeError):  # an unresolvable annotation: check names only
        hints = {}
    return types.MappingProxyType({f.name: hints.get(f.name, Any) for f in dataclasses.fields(cls) if f.init})


def _as_written(cls: type) -> type:
    """`cls`, or for a class of a compiled module (sim/core/native.py) a stand-in with the annotations
    of its source (and of its compiled bases), which `typing.get_type_hints` resolves in the
    module's namespace as it would the class's own."""
    if not native.is_compiled(cls):
        return cls
    bases = tuple(_as_written(b) for b in cls.__bases__ if b is not object)
    ns = {"__annotations__": native.source_annotations(cls), "__module__": cls.__module__}
    return type(cls.__name__, bases, ns)


def key_path(where: str, key: object) -> str:
    """`file.yaml:` + `budget` -> `file.yaml: budget`; `file.yaml: marks` + `ttl` -> `... marks.ttl`."""
    if not where:
        return str(key)
    return f"{where} {key}" if where.endswith(":") else f"{where}.{key}"


def check_params(cls: type, params: Mapping[str, Any], where: str) -> dict[str, Any]:
    """`params` checked against `cls`'s fields: unknown keys (with close matches) and values
    that do not fit their type hints are `ValueProblem`s naming `where.key` (`where` ending in
    a colon names a file: `file.yaml: key`)."""
    hints = field_hints(cls)
    out: dict[str, Any] = {}
    for key, value in params.items():
        if key not in hints:
            raise ValueProblem(f"{where.rstrip(':')}: {unknown('key', str(key), hints, 'valid keys')}")
        out[key] = coerce(value, hints[key], key_path(where, key))
    return out


def build(cls: type[C], params: Mapping[str, Any], where: str) -> C:
    """`cls(**params)` after `check_params`; a ValueError raised by the class's own checks
    (`__post_init__`) is reported under `where`."""
    checked = check_params(cls, params, where)
    try:
        return cls(**checked)
    except (TypeError, ValueError) as exc:
        raise ValueProblem(f"{where}: {exc}") from exc


def parse_text(text: str, hint: Any, path: str) -> Any:
    """A CLI value (`KEY=VALUE`) for a field typed `hint`: `400,500` for a tuple, `80k` for a
    token count, `true`/`false`, numbers, YAML for the rest; then `coerce`d."""
    origin = typing.get_origin(hint)
    base = typing.get_args(hint)[0] if origin is Annotated else hint
    if base is str:
        return coerce(text, hint, path)
    if typing.get_origin(base) in (tuple, list) and not text.lstrip().startswith("["):
        args = typing.get_args(base)
        parts = [p.strip() for p in text.split(",")] if text.strip() else []
        item_hints = [args[0] if len(args) == 2 and args[1] is Ellipsis else a for a in args] or [Any]
        items = [
            parse_text(p, item_hints[min(i, len(item_hints) - 1)], f"{path}[{i}]")
            for i, p in enumerate(parts)
        ]
        return coerce(items, hint, path)
    import yaml

    from ctxbench.sim.core.yamltext import load_yaml

    try:
        value = load_yaml(text)
    except yaml.YAMLError:
        value = text
    return coerce(value, hint, path)


def parse_assignments(cls: type, items: Iterable[str], where: str) -> dict[str, Any]:
    """`["idle_seconds=400,500", "user_turns=3"]` -> typed values for `cls`'s fields."""
    hints = field_hints(cls)
    out: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep:
            raise ValueProblem(f"{where}: expected KEY=VALUE, got {item!r}")
        if key not in hints:
            raise ValueProblem(f"{where}: {unknown('parameter', key, hints, 'valid')}")
        out[key] = parse_text(text, hints[key], f"{where}: {key}")
    return out


# ------------------------------------------------------------------ argparse
_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")


class HintingParser(argparse.ArgumentParser):
    """An ArgumentParser whose "invalid choice" errors (verbs, `choices=` options) name the
    closest valid choices, and whose errors are one line (exit 2) without the usage block:
    `--help` shows the usage (issue 31 #8)."""

    def error(self, message: str) -> typing.NoReturn:
        m = _INVALID_CHOICE.search(message)
        if m:
            choices = [c.strip().strip("'") for c in m.group(2).split(",")]
            hint = did_you_mean(m.group(1), choices)
            message = message.replace(
                m.group(0), f"invalid choice: {m.group(1)!r}{hint} (choose from {m.group(2)})"
            )
        self.exit(2, f"{self.prog}: error: {message} (`{self.prog} --help` for usage)\n")
