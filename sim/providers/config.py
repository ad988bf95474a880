"""Building a provider's frozen config from profile parameters, with one-line errors."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any, TypeVar

from ctxbench.sim.providers.base import Faults, Latency

C = TypeVar("C")


class ProfileError(ValueError):
    """An unknown profile or a bad key in a profile file."""


def latency_from(v: Any, where: str) -> Latency:
    if isinstance(v, Latency):
        return v
    if not isinstance(v, dict):
        raise ProfileError(f"{where}: latency must be a mapping")
    valid = [f.name for f in fields(Latency)]
    for k in v:
        if k not in valid:
            raise ProfileError(f"{where}: unknown latency key {k!r}; valid keys: {', '.join(valid)}")
    return Latency(**{k: float(x) for k, x in v.items()})


def faults_from(v: Any, where: str) -> Faults:
    """Faults from a mapping: rates {kind: p}, scripted {index: kind}, windows [[start, end, kind]]."""
    if isinstance(v, Faults):
        return v
    if not isinstance(v, dict):
        raise ProfileError(f"{where}: faults must be a mapping")
    from ctxbench.sim.providers.base import FAULT_KINDS

    valid = [f.name for f in fields(Faults)]
    for k in v:
        if k not in valid:
            raise ProfileError(f"{where}: unknown faults key {k!r}; valid keys: {', '.join(valid)}")
    rates = {str(k): float(p) for k, p in dict(v.get("rates") or {}).items()}
    scripted = {int(k): str(kind) for k, kind in dict(v.get("scripted") or {}).items()}
    windows = tuple((float(w[0]), float(w[1]), str(w[2])) for w in (v.get("windows") or ()))
    for kind in [*rates, *scripted.values(), *(w[2] for w in windows)]:
        if kind not in FAULT_KINDS:
            raise ProfileError(f"{where}: unknown fault kind {kind!r}; valid kinds: {', '.join(FAULT_KINDS)}")
    return Faults(rates, scripted, float(v.get("retry_after", 2.0)), windows)


def config_from(cls: type[C], provider: str, params: dict[str, Any]) -> C:
    """`cls()` with `params` applied; unknown keys are an error listing the valid ones."""
    valid = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    where = f"provider {provider!r}"
    out: dict[str, Any] = {}
    for key, v in params.items():
        if key not in valid:
            raise ProfileError(f"unknown key {key!r} for {where}; valid keys: {', '.join(valid)}")
        if key == "latency":
            v = latency_from(v, where)
        elif key == "faults":
            v = faults_from(v, where)
        elif isinstance(v, list):
            v = tuple(v)
        out[key] = v
    return replace(cls(), **out)  # type: ignore[type-var]
