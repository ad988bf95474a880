"""Model profiles and price tables loaded from YAML (`sim/data/`), each row with its source.

A model id as a log or a user writes it resolves to one catalog row by these rules, in order
(`resolve`; nothing else is guessed, and an id no rule maps to a row is an error that names the
closest known ids, H-20):
1. a catalog key or one of its `aliases` (models.yaml), case-insensitive;
2. a trailing `[1m]` or `-1m` asks for the row's 1M-token window (`window_1m`; Claude Code's `[1m]` ids,
   a gateway's `claude-opus-4.6-1m`: bench/corpus/sessions.csv, Damon-Salvetore/claude-code);
3. a routing prefix up to the last `/` is dropped (`anthropic/claude-opus-4.5`, `openai/gpt-4o-mini`,
   `meta-llama/llama-4-maverick`: OpenRouter, LiteLLM, Inspect and Cline name models this way);
4. Bedrock ids lose region (or `global.`), vendor prefix and version tail, Vertex ids their `@date`
   (`us.anthropic.claude-sonnet-4-5-20250929-v1:0`, `global.anthropic.claude-fable-5`);
5. a leading `openrouter-` is dropped (a LiteLLM alias: OpenHands' `openai/openrouter-llama-4-maverick`);
6. a trailing `-fast` selects the row's fast-mode prices (Anthropic `speed: "fast"`; Cline's
   `claude-opus-4.8-fast`; not without a `fast` price block);
7. a trailing date (`-20251101`, `-2024-07-18`) or `-latest` is dropped;
8. in `claude-` ids a dotted version is written with a dash (`claude-opus-4.5` → `claude-opus-4-5`,
   the Anthropic API's own spelling; OpenAI ids keep their dots: `gpt-4.1`);
9. `claude-<version>-<family>`, when no key, is tried as `claude-<family>-<version>`: OpenRouter's
   answers name its /api/v1/models `canonical_slug` (`claude-4.7-opus-20260416` for `claude-opus-4.7`).

`--prices FILE` (`add_prices_file`) adds rows of the same shape as prices.yaml; a row for a model
models.yaml does not know must also give its profile (`provider`, `window`, `min_cacheable`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from ctxbench.sim.core import yamltext
from ctxbench.sim.core.values import unknown


class CatalogError(ValueError):
    """An unknown model or an incomplete table row."""


@dataclass(frozen=True)
class ModelInfo:
    name: str
    provider: str
    window: int
    min_cacheable: int
    max_output: int
    image_rule: str
    tokenizer_scale: float = 1.0
    serves: str = ""  # provider profile that serves it when nothing else says (default_profile)


@dataclass(frozen=True)
class Prices:
    """USD per million tokens, with the date and source of the row (H-20). `long_context`: the
    rates of a request whose prompt exceeds `above` tokens (on all its tokens). `storage_per_mtok_hour`:
    what holding an explicit cache costs (Gemini's cachedContents, providers.md §3); None where the
    price page names none."""

    model: str
    input: float
    output: float
    cache_read: float
    cache_write_5m: float
    cache_write_1h: float
    date: str
    source: str
    above: int = 0
    long_context: Prices | None = None
    storage_per_mtok_hour: float | None = None

    def cost(self, uncached: int, read: int, write_5m: int, write_1h: int, output: int) -> float:
        if self.long_context is not None and uncached + read + write_5m + write_1h > self.above:
            return self.long_context.cost(uncached, read, write_5m, write_1h, output)
        return (
            uncached * self.input
            + read * self.cache_read
            + write_5m * self.cache_write_5m
            + write_1h * self.cache_write_1h
            + output * self.output
        ) / 1e6


@dataclass(frozen=True)
class Resolved:
    """A model id resolved to a catalog row: `key` plus the variant the id asked for."""

    key: str
    fast: bool = False
    long_window: bool = False

    @property
    def name(self) -> str:
        return self.key + ("-fast" if self.fast else "") + ("[1m]" if self.long_window else "")


DATA = Path(__file__).parents[1] / "data"  # models.yaml, prices.yaml (package data)
PROFILE_KEYS = ("provider", "window", "min_cacheable")
# The keys a prices.yaml / `--prices` row may hold; a row for a model models.yaml lacks adds its
# models.yaml keys. `long_context` and `fast` hold rates (RATE_KEYS; `above` in long_context).
RATE_KEYS = ("input", "output", "cache_read", "cache_write", "cache_write_5m", "cache_write_1h")
PRICE_KEYS = (*RATE_KEYS, "date", "source", "long_context", "fast", "storage_per_mtok_hour")
NESTED_RATE_KEYS = {"long_context": (*RATE_KEYS, "above"), "fast": RATE_KEYS}
MODEL_KEYS = (*PROFILE_KEYS, "aliases", "window_1m", "max_output", "image_rule", "tokenizer_scale", "serves")
_EXTRA_MODELS: dict[str, dict[str, Any]] = {}
_EXTRA_PRICES: dict[str, dict[str, Any]] = {}


@cache
def _load(name: str) -> dict[str, dict[str, Any]]:
    data = yamltext.load_bundled(DATA / name) or {}
    return {str(k): dict(v) for k, v in data.items()}


def _models() -> dict[str, dict[str, Any]]:
    return {**_load("models.yaml"), **_EXTRA_MODELS}


def _prices() -> dict[str, dict[str, Any]]:
    return {**_load("prices.yaml"), **_EXTRA_PRICES}


def _forget() -> None:
    """Drop what was derived from the tables (after `--prices` adds rows): the aliases, and the
    model infos and prices remembered by name (every provider build asks for them)."""
    _aliases.cache_clear()
    model_info.cache_clear()
    prices.cache_clear()


@cache
def _aliases() -> dict[str, str]:
    """Lower-cased ids and aliases -> catalog key (built once: every provider build resolves)."""
    out: dict[str, str] = {}
    for key, row in _models().items():
        out[key.lower()] = key
        for a in row.get("aliases") or ():
            out[str(a).lower()] = key
    return out


_DATE = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2})$")
_BEDROCK = re.compile(r"^(?:[a-z]{2,4}\.|global\.)?anthropic\.(.+?)(?:-v\d+(?::\d+)?)?$")
_CLAUDE_DOT = re.compile(r"(\d)\.(\d)")
_VERSION_FIRST = re.compile(r"^claude-(\d+(?:-\d+)?)-(opus|sonnet|haiku)$")  # rule 9


def _candidate(name: str) -> tuple[str, bool, bool]:
    """(normalised id, fast, 1m) by rules 2-8 of the module docstring."""
    s = name.strip().lower()
    s = s.rsplit("/", 1)[-1]
    long_window = s.endswith(("[1m]", "-1m"))
    if long_window:
        s = s[: -len("[1m]")] if s.endswith("[1m]") else s[: -len("-1m")]
    m = _BEDROCK.match(s)
    if m:
        s = m.group(1)
    s = s.split("@", 1)[0]
    if s.startswith("openrouter-"):
        s = s[len("openrouter-") :]
    fast = s.endswith("-fast")
    if fast:
        s = s[: -len("-fast")]
    s = _DATE.sub("", s)
    if s.endswith("-latest"):
        s = s[: -len("-latest")]
    if s.startswith("claude-"):
        s = _CLAUDE_DOT.sub(r"\1-\2", s)
    return s, fast, long_window


def known_ids() -> list[str]:
    """Every catalog key and alias."""
    out = set(_models())
    for row in _models().values():
        out.update(str(a) for a in row.get("aliases") or ())
    return sorted(out)


# The vendor family an unknown id names by its prefix (issue 28: "MiniMax-M2.7" was offered Gemini ids,
# "claude-…" must be offered Claude ids): models.yaml `provider` of the ids to suggest; else all.
_VENDOR = re.compile(r"^(?:(claude-)|(gpt-|o\d|codex-)|(gemini-))")


def _first_token(model_id: str) -> str:
    """The vendor word an id starts with, after any `vendor/` prefix ("x-ai/grok-code-fast-1": grok)."""
    return re.split(r"[-.:_\s]", model_id.rsplit("/", 1)[-1].lower(), maxsplit=1)[0]


def closest(name: str, n: int = 3) -> list[str]:
    """The known ids nearest `name`, from its own vendor family (`_VENDOR`) when it names one, else
    from the ids that start with the same vendor word; none when the catalog has no model of it
    (ids of other vendors are never offered: "MiniMax-M2.7" is no Gemini model)."""
    cand = _candidate(name)[0]
    import difflib  # only to suggest a name: not at start-up

    m = _VENDOR.match(cand)
    if m is not None:
        vendor = ("anthropic", "openai", "gemini")[m.lastindex - 1 if m.lastindex else 0]
        rows = _models()
        own = {k for k, r in rows.items() if r.get("provider") == vendor}
        own |= {str(a) for k in own for a in rows[k].get("aliases") or ()}
        pool = sorted(own)
    else:
        pool = [k for k in known_ids() if _first_token(k) == _first_token(cand)]
    return difflib.get_close_matches(cand, pool, n=n, cutoff=0.4)


def known_vendors() -> list[str]:
    """The vendor words the catalog's ids start with."""
    return sorted({_first_token(k) for k in model_names()})


def unknown_model_error(name: str, what: str = "unknown model") -> CatalogError:
    near = closest(name)
    hint = (
        f"closest known: {', '.join(near)}"
        if near
        else f"no model of its vendor in the catalog; vendors known: {', '.join(known_vendors())}"
    )
    return CatalogError(
        f"{what} {name!r} ({hint}); run it as a known model with --model NAME, or give its prices "
        "and profile with --prices FILE (rows as in sim/data/prices.yaml)"
    )


def resolve(name: str) -> Resolved:
    """The catalog row a model id stands for (module docstring rules), or CatalogError."""
    aliases = _aliases()
    key = aliases.get(name.strip().lower())
    if key is not None:
        return Resolved(key)
    cand, fast, long_window = _candidate(name)
    key = aliases.get(cand)
    if key is None and (m := _VERSION_FIRST.match(cand)):  # rule 9: OpenRouter's version-first slug
        key = aliases.get(f"claude-{m.group(2)}-{m.group(1)}")
    if key is None:
        raise unknown_model_error(name)
    if fast and "fast" not in (_prices().get(key) or {}):
        raise unknown_model_error(name, f"no fast-mode prices for {key!r}: model")
    if long_window and "window_1m" not in _models()[key]:
        raise unknown_model_error(name, f"no 1M-token window for {key!r}: model")
    return Resolved(key, fast, long_window)


def canonical(name: str) -> str:
    """The catalog name of a model id (with its -fast / [1m] variant)."""
    return resolve(name).name


def largest_window() -> int:
    """The largest context window of any model in the catalog (a `[1m]` variant's included): the
    most a `window` preset's `--budget` can stand for on some model (policies/preset.py)."""
    rows = _models().values()
    return max((max(int(r["window"]), int(r.get("window_1m", 0))) for r in rows), default=0)


def model_names() -> list[str]:
    return sorted(_models())


@cache
def model_info(name: str) -> ModelInfo:
    res = resolve(name)
    r = _models()[res.key]
    window = int(r["window_1m"]) if res.long_window else int(r["window"])
    return ModelInfo(
        res.name,
        str(r["provider"]),
        window,
        int(r["min_cacheable"]),
        int(r.get("max_output", window // 4)),
        str(r.get("image_rule", "anthropic")),
        float(r.get("tokenizer_scale", 1.0)),
        str(r.get("serves", "")),
    )


def _price_row(model: str, r: dict[str, Any], source: str, date: str) -> Prices:
    try:
        w5 = r.get("cache_write_5m", r.get("cache_write", r["input"]))
        return Prices(
            model,
            float(r["input"]),
            float(r["output"]),
            float(r.get("cache_read", r["input"])),
            float(w5),
            float(r.get("cache_write_1h", w5)),
            date,
            source,
        )
    except KeyError as exc:
        raise CatalogError(f"prices for {model!r}: missing field {exc.args[0]!r}") from None
    except (TypeError, ValueError):
        raise CatalogError(f"prices for {model!r}: every rate must be a number") from None


@cache
def prices(name: str) -> Prices:
    try:
        res = resolve(name)
    except CatalogError as exc:
        raise CatalogError(f"{exc} (H-20: a run cannot start without prices)") from None
    rows = _prices()
    if res.key not in rows:
        raise unknown_model_error(name, "no prices for model")
    r = rows[res.key]
    date, source = str(r.get("date", "")), str(r.get("source", ""))
    base = _price_row(res.name, r.get("fast", r) if res.fast else r, source, date)
    storage = r.get("storage_per_mtok_hour")
    if storage is not None:
        try:
            base = replace(base, storage_per_mtok_hour=float(storage))
        except (TypeError, ValueError):
            raise CatalogError(f"prices for {res.key!r}: every rate must be a number") from None
    lc = r.get("long_context")
    if isinstance(lc, dict) and not res.fast:
        tier = _price_row(res.name, lc, source, date)
        base = replace(base, above=int(lc.get("above", 200_000)), long_context=tier)
    return base


def default_profile(name: str) -> str:
    """The provider profile that serves `name` when neither the trace nor the user says:
    the row's `serves`, else its provider's automatic-cache profile (PROVIDER_PROFILE)."""
    info = model_info(name)
    return info.serves or PROVIDER_PROFILE.get(info.provider, info.provider)


# Provider → the profile of how it bills a plain request (sim/data/profiles/; providers.md §1-§4): Anthropic
# explicit breakpoints (§1), OpenAI automatic caching before GPT-5.6 (§2.1), Gemini's implicit on 2.5+ (§3),
# DeepSeek's on disk (§4), Meta-style replicas (H-22), Z.ai's and Moonshot's automatic caching (GLM, Kimi).
PROVIDER_PROFILE = {
    "anthropic": "anthropic",
    "openai": "openai-auto",
    "gemini": "gemini-implicit",
    "deepseek": "deepseek",
    "meta": "meta-replicas",
    "openrouter": "no-cache",
    "zai": "zai",  # Z.ai's automatic context caching (sim/data/profiles/zai.yaml)
    "moonshot": "moonshot",  # Moonshot's (Kimi's) automatic context caching (sim/data/profiles/moonshot.yaml)
}


def add_prices_file(path: str | Path) -> list[str]:
    """Add the rows of a user price file (`--prices FILE`); returns the model names it adds."""
    p = Path(path)
    try:
        data = yamltext.load_yaml(p.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise CatalogError(f"--prices {p}: cannot read ({exc.strerror})") from None
    except yamltext.YAMLError as exc:
        raise CatalogError(f"--prices {p}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(data, dict):
        raise CatalogError(f"--prices {p}: must map model names to price rows")
    names = []
    for raw, row in data.items():
        if not isinstance(row, dict):
            raise CatalogError(f"--prices {p}: row {raw!r} must be a mapping")
        try:
            key: str | None = resolve(str(raw)).key
        except CatalogError:
            key = None
        _check_row_keys(p, str(raw), row, PRICE_KEYS if key else PRICE_KEYS + MODEL_KEYS)
        if key is None:
            missing = [k for k in PROFILE_KEYS if k not in row]
            if missing:
                raise CatalogError(
                    f"--prices {p}: {raw!r} is not in sim/data/models.yaml, so its row must also give "
                    f"{', '.join(missing)}"
                )
            key = str(raw)
            _EXTRA_MODELS[key] = {k: row[k] for k in row if k not in ("source", "date")}
            _forget()
        merged = {**(_load("prices.yaml").get(key) or {}), **row}
        merged.setdefault("source", f"--prices {p}")
        _price_row(key, merged, "", "")  # validate now: a bad row stops before the first request
        _EXTRA_PRICES[key] = merged
        _forget()
        names.append(key)
    return names


def _check_row_keys(p: Path, name: str, row: dict[str, Any], valid: tuple[str, ...], where: str = "") -> None:
    """A misspelt key would be ignored and its rate silently taken from elsewhere: stop instead."""
    for key, value in row.items():
        if str(key) not in valid:
            raise CatalogError(
                f"--prices {p}: row {name!r}: {where}{unknown('key', str(key), valid, 'valid keys')}"
            )
        if key in NESTED_RATE_KEYS and isinstance(value, dict):
            _check_row_keys(p, name, value, NESTED_RATE_KEYS[key], f"{key}: ")


def clear_added() -> None:
    """Forget every `--prices` row (tests)."""
    _EXTRA_MODELS.clear()
    _EXTRA_PRICES.clear()
    _forget()
