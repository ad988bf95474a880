"""Synthetic trace generators, registered by name in the one registry (sim/core/registry.py).

A generator is a `Generator`: a frozen dataclass of parameters and the function `params -> Trace`.
To add one, put it in its own module and register it in `builtin.py` (which the registry imports
on the first lookup); `GENERATORS` and `PARAMS` are views of the registry, not second lists.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ctxbench.sim.core.registry import Registered
from ctxbench.traces.model import Trace


@dataclass(frozen=True)
class Generator:
    """A registered generator: its parameter dataclass and what makes a trace of them."""

    params: type
    run: Callable[[Any], Trace]

    def generate(self, params: Any) -> Trace:
        return self.run(params)


GENERATORS: Mapping[str, Callable[[Any], Trace]] = Registered("generator", lambda g: g.generate)
PARAMS: Mapping[str, type] = Registered("generator", lambda g: g.params)


def params_for(name: str, **overrides: Any) -> Any:
    """The parameters of generator `name`: its defaults with `overrides` applied.

    Unknown generator names and unknown parameter names are errors that list the valid ones.
    """
    if name not in PARAMS:
        raise ValueError(f"unknown generator {name!r} (known: {', '.join(sorted(PARAMS))})")
    cls = PARAMS[name]
    valid = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(overrides) - set(valid))
    if unknown:
        raise ValueError(
            f"generator {name!r}: unknown parameter(s) {', '.join(unknown)} (valid: {', '.join(valid)})"
        )
    return cls(**overrides)


def generate(name: str, **overrides: Any) -> Trace:
    """Run generator `name` with its default parameters updated by `overrides`."""
    return GENERATORS[name](params_for(name, **overrides))
