"""Which provider profile and model a trace runs on: the one choice every verb makes (`run`,
`compare`, `sweep` and so `report`, `check-prefix --policy`, `fidelity`, the fidelity report), so the
same trace, preset and options give the same answer whichever verb runs them (issue 29).

In order (nothing is substituted without a note, H-20):
1. the model: `--model`, else the trace's own (`header.model`); it, and each model the trace
   switches to (`model_switch`: a `/model` or fast-mode request in a log), must be in the catalog
   with prices (sim/core/catalog.py), else the run stops before its first request naming the closest ids;
   `--model` runs every request as that model (the trace's switches are not applied);
2. the profile: `--provider`, else, when the trace (or `--model`) names a model, the profile that
   model is served by (`served_profile`: a log's own evidence first), else (a trace that names no
   model, e.g. the game generator's) the preset's `provider:`; a preset's `provider:` never moves
   a trace off the model it was recorded or generated with;
3. a profile that serves another provider family than the model's runs the profile's own model
   (`--provider openai-auto` on a Claude trace prices gpt-4.1, not Claude on OpenAI's cache), and
   the choice says so in `note`; an explicit `--model` is never replaced;
4. a log whose billed prompts exceed the model's standard window, on a model with a 1M tier
   (`window_1m`, sim/data/models.yaml), ran on that tier whatever its model id says (Claude Code
   logs the id without `[1m]`, issue 28): it runs as `<model>[1m]` with a note, so `run` and
   `compare` get the window (and the long-context prices) `fidelity` replays with (issue 29).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ctxbench.sim.core.catalog import CatalogError, default_profile, model_info, prices
from ctxbench.sim.core.profiles import default_model, profile, profile_names
from ctxbench.sim.runner import DEFAULT_MODEL
from ctxbench.traces.model import MessageEvent, ModelSwitchEvent, Trace


@dataclass(frozen=True)
class Serving:
    profile: str
    model: str
    why: str  # where the profile came from: "--provider" | "log" | "trace" | "--model" | "preset"
    note: str = ""  # a model substitution the user should see


def log_shows_no_caching(trace: Trace) -> bool:
    """Every request of the log has usage and none read or wrote a cache entry (traces-real
    FORMATS.md §3: the OpenRouter llama-4 log reports 0 in every cache field)."""
    usages = [e.usage for e in trace.events if isinstance(e, MessageEvent) and e.usage is not None]
    return bool(usages) and not any(u.cache_read or u.cache_write_5m or u.cache_write_1h for u in usages)


def served_profile(trace: Trace, model: str) -> str:
    """The profile that bills like the log's provider: no cache when the log shows none, else
    the profile of the gateway the log names (`meta.gateway`, e.g. Cline's: sim/data/profiles/
    cline.yaml) when it serves the model's provider family, else the profile that serves the
    model's provider (sim/core/catalog.py `default_profile`)."""
    if log_shows_no_caching(trace):
        return "no-cache"
    gateway = str(trace.header.meta.get("gateway", ""))
    if gateway in profile_names() and provider_family(gateway) == model_info(model).provider:
        return gateway
    return default_profile(model)


def provider_family(name: str) -> str:
    """The provider family a profile bills as (its model's provider)."""
    m = default_model(name)
    if m:
        return model_info(m).provider
    return str(profile(name).get("provider", name))


class NoModelError(ValueError):
    """A recorded log that names no model: which to run it as only the user can say (`--model`)."""


def choose(
    trace: Trace, preset_provider: str, provider: str | None = None, model: str | None = None
) -> Serving:
    """The profile and model of a run (module docstring); CatalogError when the model is unknown."""
    m = model or trace.header.model
    if not m and trace.header.meta.get("format"):
        raise NoModelError(
            f"the log names no model ({trace.header.source or 'trace'}): give one with --model NAME"
        )
    m = m or DEFAULT_MODEL
    info = model_info(m)
    prices(m)
    for ev in trace.events if not model else ():  # a recorded switch runs on its model (H-20)
        if isinstance(ev, ModelSwitchEvent):
            model_info(ev.model)
            prices(ev.model)
    if provider:
        prof, why = provider, "--provider"
    elif trace.header.meta.get("format"):
        prof, why = served_profile(trace, info.name), "log"
    elif model or trace.header.model:
        prof, why = served_profile(trace, info.name), "--model" if model else "trace"
    else:
        prof, why = preset_provider, "preset"
    profile(prof)  # unknown profile: ProfileError listing the known ones
    fam = provider_family(prof)
    if fam == info.provider or prof == "no-cache":
        return long_tier(trace, Serving(prof, info.name, why))
    other = default_model(prof)
    if other is None or model:
        note = f"model {info.name} ({info.provider}) on profile {prof!r} ({fam})" if model else ""
        return Serving(prof, info.name, why, note)
    return Serving(
        prof,
        other,
        why,
        f"profile {prof!r} serves {fam} models: running {other} (its model) instead of {info.name}; "
        "pass --model to choose another",
    )


def billed_prompt_max(trace: Trace) -> int:
    """The largest prompt the log's bills show (uncached + cache read + cache writes)."""
    return max(
        (
            e.usage.input_tokens + e.usage.cache_read + e.usage.cache_write_5m + e.usage.cache_write_1h
            for e in trace.events
            if isinstance(e, MessageEvent) and e.usage is not None
        ),
        default=0,
    )


def long_tier(trace: Trace, sv: Serving) -> Serving:
    """`sv` on its model's 1M tier when the log's billed prompts exceed the standard window
    (module docstring, 4); as it is otherwise, or when the model has no such tier (the requests
    over the window are then named where they are scored)."""
    if sv.model.endswith("[1m]"):
        return sv
    info = model_info(sv.model)
    top = billed_prompt_max(trace)
    if top <= info.window:
        return sv
    try:
        long = model_info(sv.model + "[1m]")
    except CatalogError:
        return sv
    note = (
        f"billed prompts up to {top:,} tokens exceed {info.name}'s {info.window:,}-token window: "
        f"replayed on its 1M tier ({long.name})"
    )
    return replace(sv, model=long.name, note="; ".join(x for x in (sv.note, note) if x))
