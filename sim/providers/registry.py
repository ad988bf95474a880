"""Provider profiles by name: which provider model, with which configuration.

A profile is a YAML file in `sim/data/profiles/` (or a built-in default) naming the provider
model and its parameters; `make_provider(profile, model, seed)` builds one instance per model.
"""

from __future__ import annotations

from dataclasses import fields, replace
from functools import cache
from importlib import resources
from typing import Any

import yaml

from policies.registry import register
from sim.catalog import model_info, prices
from sim.providers.anthropic import AnthropicConfig, AnthropicProvider
from sim.providers.base import Faults, Latency, Provider


class ProfileError(ValueError):
    """An unknown profile or a bad key in a profile file."""


@register("provider", "anthropic")
def anthropic_provider(model: str, seed: int = 0, **params: Any) -> Provider:
    cfg = AnthropicConfig()
    valid = [f.name for f in fields(AnthropicConfig)]
    for key in params:
        if key not in valid:
            raise ProfileError(f"unknown key {key!r} for provider 'anthropic'; valid keys: {', '.join(valid)}")
    if "latency" in params and isinstance(params["latency"], dict):
        params["latency"] = Latency(**params["latency"])
    if "faults" in params and isinstance(params["faults"], dict):
        params["faults"] = Faults(**params["faults"])
    cfg = replace(cfg, **params)
    return AnthropicProvider(model_info(model), prices(model), cfg, seed)


@cache
def _profiles() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {"anthropic": {"provider": "anthropic"}}
    folder = resources.files("sim").joinpath("data", "profiles")
    if folder.is_dir():
        for p in folder.iterdir():
            if p.name.endswith(".yaml"):
                out[p.name[:-5]] = dict(yaml.safe_load(p.read_text(encoding="utf-8")) or {})
    return out


def profile_names() -> list[str]:
    return sorted(_profiles())


def profile(name: str) -> dict[str, Any]:
    profs = _profiles()
    if name not in profs:
        raise ProfileError(f"unknown provider profile {name!r}; known profiles: {', '.join(sorted(profs))}")
    return dict(profs[name])


def make_provider(name: str, model: str, seed: int = 0, **overrides: Any) -> Provider:
    """Build the provider model of profile `name` for `model`."""
    from policies.registry import lookup

    prof = profile(name)
    kind = str(prof.pop("provider", name))
    prof.pop("description", None)
    prof.pop("sources", None)
    prof.pop("model", None)
    prof.update(overrides)
    builder = lookup("provider", kind)
    provider: Provider = builder(model, seed, **prof)
    return provider
