"""Provider profiles by name: which provider model, with which configuration.

A profile is a YAML file in `sim/data/profiles/` (or a built-in default) naming the provider
model and its parameters; `make_provider(profile, model, seed)` builds one instance per model.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from ctxbench.policies.registry import register
from ctxbench.sim import yamltext
from ctxbench.sim.catalog import model_info, prices
from ctxbench.sim.providers.anthropic import AnthropicConfig, AnthropicProvider
from ctxbench.sim.providers.base import Provider
from ctxbench.sim.providers.config import ProfileError, config_from
from ctxbench.sim.values import unknown

__all__ = ["ProfileError", "default_model", "make_provider", "profile", "profile_names"]


@register("provider", "anthropic")
def anthropic_provider(model: str, seed: int = 0, **params: Any) -> Provider:
    cfg = config_from(AnthropicConfig, "anthropic", params)
    return AnthropicProvider(model_info(model), prices(model), cfg, seed)


@register("provider", "auto-prefix")
def auto_prefix_provider(model: str, seed: int = 0, **params: Any) -> Provider:
    """OpenAI ≤ 5.5, Gemini implicit, Meta-style replicas (sim/providers/auto_prefix.py)."""
    from ctxbench.sim.providers.auto_prefix import AutoConfig, AutoPrefixProvider

    cfg = config_from(AutoConfig, "auto-prefix", params)
    return AutoPrefixProvider(cfg.dialect, model_info(model), prices(model), cfg, seed)


@register("provider", "openai-breakpoints")
def openai_breakpoints_provider(model: str, seed: int = 0, **params: Any) -> Provider:
    from ctxbench.sim.providers.openai_breakpoints import BreakpointConfig, OpenAIBreakpointProvider

    cfg = config_from(BreakpointConfig, "openai-breakpoints", params)
    return OpenAIBreakpointProvider("openai", model_info(model), prices(model), cfg, seed)


@register("provider", "gemini-explicit")
def gemini_explicit_provider(model: str, seed: int = 0, **params: Any) -> Provider:
    from ctxbench.sim.providers.gemini import GeminiExplicitConfig, GeminiExplicitProvider

    cfg = config_from(GeminiExplicitConfig, "gemini-explicit", params)
    return GeminiExplicitProvider("gemini", model_info(model), prices(model), cfg, seed)


@register("provider", "deepseek")
def deepseek_provider(model: str, seed: int = 0, **params: Any) -> Provider:
    from ctxbench.sim.providers.deepseek import DeepSeekConfig, DeepSeekProvider

    cfg = config_from(DeepSeekConfig, "deepseek", params)
    return DeepSeekProvider("deepseek", model_info(model), prices(model), cfg, seed)


@register("provider", "openrouter")
def openrouter_provider(model: str, seed: int = 0, **params: Any) -> Provider:
    """OpenRouter over upstream endpoints, each built from `upstream_profile` with its own cache."""
    from ctxbench.sim.providers.openrouter import OpenRouterConfig, OpenRouterProvider

    if "down" in params and isinstance(params["down"], dict):
        params["down"] = {int(k): str(v) for k, v in params["down"].items()}
    if "down_windows" in params:
        params["down_windows"] = tuple((float(a), float(b), str(u)) for a, b, u in params["down_windows"])
    cfg = config_from(OpenRouterConfig, "openrouter", params)
    upstream_seeds = {u: seed * 1000 + i + 1 for i, u in enumerate(cfg.upstreams)}
    ups = {u: make_provider(cfg.upstream_profile, model, s) for u, s in upstream_seeds.items()}
    return OpenRouterProvider(model_info(model), prices(model), cfg, ups, seed)


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
    from ctxbench.sim import yamltext

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


def make_provider(name: str, model: str, seed: int = 0, **overrides: Any) -> Provider:
    """Build the provider model of profile `name` for `model`."""
    from ctxbench.policies.registry import lookup

    prof = profile(name)
    kind = str(prof.pop("provider", name))
    prof.pop("description", None)
    prof.pop("sources", None)
    prof.pop("model", None)
    prof.pop("models", None)
    for key, value in overrides.items():  # nested mappings (faults, latency) merge key by key
        base = prof.get(key)
        prof[key] = merge(base, value) if isinstance(base, dict) and isinstance(value, dict) else value
    builder = lookup("provider", kind)
    provider: Provider = builder(model, seed, **prof)
    return provider
