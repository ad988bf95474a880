"""One registry by kind and name (DESIGN.md): components, providers, generators, importers.

A YAML preset names components and their parameters; `create` checks every key against the
component's dataclass fields and reports the valid ones for an unknown key.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from ctxbench.sim.core.values import ValueProblem, build, unknown

KINDS = ("estimator", "eviction", "compaction", "marks", "provider", "generator", "importer", "harness")

_REGISTRY: dict[str, dict[str, Any]] = {k: {} for k in KINDS}

T = TypeVar("T")


class RegistryError(ValueError):
    """Unknown kind, unknown name, or a parameter the component does not have."""


def register(kind: str, name: str) -> Callable[[T], T]:
    if kind not in _REGISTRY:
        raise RegistryError(unknown("registry kind", kind, KINDS, "valid kinds"))

    def deco(obj: T) -> T:
        _REGISTRY[kind][name] = obj
        return obj

    return deco


def names(kind: str) -> list[str]:
    _ensure_loaded(kind)
    return sorted(_REGISTRY[kind])


def lookup(kind: str, name: str) -> Any:
    table = _REGISTRY.get(kind)
    if table is None:
        raise RegistryError(unknown("registry kind", kind, KINDS, "valid kinds"))
    if name not in table:
        _ensure_loaded(kind, name)
    if name not in table:
        raise RegistryError(unknown(kind, name, table, f"valid {kind} names"))
    return table[name]


class Registered(Mapping[str, Any]):
    """A read-only view of one kind of the registry, by name (`pick` chooses what each entry
    shows): the kind's names are registered once, here, and every listing reads this view."""

    def __init__(self, kind: str, pick: Callable[[Any], Any] = lambda entry: entry) -> None:
        self.kind = kind
        self.pick = pick

    def __getitem__(self, name: str) -> Any:
        if name not in self:
            raise KeyError(name)
        return self.pick(lookup(self.kind, name))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in names(self.kind)

    def __iter__(self) -> Iterator[str]:
        return iter(names(self.kind))

    def __len__(self) -> int:
        return len(names(self.kind))


def registered_name(obj: Any) -> str:
    """The name `obj`'s class (or `obj` itself) is registered under, or its class name."""
    cls = obj if isinstance(obj, type) else type(obj)
    for table in _REGISTRY.values():
        for name, entry in table.items():
            if entry is cls:
                return name
    return cls.__name__


def param_names(cls: Any) -> list[str]:
    return [f.name for f in dataclasses.fields(cls) if f.init]


def create(kind: str, name: str, params: dict[str, Any] | None = None, where: str = "") -> Any:
    """Instantiate a registered component. For a dataclass, every key and value is checked
    against its fields' type hints (`ctxbench.sim.core.values.build`): an unknown key lists the
    closest valid ones; a bad value names `where.key`, the expected type or range and the value."""
    cls = lookup(kind, name)
    params = dict(params or {})
    at = where or f"{kind} {name!r}"
    if dataclasses.is_dataclass(cls) and isinstance(cls, type):
        try:
            return build(cls, params, at)
        except ValueProblem as exc:
            raise RegistryError(str(exc)) from exc
    try:
        return cls(**params)
    except (TypeError, ValueError) as exc:
        raise RegistryError(f"{at}: bad parameters for {kind} {name!r}: {exc}") from exc


# The modules that register each kind, imported the first time that kind is looked up, so that a
# run does not import the trace importers and generators (and a listing of importers no providers).
_COMPONENTS = tuple(
    f"ctxbench.policies.{c}"
    for c in (
        "estimators", "eviction", "marks", "compaction", "recorded", "tiers", "condensers", "masking", "cline"
    )
)
_MODULES_OF: dict[str, tuple[str, ...]] = {
    **{kind: _COMPONENTS for kind in ("estimator", "eviction", "compaction", "marks")},
    "provider": ("ctxbench.sim.providers.registry",),
    "generator": ("ctxbench.traces.generators.builtin",),
    "importer": (),  # every module of `_HOME["importer"]` (below)
    "harness": (
        "ctxbench.sim.harness.conversation", "ctxbench.sim.harness.recorded", "ctxbench.sim.harness.coding"
    ),
}
# The module that registers each component a preset can name, so that looking one up imports
# that module only (a preset names four components; importing all eight component modules and
# harness C was a tenth of a short `ctxbench run`, issue 13). A name missing here is still found,
# by importing every module of its kind; a test checks this table against the registrations.
_HOME: dict[str, dict[str, str]] = {
    "estimator": {
        "anchored": "estimators", "exact": "estimators", "c-usage": "tiers", "last-usage": "condensers",
    },
    "eviction": {
        "batch": "eviction", "keep-all": "eviction", "keep-last": "eviction",
        "mask-tool-results": "masking", "recent-events": "masking",
    },
    "compaction": {
        "h-handoff": "compaction", "c-tiers": "tiers", "none": "condensers",
        "threshold-summary": "condensers", "recorded": "recorded", "cline-truncation": "cline",
    },
    "marks": {
        "h-direct": "marks", "h-openrouter": "marks", "last-block": "marks", "none": "marks",
        "opencode": "marks", "claude-code": "condensers", "recorded": "recorded", "cline": "cline",
    },
    "harness": {
        "H": "ctxbench.sim.harness.conversation", "recorded": "ctxbench.sim.harness.recorded",
        "C": "ctxbench.sim.harness.coding",
    },
    # one module per format: `ctxbench billed` or an import of one format imports that importer only
    # (all ten were a fifth of `billed`'s start-up, issue 28)
    "importer": {
        name: f"ctxbench.traces.importers.{name.replace('-', '_')}"
        for name in (
            "claude-code", "claude-trace", "cline", "cline-task", "codex", "gemini-cli", "inspect-ai",
            "opencode", "openhands", "swe-agent",
        )
    },
}  # fmt: skip
_MODULES_OF["importer"] = tuple(_HOME["importer"].values())
_loaded: set[str] = set()


def homes(kind: str) -> list[str]:
    """The names of `kind` the lookup table lists, sorted, without importing a module (the importer
    formats a parser offers as choices)."""
    return sorted(_HOME.get(kind, {}))


def home_module(kind: str, name: str) -> str | None:
    """The module `_HOME` says registers `name` of `kind` (full dotted name), or None."""
    mod = _HOME.get(kind, {}).get(name)
    return None if mod is None else mod if "." in mod else f"ctxbench.policies.{mod}"


def _ensure_loaded(kind: str, name: str | None = None) -> None:
    """Import the module that registers `name` (when known), else every module that registers
    components of `kind` (once)."""
    import importlib

    home = home_module(kind, name) if name is not None else None
    if home is not None:
        importlib.import_module(home)
        if name in _REGISTRY[kind]:
            return
    if kind in _loaded:
        return
    _loaded.add(kind)
    for mod in _MODULES_OF.get(kind, ()):
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:  # optional parts not present in this build
            if exc.name is None or not mod.startswith(exc.name):
                raise
