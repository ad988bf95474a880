"""Provider profiles by name: which provider model, with which configuration.

A profile is a YAML file in `sim/data/profiles/` (or a built-in default) naming the provider model
and its parameters. Reading and checking a profile's name needs no provider model, so presets
(`ctxbench.policies`) check the names they give here; the engine builds the provider a profile
names (`ctxbench.sim.providers.registry.make_provider`).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from ctxbench.sim.core import yamltext
from ctxbench.sim.core.values import unknown

__all__ = ["ProfileError", "default_model", "merge", "profile", "profile_names", "provider_assignments"]


class ProfileError(ValueError):
    """An unknown profile or a bad key in a profile file."""


def _read_profile(p: Path, label: str = "") -> dict[str, Any]:
    """A profile file's mapping: a bundled one (no `label`) through the parsed-data cache."""
    try:
        text = p.read_text(encoding="utf-8") if label else None
        data = (yamltext.load_bundled(p) if text is None else yamltext.load_yaml(text)) or {}
    except yamltext.YAMLError as exc:
        raise ProfileError(yamltext.yaml_problem(label or "sim/data/profiles/" + p.name, exc)) from None
    if not isinstance(data, dict):
        raise ProfileError(f"{label or 'sim/data/profiles/' + p.name}: a profile must be a mapping")
    return dict(data)


@cache
def _profiles() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {"anthropic": {"provider": "anthropic"}}
    folder = Path(__file__).parents[1] / "data" / "profiles"
    if folder.is_dir():
        for p in sorted(folder.iterdir(), key=lambda q: q.name):
            if p.name.endswith(".yaml"):
                out[p.name[:-5]] = _read_profile(p)
    return out


def default_model(name: str) -> str | None:
    """The model a profile runs when none is given (its `model:` key), or None."""
    m = profile(name).get("model")
    return str(m) if m else None


def profile_names() -> list[str]:
    return sorted(_profiles())


def profile(name: str) -> dict[str, Any]:
    """A bundled profile by name, or a profile YAML file (`--provider my-faults.yaml`: the same
    keys as sim/data/profiles/*.yaml, e.g. `provider: anthropic` plus `faults: {rates: ...}`)."""
    if name.endswith((".yaml", ".yml")):
        path = Path(name)
        if not path.is_file():
            raise ProfileError(f"{name}: no such provider profile file")
        return _read_profile(path, name)
    profs = _profiles()
    if name not in profs:
        raise ProfileError(unknown("provider profile", name, sorted(profs), "known profiles"))
    return dict(profs[name])


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`base` updated by `extra`, nested mappings merged rather than replaced."""
    out = dict(base)
    for k, v in extra.items():
        out[k] = merge(out[k], v) if isinstance(out.get(k), dict) and isinstance(v, dict) else v
    return out


def provider_assignments(items: list[str]) -> dict[str, Any]:
    """`["faults.rates.rate_limit=0.05", "latency.base_ttft=1"]` -> nested provider parameters
    (values read as YAML scalars; checked against the provider's config when it is built)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ProfileError(
                f"--provider-set: expected KEY=VALUE (e.g. faults.rates.rate_limit=0.05), got {item!r}"
            )
        *path, last = key.strip().split(".")
        node = out
        for part in path:
            node = node.setdefault(part, {})
        try:
            node[last] = yamltext.load_yaml(text)
        except yamltext.YAMLError:
            node[last] = text
    return out


