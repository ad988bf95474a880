"""Registry of synthetic trace generators, by name (DESIGN.md: one registry by kind and name).

A generator is a function `params -> Trace` with a frozen dataclass of parameters. To add one
(e.g. `coding`), put it in its own module and add it to GENERATORS and PARAMS.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ctxbench.traces.generators import coding, game
from ctxbench.traces.model import Trace

GENERATORS: dict[str, Callable[[Any], Trace]] = {"game": game.generate, "coding": coding.generate}
PARAMS: dict[str, type] = {"game": game.GameParams, "coding": coding.CodingParams}


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
