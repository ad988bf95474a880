"""Model profiles and price tables loaded from YAML (`sim/data/`), each row with its source."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from ctxbench.sim.yamltext import load_yaml


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


@dataclass(frozen=True)
class Prices:
    """USD per million tokens, with the date and source of the row (H-20)."""

    model: str
    input: float
    output: float
    cache_read: float
    cache_write_5m: float
    cache_write_1h: float
    date: str
    source: str

    def cost(self, uncached: int, read: int, write_5m: int, write_1h: int, output: int) -> float:
        return (
            uncached * self.input
            + read * self.cache_read
            + write_5m * self.cache_write_5m
            + write_1h * self.cache_write_1h
            + output * self.output
        ) / 1e6


@cache
def _load(name: str) -> dict[str, dict[str, Any]]:
    text = resources.files("ctxbench.sim").joinpath("data", name).read_text(encoding="utf-8")
    data = load_yaml(text) or {}
    return {str(k): dict(v) for k, v in data.items()}


def model_names() -> list[str]:
    return sorted(_load("models.yaml"))


def model_info(name: str) -> ModelInfo:
    rows = _load("models.yaml")
    if name not in rows:
        raise CatalogError(f"unknown model {name!r}; known models: {', '.join(sorted(rows))}")
    r = rows[name]
    return ModelInfo(
        name,
        r["provider"],
        int(r["window"]),
        int(r["min_cacheable"]),
        int(r["max_output"]),
        r["image_rule"],
        float(r.get("tokenizer_scale", 1.0)),
    )


def prices(name: str) -> Prices:
    rows = _load("prices.yaml")
    if name not in rows:
        raise CatalogError(
            f"no prices for model {name!r} (H-20: a run cannot start without prices); "
            f"priced models: {', '.join(sorted(rows))}"
        )
    r = rows[name]
    w5 = r.get("cache_write_5m", r.get("cache_write", r["input"]))
    return Prices(
        name,
        float(r["input"]),
        float(r["output"]),
        float(r.get("cache_read", r["input"])),
        float(w5),
        float(r.get("cache_write_1h", w5)),
        str(r.get("date", "")),
        str(r.get("source", "")),
    )
