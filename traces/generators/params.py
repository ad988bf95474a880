"""What the generators' parameter dataclasses share (`GameParams`, `CodingParams`): the checks
beyond the type hints, each error naming the parameter (`KEY: expected ..., got ...`, like every
other checked value, sim/core/values.py), and the parameters as a trace header records them."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable
from typing import Any


def check_bounds(
    params: Any, required: Iterable[tuple[str, bool, str]], not_ranges: Collection[str] = ()
) -> None:
    """Raise ValueError for the first failed check: each of `required` (name, holds, what is
    expected), then every tuple field but `not_ranges` a range (lo, hi) with 0 <= lo <= hi, and
    every `*_share` field between 0 and 1."""
    for name, ok, expected in required:
        if not ok:
            raise ValueError(f"{name}: expected {expected}, got {getattr(params, name)!r}")
    for name, value in dataclasses.asdict(params).items():
        if isinstance(value, tuple) and name not in not_ranges and not 0 <= value[0] <= value[1]:
            raise ValueError(f"{name}: expected a range [lo, hi] with 0 <= lo <= hi, got {list(value)}")
        if name.endswith("_share") and not 0.0 <= value <= 1.0:
            raise ValueError(f"{name}: expected a share between 0 and 1, got {value!r}")


def header_params(params: Any, later: Collection[str]) -> dict[str, Any]:
    """The parameters as plain JSON (tuples as lists), recorded in the trace header; the options
    added after the first traces were written (`later`) are left out at their default, so those
    traces keep their bytes."""
    defaults = {f.name: f.default for f in dataclasses.fields(params) if f.name in later}
    return {
        k: list(v) if isinstance(v, tuple) else v
        for k, v in dataclasses.asdict(params).items()
        if not (k in defaults and v == defaults[k])
    }
