"""Building a provider's frozen config from profile parameters, with one-line errors."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import replace
from typing import Any, TypeVar

from ctxbench.sim.core.profiles import ProfileError
from ctxbench.sim.core.provider import Faults, Latency
from ctxbench.sim.core.values import ValueProblem, build, check_params, unknown

C = TypeVar("C")


def latency_from(v: Any, where: str) -> Latency:
    """Latency from a mapping of its fields (numbers), checked like every config value."""
    if isinstance(v, Latency):
        return v
    try:
        return build(Latency, _mapping(v, where, "latency"), f"{where}: latency")
    except ValueProblem as exc:
        raise ProfileError(str(exc)) from exc


def _mapping(v: Any, where: str, key: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise ProfileError(f"{where}: {key}: expected a mapping, got {v!r}")
    return v


def faults_from(v: Any, where: str) -> Faults:
    """Faults from a mapping: rates {kind: p}, scripted {index: kind}, windows [[start, end, kind]],
    retry_after (seconds); kinds are checked against FAULT_KINDS with close matches."""
    if isinstance(v, Faults):
        return v
    from ctxbench.sim.core.names import FAULT_KINDS

    try:
        faults = build(Faults, _mapping(v, where, "faults"), f"{where}: faults")
    except ValueProblem as exc:
        raise ProfileError(str(exc)) from exc
    for kind in [*faults.rates, *faults.scripted.values(), *(w[2] for w in faults.windows)]:
        if kind not in FAULT_KINDS:
            raise ProfileError(f"{where}: faults: {unknown('fault kind', kind, FAULT_KINDS, 'valid kinds')}")
    for kind, p in faults.rates.items():
        if not 0.0 <= p <= 1.0:
            raise ProfileError(f"{where}: faults.rates.{kind}: expected a number between 0 and 1, got {p!r}")
    return faults


def _frozen(v: Any) -> Hashable:
    """A hashable stand-in for a parameter value read from YAML or the CLI (mappings, lists)."""
    if isinstance(v, dict):  # in its own order: the same mapping in another order is another key
        return ("{", tuple([(k, _frozen(x)) for k, x in v.items()]))
    if isinstance(v, (list, tuple)):
        return ("[", tuple(_frozen(x) for x in v))
    return v if isinstance(v, Hashable) else repr(v)


_CONFIGS: dict[Hashable, Any] = {}  # (class, provider, parameters) -> config: built once per run set


def config_from(cls: type[C], provider: str, params: dict[str, Any]) -> C:
    """`cls()` with `params` applied, every key and value checked against `cls`'s type hints
    (`ctxbench.sim.core.values`); unknown keys list the closest valid ones. A config is immutable, so
    the same parameters give the same (shared) config: every run builds its providers anew."""
    key = (cls, provider, _frozen(params))
    try:
        hit = _CONFIGS.get(key)
    except TypeError:  # a value that cannot be hashed (an object passed in): built each time
        return _build_config(cls, provider, params)
    if hit is None:
        hit = _CONFIGS[key] = _build_config(cls, provider, params)
    return hit


def _build_config(cls: type[C], provider: str, params: dict[str, Any]) -> C:
    where = f"provider {provider!r}"
    params = dict(params)
    if "latency" in params:
        params["latency"] = latency_from(params["latency"], where)
    if "faults" in params:
        params["faults"] = faults_from(params["faults"], where)
    try:
        checked = check_params(cls, params, f"{where}:")
    except ValueProblem as exc:
        raise ProfileError(str(exc)) from exc
    return replace(cls(), **checked)  # type: ignore[type-var]
