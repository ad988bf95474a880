"""Generator parameters from the command line, `gen:` specs and YAML spec files, checked one way.

Every generator parameter can be set in three places, all checked against the generator's typed
fields like a preset (sim/core/values.py): a bad value names where it was given (file, key),
what was expected and what was given; an unknown key comes with the closest valid ones.

- `ctxbench generate NAME --turns N --seed S --set KEY=VALUE` (values written as on the CLI:
  `80k`, `400,500` for a range);
- a `gen:` spec wherever a trace is accepted (run, compare, sweep, context, validate, drive):
  `gen:coding?user_turns=6&idle_seconds=400,500`;
- a spec file, `ctxbench generate --config gen.yaml` or `gen:gen.yaml` wherever a trace is
  accepted (`gen:gen.yaml?seed=3` overrides a key); YAML values (`idle_seconds: [400, 500]`):

      generator: coding        # required: which generator (`ctxbench generate --help`)
      user_turns: 6            # any parameter of it; the others keep their defaults
      idle_seconds: [400, 500]
      seed: 3                  # optional: without it, `--seeds N` draws one trace per seed
                               # (bench/runs.py seeded_spec)
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote

from ctxbench.sim.core.values import ValueProblem, build, check_params, parse_assignments, unknown
from ctxbench.traces.model import Trace

GEN_PREFIX = "gen:"
SPEC_FILE_SUFFIXES = (".yaml", ".yml")
GENERATOR_KEY = "generator"  # the one key of a spec file that is not a parameter


@dataclass(frozen=True)
class GenSpec:
    """A generator and the parameters given for it (checked and typed; the rest keep their
    defaults). `where` names the source in errors: a file, a `gen:` spec, a command line."""

    generator: str
    params: dict[str, Any]
    where: str = ""

    def make_params(self) -> Any:
        """The generator's parameter dataclass; its own checks (`__post_init__`) are reported
        under `where` like the type checks."""
        return build(params_class(self.generator), self.params, self.where)

    def generate(self) -> Trace:
        from ctxbench.traces.generators import GENERATORS

        return GENERATORS[self.generator](self.make_params())

    def with_params(self, more: dict[str, Any]) -> GenSpec:
        return dataclasses.replace(self, params={**self.params, **more})

    def inline(self) -> str:
        """The canonical `gen:NAME?KEY=VALUE&...` text of this spec (parameters in field order),
        which parses back to the same spec: what a worker that cannot see the spec file needs."""
        order = field_names(self.generator)
        pairs = [
            f"{quote(k)}={quote(_cli_text(self.params[k]), safe=',')}" for k in order if k in self.params
        ]
        return f"{GEN_PREFIX}{self.generator}" + (f"?{'&'.join(pairs)}" if pairs else "")

    def canonical(self) -> str:
        """JSON of the generator and its parameters, sorted: equal for equal traces however the
        spec was written (inline, file, overrides)."""
        return json.dumps([self.generator, sorted(self.params.items())], separators=(",", ":"))


def params_class(name: str) -> type:
    from ctxbench.traces.generators import PARAMS

    if name not in PARAMS:
        raise ValueProblem(unknown("generator", name, PARAMS, "known generators"))
    return PARAMS[name]


def field_names(name: str) -> list[str]:
    """The parameters of generator `name`, in field order."""
    return [f.name for f in dataclasses.fields(params_class(name))]


def _cli_text(value: Any) -> str:
    """A checked value written as on the command line (`parse_text` reads it back)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple | list):
        items = [_cli_text(v) for v in value]
        if any("," in i for i in items):
            raise ValueProblem(f"cannot write {value!r} as a gen: spec value (an item holds a comma)")
        return ",".join(items)
    return str(value)


def from_assignments(name: str, items: list[str], where: str) -> GenSpec:
    """`["user_turns=6", "idle_seconds=400,500"]` (command-line text) -> a checked spec."""
    return GenSpec(name, parse_assignments(params_class(name), items, where), where)


def from_mapping(data: Any, where: str) -> GenSpec:
    """A spec file's mapping (`generator:` plus parameters as YAML values) -> a checked spec.
    `where` ends with a colon (`gen.yaml:`), so keys read `gen.yaml: user_turns`."""
    from ctxbench.traces.generators import PARAMS

    file = where.rstrip(":")
    if not isinstance(data, dict):
        raise ValueProblem(
            f"{file}: a generator spec is a mapping with a {GENERATOR_KEY!r} key, got {data!r}"
        )
    if GENERATOR_KEY not in data:
        raise ValueProblem(f"{file}: missing key {GENERATOR_KEY!r} (one of {', '.join(sorted(PARAMS))})")
    name = data[GENERATOR_KEY]
    if not isinstance(name, str) or name not in PARAMS:
        raise ValueProblem(f"{file}: {GENERATOR_KEY}: {unknown('generator', str(name), PARAMS, 'known')}")
    params = {k: v for k, v in data.items() if k != GENERATOR_KEY}
    cls = params_class(name)
    fields = field_names(name)
    bad = [str(k) for k in params if k not in fields]
    if bad:
        keys = [GENERATOR_KEY, *fields]
        raise ValueProblem(f"{file}: {unknown('key', bad[0], keys, 'valid keys')}")
    return GenSpec(name, check_params(cls, params, where), file)


def load_spec_file(path: str | Path) -> GenSpec:
    """A spec file (YAML), checked: the file, the key, what was expected and what was given."""
    from ctxbench.sim.core import yamltext

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{path}: no such generator spec file")
    try:
        data = yamltext.load_yaml(p.read_text(encoding="utf-8"))
    except yamltext.YAMLError as exc:
        raise ValueProblem(yamltext.yaml_problem(str(path), exc)) from None
    return from_mapping(data, f"{path}:")


def is_spec_file(name: str) -> bool:
    return name.lower().endswith(SPEC_FILE_SUFFIXES)


def parse_gen_spec(text: str) -> GenSpec:
    """`gen:NAME?KEY=VALUE&...` or `gen:FILE.yaml?KEY=VALUE&...` -> a checked spec (the query's
    values override the file's, typed like `generate --set`)."""
    body = text[len(GEN_PREFIX) :] if text.startswith(GEN_PREFIX) else text
    name, _, query = body.partition("?")
    pairs = [f"{k}={v}" for k, v in parse_qsl(query, keep_blank_values=True, strict_parsing=False)]
    if is_spec_file(name):
        spec = load_spec_file(name)
        over = parse_assignments(params_class(spec.generator), pairs, text) if pairs else {}
        spec = dataclasses.replace(spec.with_params(over), where=text)
    else:
        spec = from_assignments(name, pairs, text)
    spec.make_params()  # its own checks (ranges, shares) now, not in a worker
    return spec


def open_trace(text: str) -> Trace:
    """A trace from a file, or made by a `gen:` spec (inline or a spec file)."""
    if text.startswith(GEN_PREFIX):
        return parse_gen_spec(text).generate()
    from ctxbench.traces.format import read_trace

    return read_trace(text)


TRACE_HELP = "a ctxbench trace (JSONL), or a generator spec: gen:coding?user_turns=6 or gen:FILE.yaml"
