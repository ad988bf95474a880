"""The model catalog (sim/core/catalog.py): one profile per model whatever the spelling, prices with a
long-context tier and fast mode, unknown ids named with their closest known ones, `--prices`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxbench.sim.core.catalog import (
    CatalogError,
    add_prices_file,
    canonical,
    clear_added,
    default_profile,
    known_ids,
    model_info,
    model_names,
    prices,
)


@pytest.fixture(autouse=True)
def _no_added_rows() -> Iterator[None]:
    yield
    clear_added()


@pytest.mark.parametrize(
    ("given", "key"),
    [
        ("claude-opus-4-5-20251101", "claude-opus-4-5"),
        ("claude-opus-4-5", "claude-opus-4-5"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("anthropic/claude-opus-4.5", "claude-opus-4-5"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("gpt-5", "gpt-5"),
        ("gpt-5-mini", "gpt-5-mini"),
        ("gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("openai/gpt-4o-mini", "gpt-4o-mini"),
        ("o3", "o3"),
        ("gpt-4.1", "gpt-4.1"),
        ("openai/openrouter-llama-4-maverick", "llama-4-maverick"),
        ("meta-llama/llama-4-maverick", "llama-4-maverick"),
        ("anthropic/claude-opus-4.8-fast", "claude-opus-4-8-fast"),
        ("claude-sonnet-4-5[1m]", "claude-sonnet-4-5[1m]"),
        ("claude-opus-4.6-1m", "claude-opus-4-6[1m]"),  # a gateway's spelling of the 1M tier
        # OpenRouter's dated canonical slugs: version first for Claude (rule 9), a date for the others
        ("anthropic/claude-4.7-opus-20260416", "claude-opus-4-7"),
        ("anthropic/claude-4.5-sonnet-20250929", "claude-sonnet-4-5"),
        ("claude-3-5-sonnet", "claude-3-5-sonnet"),  # Anthropic's own version-first id: a key
        ("moonshotai/kimi-k2.6-20260420", "kimi-k2.6"),
        ("moonshotai/kimi-k2.6", "kimi-k2.6"),
        ("z-ai/glm-5.1", "glm-5.1"),
    ],
)
def test_every_spelling_resolves_to_one_profile(given: str, key: str) -> None:
    assert canonical(given) == key
    assert model_info(given).name == key
    assert prices(given).input > 0


def test_every_model_has_prices_with_a_source() -> None:
    for name in model_names():
        p = prices(name)
        assert p.source and p.date, name
        free = p.input == p.output == p.cache_read == 0  # a free model (Z.ai GLM-4.7-Flash: "Free")
        assert free or p.cache_read > 0, name
        assert p.cache_read <= p.input <= p.cache_write_5m <= p.cache_write_1h, name


def test_aliases_are_unique() -> None:
    ids = [i.lower() for i in known_ids()]
    assert len(ids) == len(set(ids))


def test_dated_ids_carry_the_row_of_their_model() -> None:
    assert model_info("claude-opus-4-5-20251101") == model_info("claude-opus-4-5")
    assert prices("claude-opus-4-1").input == 15.00  # platform.claude.com pricing: Opus 4.1 $15
    assert prices("claude-opus-4-5").input == 5.00  # Opus 4.5 $5


def test_unknown_model_names_the_closest_ids_and_the_options() -> None:
    with pytest.raises(CatalogError) as err:
        prices("gpt-7")
    msg = str(err.value)
    assert "'gpt-7'" in msg and "gpt-5" in msg and "--model" in msg and "--prices" in msg


@pytest.mark.parametrize("unknown", ["MiniMax-M2.7", "x-ai/grok-code-fast-1", "qwen3:8b"])
def test_an_unknown_vendor_is_offered_no_other_vendors_ids(unknown: str) -> None:
    with pytest.raises(CatalogError) as err:
        prices(unknown)
    msg = str(err.value)
    assert "closest known" not in msg and "no model of its vendor" in msg and "claude" in msg
    assert "--model" in msg and "--prices" in msg


def test_fast_needs_fast_prices() -> None:
    assert prices("claude-opus-4-8-fast").input == 2 * prices("claude-opus-4-8").input
    with pytest.raises(CatalogError, match="no fast-mode prices"):
        prices("claude-opus-4-5-fast")


def test_long_context_tier_prices_the_whole_request() -> None:
    p = prices("claude-sonnet-4-5")
    assert p.cost(0, 200_000, 0, 0, 1_000) == pytest.approx((200_000 * 0.30 + 1_000 * 15) / 1e6)
    assert p.cost(0, 200_001, 0, 0, 1_000) == pytest.approx((200_001 * 0.60 + 1_000 * 22.5) / 1e6)
    assert prices("claude-sonnet-4-6").cost(0, 300_000, 0, 0, 0) == pytest.approx(300_000 * 0.30 / 1e6)
    assert model_info("claude-sonnet-4-5[1m]").window == 1_000_000


def test_default_profiles_follow_the_serving_provider() -> None:
    assert default_profile("gpt-5") == "openai-auto"
    assert default_profile("claude-opus-4-6") == "anthropic"
    assert default_profile("gemini-2.5-pro") == "gemini-implicit"
    assert default_profile("deepseek-chat") == "deepseek"
    assert default_profile("llama-4-maverick") == "no-cache"
    assert default_profile("gpt-5.6-terra") == "openai-breakpoints"


def test_prices_file_adds_a_model_with_its_profile(tmp_path: Path) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(
        "acme-1:\n  provider: openai\n  window: 64000\n  min_cacheable: 1024\n"
        "  input: 1.0\n  output: 2.0\n  cache_read: 0.1\n",
        encoding="utf-8",
    )
    assert add_prices_file(f) == ["acme-1"]
    assert model_info("acme-1").window == 64_000
    assert prices("acme-1").cache_read == 0.1
    assert "--prices" in prices("acme-1").source


def test_prices_file_overrides_a_known_row_and_rejects_an_incomplete_one(tmp_path: Path) -> None:
    f = tmp_path / "p.yaml"
    f.write_text("gpt-5:\n  input: 2.0\n", encoding="utf-8")
    add_prices_file(f)
    assert prices("gpt-5-2025-08-07").input == 2.0 and prices("gpt-5").output == 10.0
    g = tmp_path / "q.yaml"
    g.write_text("acme-2:\n  input: 1.0\n  output: 2.0\n", encoding="utf-8")
    with pytest.raises(CatalogError, match="provider, window, min_cacheable"):
        add_prices_file(g)


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ("gpt-5:\n  inptu: 2.0\n", "row 'gpt-5': unknown key 'inptu' (did you mean 'input'?); valid keys:"),
        ("gpt-5:\n  window: 9\n", "unknown key 'window'"),  # a known model's profile is models.yaml's
        (
            "gpt-5:\n  long_context:\n    abov: 1\n",
            "long_context: unknown key 'abov' (did you mean 'above'?)",
        ),
        (
            "acme-3:\n  provider: openai\n  window: 1\n  min_cacheable: 1\n  input: 1\n  output: 1\n"
            "  image_rul: x\n",
            "unknown key 'image_rul' (did you mean 'image_rule'?)",
        ),
    ],
)
def test_prices_file_names_a_misspelt_key_and_the_valid_ones(tmp_path: Path, row: str, says: str) -> None:
    """A misspelt rate would be ignored and the bundled one billed silently."""
    f = tmp_path / "p.yaml"
    f.write_text(row, encoding="utf-8")
    with pytest.raises(CatalogError) as err:
        add_prices_file(f)
    assert says in str(err.value) and str(f) in str(err.value)


def test_bundled_rows_use_only_the_keys_a_prices_file_may() -> None:
    from ctxbench.sim.core.catalog import MODEL_KEYS, NESTED_RATE_KEYS, PRICE_KEYS, _load

    for name, row in _load("prices.yaml").items():
        assert set(row) <= set(PRICE_KEYS), name
        for key, keys in NESTED_RATE_KEYS.items():
            assert set(row.get(key) or {}) <= set(keys), name
    for name, row in _load("models.yaml").items():
        assert set(row) <= set(MODEL_KEYS), name
