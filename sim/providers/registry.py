"""The provider models by name, and `make_provider(profile, model, seed)`, which builds one
instance per model from a provider profile (`ctxbench.sim.core.profiles`)."""

from __future__ import annotations

from typing import Any

from ctxbench.sim.core.catalog import model_info, prices
from ctxbench.sim.core.profiles import merge, profile
from ctxbench.sim.core.provider import Provider
from ctxbench.sim.core.registry import register
from ctxbench.sim.providers.anthropic import AnthropicConfig, AnthropicProvider
from ctxbench.sim.providers.config import config_from

__all__ = ["make_provider"]


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


def make_provider(name: str, model: str, seed: int = 0, **overrides: Any) -> Provider:
    """Build the provider model of profile `name` for `model`."""
    from ctxbench.sim.core.registry import lookup

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
