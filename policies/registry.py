"""One registry by kind and name (DESIGN.md): components, providers, generators, importers.

A YAML preset names components and their parameters; `create` checks every key against the
component's dataclass fields and reports the valid ones for an unknown key.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

KINDS = ("estimator", "eviction", "compaction", "marks", "provider", "generator", "importer")

_REGISTRY: dict[str, dict[str, Any]] = {k: {} for k in KINDS}

T = TypeVar("T")


class RegistryError(ValueError):
    """Unknown kind, unknown name, or a parameter the component does not have."""


def register(kind: str, name: str) -> Callable[[T], T]:
    if kind not in _REGISTRY:
        raise RegistryError(f"unknown registry kind {kind!r}; valid kinds: {', '.join(KINDS)}")

    def deco(obj: T) -> T:
        _REGISTRY[kind][name] = obj
        return obj

    return deco


def names(kind: str) -> list[str]:
    _ensure_loaded(kind)
    return sorted(_REGISTRY[kind])


def lookup(kind: str, name: str) -> Any:
    _ensure_loaded(kind)
    table = _REGISTRY.get(kind)
    if table is None:
        raise RegistryError(f"unknown registry kind {kind!r}; valid kinds: {', '.join(KINDS)}")
    if name not in table:
        raise RegistryError(
            f"unknown {kind} {name!r}; valid {kind} names: {', '.join(sorted(table)) or '(none)'}"
        )
    return table[name]


def param_names(cls: Any) -> list[str]:
    return [f.name for f in dataclasses.fields(cls) if f.init]


def create(kind: str, name: str, params: dict[str, Any] | None = None, where: str = "") -> Any:
    """Instantiate a registered dataclass component, rejecting unknown parameters."""
    cls = lookup(kind, name)
    params = dict(params or {})
    if dataclasses.is_dataclass(cls):
        valid = param_names(cls)
        for key in params:
            if key not in valid:
                at = f"{where}: " if where else ""
                raise RegistryError(
                    f"{at}unknown key {key!r} for {kind} {name!r}; valid keys: {', '.join(valid) or '(none)'}"
                )
    try:
        return cls(**params)
    except (TypeError, ValueError) as exc:
        at = f"{where}: " if where else ""
        raise RegistryError(f"{at}bad parameters for {kind} {name!r}: {exc}") from exc


# The modules that register each kind, imported the first time that kind is looked up, so that a
# run does not import the trace importers and generators (and a listing of importers no providers).
_COMPONENTS = tuple(
    f"ctxbench.policies.{c}"
    for c in ("estimators", "eviction", "marks", "compaction", "recorded", "tiers", "condensers")
)
_MODULES_OF: dict[str, tuple[str, ...]] = {
    **{kind: _COMPONENTS for kind in ("estimator", "eviction", "compaction", "marks")},
    "provider": ("ctxbench.sim.providers.registry",),
    "generator": ("ctxbench.traces.generators",),
    "importer": ("ctxbench.traces.importers",),
}
_loaded: set[str] = set()


def _ensure_loaded(kind: str) -> None:
    """Import the modules that register components of `kind` (once)."""
    if kind in _loaded:
        return
    _loaded.add(kind)
    import importlib

    for mod in _MODULES_OF.get(kind, ()):
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:  # optional parts not present in this build
            if exc.name is None or not mod.startswith(exc.name):
                raise
